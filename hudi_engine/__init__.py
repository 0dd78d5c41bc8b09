"""hudi_engine: reads and writes Apache Hudi tables (table versions 6, 8 and 9) from Python and Spark.

`HudiTable` reads a table, writes it (`write`) and maintains it (compact, clean, rollback, archive);
`write_table(arrow_table, path, options)` writes by path, a new table too, without Spark; what one read reads is a
`ScanPlan` (`HudiTable.plan_scan` of a `ReadOptions` query, `hudi_engine.scan_plan`); `WriteConfig` is a write's options,
typed (`hudi_engine.config` declares every option); `TableConfig` is a table's `hoodie.properties`; `Storage` the
file system a table lives on (local paths, `s3://`, what pyarrow.fs opens); `TableLocation` where a table is in it
(a `HudiTable` is one table as an operation loads it once: location, config, `Timeline`); `lock_holder` says who holds a
table's write lock; `IS_DELETED_FIELD` is Hudi's delete marker column (`_hoodie_is_deleted`). The Spark entry points
are in `hudi_engine.spark`. These names (and `hudi_engine.spark`'s) are the
public API; every other module is internal and may change.
"""
from typing import TYPE_CHECKING, Any

from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.errors import (
    ConfigError,
    HudiError,
    KeyGeneratorError,
    SyncError,
    TableNotFoundError,
    TableServiceError,
    WriteError,
)
from hudi_engine.location import TableLocation
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.payload import payload_for
from hudi_engine.read_options import ReadOptions
from hudi_engine.scan_plan import ScanPlan
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table import HudiTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write.lock import lock_holder
from hudi_engine.write.write_result import WriteResult

if TYPE_CHECKING:
    from hudi_engine.write_pipeline import write_table

__all__ = ["IS_DELETED_FIELD", "META_COLUMNS", "ConfigError", "HudiError", "HudiTable", "KeyGeneratorError", "Operation",
           "ReadOptions", "ScanPlan", "Storage", "SyncError", "TableConfig", "TableLocation",
           "TableNotFoundError", "TableServiceError", "Timeline", "WriteConfig", "WriteError", "WriteResult",
           "lock_holder", "payload_for", "write_table"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The write pipeline (and the table services under it) loads on first use: Spark's Python workers import this
    # package for every read task, and reads never need it.
    if name == "write_table":
        from hudi_engine.write_pipeline import write_table

        return write_table
    raise AttributeError(f"module 'hudi_engine' has no attribute {name!r}")
