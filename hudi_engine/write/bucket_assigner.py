"""Bucket assignment (Hudi's upsert partitioner): which file group every record of a write goes to, and which task
writes each file group. The driver plans from counts and a listing; map tasks assign records with `assign`.

A bucket is one file group's share of the write, written by one task with one handle:
* UPDATE: an existing file group (its tagged records; COW small files also take inserts).
* INSERT: a new file group of about `hoodie.parquet.max.file.size`.
Inserts of a partition first fill its small files (base files below `hoodie.parquet.small.file.limit`, COW only)
up to the max file size, using the average record size of recent commits, then go to new file groups. They are cut
by key: a sample of the partition's insert keys gives the boundaries, so each new file holds one key range and a
retried task sends every key to the same bucket. BUCKET index: one bucket per (partition, bucket number).

Buckets go to `min(buckets, parallelism)` tasks, largest first to the least loaded task, so the number of tasks
that write grows with the file groups a write touches or creates, inside one partition as across partitions.
A write whose input holds less than one file of records skips the counts: `MapSidePlan` lets map tasks choose
its buckets. This module only plans and maps keys: it never sees a record's data.
"""
from __future__ import annotations

import bisect
import enum
import heapq
import math
import zlib
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import WriteError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import new_file_id
from hudi_engine.timeline.clustering import clustering_update_error
from hudi_engine.write import index

SAMPLES_PER_BUCKET = 100  # insert keys sampled per insert bucket to cut key ranges (as Spark's range partitioner)


class BucketType(enum.Enum):
    UPDATE = "UPDATE"  # an existing file group: merge (COW) or append (MOR); may also take inserts (small file)
    INSERT = "INSERT"  # a new file group


@dataclass(frozen=True, slots=True)
class SliceInfo:
    """The latest slice of an existing file group, as the driver's listing sees it."""

    partition_path: str
    file_id: str
    base_instant: str  # the slice a new log file belongs to (a pending compaction's instant, if any)
    base_file_path: str | None
    base_file_name: str | None
    base_file_size: int

    @staticmethod
    def of(s: FileSlice, compacting: Mapping[tuple[str, str], str]) -> "SliceInfo":
        """A listed slice; `compacting` maps (partition, file id) to the instant of a pending compaction planned
        over the group (its new log files belong to that slice)."""
        b = s.base_file
        return SliceInfo(s.partition_path, s.file_id, compacting.get((s.partition_path, s.file_id), s.base_instant),
                         b.path if b else None, b.name.format() if b else None, b.size if b else 0)


@dataclass(frozen=True, slots=True)
class Bucket:
    bucket_id: int
    bucket_type: BucketType
    partition_path: str
    file_id: str
    slice: SliceInfo | None = None  # UPDATE buckets
    records: int = 0  # expected incoming records
    size: int = 0  # estimated bytes to write (for balancing tasks)


@dataclass(frozen=True)
class Counts:
    """What the tagging pass counted: records per existing file group, new records per partition, and for the
    BUCKET index new records per (partition, bucket number)."""

    updates: Mapping[tuple[str, str], int] = field(default_factory=dict)
    inserts: Mapping[str, int] = field(default_factory=dict)
    new_buckets: Mapping[tuple[str, int], int] = field(default_factory=dict)

    @property
    def partitions(self) -> list[str]:
        return sorted({p for p, _ in self.updates} | set(self.inserts) | {p for p, _ in self.new_buckets})


@dataclass(frozen=True)
class BucketPlan:
    """The write's buckets and their tasks; `insert_ranges[p]` = (bucket ids, cumulative weights, key boundaries):
    bucket `ids[j]` takes the partition's new keys in [boundaries[j-1], boundaries[j])."""

    buckets: tuple[Bucket, ...]
    insert_ranges: Mapping[str, tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]]]
    new_buckets: Mapping[tuple[str, int], int]  # BUCKET index: (partition, number) -> bucket id
    task_of_bucket: tuple[int, ...]
    n_tasks: int

    def needs_sample(self) -> dict[str, float]:
        """Partitions whose inserts span several buckets and have no boundaries yet, with the share of their
        insert keys to sample."""
        out = {}
        for p, (ids, _, bounds) in self.insert_ranges.items():
            if len(ids) > 1 and not bounds:
                inserts = sum(self.buckets[b].records for b in ids)
                out[p] = min(1.0, SAMPLES_PER_BUCKET * len(ids) / max(1, inserts))
        return out

    def with_samples(self, samples: Mapping[str, Sequence[str]]) -> "BucketPlan":
        """Boundaries from sampled insert keys: the keys at the cumulative weights of each partition's buckets."""
        ranges = dict(self.insert_ranges)
        for p, keys in samples.items():
            ids, weights, _ = ranges[p]
            ordered = sorted(keys)
            if not ordered:
                continue
            bounds = tuple(ordered[min(len(ordered) - 1, round(w * len(ordered)))] for w in weights[:-1])
            ranges[p] = (ids, weights, bounds)
        return BucketPlan(self.buckets, ranges, self.new_buckets, self.task_of_bucket, self.n_tasks)

    def assign(self, partitions: pa.Array, keys: pa.Array, file_ids: pa.Array,
               bucket_numbers: pa.Array | None = None) -> np.ndarray:
        """The bucket of every record: its file group's for a tagged key, else its partition's insert bucket by key
        (or, for the BUCKET index, its bucket number's); -1 for a record nothing takes (a delete of a new key)."""
        n = len(keys)
        out = np.full(n, -1, dtype=np.int64)
        tagged = pc.is_valid(file_ids).to_numpy(zero_copy_only=False)
        if tagged.any():
            rows = np.flatnonzero(tagged)
            groups = [b for b in self.buckets if b.bucket_type is BucketType.UPDATE]
            known = pa.array([_group_key(b.partition_path, b.file_id) for b in groups], pa.string())
            wanted = pc.binary_join_element_wise(partitions.take(pa.array(rows)), file_ids.take(pa.array(rows)), "/")
            pos = pc.index_in(wanted, value_set=known).fill_null(len(groups)).to_numpy(zero_copy_only=False)
            out[rows] = np.array([b.bucket_id for b in groups] + [-1], dtype=np.int64)[pos]
        new = np.flatnonzero(~tagged)
        if len(new) == 0:
            return out
        parts = partitions.take(pa.array(new))
        if bucket_numbers is not None and self.new_buckets:
            known = pa.array([_group_key(p, str(n)) for p, n in self.new_buckets], pa.string())
            wanted = pc.binary_join_element_wise(parts, bucket_numbers.take(pa.array(new)).cast(pa.string()), "/")
            pos = pc.index_in(wanted, value_set=known).fill_null(len(known)).to_numpy(zero_copy_only=False)
            out[new] = np.array([*self.new_buckets.values(), -1], dtype=np.int64)[pos]
            return out
        encoded = pc.dictionary_encode(parts)
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        for code, p in enumerate(encoded.dictionary.to_pylist()):
            if p not in self.insert_ranges:
                continue
            ids, _, bounds = self.insert_ranges[p]
            rows = new[codes == code]
            slot = np.zeros(len(rows), dtype=np.int64)
            if bounds:
                k = keys.take(pa.array(rows))
                for b in bounds:
                    slot += pc.greater_equal(k, b).to_numpy(zero_copy_only=False)
            out[rows] = np.asarray(ids, dtype=np.int64)[np.minimum(slot, len(ids) - 1)]
        return out

    def tasks(self, buckets: np.ndarray) -> np.ndarray:
        """The task of every bucket id (0 for -1: records nothing takes, filtered out before the shuffle)."""
        out = np.zeros(len(buckets), dtype=np.int64)
        taken = buckets >= 0
        out[taken] = np.asarray(self.task_of_bucket, dtype=np.int64)[buckets[taken]]
        return out


def _group_key(partition: str, file_id: str) -> str:
    return f"{partition}/{file_id}"


def plan_buckets(
    counts: Counts,
    slices: Mapping[str, Sequence[SliceInfo]],
    *,
    avg_record_size: int,
    max_file_size: int,
    small_file_limit: int,
    pack_small_files: bool,
    parallelism: int,
    where: str,
    clustering: Container[tuple[str, str]] = frozenset(),
) -> BucketPlan:
    """Plan buckets for tagged counts; `slices` are the latest slices of the touched partitions (driver listing).
    `pack_small_files` is false where inserts must not go to existing groups (MOR, overwrites); small files under a
    pending clustering (`clustering`) never take inserts (Hudi's UpsertPartitioner.filterSmallFilesInClustering)."""
    buckets: list[Bucket] = []
    by_group: dict[tuple[str, str], int] = {}
    listed = {(p, s.file_id): s for p, ss in slices.items() for s in ss}

    def add(kind: BucketType, partition: str, file_id: str, s: SliceInfo | None, records: int) -> int:
        size = records * avg_record_size + (s.base_file_size if s is not None else 0)
        buckets.append(Bucket(len(buckets), kind, partition, file_id, s, records, size))
        if kind is BucketType.UPDATE:
            by_group[(partition, file_id)] = len(buckets) - 1
        return len(buckets) - 1

    for (partition, file_id), n in sorted(counts.updates.items()):
        s = listed.get((partition, file_id))
        if s is None:
            raise WriteError(f"table {where}: file group {file_id} of partition {partition!r} is gone; another "
                             "writer may have replaced it")
        add(BucketType.UPDATE, partition, file_id, s, n)
    per_file = max(1, max_file_size // max(1, avg_record_size))
    ranges: dict[str, tuple[tuple[int, ...], tuple[float, ...], tuple[str, ...]]] = {}
    for partition, remaining in sorted(counts.inserts.items()):
        if remaining <= 0:
            continue
        ids: list[int] = []
        weights: list[float] = []
        small = [s for s in slices.get(partition, ()) if pack_small_files and small_file_limit > 0
                 and s.base_file_path is not None and s.base_file_size < small_file_limit
                 and (partition, s.file_id) not in clustering]
        for s in sorted(small, key=lambda s: s.base_file_size):
            room = (max_file_size - s.base_file_size) // max(1, avg_record_size)
            take = min(room, remaining)
            if take <= 0:
                continue
            bucket = by_group.get((partition, s.file_id))
            if bucket is None:
                bucket = add(BucketType.UPDATE, partition, s.file_id, s, 0)
            buckets[bucket] = _more(buckets[bucket], take, avg_record_size)
            ids.append(bucket)
            weights.append(take)
            remaining -= take
            if remaining <= 0:
                break
        if remaining > 0:
            n_new = math.ceil(remaining / per_file)
            share = remaining / n_new
            for _ in range(n_new):
                ids.append(add(BucketType.INSERT, partition, new_file_id(), None, math.ceil(share)))
                weights.append(share)
        cumulative = tuple(float(w) for w in np.cumsum(weights) / float(sum(weights)))
        ranges[partition] = (tuple(ids), cumulative[:-1] + (1.0,), ())
    new_buckets = {}
    for (partition, number), n in sorted(counts.new_buckets.items()):
        new_buckets[(partition, number)] = add(BucketType.INSERT, partition, index.bucket_file_id(number), None, n)
    task_of_bucket, n_tasks = balance_tasks([b.size for b in buckets], parallelism)
    return BucketPlan(tuple(buckets), ranges, new_buckets, task_of_bucket, n_tasks)


def _more(b: Bucket, records: int, avg_record_size: int) -> Bucket:
    return Bucket(b.bucket_id, b.bucket_type, b.partition_path, b.file_id, b.slice, b.records + records,
                  b.size + records * avg_record_size)


def balance_tasks(sizes: Sequence[int], parallelism: int) -> tuple[tuple[int, ...], int]:
    """Work items (buckets, key ranges) to min(items, parallelism) tasks: largest first onto the least loaded task."""
    n_tasks = max(1, min(len(sizes), parallelism))
    heap = [(0, t) for t in range(n_tasks)]
    task = [0] * len(sizes)
    for b in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        load, t = heapq.heappop(heap)
        task[b] = t
        heapq.heappush(heap, (load + max(1, sizes[b]), t))
    return tuple(task), n_tasks


NEW_GROUP = ""  # a one-pass write's group of a partition's new keys: one new file group, named by its task


@dataclass(frozen=True)
class MapSidePlan:
    """Buckets of a write whose whole input holds less than one file of records, chosen in the map tasks without a
    counting pass, so the write is one Spark job. Every partition's inserts then fit one file group: a tagged key
    goes to its file group, a new key to its partition's smallest small file (COW; what passes its room goes on to
    a new file group) or to one new file group. A partition of one file group that would take all its records
    anyway is not tagged at all (`whole_group`). Groups go to tasks by their rank in the partition's listing,
    shifted by the partition's hash, so a partition's file groups spread over the tasks. A task still holds one
    file group's records at a time."""

    n_tasks: int
    pack_small_files: bool
    small_file_limit: int
    max_file_size: int
    avg_record_size: int
    compacting: Mapping[tuple[str, str], str]
    whole_groups: bool = False  # MOR upserts and deletes, COW upserts: see `whole_group`
    # File groups under a pending clustering -> its instant (`timeline.clustering.PendingClustering`): never a whole
    # group (its keys are tagged, so updates there are found and refused), never where new keys go.
    clustering: Mapping[tuple[str, str], str] = field(default_factory=dict)
    # SparkRejectUpdateStrategy; False with SparkAllowUpdateStrategy (the clustering checks for them when it executes)
    refuse_clustering_updates: bool = True

    def whole_group(self, slices: Sequence[SliceInfo]) -> str | None:
        """The file group of a partition that has just one (with a base file), when it takes all the partition's
        records untagged; None: tag as usual.
        * MOR upserts and deletes: its task checks every key against the base file, as it checks a bloom filter's
          false positives: it logs the updates and deletes of stored keys and writes the other records to a new file
          group, where tagged new keys would go.
        * COW upserts, when the group is the small file the partition's new keys fill: its merge takes updates and
          inserts alike (what passes the file's room goes on to a new group, `room`)."""
        if not self.whole_groups or len(slices) != 1 or slices[0].base_file_path is None \
                or (slices[0].partition_path, slices[0].file_id) in self.clustering:
            return None
        if self.pack_small_files and self.insert_group(slices) != slices[0].file_id:
            return None
        return slices[0].file_id

    def insert_group(self, slices: Sequence[SliceInfo]) -> str:
        """The file group a partition's new keys go to: its smallest small base file (COW) that no pending clustering
        will replace, else NEW_GROUP."""
        small = [s for s in slices if self.pack_small_files and self.small_file_limit > 0
                 and s.base_file_path is not None and s.base_file_size < self.small_file_limit
                 and (s.partition_path, s.file_id) not in self.clustering]
        return min(small, key=lambda s: (s.base_file_size, s.file_id)).file_id if small else NEW_GROUP

    def refuse_updates(self, partitions: pa.Array, file_ids: pa.Array, where: str) -> None:
        """Tagged records of file groups under a pending clustering fail the map task, so the write stops before
        its write tasks start (SparkRejectUpdateStrategy; `PendingClustering.refuse_updates`)."""
        if not self.clustering or not self.refuse_clustering_updates:
            return
        tagged = pc.is_valid(file_ids)
        if not pc.any(tagged).as_py():
            return
        # A one-pass write holds less than one file of records: a Python pass over its tagged ones is cheap.
        hit = sorted({(p, f) for p, f in zip(partitions.filter(tagged).to_pylist(), file_ids.filter(tagged).to_pylist())
                      if (p, f) in self.clustering})
        if hit:
            raise clustering_update_error(hit, self.clustering, where)

    def new_keys_group(self, slices: Sequence[SliceInfo], deleting: bool) -> str | None:
        """Where a partition's keys go when no file group holds them: `insert_group`; None for a delete."""
        return None if deleting else self.insert_group(slices)

    def tasks(self, partition: str, groups: Sequence[str], slices: Sequence[SliceInfo]) -> list[int]:
        """The task of each of a partition's file groups (NEW_GROUP: after its listed groups)."""
        ids = sorted(s.file_id for s in slices)
        shift = zlib.crc32(partition.encode())
        return [((bisect.bisect_left(ids, g) if g != NEW_GROUP else len(ids)) + shift) % self.n_tasks for g in groups]

    def room(self, s: SliceInfo) -> int:
        """New records a small file takes before it reaches the max file size."""
        return max(0, (self.max_file_size - s.base_file_size) // max(1, self.avg_record_size))

    def slice_of(self, listed: SliceInfo) -> SliceInfo:
        """A listed slice with the base instant its new log files take (a pending compaction's)."""
        key = (listed.partition_path, listed.file_id)
        return replace(listed, base_instant=self.compacting[key]) if key in self.compacting else listed


@dataclass(frozen=True)
class BulkInsertRanges:
    """bulk_insert's GLOBAL_SORT ranges, sized by rows: a partition goes whole to one task unless it holds more than a
    task's share of the write; then it is cut by key into that many ranges (at most the parallelism), at keys sampled
    from it. Ranges go to tasks largest first onto the least loaded, so small partitions are not cut into small files
    and a huge one spreads over tasks. `ranges[p]` = (key bounds, task of each range): range j holds the keys in
    [bounds[j-1], bounds[j])."""

    ranges: Mapping[str, tuple[tuple[str, ...], tuple[int, ...]]]
    n_tasks: int

    @staticmethod
    def cuts(counts: Mapping[str, int], parallelism: int) -> dict[str, int]:
        """The partitions to cut by key, and into how many ranges."""
        share = max(1, math.ceil(sum(counts.values()) / max(1, parallelism)))
        return {p: min(parallelism, math.ceil(n / share)) for p, n in counts.items() if n > share}

    @staticmethod
    def plan(counts: Mapping[str, int], samples: Mapping[str, Sequence[str]], parallelism: int) -> "BulkInsertRanges":
        """Ranges from the rows per partition and sampled keys of the partitions `cuts` names."""
        cuts = BulkInsertRanges.cuts(counts, parallelism)
        pieces: list[tuple[str, int]] = []
        bounds: dict[str, tuple[str, ...]] = {}
        for p, n in sorted(counts.items()):
            keys = sorted(samples.get(p, ()))
            k = cuts.get(p, 1)
            bounds[p] = tuple(sorted({keys[min(len(keys) - 1, round(j * len(keys) / k))] for j in range(1, k)})) \
                if k > 1 and keys else ()
            pieces += [(p, math.ceil(n / (len(bounds[p]) + 1)))] * (len(bounds[p]) + 1)
        task_of, n_tasks = balance_tasks([rows for _, rows in pieces], parallelism)
        tasks: dict[str, list[int]] = {}
        for (p, _), t in zip(pieces, task_of):
            tasks.setdefault(p, []).append(t)
        return BulkInsertRanges({p: (bounds[p], tuple(tasks[p])) for p in bounds}, n_tasks)
