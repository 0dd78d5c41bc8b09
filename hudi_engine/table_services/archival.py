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
"""
from __future__ import annotations

import io
import json
import re
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import fastavro

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.write_config import ArchivalConfig
from hudi_engine.errors import HudiError, TimelineError
from hudi_engine.io.log_block import AVRO_DATA_BLOCK_VERSION, BlockType, HeaderKey, LogBlock
from hudi_engine.io.log_format import encode_log_file, read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import service_lock
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMPACTION_PLAN,
    NAMESPACE,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    SAVEPOINT_METADATA,
    _array,
    _field,
    _instant_info,
    _map,
    _opt,
    _record,
    avro_kind_for,
    read_avro_metadata,
)
from hudi_engine.timeline.history import ArchivedInstant, TimelineHistory
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State, datetime_to_instant
from hudi_engine.timeline.layout import TimelineLayoutV2, layout_for
from hudi_engine.write.markers import delete_marker_dir

ARCHIVE_FILE_ID = "commits"
ARCHIVE_EXTENSION = ".archive"
WRITE_TOKEN = "1-0-1"
BATCH = 10  # hoodie.commits.archival.batch: records per block
_ARCHIVE_FILE = re.compile(r"^\.commits_\.archive\.(\d+)(?:_.*)?$")
_STR = {"type": "string", "avro.java.string": "String"}

# --------------------------------------------------------------------------------------------- the record


def _long() -> list:
    return ["null", "long"]


_WRITE_STAT_FIELDS = (
    ("fileId", _STR), ("path", _STR), ("prevCommit", _STR), ("prevFilePathOverwritten", _STR),
    ("numWrites", "long"), ("numDeletes", "long"), ("numUpdateWrites", "long"), ("totalWriteBytes", "long"),
    ("totalWriteErrors", "long"), ("partitionPath", _STR), ("totalLogRecords", "long"), ("totalLogFiles", "long"),
    ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"), ("totalLogBlocks", "long"),
    ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"), ("fileSizeInBytes", "long"),
)
WRITE_STAT = _record("HoodieWriteStat", [_field(n, _opt(t), None) for n, t in _WRITE_STAT_FIELDS])


def _commit_fields(write_stat: Any) -> list[dict]:
    return [_field("partitionToWriteStats", _opt(_map(_array(write_stat))), None),
            _field("extraMetadata", _opt(_map(_STR)), None),
            _field("version", ["int", "null"], 1),
            _field("operationType", _opt(_STR), None)]


COMMIT_METADATA = _record("HoodieCommitMetadata", _commit_fields(WRITE_STAT), NAMESPACE)
REPLACE_COMMIT_METADATA = _record("HoodieReplaceCommitMetadata", [
    *_commit_fields("HoodieWriteStat"),
    _field("partitionToReplaceFileIds", _opt(_map(_array(_STR))), None)], NAMESPACE)
COMPACTION_METADATA = _record("HoodieCompactionMetadata", [_field("partitionToCompactionWriteStats", _opt(_map(_array(
    _record("HoodieCompactionWriteStat", [
        _field("partitionPath", _opt(_STR)), _field("totalLogRecords", _long()), _field("totalLogFiles", _long()),
        _field("totalUpdatedRecordsCompacted", _long()), _field("hoodieWriteStat", _opt("HoodieWriteStat"))])))))],
    NAMESPACE)
INDEX_COMMIT_METADATA = _record("HoodieIndexCommitMetadata", [
    _field("version", ["int", "null"], 1, doc="This field replaces the field filesToBeDeletedPerPartition"),
    _field("operationType", _opt(_STR), None, doc="This field replaces the field filesToBeDeletedPerPartition"),
    _field("indexPartitionInfos", _opt(_array(_record("HoodieIndexPartitionInfo", [
        _field("version", ["int", "null"], 1), _field("metadataPartitionPath", _opt(_STR), None),
        _field("indexUptoInstant", _opt(_instant_info()), None)]))), None,
        doc="This field contains the info for each partition that got indexed")], NAMESPACE)

# HoodieArchivedMetaEntry of Hudi 0.14/0.15, its named types defined where Java's generated schema first uses them.
_ENTRY = _record("HoodieArchivedMetaEntry", [
    _field("hoodieCommitMetadata", _opt(COMMIT_METADATA), None),
    _field("hoodieCleanMetadata", _opt(CLEAN_METADATA), None),
    _field("hoodieCompactionMetadata", _opt(COMPACTION_METADATA), None),
    _field("hoodieRollbackMetadata", _opt(ROLLBACK_METADATA), None),
    _field("hoodieSavePointMetadata", _opt(SAVEPOINT_METADATA), None),
    _field("commitTime", _opt(_STR), None),
    _field("actionType", _opt(_STR), None),
    _field("version", ["int", "null"], 1),
    _field("hoodieCompactionPlan", _opt(COMPACTION_PLAN), None),
    _field("hoodieCleanerPlan", _opt(CLEANER_PLAN), None),
    _field("actionState", _opt(_STR), None),
    _field("hoodieReplaceCommitMetadata", _opt(REPLACE_COMMIT_METADATA), None),
    _field("hoodieRequestedReplaceMetadata", _opt(REQUESTED_REPLACE_METADATA), None),
    _field("HoodieInflightReplaceMetadata", _opt(COMMIT_METADATA), None),
    _field("hoodieIndexCommitMetadata", _opt(INDEX_COMMIT_METADATA), None),
    _field("stateTransitionTime", _opt(_STR), None),
], NAMESPACE)


def _define_once(schema: Any, defined: set[str], namespace: str) -> Any:
    """The schema with every named type defined at its first use and referred to by full name afterwards."""
    if isinstance(schema, list):
        return [_define_once(s, defined, namespace) for s in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind in ("record", "enum", "fixed"):
        ns = schema.get("namespace", namespace)
        full = f"{ns}.{schema['name']}"
        if full in defined:
            return full if ns != NAMESPACE else schema["name"]
        defined.add(full)
        out = dict(schema)
        if kind == "record":
            out["fields"] = [{**f, "type": _define_once(f["type"], defined, ns)} for f in schema["fields"]]
        return out
    if kind == "array":
        return {**schema, "items": _define_once(schema["items"], defined, namespace)}
    if kind == "map":
        return {**schema, "values": _define_once(schema["values"], defined, namespace)}
    return schema


ARCHIVED_META_ENTRY = _define_once(_ENTRY, set(), NAMESPACE)
_SCHEMA_TEXT = json.dumps(ARCHIVED_META_ENTRY, separators=(",", ":"))
_PARSED = fastavro.parse_schema(ARCHIVED_META_ENTRY, _write_hint=False)


def _commit_record(data: bytes, *, replace: bool) -> dict:
    """Commit metadata JSON as its Avro record (Hudi converts the Java object field by field; fields the Avro
    record lacks are dropped). An empty file (a requested commit) is an empty metadata, operation UNKNOWN."""
    d = json.loads(data) if data.strip() else {}
    stats = {p: [{n: s.get(n) for n, _ in _WRITE_STAT_FIELDS} for s in stats or []]
             for p, stats in (d.get("partitionToWriteStats") or {}).items() if p is not None}
    operation = d.get("operationType") or "UNKNOWN"
    if d.get("compacted"):
        operation = "COMPACT"
    record = {"partitionToWriteStats": stats, "extraMetadata": dict(d.get("extraMetadata") or {}), "version": 1,
              "operationType": operation}
    if replace:
        record["partitionToReplaceFileIds"] = {p: list(ids or []) for p, ids in
                                               (d.get("partitionToReplaceFileIds") or {}).items() if p is not None}
    return record


def archived_entry(timeline: Timeline, instant: Instant, mtime_ms: int | None = None) -> dict:
    """The HoodieArchivedMetaEntry of one instant file (`instant` in the state of that file)."""
    entry: dict[str, Any] = {"commitTime": instant.timestamp, "actionType": instant.action.value,
                             "actionState": instant.state.name, "version": 1}
    if mtime_ms is not None:
        entry["stateTransitionTime"] = datetime_to_instant(datetime.fromtimestamp(mtime_ms / 1000, UTC))
    data = timeline.read_content(instant)
    where = timeline.path_of(instant)
    action, state = instant.action, instant.state
    if not data:
        if action in (Action.COMMIT, Action.DELTA_COMMIT):
            entry["hoodieCommitMetadata"] = _commit_record(b"", replace=False)
        return entry  # an empty requested/inflight file, or a completed one a crash left empty
    if action in (Action.COMMIT, Action.DELTA_COMMIT):
        entry["hoodieCommitMetadata"] = _commit_record(data, replace=False)
    elif action is Action.REPLACE_COMMIT:
        if state is State.COMPLETED:
            entry["hoodieReplaceCommitMetadata"] = _commit_record(data, replace=True)
        elif state is State.INFLIGHT:
            entry["HoodieInflightReplaceMetadata"] = _commit_record(data, replace=False)
        else:
            entry["hoodieRequestedReplaceMetadata"] = read_avro_metadata(data, "HoodieRequestedReplaceMetadata",
                                                                         file_name=where)
    elif action is Action.CLEAN:
        kind = "hoodieCleanMetadata" if state is State.COMPLETED else "hoodieCleanerPlan"
        entry[kind] = read_avro_metadata(data, avro_kind_for(action, State.COMPLETED if state is State.COMPLETED
                                                             else State.REQUESTED), file_name=where)
    elif action is Action.ROLLBACK:
        if state is State.COMPLETED:
            entry["hoodieRollbackMetadata"] = read_avro_metadata(data, "HoodieRollbackMetadata", file_name=where)
    elif action is Action.SAVEPOINT:
        entry["hoodieSavePointMetadata"] = read_avro_metadata(data, "HoodieSavepointMetadata", file_name=where)
    elif action in (Action.COMPACTION, Action.LOG_COMPACTION):
        plan = timeline.read_content(instant.with_state(State.REQUESTED))
        entry["hoodieCompactionPlan"] = read_avro_metadata(plan, "HoodieCompactionPlan", file_name=where)
    return entry


def encode_archive_file(entries: list[dict]) -> bytes:
    """A Hudi log file of AVRO_DATA blocks of `BATCH` entries each (header: the entry schema only, as Java's
    archiver writes it)."""
    blocks = []
    for start in range(0, len(entries), BATCH):
        chunk = entries[start:start + BATCH]
        body = io.BytesIO()
        for e in chunk:
            one = io.BytesIO()
            fastavro.schemaless_writer(one, _PARSED, e)
            raw = one.getvalue()
            body.write(struct.pack(">i", len(raw)) + raw)
        content = struct.pack(">ii", AVRO_DATA_BLOCK_VERSION, len(chunk)) + body.getvalue()
        blocks.append(LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: _SCHEMA_TEXT}, content))
    return encode_log_file(blocks)


def read_archive_file(data: bytes, *, file_name: str = "archive file") -> list[dict]:
    """The HoodieArchivedMetaEntry records of one archive log file (each block read with its header's schema)."""
    out: list[dict] = []
    for block in read_log_blocks(data, file_name=file_name):
        if block.block_type != BlockType.AVRO_DATA:
            continue
        writer = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]), _write_hint=False)
        version, count = struct.unpack(">ii", block.content[:8])
        pos = 8
        for _ in range(count):
            (size,) = struct.unpack(">i", block.content[pos:pos + 4])
            record = fastavro.schemaless_reader(io.BytesIO(block.content[pos + 4:pos + 4 + size]), writer, _PARSED)
            assert isinstance(record, dict)
            out.append(record)
            pos += 4 + size
    return out


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


def archive_folder(location: TableLocation, table: TableConfig) -> str:
    return location.meta(table.archivelog_folder)


def archive_files(location: TableLocation) -> list[tuple[int, str]]:
    """(version, path) of the table's archive log files, oldest first (the table's config read for its archive
    folder)."""
    return _archive_files(location, TableConfig.load(location))


def _archive_files(location: TableLocation, table: TableConfig) -> list[tuple[int, str]]:
    found = []
    for e in location.storage.list_dir(archive_folder(location, table)):
        m = _ARCHIVE_FILE.match(e.name)
        if m and not e.is_dir:
            found.append((int(m.group(1)), e.path))
    return sorted(found)


def archived_entries(location: TableLocation) -> list[dict]:
    """Every archived instant file's record, in archive order (the table's config read for its archive folder)."""
    storage = location.storage
    out: list[dict] = []
    for _, path in archive_files(location):
        out += read_archive_file(storage.read_bytes(path), file_name=path)
    return out


def newest_archived_commit(location: TableLocation) -> str | None:
    """The newest completed commit-like instant in the archive (from its last file), None if none is archived (the
    table's config read for its archive folder)."""
    return _newest_archived(location, TableConfig.load(location))


def _newest_archived(location: TableLocation, table: TableConfig) -> str | None:
    storage = location.storage
    files = _archive_files(location, table)
    for _, path in reversed(files):
        times = [e["commitTime"] for e in read_archive_file(storage.read_bytes(path), file_name=path)
                 if e.get("actionState") == "COMPLETED" and e.get("actionType") in {a.value for a in COMMIT_ACTIONS}]
        if times:
            return max(times)
    return None


def archive(location: TableLocation, config: ArchivalConfig, *, max_delta_commits: int = 5,
            lock: LockConfig | None = None, table: TableConfig, timeline: Timeline) -> ArchivalResult | None:
    """Archive what `instants_to_archive` names (under the table lock); None when nothing is due. `table` and
    `timeline`: the caller's, `timeline` listed under the table lock it holds (`HudiTable.archive`, the write's
    services)."""
    storage = location.storage
    with service_lock(location, lock, table=table, timeline=timeline):
        table.require_writable()
        layout = layout_for(table)
        if timeline.layout != layout:  # a caller's listing of another folder lists no instants
            timeline = Timeline.load(location, layout)
        chosen = instants_to_archive(timeline, config, merge_on_read=table.table_type == "MERGE_ON_READ",
                                     max_delta_commits=max_delta_commits)
        if not chosen:
            return None
        if isinstance(timeline.layout, TimelineLayoutV2):
            return _archive_to_history(location, timeline, timeline.layout, chosen, config)
        files = _state_files(storage, timeline, chosen)
        entries = [archived_entry(timeline, i, mtime) for i, _, mtime in files]
        path = _write_archive_file(location, table, encode_archive_file(entries))
        # Pending states first: a completed file left behind by a crash is still a completed instant.
        deleted = [p for i, p, _ in files if not i.is_completed and storage.delete(p)]
        deleted += [p for i, p, _ in files if i.is_completed and storage.delete(p)]
        for instant in chosen:
            delete_marker_dir(location, instant.timestamp)
        return ArchivalResult(chosen, path, deleted)


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


def _write_archive_file(location: TableLocation, table: TableConfig, data: bytes) -> str:
    folder = archive_folder(location, table)
    version = max((v for v, _ in _archive_files(location, table)), default=0) + 1
    while True:
        path = Storage.join(folder, f".{ARCHIVE_FILE_ID}_{ARCHIVE_EXTENSION}.{version}_{WRITE_TOKEN}")
        if location.storage.create_exclusive(path, data):
            return path
        version += 1


def check_not_archived(location: TableLocation, table: TableConfig, timeline: Timeline, instant: str,
                       what: str, *, begin: bool = False, range_end: bool = False) -> None:
    """Refuse a read named by an instant older than the active timeline once instants were archived: a time travel
    or range end there would read file versions cleaning may have deleted, through commits no reader sees; an
    incremental begin there would miss the archived commits after it (a begin at or after the newest archived
    commit misses nothing). In layout 2 an incremental range's bounds are completion times: `begin` is checked
    against the newest completion time in the LSM history, and a `range_end` (never before its begin) needs no
    check of its own."""
    if isinstance(timeline.layout, TimelineLayoutV2):
        if not range_end:
            _check_not_in_history(location, table, timeline, timeline.layout, instant, what, by_completion=begin)
        return
    base_path = location.base_path
    commits = timeline.completed_commits()
    first, last = commits.first(), commits.last()
    if first is None or last is None or instant >= first.timestamp:
        return
    if not _archive_files(location, table):
        return  # nothing archived: an instant before the first commit reads an empty table, as in Hudi
    where = f"table {table.name!r} ({base_path})"
    archived = (f"the instants before it were archived to {archive_folder(location, table)} "
                "(hoodie.keep.min.commits / hoodie.keep.max.commits)")
    if begin:
        newest = _newest_archived(location, table)
        if newest is None or instant >= newest:
            return
        raise HudiError(
            f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; "
            f"{archived}, up to {newest}, so an incremental read from {instant} would miss them. Begin at {newest} or "
            f"later (commits from {first.timestamp} to {last.timestamp} are readable), or read a snapshot.")
    raise HudiError(
        f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; {archived} "
        f"and their file versions may be cleaned. Read as of an instant from {first.timestamp} to "
        f"{last.timestamp}.")


def _check_not_in_history(location: TableLocation, table: TableConfig, timeline: Timeline, layout: TimelineLayoutV2,
                          instant: str, what: str, *, by_completion: bool) -> None:
    """Layout 2: a time travel instant (a requested time, as readers take it) before the first active commit, or
    an incremental bound (a completion time) before the newest completion time archived, once the LSM history
    holds commits. The history is read only when the instant could be before it."""
    commits = timeline.completed_commits()
    first, last = commits.first(), commits.last()
    if first is None or last is None:
        return
    if not by_completion and instant >= first.timestamp:
        return
    history = TimelineHistory.of(location, layout.timeline_path, layout.history_path)
    if history.is_empty():
        return  # nothing archived: an instant before the first commit reads an empty table, as in Hudi
    archived = [i for i in history.instants() if i.action in COMMIT_ACTIONS]
    if not archived:
        return
    where = f"table {table.name!r} ({location.base_path})"
    place = (f"archived to the timeline history {history.folder} (hoodie.keep.min.commits / "
             "hoodie.keep.max.commits)")
    if by_completion:
        newest = max(i.completion_time or i.timestamp for i in archived)
        if instant >= newest:
            return
        completed = [c.completion_time or c.timestamp for c in commits]
        raise HudiError(
            f"{where}: {what} {instant} is a completion time before the newest one of the commits {place}, "
            f"{newest}, so an incremental read from {instant} would miss them. Begin at {newest} or later (commits "
            f"completed from {min(completed)} to {max(completed)} are on the active timeline), or read a snapshot.")
    raise HudiError(
        f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; the instants "
        f"before it were {place}, {len(archived)} commits up to {archived[-1].timestamp}, and their file versions may "
        f"be cleaned. Read as of an instant from {first.timestamp} to {last.timestamp}.")
