"""`write(df, path, options)`: a Spark DataFrame into a Hudi table, records flowing through Spark tasks.

The driver checks, starts the instant and commits (see `hudi_engine.write.write_client`); records never reach
it. The records go through one shuffle by partition: Spark groups rows by their partition values (or, for key
generators only Python evaluates, by the partition path a map task computed), and a task per partition computes
keys, looks them up in the partition's base files, pre-combines, plans the partition's buckets and runs one
handle per file group (`hudi_engine.write.executor`); the write stats go back to the driver, which commits.
`bulk_insert` shuffles by partition (or key range) and cuts sorted files; GLOBAL_SIMPLE first joins with every
key of the table in Spark. A failure anywhere before the commit rolls the instant back.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.partition_path import DEFAULT_PARTITION
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.table_services import runner
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.executor import (
    DELETE,
    FILE_ID,
    WriteTask,
    bulk_insert_files,
    pre_combine,
    write_partition,
)
from hudi_engine.write.write_client import WriteClient, WriteResult

KEY, PARTITION = "_hoodie_record_key", "_hoodie_partition_path"

# A task's output: one row per file written (its write stat as JSON), and one row of its timings.
TASK_OUTPUT = "stat string, index_s double, handles_s double"


def write(df: DataFrame, path: str, options: Mapping[str, Any]) -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi's own option keys; returns what the commit did."""
    config = WriteConfig.from_options(options)
    df = df.drop(*[c for c in df.columns if c in META_COLUMNS])
    # Spark hands timestamps to Arrow tasks in the session time zone; the table stores them as UTC instants.
    data_schema = to_arrow_schema(df.schema, timezone=df.sparkSession.conf.get("spark.sql.session.timeZone"))
    spark = df.sparkSession
    ensure_executor_env(spark)  # executors can run the engine (shipped if missing), before any instant
    # A compaction or clean that a crash left pending completes first: new log files of a group under a pending
    # compaction are named after it, and readers see them only once that compaction is committed.
    client = WriteClient.open(path, config, data_schema)
    executor = spark_executor(spark)
    runner.finish_pending(client.storage, client.base_path, client.storage_uri, client.config, executor)
    with client.transaction() as txn:
        try:
            stats = _run(spark, df, client, txn)
        except Exception as e:
            raise unwrap_task_error(e) from e
        result = txn.commit(stats)
    t0 = time.monotonic()
    runner.after_commit(client.storage, client.base_path, client.storage_uri, client.config, result.instant_time,
                        client.table_config, executor)
    result.timings["table_services"] = time.monotonic() - t0
    return result


def _run(spark: SparkSession, df: DataFrame, client: WriteClient, txn) -> list:
    config = client.config
    task = client.write_task(txn.instant)
    bulk = config.operation is Operation.BULK_INSERT
    persisted = None
    t0 = time.monotonic()
    try:
        if config.index.type is IndexType.GLOBAL_SIMPLE and config.operation.looks_up_keys:
            # A key may live in any partition: the index joins with every key of the table before the records
            # are grouped by the partition they will be written to.
            keyed = _keyed(df, client, task)
            if config.combine_before_write:
                keyed = keyed.repartition(KEY).mapInArrow(_PrecombineFn(task), keyed.schema)
            keyed = persisted = keyed.persist()
            out = _tag_global(spark, keyed, client, task).groupBy(PARTITION) \
                .applyInArrow(_partition_fn(task, with_keys=True), TASK_OUTPUT)
        elif (grouping := _sql_grouping(df, client)) is not None:
            # No Python before the shuffle: Spark groups (or sorts) rows by their partition values and the tasks
            # compute keys and partition paths. Null / empty keys fail the job here, before any write.
            rows = _check_keys(df.select("*", *[c for _, c in grouping]), client)
            by = [n for n, _ in grouping]
            if bulk:
                # Keys are strings: sorted as strings, each file holds one range of them.
                key_cols = [F.col(f"`{f}`").cast("string") for f in config.keys.record_key_fields]
                out = _bulk_insert(rows, by, key_cols, config) \
                    .mapInArrow(_BulkInsertFn(task, with_keys=False), TASK_OUTPUT)
            else:
                # One shuffle: a task gets one partition's records and does index lookup, pre-combine, bucket
                # plan and handles there, so the table's keys never travel through Spark.
                out = rows.groupBy(*by).applyInArrow(_partition_fn(task, with_keys=False), TASK_OUTPUT)
        else:  # key generators only Python can evaluate: keys and paths first, in a map stage
            keyed = _keyed(df, client, task)
            if bulk:
                out = _bulk_insert(keyed, [PARTITION], [KEY], config) \
                    .mapInArrow(_BulkInsertFn(task, with_keys=True), TASK_OUTPUT)
            else:
                out = keyed.groupBy(PARTITION).applyInArrow(_partition_fn(task, with_keys=True), TASK_OUTPUT)
        results = out.collect()
    finally:
        if persisted is not None:
            persisted.unpersist()
    # Task-side timings: summed over tasks (they run in parallel), beside the job's wall time.
    txn.timings["write"] = time.monotonic() - t0
    txn.timings["index"] = sum(r["index_s"] or 0.0 for r in results)
    txn.timings["handles"] = sum(r["handles_s"] or 0.0 for r in results)
    return [WriteStat.from_dict(json.loads(r["stat"]), "task write stat") for r in results if r["stat"] is not None]


def _keyed(df: DataFrame, client: WriteClient, task: WriteTask) -> DataFrame:
    """The rows with their record key and partition path, computed by the key generator in a map stage."""
    return df.mapInArrow(_KeyFn(task), from_arrow_schema(_with_key_columns(client.data_schema)))


def _bulk_insert(rows: DataFrame, partition_cols: list, key_cols: list, config: WriteConfig) -> DataFrame:
    """bulk_insert's one shuffle: rows of a partition sorted by key in one task, to be cut into files of the max
    size. Partitioned tables shuffle by partition (every file of a partition full but the last); an
    unpartitioned table by key range (Hudi's GLOBAL_SORT), so that it is not one task's work."""
    if config.keys.partition_fields:
        return rows.repartition(*partition_cols).sortWithinPartitions(*partition_cols, *key_cols)
    return rows.repartitionByRange(*key_cols).sortWithinPartitions(*key_cols)


def _tag_global(spark: SparkSession, keyed: DataFrame, client: WriteClient, task: WriteTask) -> DataFrame:
    """GLOBAL_SIMPLE: join incoming keys with every key of the table, read by tasks from the latest base files.

    Adds FILE_ID (null for a new key) and DELETE. With `hoodie.simple.index.update.partition.path` a key that
    moved partition becomes two rows: a delete in its old file group and an insert in the new partition.
    """
    config = client.config
    deleting = F.lit(config.operation is Operation.DELETE)
    files = client.index_files(None)
    if not files:
        return keyed.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, deleting)
    files_df = spark.createDataFrame(files, schema="partition string, file_id string, path string")
    files_df = files_df.repartition(max(1, min(len(files), spark.sparkContext.defaultParallelism * 2)))
    existing = files_df.mapInArrow(
        _ReadKeysFn(task),
        "_ix_key string, _ix_partition string, _ix_file_id string",
    ).hint("shuffle_hash")  # sized from the short file list, Spark would otherwise broadcast every table key
    joined = keyed.join(existing, keyed[KEY] == existing["_ix_key"], "left")
    moved = F.col("_ix_partition").isNotNull() & (F.col("_ix_partition") != F.col(PARTITION))
    if not config.index.update_partition_path or config.operation is Operation.DELETE:
        # The record stays where the key lives.
        out = (joined.withColumn(PARTITION, F.coalesce(F.col("_ix_partition"), F.col(PARTITION)))
               .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, deleting))
        return out.drop("_ix_key", "_ix_partition", "_ix_file_id")
    stay = joined.filter(~moved).withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(False))
    old = (joined.filter(moved).withColumn(PARTITION, F.col("_ix_partition"))
           .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(True)))
    new = joined.filter(moved).withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, F.lit(False))
    return stay.unionByName(old).unionByName(new).drop("_ix_key", "_ix_partition", "_ix_file_id")


def _with_key_columns(schema: pa.Schema) -> pa.Schema:
    return pa.schema([*schema, pa.field(KEY, pa.string()), pa.field(PARTITION, pa.string())])


class _KeyFn:
    """Task: record key and partition path columns from the key generator."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keygen = self.task.keygen()
        for batch in batches:
            yield from _with_keys(pa.Table.from_batches([batch]), keygen).to_batches()


def _with_keys(table: pa.Table, keygen) -> pa.Table:
    """The rows (without the grouping helper columns) with their record key and partition path."""
    table = table.drop_columns([c for c in table.column_names if c.startswith(GROUP_PREFIX)])
    return table.append_column(KEY, keygen.record_keys(table)).append_column(PARTITION, keygen.partition_paths(table))


class _PrecombineFn:
    """Task (global index only): duplicates of a key inside the batch reduced with the payload's pre-combine."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        batches = list(batches)
        if batches:
            yield from pre_combine(self.task, pa.Table.from_batches(batches)).to_batches()


class _ReadKeysFn:
    """Task: the record keys of some base files (the global index reads only the key column)."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.storage import Storage

        storage, _ = Storage.for_uri(self.task.storage_uri)
        for batch in batches:
            for row in batch.to_pylist():
                keys = self.task.read_keys(storage, row["path"])
                n = len(keys)
                yield pa.RecordBatch.from_arrays(
                    [keys, pa.array([row["partition"]] * n, pa.string()), pa.array([row["file_id"]] * n, pa.string())],
                    names=["_ix_key", "_ix_partition", "_ix_file_id"])


def _task_token() -> tuple[int, int, int]:
    """The write token's parts: Spark partition, stage and task attempt (so a retried task writes new names)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)


class _BulkInsertFn:
    """Task: the sorted records of one range cut into new base files (keys and paths computed here unless
    `with_keys`)."""

    def __init__(self, task: WriteTask, *, with_keys: bool) -> None:
        self.task = task
        self.with_keys = with_keys

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t0 = time.perf_counter()
        stats = list(bulk_insert_files(self.task, batches if self.with_keys else self._keyed(batches),
                                       _task_token()))
        yield from _task_output(stats, {"handles_s": time.perf_counter() - t0}).to_batches()

    def _keyed(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keygen = self.task.keygen()
        for batch in batches:
            yield from _with_keys(pa.Table.from_batches([batch]), keygen).to_batches()


def _partition_fn(task: WriteTask, *, with_keys: bool):
    """Task: all records of one partition path through index, pre-combine, bucket plan and handles. Without
    `with_keys` the rows come grouped by partition values; keys and paths are computed here.

    A plain annotated function: PySpark infers applyInArrow's mode from the type hints (a callable object fails).
    """

    def run(table: pa.Table) -> pa.Table:
        token = _task_token()
        timings: dict[str, float] = {}
        if with_keys:
            stats = write_partition(task, table.column(PARTITION)[0].as_py(), table, token, timings)
        else:
            table = _with_keys(table, task.keygen())
            paths = table.column(PARTITION)
            stats = []
            # Spark's grouping may put paths together (it folds -0.0 into 0.0), never split one.
            unique = pc.unique(paths).to_pylist()
            for p in unique:
                part = table if len(unique) == 1 else table.filter(pc.equal(paths, p))
                stats += write_partition(task, p, part, token, timings)
        return _task_output(stats, timings)

    return run


def _task_output(stats: list[WriteStat], timings: dict[str, float]) -> pa.Table:
    """One row per write stat (JSON for the trip to the driver) and one row of the task's timings."""
    n = len(stats)
    encoded = [json.dumps(s.to_dict()) for s in stats]
    return pa.table({"stat": pa.array([*encoded, None], pa.string()),
                     "index_s": pa.array([None] * n + [timings.get("index_s", 0.0)], pa.float64()),
                     "handles_s": pa.array([None] * n + [timings.get("handles_s", 0.0)], pa.float64())})


GROUP_PREFIX = "_hw_group_"
_GROUPABLE = (T.StringType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BooleanType, T.DateType,
              T.TimestampType, T.TimestampNTZType, T.DecimalType)


def _sql_grouping(df: DataFrame, client: WriteClient) -> list[tuple[str, Column]] | None:
    """Spark columns whose values hold all rows of a partition path together, or None where only the key
    generator can tell (then a Python pass computes the paths before the shuffle).

    A path is a function of the partition values: equal values, equal paths. The reverse must hold too, so
    null, "" and the default partition name (all the default path) are made one value, and several fields are
    allowed only with url-encoding (else `a/b`+`c` and `a`+`b/c` are one path). Types are those whose string
    form is one-to-one."""
    from hudi_engine.keygen import COMPLEX, GLOBAL_DELETE, NONPARTITIONED, SIMPLE

    cfg = client.config
    types = {f.name: f.dataType for f in df.schema.fields}
    keys = cfg.keys
    if keys.key_generator_class not in (SIMPLE, COMPLEX, NONPARTITIONED, GLOBAL_DELETE) or \
            any(f not in types for f in keys.record_key_fields):
        return None
    if keys.key_generator_class in (NONPARTITIONED, GLOBAL_DELETE) or not keys.partition_fields:
        return [(GROUP_PREFIX + "0", F.lit(0).alias(GROUP_PREFIX + "0"))]
    if len(keys.partition_fields) > 1 and not keys.url_encode_partitioning:
        return None
    if any(not isinstance(types.get(f), _GROUPABLE) for f in keys.partition_fields):
        return None
    out = []
    for i, f in enumerate(keys.partition_fields):
        c = F.col(f"`{f}`")
        default = c.isNull() | c.cast("string").isin("", DEFAULT_PARTITION)
        out.append((f"{GROUP_PREFIX}{i}", F.when(default, F.lit(None)).otherwise(c)))
    return [(name, col.alias(name)) for name, col in out]


def _check_keys(df: DataFrame, client: WriteClient) -> DataFrame:
    """Fail the job on a row with a null or empty record key, in the stage before any file is written, with
    the key generator's message and the row."""
    cfg = client.config
    fields = cfg.keys.record_key_fields
    missing = [F.col(f"`{f}`").isNull() | (F.col(f"`{f}`").cast("string") == "") for f in fields]
    bad = missing[0]
    for m in missing[1:]:
        bad = bad & m
    what = (f"record key field {fields[0]!r} is null or empty" if len(fields) == 1 else
            f"record key fields {list(fields)} are all null or empty")
    # The prefix lets unwrap_task_error give back a KeyGeneratorError; split in two so that a plan printed in
    # some other error does not read as this one.
    message = F.concat(F.lit("hudi_engine.errors."), F.lit(f"KeyGeneratorError: {what} in row "),
                       F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns if not c.startswith(GROUP_PREFIX)])),
                       F.lit(f"; {cfg.keys.key_generator_class.rsplit('.', 1)[-1]} needs a non-empty key in every row\n\n"))
    first = df.columns[0]
    return df.withColumn(first, F.when(bad, F.raise_error(message)).otherwise(F.col(f"`{first}`")))
