"""The data sources a session reads Hudi tables through, registered by name.

With the native component (`native.native_conf`, set before the session starts), the JVM answers `hudi`: it plans
with the Python source `hudi_engine_plan` (`native.HudiPlanSource`) and merges log files with `hudi_merge`. Without
it, `hudi` is the Python source (`datasource.HudiDataSource`), which decodes every row of every column in a Python
worker. `hudi_merge` is registered either way (`read_table`, dbt's views, the native source's merge half).

`register_data_source` (`registration`) registers these with the rest of the engine's session surface.
"""
from __future__ import annotations

from pyspark.sql import SparkSession

from hudi_engine.spark import native
from hudi_engine.spark.datasource import HudiDataSource, HudiMergeSource
from hudi_engine.spark.executor_env import ensure_executor_env


def register_read_sources(spark: SparkSession) -> None:
    """Register `hudi` (the JVM's planner source, or the Python source) and `hudi_merge` in `spark` (idempotent);
    executors checked and the engine shipped first (`executor_env`), since a source captures the session's Python
    files when it is registered."""
    ensure_executor_env(spark)
    # Without this Spark rejects a reader that implements pushFilters (DATA_SOURCE_PUSHDOWN_DISABLED).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    if native.native_enabled(spark):
        # The JVM source answers `hudi`: a Python source of the same name would make every `hudi` read fail with
        # FOUND_MULTIPLE_DATA_SOURCES. It plans with `hudi_engine_plan` and merges with `hudi_merge`.
        spark.dataSource.register(native.HudiPlanSource)
    else:
        try:
            spark.dataSource.register(HudiDataSource)
        except Exception as e:  # pyspark's AnalysisException, whose import path moves between releases
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):
                raise
            # Another JVM source owns `hudi` (Apache Hudi's own jar, org.apache.hudi.DefaultSource): `hudi` reads
            # are its own; `read_table`, dbt's views and the merge half still run on `hudi_merge`.
    spark.dataSource.register(HudiMergeSource)
