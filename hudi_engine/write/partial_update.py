"""Partial updates by column list (`hoodie.datasource.write.partial.update.columns`, dbt's `merge_update_columns`):
on a record whose key the table holds, only the listed columns take the incoming values; every other column keeps
the stored one.

The stored values are filled into the incoming records before the file group's handle runs, so what a handle
writes is whole: a COW merge writes it into the new base file, a MOR append writes complete log records, which any
reader (hudi-rs, Java Hudi) merges with the table's payload as usual. The price is one read of the stored rows of
each file group the write updates (its latest committed slice, base and log files merged).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.schema import META_COLUMNS

RECORD_KEY = "_hoodie_record_key"


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


def with_stored_values(storage_uri: str, config: WriteConfig, partition_path: str, file_id: str,
                       records: pa.Table) -> pa.Table:
    """`records` bound for existing file group `file_id` with the columns a partial update keeps taken from the
    group's latest committed slice (the write's own instant is not committed, so it is never seen)."""
    from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
    from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
    from hudi_engine.table import HudiTable

    columns = kept_columns(config, records.column_names)
    if not columns or not records.num_rows:
        return records
    table = HudiTable.load(storage_uri)
    vis = Visibility.of(table.timeline)
    view = FileSystemView.for_partitions(table.storage, table.base_path, [partition_path],
                                         slicing_for(table.timeline))
    found = [s for s in view.latest_file_slices(vis, partition_path) if s.file_id == file_id]
    if not found:
        return records
    schema = table.schema()
    ctx = SliceReadContext.for_table(table.storage, table.config, schema, vis)
    wanted = [c for c in dict.fromkeys([*ctx.key_columns, *columns]) if c in schema.names]
    stored = read_file_slice(ctx, found[0], columns=wanted)
    stored_keys = ctx.key_of(stored)
    stored_keys = stored_keys.combine_chunks() if isinstance(stored_keys, pa.ChunkedArray) else stored_keys
    return fill_stored_values(records, stored, stored_keys.cast(pa.string()), columns)
