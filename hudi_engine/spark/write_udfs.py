"""The task side of a Spark write: the Arrow UDFs its jobs run (one class per kind of task, picklable, holding what
the task needs), the DataFrame columns they add, and the tasks' output as the driver reads it back.

Every map-side UDF reads the key and partition columns only and returns a struct (`with_udf`), marked
nondeterministic so that Spark evaluates it once per row; the write tasks (`mapInArrow`) return one row per file
written (`TASK_OUTPUT`).
"""
from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.keygen import AUTO_KEY_COLUMN
from hudi_engine.spark.arrow_shuffle import Packer, group_orders, unpacked
from hudi_engine.timeline.commit_metadata import RecordKeys, WriteStat
from hudi_engine.write.bucket_assigner import BucketPlan, MapSidePlan, SliceInfo
from hudi_engine.write.executor import (
    BUCKET,
    BUCKET_NUMBER,
    DELETE,
    FILE_ID,
    GROUP,
    KEY,
    PARTITION,
    TASK,
    KeyProfile,
    WholeGroups,
    WriteTask,
    bulk_insert_files,
    key_and_tag,
    map_side_groups,
    pre_combine_sorted,
    write_buckets,
    write_groups,
)
from hudi_engine.write.tagging import TagSpec
from hudi_engine.write.write_client import Transaction

# A task's output: one row per file written (its write stat as JSON), and one row of its timings.
# A StructType, not DDL text: each mapInArrow would have the JVM parse the text again.
TASK_OUTPUT = T.StructType([T.StructField("stat", T.StringType()), T.StructField("keys", T.StringType()),
                            T.StructField("index_s", T.DoubleType()), T.StructField("handles_s", T.DoubleType())])
# A stat's reported record keys (`WriteStat.record_keys`) go to the driver with it up to this many; beyond (a bulk
# load's new file groups), the record index reads the file's keys itself rather than the driver collecting them.
REPORTED_KEYS_MAX = 100_000
TAG_TYPE = T.StructType([T.StructField(KEY, T.StringType()), T.StructField(PARTITION, T.StringType()),
                         T.StructField(FILE_ID, T.StringType()), T.StructField(BUCKET_NUMBER, T.IntegerType())])
ROUTE_TYPE = T.StructType([T.StructField(KEY, T.StringType()), T.StructField(PARTITION, T.StringType()),
                           T.StructField(BUCKET, T.IntegerType()), T.StructField(TASK, T.IntegerType())])
PROFILE_SCHEMA = ("partition string, file_id string, bucket_number int, count long, key string, level int")
_TAG = "_hw_tag"


# ---- the columns the map-side UDFs add ---------------------------------------------------------------------------
def key_source_columns(config: WriteConfig, columns: list[str]) -> list[str]:
    """The top-level columns the key generator reads (key fields, partition fields; `name:TYPE`, `a.b` resolved)."""
    wanted = [f.split(":")[0].split(".")[0] for f in (*config.keys.record_key_fields, *config.keys.partition_fields)]
    if config.keys.auto_generated:
        wanted.append(AUTO_KEY_COLUMN)
    return [c for c in dict.fromkeys(wanted) if c in columns]


def keyed(df: DataFrame, task: WriteTask, spec: TagSpec | None) -> DataFrame:
    """`df` with record key, partition path, file id and bucket number: one Arrow UDF over the key and partition
    columns only (marked nondeterministic so Spark evaluates it once per row)."""
    return with_udf(df, KeyTagFn(task, spec), TAG_TYPE, key_source_columns(task.config, df.columns), df.columns)


def assigned(tagged: DataFrame, plan: BucketPlan, *, keep_file_id: bool = False) -> DataFrame:
    """`tagged` (keys, partitions and file ids already set) with every record's bucket and task (`BucketPlan.assign`
    in an Arrow UDF); a record no bucket takes (a delete of a new key) drops out. `keep_file_id`: the tag's file id
    stays beside the records (RECORD_INDEX: an append reports its keys checked against the index)."""
    tags = [KEY, PARTITION, FILE_ID, BUCKET_NUMBER]
    dropped = [t for t in tags if not (keep_file_id and t == FILE_ID)]
    return with_udf(tagged, RouteFn(plan), ROUTE_TYPE, tags, [c for c in tagged.columns if c not in dropped],
                    keep=F.col(f"{_TAG}.{BUCKET}") >= 0)


def struct_udf(fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], result: T.StructType) -> Any:
    """An iterator Arrow UDF of `fn` returning `result` structs, marked nondeterministic so Spark evaluates it once
    per row."""
    def run(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:  # the annotations tell Spark the UDF's kind
        return fn(batches)

    # pyspark's stubs allow only atomic and array results for iterator Arrow UDFs; Spark 4 runs struct results.
    return F.arrow_udf(run, result).asNondeterministic()  # type: ignore[call-overload]


def with_udf(df: DataFrame, fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], result: T.StructType,
             sources: list[str], columns: list[str], keep: Column | None = None) -> DataFrame:
    """`columns` of `df`, then the fields of `fn`'s `result` struct (an Arrow UDF over the `sources` columns only),
    without the rows `keep` (an expression over the struct) turns away."""
    out = df.withColumn(_TAG, struct_udf(fn, result)(F.struct(*[F.col(f"`{c}`") for c in sources])))
    if keep is not None:
        out = out.filter(keep)
    return out.select(*[F.col(f"`{c}`") for c in columns], *[F.col(f"{_TAG}.{f.name}").alias(f.name) for f in result])


# ---- map-side UDFs -----------------------------------------------------------------------------------------------
class KeyTagFn:
    def __init__(self, task: WriteTask, spec: TagSpec | None, skip: WholeGroups | None = None) -> None:
        self.task, self.spec, self.skip = task, spec, skip  # skip: partitions left untagged (`tagging.tag`)

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        keygen = self.task.keygen()
        for columns in batches:
            table = pa.Table.from_struct_array(columns) if isinstance(columns, pa.StructArray) else \
                pa.table({columns.type.name: columns})
            yield key_and_tag(keygen, self.spec, table, self.skip)


class RouteFn:
    """Key, partition, bucket (-1: none) and task of tagged records (`BucketPlan.assign`), tagged first by
    `keytag` when it is given."""

    def __init__(self, plan: BucketPlan, keytag: KeyTagFn | None = None) -> None:
        self.plan, self.keytag = plan, keytag

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for tags in (self.keytag(batches) if self.keytag is not None else batches):
            keys, partitions, file_ids, numbers = (tags.field(c) for c in (KEY, PARTITION, FILE_ID, BUCKET_NUMBER))
            buckets = self.plan.assign(partitions, keys, file_ids, numbers)
            yield pa.StructArray.from_arrays([keys, partitions, pa.array(buckets, pa.int32()),
                                              pa.array(self.plan.tasks(buckets), pa.int32())],
                                             names=[KEY, PARTITION, BUCKET, TASK])


# Records a map task keys, tags, routes and packs at once: Spark hands mapInArrow 10,000 a batch
# (spark.sql.execution.arrow.maxRecordsPerBatch), and each batch pays a few dozen Arrow calls and a sort (W3b's 5M-row
# day: about 10% of the write's time at 10,000).
ROUTE_ROWS = 65_536


def coalesced(batches: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """`batches` joined into batches of at least `rows` records (the last may have fewer)."""
    held: list[pa.RecordBatch] = []
    n = 0
    for batch in batches:
        held.append(batch)
        n += batch.num_rows
        if n >= rows:
            yield _joined(held)
            held, n = [], 0
    if held:
        yield _joined(held)


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]  # pa.concat_batches: pyarrow 19+


class _PackFn:
    """Map task routed in Python: each batch's records keyed, tagged and routed over the `sources` columns only
    (`route`, one struct array per batch), then handed to the shuffle as chunks (`arrow_shuffle.Packer`) with the
    route's `fields` beside them (cast to their types, as Spark would: every chunk of a group has one schema) and
    DELETE; `placed` tells the records a route drops and each one's chunk."""

    fields: tuple[tuple[str, pa.DataType], ...]

    def __init__(self, route: Callable[[Iterator[pa.Array]], Iterator[pa.StructArray]], sources: list[str],
                 deleting: bool) -> None:
        self.route, self.sources, self.deleting = route, sources, deleting

    def placed(self, records: pa.RecordBatch) -> tuple[pa.Array | None, np.ndarray]:
        """The records kept (None: all) and, of those, the order of each one's chunk."""
        raise NotImplementedError

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        packer = Packer()
        taken: deque[pa.RecordBatch] = deque()

        def sources() -> Iterator[pa.Array]:
            for batch in coalesced(batches, ROUTE_ROWS):
                taken.append(batch)
                yield pa.StructArray.from_arrays([batch.column(c) for c in self.sources], names=self.sources)

        for route in self.route(sources()):  # one route per batch, in turn
            batch = taken.popleft()
            records = pa.RecordBatch.from_arrays(
                [*batch.columns, *(route.field(f).cast(t) for f, t in self.fields),
                 pa.array(np.full(batch.num_rows, self.deleting))], names=[*batch.schema.names, *(f for f, _ in self.fields), DELETE])
            tasks = route.field(TASK)
            kept, orders = self.placed(records)
            if kept is not None:
                records, tasks = records.filter(kept), tasks.filter(kept)
            yield from packer.add(records, tasks.to_numpy(zero_copy_only=False), orders)
        yield from packer.flush()


class MapSidePackFn(_PackFn):
    """Map task of a one-pass write routed in Python (`MapSideRouteFn`): a chunk per file group; a record no file
    group takes (a delete of a new key) drops out."""

    fields = ((KEY, pa.string()), (PARTITION, pa.string()), (FILE_ID, pa.string()), (GROUP, pa.string()))

    def __init__(self, task: WriteTask, spec: TagSpec | None, listing: TagSpec | None, plan: MapSidePlan,
                 sources: list[str]) -> None:
        super().__init__(MapSideRouteFn(task, spec, listing, plan), sources,
                         task.config.operation is Operation.DELETE)

    def placed(self, records: pa.RecordBatch) -> tuple[pa.Array | None, np.ndarray]:
        groups = records.column(GROUP)
        kept = groups.is_valid() if groups.null_count else None
        partitions = records.column(PARTITION)
        if kept is not None:
            partitions, groups = partitions.filter(kept), groups.filter(kept)
        return kept, group_orders(partitions, groups)


class RoutePackFn(_PackFn):
    """Map task of a two-pass write (`RouteFn` over `KeyTagFn`): a chunk per bucket; a record no bucket takes (a
    delete of a new key) drops out."""

    fields = ((KEY, pa.string()), (PARTITION, pa.string()), (BUCKET, pa.int32()))

    def __init__(self, task: WriteTask, spec: TagSpec | None, plan: BucketPlan, sources: list[str]) -> None:
        super().__init__(RouteFn(plan, KeyTagFn(task, spec)), sources, task.config.operation is Operation.DELETE)

    def placed(self, records: pa.RecordBatch) -> tuple[pa.Array | None, np.ndarray]:
        buckets = records.column(BUCKET).to_numpy(zero_copy_only=False)
        kept = buckets >= 0
        return (None, buckets.astype(np.int64)) if kept.all() else (pa.array(kept), buckets[kept].astype(np.int64))


class MapSideRouteFn:
    """Map side of a one-pass write: key and tag (`spec`), then the file group and task from the partitions' listing
    (`listing`; `executor.map_side_groups`)."""

    def __init__(self, task: WriteTask, spec: TagSpec | None, listing: TagSpec | None, plan: MapSidePlan) -> None:
        whole = WholeGroups(listing, plan) if listing is not None and plan.whole_groups else None
        self.keytag, self.listing, self.plan = KeyTagFn(task, spec, whole), listing, plan
        self.deleting = task.config.operation is Operation.DELETE

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for tags in self.keytag(batches):
            groups, tasks = map_side_groups(self.listing, self.plan, tags, self.deleting)
            yield pa.StructArray.from_arrays([tags.field(KEY), tags.field(PARTITION), tags.field(FILE_ID), groups,
                                              tasks], names=[KEY, PARTITION, FILE_ID, GROUP, TASK])


# ---- tasks (mapInArrow) ------------------------------------------------------------------------------------------
class ProfileFn:
    """Task of the first pass: keys and tags of its records, counted and sampled (one small table out)."""

    def __init__(self, task: WriteTask, spec: TagSpec | None) -> None:
        self.task, self.spec = task, spec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keygen = self.task.keygen()
        profile = KeyProfile.empty()
        deleting = self.task.config.operation is Operation.DELETE
        for batch in batches:
            profile.add(key_and_tag(keygen, self.spec, pa.Table.from_batches([batch])), deleting)
        yield from profile.to_table().to_batches()


class WriteFn:
    """Task: its buckets, one file group at a time (`chunks`: from the shuffle's Arrow chunks, `arrow_shuffle`,
    each bucket's records sorted by key here; else sorted by Spark)."""

    def __init__(self, task: WriteTask, plan: BucketPlan, *, chunks: bool = False) -> None:
        self.task, self.plan, self.chunks = task, plan, chunks

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        timings: dict[str, float] = {}
        records = unpacked(batches) if self.chunks else batches
        stats = list(write_buckets(self.task, self.plan, records, task_token(), timings, sort=self.chunks))
        yield from task_output(stats, timings).to_batches()


class MapSideWriteFn:
    """Task of a one-pass write: its file groups, one at a time (`known`: the driver's listing, if it routed;
    `chunks`: the records come as the shuffle's Arrow chunks, `arrow_shuffle`)."""

    def __init__(self, task: WriteTask, listing: TagSpec | None, plan: MapSidePlan,
                 known: Mapping[str, list[SliceInfo]] | None = None, *, chunks: bool) -> None:
        self.task, self.listing, self.plan, self.known, self.chunks = task, listing, plan, known, chunks

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        timings: dict[str, float] = {}
        records = unpacked(batches) if self.chunks else batches
        stats = list(write_groups(self.task, self.listing, self.plan, records, task_token(), timings, self.known))
        yield from task_output(stats, timings).to_batches()


class BulkInsertFn:
    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t0 = time.perf_counter()
        stats = list(bulk_insert_files(self.task, batches, task_token()))
        yield from task_output(stats, {"handles_s": time.perf_counter() - t0}).to_batches()


class PreCombineFn:
    """Task (global index only): versions of a key, sorted together, reduced a batch at a time."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from pre_combine_sorted(self.task, batches)


class ReadKeysFn:
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


class LookupRecordIndexFn:
    """Task: where the table's record index places some keys (RECORD_INDEX: only the index's file groups the keys
    hash to are read), as the global join's other side."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.write.tagging import record_index_locations

        for batch in batches:
            found = record_index_locations(self.task.storage_uri, self.task.base_path, self.task.instant,
                                           batch.column(0))
            yield pa.RecordBatch.from_arrays([c.combine_chunks() for c in found.columns],
                                             names=["_ix_key", "_ix_partition", "_ix_file_id"])


# ---- the tasks' output -------------------------------------------------------------------------------------------
def task_token() -> tuple[int, int, int]:
    """The write token's parts: Spark partition, stage and task attempt (so a retried task writes new names)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)


def task_output(stats: list[WriteStat], timings: dict[str, float]) -> pa.Table:
    """One row per write stat (JSON for the trip to the driver, with its reported record keys as JSON when there are
    few enough) and one row of the task's timings."""
    n = len(stats)
    encoded = [json.dumps(s.to_dict()) for s in stats]
    return pa.table({"stat": pa.array([*encoded, None], pa.string()),
                     "keys": pa.array([*map(_keys_json, stats), None], pa.string()),
                     "index_s": pa.array([None] * n + [timings.get("index_s", 0.0)], pa.float64()),
                     "handles_s": pa.array([None] * n + [timings.get("handles_s", 0.0)], pa.float64())})


def _keys_json(stat: WriteStat) -> str | None:
    keys = stat.record_keys
    if keys is None or len(keys.added) + len(keys.removed) > REPORTED_KEYS_MAX:
        return None
    return json.dumps([keys.added.to_pylist(), keys.removed.to_pylist(), keys.resolved])


def write_stats(results: list, txn: Transaction) -> list[WriteStat]:
    """The write stats of the tasks' collected output (`task_output`)."""
    # Task-side timings: summed over tasks (they run in parallel), beside the job's wall time.
    txn.timings["handles"] = sum(r["handles_s"] or 0.0 for r in results)
    stats = []
    for r in results:
        if r["stat"] is None:
            continue
        stat = WriteStat.from_dict(json.loads(r["stat"]), "task write stat")
        if r["keys"] is not None:
            added, removed, resolved = json.loads(r["keys"])
            stat.record_keys = RecordKeys(pa.array(added, pa.string()), pa.array(removed, pa.string()), resolved)
        stats.append(stat)
    return stats
