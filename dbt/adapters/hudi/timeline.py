"""The `hudi_timeline(path)` table function of every adapter session (one row per instant of a Hudi table).

It is defined in the engine (`hudi_engine.spark.timeline_function`): Spark's Python workers run it, and on a
cluster they get the engine from the driver but have no dbt.
"""
from hudi_engine.spark import TIMELINE_COLUMNS as COLUMNS
from hudi_engine.spark import TIMELINE_FUNCTION as FUNCTION_NAME
from hudi_engine.spark import TIMELINE_SCHEMA_DDL as SCHEMA_DDL
from hudi_engine.spark import (
    HudiTimelineFunction,
    TimelineRow,
    register_timeline_function,
    timeline_rows,
)

__all__ = ["COLUMNS", "FUNCTION_NAME", "SCHEMA_DDL", "HudiTimelineFunction", "TimelineRow",
           "register_timeline_function", "timeline_rows"]
