"""HoodieCommitMetadata / HoodieReplaceCommitMetadata JSON: the content of completed (and inflight) commits.

Hudi writes these with Jackson: fields in Java declaration order, pretty-printed by Jackson's default printer
(`"key" : value`, objects indented by 2 spaces per level, arrays inline as `[ a, b ]` / `[ {` ... `} ]`, empty
containers as `{ }` / `[ ]`, no trailing newline). `to_json` reproduces that byte for byte, so a real commit
file parsed and written back gives the same bytes. Reading is lenient like Jackson's
(FAIL_ON_UNKNOWN_PROPERTIES off): unknown fields are dropped, absent ones take Java's defaults, an empty file is
empty metadata.
"""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, overload

import fastavro
import pyarrow as pa

from hudi_engine.errors import TimelineError

# Jackson's standard escapes: the short forms for \b \t \n \f \r, `\u00XX` (upper-case hex) for other control
# characters, backslash and quote; everything else is written as UTF-8 as is.
_JSON_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_JSON_ESCAPES.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"})


def _json_string(s: str) -> str:
    return '"' + s.translate(_JSON_ESCAPES) + '"'


def jackson_pretty(value: Any, level: int = 0) -> str:
    """JSON text as Jackson's DefaultPrettyPrinter writes it. Only objects add indentation levels."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        if not value:
            return "{ }"
        pad = "  " * (level + 1)
        entries = ",".join(f"\n{pad}{_json_string(str(k))} : {jackson_pretty(v, level + 1)}" for k, v in value.items())
        return "{" + entries + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, level) for v in value) + " ]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as commit metadata JSON")


class _Reader:
    """Typed access to one JSON object of a commit file; every error names the file and the field."""

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, dict):
            raise TimelineError(f"{where}: expected a JSON object, found {type(obj).__name__}")
        self.obj = obj
        self.where = where

    def _fail(self, key: str, expected: str) -> TimelineError:
        return TimelineError(f"{self.where}: field {key!r} = {self.obj[key]!r}, expected {expected}")

    @overload
    def long(self, key: str, default: int = 0) -> int: ...

    @overload
    def long(self, key: str, default: None) -> int | None: ...

    def long(self, key: str, default: int | None = 0) -> int | None:
        v = self.obj.get(key)
        if v is None:
            return default
        if isinstance(v, bool):
            raise self._fail(key, "a number")
        if isinstance(v, int):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, str):  # Jackson coerces numeric strings
            try:
                return int(v)
            except ValueError:
                pass
        raise self._fail(key, "a number")

    def string(self, key: str) -> str | None:
        v = self.obj.get(key)
        if v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        raise self._fail(key, "a string")

    def boolean(self, key: str) -> bool:
        v = self.obj.get(key)
        if v is None:
            return False
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        raise self._fail(key, "true or false")

    def obj_or_none(self, key: str) -> dict | None:
        v = self.obj.get(key)
        if v is None or isinstance(v, dict):
            return v
        raise self._fail(key, "an object")

    def string_list(self, key: str) -> list[str] | None:
        v = self.obj.get(key)
        if v is None:
            return None
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return list(v)
        raise self._fail(key, "a list of strings")


def _without_nulls(value: Any) -> Any:
    """An Avro record as Jackson would have read the JSON: absent fields instead of nulls (Avro declares every
    field nullable, so a plain write stat carries `logVersion: null` where the JSON has no such field)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@dataclass(slots=True)
class RuntimeStats:
    """HoodieWriteStat.RuntimeStats: milliseconds spent scanning, upserting and creating."""

    total_scan_time: int = 0
    total_upsert_time: int = 0
    total_create_time: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "totalScanTime": self.total_scan_time,
            "totalUpsertTime": self.total_upsert_time,
            "totalCreateTime": self.total_create_time,
        }

    @staticmethod
    def from_dict(obj: Any, where: str) -> RuntimeStats:
        r = _Reader(obj, where)
        return RuntimeStats(r.long("totalScanTime"), r.long("totalUpsertTime"), r.long("totalCreateTime"))


# (json name, attribute, kind) in HoodieWriteStat declaration order: Jackson writes them in this order.
_WRITE_STAT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("fileId", "file_id", "str"),
    ("path", "path", "str"),
    ("cdcStats", "cdc_stats", "obj"),
    ("prevCommit", "prev_commit", "str"),
    ("numWrites", "num_writes", "long"),
    ("numDeletes", "num_deletes", "long"),
    ("numUpdateWrites", "num_update_writes", "long"),
    ("numInserts", "num_inserts", "long"),
    ("totalWriteBytes", "total_write_bytes", "long"),
    ("totalWriteErrors", "total_write_errors", "long"),
    ("tempPath", "temp_path", "str"),
    ("partitionPath", "partition_path", "str"),
    ("totalLogRecords", "total_log_records", "long"),
    ("totalLogFilesCompacted", "total_log_files_compacted", "long"),
    ("totalLogSizeCompacted", "total_log_size_compacted", "long"),
    ("totalUpdatedRecordsCompacted", "total_updated_records_compacted", "long"),
    ("totalLogBlocks", "total_log_blocks", "long"),
    ("totalCorruptLogBlock", "total_corrupt_log_block", "long"),
    ("totalRollbackBlocks", "total_rollback_blocks", "long"),
    ("fileSizeInBytes", "file_size_in_bytes", "long"),
    ("minEventTime", "min_event_time", "long?"),
    ("maxEventTime", "max_event_time", "long?"),
    ("runtimeStats", "runtime_stats", "runtime"),
)
# HoodieDeltaWriteStat's own fields, written after the inherited ones.
_DELTA_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("logVersion", "log_version", "long"),
    ("logOffset", "log_offset", "long"),
    ("baseFile", "base_file", "str"),
    ("logFiles", "log_files", "strlist"),
    ("recordsStats", "records_stats", "obj"),
)

# What Java holds in a delta stat's fields that are never null there (primitive long, initialised list,
# an empty Option, which Jackson writes as {"val" : null}).
_DELTA_DEFAULTS: dict[str, Callable[[], Any]] = {
    "logOffset": lambda: 0, "logFiles": list, "recordsStats": lambda: {"val": None},
}

NULL_COMMIT = "null"  # prevCommit of a new file group: the literal string "null"


@dataclass(frozen=True, slots=True)
class RecordKeys:
    """The record keys a handle's base file added to its file group and removed from it, or a log file's data-block
    and delete-block keys: reported by the handle that wrote the file so the record index (`metadata.record_index`)
    need not read them back. Not part of the stat's JSON: a Spark task sends them beside it (`spark.write_udfs`).

    `resolved`: a log file's keys already checked against the record index, as its tagging placed them (added: the
    written keys it did not place in this file group; removed: the deleted keys it placed there), so the commit
    need not look them up again."""

    added: pa.Array
    removed: pa.Array
    resolved: bool = False


@dataclass(slots=True)
class WriteStat:
    """One file written by a commit (HoodieWriteStat); a log append (HoodieDeltaWriteStat) has `log_version` set.

    Mutable: write handles fill the counters in as they go.
    """

    file_id: str | None = None
    path: str | None = None  # relative to the base path: "<partition>/<file>" or "<file>"
    cdc_stats: dict[str, int] | None = None
    prev_commit: str | None = None  # base instant of the slice updated, or NULL_COMMIT for a new file group
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    temp_path: str | None = None
    partition_path: str | None = None
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: RuntimeStats | None = None
    # HoodieDeltaWriteStat (MOR log appends); all None for a plain write stat.
    log_version: int | None = None
    log_offset: int | None = None  # file offset where this commit's first block starts
    base_file: str | None = None  # base file name of the slice, "" if it has none
    log_files: list[str] | None = None  # log file names of the slice
    records_stats: dict | None = None  # a serialized Hudi Option: {"val": null} or column ranges
    record_keys: RecordKeys | None = field(default=None, compare=False, repr=False)  # not in the commit's JSON

    @property
    def is_delta(self) -> bool:
        return self.log_version is not None

    def to_dict(self) -> dict[str, Any]:
        fields = _WRITE_STAT_FIELDS + (_DELTA_FIELDS if self.is_delta else ())
        out: dict[str, Any] = {}
        for json_name, attr, kind in fields:
            value = getattr(self, attr)
            if kind == "runtime" and value is not None:
                value = value.to_dict()
            elif value is None and json_name in _DELTA_DEFAULTS:
                value = _DELTA_DEFAULTS[json_name]()
            out[json_name] = value
        return out

    @staticmethod
    def from_dict(obj: Any, where: str) -> WriteStat:
        r = _Reader(obj, where)
        stat = WriteStat()
        delta = "logVersion" in r.obj
        for json_name, attr, kind in _WRITE_STAT_FIELDS + (_DELTA_FIELDS if delta else ()):
            if kind == "str":
                value: Any = r.string(json_name)
            elif kind == "long":
                value = r.long(json_name)
            elif kind == "long?":
                value = r.long(json_name, None)
            elif kind == "obj":
                value = r.obj_or_none(json_name)
            elif kind == "strlist":
                value = r.string_list(json_name)
            else:  # runtime
                raw = r.obj_or_none(json_name)
                value = None if raw is None else RuntimeStats.from_dict(raw, f"{where}.{json_name}")
            setattr(stat, attr, value)
        return stat


@dataclass(slots=True)
class CommitMetadata:
    """HoodieCommitMetadata; with `partition_to_replace_file_ids` set, HoodieReplaceCommitMetadata."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str | None = "UNKNOWN"
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    SCHEMA_KEY = "schema"

    # --- parse / format ---------------------------------------------------------------------------------

    @staticmethod
    def from_json(data: bytes | str, *, file_name: str = "commit metadata") -> CommitMetadata:
        """Parse commit JSON leniently. Empty content is empty metadata; bad JSON raises naming `file_name`."""
        try:
            text = bytes(data).decode("utf-8") if isinstance(data, (bytes, bytearray, memoryview)) else data
        except UnicodeDecodeError as e:
            raise TimelineError(f"{file_name}: commit metadata is not UTF-8 ({e})") from None
        if not text.strip():
            return CommitMetadata()
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise TimelineError(f"{file_name}: commit metadata is not valid JSON ({e})") from None
        return CommitMetadata.from_dict(obj, file_name=file_name)

    @staticmethod
    def from_avro(data: bytes, *, file_name: str = "commit metadata") -> CommitMetadata:
        """Parse the Avro container file of a layout-2 (Hudi 1.x) commit: a HoodieCommitMetadata or
        HoodieReplaceCommitMetadata record whose field names are the JSON ones. Empty content is empty metadata."""
        if not data:
            return CommitMetadata()
        try:
            records = list(fastavro.reader(io.BytesIO(bytes(data))))
        except Exception as e:  # noqa: BLE001 - fastavro raises many types for bad bytes
            raise TimelineError(f"{file_name}: commit metadata is not an Avro container file ({e})") from None
        if len(records) != 1:
            raise TimelineError(f"{file_name}: expected one commit metadata record, found {len(records)}")
        return CommitMetadata.from_dict(_without_nulls(records[0]), file_name=file_name)

    @staticmethod
    def from_dict(obj: Any, *, file_name: str = "commit metadata") -> CommitMetadata:
        """Commit metadata from its JSON object (or an Avro record with the same field names, nulls dropped)."""
        r = _Reader(obj, file_name)
        stats: dict[str, list[WriteStat]] = {}
        for partition, items in (r.obj_or_none("partitionToWriteStats") or {}).items():
            where = f"{file_name}: partitionToWriteStats[{partition!r}]"
            if items is None:
                items = []
            if not isinstance(items, list):
                raise TimelineError(f"{where}: expected a list of write stats, found {type(items).__name__}")
            stats[partition] = [WriteStat.from_dict(s, f"{where}[{i}]") for i, s in enumerate(items)]
        extra = r.obj_or_none("extraMetadata") or {}
        bad = [k for k, v in extra.items() if v is not None and not isinstance(v, str)]
        if bad:
            raise TimelineError(f"{file_name}: extraMetadata[{bad[0]!r}] = {extra[bad[0]]!r}, expected a string")
        replace = None
        if "partitionToReplaceFileIds" in r.obj:
            replace = {}
            for partition, ids in (r.obj_or_none("partitionToReplaceFileIds") or {}).items():
                if ids is None:
                    ids = []
                if not (isinstance(ids, list) and all(isinstance(x, str) for x in ids)):
                    raise TimelineError(
                        f"{file_name}: partitionToReplaceFileIds[{partition!r}] = {ids!r}, expected a list of file ids"
                    )
                replace[partition] = list(ids)
        operation = r.string("operationType") if "operationType" in r.obj else "UNKNOWN"
        return CommitMetadata(stats, r.boolean("compacted"), dict(extra), operation, replace)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_dict() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            out["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in self.partition_to_replace_file_ids.items()}
        return out

    def to_json(self) -> bytes:
        """UTF-8 JSON exactly as Hudi's Jackson writer lays it out."""
        return jackson_pretty(self.to_dict()).encode("utf-8")

    def to_avro(self, *, replace: bool | None = None) -> bytes:
        """The Avro container file Hudi 1.x writes (timeline layout 2, `CommitMetadataSerDeV2`): a
        HoodieReplaceCommitMetadata for a completed replacecommit (`replace`, by default when it replaces file
        groups), else a HoodieCommitMetadata (also the inflight workload profile of a replacecommit). The JSON
        field names are the Avro ones; fields only the JSON form has (recordsStats) are left out."""
        from hudi_engine.timeline.avro_models import write_avro_metadata

        replace = self.is_replace if replace is None else replace
        record: dict[str, Any] = {
            "partitionToWriteStats": {p: [_avro_write_stat(s) for s in stats]
                                      for p, stats in self.partition_to_write_stats.items()},
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "version": None,  # what Hudi 1.x writes
            "operationType": self.operation_type,
        }
        if replace:
            record["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in (self.partition_to_replace_file_ids or {}).items()}
        return write_avro_metadata("HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata", record,
                                   checked=False)

    # --- what readers ask of it -------------------------------------------------------------------------

    @property
    def is_replace(self) -> bool:
        return self.partition_to_replace_file_ids is not None

    @property
    def schema_json(self) -> str | None:
        """The writer schema text in extraMetadata (without meta fields), None if absent or empty."""
        text = self.extra_metadata.get(self.SCHEMA_KEY)
        return text if text and text.strip() else None

    @property
    def schema(self) -> dict | None:
        """The writer Avro schema as a dict, None if absent or empty."""
        text = self.schema_json
        if text is None:
            return None
        try:
            parsed = json.loads(text)
        except ValueError as e:
            raise TimelineError(f"commit metadata extraMetadata.schema is not valid JSON ({e})") from None
        if not isinstance(parsed, dict):
            raise TimelineError(f"commit metadata extraMetadata.schema is {type(parsed).__name__}, expected a record")
        return parsed

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def add_write_stat(self, partition_path: str, stat: WriteStat) -> None:
        self.partition_to_write_stats.setdefault(partition_path, []).append(stat)

    def written_paths(self) -> list[str]:
        """Paths (relative to the base path) of every file this commit wrote; workload-profile stats have none."""
        return [s.path for s in self.write_stats() if s.path]

    def file_ids_by_partition(self) -> dict[str, set[str]]:
        """File ids this commit wrote to, per partition (empty ids of workload profiles left out)."""
        return {p: {s.file_id for s in stats if s.file_id} for p, stats in self.partition_to_write_stats.items()}

    def replaced_file_ids(self) -> dict[str, set[str]]:
        """File groups this (replace) commit replaces, per partition; empty for a plain commit."""
        return {p: set(ids) for p, ids in (self.partition_to_replace_file_ids or {}).items()}

    @property
    def total_records_written(self) -> int:
        return sum(s.num_writes for s in self.write_stats())


# HoodieWriteStat's Avro fields that are JSON fields under the same name; the rest are filled in `_avro_write_stat`.
_AVRO_STAT_EXTRA = {"totalLogFiles": None, "prevBaseFile": None, "totalLogReadTimeMs": 0, "numUpdates": 0}


def _avro_write_stat(stat: WriteStat) -> dict[str, Any]:
    out = {k: v for k, v in stat.to_dict().items() if k != "recordsStats"}
    if stat.is_delta:
        out["logFiles"] = list(stat.log_files or [])
    out.update(_AVRO_STAT_EXTRA)
    return out

