"""Spark's discovery of Python data sources (`pyspark_*` modules with a `DefaultSource`, on a Spark process's Python
path) for processes that never call `register_data_source`, such as the Thrift server: `hudi_merge`."""
from hudi_engine.spark.datasource import HudiMergeSource as DefaultSource

__all__ = ["DefaultSource"]
