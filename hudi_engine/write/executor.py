"""What one write task does with one bucket: pick the handle (create / merge / append) and run it.

`BucketTask` is the picklable description the driver ships to every task; `execute_bucket` turns one bucket's
records into write stats (JSON, as the commit metadata will hold them).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.file_group import FileSlice
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.write.bucket_assigner import Bucket, BucketType
from hudi_engine.write.handles import WriteContext, append_handle, create_handle, merge_handle
from hudi_engine.write.write_config import WriteConfig

KEY = "_hoodie_record_key"
DELETE = "_hw_delete"
HELPER_PREFIX = "_hw_"


@dataclass(frozen=True, slots=True)
class SliceInfo:
    """The latest slice of an existing file group, as the driver saw it when planning."""

    partition_path: str
    file_id: str
    base_instant: str  # the slice a new log file belongs to (a pending compaction's instant, if any)
    base_file_path: str | None
    base_file_name: str | None

    @staticmethod
    def of(s: FileSlice, compaction_of_group: dict[tuple[str, str], str]) -> "SliceInfo":
        """`compaction_of_group`: (partition, file id) -> instant of a pending compaction planned on the group;
        new log files of such a group belong to the compaction's slice (spec §13)."""
        base_instant = compaction_of_group.get((s.partition_path, s.file_id), s.base_instant)
        return SliceInfo(s.partition_path, s.file_id, base_instant,
                         s.base_file.path if s.base_file else None,
                         s.base_file.name.format() if s.base_file else None)


@dataclass(frozen=True)
class BucketTask:
    storage_uri: str
    base_path: str
    table_props: dict
    config: WriteConfig
    instant: str
    writer_avro_schema: dict
    buckets: list[Bucket]
    slices: dict[int, SliceInfo]

    def context(self, token: tuple[int, int, int]) -> WriteContext:
        storage, _ = Storage.for_uri(self.storage_uri)
        cfg = self.config
        return WriteContext.create(
            storage, self.base_path, TableConfig.from_properties(self.table_props), self.instant,
            self.writer_avro_schema, compression=cfg.compression, log_block_max_size=cfg.log_block_max_size,
            payload_class=cfg.payload.class_name,
        ).for_task(*token)


def execute_bucket(task: BucketTask, bucket_id: int, table: pa.Table, token: tuple[int, int, int]) -> list[str]:
    """Write one bucket's records (upserts and deletes of one file group); the write stats as JSON."""
    if bucket_id < 0 or table.num_rows == 0:
        return []
    bucket = task.buckets[bucket_id]
    ctx = task.context(token)
    deleting = table.column(DELETE).to_numpy(zero_copy_only=False) if DELETE in table.column_names else None
    data_cols = [c for c in table.column_names if not c.startswith(HELPER_PREFIX)]
    if deleting is not None and deleting.any():
        deletes = table.filter(pa.array(deleting)).column(KEY).combine_chunks()
        records = table.filter(pa.array(~deleting)).select(data_cols)
    else:
        deletes = None
        records = table.select(data_cols)
    # Sorted by key: the file's min / max keys and row groups prune better, and output is deterministic.
    records = records.sort_by([(KEY, "ascending")])
    if bucket.bucket_type is BucketType.INSERT:
        stat = create_handle(ctx, bucket.partition_path, records, file_id=bucket.file_id)
    else:
        s = task.slices[bucket_id]
        if task.config.is_mor:
            stat = append_handle(ctx, bucket.partition_path, bucket.file_id, s.base_instant,
                                 records if records.num_rows else None, deletes=deletes,
                                 base_file_name=s.base_file_name)
        else:
            stat = merge_handle(ctx, bucket.partition_path, bucket.file_id, s.base_file_path, records,
                                deletes=deletes)
    return [json.dumps(stat.to_dict())]
