"""Rollback of a write instant (FORMAT.md, Rollback): delete what it wrote, then forget it.

A rollback R of instant F:
    1. `<R>.rollback.requested`: HoodieRollbackPlan (what will be deleted / which log files get a command block)
    2. (completed F only) delete `<F>.<action>`: F becomes pending, so every reader ignores its files from here on
    3. `<R>.rollback.inflight` (empty)
    4. delete F's base files and the log files only F wrote to; for log files that also hold other instants'
       blocks (or with `use_command_blocks`), write a ROLLBACK command block into a new log file `..._1-0-1`
    5. `<R>.rollback`: HoodieRollbackMetadata
    6. delete F's remaining instant files (inflight, requested) and its marker folder

Why this order: files of a pending instant are invisible to Java readers, and hudi-rs (which does not hide
uncommitted files in v6: FORMAT.md, Uncommitted files) only reads slices and log blocks up to the latest
*completed* commit. So data is removed while F is pending (a completed F is first made pending, step 2, an atomic
delete), and F's instant files go last: once they are gone, F's leftovers would count as committed (older than the
timeline start) for Java.
A crash at any step leaves F pending and a pending rollback whose plan `rollback_failed_writes` re-executes.

The table's metadata table: a caller that keeps it passes `metadata` (`hudi_engine.metadata.writer`'s
`keep_through_rollback`), asked before anything changes (step 1) whether the metadata table is kept (else it
disables it there), and the recorder it answers is called between steps 4 and 5 with R and its metadata, as Hudi's
`writeTableMetadata` is before the rollback completes. Without `metadata` the metadata table is disabled before
step 1: Hudi's readers count the instants a completed rollback rolled back as valid, so F's metadata delta commit
would count.

What F wrote comes from its markers; without markers (a writer that did not make them, or a completed F whose
markers are gone) from F's commit metadata, else from listing every partition for files of F. F's markers are
listed again before R completes: a writer that lost its lock may still have been adding files to F (it checks
that F is inflight after making each marker, see `inflight`), and those files are deleted too. Temp files of
interrupted atomic creates (`Storage.create_exclusive`) in the partitions F touched go as well.

Rolling back a pending F gives up (R's requested file deleted, nothing else touched) when F turns out completed
once R is requested: a writer whose lock expired committed it meanwhile. A pending R that was only requested is
given up the same way when its F is completed (step 2 never happened: a user's rollback that crashed so early
did nothing, and may be run again).
"""
from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_engine.config.lock_config import NEVER, LockConfig
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.file_naming import (
    CDC_SUFFIX,
    UNKNOWN_WRITE_TOKEN,
    BaseFileName,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
)
from hudi_engine.io.log_block import BlockType, build_rollback_block
from hudi_engine.io.log_format import encode_log_file, read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import check_writable
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.write.heartbeat import delete_heartbeat, heartbeat_expired
from hudi_engine.write.markers import IOType, Marker, delete_marker_dir, list_markers

ROLLBACK_PLAN = "HoodieRollbackPlan"
ROLLBACK_METADATA = "HoodieRollbackMetadata"
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
# Records the rollback in the table's metadata table before it completes: (R inflight, R's HoodieRollbackMetadata).
RollbackRecorder = Callable[[Instant, Mapping[str, Any]], None]
# Asked before the rollback of F changes anything (F, and R when an interrupted R is finished): the recorder that keeps
# the table's metadata table, or None when there is none or it was disabled.
MetadataUpdate = Callable[[Instant, str | None], RollbackRecorder | None]


@dataclass(frozen=True)
class RollbackRequest:
    """One HoodieRollbackRequest: files to delete, and log files to neutralise with a command block."""

    partition_path: str
    file_id: str = ""
    latest_base_instant: str = ""
    files_to_delete: tuple[str, ...] = ()  # full paths
    log_blocks_to_delete: dict[str, int] = field(default_factory=dict)  # full log path -> size

    def to_avro(self) -> dict:
        return {
            "partitionPath": self.partition_path,
            "fileId": self.file_id,
            "latestBaseInstant": self.latest_base_instant,
            "filesToBeDeleted": list(self.files_to_delete),
            "logBlocksToBeDeleted": dict(self.log_blocks_to_delete),
        }

    @staticmethod
    def from_avro(r: dict, table: TableLocation) -> "RollbackRequest":
        """A planned request, its files as paths in `table` (`TableLocation.planned_file`: Java plans hold the full
        paths the table had when it was planned)."""
        partition = r["partitionPath"]
        return RollbackRequest(partition, r.get("fileId") or "", r.get("latestBaseInstant") or "",
                               tuple(table.planned_file(partition, p) for p in r.get("filesToBeDeleted") or ()),
                               {table.planned_file(partition, p): size
                                for p, size in (r.get("logBlocksToBeDeleted") or {}).items()})


@dataclass(frozen=True)
class RollbackResult:
    rollback_instant: str
    rolled_back: Instant
    deleted_files: list[str]  # full paths deleted (or already gone)
    failed_deletes: list[str]
    rollback_log_files: dict[str, int]  # command-block log files written: full path -> size
    metadata: dict = field(default_factory=dict)  # the HoodieRollbackMetadata record


# --------------------------------------------------------------------------------------------- public API


def rollback_instant(location: TableLocation, instant: Instant | str, *, use_command_blocks: bool = False,
                     metadata: MetadataUpdate | None = None) -> RollbackResult:
    """Roll back a pending (requested/inflight) commit, deltacommit or replacecommit, or a layout-2 clustering
    (`metadata`: module doc)."""
    _check_writable(location)
    timeline = Timeline.load(location)
    target = _find(timeline, instant)
    if target.is_completed:
        raise WriteError(f"{target} is completed: use rollback_completed for the latest completed commit")
    if target.action not in (*_WRITE_ACTIONS, Action.CLUSTERING):
        raise WriteError(f"{target}: only commit, deltacommit, replacecommit and clustering instants are rolled back "
                         "here")
    result = _rollback_pending(timeline, target, use_command_blocks, metadata)
    if result is None:
        raise WriteError(f"cannot roll back {target}: it completed while the rollback was being planned (its writer "
                         "committed it after its lock had expired); the rollback gave up")
    return result


def _rollback_pending(timeline: Timeline, target: Instant, use_command_blocks: bool,
                      metadata: MetadataUpdate | None) -> RollbackResult | None:
    return _run(timeline, target, _plan_pending(timeline, target, use_command_blocks), uncommit=False,
                metadata=metadata)


def rollback_at(location: TableLocation, instant_time: str, rollback_time: str, *,
                use_command_blocks: bool) -> RollbackResult:
    """Roll back the delta commit at `instant_time`, pending or completed, whatever follows it, by a rollback at
    `rollback_time`: what Hudi's metadata writer does to a metadata table's delta commit (of a data instant rolled
    back, or of a data action being attempted again). No check of the table's properties: a metadata table's."""
    timeline = Timeline.load(location)
    target = _find(timeline, instant_time)
    if target.is_completed:
        requests = _requests_from_stats(location, instant_time, timeline.commit_metadata(target),
                                        use_command_blocks and timeline.layout.version == 1)
    else:
        requests = _plan_pending(timeline, target, use_command_blocks)
    result = _run(timeline, target, requests, uncommit=target.is_completed, metadata=None, rollback_time=rollback_time)
    if result is None:
        raise WriteError(f"cannot roll back {target} of {location.base_path}: it completed meanwhile")
    return result


def rollback_completed(location: TableLocation, instant: Instant | str | None = None, *,
                       use_command_blocks: bool = False, metadata: MetadataUpdate | None = None) -> RollbackResult:
    """Roll back the latest completed commit/deltacommit/replacecommit (as Hudi's CLI `commit rollback` does).

    Refused for any other instant (later data may depend on it: that needs a restore), when a write instant
    newer than it exists (roll that back first), for compaction commits (a compaction is re-run, not undone), and for
    a savepointed commit.
    """
    base_path = location.base_path
    _check_writable(location)
    timeline = Timeline.load(location)
    latest = timeline.completed_commits().last()
    if latest is None:
        raise WriteError(f"{base_path}: no completed commit to roll back")
    target = latest if instant is None else _find(timeline, instant)
    if target != latest:
        raise WriteError(f"{target} is not the latest completed commit ({latest}); only that one can be rolled back")
    newer = [i for i in timeline.write_timeline() if i.timestamp > target.timestamp]
    if newer:
        raise WriteError(f"cannot roll back {target}: newer write instants exist ({', '.join(map(str, newer))})")
    savepoints = [i for i in timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]) if i.timestamp == target.timestamp]
    if savepoints:  # BaseRollbackActionExecutor.validateSavepointRollbacks
        raise WriteError(f"table {base_path}: cannot roll back {target}: it is savepointed ({savepoints[0]}); delete "
                         "the savepoint with Hudi first (savepoint delete), then roll it back")
    meta = timeline.commit_metadata(target)
    if meta.compacted or meta.operation_type in ("COMPACT", "LOG_COMPACT"):
        raise WriteError(f"{target} is a compaction commit; compactions are not rolled back once completed")
    # Layout 2: the commit's log files are its own (named by it): deleted, as Hudi 1.x does.
    requests = _requests_from_stats(location, target.timestamp, meta,
                                    use_command_blocks and timeline.layout.version == 1)
    result = _run(timeline, target, requests, uncommit=True, metadata=metadata)
    assert result is not None  # _run gives up (None) only on a pending instant that completed meanwhile
    return result


def rollback_for_restore(timeline: Timeline, target: Instant) -> RollbackResult:
    """Roll back one instant of a restore, completed or pending, of any write-timeline action (compactions
    included), as Hudi's restore executors do: the rollback is planned and executed but never completed (its
    instant is left inflight, and the restore deletes it once it completes: Hudi's restore records the rollbacks
    in its own metadata). `timeline`: listed under the table lock; the caller checked the table."""
    location = timeline.location
    if target.is_completed:
        meta = timeline.commit_metadata(target)
        requests = _requests_from_stats(location, target.timestamp, meta, use_command_blocks=False)
    else:
        delete_heartbeat(location, target.timestamp)  # a live writer of it stops at its next check
        requests = _plan_pending(timeline, target, use_command_blocks=False)
    # Not recorded in the metadata table one by one: the restore restores it once its rollbacks are done (Hudi's
    # restore rollbacks skip it too), or disabled it before it began.
    result = _run(timeline, target, requests, uncommit=target.is_completed, metadata=_not_recorded,
                  publish=False, give_up=False)
    assert result is not None  # never given up (give_up=False)
    # A compaction's requested/inflight files carry the compaction action, its completed one `commit`.
    for action in {Action.COMPACTION: [Action.COMMIT], Action.LOG_COMPACTION: [Action.DELTA_COMMIT],
                   Action.COMMIT: [Action.COMPACTION], Action.DELTA_COMMIT: [Action.LOG_COMPACTION]}.get(
                       target.action, []):
        timeline.delete_instant_files(Instant(target.timestamp, action))
    return result


def _not_recorded(target: Instant, rollback_time: str | None) -> RollbackRecorder | None:
    return None


def rollback_failed_writes(location: TableLocation, config: LockConfig | None = None, *,
                           use_command_blocks: bool = False,
                           metadata: MetadataUpdate | None = None) -> list[RollbackResult]:
    """`rollback_failed` on the timeline listed here."""
    return rollback_failed(Timeline.load(location), config, use_command_blocks=use_command_blocks, metadata=metadata)


def rollback_failed(timeline: Timeline, config: LockConfig | None = None, *, use_command_blocks: bool = False,
                    metadata: MetadataUpdate | None = None) -> list[RollbackResult]:
    """Finish interrupted rollbacks, then roll back the failed writes, newest first (Hudi's rollbackFailedWrites).

    With `config` (a writer under the table lock), the failed writes are the pending instants whose heartbeat
    expired (`failed_writes`; none under policy NEVER), and each one's heartbeat is deleted before anything else, so
    a paused writer's tasks stop at once; pending instants of live writers are left alone. Without `config` (the
    caller knows no writer is alive) every pending commit/deltacommit/replacecommit is one. Pending clustering
    replacecommits are table services and are never rolled back here. `timeline`: the caller's listing, taken under
    the table lock.
    """
    location = timeline.location
    dead: set[str] | None = None
    if config is not None:
        dead = {i.timestamp for i in failed_writes(location, config, timeline)}
        for instant_time in dead:
            delete_heartbeat(location, instant_time)
    results = finish_pending_rollbacks(location, timeline, metadata)
    if results:  # a resumed rollback changed the timeline: listed again
        timeline = timeline.reload()
    for target in reversed(timeline.pending()):
        if target.action not in _WRITE_ACTIONS or _is_clustering(timeline, target) or (
                dead is not None and target.timestamp not in dead):
            continue
        result = _rollback_pending(timeline, target, use_command_blocks, metadata)
        if result is not None:  # None: the target completed meanwhile, it is not a failed write
            results.append(result)
    return results


def finish_pending_rollbacks(location: TableLocation, timeline: Timeline,
                             metadata: MetadataUpdate | None = None) -> list[RollbackResult]:
    """Re-execute the rollbacks a crash interrupted (their plans say what to delete), and delete the temp files of
    atomic creates a killed process left in `.hoodie` (instants, the lock, hoodie.properties). A LAZY writer runs
    only this before its write; dead writers' instants are left to the table services. `timeline`: listed under
    the table lock."""
    location.storage.delete_temp_files(location.meta_path)
    if timeline.layout.version == 2:  # instants are created in .hoodie/timeline there
        location.storage.delete_temp_files(timeline.meta_path)
    return _resume_pending_rollbacks(location, timeline, metadata)


def failed_writes(location: TableLocation, config: LockConfig, timeline: Timeline) -> list[Instant]:
    """Pending commit/deltacommit/replacecommit instants whose writer is dead (heartbeat expired or missing). A
    pending clustering is another writer's table service, never a failed write (Hudi leaves it out before looking at
    heartbeats: BaseHoodieTableServiceClient.getInstantsToRollbackForLazyCleanPolicy), so its heartbeat, if it
    has one, is not touched either."""
    if config.failed_writes_policy == NEVER:
        return []
    return [i for i in timeline.pending() if i.action in _WRITE_ACTIONS
            and heartbeat_expired(location, i.timestamp, config.heartbeat_expiry_ms)
            and not is_clustering(timeline, i)]


def _check_writable(table: TableLocation) -> None:
    """A table property or state this engine does not honour stops a rollback before it writes anything."""
    config = TableConfig.load(table)
    config.require_writable()  # before the timeline is listed
    check_writable(table, config, Timeline.load(table), action="roll back")


def marked_files(location: TableLocation, instant_time: str) -> dict[str, list[str]]:
    """The data files an instant's markers name that are the instant's own (base files of the instant, log files
    holding only its blocks), by partition: full paths of files that exist."""
    out: dict[str, list[str]] = {}
    for req in _requests_from_markers(location, list_markers(location, instant_time),
                                      instant_time, use_command_blocks=False):
        out.setdefault(req.partition_path, []).extend(req.files_to_delete)
    return out


def remove_marked_files(location: TableLocation, instant_time: str) -> list[str]:
    """Delete `marked_files` (a writer that lost its instant removes what it wrote); the deleted paths."""
    storage = location.storage
    return [p for paths in marked_files(location, instant_time).values() for p in paths
            if storage.delete(p)]


def base_files_of(location: TableLocation, instant_times: set[str]) -> dict[str, list[str]]:
    """Base files named after one of `instant_times`, in every folder of the table (a listing of all of them)."""
    out: dict[str, list[str]] = {}
    for folder in _all_folders(location):
        for e in location.storage.list_dir(location.join(folder)):
            if not e.is_dir and is_base_file_name(e.name) and BaseFileName.parse(e.name).instant_time in instant_times:
                out.setdefault(folder, []).append(e.path)
    return out


# --------------------------------------------------------------------------------------------- planning


def _find(timeline: Timeline, instant: Instant | str) -> Instant:
    ts, action = (instant, None) if isinstance(instant, str) else (instant.timestamp, instant.action)
    found = [i for i in timeline.instants_at(ts) if action is None or i.comparable_action == Instant(ts, action).comparable_action]
    found = [i for i in found if i.action in (*_WRITE_ACTIONS, Action.CLUSTERING, Action.COMPACTION,
                                              Action.LOG_COMPACTION)]
    if not found:
        raise WriteError(f"no write instant {ts} on the timeline of {timeline.base_path}")
    return found[0]


def _is_clustering(timeline: Timeline, instant: Instant) -> bool:
    """A pending clustering is another writer's table service, never a failed write of ours: Hudi leaves it out of
    the failed writes it rolls back (BaseHoodieTableServiceClient.getInflightTimelineExcludeCompactionAndClustering)
    and only the clustering's own writer retries it (or a writer with SparkAllowUpdateStrategy and
    hoodie.clustering.rollback.pending.replacecommit.on.conflict, `WriteClient.handle_clustering_updates`)."""
    return is_clustering(timeline, instant)


def _plan_pending(timeline: Timeline, target: Instant, use_command_blocks: bool) -> list[RollbackRequest]:
    table = timeline.location
    # Hudi 1.x (BaseRollbackHelper of table version 8+): a failed delta commit's log files are its own (named by
    # it), so they are deleted, never neutralised with command blocks.
    use_command_blocks = use_command_blocks and timeline.layout.version == 1
    markers = list_markers(table, target.timestamp)
    if markers:
        return _requests_from_markers(table, markers, target.timestamp, use_command_blocks)
    # No markers: the inflight workload profile narrows the partitions to look in, if it names any.
    partitions = None
    if target.is_inflight:
        try:
            partitions = set(timeline.commit_metadata(target).partition_to_write_stats) or None
        except HudiError:
            partitions = None
    return _requests_from_listing(table, target.timestamp, partitions, use_command_blocks)


def _requests_from_markers(table: TableLocation, markers: list[Marker], instant_time: str,
                           use_command_blocks: bool) -> list[RollbackRequest]:
    storage = table.storage
    requests = []
    for m in markers:
        path = table.join(m.data_file_path)
        if m.io_type is IOType.APPEND:
            req = _log_request(storage, m.partition_path, path, instant_time, use_command_blocks)
            if req is not None:
                requests.append(req)
        elif storage.exists(path) and _base_file_of(m.file_name, instant_time):
            requests.append(RollbackRequest(m.partition_path, files_to_delete=(path,)))
    return requests


def _base_file_of(name: str, instant_time: str) -> bool:
    """A marked base file is the instant's own when its name says so (a foreign name is never deleted)."""
    return not is_base_file_name(name) or BaseFileName.parse(name).instant_time == instant_time


def _requests_from_stats(table: TableLocation, instant_time: str, meta: CommitMetadata,
                         use_command_blocks: bool) -> list[RollbackRequest]:
    storage = table.storage
    requests = []
    for partition, stats in meta.partition_to_write_stats.items():
        for stat in stats:
            for cdc_path in stat.cdc_stats or {}:  # a merge's CDC log file: wholly the instant's
                full = table.join(cdc_path)
                if storage.exists(full):
                    requests.append(RollbackRequest(partition, files_to_delete=(full,)))
            if not stat.path:
                continue
            path = table.join(stat.path)
            name = stat.path.rsplit("/", 1)[-1]
            if is_log_file_name(name):
                req = _log_request(storage, partition, path, instant_time, use_command_blocks)
                if req is not None:
                    requests.append(req)
            elif storage.exists(path):
                requests.append(RollbackRequest(partition, files_to_delete=(path,)))
    return requests


def _requests_from_listing(table: TableLocation, instant_time: str, partitions: set[str] | None,
                           use_command_blocks: bool) -> list[RollbackRequest]:
    storage = table.storage
    requests = []
    for partition in sorted(partitions) if partitions is not None else _all_folders(table):
        for entry in storage.list_dir(table.join(partition)):
            if entry.is_dir:
                continue
            if is_base_file_name(entry.name) and BaseFileName.parse(entry.name).instant_time == instant_time:
                requests.append(RollbackRequest(partition, files_to_delete=(entry.path,)))
            elif is_log_file_name(entry.name):
                req = _log_request(storage, partition, entry.path, instant_time, use_command_blocks,
                                   known_writer=False)
                if req is not None:
                    requests.append(req)
    return requests


def _all_folders(table: TableLocation) -> list[str]:
    """Every folder under the base path that may hold data files (not `.hoodie`, not hidden), "" included.
    Partitions without `.hoodie_partition_metadata` count: a failed write into a new partition never wrote it."""
    out, stack = [], [""]
    while stack:
        rel = stack.pop()
        out.append(rel)
        for e in table.storage.list_dir(table.join(rel)):
            if e.is_dir and not e.name.startswith("."):
                stack.append(f"{rel}/{e.name}" if rel else e.name)
    return sorted(out)


def _log_request(storage: Storage, partition: str, path: str, instant_time: str,
                 use_command_blocks: bool, *, known_writer: bool = True) -> RollbackRequest | None:
    """A log file that holds blocks of `instant_time`: deleted if no other instant wrote to it (and command blocks
    are not asked for), else neutralised by a command block. None if it holds nothing of the instant.

    `known_writer`: the instant is known to have written this file (marker or write stat), so a file of only
    unreadable (torn) blocks is its too; when merely listed, a file must show a block of the instant."""
    if not storage.exists(path):
        return None
    cdc = LogFileName.parse(path.rsplit("/", 1)[-1])
    if cdc.suffix == CDC_SUFFIX:  # a CDC log file's base instant is the merge that wrote it: deleted with it
        return RollbackRequest(partition, files_to_delete=(path,)) if cdc.base_instant == instant_time else None
    with storage.open_input_file(path) as f:
        blocks = read_log_blocks(f, file_name=path)
    instants = {b.instant_time for b in blocks if b.block_type != BlockType.CORRUPT}
    if instant_time not in instants and (instants or not known_writer):
        return None
    log = LogFileName.parse(path.rsplit("/", 1)[-1])
    only_target = instants <= {instant_time}
    if only_target and not (use_command_blocks and _has_older_slice_files(storage, path, log)):
        return RollbackRequest(partition, log.file_id, log.base_instant, files_to_delete=(path,))
    return RollbackRequest(partition, log.file_id, log.base_instant, log_blocks_to_delete={path: storage.size(path)})


def _has_older_slice_files(storage: Storage, path: str, log: LogFileName) -> bool:
    """Whether the file group has other files (so it existed before the failed write): a command block only makes
    sense in an existing file group; a log file of a group the failed write created is simply deleted."""
    folder = path.rsplit("/", 1)[0]
    for e in storage.list_dir(folder):
        if e.path == path or e.is_dir:
            continue
        if is_base_file_name(e.name) and BaseFileName.parse(e.name).file_id == log.file_id:
            return True
        if is_log_file_name(e.name) and LogFileName.parse(e.name).file_id == log.file_id:
            return True
    return False


# --------------------------------------------------------------------------------------------- execution


def _run(timeline: Timeline, target: Instant, requests: list[RollbackRequest], *, uncommit: bool,
         metadata: MetadataUpdate | None, rollback_time: str | None = None, publish: bool = True,
         give_up: bool = True) -> RollbackResult | None:
    storage = timeline.storage
    t0 = time.monotonic()
    latest = timeline.latest_time()
    config = TableConfig.load(timeline.location)
    record = None if metadata is None else metadata(target, None)  # before anything changes (module doc)
    if metadata is None:
        config.disable_metadata_table(timeline.location, f"the rollback of {target} does not record itself in it")
    rollback_ts = rollback_time or new_instant_time(after=latest, local=config.local_instant_times)
    requested = Instant(rollback_ts, Action.ROLLBACK, State.REQUESTED)
    plan = {
        "instantToRollback": {"commitTime": target.timestamp, "action": target.action.value},
        "RollbackRequests": [r.to_avro() for r in requests],
        "version": 1,
    }
    timeline.create_requested(requested, write_avro_metadata(ROLLBACK_PLAN, plan))
    if give_up and not uncommit and _completed(timeline.location, target):
        storage.delete(timeline.path_of(requested))  # nothing was deleted yet: give up, F stays committed
        return None
    if uncommit:
        # The atomic "un-commit": from here on F's files are invisible to every reader.
        completed_path = timeline.path_of(target)
        if not storage.delete(completed_path):
            raise WriteError(f"{completed_path}: vanished while rolling back {target}")
    inflight = timeline.transition_to_inflight(requested)
    return _execute(timeline, inflight, target, requests, t0, record, publish=publish)


def _execute(timeline: Timeline, inflight: Instant, target: Instant, requests: list[RollbackRequest],
             t0: float, record: RollbackRecorder | None, *, publish: bool = True) -> RollbackResult:
    storage = timeline.storage
    rollback_ts = inflight.timestamp
    per_partition: dict[str, dict] = {}
    deleted, failed, written = [], [], {}
    for req in _and_late_requests(timeline.location, target, requests):
        pm = per_partition.setdefault(req.partition_path, {
            "partitionPath": req.partition_path, "successDeleteFiles": [], "failedDeleteFiles": [],
            "rollbackLogFiles": None, "logFilesFromFailedCommit": None})
        for path in req.files_to_delete:
            is_log = is_log_file_name(path.rsplit("/", 1)[-1])
            size = storage.size(path) if is_log and storage.exists(path) else -1
            try:
                storage.delete(path)  # already gone counts as deleted: a re-run of an interrupted rollback
                pm["successDeleteFiles"].append(path)
                deleted.append(path)
            except OSError:
                pm["failedDeleteFiles"].append(path)
                failed.append(path)
            if is_log:
                pm["logFilesFromFailedCommit"] = (pm["logFilesFromFailedCommit"] or {}) | {path: size}
        for log_path, size in req.log_blocks_to_delete.items():
            new_path, new_size = _write_rollback_block(storage, log_path, rollback_ts, target.timestamp)
            written[new_path] = new_size
            pm["rollbackLogFiles"] = (pm["rollbackLogFiles"] or {}) | {new_path: new_size}
            pm["logFilesFromFailedCommit"] = (pm["logFilesFromFailedCommit"] or {}) | {log_path: size}
    metadata = {
        "startRollbackTime": rollback_ts,
        "timeTakenInMillis": int((time.monotonic() - t0) * 1000),
        "totalFilesDeleted": len(deleted),
        "commitsRollback": [target.timestamp],
        "partitionMetadata": per_partition,
        "version": 1,
        "instantsRollback": [{"commitTime": target.timestamp, "action": target.action.value}],
    }
    if record is not None:
        record(inflight, metadata)
    if publish:  # a restore's rollbacks stay inflight: the restore records them (`rollback_for_restore`)
        timeline.complete(inflight, write_avro_metadata(ROLLBACK_METADATA, metadata))
    # F's instant files last (completed first if still there, so a crash never leaves a completed F without data).
    timeline.delete_instant_files(target)
    delete_marker_dir(timeline.location, target.timestamp)
    return RollbackResult(rollback_ts, target, deleted, failed, written, metadata)


def _and_late_requests(table: TableLocation, target: Instant,
                       requests: list[RollbackRequest]) -> Iterator[RollbackRequest]:
    """The planned requests, then (listed once those are done) requests for the files of markers the plan did not
    know: a writer that lost its lock made them after the plan was listed. Then the temp files of interrupted
    atomic creates and streamed files meant to become the instant's files are deleted (not those of other writers,
    which may be streaming into the same partitions)."""
    yield from requests
    planned = {p for r in requests for p in (*r.files_to_delete, *r.log_blocks_to_delete)}
    markers = list_markers(table, target.timestamp)
    late = [m for m in markers if table.join(m.data_file_path) not in planned]
    yield from _requests_from_markers(table, late, target.timestamp, use_command_blocks=False)
    targets: dict[str, set[str]] = {}
    for r in requests:
        for p in (*r.files_to_delete, *r.log_blocks_to_delete):
            targets.setdefault(r.partition_path, set()).add(posixpath.basename(p))
    for m in markers:
        targets.setdefault(m.partition_path, set()).add(posixpath.basename(m.data_file_path))
    for partition in sorted(targets):
        table.storage.delete_temp_files(table.join(partition), targets[partition])


def _completed(table: TableLocation, target: Instant) -> bool:
    return any(i.is_completed and i.comparable_action == target.comparable_action
               for i in Timeline.load(table).instants_at(target.timestamp))


def _write_rollback_block(storage: Storage, log_path: str, rollback_ts: str, target_ts: str) -> tuple[str, int]:
    """A new log file in the slice of `log_path` (next version, token 1-0-1) holding one ROLLBACK command block."""
    folder, name = log_path.rsplit("/", 1)
    log = LogFileName.parse(name)
    slice_logs = [LogFileName.parse(e.name) for e in storage.list_dir(folder) if not e.is_dir and is_log_file_name(e.name)]
    versions = [n.version for n in slice_logs if n.file_id == log.file_id and n.base_instant == log.base_instant]
    data = encode_log_file([build_rollback_block(rollback_ts, target_ts)])
    version = max(versions, default=log.version) + 1
    while True:
        path = Storage.join(folder, str(LogFileName(log.file_id, log.base_instant, version, UNKNOWN_WRITE_TOKEN)))
        if storage.create_exclusive(path, data):
            return path, len(data)
        version += 1


def _resume_pending_rollbacks(table: TableLocation, timeline: Timeline,
                              metadata: MetadataUpdate | None) -> list[RollbackResult]:
    """Re-execute the plans of rollbacks that did not complete (deleting is idempotent)."""
    storage = table.storage
    results = []
    pending = timeline.filter_by([Action.ROLLBACK]).pending()
    if pending and metadata is None:  # module doc
        TableConfig.load(table).disable_metadata_table(
            table, f"the interrupted rollbacks {[i.timestamp for i in pending]} do not record themselves in it")
    for instant in pending:
        plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        info = plan.get("instantToRollback") or {}
        if not info.get("commitTime"):
            raise WriteError(f"{timeline.path_of(instant)}: rollback plan names no instant to roll back")
        target = Instant(info["commitTime"], info["action"], State.INFLIGHT)
        requests = [RollbackRequest.from_avro(r, table) for r in plan.get("RollbackRequests") or []]
        if instant.is_requested and _completed(timeline.location, target):
            # Nothing was deleted yet and F is committed (a rollback_completed that crashed before its un-commit
            # step, or a writer that committed F while its rollback was being planned): give the rollback up.
            storage.delete(timeline.path_of(instant))
            continue
        # Data goes only while F is pending: un-commit a completed F first (R is inflight: step 2 had begun).
        timeline.delete_instant_files(target, [State.COMPLETED])
        inflight = instant if instant.is_inflight else timeline.transition_to_inflight(instant)
        record = None if metadata is None else metadata(target, instant.timestamp)
        results.append(_execute(timeline, inflight, target, requests, time.monotonic(), record))
    return results
