"""The archived timeline of timeline layout 1 (table version 6; Hudi 0.14/0.15's HoodieArchivedTimeline): the log
files archival writes into `.hoodie/archived/` (`hoodie.archivelog.folder`), their HoodieArchivedMetaEntry records,
and the reads of them (the instants archived, the newest archived commit). Which instants archival takes, and when, is
the table service's (`hudi_engine.table_services.archival`).

Below the table services so that a read's check of an instant against what was archived needs no table service.
"""
from __future__ import annotations

import io
import json
import re
import struct
from datetime import UTC, datetime
from typing import Any

import fastavro

from hudi_engine.io.log_block import AVRO_DATA_BLOCK_VERSION, BlockType, HeaderKey, LogBlock
from hudi_engine.io.log_format import encode_log_file, read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
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
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State, datetime_to_instant
from hudi_engine.timeline.timeline import Timeline

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


def commit_entry_record(data: bytes, *, replace: bool) -> dict:
    """The archived entry's record of commit metadata JSON (a replacecommit's with its replaced file ids)."""
    return _commit_record(data, replace=replace)


def archived_entry(timeline: Timeline, instant: Instant, mtime_ms: int | None = None) -> dict:
    """The HoodieArchivedMetaEntry of one instant file (`instant` in the state of that file)."""
    entry: dict[str, Any] = {"commitTime": instant.timestamp, "actionType": instant.action.value,
                             "actionState": instant.state.name, "version": 1}
    if mtime_ms is not None:
        # Never before the instant itself: instant times run ahead of the clock when many are made in one
        # millisecond (`new_instant_time` steps past the latest), and a later reader takes this as the completion time.
        entry["stateTransitionTime"] = max(datetime_to_instant(datetime.fromtimestamp(mtime_ms / 1000, UTC)),
                                           instant.timestamp)
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


# --------------------------------------------------------------------------------------------- the files


def archive_folder(location: TableLocation, table: TableConfig) -> str:
    return location.meta(table.archivelog_folder)


def archive_files(location: TableLocation, table: TableConfig | None = None) -> list[tuple[int, str]]:
    """(version, path) of the table's archive log files, oldest first (`table`: its config, for its archive folder;
    read when not given)."""
    found = []
    for e in location.storage.list_dir(archive_folder(location, table or TableConfig.load(location))):
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


def newest_archived_commit(location: TableLocation, table: TableConfig | None = None) -> str | None:
    """The newest completed commit-like instant in the archive (from its last file), None if none is archived
    (`table`: its config, for its archive folder; read when not given)."""
    storage = location.storage
    for _, path in reversed(archive_files(location, table)):
        times = [e["commitTime"] for e in read_archive_file(storage.read_bytes(path), file_name=path)
                 if e.get("actionState") == "COMPLETED" and e.get("actionType") in {a.value for a in COMMIT_ACTIONS}]
        if times:
            return max(times)
    return None


def write_archive_file(location: TableLocation, table: TableConfig, data: bytes) -> str:
    """A new archive log file holding `data`, the version after the newest one listed (created exclusively: a
    version another writer took is skipped)."""
    folder = archive_folder(location, table)
    version = max((v for v, _ in archive_files(location, table)), default=0) + 1
    while True:
        path = Storage.join(folder, f".{ARCHIVE_FILE_ID}_{ARCHIVE_EXTENSION}.{version}_{WRITE_TOKEN}")
        if location.storage.create_exclusive(path, data):
            return path
        version += 1
