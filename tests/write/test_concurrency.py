"""Several writers on one table, interleaved step by step in one process: optimistic concurrency lets writes to
disjoint file groups both commit and fails the later of two that touched the same file group (rolled back, naming
the other instant and the groups); a single writer holds the lock for the whole write; a live writer's instant is
never rolled back by another, and a writer whose lock expired cannot commit."""
from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pyarrow as pa
import pytest
from local_write import write, write_files
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config import WriteConfig
from hudi_engine.errors import InstantLostError, WriteError
from hudi_engine.file_naming import BaseFileName, is_base_file_name
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_services.compaction import run_compaction, schedule_compaction
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.instant import Action, State
from hudi_engine.write.conflict import WriteConflictError
from hudi_engine.write.heartbeat import heartbeat_path
from hudi_engine.write.lock import lock_path
from hudi_engine.write.write_client import WriteClient, table_for_write

OCC = {"hoodie.table.name": "occ", "hoodie.datasource.write.recordkey.field": "id",
       "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
       "hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.parquet.small.file.limit": "0"}


def _rows(ids: list[str], parts: list[str], v: float) -> pa.Table:
    return pa.table({"id": ids, "p": parts, "ts": pa.array([1] * len(ids), pa.int64()), "v": [v] * len(ids)})


def _table(tmp_path: Path, options: dict) -> Path:
    path = tmp_path / "t"
    write(path, _rows(["a1", "a2", "b1", "b2"], ["a", "a", "b", "b"], 0.0), options)
    return path


class Writer:
    """One writer driven step by step: start (instant and heartbeat), write its files, commit."""

    def __init__(self, path: Path, rows: pa.Table, options: dict) -> None:
        self.client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(options), rows.schema)
        self.rows = rows
        self.stack = contextlib.ExitStack()

    def start(self) -> Writer:
        self.txn = self.stack.enter_context(self.client.transaction())
        return self

    def write(self) -> Writer:
        self.stats = write_files(self.client, self.txn, self.rows)
        return self

    def commit(self) -> str:
        try:
            result = self.txn.commit(self.stats)
        except BaseException as e:
            if not self.stack.__exit__(type(e), e, e.__traceback__):
                raise
        self.stack.close()
        return result.instant_time


def _values(path: Path) -> dict:
    ours = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot")
    return {r["id"]: r["v"] for r in ours.to_pylist()}


def _files_of(path: Path, instant: str) -> list[Path]:
    return [p for p in path.rglob("*.parquet") if is_base_file_name(p.name)
            and BaseFileName.parse(p.name).instant_time == instant]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writers_of_disjoint_file_groups_both_commit(tmp_path, table_type):
    options = {**OCC, "hoodie.datasource.write.table.type": table_type}
    path = _table(tmp_path, options)
    a = Writer(path, _rows(["a1", "a9"], ["a", "a"], 1.0), options).start()
    b = Writer(path, _rows(["b1", "b9"], ["b", "b"], 2.0), options).start()
    assert not (path / ".hoodie" / "lock").exists()  # optimistic: the lock is held only to start and to commit
    a.write()
    b.write()
    a_time, b_time = a.commit(), b.commit()
    assert a_time < b_time or b_time < a_time
    assert _values(path) == {"a1": 1.0, "a2": 0.0, "a9": 1.0, "b1": 2.0, "b2": 0.0, "b9": 2.0}
    assert all(i.is_completed for i in Timeline.load(TableLocation.of(str(path))))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_later_of_two_writers_of_one_file_group_fails_and_is_rolled_back(tmp_path, table_type):
    options = {**OCC, "hoodie.datasource.write.table.type": table_type}
    path = _table(tmp_path, options)
    group = next(s.file_id for s in HudiTable.load(str(path)).file_slices() if s.partition_path == "a")
    first = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    second = Writer(path, _rows(["a2", "b1"], ["a", "b"], 2.0), options).start().write()
    winner = first.commit()
    with pytest.raises(WriteConflictError) as e:
        second.commit()
    lost = second.txn.instant
    message = str(e.value)
    for part in (f"at instant {lost} conflicts with instant {winner}", f"a/{group}", "the first commit wins",
                 "this write was rolled back and nothing of it is in the table"):
        assert part in message, message
    assert e.value.other == winner and e.value.file_groups == [("a", group)]
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert not any(i.timestamp == lost for i in timeline)
    (rollback,) = timeline.filter_by([Action.ROLLBACK], [State.COMPLETED])
    assert read_avro_metadata(timeline.read_content(rollback))["commitsRollback"] == [lost]
    assert _files_of(path, lost) == [] and not list(path.rglob(f".*{lost}*"))
    assert _values(path) == {"a1": 1.0, "a2": 0.0, "b1": 0.0, "b2": 0.0}  # none of the loser's rows, b1 included
    # Re-run, it sees the winner's changes and commits.
    Writer(path, _rows(["a2", "b1"], ["a", "b"], 2.0), options).start().write().commit()
    assert _values(path) == {"a1": 1.0, "a2": 2.0, "b1": 2.0, "b2": 0.0}


def test_a_write_into_a_file_group_under_compaction_is_kept_when_the_compaction_commits_first(tmp_path):
    """A compaction scheduled before a write started: the write's log file goes into the compaction's new slice, so
    the compaction committing first is no conflict (as in Hudi), and no update is lost."""
    options = {**OCC, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    path = _table(tmp_path, options)
    write(path, _rows(["a1"], ["a"], 1.0), options)
    storage, base = Storage.for_uri(str(path))
    compaction = schedule_compaction(TableLocation.at(storage, base))
    late = Writer(path, _rows(["a2"], ["a"], 3.0), options).start().write()
    run_compaction(TableLocation.at(storage, base), compaction.timestamp)
    late.commit()
    assert _values(path) == {"a1": 1.0, "a2": 3.0, "b1": 0.0, "b2": 0.0}


def test_new_file_groups_of_one_bucket_conflict(tmp_path):
    options = {**OCC, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
    path = _table(tmp_path, options)
    first = Writer(path, _rows(["c1"], ["c"], 1.0), options).start().write()
    second = Writer(path, _rows(["c2"], ["c"], 2.0), options).start().write()
    first.commit()
    with pytest.raises(WriteConflictError, match="c/00000000"):
        second.commit()
    assert _values(path)["c1"] == 1.0 and "c2" not in _values(path)


def test_a_single_writer_holds_the_lock_for_its_whole_write(tmp_path):
    options = {**OCC, "hoodie.write.concurrency.mode": "SINGLE_WRITER", "hoodie.write.lock.wait_time_ms": "300"}
    path = _table(tmp_path, options)
    first = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    assert (path / ".hoodie" / "lock").exists()
    with pytest.raises(WriteError, match="could not take the write lock within 300 ms"):
        Writer(path, _rows(["b1"], ["b"], 2.0), options).start()
    first.commit()
    assert not (path / ".hoodie" / "lock").exists()
    assert _values(path)["a1"] == 1.0


def test_a_live_writers_instant_is_not_rolled_back_by_another_writers_cleaning(tmp_path):
    options = {**OCC, "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
               "hoodie.keep.max.commits": "3"}
    path = _table(tmp_path, options)
    slow = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    for v in range(2, 7):  # others commit, clean (LAZY rollback of dead writers) and archive meanwhile
        write(path, _rows(["b1"], ["b"], float(v)), options, table_services=True)
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert not timeline.filter_by([Action.ROLLBACK])
    assert (path / ".hoodie" / ".heartbeat" / slow.txn.instant).exists()
    assert timeline.completed_commits().first().timestamp < slow.txn.instant  # archival stopped before it
    slow.commit()
    assert _values(path) == {"a1": 1.0, "a2": 0.0, "b1": 6.0, "b2": 0.0}


def test_a_dead_writers_instant_is_rolled_back_once_its_heartbeat_expired(tmp_path):
    options = {**OCC, "hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.write.lock.filesystem.expire": "0.01"}
    path = _table(tmp_path, options)
    dead = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    dead.txn.heartbeat.renewal.stop()  # the process died: nothing renews, nothing rolls back
    time.sleep(0.3)  # more than 2 x 100 ms
    write(path, _rows(["b2"], ["b"], 3.0), options, table_services=True)  # LAZY: the cleaning after it rolls back
    timeline = Timeline.load(TableLocation.of(str(path)))
    (rollback,) = timeline.filter_by([Action.ROLLBACK], [State.COMPLETED])
    assert read_avro_metadata(timeline.read_content(rollback))["commitsRollback"] == [dead.txn.instant]
    assert not Path(heartbeat_path(TableLocation.of(str(path)), dead.txn.instant)).exists()
    assert _files_of(path, dead.txn.instant) == []
    with pytest.raises(InstantLostError, match=f"instant {dead.txn.instant} was rolled back by rollback"):
        dead.commit()
    assert _values(path) == {"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 3.0}


def test_a_writer_giving_up_keeps_its_own_error_when_another_rolls_its_instant_back_meanwhile(tmp_path, monkeypatch):
    """A writer that gives its instant up deletes its heartbeat before it waits for the lock (so the instant counts as
    failed should it never get the lock), and another writer may roll the instant back in that window. Nothing of the
    write stays; the error that made the writer give up is the one raised, not a heartbeat stall that did not happen
    (seen as InstantLostError hiding a clustering's refusal in tests/write/test_writer_race.py)."""
    from hudi_engine.write.write_client import Transaction

    path = _table(tmp_path, OCC)
    giving_up = Writer(path, _rows(["a1"], ["a"], 1.0), OCC).start().write()
    real, others = Transaction._locked, []

    def another_writer_first(self, doing):  # in the window: another writer's commit, then its LAZY rollback
        if self is giving_up.txn and not others:
            others.append(write(path, _rows(["b2"], ["b"], 3.0), OCC, table_services=True))
        return real(self, doing)

    monkeypatch.setattr(Transaction, "_locked", another_writer_first)
    with pytest.raises(WriteError, match="the reason to give up") as e, giving_up.stack:
        raise WriteError("the reason to give up")
    assert not isinstance(e.value, InstantLostError)
    timeline = Timeline.load(TableLocation.of(str(path)))
    (rollback,) = timeline.filter_by([Action.ROLLBACK], [State.COMPLETED])
    assert read_avro_metadata(timeline.read_content(rollback))["commitsRollback"] == [giving_up.txn.instant]
    assert rollback.timestamp > others[0].instant_time  # the other writer's, after its own commit
    assert _files_of(path, giving_up.txn.instant) == []
    assert _values(path) == {"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 3.0}


def test_a_single_writer_paused_past_its_lock_expiry_cannot_commit_and_its_live_instant_is_left_alone(tmp_path):
    """The lock expires (300 ms) long before the heartbeat (50 x 100 ms): the next writer takes the lock, leaves
    the paused writer's pending instant alone and commits; the paused writer then fails and rolls back itself."""
    options = {**OCC, "hoodie.write.concurrency.mode": "SINGLE_WRITER", "hoodie.write.lock.filesystem.expire": "0.005",
               "hoodie.client.heartbeat.interval_in_ms": "100", "hoodie.client.heartbeat.tolerable.misses": "50"}
    path = _table(tmp_path, options)
    paused = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    paused.txn.lock.renewal.stop()  # its lock renewals stop; its heartbeat thread goes on
    other = write(path, _rows(["b1"], ["b"], 2.0), options)
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert not timeline.filter_by([Action.ROLLBACK])  # the paused writer's instant was left alone
    assert any(i.timestamp == paused.txn.instant and not i.is_completed for i in timeline)
    with pytest.raises(InstantLostError, match=f"the table lock \\(lock file {lock_path(TableLocation.of(str(path)))}\\) was not renewed "
                                               f"for .* so this writer is not committing instant {paused.txn.instant}"):
        paused.commit()
    timeline = Timeline.load(TableLocation.of(str(path)))
    (rollback,) = timeline.filter_by([Action.ROLLBACK], [State.COMPLETED])
    assert rollback.timestamp > other.instant_time  # its own rollback, after the other writer was done
    assert _files_of(path, paused.txn.instant) == []
    assert _values(path) == {"a1": 0.0, "a2": 0.0, "b1": 2.0, "b2": 0.0}


def test_failed_writes_policy_eager_rolls_back_dead_writers_before_a_write(tmp_path):
    options = {**OCC, "hoodie.write.concurrency.mode": "SINGLE_WRITER"}
    path = _table(tmp_path, options)
    dead = Writer(path, _rows(["a1"], ["a"], 1.0), options).start().write()
    dead.txn.heartbeat.stop()  # a writer that gave up without rolling back (its heartbeat is gone)
    dead.txn.release_lock()
    write(path, _rows(["b1"], ["b"], 2.0), options)
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert [read_avro_metadata(timeline.read_content(r))["commitsRollback"]
            for r in timeline.filter_by([Action.ROLLBACK], [State.COMPLETED])] == [[dead.txn.instant]]
    with pytest.raises(InstantLostError, match=f"instant {dead.txn.instant} was rolled back"):
        dead.commit()
