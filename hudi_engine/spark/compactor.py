"""Table services on Spark: a compaction plan's operations as Spark tasks (one per file group), and the services the
write path runs around a commit (inline compaction, automatic cleaning, finishing what a crash left pending).

The driver schedules, commits and cleans (`hudi_engine.table_services`); records never reach it. Each task reads
one file slice, merges it with the table's payload and writes the new base file (`compaction.execute_operation`).
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from hudi_engine.errors import HudiError, WriteError
from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import rollback_last_commit, service_lock
from hudi_engine.table_services.clean import CleanConfig, resume_pending_cleans
from hudi_engine.table_services.clean import clean as clean_table
from hudi_engine.table_services.compaction import (
    CompactionOperation,
    CompactionResult,
    CompactionTask,
    Executor,
    compaction_due,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import WriteStat

__all__ = [
    "clean", "clean_path", "compact", "compact_with_result", "finish_pending_table_services", "rollback_last_commit", "run_table_services_after_commit",
    "schedule_compaction", "spark_executor",
]

_DEFAULT_MAX_DELTA_COMMITS = 5


def _options(options: Any) -> dict[str, str]:
    """Options as a dict of strings: a mapping, or a WriteConfig (its `options`), or None."""
    if options is None:
        return {}
    raw = getattr(options, "options", options)
    return {str(k): ("" if v is None else str(v)) for k, v in dict(raw).items()}


def _open(path: str) -> tuple[Storage, str, str]:
    storage, base_path = Storage.for_uri(str(path))
    uri = str(path) if "://" in str(path) else base_path
    return storage, base_path, uri


def _flag(options: Mapping[str, str], key: str, default: bool) -> bool:
    value = options.get(key, "true" if default else "false").strip().lower()
    if value not in ("true", "false"):
        raise WriteError(f"option {key}={value!r}: expected true or false")
    return value == "true"


# --------------------------------------------------------------------------------------------- execution


class _CompactFn:
    """Task: the operations whose index the task's rows hold (one per task), each into a new base file."""

    def __init__(self, task: CompactionTask, ops_json: list[str]) -> None:
        self.task = task
        self.ops_json = ops_json

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from hudi_engine.table_services.compaction import CompactionOperation, execute_operation

        ctx = TaskContext.get()
        token = (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)
        for batch in batches:
            stats = []
            for i in batch.column(0).to_pylist():
                op = CompactionOperation.from_json(self.ops_json[i])
                stats.append(json.dumps(execute_operation(self.task, op, token).to_dict()))
            yield pa.RecordBatch.from_arrays([pa.array(stats, pa.string())], names=["stat"])


def spark_executor(spark: SparkSession) -> Executor:
    """Runs a plan's operations as Spark tasks, one task per operation (file group)."""

    def execute(task: CompactionTask, ops: Sequence[CompactionOperation]) -> list[WriteStat]:
        if not ops:
            return []
        ops_json = [op.to_json() for op in ops]
        # range(n) in n partitions: exactly one operation per task.
        df = spark.range(0, len(ops), 1, numPartitions=len(ops))
        try:
            rows = df.mapInArrow(_CompactFn(task, ops_json), "stat string").collect()
        except Exception as e:  # noqa: BLE001 - re-raised as the task's own error
            raise unwrap_task_error(e) from e
        return [WriteStat.from_dict(json.loads(r[0]), "compaction task write stat") for r in rows]

    return execute


# --------------------------------------------------------------------------------------------- on demand


def compact(spark: SparkSession, path: str, options: Mapping[str, str] | None = None) -> str | None:
    """Compact the MOR table at `path` now: finish any pending compaction, then schedule one over every file group
    with log files and execute it on Spark. Returns the instant of the compaction it completed last, None if
    there was nothing to compact."""
    result = compact_with_result(spark, path, options)
    return result.instant_time if result is not None else None


def compact_with_result(spark: SparkSession, path: str,
                        options: Mapping[str, str] | None = None) -> CompactionResult | None:
    """`compact`, returning what the last compaction wrote (file groups, records, timings)."""
    ensure_executor_env(spark)  # executors can run the engine (shipped if missing), before any instant
    opts = _options(options)
    storage, base_path, uri = _open(path)
    with service_lock(storage, base_path, opts):
        done = _finish_pending_compactions(spark, storage, base_path, uri, opts)
        instant = schedule_compaction(storage, base_path, options=opts)
        if instant is not None:
            done.append(run_compaction(storage, base_path, instant.timestamp, storage_uri=uri,
                                       execute=spark_executor(spark), options=opts))
        return done[-1] if done else None


def clean(storage: Storage, base_path: str, options: Mapping[str, str] | None = None) -> str | None:
    """Clean by the policy in `options` (Hudi's keys); the clean instant, or None when nothing was deleted."""
    return clean_table(storage, base_path, _options(options))


def clean_path(path: str, options: Mapping[str, str] | None = None) -> str | None:
    """`clean` for the table at a path or URI (what the dbt adapter calls)."""
    storage, base_path, _ = _open(path)
    return clean(storage, base_path, options)


def _finish_pending_compactions(spark: SparkSession, storage: Storage, base_path: str, uri: str,
                                opts: Mapping[str, str]) -> list[CompactionResult]:
    return [run_compaction(storage, base_path, ts, storage_uri=uri, execute=spark_executor(spark), options=opts)
            for ts in pending_compactions(storage, base_path)]


# --------------------------------------------------------------------------------------------- write path hooks


def finish_pending_table_services(spark: SparkSession, path: str, options: Any = None) -> list[str]:
    """Before a write: complete the compactions and cleans a crash left pending. Returns their instants.

    A pending compaction must complete before the next write commits: that write's log files take the
    compaction's instant as base instant, and hudi-rs only reads them once the compaction's base file is
    committed. No-op for a table that does not exist yet.
    """
    opts = _options(options)
    storage, base_path, uri = _open(path)
    if not storage.exists(Storage.join(base_path, ".hoodie", "hoodie.properties")):
        return []
    timeline = Timeline.load(storage, base_path)
    if not timeline.pending_compactions() and not timeline.filter_by(["clean"]).pending():
        return []  # the common case: no lock needed
    with service_lock(storage, base_path, opts):
        done = [r.instant_time for r in _finish_pending_compactions(spark, storage, base_path, uri, opts)]
        done += [r.instant_time for r in resume_pending_cleans(storage, base_path)]
        return done


def run_table_services_after_commit(spark: SparkSession, path: str, write_config: Any,
                                    last_instant: str | None = None) -> list[str]:
    """After a commit: inline compaction when due, then automatic cleaning. Returns the instants it created.

    `write_config` is the write's `WriteConfig` (or its options mapping). Compaction runs on a MERGE_ON_READ table
    when `hoodie.compact.inline=true` and `hoodie.compact.inline.max.delta.commits` (default 5) deltacommits
    completed since the last compaction. Cleaning runs when `hoodie.clean.automatic` (default true), with
    `hoodie.cleaner.policy` and its retention. `last_instant` (the commit just made) is only checked to be
    completed: services never run after a failed write.
    """
    opts = _options(write_config)
    storage, base_path, uri = _open(path)
    created: list[str] = []
    with service_lock(storage, base_path, opts):
        timeline = Timeline.load(storage, base_path)
        if last_instant is not None and not any(i.is_completed for i in timeline.instants_at(last_instant)):
            raise WriteError(f"table services after {last_instant}: that instant is not completed on {base_path}")
        config = TableConfig.load(storage, base_path)
        if config.table_type == "MERGE_ON_READ" and _flag(opts, "hoodie.compact.inline", False):
            try:
                n = int(opts.get("hoodie.compact.inline.max.delta.commits", _DEFAULT_MAX_DELTA_COMMITS))
            except ValueError:
                raise WriteError("option hoodie.compact.inline.max.delta.commits="
                                 f"{opts['hoodie.compact.inline.max.delta.commits']!r}: expected a whole number") from None
            if compaction_due(timeline, n):
                created += [r.instant_time for r in _finish_pending_compactions(spark, storage, base_path, uri, opts)]
                instant = schedule_compaction(storage, base_path, options=opts)
                if instant is not None:
                    created.append(run_compaction(storage, base_path, instant.timestamp, storage_uri=uri,
                                                  execute=spark_executor(spark), options=opts).instant_time)
        if CleanConfig.from_options(opts).automatic:
            instant = clean_table(storage, base_path, opts)
            if instant is not None:
                created.append(instant)
    return created
