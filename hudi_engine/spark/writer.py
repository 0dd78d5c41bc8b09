"""`write(df, path, options)`: a Spark DataFrame into a Hudi table, records flowing through Spark tasks, the work
spread by file group as Hudi's own partitioner spreads it.

The driver checks, starts the instant, plans and commits (`hudi_engine.write.write_client`), inside the engine's
one write pipeline (`hudi_engine.write_pipeline`: table services before and after); records never reach it. The
files come from one of four strategies, chosen here (`_run`):
- `bulk_insert`: range-partitioned by (partition, key), sorted files cut by bytes;
- `global_simple`: GLOBAL_SIMPLE tags with a join against every key of the table, RECORD_INDEX against the batch's
  keys looked up in the record index;
- `one_pass`: an input that Spark's statistics put below one file of the max file size is one Spark job, map tasks
  choosing each record's file group and task (`sql_route`: in Spark SQL alone where the driver's listing allows);
- `two_pass`: any other upsert, insert, delete or overwrite, a pass over the keys for the bucket plan, then one
  shuffle to the write tasks.
Their tasks are the Arrow UDFs of `write_udfs`; every strategy checks the rows (`row_check`). A failure anywhere
before the commit rolls the instant back.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from hudi_engine.config import keys as K
from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.keygen import AUTO_KEY_COLUMN, PREPPED_KEY_COLUMN
from hudi_engine.location import TableLocation
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark import bulk_insert, global_simple, one_pass, two_pass
from hudi_engine.spark.catalog_sync import CatalogSync
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.prepped import check_stored_keys, prepped_config
from hudi_engine.spark.read_plan import RECORD_KEY
from hudi_engine.spark.row_check import checked
from hudi_engine.spark.sql_keys import auto_key_column
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.table import HudiTable
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.write_client import Transaction, WriteClient, table_for_write
from hudi_engine.write.write_result import WriteResult
from hudi_engine.write_pipeline import run_write

__all__ = ["checked", "write"]


def write(df: DataFrame, path: str, options: dict[str, Any] | WriteConfig, *,
          table: HudiTable | None = None, delete_marker: bool = False) -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi's own option keys; returns what the commit did. `table`: the
    caller's handle of the existing table at `path`, loaded for this operation (not read again). `delete_marker`:
    `df`'s `_hoodie_is_deleted` column only flags the keys to delete (a SQL MERGE's delete clauses); the handles
    delete them, and the column is not one of the table's."""
    config = options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)
    # The door of a write by path: the table is loaded here, once, unless the caller holds it.
    target = table if table is not None else table_for_write(path)
    by_sql = config.prepped and not config.is_set(K.PREPPED)  # SQL's UPDATE / DELETE / MERGE: rows it read itself
    config = prepped_config(df, config, target, path)
    if config.prepped and not by_sql and not isinstance(target, TableLocation):
        ensure_executor_env(df.sparkSession)  # the check runs the key generator in Spark tasks
        check_stored_keys(df, target, path)
    if config.prepped and RECORD_KEY in df.columns:  # the stored keys, for a keyless table (`_run`)
        df = df.withColumnRenamed(RECORD_KEY, PREPPED_KEY_COLUMN)
    df = without(df, *META_COLUMNS)
    spark = df.sparkSession
    ensure_executor_env(spark)  # executors can run the engine (shipped if missing), before any instant
    # Spark hands timestamps to Arrow tasks in the session time zone; the table stores them as UTC instants.
    helpers = {PREPPED_KEY_COLUMN, *([IS_DELETED_FIELD] if delete_marker else [])}
    data_type = T.StructType([f for f in df.schema.fields if f.name not in helpers])
    data_schema = to_arrow_schema(data_type, timezone=spark.conf.get("spark.sql.session.timeZone"))
    catalogs = CatalogSync.prepare(spark, path, config)  # sync settings the session cannot honour: refused now
    # The engine's write pipeline runs the table services and the transaction; Spark supplies the data files (its
    # jobs) and the executor of compaction operations (Spark tasks). The catalogs are synced once the services ran.
    result = run_write(WriteClient.open(target, config, data_schema),
                       lambda client, txn: _files(spark, df, client, txn), spark_executor(spark))
    catalogs.after_commit(result.instant_time)
    return result


def _files(spark: SparkSession, df: DataFrame, client: WriteClient, txn: Transaction) -> list[WriteStat]:
    try:
        return _run(spark, df, client, txn)
    except Exception as e:
        raise unwrap_task_error(e) from e


def _run(spark: SparkSession, df: DataFrame, client: WriteClient, txn: Transaction) -> list[WriteStat]:
    """The write's files, by the strategy its operation, index and input size take."""
    config = client.config
    task = client.write_task(txn.instant)
    if config.keys.auto_generated:
        # A keyless table: every row's generated key, from the input's own partitions (before any shuffle), in a
        # helper column the key generator reads and the handles never write (`keygen.AUTO_KEY_COLUMN`). A row a
        # SQL UPDATE / DELETE / MERGE read from the table keeps its stored key (a MERGE's inserts have none).
        key = auto_key_column(txn.instant)
        if PREPPED_KEY_COLUMN in df.columns:
            key = F.coalesce(F.col(PREPPED_KEY_COLUMN), key)
        df = df.withColumn(AUTO_KEY_COLUMN, key)
    df = without(df, PREPPED_KEY_COLUMN)
    parallelism = config.parallelism.for_operation(config.operation, spark.sparkContext.defaultParallelism)
    if config.operation is Operation.BULK_INSERT:
        return bulk_insert.write_files(df, task, txn, parallelism)
    if config.index.type.is_global and config.operation.looks_up_keys:
        return global_simple.write_files(spark, df, client, task, txn, parallelism)
    plan = one_pass.map_side_plan(df, client, parallelism)
    if plan is not None:
        return one_pass.write_files(df, client, task, txn, plan)
    return two_pass.write_files(df, client, task, txn, parallelism)


def without(df: DataFrame, *names: str) -> DataFrame:
    """`df` without those of `names` it has; `df` itself when it has none (a `drop` is a JVM call and an analysis
    of the plan even when it drops nothing)."""
    present = [c for c in df.columns if c in names]
    return df.drop(*present) if present else df
