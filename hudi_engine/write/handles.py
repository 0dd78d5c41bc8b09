"""Write handles: one file group's Arrow records -> one new data file -> one `WriteStat` (FORMAT.md, Write sequence).

A handle is what a Spark task runs on the records of one bucket. It is a pure function of a `WriteContext`
(storage, base path, table config, instant, writer schema, the task's write token) and the records of one file
group: no global state, never more than one file group in memory. Each handle creates the instant's marker for
its file *before* the file (so a crash can be rolled back), writes the file in one go, and returns the stat the
driver puts in the commit metadata.

* `create_handle`: a new file group, `<fileId>_<token>_<instant>.parquet` (inserts; MOR inserts too, since
  hudi-rs and Java's index only see keys that live in base files: FORMAT.md, Uncommitted files).
* `merge_handle`: COW update of a file group: the latest base file merged with the incoming records into a new
  base file version of the same file id. Unchanged rows keep their commit time and sequence number.
* `append_handle`: MOR update/delete of a file group: one new log file `.<fileId>_<base>.log.<v>_<token>` holding
  Avro data blocks and a delete block. A new file per commit, never an append to someone else's file (FORMAT.md,
  Log file names).
"""
from __future__ import annotations

import dataclasses
import struct
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_engine.arrays import one_chunk
from hudi_engine.config.write_config import BloomConfig, FileSizing, LogConfig
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.file_naming import BaseFileName, LogFileName, WriteToken, is_log_file_name, new_file_id
from hudi_engine.file_slice_reader import align_to_schema
from hudi_engine.io.avro_codec import encode_records_framed_with_ends
from hudi_engine.io.base_file import (
    BaseFileWriter,
    BaseFileWriteResult,
    footer_of,
    read_base_file,
    record_keys_of,
)
from hudi_engine.io.log_block import (
    AVRO_DATA_BLOCK_VERSION,
    BlockType,
    LogBlock,
    build_avro_data_block,
    build_delete_block,
)
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.keygen import key_generator_for
from hudi_engine.location import TableLocation
from hudi_engine.merge import IS_DELETED_FIELD, DeleteBatch, MergeResult, merge_records
from hudi_engine.payload import Payload, payload_for
from hudi_engine.schema import META_COLUMNS, add_meta_fields, arrow_to_avro_schema, avro_to_arrow_schema, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, RuntimeStats, WriteStat
from hudi_engine.timeline.instant import State
from hudi_engine.write.cdc import ChangeLog, LoggingMode, cdc_log_file_name, logging_mode_of
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.markers import IOType

COMMIT_TIME, SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_COLUMNS
LOG_BASE_VERSION = 1  # HoodieLogFile.LOGFILE_BASE_VERSION
_BLOCK_PREFIX = struct.Struct(">ii")  # content version, record count


@dataclass(frozen=True)
class WriteContext:
    """What every handle of one write shares; `for_task` gives each task attempt its own write token.

    `schema` is the writer Avro schema *without* meta fields (the commit's `extraMetadata.schema`). Records are
    conformed to it: columns matched by name and cast, missing columns null, other columns (helpers of the
    caller) dropped.
    """

    location: TableLocation
    config: TableConfig
    instant_time: str
    schema: dict
    write_token: WriteToken = WriteToken(0, 0, 0)
    files: FileSizing = FileSizing()
    bloom: BloomConfig = BloomConfig()
    log: LogConfig = LogConfig()
    row_group_size: int | None = None
    payload_class: str | None = None  # None: the table's hoodie.compaction.payload.class

    @staticmethod
    def create(location: TableLocation, config: TableConfig, instant_time: str,
               schema: pa.Schema | dict, **options) -> "WriteContext":
        """Context for `schema` given as Arrow data columns (named the Spark way: FORMAT.md, Avro schema naming) or
        as an Avro record."""
        if isinstance(schema, pa.Schema):
            schema = arrow_to_avro_schema(schema, config.name, with_meta=False)
        else:
            schema = {k: v for k, v in schema.items()}
            schema["fields"] = [f for f in schema["fields"] if f["name"] not in META_COLUMNS]
        return WriteContext(location, config, instant_time, schema, **options)

    def for_task(self, partition_id: int, stage_id: int = 0, attempt_id: int = 0) -> "WriteContext":
        return dataclasses.replace(self, write_token=WriteToken(partition_id, stage_id, attempt_id))

    @cached_property
    def inflight(self) -> InflightInstant:
        """The instant this context writes: its markers and the checks that it is still this writer's."""
        return InflightInstant(self.location, self.instant_time)

    @property
    def task_partition_id(self) -> int:
        return self.write_token.partition_id

    @cached_property
    def schema_with_meta(self) -> dict:
        return add_meta_fields(self.schema)

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        """Arrow schema of the rows written: the five meta columns, then the data columns."""
        return avro_to_arrow_schema(self.schema_with_meta)

    @cached_property
    def cdc_mode(self) -> LoggingMode | None:
        """The table's CDC supplemental logging mode; None when `hoodie.table.cdc.enabled` is off."""
        return logging_mode_of(self.config, self.location.base_path)

    def change_log(self) -> ChangeLog | None:
        """A fresh change log of a merge into one file group, or None on a table without CDC."""
        mode = self.cdc_mode
        return None if mode is None else ChangeLog(mode, self.instant_time, self.schema, self.key_of)

    @cached_property
    def keygen(self):
        cfg = self.config
        return key_generator_for(cfg.key_generator_class, cfg.record_key_fields, cfg.partition_field_specs, cfg.props,
                                 hive_style=cfg.hive_style_partitioning, url_encode=cfg.url_encode_partitioning)

    @cached_property
    def payload(self) -> Payload:
        return payload_for(self.payload_class or self.config.payload_class)

    @property
    def ordering_field(self) -> str | None:
        field = self.config.precombine_field
        return field if field and field in self.arrow_schema.names else None

    def key_of(self, table: pa.Table) -> pa.Array:
        """Record keys of stored rows: the meta column, or the key generator when meta fields are off."""
        if self.config.populate_meta_fields:
            return one_chunk(table.column(RECORD_KEY))
        return one_chunk(self.keygen.record_keys(table))

    def full_path(self, partition_path: str, file_name: str) -> str:
        return self.location.join(partition_path, file_name)


def relative_path(partition_path: str, file_name: str) -> str:
    """A write stat's `path`: `<partition>/<file>`, or just `<file>` for a non-partitioned table."""
    return f"{partition_path}/{file_name}" if partition_path else file_name


# --------------------------------------------------------------------------------------------- records


def prepare_records(
    table: pa.Table,
    *,
    instant: str,
    keygen=None,
    partition_path: str | None = None,
    file_name: str,
    task_partition_id: int,
    start_index: int = 0,
    indices: np.ndarray | None = None,
    populate_meta_fields: bool = True,
) -> pa.Table:
    """`table` with the five meta columns first (FORMAT.md, Meta columns), data columns after, in their order.

    Record keys come from a `_hoodie_record_key` column when `table` has one (computed upstream by the same key
    generator), else from `keygen`. The partition path is `partition_path` (one file group lives in one
    partition; a `_hoodie_partition_path` column, if present, must agree) or, when None, the column / `keygen`.
    `_hoodie_commit_seqno` is `<instant>_<taskPartitionId>_<index>`, index counting from `start_index` (or
    `indices`: each row's own, for rows picked out of a larger batch).
    `_hoodie_file_name` is what the caller passes: the base file name, or the file id for log records.
    With `populate_meta_fields=False` the meta columns are all null (keys are still checked).
    """
    n = table.num_rows
    data_names = [c for c in table.column_names if c not in META_COLUMNS]
    data = table.select(data_names)
    if RECORD_KEY in table.column_names:
        keys = one_chunk(table.column(RECORD_KEY)).cast(pa.string())
    elif keygen is not None:
        keys = one_chunk(keygen.record_keys(data))
    else:
        raise WriteError(f"prepare_records: no {RECORD_KEY} column and no key generator to compute record keys")
    if keys.null_count:
        row = pc.index(keys.is_null(), True).as_py()
        raise WriteError(f"record key is null at row {row} of {n}: every record needs a key")

    if partition_path is not None:
        if PARTITION_PATH in table.column_names and n:
            given = one_chunk(table.column(PARTITION_PATH))
            wrong = pc.invert(pc.fill_null(pc.equal(given, partition_path), False))
            if pc.any(wrong).as_py():
                row = pc.index(wrong, True).as_py()
                raise WriteError(
                    f"record {keys[row].as_py()!r} (row {row}) has partition path {given[row].as_py()!r}; "
                    f"this handle writes partition {partition_path!r}"
                )
        parts = _constant(partition_path, n)
    elif PARTITION_PATH in table.column_names:
        parts = one_chunk(table.column(PARTITION_PATH)).cast(pa.string())
    elif keygen is not None:
        parts = one_chunk(keygen.partition_paths(data))
    else:
        raise WriteError(f"prepare_records: no partition path, no {PARTITION_PATH} column and no key generator")

    if populate_meta_fields:
        if indices is None:
            indices = np.arange(start_index, start_index + n, dtype=np.int64)
        index = pa.array(indices).cast(pa.string())
        seqno = pc.binary_join_element_wise(f"{instant}_{task_partition_id}_", index, "")
        meta = [_constant(instant, n), seqno, keys, parts, _constant(file_name, n)]
    else:
        meta = [pa.nulls(n, pa.string()) for _ in META_COLUMNS]
    return pa.Table.from_arrays([*meta, *data.columns], names=[*META_COLUMNS, *data_names])


def _constant(value: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.string()), n)


def conform(table: pa.Table, schema: pa.Schema, what: str) -> pa.Table:
    """`table` laid out as `schema`: columns by name, cast; absent ones null; others dropped."""
    try:
        return align_to_schema(table, schema, what)
    except HudiError as e:
        raise WriteError(str(e)) from e


def _split_deleted(ctx: WriteContext, records: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(records to write, records flagged `_hoodie_is_deleted = true`), which Hudi turns into deletes."""
    if IS_DELETED_FIELD not in records.column_names or records.num_rows == 0:
        return records, records.slice(0, 0)
    flag = pc.fill_null(one_chunk(records.column(IS_DELETED_FIELD)).cast(pa.bool_()), False)
    return records.filter(pc.invert(flag)), records.filter(flag)


def _delete_keys(deletes: pa.Array | pa.ChunkedArray | pa.Table | list | None) -> pa.Array:
    if deletes is None:
        return pa.array([], pa.string())
    if isinstance(deletes, pa.Table):
        col = RECORD_KEY if RECORD_KEY in deletes.column_names else "record_key"
        if col not in deletes.column_names:
            raise WriteError(f"deletes table has no {RECORD_KEY} or record_key column: {deletes.column_names}")
        deletes = deletes.column(col)
    if isinstance(deletes, list):
        deletes = pa.array(deletes, pa.string())
    keys = one_chunk(deletes).cast(pa.string())
    if keys.null_count:
        raise WriteError(f"deletes hold {keys.null_count} null record keys; expected keys of existing records")
    return keys


def _ms_since(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)


# --------------------------------------------------------------------------------------------- create


class CreateHandle:
    """New file groups of one partition, written a chunk at a time: rows go to row groups of about an eighth of the
    max file size, and a new file group starts when the next chunk would pass `hoodie.parquet.max.file.size`
    (Hudi's create handle rolls over the same way). Holds one file's bytes and one chunk, never the whole input.

    Records flagged `_hoodie_is_deleted` are dropped (an insert of a deleted record writes nothing).
    `file_id` names the first file group (a BUCKET index bucket: its only one, it never rolls over).
    """

    def __init__(self, ctx: WriteContext, partition_path: str, *, file_id: str | None = None,
                 roll_over: bool = True, record_size: int | None = None) -> None:
        self.ctx, self.partition_path = ctx, partition_path
        self.next_file_id = file_id
        self.roll_over = roll_over
        self.bytes_per_row = float(record_size or ctx.files.record_size_estimate)
        self.stats: list[WriteStat] = []
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._measured = False
        self._writer: BaseFileWriter | None = None
        self._file_id = self._name = ""
        self._t0 = 0.0

    @property
    def chunk_rows(self) -> int:
        """Rows per row group: an eighth of the max file size (at most the parquet block size) at the measured
        bytes per row; until a chunk was written, an eighth of that (the estimate may be far off)."""
        target = min(self.ctx.files.block_size, self.ctx.files.max_file_size // 8)
        rows = max(1, int(target / max(1.0, self.bytes_per_row)))
        return rows if self._measured else max(1, rows // 8)

    def write(self, records: pa.Table) -> None:
        """Buffer `records`; full chunks go to the file (so small batches still make row groups of a chunk)."""
        records, _ = _split_deleted(self.ctx, records)
        if records.num_rows:
            self._buffer.append(records)
            self._buffered += records.num_rows
        while self._buffered >= self.chunk_rows:
            self._flush(self.chunk_rows)

    def _flush(self, rows: int) -> None:
        table = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        chunk, rest = table.slice(0, rows), table.slice(rows)
        self._buffer, self._buffered = ([rest] if rest.num_rows else []), rest.num_rows
        if self._writer is not None and self.roll_over and \
                self._writer.size + chunk.num_rows * self.bytes_per_row > self.ctx.files.max_file_size:
            self._close_file()
        if self._writer is None:
            self._open_file()
        assert self._writer is not None
        self._writer.write(_prepare(self.ctx, chunk, self.partition_path, self._name, self._writer.num_rows))
        if self._writer.size:
            self.bytes_per_row = self._writer.size / self._writer.num_rows
            self._measured = True

    def _open_file(self) -> None:
        self._t0 = time.monotonic()
        self._file_id = self.next_file_id or new_file_id()
        self.next_file_id = None
        self._name = str(BaseFileName(self._file_id, str(self.ctx.write_token), self.ctx.instant_time))
        self.ctx.inflight.create_marker(self.partition_path, self._name, IOType.CREATE)
        self._writer = _base_writer(self.ctx, self.ctx.full_path(self.partition_path, self._name))

    def _close_file(self) -> None:
        assert self._writer is not None
        result = _publish(self.ctx, self._writer, self.partition_path, self._name)
        self._writer = None
        self.stats.append(WriteStat(
            file_id=self._file_id,
            path=relative_path(self.partition_path, self._name),
            prev_commit=NULL_COMMIT,
            num_writes=result.num_rows,
            num_inserts=result.num_rows,
            total_write_bytes=result.size,
            partition_path=self.partition_path,
            file_size_in_bytes=result.size,
            runtime_stats=RuntimeStats(total_create_time=_ms_since(self._t0)),
        ))

    def close(self) -> list[WriteStat]:
        while self._buffered:
            self._flush(min(self._buffered, self.chunk_rows))
        if self._writer is not None:
            self._close_file()
        return self.stats


def create_handle(
    ctx: WriteContext,
    partition_path: str,
    records: pa.Table,
    *,
    file_id: str | None = None,
) -> WriteStat:
    """Write `records` as the first base file of one new file group in `partition_path` (no roll-over)."""
    handle = CreateHandle(ctx, partition_path, file_id=file_id, roll_over=False)
    handle.write(records)
    stats = handle.close()
    if not stats:
        raise WriteError(f"create_handle: no records to write into partition {partition_path!r}")
    return stats[0]


def _prepare(ctx: WriteContext, records: pa.Table, partition_path: str, file_name: str,
             start_index: int = 0, indices: np.ndarray | None = None) -> pa.Table:
    keygen = None if RECORD_KEY in records.column_names else ctx.keygen
    rows = prepare_records(
        records,
        instant=ctx.instant_time,
        keygen=keygen,
        partition_path=partition_path,
        file_name=file_name,
        task_partition_id=ctx.task_partition_id,
        start_index=start_index,
        indices=indices,
        populate_meta_fields=ctx.config.populate_meta_fields,
    )
    return conform(rows, ctx.arrow_schema, f"records for {relative_path(partition_path, file_name)}")


def _base_writer(ctx: WriteContext, path: str, bloom_prefix=None) -> BaseFileWriter:
    return base_writer(ctx.location.storage, path, bloom=ctx.bloom, files=ctx.files,
                       populate_meta_fields=ctx.config.populate_meta_fields, row_group_size=ctx.row_group_size,
                       bloom_prefix=bloom_prefix)


def base_writer(storage: Storage, path: str, *, bloom: BloomConfig, files: FileSizing, populate_meta_fields: bool,
                row_group_size: int | None = None, bloom_prefix=None) -> BaseFileWriter:
    """A base file writer with the write's bloom filter and parquet settings (handles and compaction alike)."""
    return BaseFileWriter(
        storage, path,
        bloom_filter_type=bloom.filter_type if populate_meta_fields else None,
        bloom_num_entries=bloom.num_entries, bloom_fpp=bloom.fpp, bloom_max_entries=bloom.max_entries,
        compression=files.compression, row_group_size=row_group_size, bloom_prefix=bloom_prefix,
    )


def write_base(storage: Storage, path: str, rows: pa.Table, *, bloom: BloomConfig, files: FileSizing,
               populate_meta_fields: bool, row_group_size: int | None = None, bloom_prefix=None):
    """One base file of `rows` in one go."""
    writer = base_writer(storage, path, bloom=bloom, files=files, populate_meta_fields=populate_meta_fields,
                         row_group_size=row_group_size, bloom_prefix=bloom_prefix)
    writer.write(rows)
    return writer.close()


# --------------------------------------------------------------------------------------------- merge

MERGE_BATCH_ROWS = 64 * 1024  # base rows decoded at a time by the merge handle


def merge_handle(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    base_file_path: str,
    records: pa.Table,
    *,
    deletes: pa.Array | pa.Table | list | None = None,
) -> WriteStat:
    """COW update of one file group: its latest base file merged with `records` into a new base file version.

    `records` is already pre-combined (one record per key). Each meets the stored record of its key with the
    table's payload (`merge.merge_records`); keys not in the file are inserts into this file group (small-file
    packing). `deletes` (record keys) and records flagged `_hoodie_is_deleted` remove rows. Rows the incoming
    records do not touch are carried over with their old `_hoodie_commit_time` and `_hoodie_commit_seqno`;
    every row gets the new file name. The caller passes the file group's latest *committed* base file.

    The base file is streamed: its key column is read first to find each incoming key's row, then the file is
    decoded `MERGE_BATCH_ROWS` rows at a time, merged with the incoming records of those rows and written out;
    inserts follow the old rows. The handle so holds the file group's incoming records, one batch of the old file
    and the new file's bytes.
    """
    t0 = time.monotonic()
    old_name = BaseFileName.parse(base_file_path.rsplit("/", 1)[-1])
    if old_name.file_id != file_id:
        raise WriteError(f"merge_handle: base file {base_file_path} belongs to file group {old_name.file_id}, not {file_id}")
    records, flagged = _split_deleted(ctx, records)
    name = str(BaseFileName(file_id, str(ctx.write_token), ctx.instant_time))
    incoming_keys = _record_keys(ctx, records)
    delete_keys = _delete_keys(deletes)
    if flagged.num_rows:
        delete_keys = pa.concat_arrays([delete_keys, _record_keys(ctx, flagged)])
    if not records.num_rows and not len(delete_keys):
        raise WriteError(f"merge_handle: no records and no deletes for file group {file_id} in {partition_path!r}")

    with ctx.location.storage.open_input_file(base_file_path) as f:
        parquet = pq.ParquetFile(f)  # keys, footer and rows read through one open file
        dropped = [c for c in parquet.schema_arrow.names if c not in ctx.arrow_schema.names]
        if dropped:  # rewriting the file without them would silently lose data
            raise WriteError(f"base file {base_file_path} has columns {dropped} that the writer schema "
                             f"{ctx.schema.get('name')} lacks; dropping columns is not supported, add them to the records")
        old_keys = record_keys_of(parquet, base_file_path) if ctx.config.populate_meta_fields else \
            ctx.key_of(read_base_file(ctx.location.storage, base_file_path, columns=_key_columns(ctx)))
        n_old = len(old_keys)
        incoming_row = pc.index_in(incoming_keys, value_set=old_keys).fill_null(-1) \
            .to_numpy(zero_copy_only=False).astype(np.int64)
        # index_in hashes the whole value set first: ~2 ms for 100,000 keys, spared when nothing is deleted.
        delete_row = pc.index_in(delete_keys, value_set=old_keys).fill_null(-1).to_numpy(zero_copy_only=False) \
            if len(delete_keys) else np.zeros(0, np.int64)
        keeps_every_row = ctx.payload.custom is None and not (delete_row >= 0).any()
        bloom_prefix = None
        if keeps_every_row and ctx.config.populate_meta_fields:
            # Every old row is kept, in file order, ahead of the inserts: the old file's bloom filter already holds
            # the first keys, exactly as rebuilding would leave it; only the inserts are added (the writer checks).
            bloom = footer_of(parquet, base_file_path, bloom_max_entries=ctx.bloom.max_entries).bloom_filter
            bloom_prefix = None if bloom is None else (bloom, n_old)
        ctx.inflight.create_marker(partition_path, name, IOType.MERGE)
        writer = _base_writer(ctx, ctx.full_path(partition_path, name), bloom_prefix)
        changes = ctx.change_log()  # HoodieMergeHandleWithChangeLog on a CDC table
        if ctx.payload.custom is not None:  # a user payload merges the whole file at once (its own order)
            incoming = _prepare(ctx, records, partition_path, name)
            old = conform(read_base_file(ctx.location.storage, base_file_path), ctx.arrow_schema, base_file_path)
            merged = _merge(ctx, old, incoming, delete_keys).records
            writer.write(_named(ctx, merged, name))
            if changes is not None:
                changes.add_merge(old, merged, _met(ctx, merged, incoming))
            kept_old = int(pc.sum(pc.is_in(ctx.key_of(merged), value_set=old_keys)).as_py() or 0)
            updated = int((incoming_row >= 0).sum())
        else:
            kept_old = updated = 0
            start = 0
            for batch in parquet.iter_batches(batch_size=MERGE_BATCH_ROWS):
                old = conform(pa.Table.from_batches([batch]), ctx.arrow_schema, base_file_path)
                end = start + old.num_rows
                mine = np.flatnonzero((incoming_row >= start) & (incoming_row < end))
                gone = (delete_row >= start) & (delete_row < end)
                incoming = _prepare(ctx, records.take(pa.array(mine)), partition_path, name, indices=mine)
                result = _merge(ctx, old, incoming, delete_keys.filter(pa.array(gone)))
                writer.write(_named(ctx, result.records, name))
                if changes is not None:
                    changes.add_merge(old, result.records, _met(ctx, result.records, incoming))
                kept_old += result.base_kept or 0
                updated += result.base_matched or 0
                start = end
            # Keys the file does not hold are inserts into this file group (pre-combined already), after the old
            # rows and a chunk at a time.
            new = np.flatnonzero(incoming_row < 0)
            for i in range(0, len(new), MERGE_BATCH_ROWS):
                rows = new[i:i + MERGE_BATCH_ROWS]
                inserts = _prepare(ctx, records.take(pa.array(rows)), partition_path, name, indices=rows)
                writer.write(inserts)
                if changes is not None:
                    changes.add_inserts(inserts)
    writer.write(ctx.arrow_schema.empty_table())  # a file group whose every row was deleted: an empty version
    result_file = _publish(ctx, writer, partition_path, name)
    # HoodieMergeHandleWithChangeLog.close: no CDC file when no stored row is left (all deleted, or the file
    # group's rows are all new): the extractor reads those from the base files.
    cdc_stats = _write_change_log(ctx, partition_path, file_id, changes) \
        if changes is not None and kept_old > 0 else None
    return WriteStat(
        file_id=file_id,
        path=relative_path(partition_path, name),
        prev_commit=old_name.instant_time,
        num_writes=result_file.num_rows,
        num_deletes=n_old - kept_old,
        num_update_writes=updated,
        num_inserts=result_file.num_rows - kept_old,
        total_write_bytes=result_file.size,
        partition_path=partition_path,
        file_size_in_bytes=result_file.size,
        runtime_stats=RuntimeStats(total_upsert_time=_ms_since(t0)),
        cdc_stats=cdc_stats,
    )


def _met(ctx: WriteContext, merged: pa.Table, incoming: pa.Table) -> pa.Array | None:
    """Without meta fields no commit time tells a rewritten row from a kept one: the rows an incoming record met
    count as rewritten (docs/cdc.md). None (the commit-time test) otherwise."""
    if ctx.config.populate_meta_fields:
        return None
    return pc.is_in(ctx.key_of(merged), value_set=ctx.key_of(incoming))


def _write_change_log(ctx: WriteContext, partition_path: str, file_id: str, changes: ChangeLog) -> dict[str, int]:
    """Write a merge's CDC log file (`HoodieCDCLogger.close`) and return its `cdcStats`: relative path -> size.

    Its marker is a CREATE marker: the file is wholly this instant's (its base instant is the instant), so a
    rollback, ours or Hudi's `MarkerBasedRollbackStrategy`, deletes it outright."""
    name = cdc_log_file_name(file_id, ctx.instant_time, str(ctx.write_token))
    data = encode_log_file(changes.blocks(ctx.log.block_max_size))
    ctx.inflight.create_marker(partition_path, name, IOType.CREATE)
    path = ctx.full_path(partition_path, name)
    if not ctx.location.storage.create_exclusive(path, data):
        raise WriteError(f"CDC log file {path} exists already: another attempt of this task wrote it; retry the write")
    ctx.inflight.confirm_written(partition_path, name)
    return {relative_path(partition_path, name): len(data)}


def _record_keys(ctx: WriteContext, records: pa.Table) -> pa.Array:
    """Keys of incoming records: their key column (computed upstream by the same key generator), else the key
    generator's."""
    if RECORD_KEY in records.column_names:
        return one_chunk(records.column(RECORD_KEY)).cast(pa.string())
    return one_chunk(ctx.keygen.record_keys(records))


def _publish(ctx: WriteContext, writer: BaseFileWriter, partition_path: str, name: str) -> BaseFileWriteResult:
    """Close a base file and confirm the instant is still this writer's. A rollback that took the instant while
    the file was being written removes what it finds (a half-written file included): the loss, not the failed
    close, is then the error."""
    try:
        result = writer.close()
    except WriteError:
        ctx.inflight.confirm_written(partition_path, name)
        raise
    ctx.inflight.confirm_written(partition_path, name)
    return result


def _key_columns(ctx: WriteContext) -> list[str]:
    """The columns record keys are read from: the key meta column, or the key fields where meta fields are off."""
    if ctx.config.populate_meta_fields:
        return [RECORD_KEY]
    return [f.split(":")[0].split(".")[0] for f in ctx.config.record_key_fields]


def _merge(ctx: WriteContext, old: pa.Table, incoming: pa.Table, delete_keys: pa.Array | None) -> MergeResult:
    batches: list = [incoming] if incoming.num_rows else []
    if delete_keys is not None and len(delete_keys):
        batches.append(DeleteBatch(delete_keys))  # no ordering value: a delete always wins (FORMAT.md, Merging)
    return merge_records(old, batches, key_of=ctx.key_of, ordering_field=ctx.ordering_field, payload=ctx.payload)


def _named(ctx: WriteContext, rows: pa.Table, name: str) -> pa.Table:
    """Every row of a merged file names that file."""
    if ctx.config.populate_meta_fields and rows.num_rows:
        rows = rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME, _constant(name, rows.num_rows))
    return rows


# --------------------------------------------------------------------------------------------- append


def list_log_files(location: TableLocation, partition_path: str, file_id: str,
                   base_instant: str | None = None, *, since: str | None = None) -> list[LogFileName]:
    """Log files of one file group named by `base_instant` (a version-6 slice, or one 1.x delta commit's), or by any
    instant from `since` on (a 1.x slice), in Hudi's log order."""
    found = []
    for entry in location.storage.list_dir(location.join(partition_path)):
        if entry.is_dir or not is_log_file_name(entry.name):
            continue
        log = LogFileName.parse(entry.name)
        named = log.base_instant == base_instant if since is None else log.base_instant >= since
        if log.file_id == file_id and named and log.extension == "log":
            found.append(log)
    return sorted(found, key=lambda f: f.sort_key)


def append_handle(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    base_instant: str,
    records: pa.Table | None,
    *,
    deletes: pa.Array | pa.Table | list | None = None,
    base_file_name: str | None = None,
) -> WriteStat:
    """MOR update/delete of one file group: a new log file in the slice at `base_instant`.

    `base_instant` is the slice's base instant: the latest base file's commit time, or the pending compaction
    instant when a compaction is scheduled on the group (see `log_base_instant`). The log version is one above
    the slice's highest. The file holds AVRO_DATA blocks (cut at `log_block_max_size` bytes of records) and then
    one DELETE block for `deletes` and records flagged `_hoodie_is_deleted`; every block's header carries
    INSTANT_TIME and the writer schema with meta fields. Deletes carry ordering value Integer 0 ("delete wins",
    the value Spark SQL writes and hudi-rs decodes: FORMAT.md, Delete blocks). `base_file_name` is the slice's base
    file, for the stat.
    """
    t0 = time.monotonic()
    if records is None:
        records = pa.table({RECORD_KEY: pa.array([], pa.string())})
    records, flagged = _split_deleted(ctx, records)
    # Hudi 1.x names a log file by the delta commit writing it (its slice is found by completion time).
    name_instant = ctx.instant_time if ctx.config.log_files_named_by_delta_commit else base_instant
    # The slice's log files before this one, as Hudi's append handle lists them in the stat (Java's CDC reads the
    # slice from them): on 1.x, named by their delta commits, those from the slice's base instant on. One listing.
    in_slice = list_log_files(ctx.location, partition_path, file_id, since=base_instant)
    existing = [f for f in in_slice if f.base_instant == name_instant]
    version = max((f.version for f in existing), default=LOG_BASE_VERSION - 1) + 1

    rows = _prepare(ctx, records, partition_path, file_id) if records.num_rows else None
    delete_keys = _delete_keys(deletes)
    if flagged.num_rows:
        delete_keys = pa.concat_arrays([delete_keys, ctx.key_of(_prepare(ctx, flagged, partition_path, file_id))])
    if rows is None and not len(delete_keys):
        raise WriteError(f"append_handle: nothing to write to file group {file_id} in partition {partition_path!r}")

    blocks = []
    if rows is not None:
        blocks += avro_data_blocks(rows, ctx.schema_with_meta, ctx.instant_time, ctx.log.block_max_size)
    if len(delete_keys):
        keys = [(k, partition_path, None) for k in delete_keys.to_pylist()]  # None: IntWrapper(0)
        blocks.append(build_delete_block(keys, ctx.instant_time, schema_to_json(ctx.schema_with_meta)))
    data = encode_log_file(blocks)

    while True:  # a concurrent writer of this file group (optimistic concurrency) may take a version first
        name = str(LogFileName(file_id, name_instant, version, str(ctx.write_token)))
        ctx.inflight.create_marker(partition_path, name, IOType.APPEND)
        path = ctx.full_path(partition_path, name)
        if ctx.location.storage.create_exclusive(path, data):
            break
        ctx.inflight.remove_marker(partition_path, name, IOType.APPEND)
        version += 1
    ctx.inflight.confirm_written(partition_path, name)
    n = rows.num_rows if rows is not None else 0
    return WriteStat(
        file_id=file_id,
        path=relative_path(partition_path, name),
        prev_commit=base_instant,  # Hudi's HoodieAppendHandle: the slice's base instant
        num_writes=n,
        num_deletes=len(delete_keys),
        num_update_writes=n,
        total_write_bytes=len(data),
        partition_path=partition_path,
        file_size_in_bytes=len(data),
        runtime_stats=RuntimeStats(total_upsert_time=_ms_since(t0)),
        log_version=version,
        log_offset=0,
        base_file=base_file_name or "",
        log_files=[str(f) for f in in_slice if str(f) != name] + [name],
    )


def avro_data_blocks(rows: pa.Table, avro_schema: dict, instant_time: str, max_size: int) -> list[LogBlock]:
    """AVRO_DATA blocks of `rows` in order, each holding at most `max_size` bytes of framed records (at least one
    record), as Hudi's append handle flushes a block once it is full. Every record is encoded once."""
    if rows.num_rows == 0:
        return []
    if max_size <= 0:
        raise WriteError(f"hoodie.logfile.data.block.max.size={max_size}: expected a positive number of bytes")
    # The header exactly as io.log_block builds it for a data block of this schema and instant.
    header = build_avro_data_block(rows.slice(0, 0), avro_schema, instant_time).header
    # One contiguous chunk per column: the encoder works column by column (records of a task arrive in batches).
    body, ends = encode_records_framed_with_ends(rows.combine_chunks(), avro_schema)
    blocks: list[LogBlock] = []
    first, start = 0, 0  # first record and byte offset of the next block
    while first < len(ends):
        # The most records whose framed bytes fit in max_size, at least one (Hudi flushes when a block is full).
        last = max(first + 1, int(np.searchsorted(ends, start + max_size, side="right")))
        content = _BLOCK_PREFIX.pack(AVRO_DATA_BLOCK_VERSION, last - first) + body[start:int(ends[last - 1])]
        blocks.append(LogBlock(BlockType.AVRO_DATA, dict(header), content))
        first, start = last, int(ends[last - 1])
    return blocks


def log_base_instant(timeline, partition_path: str, file_id: str, latest_base_instant: str) -> str:
    """The base instant a new log file of a file group takes: a pending compaction's instant if one is
    scheduled on the group (its plan lists the file id), else the latest base instant (FORMAT.md, Log file names)."""
    for instant in reversed(timeline.pending_compactions()):
        plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        for op in plan.get("operations") or []:
            if op.get("fileId") == file_id and (op.get("partitionPath") or "") == partition_path:
                return instant.timestamp
    return latest_base_instant
