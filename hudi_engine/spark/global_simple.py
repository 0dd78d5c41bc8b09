"""The global index writes: GLOBAL_SIMPLE (Hudi's HoodieGlobalSimpleIndex), incoming keys tagged by a join against
every key of the table, read by tasks from the latest base files, since a key may live in (or move to) any
partition; RECORD_INDEX (Hudi's SparkMetadataTableRecordIndex), the same join against only the batch's keys, looked up
by tasks in the metadata table's record index. The joined records are persisted, counted and sampled for the bucket
plan, then routed and written as the two-pass write writes them (`two_pass.write_by_task`)."""
from __future__ import annotations

import time

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.spark.key_sample import sample_keys
from hudi_engine.spark.row_check import checked
from hudi_engine.spark.two_pass import write_by_task
from hudi_engine.spark.write_udfs import (
    LookupRecordIndexFn,
    PreCombineFn,
    ReadKeysFn,
    assigned,
    keyed,
    write_stats,
)
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import Counts
from hudi_engine.write.executor import BUCKET_NUMBER, DELETE, FILE_ID, KEY, PARTITION, WriteTask
from hudi_engine.write.write_client import Transaction, WriteClient


def write_files(spark: SparkSession, df: DataFrame, client: WriteClient, task: WriteTask, txn: Transaction,
                parallelism: int) -> list[WriteStat]:
    """A global index (GLOBAL_SIMPLE, RECORD_INDEX): keys tagged by a join (a key may move partition); the joined
    records are persisted, counted and sampled, then routed and written."""
    config = client.config
    t0 = time.monotonic()
    tagged = tag_global(spark, keyed(checked(df, config), task, None), client, task, parallelism) \
        .persist(StorageLevel.MEMORY_AND_DISK)
    try:
        plan = client.plan(counts(tagged, config), parallelism)
        fractions = plan.needs_sample()
        if fractions:
            plan = plan.with_samples(sample_keys(tagged.filter(F.col(FILE_ID).isNull() & ~F.col(DELETE)), fractions))
        txn.timings["plan"] = time.monotonic() - t0
        by_index = config.index.type is IndexType.RECORD_INDEX
        results = write_by_task(assigned(tagged, plan, keep_file_id=by_index), task, plan).collect()
    finally:
        tagged.unpersist()
    txn.timings["write"] = time.monotonic() - t0
    return write_stats(results, txn)


def tag_global(spark: SparkSession, records: DataFrame, client: WriteClient, task: WriteTask,
               parallelism: int) -> DataFrame:
    """GLOBAL_SIMPLE: join incoming keys with every key of the table, read by tasks from the latest base files
    (each file by one task); RECORD_INDEX: with the batch's keys as the record index places them. Versions of a key
    are pre-combined first, across partitions (a key may move).

    Sets FILE_ID (null for a new key) and DELETE. With `hoodie.simple.index.update.partition.path` a key that
    moved partition becomes two rows: a delete in its old file group and an insert in the new partition.
    """
    config = client.config
    records = records.drop(FILE_ID)
    if config.combine_before_write:
        records = records.repartition(parallelism, KEY).sortWithinPartitions(KEY) \
            .mapInArrow(PreCombineFn(task), records.schema)
    deleting = F.lit(config.operation is Operation.DELETE)
    found_schema = "_ix_key string, _ix_partition string, _ix_file_id string"
    if config.index.type is IndexType.RECORD_INDEX:
        # Only the batch's keys, each once, looked up where the record index keeps them.
        existing = records.select(KEY).distinct().mapInArrow(LookupRecordIndexFn(task), found_schema)
    else:
        files = client.index_files(None)
        if not files:
            return records.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, deleting)
        files_df = spark.createDataFrame(files, schema="partition string, file_id string, path string")
        files_df = files_df.repartition(max(1, min(len(files), parallelism * 2)))
        existing = files_df.mapInArrow(ReadKeysFn(task), found_schema) \
            .hint("shuffle_hash")  # sized from the short file list, Spark would otherwise broadcast every table key
    joined = records.join(existing, records[KEY] == existing["_ix_key"], "left")
    moved = F.col("_ix_partition").isNotNull() & (F.col("_ix_partition") != F.col(PARTITION))
    helpers = ("_ix_key", "_ix_partition", "_ix_file_id")
    if not config.index.update_partition_path or config.operation is Operation.DELETE:
        # The record stays where the key lives.
        out = (joined.withColumn(PARTITION, F.coalesce(F.col("_ix_partition"), F.col(PARTITION)))
               .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, deleting))
        return out.drop(*helpers)
    stay = joined.filter(~moved).withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(False))
    old = (joined.filter(moved).withColumn(PARTITION, F.col("_ix_partition"))
           .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(True)))
    new = joined.filter(moved).withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, F.lit(False))
    return stay.unionByName(old).unionByName(new).drop(*helpers)


def counts(tagged: DataFrame, config: WriteConfig) -> Counts:
    """Records per (partition, file group), new records per partition (BUCKET: per bucket number); deletes of keys
    the table does not hold count nowhere (they write nothing)."""
    live = tagged.filter(F.col(FILE_ID).isNotNull() | ~F.col(DELETE))
    rows = live.groupBy(PARTITION, FILE_ID, BUCKET_NUMBER).count().collect()
    updates: dict[tuple[str, str], int] = {}
    inserts: dict[str, int] = {}
    new_buckets: dict[tuple[str, int], int] = {}
    bucket_index = config.index.type is IndexType.BUCKET
    for r in rows:
        p = r[PARTITION]
        if r[FILE_ID] is not None:
            updates[(p, r[FILE_ID])] = r["count"]
        elif bucket_index:
            new_buckets[(p, int(r[BUCKET_NUMBER]))] = r["count"]
        else:
            inserts[p] = inserts.get(p, 0) + r["count"]
    return Counts(updates, inserts, new_buckets)
