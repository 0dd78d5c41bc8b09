"""A writer that dies mid-write leaves the table as it was for readers; the next write rolls it back.

The crash is simulated in the driver: the write stops at a point (after the inflight instant, after the data
files, right before the completed instant file) and, as a killed process would, does not roll back.
"""
from __future__ import annotations

import time

import pytest
from oracle import assert_same_rows, rs_snapshot

import hudi_engine.spark.writer as writer_mod
from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.spark import write
from hudi_engine.timeline.timeline import Timeline
from hudi_engine.write.write_client import Transaction

pytestmark = pytest.mark.spark


class Killed(BaseException):
    """Stands for the process dying: not an Exception, so nothing on the way catches it as an error."""


def _opts(table_type: str, version: int = 6) -> dict:
    return {"hoodie.table.name": "crash", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version)}


def _df(spark, rows):
    return spark.createDataFrame(rows, "id bigint, v string, ts bigint, dt string")


_POINTS = ["after_inflight", "after_data_files", "before_completed_file"]


# Every crash point on version 6; on version 9 (Hudi 1.x timeline layout 2) every point of MOR, the last of COW.
@pytest.mark.parametrize("table_type,point,version", [
    *((t, p, 6) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for p in _POINTS),
    *(("MERGE_ON_READ", p, 9) for p in _POINTS), ("COPY_ON_WRITE", "before_completed_file", 9),
])
def test_crashed_write_is_invisible_and_rolled_back_by_the_next(spark, tmp_path, monkeypatch, table_type, point,
                                                                 version):
    path = tmp_path / "t"
    first = [(i, "a", 1, f"p{i % 2}") for i in range(10)]
    write(_df(spark, first), str(path), _opts(table_type, version))
    before = rs_snapshot(path)

    real_run = writer_mod._run
    with monkeypatch.context() as m:
        m.setattr(Transaction, "abort", lambda self: None)  # a killed process rolls nothing back
        if point == "after_inflight":
            m.setattr(writer_mod, "_run", lambda *a: (_ for _ in ()).throw(Killed()))
        elif point == "after_data_files":
            def run_then_die(*a):
                real_run(*a)
                raise Killed()
            m.setattr(writer_mod, "_run", run_then_die)
        else:
            m.setattr(Timeline, "complete", lambda *a, **k: (_ for _ in ()).throw(Killed()))
        updates = [(i, "b", 2, f"p{i % 2}") for i in range(0, 10, 2)] + [(100, "new", 2, "p5")]
        with pytest.raises(Killed):
            write(_df(spark, updates), str(path), _opts(table_type, version))

    pending = [i for i in Timeline.load(TableLocation.of(str(path))) if not i.is_completed]
    assert pending, "the crashed write left its instant pending"
    if point != "after_inflight":
        assert len(list(path.rglob("*.parquet"))) + len(list(path.rglob(".*.log.*"))) > 2
    assert_same_rows(rs_snapshot(path), before, f"hudi-rs after a crash {point}")
    assert_same_rows(HudiTable.load(path).read_snapshot(), before, f"our reader after a crash {point}")

    # The next write rolls the crashed instant back, then succeeds.
    write(_df(spark, [(5, "c", 3, "p1")]), str(path), _opts(table_type, version))
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert timeline.layout.version == (2 if version == 9 else 1)
    assert all(i.is_completed for i in timeline), [str(i) for i in timeline]
    assert any(i.action.value == "rollback" for i in timeline)
    rows = {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()}
    assert rows == {**{i: "a" for i in range(10)}, 5: "c"}
    assert not (path / ".hoodie" / ".temp").exists() or not any((path / ".hoodie" / ".temp").iterdir())


def _storage(path):
    from hudi_engine.storage import Storage

    return Storage.for_uri(str(path))


# --------------------------------------------------------------------------------------------- kills in atomic creates

# A writer that is really killed (SIGKILL) inside one atomic create (`Storage.create_exclusive`: temp file written,
# not yet linked into place). It runs the write pieces of the engine in a subprocess; `os.link` kills the process
# when the file being linked matches KILL_AT[point].
_KILLED_WRITER = r'''
import os, re, signal, sys
import pyarrow as pa
from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.layout import layout_for
from hudi_engine.write.commit import complete_commit, start_commit
from hudi_engine.write.handles import WriteContext, append_handle, create_handle

path, kill_at = sys.argv[1], sys.argv[2]
real_link = os.link

def link(src, dst, *args, **kwargs):
    if re.search(kill_at, os.path.basename(dst)):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_link(src, dst, *args, **kwargs)

os.link = link
storage, base = Storage.for_uri(path)
config = TableConfig.load(TableLocation.at(storage, base))
inflight = start_commit(TableLocation.at(storage, base), config, "UPSERT")
schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("ts", pa.int64()), ("dt", pa.string())])
ctx = WriteContext.create(TableLocation.at(storage, base), config, inflight.timestamp, schema).for_task(0, 1, 1)
rows = pa.table({"id": [0], "v": ["killed"], "ts": [9], "dt": ["p0"]}, schema=schema)
if config.table_type == "MERGE_ON_READ":
    group = next(s for s in HudiTable.load(path).file_slices() if s.partition_path == "p0")
    stat = append_handle(ctx, "p0", group.file_id, group.base_instant, rows)
else:
    stat = create_handle(ctx, "p9", rows.set_column(3, "dt", pa.array(["p9"])))
complete_commit(TableLocation.at(storage, base), inflight, [stat], "UPSERT", ctx.schema, layout=layout_for(config))
'''
_KILL_AT = {
    "requested instant": r"^\d+\.(commit|deltacommit)\.requested$",
    "marker": r"\.marker\.",
    "log file": r"^\..*\.log\.\d+_",
    "completed instant": r"^\d+\.(commit|deltacommit)$",
}


@pytest.mark.parametrize("table_type,point", [
    ("MERGE_ON_READ", "requested instant"), ("MERGE_ON_READ", "marker"), ("MERGE_ON_READ", "log file"),
    ("MERGE_ON_READ", "completed instant"), ("COPY_ON_WRITE", "marker"), ("COPY_ON_WRITE", "completed instant"),
])
def test_a_kill_inside_an_atomic_create_leaves_a_table_the_next_writers_write(spark, tmp_path, table_type, point):
    import subprocess
    import sys

    from hudi_engine.storage import TEMP_FILE_PREFIX

    path = tmp_path / "t"
    write(_df(spark, [(i, "a", 1, f"p{i % 2}") for i in range(6)]), str(path), _opts(table_type))
    before = rs_snapshot(path)

    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(path), _KILL_AT[point]],
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr  # SIGKILL, inside the create
    temps = list(path.rglob(f"{TEMP_FILE_PREFIX}*"))
    assert len(temps) == 1, "the kill left the create's temp file (and nothing in its place)"
    assert_same_rows(rs_snapshot(path), before, f"hudi-rs after a kill inside the {point} create")
    assert_same_rows(HudiTable.load(path).read_snapshot(), before, f"our reader after a kill inside the {point}")

    write(_df(spark, [(1, "b", 2, "p1")]), str(path), _opts(table_type))
    write(_df(spark, [(2, "c", 3, "p0"), (7, "new", 3, "p1")]), str(path), _opts(table_type))
    assert not list(path.rglob(f"{TEMP_FILE_PREFIX}*")), "the next writer removed the temp file"
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert all(i.is_completed for i in timeline), [str(i) for i in timeline]
    expected = {**{i: "a" for i in range(6)}, 1: "b", 2: "c", 7: "new"}
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == expected
    assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), "our reader after the next writes")


# --------------------------------------------------------------------------------------------- a lost instant


def _files_of_instant(path, instant_time: str) -> list[str]:
    """Data files under the table that hold anything of `instant_time`: base files named after it, log files with
    one of its blocks."""
    from hudi_engine.file_naming import BaseFileName, is_base_file_name, is_log_file_name
    from hudi_engine.io.log_format import read_log_blocks

    found = []
    for p in path.rglob("*"):
        if not p.is_file() or ".hoodie" in p.relative_to(path).parts:
            continue
        if is_base_file_name(p.name) and BaseFileName.parse(p.name).instant_time == instant_time:
            found.append(str(p))
        elif is_log_file_name(p.name):
            with open(p, "rb") as f:
                import pyarrow as pa

                if any(b.instant_time == instant_time for b in read_log_blocks(pa.PythonFile(f), file_name=str(p))):
                    found.append(str(p))
    return found


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("taken", ["before_its_files", "before_its_commit"])
def test_a_writer_whose_instant_is_rolled_back_under_it_leaves_no_file(spark, tmp_path, monkeypatch, table_type,
                                                                       taken):
    from archival import archive_all_but_latest_commit

    from hudi_engine.errors import InstantLostError
    from hudi_engine.write.lock import lock_path
    from hudi_engine.write.markers import marker_dir

    path = tmp_path / "t"
    write(_df(spark, [(i, "a", 1, f"p{i % 2}") for i in range(10)]), str(path), _opts(table_type))
    real_run = writer_mod._run
    seen: dict = {}
    # The first writer's lock expires 120 ms after its last renewal; the second writer takes a heartbeat older than
    # 2 x 1000 ms for a dead writer's (and keeps its own lock and heartbeat with that margin on a busy machine).
    short = {**_opts(table_type), "hoodie.write.lock.filesystem.expire": "0.002",
             "hoodie.client.heartbeat.interval_in_ms": "50"}
    other = {**_opts(table_type), "hoodie.write.lock.filesystem.expire": "0.05",
             "hoodie.client.heartbeat.interval_in_ms": "1000"}

    def other_writer_takes_the_expired_lock():
        # A second writer finds the first one's lock expired, takes it, finds the first one's heartbeat expired too,
        # rolls its pending instant back (as every writer does first with failed writes) and commits its own write.
        time.sleep(2.5)  # the pause outlives the first writer's lock and heartbeat
        write(_df(spark, [(3, "other", 5, "p1")]), str(path), other)

    def run(spark_, df, client, txn):
        if seen:  # the other writer's own write
            return real_run(spark_, df, client, txn)
        seen["instant"] = txn.instant
        # The first writer's process stops renewing (a pause): its lock and its heartbeat go stale.
        txn.lock.renewal.stop()
        txn.heartbeat.renewal.stop()
        if taken == "before_its_files":
            other_writer_takes_the_expired_lock()
            return real_run(spark_, df, client, txn)
        stats = real_run(spark_, df, client, txn)
        assert _files_of_instant(path, txn.instant), "the first writer wrote its files"
        other_writer_takes_the_expired_lock()
        return stats

    monkeypatch.setattr(writer_mod, "_run", run)
    updates = [(i, "lost", 2, f"p{i % 2}") for i in range(0, 10, 2)] + [(100, "lost", 2, "p5")]
    with pytest.raises(InstantLostError) as e:
        write(_df(spark, updates), str(path), short)
    monkeypatch.undo()

    lost = seen["instant"]
    timeline = Timeline.load(TableLocation.of(str(path)))
    (rollback,) = [i for i in timeline if i.action.value == "rollback"]
    message = str(e.value)
    for part in (f"instant {lost}", f"rollback {rollback.timestamp} (completed)", lock_path(TableLocation.of(str(path))),
                 "hoodie.write.lock.filesystem.expire=0.002 minutes"):
        assert part in message, message
    assert _files_of_instant(path, lost) == []
    assert not (path / ".hoodie" / ".temp" / lost).exists() and not _storage_exists(marker_dir(TableLocation.of(str(path)), lost))
    expected = {**{i: "a" for i in range(10)}, 3: "other"}
    rows = rs_snapshot(path)
    assert {r["id"]: r["v"] for r in rows.to_pylist()} == expected
    assert_same_rows(HudiTable.load(path).read_snapshot(), rows, "our reader after the lost write")

    archive_all_but_latest_commit(path)  # the lost instant is now older than the active timeline's start
    assert_same_rows(rs_snapshot(path), rows, "hudi-rs after archival")
    assert_same_rows(HudiTable.load(path).read_snapshot(), rows, "our reader after archival")


def _storage_exists(p: str) -> bool:
    import os

    return os.path.exists(p)
