"""Change data capture: the CDC log file a merge handle writes beside the new base file of a CDC-enabled table
(`hoodie.table.cdc.enabled=true`), as Hudi 0.14/0.15 write it (docs/cdc.md).

Hudi writes change data only where it cannot be inferred from the data files (`HoodieCDCExtractor.parseWriteStat`):
a new file group (all inserts), a MOR log file and a replaced file group are read as they are. What a handle rewrites
in place, a file group merged into a new base file version, gets a CDC log file
(`HoodieMergeHandleWithChangeLog`): one record per changed record, `i` (insert), `u` (update) or `d` (delete),
in the shape the table's `hoodie.table.cdc.supplemental.logging.mode` asks for (`HoodieCDCUtils`,
`HoodieCDCLogger`):

* OP_KEY_ONLY: `op`, `record_key`;
* DATA_BEFORE: `op`, `record_key`, `before` (the stored record, meta fields left out);
* DATA_BEFORE_AFTER (the default): `op`, `ts_ms` (the instant), `before`, `after` (the record written).

The file is `.<fileId>_<instant>.log.1_<writeToken>.cdc`: a log file of the new slice (base instant = the
instant of the merge) holding CDC_DATA blocks (an Avro data block under block type 6) whose header carries
INSTANT_TIME and the CDC schema. Its path and size go to the write stat's `cdcStats`.

Everything here is vectorized over Arrow tables: the changes of a batch are found by key lookups, never per record.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from enum import StrEnum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.arrays import one_chunk
from hudi_engine.errors import TableConfigError
from hudi_engine.file_naming import CDC_SUFFIX, LOG_FILE_BASE_VERSION, LogFileName
from hudi_engine.io.avro_codec import encode_records_framed_with_ends
from hudi_engine.io.log_block import AVRO_DATA_BLOCK_VERSION, BlockType, HeaderKey, LogBlock
from hudi_engine.schema import META_COLUMNS, avro_to_arrow_schema, schema_to_json
from hudi_engine.table_config import TableConfig

CDC_ENABLED = "hoodie.table.cdc.enabled"
CDC_LOGGING_MODE = "hoodie.table.cdc.supplemental.logging.mode"

# HoodieCDCUtils field names; HoodieCDCOperation values.
OP, TS, BEFORE, AFTER, RECORD_KEY = "op", "ts_ms", "before", "after", "record_key"
INSERT, UPDATE, DELETE = "i", "u", "d"
COMMIT_TIME = META_COLUMNS[0]
_BLOCK_PREFIX = struct.Struct(">ii")  # content version, record count (HoodieAvroDataBlock)


class LoggingMode(StrEnum):
    """`HoodieCDCSupplementalLoggingMode` (0.14/0.15 names; `HoodieTableConfig.cdcSupplementalLoggingMode` reads the
    property upper-cased, so 0.13's lower-case spellings are the same modes)."""

    OP_KEY_ONLY = "OP_KEY_ONLY"
    DATA_BEFORE = "DATA_BEFORE"
    DATA_BEFORE_AFTER = "DATA_BEFORE_AFTER"


DEFAULT_LOGGING_MODE = LoggingMode.DATA_BEFORE_AFTER  # HoodieTableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE


def parse_logging_mode(value: str | None, where: str) -> LoggingMode:
    """A `hoodie.table.cdc.supplemental.logging.mode` value as Hudi 0.14/0.15 reads it (case-insensitive; unset: the
    default). Pre-release names (`cdc_op_key`, `cdc_data_before`, `cdc_data_before_after`), which Hudi 0.14 cannot
    read either, are refused with the name to use instead."""
    if value is None or value == "":
        return DEFAULT_LOGGING_MODE
    try:
        return LoggingMode(value.strip().upper())
    except ValueError:
        pass
    old = {"cdc_op_key": "OP_KEY_ONLY", "cdc_data_before": "DATA_BEFORE", "cdc_data_before_after": "DATA_BEFORE_AFTER"}
    hint = f"; this pre-0.13 name is {old[value.strip().lower()]} in Hudi 0.14/0.15" \
        if value.strip().lower() in old else ""
    raise TableConfigError(
        f"{where}: {CDC_LOGGING_MODE}={value!r} is not a supplemental logging mode Hudi 0.14/0.15 reads "
        f"(expected one of {', '.join(m.value for m in LoggingMode)}){hint}; set it to one of those in "
        "hoodie.properties")


def logging_mode_of(config: TableConfig, where: str) -> LoggingMode | None:
    """The table's CDC logging mode, or None when CDC is off."""
    if not config.cdc_enabled:
        return None
    return parse_logging_mode(config.props.get(CDC_LOGGING_MODE), where)


def cdc_schema(mode: LoggingMode, data_schema: dict) -> dict:
    """The Avro schema of the CDC records (`HoodieCDCUtils.schemaBySupplementalLoggingMode`).

    OP_KEY_ONLY is the fixed record `Record` {op: [string, null], record_key: [string, null]}
    (`CDC_SCHEMA_OP_AND_RECORDKEY_STRING`). The others are the record `CDC` without namespace (`createCDCSchema`:
    `Schema.createRecord("CDC", null, "", false)`) of nullable strings and nullable images of `data_schema`, the
    writer schema without meta fields; every field has doc "" and default null. The after image refers to the
    image record by its full name, as Avro prints a named type the second time.
    """
    if mode is LoggingMode.OP_KEY_ONLY:
        return {"type": "record", "name": "Record", "fields": [
            {"name": OP, "type": ["string", "null"]}, {"name": RECORD_KEY, "type": ["string", "null"]}]}

    def nullable(name: str, kind: object) -> dict:
        return {"name": name, "type": ["null", kind], "doc": "", "default": None}

    image_name = f"{data_schema['namespace']}.{data_schema['name']}" if data_schema.get("namespace") \
        else data_schema["name"]
    if mode is LoggingMode.DATA_BEFORE:
        fields = [nullable(OP, "string"), nullable(RECORD_KEY, "string"), nullable(BEFORE, data_schema)]
    else:
        fields = [nullable(OP, "string"), nullable(TS, "string"), nullable(BEFORE, data_schema),
                  nullable(AFTER, image_name)]
    return {"type": "record", "name": "CDC", "fields": fields}


class ChangeLog:
    """The changes one handle makes to one file group, encoded as CDC records as they are found (the records of a
    file group's changes are held encoded, as `HoodieCDCLogger` holds them until its block is full).

    `add_merge` takes one batch of stored rows and what the merge made of them; `add_inserts` the rows of new
    keys. Images are the data columns (meta columns left out, `HoodieCDCLogger.removeCommitMetadata`)."""

    def __init__(self, mode: LoggingMode, instant_time: str, data_schema: dict,
                 key_of: Callable[[pa.Table], pa.Array]) -> None:
        self.mode = mode
        self.instant_time = instant_time
        self.schema = cdc_schema(mode, data_schema)
        self.arrow = avro_to_arrow_schema(self.schema)
        self.data_names = [f["name"] for f in data_schema["fields"]]
        self.key_of = key_of
        self.schema_json = schema_to_json(self.schema)
        self._bodies: list[bytes] = []
        self._ends: list[np.ndarray] = []
        self.count = 0

    def add_merge(self, old: pa.Table, merged: pa.Table, rewritten: pa.Array | None = None) -> None:
        """The changes of one batch of stored rows `old` merged into `merged` (the rows written in their place,
        plus any inserts): a stored key missing from `merged` was deleted; one the merge rewrote (the row carries
        this instant's commit time) was updated, with the stored row as before image. A stored row the merge kept
        as it was (the incoming record lost to it: `HoodieMergeHandle.writeUpdateRecord` copies the old record)
        is no change. Keys `merged` holds that `old` does not are inserts. `rewritten` (per row of `merged`)
        replaces the commit-time test where rows keep their own commit times (compaction) or have none (meta
        fields off)."""
        old_keys = _string(self.key_of(old))
        new_keys = _string(self.key_of(merged))
        in_new = pc.is_in(old_keys, value_set=new_keys)
        deleted = pc.invert(in_new)
        if pc.any(deleted).as_py():
            self._add(DELETE, old_keys.filter(deleted), old.filter(deleted), None)
        pos = pc.index_in(new_keys, value_set=old_keys)
        matched = pc.is_valid(pos)
        if rewritten is None:
            if COMMIT_TIME not in merged.column_names or 0 < merged.num_rows == merged.column(COMMIT_TIME).null_count:
                raise ValueError("ChangeLog.add_merge: rows without commit times need `rewritten`")
            rewritten = pc.fill_null(pc.equal(merged.column(COMMIT_TIME), self.instant_time), False)
        updated = pc.and_(matched, rewritten)
        if pc.any(updated).as_py():
            before = old.take(pc.filter(pos, updated))
            self._add(UPDATE, new_keys.filter(updated), before, merged.filter(updated))
        inserted = pc.invert(matched)
        if pc.any(inserted).as_py():
            self.add_inserts(merged.filter(inserted))

    def add_inserts(self, rows: pa.Table) -> None:
        """Rows of keys the file group did not hold."""
        if rows.num_rows:
            self._add(INSERT, _string(self.key_of(rows)), None, rows)

    def _add(self, op: str, keys: pa.Array, before: pa.Table | None, after: pa.Table | None) -> None:
        n = len(keys)
        columns: dict[str, pa.Array] = {OP: pa.repeat(pa.scalar(op, pa.string()), n)}
        if self.mode is LoggingMode.DATA_BEFORE_AFTER:
            columns[TS] = pa.repeat(pa.scalar(self.instant_time, pa.string()), n)
        else:
            columns[RECORD_KEY] = keys
        if self.mode is not LoggingMode.OP_KEY_ONLY:
            columns[BEFORE] = self._image(before, n)
        if self.mode is LoggingMode.DATA_BEFORE_AFTER:
            columns[AFTER] = self._image(after, n)
        table = pa.Table.from_arrays(list(columns.values()), schema=self.arrow)
        body, ends = encode_records_framed_with_ends(table, self.schema)
        self._bodies.append(body)
        self._ends.append(ends)
        self.count += n

    def _image(self, rows: pa.Table | None, n: int) -> pa.Array:
        image_type = self.arrow.field(BEFORE).type
        if rows is None:
            return pa.nulls(n, image_type)
        columns = [one_chunk(rows.column(f.name)).cast(f.type) if f.name in rows.column_names else pa.nulls(n, f.type)
                   for f in image_type]
        return pa.StructArray.from_arrays(columns, fields=list(image_type))

    def blocks(self, max_size: int) -> list[LogBlock]:
        """CDC_DATA blocks of the records in order, each at most `max_size` bytes of framed records (at least one
        record), as `HoodieCDCLogger` flushes a block once its records reach the log block max size. Without
        changes, one block of no records: `HoodieCDCLogger.close` flushes its (empty) buffer all the same."""
        header = {HeaderKey.INSTANT_TIME: self.instant_time, HeaderKey.SCHEMA: self.schema_json}
        if not self.count:
            return [LogBlock(BlockType.CDC_DATA, header, _BLOCK_PREFIX.pack(AVRO_DATA_BLOCK_VERSION, 0))]
        body = b"".join(self._bodies)
        offsets = np.cumsum([0] + [len(b) for b in self._bodies[:-1]], dtype=np.int64)
        ends = np.concatenate([e + o for e, o in zip(self._ends, offsets)])
        blocks: list[LogBlock] = []
        first, start = 0, 0
        while first < len(ends):
            last = max(first + 1, int(np.searchsorted(ends, start + max(1, max_size), side="right")))
            content = _BLOCK_PREFIX.pack(AVRO_DATA_BLOCK_VERSION, last - first) + body[start:int(ends[last - 1])]
            blocks.append(LogBlock(BlockType.CDC_DATA, dict(header), content))
            first, start = last, int(ends[last - 1])
        return blocks


def cdc_log_file_name(file_id: str, instant_time: str, write_token: str) -> str:
    """`.<fileId>_<instant>.log.1_<token>.cdc`: `HoodieWriteHandle.createLogWriter(instantTime, CDC_LOGFILE_SUFFIX)`
    opens the first log version of the slice the merge creates, the suffix patched onto the write token."""
    return str(LogFileName(file_id, instant_time, LOG_FILE_BASE_VERSION, write_token, suffix=CDC_SUFFIX))


def _string(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return one_chunk(a).cast(pa.string())

