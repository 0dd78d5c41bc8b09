"""Everything the engine adds to a Spark session, in one call: `register_data_source(spark)`, and a catalog table
made on top of it (`create_catalog_table`).

The read sources (`read_sources`: `hudi`, `hudi_merge`, the native component's planner source), the SQL function
`hudi_table_changes` (`table_changes`) and, with the native component, the Python side of `df.write.format("hudi")`
and SQL writes (`save.register_writer`), and Hudi's `CALL` procedures
(`procedures.register_procedures`). It sits above all of them, so imports run one way: what registers the
engine itself (`relation` before it reads, `session`, the package's `__init__`) sits above it.
"""
from __future__ import annotations

from pyspark.sql import SparkSession

from hudi_engine.spark import native
from hudi_engine.spark.catalog_entry import catalog_table_ddl
from hudi_engine.spark.procedures import register_procedures
from hudi_engine.spark.read_sources import register_read_sources
from hudi_engine.spark.save import register_writer
from hudi_engine.spark.table_changes import register_table_changes


def register_data_source(spark: SparkSession, *, warn_python_source: bool = True) -> None:
    """Make `spark.read.format("hudi")` and the SQL function `hudi_table_changes` available in `spark`
    (idempotent); executors checked and the engine shipped first (`executor_env`), since the source captures the
    session's Python files when it is registered. A session without the native component is warned once that its
    reads take the slow Python source, unless `warn_python_source=False` (the caller turned the component off)."""
    register_read_sources(spark, warn_python_source=warn_python_source)
    if native.native_enabled(spark):
        register_writer(spark)  # `df.write.format("hudi")` and SQL writes, planned by the JVM, run by this driver
        register_procedures(spark)  # Hudi's `CALL` procedures, parsed by the JVM, run by this driver
    register_table_changes(spark)


def create_catalog_table(spark: SparkSession, name: str, path: str, *, if_not_exists: bool = False) -> str:
    """Create catalog table `name` reading the Hudi table at `path`; returns the DDL it ran.

    `name` is used as written (quote it yourself if it needs quoting). The column list is the table's schema
    now; queries read the current snapshot with it.
    """
    register_data_source(spark)
    ddl = catalog_table_ddl(name, path, if_not_exists=if_not_exists)
    spark.sql(ddl)
    return ddl
