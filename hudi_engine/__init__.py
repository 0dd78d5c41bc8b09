"""hudi_engine: reads and writes Apache Hudi tables (table version 6, timeline layout 1) from Python and Spark.

`HudiTable` reads a table and maintains it (compact, clean, rollback); `WriteConfig` is a write's options, typed
(`hudi_engine.config` declares every option); the Spark entry points are in `hudi_engine.spark`.
"""
from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.errors import ConfigError, HudiError, TableServiceError, WriteError
from hudi_engine.table import HudiTable
from hudi_engine.write.write_result import WriteResult

__all__ = ["ConfigError", "HudiError", "HudiTable", "Operation", "TableServiceError", "WriteConfig", "WriteError",
           "WriteResult"]
__version__ = "0.1.0"
