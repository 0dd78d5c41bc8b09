"""The native `hudi` source (`hudi_engine.spark.native`, issue 24): `spark.table`, SQL on the catalog name and
`spark.read.format("hudi")` against hudi-rs on COW, MOR with and without log files, after compaction, with time
travel and incremental ranges; base files planned as Spark's own `FileScan parquet`, only slices with log files on
the `hudi_merge` source; a commit by another process seen by the next query; the compiled component rebuilt when
its source, the Spark version or the jar changes, and not otherwise. The test session runs on the native source
(tests/spark/conftest.py)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conformance import V6_WITH_COMMITS
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError
from hudi_engine.spark import create_catalog_table, native, spark_executor, write
from hudi_engine.spark.catalog_entry import catalog_table_ddl
from hudi_engine.spark.datasource import BEGIN_INSTANT, END_INSTANT, QUERY_TYPE, HudiDataSource

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"


def _opts(table_type: str, operation: str) -> dict:
    return {
        "hoodie.table.name": "native", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
        "hoodie.compact.inline": "false",
    }


def _write(spark, path: Path | str, table_type: str, rows: list[tuple], operation: str = "upsert") -> str:
    return write(spark.createDataFrame(rows, SCHEMA), str(path), _opts(table_type, operation)).instant_time


def _rec(i: int, ts: int) -> tuple:
    return (i, f"n{i}_{ts}", ts, i * 1.5 + ts, f"d{i % 4}")


def _plan_text(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def _every_path_equals_hudi_rs(spark, path: Path, catalog: str, what: str) -> None:
    expected = rs_snapshot(path)
    assert_same_rows(spark.table(catalog).toArrow(), expected, f"{what}: spark.table")
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), expected, f"{what}: SQL")
    assert_same_rows(spark.read.format("hudi").load(str(path)).toArrow(), expected, f"{what}: format('hudi')")
    # Column pruning and a pushed filter give the same rows as hudi-rs filtered.
    got = spark.sql(f"SELECT id, amount FROM {catalog} WHERE dt = 'd1' AND id > 4").toArrow()
    want = expected.filter((expected["dt"].to_numpy(zero_copy_only=False) == "d1")
                           & (expected["id"].to_numpy() > 4)).select(["id", "amount"])
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == sorted(want.to_pylist(), key=lambda r: r["id"]), what
    if HudiTable.load(str(path)).is_mor:
        ro = spark.read.format("hudi").option(QUERY_TYPE, "read_optimized").load(str(path))
        assert_same_rows(ro.toArrow(), rs_snapshot(path, read_optimized=True), f"{what}: read-optimized")
        assert "hudi_merge" not in _plan_text(ro), f"{what}: a read-optimized query reads base files only"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_native_paths_equal_hudi_rs_through_a_tables_life(spark, tmp_path, table_type):
    path = tmp_path / "t"
    catalog = f"native_{table_type.lower()}"
    first = _write(spark, path, table_type, [_rec(i, 1) for i in range(40)], "bulk_insert")
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    _every_path_equals_hudi_rs(spark, path, catalog, "after the first commit")
    query = spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7")
    plan = _plan_text(query)
    assert "FileScan parquet" in plan and "PushedFilters: [IsNotNull(id), EqualTo(id,7)]" in plan, plan
    assert "Batched: true" in plan and "ReadSchema: struct<id:bigint,name:string>" in plan, plan
    assert "hudi_merge" not in plan, plan
    # Spark's statistics for join planning: the base files' bytes, so a small table is broadcast.
    a, b = spark.table(catalog).alias("a"), spark.table(catalog).alias("b")
    assert "BroadcastHashJoin" in _plan_text(a.join(b, "id")), "the relation reports its size"

    second = _write(spark, path, table_type, [_rec(i, 2) for i in range(0, 40, 4)])  # partition d0 only
    _every_path_equals_hudi_rs(spark, path, catalog, "after an upsert")
    plan = _plan_text(spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7"))
    if table_type == "MERGE_ON_READ":
        # d0's slices have log files now: their base files are scanned by Spark but for the keys the logs write,
        # whose merged rows alone come from the merge source (the key split).
        assert "FileScan parquet" in plan and "MapInArrow hudi_merge" in plan and "BatchScan" not in plan, plan
        assert "hudi_unlogged_key(_metadata" in plan and "10 logged keys" in plan, plan
        read = json.loads(native.plan_json({"path": str(path)}))
        groups = json.loads(read["source_options"]["hudi_engine.read.file_groups"])
        assert groups and all(g.startswith("d0/") for g in groups)
        assert json.loads(read["source_options"]["hudi_engine.read.logged_keys_only"]) == groups
        assert sorted(k for keys in read["split_keys"].values() for k in keys) == sorted(
            str(i) for i in range(0, 40, 4))
        assert all("/d0/" in f for f, _ in read["split_files"]) and len(read["split_files"]) == len(groups)
        HudiTable.load(str(path)).compact(executor=spark_executor(spark))
        _every_path_equals_hudi_rs(spark, path, catalog, "after compaction")
        assert "hudi_merge" not in _plan_text(spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7"))
    else:
        assert "hudi_merge" not in plan, plan

    # A clustering-free replacecommit: partition d1 overwritten, its old file groups replaced.
    third = _write(spark, path, table_type, [_rec(i, 3) for i in range(1, 12, 4)], "insert_overwrite")
    assert HudiTable.load(str(path)).timeline.completed_commits().last().action == "replacecommit"
    _every_path_equals_hudi_rs(spark, path, catalog, "after insert_overwrite")

    # Time travel through format("hudi") and Hudi's SQL on the catalog name; incremental ranges.
    for ts in (first, second, third):
        expected = rs_snapshot(path, as_of=ts)
        as_of = spark.read.format("hudi").option("as.of.instant", ts).load(str(path))
        assert_same_rows(as_of.toArrow(), expected, f"{table_type} as of {ts}")
        sql = spark.sql(f"SELECT * FROM {catalog} TIMESTAMP AS OF '{ts}'")
        assert_same_rows(sql.toArrow(), expected, f"{table_type}: SQL TIMESTAMP AS OF {ts}")
    for begin, end in (("000", first), (first, second), (second, third)):
        options = {QUERY_TYPE: "incremental", BEGIN_INSTANT: begin, END_INSTANT: end}
        got = spark.read.format("hudi").options(**options).load(str(path))
        assert_same_rows(got.toArrow(), rs_incremental(path, begin, end), f"{table_type} ({begin}, {end}]")


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_native_source_equals_hudi_rs_on_real_hudi_tables(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    key = "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]
    df = spark.read.format("hudi").load(str(path))
    assert_same_rows(df.toArrow(), rs_snapshot(path), f"{name}: format('hudi')", key)
    with_logs = any(s.log_files for s in table.file_slices())
    assert ("hudi_merge" in _plan_text(df)) == with_logs, name


def test_a_table_on_object_storage_spark_cannot_open_is_merged_whole_and_equals_hudi_rs(spark, s3_server, tmp_path):
    """A table on the local S3 server, under pyarrow's URI form (its endpoint in the query): Spark's Hadoop file
    systems could not reach that endpoint even with s3a on the classpath, so no file goes to Spark's parquet scan and
    `hudi_merge` reads every slice; the rows equal hudi-rs through the catalog name and format("hudi")."""
    bucket = s3_server.new_bucket()
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        uri = s3_server.uri(bucket, table_type.lower())
        _write(spark, uri, table_type, [_rec(i, 1) for i in range(16)], "bulk_insert")
        _write(spark, uri, table_type, [_rec(i, 2) for i in range(0, 16, 4)])
        catalog = f"native_s3_{table_type.lower()}"
        spark.sql(f"DROP TABLE IF EXISTS {catalog}")
        create_catalog_table(spark, catalog, uri)
        expected = rs_snapshot(uri)
        assert_same_rows(spark.table(catalog).toArrow(), expected, f"{table_type} on S3: spark.table")
        assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), expected, f"{table_type} on S3: SQL")
        assert_same_rows(spark.read.format("hudi").load(uri).toArrow(), expected, f"{table_type} on S3: format")
        plan = _plan_text(spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7"))
        assert "FileScan parquet" not in plan and "hudi_merge" in plan, plan
        groups = {f"{s.partition_path}/{s.file_id}" for s in HudiTable.load(uri).file_slices()}
        planned = json.loads(native.plan_json({"path": uri, native.SPARK_OPENS_FILES: "true"}))
        assert planned["files"] == [] and set(json.loads(
            planned["source_options"]["hudi_engine.read.file_groups"])) == groups, planned

    # The JVM's answer decides for a location without a query: "false" sends every slice to the merge source.
    local = tmp_path / "local"
    _write(spark, local, "COPY_ON_WRITE", [_rec(i, 1) for i in range(8)], "bulk_insert")
    assert json.loads(native.plan_json({"path": str(local)}))["files"]
    closed = json.loads(native.plan_json({"path": str(local), native.SPARK_OPENS_FILES: "false"}))
    assert closed["files"] == [] and json.loads(closed["source_options"]["hudi_engine.read.file_groups"])


_OTHER_PROCESS = """
import sys, pyarrow as pa
from hudi_engine.write_pipeline import write_table
rows = pa.table({"id": pa.array([3, 100], pa.int64()), "name": ["other", "new"], "ts": pa.array([9, 9], pa.int64()),
                 "amount": [0.5, 1.5], "dt": ["d3", "d0"]})
write_table(rows, sys.argv[1], dict(zip(sys.argv[2::2], sys.argv[3::2])))
"""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_commit_by_another_process_is_seen_by_the_next_query(spark, tmp_path, table_type):
    path = tmp_path / "t"
    catalog = f"native_other_{table_type.lower()}"
    _write(spark, path, table_type, [_rec(i, 1) for i in range(8)], "bulk_insert")
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    assert spark.sql(f"SELECT name FROM {catalog} WHERE id = 3").collect()[0][0] == "n3_1"
    loaded = spark.read.format("hudi").load(str(path))
    args = [str(x) for kv in _opts(table_type, "upsert").items() for x in kv]
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path), *args], check=True, env=os.environ.copy())
    # No refresh: the catalog entry, and a DataFrame made before the commit, read the new commit at the next query.
    assert spark.sql(f"SELECT name FROM {catalog} WHERE id = 3").collect()[0][0] == "other"
    assert spark.table(catalog).count() == 9
    assert loaded.where("id = 100").count() == 1
    assert_same_rows(spark.table(catalog).toArrow(), rs_snapshot(path), f"{table_type}: after the other process")


def test_an_unchanged_table_is_planned_without_asking_the_python_planner_and_a_commit_is_seen(spark, tmp_path):
    """The JVM keeps each query's plan with its table's timeline stamp (`PlanCache`): the same query of an unchanged
    table makes no round trip to the Python planner; a commit changes the stamp, and the next query plans afresh."""
    path = tmp_path / "t"
    catalog = "native_plan_cache"
    _write(spark, path, "MERGE_ON_READ", [_rec(i, 1) for i in range(8)], "bulk_insert")
    _write(spark, path, "MERGE_ON_READ", [_rec(i, 2) for i in (0, 4)])  # logs in d0: a split plan
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    planner = spark._jvm.hudiengine.spark.Planner
    query = f"SELECT id, name FROM {catalog} WHERE ts >= 1"
    assert sorted(spark.sql(query).collect()) == sorted((i, f"n{i}_{2 if i in (0, 4) else 1}") for i in range(8))
    before = planner.roundTrips()
    for _ in range(3):
        assert len(spark.sql(query).collect()) == 8
    assert planner.roundTrips() == before
    _write(spark, path, "MERGE_ON_READ", [_rec(4, 3), _rec(9, 3)])
    got = dict(spark.sql(query).collect())
    assert planner.roundTrips() == before + 1
    assert got[4] == "n4_3" and got[9] == "n9_3" and len(got) == 9
    assert_same_rows(spark.table(catalog).toArrow(), rs_snapshot(path), "after the commit")


def test_read_options_on_a_catalog_name_are_refused_and_never_pin_the_table(spark, tmp_path):
    """Spark caches a catalog table's relation with the options of its first read (`spark.read.options(...).table`).
    The native source refuses read options on a catalog name (they would pin every later query of the name to an
    old instant) and drops the cached relation, so the next query reads the latest commit; time travel and incremental
    reads go through format("hudi").load(path)."""
    path = tmp_path / "t"
    first = _write(spark, path, "COPY_ON_WRITE", [_rec(i, 1) for i in range(8)], "bulk_insert")
    _write(spark, path, "COPY_ON_WRITE", [_rec(i, 2) for i in range(100, 104)])
    catalog = "native_not_pinned"
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    expected = rs_snapshot(path)
    assert expected.num_rows == 12 and rs_snapshot(path, as_of=first).num_rows == 8
    with pytest.raises(Exception, match=rf"catalog table \S*{catalog} read with options as\.of\.instant: .*"
                                        r'format\("hudi"\)\.options\(\.\.\.\)\.load'):
        spark.read.option("as.of.instant", first).table(catalog).collect()
    assert_same_rows(spark.table(catalog).toArrow(), expected, "the next read of the name: not pinned")
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), expected, "SQL: not pinned")


def test_timestamp_as_of_on_a_catalog_name_reads_that_instant_and_never_pins_the_name(spark, tmp_path):
    """Hudi's `TIMESTAMP AS OF` (Spark refuses time travel on any v1 table; the component's parser hands it to its
    own rule): an instant time or a date / timestamp string, in a join beside the latest state, in a subquery;
    later queries of the name read the latest commit; `VERSION AS OF` and expressions are refused naming the table;
    a table of another source keeps Spark's own answer. The columns are the table's as of the instant."""
    path = tmp_path / "t"
    first = _write(spark, path, "MERGE_ON_READ", [_rec(i, 1) for i in range(8)], "bulk_insert")
    _write(spark, path, "MERGE_ON_READ", [_rec(i, 2) for i in range(4)] + [_rec(i, 2) for i in range(100, 104)])
    catalog = "native_as_of"
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    old, latest = rs_snapshot(path, as_of=first), rs_snapshot(path)
    assert old.num_rows == 8 and latest.num_rows == 12
    dashed = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    for clause in (f"TIMESTAMP AS OF '{first}'", f"FOR SYSTEM_TIME AS OF '{dashed}'", f"TIMESTAMP AS OF {first}"):
        assert_same_rows(spark.sql(f"SELECT * FROM default.{catalog} {clause}").toArrow(), old, clause)
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), latest, "the next query: not pinned")
    changed = spark.sql(f"SELECT o.id FROM {catalog} TIMESTAMP AS OF '{first}' o JOIN {catalog} n "
                        "ON o.id = n.id WHERE o.name <> n.name ORDER BY o.id").collect()
    assert [r.id for r in changed] == [0, 1, 2, 3]
    added = spark.sql(f"SELECT count(*) FROM {catalog} WHERE id NOT IN "
                      f"(SELECT id FROM {catalog} TIMESTAMP AS OF '{first}')").collect()[0][0]
    assert added == 4
    # The columns as of the instant, as Hudi reads them: not the entry's, which ALTER TABLE changed since.
    spark.sql(f"ALTER TABLE {catalog} ADD COLUMNS (note string)")
    assert "note" in spark.table(catalog).columns
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog} TIMESTAMP AS OF '{first}'").toArrow(), old, "before ALTER")
    with pytest.raises(Exception, match=rf"VERSION AS OF 1 on \S*{catalog}: .*TIMESTAMP AS OF"):
        spark.sql(f"SELECT * FROM {catalog} VERSION AS OF 1").collect()
    with pytest.raises(Exception, match=rf"TIMESTAMP AS OF current_timestamp\(\) on \S*{catalog}: .*literal"):
        spark.sql(f"SELECT * FROM {catalog} TIMESTAMP AS OF current_timestamp()").collect()
    with pytest.raises(Exception, match="as.of.instant='yesterday'"):
        spark.sql(f"SELECT * FROM {catalog} TIMESTAMP AS OF 'yesterday'").collect()
    spark.sql("DROP TABLE IF EXISTS native_as_of_parquet")
    spark.sql("CREATE TABLE native_as_of_parquet (id INT) USING parquet")
    with pytest.raises(Exception, match="UNSUPPORTED_FEATURE.TIME_TRAVEL"):
        spark.sql("SELECT * FROM native_as_of_parquet TIMESTAMP AS OF '2024-01-01'").collect()


def test_a_python_source_named_hudi_is_refused_beside_the_jvm_one(spark):
    """How Spark 4.3 resolves `hudi` with the component loaded: the JVM `DataSourceRegister` owns the name; a Python
    source of the same name is refused when registered (DATA_SOURCE_ALREADY_EXISTS), so no read is ambiguous."""
    assert native.native_enabled(spark)
    with pytest.raises(Exception, match="DATA_SOURCE_ALREADY_EXISTS"):
        spark.dataSource.register(HudiDataSource)


def test_a_session_whose_hudi_name_another_jvm_source_owns_keeps_it_and_still_gets_hudi_merge(spark, tmp_path,
                                                                                             monkeypatch):
    """A session without our component but with another JVM `hudi` source (Apache Hudi's own jar; our component
    stands in for it here): `register_data_source` leaves `hudi` to that source and still registers `hudi_merge`."""
    from hudi_engine.spark import registration

    path = tmp_path / "t"
    _write(spark, path, "COPY_ON_WRITE", [_rec(i, 1) for i in range(4)], "bulk_insert")
    monkeypatch.setattr(native, "native_enabled", lambda _spark: False)
    registration.register_data_source(spark)  # would raise DATA_SOURCE_ALREADY_EXISTS before
    assert spark.read.format("hudi_merge").load(str(path)).count() == 4
    assert "FileScan parquet" in _plan_text(spark.read.format("hudi").load(str(path)))  # still the JVM source


def test_a_location_without_a_readable_table_names_the_table_its_location_and_what_was_found(spark, tmp_path):
    """Issue 24, bad input: a `USING hudi` catalog entry over a folder that is not a Hudi table, and one over a
    table of a version the reader cannot read."""
    path = tmp_path / "t"
    _write(spark, path, "COPY_ON_WRITE", [_rec(i, 1) for i in range(4)], "bulk_insert")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "part-0.parquet").write_bytes(b"not a table")
    spark.sql("DROP TABLE IF EXISTS bad_plain")
    spark.sql(catalog_table_ddl("bad_plain", str(path)).replace(str(path), str(plain)))
    found = r"no \.hoodie folder at .*plain: not a Hudi table; found: part-0\.parquet"
    with pytest.raises(Exception, match=rf"catalog table (spark_catalog\.)?default\.bad_plain at \S*plain: {found}"):
        spark.sql("SELECT id FROM bad_plain").collect()
    with pytest.raises(Exception, match=rf"hudi source at \S*plain: {found}"):
        spark.read.format("hudi").load(str(plain)).collect()

    old = tmp_path / "old"
    shutil.copytree(path, old)
    spark.sql("DROP TABLE IF EXISTS bad_version")
    create_catalog_table(spark, "bad_version", str(old))
    props = old / ".hoodie" / "hoodie.properties"
    props.write_text(re.sub(r"hoodie\.table\.version=\d+", "hoodie.table.version=5", props.read_text()))
    with pytest.raises(Exception, match=r"catalog table (spark_catalog\.)?default\.bad_version at \S*old: .*"
                                        r"hoodie\.table\.version=5 \(.*\) is older than supported"):
        spark.table("bad_version").collect()


# ---- the compiled component -----------------------------------------------------------------------------------


@pytest.fixture
def private_component(tmp_path, monkeypatch):
    """The component's source copied into a folder of this test's, built into a cache of its own."""
    source = tmp_path / "src"
    shutil.copytree(native.SOURCE_DIR, source)
    monkeypatch.setattr(native, "SOURCE_DIR", source)
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "cache"))
    return source


def _built(jar: Path) -> tuple[int, int]:
    st = jar.stat()
    return st.st_ino, st.st_mtime_ns


def test_the_component_is_rebuilt_when_its_source_the_spark_version_or_the_jar_changes(private_component,
                                                                                      monkeypatch):
    jar = native.component_jar()  # compiled for real, once
    assert native.jar_is_current(jar, native.source_hash(), native.spark_version())
    with zipfile.ZipFile(jar) as z:
        assert "hudiengine/spark/DefaultSource.class" in z.namelist()
        classes = {n: z.read(n) for n in z.namelist() if n.endswith(".class")}
    first = _built(jar)
    assert native.component_jar() == jar and _built(jar) == first, "reused, not rebuilt"

    # From here the cache's decisions are under test, not scalac: each rebuild compiles the first build's classes.
    compiles: list[Path] = []

    def compile_again(into: Path, target: Path, version: str) -> None:
        compiles.append(target)
        for name, data in classes.items():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            (into / name).write_bytes(data)

    monkeypatch.setattr(native, "_compile", compile_again)
    scala = next(private_component.glob("*.scala"))
    scala.write_text(scala.read_text() + "\n// changed\n")
    changed = native.component_jar()
    assert changed != jar and changed.exists() and compiles == [changed], "a new source hash: a new jar"

    real_version = native.spark_version
    monkeypatch.setattr(native, "spark_version", lambda: "0.0.0-other")
    other_spark = native.component_jar()
    assert other_spark.parent.name.startswith("spark-0.0.0-other-") and compiles[-1] == other_spark
    monkeypatch.setattr(native, "spark_version", real_version)

    changed.write_bytes(b"not a jar")  # broken: rebuilt in place
    assert native.component_jar() == changed and native.jar_is_current(changed, native.source_hash(),
                                                                       native.spark_version())
    assert len(compiles) == 3

    # Stale: the jar in this folder says it was built for another Spark (or lacks its classes): rebuilt in place.
    for stale in (native.MARKER, "hudiengine/spark/HudiStrategy$.class"):
        _rewrite_without(changed, stale, extra={native.MARKER: native._marker(native.source_hash(), "0.0.0-other")}
                         if stale == native.MARKER else {})
        assert not native.jar_is_current(changed, native.source_hash(), native.spark_version()), stale
        before = _built(changed)
        assert native.component_jar() == changed and _built(changed) != before, f"{stale}: rebuilt"
        assert native.jar_is_current(changed, native.source_hash(), native.spark_version()), stale
    current = _built(changed)
    assert native.component_jar() == changed and _built(changed) == current, "and then reused"
    assert len(compiles) == 5


def _rewrite_without(jar: Path, name: str, extra: dict[str, str]) -> None:
    """`jar` without its entry `name`, with the entries `extra` added."""
    with zipfile.ZipFile(jar) as z:
        entries = {n: z.read(n) for n in z.namelist() if n != name}
    with zipfile.ZipFile(jar, "w") as z:
        for n, data in {**entries, **{k: v.encode() for k, v in extra.items()}}.items():
            z.writestr(n, data)


def test_a_component_that_does_not_compile_is_a_clear_error(private_component):
    scala = next(private_component.glob("*.scala"))
    scala.write_text(scala.read_text() + "\nobject Broken { val x: Int = \"no\" }\n")
    with pytest.raises(HudiError, match=r"compiling .* against Spark .* failed[\s\S]*type mismatch[\s\S]*delete"):
        native.component_jar()
    assert not list((private_component.parent / "cache").rglob("*.jar")), "no jar left behind"


def test_a_dbt_profile_gets_the_native_source_unless_it_opts_out(private_component, tmp_path):
    """dbt's session (method: session) gets the component's jar and extension by default, none with the opt-out."""
    from dbt.adapters.hudi.session import NATIVE_KEY, SessionSettings, _with_native_source

    default = SessionSettings.resolve({}, tmp_path)
    assert default.native and "spark.jars" not in default.conf  # added when the session starts, not when resolved
    conf = _with_native_source(default.conf)
    assert conf["spark.jars"] == str(native.component_jar())
    assert conf["spark.sql.extensions"] == native.EXTENSIONS_CLASS
    opted_out = SessionSettings.resolve({NATIVE_KEY: "false"}, tmp_path)
    assert not opted_out.native
    assert native.EXTENSIONS_CLASS not in opted_out.conf.get("spark.sql.extensions", "")
