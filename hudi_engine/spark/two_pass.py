"""The two-pass write of an upsert, insert, delete or overwrite (SIMPLE, BLOOM and BUCKET index), Hudi's workload
profile then its upsert partitioner:
1. keys: a map pass over the key and partition columns only computes every record's key and partition path, tags it
   with the file group holding its key (`executor.key_and_tag`: footer key ranges and bloom filters), and returns
   counts per (partition, file group) and a sample of the new keys (`executor.KeyProfile`); no shuffle. Where Spark
   SQL spells the partition path (`sql_keys`) and keys are looked up in their own partition only (SIMPLE, BLOOM),
   Spark SQL counts the records per partition first, and the Python pass runs over the records of partitions that
   store records only: a new day's records are counted and sampled by Spark SQL alone. The driver lists the touched
   partitions and plans buckets (updates per file group, inserts into small files then new file groups of the max
   file size, cut at sampled keys) over `min(buckets, parallelism)` tasks (`write.bucket_assigner`);
2. write: the records, keyed and tagged again (the same tags) and given their bucket and task in one Python pass
   (`BucketPlan.assign`; no join, so no job to broadcast routes), are shuffled once by task as Arrow chunks of one
   bucket each (`arrow_shuffle`), and each task runs one handle per file group, holding one file group's records at
   a time (`executor.write_buckets`).
The input runs once: a caller's cached DataFrame is read twice, any other is persisted between the passes.
"""
from __future__ import annotations

import time

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.spark import write_job
from hudi_engine.spark.arrow_shuffle import CHUNK_TYPE, shuffled
from hudi_engine.spark.key_sample import sample_keys
from hudi_engine.spark.row_check import bad_row, bad_rows, check_first, check_rows
from hudi_engine.spark.sql_keys import sql_key_text
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
from hudi_engine.write.bucket_assigner import BucketPlan, Counts, SliceInfo
from hudi_engine.write.executor import BUCKET, KEY, PARTITION, TASK, KeyProfile, WriteTask
from hudi_engine.write.tagging import TagSpec
from hudi_engine.write.write_client import Transaction, WriteClient

CHECK = "_hw_check"  # the first pass's row check, evaluated beside the key columns


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
        results = write_job.single_job(shuffled(chunks, plan.n_tasks).mapInArrow(WriteFn(task, plan, chunks=True),
                                                                                TASK_OUTPUT)).collect()
    finally:
        if persisted:
            source.unpersist()
    txn.timings["write"] = time.monotonic() - t0
    return write_stats(results, txn)


def bucket_plan(source: DataFrame, client: WriteClient, task: WriteTask, spec: TagSpec | None,
                parallelism: int) -> BucketPlan:
    """The bucket plan from the first pass over the keys (see `executor.KeyProfile`)."""
    config = client.config
    # A SIMPLE or BLOOM index looks keys up in their own partition only: a partition with nothing stored takes its
    # records as new, counted by Spark SQL where it spells the partition path (no Python over them).
    text = sql_key_text(task.keygen(), source.schema) \
        if spec is None or config.index.type in (IndexType.SIMPLE, IndexType.BLOOM) else None
    if text is not None and spec is not None and text[1] == "''":
        text = None  # unpartitioned: the table's one partition stores records, so every record is looked up
    if text is None:
        # Null keys and null ordering values fail here, naming the row, before the instant has a file.
        counted, sample = _profiled(source, config, task, spec, check_rows(source, config))
        listed = None
    else:
        counted, sample, listed = _profiled_by_partition(source, client, task, spec, text[1])
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
    plan = client.plan(Counts(updates, inserts, new_buckets), parallelism, listed)
    needs = plan.needs_sample()
    if not needs:
        return plan
    if text is not None:  # the keys of partitions that store nothing (the key pass did not see them): by Spark SQL
        key, partition = map(F.expr, text)
        new = {p: f for p, f in needs.items() if not (listed or {}).get(p)}
        sample |= sample_keys(source.withColumn(KEY, key).withColumn(PARTITION, partition), new) if new else {}
    return plan.with_samples({p: sample.get(p, []) for p in needs})


def _profiled(rows: DataFrame, config: WriteConfig, task: WriteTask, spec: TagSpec | None,
              check: Column | None) -> tuple[dict[tuple[str, str | None, int | None], int], dict[str, list[str]]]:
    """Counts per (partition, file group or bucket number) and a sample of new keys, from a Python pass over the
    key columns of `rows` (the row check evaluated beside them)."""
    keys = rows.select(*[F.col(f"`{c}`") for c in key_source_columns(config, rows.columns)],
                       *([check.alias(CHECK)] if check is not None else []))
    return KeyProfile.merge(keys.mapInArrow(ProfileFn(task, spec), PROFILE_SCHEMA).toArrow())


def _profiled_by_partition(
        source: DataFrame, client: WriteClient, task: WriteTask, spec: TagSpec | None,
        partition: str) -> tuple[dict[tuple[str, str | None, int | None], int], dict[str, list[str]],
                                 dict[str, list[SliceInfo]] | None]:
    """The first pass where Spark SQL spells the partition path: the row check, then the records per partition
    counted by Spark SQL, then the Python pass over the records of partitions that store records only (a new day's
    records are not looked up). Also the listing of the touched partitions, for the plan."""
    config = client.config
    # The count finds a bad row with a plain predicate over the checked columns; a second job shows it (the check
    # that names the row reads every column).
    path, bad = F.expr(partition), bad_row(source, config)
    counted_rows = write_job.single_job(source.groupBy(path.alias(PARTITION)).agg(
        F.count(F.lit(1)), *([F.max(bad)] if bad is not None else [])), shuffle_partitions=1).collect()
    if any(len(r) > 2 and r[2] for r in counted_rows):
        check_first(bad_rows(source, config), F.lit(1))
    per_partition = {r[0]: r[1] for r in counted_rows}
    listed = client.latest_slices(sorted(per_partition)) if spec is not None else None
    stored = sorted(p for p, s in (listed or {}).items() if s)
    counted: dict[tuple[str, str | None, int | None], int] = {}
    sample: dict[str, list[str]] = {}
    if stored:
        counted, sample = _profiled(source.where(path.isin(stored)), config, task, spec, None)
    if config.operation is not Operation.DELETE:  # a delete of a key nothing stores counts nowhere
        for p, n in per_partition.items():
            if p not in stored:
                counted[(p, None, None)] = n
    return counted, sample, listed


def write_by_task(rows: DataFrame, task: WriteTask, plan: BucketPlan) -> DataFrame:
    """Shuffle the routed records once by task, and write each task's buckets in order."""
    return (rows.repartitionById(plan.n_tasks, F.col(TASK)).drop(TASK)
            .sortWithinPartitions(BUCKET, KEY).mapInArrow(WriteFn(task, plan), TASK_OUTPUT))
