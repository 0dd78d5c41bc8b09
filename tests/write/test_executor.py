"""What one write task does (`write_partition`, `bulk_insert_files`), driven in-process the way the Spark layer
drives it: WriteClient on the driver side, one call per partition path, then the commit; hudi-rs reads the result."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.io.base_file import read_footer
from hudi_engine.storage import Storage
from hudi_engine.write.executor import KEY, PARTITION, WriteTask, bulk_insert_files, write_partition
from hudi_engine.write.write_client import WriteClient, WriteResult

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.float64()), ("dt", pa.string())])


def rows(ids: list[int], ts: int = 1, dt: str = "d1") -> pa.Table:
    return pa.table({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * len(ids), "v": [float(i) for i in ids],
                     "dt": [dt] * len(ids)}, schema=SCHEMA)


def opts(operation: str = "upsert", **extra: str) -> dict:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.operation": operation, **extra}


def write(path: Path, table: pa.Table, options: dict) -> WriteResult:
    """One write: keys by the key generator, one `write_partition` per partition path (or, for bulk_insert,
    `bulk_insert_files` over the rows sorted by partition and key), then the commit."""
    client = WriteClient.open(str(path), WriteConfig.from_options(options), table.schema)
    with client.transaction() as txn:
        task = client.write_task(txn.instant)
        keygen = task.keygen()
        keyed = table.append_column(KEY, keygen.record_keys(table)).append_column(PARTITION,
                                                                                keygen.partition_paths(table))
        if client.config.operation.value == "bulk_insert":
            keyed = keyed.sort_by([(PARTITION, "ascending"), (KEY, "ascending")])
            stats = list(bulk_insert_files(task, keyed.to_batches(max_chunksize=7), (0, 1, 0)))
        else:
            parts = keyed.column(PARTITION)
            stats = []
            for i, p in enumerate(pc.unique(parts).to_pylist()):
                stats += write_partition(task, p, keyed.filter(pc.equal(parts, p)), (i, 1, i))
        return txn.commit(stats)


def snapshot(path: Path) -> dict[str, tuple[int, float]]:
    t = rs_snapshot(path)
    return {k: (ts, v) for k, ts, v in zip(t["id"].to_pylist(), t["ts"].to_pylist(), t["v"].to_pylist())}


def base_files(path: Path) -> list:
    storage, _ = Storage.for_uri(str(path))
    return [read_footer(storage, s.base_file.path) for s in HudiTable.load(str(path)).file_slices()]


# ~100 records per file: the average record size estimate is 1,000 bytes until a commit gives a real one.
SMALL_FILES = {"hoodie.parquet.max.file.size": "100000", "hoodie.parquet.small.file.limit": "100000",
               "hoodie.copyonwrite.record.size.estimate": "1000"}


def test_new_inserts_are_cut_in_key_order_into_files_of_the_max_size(tmp_path):
    path = tmp_path / "t"
    ids = list(range(250))[::-1]  # arrive in reverse order
    r = write(path, rows(ids), opts("insert", **SMALL_FILES))
    assert (r.records_inserted, r.files_created) == (250, 3)
    footers = sorted(base_files(path), key=lambda f: f.min_key)
    assert [f.num_rows for f in footers] == [83, 84, 83]
    # Each file holds one contiguous key range.
    assert all(a.max_key < b.min_key for a, b in zip(footers, footers[1:]))
    assert snapshot(path) == {f"k{i:04d}": (1, float(i)) for i in ids}


def test_bulk_insert_files_cut_at_the_max_size_and_at_each_partition(tmp_path):
    path = tmp_path / "t"
    table = pa.concat_tables([rows(list(range(150)), dt="d1"), rows(list(range(150, 180)), dt="d2")])
    r = write(path, table, opts("bulk_insert", **SMALL_FILES))
    assert (r.records_inserted, r.files_created) == (180, 3)
    by_partition = {}
    for s in HudiTable.load(str(path)).file_slices():
        by_partition.setdefault(s.partition_path, []).append(s)
    assert sorted(len(v) for v in by_partition.values()) == [1, 2]
    assert sorted(f.num_rows for f in base_files(path)) == [30, 50, 100]
    assert len(snapshot(path)) == 180


def test_upsert_updates_in_place_and_packs_inserts_into_a_small_file(tmp_path):
    path = tmp_path / "t"
    write(path, rows(list(range(20))), opts("insert"))
    (before,) = HudiTable.load(str(path)).file_slices()
    r = write(path, pa.concat_tables([rows([3, 7], ts=2), rows([100, 101], ts=2)]), opts())
    assert (r.records_updated, r.records_inserted, r.files_rewritten, r.files_created) == (2, 2, 1, 0)
    (after,) = HudiTable.load(str(path)).file_slices()
    assert after.file_id == before.file_id
    got = snapshot(path)
    assert len(got) == 22 and got["k0003"] == (2, 3.0) and got["k0100"] == (2, 100.0) and got["k0004"] == (1, 4.0)


def test_duplicates_in_the_batch_are_pre_combined_by_ordering_value(tmp_path):
    path = tmp_path / "t"
    batch = pa.concat_tables([rows([1], ts=5), rows([1], ts=9).set_column(2, "v", pa.array([42.0])), rows([1], ts=7)])
    r = write(path, batch, opts())
    assert r.records_inserted == 1
    assert snapshot(path) == {"k0001": (9, 42.0)}


@pytest.mark.parametrize("index_type", ["SIMPLE", "BLOOM"])
def test_the_index_reads_only_files_whose_key_range_admits_a_batch_key(tmp_path, monkeypatch, index_type):
    path = tmp_path / "t"
    write(path, rows(list(range(250))), opts("bulk_insert", **SMALL_FILES))  # 3 files, disjoint key ranges
    read: list[str] = []
    original = WriteTask.read_keys

    def spy(self, storage, file_path):
        read.append(file_path)
        return original(self, storage, file_path)

    monkeypatch.setattr(WriteTask, "read_keys", spy)
    r = write(path, rows([5, 6, 7, 1000], ts=2), opts(**{"hoodie.index.type": index_type}))
    assert (r.records_updated, r.records_inserted) == (3, 1)
    assert len(read) == 1  # k0005..k0007 lie in the first file's range; k1000 in none
    got = snapshot(path)
    assert len(got) == 251 and got["k0006"] == (2, 6.0)


def test_deleting_keys_the_table_does_not_hold_writes_nothing(tmp_path):
    path = tmp_path / "t"
    write(path, rows(list(range(10))), opts("insert"))
    r = write(path, rows([2, 500]), opts("delete"))
    assert (r.records_deleted, r.files_rewritten, r.files_created) == (1, 1, 0)
    assert sorted(snapshot(path)) == [f"k{i:04d}" for i in range(10) if i != 2]
    r = write(path, rows([600]), opts("delete"))
    assert (r.records_deleted, r.files_rewritten, r.files_created) == (0, 0, 0)


def test_mor_inserts_open_new_file_groups_and_updates_go_to_log_files(tmp_path):
    path = tmp_path / "t"
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write(path, rows(list(range(20))), opts("insert", **mor))
    r = write(path, pa.concat_tables([rows([3], ts=2), rows([100], ts=2)]), opts(**mor))
    assert (r.records_updated, r.records_inserted, r.files_appended, r.files_created) == (1, 1, 1, 1)
    got = snapshot(path)
    assert len(got) == 21 and got["k0003"] == (2, 3.0)


def test_custom_key_generator_tables_store_partition_field_names_without_types(tmp_path):
    path = tmp_path / "t"
    custom = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
              "hoodie.datasource.write.partitionpath.field": "dt:SIMPLE"}
    write(path, rows([1, 2], dt="d1"), opts("insert", **custom))
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.partition.fields=dt\n" in props  # as Hudi 0.14/0.15 write a version 6 table
    r = write(path, rows([2, 3], ts=2, dt="d1"), opts(**custom))  # the typed option does not contradict it
    assert (r.records_updated, r.records_inserted) == (1, 1)
    assert sorted(snapshot(path)) == ["k0001", "k0002", "k0003"]
    assert [s.partition_path for s in HudiTable.load(str(path)).file_slices()] == ["d1"]
