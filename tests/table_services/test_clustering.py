"""Clustering planned and executed by the engine (hudi_engine/table_services/clustering.py): file counts fall, rows
stay (our reader and hudi-rs), time travel before it reads the old files, writes after it go to the new groups,
cleaning removes the replaced files after retention; the size-based plan's rules; Java Hudi's pending plans run to
completion; bad input refused before anything is written."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from java_tables import CASES, unzip_feature_table
from local_write import write
from metadata_tables import feature_rows, files_only_table, mdt_listing, storage_listing, write_rows
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config.write_config import ClusteringConfig, WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.metadata.table import metadata_location
from hudi_engine.table_services import clustering as clustering_service
from hudi_engine.table_services.clustering import pending_clusterings, select_partitions
from hudi_engine.timeline import Action, Instant, State, Timeline
from hudi_engine.timeline.clustering import ClusteringPlan
from hudi_engine.timeline.instant import new_instant_time

FILE_NAME = "_hoodie_file_name"
SORT = {"hoodie.clustering.plan.strategy.sort.columns": "val"}


def options(table_type: str, version: int, **more: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0", "hoodie.datasource.write.operation": "upsert", **more}


def batch(ids: list[int], ts: int, parts: tuple[str, ...] = ("a", "b")) -> pa.Table:
    return pa.table({"id": [f"k{i:03d}" for i in ids], "part": [parts[i % len(parts)] for i in ids],
                     "ts": [ts] * len(ids), "val": [float((i * 37) % 101) for i in ids]})


def small_files_table(path: Path, table_type: str, version: int, batches: int = 4) -> dict[str, str]:
    """`batches` inserts of 10 keys over partitions a and b (each a new file group per partition), then an update
    of two keys (MOR: log files)."""
    opts = options(table_type, version)
    for b in range(batches):
        write(path, batch(list(range(b * 10, b * 10 + 10)), b), opts)
    write(path, batch([1, 2], 9).set_column(3, "val", pa.array([500.0, 600.0])), opts)
    return opts


def data_rows(t: HudiTable, as_of: str | None = None) -> pa.Table:
    rows = t.read_snapshot(as_of=as_of)
    return rows.select([c for c in rows.column_names if c != FILE_NAME])


def groups(t: HudiTable) -> set[tuple[str, str]]:
    return {(s.partition_path, s.file_id) for s in t.file_slices()}


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clustering_stitches_small_files_sorted_and_every_reader_agrees(tmp_path, table_type, version):
    path = tmp_path / "t"
    opts = small_files_table(path, table_type, version)
    t = HudiTable.load(str(path))
    before, old_groups, last = data_rows(t), groups(t), t.timeline.latest_time()
    assert len(old_groups) == 8

    result = t.cluster(options={**opts, **SORT})

    t = HudiTable.load(str(path))
    assert set(result.replaced_file_ids) == {f for _, f in old_groups}
    assert groups(t) == {(p, f) for p, ids in result.new.items() for f in ids} and len(groups(t)) == 2
    completed = t.timeline.instants_at(result.instant_time)
    assert [i.action for i in completed if i.is_completed] == [Action.REPLACE_COMMIT]
    requested = f"{result.instant_time}.{'clustering' if version == 9 else 'replacecommit'}.requested"
    assert [p.name for p in (path / ".hoodie").rglob(requested)] == [requested]
    meta = t.timeline.commit_metadata(next(i for i in completed if i.is_completed))
    assert meta.operation_type == "CLUSTER"
    assert_same_rows(data_rows(t), before, "after clustering")
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "hudi-rs")
    for partition in ("a", "b"):  # one file per partition, sorted by the sort column
        vals = t.read_snapshot(filters=[("part", "=", partition)]).column("val").to_pylist()
        assert vals == sorted(vals)
    # The records keep their commit times (preserve commit metadata): incremental readers see no new rows.
    assert set(t.read_snapshot().column("_hoodie_commit_time").to_pylist()) <= set(t.timeline.timestamps())
    assert result.instant_time not in t.read_snapshot().column("_hoodie_commit_time").to_pylist()

    # Time travel before the clustering reads the old file groups, ours and hudi-rs.
    old = t.read_snapshot(as_of=last)
    assert {f.split("_")[0] for f in old.column(FILE_NAME).to_pylist()} <= {f for _, f in old_groups}
    assert_same_rows(old.select(before.column_names), before, "time travel")
    assert_same_rows(old, rs_snapshot(path, as_of=last).select(old.column_names), "hudi-rs time travel")

    # A write after it goes to the new groups.
    write(path, batch([3, 4], 20), opts)
    t = HudiTable.load(str(path))
    hit = t.read_snapshot(filters=[("id", "in", ["k003", "k004"])])
    assert {f.split("_")[0].lstrip(".") for f in hit.column(FILE_NAME).to_pylist()} <= set(result.new_file_ids)
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "after a write")


def test_cleaning_removes_the_replaced_files_after_retention_only(tmp_path):
    path = tmp_path / "t"
    opts = small_files_table(path, "COPY_ON_WRITE", 6)
    t = HudiTable.load(str(path))
    result = t.cluster(options=opts)
    replaced = set(result.replaced_file_ids)

    def files_of(ids: set[str]) -> list[Path]:
        return [f for f in path.rglob("*.parquet") if f.name.split("_")[0] in ids]

    t.clean(options={**opts, "hoodie.cleaner.commits.retained": "2"})
    assert files_of(replaced), "the replacecommit is within retention: its inputs stay for time travel"
    for i in range(3):
        write(path, batch([i], 30 + i), {**opts, "hoodie.clean.automatic": "false"})
    HudiTable.load(str(path)).clean(options={**opts, "hoodie.cleaner.commits.retained": "2"})
    assert not files_of(replaced)
    t = HudiTable.load(str(path))
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "after cleaning")


@pytest.mark.parametrize("version", [6, 8, 9])
def test_schedule_then_execute_writes_a_plan_as_hudi_does(tmp_path, version):
    path = tmp_path / "t"
    opts = small_files_table(path, "MERGE_ON_READ", version)
    t = HudiTable.load(str(path))
    scheduled = t.cluster(options={**opts, **SORT, "hoodie.clustering.plan.strategy.partition.selected": "b"},
                          op="schedule")
    assert scheduled is not None and list(scheduled.replaced) == ["b"] and not scheduled.new
    t = HudiTable.load(str(path))
    assert pending_clusterings(t.location) == [scheduled.instant_time]
    plan = ClusteringPlan.load(t.timeline, t.timeline.instants_at(scheduled.instant_time)[0])
    assert plan is not None and plan.sort_columns == ("val",)
    assert plan.strategy_class == clustering_service.SORT_AND_SIZE_EXECUTION
    assert plan.num_output_groups == (1,) and {p for p, _ in plan.file_groups} == {"b"}
    # Another schedule leaves the pending plan's file groups out: partition b has nothing left.
    again = t.cluster(options={**opts, "hoodie.clustering.plan.strategy.partition.selected": "b"}, op="schedule")
    assert again is None
    done = t.cluster(options=opts, op="execute")
    assert done is not None and done.instant_time == scheduled.instant_time
    assert pending_clusterings(t.location) == []
    t = HudiTable.load(str(path))
    assert len([g for g in groups(t) if g[0] == "b"]) == 1 and len([g for g in groups(t) if g[0] == "a"]) == 4
    assert t.cluster(options=opts, op="execute") is None


def test_the_size_based_plan_caps_groups_by_bytes_count_and_small_file_limit(tmp_path):
    path = tmp_path / "t"
    opts = small_files_table(path, "COPY_ON_WRITE", 6, batches=6)
    t = HudiTable.load(str(path))
    sizes = sorted(s.base_file.size for s in t.file_slices())
    # Two slices fit a group: six slices of a partition make three groups, at most four planned.
    capped = {**opts, "hoodie.clustering.plan.strategy.max.bytes.per.group": str(2 * sizes[-1]),
              "hoodie.clustering.plan.strategy.max.num.groups": "4"}
    plan_record = clustering_service.build_clustering_plan(t.location, t.timeline, WriteConfig.from_options(capped))
    assert plan_record is not None
    planned = plan_record["clusteringPlan"]["inputGroups"]
    assert len(planned) == 4 and all(len(g["slices"]) == 2 for g in planned)
    assert all(g["numOutputFileGroups"] == 1 for g in planned)
    # A target size under the group's bytes plans more output files; the execution writes them.
    split = {**opts, "hoodie.clustering.plan.strategy.target.file.max.bytes": str(sizes[0])}
    record = clustering_service.build_clustering_plan(t.location, t.timeline, WriteConfig.from_options(split))
    assert record is not None
    size_of = {s.file_id: s.base_file.size for s in t.file_slices()}
    outputs = {}
    for g in record["clusteringPlan"]["inputGroups"]:
        total = sum(size_of[s["fileId"]] for s in g["slices"])
        assert g["numOutputFileGroups"] == -(-total // sizes[0]) >= 6
        outputs[g["slices"][0]["partitionPath"]] = g["numOutputFileGroups"]
    # Files at or above the small file limit are not planned.
    limit = {**opts, "hoodie.clustering.plan.strategy.small.file.limit": str(sizes[0])}
    assert clustering_service.build_clustering_plan(t.location, t.timeline, WriteConfig.from_options(limit)) is None
    result = t.cluster(options=split)
    assert result is not None and len(result.new["a"]) == outputs["a"] and len(result.replaced["a"]) == 6


def test_partition_selection():
    parts = ["2024/01/01", "2024/01/02", "2024/01/03", "2024/01/04"]
    assert select_partitions(parts, ClusteringConfig()) == parts
    recent = ClusteringConfig(partition_filter_mode="RECENT_DAYS", lookback_partitions=2, skip_latest_partitions=1)
    assert select_partitions(parts, recent) == ["2024/01/02", "2024/01/03"]
    between = ClusteringConfig(partition_filter_mode="SELECTED_PARTITIONS", begin_partition="2024/01/02",
                               end_partition="2024/01/03")
    assert select_partitions(parts, between) == ["2024/01/02", "2024/01/03"]
    assert select_partitions(parts, ClusteringConfig(partition_regex=r".*/0[14]")) == ["2024/01/01", "2024/01/04"]
    assert select_partitions(parts, ClusteringConfig(partitions_selected=("2024/01/04", "x"))) == ["2024/01/04"]


@pytest.mark.parametrize("given, words", [
    ({"hoodie.clustering.plan.strategy.sort.columns": "val,nope"}, r"names \['nope'\], not columns of the table"),
    ({"hoodie.clustering.plan.strategy.sort.columns": "_hoodie_record_key"}, "not columns of the table"),
    ({"hoodie.clustering.plan.strategy.class": "org.apache.hudi.client.clustering.plan.strategy."
      "SparkSingleFileSortPlanStrategy"}, "SparkSizeBasedClusteringPlanStrategy only"),
    ({"hoodie.clustering.execution.strategy.class": "com.acme.MyStrategy"}, "SparkSortAndSizeExecutionStrategy only"),
    ({"hoodie.layout.optimize.strategy": "spiral"}, "expected one of linear, z-order, hilbert"),
    ({"hoodie.index.type": "BUCKET"}, "Clustering is not supported for bucket index"),
])
def test_bad_input_is_refused_by_name_before_anything_is_written(tmp_path, given, words):
    path = tmp_path / "t"
    opts = small_files_table(path, "COPY_ON_WRITE", 6, batches=2)
    t = HudiTable.load(str(path))
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(ConfigError, match=words):
        t.cluster(options={**opts, **given})
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before


@pytest.mark.parametrize("given, words", [
    ({"hoodie.clustering.inline": "true", "hoodie.clustering.plan.strategy.sort.columns": "nope"},
     r"names \['nope'\], not columns of the table"),
    ({"hoodie.clustering.schedule.inline": "true", "hoodie.layout.optimize.strategy": "spiral"},
     "expected one of linear, z-order, hilbert"),
])
def test_a_write_that_clusters_inline_is_refused_before_its_commit_on_bad_clustering_options(tmp_path, given, words):
    """Checked at the write's door, not after its commit: the table is as it was (timeline and data files)."""
    path = tmp_path / "t"
    opts = options("COPY_ON_WRITE", 9)
    write(path, batch([1, 2], 1), opts)
    before = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    with pytest.raises(ConfigError, match=words):
        write(path, batch([3], 2), {**opts, **given}, table_services=True)
    assert sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()) == before


def test_a_nested_sort_column_is_refused(tmp_path):
    path = tmp_path / "t"
    opts = options("COPY_ON_WRITE", 6)
    rows = batch([1, 2], 1).append_column("tags", pa.array([["x"], ["y"]]))
    write(path, rows, opts)
    with pytest.raises(ConfigError, match=r"tags \(list<item: string>\).*no order"):
        HudiTable.load(str(path)).cluster(options={**opts, "hoodie.clustering.plan.strategy.sort.columns": "tags"})


def test_a_failed_execution_leaves_the_plan_requested_and_nothing_visible(tmp_path, monkeypatch):
    path = tmp_path / "t"
    opts = small_files_table(path, "COPY_ON_WRITE", 9)
    t = HudiTable.load(str(path))
    before = data_rows(t)
    calls = []
    real = clustering_service.write_base

    def fail_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(clustering_service, "write_base", fail_second)
    with pytest.raises(OSError):
        t.cluster(options=opts)
    t = HudiTable.load(str(path))
    [ts] = pending_clusterings(t.location)
    assert [i.state for i in t.timeline.instants_at(ts)] == [State.REQUESTED]
    assert not [f for f in path.rglob("*.parquet") if f.name.endswith(f"_{ts}.parquet")]
    assert_same_rows(data_rows(t), before, "after the failure")
    monkeypatch.undo()
    assert t.cluster(options=opts, op="execute").instant_time == ts
    assert_same_rows(data_rows(HudiTable.load(str(path))), before, "after the retry")


class Killed(BaseException):
    """The process dying: nothing on the way undoes anything."""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_crash_mid_execution_is_invisible_and_the_next_execute_completes_it(tmp_path, monkeypatch, table_type):
    """Killed after the first output file, before the replacecommit (no undo: the process is gone): readers see
    the table as it was, the next writer writes new keys (updates of the planned groups stay refused, as Hudi's
    reject strategy says), and the next execute undoes the attempt and completes the plan."""
    path = tmp_path / "t"
    opts = small_files_table(path, table_type, 9)
    t = HudiTable.load(str(path))
    before = data_rows(t)
    real = clustering_service.write_base
    calls = []

    def die_on_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise Killed()
        return real(*args, **kwargs)

    monkeypatch.setattr(clustering_service, "write_base", die_on_second)
    monkeypatch.setattr(clustering_service, "undo_clustering_attempt", lambda *a, **k: [])
    with pytest.raises(Killed):
        t.cluster(options={**opts, **SORT, "hoodie.layout.optimize.strategy": "hilbert",
                           "hoodie.clustering.plan.strategy.sort.columns": "val,id"})
    monkeypatch.undo()
    t = HudiTable.load(str(path))
    [ts] = pending_clusterings(t.location)
    assert [i.state for i in t.timeline.instants_at(ts)] == [State.INFLIGHT]
    assert [f for f in path.rglob("*.parquet") if f.name.endswith(f"_{ts}.parquet")], "the crash left a file"
    assert_same_rows(data_rows(t), before, "after the crash", key="id")
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "hudi-rs", key="id")
    write(path, batch([90, 91], 20), opts)  # new keys: new file groups
    _executes_pending(path, ts, {**opts, "hoodie.layout.optimize.strategy": "hilbert"})


def test_scheduling_while_a_write_is_pending_plans_committed_files_only(tmp_path):
    """As Hudi, a clustering is scheduled while a write is pending (a live writer under OCC, or a failed one): the
    plan names committed files only. Layout 2 names a log file by the delta commit writing it, so a pending one's is
    left out: it may yet be rolled back (deleted) or commit, and then it or the clustering loses (the race test)."""
    path = tmp_path / "t"
    opts = small_files_table(path, "MERGE_ON_READ", 9, batches=2)
    t = HudiTable.load(str(path))
    # A time from the clock: a far-future one would lift this process's instant generator for every later test
    # (`new_instant_time` steps past the latest time it saw).
    pending = new_instant_time(after=t.timeline.latest_time())
    t.timeline.create_requested(Instant(pending, Action.DELTA_COMMIT, State.REQUESTED))
    committed = next(f for s in t.file_slices() for f in s.log_files)
    stray = committed.name.format().replace(committed.base_instant, pending)
    shutil.copy(committed.path, Path(committed.path).with_name(stray))

    scheduled = HudiTable.load(str(path)).cluster(options=opts, op="schedule")
    assert scheduled is not None
    t = HudiTable.load(str(path))
    plan = ClusteringPlan.load(t.timeline, t.timeline.instants_at(scheduled.instant_time)[0])
    planned_logs = [n for s in plan.slices for n in s.log_file_names]
    assert committed.name.format() in planned_logs and stray not in planned_logs


@pytest.mark.parametrize("name", ["clustering_pending_cow_v6", "clustering_pending_cow_v9",
                                  "clustering_failed_cow_v6", "clustering_failed_cow_v9"])
def test_java_hudis_pending_plans_are_executed(tmp_path, name):
    case = next(c for c in CASES if c.name == name)
    path, reads = unzip_feature_table(case, tmp_path)
    snapshot = next(r for r in reads if r["kind"] == "snapshot")["rows"]
    t = HudiTable.load(str(path))
    [ts] = pending_clusterings(t.location)
    plan = ClusteringPlan.load(t.timeline, t.timeline.instants_at(ts)[0])
    assert plan is not None
    result = t.cluster(op="execute")
    assert result is not None and result.instant_time == ts
    assert sorted(result.replaced_file_ids) == sorted(f for _, f in plan.file_groups)
    t = HudiTable.load(str(path))
    assert not pending_clusterings(t.location)
    columns = [c for c in snapshot.column_names if c != FILE_NAME]  # the files are ours now
    ours = t.read_snapshot(columns=columns)
    assert_same_rows(ours, snapshot.select(columns), "Java's rows", key="id")
    theirs = rs_snapshot(path)
    assert_same_rows(ours, theirs.select(ours.column_names), "hudi-rs", key="id")
    shutil.rmtree(tmp_path / case.name)


def test_inline_clustering_after_max_commits(tmp_path):
    path = tmp_path / "t"
    opts = options("COPY_ON_WRITE", 9, **{"hoodie.clustering.inline": "true",
                                          "hoodie.clustering.inline.max.commits": "3"})
    for b in range(2):
        write(path, batch(list(range(b * 4, b * 4 + 4)), b), opts, table_services=True)
    t = HudiTable.load(str(path))
    assert not pending_clusterings(t.location) and len(groups(t)) == 4, "not due after 2 commits"
    write(path, batch([20, 21], 2), opts, table_services=True)
    t = HudiTable.load(str(path))
    [clustering] = [i for i in t.timeline if i.action is Action.REPLACE_COMMIT]
    assert clustering.is_completed and len(groups(t)) == 2
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "inline")
    write(path, batch([30], 3), opts, table_services=True)  # one commit since: not due again
    assert len([i for i in HudiTable.load(str(path)).timeline if i.action is Action.REPLACE_COMMIT]) == 1


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_the_metadata_table_records_the_clustering(name, tmp_path):
    table = files_only_table(name, tmp_path)
    write_rows(table, feature_rows([1, 2, 51], "e1"))
    rows = HudiTable.load(str(table)).read_snapshot(columns=["id", "v"]).sort_by("id")
    result = HudiTable.load(str(table)).cluster(options={"hoodie.clustering.plan.strategy.sort.columns": "id"})
    assert result is not None and result.new_file_ids
    t = HudiTable.load(str(table))
    assert t.config.metadata_partitions == ["files"], "kept, not disabled"
    mdt = Timeline.load(metadata_location(t.location))
    assert [i.state for i in mdt.instants if i.timestamp == result.instant_time] == [State.COMPLETED]
    assert mdt_listing(table) == storage_listing(table)
    assert t.read_snapshot(columns=["id", "v"]).sort_by("id") == rows


def _files_touched(path: Path, column: str, low: int, high: int) -> int:
    """Base files of the latest slices whose footer min/max of `column` meets [low, high]: what a reader skipping
    by column stats opens."""
    import pyarrow.parquet as pq
    t = HudiTable.load(str(path))
    touched = 0
    for s in t.file_slices():
        meta = pq.ParquetFile(path / s.partition_path / s.base_file.path.rsplit("/", 1)[-1]).metadata
        index = meta.schema.to_arrow_schema().get_field_index(column)
        stats = [meta.row_group(g).column(index).statistics for g in range(meta.num_row_groups)]
        touched += any(st.min <= high and st.max >= low for st in stats)
    return touched


@pytest.mark.parametrize("layout", ["z-order", "hilbert"])
def test_a_curve_skips_files_on_both_sort_columns_where_linear_skips_on_the_first_only(tmp_path, layout):
    rng = __import__("numpy").random.default_rng(3)
    touched = {}
    for how in ("linear", layout):
        path = tmp_path / how
        opts = options("COPY_ON_WRITE", 6, **{"hoodie.datasource.write.partitionpath.field": ""})
        for b in range(2):
            ids = range(b * 1000, b * 1000 + 1000)
            write(path, pa.table({"id": [f"k{i:05d}" for i in ids], "ts": [b] * 1000,
                                  "x": pa.array(rng.integers(0, 1000, 1000), pa.int64()),
                                  "y": pa.array(rng.integers(0, 1000, 1000), pa.int32())}), opts)
        size = sum(p.stat().st_size for p in path.glob("*.parquet"))
        before = data_rows(HudiTable.load(str(path))).sort_by("id")
        HudiTable.load(str(path)).cluster(options={
            **opts, "hoodie.clustering.plan.strategy.sort.columns": "x,y", "hoodie.layout.optimize.strategy": how,
            "hoodie.clustering.plan.strategy.target.file.max.bytes": str(size // 16 + 1)})
        t = HudiTable.load(str(path))
        assert len(t.file_slices()) == 16
        assert data_rows(t).sort_by("id").equals(before)
        touched[how] = (_files_touched(path, "x", 0, 99), _files_touched(path, "y", 0, 99))
    (lin_x, lin_y), (cur_x, cur_y) = touched["linear"], touched[layout]
    assert lin_y == 16 and lin_x <= 3, touched  # linear: the first column alone is laid out
    assert cur_x < lin_y and cur_y < lin_y and cur_x + cur_y < lin_x + lin_y, touched


def test_schedule_inline_plans_and_a_later_execute_runs_it(tmp_path):
    path = tmp_path / "t"
    opts = options("MERGE_ON_READ", 9, **{"hoodie.clustering.schedule.inline": "true",
                                          "hoodie.clustering.async.max.commits": "2", **SORT})
    write(path, batch([0, 1, 2, 3], 0), opts, table_services=True)
    assert not pending_clusterings(HudiTable.load(str(path)).location), "not due after 1 commit"
    write(path, batch([4, 5, 6, 7], 1), opts, table_services=True)
    t = HudiTable.load(str(path))
    [planned] = pending_clusterings(t.location)
    assert not [i for i in t.timeline if i.action is Action.REPLACE_COMMIT], "planned, not executed"
    write(path, batch([8, 9], 2), opts, table_services=True)  # new keys: other file groups; no second plan
    t = HudiTable.load(str(path))
    assert pending_clusterings(t.location) == [planned]
    _executes_pending(path, planned, {**opts, "hoodie.clustering.schedule.inline": "false"})


def _executes_pending(path: Path, instant: str, opts: dict[str, str]) -> None:
    """`op=execute` completes the pending clustering `instant`; the rows stay, as our reader and hudi-rs read them."""
    expected = data_rows(HudiTable.load(str(path)))
    done = HudiTable.load(str(path)).cluster(options=opts, op="execute")
    t = HudiTable.load(str(path))
    assert done is not None and done.instant_time == instant and not pending_clusterings(t.location)
    assert_same_rows(data_rows(t), expected, "after the execute", key="id")
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "hudi-rs", key="id")


def test_async_clustering_leaves_the_writes_alone_and_inline_with_schedule_inline_is_refused(tmp_path):
    path = tmp_path / "t"
    opts = options("COPY_ON_WRITE", 6, **{"hoodie.clustering.async.enabled": "true",
                                          "hoodie.clustering.async.max.commits": "1"})
    for b in range(3):
        write(path, batch([b], b), opts, table_services=True)
    t = HudiTable.load(str(path))
    assert not pending_clusterings(t.location) and not [i for i in t.timeline if i.action is Action.REPLACE_COMMIT]
    assert t.cluster(options=opts) is not None  # another process clusters
    with pytest.raises(ConfigError, match="Both can't be set to true at the same time"):
        WriteConfig.from_options({**opts, "hoodie.clustering.inline": "true", "hoodie.clustering.schedule.inline": "true"})
