"""The write tasks' pieces (keys and tags, bucket plan, one bucket at a time through its handle, bulk_insert cut by
bytes), driven in-process the way the Spark layer drives them (tests/write/local_write.py); hudi-rs reads the result."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from local_write import write
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import WriteError
from hudi_engine.io.base_file import read_footer
from hudi_engine.storage import Storage
from hudi_engine.write import executor, tagging
from hudi_engine.write.executor import (
    BUCKET,
    DELETE,
    FILE_ID,
    GROUP,
    KEY,
    PARTITION,
    WriteTask,
    file_group_runs,
    write_groups,
)
from hudi_engine.write.write_client import WriteClient, table_for_write

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.float64()), ("dt", pa.string())])


def rows(ids: list[int], ts: int = 1, dt: str = "d1") -> pa.Table:
    return pa.table({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * len(ids), "v": [float(i) for i in ids],
                     "dt": [dt] * len(ids)}, schema=SCHEMA)


def opts(operation: str = "upsert", **extra: str) -> dict:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.operation": operation, **extra}


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


def test_bulk_insert_cuts_files_by_bytes_and_at_each_partition(tmp_path):
    """Files end near the max file size by bytes written, whatever the record size estimate says (here 10x off),
    the last of a partition smaller; files never span partitions and hold disjoint key ranges."""
    import random

    path = tmp_path / "t"
    rnd = random.Random(3)
    n1, n2 = 20000, 2000
    table = pa.concat_tables([rows(list(range(n1)), dt="d1"), rows(list(range(n1, n1 + n2)), dt="d2")])
    table = table.append_column("pad", pa.array([rnd.randbytes(60).hex() for _ in range(table.num_rows)]))
    max_size = 400_000
    r = write(path, table, opts("bulk_insert", **{"hoodie.parquet.max.file.size": str(max_size),
                                                  "hoodie.parquet.small.file.limit": "0",
                                                  "hoodie.copyonwrite.record.size.estimate": "10",
                                                  "hoodie.index.bloom.num_entries": "100"}), chunk=2000)
    storage, _ = Storage.for_uri(str(path))
    by_partition: dict[str, list] = {}
    for s in HudiTable.load(str(path)).file_slices():
        by_partition.setdefault(s.partition_path, []).append((s.base_file.size, read_footer(storage, s.base_file.path)))
    assert (r.records_inserted == n1 + n2 and sorted(by_partition) == ["dt=d1", "d2"]) or sorted(by_partition) == ["d1", "d2"]
    for files in by_partition.values():
        files.sort(key=lambda f: f[1].min_key)
        assert all(a[1].max_key < b[1].min_key for a, b in zip(files, files[1:]))
        sizes = sorted(size for size, _ in files)
        assert all(0.6 * max_size <= size <= 1.15 * max_size for size in sizes[1:]), sizes  # all but the smallest
    assert len(by_partition["d1"]) >= 4 and len(by_partition["d2"]) == 1
    assert len(snapshot(path)) == n1 + n2


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
def test_tagging_reads_footers_not_key_columns(tmp_path, monkeypatch, index_type):
    """Footer key ranges and bloom filters decide where a key lives; no key column is read to tag, and only the
    file group holding the updated keys is rewritten."""
    path = tmp_path / "t"
    write(path, rows(list(range(250))), opts("bulk_insert", **{**SMALL_FILES, "hoodie.parquet.max.file.size": "5000",
                                                               "hoodie.parquet.small.file.limit": "0"}))
    files_before = len(HudiTable.load(str(path)).file_slices())
    assert files_before >= 3
    read: list[str] = []
    original = WriteTask.read_keys
    monkeypatch.setattr(WriteTask, "read_keys", lambda self, st, p: read.append(p) or original(self, st, p))
    monkeypatch.setattr(tagging, "_read_keys", lambda *a: pytest.fail("a key column was read to tag"))
    r = write(path, rows([5, 6, 7, 1000], ts=2), opts(**{"hoodie.index.type": index_type,
                                                         "hoodie.parquet.small.file.limit": "0"}))
    assert (r.records_updated, r.records_inserted, r.files_rewritten, r.files_created) == (3, 1, 1, 1)
    assert read == []
    got = snapshot(path)
    assert len(got) == 251 and got["k0006"] == (2, 6.0)


def test_two_files_admitting_a_key_are_told_apart_by_their_key_columns(tmp_path, monkeypatch):
    """Bloom filters that admit every key (a false positive on each) and overlapping key ranges: the candidates'
    key columns decide, so an update is never taken for an insert or sent to the wrong file group."""
    import numpy as np

    from hudi_engine.io import bloom

    path = tmp_path / "t"
    no_packing = {"hoodie.parquet.small.file.limit": "0"}
    write(path, rows(list(range(0, 100, 2))), opts("insert", **no_packing))
    write(path, rows(list(range(1, 100, 2))), opts("insert", **no_packing))  # a second file, the same key range
    evens, odds = sorted(HudiTable.load(str(path)).file_slices(), key=lambda s: s.base_instant)
    monkeypatch.setattr(bloom.DynamicBloomFilter, "might_contain_many", lambda self, keys: np.ones(len(keys), bool))
    resolved = []
    original = tagging._read_keys
    monkeypatch.setattr(tagging, "_read_keys", lambda spec, st, p: resolved.append(p) or original(spec, st, p))
    r = write(path, rows([4, 5, 500], ts=3), opts(**no_packing))
    assert (r.records_updated, r.records_inserted, r.files_rewritten, r.files_created) == (2, 1, 2, 1)
    assert sorted(resolved) == sorted([evens.base_file.path, odds.base_file.path])
    got = snapshot(path)
    assert got["k0004"] == (3, 4.0) and got["k0005"] == (3, 5.0) and got["k0500"] == (3, 500.0) and len(got) == 101


def test_a_bloom_filter_past_its_size_is_not_tested(tmp_path, monkeypatch):
    """A filter holding far more keys than it was sized for passes nearly every key: tagging skips its test and the
    key ranges and key columns decide, with the same result."""
    from hudi_engine.io import bloom

    path = tmp_path / "t"
    tiny = {"hoodie.index.bloom.num_entries": "10", "hoodie.index.bloom.fpp": "0.1",
            "hoodie.bloom.index.filter.dynamic.max.entries": "20", "hoodie.parquet.small.file.limit": "0"}
    write(path, rows(list(range(0, 400, 2))), opts("insert", **tiny))
    write(path, rows(list(range(1, 400, 2))), opts("insert", **tiny))  # two files over the same key range
    monkeypatch.setattr(bloom.DynamicBloomFilter, "might_contain_many", lambda self, keys: pytest.fail("tested"))
    r = write(path, rows([4, 5, 1000], ts=3), opts(**tiny))
    assert (r.records_updated, r.records_inserted) == (2, 1)
    got = snapshot(path)
    assert got["k0004"] == (3, 4.0) and got["k0005"] == (3, 5.0) and got["k1000"] == (3, 1000.0) and len(got) == 401


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


@pytest.mark.parametrize("version", [6, 9])
def test_custom_key_generator_tables_store_partition_field_names_and_take_typed_ones(tmp_path, version):
    """A new table stores the names (as Hudi 0.14/0.15 write version 6; hudi-rs refuses Hudi 1.x's `name:TYPE`
    spelling). A table whose hoodie.properties has the types, as Hudi 1.x writes version 8 and later, has the same
    partition columns and takes a write without the partition option, as on Java Hudi."""
    path = tmp_path / "t"
    custom = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
              "hoodie.datasource.write.partitionpath.field": "dt:SIMPLE", "hoodie.write.table.version": str(version)}
    write(path, rows([1, 2], dt="d1"), opts("insert", **custom))
    props_file = path / ".hoodie" / "hoodie.properties"
    assert "hoodie.table.partition.fields=dt\n" in props_file.read_text()
    r = write(path, rows([2, 3], ts=2, dt="d1"), opts(**custom))  # the typed option does not contradict it
    assert (r.records_updated, r.records_inserted) == (1, 1)
    assert sorted(snapshot(path)) == ["k0001", "k0002", "k0003"]
    assert [s.partition_path for s in HudiTable.load(str(path)).file_slices()] == ["d1"]
    if version == 6:
        return
    props_file.write_text(props_file.read_text().replace("partition.fields=dt\n", "partition.fields=dt\\:SIMPLE\n"))
    table = HudiTable.load(str(path))
    assert table.config.partition_fields == ["dt"] and table.config.partition_field_specs == ["dt:SIMPLE"]
    untyped = {k: v for k, v in opts(**custom).items() if k != "hoodie.datasource.write.partitionpath.field"}
    assert write(path, rows([4], ts=3, dt="d2"), untyped).records_inserted == 1
    got = HudiTable.load(str(path)).read_snapshot()
    assert sorted(zip(got["id"].to_pylist(), got["dt"].to_pylist(), got["_hoodie_partition_path"].to_pylist())) == \
        [("k0001", "d1", "d1"), ("k0002", "d1", "d1"), ("k0003", "d1", "d1"), ("k0004", "d2", "d2")]


def test_a_one_pass_task_gets_its_groups_sorted_by_key_where_the_order_matters_and_refuses_a_group_split_in_two_runs():
    def batch(rows):
        return pa.RecordBatch.from_pydict({KEY: [k for _, _, k in rows], PARTITION: [p for p, _, _ in rows],
                                           GROUP: [g for _, g, _ in rows]})

    batches = [batch([("p", "f1", "k3"), ("p", "f1", "k1")]),
               batch([("p", "f1", "k2"), ("p", "", "k9"), ("p", "", "k4"), ("q", "", "k0")]),
               batch([("q", "f2", "k7"), ("q", "f2", "k5"), ("q", "f2", "k7")])]

    def keys(runs):
        return [(g, [k for b in records for k in b.column(KEY).to_pylist()]) for g, records in runs]

    assert keys(file_group_runs(batches, "/t")) == \
        [(("p", "f1"), ["k1", "k2", "k3"]), (("p", ""), ["k4", "k9"]), (("q", ""), ["k0"]),
         (("q", "f2"), ["k5", "k7", "k7"])]
    # Appends (MOR): an existing group's distinct keys keep their order; a new group's files hold one key range each,
    # and a repeated key's versions must be neighbours to be pre-combined.
    assert keys(file_group_runs(batches, "/t", appends=True)) == \
        [(("p", "f1"), ["k3", "k1", "k2"]), (("p", ""), ["k4", "k9"]), (("q", ""), ["k0"]),
         (("q", "f2"), ["k5", "k7", "k7"])]
    with pytest.raises(WriteError, match="file group 'f1' of partition 'p' reached their task in two runs"):
        list(file_group_runs([batch([("p", "f1", "k1"), ("p", "f2", "k2"), ("p", "f1", "k3")])], "/t"))


@pytest.mark.parametrize("sort", [True, False])
def test_a_two_pass_task_writes_its_buckets_in_turn_sorting_each_by_key_when_told(monkeypatch, sort):
    # Through the Arrow shuffle a bucket's records arrive in the map tasks' order; Spark's row shuffle sorts them.
    written = []
    monkeypatch.setattr(executor, "write_bucket", lambda task, ctx, bucket, records:
                        written.append((bucket, [k for b in records for k in b.column(KEY).to_pylist()])) or [])
    task = SimpleNamespace(context=lambda token: None)
    plan = SimpleNamespace(buckets={3: "b3", 7: "b7"})
    batches = [pa.RecordBatch.from_pydict({KEY: ["k5", "k1", "k4"], BUCKET: [3, 3, 7]}),
               pa.RecordBatch.from_pydict({KEY: ["k2", "k0"], BUCKET: [7, 7]})]
    assert list(executor.write_buckets(task, plan, batches, (0, 0, 0), {}, sort=sort)) == []
    assert written == ([("b3", ["k1", "k5"]), ("b7", ["k0", "k2", "k4"])] if sort else
                       [("b3", ["k5", "k1"]), ("b7", ["k4", "k2", "k0"])])


def test_a_one_pass_map_task_routes_each_record_to_its_groups_task_and_a_record_nothing_takes_nowhere():
    """`map_side_groups`: a tagged record keeps its file group, a new one goes to its partition's new group (none for
    a delete of a new key); each (partition, group) pair goes to the task `MapSidePlan.tasks` gives it."""
    from hudi_engine.write.bucket_assigner import MapSidePlan
    from hudi_engine.write.executor import BUCKET_NUMBER, map_side_groups

    plan = MapSidePlan(n_tasks=3, pack_small_files=False, small_file_limit=0, max_file_size=1 << 27,
                       avg_record_size=100, compacting={})
    partitions = ["a", "b", "a", "b", "a", "c", "b"]
    file_ids = ["g2", None, "g1", "g9", None, None, "g9"]
    tags = pa.StructArray.from_arrays(
        [pa.array([f"k{i}" for i in range(7)]), pa.array(partitions), pa.array(file_ids, pa.string()),
         pa.nulls(7, pa.int32())], names=[KEY, PARTITION, FILE_ID, BUCKET_NUMBER])
    for deleting in (False, True):
        groups, tasks = map_side_groups(None, plan, tags, deleting)
        new = None if deleting else ""
        assert groups.to_pylist() == ["g2", new, "g1", "g9", new, new, "g9"]
        expected = [None if g is None else plan.tasks(p, [g], [])[0] for p, g in zip(partitions, groups.to_pylist())]
        assert tasks.type == pa.int32() and tasks.to_pylist() == expected
        assert len({t for t in expected if t is not None}) > 1  # the pairs spread over the tasks


def test_a_one_pass_task_given_the_driver_listing_lists_no_partition(tmp_path, monkeypatch):
    write(tmp_path, rows(list(range(10))), opts("bulk_insert"))
    client = WriteClient.open(table_for_write(str(tmp_path)), WriteConfig.from_options(opts()), SCHEMA)
    plan = client.map_side_plan(2)
    untagged = client.untagged_groups(plan)
    assert untagged is not None and set(untagged.routes) == {"d1"}
    group = untagged.routes["d1"][0]
    monkeypatch.setattr(executor, "slices", lambda *a: pytest.fail("a task listed a partition the driver listed"))
    batch = rows([3, 20], ts=2)
    n = batch.num_rows
    # As the SQL route sends them: routed, without key and partition columns (the task keys them itself).
    batch = batch.append_column(FILE_ID, pa.nulls(n, pa.string())).append_column(GROUP, pa.array([group] * n)) \
        .append_column(DELETE, pa.array([False] * n))
    with client.transaction() as txn:
        stats = list(write_groups(client.write_task(txn.instant), client.listing_spec(txn.instant), plan,
                                  batch.to_batches(), (0, 0, 1), {}, untagged.slices))
        txn.commit(stats)
    assert [s.file_id for s in stats] == [group]  # the update and the insert merged into the one small file
    got = snapshot(tmp_path)
    assert got["k0003"] == (2, 3.0) and got["k0020"] == (2, 20.0) and got["k0004"] == (1, 4.0) and len(got) == 11


def test_a_task_keys_the_batches_that_come_without_keys(tmp_path):
    client = WriteClient.open(table_for_write(str(tmp_path)), WriteConfig.from_options(
        opts(**{"hoodie.datasource.write.hive_style_partitioning": "true"})), SCHEMA)
    task = client.write_task("20240101000000000")
    keyless = rows([2, 1], dt="d2").to_batches()[0]
    keyed = keyless.append_column(KEY, pa.array(["x", "y"])).append_column(PARTITION, pa.array(["p", "p"]))
    out = list(executor.keyed_batches(task, [keyless, keyed]))
    assert out[0].column(KEY).to_pylist() == ["k0002", "k0001"]
    assert out[0].column(PARTITION).to_pylist() == ["dt=d2", "dt=d2"]
    assert out[1] is keyed  # keys computed upstream are kept
