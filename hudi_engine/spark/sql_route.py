"""A one-pass write's map side in Spark SQL alone: where Spark spells the keys (`sql_keys`) and the driver's listing
gives every partition's file group and task (`WriteClient.untagged_groups`), the route columns the map-side UDF adds
(`write_udfs.MapSideRouteFn`) are expressions, and the map stage runs no Python."""
from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudi_engine.config.write_config import Operation
from hudi_engine.spark.sql_keys import sql_key_text
from hudi_engine.spark.sql_text import json_value, name, string
from hudi_engine.write.bucket_assigner import NEW_GROUP, MapSidePlan, SliceInfo
from hudi_engine.write.executor import DELETE, FILE_ID, GROUP, TASK, WriteTask
from hudi_engine.write.write_client import WriteClient

ORDER = "_hw_order"  # a one-pass write's sort key in its write tasks: a hash of (partition, file group)
ROUTES_TYPE = "map<string,struct<g:string,t:int>>"


def sql_routed(df: DataFrame, client: WriteClient, task: WriteTask,
               plan: MapSidePlan) -> tuple[DataFrame, Mapping[str, list[SliceInfo]]] | None:
    """The one-pass map side in Spark SQL, without Python: when Spark spells the keys (`sql_keys`) and the driver's
    listing gives every partition's file group and task (`WriteClient.untagged_groups`), the columns
    `MapSideRouteFn` adds are expressions (a Python UDF costs the map stage about as much again as its scan and
    shuffle write). Returns the routed rows and the driver's listing, for the write tasks; None: route in Python."""
    text = sql_key_text(task.keygen(), df.schema)
    untagged = client.untagged_groups(plan) if text is not None else None
    if text is None or untagged is None:
        return None
    _, partition = text
    deleting = task.config.operation is Operation.DELETE
    routes = json_value({p: {"g": g, "t": t} for p, (g, t) in untagged.routes.items()}, ROUTES_TYPE)
    route = f"try_element_at({routes}, {partition})"
    group = f"{route}.g" if deleting else f"coalesce({route}.g, {string(NEW_GROUP)})"
    new_partition_task = f"cast(crc32({partition}) % {plan.n_tasks} as int)"  # as `MapSidePlan.tasks` gives it
    # One select of SQL text: one call to the JVM (see `sql_text`). The key and partition path route and order the
    # rows but do not travel: the write tasks key them again (`keyed_batches`), which costs less than the shuffle
    # and Spark's Arrow conversion of two more strings per row.
    routed = df.selectExpr("*", f"cast(null as string) AS {name(FILE_ID)}", f"{group} AS {name(GROUP)}",
                           f"coalesce({route}.t, {new_partition_task}) AS {name(TASK)}",
                           f"{str(deleting).lower()} AS {name(DELETE)}", f"xxhash64({partition}, {group}) AS {name(ORDER)}")
    return (routed.filter(F.col(GROUP).isNotNull()) if deleting else routed), untagged.slices
