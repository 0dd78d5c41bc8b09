"""What one write task does: the records of one partition path -> index -> buckets -> handles -> write stats.

The driver ships one picklable `WriteTask`; the engine layer groups the incoming records by partition path and
calls `write_partition` once per partition (or `bulk_insert_files` on sorted batches). A task lists its own
partition folder against the timeline the driver saw, looks keys up in the partition's base files (SIMPLE and
BLOOM index; BUCKET hashes), pre-combines, plans the partition's buckets and runs one handle per bucket, one
file group at a time. A task so holds the batch's records of one partition and the key column of that
partition's base files, never a whole table and never more than one file group's base file.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.errors import WriteError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import new_file_id
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.io.base_file import read_base_file, read_footer, read_record_keys
from hudi_engine.keygen import KeyGenerator
from hudi_engine.merge import merge_records
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write import index
from hudi_engine.write.bucket_assigner import BucketType, SmallFile, plan_buckets
from hudi_engine.write.handles import WriteContext, append_handle, create_handle, merge_handle

KEY, PARTITION = "_hoodie_record_key", "_hoodie_partition_path"
FILE_ID, DELETE = "_hw_file_id", "_hw_delete"  # set by a global index before the records reach the task
HELPER_PREFIX = "_hw_"


@dataclass(frozen=True, slots=True)
class SliceInfo:
    """The latest slice of an existing file group, as the task's listing sees it."""

    partition_path: str
    file_id: str
    base_instant: str  # the slice a new log file belongs to (a pending compaction's instant, if any)
    base_file_path: str | None
    base_file_name: str | None
    base_file_size: int

    @staticmethod
    def of(s: FileSlice, compaction_of_group: dict[tuple[str, str], str]) -> "SliceInfo":
        """`compaction_of_group`: (partition, file id) -> instant of a pending compaction planned on the group;
        new log files of such a group belong to the compaction's slice (spec §13)."""
        base_instant = compaction_of_group.get((s.partition_path, s.file_id), s.base_instant)
        return SliceInfo(s.partition_path, s.file_id, base_instant,
                         s.base_file.path if s.base_file else None,
                         s.base_file.name.format() if s.base_file else None,
                         s.base_file.size if s.base_file else 0)


@dataclass(frozen=True)
class WriteTask:
    """Everything a write task needs, planned once on the driver: config, instant, and the timeline it saw."""

    storage_uri: str
    base_path: str
    table_props: dict
    config: WriteConfig
    instant: str
    writer_avro_schema: dict
    visibility: Visibility | None  # None: a new table, nothing to look up
    pending_compactions: dict[tuple[str, str], str] = field(default_factory=dict)
    avg_record_size: int = 1024

    def context(self, token: tuple[int, int, int]) -> WriteContext:
        storage, _ = Storage.for_uri(self.storage_uri)
        cfg = self.config
        return WriteContext.create(
            storage, self.base_path, TableConfig.from_properties(self.table_props), self.instant,
            self.writer_avro_schema, files=cfg.files, bloom=cfg.bloom, log=cfg.log,
            payload_class=cfg.merge.payload.class_name,
        ).for_task(*token)

    def keygen(self) -> KeyGenerator:
        return self.config.keys.key_generator()

    def latest_slices(self, storage: Storage, partition: str) -> list[SliceInfo]:
        """The partition's latest committed file slices: one listing of its folder, filtered by the timeline."""
        if self.visibility is None or self.config.operation.is_overwrite:
            return []  # an overwrite starts the partition afresh; its old file groups are replaced at commit
        view = FileSystemView.for_partitions(storage, self.base_path, [partition])
        return [SliceInfo.of(s, self.pending_compactions) for s in view.latest_file_slices(self.visibility)]

    def read_keys(self, storage: Storage, path: str) -> pa.Array:
        """The record keys of one base file: the key column, or the key generator where meta fields are off."""
        if self.table_props.get("hoodie.populate.meta.fields", "true") != "false":
            return read_record_keys(storage, path)
        return self.keygen().record_keys(read_base_file(storage, path, columns=list(self.config.keys.record_key_fields)))

    @property
    def per_file(self) -> int:
        """Records per new base file: the max file size over the average record size."""
        return max(1, self.config.files.max_file_size // max(1, self.avg_record_size))


def write_partition(task: WriteTask, partition: str, records: pa.Table, token: tuple[int, int, int],
                    timings: dict[str, float] | None = None) -> list[WriteStat]:
    """Write the batch's records of one partition path; the write stats as JSON, one per file written.

    `timings` gets the seconds spent looking keys up (`index_s`: listing, pre-combine, lookup) and in the
    handles (`handles_s`) added to it."""
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    cfg = task.config
    ctx = task.context(token)
    slices = task.latest_slices(ctx.storage, partition)
    pre_tagged = FILE_ID in records.column_names
    if not pre_tagged and cfg.combine_before_write:
        records = pre_combine(task, records)
    if pre_tagged:
        owner = _owner_of_file_ids(records.column(FILE_ID), slices, partition, task.base_path)
        deleting = records.column(DELETE).to_numpy(zero_copy_only=False)
    elif cfg.index.type is IndexType.BUCKET:
        _add_time(timings, "index_s", t0)
        t1 = time.perf_counter()
        stats = _write_buckets(task, ctx, partition, records, slices)
        _add_time(timings, "handles_s", t1)
        return stats
    else:
        owner = _lookup(task, ctx.storage, records.column(KEY), slices) if cfg.operation.looks_up_keys else \
            np.full(records.num_rows, -1, dtype=np.int64)
        deleting = np.full(records.num_rows, cfg.operation is Operation.DELETE)
    keep = ~(deleting & (owner < 0))  # deleting a key the table does not hold writes nothing
    if not keep.all():
        records, owner, deleting = records.filter(pa.array(keep)), owner[keep], deleting[keep]
    records = records.append_column(DELETE, pa.array(deleting, pa.bool_())) if DELETE not in records.column_names \
        else records
    _add_time(timings, "index_s", t0)
    t1 = time.perf_counter()
    stats = _write_planned(task, ctx, partition, records, owner, slices)
    _add_time(timings, "handles_s", t1)
    return stats


def _add_time(timings: dict[str, float], key: str, since: float) -> None:
    timings[key] = timings.get(key, 0.0) + time.perf_counter() - since


def _write_planned(task: WriteTask, ctx: WriteContext, partition: str, records: pa.Table, owner: np.ndarray,
                   slices: list[SliceInfo]) -> list[WriteStat]:
    """Updates to their file group; inserts fill small files, then new file groups (Hudi's upsert partitioner)."""
    cfg = task.config
    updates = {(partition, slices[i].file_id): int(n)
               for i, n in zip(*np.unique(owner[owner >= 0], return_counts=True))}
    ins = np.flatnonzero(owner < 0)
    small = []
    limit = cfg.files.small_file_limit
    if not cfg.is_mor and cfg.operation in (Operation.UPSERT, Operation.INSERT) and limit > 0:
        small = [SmallFile(s.file_id, s.base_file_size) for s in slices
                 if s.base_file_path is not None and s.base_file_size < limit]
    plan = plan_buckets(updates, {partition: len(ins)} if len(ins) else {}, {partition: small},
                        avg_record_size=task.avg_record_size, max_file_size=cfg.files.max_file_size)
    target = owner.copy()  # bucket of every record
    by_file = {b.file_id: b.bucket_id for b in plan.buckets}
    slice_of = {s.file_id: s for s in slices}
    file_of_slice = np.array([by_file.get(s.file_id, -1) for s in slices] or [-1], dtype=np.int64)
    target[owner >= 0] = file_of_slice[owner[owner >= 0]]
    if len(ins):
        # Inserts in key order, cut by the plan's weights: each new file holds a contiguous key range.
        ids, cumulative = plan.insert_buckets[partition]
        order = ins[pc.sort_indices(records.column(KEY).take(pa.array(ins))).to_numpy()]
        cuts = np.rint(np.asarray(cumulative) * len(order)).astype(np.int64)
        target[order] = np.repeat(np.asarray(ids, dtype=np.int64), np.diff(np.concatenate([[0], cuts])))
    stats = []
    for b in plan.buckets:
        rows = np.flatnonzero(target == b.bucket_id)
        if len(rows):
            stats.append(_run_handle(task, ctx, b.bucket_type, partition, b.file_id, slice_of.get(b.file_id),
                                     records.take(pa.array(rows))))
    return stats


def _write_buckets(task: WriteTask, ctx: WriteContext, partition: str, records: pa.Table,
                   slices: list[SliceInfo]) -> list[WriteStat]:
    """BUCKET index: the key's hash names its bucket; an existing group of that number is updated, else created."""
    cfg = task.config
    numbers = index.bucket_ids(records.column(KEY), cfg.index.bucket_num, len(cfg.keys.record_key_fields))
    existing = {index.bucket_of_file_id(s.file_id): s for s in slices}
    deleting = cfg.operation is Operation.DELETE
    records = records.append_column(DELETE, pa.array(np.full(records.num_rows, deleting), pa.bool_()))
    stats = []
    for number in np.unique(numbers):
        s = existing.get(int(number))
        if s is None and deleting:
            continue
        rows = records.filter(pa.array(numbers == number))
        if s is None:
            stats.append(_run_handle(task, ctx, BucketType.INSERT, partition, index.bucket_file_id(int(number)),
                                     None, rows))
        else:
            stats.append(_run_handle(task, ctx, BucketType.UPDATE, partition, s.file_id, s, rows))
    return stats


def _run_handle(task: WriteTask, ctx: WriteContext, kind: BucketType, partition: str, file_id: str,
                s: SliceInfo | None, table: pa.Table) -> WriteStat:
    """One file group's records (upserts and deletes) through its handle; the write stat as JSON."""
    deleting = table.column(DELETE).to_numpy(zero_copy_only=False) if DELETE in table.column_names else None
    data_cols = [c for c in table.column_names if not c.startswith(HELPER_PREFIX)]
    if deleting is not None and deleting.any():
        deletes = table.filter(pa.array(deleting)).column(KEY).combine_chunks()
        records = table.filter(pa.array(~deleting)).select(data_cols)
    else:
        deletes = None
        records = table.select(data_cols)
    if kind is BucketType.INSERT:
        # A new file sorted by key: its row groups prune better and the output is deterministic.
        stat = create_handle(ctx, partition, records.sort_by([(KEY, "ascending")]), file_id=file_id)
    elif task.config.is_mor:
        stat = append_handle(ctx, partition, file_id, s.base_instant, records if records.num_rows else None,
                             deletes=deletes, base_file_name=s.base_file_name)
    else:
        stat = merge_handle(ctx, partition, file_id, s.base_file_path, records, deletes=deletes)
    return stat


def pre_combine(task: WriteTask, records: pa.Table) -> pa.Table:
    """Duplicates of a key in the batch reduced with the payload's pre-combine (one partition, or a global
    index's batch: by key alone)."""
    cfg = task.config
    # A delete's DataFrame may carry only the keys: without the ordering column, later versions win.
    ordering = cfg.merge.precombine_field if cfg.merge.precombine_field in records.column_names else None
    keys = records.column(KEY)
    if pc.count_distinct(keys).as_py() == records.num_rows:
        return records
    return merge_records(records.schema.empty_table(), [records], key_of=lambda t: t.column(KEY),
                         ordering_field=ordering, payload=cfg.merge.payload).records


def _lookup(task: WriteTask, storage: Storage, keys: pa.ChunkedArray | pa.Array,
            slices: list[SliceInfo]) -> np.ndarray:
    """SIMPLE / BLOOM index: position in `slices` of the file group holding each key, -1 for a new key."""
    files = [i for i, s in enumerate(slices) if s.base_file_path is not None]
    if not files or len(keys) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    # The footer's key range, then its bloom filter, rule files out before their keys are read (BLOOM's
    # definition; SIMPLE's result is the same, it just reads less: its cost follows the batch, not the table).
    # A lone candidate's keys are read at once: that costs less than parsing its bloom filter.
    keys_arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    files = [i for i in files if index.may_contain_any(
        read_footer(storage, slices[i].base_file_path, with_bloom=False), keys_arr)]
    if len(files) > 1:
        files = [i for i in files if index.may_contain_any(read_footer(storage, slices[i].base_file_path), keys_arr)]
    stored = [(i, task.read_keys(storage, slices[i].base_file_path)) for i in files]
    if not stored:
        return np.full(len(keys), -1, dtype=np.int64)
    return index.locate(keys, stored)


def _owner_of_file_ids(file_ids: pa.ChunkedArray, slices: list[SliceInfo], partition: str,
                       base_path: str) -> np.ndarray:
    """Records a global index tagged: position in `slices` of their file id (-1 for a new key)."""
    known = pa.array([s.file_id for s in slices], pa.string())
    idx = pc.index_in(file_ids, value_set=known).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    missing = pc.is_valid(file_ids).to_numpy(zero_copy_only=False) & (idx < 0)
    if missing.any():
        raise WriteError(f"table {base_path}: file group {file_ids[int(np.flatnonzero(missing)[0])]} of partition "
                         f"{partition!r} is gone; another writer may have replaced it")
    return idx


def bulk_insert_files(task: WriteTask, batches: Iterable[pa.RecordBatch],
                      token: tuple[int, int, int]) -> Iterator[WriteStat]:
    """bulk_insert: batches sorted by (partition path, key) are cut into new base files of the max file size.

    Holds at most one file's records; a file never spans two partitions, and the files of a task have disjoint,
    sorted key ranges.
    """
    ctx = task.context(token)
    per_file = task.per_file
    pending: list[pa.Table] = []
    pending_rows = 0
    current = None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        t = pa.Table.from_batches([batch])
        parts = t.column(PARTITION)
        # Boundaries where the partition changes inside the (sorted) batch.
        change = np.flatnonzero(pc.not_equal(parts.slice(1), parts.slice(0, len(parts) - 1))
                                .to_numpy(zero_copy_only=False)) + 1 if len(parts) > 1 else np.array([], np.int64)
        for start, end in zip(np.concatenate([[0], change]), np.concatenate([change, [t.num_rows]])):
            piece = t.slice(int(start), int(end - start))
            p = piece.column(PARTITION)[0].as_py()
            if p != current and pending_rows:
                yield from _flush(ctx, current, pending)
                pending, pending_rows = [], 0
            current = p
            while piece.num_rows:
                take = min(piece.num_rows, per_file - pending_rows)
                pending.append(piece.slice(0, take))
                pending_rows += take
                piece = piece.slice(take)
                if pending_rows >= per_file:
                    yield from _flush(ctx, current, pending)
                    pending, pending_rows = [], 0
    if pending_rows:
        yield from _flush(ctx, current, pending)


def _flush(ctx: WriteContext, partition: str, pieces: list[pa.Table]) -> Iterator[WriteStat]:
    records = pa.concat_tables(pieces)
    records = records.select([c for c in records.column_names if not c.startswith(HELPER_PREFIX)])
    yield create_handle(ctx, partition, records, file_id=new_file_id())
