"""Every read path of a Hudi table from Spark against hudi-rs: `read_table` (base files on Spark's parquet reader,
the rest on the hudi source), `spark.read.format("hudi")`, SQL on the catalog table, `hudi_table_changes`, on COW,
MOR with and without log files, after compaction, with time travel and incremental ranges; commit-time pruning;
bad input through the SQL paths."""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest
from archival import archive_before
from conformance import V6_WITH_COMMITS, V8_V9_TABLES
from oracle import assert_same_rows, completed, rs_incremental, rs_snapshot
from spark_jobs import jobs_of

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError
from hudi_engine.spark import create_catalog_table, native, spark_executor, write
from hudi_engine.spark.datasource import BEGIN_INSTANT, END_INSTANT, QUERY_TYPE, ReadOptions
from hudi_engine.spark.relation import plan_read, read_table, register_view

pytestmark = pytest.mark.spark

# Hudi 1.x tables of every kind the split read meets: log files (avro blocks, deletes, log-only slices, a log
# compaction), a rollback, no meta fields, timestamp key generators, an overwrite, all data types, base files in
# an older column type. (The hudi source reads all of them in tests/spark/test_datasource_v8_v9.py.)
V8_V9_KINDS = ["mor_avrolog_v8_trips_8i3u1d", "mor_avrolog_v9_mor_8i4u_commit_time", "mor_avrolog_table_log_only",
               "mor_avrolog_table_log_compaction", "mor_avrolog_v9_nonpartitioned_rollback",
               "cow_v9_txns_complex_nometa", "cow_v9_timebasedkeygen_unixtimestamp",
               "cow_v8_simplekeygen_nonhivestyle_overwritetable", "mor_avrolog_table_all_data_types",
               "cow_v9_timebasedkeygen_epochmillis"]
SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
INCREMENTAL = "incremental"


@pytest.fixture(autouse=True, scope="module")
def _quiet_sql_errors():
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # expected failures below


def _key(table: HudiTable) -> str:
    return "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]


def _plan(path, **options):
    return plan_read(HudiTable.load(str(path)), ReadOptions.parse({"path": str(path), **options}))


def _range_bounds(table: HudiTable) -> list[str]:
    """Consecutive incremental bounds: requested times (layout 1) or completion times (layout 2)."""
    by_completion = table.timeline.layout.incremental_by_completion_time
    return ["000", *((c.completion_time if by_completion else c.timestamp)
                     for c in table.timeline.completed_commits())]


# ---- real tables -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_read_table_equals_hudi_rs_on_v6_tables(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    plan = _plan(path)
    slices = table.file_slices()
    with_logs = {f"{s.partition_path}/{s.file_id}".lstrip("/") for s in slices if s.log_files}
    assert set(plan.merged_groups) | set(plan.split_groups) == with_logs, "only slices with logs reach the source"
    assert len(plan.native_files) == len(slices) - len(with_logs)
    if table.config.populate_meta_fields:  # split by key: base files on Spark's reader but for the logged keys
        assert set(plan.split_groups) == {f"{s.partition_path}/{s.file_id}".lstrip("/") for s in slices
                                          if s.log_files and s.base_file is not None}
        assert len(plan.split_files) == len(plan.split_groups)
    assert_same_rows(read_table(spark, str(path)).toArrow(), rs_snapshot(path), f"{name} snapshot", _key(table))
    if table.is_mor:
        ro = read_table(spark, str(path), {QUERY_TYPE: "read_optimized"}).toArrow()
        assert_same_rows(ro, rs_snapshot(path, read_optimized=True), f"{name} read-optimized", _key(table))
        assert not _plan(path, **{QUERY_TYPE: "read_optimized"}).merged_groups


@pytest.mark.parametrize("name", ["mor_avrolog_v6_trips_8i1u", "mor_parquetlog_v6_complexkeygen_hivestyle",
                                  "cow_v6_simplekeygen_nonhivestyle_overwritetable"])
def test_read_table_time_travel_and_incremental_equal_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    commits = [c.timestamp for c in table.timeline.completed_commits()]
    for ts in commits:
        got = read_table(spark, str(path), {"as.of.instant": ts}).toArrow()
        assert_same_rows(got, rs_snapshot(path, as_of=ts), f"{name} as of {ts}", _key(table))
    bounds = _range_bounds(table)
    for begin, end in zip(bounds, bounds[1:]):
        got = read_table(spark, str(path), {QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: begin, END_INSTANT: end})
        assert_same_rows(got.toArrow(), rs_incremental(path, begin, end), f"{name} ({begin}, {end}]", _key(table))


def test_v8_v9_kinds_are_conformance_tables():
    assert set(V8_V9_KINDS) <= set(V8_V9_TABLES)


@pytest.mark.parametrize("name", V8_V9_KINDS)
def test_read_table_equals_hudi_rs_on_v8_v9_tables(spark, unzip_table, name):
    path = unzip_table(name, "v8_v9")
    table = HudiTable.load(path)
    assert_same_rows(read_table(spark, str(path)).toArrow(), rs_snapshot(path), f"{name} snapshot", _key(table))
    bounds = _range_bounds(table)
    begin, end = bounds[-2], bounds[-1]
    got = read_table(spark, str(path), {QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: begin, END_INSTANT: end}).toArrow()
    assert_same_rows(got, table.read_incremental(begin, end), f"{name} last commit", _key(table))


def test_base_files_in_an_older_column_type_go_to_the_hudi_source(spark, unzip_table):
    """A COW table whose column types changed: Spark's reader would not read the older files in the new types,
    so those slices are merged by the hudi source (no log files involved)."""
    path = unzip_table("cow_v9_timebasedkeygen_epochmillis", "v8_v9")
    table = HudiTable.load(path)
    plan = _plan(path)
    assert plan.native_files and plan.merged_groups
    assert not any(s.log_files for s in table.file_slices())
    assert_same_rows(read_table(spark, str(path)).toArrow(), table.read_snapshot(), "evolved COW", _key(table))


# ---- a table through its life: COW and MOR, logs, compaction -----------------------------------------------


def _opts(table_type: str, operation: str) -> dict:
    return {
        "hoodie.table.name": "reads", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
    }


def _write(spark, path: Path, table_type: str, rows: list[tuple], operation: str = "upsert", **options: str) -> str:
    df = spark.createDataFrame(rows, SCHEMA)
    return write(df, str(path), {**_opts(table_type, operation), **options}).instant_time


def _rec(i: int, ts: int, dt: str | None = None) -> tuple:
    return (i, f"n{i}_{ts}", ts, i * 1.5 + ts, dt or f"d{i % 4}")


def _every_path_equals_hudi_rs(spark, path: Path, catalog: str, what: str) -> None:
    expected = rs_snapshot(path)
    assert_same_rows(read_table(spark, str(path)).toArrow(), expected, f"{what}: read_table")
    assert_same_rows(read_table(spark, catalog).toArrow(), expected, f"{what}: read_table of the catalog name")
    assert_same_rows(spark.read.format("hudi").load(str(path)).toArrow(), expected, f"{what}: hudi source")
    assert_same_rows(spark.table(catalog).toArrow(), expected, f"{what}: spark.table")
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), expected, f"{what}: SQL")
    view = register_view(spark, "reads_now", str(path))
    assert_same_rows(spark.sql(f"SELECT * FROM {view}").toArrow(), expected, f"{what}: temporary view")


def _history_equals_hudi_rs(spark, path: Path, what: str) -> None:
    """Time travel to every commit and each commit's incremental range, through every path that takes them."""
    table = HudiTable.load(str(path))
    commits = [c.timestamp for c in table.timeline.completed_commits()]
    for ts in commits:
        expected = rs_snapshot(path, as_of=ts)
        assert_same_rows(read_table(spark, str(path), {"as.of.instant": ts}).toArrow(), expected, f"{what} as of {ts}")
        assert_same_rows(spark.read.format("hudi").option("as.of.instant", ts).load(str(path)).toArrow(), expected,
                         f"{what} as of {ts}: hudi source")
    for begin, end in zip(["000", *commits], commits):
        expected = rs_incremental(path, begin, end)
        options = {QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: begin, END_INSTANT: end}
        assert_same_rows(read_table(spark, str(path), options).toArrow(), expected, f"{what} ({begin}, {end}]")
        assert_same_rows(spark.read.format("hudi").options(**options).load(str(path)).toArrow(), expected,
                         f"{what} ({begin}, {end}]: hudi source")
        tvf = spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', '{begin}', '{end}')")
        assert_same_rows(tvf.toArrow(), expected, f"{what} ({begin}, {end}]: hudi_table_changes")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_read_path_through_a_tables_life(spark, tmp_path, table_type):
    path = tmp_path / "t"
    catalog = f"reads_{table_type.lower()}"
    # One file group per partition (GLOBAL_SORT, whatever the input's splits): the upsert below touches one.
    first = _write(spark, path, table_type, [_rec(i, 1) for i in range(40)], "bulk_insert",
                   **{"hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"})
    create_catalog_table(spark, catalog, str(path))
    try:
        groups = len(HudiTable.load(str(path)).file_slices())
        assert not _plan(path).merged_groups  # base files only, whatever the table type
        _every_path_equals_hudi_rs(spark, path, catalog, f"{table_type} after bulk_insert")

        pinned = read_table(spark, str(path))
        # Updates in one partition of four: on MOR only that partition's file groups get log files.
        second = _write(spark, path, table_type, [_rec(i, 2) for i in range(0, 40, 4)])
        assert pinned.count() == 40 and pinned.where("ts = 2").count() == 0  # made before: reads its snapshot
        plan = _plan(path)
        if table_type == "MERGE_ON_READ":
            # The d0 slices are split: Spark reads their base files but for the 10 updated keys, merged in Python.
            assert plan.split_groups and all(g.startswith("d0/") for g in plan.split_groups) and not plan.merged_groups
            assert len(plan.native_files) == groups - len(plan.split_groups)
            assert sorted(plan.split_keys.column(1).to_pylist()) == sorted(str(i) for i in range(0, 40, 4))
        else:
            assert not plan.merged_groups and not plan.split_groups
        _every_path_equals_hudi_rs(spark, path, catalog, f"{table_type} after an upsert")
        _write(spark, path, table_type, [_rec(i, 2) for i in (0, 8, 5)], "delete")  # MOR: a delete block in d0, d1
        _every_path_equals_hudi_rs(spark, path, catalog, f"{table_type} after a delete")

        if table_type == "MERGE_ON_READ":
            HudiTable.load(str(path)).compact(executor=spark_executor(spark))
            assert not _plan(path).merged_groups  # compacted: base files only again
            _every_path_equals_hudi_rs(spark, path, catalog, "MOR after compaction")
        _write(spark, path, table_type, [_rec(i, 3) for i in (1, 41)])
        _every_path_equals_hudi_rs(spark, path, catalog, f"{table_type} after another commit")
        _history_equals_hudi_rs(spark, path, table_type)

        # An incremental pull of one commit reads only the slices it wrote.
        one = _plan(path, **{QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: completed(path, first),
                             END_INSTANT: completed(path, second)})
        assert len(one.native_files) + len(one.merged_groups) == 1
        everything = _plan(path)
        assert len(everything.native_files) + len(everything.merged_groups) > 1
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {catalog}")


# ---- commit-time pruning ----------------------------------------------------------------------------------


def test_filters_on_commit_time_prune_file_slices(spark, tmp_path):
    path = tmp_path / "t"
    first = _write(spark, path, "MERGE_ON_READ", [_rec(i, 1) for i in range(40)], "bulk_insert")
    second = _write(spark, path, "MERGE_ON_READ", [_rec(i, 2) for i in range(1, 40, 4)])  # partition d1 only
    third = _write(spark, path, "MERGE_ON_READ", [_rec(i, 3) for i in range(2, 40, 4)])  # partition d2 only
    table = HudiTable.load(str(path))
    slices = table.file_slices()
    snapshot = table.read_snapshot()
    source = spark.read.format("hudi").load(str(path))
    commit_time = "_hoodie_commit_time"
    for where, bound, partitions, encoded in (
            (f"{commit_time} > '{first}'", first, {"d1", "d2"}, ["GreaterThan", commit_time, first]),
            (f"{commit_time} >= '{third}'", third, {"d2"}, ["GreaterThanOrEqual", commit_time, third]),
            (f"{commit_time} IN ('{second}', '{third}')", second, {"d1", "d2"}, ["In", commit_time, [second, third]]),
            (f"{commit_time} > '{third}'", third, set(), ["GreaterThan", commit_time, third])):
        df = source.where(where)
        kept = [s for s in slices if s.log_files and s.partition_path in partitions]
        # The native source's plan for the filter (as its strategy encodes it): only the kept slices, split by key.
        read = json.loads(native.plan_json({"path": str(path), native.FILTERS: json.dumps([encoded])}))
        options = read["source_options"] or {}
        assert sorted(json.loads(options.get("hudi_engine.read.file_groups", "[]"))) == sorted(
            f"{s.partition_path}/{s.file_id}" for s in kept), where
        assert read["files"] == [] and len(read["split_files"]) == len(kept), where
        assert (df.rdd.getNumPartitions() == 1) == (not kept), where  # Spark keeps one empty partition
        expected = snapshot.filter(pc.field("_hoodie_commit_time") >= bound if ">=" in where or "IN" in where
                                   else pc.field("_hoodie_commit_time") > bound)
        assert_same_rows(df.toArrow(), expected, where)
        assert_same_rows(read_table(spark, str(path)).where(where).toArrow(), expected, f"read_table {where}")
    pruned = table.read_snapshot(filters=[("_hoodie_commit_time", ">", second)])
    assert set(pruned.column("_hoodie_commit_time").to_pylist()) == {third}
    assert len(table.file_slices(filters=[("_hoodie_commit_time", ">", second)])) < len(slices)


def test_incremental_range_reaching_archived_commits_keeps_their_rows(spark, tmp_path):
    """Commits of the range that left the active timeline are not in any metadata the read sees: every slice
    that can hold a row written after begin is read instead of only the active commits' file groups."""
    path = tmp_path / "t"
    # Version 6: archival simulated by moving instant files (tests/archival.py); version 9's history is read in
    # tests/table_services/test_archival_v9.py.
    first = _write(spark, path, "COPY_ON_WRITE", [_rec(i, 1) for i in range(12)], "bulk_insert",
                   **{"hoodie.write.table.version": "6"})
    second = _write(spark, path, "COPY_ON_WRITE", [_rec(i, 2) for i in (1, 5)])  # partition d1
    third = _write(spark, path, "COPY_ON_WRITE", [_rec(i, 3) for i in (2, 6)])  # partition d2
    begin, end = first, third
    expected = HudiTable.load(str(path)).read_incremental(begin, end)
    assert sorted(set(expected.column("_hoodie_commit_time").to_pylist())) == [second, third]
    archive_before(path, third)  # `second` is archived now
    table = HudiTable.load(str(path))
    assert [c.timestamp for c in table.timeline.completed_commits()] == [third]
    assert_same_rows(table.read_incremental(begin, end), expected, "HudiTable")
    options = {QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: begin, END_INSTANT: end}
    assert_same_rows(read_table(spark, str(path), options).toArrow(), expected, "read_table")
    assert_same_rows(spark.read.format("hudi").options(**options).load(str(path)).toArrow(), expected, "source")


# ---- hudi_table_changes and bad input ----------------------------------------------------------------------


def test_hudi_table_changes_forms(spark, unzip_table):
    path = unzip_table("mor_avrolog_v6_trips_8i1u")
    first, last = [c.timestamp for c in HudiTable.load(path).timeline.completed_commits()]
    everything = spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', 'earliest')").toArrow()
    assert_same_rows(everything, rs_incremental(path, "000", last), "earliest")
    since = spark.sql(f"SELECT rider, fare FROM hudi_table_changes('{path}', 'LATEST_STATE', '{first}')").toArrow()
    assert since.to_pylist() == [{"rider": "rider-D", "fare": 25.0}]
    dashed = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    assert spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', '{dashed}')").count() == 1
    # By a USING hudi catalog name, as Hudi's SQL takes it (the native component puts the location in).
    spark.sql("DROP TABLE IF EXISTS changes_by_name")
    create_catalog_table(spark, "changes_by_name", str(path))
    for name in ("changes_by_name", "default.changes_by_name", "spark_catalog.default.changes_by_name"):
        got = spark.sql(f"SELECT * FROM hudi_table_changes('{name}', 'latest_state', 'earliest')").toArrow()
        assert_same_rows(got, everything, f"by the name {name}")
    inside = spark.sql("SELECT count(*) FROM changes_by_name WHERE rider IN (SELECT rider FROM "
                       f"hudi_table_changes('changes_by_name', 'latest_state', '{first}'))").collect()[0][0]
    assert inside == 1


def test_bad_input_through_the_sql_paths_names_table_value_and_instants(spark, unzip_table, tmp_path):
    path = unzip_table("mor_avrolog_v6_trips_8i1u")
    first, last = [c.timestamp for c in HudiTable.load(path).timeline.completed_commits()]
    available = rf"Available: completed commits from {first} to {last} \(2\)"
    table = r"table 'v6_trips_8i1u' \(.*\)"

    def fails(pattern: str, action) -> None:
        with pytest.raises(Exception, match=pattern):
            action()

    fails(rf"{table}: option as.of.instant='yesterday': expected an instant time.*{available}",
          lambda: spark.read.format("hudi").option("as.of.instant", "yesterday").load(str(path)).collect())
    fails(rf"{table}: option as.of.instant='yesterday'.*{available}",
          lambda: read_table(spark, str(path), {"as.of.instant": "yesterday"}))
    fails(rf"{table}: incremental begin instant {last} is after the end instant {first}.*{available}",
          lambda: read_table(spark, str(path), {QUERY_TYPE: INCREMENTAL, BEGIN_INSTANT: last, END_INSTANT: first}))
    fails(rf"{table}: incremental begin instant {last} is after the end instant {first}.*{available}",
          lambda: spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', '{last}', '{first}')")
          .collect())
    fails(rf"hudi_table_changes: {table}: option begin='2024-13-45'.*{available}",
          lambda: spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', '2024-13-45')").collect())
    fails(rf"{table}: a CDC query .* needs change data.*hoodie.table.cdc.enabled is not true.*completed commits from "
          rf"{first} to {last} \(2\)", lambda: spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'cdc', '{first}')")
          .collect())
    fails(r"hudi_table_changes\('.*', 'diff', \.\.\.\): query type 'diff' is not supported; expected 'latest_state' "
          r".* or 'cdc'", lambda: spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'diff', '{first}')").collect())
    fails(r"hudi_table_changes\('default.trips', \.\.\.\): .*not a Hudi table.*'hudi.path=' comment",
          lambda: spark.sql("SELECT * FROM hudi_table_changes('default.trips', 'latest_state', '0')").collect())
    fails(r"'no_such_table': neither a table path nor a table in the catalog",
          lambda: read_table(spark, "no_such_table"))


def test_time_travel_to_a_cleaned_instant_is_refused_by_every_path(spark, tmp_path):
    path = tmp_path / "t"
    instants = [_write(spark, path, "COPY_ON_WRITE", [_rec(i, 1) for i in range(8)], "bulk_insert")]
    for ts in range(2, 6):
        instants.append(_write(spark, path, "COPY_ON_WRITE", [_rec(i, ts) for i in range(8)]))
    HudiTable.load(str(path)).clean(options={"hoodie.cleaner.commits.retained": "2"})
    cleaned = instants[1]
    message = rf"table 'reads' \(.*\): instant {cleaned} was cleaned: .* Available: instants from"
    with pytest.raises(HudiError, match=message):
        read_table(spark, str(path), {"as.of.instant": cleaned})
    with pytest.raises(Exception, match=message):
        spark.read.format("hudi").option("as.of.instant", cleaned).load(str(path)).collect()
    with pytest.raises(Exception, match=rf"instant {cleaned} was cleaned"):
        spark.sql(f"SELECT * FROM hudi_table_changes('{path}', 'latest_state', '0', '{completed(path, cleaned)}')"
                  ).collect()
    kept = instants[-2]
    assert_same_rows(read_table(spark, str(path), {"as.of.instant": kept}).toArrow(), rs_snapshot(path, as_of=kept),
                     "a kept instant still reads")


def test_a_copy_of_a_table_reads_from_its_own_files(spark, unzip_table, tmp_path):
    """The plan lists files under the path the table was loaded from (here a copy), never another."""
    src = unzip_table("cow_v6_simplekeygen_nonhivestyle")
    copy = Path(shutil.copytree(src, tmp_path / "copy"))
    plan = _plan(copy)
    assert plan.native_files and all(f.startswith(str(copy)) for f in plan.native_files)
    assert_same_rows(read_table(spark, str(copy)).toArrow(), rs_snapshot(src), "copy")


def test_a_read_of_more_base_files_than_sparks_listing_threshold_is_planned_without_a_listing_job(spark, tmp_path):
    """Past 32 paths Spark lists them with a job; local base files are listed on the driver (the session's setting
    restored), and the read still equals hudi-rs."""
    path = tmp_path / "t"
    _write(spark, path, "COPY_ON_WRITE", [_rec(i, 1, f"d{i:02d}") for i in range(40)], "bulk_insert")
    assert len(_plan(path).native_files) == 40
    threshold = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(threshold, "32")
    df, jobs, _ = jobs_of(spark, lambda: read_table(spark, str(path)))
    assert jobs == []  # planning the read ran no Spark job
    assert spark.conf.get(threshold, "32") == before
    assert_same_rows(df.toArrow(), rs_snapshot(path), "40 base files")
