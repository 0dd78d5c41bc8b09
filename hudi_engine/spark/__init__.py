"""The Spark layer: the only package that imports pyspark.

`write(df, path, options)` writes a DataFrame to a Hudi table (`hudi_engine.spark.writer`);
`register_data_source(spark)` makes `spark.read.format("hudi")` work (`hudi_engine.spark.datasource`) and
`create_catalog_table` registers a table for Spark SQL; `spark_executor(spark)` runs table services on Spark
(`HudiTable.load(path).compact(executor=spark_executor(spark))`); `local_spark_session()` starts a local session
whose Python workers can import this engine.
"""
from hudi_engine.spark.datasource import create_catalog_table, register_data_source
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.session import local_spark_session
from hudi_engine.spark.writer import write

__all__ = ["create_catalog_table", "local_spark_session", "register_data_source", "spark_executor", "write"]
