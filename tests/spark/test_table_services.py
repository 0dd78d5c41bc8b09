"""Table services on Spark: inline compaction and automatic cleaning around Spark writes, compaction tasks (one per
file group), a crashed compaction finished before the next write, rollback on request. hudi-rs checks every step."""
from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.file_naming import BaseFileName, WriteToken, is_base_file_name
from hudi_engine.location import TableLocation
from hudi_engine.spark import spark_executor, write
from hudi_engine.storage import Storage
from hudi_engine.table_services.compaction import CompactionPlan, CompactionTask, execute_operation, schedule_compaction
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant, State

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
COLS = ["id", "name", "ts", "amount", "dt"]


def opts(**extra) -> dict:
    o = {
        "hoodie.table.name": "trades",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": "upsert",
    }
    o.update(extra)
    return o


def rec(i: int, ts: int) -> dict:
    return {"id": i, "name": f"n{i}_{ts}", "ts": ts, "amount": i * 1.5 + ts, "dt": f"d{i % 3}"}


def rows(t) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


def model_rows(model: dict) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in model.values())


class Run:
    """Spark writes (each runs the table services around its commit), and the model."""

    def __init__(self, spark, path: Path, options: dict) -> None:
        self.spark, self.path, self.options = spark, path, options
        self.model: dict[int, dict] = {}
        self.history: dict[str, dict] = {}

    def write(self, records: list[dict], operation: str = "upsert") -> str:
        df = self.spark.createDataFrame([tuple(r[c] for c in COLS) for r in records], SCHEMA)
        result = write(df, str(self.path), dict(self.options, **{"hoodie.datasource.write.operation": operation}))
        for r in records:
            if operation == "delete":
                self.model.pop(r["id"], None)
            else:
                self.model[r["id"]] = r
        self.history[result.instant_time] = copy.deepcopy(self.model)
        return result.instant_time

    def timeline(self) -> Timeline:
        storage, base = Storage.for_uri(str(self.path))
        return Timeline.load(TableLocation.at(storage, base))

    def compactions(self) -> list[str]:
        tl = self.timeline()
        return [i.timestamp for i in tl.completed_commits() if tl.commit_metadata(i).compacted]

    def check(self, what: str) -> None:
        theirs = rs_snapshot(self.path)
        assert rows(theirs) == model_rows(self.model), f"{what}: hudi-rs snapshot"
        assert_same_rows(HudiTable.load(str(self.path)).read_snapshot(), theirs, f"{what}: ours vs hudi-rs")
        commits = [i.timestamp for i in self.timeline().completed_commits()]
        retained = commits[-int(self.options.get("hoodie.cleaner.commits.retained", 10)):]
        for instant in retained:
            model = self.history.get(instant)
            if model is None:  # a compaction: the rows of the last write before it
                model = self.history[max(i for i in self.history if i < instant)]
            assert rows(rs_snapshot(self.path, as_of=instant)) == model_rows(model), f"{what}: as of {instant}"


def test_inline_compaction_and_automatic_cleaning(spark, tmp_path):
    run = Run(spark, tmp_path / "t", opts(**{
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.cleaner.commits.retained": "2"}))
    w1 = run.write([rec(i, 1) for i in range(12)], "bulk_insert")
    assert run.compactions() == []
    w2 = run.write([rec(i, 2) for i in (0, 1, 2, 3)])
    (c1,) = run.compactions()  # two deltacommits: compacted after the second
    assert c1 > w2
    run.check("after the first compaction")
    assert_same_rows(rs_snapshot(run.path, read_optimized=True), rs_snapshot(run.path), "read-optimized = snapshot")
    done = HudiTable.load(str(run.path)).timeline.completion_times()  # v8+: ranges of completion times
    assert rs_incremental(run.path, done[w2], done[c1]).num_rows == 0  # a compaction changes no records
    assert sorted(rs_incremental(run.path, done[w1], done[c1]).column("id").to_pylist()) == [0, 1, 2, 3]
    w3 = run.write([rec(i, 3) for i in (0, 4, 5)])
    assert len(run.compactions()) == 1
    run.write([rec(i, 4) for i in (1, 6)])
    c1_, c2 = run.compactions()
    run.check("after the second compaction")
    done = HudiTable.load(str(run.path)).timeline.completion_times()
    assert sorted(rs_incremental(run.path, done[w3], done[c2]).column("id").to_pylist()) == [1, 6]
    # Cleaning ran after every commit: at most one slice before the earliest retained commit survives.
    storage, base = Storage.for_uri(str(run.path))
    assert run.timeline().filter_by([Action.CLEAN], [State.COMPLETED])
    per_group = Counter(BaseFileName.parse(p.name).file_id for p in run.path.rglob("*.parquet"))
    assert max(per_group.values()) <= 2
    w5 = run.write([rec(7, 5)], "delete")
    run.check("after a delete")
    # Rollback on request of the last deltacommit: back to the rows after the second compaction.
    result = HudiTable.load(str(run.path)).rollback()
    assert result.rolled_back.timestamp == w5
    assert rows(rs_snapshot(run.path)) == model_rows(run.history[max(i for i in run.history if i < w5)])


def test_compaction_tasks_and_a_crashed_compaction_finished_before_the_next_write(spark, tmp_path):
    run = Run(spark, tmp_path / "t", opts())
    run.write([rec(i, 1) for i in range(9)], "bulk_insert")
    run.write([rec(i, 2) for i in range(0, 9, 2)])
    storage, base = Storage.for_uri(str(run.path))
    c = schedule_compaction(TableLocation.at(storage, base)).timestamp
    timeline = Timeline.load(TableLocation.at(storage, base))
    plan = CompactionPlan.load(timeline, c)
    # The crash: inflight, one file group's new base file written, then the driver died.
    timeline.transition_to_inflight(Instant(c, Action.COMPACTION, State.REQUESTED))
    partial = execute_operation(CompactionTask.create(TableLocation.at(storage, base), c), plan.operations[0], (9, 9, 9))
    run.check("readers see the old state")
    # The next write first finishes the compaction (its log files then go on top of the compacted slices).
    w3 = run.write([rec(0, 3), rec(2, 3)])  # keys the compaction covers (updated in log files)
    assert run.compactions() == [c] and not (run.path / partial.path).exists()
    timeline = Timeline.load(TableLocation.at(storage, base))
    meta = timeline.commit_metadata(next(i for i in timeline.completed_commits() if i.timestamp == c))
    assert meta.compacted and meta.operation_type == "COMPACT"
    # One Spark task per file group: every new base file has its own task partition in its write token.
    tokens = [WriteToken.parse(s.path.rsplit("_", 2)[1]) for s in meta.write_stats()]
    assert len(tokens) == len(plan.operations) == len({t.partition_id for t in tokens})
    timeline = Timeline.load(TableLocation.at(storage, base))
    wrote = timeline.commit_metadata(next(i for i in timeline.completed_commits() if i.timestamp == w3))
    assert {s.prev_commit for s in wrote.write_stats()} == {c}
    run.check("after the next write")

    # On demand: compacts every file group with log files, on Spark.
    table = HudiTable.load(str(run.path))
    result = table.compact(executor=spark_executor(spark))
    assert result.file_groups == 2 and result.log_files_compacted == 2
    assert table.compact(executor=spark_executor(spark)) is None  # nothing left to compact
    run.check("after compaction on demand")
    assert_same_rows(rs_snapshot(run.path, read_optimized=True), rs_snapshot(run.path), "read-optimized = snapshot")
    new_bases = [p for p in run.path.rglob("*.parquet") if is_base_file_name(p.name)
                 and BaseFileName.parse(p.name).instant_time == result.instant_time]
    assert len(new_bases) == 2


def test_clustering_runs_one_spark_task_per_input_group(spark, tmp_path):
    from local_write import write as write_locally

    from hudi_engine.spark import clustering_executor

    path = tmp_path / "clustered"
    o = {"hoodie.table.name": "clustered", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.parquet.small.file.limit": "0"}
    for b in range(3):
        ids = [f"k{b * 4 + i:02d}" for i in range(4)]
        write_locally(path, pa.table({"id": ids, "part": ["a", "b"] * 2, "ts": [b] * 4,
                                      "val": [float(-b * 4 - i) for i in range(4)]}), o)
    write_locally(path, pa.table({"id": ["k00"], "part": ["a"], "ts": [9], "val": [99.0]}), o)  # a log file
    before = HudiTable.load(str(path)).read_snapshot()
    result = HudiTable.load(str(path)).cluster(
        options={**o, "hoodie.clustering.plan.strategy.sort.columns": "val"}, executor=clustering_executor(spark))
    assert result is not None and sorted(result.new) == ["a", "b"] and len(result.new_file_ids) == 2
    t = HudiTable.load(str(path))
    partitions_of_tasks = {s.base_file.name.write_token.split("-")[0]
                           for s in t.file_slices()}
    assert len(partitions_of_tasks) == 2, "one Spark task per input group"
    columns = [c for c in before.column_names if c != "_hoodie_file_name"]
    assert_same_rows(t.read_snapshot().select(columns), before.select(columns), "after clustering on Spark")
    assert_same_rows(t.read_snapshot(), rs_snapshot(path).select(t.read_snapshot().column_names), "hudi-rs")
