"""Bucket assignment: which file group each record of a write goes to (Hudi's upsert partitioner).

Updates go to the file group they live in. Inserts of a partition first fill its small files (base files below
`hoodie.parquet.small.file.limit`) up to `hoodie.parquet.max.file.size`, using the average record size of recent
commits, then go to new file groups sized to the max file size. The inserts, in key order, are cut by the
buckets' cumulative weights (`executor`), so a retried task sends every key to the same bucket and each new file
holds one key range. This module only plans: it sees counts and file sizes, never records.
"""
from __future__ import annotations

import enum
import math
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

    def add(self, bucket_type: BucketType, partition: str, file_id: str) -> int:
        b = Bucket(len(self.buckets), bucket_type, partition, file_id)
        self.buckets.append(b)
        if bucket_type is BucketType.UPDATE:
            self.update_bucket[(partition, file_id)] = b.bucket_id
        return b.bucket_id


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
