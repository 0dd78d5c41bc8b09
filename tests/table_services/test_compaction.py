"""MOR compaction on tables written by the handles: plan, execution, commit, crash recovery.

After every step hudi-rs reads exactly the rows of an in-memory model: snapshot, read-optimized, time travel to
every instant, incremental reads across the compaction.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import WriteError
from hudi_engine.file_naming import BaseFileName, LogFileName, is_base_file_name, is_log_file_name
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.compaction import (
    CompactionPlan,
    compaction_due,
    deltacommits_since_last_compaction,
    execute_operation,
    run_compaction,
    run_serially,
    schedule_compaction,
)
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import embedded_schema, read_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, create_table, start_commit
from hudi_engine.write.handles import WriteContext, append_handle, create_handle, log_base_instant, merge_handle
from hudi_engine.write.markers import list_markers

SCHEMA = pa.schema([("id", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.float64())])
DATA_COLS = SCHEMA.names


class Table:
    """A table written by the write handles directly (no Spark), and the rows every instant must show."""

    def __init__(self, tmp_path: Path, table_type: str = "MERGE_ON_READ", payload: str | None = None,
                 schema: pa.Schema = SCHEMA) -> None:
        self.path = tmp_path / "t"
        self.storage, self.base = Storage.for_uri(str(self.path))
        self.config = TableConfig.create("tbl", table_type, ["id"], ["part"], "ts", payload_class=payload)
        create_table(TableLocation.at(self.storage, self.base), self.config)
        self.schema = schema
        self.model: dict[str, dict] = {}
        self.history: dict[str, dict[str, dict]] = {}  # instant -> the model right after it
        self.written: dict[str, set[str]] = {}  # instant -> keys whose record it wrote

    @property
    def is_mor(self) -> bool:
        return self.config.table_type == "MERGE_ON_READ"

    def slices(self) -> dict[tuple[str, str], object]:
        return {(s.partition_path, s.file_id): s for s in HudiTable.load(str(self.path)).file_slices()}

    def write(self, rows: list[dict] = (), deletes: list[str] = (), schema: pa.Schema | None = None) -> str:
        """Upsert `rows` and delete `deletes`: new keys go to a new file group per partition, others to theirs."""
        schema = schema or self.schema
        inflight = start_commit(TableLocation.at(self.storage, self.base), self.config, "UPSERT")
        ctx = WriteContext.create(TableLocation.at(self.storage, self.base), self.config, inflight.timestamp, schema)
        timeline = Timeline.load(TableLocation.at(self.storage, self.base))
        table = HudiTable.load(str(self.path))
        located = {}
        if self.model:
            keys = table.read_snapshot(columns=["_hoodie_record_key", "_hoodie_file_name", "part"])
            slices = self.slices()
            by_name = {}
            for (_p, f), s in slices.items():
                by_name[f] = s
            for k, fname, _p in zip(*(keys.column(c).to_pylist() for c in keys.column_names)):
                fid = fname if fname in by_name else BaseFileName.parse(fname).file_id
                located[k] = by_name[fid]
        groups: dict[object, tuple[list, list]] = {}
        new: dict[str, list] = {}
        for r in rows:
            if r["id"] in located:
                groups.setdefault(located[r["id"]].file_id, ([], []))[0].append(r)
            else:
                new.setdefault(r["part"], []).append(r)
        for k in deletes:
            groups.setdefault(located[k].file_id, ([], []))[1].append(k)
        slices = {s.file_id: s for s in self.slices().values()}
        stats = [create_handle(ctx, p, pa.Table.from_pylist(rs, schema)) for p, rs in new.items()]
        for fid, (rs, dels) in groups.items():
            s = slices[fid]
            records = pa.Table.from_pylist(rs, schema) if rs else None
            if self.is_mor:
                base = log_base_instant(timeline, s.partition_path, fid, s.base_instant)
                stats.append(append_handle(ctx, s.partition_path, fid, base, records, deletes=dels or None,
                                           base_file_name=s.base_file.name.format() if s.base_file else None))
            else:
                stats.append(merge_handle(ctx, s.partition_path, fid, s.base_file.path,
                                          records if records is not None else schema.empty_table(),
                                          deletes=dels or None))
        complete_commit(TableLocation.at(self.storage, self.base), inflight, stats, "UPSERT", ctx.schema,
                        layout=layout_at(TableLocation.at(self.storage, self.base)))
        for r in rows:
            self.model[r["id"]] = {c: r.get(c) for c in DATA_COLS}
        for k in deletes:
            self.model.pop(k, None)
        self.history[inflight.timestamp] = copy.deepcopy(self.model)
        self.written[inflight.timestamp] = {r["id"] for r in rows}
        return inflight.timestamp

    def compacted(self, instant: str) -> None:
        """A compaction changes no rows: as of C, the rows of the last write before C."""
        before = max((i for i in self.history if i < instant), default=None)
        self.history[instant] = copy.deepcopy(self.history[before]) if before else {}
        self.written[instant] = set()

    # ---- checks ----------------------------------------------------------------------------------------------
    def check(self, what: str = "", since: str = "") -> pa.Table:
        """Snapshot and time travel to every instant from `since` on: hudi-rs == ours == model."""
        ours = HudiTable.load(str(self.path)).read_snapshot()
        theirs = rs_snapshot(self.path)
        assert_same_rows(ours, theirs, f"{what}: snapshot")
        assert rows_of(ours) == model_rows(self.model), f"{what}: snapshot != model"
        for instant, model in self.history.items():
            if instant < since:
                continue
            at = rs_snapshot(self.path, as_of=instant)
            assert rows_of(at) == model_rows(model), f"{what}: hudi-rs as of {instant}"
            assert_same_rows(HudiTable.load(str(self.path)).read_snapshot(as_of=instant), at, f"{what}: as of {instant}")
        return ours

    def incremental(self, start: str, end: str) -> set[str]:
        """Keys hudi-rs returns for (start, end]; checked against ours."""
        theirs = rs_incremental(self.path, start, end)
        ours = HudiTable.load(str(self.path)).read_incremental(start, end)
        assert sorted(ours.column("id").to_pylist()) == sorted(theirs.column("id").to_pylist()), (start, end)
        return set(theirs.column("id").to_pylist())

    def hoodie_files(self) -> list[str]:
        return sorted(p.name for p in (self.path / ".hoodie").iterdir() if p.is_file())

    def data_files(self, partition: str) -> list[str]:
        return sorted(p.name for p in (self.path / partition).iterdir() if is_base_file_name(p.name)
                      or is_log_file_name(p.name))


def rows_of(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in DATA_COLS) for r in t.select(DATA_COLS).to_pylist())


def model_rows(model: dict) -> list[tuple]:
    return sorted(tuple(r[c] for c in DATA_COLS) for r in model.values())


def row(i: int, ts: int, part: str | None = None, val: float | None = None) -> dict:
    return {"id": f"k{i:02d}", "part": part or f"p{i % 3}", "ts": ts, "val": float(val if val is not None else ts * 100 + i)}


def mor_with_updates(tmp_path: Path, payload: str | None = None) -> tuple[Table, list[str]]:
    """Three partitions, an insert, two update commits and a delete commit."""
    t = Table(tmp_path, payload=payload)
    instants = [t.write([row(i, 1) for i in range(12)])]
    instants.append(t.write([row(i, 2) for i in (0, 1, 4, 5)]))
    instants.append(t.write([row(i, 3) for i in (1, 2, 7)]))
    instants.append(t.write(deletes=["k05", "k08"]))
    return t, instants


# --------------------------------------------------------------------------------------------- the plan


def test_plan_is_avro_as_hudi_writes_it(tmp_path):
    t, instants = mor_with_updates(tmp_path)
    slices = t.slices()
    c = schedule_compaction(TableLocation.at(t.storage, t.base))
    assert c.action is Action.COMPACTION and c.state is State.REQUESTED and c.timestamp > instants[-1]
    data = (t.path / ".hoodie" / f"{c.timestamp}.compaction.requested").read_bytes()
    assert embedded_schema(data)["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    raw = read_avro_metadata(data)
    assert raw["version"] == 2 and raw["strategy"] is None and raw["preserveHoodieMetadata"] is True
    assert raw["extraMetadata"] == {}
    ops = {op["fileId"]: op for op in raw["operations"]}
    assert set(ops) == {fid for (_, fid), s in slices.items() if s.log_files}
    for (partition, fid), s in slices.items():
        if fid not in ops:
            continue
        op = ops[fid]
        # Bare names in plan version 2, log files in log order; the slice's base instant.
        assert op["dataFilePath"] == s.base_file.name.format() and "/" not in op["dataFilePath"]
        assert op["deltaFilePaths"] == [f.name.format() for f in s.sorted_log_files()]
        assert (op["partitionPath"], op["baseInstantTime"], op["bootstrapFilePath"]) == (partition, s.base_instant, None)
        assert op["metrics"]["TOTAL_LOG_FILES"] == len(s.log_files)
        assert op["metrics"]["TOTAL_LOG_FILES_SIZE"] == sum(f.size for f in s.log_files)
    plan = CompactionPlan.from_bytes(data)
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan
    # A pending compaction changes nothing a reader sees; a second schedule finds nothing new to compact.
    t.check("compaction requested")
    assert schedule_compaction(TableLocation.at(t.storage, t.base)) is None


def test_schedule_refuses_cow_and_pending_writes_and_returns_none_without_logs(tmp_path):
    cow = Table(tmp_path / "cow", "COPY_ON_WRITE")
    cow.write([row(1, 1)])
    with pytest.raises(WriteError, match="only MERGE_ON_READ"):
        schedule_compaction(TableLocation.at(cow.storage, cow.base))
    t = Table(tmp_path / "mor")
    t.write([row(i, 1) for i in range(3)])
    assert schedule_compaction(TableLocation.at(t.storage, t.base)) is None  # base files only: nothing to compact
    t.write([row(1, 2)])
    pending = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    with pytest.raises(WriteError, match=f"{pending.timestamp}.*pending"):
        schedule_compaction(TableLocation.at(t.storage, t.base))


def test_compaction_due_counts_deltacommits_since_the_last_compaction(tmp_path):
    t = Table(tmp_path)
    t.write([row(i, 1) for i in range(3)])
    for ts in (2, 3):
        t.write([row(1, ts)])
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    assert deltacommits_since_last_compaction(timeline) == 3
    assert compaction_due(timeline, 3) and not compaction_due(timeline, 4)
    c = schedule_compaction(TableLocation.at(t.storage, t.base))
    assert deltacommits_since_last_compaction(Timeline.load(TableLocation.at(t.storage, t.base))) == 0  # a pending one counts
    run_compaction(TableLocation.at(t.storage, t.base), c.timestamp)
    t.write([row(2, 4)])
    assert deltacommits_since_last_compaction(Timeline.load(TableLocation.at(t.storage, t.base))) == 1
    with pytest.raises(WriteError, match="at least 1"):
        compaction_due(timeline, 0)


# --------------------------------------------------------------------------------------------- execution


def test_compaction_merges_slices_and_readers_agree_before_and_after(tmp_path):
    t, instants = mor_with_updates(tmp_path)
    before_slices = t.slices()
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    result = run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    assert "%s.compaction.inflight" % c in t.hoodie_files() and f"{c}.commit" in t.hoodie_files()
    assert (t.path / ".hoodie" / f"{c}.compaction.inflight").read_bytes() == b""
    assert not (t.path / ".hoodie" / ".temp" / c).exists()

    meta = json.loads((t.path / ".hoodie" / f"{c}.commit").read_text())
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    assert json.loads(meta["extraMetadata"]["schema"])["fields"][0]["name"] == "id"
    stats = {s["fileId"]: s for ss in meta["partitionToWriteStats"].values() for s in ss}
    assert len(stats) == len(result.stats) == sum(1 for s in before_slices.values() if s.log_files)
    for (partition, fid), s in before_slices.items():
        if fid not in stats:
            continue
        st = stats[fid]
        assert st["prevCommit"] == s.base_instant and st["partitionPath"] == partition
        assert BaseFileName.parse(st["path"].rsplit("/", 1)[-1]).instant_time == c
        assert st["totalLogFilesCompacted"] == len(s.log_files)
        assert st["totalLogSizeCompacted"] == sum(f.size for f in s.log_files)
        assert st["totalLogBlocks"] >= len(s.log_files) and st["fileSizeInBytes"] > 0
    totals = {k: sum(s[k] for s in stats.values()) for k in ("numDeletes", "numUpdateWrites", "numInserts",
                                                              "totalLogRecords", "numWrites")}
    # k01 updated twice (one row), k00 k02 k04 k07 once; k05 updated then deleted, k08 deleted.
    assert totals == {"numDeletes": 2, "numUpdateWrites": 5, "numInserts": 0, "totalLogRecords": 7 + 2,
                      "numWrites": 10}

    ours = t.check("after compaction")
    # Read-optimized now equals the snapshot (every group with logs got a new base file).
    assert_same_rows(rs_snapshot(t.path, read_optimized=True), rs_snapshot(t.path), "read-optimized")
    # The rows kept their own commit times; the file name names the new base file.
    times = dict(zip(ours.column("id").to_pylist(), ours.column("_hoodie_commit_time").to_pylist()))
    assert times["k01"] == instants[2] and times["k00"] == instants[1] and times["k03"] == instants[0]
    for fname, commit in zip(ours.column("_hoodie_file_name").to_pylist(), ours.column("_hoodie_commit_time").to_pylist()):
        name = BaseFileName.parse(fname)
        assert name.instant_time == c or (name.instant_time == instants[0] == commit)
    # Incremental reads: the compaction is no change of records.
    assert t.incremental(instants[-1], c) == set()
    assert t.incremental(instants[0], c) == {"k00", "k01", "k02", "k04", "k07"}
    # Later writes go on top of the compacted slice.
    after = t.write([row(3, 9), row(12, 9)])
    assert t.incremental(c, after) == {"k03", "k12"}
    t.check("write after compaction")


def test_default_payload_compaction_keeps_the_higher_ordering_value(tmp_path):
    """DefaultHoodieRecordPayload: a log record with a lower ordering value loses to the base record.
    (hudi-rs merges by ordering for every payload; the model here agrees with both.)"""
    t = Table(tmp_path, payload="org.apache.hudi.common.model.DefaultHoodieRecordPayload")
    t.write([row(i, 5) for i in range(4)])
    t.write([row(0, 3, val=-1.0), row(1, 7, val=-2.0)])
    t.model["k00"] = row(0, 5)  # the stale update does not apply
    t.history[max(t.history)] = copy.deepcopy(t.model)
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    t.check("default payload")


def test_overwrite_payload_compaction_writes_what_java_reads(tmp_path):
    """OverwriteWithLatestAvroPayload: the log record wins even with a lower ordering value (Java); hudi-rs merges
    by ordering before the compaction, and reads the compacted base file after it."""
    t = Table(tmp_path)
    t.write([row(i, 5) for i in range(4)])
    t.write([row(0, 3, val=-1.0)])
    ours = HudiTable.load(str(t.path)).read_snapshot()
    assert dict(zip(ours.column("id").to_pylist(), ours.column("val").to_pylist()))["k00"] == -1.0
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    run_compaction(TableLocation.at(t.storage, t.base), c)
    theirs = rs_snapshot(t.path)
    assert dict(zip(theirs.column("id").to_pylist(), theirs.column("val").to_pylist()))["k00"] == -1.0
    assert_same_rows(HudiTable.load(str(t.path)).read_snapshot(), theirs, "after compaction")


def test_a_file_group_whose_records_are_all_deleted_compacts_to_an_empty_base_file(tmp_path):
    t = Table(tmp_path)
    t.write([row(i, 1) for i in range(6)])
    t.write(deletes=["k00", "k03"])  # every record of p0
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    result = run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    (stat,) = result.stats
    assert (stat.partition_path, stat.num_writes, stat.num_deletes) == ("p0", 0, 2)
    t.check("empty file group")


def test_log_only_slices_are_compacted_into_a_base_file(tmp_path):
    """A file group of log files only (Java writes them with some indexes) gets its first base file."""
    t = Table(tmp_path)
    first = t.write([row(0, 1)])
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    ctx = WriteContext.create(TableLocation.at(t.storage, t.base), t.config, inflight.timestamp, SCHEMA)
    stat = append_handle(ctx, "p1", "0e0e0e0e-0000-4000-8000-000000000000-0", first,
                         pa.Table.from_pylist([row(1, 2), row(4, 2)], SCHEMA))
    complete_commit(TableLocation.at(t.storage, t.base), inflight, [stat], "UPSERT", ctx.schema,
                    layout=layout_at(TableLocation.at(t.storage, t.base)))
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    (s,) = run_compaction(TableLocation.at(t.storage, t.base), c).stats
    assert s.prev_commit == first and s.num_inserts == 2
    t.model.update({"k01": row(1, 2), "k04": row(4, 2)})
    assert rows_of(rs_snapshot(t.path)) == model_rows(t.model)
    assert_same_rows(HudiTable.load(str(t.path)).read_snapshot(), rs_snapshot(t.path), "log-only group compacted")


def test_logs_written_while_a_compaction_is_pending_belong_to_its_slice(tmp_path):
    t, instants = mor_with_updates(tmp_path)
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    plan = CompactionPlan.load(Timeline.load(TableLocation.at(t.storage, t.base)), c)
    during = t.write([row(0, 8), row(9, 8)])
    planned = {op.group for op in plan.operations}
    meta = Timeline.load(TableLocation.at(t.storage, t.base)).commit_metadata(Instant(during, Action.DELTA_COMMIT))
    logs = [LogFileName.parse(s.path.rsplit("/", 1)[-1]) for s in meta.write_stats() if s.is_delta]
    assert logs and all(n.base_instant == c for n in logs)
    assert all((s.partition_path, s.file_id) in planned for s in meta.write_stats())
    # Our reader merges the pending slice into the previous one (Java semantics).
    ours = HudiTable.load(str(t.path)).read_snapshot()
    assert rows_of(ours) == model_rows(t.model)
    run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    t.check("compaction completed over later logs")
    assert t.incremental(instants[-1], during) == {"k00", "k09"}


# --------------------------------------------------------------------------------------------- crashes


def test_a_crash_mid_compaction_is_invisible_and_the_next_run_finishes_it(tmp_path):
    t, instants = mor_with_updates(tmp_path)
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    plan = CompactionPlan.load(timeline, c)
    # The crash: inflight, one operation's base file written (marker first), then the process died.
    timeline.transition_to_inflight(Instant(c, Action.COMPACTION, State.REQUESTED))
    from hudi_engine.table_services.compaction import CompactionTask

    task = CompactionTask.create(TableLocation.at(t.storage, t.base), c)
    partial = execute_operation(task, plan.operations[0], (7, 1, 7))
    assert (t.path / partial.path).exists()
    assert [m.data_file_path for m in list_markers(TableLocation.at(t.storage, t.base), c)] == [partial.path]
    t.check("after a crash mid-compaction")  # readers see the old state
    assert_same_rows(rs_snapshot(t.path, read_optimized=True),
                     rs_snapshot(t.path, as_of=instants[0], read_optimized=True), "read-optimized: old base files")

    result = run_compaction(TableLocation.at(t.storage, t.base), c)  # the next run: rolls back the attempt, executes again
    t.compacted(c)
    assert not (t.path / partial.path).exists()  # the failed attempt's file (its own write token) is gone
    assert len(result.stats) == len(plan.operations)
    for op in plan.operations:
        new = [n for n in t.data_files(op.partition_path)
               if is_base_file_name(n) and BaseFileName.parse(n).file_id == op.file_id
               and BaseFileName.parse(n).instant_time == c]
        assert len(new) == 1
    t.check("compaction finished by the next run")


def test_a_failing_executor_leaves_the_compaction_requested_and_nothing_written(tmp_path):
    t, _ = mor_with_updates(tmp_path)
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp

    def one_then_fail(task, ops):
        run_serially(task, ops[:1])
        raise RuntimeError("executor lost")

    with pytest.raises(RuntimeError, match="executor lost"):
        run_compaction(TableLocation.at(t.storage, t.base), c, execute=one_then_fail)
    assert f"{c}.compaction.requested" in t.hoodie_files() and f"{c}.compaction.inflight" not in t.hoodie_files()
    for p in ("p0", "p1", "p2"):
        assert not [n for n in t.data_files(p) if is_base_file_name(n) and BaseFileName.parse(n).instant_time == c]
    t.check("after a failed execution")
    run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    t.check("after the re-run")
    with pytest.raises(WriteError, match="already completed"):
        run_compaction(TableLocation.at(t.storage, t.base), c)


# --------------------------------------------------------------------------------------------- real tables


@pytest.mark.parametrize("name", [
    "mor_parquetlog_v6_nonpartitioned", "mor_parquetlog_v6_simplekeygen_nonhivestyle",
    "mor_parquetlog_v6_complexkeygen_hivestyle", "mor_avrolog_v6_trips_8i1u",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle_overwritetable",
])
def test_compacting_and_cleaning_tables_written_by_hudi(unzip_table, tmp_path, name):
    """Tables Spark + Hudi 0.14/0.15 wrote (parquet and Avro log blocks): after a compaction and a clean, hudi-rs
    reads the same rows, read-optimized included, and time travel to the old instants still works until cleaned."""
    import shutil

    from hudi_engine.config import CleanConfig
    from hudi_engine.table_services.clean import clean

    src = unzip_table(name)
    path = tmp_path / src.name
    shutil.copytree(src, path)
    storage, base = Storage.for_uri(str(path))
    before = rs_snapshot(path)
    old = [i.timestamp for i in Timeline.load(TableLocation.at(storage, base)).completed_commits()]
    old_views = {ts: rs_snapshot(path, as_of=ts) for ts in old}
    instant = schedule_compaction(TableLocation.at(storage, base))
    if name.endswith("overwritetable"):
        assert instant is None  # the only log file belongs to a replaced file group
        return
    run_compaction(TableLocation.at(storage, base), instant.timestamp)
    cols = [c for c in before.column_names if c != "_hoodie_file_name"]
    after = rs_snapshot(path)
    assert_same_rows(after.select(cols), before.select(cols), f"{name}: compacted")
    assert_same_rows(rs_snapshot(path, read_optimized=True).select(cols), before.select(cols), f"{name}: read-optimized")
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), after, f"{name}: ours after compaction")
    for ts, view in old_views.items():
        assert_same_rows(rs_snapshot(path, as_of=ts), view, f"{name}: as of {ts}")
    location = TableLocation.at(storage, base)
    assert clean(location, CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=1),
                 table=TableConfig.load(location), timeline=Timeline.load(location)) is not None
    assert_same_rows(rs_snapshot(path), after, f"{name}: cleaned")
    assert not [p for p in path.rglob("*.log.*") if "__MACOSX" not in p.parts]  # the compacted logs are gone
