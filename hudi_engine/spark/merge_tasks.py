"""The merge half of a native read as Spark tasks planned without a Python round trip (issue 24).

A Python data source costs Spark's planner three Python round trips per query (create the source, push its filters,
plan its partitions), each through a planning Python worker. On the native path the planner already decided which
slices the merge reads, as of which instant, when it made the read plan (`native.plan_json`), so it hands them to
the JVM ready to run: the fixed query (`ScanPlan` without slices) and one pickled task per Spark task (the slices
it reads, each whole or for its logged keys only). The JVM (`MergeTasks` in HudiNative.scala) runs them as Spark's
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import pyarrow as pa
from pyspark.sql.types import StructType

from hudi_engine.file_group import FileSlice
from hudi_engine.scan_plan import ScanPlan, file_group_id
from hudi_engine.spark.datasource import arrow_target, pack_slices, resolve_columns, to_spark_arrow

# One task's work: slices, each with whether it is read for its logged keys only (the merge half of a key split).
Task = tuple[tuple[FileSlice, bool], ...]


def encode(scan: ScanPlan, merged: Sequence[str], logged_keys_only: Sequence[str]) -> dict[str, object]:
    """The merge tasks of a read plan for the JVM: `plan`, the query without its slices, and `tasks`, one per Spark
    task (base64 pickles). `merged` file groups are read whole, `logged_keys_only` ones for their logged keys."""
    wanted, only = set(merged) | set(logged_keys_only), set(logged_keys_only)
    slices = [s for s in scan.slices if file_group_id(s) in wanted]
    tasks = [tuple((s, file_group_id(s) in only) for s in group) for group in pack_slices(slices, only)]
    return {"plan": _b64(replace(scan, slices=())), "tasks": [_b64(t) for t in tasks]}


def _b64(value: object) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


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
