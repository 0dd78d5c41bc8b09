"""Restore (FORMAT.md, Restore): roll the table back to a savepoint or an earlier commit, as one `restore` instant.

A restore R to instant T, under the table lock:
    1. `<R>.restore.requested`: HoodieRestorePlan, the instants to roll back, newest first (Hudi's
       RestorePlanActionExecutor): pending clusterings first, then every instant of the write timeline (commits,
       delta commits, replace commits, compactions and log compactions, completed or pending) after T. Table
       version 6 orders by requested time; versions 8 and 9 (timeline layout 2) take the completed instants whose
       completion time is after T's, newest completion first, and the pending ones requested after T.
    2. `<R>.restore.inflight` (empty);
    3. each instant rolled back in turn (`rollback.rollback_for_restore`): its data files deleted, its instant files
       last; each rollback's own instant stays inflight, as Hudi's restore executors leave them;
    4. `<R>.restore`: HoodieRestoreMetadata, every rolled-back instant's rollback metadata;
    5. the pending rollbacks after R deleted (Hudi deletes them, so they are not taken for failed rollbacks).
Cleans and rollbacks after T stay on the timeline, as Hudi leaves them.

A crash leaves R pending, which every writer refuses (`table_features`). Restoring to T again finishes it, as
Hudi's `restoreToInstant` resumes a failed restore to the same instant: the pending rollbacks after R are dropped and
each planned instant still on the timeline is rolled back again (deleting is idempotent).

Refused before anything is written: an instant that is not a completed commit of the active timeline (archived, or
never written), one older than what the last clean kept and not savepointed (its files may be gone); the refusal
names the savepoints and instants that can be restored.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from hudi_engine.errors import TableServiceError
from hudi_engine.meta_client import MetaClient
from hudi_engine.table_services.savepoint import listed, lookup_window_start, savepoints
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.write.rollback import rollback_for_restore

RESTORE_PLAN = "HoodieRestorePlan"
RESTORE_METADATA = "HoodieRestoreMetadata"


@dataclass(frozen=True)
class RestoreResult:
    restore_instant: str
    restored_to: str
    rolled_back: list[Instant]  # in the order they were rolled back
    resumed: bool  # a crashed restore to the same instant was finished


def restorable(timeline: Timeline) -> tuple[list[str], list[str]]:
    """(savepoints, other completed commits a restore may go to): the commits cleaning kept whole."""
    completed = timeline.completed_commits().timestamps()
    points = [s.instant_time for s in savepoints(timeline) if s.instant_time in completed]  # not one a restore undid
    window = lookup_window_start(timeline)
    commits = [c for c in completed if c not in points and (window is None or c >= window)]
    return points, commits


def restore_message(timeline: Timeline) -> str:
    """What a refused restore names: the savepoints and the instants that can be restored."""
    points, commits = restorable(timeline)
    return (f"savepoints: {listed(points)}; other instants that can be restored: {listed(commits)}"
            " (HudiTable.savepoints(); savepoint a commit before a risky write with HudiTable.savepoint())")


def check_restorable(table: MetaClient, instant_time: str) -> None:
    """Refuse a restore to an instant that is not a restorable commit, naming those that are."""
    timeline, where = table.timeline, f"table {table.config.name!r} ({table.location.base_path})"
    points, commits = restorable(timeline)
    if instant_time in points or instant_time in commits:
        return
    if instant_time in timeline.completed_commits().timestamps():
        why = f"cleaning may have removed its files (the last clean retains commits from {lookup_window_start(timeline)} on)"
    elif timeline.is_before_timeline_starts(instant_time):
        why = "it is older than the active timeline (archived, or before the first commit)"
    elif timeline.contains_instant_time(instant_time):
        why = "it is not a completed commit"
    else:
        why = "no commit of the table has this time"
    raise TableServiceError(f"{where}: cannot restore to {instant_time}: {why}. Can be restored: "
                            f"{restore_message(timeline)}")


def pending_restore(timeline: Timeline) -> tuple[Instant, str] | None:
    """A restore a crash left pending, and the instant it restores to."""
    pending = timeline.filter_by([Action.RESTORE]).pending().last()
    if pending is None:
        return None
    plan = timeline.avro_metadata(pending.with_state(State.REQUESTED)) or {}
    return pending, str(plan.get("savepointToRestoreTimestamp") or "")


def restore(table: MetaClient, instant_time: str) -> RestoreResult:
    """Restore `table` (its timeline listed under the table lock, checked by the caller) to `instant_time`, or
    finish a crashed restore to it."""
    timeline, where = table.timeline, f"table {table.config.name!r} ({table.location.base_path})"
    t0 = time.monotonic()
    crashed = pending_restore(timeline)
    if crashed is not None:
        instant, target = crashed
        if target != instant_time:
            raise TableServiceError(
                f"{where}: restore {instant.timestamp} to {target or 'an unknown instant'} did not finish; finish "
                f"it first (HudiTable.restore({target!r})), then restore to {instant_time}")
        plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        planned = [(str(i["commitTime"]), str(i["action"])) for i in plan.get("instantsToRollback") or ()]
    else:
        check_restorable(table, instant_time)
        todo = instants_to_roll_back(timeline, instant_time)
        planned = [(i.timestamp, i.action.value) for i in todo]
        instant = Instant(new_instant_time(after=timeline.latest_time(), local=table.config.local_instant_times),
                          Action.RESTORE, State.REQUESTED)
        record = {"instantsToRollback": [{"commitTime": ts, "action": a} for ts, a in planned], "version": 2,
                  "savepointToRestoreTimestamp": instant_time}
        timeline.create_requested(instant, write_avro_metadata(RESTORE_PLAN, record))
    table.config.disable_metadata_table(table.location, f"the restore {instant.timestamp} does not record itself in it")
    _drop_rollbacks_after(timeline, instant.timestamp)  # a crashed attempt's, planned again below
    inflight = instant if instant.is_inflight else timeline.transition_to_inflight(instant)
    done: list[Instant] = []
    by_instant: dict[str, list[dict]] = {}
    for ts, action in planned:
        timeline = timeline.reload()
        found = [i for i in timeline.write_timeline().instants_at(ts)]
        if found:
            result = rollback_for_restore(timeline, found[0])
            done.append(found[0])
            by_instant[ts] = [result.metadata]
        else:  # rolled back by the crashed attempt: nothing left of it
            by_instant[ts] = [_nothing_left(inflight.timestamp, ts, action)]
    record = {"startRestoreTime": inflight.timestamp, "timeTakenInMillis": int((time.monotonic() - t0) * 1000),
              "instantsToRollback": [ts for ts, _ in planned], "hoodieRestoreMetadata": by_instant, "version": 1,
              "restoreInstantInfo": [{"commitTime": ts, "action": a} for ts, a in planned]}
    timeline.complete(inflight, write_avro_metadata(RESTORE_METADATA, record))
    _drop_rollbacks_after(timeline.reload(), inflight.timestamp)
    return RestoreResult(inflight.timestamp, instant_time, done, crashed is not None)


def instants_to_roll_back(timeline: Timeline, instant_time: str) -> list[Instant]:
    """What a restore to `instant_time` rolls back, in order (the module's step 1)."""
    writes = timeline.write_timeline()
    clusterings = [i for i in reversed(writes.pending()) if i.timestamp > instant_time and i.action in
                   (Action.REPLACE_COMMIT, Action.CLUSTERING) and is_clustering(timeline, i)]
    pending = [i for i in reversed(writes.pending()) if i.timestamp > instant_time and i not in clusterings]
    if timeline.layout.version == 1:
        completed = [i for i in reversed(writes.completed()) if i.timestamp > instant_time]
    else:
        done_at = timeline.completion_times().get(instant_time, instant_time)
        completed = sorted((i for i in writes.completed() if (i.completion_time or i.timestamp) > done_at),
                           key=lambda i: i.completion_time or i.timestamp, reverse=True)
    return clusterings + pending + completed


def _drop_rollbacks_after(timeline: Timeline, restore_time: str) -> None:
    for rollback in timeline.filter_by([Action.ROLLBACK]).pending():
        if rollback.timestamp > restore_time:
            timeline.delete_instant_files(rollback)


def _nothing_left(restore_time: str, ts: str, action: str) -> dict:
    return {"startRollbackTime": restore_time, "timeTakenInMillis": 0, "totalFilesDeleted": 0,
            "commitsRollback": [ts], "partitionMetadata": {}, "version": 1,
            "instantsRollback": [{"commitTime": ts, "action": action}]}
