"""Writes spread by file group: the tasks that write a commit's files (their write tokens) grow with the file groups
it touches or creates, inside one partition as across partitions; Hudi's parallelism keys cap them; bulk_insert
cuts files by bytes whatever the shuffle partition count, and splits one huge partition over tasks."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.spark import write
from hudi_engine.write.write_result import write_token_of

pytestmark = pytest.mark.spark

SCHEMA = "id string, ts bigint, pad string, dt string"


def opts(operation: str, partitioned: bool = True, **extra) -> dict:
    o = {"hoodie.table.name": "par", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": operation,
         "hoodie.parquet.max.file.size": str(120_000), "hoodie.parquet.small.file.limit": "0",
         "hoodie.index.bloom.num_entries": "500", "hoodie.copyonwrite.record.size.estimate": "120"}
    if partitioned:
        o["hoodie.datasource.write.partitionpath.field"] = "dt"
    o.update(extra)
    return o


def rows(spark, ids, ts: int = 1, dt: str = "d1", seed: int = 0):
    rnd = random.Random(seed)
    data = [(f"k{i:07d}", ts, rnd.randbytes(40).hex(), dt) for i in ids]
    return spark.createDataFrame(data, SCHEMA)


def tasks_of(path: Path, instant: str) -> set[int]:
    """Spark partition ids in the write tokens of the files the commit at `instant` wrote."""
    table = HudiTable.load(str(path))
    (commit,) = [i for i in table.timeline.completed_commits() if i.timestamp == instant]
    return {t.partition_id for t in map(write_token_of, table.timeline.commit_metadata(commit).write_stats()) if t}


def test_an_unpartitioned_upsert_is_written_by_a_task_per_file_group_up_to_the_parallelism(spark, tmp_path):
    path = tmp_path / "t"
    write(rows(spark, range(8000)).repartition(4), str(path), opts("bulk_insert", partitioned=False))
    groups = HudiTable.load(str(path)).file_slices()
    assert len(groups) >= 6, len(groups)
    # Updates spread over the file groups' key ranges (a group may be a small tail file no update falls in).
    updated = {f"k{i:07d}" for i in range(0, 8000, 97)}
    touched = sum(1 for s in groups if updated & set(pq.read_table(s.base_file.path, columns=["id"])["id"].to_pylist()))
    assert touched >= 6
    r = write(rows(spark, range(0, 8000, 97), ts=2, seed=1), str(path), opts("upsert", partitioned=False))
    assert r.files_rewritten == touched and r.records_updated == len(updated)
    default = spark.sparkContext.defaultParallelism
    assert r.tasks >= min(touched, default) and tasks_of(path, r.instant_time) == set(range(r.tasks))
    # hoodie.upsert.shuffle.parallelism caps them.
    r = write(rows(spark, range(1, 8000, 89), ts=3, seed=2), str(path),
              opts("upsert", partitioned=False, **{"hoodie.upsert.shuffle.parallelism": "2"}))
    assert r.tasks == 2
    got = {x["id"]: x["ts"] for x in rs_snapshot(path).select(["id", "ts"]).to_pylist()}
    assert len(got) == 8000 and got["k0000097"] == 2 and got["k0000090"] == 3 and got["k0000001"] == 3


def test_inserts_into_one_partition_become_new_file_groups_written_by_several_tasks(spark, tmp_path):
    path = tmp_path / "t"
    write(rows(spark, range(100)), str(path), opts("bulk_insert"))
    # ~120 bytes a record (the estimate: the first commit wrote too little to trust) -> ~1,000 records a file.
    r = write(rows(spark, range(100, 6100), ts=2, seed=3).repartition(1), str(path), opts("insert"))
    assert r.records_inserted == 6000 and r.files_created >= 5
    assert r.tasks >= min(r.files_created, spark.sparkContext.defaultParallelism)
    slices = [s for s in HudiTable.load(str(path)).file_slices() if s.base_instant == r.instant_time]
    footers = sorted(s.base_file.path for s in slices)
    assert len(footers) == r.files_created
    assert len(rs_snapshot(path)) == 6100


@pytest.mark.parametrize("mode", ["GLOBAL_SORT", "PARTITION_SORT", "NONE"])
def test_bulk_insert_files_are_cut_by_bytes_whatever_the_shuffle_partitions(spark, tmp_path, mode):
    from hudi_engine.io.base_file import read_footer
    from hudi_engine.storage import Storage

    path = tmp_path / "t"
    max_size = 120_000
    n = 12_000
    r = write(rows(spark, range(n)).repartition(3), str(path),
              opts("bulk_insert", **{"hoodie.bulkinsert.sort.mode": mode, "hoodie.bulkinsert.shuffle.parallelism": "2",
                                     "hoodie.copyonwrite.record.size.estimate": "2000"}))  # 15x off: bytes decide
    storage, _ = Storage.for_uri(str(path))
    slices = HudiTable.load(str(path)).file_slices()
    sizes = sorted(s.base_file.size for s in slices)
    # Every file but the last of each writing task is close to the max size; there are at most 3 (input splits or
    # tasks) of those.
    assert len([s for s in sizes if s < 0.6 * max_size]) <= 3, sizes
    assert max(sizes) <= 1.3 * max_size, sizes
    assert r.records_inserted == n and len(rs_snapshot(path)) == n
    if mode == "GLOBAL_SORT":  # one partition split by key range over both tasks: disjoint, sorted files
        assert r.tasks == 2
        footers = sorted((read_footer(storage, s.base_file.path) for s in slices), key=lambda f: f.min_key)
        assert all(a.max_key < b.min_key for a, b in zip(footers, footers[1:]))
