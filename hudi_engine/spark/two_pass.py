"""The two-pass write of an upsert, insert, delete or overwrite (SIMPLE, BLOOM and BUCKET index), Hudi's workload
profile then its upsert partitioner:
1. keys: a map pass over the key and partition columns only computes every record's key and partition path, tags it
   with the file group holding its key (`executor.key_and_tag`: footer key ranges and bloom filters), and returns
   counts per (partition, file group) and a sample of the new keys (`executor.KeyProfile`); no shuffle. The driver
   lists the touched partitions and plans buckets (updates per file group, inserts into small files then new file
   groups of the max file size, cut at sampled keys) over `min(buckets, parallelism)` tasks
   (`write.bucket_assigner`);
2. write: the records, keyed and tagged again (the same tags) and given their bucket and task in one Python pass
   (`BucketPlan.assign`; no join, so no job to broadcast routes), are shuffled once by task as Arrow chunks of one
   bucket each (`arrow_shuffle`), and each task runs one handle per file group, holding one file group's records at
   a time (`executor.write_buckets`).
The input runs once: a caller's cached DataFrame is read twice, any other is persisted between the passes.
"""
from __future__ import annotations

import time

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudi_engine.spark.arrow_shuffle import CHUNK_TYPE, shuffled
from hudi_engine.spark.row_check import check_rows
from hudi_engine.spark.write_udfs import (
    PROFILE_SCHEMA,
    TASK_OUTPUT,
    ProfileFn,
    RoutePackFn,
    WriteFn,
    key_source_columns,
    write_stats,
)
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import BucketPlan, Counts
from hudi_engine.write.executor import BUCKET, KEY, TASK, KeyProfile, WriteTask
from hudi_engine.write.tagging import TagSpec
from hudi_engine.write.write_client import Transaction, WriteClient


def write_files(df: DataFrame, client: WriteClient, task: WriteTask, txn: Transaction,
                parallelism: int) -> list[WriteStat]:
    """The write's files: the bucket plan from a pass over the keys, then the records routed, shuffled, written."""
    config = client.config
    t0 = time.monotonic()
    # Two passes over the input, which runs once: a caller's cached DataFrame is read twice, any other is persisted.
    level = df.storageLevel  # the cache manager's answer: also for a DataFrame whose plan a cached one shares
    persisted = not (level.useMemory or level.useDisk)
    source = df.persist(StorageLevel.MEMORY_AND_DISK) if persisted else df
    try:
        # 1. Keys alone: counts per (partition, file group) and a sample of the new keys (one Python pass over the
        # key columns; no shuffle).
        spec = client.tag_spec(txn.instant)
        plan = bucket_plan(source, client, task, spec, parallelism)
        txn.timings["plan"] = time.monotonic() - t0
        # 2. The records, tagged again (the same tags) and given their bucket and task, shuffled once, written.
        # Routed and packed in one Python pass, the records cross the shuffle as Arrow chunks of one bucket each
        # (`arrow_shuffle`); a task sorts a bucket's records by key.
        chunks = source.mapInArrow(RoutePackFn(task, spec, plan, key_source_columns(config, source.columns)),
                                   CHUNK_TYPE)
        results = shuffled(chunks, plan.n_tasks).mapInArrow(WriteFn(task, plan, chunks=True), TASK_OUTPUT).collect()
    finally:
        if persisted:
            source.unpersist()
    txn.timings["write"] = time.monotonic() - t0
    return write_stats(results, txn)


def bucket_plan(source: DataFrame, client: WriteClient, task: WriteTask, spec: TagSpec | None,
                parallelism: int) -> BucketPlan:
    """The bucket plan from the first pass over the keys (see `executor.KeyProfile`)."""
    config = client.config
    # Null keys and null ordering values fail here, naming the row, before the instant has a file.
    check = check_rows(source, config)
    keys = source.select(*[F.col(f"`{c}`") for c in key_source_columns(config, source.columns)],
                         *([check.alias("_hw_check")] if check is not None else []))
    counted, sample = KeyProfile.merge(keys.mapInArrow(ProfileFn(task, spec), PROFILE_SCHEMA).toArrow())
    updates: dict[tuple[str, str], int] = {}
    inserts: dict[str, int] = {}
    new_buckets: dict[tuple[str, int], int] = {}
    for (p, f, n), c in counted.items():
        if f is not None:
            updates[(p, f)] = c
        elif n is not None:  # BUCKET index: new keys counted per bucket number
            new_buckets[(p, n)] = c
        else:
            inserts[p] = inserts.get(p, 0) + c
    plan = client.plan(Counts(updates, inserts, new_buckets), parallelism)
    needs = plan.needs_sample()
    return plan.with_samples({p: sample.get(p, []) for p in needs}) if needs else plan


def write_by_task(rows: DataFrame, task: WriteTask, plan: BucketPlan) -> DataFrame:
    """Shuffle the routed records once by task, and write each task's buckets in order."""
    return (rows.repartitionById(plan.n_tasks, F.col(TASK)).drop(TASK)
            .sortWithinPartitions(BUCKET, KEY).mapInArrow(WriteFn(task, plan), TASK_OUTPUT))
