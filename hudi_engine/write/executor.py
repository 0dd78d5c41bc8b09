"""What the tasks of a write do, engine-neutral: key and tag records in map tasks (`key_and_tag`), then write the
buckets a task was given, one file group at a time (`write_buckets`), or cut sorted records into new files
(`bulk_insert_files`).

The driver ships one picklable `WriteTask` (and the `BucketPlan`). A write task gets its records sorted by bucket
and holds one bucket's records at a time: the COW merge handle streams the file group's base file, the MOR append
handle encodes the file group's records, the create handle rolls to a new file at the max file size.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.arrays import one_chunk, valid_mask
from hudi_engine.config.write_config import IndexType, WriteConfig
from hudi_engine.errors import WriteError
from hudi_engine.file_naming import new_file_id
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.io.base_file import read_base_file, read_record_keys
from hudi_engine.keygen import KeyGenerator
from hudi_engine.location import TableLocation
from hudi_engine.merge import merge_records
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write import index
from hudi_engine.write.bucket_assigner import NEW_GROUP, Bucket, BucketPlan, BucketType, MapSidePlan, SliceInfo
from hudi_engine.write.handles import AppendHandle, CreateHandle, MergeHandle, WriteContext
from hudi_engine.write.partial_update import StoredRows, with_stored_values
from hudi_engine.write.tagging import TagSpec, slices, tag

KEY, PARTITION = "_hoodie_record_key", "_hoodie_partition_path"
HELPER_PREFIX = "_hw_"  # columns the write adds beside the data; never written to files
FILE_ID, BUCKET_NUMBER, DELETE, BUCKET, TASK = "_hw_file_id", "_hw_bucket_number", "_hw_delete", "_hw_bucket", "_hw_task"
GROUP = "_hw_group"  # a one-pass write's file group (NEW_GROUP: a new one)


@dataclass(frozen=True)
class WriteTask:
    """Everything a write task needs, planned once on the driver: config, instant, schema, record size, and what a
    partial update reads of the stored rows. A task never loads the table."""

    storage_uri: str
    base_path: str
    table_props: dict
    config: WriteConfig
    instant: str
    writer_avro_schema: dict
    avg_record_size: int = 1024
    stored: StoredRows | None = None  # a partial update's view of the stored rows (None: not a partial update)
    column_ids: ColumnIds | None = None  # the schema-on-read history: stored files' columns found by id

    def context(self, token: tuple[int, int, int]) -> WriteContext:
        storage, _ = Storage.for_uri(self.storage_uri)
        cfg = self.config
        return WriteContext.create(
            TableLocation(storage, self.base_path, self.storage_uri), TableConfig.from_properties(self.table_props),
            self.instant,
            self.writer_avro_schema, files=cfg.files, bloom=cfg.bloom, log=cfg.log,
            payload_class=cfg.merge.payload.class_name, column_ids=self.column_ids,
        ).for_task(*token)

    def keygen(self) -> KeyGenerator:
        return self.config.keys.key_generator()

    def read_keys(self, storage: Storage, path: str) -> pa.Array:
        """The record keys of one base file: the key column, or the key generator where meta fields are off."""
        if self.table_props.get("hoodie.populate.meta.fields", "true") != "false":
            return read_record_keys(storage, path)
        columns = [f.split(":")[0].split(".")[0] for f in self.config.keys.record_key_fields]
        return self.keygen().stored_record_keys(read_base_file(storage, path, columns=columns))


# ---- map side: keys and tags -------------------------------------------------------------------------------------
def key_and_tag(keygen: KeyGenerator, spec: TagSpec | None, columns: pa.Table,
                skip: Callable[[str], bool] | None = None) -> pa.StructArray:
    """Record key, partition path, file id (null: new or untagged, see `tagging.tag`'s `skip`) and bucket number of
    rows given as their key and partition columns: what a map task adds to every record before the shuffle."""
    keys = one_chunk(keygen.record_keys(columns))
    partitions = one_chunk(keygen.partition_paths(columns))
    if spec is None:
        file_ids, numbers = pa.nulls(len(keys), pa.string()), pa.nulls(len(keys), pa.int32())
    else:
        tags = tag(spec, keys, partitions, skip)
        file_ids = tags.file_ids
        numbers = tags.bucket_numbers if tags.bucket_numbers is not None else pa.nulls(len(keys), pa.int32())
    return pa.StructArray.from_arrays([keys, partitions, file_ids, numbers],
                                      names=[KEY, PARTITION, FILE_ID, BUCKET_NUMBER])


def keyed_batches(task: WriteTask, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`batches` with record key and partition path columns, computed by the key generator where a batch lacks
    them: a vectorized pass here costs less than Spark converting two more string columns per row to Arrow."""
    keygen = task.keygen()
    for batch in batches:
        if PARTITION not in batch.schema.names:
            table = pa.Table.from_batches([batch], batch.schema)
            batch = batch.append_column(KEY, one_chunk(keygen.record_keys(table))) \
                .append_column(PARTITION, one_chunk(keygen.partition_paths(table)))
        yield batch


SAMPLE_SIZE = 20_000  # new keys a task keeps at most to cut key ranges (an adaptive sample, see KeyProfile)


@dataclass
class KeyProfile:
    """What a write's first pass learns from keys alone: records per (partition, file group or bucket number)
    and a uniform sample of the new keys of each partition (for the key ranges of new file groups).

    The sample is adaptive: a key is kept when its hash has `level` low zero bits, and the level rises whenever the
    sample passes SAMPLE_SIZE. Samples of several tasks merge into one uniform sample by filtering all of them to
    the highest level any task reached."""

    counts: dict[tuple[str, str | None, int | None], int]
    level: int = 0
    keys: list[pa.Array] | None = None
    partitions: list[pa.Array] | None = None

    @staticmethod
    def empty() -> "KeyProfile":
        return KeyProfile({}, 0, [], [])

    def add(self, tags: pa.StructArray, deleting: bool) -> None:
        t = pa.Table.from_struct_array(tags)
        live = t if not deleting else t.filter(pc.is_valid(t.column(FILE_ID)))  # deletes of new keys count nowhere
        grouped = live.group_by([PARTITION, FILE_ID, BUCKET_NUMBER], use_threads=False).aggregate([([], "count_all")])
        for p, f, n, c in zip(*(grouped.column(x).to_pylist() for x in (PARTITION, FILE_ID, BUCKET_NUMBER,
                                                                         "count_all"))):
            self.counts[(p, f, n)] = self.counts.get((p, f, n), 0) + c
        if deleting:
            return
        new = live.filter(pc.is_null(live.column(FILE_ID)))
        self._sample(new.column(PARTITION).combine_chunks(), new.column(KEY).combine_chunks())

    def _sample(self, partitions: pa.Array, keys: pa.Array) -> None:
        assert self.keys is not None and self.partitions is not None
        keep = _at_level(keys, self.level)
        self.keys.append(keys.filter(keep))
        self.partitions.append(partitions.filter(keep))
        while sum(len(k) for k in self.keys) > SAMPLE_SIZE:
            self.level += 1
            masks = [_at_level(k, self.level) for k in self.keys]
            self.keys = [k.filter(m) for k, m in zip(self.keys, masks)]
            self.partitions = [p.filter(m) for p, m in zip(self.partitions, masks)]

    def to_table(self) -> pa.Table:
        """One row per count, then one per sampled key (`count` null), with the sample's level."""
        groups = list(self.counts.items())
        keys = pa.concat_arrays(self.keys) if self.keys else pa.array([], pa.string())
        parts = pa.concat_arrays(self.partitions) if self.partitions else pa.array([], pa.string())
        n = len(keys)
        return pa.table({
            "partition": pa.concat_arrays([pa.array([g[0] for g, _ in groups], pa.string()), parts]),
            "file_id": pa.array([g[1] for g, _ in groups] + [None] * n, pa.string()),
            "bucket_number": pa.array([g[2] for g, _ in groups] + [None] * n, pa.int32()),
            "count": pa.array([c for _, c in groups] + [None] * n, pa.int64()),
            "key": pa.concat_arrays([pa.nulls(len(groups), pa.string()), keys]),
            "level": pa.array([self.level] * (len(groups) + n), pa.int32()),
        })

    @staticmethod
    def merge(table: pa.Table) -> tuple[dict[tuple[str, str | None, int | None], int], dict[str, list[str]]]:
        """The tasks' profiles (their `to_table` rows, concatenated) as one: counts summed over tasks, and the new
        keys of every partition in one uniform sample."""
        is_count = pc.is_valid(table.column("count"))
        counted = table.filter(is_count)
        counts: dict[tuple[str, str | None, int | None], int] = {}
        for p, f, b, c in zip(*(counted.column(x).to_pylist() for x in ("partition", "file_id", "bucket_number",
                                                                         "count"))):
            counts[(p, f, b)] = counts.get((p, f, b), 0) + c
        level = pc.max(table.column("level")).as_py() or 0
        sampled = table.filter(pc.invert(is_count))
        if level:
            sampled = sampled.filter(_at_level(sampled.column("key").combine_chunks(), level))
        sample: dict[str, list[str]] = {}
        for p, k in zip(sampled.column("partition").to_pylist(), sampled.column("key").to_pylist()):
            sample.setdefault(p, []).append(k)
        return counts, sample


def _at_level(keys: pa.Array, level: int) -> pa.Array:
    """Keys whose hash has `level` low zero bits (all of them at level 0)."""
    if level == 0:
        return pa.array(np.ones(len(keys), dtype=bool))
    return pa.array((index.java_string_hashes(keys) & np.uint32((1 << level) - 1)) == 0)


# ---- write side: one bucket at a time ----------------------------------------------------------------------------
def write_buckets(task: WriteTask, plan: BucketPlan, batches: Iterable[pa.RecordBatch], token: tuple[int, int, int],
                  timings: dict[str, float], *, sort: bool = False) -> Iterator[WriteStat]:
    """Write the buckets of `batches`, which arrive grouped by bucket and, unless `sort` (each bucket's records
    sorted by key here), by key within: the records of one bucket are gathered, then its handle runs, so the task
    holds one file group's records at a time."""
    ctx = task.context(token)
    for (bucket,), records in _runs(batches, (BUCKET,)):
        if sort:
            records = _by_key(records, keep_distinct=False)
        yield from _timed(timings, write_bucket, task, ctx, plan.buckets[bucket], records)


def write_groups(task: WriteTask, listing: TagSpec | None, plan: MapSidePlan, batches: Iterable[pa.RecordBatch],
                 token: tuple[int, int, int], timings: dict[str, float],
                 known: Mapping[str, list[SliceInfo]] | None = None) -> Iterator[WriteStat]:
    """Write a one-pass write's file groups (`MapSidePlan`): records arrive grouped by (partition, group), and each
    group's are sorted by key here; one file group's records at a time, as `write_buckets`. `known`: the latest
    slices of every partition as the driver listed them (a partition it does not name has none); else each
    partition is listed here (`listing`)."""
    ctx = task.context(token)
    listed: dict[str, dict[str, SliceInfo]] = {}  # per partition: file id -> its latest slice
    for (partition, group), records in file_group_runs(keyed_batches(task, batches), task.base_path,
                                                       appends=task.config.is_mor):
        if partition not in listed:
            found = known.get(partition, []) if known is not None else \
                slices(listing, partition) if listing is not None else []
            listed[partition] = {s.file_id: s for s in found}
        for bucket, part in _map_side_buckets(task, ctx.location.storage, listed[partition], plan, partition, group,
                                              records):
            yield from _timed(timings, write_bucket, task, ctx, bucket, part)


def file_group_runs(batches: Iterable[pa.RecordBatch], where: str, *,
                    appends: bool = False) -> Iterator[tuple[tuple[str, str], list[pa.RecordBatch]]]:
    """A one-pass task's records, which arrive grouped by (partition, group): each group's, sorted by key where the
    order matters (`_by_key`; `appends`: existing groups take log blocks, MOR)."""
    done: set[tuple] = set()
    for (partition, group), records in _runs(batches, (PARTITION, GROUP)):
        if (partition, group) in done:  # two groups' records interleaved: their order hashes collided
            raise WriteError(f"table {where}: the records of file group {group!r} of partition {partition!r} "
                             "reached their task in two runs; retry the write")
        done.add((partition, group))
        yield (partition, group), _by_key(records, keep_distinct=appends and group != NEW_GROUP)


def _by_key(records: list[pa.RecordBatch], *, keep_distinct: bool) -> list[pa.RecordBatch]:
    """A file group's records sorted by key: a new group's files hold one key range each, pre-combining finds a
    key's versions as neighbours, and a COW merge, which lays rows out in the stored (key-sorted) file's order, takes
    the records it meets in order (W3a: unsorted, its gathers cost more than the sort). `keep_distinct`: records
    whose keys are all distinct keep their order (an append's log block has none): one hash of the keys instead of a
    sort and a `take` of every column."""
    table = pa.Table.from_batches(records)
    keys = table.column(KEY)
    if keep_distinct and not _ascending(keys) and pc.count_distinct(keys, mode="all").as_py() == len(keys):
        return records
    records.clear()  # `_runs` holds this list too: without it, the unsorted records go once sorted
    return by_key(table).to_batches()


def _ascending(keys: pa.Array | pa.ChunkedArray) -> bool:
    return pc.all(pc.less_equal(keys.slice(0, len(keys) - 1), keys.slice(1))).as_py() is not False


def by_key(records: pa.Table) -> pa.Table:
    """`records` sorted by key (new files' records: each file holds one key range)."""
    keys = records.column(KEY)
    return records if len(keys) < 2 or _ascending(keys) else records.take(pc.sort_indices(keys))


def _runs(batches: Iterable[pa.RecordBatch], columns: tuple[str, ...]) -> Iterator[tuple[tuple, list[pa.RecordBatch]]]:
    """Batches sorted by `columns`, gathered into runs of equal values: (values, the run's slices)."""
    current: tuple | None = None
    pending: list[pa.RecordBatch] = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        change = np.zeros(batch.num_rows - 1, dtype=bool)
        for c in columns:
            col = batch.column(c)
            change |= pc.not_equal(col.slice(1), col.slice(0, batch.num_rows - 1)).to_numpy(zero_copy_only=False)
        cuts = np.flatnonzero(change) + 1
        for start, end in zip(np.r_[0, cuts], np.r_[cuts, batch.num_rows]):
            values = tuple(batch.column(c)[int(start)].as_py() for c in columns)
            if values != current and pending:
                yield current, pending  # type: ignore[misc]
                pending = []
            current = values
            pending.append(batch.slice(int(start), int(end - start)))
    if pending:
        yield current, pending  # type: ignore[misc]


@dataclass(frozen=True)
class WholeGroups:
    """The partitions a one-pass write takes whole to their one file group, untagged (`MapSidePlan.whole_group`):
    `tagging.tag`'s `skip`."""

    listing: TagSpec
    plan: MapSidePlan

    def __call__(self, partition: str) -> bool:
        return self.plan.whole_group(slices(self.listing, partition)) is not None


def map_side_groups(listing: TagSpec | None, plan: MapSidePlan, tags: pa.StructArray,
                    deleting: bool) -> tuple[pa.Array, pa.Array]:
    """The file group (NEW_GROUP: a new one) and task of every tagged record of a one-pass write (`MapSidePlan`; a
    partition's whole group takes all its records, untagged); a null group for a record nothing takes (a delete of
    a new key). A record tagged into a file group under a pending clustering fails the map task
    (`MapSidePlan.refuse_updates`): the write tasks, after the shuffle, never start."""
    partitions, file_ids = tags.field(PARTITION), tags.field(FILE_ID)
    plan.refuse_updates(partitions, file_ids, listing.base_path if listing is not None else "")
    encoded = pc.dictionary_encode(partitions)
    names = encoded.dictionary.to_pylist()
    listed = [slices(listing, p) if listing is not None else [] for p in names]
    whole = pa.array([plan.whole_group(s) for s in listed], pa.string()).take(encoded.indices)
    targets = pa.array([plan.new_keys_group(s, deleting) for s in listed], pa.string())
    groups = pc.coalesce(whole, file_ids, targets.take(encoded.indices))
    # Each record's (partition, group) pair as one integer: its task is looked up once per pair, by partition.
    by_group = pc.dictionary_encode(groups)
    group_ids = by_group.dictionary.to_pylist()
    width = max(1, len(group_ids))
    valid = valid_mask(by_group)
    pair = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) * width + \
        by_group.indices.fill_null(0).to_numpy(zero_copy_only=False)
    pairs, at = np.unique(pair[valid], return_inverse=True)
    task_of_pair = np.zeros(len(pairs), dtype=np.int32)
    for code in np.unique(pairs // width):
        mine = np.flatnonzero(pairs // width == code)
        gs = [group_ids[int(g)] for g in pairs[mine] % width]
        task_of_pair[mine] = plan.tasks(names[int(code)], gs, listed[int(code)])  # one sort of a partition's ids
    tasks = np.zeros(len(pair), dtype=np.int32)
    tasks[valid] = task_of_pair[at]
    return groups, pa.array(tasks, mask=~valid)  # a null group (nothing takes the record): a null task


def _map_side_buckets(task: WriteTask, storage: Storage, listed: dict[str, SliceInfo], plan: MapSidePlan,
                      partition: str, group: str, records: list[pa.RecordBatch]) -> list[tuple[Bucket, list[pa.RecordBatch]]]:
    """The bucket of a one-pass write's file group (`listed`: the partition's slices by file id); a small file's new
    records past its room go to a new group."""
    if group == NEW_GROUP:
        return [(Bucket(0, BucketType.INSERT, partition, new_file_id()), records)]
    if group not in listed:
        raise WriteError(f"table {task.base_path}: file group {group} of partition {partition!r} is gone; another "
                         "writer may have replaced it")
    s = plan.slice_of(listed[group])
    bucket = Bucket(0, BucketType.UPDATE, partition, group, s)
    room = plan.room(s)
    if not plan.pack_small_files or sum(b.num_rows for b in records) <= room:
        return [(bucket, records)]
    table = pa.Table.from_batches(records)
    if plan.whole_group(list(listed.values())) == group:  # untagged: the new keys are those the file does not hold
        stored = task.read_keys(storage, s.base_file_path)  # type: ignore[arg-type]
        new = np.flatnonzero(~index.held(table.column(KEY), stored))
    else:
        new = np.flatnonzero(pc.is_null(table.column(FILE_ID)).to_numpy(zero_copy_only=False))
    if len(new) <= room:
        return [(bucket, records)]
    overflow = np.zeros(table.num_rows, dtype=bool)
    overflow[new[room:]] = True
    return [(bucket, table.filter(pa.array(~overflow)).to_batches()),
            (Bucket(0, BucketType.INSERT, partition, new_file_id()), table.filter(pa.array(overflow)).to_batches())]


def _timed(timings: dict[str, float], fn, *args) -> list[WriteStat]:
    t0 = time.perf_counter()
    out = fn(*args)
    timings["handles_s"] = timings.get("handles_s", 0.0) + time.perf_counter() - t0
    return out


def write_bucket(task: WriteTask, ctx: WriteContext, bucket: Bucket, batches: list[pa.RecordBatch]) -> list[WriteStat]:
    """One file group's records through its handle: merge (COW) or append (MOR) for an existing group, create
    (rolling over at the max file size) for a new one. Returns the write stats of the files written."""
    cfg = task.config
    records = pa.Table.from_batches(batches)  # chunks as they came: no copy of the bucket's records
    if cfg.combine_before_write:
        records = pre_combine(task, records)
    deleting = records.column(DELETE).to_numpy(zero_copy_only=False) if DELETE in records.column_names \
        else np.zeros(records.num_rows, dtype=bool)
    data = records.select([c for c in records.column_names if not c.startswith(HELPER_PREFIX)])
    if deleting.any():
        upserts = data.filter(pa.array(~deleting))
        deletes = data.column(KEY).filter(pa.array(deleting)).combine_chunks()
    else:
        upserts, deletes = data, pa.array([], pa.string())
    p = bucket.partition_path
    if cfg.merge.update_columns and bucket.bucket_type is BucketType.UPDATE and task.stored is not None:
        # Partial update: matched keys keep their stored values outside the update columns.
        upserts = with_stored_values(ctx.location, task.stored, cfg, p, bucket.file_id, upserts)
    if bucket.bucket_type is BucketType.INSERT:  # records come sorted by key: each file holds one key range
        handle = CreateHandle(ctx, p, file_id=bucket.file_id, roll_over=cfg.index.type is not IndexType.BUCKET,
                              record_size=task.avg_record_size)
        handle.write(upserts)  # deletes of new keys write nothing
        return handle.close()
    s = bucket.slice
    assert s is not None
    if not cfg.is_mor:
        merging = MergeHandle(ctx, p, bucket.file_id, s.base_file_path)  # type: ignore[arg-type]
        merging.write(upserts)
        merging.delete(deletes)
        return merging.close()
    stats: list[WriteStat] = []
    placed = _placed_by_index(cfg, records, bucket.file_id)
    if placed is not None:
        # Tagged by the record index, which is exact (log-only keys included): the keys it placed here are updates,
        # the others new. No read of the base file's keys, so the write follows the batch, not the file group.
        here = pc.is_in(upserts.column(KEY), value_set=placed)
        new = upserts.filter(pc.invert(here))
        upserts = upserts.filter(here)
        if len(deletes):
            deletes = deletes.filter(pc.is_in(deletes, value_set=placed))
    elif cfg.index.type is not IndexType.BUCKET and s.base_file_path is not None:
        # Tagged by footer (range, bloom): only keys the base file holds are updates. A key a bloom filter let
        # through by mistake is new: it goes to a new file group, a delete of it is dropped.
        stored = task.read_keys(ctx.location.storage, s.base_file_path)
        inside = pa.array(index.held(upserts.column(KEY), stored))
        new = upserts.filter(pc.invert(inside))
        upserts = upserts.filter(inside)
        if len(deletes):
            deletes = deletes.filter(pa.array(index.held(deletes, stored)))
    else:
        new = upserts.slice(0, 0)
    if new.num_rows:
        handle = CreateHandle(ctx, p, record_size=task.avg_record_size)
        handle.write(by_key(new))
        stats += handle.close()
    if upserts.num_rows or len(deletes):
        appending = AppendHandle(ctx, p, bucket.file_id, s.base_instant, base_file_name=s.base_file_name,
                                 placed=placed)
        if upserts.num_rows:
            appending.write(upserts)
        if len(deletes):
            appending.delete(deletes)
        stats += appending.close()
    return stats


def _placed_by_index(cfg: WriteConfig, records: pa.Table, file_id: str) -> pa.Array | None:
    """The keys of `records` the record index placed in file group `file_id` when the write tagged them (RECORD_INDEX
    tags by the index; the routing keeps the tag for this), else None."""
    if cfg.index.type is not IndexType.RECORD_INDEX or FILE_ID not in records.column_names:
        return None
    here = pc.fill_null(pc.equal(records.column(FILE_ID), file_id), False)
    return one_chunk(records.column(KEY).filter(here))


def pre_combine(task: WriteTask, records: pa.Table) -> pa.Table:
    """Duplicates of a key reduced with the payload's pre-combine. `records` arrive sorted by key (a bucket's, or a
    sorted run) or with distinct keys (`_by_key`), so versions of a key are neighbours: without two equal neighbours
    there is nothing to do, found without hashing every key."""
    keys = records.column(KEY)
    if len(keys) < 2 or not pc.any(pc.equal(keys.slice(1), keys.slice(0, len(keys) - 1))).as_py():
        return records
    cfg = task.config
    # A delete's DataFrame may carry only the keys: without the ordering column, later versions win.
    ordering = cfg.merge.precombine_field if cfg.merge.precombine_field in records.column_names else None
    return merge_records(records.schema.empty_table(), [records.combine_chunks()], key_of=lambda t: t.column(KEY),
                         ordering_field=ordering, payload=cfg.merge.payload).records


def pre_combine_sorted(task: WriteTask, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Pre-combine records that arrive sorted by key, a batch at a time: the last key's rows of a batch wait for
    the next batch (its versions may continue there), so memory stays at one batch."""
    carry: pa.Table | None = None
    for batch in batches:
        table = pa.Table.from_batches([batch])
        if carry is not None:
            table = pa.concat_tables([carry, table])
        if table.num_rows == 0:
            continue
        keys = table.column(KEY)
        last = keys[table.num_rows - 1]
        tail = pc.equal(keys, last).to_numpy(zero_copy_only=False)
        first_tail = int(np.argmax(tail))
        carry = table.slice(first_tail)
        if first_tail:
            yield from pre_combine(task, table.slice(0, first_tail)).to_batches()
    if carry is not None and carry.num_rows:
        yield from pre_combine(task, carry).to_batches()


# ---- bulk insert -------------------------------------------------------------------------------------------------
def bulk_insert_files(task: WriteTask, batches: Iterable[pa.RecordBatch], token: tuple[int, int, int],
                      timings: dict[str, float] | None = None) -> Iterator[WriteStat]:
    """bulk_insert: records that arrive grouped by partition path (and, when sorted, by key) are cut into new base
    files of the max file size by bytes written; a file never spans two partitions. Holds one chunk and one
    file's bytes at a time. Batches without key and partition columns are keyed here (`keyed_batches`)."""
    ctx = task.context(token)
    records = keyed_batches(task, batches)
    records = pre_combine_sorted(task, records) if task.config.combine_before_write else records
    handle: CreateHandle | None = None
    for batch in records:
        if batch.num_rows == 0:
            continue
        t = pa.Table.from_batches([batch])
        parts = t.column(PARTITION)
        change = np.flatnonzero(pc.not_equal(parts.slice(1), parts.slice(0, len(parts) - 1))
                                .to_numpy(zero_copy_only=False)) + 1 if len(parts) > 1 else np.array([], np.int64)
        for start, end in zip(np.r_[0, change], np.r_[change, t.num_rows]):
            piece = t.slice(int(start), int(end - start))
            partition = piece.column(PARTITION)[0].as_py()
            if handle is not None and handle.partition_path != partition:
                yield from handle.close()
                handle = None
            if handle is None:
                handle = CreateHandle(ctx, partition, record_size=task.avg_record_size)
            handle.write(piece.select([c for c in piece.column_names if not c.startswith(HELPER_PREFIX)]))
    if handle is not None:
        yield from handle.close()
