"""Tables written by the write pieces alone (create_table, start/complete_commit, handles, rollback) are read by
hudi-rs exactly as intended, and our HudiTable reads them identically: snapshot, every time travel, every
incremental window, read-optimized."""
from __future__ import annotations

import datetime as dt
import decimal
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Instant
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, create_table, file_groups_to_replace, start_commit
from hudi_engine.write.handles import WriteContext, append_handle, create_handle, merge_handle
from hudi_engine.write.rollback import rollback_instant

TRIPS = pa.table({
    "id": ["t1", "t2", "t3", "t4", "t5", "t6"],
    "city": ["sf", "sf", "la", "la", "ny", "ny"],
    "ts": pa.array([1, 1, 1, 1, 1, 1], pa.int64()),
    "fare": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
    "rider": ["A", "B", "C", "D", "E", "F"],
})


class Writer:
    """Drives one table through the write pieces the way the Spark layer will."""

    def __init__(self, path: Path, config: TableConfig, schema: pa.Schema) -> None:
        self.path = path
        self.storage, self.base = Storage.for_uri(str(path))
        self.config = config
        self.schema = schema
        create_table(TableLocation.at(self.storage, self.base), config)

    def ctx(self, instant: Instant, task: int = 0) -> WriteContext:
        return WriteContext.create(TableLocation.at(self.storage, self.base), self.config, instant.timestamp, self.schema).for_task(task, 1, task)

    def by_partition(self, ctx: WriteContext, rows: pa.Table) -> dict[str, pa.Table]:
        parts = ctx.keygen.partition_paths(rows)
        return {p: rows.filter(pc.equal(parts, p)) for p in pc.unique(parts).to_pylist()}

    def slices(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for s in HudiTable.load(str(self.path)).file_slices():
            out.setdefault(s.partition_path, []).append(s)
        return out

    def insert(self, rows: pa.Table, operation: str = "INSERT") -> str:
        inflight = start_commit(TableLocation.at(self.storage, self.base), self.config, operation)
        ctx = self.ctx(inflight)
        stats = [create_handle(ctx.for_task(i, 1, i), p, part)
                 for i, (p, part) in enumerate(self.by_partition(ctx, rows).items())]
        complete_commit(TableLocation.at(self.storage, self.base), inflight, stats, operation, ctx.schema,
                        layout=layout_at(TableLocation.at(self.storage, self.base)))
        return inflight.timestamp

    def upsert(self, rows: pa.Table, deletes: dict[str, list[str]] | None = None, *, commit: bool = True) -> str:
        """Updates (and inserts into existing groups) per partition: merge (COW) or append (MOR); one group per
        partition in these tests."""
        inflight = start_commit(TableLocation.at(self.storage, self.base), self.config, "UPSERT")
        ctx = self.ctx(inflight)
        slices = self.slices()
        groups = self.by_partition(ctx, rows)
        stats = []
        for i, p in enumerate(sorted(set(groups) | set(deletes or {}))):
            (s,) = slices[p]
            part = groups.get(p)
            task_ctx = ctx.for_task(i, 2, i)
            if self.config.is_mor:
                stats.append(append_handle(task_ctx, p, s.file_id, s.base_instant, part, deletes=(deletes or {}).get(p),
                                           base_file_name=s.base_file.name.format()))
            else:
                stats.append(merge_handle(task_ctx, p, s.file_id, s.base_file.path,
                                          part if part is not None else rows.slice(0, 0), deletes=(deletes or {}).get(p)))
        if commit:
            complete_commit(TableLocation.at(self.storage, self.base), inflight, stats, "UPSERT", ctx.schema,
                            layout=layout_at(TableLocation.at(self.storage, self.base)))
        return inflight.timestamp


def data_of(t: pa.Table, key: str = "id") -> list[dict]:
    return t.select([c for c in t.column_names if c not in META_COLUMNS]).sort_by(key).to_pylist()


def check_readers_agree(path: Path, key: str = "_hoodie_record_key") -> None:
    """Our reader equals hudi-rs: snapshot, time travel to every commit, incremental windows, read-optimized."""
    table = HudiTable.load(str(path))
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), "snapshot", key)
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    for ts in commits:
        assert_same_rows(table.read_snapshot(as_of=ts), rs_snapshot(path, as_of=ts), f"as of {ts}", key)
    for start, end in zip(["00000000000000", *commits], commits):
        assert_same_rows(table.read_incremental(start, end), rs_incremental(path, start, end),
                         f"incremental ({start}, {end}]", key)
    if table.is_mor:
        assert_same_rows(table.read_snapshot(read_optimized=True), rs_snapshot(path, read_optimized=True),
                         "read-optimized", key)


def _updated(rows: pa.Table, changes: dict[str, dict]) -> pa.Table:
    out = rows.to_pylist()
    for r in out:
        r.update(changes.get(r["id"], {}))
    return pa.Table.from_pylist(out, schema=rows.schema)


# --------------------------------------------------------------------------------------------- a) COW


def test_cow_partitioned_insert_then_merge_update(tmp_path):
    config = TableConfig.create("trips_cow", "COPY_ON_WRITE", ["id"], ["city"], "ts", hive_style=True)
    w = Writer(tmp_path / "cow", config, TRIPS.schema)
    c1 = w.insert(TRIPS)
    assert sorted(w.slices()) == ["city=la", "city=ny", "city=sf"]
    updates = pa.table({"id": ["t1", "t2", "t7"], "city": ["sf", "sf", "sf"], "ts": pa.array([2, 2, 2], pa.int64()),
                        "fare": [11.0, 21.0, 70.0], "rider": ["A", "B", "G"]})
    c2 = w.upsert(updates, deletes={"city=ny": ["t5"]})

    expected = _updated(TRIPS, {"t1": {"ts": 2, "fare": 11.0}, "t2": {"ts": 2, "fare": 21.0}})
    expected = pa.concat_tables([expected.filter(pc.not_equal(expected["id"], "t5")), updates.slice(2)])
    snap = rs_snapshot(w.path)
    assert data_of(snap) == data_of(expected)
    assert data_of(rs_snapshot(w.path, as_of=c1)) == data_of(TRIPS)
    times = dict(zip(snap.column("id").to_pylist(), snap.column("_hoodie_commit_time").to_pylist()))
    assert times == {"t1": c2, "t2": c2, "t3": c1, "t4": c1, "t6": c1, "t7": c2}
    assert sorted(rs_incremental(w.path, c1, c2).column("id").to_pylist()) == ["t1", "t2", "t7"]
    # one file group per partition, two versions where the merge ran
    files = sorted(p.name for p in (w.path / "city=sf").glob("*.parquet"))
    assert len(files) == 2 and files[0].split("_")[0] == files[1].split("_")[0]
    check_readers_agree(w.path)


# --------------------------------------------------------------------------------------------- b) MOR


RICH_SCHEMA = pa.schema([
    ("id", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("amount", pa.decimal128(10, 2)),
    ("day", pa.date32()), ("at", pa.timestamp("us", tz="UTC")), ("tags", pa.list_(pa.int32())),
    ("info", pa.struct([("name", pa.string()), ("score", pa.float64())])), ("flag", pa.bool_()),
])


def _rich(ids, part, ts, amount) -> pa.Table:
    n = len(ids)
    return pa.table({
        "id": ids, "part": [part] * n, "ts": pa.array([ts] * n, pa.int64()),
        "amount": pa.array([decimal.Decimal(amount) + i for i in range(n)], pa.decimal128(10, 2)),
        "day": [dt.date(2024, 1, 1 + i) for i in range(n)],
        "at": pa.array([dt.datetime(2024, 1, 1, 12, i, tzinfo=dt.UTC) for i in range(n)], pa.timestamp("us", tz="UTC")),
        "tags": [[i, i + 1] for i in range(n)],
        "info": [{"name": f"n{i}", "score": i / 2} for i in range(n)],
        "flag": [i % 2 == 0 for i in range(n)],
    }, schema=RICH_SCHEMA)


def test_mor_base_files_then_log_updates_and_deletes(tmp_path):
    config = TableConfig.create("events_mor", "MERGE_ON_READ", ["id"], ["part"], "ts")
    w = Writer(tmp_path / "mor", config, RICH_SCHEMA)
    first = pa.concat_tables([_rich(["a", "b", "c"], "x", 1, "1.50"), _rich(["d", "e"], "y", 1, "9.25")])
    c1 = w.insert(first)
    updates = pa.concat_tables([_rich(["a"], "x", 5, "100.01"), _rich(["e"], "y", 5, "7.77")])
    c2 = w.upsert(updates, deletes={"x": ["b"], "y": ["d"]})
    logs = sorted(p.name for p in w.path.rglob(".*.log.*"))
    assert len(logs) == 2 and all(".log.1_" in n for n in logs)

    expected = {r["id"]: r for r in first.to_pylist()}
    expected.update({r["id"]: r for r in updates.to_pylist()})
    del expected["b"], expected["d"]
    snap = rs_snapshot(w.path)
    assert data_of(snap) == sorted(expected.values(), key=lambda r: r["id"])
    assert data_of(rs_snapshot(w.path, read_optimized=True)) == data_of(first)
    assert data_of(rs_snapshot(w.path, as_of=c1)) == data_of(first)
    # log records carry the file id as _hoodie_file_name (hudi_engine/FORMAT.md, Meta columns)
    names = dict(zip(snap.column("id").to_pylist(), snap.column("_hoodie_file_name").to_pylist()))
    assert not names["a"].endswith(".parquet") and names["c"].endswith(".parquet")
    assert rs_incremental(w.path, c1, c2).column("id").to_pylist() in (["a", "e"], ["e", "a"])
    check_readers_agree(w.path)


# --------------------------------------------------------------------------------------------- c) rollback block


def test_failed_deltacommit_rolled_back_with_a_command_block_is_ignored(tmp_path):
    config = TableConfig.create("trips_mor", "MERGE_ON_READ", ["id"], ["city"], "ts", hive_style=True)
    w = Writer(tmp_path / "mor", config, TRIPS.schema)
    c1 = w.insert(TRIPS)
    failed_rows = _updated(TRIPS.slice(0, 1), {"t1": {"ts": 9, "fare": 999.0}})
    failed = w.upsert(failed_rows, commit=False)
    control = tmp_path / "control"
    shutil.copytree(w.path, control)

    result = rollback_instant(TableLocation.at(w.storage, w.base), Instant(failed, "deltacommit", 1), use_command_blocks=True)
    (block_file,) = result.rollback_log_files
    assert block_file.endswith("_1-0-1") and ".log.2_" in block_file
    w.upsert(_updated(TRIPS.slice(1, 1), {"t2": {"ts": 2, "fare": 22.0}}))
    timeline = Timeline.load(TableLocation.at(w.storage, w.base))
    assert ".log.3_" in timeline.commit_metadata(timeline.last()).write_stats()[0].path
    expected = _updated(TRIPS, {"t2": {"ts": 2, "fare": 22.0}})
    assert data_of(rs_snapshot(w.path)) == data_of(expected)
    check_readers_agree(w.path)

    # Why the block matters: once older instants are archived (simulated: their files leave .hoodie), the failed
    # instant is older than the timeline start, and both readers treat its blocks as committed. Only the rollback
    # block keeps them out. The control copy lost the failed instant's files without a rollback block.
    cw = Writer.__new__(Writer)
    cw.path, cw.config, cw.schema = control, config, TRIPS.schema
    cw.storage, cw.base = Storage.for_uri(str(control))
    for f in (control / ".hoodie").glob(f"{failed}.*"):
        f.unlink()
    cw.upsert(_updated(TRIPS.slice(1, 1), {"t2": {"ts": 2, "fare": 22.0}}))
    for table in (w.path, control):
        for f in [*(table / ".hoodie").glob(f"{c1}.*"), *(table / ".hoodie").glob("*.rollback*")]:
            f.unlink()
    assert data_of(rs_snapshot(w.path)) == data_of(expected)
    assert data_of(HudiTable.load(str(w.path)).read_snapshot()) == data_of(expected)
    leaked = rs_snapshot(control)
    fares = dict(zip(leaked.column("id").to_pylist(), leaked.column("fare").to_pylist()))
    assert fares["t1"] == 999.0


# --------------------------------------------------------------------------------------------- d) replacecommit


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_overwrite_of_one_partition(tmp_path, table_type):
    config = TableConfig.create("trips_ow", table_type, ["id"], ["city"], "ts", hive_style=True)
    w = Writer(tmp_path / "t", config, TRIPS.schema)
    c1 = w.insert(TRIPS)
    new_sf = pa.table({"id": ["s1", "s2"], "city": ["sf", "sf"], "ts": pa.array([3, 3], pa.int64()),
                       "fare": [1.0, 2.0], "rider": ["X", "Y"]})
    replaced = file_groups_to_replace(TableLocation.at(w.storage, w.base), ["city=sf"])
    inflight = start_commit(TableLocation.at(w.storage, w.base), config, "INSERT_OVERWRITE")
    assert inflight.action.value == "replacecommit"
    ctx = w.ctx(inflight)
    stat = create_handle(ctx, "city=sf", new_sf)
    complete_commit(TableLocation.at(w.storage, w.base), inflight, [stat], "INSERT_OVERWRITE", ctx.schema, replaced,
                    layout=layout_at(TableLocation.at(w.storage, w.base)))

    expected = pa.concat_tables([TRIPS.filter(pc.not_equal(TRIPS["city"], "sf")), new_sf])
    assert data_of(rs_snapshot(w.path)) == data_of(expected)
    assert data_of(rs_snapshot(w.path, as_of=c1)) == data_of(TRIPS)
    assert data_of(HudiTable.load(str(w.path)).read_snapshot()) == data_of(expected)
    check_readers_agree(w.path)


# --------------------------------------------------------------------------------------------- e) key generators


def test_complex_key_generator_cow_with_two_partition_fields(tmp_path):
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("y", pa.int32()), ("m", pa.string()),
                        ("ts", pa.int64()), ("v", pa.float64())])
    rows = pa.table({"id": [1, 2, 3], "name": ["Alice", "Bob", "Carol"], "y": [2024, 2024, 2025], "m": ["01", "01", "02"],
                     "ts": pa.array([1, 1, 1], pa.int64()), "v": [1.0, 2.0, 3.0]}, schema=schema)
    config = TableConfig.create("people", "COPY_ON_WRITE", ["id", "name"], ["y", "m"], "ts", hive_style=True)
    assert config.key_generator_class.endswith("ComplexKeyGenerator")
    w = Writer(tmp_path / "cx", config, schema)
    w.insert(rows)
    assert sorted(w.slices()) == ["y=2024/m=01", "y=2025/m=02"]
    w.upsert(pa.table({"id": [2], "name": ["Bob"], "y": [2024], "m": ["01"], "ts": pa.array([2], pa.int64()),
                       "v": [20.0]}, schema=schema))
    snap = rs_snapshot(w.path)
    assert sorted(snap.column("_hoodie_record_key").to_pylist()) == ["id:1,name:Alice", "id:2,name:Bob",
                                                                    "id:3,name:Carol"]
    assert dict(zip(snap.column("id").to_pylist(), snap.column("v").to_pylist())) == {1: 1.0, 2: 20.0, 3: 3.0}
    md = (w.path / "y=2024/m=01/.hoodie_partition_metadata").read_text()
    assert "partitionDepth=2" in md
    check_readers_agree(w.path)


def test_non_partitioned_mor_table(tmp_path):
    config = TableConfig.create("flat", "MERGE_ON_READ", ["id"], [], "ts")
    assert config.key_generator_class.endswith("NonpartitionedKeyGenerator")
    w = Writer(tmp_path / "flat", config, TRIPS.schema)
    c1 = w.insert(TRIPS)
    assert (w.path / ".hoodie_partition_metadata").is_file()
    assert list(w.slices()) == [""]
    c2 = w.upsert(_updated(TRIPS.slice(2, 2), {"t3": {"ts": 2, "fare": 33.0}, "t4": {"ts": 2, "fare": 44.0}}),
                  deletes={"": ["t6"]})
    snap = rs_snapshot(w.path)
    assert snap.column("_hoodie_partition_path").to_pylist() == [""] * 5
    fares = dict(zip(snap.column("id").to_pylist(), snap.column("fare").to_pylist()))
    assert fares == {"t1": 10.0, "t2": 20.0, "t3": 33.0, "t4": 44.0, "t5": 50.0}
    meta = Timeline.load(TableLocation.at(w.storage, w.base))
    (stat,) = meta.commit_metadata(meta.last()).write_stats()
    assert stat.path.startswith(".") and "/" not in stat.path and stat.partition_path == ""
    assert c1 < c2
    check_readers_agree(w.path)


def test_cow_delete_of_every_row_of_a_file_group_leaves_an_empty_version(tmp_path):
    config = TableConfig.create("trips_del", "COPY_ON_WRITE", ["id"], ["city"], "ts", hive_style=True)
    w = Writer(tmp_path / "cow", config, TRIPS.schema)
    w.insert(TRIPS)
    w.upsert(TRIPS.slice(0, 0), deletes={"city=sf": ["t1", "t2"]})
    timeline = Timeline.load(TableLocation.at(w.storage, w.base))
    (stat,) = timeline.commit_metadata(timeline.last()).write_stats()
    assert (stat.num_writes, stat.num_deletes) == (0, 2)
    assert sorted(rs_snapshot(w.path).column("id").to_pylist()) == ["t3", "t4", "t5", "t6"]
    check_readers_agree(w.path)
