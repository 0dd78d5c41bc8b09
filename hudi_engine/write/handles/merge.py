"""`MergeHandle`: COW update of one file group, its latest base file merged with incoming records into a new base
file version of the same file id. Unchanged rows keep their commit time and sequence number."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_engine.arrays import one_chunk
from hudi_engine.errors import WriteError
from hudi_engine.file_naming import BaseFileName
from hudi_engine.io.base_file import BaseFileWriter, footer_of, read_base_file, record_keys_of
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.merge import DeleteBatch, MergeResult, merge_records
from hudi_engine.timeline.commit_metadata import RecordKeys, RuntimeStats, WriteStat
from hudi_engine.write.cdc import ChangeLog, cdc_log_file_name
from hudi_engine.write.handles.base import HeldWriteHandle
from hudi_engine.write.handles.context import WriteContext, relative_path
from hudi_engine.write.handles.records import (
    FILE_NAME,
    RECORD_KEY,
    conform,
    constant,
    split_deleted,
)
from hudi_engine.write.index import row_positions
from hudi_engine.write.markers import IOType

MERGE_BATCH_ROWS = 64 * 1024  # base rows decoded at a time by the merge handle


class MergeHandle(HeldWriteHandle):
    """COW update of one file group: its latest base file merged with the records written to it into a new base
    file version.

    The records are already pre-combined (one record per key). Each meets the stored record of its key with the
    table's payload (`merge.merge_records`); keys not in the file are inserts into this file group (small-file
    packing). Keys given to `delete` and records flagged `_hoodie_is_deleted` remove rows. Rows the incoming
    records do not touch are carried over with their old `_hoodie_commit_time` and `_hoodie_commit_seqno`;
    every row gets the new file name. The caller passes the file group's latest *committed* base file.

    The base file is streamed: its key column is read first to find each incoming key's row, then the file is
    decoded `MERGE_BATCH_ROWS` rows at a time, merged with the incoming records of those rows and written out;
    inserts follow the old rows. Merged rows are handed to the file a row group at a time (sized as the create
    handle sizes them). The handle so holds the file group's incoming records, one batch of the old file and one row
    group of the new one.

    Records and deletes are held until `close`: the file group's incoming keys are all matched against the base
    file's before it is read.
    """


    def __init__(self, ctx: WriteContext, partition_path: str, file_id: str, base_file_path: str) -> None:
        super().__init__(ctx, partition_path, file_id)
        self.base_file_path = base_file_path
        self.old_name = BaseFileName.parse(base_file_path.rsplit("/", 1)[-1])
        if self.old_name.file_id != file_id:
            raise WriteError(f"merge_handle: base file {base_file_path} belongs to file group "
                             f"{self.old_name.file_id}, not {file_id}")

    def close(self) -> list[WriteStat]:
        """Write the new base file version: its one write stat."""
        ctx, partition_path, file_id, base_file_path = self.ctx, self.partition_path, self.file_id, self.base_file_path
        old_name = self.old_name
        records = self._written()
        records, flagged = split_deleted(records)
        name = str(BaseFileName(file_id, str(ctx.write_token), ctx.instant_time))
        incoming_keys = _record_keys(ctx, records)
        delete_keys = self._delete_keys()
        if flagged.num_rows:
            delete_keys = pa.concat_arrays([delete_keys, _record_keys(ctx, flagged)])
        if not records.num_rows and not len(delete_keys):
            raise WriteError(f"merge_handle: no records and no deletes for file group {file_id} in {partition_path!r}")

        with ctx.location.storage.open_input_file(base_file_path) as f:
            parquet = pq.ParquetFile(f)  # keys, footer and rows read through one open file
            file_columns = ctx.stored_columns(parquet.schema_arrow.empty_table(), old_name.instant_time).column_names
            dropped = [c for c in file_columns if c not in ctx.arrow_schema.names]
            if dropped:  # rewriting the file without them would silently lose data
                raise WriteError(f"base file {base_file_path} has columns {dropped} that the writer schema "
                                 f"{ctx.schema.get('name')} lacks; dropping columns is not supported, add them to the records")
            old_keys = record_keys_of(parquet, base_file_path) if ctx.config.populate_meta_fields else \
                ctx.key_of(read_base_file(ctx.location.storage, base_file_path, columns=_key_columns(ctx)))
            n_old = len(old_keys)
            incoming_row = row_positions(incoming_keys, old_keys)
            delete_row = row_positions(delete_keys, old_keys) if len(delete_keys) else np.zeros(0, np.int64)
            keeps_every_row = ctx.payload.custom is None and not (delete_row >= 0).any()
            bloom_prefix = None
            if keeps_every_row and ctx.config.populate_meta_fields:
                # Every old row is kept, in file order, ahead of the inserts: the old file's bloom filter already holds
                # the first keys, exactly as rebuilding would leave it; only the inserts are added (the writer checks).
                bloom = footer_of(parquet, base_file_path, bloom_max_entries=ctx.bloom.max_entries).bloom_filter
                bloom_prefix = None if bloom is None else (bloom, n_old)
            ctx.inflight.create_marker(partition_path, name, IOType.MERGE)
            writer = self._base_writer(name, bloom_prefix)
            changes = ctx.change_log()  # HoodieMergeHandleWithChangeLog on a CDC table
            if ctx.payload.custom is not None:  # a user payload merges the whole file at once (its own order)
                incoming = self._prepare(records, name)
                old = conform(ctx.stored_columns(read_base_file(ctx.location.storage, base_file_path),
                                                 old_name.instant_time), ctx.arrow_schema, base_file_path)
                merged = _merge(ctx, old, incoming, delete_keys).records
                writer.write(_named(ctx, merged, name))
                if changes is not None:
                    changes.add_merge(old, merged, _met(ctx, merged, incoming))
                kept_old = int(pc.sum(pc.is_in(ctx.key_of(merged), value_set=old_keys)).as_py() or 0)
                updated = int((incoming_row >= 0).sum())
            else:
                kept_old = updated = 0
                start = 0
                # Row groups as the create handle cuts them (`FileSizing.row_group_bytes`) at the old file's bytes
                # per row: one per decoded batch would make row groups of 64k rows, a file 16% larger and slower.
                per_row = max(f.size(), 1) / max(n_old, 1)
                groups = _RowGroups(writer, max(MERGE_BATCH_ROWS, int(ctx.files.row_group_bytes / per_row)))
                for batch in parquet.iter_batches(batch_size=MERGE_BATCH_ROWS):
                    old = conform(ctx.stored_columns(pa.Table.from_batches([batch]), old_name.instant_time),
                                  ctx.arrow_schema, base_file_path)
                    end = start + old.num_rows
                    mine = np.flatnonzero((incoming_row >= start) & (incoming_row < end))
                    gone = (delete_row >= start) & (delete_row < end)
                    incoming = self._prepare(records.take(pa.array(mine)), name, indices=mine)
                    result = _merge(ctx, old, incoming, delete_keys.filter(pa.array(gone)))
                    groups.write(_named(ctx, result.records, name))
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
                    inserts = self._prepare(records.take(pa.array(rows)), name, indices=rows)
                    groups.write(inserts)
                    if changes is not None:
                        changes.add_inserts(inserts)
                groups.flush()
        writer.write(ctx.arrow_schema.empty_table())  # a file group whose every row was deleted: an empty version
        result_file = self._publish(writer, name)
        # HoodieMergeHandleWithChangeLog.close: no CDC file when no stored row is left (all deleted, or the file
        # group's rows are all new): the extractor reads those from the base files.
        cdc_stats = _write_change_log(ctx, partition_path, file_id, changes) \
            if changes is not None and kept_old > 0 else None
        return [WriteStat(
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
            runtime_stats=RuntimeStats(total_upsert_time=self._elapsed_ms()),
            cdc_stats=cdc_stats,
            record_keys=_record_keys_changed(ctx, incoming_keys, incoming_row, old_keys, delete_row,
                                             result_file.num_rows - kept_old, n_old - kept_old),
        )]


def _record_keys_changed(ctx: WriteContext, incoming_keys: pa.Array, incoming_row: np.ndarray, old_keys: pa.Array,
                         delete_row: np.ndarray, inserted: int, deleted: int) -> RecordKeys | None:
    """The keys the merge added (incoming keys the old file lacks) and removed (deleted keys it held), for the
    record index; None (the driver diffs the files) without a record index, with a user payload (it may drop or keep
    any row), or when the counts of rows inserted and deleted say the merge did something else."""
    if not ctx.reports_record_keys or ctx.payload.custom is not None:
        return None
    added = incoming_keys.filter(pa.array(incoming_row < 0))
    removed_rows = np.unique(delete_row[delete_row >= 0])
    if len(added) != inserted or len(removed_rows) != deleted:
        return None
    return RecordKeys(added, old_keys.take(pa.array(removed_rows)))


class _RowGroups:
    """Tables given to a base file writer, handed on as one row group once they hold `rows` rows."""

    def __init__(self, writer: BaseFileWriter, rows: int) -> None:
        self.writer, self.rows = writer, rows
        self._pending: list[pa.Table] = []
        self._count = 0

    def write(self, table: pa.Table) -> None:
        self._pending.append(table)
        self._count += table.num_rows
        if self._count >= self.rows:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self.writer.write(pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0])
            self._pending, self._count = [], 0


def merge_handle(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    base_file_path: str,
    records: pa.Table,
    *,
    deletes: pa.Array | pa.Table | list | None = None,
) -> WriteStat:
    """`MergeHandle` in one call: `records` and `deletes` (record keys) merged into the base file at `base_file_path`."""
    handle = MergeHandle(ctx, partition_path, file_id, base_file_path)
    handle.write(records)
    if deletes is not None:
        handle.delete(deletes)
    return handle.close()[0]


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
        rows = rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME, constant(name, rows.num_rows))
    return rows
