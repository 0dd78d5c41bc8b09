"""The Spark layer: the only package that imports pyspark.

`write(df, path, options)` writes a DataFrame to a Hudi table (`hudi_engine.spark.writer`);
`register_data_source(spark)` makes `spark.read.format("hudi")` and the SQL function `hudi_table_changes` work
(`hudi_engine.spark.datasource`, `hudi_engine.spark.table_changes`) and `create_catalog_table` registers a table for
Spark SQL; `read_table(spark, path_or_name, options)` reads a table as a DataFrame whose base files Spark's own
parquet reader scans (`hudi_engine.spark.relation`), `register_view` the same as a temporary view;
`spark_executor(spark)` runs table services on Spark (`HudiTable.load(path).compact(executor=spark_executor(spark))`);
`local_spark_session()` starts a local session whose Python workers can import this engine.
"""
from hudi_engine.spark.datasource import create_catalog_table, register_data_source
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.relation import read_table, register_view
from hudi_engine.spark.session import local_spark_session
from hudi_engine.spark.writer import write

__all__ = ["create_catalog_table", "local_spark_session", "read_table", "register_data_source", "register_view",
           "spark_executor", "write"]
