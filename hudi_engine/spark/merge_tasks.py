"""The merge half of a native read as Spark tasks planned without a Python round trip (issue 24).

A Python data source costs Spark's planner three Python round trips per query (create the source, push its filters,
plan its partitions), each through a planning Python worker. On the native path the planner already decided which
slices the merge reads, as of which instant, when it made the read plan (`native.plan_json`), so it hands them to
the JVM ready to run (`native.merge_tasks`): the fixed query (`ScanPlan` without slices) and one pickled task per
Spark task (the slices it reads, each whole or for its logged keys only). The JVM (`MergeTasks` in jvm/MergeTasks.scala) runs them as Spark's
`MapInArrow` over one row per task, with the Python function `merge_function` named in a command it pickles
itself; no Python runs until the tasks do. The tasks' Python environment is the registered `hudi_merge` source's
(its interpreter and shipped files), so a cluster's executors read them as they read `hudi_merge`.

The rows are those `hudi_merge` reads for the same query and slices (`ScanPlan.read_slice`, cast to the declared
Spark schema as the source casts them); CDC queries still go through `hudi_merge`.
"""
from __future__ import annotations

import base64
import json
import pickle
from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark.sql.types import StructType

from hudi_engine.file_group import FileSlice
from hudi_engine.scan_plan import ScanPlan
from hudi_engine.spark.spark_types import arrow_target, resolve_columns, to_spark_arrow

# One task's work: slices, each with whether it is read for its logged keys only (the merge half of a key split).
# The planner writes them (`native.merge_tasks`).
Task = tuple[tuple[FileSlice, bool], ...]


def merge_function(schema_json: str, plan: str) -> tuple[Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                                                         StructType]:
    """What the command the JVM pickles unpickles to in a Python worker: the `MapInArrow` function and its return
    type. It reads every task of its input (a column of pickled `Task`s) and yields the rows in `schema_json`'s
    columns (the query's, resolved against the table's as `hudi_merge` resolves them)."""
    schema = StructType.fromJson(json.loads(schema_json))
    scan: ScanPlan = pickle.loads(base64.b64decode(plan))
    columns = resolve_columns(schema, scan.schema, scan.table_uri)
    names = [c for c, _ in columns]
    target = arrow_target(schema)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context = scan.read_context()
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                task: Task = pickle.loads(blob)
                for file_slice, logged_keys_only in task:
                    rows = scan.read_slice(file_slice, names, logged_keys_only=logged_keys_only, context=context)
                    if rows.num_rows:
                        where = f"file slice {file_slice.partition_path}/{file_slice.file_id}@{file_slice.base_instant}"
                        yield from to_spark_arrow(rows, target, where).to_batches()

    return read, schema
