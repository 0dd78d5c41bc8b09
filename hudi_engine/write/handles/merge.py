"""`MergeHandle`: COW update of one file group, its latest base file merged with incoming records into a new base
file version of the same file id. Unchanged rows keep their commit time and sequence number."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_engine.arrays import one_chunk
from hudi_engine.errors import WriteError
from hudi_engine.file_naming import BaseFileName
from hudi_engine.io.base_file import (
    BaseFileWriter,
    KeyPrefix,
    dictionary_choices,
    dictionary_strings,
    file_schema,
    footer_of,
    read_base_file,
    record_keys_of,
)
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.merge import DeleteBatch, MergeResult, merge_records
from hudi_engine.payload import Combine
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

    The base file is streamed: its key column is read first to find the incoming record each stored row meets,
    then the file is decoded `MERGE_BATCH_ROWS` rows at a time, and only the rows an incoming record meets go
    through the payload's merge (`merge_records`; no merge at all where the payload keeps one of the two records
    whole): one `take` per column lays out the batch with the other rows as they were. Inserts follow the old rows.
    Merged rows are handed to the file a row group at a time (sized as the create handle sizes them). The handle so
    holds the file group's incoming records, one decoded batch and one row group of the new file. Where a key is stored twice, or given twice (records not pre-combined), every row of each batch
    goes through the merge, as a user payload's whole file does.

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
            # Per stored row, the incoming record it meets (None: an incoming key repeats, or is stored twice):
            # the streamed merge below then takes only those rows to `merge_records`.
            meets = _meets(incoming_keys, old_keys) if ctx.payload.custom is None else None
            incoming_row = _incoming_rows(meets, len(incoming_keys)) if meets is not None else \
                row_positions(incoming_keys, old_keys)
            delete_row = row_positions(delete_keys, old_keys) if len(delete_keys) else np.zeros(0, np.int64)
            keeps_every_row = ctx.payload.custom is None and not (delete_row >= 0).any()
            key_prefix = None
            if keeps_every_row and ctx.config.populate_meta_fields:
                # Every old row is kept, in file order, ahead of the inserts: the old file's bloom filter already holds
                # the first keys, exactly as rebuilding would leave it, and its footer has their range; only the
                # inserts are added (the writer checks the filter's type and sizing).
                footer = footer_of(parquet, base_file_path, bloom_max_entries=ctx.bloom.max_entries)
                key_prefix = KeyPrefix(n_old, footer.bloom_filter, footer.min_key, footer.max_key)
            ctx.inflight.create_marker(partition_path, name, IOType.MERGE)
            # A column the old file holds plain (near-unique, a decimal, all null) is written plain again without
            # judging its values (the costly judgement); the others are judged on the merged rows, as parquet-mr does.
            choices = dictionary_choices(parquet.metadata)
            plain = {c: False for c, kept in choices.items() if not kept}
            writer = self._base_writer(name, key_prefix, plain)
            changes = ctx.change_log()  # HoodieMergeHandleWithChangeLog on a CDC table
            # Where merged rows go only to the new file, its few-valued meta columns and the string columns the old
            # file dictionary-encodes are read, laid out and written as dictionary indices (`base_file.file_schema`),
            # never decoded to strings; the whole-batch merge and the change log take strings. (Not the ordering
            # field: `_incoming_wins` compares its values.)
            for_file = meets is not None and changes is None and ctx.config.populate_meta_fields
            rows_schema = ctx.arrow_schema
            if for_file:
                strings = dictionary_strings(choices, parquet.schema_arrow, ctx.arrow_schema)
                rows_schema = file_schema(ctx.arrow_schema, [c for c in strings if c != ctx.ordering_field])
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
                # Row groups as the create handle cuts them (`FileSizing.row_group_bytes`) at the old file's bytes
                # per row: one per decoded batch would make row groups of 64k rows, a file 16% larger and slower.
                per_row = max(f.size(), 1) / max(n_old, 1)
                groups = _RowGroups(writer, max(MERGE_BATCH_ROWS, int(ctx.files.row_group_bytes / per_row)))
                deleted = _deleted_rows(delete_keys, old_keys) if meets is not None else None
                if for_file:
                    present = parquet.schema_arrow.names
                    parquet = pq.ParquetFile(f, metadata=parquet.metadata, read_dictionary=[
                        c.name for c in rows_schema if pa.types.is_dictionary(c.type) and c.name in present])
                if any(c.num_chunks > 1 for c in records.columns):  # a take from chunks concatenates them each time
                    records = records.combine_chunks()
                batches = self._merged_batches(
                    parquet, records, name, meets, deleted, incoming_row, delete_row, delete_keys,
                    old_keys if ctx.config.populate_meta_fields else None, rows_schema)
                for done in batches:
                    groups.write(done.merged)
                    if changes is not None:
                        changes.add_merge(done.old, done.merged, _met(ctx, done.merged, done.incoming))
                    kept_old += done.kept
                    updated += done.updated
                # Keys the file does not hold are inserts into this file group (pre-combined already), after the old
                # rows and a chunk at a time.
                new = np.flatnonzero(incoming_row < 0)
                for i in range(0, len(new), MERGE_BATCH_ROWS):
                    rows = new[i:i + MERGE_BATCH_ROWS]
                    inserts = self._prepare(records.take(pa.array(rows)), name, indices=rows,
                                            schema=rows_schema if for_file else None)
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

    def _merged_batches(self, parquet: pq.ParquetFile, records: pa.Table, name: str, meets: np.ndarray | None,
                        deleted: np.ndarray | None, incoming_row: np.ndarray, delete_row: np.ndarray,
                        delete_keys: pa.Array, stored_keys: pa.Array | None, schema: pa.Schema) -> Iterator[_Merged]:
        """The base file decoded `MERGE_BATCH_ROWS` rows at a time, each batch merged with the incoming records
        of its rows: `_merge_rows` where every stored row meets one incoming record at most (`meets`), else the
        whole batch through `merge_records`. `stored_keys`: the file's key column, read already (not decoded
        again). `schema`: the rows' (`base_file.file_schema` where columns stay dictionaries)."""
        ctx, start = self.ctx, 0
        stored = parquet.schema_arrow
        key_at = stored.get_field_index(RECORD_KEY) if stored_keys is not None else -1
        columns = None if key_at < 0 else [c for c in stored.names if c != RECORD_KEY]
        for batch in parquet.iter_batches(batch_size=MERGE_BATCH_ROWS, columns=columns, use_threads=False):
            table = pa.Table.from_batches([batch])
            if key_at >= 0:
                assert stored_keys is not None
                table = table.add_column(key_at, stored.field(key_at), stored_keys.slice(start, batch.num_rows))
            old = conform(ctx.stored_columns(table, self.old_name.instant_time), schema, self.base_file_path)
            end = start + old.num_rows
            if meets is not None:
                merged, incoming, matched = self._merge_rows(old, records, meets[start:end],
                                                             None if deleted is None else deleted[start:end], name)
                yield _Merged(old, merged, incoming, merged.num_rows, matched)
            else:
                mine = np.flatnonzero((incoming_row >= start) & (incoming_row < end))
                gone = (delete_row >= start) & (delete_row < end)
                incoming = self._prepare(records.take(pa.array(mine)), name, indices=mine)
                result = _merge(ctx, old, incoming, delete_keys.filter(pa.array(gone)))
                yield _Merged(old, _named(ctx, result.records, name), incoming, result.base_kept or 0,
                              result.base_matched or 0)
            start = end

    def _merge_rows(self, old: pa.Table, records: pa.Table, meets: np.ndarray, deleted: np.ndarray | None,
                    name: str) -> tuple[pa.Table, pa.Table, int]:
        """One batch of stored rows `old` merged with the incoming records they meet (`meets`: per row, the index of
        its incoming record in `records`, -1 for none; `deleted`: rows a delete removes, None for none): (the rows
        written in their place, the prepared incoming records, how many stored rows met one).

        Only the rows an incoming record meets go through `merge_records`: the merge of a key depends on its stored
        row and its incoming record alone, and a delete always wins (it carries no ordering value), so the other
        rows are copied as they are and deleted rows dropped. One `take` on the batch and the merged rows then lays
        the output out in stored order."""
        ctx = self.ctx
        n = old.num_rows
        hit = meets >= 0
        if deleted is not None:
            hit &= ~deleted
        rows = np.flatnonzero(hit)
        picked = meets[rows]
        dictionary = pa.types.is_dictionary(old.schema.field(FILE_NAME).type)
        incoming = self._prepare(records.take(pa.array(picked)), name, indices=picked,
                                 schema=old.schema if dictionary else None)
        if not len(rows) and deleted is None:
            return _named(ctx, old, name), incoming, 0
        layout = np.arange(n, dtype=np.int64)
        parts = [old]
        if len(rows):
            wins = _incoming_wins(ctx, old, rows, incoming)
            if wins is not None:  # each row is its stored or its incoming record, whole: no merge to run
                layout[rows[wins]] = n + np.flatnonzero(wins)
                parts.append(incoming)
            else:
                # The payload's merge takes strings; its rows are laid out as the batch's (dictionaries) after it.
                result = _merge(ctx, conform(old.take(pa.array(rows)), ctx.arrow_schema, self.base_file_path),
                                conform(incoming, ctx.arrow_schema, self.base_file_path), None)
                if result.base_kept != len(rows) or result.records.num_rows != len(rows):  # the merge's rule broke
                    raise WriteError(f"merge_handle: {len(rows)} stored rows of {self.base_file_path} met incoming "
                                     f"records but the merge returned {result.records.num_rows}; please report this")
                layout[rows] = n + np.arange(len(rows), dtype=np.int64)
                parts.append(conform(result.records, old.schema, self.base_file_path))
        if deleted is not None:
            layout = layout[~deleted]
        # A column at a time, the batch's array and the merged rows' in one (a table's `take` across two chunks
        # costs half again as much); every row names the new file, and where none is deleted each keeps its key.
        at = pa.array(layout)
        meta = ctx.config.populate_meta_fields

        def column(c: str) -> pa.Array:
            if c == FILE_NAME and meta:
                return constant(name, len(layout), dictionary=dictionary)
            if c == RECORD_KEY and meta and deleted is None:
                return one_chunk(old.column(c))
            return pa.concat_arrays([one_chunk(p.column(c)) for p in parts]).take(at)
        return pa.Table.from_arrays([column(c) for c in old.column_names], schema=old.schema), incoming, len(rows)


# Ordering types whose `>` is the order `merge_records` ranks them in (floats are not: NaN ranks above every number).
_ORDERED_TYPES = (pa.types.is_integer, pa.types.is_timestamp, pa.types.is_date, pa.types.is_time, pa.types.is_string,
                  pa.types.is_large_string, pa.types.is_decimal, pa.types.is_boolean)


def _incoming_wins(ctx: WriteContext, old: pa.Table, rows: np.ndarray, incoming: pa.Table) -> np.ndarray | None:
    """Where a payload keeps one of the two records whole (`OverwriteWithLatestAvroPayload`: the incoming one;
    `DefaultHoodieRecordPayload`, `EventTimeAvroPayload`: the stored one when its ordering value is strictly
    greater, a null one the lowest), whether the incoming record of each of `rows` wins; row i of `incoming` meets
    stored row `rows[i]`. None for payloads that merge fields, or ordering values `>` does not order as the merge."""
    payload = ctx.payload
    if payload.precombine_coalesce or payload.combine not in (Combine.OVERWRITE, Combine.ORDERED):
        return None
    wins = np.ones(len(rows), dtype=bool)
    field = ctx.ordering_field
    if payload.combine is Combine.OVERWRITE or field is None:
        return wins
    if field not in old.column_names or not any(is_(old.schema.field(field).type) for is_ in _ORDERED_TYPES):
        return None
    stored = one_chunk(old.column(field)).take(pa.array(rows))
    given = one_chunk(incoming.column(field))
    stored_greater = pc.and_kleene(pc.is_valid(stored),
                                   pc.or_kleene(pc.is_null(given), pc.fill_null(pc.greater(stored, given), False)))
    return ~stored_greater.to_numpy(zero_copy_only=False)


def _meets(incoming_keys: pa.Array, old_keys: pa.Array) -> np.ndarray | None:
    """Per stored key, the index of the incoming key equal to it, -1 for none; None when an incoming key repeats or
    one is stored twice (the whole-batch merge then handles what every copy meets)."""
    if not len(incoming_keys):
        return np.full(len(old_keys), -1, dtype=np.int64)
    n = len(incoming_keys)
    ascending = n < 2 or pc.all(pc.less(incoming_keys.slice(0, n - 1), incoming_keys.slice(1))).as_py()
    if not ascending and pc.count_distinct(incoming_keys).as_py() != n:  # a write task's come sorted: no hashing
        return None
    meets = pc.index_in(old_keys, value_set=incoming_keys).fill_null(-1).to_numpy(zero_copy_only=False)
    meets = meets.astype(np.int64, copy=False)
    met = meets[meets >= 0]
    if len(met) and np.bincount(met).max() > 1:
        return None
    return meets


def _incoming_rows(meets: np.ndarray, n_incoming: int) -> np.ndarray:
    """Per incoming key, its stored row (-1: not stored), from `_meets`."""
    out = np.full(n_incoming, -1, dtype=np.int64)
    rows = np.flatnonzero(meets >= 0)
    out[meets[rows]] = rows
    return out


def _deleted_rows(delete_keys: pa.Array, old_keys: pa.Array) -> np.ndarray | None:
    """Which stored rows a delete removes (every copy of a key stored twice), None for none."""
    if not len(delete_keys):
        return None
    gone = pc.is_in(old_keys, value_set=delete_keys).to_numpy(zero_copy_only=False)
    return gone if gone.any() else None


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


@dataclass(frozen=True)
class _Merged:
    """One batch of the base file (`old`) and what the merge writes in its place: kept and rewritten stored rows,
    the prepared incoming records they met, how many stored rows are kept and how many of those met a record."""

    old: pa.Table
    merged: pa.Table
    incoming: pa.Table
    kept: int
    updated: int


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
    """Every row of a merged file names that file (as a dictionary where the rows carry one: `base_file.file_schema`)."""
    if ctx.config.populate_meta_fields and rows.num_rows:
        at = rows.schema.get_field_index(FILE_NAME)
        named = constant(name, rows.num_rows, dictionary=pa.types.is_dictionary(rows.schema.field(at).type))
        rows = rows.set_column(at, rows.schema.field(at), named)
    return rows
