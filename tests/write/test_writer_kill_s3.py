"""A writer process killed (SIGKILL) at one step of its write on an S3 table leaves the table exactly as before (or,
once past the commit point, exactly as after) for hudi-rs and this engine; the next writer recovers: it takes the dead
writer's lock, rolls its instant back once the heartbeat expired, and commits."""
from __future__ import annotations

import json
import os
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

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
# The killed writer renews its heartbeat every 200 ms (10 misses tolerated, so a busy machine does not fail it
# first); a lock of this host's dead process is taken at once. The kill points are version 6's file names
# (tests/spark/test_writer_crash.py kills writers of version 9 tables too).
OPTIONS = {"hoodie.table.name": "killed", "hoodie.write.table.version": "6",
           "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.client.heartbeat.interval_in_ms": "200", "hoodie.client.heartbeat.tolerable.misses": "10",
           "hoodie.write.lock.filesystem.expire": "0.01"}

# The writer: one upsert through the engine's write pieces (lock, heartbeat, instant, files, commit, services); it
# kills itself when a storage call touches a path matching the pattern, before (or, with "after:", after) the call.
_KILLED = r'''
import json, os, re, signal, sys
import pyarrow as pa
from local_write import write
from hudi_engine.storage import Storage

path, point, options, methods = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4].split(",")
after = point.startswith("after:")
pattern = re.compile(point.removeprefix("after:"))

def hooked(name):
    real = getattr(Storage, name)
    def call(self, p, *args, **kwargs):
        if pattern.search(p) and not after:
            os.kill(os.getpid(), signal.SIGKILL)
        out = real(self, p, *args, **kwargs)
        if pattern.search(p) and after:
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    setattr(Storage, name, call)

for name in methods:
    hooked(name)
rows = pa.table({"id": ["a1", "b1", "c9"], "p": ["a", "b", "c"], "ts": pa.array([2, 2, 2], pa.int64()),
                 "v": ["killed"] * 3})
write(path, rows, options, table_services=True)
'''

_ALL = "create_versioned,write_bytes,open_output,delete,delete_dir,delete_if_version"
_POINTS = {  # point -> (path pattern, the Storage calls that kill)
    "heartbeat created": (r"\.heartbeat/\d+$", "create_versioned,write_bytes"),
    "requested": (r"/\d+\.(commit|deltacommit)\.requested$", _ALL),
    "inflight": (r"/\d+\.(deltacommit\.)?inflight$", _ALL),
    "marker": (r"\.marker\.", _ALL),
    "data file": (r"/(\.[^/]*\.log\.\d+_[^/]*|[^/]*\.parquet)$", _ALL),
    "partition metadata": (r"c/\.hoodie_partition_metadata$", _ALL),
    "heartbeat deleted": (r"\.heartbeat/\d+$", "delete"),  # right before the commit point
    "completed": (r"/\d+\.(commit|deltacommit)$", _ALL),
    "after completed": (r"after:/\d+\.(commit|deltacommit)$", _ALL),
    "lock released": (r"\.hoodie/lock$", "delete_if_version,delete"),
}


def _rows(v: str, keys=("a1", "b1"), ts: int = 1) -> pa.Table:
    return pa.table({"id": list(keys), "p": [k[0] for k in keys], "ts": pa.array([ts] * len(keys), pa.int64()),
                     "v": [v] * len(keys)})


def _values(path: str) -> dict:
    ours = HudiTable.load(path).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot")
    return {r["id"]: r["v"] for r in ours.to_pylist()}


@pytest.mark.parametrize("table_type,point", [
    *[("MERGE_ON_READ", p) for p in _POINTS if p not in ("heartbeat created", "inflight")],
    ("COPY_ON_WRITE", "data file"), ("COPY_ON_WRITE", "after completed"),
])
def test_a_writer_killed_on_s3_leaves_the_table_before_or_after_and_the_next_writer_recovers(s3_table, table_type,
                                                                                             point):
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    write(s3_table, _rows("init"), options)
    before = _values(s3_table)
    pattern, methods = _POINTS[point]
    # The data table's files, not those of its metadata table (on by default, written before the data commit).
    after = "after:" if pattern.startswith("after:") else ""
    pattern = after + r"^(?!.*\.hoodie/metadata/).*" + pattern.removeprefix("after:")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "write"), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    killed = subprocess.run([sys.executable, "-c", _KILLED, s3_table, pattern, json.dumps(options), methods], env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr[-3000:]
    committed = point in ("after completed", "lock released")
    after_kill = {**before, "a1": "killed", "b1": "killed", "c9": "killed"} if committed else before
    assert _values(s3_table) == after_kill, f"the table after a kill at {point}"

    time.sleep(2.2)  # the dead writer's heartbeat expires for the next writer (2 x 1000 ms)
    judge = {**options, "hoodie.client.heartbeat.interval_in_ms": "1000", "hoodie.client.heartbeat.tolerable.misses": "2",
             "hoodie.write.lock.filesystem.expire": "0.1"}
    write(s3_table, _rows("next", ("a1", "d1"), ts=3), judge, table_services=True)
    assert _values(s3_table) == {**after_kill, "a1": "next", "d1": "next"}
    storage, base = Storage.for_uri(s3_table)
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert all(i.is_completed for i in timeline), [str(i) for i in timeline]
    assert not storage.exists(Storage.join(base, ".hoodie", "lock"))
    if not committed and point not in ("heartbeat created", "requested"):
        rollbacks = [i for i in timeline if i.action.value == "rollback"]
        assert len(rollbacks) == 1, [str(i) for i in timeline]
        (rollback,) = rollbacks
        (lost,) = json.loads(json.dumps(_rolled_back(storage, timeline, rollback)))
        assert _files_of(storage, base, lost) == [], "the next writer removed every file of the killed instant"


def _rolled_back(storage: Storage, timeline: Timeline, rollback) -> list[str]:
    from hudi_engine.timeline.avro_models import read_avro_metadata

    return read_avro_metadata(timeline.read_content(rollback))["commitsRollback"]


def _files_of(storage: Storage, base: str, instant: str) -> list[str]:
    """Data files holding anything of `instant`: base files named after it, log files with one of its blocks."""
    from hudi_engine.file_naming import BaseFileName, is_base_file_name, is_log_file_name
    from hudi_engine.io.log_format import read_log_blocks

    found = []
    for partition in ("a", "b", "c", "d"):
        for e in storage.list_dir(Storage.join(base, partition)):
            if (is_base_file_name(e.name) and BaseFileName.parse(e.name).instant_time == instant) or (is_log_file_name(e.name) and any(b.instant_time == instant for b in
                                                  read_log_blocks(storage.read_bytes(e.path), file_name=e.path))):
                found.append(e.path)
    return found
