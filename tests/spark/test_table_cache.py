"""The planning worker's kept tables (`hudi_engine.spark.table_cache`) and the native source's read plan
(`native.plan_json`), without a Spark session: an unchanged table is planned again without listing its partitions
(counted), and whatever lands on the timeline after a plan (a commit, a compaction, a rewritten hoodie.properties)
is seen by the next plan; at most `max_tables` tables are kept; logged slices are split by key in the plan."""
from __future__ import annotations

import json
import pickle
import time

import pyarrow as pa
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable, Storage
from hudi_engine.file_slice_reader import log_record_keys
from hudi_engine.spark import native
from hudi_engine.spark.table_cache import TABLES, ListedStorage, TableCache
from hudi_engine.write_pipeline import write_table

OPTIONS = {"hoodie.table.name": "cached", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.compact.inline": "false",
           "hoodie.metadata.enable": "false"}  # planned from listings (a metadata table's listing is counted elsewhere)


def _rows(ids, ts: int, name: str = "n") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{name}{i}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "dt": [f"d{i % 3}" for i in ids]})


def _write(path, rows: pa.Table, table_type: str = "COPY_ON_WRITE", operation: str = "upsert") -> str:
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.operation": operation}
    return write_table(rows, str(path), opts).instant_time


@pytest.fixture
def listings(monkeypatch):
    """Folders listed from storage, by path (every `Storage`, the kept tables' included)."""
    listed: list[str] = []
    original = Storage._list

    def counting(self, path):
        listed.append(path)
        return original(self, path)

    monkeypatch.setattr(Storage, "_list", counting)
    TABLES.clear()
    yield listed
    TABLES.clear()


def _plan(path) -> dict:
    return json.loads(native.plan_json({"path": str(path)}))


def _data_listings(listed: list[str]) -> list[str]:
    return [p for p in listed if "/.hoodie" not in p]


def test_an_unchanged_table_is_planned_again_without_listing_its_partitions(tmp_path, listings):
    path = tmp_path / "t"
    _write(path, _rows(range(30), 1), operation="bulk_insert")
    first = _plan(path)
    assert len(_data_listings(listings)) == 4  # the base path and its three partitions
    listings.clear()
    again = _plan(path)
    assert again == first
    assert _data_listings(listings) == []
    assert listings == [str(path / ".hoodie"), str(path / ".hoodie" / "timeline")]  # the timeline's check only


def test_a_commit_after_a_plan_is_seen_by_the_next_plan(tmp_path, listings):
    path = tmp_path / "t"
    _write(path, _rows(range(30), 1), operation="bulk_insert")
    before = _plan(path)
    instant = _write(path, _rows([3, 31], 2, "late"))
    listings.clear()
    after = _plan(path)
    assert _data_listings(listings)  # listed again under the new timeline
    assert after["files"] != before["files"]
    assert any(instant in f for f, _ in after["files"])
    table = TABLES.load(str(path))
    assert table.timeline.completed_commits().last().timestamp == instant


def test_a_compaction_after_a_plan_is_seen_and_logged_slices_are_split_by_key(tmp_path, listings):
    path = tmp_path / "m"
    _write(path, _rows(range(30), 1), "MERGE_ON_READ", "bulk_insert")
    _write(path, _rows(range(0, 30, 3), 2, "u"), "MERGE_ON_READ")  # logs in d0
    logged = _plan(path)
    # d0's slice: its base file scanned but for the 10 keys its log writes; merged by hudi_merge for those keys.
    assert len(logged["split_files"]) == 1 and len(logged["files"]) == 2
    [(name, keys)] = logged["split_keys"].items()
    assert logged["split_files"][0][0].endswith("/" + name)
    table = HudiTable.load(str(path))
    [s] = [s for s in table.file_slices() if s.log_files]
    expected = log_record_keys(table.plan_scan().read_context(), s).to_pylist()
    assert sorted(keys) == sorted(expected) and len(keys) == 10
    options = logged["source_options"]
    assert json.loads(options["hudi_engine.read.file_groups"]) == json.loads(
        options["hudi_engine.read.logged_keys_only"]) == [f"d0/{s.file_id}"]

    HudiTable.load(str(path)).compact()
    compacted = _plan(path)
    assert compacted["split_files"] == [] and compacted["split_keys"] == {} and compacted["source_options"] is None
    assert compacted["merge"] is None
    assert len(compacted["files"]) == 3
    assert len(rs_snapshot(path)) == 30


def test_a_rewritten_hoodie_properties_is_seen(tmp_path, listings):
    path = tmp_path / "t"
    _write(path, _rows(range(3), 1), operation="bulk_insert")
    kept = TABLES.load(str(path))
    assert TABLES.load(str(path)) is kept
    props = path / ".hoodie" / "hoodie.properties"
    time.sleep(0.01)  # a later modification time, same size
    props.write_text(props.read_text())
    assert TABLES.load(str(path)) is not kept


def test_at_most_max_tables_are_kept_least_recently_used_out(tmp_path):
    cache = TableCache(max_tables=2)
    paths = [str(tmp_path / f"t{i}") for i in range(3)]
    for p in paths:
        _write(p, _rows(range(3), 1), operation="bulk_insert")
    a, b = cache.load(paths[0]), cache.load(paths[1])
    assert cache.load(paths[0]) is a  # now the most recently used
    cache.load(paths[2])  # evicts t1
    assert cache.load(paths[0]) is a
    assert cache.load(paths[1]) is not b
    assert cache.memo(b) is None and cache.memo(a) is not None


def test_a_kept_tables_storage_ships_as_plain_storage(tmp_path):
    _write(tmp_path / "t", _rows(range(3), 1), operation="bulk_insert")
    table = TableCache().load(str(tmp_path / "t"))
    assert isinstance(table.storage, ListedStorage)
    shipped = pickle.loads(pickle.dumps(table.plan_scan()))
    assert type(shipped.storage) is Storage


def test_no_table_there_is_the_loaders_error(tmp_path):
    with pytest.raises(Exception, match="no .hoodie folder"):
        TableCache().load(str(tmp_path / "nothing"))


def test_slices_read_for_their_logged_keys_are_packed_into_few_tasks(tmp_path):
    """`hudi_merge`'s half of a key split: slices read for their logged keys only go 4 to a Spark partition (few rows
    each); slices merged whole keep a partition each. Reading the packed partitions gives every logged key's row."""
    from hudi_engine.read_options import ReadOptions
    from hudi_engine.spark.source_reader import LOGGED_SLICES_PER_TASK, HudiReader, SlicePartition
    from hudi_engine.spark.spark_types import spark_schema

    path = tmp_path / "m"
    ids = range(60)
    rows = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "ts": pa.array([1] * 60, pa.int64()), "dt": [f"d{i % 6}" for i in ids]})
    _write(path, rows, "MERGE_ON_READ", "bulk_insert")
    _write(path, _rows(range(0, 60, 5), 2, "u").set_column(3, "dt", pa.array([f"d{i % 6}" for i in range(0, 60, 5)])),
           "MERGE_ON_READ")
    table = HudiTable.load(str(path))
    slices = table.file_slices()
    logged = sorted(f"{s.partition_path}/{s.file_id}" for s in slices if s.log_files)
    whole = logged[:1]
    assert len(logged) == 6
    query = ReadOptions(path=str(path), file_groups=frozenset(logged), logged_keys_only=frozenset(logged[1:]))
    reader = HudiReader(table, query, spark_schema(table.schema()))
    parts = reader.partitions()
    assert all(isinstance(p, SlicePartition) for p in parts)
    sizes = sorted(len(p.file_slices) for p in parts)
    assert sizes == [1, 1, LOGGED_SLICES_PER_TASK]  # the whole slice alone; 5 logged-keys-only slices as 4 + 1
    assert sorted(f"{s.partition_path}/{s.file_id}" for p in parts for s in p.file_slices) == logged
    got = pa.Table.from_batches([b for p in parts for b in reader.read(p)])
    names = dict(zip(got.column("id").to_pylist(), got.column("name").to_pylist()))
    whole_ids = {i for i in ids if f"d{i % 6}" == whole[0].split("/")[0]}
    assert set(names) == whole_ids | set(range(0, 60, 5))
    assert all(names[i] == f"u{i}" for i in range(0, 60, 5))


def test_the_plans_merge_tasks_read_what_hudi_merge_reads(tmp_path):
    """The merge half of a native read, handed to the JVM ready to run (`merge_tasks`): the plan's pickled tasks,
    read by the function the JVM's command names, give the rows `hudi_merge` reads for the plan's `source_options`
    (the logged keys of split slices), in the query's columns; slices read for their logged keys go 4 to a task."""
    import base64

    from hudi_engine.read_options import ReadOptions
    from hudi_engine.spark.merge_tasks import merge_function
    from hudi_engine.spark.source_reader import LOGGED_SLICES_PER_TASK, HudiReader
    from hudi_engine.spark.spark_types import spark_schema

    path = tmp_path / "m"
    ids = range(60)
    rows = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "ts": pa.array([1] * 60, pa.int64()), "dt": [f"d{i % 6}" for i in ids]})
    _write(path, rows, "MERGE_ON_READ", "bulk_insert")
    _write(path, _rows(range(0, 60, 5), 2, "u").set_column(3, "dt", pa.array([f"d{i % 6}" for i in range(0, 60, 5)])),
           "MERGE_ON_READ")
    plan = _plan(path)
    merge = plan["merge"]
    assert len(merge["tasks"]) == 2  # 6 logged slices: 4 + 2
    tasks = [pickle.loads(base64.b64decode(t)) for t in merge["tasks"]]
    assert sorted(len(t) for t in tasks) == [6 - LOGGED_SLICES_PER_TASK, LOGGED_SLICES_PER_TASK]
    assert all(logged_only for t in tasks for _, logged_only in t)

    table = HudiTable.load(str(path))
    fields = [table.schema().field(n) for n in ("id", "name", "dt")]
    wanted = spark_schema(pa.schema(fields))
    # The columns as the catalog spells them: resolved case-insensitively, as hudi_merge resolves them.
    declared = spark_schema(pa.schema([fields[0].with_name("ID"), *fields[1:]]))
    read, return_type = merge_function(declared.json(), merge["plan"])
    assert return_type == declared
    batch = pa.record_batch([pa.array([base64.b64decode(t) for t in merge["tasks"]], pa.binary())], names=["task"])
    got = pa.Table.from_batches(list(read(iter([batch]))))
    assert got.column_names == ["ID", "name", "dt"]

    reader = HudiReader(table, ReadOptions.parse(plan["source_options"]), wanted)
    expected = pa.Table.from_batches([b for p in reader.partitions() for b in reader.read(p)])
    assert sorted(got.rename_columns(["id", "name", "dt"]).to_pylist(), key=lambda r: r["id"]) == sorted(
        expected.to_pylist(), key=lambda r: r["id"])
    assert sorted(got.column("ID").to_pylist()) == list(range(0, 60, 5))
    assert all(n.startswith("u") for n in got.column("name").to_pylist())
