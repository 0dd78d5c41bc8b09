"""bulk_insert on Spark: no index lookup; the input's splits as they come, grouped by partition (NONE, Hudi's
default `hoodie.bulkinsert.sort.mode`) or one shuffle by (partition, key) (GLOBAL_SORT); files cut by bytes in the
write tasks (`executor.bulk_insert_files`)."""
from __future__ import annotations

import time

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.spark import write_job
from hudi_engine.spark.key_sample import sample_keys
from hudi_engine.spark.row_check import bad_rows, check_first, checked
from hudi_engine.spark.sql_keys import sql_keys
from hudi_engine.spark.sql_text import literal
from hudi_engine.spark.write_udfs import TASK_OUTPUT, BulkInsertFn, keyed, write_stats
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import SAMPLES_PER_BUCKET, BulkInsertRanges
from hudi_engine.write.executor import BUCKET_NUMBER, FILE_ID, KEY, PARTITION, TASK, WriteTask
from hudi_engine.write.write_client import Transaction

RANGES_TYPE = "map<string,struct<b:array<string>,t:array<int>>>"


def write_files(df: DataFrame, task: WriteTask, txn: Transaction, parallelism: int) -> list[WriteStat]:
    """The bulk_insert's files, in one Spark job after GLOBAL_SORT's counts and samples or, without a shuffle, the
    row check's job (`sorted_rows`)."""
    t0 = time.monotonic()
    rows = sorted_rows(df, task, parallelism, txn.timings).mapInArrow(BulkInsertFn(task), TASK_OUTPUT)
    # Without the shuffle there is no job boundary to save, and planning a plan twice to find that out costs more.
    results = (write_job.single_job(rows) if _by_key_range(task.config) else rows).collect()
    txn.timings["write"] = time.monotonic() - t0
    return write_stats(results, txn)


def sorted_rows(df: DataFrame, task: WriteTask, parallelism: int, timings: dict[str, float] | None = None) -> DataFrame:
    """bulk_insert's layout (`hoodie.bulkinsert.sort.mode`): NONE only groups each input split's rows by partition,
    no shuffle (what Spark's own parquet writer does); PARTITION_SORT sorts each split by (partition, key);
    GLOBAL_SORT range-partitions by (partition, key) (`by_key_range`), so a huge partition spreads over tasks and
    every file holds one key range. Files are cut by bytes in the tasks. `timings`: the row check's job, if one ran.
    Without a shuffle, `hoodie.bulkinsert.shuffle.parallelism`, when set, caps the tasks (a coalesce of the splits).
    Pre-combining duplicates needs them in one task: it always takes GLOBAL_SORT.

    Keys are Spark expressions where they spell keys as the key generator does (`sql_keys`), so sampling and
    sorting by key run no Python, and the tasks key the sorted rows again with the key generator; else the key
    generator's UDF keys every record first."""
    config = task.config
    rows = checked(df, config)
    exprs = sql_keys(task.keygen(), df.schema)
    if exprs is None:
        rows = counted = keyed(rows, task, None).drop(FILE_ID, BUCKET_NUMBER)
        key, partition = F.col(KEY), F.col(PARTITION)
    else:
        counted = df  # GLOBAL_SORT: the row check runs once, in the shuffle's map stage, before any file is written
        key, partition = exprs
    mode = config.parallelism.bulk_insert_sort_mode
    if _by_key_range(config):
        rows, key, partition = by_key_range(rows, counted, key, partition, parallelism)
    else:
        if rows is not df:  # no shuffle: no map stage to check every row before a task writes (`check_first`)
            t0 = time.monotonic()
            if exprs is None:
                check_first(rows, F.col(KEY))
            else:
                check_first(bad_rows(df, config), F.lit(1))
            if timings is not None:
                timings["row_check"] = time.monotonic() - t0
        if config.parallelism.bulk_insert:  # set by the user: at most that many tasks, still no shuffle (as Hudi's
            rows = rows.coalesce(config.parallelism.bulk_insert)  # NonSortPartitioner when it enforces the number)
    rows = rows.sortWithinPartitions(partition, key) if mode != "NONE" or config.combine_before_write else \
        rows.sortWithinPartitions(partition)
    if exprs is not None:  # the tasks key the sorted rows again (`keyed_batches`): cheaper than Spark handing them over
        rows = rows.drop(KEY, PARTITION)
    return rows


def _by_key_range(config: WriteConfig) -> bool:
    """Whether the bulk_insert shuffles its rows by key range (`by_key_range`): GLOBAL_SORT, or pre-combining."""
    return config.parallelism.bulk_insert_sort_mode == "GLOBAL_SORT" or config.combine_before_write


def by_key_range(rows: DataFrame, counted: DataFrame, key: Column, partition: Column,
                 parallelism: int) -> tuple[DataFrame, Column, Column]:
    """GLOBAL_SORT's shuffle of `rows`, sized by rows (`BulkInsertRanges`): `counted` (the same rows, maybe not
    yet checked) counted per partition (a Spark SQL job), keys sampled from the partitions that must be cut (a
    second, only then), and every row sent to its range's task by a Spark expression over the plan. Small
    partitions stay whole (Spark's own range partitioner would cut them at its boundaries, and it samples every
    input split twice). Returns the shuffled rows and the key and partition expressions over them: a key that
    routes no row is left out of the shuffle and computed after it."""
    counts = {r[PARTITION]: r["count"]
              for r in write_job.single_job(counted.groupBy(partition.alias(PARTITION)).count(),
                                            shuffle_partitions=1).collect()}
    cuts = BulkInsertRanges.cuts(counts, parallelism)
    samples: dict[str, list[str]] = {}
    if cuts:
        samples = sample_keys(counted.withColumn(KEY, key).withColumn(PARTITION, partition),
                              {p: min(1.0, SAMPLES_PER_BUCKET * k / counts[p]) for p, k in cuts.items()})
        rows, key, partition = rows.withColumn(KEY, key).withColumn(PARTITION, partition), F.col(KEY), F.col(PARTITION)
    plan = BulkInsertRanges.plan(counts, samples, parallelism)
    if any(bounds for bounds, _ in plan.ranges.values()):
        ranges = F.try_element_at(literal({p: {"b": list(b), "t": list(t)} for p, (b, t) in plan.ranges.items()},
                                          RANGES_TYPE), partition)
        position = F.size(F.filter(ranges["b"], lambda bound: bound <= key))  # range j: bounds below the key
        task = F.element_at(ranges["t"], position + 1)
    else:  # every partition whole in one task
        task = F.try_element_at(literal({p: t[0] for p, (_, t) in plan.ranges.items()}, "map<string,int>"),
                                partition)
    # A partition the count did not see (an input that is not deterministic) still goes to one task.
    task = F.coalesce(task, F.pmod(F.hash(partition), F.lit(plan.n_tasks)))
    return rows.withColumn(TASK, task).repartitionById(plan.n_tasks, F.col(TASK)).drop(TASK), key, partition
