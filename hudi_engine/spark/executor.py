"""`spark_executor(spark)`: the `Executor` that runs a table service's per-file-group operations as Spark tasks.

Compaction plans one operation per file group; each task reads one file slice, merges it with the table's payload
and writes the new base file (`compaction.execute_operation`). Records never reach the driver; write stats come
back as objects (JSON only for the trip from the task).
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import SparkSession

from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.table_services.compaction import CompactionOperation, CompactionTask, Executor, execute_operation
from hudi_engine.timeline.commit_metadata import WriteStat


class _CompactFn:
    """Task: the operations whose index the task's rows hold (one per task), each into a new base file."""

    def __init__(self, task: CompactionTask, operations: Sequence[CompactionOperation]) -> None:
        self.task = task
        self.operations = list(operations)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        token = (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)
        for batch in batches:
            stats = [json.dumps(execute_operation(self.task, self.operations[i], token).to_dict())
                     for i in batch.column(0).to_pylist()]
            yield pa.RecordBatch.from_arrays([pa.array(stats, pa.string())], names=["stat"])


def spark_executor(spark: SparkSession) -> Executor:
    """Runs a plan's operations as Spark tasks, one task per operation (file group). Made before the service
    schedules anything, so the executors' check (and shipping the engine to them) comes first."""
    ensure_executor_env(spark)

    def execute(task: CompactionTask, ops: Sequence[CompactionOperation]) -> list[WriteStat]:
        if not ops:
            return []
        # range(n) in n partitions: exactly one operation per task.
        df = spark.range(0, len(ops), 1, numPartitions=len(ops))
        try:
            rows = df.mapInArrow(_CompactFn(task, ops), "stat string").collect()
        except Exception as e:
            raise unwrap_task_error(e) from e
        return [WriteStat.from_dict(json.loads(r[0]), "compaction task write stat") for r in rows]

    return execute
