"""The records a handle writes, laid out columnar: meta columns first, conformed to the writer schema, deletes
split off (FORMAT.md, Meta columns)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.arrays import one_chunk, repeated
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.file_slice_reader import align_to_schema
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.schema import META_COLUMNS

COMMIT_TIME, SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_COLUMNS


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
    dictionary: bool = False,
) -> pa.Table:
    """`table` with the five meta columns first (FORMAT.md, Meta columns), data columns after, in their order.

    Record keys come from a `_hoodie_record_key` column when `table` has one (computed upstream by the same key
    generator), else from `keygen`. The partition path is `partition_path` (one file group lives in one
    partition; a `_hoodie_partition_path` column, if present, must agree) or, when None, the column / `keygen`.
    `_hoodie_commit_seqno` is `<instant>_<taskPartitionId>_<index>`, index counting from `start_index` (or
    `indices`: each row's own, for rows picked out of a larger batch).
    `_hoodie_file_name` is what the caller passes: the base file name, or the file id for log records.
    With `populate_meta_fields=False` the meta columns are all null (keys are still checked).
    `dictionary`: the commit time, partition path and file name as dictionary arrays (rows bound for a base file:
    `base_file.file_schema`).
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
        parts = constant(partition_path, n, dictionary=dictionary)
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
        if dictionary and not pa.types.is_dictionary(parts.type):
            parts = pc.dictionary_encode(parts)
        meta = [constant(instant, n, dictionary=dictionary), seqno, keys, parts,
                constant(file_name, n, dictionary=dictionary)]
    else:
        meta = [pa.nulls(n, pa.string()) for _ in META_COLUMNS]
    return pa.Table.from_arrays([*meta, *data.columns], names=[*META_COLUMNS, *data_names])


def constant(value: str, n: int, *, dictionary: bool = False) -> pa.Array:
    """`value` `n` times, as one string array, or a dictionary array of one value (`dictionary`): a meta column every
    row of a file shares."""
    return repeated(value, n, dictionary=dictionary)


def conform(table: pa.Table, schema: pa.Schema, what: str) -> pa.Table:
    """`table` laid out as `schema`: columns by name, cast; absent ones null; others dropped."""
    try:
        return align_to_schema(table, schema, what)
    except HudiError as e:
        raise WriteError(str(e)) from e


def split_deleted(records: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(records to write, records flagged `_hoodie_is_deleted = true`), which Hudi turns into deletes."""
    if IS_DELETED_FIELD not in records.column_names or records.num_rows == 0:
        return records, records.slice(0, 0)
    flag = pc.fill_null(one_chunk(records.column(IS_DELETED_FIELD)).cast(pa.bool_()), False)
    return records.filter(pc.invert(flag)), records.filter(flag)


def keys_to_delete(deletes: pa.Array | pa.ChunkedArray | pa.Table | list | None) -> pa.Array:
    """The record keys to delete, given as keys, an array of them, or a table with a key column."""
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


def written_records(tables: list[pa.Table]) -> pa.Table:
    """The tables written to a handle as one (their chunks, not copied); none written: no records, only the key
    column."""
    if not tables:
        return pa.table({RECORD_KEY: pa.array([], pa.string())})
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)
