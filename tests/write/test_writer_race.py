"""Two writer processes racing on one table, on a local disk and on the S3 API, many rounds each: every write either
commits (and then all its rows are in the table unless a later commit replaced them) or fails as a conflict naming
the other writer's instant; no update is lost, every reported commit is on the timeline, hudi-rs reads what the
model says. Under SINGLE_WRITER the lock serialises them and every write commits.

With a third process clustering the table every round (schedule, a pause, execute), a write may also lose to the
clustering (a conflict naming its replacecommit), be refused while the clustering is pending
(SparkRejectUpdateStrategy), or go in and make the clustering refuse to complete or be rolled back
(SparkAllowUpdateStrategy): in every order, no committed update is lost and readers agree."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
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
from hudi_engine.errors import ClusteringUpdateError
from hudi_engine.write.conflict import WriteConflictError

# The data files take longer than the lock's 200 ms poll: under OCC the other writer starts its instant while this
# one is in flight, so the writes overlap every round, however fast the store answers.
_write_files = local_write.write_files
local_write.write_files = lambda *a, **k: (time.sleep(0.4), _write_files(*a, **k))[1]

path, me, rounds, out, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
barrier, others = sys.argv[6], sys.argv[7].split(",")  # the other writer, and the clusterer if there is one
with open(out, "a") as log:
    for r in range(rounds):
        open(os.path.join(barrier, f"{me}-{r}"), "w").close()
        deadline = time.monotonic() + 300
        while not all(os.path.exists(os.path.join(barrier, f"{o}-{r}")) for o in others) and time.monotonic() < deadline:
            time.sleep(0.005)
        ids = [f"{me}-{k}" for k in range(3)] + [f"s-{me}-{r}"]
        rows = pa.table({"id": ids, "p": [f"p{me}"] * 3 + ["shared"],
                         "ts": pa.array([r] * len(ids), pa.int64()), "v": [f"{me}:{r}"] * len(ids)})
        try:
            result = write(path, rows, options, table_services=True)
        except WriteConflictError as e:
            log.write(json.dumps({"round": r, "conflict": str(e), "other": e.other}) + "\n")
        except ClusteringUpdateError as e:  # updates under a pending clustering, SparkRejectUpdateStrategy
            log.write(json.dumps({"round": r, "refused": str(e)}) + "\n")
        else:
            log.write(json.dumps({"round": r, "instant": result.instant_time}) + "\n")
        log.flush()
        open(os.path.join(barrier, f"{me}-{r}-done"), "w").close()
'''

# The clustering process, the writers' third party at each round's start. In odd rounds it schedules a clustering
# before the writers start (they see it pending, and are refused, or go in and it loses, or roll it back first, as
# hoodie.clustering.updates.strategy says), then executes it after a pause. In even rounds the writers start first, and
# the clustering is scheduled after a pause (so it is planned before, across or after their commits) and executed
# after another. Each round clusters one partition, in turn the shared one, then each writer's. One JSON line per
# step: {"round", "scheduled"} (None: nothing to plan), {"round", "executed"}, {"round", "failed", "other"} when the
# execution lost (a write changed the plan's file groups; the clustering is then rolled back, as its error says to),
# or {"round", "rolled_back"} when a writer had rolled the plan back first.
_CLUSTERER = r'''
import json, os, random, sys, time
from hudi_engine import HudiTable
from hudi_engine.errors import ClusteringConflictError, WriteError

path, rounds, out, options, barrier = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
rng = random.Random(7)

def note(**step):
    log.write(json.dumps(step) + "\n")
    log.flush()

def schedule(r):
    selected = {"hoodie.clustering.plan.strategy.partition.selected": ["shared", "pa", "pb"][r % 3]}
    plan = HudiTable.load(path).cluster(options={**options, **selected}, op="schedule")
    note(round=r, scheduled=plan and plan.instant_time)
    return plan and plan.instant_time

def execute(r, instant):
    try:
        HudiTable.load(path).cluster(options=options, op="execute", instant=instant)
    except ClusteringConflictError as e:
        note(round=r, failed=instant, error=str(e), other=e.other)
        HudiTable.load(path).rollback(instant)
    except WriteError:
        # A writer rolled the requested plan back (hoodie.clustering.rollback.pending.replacecommit.on.conflict)
        if any(i.timestamp == instant for i in HudiTable.load(path).timeline):
            raise
        note(round=r, rolled_back=instant)
    else:
        note(round=r, executed=instant)

with open(out, "a") as log:
    for r in range(rounds):
        deadline = time.monotonic() + 300
        while not all(os.path.exists(os.path.join(barrier, f"{w}-{r}")) for w in "ab") and time.monotonic() < deadline:
            time.sleep(0.005)
        instant = schedule(r) if r % 2 else None
        open(os.path.join(barrier, f"c-{r}"), "w").close()
        if r == rounds - 1:  # the last (odd) round: both writes end before the execution, whatever the timing
            while not all(os.path.exists(os.path.join(barrier, f"{w}-{r}-done")) for w in "ab"):
                time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.8) if r % 2 == 0 else rng.uniform(0.2, 1.6))  # odd: the writes often commit first
        if r % 2 == 0:
            instant = schedule(r)
            time.sleep(rng.uniform(0, 0.6))
        if instant:
            execute(r, instant)
'''


def _race(path: str, options: dict, rounds: int, tmp_path: Path,
          clustering: dict | None = None) -> dict[str, list[dict]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS / "write"), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    logs = {me: tmp_path / f"{me}.jsonl" for me in ("a", "b")}
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs = {me: subprocess.Popen([sys.executable, "-c", _WRITER, path, me, str(rounds), str(log), json.dumps(options),
                                   str(barrier), ",".join(w for w in ("a", "b", "c" if clustering is not None else "")
                                                          if w and w != me)],
                                  env=env, stderr=subprocess.PIPE, text=True)
             for me, log in logs.items()}
    if clustering is not None:
        logs["c"] = tmp_path / "c.jsonl"
        procs["c"] = subprocess.Popen([sys.executable, "-c", _CLUSTERER, path, str(rounds), str(logs["c"]),
                                       json.dumps({**options, **clustering}), str(barrier)],
                                      env=env, stderr=subprocess.PIPE, text=True)
    for me, proc in procs.items():
        _, err = proc.communicate(timeout=1200)
        assert proc.returncode == 0, f"writer {me} failed:\n{err[-3000:]}"
    return {me: [json.loads(line) for line in log.read_text().splitlines()] for me, log in logs.items()}


def _check(path: str, results: dict[str, list[dict]], rounds: int, *, conflicts_allowed: bool) -> int:
    """The model of the table after the race (`results`: each writer's rounds, and the clusterer's steps under "c")
    against what our reader and hudi-rs read; the number of writes that lost (a conflict, or refused under a pending
    clustering)."""
    storage, base = Storage.for_uri(path)
    timeline = Timeline.load(TableLocation.at(storage, base))
    completed = {i.timestamp for i in timeline.completed_commits()}
    completed |= {e["commitTime"] for e in archived_entries(TableLocation.at(storage, base)) if e["actionState"] == "COMPLETED"}
    steps = results.get("c", [])
    clusterings = {s["scheduled"] for s in steps if s.get("scheduled")}
    clustered = {s["executed"] for s in steps if s.get("executed")}
    assert clustered <= completed, "every clustering reported done is on the timeline"
    assert not [str(i) for i in timeline if not i.is_completed], "no pending instant is left behind"
    expected = {f"s-{me}-{r}": ("", "init") for me in "ab" for r in range(MAX_ROUNDS)}  # key -> (instant, value)
    lost = 0
    for me in "ab":
        rows = results[me]
        assert [r["round"] for r in rows] == list(range(rounds))
        for r in rows:
            if "conflict" in r or "refused" in r:
                lost += 1
                assert conflicts_allowed, r
                if "refused" in r:  # SparkRejectUpdateStrategy: the pending clustering is named
                    assert "Not allowed to update the clustering file group" in r["refused"], r
                    assert any(f"{c}.replacecommit" in r["refused"] for c in clusterings), r
                    continue
                assert f"conflicts with instant {r['other']}" in r["conflict"], r
                assert "shared/" in r["conflict"] or f"p{me}/" in r["conflict"], r
                # A write loses to the other's commit, or to a clustering planned over its file groups after it
                # started: completed since, or still pending then (rolled back later if its execution lost).
                assert r["other"] in completed or r["other"] in clusterings, \
                    f"the winner {r['other']} named by a conflict is committed, or a clustering"
                continue
            assert r["instant"] in completed, f"writer {me}'s reported commit {r['instant']} is on the timeline"
            for key in [f"{me}-{k}" for k in range(3)] + [f"s-{me}-{r['round']}"]:
                if r["instant"] > expected.get(key, ("", ""))[0]:
                    expected[key] = (r["instant"], f"{me}:{r['round']}")
    ours = HudiTable.load(path).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot after the race")
    got = {r["id"]: r["v"] for r in ours.to_pylist()}
    assert got == {k: v for k, (_, v) in expected.items()}, "every committed update is there, the latest one wins"
    return lost


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


CLUSTER = {"hoodie.clustering.plan.strategy.sort.columns": "id",
           "hoodie.clustering.plan.strategy.small.file.limit": str(1 << 30)}
UPDATES = {"reject": {},
           "allow": {"hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy"},
           "allow-rollback": {"hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy",
                              "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"}}


@pytest.mark.parametrize(("updates", "table_type", "version"), [
    ("reject", "COPY_ON_WRITE", 9), ("allow", "MERGE_ON_READ", 9), ("allow-rollback", "COPY_ON_WRITE", 9),
    ("allow", "MERGE_ON_READ", 6)])
def test_two_writers_race_a_clustering(tmp_path, updates, table_type, version):
    """Issue 39: a third process schedules and executes a clustering of a partition each round, across the two
    writers' upserts, under OCC with `hoodie.clustering.updates.strategy` as given."""
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
               **UPDATES[updates]}
    _init(path, options)
    rounds = 10
    results = _race(path, options, rounds, tmp_path, clustering=CLUSTER)
    lost = _check(path, results, rounds, conflicts_allowed=True)
    steps = results["c"]
    clusterings = {s["scheduled"] for s in steps if s.get("scheduled")}
    outcomes = Counter("committed" if "instant" in r else "refused" if "refused" in r
                       else "lost to a clustering" if r["other"] in clusterings else "lost to the other writer"
                       for me in "ab" for r in results[me])
    outcomes.update(next(k for k in ("executed", "failed", "rolled_back", "scheduled") if k in s) for s in steps
                    if set(s) != {"round", "scheduled"})
    print(updates, table_type, version, dict(outcomes))
    assert outcomes["committed"] and outcomes["executed"], "writes and clusterings completed (else it proved nothing)"
    # The last round, the same whatever the timing: a clustering of the shared partition is pending when both writers
    # start, and executed after both ended.
    last = [s for s in steps if s["round"] == rounds - 1]
    writes = [results[me][-1] for me in "ab"]
    assert last[0]["scheduled"], last
    if updates == "reject":
        assert [w.get("refused", "") != "" for w in writes] == [True, True], writes
        assert "executed" in last[-1], last
    else:  # one writer commits (the other loses to it), then the clustering loses, or was rolled back by the writer
        assert sorted("instant" in w for w in writes) == [False, True], writes
        assert ("failed" if updates == "allow" else "rolled_back") in last[-1], last
    assert lost == sum(n for k, n in outcomes.items() if k.startswith(("lost", "refused")))
