"""The one-pass write: an upsert, insert or delete that Spark's statistics put below one file of the max file size
(SIMPLE and BLOOM index) runs as one Spark job. Map tasks key and tag every record and choose its file group and
task themselves (`MapSidePlan`, no driver-side bucket plan), or Spark SQL does where the driver's listing already
gives every partition's file group (`sql_route`); one shuffle; each task writes its file groups one at a time."""
from __future__ import annotations

import time

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hudi_engine.config.write_config import IndexType, Operation
from hudi_engine.spark import write_job
from hudi_engine.spark.arrow_shuffle import CHUNK_TYPE, shuffled
from hudi_engine.spark.row_check import checked
from hudi_engine.spark.sql_route import ORDER, sql_routed
from hudi_engine.spark.write_udfs import TASK_OUTPUT, MapSidePackFn, MapSideWriteFn, key_source_columns, write_stats
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import MapSidePlan
from hudi_engine.write.executor import TASK, WriteTask
from hudi_engine.write.write_client import Transaction, WriteClient


def map_side_plan(df: DataFrame, client: WriteClient, parallelism: int) -> MapSidePlan | None:
    """A one-pass write's bucket choice (`MapSidePlan`) when Spark's estimate of the input is below one file of the
    max file size (SIMPLE and BLOOM index upserts, inserts and deletes), else None."""
    config = client.config
    if config.index.type not in (IndexType.SIMPLE, IndexType.BLOOM) or \
            config.operation not in (Operation.UPSERT, Operation.INSERT, Operation.DELETE):
        return None
    if client.rolls_back_clustering and config.operation.looks_up_keys:
        return None  # map tasks cannot roll a clustering back: the driver sees the tagged updates (two-pass)
    # The optimizer's statistics: exact rows for a cached or local input, else bytes, which overestimate a filter or
    # join (an estimate of 0 is an empty input).
    stats = df._jdf.queryExecution().optimizedPlan().stats()
    avg = client.average_record_size()
    counted = stats.rowCount()
    rows = int(str(counted.get())) if counted.isDefined() else -(-int(str(stats.sizeInBytes())) // avg)
    if rows * avg > config.files.max_file_size:
        return None
    # One wave of tasks, and no more tasks than records: every task, even an empty one, is a Python worker's round
    # trip, and a write of less than a file gains nothing from a second wave.
    return client.map_side_plan(max(1, min(parallelism, _task_slots(df.sparkSession), rows)))


def _task_slots(spark: SparkSession) -> int:
    """Tasks the cluster's registered executors run at once; Spark's default parallelism before any has registered.
    `spark.default.parallelism` is often set to a few tasks per core for large jobs; for a small write that is a
    second wave of tasks, each paying a Python worker's round trip."""
    sc = spark.sparkContext
    try:  # SparkContext.maxNumConcurrentTasks is private[spark] in Scala (public to py4j), as barrier mode uses it
        jsc = sc._jsc.sc()
        slots = int(jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile()))
    except Py4JError:
        slots = 0
    return slots if slots > 0 else sc.defaultParallelism


def write_files(df: DataFrame, client: WriteClient, task: WriteTask, txn: Transaction,
                plan: MapSidePlan) -> list[WriteStat]:
    """A write in one Spark job: map tasks key and tag every record and choose its file group and task
    (`MapSidePlan`); one shuffle; each task writes its file groups one at a time."""
    config = client.config
    t0 = time.monotonic()
    listing = client.listing_spec(txn.instant)
    data = checked(df, config)
    sql = sql_routed(data, client, task, plan)
    txn.timings["plan"] = time.monotonic() - t0
    if sql is not None:
        # Routed by Spark SQL, the records cross the shuffle as rows: the map stage runs no Python (a Python pass
        # to pack them as Arrow chunks cost W1's upserts more than the row conversions it saves). A task's records
        # are sorted by one 64-bit hash of their file group (ORDER): a radix sort on a key the sort prefix holds
        # whole; the task sorts a group by key.
        routed, known = sql
        write_fn = MapSideWriteFn(task, listing, plan, known, chunks=False)
        results = write_job.single_job(routed.repartitionById(plan.n_tasks, F.col(TASK)).sortWithinPartitions(ORDER)
                                       .drop(TASK, ORDER).mapInArrow(write_fn, TASK_OUTPUT)).collect()
    else:
        # Routed in Python, they cross it as Arrow chunks of one file group each, packed in the same Python pass
        # (`arrow_shuffle`): no conversion to Spark's rows and back, no sort of every record.
        chunks = data.mapInArrow(MapSidePackFn(task, client.tag_spec(txn.instant), listing, plan,
                                               key_source_columns(config, data.columns)), CHUNK_TYPE)
        write_fn = MapSideWriteFn(task, listing, plan, None, chunks=True)
        results = write_job.single_job(shuffled(chunks, plan.n_tasks).mapInArrow(write_fn, TASK_OUTPUT)).collect()
    txn.timings["write"] = time.monotonic() - t0
    return write_stats(results, txn)
