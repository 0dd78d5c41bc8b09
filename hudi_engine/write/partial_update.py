"""Partial updates by column list (`hoodie.datasource.write.partial.update.columns`, dbt's `merge_update_columns`):
on a record whose key the table holds, only the listed columns take the incoming values; every other column keeps
the stored one.

The stored values are filled into the incoming records before the file group's handle runs, so what a handle
writes is whole: a COW merge writes it into the new base file, a MOR append writes complete log records, which any
reader (hudi-rs, Java Hudi) merges with the table's payload as usual. The price is one read of the stored rows of
each file group the write updates (its latest committed slice, base and log files merged), as the driver's plan
(`StoredRows`) says it is visible: a task lists the partition, never the timeline.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.fs_view import Visibility
from hudi_engine.io.base_file import read_footer
from hudi_engine.location import TableLocation
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.schema import META_COLUMNS, add_meta_fields, avro_to_arrow_schema
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline

RECORD_KEY = "_hoodie_record_key"


@dataclass(frozen=True)
class StoredRows:
    """What a write task needs to read a file group's stored rows, planned once on the driver from the timeline the
    write started with: the committed instants it sees, the table's schema (meta columns first; None: no commit
    recorded one) and its `hoodie.properties`."""

    visibility: Visibility
    schema: pa.Schema | None
    table_props: Mapping[str, str]

    @staticmethod
    def of(timeline: Timeline, table_config: TableConfig) -> "StoredRows":
        avro = timeline.latest_schema() or table_config.create_schema
        schema = avro_to_arrow_schema(add_meta_fields(avro)) if avro is not None else None
        if schema is not None and not table_config.populate_meta_fields:
            schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        return StoredRows(Visibility.of(timeline), schema, dict(table_config.props))


def missing_columns(config: WriteConfig, columns: Collection[str]) -> list[str]:
    """The update columns that are not columns of the write (checked before anything is written)."""
    return [c for c in config.merge.update_columns if c not in columns]


def kept_columns(config: WriteConfig, columns: Sequence[str]) -> list[str]:
    """The columns a partial update takes from the stored record: every data column but the update columns and the
    key and partition fields (equal anyway for a matched key)."""
    fixed = {f.split(":")[0].split(".")[0] for f in (*config.keys.record_key_fields, *config.keys.partition_fields)}
    skip = set(config.merge.update_columns) | fixed | set(META_COLUMNS) | {IS_DELETED_FIELD}
    return [c for c in columns if c not in skip and not c.startswith("_hw_")]


def fill_stored_values(records: pa.Table, stored: pa.Table, stored_keys: pa.Array, columns: Sequence[str]) -> pa.Table:
    """`records` (with `_hoodie_record_key`) where each record whose key is in `stored_keys` takes `columns` from
    its stored row (`stored`, aligned with `stored_keys`); other records are unchanged. Vectorized: one lookup of
    the keys, one `if_else` per column."""
    if not records.num_rows or not len(stored_keys):
        return records
    keys = records.column(RECORD_KEY)
    position = pc.index_in(keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys,
                           value_set=stored_keys)
    matched = pc.is_valid(position)
    if not pc.any(matched).as_py():
        return records
    rows = position.fill_null(0)
    for name in columns:
        if name not in records.column_names or name not in stored.column_names:
            continue
        i = records.schema.get_field_index(name)
        target = records.schema.field(name).type
        old = stored.column(name).take(rows)
        old = old.combine_chunks() if isinstance(old, pa.ChunkedArray) else old
        new = records.column(name).combine_chunks()
        records = records.set_column(i, records.schema.field(name), pc.if_else(matched, old.cast(target), new))
    return records


def with_stored_values(location: TableLocation, stored: StoredRows, config: WriteConfig,
                       partition_path: str, file_id: str, records: pa.Table) -> pa.Table:
    """`records` bound for existing file group `file_id` with the columns a partial update keeps taken from the
    group's latest committed slice as the driver saw it when the write started (`stored`: its visibility and the
    table's schema; the write's own instant is not committed, so it is never seen). Only the partition is listed."""
    storage = location.storage
    from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
    from hudi_engine.fs_view import FileSystemView
    from hudi_engine.internal_schema import ColumnIds

    columns = kept_columns(config, records.column_names)
    if not columns or not records.num_rows:
        return records
    view = FileSystemView.for_partitions(location, [partition_path])
    found = [s for s in view.latest_file_slices(stored.visibility, partition_path) if s.file_id == file_id]
    if not found:
        return records
    schema = stored.schema
    if schema is None:  # no commit recorded a schema: the stored rows' own
        base = found[0].base_file
        if base is None:
            return records
        schema = read_footer(storage, base.path).schema
    table_config = TableConfig.from_properties(stored.table_props)
    column_ids = ColumnIds.load(storage, location.meta_path, stored.visibility.completed)  # schema-on-read: by id
    ctx = SliceReadContext.for_table(storage, table_config, schema, stored.visibility, column_ids=column_ids)
    wanted = [c for c in dict.fromkeys([*ctx.key_columns, *columns]) if c in schema.names]
    rows = read_file_slice(ctx, found[0], columns=wanted)
    stored_keys = ctx.key_of(rows)
    stored_keys = stored_keys.combine_chunks() if isinstance(stored_keys, pa.ChunkedArray) else stored_keys
    return fill_stored_values(records, rows, stored_keys.cast(pa.string()), columns)
