"""The file-system lock on a local disk: it waits, names its holder, is taken over from a dead or expired writer (by
one taker only), is renewed while held, and a holder that stopped renewing finds out before it commits."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from hudi_engine.config import LockConfig, WriteConfig
from hudi_engine.errors import ConfigError, InstantLostError, WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write.lock import acquire, table_lock
from hudi_engine.write.renewal import Renewal


def _lock_path(tmp_path):
    return tmp_path / ".hoodie" / "lock"


def _hold(tmp_path, owner: str, expires_in_ms: int) -> None:
    """A lock file as an earlier version of this engine wrote it (absolute expiry)."""
    _lock_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    _lock_path(tmp_path).write_text(json.dumps({"owner": owner, "acquired_ms": now, "expires_ms": now + expires_in_ms}))


def _config(**kw) -> LockConfig:
    return LockConfig(**{"wait_timeout_ms": 1000, "expiry_ms": 60000, **kw})


def test_lock_is_taken_and_released(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    with table_lock(TableLocation.at(storage, base), _config()) as lock:
        content = json.loads(_lock_path(tmp_path).read_text())
        assert content["owner"] == lock.owner and content["expiry_ms"] == 60000
    assert not _lock_path(tmp_path).exists()


def test_second_writer_waits_then_fails_naming_the_holder(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    holder = f"otherhost:{os.getpid()}:abcd"
    _hold(tmp_path, holder, 60000)
    t0 = time.monotonic()
    with pytest.raises(WriteError, match="otherhost") as e:
        with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=600), poll_ms=50):
            pass
    assert time.monotonic() - t0 >= 0.5
    assert "lock" in str(e.value) and str(tmp_path) in str(e.value) and "hoodie.write.lock.wait_time_ms" in str(e.value)
    assert json.loads(_lock_path(tmp_path).read_text())["owner"] == holder  # not stolen


def test_waiting_writer_gets_the_lock_when_released(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _hold(tmp_path, "otherhost:1:x", 60000)
    child = subprocess.Popen([sys.executable, "-c", f"import time,os; time.sleep(0.5); os.remove({str(_lock_path(tmp_path))!r})"])
    with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=10000), poll_ms=50) as lock:
        assert lock.owner.startswith(socket.gethostname())
    child.wait()


def test_expired_lock_is_taken_over(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _hold(tmp_path, "otherhost:1:x", -1)
    with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=100)) as lock:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == lock.owner


def test_a_lock_whose_renewals_stopped_expires_after_its_own_expiry(tmp_path):
    """The holder's declared expiry counts, measured from its last renewal (the file's modification time)."""
    storage, base = Storage.for_uri(str(tmp_path))
    _lock_path(tmp_path).parent.mkdir(parents=True)
    old = int(time.time() * 1000) - 5000
    _lock_path(tmp_path).write_text(json.dumps({"owner": "otherhost:1:x", "renewed_ms": old, "expiry_ms": 3000}))
    os.utime(_lock_path(tmp_path), (old / 1000, old / 1000))
    with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=100)) as lock:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == lock.owner
    _lock_path(tmp_path).write_text(json.dumps({"owner": "otherhost:1:x", "renewed_ms": old, "expiry_ms": 30000}))
    with pytest.raises(WriteError, match="otherhost:1:x"):
        with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=100)):
            pass


def test_lock_of_a_dead_process_on_this_host_is_taken_over(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _hold(tmp_path, f"{socket.gethostname()}:{dead.pid}:x", 600000)
    with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=100)) as lock:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == lock.owner


def test_a_held_lock_is_renewed_past_its_expiry_and_not_taken(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    config = _config(expiry_ms=400, heartbeat_interval_ms=100, wait_timeout_ms=100)
    with table_lock(TableLocation.at(storage, base), config) as lock:
        time.sleep(1.2)  # three expiries
        with pytest.raises(WriteError, match=lock.owner):
            with table_lock(TableLocation.at(storage, base), config):
                pass
        lock.check("committing")
        assert lock.renewal.renewals >= 5


def test_a_holder_that_stopped_renewing_loses_the_lock_and_cannot_commit(tmp_path, monkeypatch):
    storage, base = Storage.for_uri(str(tmp_path))
    config = _config(expiry_ms=300, heartbeat_interval_ms=100, wait_timeout_ms=2000)
    lock = acquire(TableLocation.at(storage, base), config)
    monkeypatch.setattr(Renewal, "tick", lambda self: None)  # the holder's process is paused
    time.sleep(0.5)
    monkeypatch.undo()
    with table_lock(TableLocation.at(storage, base), config, poll_ms=20) as other:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == other.owner
        with pytest.raises(InstantLostError, match="the table lock .* was not renewed for .* so this writer is not "
                                                   "committing"):
            lock.check("committing")
        lock.release()  # a lost lock is not released: the other writer keeps it
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == other.owner
    assert not _lock_path(tmp_path).exists()


def _take_over(path: str, barrier, results) -> None:
    storage, base = Storage.for_uri(path)
    real_delete = Storage.delete

    def slow_delete(self, p):  # widen the window between judging the lock stale and replacing it
        if p.endswith("/.hoodie/lock"):
            time.sleep(0.2)
        return real_delete(self, p)

    Storage.delete = slow_delete
    barrier.wait()
    try:
        lock = acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0), poll_ms=10)
    except WriteError:
        results.put(None)
        return
    results.put(lock.owner)
    time.sleep(0.5)  # hold it while the others look
    lock.release()


def test_an_expired_lock_is_taken_over_by_one_of_several_racing_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    for _ in range(5):
        _hold(tmp_path, "otherhost:1:x", -1)
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_take_over, args=(str(tmp_path), barrier, results)) for _ in range(4)]
        for p in procs:
            p.start()
        winners = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(60)
        assert sum(w is not None for w in winners) == 1, winners


def test_a_provider_that_is_unknown_unsafe_or_contradicted_is_refused_before_writing(tmp_path):
    for options, message in [
        ({"hoodie.write.lock.provider": "com.example.MyLock"}, "hoodie.write.lock.provider='com.example.MyLock': "
                                                                "unknown lock provider"),
        ({"hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"},
         "is not supported: this engine has no ZooKeeper client"),
        ({"hoodie.write.lock.provider": "InProcessLockProvider"}, "never a second process"),
        ({"hoodie.write.lock.provider": "DynamoDBBasedLockProvider"}, "needs hoodie.write.lock.dynamodb.table"),
        ({"hoodie.write.lock.filesystem.expire": "1", "hoodie.client.heartbeat.interval_in_ms": "40000"},
         "hoodie.write.lock.filesystem.expire=1 minutes (60000 ms) contradicts hoodie.client.heartbeat.interval_in_ms"
         "=40000"),
        ({"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
          "hoodie.cleaner.policy.failed.writes": "EAGER"}, "contradicts hoodie.cleaner.policy.failed.writes=EAGER"),
        ({"hoodie.keep.min.commits": "10"}, "hoodie.keep.min.commits=10 must be greater than "
                                            "hoodie.cleaner.commits.retained=10"),
        ({"hoodie.keep.min.commits": "40"}, "hoodie.keep.max.commits=30 must be greater than hoodie.keep.min.commits=40"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            WriteConfig.from_options(options)
    assert not list(tmp_path.iterdir())
