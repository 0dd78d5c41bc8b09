"""SparkSessions for this engine: an in-process local session (a standalone cluster for tests: tests/spark_cluster.py).

Spark's Python workers run `sys.executable` unless `spark.pyspark.python` says otherwise (by default they would
run the first `python3` on PATH, which lacks this venv's packages); that is fixed when the JVM starts. They get
`hudi_engine` from the driver when they lack it (`executor_env`), never from this machine's folders: a cluster's
executors could not see those.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

TEST_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # The Hudi data source prunes partitions in `pushFilters`; Spark refuses a reader that implements it
    # unless this is on (DATA_SOURCE_PUSHDOWN_DISABLED).
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "512m",
    # Python workers are reused between tasks: a fresh interpreter per task would re-import pyarrow each time.
    "spark.python.worker.reuse": "true",
}


def python_env() -> dict[str, str]:
    """Environment for the JVM and its Python workers: this interpreter on the driver and in the workers."""
    return {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}


def local_spark_session(
    app_name: str = "hudi-tests",
    master: str = "local[2]",
    warehouse_dir: str | os.PathLike | None = None,
    extra_conf: Mapping[str, str] | None = None,
    native: bool = False,
) -> SparkSession:
    """A SparkSession (created, or the running one) with the `hudi` data source registered.

    `master` may be `local[n]` or a standalone master URL (`spark://host:port`; tests/spark_cluster.py starts one on this machine).
    `spark.pyspark.python` in `extra_conf` is the Python of the workers (default: this interpreter). Settings that
    only apply when the JVM starts (Python executable, memory) do nothing if a session is already running in this
    process.
    `native=True` puts the JVM `hudi` source on the session (`hudi_engine.spark.native`: compiled at first use), so
    that `spark.table`, SQL on the catalog name and `format("hudi")` scan base files with Spark's parquet reader.
    """
    from hudi_engine.spark.registration import register_data_source

    builder = SparkSession.builder.appName(app_name).master(master)
    conf = dict(TEST_CONF)
    conf["spark.pyspark.python"] = sys.executable
    conf["spark.pyspark.driver.python"] = sys.executable
    if warehouse_dir is not None:
        conf["spark.sql.warehouse.dir"] = str(Path(warehouse_dir).resolve())
    conf.update(extra_conf or {})
    if native:
        from hudi_engine.spark.native import native_conf

        conf = native_conf(conf)
    # Read by the JVM launcher and by SparkContext when it starts (its Python workers run PYSPARK_PYTHON).
    os.environ.update({**python_env(), "PYSPARK_PYTHON": conf["spark.pyspark.python"]})
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register_data_source(spark)
    return spark
