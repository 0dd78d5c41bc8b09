"""The Spark layer: the only package that imports pyspark.

`register_data_source(spark)` makes `spark.read.format("hudi")` work (see `hudi_engine.spark.datasource`);
`local_spark_session` / `standalone_cluster` start sessions for tests and local use;
`write(df, path, options)` writes a DataFrame to a Hudi table (see `hudi_engine.spark.writer`).
"""
from hudi_engine.spark.compactor import clean_path, compact, rollback_last_commit
from hudi_engine.spark.datasource import create_catalog_table, register_data_source
from hudi_engine.spark.session import local_spark_session, standalone_cluster
from hudi_engine.spark.writer import write

__all__ = ["clean_path", "compact", "rollback_last_commit", "create_catalog_table", "local_spark_session", "register_data_source", "standalone_cluster", "write"]
