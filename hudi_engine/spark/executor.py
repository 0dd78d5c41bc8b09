"""`spark_executor(spark)` / `clustering_executor(spark)`: run a compaction's per-file-group operations, or a
clustering's input groups, as Spark tasks.

Compaction plans one operation per file group; each task reads one file slice, merges it with the table's payload
and writes the new base file (`compaction.execute_operation`). Records never reach the driver; write stats come
back as objects (JSON only for the trip from the task).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.table_services.clustering import ClusteringExecutor, ClusteringGroup, ClusteringTask, execute_group
from hudi_engine.table_services.compaction import CompactionOperation, CompactionTask, Executor, execute_operation
from hudi_engine.timeline.commit_metadata import WriteStat


class _ServiceFn:
    """Task: the plan items (compaction operations, clustering groups) whose index the task's rows hold (one per
    task), each run by `run`; their write stats as JSON."""

    def __init__(self, run: Callable[[Any, Any, tuple[int, int, int]], list[WriteStat]], task: Any,
                 items: Sequence[Any]) -> None:
        self.run = run
        self.task = task
        self.items = list(items)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        token = (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)
        for batch in batches:
            stats = [json.dumps(st.to_dict()) for i in batch.column(0).to_pylist()
                     for st in self.run(self.task, self.items[i], token)]
            yield pa.RecordBatch.from_arrays([pa.array(stats, pa.string())], names=["stat"])


def _run_tasks(spark: SparkSession, fn: _ServiceFn, what: str) -> list[WriteStat]:
    if not fn.items:
        return []
    # range(n) in n partitions: exactly one item per task.
    df = spark.range(0, len(fn.items), 1, numPartitions=len(fn.items))
    try:
        rows = df.mapInArrow(fn, "stat string").collect()
    except Exception as e:
        raise unwrap_task_error(e) from e
    return [WriteStat.from_dict(json.loads(r[0]), what) for r in rows]


def _compact(task: CompactionTask, op: CompactionOperation, token: tuple[int, int, int]) -> list[WriteStat]:
    return [execute_operation(task, op, token)]


def clustering_executor(spark: SparkSession) -> ClusteringExecutor:
    """Runs a clustering plan's input groups as Spark tasks, one task per group (Hudi runs one Spark job per group);
    records never reach the driver, write stats come back."""
    ensure_executor_env(spark)

    def execute(task: ClusteringTask, groups: Sequence[ClusteringGroup]) -> list[WriteStat]:
        return _run_tasks(spark, _ServiceFn(execute_group, task, groups), "clustering task write stat")

    return execute


def spark_executor(spark: SparkSession) -> Executor:
    """Runs a plan's operations as Spark tasks, one task per operation (file group). Made before the service
    schedules anything, so the executors' check (and shipping the engine to them) comes first."""
    ensure_executor_env(spark)

    def execute(task: CompactionTask, ops: Sequence[CompactionOperation]) -> list[WriteStat]:
        return _run_tasks(spark, _ServiceFn(_compact, task, ops), "compaction task write stat")

    return execute
