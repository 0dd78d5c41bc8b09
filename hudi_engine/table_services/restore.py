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
    4. the metadata table restored with it (below);
    5. `<R>.restore`: HoodieRestoreMetadata, every rolled-back instant's rollback metadata;
    6. the pending rollbacks after R deleted (Hudi deletes them, so they are not taken for failed rollbacks).
Cleans and rollbacks after T stay on the timeline, as Hudi leaves them.

The metadata table (this engine's or Java's), as Hudi 0.15 and 1.2 keep it (`HoodieBackedTableMetadataWriter.update(
HoodieRestoreMetadata)`, the same in both; read from their jars): at step 4 the data files are listed, the metadata
table is restored to T by a restore of its own (the same steps on its timeline, at an instant after R: its delta
commits and compactions after T rolled back, so every partition, the record index too, is as of T), then
`MetadataWriter.record_restore` writes one delta commit at a newer instant (version 6: suffixed `003`) that brings
`files` back to the listing (the data table's cleans after T deleted files the metadata table's restore listed
again). Before anything is written (`keep_metadata_table`), as Hudi's `restoreToSavepoint`: the metadata table is
deleted (`TableConfig.disable_metadata_table`) when T is at or before its oldest compaction or older than its
timeline, or when this engine cannot keep it (`MetadataWriter.decide`); the restore is refused when the `files` file
group has no slice based at or before T (Hudi's metadata restore throws there, half-way).

A crash leaves R pending, which every writer refuses (`table_features`). Restoring to T again finishes it, as
Hudi's `restoreToInstant` resumes a failed restore to the same instant: the pending rollbacks after R are dropped and
each planned instant still on the timeline is rolled back again (deleting is idempotent).

Refused before anything is written: an instant that is not a completed commit of the active timeline (archived, or
never written), one older than what the last clean kept and not savepointed (its files may be gone); the refusal
names the savepoints and instants that can be restored.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from hudi_engine.errors import HudiError, TableServiceError
from hudi_engine.fs_view import FileSystemView, slicing_for
from hudi_engine.location import TableLocation
from hudi_engine.meta_client import MetaClient
from hudi_engine.metadata.initialization import files_listing
from hudi_engine.metadata.records import FILES_PARTITION
from hudi_engine.metadata.table import MetadataTable, writing_timeline
from hudi_engine.metadata.writer import MetadataWriter
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.savepoint import listed, lookup_window_start, savepoints
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.write.rollback import rollback_for_restore

RESTORE_PLAN = "HoodieRestorePlan"
RESTORE_METADATA = "HoodieRestoreMetadata"
_MILLIS = 17  # a millisecond instant time's length (a v6 metadata table's instants may carry a 3-digit suffix)


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
    finish a crashed restore to it. Its metadata table is restored with it (`restore_metadata_table`), or deleted
    first where Hudi deletes it; refused, before anything is written, where Hudi's metadata restore fails."""
    if pending_restore(table.timeline) is None:
        check_restorable(table, instant_time)
    keep = keep_metadata_table(table, instant_time)

    def sync_metadata_table(restore_time: str) -> None:
        if keep is not None:
            restore_metadata_table(table, keep, instant_time, restore_time)
    return run_restore(table, instant_time, before_completing=sync_metadata_table)


def run_restore(table: MetaClient, instant_time: str, *, after: str = "",
                before_completing: Callable[[str], None] | None = None) -> RestoreResult:
    """The restore of `table` to `instant_time` (module doc; the instant was checked, or need not be: a metadata
    table's restore), or the end of a crashed one; its instant is after `after` too. `before_completing(restore
    time)` runs once every instant is rolled back, before the restore completes (a data table's metadata table is
    restored there)."""
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
        todo = instants_to_roll_back(timeline, instant_time)
        planned = [(i.timestamp, i.action.value) for i in todo]
        latest = max((timeline.latest_time() or "")[:_MILLIS], after)  # a metadata table's may carry a suffix
        instant = Instant(new_instant_time(after=latest or None, local=table.config.local_instant_times),
                          Action.RESTORE, State.REQUESTED)
        record = {"instantsToRollback": [{"commitTime": ts, "action": a} for ts, a in planned], "version": 2,
                  "savepointToRestoreTimestamp": instant_time}
        timeline.create_requested(instant, write_avro_metadata(RESTORE_PLAN, record))
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
    if before_completing is not None:
        before_completing(inflight.timestamp)
    record = {"startRestoreTime": inflight.timestamp, "timeTakenInMillis": int((time.monotonic() - t0) * 1000),
              "instantsToRollback": [ts for ts, _ in planned], "hoodieRestoreMetadata": by_instant, "version": 1,
              "restoreInstantInfo": [{"commitTime": ts, "action": a} for ts, a in planned]}
    timeline = timeline.reload()
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


# ---- the metadata table --------------------------------------------------------------------------------------------
@dataclass
class _Table:
    """A metadata table as `run_restore` takes it (a MetaClient)."""

    location: TableLocation
    config: TableConfig
    timeline: Timeline


def keep_metadata_table(table: MetaClient, instant_time: str) -> MetadataWriter | None:
    """The writer that restores the metadata table of `table` with a restore to `instant_time` (module doc), or None
    (there is none, or it is deleted here, as Hudi's `restoreToSavepoint` deletes it: `instant_time` is at or before
    its oldest compaction, or older than its timeline; or this engine cannot keep it). Refused, before anything is
    written, when the `files` file group has no slice based at or before `instant_time` (Hudi's metadata restore
    fails there, after the data table's rollbacks)."""
    config = table.config
    if not (config.metadata_partitions or config.metadata_partitions_inflight):
        return None
    why = f"the restore to {instant_time}"
    try:
        mdt = MetadataTable.load(table.location, config, table.timeline)
    except HudiError as e:
        config.disable_metadata_table(table.location, f"{why}: {e}")
        return None
    compactions = mdt.timeline.filter_by([Action.COMMIT], [State.COMPLETED])
    oldest = compactions.instants[0].timestamp if compactions.instants else None
    if oldest is not None and instant_time <= oldest:
        config.disable_metadata_table(table.location, f"{why}: it is not after the metadata table's oldest "
                                      f"compaction {oldest} (Hudi deletes the metadata table there too)")
        return None
    commits = mdt.timeline.filter_by([Action.COMMIT, Action.DELTA_COMMIT])
    if commits.is_before_timeline_starts(instant_time):
        config.disable_metadata_table(table.location, f"{why}: it is older than the metadata table's timeline "
                                      f"(from {commits.timeline_start()}; Hudi deletes the metadata table there too)")
        return None
    # A crashed restore left the metadata table's restore (and its rollbacks, its sync) pending: this one ends them.
    retrying = {i.timestamp for i in mdt.timeline.instants if not i.is_completed and i.timestamp[:_MILLIS] > instant_time}
    decision = MetadataWriter.decide(table.location, config, table.timeline, retrying=retrying)
    if decision.writer is None:
        config.disable_metadata_table(table.location, f"{why}: {decision.reason}")
        return None
    view = FileSystemView.load(mdt.location, FILES_PARTITION.__eq__, slicing_for(mdt.timeline))
    for group in view.file_groups(FILES_PARTITION):
        bases = sorted(s.base_instant for s in group.slices.values())
        if not any(b <= instant_time for b in bases):
            raise TableServiceError(
                f"table {config.name!r} ({table.location.base_path}): cannot restore to {instant_time}: its metadata "
                f"table's {FILES_PARTITION} file group {group.file_id} has no file slice based at or before it (its "
                f"slices: {', '.join(bases)}; its cleaning removed older ones), so the metadata table cannot be "
                "restored with it (Hudi refuses this too). Restore to a later instant, or disable the metadata table "
                "first (a write with hoodie.metadata.enable=false), then restore")
    return decision.writer


def restore_metadata_table(table: MetaClient, writer: MetadataWriter, instant_time: str, restore_time: str) -> None:
    """The data table's restore at `restore_time` to `instant_time` recorded in its metadata table, as Hudi's
    `HoodieBackedTableMetadataWriter.update(HoodieRestoreMetadata)` does once the data table's rollbacks are done:
    the data files listed, the metadata table restored to `instant_time` (a restore on its own timeline), then one
    delta commit that lists what that restore brought back wrongly (files the data table's cleans after
    `instant_time` deleted, partitions gone) from the listing (`MetadataWriter.record_restore`)."""
    data_timeline = table.timeline.reload()
    listing = files_listing(table.location, data_timeline)
    mdt = writer.table
    # Its instant is issued after the data table's restore (Hudi's metadata write client's next instant time).
    run_restore(_Table(mdt.location, mdt.config, writing_timeline(mdt.timeline, table.config)), instant_time,
                after=restore_time)
    writer.record_restore(listing, data_timeline)
