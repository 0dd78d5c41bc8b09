"""`write(df, path, options)`: a Spark DataFrame into a Hudi table, records flowing through Spark tasks.

The driver plans and commits (see `hudi_engine.write.write_client`); records never reach it. The steps:
keys (a task computes record keys and partition paths) -> pre-combine (shuffle by key, fold duplicates with the
payload) -> tag (join with the keys of the touched file groups, read by tasks) -> counts per file group (small)
-> bucket plan on the driver -> each record gets its bucket -> one task per bucket runs a handle -> write stats
back to the driver -> commit. A failure anywhere before the commit rolls the instant back.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import LongType, StructField, StructType

from hudi_engine.merge import merge_records
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.compactor import finish_pending_table_services, run_table_services_after_commit
from hudi_engine.spark.task_error import unwrap_task_error
from hudi_engine.write.bucket_assigner import BucketPlan
from hudi_engine.write.executor import BucketTask, execute_bucket
from hudi_engine.write.write_client import WriteClient, WriteResult
from hudi_engine.write.write_config import IndexType, Operation, WriteConfig

KEY, PARTITION = "_hoodie_record_key", "_hoodie_partition_path"
# Helper columns that live only inside one write.
HASH, FILE_ID, DELETE, BUCKET = "_hw_hash", "_hw_file_id", "_hw_delete", "_hw_bucket"
BUCKET_NUMBER = "_hw_bucket_number"  # BUCKET index: the key's bucket

STATS_SCHEMA = pa.schema([pa.field("stat", pa.string())])


def write(df: DataFrame, path: str, options: Mapping[str, Any]) -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi's own option keys; returns what the commit did."""
    config = WriteConfig.from_options(options)
    df = df.drop(*[c for c in df.columns if c in META_COLUMNS])
    # Spark hands timestamps to Arrow tasks in the session time zone; the table stores them as UTC instants.
    data_schema = to_arrow_schema(df.schema, timezone=df.sparkSession.conf.get("spark.sql.session.timeZone"))
    spark = df.sparkSession
    # A compaction or clean that a crash left pending completes first: new log files of a group under a pending
    # compaction are named after it, and readers see them only once that compaction is committed.
    finish_pending_table_services(spark, path, config)
    client = WriteClient.open(path, config, data_schema)
    with client.transaction() as txn:
        try:
            stats = _run(spark, df, client, txn)
        except Exception as e:  # noqa: BLE001 - re-raised with the task's own message
            raise unwrap_task_error(e) from e
        result = txn.commit(stats)
    t0 = time.monotonic()
    run_table_services_after_commit(spark, path, client.config, result.instant_time)
    result.timings["table_services"] = time.monotonic() - t0
    return result


def _run(spark: SparkSession, df: DataFrame, client: WriteClient, txn) -> list:
    config = client.config
    keygen_spec = client.keygen_spec()
    t0 = time.monotonic()
    keyed = df.mapInArrow(_KeyFn(keygen_spec), from_arrow_schema(_with_key_columns(client.data_schema)))
    if config.combine_before_write and config.operation is not Operation.BULK_INSERT:
        # A delete's DataFrame may carry only the keys: without the ordering column, later versions win.
        ordering = config.precombine_field if config.precombine_field in client.data_schema.names else None
        keyed = keyed.repartition(KEY).mapInArrow(_PrecombineFn(ordering, config.payload), keyed.schema)
    keyed = keyed.withColumn(HASH, F.pmod(F.xxhash64(KEY), F.lit(1 << 30)) / float(1 << 30))
    persisted = keyed.persist()  # keys are computed once; the index, the counts and the write all reuse them
    tagged = None
    try:
        partitions = sorted(r[0] for r in keyed.select(PARTITION).distinct().collect())
        if config.index_type is IndexType.BUCKET:
            # The key's hash names its file group: no lookup, and every record of a bucket goes to one task.
            keyed = keyed.mapInArrow(_BucketNumberFn(config.bucket_num, len(config.record_key_fields)),
                                     StructType([*keyed.schema.fields, StructField(BUCKET_NUMBER, LongType())]))
            tagged = (keyed.withColumn(FILE_ID, F.lit(None).cast("string"))
                      .withColumn(DELETE, F.lit(config.operation is Operation.DELETE)))
            txn.timings["index"] = time.monotonic() - t0
            counts = tagged.groupBy(PARTITION, BUCKET_NUMBER).count().collect()
            plan = client.plan_bucket_index([(r[0], r[1], r[2]) for r in counts])
        else:
            if config.operation in (Operation.UPSERT, Operation.DELETE):
                tagged = _tag(spark, keyed, client, partitions)
            else:  # insert, bulk_insert and overwrites do not look keys up
                tagged = keyed.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, F.lit(False))
            tagged = tagged.filter(~(F.col(DELETE) & F.col(FILE_ID).isNull()))  # deleting a key not in the table
            tagged = tagged.persist()  # the counts and the write both use the index's result: compute it once
            txn.timings["index"] = time.monotonic() - t0
            counts = tagged.groupBy(PARTITION, FILE_ID, DELETE).count().collect()
            plan = client.plan(partitions, [(r[0], r[1], r[2], r[3]) for r in counts])
        t1 = time.monotonic()
        task = client.bucket_task(txn.instant, plan)
        assigned = tagged.mapInArrow(_AssignFn(plan), _with_bucket(tagged.schema))
        out = assigned.groupBy(BUCKET).applyInArrow(_handle_fn(task), from_arrow_schema(STATS_SCHEMA))
        stats = [row[0] for row in out.collect()]
        txn.timings["write"] = time.monotonic() - t1
        return stats
    finally:
        persisted.unpersist()
        if tagged is not None:
            tagged.unpersist()


def _tag(spark: SparkSession, keyed: DataFrame, client: WriteClient, partitions: list[str]) -> DataFrame:
    """Join incoming keys with the keys of the file groups they may live in (the index).

    Adds FILE_ID (null for a new key) and DELETE. With GLOBAL_SIMPLE and `hoodie.simple.index.update.partition.path`
    a key that moved partition becomes two rows: a delete in its old file group and an insert in the new partition.
    """
    config = client.config
    deleting = F.lit(config.operation is Operation.DELETE)
    global_index = config.index_type is IndexType.GLOBAL_SIMPLE
    files = client.index_files(None if global_index else partitions)
    if files and config.index_type is IndexType.BLOOM:
        files = _bloom_candidate_files(spark, keyed, client, files)
    if not files:
        return keyed.withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, deleting)
    files_df = spark.createDataFrame(files, schema="partition string, file_id string, path string")
    files_df = files_df.repartition(max(1, min(len(files), spark.sparkContext.defaultParallelism * 2)))
    existing = files_df.mapInArrow(
        _ReadKeysFn(client.storage_uri, client.key_reader_spec()),
        "_ix_key string, _ix_partition string, _ix_file_id string",
    ).hint("shuffle_hash")  # sized from the short file list, Spark would otherwise broadcast every table key
    if not global_index:
        cond = (keyed[KEY] == existing["_ix_key"]) & (keyed[PARTITION] == existing["_ix_partition"])
        joined = keyed.join(existing, cond, "left").withColumn(FILE_ID, F.col("_ix_file_id"))
        return joined.withColumn(DELETE, deleting).drop("_ix_key", "_ix_partition", "_ix_file_id")
    joined = keyed.join(existing, keyed[KEY] == existing["_ix_key"], "left")
    moved = F.col("_ix_partition").isNotNull() & (F.col("_ix_partition") != F.col(PARTITION))
    if not config.update_partition_path or config.operation is Operation.DELETE:
        # The record stays where the key lives.
        out = (joined.withColumn(PARTITION, F.coalesce(F.col("_ix_partition"), F.col(PARTITION)))
               .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, deleting))
        return out.drop("_ix_key", "_ix_partition", "_ix_file_id")
    stay = joined.filter(~moved).withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(False))
    old = (joined.filter(moved).withColumn(PARTITION, F.col("_ix_partition"))
           .withColumn(FILE_ID, F.col("_ix_file_id")).withColumn(DELETE, F.lit(True)))
    new = joined.filter(moved).withColumn(FILE_ID, F.lit(None).cast("string")).withColumn(DELETE, F.lit(False))
    return stay.unionByName(old).unionByName(new).drop("_ix_key", "_ix_partition", "_ix_file_id")


def _bloom_candidate_files(spark: SparkSession, keyed: DataFrame, client: WriteClient,
                           files: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """BLOOM index: only files whose key range and bloom filter may hold an incoming key are read to confirm."""
    entries = client.bloom_entries(files)
    probe = keyed.select(KEY, PARTITION).mapInArrow(_BloomProbeFn(entries), "file_id string")
    candidates = {r[0] for r in probe.distinct().collect()}
    return [f for f in files if f[1] in candidates]


class _BloomProbeFn:
    """Task: the file ids whose footer key range and bloom filter admit at least one of the task's keys."""

    def __init__(self, entries: list) -> None:
        self.entries = entries

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.io.bloom import parse_bloom_filter

        by_partition: dict[str, list] = {}
        for partition, file_id, lo, hi, bloom in self.entries:
            by_partition.setdefault(partition, []).append(
                (file_id, lo, hi, None if bloom is None else parse_bloom_filter(bloom[1], bloom[0])))
        hits: set[str] = set()
        for batch in batches:
            keys_all, parts = batch.column(0), batch.column(1)
            for partition in pc.unique(parts).to_pylist():
                keys = keys_all.filter(pc.equal(parts, partition))
                # Python string order equals Java's UTF-16 order only for BMP text: range-check ASCII keys only.
                ascii = pc.equal(pc.utf8_length(keys), pc.binary_length(keys))
                for file_id, lo, hi, bloom in by_partition.get(partition, ()):
                    if file_id in hits:
                        continue
                    mask = ascii if lo is not None and hi is not None else None
                    if mask is not None:
                        in_range = pc.and_(pc.greater_equal(keys, lo), pc.less_equal(keys, hi))
                        mask = pc.or_(pc.invert(ascii), in_range)
                    cand = keys.filter(mask) if mask is not None else keys
                    if len(cand) and (bloom is None or bloom.might_contain_many(cand).any()):
                        hits.add(file_id)
        yield pa.RecordBatch.from_arrays([pa.array(sorted(hits), pa.string())], names=["file_id"])


class _BucketNumberFn:
    """Task: the BUCKET index's bucket number of each record key (Hudi's hash, so Java agrees)."""

    def __init__(self, num_buckets: int, n_key_fields: int) -> None:
        self.num_buckets = num_buckets
        self.n_key_fields = n_key_fields

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.write.index import bucket_ids

        for batch in batches:
            numbers = bucket_ids(batch.column(KEY), self.num_buckets, self.n_key_fields)
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(numbers, pa.int64())],
                                             names=[*batch.schema.names, BUCKET_NUMBER])


def _with_key_columns(schema: pa.Schema) -> pa.Schema:
    return pa.schema([*schema, pa.field(KEY, pa.string()), pa.field(PARTITION, pa.string())])


def _with_bucket(spark_schema: StructType) -> StructType:
    # A new StructType: `.add` would change the DataFrame's cached schema in place.
    return StructType([*spark_schema.fields, StructField(BUCKET, LongType())])


class _KeyFn:
    """Task: record key and partition path columns from the key generator."""

    def __init__(self, keygen_spec: dict) -> None:
        self.keygen_spec = keygen_spec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.write.write_client import build_keygen

        keygen = build_keygen(self.keygen_spec)
        for batch in batches:
            t = pa.Table.from_batches([batch])
            keys = keygen.record_keys(t)
            parts = keygen.partition_paths(t)
            yield from pa.Table.from_arrays([*t.columns, keys, parts],
                                            names=[*t.column_names, KEY, PARTITION]).to_batches()


class _PrecombineFn:
    """Task: duplicates of a key inside the batch reduced with the payload's pre-combine."""

    def __init__(self, ordering_field: str | None, payload) -> None:
        self.ordering_field = ordering_field
        self.payload = payload

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        batches = list(batches)
        if not batches:
            return
        t = pa.Table.from_batches(batches)
        merged = merge_records(t.schema.empty_table(), [t], key_of=lambda x: x.column(KEY),
                               ordering_field=self.ordering_field, payload=self.payload)
        yield from merged.to_batches()


class _ReadKeysFn:
    """Task: the record keys of some base files (the SIMPLE index reads only the key column)."""

    def __init__(self, storage_uri: str, key_reader_spec: dict) -> None:
        self.storage_uri = storage_uri
        self.key_reader_spec = key_reader_spec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from hudi_engine.write.write_client import read_index_keys

        for batch in batches:
            for row in batch.to_pylist():
                keys = read_index_keys(self.storage_uri, self.key_reader_spec, row["path"])
                n = len(keys)
                yield pa.RecordBatch.from_arrays(
                    [keys, pa.array([row["partition"]] * n, pa.string()), pa.array([row["file_id"]] * n, pa.string())],
                    names=["_ix_key", "_ix_partition", "_ix_file_id"])


class _AssignFn:
    """Task: each record's bucket: its file group for updates and deletes, a hash pick among inserts otherwise."""

    def __init__(self, plan: BucketPlan) -> None:
        self.plan = plan
        self.update_file_ids = pa.array([fid for (_, fid) in plan.update_bucket], pa.string())
        self.update_buckets = np.array(list(plan.update_bucket.values()), dtype=np.int64)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        plan = self.plan
        if plan.by_bucket_number:
            yield from self._by_number(batches)
            return
        for batch in batches:
            # File ids are UUID based, unique across partitions: the file id alone finds the bucket.
            idx = pc.index_in(batch.column(FILE_ID), value_set=self.update_file_ids)
            idx = idx.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            buckets = np.where(idx >= 0, self.update_buckets[np.maximum(idx, 0)] if len(self.update_buckets)
                               else -1, -1)
            ins = np.flatnonzero(buckets < 0)
            if len(ins):
                hashes = batch.column(HASH).to_numpy(zero_copy_only=False)
                ins_parts = pc.take(batch.column(PARTITION), pa.array(ins))
                for p in pc.unique(ins_parts).to_pylist():
                    sel = ins[pc.equal(ins_parts, p).to_numpy(zero_copy_only=False)]
                    if p in plan.insert_buckets:
                        buckets[sel] = plan.insert_bucket_ids(p, hashes[sel])
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(buckets)],
                                             names=[*batch.schema.names, BUCKET])

    def _by_number(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        names = pa.array([f"{p}\x00{n}" for (p, n) in self.plan.by_bucket_number], pa.string())
        ids = np.array(list(self.plan.by_bucket_number.values()), dtype=np.int64)
        for batch in batches:
            wanted = pc.binary_join_element_wise(batch.column(PARTITION), batch.column(BUCKET_NUMBER).cast(pa.string()),
                                                 "\x00")
            idx = pc.index_in(wanted, value_set=names).fill_null(-1).to_numpy(zero_copy_only=False)
            buckets = np.where(idx >= 0, ids[np.maximum(idx, 0)], -1)
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(buckets)],
                                             names=[*batch.schema.names, BUCKET])


def _handle_fn(task: BucketTask):
    """Task: run the handle of one bucket on all its records; returns the write stats as JSON.

    A plain annotated function: PySpark infers applyInArrow's mode from the type hints (a callable object fails).
    """

    def run(table: pa.Table) -> pa.Table:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        token = (ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()) if ctx else (0, 0, 0)
        bucket_id = table.column(BUCKET)[0].as_py()
        return pa.table({"stat": pa.array(execute_bucket(task, bucket_id, table, token), pa.string())})

    return run
