"""Two writer processes racing on one table, on a local disk and on the S3 API, many rounds each: every write either
commits (and then all its rows are in the table unless a later commit replaced them) or fails as a conflict naming
the other writer's instant; no update is lost, every reported commit is on the timeline, hudi-rs reads what the
model says. Under SINGLE_WRITER the lock serialises them and every write commits."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archived_entries

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
OPTIONS = {"hoodie.table.name": "race", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.parquet.small.file.limit": "0", "hoodie.write.lock.wait_time_ms": "120000",
           "hoodie.keep.min.commits": "200", "hoodie.keep.max.commits": "210"}
MAX_ROUNDS = 30

# A writer process: `rounds` upserts of its own keys (partition p<id>, updated every round: the latest must win) and of
# one key of the shared file group per round (s-<id>-<round>, updated once: a concurrent rewrite of that file group
# from an older version would revert it, a lost update). One JSON line per round: {"round", "instant"} for a commit,
# {"round", "conflict", "other"} for a conflict. The two writers start each round together (a barrier of files) and
# take longer over their data files than the lock's poll, so their writes overlap, not only when the scheduler happens
# to interleave them.
_WRITER = r'''
import json, os, sys, time
import pyarrow as pa
import local_write
from local_write import write
from hudi_engine.write.conflict import WriteConflictError

# The data files take longer than the lock's 200 ms poll: under OCC the other writer starts its instant while this
# one is in flight, so the writes overlap every round, however fast the store answers.
_write_files = local_write.write_files
local_write.write_files = lambda *a, **k: (time.sleep(0.4), _write_files(*a, **k))[1]

path, me, rounds, out, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
barrier, other = sys.argv[6], "b" if me == "a" else "a"
with open(out, "a") as log:
    for r in range(rounds):
        open(os.path.join(barrier, f"{me}-{r}"), "w").close()
        deadline = time.monotonic() + 300
        while not os.path.exists(os.path.join(barrier, f"{other}-{r}")) and time.monotonic() < deadline:
            time.sleep(0.005)
        ids = [f"{me}-{k}" for k in range(3)] + [f"s-{me}-{r}"]
        rows = pa.table({"id": ids, "p": [f"p{me}"] * 3 + ["shared"],
                         "ts": pa.array([r] * len(ids), pa.int64()), "v": [f"{me}:{r}"] * len(ids)})
        try:
            result = write(path, rows, options, table_services=True)
        except WriteConflictError as e:
            log.write(json.dumps({"round": r, "conflict": str(e), "other": e.other}) + "\n")
        else:
            log.write(json.dumps({"round": r, "instant": result.instant_time}) + "\n")
        log.flush()
'''


def _race(path: str, options: dict, rounds: int, tmp_path: Path) -> dict[str, list[dict]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "write"), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    logs = {me: tmp_path / f"{me}.jsonl" for me in ("a", "b")}
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = {me: subprocess.Popen([sys.executable, "-c", _WRITER, path, me, str(rounds), str(log), json.dumps(options),
                                   str(barrier)], env=env, stderr=subprocess.PIPE, text=True)
             for me, log in logs.items()}
    for me, proc in procs.items():
        _, err = proc.communicate(timeout=1200)
        assert proc.returncode == 0, f"writer {me} failed:\n{err[-3000:]}"
    return {me: [json.loads(line) for line in log.read_text().splitlines()] for me, log in logs.items()}


def _check(path: str, results: dict[str, list[dict]], rounds: int, *, conflicts_allowed: bool) -> int:
    storage, base = Storage.for_uri(path)
    timeline = Timeline.load(TableLocation.at(storage, base))
    completed = {i.timestamp for i in timeline.completed_commits()}
    completed |= {e["commitTime"] for e in archived_entries(TableLocation.at(storage, base)) if e["actionState"] == "COMPLETED"}
    assert not [str(i) for i in timeline if not i.is_completed], "no pending instant is left behind"
    expected = {f"s-{me}-{r}": ("", "init") for me in "ab" for r in range(MAX_ROUNDS)}  # key -> (instant, value)
    conflicts = 0
    for me, rows in results.items():
        assert [r["round"] for r in rows] == list(range(rounds))
        for r in rows:
            if "conflict" in r:
                conflicts += 1
                assert conflicts_allowed, r
                assert f"conflicts with instant {r['other']}" in r["conflict"] and "shared/" in r["conflict"], r
                assert r["other"] in completed, f"the winner {r['other']} named by a conflict is committed"
                continue
            assert r["instant"] in completed, f"writer {me}'s reported commit {r['instant']} is on the timeline"
            for key in [f"{me}-{k}" for k in range(3)] + [f"s-{me}-{r['round']}"]:
                if r["instant"] > expected.get(key, ("", ""))[0]:
                    expected[key] = (r["instant"], f"{me}:{r['round']}")
    ours = HudiTable.load(path).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot after the race")
    got = {r["id"]: r["v"] for r in ours.to_pylist()}
    assert got == {k: v for k, (_, v) in expected.items()}, "every committed update is there, the latest one wins"
    return conflicts


def _init(path: str, options: dict) -> None:
    """The shared file group: every key a round will update once, in one file."""
    import pyarrow as pa

    ids = [f"s-{me}-{r}" for me in "ab" for r in range(MAX_ROUNDS)]
    write(path, pa.table({"id": ids, "p": ["shared"] * len(ids), "ts": pa.array([0] * len(ids), pa.int64()),
                          "v": ["init"] * len(ids)}), options)
    assert len(HudiTable.load(path).file_slices()) == 1


@pytest.mark.parametrize("mode", ["OPTIMISTIC_CONCURRENCY_CONTROL", "SINGLE_WRITER"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_two_processes_race_on_a_local_table(tmp_path, mode, table_type):
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.write.concurrency.mode": mode, "hoodie.datasource.write.table.type": table_type}
    _init(path, options)
    rounds = 15
    results = _race(path, options, rounds, tmp_path)
    conflicts = _check(path, results, rounds, conflicts_allowed=mode != "SINGLE_WRITER")
    if mode != "SINGLE_WRITER":
        assert conflicts > 0, "the writers overlapped at least once (else the race proved nothing)"


@pytest.mark.parametrize("mode", ["OPTIMISTIC_CONCURRENCY_CONTROL", "SINGLE_WRITER"])
def test_two_processes_race_on_an_s3_table(s3_table, tmp_path, mode):
    options = {**OPTIONS, "hoodie.write.concurrency.mode": mode, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    _init(s3_table, options)
    rounds = 8
    results = _race(s3_table, options, rounds, tmp_path)
    conflicts = _check(s3_table, results, rounds, conflicts_allowed=mode != "SINGLE_WRITER")
    if mode != "SINGLE_WRITER":
        assert conflicts > 0, "the writers overlapped at least once (else the race proved nothing)"
