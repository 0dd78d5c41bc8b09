"""Small writes on the driver: a DataFrame whose rows are few is collected by one Spark job and written in this
process (`write.local_writer.write_files`, its file groups on a few threads), instead of the Spark write's jobs
(tag, count, route, write), which cost seconds of scheduling for a handful of rows.

Whether a DataFrame is small is Spark's own estimate of its optimized plan (`sizeInBytes`): exact for seeds and
small files, an upper bound through joins and aggregations, and unknown (Spark's default, very large) for sources
without statistics such as a Hudi table read through the `hudi` data source; so only what is surely small goes
this way. The rows are checked by the Spark path's rules (null keys, null ordering values): in Python once
collected, and where a row may fail, by the Spark path's own check in a second job, which fails naming the row. The
write then goes through the engine's one write pipeline as a Spark write does (`hudi_engine.write_pipeline`: table
services around the commit, compaction operations as Spark tasks).
The bound is the Spark setting `spark.hudi.write.driverMaxBytes` (default 16 MB; 0: every write on Spark).
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema

from hudi_engine.config.write_config import IndexType, WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.catalog_sync import CatalogSync
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.row_check import checked, collected_rows_pass
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.spark.writer import without, write
from hudi_engine.table import HudiTable
from hudi_engine.write.local_writer import write_files
from hudi_engine.write.write_client import WriteClient, table_for_write
from hudi_engine.write.write_result import WriteResult
from hudi_engine.write_pipeline import refuse_prepped, run_write

DRIVER_MAX_BYTES = "spark.hudi.write.driverMaxBytes"  # the Spark setting: up to this estimate, on the driver
DEFAULT_DRIVER_MAX_BYTES = 16 * 1024 * 1024
# A driver write's tasks run on threads, one file group each at a time: the driver's cores, at most this many, so
# that a write touching many file groups holds a bounded number of them decoded.
MAX_DRIVER_THREADS = 4


def estimated_bytes(df: DataFrame) -> int:
    """Spark's estimate of the DataFrame's size (its optimized plan's statistics)."""
    return int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))


def driver_max_bytes(spark: SparkSession) -> int:
    default = str(DEFAULT_DRIVER_MAX_BYTES)
    raw = spark.conf.get(DRIVER_MAX_BYTES, default) or default  # get(key) alone raises for an unset key
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"Spark setting {DRIVER_MAX_BYTES}={raw!r}: expected a whole number of bytes (the "
                          f"estimated input size up to which a write runs on the driver; 0: never)") from None


def fits_driver(df: DataFrame, config: WriteConfig, max_bytes: int | None = None) -> bool:
    """Whether the write of `df` runs on the driver: a surely small plan, and an index the in-process write has
    (GLOBAL_SIMPLE joins every key of the table: a Spark job either way)."""
    if max_bytes is None:
        max_bytes = driver_max_bytes(df.sparkSession)
    if max_bytes <= 0 or config.index.type is IndexType.GLOBAL_SIMPLE:
        return False
    return estimated_bytes(df) <= max_bytes


def write_small(df: DataFrame, path: str, options: Mapping[str, Any] | WriteConfig, *,
                table: HudiTable | None = None) -> WriteResult:
    """`hudi_engine.spark.write`, on the driver when `fits_driver` says so (`table`: as `write` takes it)."""
    config = options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)
    refuse_prepped(config, path, "write_small")
    if fits_driver(df, config):
        return write_on_driver(df, path, config, table=table)
    return write(df, path, config, table=table)


def driver_threads() -> int:
    """Threads for a driver write's tasks: the cores this process may run on, up to `MAX_DRIVER_THREADS` (Spark's
    scheduler, idle while the driver writes, needs none of them meanwhile)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_DRIVER_THREADS, cores))


def write_on_driver(df: DataFrame, path: str, config: WriteConfig, *, table: HudiTable | None = None) -> WriteResult:
    """Write `df` to the Hudi table at `path` in this process: its rows collected by one Spark job and checked here
    (Spark's check runs only where a row may fail it), then the engine's write pipeline with the files written here
    (`write.local_writer`), as `hudi_engine.spark.write` runs it with Spark's jobs."""
    df = without(df, *META_COLUMNS)
    spark = df.sparkSession
    schema = to_arrow_schema(df.schema, timezone=spark.conf.get("spark.sql.session.timeZone"))
    t0 = time.monotonic()
    try:
        rows = df.toArrow()
        if not collected_rows_pass(rows, df, config):  # Spark's check fails the job naming the bad row
            rows = checked(df, config).toArrow()
    except Exception as e:
        raise unwrap_task_error(e) from e
    rows = rows.select(schema.names).cast(schema)
    collected = time.monotonic() - t0
    catalogs = CatalogSync.prepare(spark, path, config)  # sync settings the session cannot honour: refused now
    threads = driver_threads()
    # The door of a write by path: the table is loaded here, once, unless the caller holds it.
    result = run_write(WriteClient.open(table if table is not None else table_for_write(path), config, schema),
                       lambda client, txn: write_files(client, txn, rows, parallelism=threads, threads=threads),
                       spark_executor(spark))
    result.timings["collect"] = collected
    catalogs.after_commit(result.instant_time)
    return result
