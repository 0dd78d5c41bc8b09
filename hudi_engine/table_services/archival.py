"""Timeline archival (Hudi 0.14/0.15's HoodieTimelineArchiver for table version 6): old instants leave `.hoodie/`, so
the active timeline every write and read lists stays bounded.

Which instants go (each with the files of all its states):

* completed commits, deltacommits and replacecommits, once more than `hoodie.keep.max.commits` are active: the
  oldest, down to `hoodie.keep.min.commits`, but none at or after
  - the newest completed commit before the oldest pending write (or that pending write itself): the timeline must
    not get holes while a write is in flight (its conflict check and its rollback need what it saw);
  - the first savepoint;
  - on MERGE_ON_READ, the completed compaction before the delta commits a compaction is yet to count
    (`hoodie.compact.inline.max.delta.commits`, Hudi's getOldestInstantToRetainForCompaction);
  - the first replacecommit at or after the last clean's earliest commit to retain (replaced file groups must be
    cleaned before the replacecommit that hides them leaves the timeline), or an older one still pending;
* completed cleans and rollbacks, each action on its own, once more than max are active: the oldest, down to min.

They are written to `.hoodie/archived/.commits_.archive.<N>_1-0-1`: a Hudi log file (file id `commits`, base instant
"", extension `.archive`; a new version per run, as Java writes on stores without append) of AVRO_DATA blocks of ten
`HoodieArchivedMetaEntry` records, one record per instant file (commit metadata converted from JSON to its Avro
record, plans and metadata of cleans, rollbacks and compactions as they are). Java's HoodieArchivedTimeline reads
them; hudi-rs and this engine's readers never do: they see a timeline that starts later and take every data file
older than its start for committed (so archival never moves past a pending instant). Then the instant files are
deleted, pending states first (a completed file left alone is still a completed instant), and any marker folders.
Cleaning's retention is respected by the configuration check `hoodie.keep.min.commits > hoodie.cleaner.commits.
retained`.

Timeline layout 2 (table versions 8 and 9, Hudi 1.x's TimelineArchiverV2) archives into the LSM timeline history
(`hudi_engine.timeline.history`): the same commits as above (its rules did not change), and with them every
completed clean and rollback requested before the newest commit archived (no max/min of their own in 1.x). Each
archived action becomes one HoodieLSMTimelineInstant record (completion time, completed file's bytes, plan's
bytes); the run writes one layer-0 parquet file and a new manifest, then deletes the instants' files (pending states
first, then completed ones oldest first, as Hudi does), then compacts and cleans the history.

With a metadata table this engine keeps (`hudi_engine.metadata.writer`), only instants before the metadata table's
latest compaction are archived (Hudi's "do not archive instants which are more recent than the last compaction on
the metadata table"; nothing before its first compaction): its readers merge log blocks of instants still on the
data table's active timeline only, and the blocks up to that compaction are in its base file. Then the metadata
table's own instants are archived the same way (`archive_metadata_table`), as Hudi's archiver does for a metadata
table: before its latest compaction and before the data table's first active instant, so its active timeline stays
bounded too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.write_config import ArchivalConfig
from hudi_engine.errors import HudiError, TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.metadata.writer import MetadataWriter, keep_or_disable
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import service_lock
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archived_entry, encode_archive_file, write_archive_file
from hudi_engine.timeline.history import ArchivedInstant, TimelineHistory
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State
from hudi_engine.timeline.layout import TimelineLayoutV2, layout_for
from hudi_engine.write.markers import delete_marker_dir

# --------------------------------------------------------------------------------------------- which instants


def _oldest_to_retain_for_compaction(timeline: Timeline, max_delta_commits: int) -> Instant | None:
    """Hudi's getOldestInstantToRetainForCompaction: the delta commits a compaction schedule counts stay."""
    last_compaction = timeline.filter_by([Action.COMMIT, Action.REPLACE_COMMIT], [State.COMPLETED]).last()
    deltas = timeline.filter_by([Action.DELTA_COMMIT])
    if last_compaction is not None:
        since = [i for i in deltas if i.timestamp > last_compaction.timestamp]
        anchor = last_compaction
    elif len(deltas):
        since, anchor = list(deltas), deltas[0]
    else:
        return None
    if len(since) < max_delta_commits:
        return anchor
    return since[len(since) - max_delta_commits]


def _oldest_to_retain_for_replace(timeline: Timeline) -> Instant | None:
    """Hudi's getOldestInstantToRetainForClustering, for every replacecommit (insert_overwrite too) and, in layout
    2, every pending clustering."""
    replaces = timeline.filter_by([Action.REPLACE_COMMIT, Action.CLUSTERING])
    if not replaces:
        return None
    last_clean = timeline.filter_by([Action.CLEAN], [State.COMPLETED]).last()
    if last_clean is not None:
        plan = timeline.avro_metadata(last_clean.with_state(State.REQUESTED)) or {}
        earliest = (plan.get("earliestInstantToRetain") or {}).get("timestamp") or last_clean.timestamp
        oldest = next((i for i in replaces if i.timestamp >= earliest), None)
    else:
        oldest = replaces[0]
    pending = next((i for i in replaces if not i.is_completed), None)
    if pending is not None:
        before = [i for i in timeline.completed_commits() if i.timestamp < pending.timestamp]
        if before and (oldest is None or oldest > before[-1]):
            oldest = before[-1]
    return oldest


def _pending_writes(timeline: Timeline) -> list[Instant]:
    """Hudi's write timeline, pending instants only (a layout-2 pending clustering included)."""
    return [i for i in timeline if not i.is_completed
            and (i.action in COMMIT_ACTIONS or i.action in (Action.LOG_COMPACTION, Action.CLUSTERING))]


def instants_to_archive(timeline: Timeline, config: ArchivalConfig, *, merge_on_read: bool,
                        max_delta_commits: int) -> list[Instant]:
    """The completed instants archival moves off the active timeline now, oldest first. Commits by the rules of
    both layouts; cleans and rollbacks by their own max/min in layout 1 (Hudi 0.x), and in layout 2 (Hudi 1.x's
    TimelineArchiverV2) every completed one requested before the newest commit archived."""
    commits = _commits_to_archive(timeline, config, merge_on_read=merge_on_read, max_delta_commits=max_delta_commits)
    if timeline.layout.version == 2:
        if not commits:
            return []
        newest = commits[-1].timestamp
        others = [i for i in timeline.filter_by([Action.CLEAN, Action.ROLLBACK], [State.COMPLETED])
                  if i.timestamp < newest]
        return sorted(commits + others)
    out: list[Instant] = []
    for action in (Action.CLEAN, Action.ROLLBACK):
        done = list(timeline.filter_by([action], [State.COMPLETED]))
        if len(done) > config.max_commits:
            out += done[:len(done) - config.min_commits]
    return sorted(out + commits)


def _commits_to_archive(timeline: Timeline, config: ArchivalConfig, *, merge_on_read: bool,
                        max_delta_commits: int) -> list[Instant]:
    out: list[Instant] = []
    commits = list(timeline.completed_commits())
    if len(commits) > config.max_commits:
        bounds: list[str] = []
        pending = _pending_writes(timeline)
        if pending:
            before = [c for c in commits if c.timestamp < pending[0].timestamp]
            bounds.append(before[-1].timestamp if before else pending[0].timestamp)
        savepoint = timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]).first()
        if savepoint is not None:
            bounds.append(savepoint.timestamp)
        if merge_on_read:
            keep = _oldest_to_retain_for_compaction(timeline, max_delta_commits)
            if keep is not None:
                bounds.append(keep.timestamp)
        keep = _oldest_to_retain_for_replace(timeline)
        if keep is not None:
            bounds.append(keep.timestamp)
        bound = min(bounds, default=None)
        eligible = [c for c in commits if bound is None or c.timestamp < bound]
        out += eligible[:len(commits) - config.min_commits]
    return out


# --------------------------------------------------------------------------------------------- the service


@dataclass(frozen=True)
class ArchivalResult:
    archived: list[Instant]  # completed instants archived (all their states' files went)
    archive_file: str  # the archive log file written (layout 2: the history's new layer-0 parquet file)
    deleted_files: list[str]  # instant files deleted from the active timeline
    compacted: list[str] = field(default_factory=list)  # layout 2: history files the LSM compaction wrote


def archive(location: TableLocation, config: ArchivalConfig, *, max_delta_commits: int = 5,
            lock: LockConfig | None = None, table: TableConfig, timeline: Timeline,
            metadata: MetadataWriter | None = None) -> ArchivalResult | None:
    """Archive what `instants_to_archive` names (under the table lock); None when nothing is due. `table` and
    `timeline`: the caller's, `timeline` listed under the table lock it holds (`HudiTable.archive`, the write's
    services). `metadata`: the metadata table's writer as the caller's last change to either table left it under
    that lock (a write's, when no service ran after its commit), taken as it is."""
    with service_lock(location, lock, table=table, timeline=timeline):
        table.require_writable()
        layout = layout_for(table)
        if timeline.layout != layout:  # a caller's listing of another folder lists no instants
            timeline = Timeline.load(location, layout)
        chosen = instants_to_archive(timeline, config, merge_on_read=table.table_type == "MERGE_ON_READ",
                                     max_delta_commits=max_delta_commits)
        writer = None
        if chosen or table.metadata_partitions:
            # Readers skip metadata log blocks of instants no longer on the active timeline: as Hudi, only instants
            # its metadata table compacted are archived (module doc); a metadata table this engine cannot keep is
            # disabled. hoodie.properties as it is now: a service before this one under the same lock may have
            # changed it.
            writer = metadata if metadata is not None else \
                keep_or_disable(location, TableConfig.load(location), timeline, "archival")
            if writer is not None:
                chosen = writer.archivable(chosen)
        result = _archive_instants(location, table, timeline, chosen, config) if chosen else None
        if writer is not None:  # then the metadata table's own, bounded by the data table's active timeline
            archive_metadata_table(writer.table, config, Timeline.load(location, layout) if chosen else timeline,
                                   max_delta_commits=max_delta_commits)
        return result


def _archive_instants(location: TableLocation, table: TableConfig, timeline: Timeline, chosen: list[Instant],
                      config: ArchivalConfig) -> ArchivalResult:
    """Move `chosen` off the active timeline of the table at `location` (its config `table`): into the LSM history
    (layout 2) or an archive log file (layout 1)."""
    storage = location.storage
    if isinstance(timeline.layout, TimelineLayoutV2):
        return _archive_to_history(location, timeline, timeline.layout, chosen, config)
    files = _state_files(storage, timeline, chosen)
    entries = [archived_entry(timeline, i, mtime) for i, _, mtime in files]
    path = write_archive_file(location, table, encode_archive_file(entries))
    # Pending states first: a completed file left behind by a crash is still a completed instant.
    deleted = [p for i, p, _ in files if not i.is_completed and storage.delete(p)]
    deleted += [p for i, p, _ in files if i.is_completed and storage.delete(p)]
    for instant in chosen:
        delete_marker_dir(location, instant.timestamp)
    return ArchivalResult(chosen, path, deleted)


def archive_metadata_table(metadata: MetadataTable, config: ArchivalConfig, data_timeline: Timeline, *,
                           max_delta_commits: int = 5) -> ArchivalResult | None:
    """Archive the metadata table's own instants, as Hudi's archiver does for a metadata table: by the data table's
    `hoodie.keep.min/max.commits` and the rules above (a merge-on-read table), but none at or after its latest
    compaction (the blocks before it are in its base files; a reader needs those after it) nor at or after the data
    table's first active instant (readers validate blocks against that timeline). None when nothing is due.
    `metadata`: as listed under the table lock (its timeline is not listed again)."""
    timeline = metadata.timeline
    compacted = timeline.filter_by([Action.COMMIT], [State.COMPLETED]).last()
    first = data_timeline.instants[0].timestamp if data_timeline.instants else None
    if compacted is None or first is None:
        return None
    chosen = [i for i in instants_to_archive(timeline, config, merge_on_read=True, max_delta_commits=max_delta_commits)
              if i.timestamp < compacted.timestamp and i.timestamp[:17] < first]
    if not chosen:
        return None
    return _archive_instants(metadata.location, metadata.config, timeline, chosen, config)


def _archive_to_history(location: TableLocation, timeline: Timeline, layout: TimelineLayoutV2,
                        chosen: list[Instant], config: ArchivalConfig) -> ArchivalResult:
    """Layout 2: the chosen actions into the LSM history, then their files off the active timeline, then the
    history's compaction and cleaning (TimelineArchiverV2.archiveIfRequired)."""
    storage = location.storage
    history = TimelineHistory.of(location, layout.timeline_path, layout.history_path)
    files = _state_files(storage, timeline, chosen, mtimes=False)
    records = []
    for instant in chosen:
        mine = [(i, p) for i, p, _ in files if (i.timestamp, i.comparable_action) ==
                (instant.timestamp, instant.comparable_action)]
        delete_marker_dir(location, instant.timestamp)  # Hudi's pre-write callback, before the record is written
        records.append(lsm_record(storage, mine))
    path = history.append(records)
    # Pending states first (a completed file left by a crash is still a completed instant, and one whose pending
    # files went first never looks pending), then completed ones oldest first, so the timeline gets no hole.
    deleted = [p for i, p, _ in files if not i.is_completed and storage.delete(p)]
    deleted += [p for i, p, _ in files if i.is_completed and storage.delete(p)]
    compacted = history.compact_and_clean(config.timeline_compaction_batch_size)
    return ArchivalResult(chosen, path, deleted, compacted)


def lsm_record(storage: Storage, files: list[tuple[Instant, str]]) -> ArchivedInstant:
    """The HoodieLSMTimelineInstant of one action from its state files (Hudi's createLSMTimelineInstant): the
    completed file's bytes as metadata (the one completed last, if a crash left two), and as plan the cleaner plan
    of a clean, the compaction plan of a (log) compaction, or the requested (then, if not empty, the inflight) file
    of a replacecommit or clustering."""
    completed = sorted((i for i, _ in files if i.is_completed), key=lambda i: i.completion_time or "")
    if not completed:
        raise TimelineError(f"archival: no completed file among {[p for _, p in files]}")
    done = completed[-1]
    paths = {(i.state, i.completion_time): p for i, p in files}
    by_state = {i.state: i for i, _ in files if not i.is_completed}

    def read(instant: Instant | None) -> bytes:
        return storage.read_bytes(paths[(instant.state, instant.completion_time)]) if instant is not None else b""

    requested, inflight = by_state.get(State.REQUESTED), by_state.get(State.INFLIGHT)
    pending = requested or inflight
    plan = b""
    if pending is not None and pending.action is Action.CLEAN:
        plan = read(pending)
    elif pending is not None and pending.action in (Action.REPLACE_COMMIT, Action.CLUSTERING):
        plan = read(inflight) or read(requested)
    elif pending is not None and pending.action in (Action.COMPACTION, Action.LOG_COMPACTION):
        plan = read(requested)
    return ArchivedInstant(done.timestamp, done.completion_time, done.action.value, read(done) or None, plan or None)


def _state_files(storage: Storage, timeline: Timeline, chosen: list[Instant], *,
                 mtimes: bool = True) -> list[tuple[Instant, str, int]]:
    """(instant in the state of the file, path, mtime ms or 0) of every file of the chosen instants, in timeline
    order."""
    wanted = {(i.timestamp, i.comparable_action) for i in chosen}
    out = []
    for e in storage.list_dir(timeline.meta_path):
        if e.is_dir:
            continue
        try:
            instant = timeline.layout.parse_file_name(e.name)
        except (HudiError, TimelineError):
            continue
        if instant is not None and (instant.timestamp, instant.comparable_action) in wanted:
            out.append((instant, e.path, (storage.mtime_ms(e.path) or 0) if mtimes else 0))
    return sorted(out, key=lambda t: t[0])
