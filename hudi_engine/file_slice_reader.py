"""Reading one file slice: its base file, or base + log files merged (FORMAT.md: File-system view, Log scanning,
Merging).

One slice at a time, so memory is bounded by the largest slice, never the table.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import HudiError, LogFormatError, SchemaError, UnsupportedMergeError, UnsupportedReadError
from hudi_engine.file_group import FileSlice
from hudi_engine.fs_view import Visibility
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.io.base_file import read_base_file
from hudi_engine.io.log_block import BlockType, data_block_records, delete_block_keys, ordering_wrapper_for
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.keygen import key_generator_for
from hudi_engine.merge import IS_DELETED_FIELD, DeleteBatch, LogBatch, merge_records
from hudi_engine.payload import OVERWRITE_WITH_LATEST, Payload, payload_for
from hudi_engine.storage import Storage
from hudi_engine.table_config import BOOTSTRAP_BASE_PATH, TableConfig

# HoodieTimeline.METADATA_BOOTSTRAP_INSTANT_TS: the instant of the skeleton base files a METADATA_ONLY bootstrap
# writes (record keys and meta columns only; FULL_RECORD bootstrap's full files carry 00000000000002).
METADATA_BOOTSTRAP_INSTANT = "00000000000001"


def refuse_skeleton_files(config: TableConfig, location: object, slices: Sequence[FileSlice | None]) -> None:
    """A bootstrapped table's skeleton base files hold the meta columns only; Java reads each row's data columns
    from the source file the bootstrap index maps it to, which this engine does not. Refused (by every query that
    would read one: snapshot, incremental, CDC) rather than read as rows of nulls."""
    if not config.bootstrap_base_path:
        return
    bases = [s.base_file for s in slices if s is not None and s.base_file is not None]
    skeletons = [b.path for b in bases if b.instant_time == METADATA_BOOTSTRAP_INSTANT]
    if skeletons:
        raise UnsupportedReadError(
            f"table {config.name} at {location}: cannot read the skeleton base files of a bootstrapped table "
            f"({len(skeletons)} read here, e.g. {skeletons[0]}): their data columns are in the bootstrap source "
            f"({BOOTSTRAP_BASE_PATH}={config.bootstrap_base_path}), which this engine does not read; way out: "
            "read it with Java Hudi (docs/table-features.md)")

@dataclass(frozen=True, slots=True)
class SliceReadContext:
    """What every slice of one query shares."""

    storage: Storage
    schema: pa.Schema  # the table schema, meta columns first
    key_of: Callable[[pa.Table], pa.Array]  # record keys of rows holding `key_columns`
    key_columns: tuple[str, ...]  # columns `key_of` needs
    ordering_field: str | None
    payload: Payload
    visibility: Visibility
    java_merger: str | None = None  # why log records cannot be merged here: the table's merger or payload (Java only)
    table_name: str = ""
    column_ids: ColumnIds | None = None  # schema-on-read history: files' columns found by id
    # The instant `schema` is as of, when not the visibility's (a CDC query reads each commit's states with the
    # schema of the range's end).
    schema_instant: str | None = None

    def file_names(self, file_instant: str) -> dict[str, str | None] | None:
        """The query's columns as a file written at `file_instant` names them (schema-on-read), or None."""
        if self.column_ids is None:
            return None
        return self.column_ids.file_names(self.schema_instant or self.visibility.latest_instant, file_instant)

    @staticmethod
    def for_table(storage: Storage, config: TableConfig, schema: pa.Schema, vis: Visibility, *,
                  column_ids: ColumnIds | None = None) -> "SliceReadContext":
        """How a reader merges slices of the table with `config`: keys from the meta column, or from the key
        generator when meta fields are off; the table's ordering field and payload."""
        key_of: Callable[[pa.Table], pa.Array]
        if config.populate_meta_fields:
            key_columns: tuple[str, ...] = ("_hoodie_record_key",)

            def key_of(t: pa.Table) -> pa.Array:
                return t.column("_hoodie_record_key")
        else:
            keygen = key_generator_for(config.key_generator_class, config.record_key_fields,
                                       config.partition_field_specs, config.props,
                                       hive_style=config.hive_style_partitioning,
                                       url_encode=config.url_encode_partitioning)
            key_columns = tuple(config.record_key_fields)
            key_of = keygen.stored_record_keys  # keys as they were written, ambiguous or not
        if config.is_mor and len(config.ordering_fields) > 1:
            raise HudiError(
                f"table {config.name!r}: ordering fields {config.ordering_fields} (hoodie.table.ordering.fields): "
                "merging log records by several ordering fields is not supported; expected one"
            )
        ordering = config.precombine_field if config.precombine_field in schema.names else None
        from hudi_engine.table_features import java_only_merger  # it imports the readers' modules

        java_merger = java_only_merger(config)
        # Such a table's merging reads are refused (`read_file_slice`): its payload is never used, only its base files.
        payload = OVERWRITE_WITH_LATEST if java_merger else payload_for(config.payload_class)
        return SliceReadContext(storage, schema, key_of, key_columns, ordering, payload, vis, java_merger, config.name,
                                column_ids)


def read_file_slice(
    ctx: SliceReadContext,
    file_slice: FileSlice,
    *,
    columns: list[str] | None = None,
    read_optimized: bool = False,
    logged_keys_only: bool = False,
    keys: pa.Array | None = None,
) -> pa.Table:
    """The rows of one slice in the table schema, projected to `columns` (all when None).

    `logged_keys_only`: only the merged rows of the keys its log blocks write or delete (the base file's other
    rows are read by someone else, e.g. Spark's parquet reader in `hudi_engine.spark.relation`). `keys` (string
    record keys, a superset of the keys the visible log blocks write or delete): only the rows of those keys."""
    out_columns = list(columns) if columns is not None else ctx.schema.names
    use_logs = bool(file_slice.log_files) and not read_optimized
    needed = list(out_columns)
    if use_logs:
        for c in (*ctx.key_columns, ctx.ordering_field, IS_DELETED_FIELD):
            if c is not None and c in ctx.schema.names and c not in needed:
                needed.append(c)
    read_schema = pa.schema([ctx.schema.field(c) for c in needed])

    if file_slice.base_file is not None:
        names = ctx.file_names(file_slice.base_file.instant_time)
        in_file = needed if names is None else [n for c in needed if (n := names.get(c, c)) is not None]
        raw = read_base_file(ctx.storage, file_slice.base_file.path, columns=in_file, allow_missing=True)
        if names is not None and ctx.column_ids is not None:
            raw = ctx.column_ids.as_query_names(raw, names)
        base = align_to_schema(raw, read_schema, file_slice.base_file.path)
    else:
        base = read_schema.empty_table()
    if keys is not None:
        base = base.filter(pc.is_in(ctx.key_of(base).cast(pa.string()), value_set=keys))
    if not use_logs:
        return base.select(out_columns)
    if ctx.java_merger:
        raise UnsupportedMergeError(
            f"table {ctx.table_name}: cannot merge the log records of file group {file_slice.file_id} (partition "
            f"{file_slice.partition_path!r}): {ctx.java_merger}; read-optimized queries (base files only) are read; "
            "way out: read it with Java Hudi, or compact it with Java Hudi first (docs/table-features.md)")
    scanned = _scan_logs(ctx, file_slice, read_schema)
    if logged_keys_only:
        base = base.filter(pc.is_in(ctx.key_of(base), value_set=logged_keys(ctx, scanned)))
    batches = _complete_partial_records(ctx, base, scanned)
    merged = merge_records(
        base, batches, key_of=ctx.key_of, ordering_field=ctx.ordering_field, payload=ctx.payload
    ).records
    return merged.select(out_columns)


@dataclass(frozen=True, slots=True)
class PartialBatch:
    """Records of a partial data block (Hudi 1.x's `IS_PARTIAL` header, written by Spark SQL's MERGE INTO on a MOR
    table): they hold only the columns in `present` (and the meta columns); each other column keeps the value the
    record had before the block."""

    records: pa.Table  # in the read schema, absent columns null
    present: frozenset[str]


def _complete_partial_records(ctx: SliceReadContext, base: pa.Table,
                              scanned: list[LogBatch | PartialBatch]) -> list[LogBatch]:
    """Every partial block made whole: its absent columns taken from its keys' merged state just before it (the
    base and the blocks before it), as Hudi's partial merge does. Blocks are rare (one per MERGE INTO), so each
    pays one merge of what precedes it."""
    out: list[LogBatch] = []
    for batch in scanned:
        if not isinstance(batch, PartialBatch):
            out.append(batch)
            continue
        before = merge_records(base, out, key_of=ctx.key_of, ordering_field=ctx.ordering_field,
                               payload=ctx.payload).records
        stored = ctx.key_of(before).cast(pa.string())
        if isinstance(stored, pa.ChunkedArray):
            stored = stored.combine_chunks()
        at = pc.index_in(ctx.key_of(batch.records).cast(pa.string()), value_set=stored)
        columns = [batch.records.column(c) if c in batch.present else before.column(c).take(at)
                   for c in batch.records.column_names]
        out.append(pa.table(columns, schema=batch.records.schema))
    return out


def log_record_keys(ctx: SliceReadContext, file_slice: FileSlice) -> pa.Array:
    """The record keys the slice's visible log blocks write or delete: the rows a merge can change."""
    key_schema = pa.schema([ctx.schema.field(c) for c in ctx.key_columns if c in ctx.schema.names])
    return logged_keys(ctx, _scan_logs(ctx, file_slice, key_schema))


def logged_keys(ctx: SliceReadContext, batches: list[LogBatch | PartialBatch]) -> pa.Array:
    keys = [b.keys if isinstance(b, DeleteBatch) else ctx.key_of(b.records if isinstance(b, PartialBatch) else b)
            for b in batches]
    keys = [k.combine_chunks() if isinstance(k, pa.ChunkedArray) else k for k in keys]
    return pc.unique(pa.concat_arrays([k.cast(pa.string()) for k in keys])) if keys else pa.array([], pa.string())


def _scan_logs(ctx: SliceReadContext, file_slice: FileSlice, schema: pa.Schema) -> list[LogBatch | PartialBatch]:
    """Data and delete blocks of committed instants, in log order, with rolled-back blocks removed (FORMAT.md, Log
    scanning)."""
    vis = ctx.visibility
    latest = vis.latest_instant
    queue: list = []
    for log_file in file_slice.sorted_log_files():
        with ctx.storage.open_input_file(log_file.path) as f:
            blocks = read_log_blocks(f, file_name=log_file.path)
        stop = False
        for block in blocks:
            if block.block_type == BlockType.CORRUPT:
                queue.append(block)
                continue
            instant = block.instant_time
            if instant is None:
                raise LogFormatError(f"{log_file.path}: {block.block_type.name} block at offset {block.offset} has no "
                                     "INSTANT_TIME header; every data, delete and command block names its instant")
            if latest is None or instant > latest:
                stop = True  # Java stops the scan at the first block newer than the query instant
                break
            if block.block_type == BlockType.COMMAND:
                target = block.target_instant_time
                queue = [b for b in queue if b.block_type != BlockType.CORRUPT and b.instant_time != target]
                continue
            if not vis.is_committed(instant):
                continue  # a block of a failed or still running write
            queue.append(block)
        if stop:
            break

    out: list[LogBatch | PartialBatch] = []
    ordering_type = schema.field(ctx.ordering_field).type if ctx.ordering_field in schema.names else None
    for block in queue:
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            records = data_block_records(block)
            names = ctx.file_names(block.instant_time)
            if names is not None and ctx.column_ids is not None:
                records = ctx.column_ids.as_query_names(records, names)
            if records.num_rows:
                aligned = align_to_schema(records, schema, f"log block at {block.offset}")
                if block.is_partial:
                    out.append(PartialBatch(aligned, frozenset(records.column_names)))
                else:
                    out.append(aligned)
        elif block.block_type == BlockType.DELETE:
            deletes = delete_block_keys(block)
            if len(deletes):
                out.append(DeleteBatch(deletes.column("record_key").combine_chunks(),
                                       _delete_ordering(deletes, ordering_type)))
    return out


def _delete_ordering(deletes: pa.Table, ordering_type: pa.DataType | None) -> pa.Array | None:
    """Ordering values of deletes that compare with the table's ordering column; null for the others.

    Java compares a delete's orderingVal with a record's only when both are of the same class and the delete is
    not the natural-order marker (Integer 0); otherwise the delete wins (FORMAT.md, Merging).
    """
    if ordering_type is None:
        return None
    try:
        wrapper = ordering_wrapper_for(ordering_type)
    except HudiError:
        return None  # a nested ordering field: no delete can compare with it
    deletes = deletes.combine_chunks()
    values = deletes.column("ordering_val").chunk(0).field(wrapper).cast(ordering_type)
    same_class = pc.and_(pc.equal(deletes.column("ordering_val_type"), wrapper),
                         pc.invert(deletes.column("natural_order"))).fill_null(False)
    return pc.if_else(same_class, values, pa.nulls(len(values), ordering_type)).combine_chunks()


def align_to_schema(table: pa.Table, schema: pa.Schema, source: str) -> pa.Table:
    """`table` in `schema`: columns reordered, missing ones null (added later), types widened by cast."""
    arrays = []
    for field in schema:
        if field.name in table.column_names:
            col = table.column(field.name)
            if col.type != field.type:
                try:
                    col = col.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise SchemaError(
                        f"{source}: column {field.name!r} has type {col.type}, cannot read it as {field.type}: {e}"
                    ) from e
            arrays.append(col)
        else:
            arrays.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)
