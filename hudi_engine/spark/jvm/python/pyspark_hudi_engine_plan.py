"""Spark's discovery of Python data sources (`pyspark_*` modules with a `DefaultSource`, on a Spark process's Python
path) for processes that never call `register_data_source`, such as the Thrift server: `hudi_engine_plan`."""
from hudi_engine.spark.native import HudiPlanSource as DefaultSource

__all__ = ["DefaultSource"]
