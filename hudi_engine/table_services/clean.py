"""Cleaning (FORMAT.md, Clean): delete file slices that no retained instant can read any more.

    plan       `<C>.clean.requested`: a HoodieCleanerPlan (Avro, version 2: full paths per partition)
    inflight   `<C>.clean.inflight`: the same plan bytes again
    delete     the planned files (a file already gone counts as deleted, so a re-run is harmless)
    complete   `<C>.clean`: HoodieCleanMetadata (version 2: file names per partition)

Which slices go (per file group; a slice is a base file and the log files written on top of it):

* KEEP_LATEST_COMMITS (`hoodie.cleaner.commits.retained` = N): the earliest commit to retain E is the N-th latest
  completed commit (or an older pending write). A query as of any instant t >= E reads, per file group, the newest
  slice with base instant <= t; so every slice with base instant >= E stays, and so does the newest slice before E.
  Older slices go. With N or fewer commits nothing is cleaned.
* KEEP_LATEST_FILE_VERSIONS (`hoodie.cleaner.fileversions.retained` = N): the N newest slices of each file group stay.

Never cleaned: the latest slice of a file group, slices of uncommitted instants (rollback's business), slices a
pending compaction plan reads, any slice of a file group under a pending clustering (another writer's plan reads
them), files named by a savepoint. File groups replaced by a completed replacecommit are
removed whole once the replacecommit is older than E (under KEEP_LATEST_FILE_VERSIONS: at once, as Hudi does).

Orphans go too, whatever the policy: files of an instant a completed rollback on the timeline rolled back (so it
is neither pending nor completed) that are still on disk. A writer that outlived its lock can add them after the
rollback that took its instant (see `write.inflight`); once archival moves the timeline start past that
instant, every reader would take them for committed data. Found by name (base files carry their instant) in
every folder of the table, and through the instant's leftover markers (log files holding only its blocks); the
marker folder goes after. Only rolled-back instants are looked for, so a table without rollbacks lists nothing.

Hudi's metadata table, when this engine keeps it (`hudi_engine.metadata.writer`), records the clean before it
completes: a delta commit at C marking every planned file deleted. A pending clean run again rolls back the delta
commit its earlier attempt may have left first.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_engine.config import keys as K
from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.write_config import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanConfig
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.file_group import FileGroup, FileSlice
from hudi_engine.file_naming import BaseFileName, LogFileName, is_base_file_name, is_log_file_name
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.location import TableLocation
from hudi_engine.metadata.writer import MetadataWriter, keep_or_disable
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import service_lock, service_lock_at
from hudi_engine.table_services.compaction import CompactionPlan
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.clustering import PendingClustering
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.write.markers import delete_marker_dir, marker_dir
from hudi_engine.write.rollback import base_files_of, marked_files

PLAN_KIND = "HoodieCleanerPlan"
METADATA_KIND = "HoodieCleanMetadata"
PLAN_VERSION = 2  # filePathsToBeDeletedPerPartition (full paths)
METADATA_VERSION = 2  # file names, not paths


# --------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class CleanPlan:
    """HoodieCleanerPlan: the files to delete per partition (full paths) and why."""

    policy: str
    earliest_instant_to_retain: Instant | None  # KEEP_LATEST_COMMITS only
    last_completed_commit: str
    files: Mapping[str, tuple[str, ...]]  # partition -> full paths

    @property
    def total_files(self) -> int:
        return sum(len(v) for v in self.files.values())

    def to_bytes(self) -> bytes:
        e = self.earliest_instant_to_retain
        return write_avro_metadata(PLAN_KIND, {
            "earliestInstantToRetain": None if e is None else {
                "timestamp": e.timestamp, "action": e.action.value, "state": e.state.name},
            "lastCompletedCommitTimestamp": self.last_completed_commit,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": None,  # deprecated (plan version 1)
            "version": PLAN_VERSION,
            "filePathsToBeDeletedPerPartition": {
                p: [{"filePath": path, "isBootstrapBaseFile": False} for path in paths]
                for p, paths in self.files.items()},
            "partitionsToBeDeleted": [],
        })

    @staticmethod
    def from_bytes(data: bytes, *, file_name: str = "clean plan") -> "CleanPlan":
        r = read_avro_metadata(data, PLAN_KIND, file_name=file_name)
        e = r.get("earliestInstantToRetain")
        earliest = None
        if e:
            earliest = Instant(e["timestamp"], e["action"], State[e.get("state") or "COMPLETED"])
        files: dict[str, tuple[str, ...]] = {}
        for p, infos in (r.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[p] = tuple(i["filePath"] for i in infos if i.get("filePath"))
        # Version 1 plans list file names per partition instead.
        for p, names in (r.get("filesToBeDeletedPerPartition") or {}).items():
            files.setdefault(p, tuple(names))
        return CleanPlan(r.get("policy") or KEEP_LATEST_COMMITS, earliest,
                         r.get("lastCompletedCommitTimestamp") or "", files)


def earliest_commit_to_retain(timeline: Timeline, commits_retained: int) -> Instant | None:
    """The N-th latest completed commit; an older pending write instant instead, if there is one (its files must
    stay readable once it completes). None when the table has N or fewer completed commits."""
    commits = list(timeline.completed_commits())
    if len(commits) <= commits_retained:
        return None
    earliest = commits[len(commits) - commits_retained]
    pending = [i for i in timeline.write_timeline().pending() if i.action is not Action.COMPACTION]
    if pending and pending[0].timestamp < earliest.timestamp:
        earliest = pending[0]
    return earliest


def plan_clean(location: TableLocation, config: CleanConfig, timeline: Timeline) -> CleanPlan | None:
    """The files a clean of the table as `timeline` lists it would delete; None when there are none."""
    earliest = None
    if config.policy == KEEP_LATEST_COMMITS:
        earliest = earliest_commit_to_retain(timeline, config.commits_retained)
        if earliest is None:
            return None
    vis = Visibility.of(timeline)
    replaced_at = _replaced_file_groups(timeline)
    protected_slices = _pending_compaction_slices(timeline)
    clustering = PendingClustering.of(timeline)
    savepointed = _savepointed_files(timeline)
    files: dict[str, list[str]] = {}
    view = FileSystemView.load(location, slicing=vis.slicing)  # layout 2: log files join slices by completion time
    for group in view.file_groups():
        key = (group.partition_path, group.file_id)
        if key in clustering:
            continue  # a pending clustering reads its slices; once it completes the group is replaced, cleaned whole
        if key in protected_slices and replaced_at.get(key):
            continue  # a compaction still reads it; cleaned once that compaction is done
        replace_ts = replaced_at.get(key)
        if replace_ts is not None and (earliest is None or replace_ts < earliest.timestamp):
            doomed = list(group.slices.values())
        else:
            doomed = _slices_to_clean(group, vis, config, earliest, protected_slices.get(key, set()))
        for s in doomed:
            for path in _slice_files(s):
                if path.rsplit("/", 1)[-1] not in savepointed.get(group.partition_path, ()):
                    files.setdefault(group.partition_path, []).append(path)
    if not files:
        return None
    last = timeline.completed_commits().last()
    return CleanPlan(config.policy, earliest, last.timestamp if last else "",
                     {p: tuple(sorted(v)) for p, v in sorted(files.items())})


def _slices_to_clean(group: FileGroup, vis: Visibility, config: CleanConfig, earliest: Instant | None,
                     protected: set[str]) -> list[FileSlice]:
    # Only slices of committed instants are candidates: others belong to a pending compaction or a failed write.
    committed = [group.slices[b] for b in sorted(group.slices, reverse=True)
                 if b not in vis.pending_compactions and vis.is_committed(b)]
    if config.policy == KEEP_LATEST_FILE_VERSIONS:
        keep = committed[:config.file_versions_retained]
    else:
        assert earliest is not None
        keep = [s for s in committed if s.base_instant >= earliest.timestamp]
        older = [s for s in committed if s.base_instant < earliest.timestamp]
        keep += older[:1]  # the slice a query as of E reads
    keep = keep or committed[:1]
    kept = {s.base_instant for s in keep}
    return [s for s in committed if s.base_instant not in kept and s.base_instant not in protected]


def _slice_files(s: FileSlice) -> list[str]:
    """A slice's files: base file, log files and CDC log files (CleanPlanner deletes a slice's `.cdc` log files
    with it, COW or MOR, when the table has CDC on: they exist only then)."""
    return ([s.base_file.path] if s.base_file is not None else []) + [f.path for f in s.sorted_log_files()] \
        + [f.path for f in s.cdc_log_files]


def _replaced_file_groups(timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the earliest completed replacecommit that replaced it."""
    out: dict[tuple[str, str], str] = {}
    for instant in timeline.completed_replace_commits():
        meta = timeline.commit_metadata(instant)
        for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
            for file_id in ids:
                out.setdefault((partition, file_id), instant.timestamp)
    return out


def _pending_compaction_slices(timeline: Timeline) -> dict[tuple[str, str], set[str]]:
    """(partition, file id) -> base instants of slices pending compactions read."""
    out: dict[tuple[str, str], set[str]] = {}
    for instant in timeline.pending_compactions():
        for op in CompactionPlan.load(timeline, instant.timestamp).operations:
            out.setdefault(op.group, set()).add(op.base_instant)
    return out


def _savepointed_files(timeline: Timeline) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for instant in timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]):
        meta = timeline.avro_metadata(instant) or {}
        for partition, pm in (meta.get("partitionMetadata") or {}).items():
            out.setdefault(partition, set()).update(p.rsplit("/", 1)[-1] for p in pm.get("savepointDataFile") or ())
    return out


# --------------------------------------------------------------------------------------------- execution


@dataclass
class CleanResult:
    instant_time: str
    deleted: list[str] = field(default_factory=list)  # full paths
    failed: list[str] = field(default_factory=list)
    earliest_commit_to_retain: str = ""


def clean(location: TableLocation, config: CleanConfig | None = None, lock: LockConfig | None = None, *,
          table: TableConfig, timeline: Timeline, metadata: MetadataWriter | None = None,
          metadata_max_delta_commits: int = K.METADATA_COMPACT_MAX_DELTA_COMMITS.default) -> CleanResult | None:
    """Finish interrupted cleans, then clean by `config`'s policy. Returns what the new clean instant deleted, or
    None when there was nothing to delete (no clean instant is written then, as in Hudi). `table` and `timeline`:
    the caller's, `timeline` listed under the table lock it holds (`HudiTable.clean`, the write's services).
    `metadata`: the metadata table's writer as the caller's last change left it under that lock (a write's, when no
    service ran after its commit), taken instead of deciding again (its services run first all the same, the
    metadata table compacted every `metadata_max_delta_commits` delta commits)."""
    config = config or CleanConfig()
    with service_lock(location, lock, table=table, timeline=timeline):
        if resume_pending_cleans(location, timeline):
            timeline = Timeline.load(location)
            metadata = None  # the resumed cleans recorded themselves through writers of their own
        plan = plan_clean(location, config, timeline)
        orphans, stale_markers = orphan_files(location, timeline)
        plan = _with_orphans(plan, orphans, config, timeline)
        result = None
        if plan is not None:
            if metadata is not None:
                writer: MetadataWriter | None = metadata
                metadata.follow(timeline)
                metadata.perform_table_services(metadata_max_delta_commits, config.commits_retained)
            else:
                writer = keep_or_disable(location, TableConfig.load(location), timeline, "clean",
                                         table_services=True, max_delta_commits=metadata_max_delta_commits,
                                         data_commits_retained=config.commits_retained)
            instant_time = new_instant_time(after=timeline.latest_time(), local=table.local_instant_times)
            data = plan.to_bytes()
            requested = timeline.create_requested(Instant(instant_time, Action.CLEAN, State.REQUESTED), data)
            inflight = timeline.transition_to_inflight(requested, data)
            result = _execute(location, timeline, inflight, plan, writer)
        for instant_time in stale_markers:  # their files are gone now
            delete_marker_dir(location, instant_time)
        return result


def orphan_files(location: TableLocation, timeline: Timeline) -> tuple[dict[str, list[str]], list[str]]:
    """Files of rolled-back instants still on disk, by partition (full paths), and the rolled-back instants
    whose marker folders are still there."""
    gone = rolled_back_instants(timeline)
    if not gone:
        return {}, []
    files = base_files_of(location, gone)
    stale = sorted(ts for ts in gone if location.storage.exists(marker_dir(location, ts)))
    for ts in stale:
        for partition, paths in marked_files(location, ts).items():
            files.setdefault(partition, []).extend(paths)
    return {p: sorted(set(v)) for p, v in sorted(files.items())}, stale


def rolled_back_instants(timeline: Timeline) -> set[str]:
    """Instants named by the completed rollbacks of the timeline that are not on it any more."""
    out: set[str] = set()
    for rollback in timeline.filter_by([Action.ROLLBACK], [State.COMPLETED]):
        try:
            out.update((timeline.avro_metadata(rollback) or {}).get("commitsRollback") or [])
        except HudiError:
            continue  # an unreadable rollback: its instant is not looked for
    return out - set(timeline.timestamps())


def _with_orphans(plan: CleanPlan | None, orphans: Mapping[str, list[str]], config: CleanConfig,
                  timeline: Timeline) -> CleanPlan | None:
    if not orphans:
        return plan
    if plan is None:
        last = timeline.completed_commits().last()
        plan = CleanPlan(config.policy, None, last.timestamp if last else "", {})
    files = {p: set(v) for p, v in plan.files.items()}
    for partition, paths in orphans.items():
        files.setdefault(partition, set()).update(paths)
    return CleanPlan(plan.policy, plan.earliest_instant_to_retain, plan.last_completed_commit,
                     {p: tuple(sorted(v)) for p, v in sorted(files.items())})


def resume_pending_cleans(location: TableLocation, timeline: Timeline) -> list[CleanResult]:
    """Re-execute the plans of cleans that did not complete (deleting is idempotent); `timeline`: the caller's,
    listed under the lock it holds."""
    with service_lock_at(location):
        results = []
        pending = timeline.filter_by([Action.CLEAN]).pending()
        writer = keep_or_disable(location, TableConfig.load(location), timeline,
                                 f"the interrupted cleans {[i.timestamp for i in pending]}",
                                 retrying={i.timestamp for i in pending}, recovery=True) if pending else None
        for instant in pending:
            requested = instant.with_state(State.REQUESTED)
            data = timeline.read_content(requested)
            plan = CleanPlan.from_bytes(data, file_name=timeline.path_of(requested))
            inflight = instant if instant.is_inflight else timeline.transition_to_inflight(requested, data)
            results.append(_execute(location, timeline, inflight, plan, writer))
        return results


def _execute(location: TableLocation, timeline: Timeline, inflight: Instant, plan: CleanPlan,
             writer: MetadataWriter | None) -> CleanResult:
    """Delete the plan's files; the metadata table (`writer`, when kept) records the clean before it completes."""
    t0 = time.monotonic()
    result = CleanResult(inflight.timestamp, earliest_commit_to_retain=(
        plan.earliest_instant_to_retain.timestamp if plan.earliest_instant_to_retain else ""))
    partition_metadata = {}
    for partition, paths in plan.files.items():
        ok, failed = [], []
        for planned in paths:
            path = location.planned_file(partition, planned)
            try:
                location.storage.delete(path)  # False when already gone: a re-run of an interrupted clean
                ok.append(path)
            except OSError:
                failed.append(path)
        result.deleted += ok
        result.failed += failed
        partition_metadata[partition] = {
            "partitionPath": partition,
            "policy": plan.policy,
            "deletePathPatterns": [p.rsplit("/", 1)[-1] for p in paths],
            "successDeleteFiles": [p.rsplit("/", 1)[-1] for p in ok],
            "failedDeleteFiles": [p.rsplit("/", 1)[-1] for p in failed],
            "isPartitionDeleted": False,
        }
    metadata = {
        "startCleanTime": inflight.timestamp,
        "timeTakenInMillis": int((time.monotonic() - t0) * 1000),
        "totalFilesDeleted": len(result.deleted),
        "earliestCommitToRetain": result.earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": plan.last_completed_commit,
        "partitionMetadata": partition_metadata,
        "version": METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
    }
    if writer is not None:
        writer.record_clean(inflight.timestamp, metadata)
    timeline.complete(inflight, write_avro_metadata(METADATA_KIND, metadata))
    return result


# --------------------------------------------------------------------------------------------- rollback guard


def check_rollback_keeps_previous_versions(location: TableLocation) -> None:
    """Refuse (WriteError) to roll back the latest completed commit when the file versions it replaced are gone
    (cleaned by KEEP_LATEST_FILE_VERSIONS=1, or replaced file groups cleaned): the rollback would lose rows."""
    timeline = Timeline.load(location)
    target = timeline.completed_commits().last()
    if target is None:
        return
    try:
        meta = timeline.commit_metadata(target)
    except HudiError:
        return  # rollback_completed reports an unreadable commit itself
    needed: dict[str, set[tuple[str, str | None]]] = {}  # partition -> (file id, base instant or None: any file)
    for stat in meta.write_stats():
        name = (stat.path or "").rsplit("/", 1)[-1]
        if stat.prev_commit not in (None, "", "null") and is_base_file_name(name):
            file_id = stat.file_id or BaseFileName.parse(name).file_id
            needed.setdefault(stat.partition_path or "", set()).add((file_id, stat.prev_commit))
    for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
        needed.setdefault(partition, set()).update((f, None) for f in ids)
    for partition, wanted in needed.items():
        present: set[tuple[str, str | None]] = set()
        for e in location.storage.list_dir(location.join(partition)):
            if e.is_dir:
                continue
            if is_base_file_name(e.name):
                n = BaseFileName.parse(e.name)
                present |= {(n.file_id, n.instant_time), (n.file_id, None)}
            elif is_log_file_name(e.name):
                present.add((LogFileName.parse(e.name).file_id, None))
        lost = sorted((f, b or "") for f, b in wanted - present)
        if lost:
            raise WriteError(
                f"cannot roll back {target} of {location.base_path}: the file versions it replaced are gone "
                f"(cleaned): partition {partition!r}, file groups {[f'{f}@{b}' if b else f for f, b in lost[:3]]}. "
                "Rolling back would lose their rows; restore from a savepoint or rewrite the data instead.")
