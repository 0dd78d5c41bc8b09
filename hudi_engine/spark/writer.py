"""`write(df, path, options)`: a Spark DataFrame into a Hudi table, records flowing through Spark tasks, the work
spread by file group as Hudi's own partitioner spreads it.

The driver checks, starts the instant, plans and commits (`hudi_engine.write.write_client`), inside the engine's
one write pipeline (`hudi_engine.write_pipeline`: table services before and after); records never reach it. An
upsert, insert, delete or overwrite is two passes over the input (persisted unless the caller cached it):
1. keys: a map pass over the key and partition columns only computes every record's key and partition path,
   tags it with the file group holding its key (`executor.key_and_tag`: footer key ranges and bloom filters),
   and returns counts per (partition, file group) and a sample of the new keys (`executor.KeyProfile`); no
   shuffle. The driver lists the touched partitions and plans buckets (updates per file group, inserts into small
   files then new file groups of the max file size, cut at sampled keys) over `min(buckets, parallelism)` tasks
   (`write.bucket_assigner`);
2. write: the records, keyed and tagged again (the same tags) and given their bucket and task in the same Arrow UDF
   (`BucketPlan.assign`; no join, so no job to broadcast routes), are shuffled once by task, and each task runs one
   handle per file group, holding one file group's records at a time (`executor.write_buckets`).
An input that Spark's statistics put below one file of the max file size takes one pass instead: map tasks key, tag
and choose each record's file group and task themselves (`MapSidePlan`), so the write is one Spark job; where the
driver's listing already gives every partition's file group, the map stage is Spark SQL alone (`_sql_routed`).
`bulk_insert` range-partitions by (partition, key) and cuts sorted files by bytes. GLOBAL_SIMPLE tags with a join
against every key of the table instead. A failure anywhere before the commit rolls the instant back.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.keygen import AUTO_KEY_COLUMN
from hudi_engine.merge import IS_DELETED_FIELD
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.catalog_sync import CatalogSync
from hudi_engine.spark.executor import spark_executor
from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.sql_keys import auto_key_column, sql_key_text, sql_keys
from hudi_engine.spark.sql_text import json_value, name, string
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.table import HudiTable
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import (
    NEW_GROUP,
    SAMPLES_PER_BUCKET,
    BucketPlan,
    BulkInsertRanges,
    Counts,
    MapSidePlan,
    SliceInfo,
)
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
from hudi_engine.write.write_client import Transaction, WriteClient
from hudi_engine.write.write_result import WriteResult
from hudi_engine.write_pipeline import run_write

# A task's output: one row per file written (its write stat as JSON), and one row of its timings.
TASK_OUTPUT = "stat string, index_s double, handles_s double"
TAG_TYPE = T.StructType([T.StructField(KEY, T.StringType()), T.StructField(PARTITION, T.StringType()),
                         T.StructField(FILE_ID, T.StringType()), T.StructField(BUCKET_NUMBER, T.IntegerType())])
ROUTE_TYPE = T.StructType([T.StructField(KEY, T.StringType()), T.StructField(PARTITION, T.StringType()),
                           T.StructField(BUCKET, T.IntegerType()), T.StructField(TASK, T.IntegerType())])
_TAG = "_hw_tag"
ORDER = "_hw_order"  # a one-pass write's sort key in its write tasks: a hash of (partition, file group)


def write(df: DataFrame, path: str, options: dict[str, Any] | WriteConfig, *,
          table: HudiTable | None = None, delete_marker: bool = False) -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi's own option keys; returns what the commit did. `table`: the
    caller's handle of the existing table at `path`, loaded for this operation (not read again). `delete_marker`:
    `df`'s `_hoodie_is_deleted` column only flags the keys to delete (a SQL MERGE's delete clauses); the handles
    delete them, and the column is not one of the table's."""
    config = options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)
    df = df.drop(*[c for c in df.columns if c in META_COLUMNS])
    spark = df.sparkSession
    ensure_executor_env(spark)  # executors can run the engine (shipped if missing), before any instant
    # Spark hands timestamps to Arrow tasks in the session time zone; the table stores them as UTC instants.
    data_schema = to_arrow_schema((df.drop(IS_DELETED_FIELD) if delete_marker else df).schema,
                                  timezone=spark.conf.get("spark.sql.session.timeZone"))
    catalogs = CatalogSync.prepare(spark, path, config)  # sync settings the session cannot honour: refused now
    # The engine's write pipeline runs the table services and the transaction; Spark supplies the data files (its
    # jobs) and the executor of compaction operations (Spark tasks). The catalogs are synced once the services ran.
    result = run_write(WriteClient.open(path, config, data_schema, table=table),
                       lambda client, txn: _files(spark, df, client, txn), spark_executor(spark))
    catalogs.after_commit(result.instant_time)
    return result


def _files(spark: SparkSession, df: DataFrame, client: WriteClient, txn: Transaction) -> list[WriteStat]:
    try:
        return _run(spark, df, client, txn)
    except Exception as e:
        raise unwrap_task_error(e) from e


def _run(spark: SparkSession, df: DataFrame, client: WriteClient, txn: Transaction) -> list[WriteStat]:
    config = client.config
    task = client.write_task(txn.instant)
    if config.keys.auto_generated:
        # A keyless table: every row's generated key, from the input's own partitions (before any shuffle), in a
        # helper column the key generator reads and the handles never write (`keygen.AUTO_KEY_COLUMN`).
        df = df.withColumn(AUTO_KEY_COLUMN, auto_key_column(txn.instant))
    parallelism = config.parallelism.for_operation(config.operation, spark.sparkContext.defaultParallelism)
    t0 = time.monotonic()
    if config.operation is Operation.BULK_INSERT:
        results = _bulk_insert(df, task, parallelism).collect()
        txn.timings["write"] = time.monotonic() - t0
        return _collect(results, txn)
    if config.index.type is IndexType.GLOBAL_SIMPLE and config.operation.looks_up_keys:
        return _run_global(spark, df, client, task, txn, parallelism)
    one_pass = _map_side_plan(df, client, parallelism)
    if one_pass is not None:
        return _run_one_pass(df, client, task, txn, one_pass)
    # Two passes over the input, which runs once: a caller's cached DataFrame is read twice, any other is persisted.
    level = df.storageLevel  # the cache manager's answer: also for a DataFrame whose plan a cached one shares
    persisted = not (level.useMemory or level.useDisk)
    source = df.persist(StorageLevel.MEMORY_AND_DISK) if persisted else df
    try:
        # 1. Keys alone: counts per (partition, file group) and a sample of the new keys (one Python pass over the
        # key columns; no shuffle).
        spec = client.tag_spec(txn.instant)
        plan = _plan(source, client, task, spec, parallelism)
        txn.timings["plan"] = time.monotonic() - t0
        # 2. The records, tagged again (the same tags) and given their bucket and task, shuffled once, written.
        routed = _routed(source, task, spec, plan).withColumn(DELETE, F.lit(config.operation is Operation.DELETE))
        results = _write(routed, task, plan).collect()
    finally:
        if persisted:
            source.unpersist()
    txn.timings["write"] = time.monotonic() - t0
    return _collect(results, txn)


def _map_side_plan(df: DataFrame, client: WriteClient, parallelism: int) -> MapSidePlan | None:
    """A one-pass write's bucket choice (`MapSidePlan`) when Spark's estimate of the input is below one file of the
    max file size (SIMPLE and BLOOM index upserts, inserts and deletes), else None."""
    config = client.config
    if config.index.type not in (IndexType.SIMPLE, IndexType.BLOOM) or \
            config.operation not in (Operation.UPSERT, Operation.INSERT, Operation.DELETE):
        return None
    # The optimizer's statistics: exact rows for a cached or local input, else bytes, which overestimate a filter or
    # join (an estimate of 0 is an empty input).
    stats = df._jdf.queryExecution().optimizedPlan().stats()
    avg = client.average_record_size()
    counted = stats.rowCount()
    rows = int(str(counted.get())) if counted.isDefined() else -(-int(str(stats.sizeInBytes())) // avg)
    if rows * avg > config.files.max_file_size:
        return None
    # One wave of tasks, and no more tasks than records: every task, even an empty one, is a Python worker's round
    # trip, and a write of less than a file gains nothing from a second wave.
    return client.map_side_plan(max(1, min(parallelism, _task_slots(df.sparkSession), rows)))


def _task_slots(spark: SparkSession) -> int:
    """Tasks the cluster's registered executors run at once; Spark's default parallelism before any has registered.
    `spark.default.parallelism` is often set to a few tasks per core for large jobs; for a small write that is a
    second wave of tasks, each paying a Python worker's round trip."""
    sc = spark.sparkContext
    try:  # SparkContext.maxNumConcurrentTasks is private[spark] in Scala (public to py4j), as barrier mode uses it
        jsc = sc._jsc.sc()
        slots = int(jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile()))
    except Py4JError:
        slots = 0
    return slots if slots > 0 else sc.defaultParallelism


def _run_one_pass(df: DataFrame, client: WriteClient, task: WriteTask, txn: Transaction,
                  plan: MapSidePlan) -> list[WriteStat]:
    """A write in one Spark job: map tasks key and tag every record and choose its file group and task
    (`MapSidePlan`); one shuffle; each task writes its file groups one at a time."""
    config = client.config
    t0 = time.monotonic()
    listing = client.listing_spec(txn.instant)
    data = checked(df, config)
    sql = _sql_routed(data, client, task, plan)
    routed, known = sql if sql is not None else (None, None)
    if routed is None:
        routed = _with_udf(data, _MapSideRouteFn(task, client.tag_spec(txn.instant), listing, plan),
                           MAP_SIDE_ROUTE_TYPE, _key_source_columns(config, data.columns), data.columns,
                           keep=F.col(f"{_TAG}.{GROUP}").isNotNull()) \
            .withColumn(DELETE, F.lit(config.operation is Operation.DELETE)) \
            .withColumn(ORDER, F.xxhash64(PARTITION, GROUP))
    txn.timings["plan"] = time.monotonic() - t0
    # A task's records sorted by one 64-bit hash of their file group (ORDER): a radix sort on a key the sort prefix
    # holds whole (a sort by partition, group and key compares strings row by row); the task sorts a group by key.
    results = (routed.repartitionById(plan.n_tasks, F.col(TASK)).sortWithinPartitions(ORDER).drop(TASK, ORDER)
               .mapInArrow(_MapSideWriteFn(task, listing, plan, known), TASK_OUTPUT)).collect()
    txn.timings["write"] = time.monotonic() - t0
    return _collect(results, txn)


def _sql_routed(df: DataFrame, client: WriteClient, task: WriteTask,
                plan: MapSidePlan) -> tuple[DataFrame, Mapping[str, list[SliceInfo]]] | None:
    """The one-pass map side in Spark SQL, without Python: when Spark spells the keys (`sql_keys`) and the driver's
    listing gives every partition's file group and task (`WriteClient.untagged_groups`), the columns
    `_MapSideRouteFn` adds are expressions (a Python UDF costs the map stage about as much again as its scan and
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


ROUTES_TYPE = "map<string,struct<g:string,t:int>>"


MAP_SIDE_ROUTE_TYPE = T.StructType([T.StructField(c, t) for c, t in (
    (KEY, T.StringType()), (PARTITION, T.StringType()), (FILE_ID, T.StringType()), (GROUP, T.StringType()),
    (TASK, T.IntegerType()))])


class _MapSideRouteFn:
    """Map side of a one-pass write: key and tag (`spec`), then the file group and task from the partitions' listing
    (`listing`; `executor.map_side_groups`)."""

    def __init__(self, task: WriteTask, spec: TagSpec | None, listing: TagSpec | None, plan: MapSidePlan) -> None:
        whole = WholeGroups(listing, plan) if listing is not None and plan.whole_groups else None
        self.keytag, self.listing, self.plan = _KeyTagFn(task, spec, whole), listing, plan
        self.deleting = task.config.operation is Operation.DELETE

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for tags in self.keytag(batches):
            groups, tasks = map_side_groups(self.listing, self.plan, tags, self.deleting)
            yield pa.StructArray.from_arrays([tags.field(KEY), tags.field(PARTITION), tags.field(FILE_ID), groups,
                                              tasks], names=[KEY, PARTITION, FILE_ID, GROUP, TASK])


class _MapSideWriteFn:
    """Task of a one-pass write: its file groups, one at a time (`known`: the driver's listing, if it routed)."""

    def __init__(self, task: WriteTask, listing: TagSpec | None, plan: MapSidePlan,
                 known: Mapping[str, list[SliceInfo]] | None = None) -> None:
        self.task, self.listing, self.plan, self.known = task, listing, plan, known

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        timings: dict[str, float] = {}
        stats = list(write_groups(self.task, self.listing, self.plan, batches, _task_token(), timings, self.known))
        yield from _task_output(stats, timings).to_batches()


def _plan(source: DataFrame, client: WriteClient, task: WriteTask, spec: TagSpec | None,
          parallelism: int) -> BucketPlan:
    """The bucket plan from the first pass over the keys (see `executor.KeyProfile`)."""
    config = client.config
    # Null keys and null ordering values fail here, naming the row, before the instant has a file.
    check = _check_rows(source, config)
    keys = source.select(*[F.col(f"`{c}`") for c in _key_source_columns(config, source.columns)],
                         *([check.alias("_hw_check")] if check is not None else []))
    counted, sample = KeyProfile.merge(keys.mapInArrow(_ProfileFn(task, spec), PROFILE_SCHEMA).toArrow())
    updates: dict[tuple[str, str], int] = {}
    inserts: dict[str, int] = {}
    new_buckets: dict[tuple[str, int], int] = {}
    for (p, f, n), c in counted.items():
        if f is not None:
            updates[(p, f)] = c
        elif n is not None:  # BUCKET index: new keys counted per bucket number
            new_buckets[(p, n)] = c
        else:
            inserts[p] = inserts.get(p, 0) + c
    plan = client.plan(Counts(updates, inserts, new_buckets), parallelism)
    needs = plan.needs_sample()
    return plan.with_samples({p: sample.get(p, []) for p in needs}) if needs else plan


def _write(routed: DataFrame, task: WriteTask, plan: BucketPlan) -> DataFrame:
    """Shuffle the routed records once by task, and write each task's buckets in order."""
    return (routed.repartitionById(plan.n_tasks, F.col(TASK)).drop(TASK)
            .sortWithinPartitions(BUCKET, KEY).mapInArrow(_WriteFn(task, plan), TASK_OUTPUT))


def _run_global(spark: SparkSession, df: DataFrame, client: WriteClient, task: WriteTask, txn: Transaction,
                parallelism: int) -> list[WriteStat]:
    """GLOBAL_SIMPLE: keys tagged by a join against every key of the table (a key may move partition); the
    joined records are persisted, counted and sampled, then routed and written."""
    config = client.config
    t0 = time.monotonic()
    tagged = _tag_global(spark, _keyed(checked(df, config), task, None), client, task, parallelism) \
        .persist(StorageLevel.MEMORY_AND_DISK)
    try:
        plan = client.plan(_counts(tagged, config), parallelism)
        fractions = plan.needs_sample()
        if fractions:
            plan = plan.with_samples(_sample(tagged.filter(F.col(FILE_ID).isNull() & ~F.col(DELETE)), fractions))
        txn.timings["plan"] = time.monotonic() - t0
        results = _write(_assigned(tagged, plan), task, plan).collect()
    finally:
        tagged.unpersist()
    txn.timings["write"] = time.monotonic() - t0
    return _collect(results, txn)


def _collect(results: list, txn: Transaction) -> list[WriteStat]:
    # Task-side timings: summed over tasks (they run in parallel), beside the job's wall time.
    txn.timings["handles"] = sum(r["handles_s"] or 0.0 for r in results)
    return [WriteStat.from_dict(json.loads(r["stat"]), "task write stat") for r in results if r["stat"] is not None]


# ---- keys and tags -----------------------------------------------------------------------------------------------
def _key_source_columns(config: WriteConfig, columns: list[str]) -> list[str]:
    """The top-level columns the key generator reads (key fields, partition fields; `name:TYPE`, `a.b` resolved)."""
    wanted = [f.split(":")[0].split(".")[0] for f in (*config.keys.record_key_fields, *config.keys.partition_fields)]
    if config.keys.auto_generated:
        wanted.append(AUTO_KEY_COLUMN)
    return [c for c in dict.fromkeys(wanted) if c in columns]


def _keyed(df: DataFrame, task: WriteTask, spec: TagSpec | None) -> DataFrame:
    """`df` with record key, partition path, file id and bucket number: one Arrow UDF over the key and partition
    columns only (marked nondeterministic so Spark evaluates it once per row)."""
    return _with_udf(df, _KeyTagFn(task, spec), TAG_TYPE, _key_source_columns(task.config, df.columns), df.columns)


def _routed(df: DataFrame, task: WriteTask, spec: TagSpec | None, plan: BucketPlan) -> DataFrame:
    """`df` with record key, partition path, bucket and task: one Arrow UDF over the key and partition columns keys
    and tags every record (the first pass's tags) and assigns its bucket (`BucketPlan.assign`), so the map stage
    runs one Python pass and no join. A record no bucket takes (a delete of a new key) drops out."""
    return _with_udf(df, _RouteFn(plan, _KeyTagFn(task, spec)), ROUTE_TYPE,
                     _key_source_columns(task.config, df.columns), df.columns, keep=F.col(f"{_TAG}.{BUCKET}") >= 0)


def _struct_udf(fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], result: T.StructType) -> Any:
    """An iterator Arrow UDF of `fn` returning `result` structs, marked nondeterministic so Spark evaluates it once
    per row."""
    def run(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:  # the annotations tell Spark the UDF's kind
        return fn(batches)

    # pyspark's stubs allow only atomic and array results for iterator Arrow UDFs; Spark 4 runs struct results.
    return F.arrow_udf(run, result).asNondeterministic()  # type: ignore[call-overload]


def _with_udf(df: DataFrame, fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], result: T.StructType,
              sources: list[str], columns: list[str], keep: Column | None = None) -> DataFrame:
    """`columns` of `df`, then the fields of `fn`'s `result` struct (an Arrow UDF over the `sources` columns only),
    without the rows `keep` (an expression over the struct) turns away."""
    out = df.withColumn(_TAG, _struct_udf(fn, result)(F.struct(*[F.col(f"`{c}`") for c in sources])))
    if keep is not None:
        out = out.filter(keep)
    return out.select(*[F.col(f"`{c}`") for c in columns], *[F.col(f"{_TAG}.{f.name}").alias(f.name) for f in result])


PROFILE_SCHEMA = ("partition string, file_id string, bucket_number int, count long, key string, level int")


class _ProfileFn:
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


class _KeyTagFn:
    def __init__(self, task: WriteTask, spec: TagSpec | None, skip: WholeGroups | None = None) -> None:
        self.task, self.spec, self.skip = task, spec, skip  # skip: partitions left untagged (`tagging.tag`)

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        keygen = self.task.keygen()
        for columns in batches:
            table = pa.Table.from_struct_array(columns) if isinstance(columns, pa.StructArray) else \
                pa.table({columns.type.name: columns})
            yield key_and_tag(keygen, self.spec, table, self.skip)


class _RouteFn:
    """Key, partition, bucket (-1: none) and task of tagged records (`BucketPlan.assign`), tagged first by
    `keytag` when it is given."""

    def __init__(self, plan: BucketPlan, keytag: _KeyTagFn | None = None) -> None:
        self.plan, self.keytag = plan, keytag

    def __call__(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for tags in (self.keytag(batches) if self.keytag is not None else batches):
            keys, partitions, file_ids, numbers = (tags.field(c) for c in (KEY, PARTITION, FILE_ID, BUCKET_NUMBER))
            buckets = self.plan.assign(partitions, keys, file_ids, numbers)
            yield pa.StructArray.from_arrays([keys, partitions, pa.array(buckets, pa.int32()),
                                              pa.array(self.plan.tasks(buckets), pa.int32())],
                                             names=[KEY, PARTITION, BUCKET, TASK])


def _counts(tagged: DataFrame, config: WriteConfig) -> Counts:
    """Records per (partition, file group), new records per partition (BUCKET: per bucket number); deletes of keys
    the table does not hold count nowhere (they write nothing)."""
    live = tagged.filter(F.col(FILE_ID).isNotNull() | ~F.col(DELETE))
    rows = live.groupBy(PARTITION, FILE_ID, BUCKET_NUMBER).count().collect()
    updates: dict[tuple[str, str], int] = {}
    inserts: dict[str, int] = {}
    new_buckets: dict[tuple[str, int], int] = {}
    bucket_index = config.index.type is IndexType.BUCKET
    for r in rows:
        p = r[PARTITION]
        if r[FILE_ID] is not None:
            updates[(p, r[FILE_ID])] = r["count"]
        elif bucket_index:
            new_buckets[(p, int(r[BUCKET_NUMBER]))] = r["count"]
        else:
            inserts[p] = inserts.get(p, 0) + r["count"]
    return Counts(updates, inserts, new_buckets)


def _sample(keyed: DataFrame, fractions: dict[str, float]) -> dict[str, list[str]]:
    """Keys of the partitions `fractions` names, a share of each (for key range boundaries); other partitions'
    rows are left out."""
    share = F.try_element_at(_literal(fractions, "map<string,double>"), F.col(PARTITION))  # null: not sampled
    out: dict[str, list[str]] = {p: [] for p in fractions}
    for r in keyed.filter(F.rand(seed=17) < share).select(PARTITION, KEY).collect():
        out[r[PARTITION]].append(r[KEY])
    return out


def _assigned(tagged: DataFrame, plan: BucketPlan) -> DataFrame:
    """`tagged` (keys, partitions and file ids already set) with every record's bucket and task (`BucketPlan.assign`
    in an Arrow UDF); a record no bucket takes (a delete of a new key) drops out."""
    tags = [KEY, PARTITION, FILE_ID, BUCKET_NUMBER]
    return _with_udf(tagged, _RouteFn(plan), ROUTE_TYPE, tags, [c for c in tagged.columns if c not in tags],
                     keep=F.col(f"{_TAG}.{BUCKET}") >= 0)


class _WriteFn:
    """Task: its buckets, sorted, one file group at a time."""

    def __init__(self, task: WriteTask, plan: BucketPlan) -> None:
        self.task, self.plan = task, plan

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        timings: dict[str, float] = {}
        stats = list(write_buckets(self.task, self.plan, batches, _task_token(), timings))
        yield from _task_output(stats, timings).to_batches()


# ---- bulk insert -------------------------------------------------------------------------------------------------
def _bulk_insert(df: DataFrame, task: WriteTask, parallelism: int) -> DataFrame:
    """bulk_insert's one shuffle (`hoodie.bulkinsert.sort.mode`): GLOBAL_SORT range-partitions by (partition, key)
    (`_by_key_range`), so a huge partition spreads over tasks and every file holds one key range; PARTITION_SORT
    sorts each input split; NONE only groups each split's rows by partition. Files are cut by bytes in the tasks.
    Pre-combining duplicates needs them in one task: it always takes GLOBAL_SORT.

    Keys are Spark expressions where they spell keys as the key generator does (`sql_keys`), so sampling and
    sorting by key run no Python, and the tasks key the sorted rows again with the key generator; else the key
    generator's UDF keys every record first."""
    config = task.config
    rows = checked(df, config)
    exprs = sql_keys(task.keygen(), df.schema)
    if exprs is None:
        rows = counted = _keyed(rows, task, None).drop(FILE_ID, BUCKET_NUMBER)
        key, partition = F.col(KEY), F.col(PARTITION)
    else:
        counted = df  # the row check runs once, in the shuffle's map stage, before any file is written
        key, partition = exprs
    mode = config.parallelism.bulk_insert_sort_mode
    if mode == "GLOBAL_SORT" or config.combine_before_write:
        rows, key, partition = _by_key_range(rows, counted, key, partition, parallelism)
    rows = rows.sortWithinPartitions(partition, key) if mode != "NONE" or config.combine_before_write else \
        rows.sortWithinPartitions(partition)
    if exprs is not None:  # the tasks key the sorted rows again (`keyed_batches`): cheaper than Spark handing them over
        rows = rows.drop(KEY, PARTITION)
    return rows.mapInArrow(_BulkInsertFn(task), TASK_OUTPUT)


RANGES_TYPE = "map<string,struct<b:array<string>,t:array<int>>>"


def _by_key_range(rows: DataFrame, counted: DataFrame, key: Column, partition: Column,
                  parallelism: int) -> tuple[DataFrame, Column, Column]:
    """GLOBAL_SORT's shuffle of `rows`, sized by rows (`BulkInsertRanges`): `counted` (the same rows, maybe not
    yet checked) counted per partition (a Spark SQL job), keys sampled from the partitions that must be cut (a
    second, only then), and every row sent to its range's task by a Spark expression over the plan. Small
    partitions stay whole (Spark's own range partitioner would cut them at its boundaries, and it samples every
    input split twice). Returns the shuffled rows and the key and partition expressions over them: a key that
    routes no row is left out of the shuffle and computed after it."""
    counts = {r[PARTITION]: r["count"] for r in counted.groupBy(partition.alias(PARTITION)).count().collect()}
    cuts = BulkInsertRanges.cuts(counts, parallelism)
    samples: dict[str, list[str]] = {}
    if cuts:
        samples = _sample(counted.withColumn(KEY, key).withColumn(PARTITION, partition),
                          {p: min(1.0, SAMPLES_PER_BUCKET * k / counts[p]) for p, k in cuts.items()})
        rows, key, partition = rows.withColumn(KEY, key).withColumn(PARTITION, partition), F.col(KEY), F.col(PARTITION)
    plan = BulkInsertRanges.plan(counts, samples, parallelism)
    if any(bounds for bounds, _ in plan.ranges.values()):
        ranges = F.try_element_at(_literal({p: {"b": list(b), "t": list(t)} for p, (b, t) in plan.ranges.items()},
                                           RANGES_TYPE), partition)
        position = F.size(F.filter(ranges["b"], lambda bound: bound <= key))  # range j: bounds below the key
        task = F.element_at(ranges["t"], position + 1)
    else:  # every partition whole in one task
        task = F.try_element_at(_literal({p: t[0] for p, (_, t) in plan.ranges.items()}, "map<string,int>"),
                                partition)
    # A partition the count did not see (an input that is not deterministic) still goes to one task.
    task = F.coalesce(task, F.pmod(F.hash(partition), F.lit(plan.n_tasks)))
    return rows.withColumn(TASK, task).repartitionById(plan.n_tasks, F.col(TASK)).drop(TASK), key, partition


def _literal(value: dict, spark_type: str) -> Column:
    """A map literal of `spark_type` (`sql_text.json_value`; Spark folds it once)."""
    return F.expr(json_value(value, spark_type))


class _BulkInsertFn:
    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        t0 = time.perf_counter()
        stats = list(bulk_insert_files(self.task, batches, _task_token()))
        yield from _task_output(stats, {"handles_s": time.perf_counter() - t0}).to_batches()


# ---- GLOBAL_SIMPLE -----------------------------------------------------------------------------------------------
def _tag_global(spark: SparkSession, keyed: DataFrame, client: WriteClient, task: WriteTask,
                parallelism: int) -> DataFrame:
    """GLOBAL_SIMPLE: join incoming keys with every key of the table, read by tasks from the latest base files
    (each file by one task). Versions of a key are pre-combined first, across partitions (a key may move).

    Sets FILE_ID (null for a new key) and DELETE. With `hoodie.simple.index.update.partition.path` a key that
    moved partition becomes two rows: a delete in its old file group and an insert in the new partition.
    """
    config = client.config
    keyed = keyed.drop(FILE_ID)
    if config.combine_before_write:
        keyed = keyed.repartition(parallelism, KEY).sortWithinPartitions(KEY) \
            .mapInArrow(_PreCombineFn(task), keyed.schema)
    deleting = F.lit(config.operation is Operation.DELETE)
    files = client.index_files(None)
    if not files:
        return keyed.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, deleting)
    files_df = spark.createDataFrame(files, schema="partition string, file_id string, path string")
    files_df = files_df.repartition(max(1, min(len(files), parallelism * 2)))
    existing = files_df.mapInArrow(_ReadKeysFn(task), "_ix_key string, _ix_partition string, _ix_file_id string") \
        .hint("shuffle_hash")  # sized from the short file list, Spark would otherwise broadcast every table key
    joined = keyed.join(existing, keyed[KEY] == existing["_ix_key"], "left")
    moved = F.col("_ix_partition").isNotNull() & (F.col("_ix_partition") != F.col(PARTITION))
    helpers = ("_ix_key", "_ix_partition", "_ix_file_id")
    if not config.index.update_partition_path or config.operation is Operation.DELETE:
        # The record stays where the key lives.
        out = (joined.withColumn(PARTITION, F.coalesce(F.col("_ix_partition"), F.col(PARTITION)))
               .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, deleting))
        return out.drop(*helpers)
    stay = joined.filter(~moved).withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(False))
    old = (joined.filter(moved).withColumn(PARTITION, F.col("_ix_partition"))
           .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(True)))
    new = joined.filter(moved).withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, F.lit(False))
    return stay.unionByName(old).unionByName(new).drop(*helpers)


class _PreCombineFn:
    """Task (global index only): versions of a key, sorted together, reduced a batch at a time."""

    def __init__(self, task: WriteTask) -> None:
        self.task = task

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from pre_combine_sorted(self.task, batches)


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


# ---- helpers -----------------------------------------------------------------------------------------------------
def _task_token() -> tuple[int, int, int]:
    """The write token's parts: Spark partition, stage and task attempt (so a retried task writes new names)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)


def _task_output(stats: list[WriteStat], timings: dict[str, float]) -> pa.Table:
    """One row per write stat (JSON for the trip to the driver) and one row of the task's timings."""
    n = len(stats)
    encoded = [json.dumps(s.to_dict()) for s in stats]
    return pa.table({"stat": pa.array([*encoded, None], pa.string()),
                     "index_s": pa.array([None] * n + [timings.get("index_s", 0.0)], pa.float64()),
                     "handles_s": pa.array([None] * n + [timings.get("handles_s", 0.0)], pa.float64())})


_NEVER_EMPTY = (T.NumericType, T.BooleanType, T.DateType, T.TimestampType, T.TimestampNTZType)


def _check_rows(df: DataFrame, config: WriteConfig) -> Column | None:
    """An expression that fails the job on a row whose record key is null or empty, or whose ordering (precombine)
    value is null where the payload orders by it, naming the field and showing the row (None: nothing to check).
    Java Hudi refuses a null ordering value too; a user payload decides for itself. Built as SQL text (`sql_text`):
    one call to the JVM."""
    checks: list[tuple[str, str, str]] = []
    types = {f.name: f.dataType for f in df.schema.fields}
    fields = [f for f in config.keys.record_key_fields if f in types]
    if fields:
        # Only a string or binary value can spell an empty key: others skip a per-row cast to string.
        missing = [f"{name(f)} IS NULL" if isinstance(types[f], _NEVER_EMPTY) else
                   f"({name(f)} IS NULL OR cast({name(f)} as string) = '')" for f in fields]
        what = (f"record key field {fields[0]!r} is null or empty" if len(fields) == 1 else
                f"record key fields {list(fields)} are all null or empty")
        generator = config.keys.key_generator_class.rsplit(".", 1)[-1]
        checks.append((" AND ".join(missing), f"KeyGeneratorError: {what} in row ",
                       f"; {generator} needs a non-empty key in every row"))
    ordering = config.merge.precombine_field
    if ordering in types and config.operation is not Operation.DELETE and config.merge.payload.custom is None \
            and not config.keys.auto_generated:  # a keyless table never combines: its ordering value is unused
        checks.append((f"{name(ordering)} IS NULL",
                       f"WriteError: precombine field {ordering!r} (hoodie.datasource.write.precombine.field) is null "
                       "in row ",
                       f"; {config.merge.payload.short_name} picks between versions of a key by it, so every row "
                       "needs a value (fill it in the query, or write without an ordering field)"))
    if not checks:
        return None
    # The prefix lets unwrap_task_error give back the engine's error; split in two so that a plan printed in some
    # other error does not read as this one.
    cases = " ".join(f"WHEN {bad} THEN raise_error(concat('hudi_engine.errors.', {string(what)}, "
                     f"to_json(struct(*)), {string(fix + chr(10) * 2)}))" for bad, what, fix in checks)
    return F.expr(f"CASE {cases} ELSE true END")


def checked(df: DataFrame, config: WriteConfig) -> DataFrame:
    """`df` failing on its first bad row (see `_check_rows`), in whatever stage reads it. A filter, not a guard on a
    column: `CASE WHEN check THEN col END` folds to null, check and all, where the optimizer sees `col` is a null
    literal (`select cast(null as bigint) as id ...`)."""
    check = _check_rows(df, config)
    return df if check is None else df.filter(check)
