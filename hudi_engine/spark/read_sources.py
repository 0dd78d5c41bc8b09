"""The data sources a session reads Hudi tables through, registered by name.

With the native component (`native.native_conf`, set before the session starts), the JVM answers `hudi`: it plans
with the Python source `hudi_engine_plan` (`native.HudiPlanSource`) and merges log files with `hudi_merge`. Without
it, `hudi` is the Python source (`datasource.HudiDataSource`), which decodes every row of every column in a Python
worker: `format("hudi")` and catalog tables read several times slower than with the component (1.3-6x Spark's own
parquet reader in bench/RESULTS.md), so registering it warns once per session (`PYTHON_SOURCE_WARNING`, naming
`native_conf()`). `hudi_merge` is registered either way (`read_table`, dbt's views, the native source's merge half).

`register_data_source` (`registration`) registers these with the rest of the engine's session surface; a write that
syncs a catalog registers them itself when they are missing (`catalog_sync`), since Spark resolves the synced entry
(provider `hudi`) when the sync refreshes it.
"""
from __future__ import annotations

import warnings

from pyspark.sql import SparkSession

from hudi_engine.spark import native
from hudi_engine.spark.catalog_entry import FORMAT
from hudi_engine.spark.datasource import MERGE_FORMAT, HudiDataSource, HudiMergeSource
from hudi_engine.spark.executor_env import ensure_executor_env

# What a session whose `hudi` is the Python source is told, once (one line).
PYTHON_SOURCE_WARNING = (
    f"hudi_engine: this session reads {FORMAT!r} tables (format('{FORMAT}'), catalog tables) through the Python data "
    "source, which decodes every row in a Python worker, several times slower than the native component: start the "
    "session with hudi_engine.spark.native_conf() (docs/native-read.md)")


def register_read_sources(spark: SparkSession, *, warn_python_source: bool = True) -> None:
    """Register `hudi` (the JVM's planner source, or the Python source) and `hudi_merge` in `spark` (idempotent);
    executors checked and the engine shipped first (`executor_env`), since a source captures the session's Python
    files when it is registered. `warn_python_source=False` for a caller that chose the Python source knowingly."""
    ensure_executor_env(spark)
    # Without this Spark rejects a reader that implements pushFilters (DATA_SOURCE_PUSHDOWN_DISABLED).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    if native.native_enabled(spark):
        # The JVM source answers `hudi`: a Python source of the same name would make every `hudi` read fail with
        # FOUND_MULTIPLE_DATA_SOURCES. It plans with `hudi_engine_plan` and merges with `hudi_merge`.
        spark.dataSource.register(native.HudiPlanSource)
    else:
        first = not _registered(spark, FORMAT)
        try:
            spark.dataSource.register(HudiDataSource)
        except Exception as e:  # pyspark's AnalysisException, whose import path moves between releases
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):
                raise
            # Another JVM source owns `hudi` (Apache Hudi's own jar, org.apache.hudi.DefaultSource): `hudi` reads
            # are its own; `read_table`, dbt's views and the merge half still run on `hudi_merge`.
        else:
            if first and warn_python_source:  # once per session: a later registration finds the source there
                warnings.warn(PYTHON_SOURCE_WARNING, stacklevel=3)
    spark.dataSource.register(HudiMergeSource)


def read_sources_registered(spark: SparkSession) -> bool:
    """Whether `register_read_sources` ran in `spark` (its `hudi_merge` is there)."""
    return _registered(spark, MERGE_FORMAT)


def _registered(spark: SparkSession, name: str) -> bool:
    """Whether a Python data source `name` is registered in `spark` (a JVM source of that name does not count)."""
    return bool(spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists(name))
