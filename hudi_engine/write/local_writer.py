"""A write's data files without Spark, in this process (`write_files`), step for step as `hudi_engine.spark.writer`
runs them on Spark: keys and tags, counts, the bucket plan (with a sample of the new keys), records routed to tasks
and sorted by bucket, each task's buckets through their handles. `hudi_engine.write_pipeline.write_table` runs it
between the transaction's start and commit.

For small writes on a Spark driver (`spark.small_write`), tests and benchmarks of the task-side code; a Spark write
spreads the same steps over executors. The whole batch is in memory here.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.keygen import AUTO_KEY_COLUMN, AutoKeySequence
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.bucket_assigner import Counts
from hudi_engine.write.executor import (
    BUCKET,
    BUCKET_NUMBER,
    DELETE,
    FILE_ID,
    KEY,
    PARTITION,
    bulk_insert_files,
    key_and_tag,
    write_buckets,
)
from hudi_engine.write.tagging import record_index_locations
from hudi_engine.write.write_client import Transaction, WriteClient


def write_files(client: WriteClient, txn: Transaction, table: pa.Table, *, parallelism: int = 1,
                batch_rows: int = 65536, threads: int = 1) -> list[WriteStat]:
    """The data files of one write's instant (what the Spark job does between the start and the commit); their
    stats, for `txn.commit`. `parallelism` tasks (each with its own write token, as Spark's) run on up to `threads`
    threads: pyarrow's decode and encode, most of a merge, release the GIL."""
    task = client.write_task(txn.instant)
    cfg = client.config
    bulk = cfg.operation is Operation.BULK_INSERT
    if cfg.keys.auto_generated:  # a keyless table: the input is one split (partition id 0), as a one-partition job
        table = table.append_column(AUTO_KEY_COLUMN, AutoKeySequence(txn.instant, 0).take(table.num_rows))
    spec = None if bulk else client.tag_spec(txn.instant)
    by_record_index = spec is not None and cfg.index.type is IndexType.RECORD_INDEX
    t0 = time.perf_counter()
    tags = key_and_tag(task.keygen(), None if by_record_index else spec, table)
    keyed = table
    for name in (KEY, PARTITION, FILE_ID, BUCKET_NUMBER):
        keyed = keyed.append_column(name, tags.field(name))
    if bulk:
        keyed = keyed.sort_by([(PARTITION, "ascending"), (KEY, "ascending")]).drop_columns([FILE_ID, BUCKET_NUMBER])
        return list(bulk_insert_files(task, keyed.to_batches(max_chunksize=batch_rows), (0, 1, 0)))
    keyed = keyed.append_column(DELETE, pa.array(np.full(keyed.num_rows, cfg.operation is Operation.DELETE)))
    if by_record_index:  # global: the batch's keys looked up in the record index
        assert spec is not None
        found = record_index_locations(spec.storage_uri, spec.base_path, spec.instant, keyed.column(KEY))
        keyed = tag_globally(keyed, found, update_partition_path=cfg.index.update_partition_path,
                             deleting=cfg.operation is Operation.DELETE)
    txn.timings["tag"] = time.perf_counter() - t0  # keys made and looked up in the index (bench_record_index)
    plan = client.plan(counts_of(keyed, cfg), parallelism)
    fractions = plan.needs_sample()
    if fractions:
        new = keyed.filter(pc.is_null(keyed.column(FILE_ID)))
        plan = plan.with_samples({p: new.filter(pc.equal(new.column(PARTITION), p)).column(KEY).to_pylist()
                                  for p in fractions})
    numbers = keyed.column(BUCKET_NUMBER).combine_chunks()
    buckets = plan.assign(keyed.column(PARTITION).combine_chunks(), keyed.column(KEY).combine_chunks(),
                          keyed.column(FILE_ID).combine_chunks(),
                          numbers if numbers.null_count < len(numbers) else None)
    # RECORD_INDEX: the tag goes with the records, so an append reports its keys checked against the index
    keyed = keyed.drop_columns([BUCKET_NUMBER] if by_record_index else [FILE_ID, BUCKET_NUMBER])
    keyed = keyed.append_column(BUCKET, pa.array(buckets, pa.int32()))
    tasks = plan.tasks(buckets)

    def run(t: int) -> list[WriteStat]:
        mine = keyed.filter(pa.array((buckets >= 0) & (tasks == t)))
        mine = mine.sort_by([(BUCKET, "ascending"), (KEY, "ascending")])
        return list(write_buckets(task, plan, mine.to_batches(max_chunksize=batch_rows), (t, 1, t), {}))

    if threads <= 1 or plan.n_tasks == 1:
        return [stat for t in range(plan.n_tasks) for stat in run(t)]
    # Every task runs to its end before an error propagates (leaving the with): the abort that follows then finds
    # every file the write made.
    with ThreadPoolExecutor(min(threads, plan.n_tasks), thread_name_prefix="hudi-write-task") as pool:
        return [stat for stats in pool.map(run, range(plan.n_tasks)) for stat in stats]


def counts_of(keyed: pa.Table, cfg: WriteConfig) -> Counts:
    """What the tagging pass counts (see `spark.global_simple.counts`), from a keyed and tagged table."""
    live = keyed.filter(pc.or_(pc.is_valid(keyed.column(FILE_ID)), pc.invert(keyed.column(DELETE))))
    grouped = live.group_by([PARTITION, FILE_ID, BUCKET_NUMBER], use_threads=False).aggregate([([], "count_all")])
    updates: dict[tuple[str, str], int] = {}
    inserts: dict[str, int] = {}
    new_buckets: dict[tuple[str, int], int] = {}
    for p, f, b, n in zip(*(grouped.column(c).to_pylist() for c in (PARTITION, FILE_ID, BUCKET_NUMBER, "count_all"))):
        if f is not None:
            updates[(p, f)] = n
        elif cfg.index.type is IndexType.BUCKET:
            new_buckets[(p, int(b))] = n
        else:
            inserts[p] = inserts.get(p, 0) + n
    return Counts(updates, inserts, new_buckets)


def tag_globally(keyed: pa.Table, found: pa.Table, *, update_partition_path: bool, deleting: bool) -> pa.Table:
    """Rows tagged by a global index's locations `found` (`key`, `partition`, `file_id`), as `spark.global_simple`
    tags them: a key the table holds in the row's partition goes to its file group; in another partition, with
    `update_partition_path` (and not `deleting`), it becomes a delete there and an insert in the new partition,
    else the record goes where the key lives. `keyed` has the KEY, PARTITION, FILE_ID and DELETE columns."""
    names = keyed.column_names
    partition_type = keyed.schema.field(PARTITION).type
    at = pc.index_in(keyed.column(KEY), value_set=found.column("key").combine_chunks())
    there = found.column("partition").combine_chunks().take(at).cast(partition_type)
    file_ids = found.column("file_id").combine_chunks().take(at)
    moved = pc.fill_null(pc.not_equal(there, keyed.column(PARTITION)), False)  # held in another partition
    if not (update_partition_path and not deleting):
        out = keyed.set_column(names.index(PARTITION), PARTITION, pc.if_else(moved, there, keyed.column(PARTITION)))
        return out.set_column(names.index(FILE_ID), FILE_ID, file_ids)
    out = keyed.set_column(names.index(FILE_ID), FILE_ID, pc.if_else(moved, pa.scalar(None, pa.string()), file_ids))
    if not pc.any(moved).as_py():
        return out
    old = keyed.filter(moved)  # the delete where the key lived
    old = old.set_column(names.index(PARTITION), PARTITION, there.filter(moved))
    old = old.set_column(names.index(FILE_ID), FILE_ID, file_ids.filter(moved))
    old = old.set_column(names.index(DELETE), DELETE, pa.array(np.ones(old.num_rows, dtype=np.bool_)))
    return pa.concat_tables([out, old])
