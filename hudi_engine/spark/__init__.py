"""The Spark layer: the only package that imports pyspark.

`write(df, path, options)` writes a DataFrame to a Hudi table (`hudi_engine.spark.writer`);
`register_data_source(spark)` makes `spark.read.format("hudi")` and the SQL function `hudi_table_changes` work
(`hudi_engine.spark.registration`: the sources of `hudi_engine.spark.read_sources`, `hudi_engine.spark.table_changes`)
and `create_catalog_table` registers a table for Spark SQL; `read_table(spark, path_or_name, options)` reads a table
as a DataFrame whose base files Spark's own parquet reader scans (`hudi_engine.spark.relation`), `register_view` the
same as a temporary view;
`spark_executor(spark)` runs table services on Spark (`HudiTable.load(path).compact(executor=spark_executor(spark))`);
`local_spark_session()` starts a local session whose Python workers can import this engine; `write_small` writes a
DataFrame Spark estimates small on the driver; `sync_catalogs` syncs a table's Hive metastore / Glue entries as a
write with Hudi's sync keys does after its commit (`hive_entry_names`: the entries a Hive sync writes);
`last_write_result()` is the `WriteResult` of the last `df.write.format("hudi")` or SQL write
(`hudi_engine.spark.save`, docs/spark-sql.md). The rest of `__all__` is what the dbt adapter builds on: the read
options' keys and their parse (`ReadOptions`, `hudi_engine.read_options`), a read's plan and its DataFrame (`plan_read`, `dataframe`), Spark types
of a table's schema, the catalog entry's DDL and path comment, the `hudi_timeline` table function, and the native
`hudi` source's session settings (`native_conf`, `NATIVE_EXTENSIONS`: `hudi_engine.spark.native`).
"""
from hudi_engine.read_options import BEGIN_INSTANT, CDC_IMAGES, END_INSTANT, INCREMENTAL_FORMAT, QUERY_TYPE, ReadOptions
from hudi_engine.spark.catalog_entry import PATH_COMMENT_PREFIX, catalog_table_ddl
from hudi_engine.spark.catalog_sync import hive_entry_names, sync_catalogs
from hudi_engine.spark.executor import clustering_executor, spark_executor
from hudi_engine.spark.native import EXTENSIONS_CLASS as NATIVE_EXTENSIONS
from hudi_engine.spark.native import native_conf
from hudi_engine.spark.registration import create_catalog_table, register_data_source
from hudi_engine.spark.relation import dataframe, plan_read, read_table, register_view
from hudi_engine.spark.save import last_write_result
from hudi_engine.spark.session import local_spark_session, python_env
from hudi_engine.spark.small_write import write_small
from hudi_engine.spark.spark_types import spark_schema, spark_type
from hudi_engine.spark.timeline_function import FUNCTION_NAME as TIMELINE_FUNCTION
from hudi_engine.spark.timeline_function import register_timeline_function, timeline_rows
from hudi_engine.spark.writer import write

__all__ = [
    "BEGIN_INSTANT",
    "CDC_IMAGES",
    "END_INSTANT",
    "INCREMENTAL_FORMAT",
    "NATIVE_EXTENSIONS",
    "PATH_COMMENT_PREFIX",
    "QUERY_TYPE",
    "TIMELINE_FUNCTION",
    "ReadOptions",
    "catalog_table_ddl",
    "clustering_executor",
    "create_catalog_table",
    "dataframe",
    "hive_entry_names",
    "last_write_result",
    "local_spark_session",
    "native_conf",
    "plan_read",
    "python_env",
    "read_table",
    "register_data_source",
    "register_timeline_function",
    "register_view",
    "spark_executor",
    "spark_schema",
    "spark_type",
    "sync_catalogs",
    "timeline_rows",
    "write",
    "write_small",
]
