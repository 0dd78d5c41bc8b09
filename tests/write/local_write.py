"""A write driven in-process, step for step as `hudi_engine.spark.writer` drives it on Spark: keys and tags, counts,
the bucket plan (with a sample of new keys), records routed to tasks and sorted by bucket, each task's buckets
through their handles, the commit. Tests use it to look at the engine's write pieces without a JVM."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.table_services import runner
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
from hudi_engine.write.write_client import Transaction, WriteClient
from hudi_engine.write.write_result import WriteResult


def write(path: Path | str, table: pa.Table, options: dict, *, parallelism: int = 2, chunk: int = 7,
          table_services: bool = False) -> WriteResult:
    """One write; with `table_services`, also what runs around a commit (pending services before, inline
    compaction, the LAZY rollback of failed writes, cleaning and archival after), as `spark.writer.write` does."""
    client = WriteClient.open(str(path), WriteConfig.from_options(options), table.schema)
    if table_services:
        runner.finish_pending(client.storage, client.base_path, client.storage_uri, client.config)
    result = _write(client, table, parallelism, chunk)
    if table_services:
        runner.after_commit(client.storage, client.base_path, client.storage_uri, client.config, result.instant_time,
                            client.table_config)
    return result


def _write(client: WriteClient, table: pa.Table, parallelism: int, chunk: int) -> WriteResult:
    with client.transaction() as txn:
        return txn.commit(write_files(client, txn, table, parallelism=parallelism, chunk=chunk))


def write_files(client: WriteClient, txn: Transaction, table: pa.Table, *, parallelism: int = 2,
                chunk: int = 7) -> list[WriteStat]:
    """The data files of one write's instant (what the Spark job does between start and commit); their stats."""
    task = client.write_task(txn.instant)
    cfg = client.config
    bulk = cfg.operation is Operation.BULK_INSERT
    tags = key_and_tag(task.keygen(), None if bulk else client.tag_spec(txn.instant), table)
    keyed = table
    for name in (KEY, PARTITION, FILE_ID, BUCKET_NUMBER):
        keyed = keyed.append_column(name, tags.field(name))
    if bulk:
        keyed = keyed.sort_by([(PARTITION, "ascending"), (KEY, "ascending")]).drop_columns([FILE_ID, BUCKET_NUMBER])
        return list(bulk_insert_files(task, keyed.to_batches(max_chunksize=chunk), (0, 1, 0)))
    keyed = keyed.append_column(DELETE, pa.array(np.full(keyed.num_rows, cfg.operation is Operation.DELETE)))
    plan = client.plan(_counts(keyed, cfg), parallelism)
    fractions = plan.needs_sample()
    if fractions:
        new = keyed.filter(pc.is_null(keyed.column(FILE_ID)))
        plan = plan.with_samples({p: new.filter(pc.equal(new.column(PARTITION), p)).column(KEY).to_pylist()
                                  for p in fractions})
    numbers = keyed.column(BUCKET_NUMBER).combine_chunks()
    buckets = plan.assign(keyed.column(PARTITION).combine_chunks(), keyed.column(KEY).combine_chunks(),
                          keyed.column(FILE_ID).combine_chunks(),
                          numbers if numbers.null_count < len(numbers) else None)
    keyed = keyed.drop_columns([FILE_ID, BUCKET_NUMBER]).append_column(BUCKET, pa.array(buckets, pa.int32()))
    keep = buckets >= 0
    tasks = plan.tasks(buckets)
    stats = []
    for t in range(plan.n_tasks):
        mine = keyed.filter(pa.array(keep & (tasks == t))).sort_by([(BUCKET, "ascending"), (KEY, "ascending")])
        stats += write_buckets(task, plan, mine.to_batches(max_chunksize=chunk), (t, 1, t), {})
    return stats


def _counts(keyed: pa.Table, cfg: WriteConfig) -> Counts:
    updates: dict = {}
    inserts: dict = {}
    new_buckets: dict = {}
    for p, f, b, d in zip(*(keyed.column(c).to_pylist() for c in (PARTITION, FILE_ID, BUCKET_NUMBER, DELETE))):
        if f is not None:
            updates[(p, f)] = updates.get((p, f), 0) + 1
        elif d:
            continue
        elif cfg.index.type is IndexType.BUCKET:
            new_buckets[(p, b)] = new_buckets.get((p, b), 0) + 1
        else:
            inserts[p] = inserts.get(p, 0) + 1
    return Counts(updates, inserts, new_buckets)
