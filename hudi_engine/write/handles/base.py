"""`WriteHandle`: the shape the create, merge and append handles share (Hudi's `HoodieWriteHandle`), and the base
file writer they and compaction write parquet with."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from hudi_engine.config.write_config import BloomConfig, FileSizing
from hudi_engine.errors import WriteError
from hudi_engine.io.base_file import BaseFileWriter, BaseFileWriteResult, KeyPrefix
from hudi_engine.storage import Storage
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.handles.context import RECORD_KEY, WriteContext, relative_path
from hudi_engine.write.handles.records import conform, keys_to_delete, prepare_records, written_records


class WriteHandle(ABC):
    """One file group's write: constructed for a partition and file id with the write's context, fed records by
    `write`, closed by `close`, which writes what is left and gives the stats of the files written.

    Records are Arrow tables, handled a table (or a batch of rows) at a time, never a record at a time.
    """

    def __init__(self, ctx: WriteContext, partition_path: str, file_id: str | None) -> None:
        self.ctx, self.partition_path, self.file_id = ctx, partition_path, file_id
        self._t0 = time.monotonic()

    @abstractmethod
    def write(self, records: pa.Table) -> None:
        """Take `records` for this file group (the handle decides when they reach a file)."""

    @abstractmethod
    def close(self) -> list[WriteStat]:
        """Write what is left and finish the files: the write stats of the files written."""

    def _elapsed_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def _prepare(self, records: pa.Table, file_name: str, start_index: int = 0,
                 indices: np.ndarray | None = None, *, schema: pa.Schema | None = None) -> pa.Table:
        """`records` as rows of `file_name` in this handle's partition: meta columns, in `schema` (rows that go only
        to a base file: `ctx.file_schema` or a merge's, `base_file.file_schema`), else the writer schema."""
        ctx, partition_path = self.ctx, self.partition_path
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
            dictionary=schema is not None and ctx.config.populate_meta_fields,
        )
        return conform(rows, ctx.arrow_schema if schema is None else schema,
                       f"records for {relative_path(partition_path, file_name)}")

    def _base_writer(self, name: str, key_prefix: KeyPrefix | None = None,
                     dictionary: Mapping[str, bool] | None = None) -> BaseFileWriter:
        ctx = self.ctx
        return base_writer(ctx.location.storage, ctx.full_path(self.partition_path, name), bloom=ctx.bloom, files=ctx.files,
                           populate_meta_fields=ctx.config.populate_meta_fields, row_group_size=ctx.row_group_size,
                           key_prefix=key_prefix, dictionary=dictionary)

    def _publish(self, writer: BaseFileWriter, name: str) -> BaseFileWriteResult:
        """Close a base file and confirm the instant is still this writer's. A rollback that took the instant while
        the file was being written removes what it finds (a half-written file included): the loss, not the failed
        close, is then the error."""
        try:
            result = writer.close()
        except WriteError:
            self.ctx.inflight.confirm_written(self.partition_path, name)
            raise
        self.ctx.inflight.confirm_written(self.partition_path, name)
        return result


class HeldWriteHandle(WriteHandle):
    """A handle that holds what it is given until `close` (merge, append: the file group's incoming keys are needed
    whole), records by `write` and record keys to delete by `delete`."""

    file_id: str

    def __init__(self, ctx: WriteContext, partition_path: str, file_id: str) -> None:
        super().__init__(ctx, partition_path, file_id)
        self._records: list[pa.Table] = []
        self._deletes: list[pa.Array | pa.Table | list] = []

    def write(self, records: pa.Table) -> None:
        self._records.append(records)

    def delete(self, keys: pa.Array | pa.Table | list) -> None:
        """Delete the records of these keys (an array, a list, or a table with a key column)."""
        self._deletes.append(keys)

    def _written(self) -> pa.Table:
        return written_records(self._records)

    def _delete_keys(self) -> pa.Array:
        if len(self._deletes) < 2:
            return keys_to_delete(self._deletes[0] if self._deletes else None)
        return pa.concat_arrays([keys_to_delete(d) for d in self._deletes])


def base_writer(storage: Storage, path: str, *, bloom: BloomConfig, files: FileSizing, populate_meta_fields: bool,
                row_group_size: int | None = None, key_prefix: KeyPrefix | None = None,
                dictionary: Mapping[str, bool] | None = None) -> BaseFileWriter:
    """A base file writer with the write's bloom filter and parquet settings (handles and compaction alike)."""
    return BaseFileWriter(
        storage, path,
        bloom_filter_type=bloom.filter_type if populate_meta_fields else None,
        bloom_num_entries=bloom.num_entries, bloom_fpp=bloom.fpp, bloom_max_entries=bloom.max_entries,
        compression=files.compression, row_group_size=row_group_size, key_prefix=key_prefix, dictionary=dictionary,
    )


def write_base(storage: Storage, path: str, rows: pa.Table, *, bloom: BloomConfig, files: FileSizing,
               populate_meta_fields: bool, row_group_size: int | None = None):
    """One base file of `rows` in one go."""
    writer = base_writer(storage, path, bloom=bloom, files=files, populate_meta_fields=populate_meta_fields,
                         row_group_size=row_group_size)
    writer.write(rows)
    return writer.close()
