"""A writer process really paused (SIGSTOP) between its data files and its commit, on a local disk and on the S3 API.

Paused past its lock's expiry but within its heartbeat's tolerance: the next writer takes the lock, leaves the paused
writer's instant alone (its heartbeat is alive) and commits; the paused writer, resumed, cannot commit and rolls
its own instant back. Paused past its heartbeat's tolerance: another writer rolls the instant back; the resumed
writer fails naming that rollback and leaves no file behind.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.instant import Action, State

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
BASE = {"hoodie.table.name": "paused", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}

_WRITER = r'''
import json, os, sys, time
import pyarrow as pa
from local_write import write_files
from hudi_engine.config import WriteConfig
from hudi_engine.write.write_client import WriteClient, table_for_write

path, options, ready, go, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = pa.table({"id": ["a1", "new"], "p": ["a", "a"], "ts": pa.array([1, 1], pa.int64()), "v": ["paused", "paused"]})
client = WriteClient.open(table_for_write(path), WriteConfig.from_options(options), rows.schema)
instant = None
try:
    with client.transaction() as txn:
        instant = txn.instant
        stats = write_files(client, txn, rows)
        open(ready, "w").write(instant)
        while not os.path.exists(go):
            time.sleep(0.01)
        result = txn.commit(stats)
    record = {"committed": result.instant_time}
except Exception as e:
    record = {"instant": instant, "error": type(e).__name__, "message": str(e)}
open(out, "w").write(json.dumps(record))
'''


def _table_path(request, tmp_path: Path) -> str:
    if request.param == "s3":
        return request.getfixturevalue("s3_table")
    return str(tmp_path / "t")


@pytest.fixture(params=["local", "s3"])
def table(request, tmp_path) -> str:
    return _table_path(request, tmp_path)


def _rows(v: str) -> pa.Table:
    return pa.table({"id": ["a1", "b1"], "p": ["a", "b"], "ts": pa.array([0, 0], pa.int64()), "v": [v, v]})


def _run_paused(path: str, options: dict, tmp_path: Path, pause_s: float, other: dict,
                while_paused=lambda: None) -> tuple[dict, str]:
    """Start the writer, pause it once its files are written, let another writer write meanwhile (then call
    `while_paused`), resume it."""
    ready, go, out = tmp_path / "ready", tmp_path / "go", tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "write"), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, path, json.dumps(options), str(ready), str(go), str(out)],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the writer never got to its commit point"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGSTOP)
        go.touch()
        time.sleep(pause_s)
        other_instant = write(path, _rows("other"), other, table_services=True).instant_time
        while_paused()
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.read_text()), other_instant


def _timeline(path: str) -> Timeline:
    return Timeline.load(TableLocation.of(path))


def _rolled_back(path: str) -> list[list[str]]:
    t = _timeline(path)
    return [read_avro_metadata(t.read_content(r))["commitsRollback"] for r in t.filter_by([Action.ROLLBACK],
                                                                                            [State.COMPLETED])]


def _values(path: str) -> dict:
    ours = HudiTable.load(path).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot")
    return {r["id"]: r["v"] for r in ours.to_pylist()}


def test_paused_past_its_lock_expiry_it_cannot_commit_and_its_live_instant_is_left_alone(table, tmp_path):
    # Lock: 1.2 s expiry, renewed every 300 ms; heartbeat: 20 x 300 ms = 6 s.
    options = {**BASE, "hoodie.write.lock.filesystem.expire": "0.02", "hoodie.client.heartbeat.interval_in_ms": "300",
               "hoodie.client.heartbeat.tolerable.misses": "20"}
    write(table, _rows("init"), options)
    seen: dict = {}

    def check_while_paused():
        seen["rollbacks"] = _rolled_back(table)
        seen["pending"] = [i.timestamp for i in _timeline(table) if not i.is_completed]

    result, other = _run_paused(table, options, tmp_path, 2.0, options, check_while_paused)
    paused = result["instant"]
    assert seen == {"rollbacks": [], "pending": [paused]}, "its heartbeat was alive: nobody rolled it back"
    assert result["error"] == "InstantLostError", result
    assert "the table lock" in result["message"] and "was not renewed for" in result["message"]
    assert f"so this writer is not committing instant {paused}" in result["message"]
    # The other writer committed without rolling the paused (live) instant back; the paused writer rolled it back
    # itself after it resumed.
    t = _timeline(table)
    rollbacks = list(t.filter_by([Action.ROLLBACK], [State.COMPLETED]))
    assert _rolled_back(table) == [[paused]] and rollbacks[0].timestamp > other
    assert all(i.is_completed for i in t)
    assert _values(table) == {"a1": "other", "b1": "other"}


def test_paused_past_its_heartbeat_it_is_rolled_back_and_leaves_no_file(table, tmp_path):
    options = {**BASE, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.client.heartbeat.interval_in_ms": "200"}  # dead after 2 x 200 ms
    # The table's first write is not what is tested: it tolerates a loaded machine's renewal gaps (a fresh clone's
    # run saw one of 498 ms), as the other writer below does.
    write(table, _rows("init"), {**options, "hoodie.client.heartbeat.tolerable.misses": "10"})
    # The other writer judges the paused heartbeat by its own tolerance (10 x 200 ms = 2 s, below the 3 s pause) and
    # keeps its own alive under a loaded machine's scheduling gaps (CI saw one of 464 ms).
    other = {**options, "hoodie.client.heartbeat.tolerable.misses": "10"}
    result, other = _run_paused(table, options, tmp_path, 3.0, other)
    paused = result["instant"]
    assert result["error"] == "InstantLostError", result
    (rolled,) = _rolled_back(table)
    assert rolled == [paused]
    assert f"instant {paused} was rolled back by rollback" in result["message"]
    assert f".heartbeat/{paused} was not renewed in time" in result["message"]
    storage, base = Storage.for_uri(table)
    files = [e.name for p in ("a", "b") for e in storage.list_dir(Storage.join(base, p)) if paused in e.name]
    assert files == []
    assert _values(table) == {"a1": "other", "b1": "other"}
