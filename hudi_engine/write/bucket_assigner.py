"""Bucket assignment: which file group each record of a write goes to (Hudi's upsert partitioner).

Updates go to the file group they live in. Inserts of a partition first fill its small files (base files below
`hoodie.parquet.small.file.limit`) up to `hoodie.parquet.max.file.size`, using the average record size of recent
commits, then go to new file groups sized to the max file size. An insert record picks its bucket by the hash
of its key against the buckets' cumulative weights, so a retried task sends it to the same bucket.
This module only plans: it sees counts and file sizes, never records.
"""
from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hudi_engine.file_naming import new_file_id


class BucketType(enum.Enum):
    UPDATE = "UPDATE"  # an existing file group: merge (COW) or append (MOR); may also take inserts (small file)
    INSERT = "INSERT"  # a new file group


@dataclass(frozen=True, slots=True)
class Bucket:
    bucket_id: int
    bucket_type: BucketType
    partition_path: str
    file_id: str


@dataclass(frozen=True, slots=True)
class SmallFile:
    file_id: str
    size: int


@dataclass
class BucketPlan:
    buckets: list[Bucket] = field(default_factory=list)
    update_bucket: dict[tuple[str, str], int] = field(default_factory=dict)  # (partition, file id) -> bucket
    # partition -> (bucket ids, cumulative weights ending in 1.0) for inserts
    insert_buckets: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)
    # BUCKET index: (partition, bucket number) -> bucket; every record goes to its key's bucket
    by_bucket_number: dict[tuple[str, int], int] = field(default_factory=dict)

    def add(self, bucket_type: BucketType, partition: str, file_id: str) -> int:
        b = Bucket(len(self.buckets), bucket_type, partition, file_id)
        self.buckets.append(b)
        if bucket_type is BucketType.UPDATE:
            self.update_bucket[(partition, file_id)] = b.bucket_id
        return b.bucket_id

    def insert_bucket_ids(self, partition: str, hash_fraction: np.ndarray) -> np.ndarray:
        """Bucket of each insert record of `partition`, from a hash of its key in [0, 1)."""
        ids, cumulative = self.insert_buckets[partition]
        pos = np.searchsorted(np.asarray(cumulative), hash_fraction, side="right")
        return np.asarray(ids, dtype=np.int64)[np.minimum(pos, len(ids) - 1)]


def plan_buckets(
    update_counts: dict[tuple[str, str], int],
    insert_counts: dict[str, int],
    small_files: dict[str, list[SmallFile]],
    *,
    avg_record_size: int,
    max_file_size: int,
) -> BucketPlan:
    """Plan buckets for tagged counts. `small_files` is empty where inserts must not go to existing groups."""
    plan = BucketPlan()
    for (partition, file_id) in sorted(update_counts):
        plan.add(BucketType.UPDATE, partition, file_id)
    per_file = max(1, max_file_size // max(1, avg_record_size))
    for partition in sorted(insert_counts):
        remaining = insert_counts[partition]
        if remaining <= 0:
            continue
        ids: list[int] = []
        weights: list[int] = []
        for small in sorted(small_files.get(partition, []), key=lambda s: s.size):
            if remaining <= 0:
                break
            room = (max_file_size - small.size) // max(1, avg_record_size)
            take = min(room, remaining)
            if take <= 0:
                continue
            bucket = plan.update_bucket.get((partition, small.file_id))
            if bucket is None:
                bucket = plan.add(BucketType.UPDATE, partition, small.file_id)
            ids.append(bucket)
            weights.append(take)
            remaining -= take
        if remaining > 0:
            n_new = math.ceil(remaining / per_file)
            share = remaining / n_new
            for _ in range(n_new):
                ids.append(plan.add(BucketType.INSERT, partition, new_file_id()))
                weights.append(share)
        total = float(sum(weights))
        cumulative = list(np.cumsum(weights) / total)
        cumulative[-1] = 1.0
        plan.insert_buckets[partition] = (ids, cumulative)
    return plan


def plan_bulk_insert(insert_counts: dict[str, int], *, avg_record_size: int, max_file_size: int) -> BucketPlan:
    """bulk_insert: no index, new file groups only, each partition cut into files of the max file size."""
    return plan_buckets({}, insert_counts, {}, avg_record_size=avg_record_size, max_file_size=max_file_size)


def plan_bucket_index(
    counts: dict[tuple[str, int], int],
    existing: dict[tuple[str, int], str],
    *,
    new_file_id_for: "Callable[[int], str]",
    deleting: bool = False,
) -> BucketPlan:
    """BUCKET index: one bucket per (partition, bucket number); an existing file group of that number is updated,
    else a new file group with the number's file id prefix is created (a delete creates nothing)."""
    plan = BucketPlan()
    for (partition, number) in sorted(counts):
        file_id = existing.get((partition, number))
        if file_id is not None:
            plan.by_bucket_number[(partition, number)] = plan.add(BucketType.UPDATE, partition, file_id)
        elif not deleting:
            plan.by_bucket_number[(partition, number)] = plan.add(BucketType.INSERT, partition, new_file_id_for(number))
    return plan
