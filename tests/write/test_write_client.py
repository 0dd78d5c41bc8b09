"""`WriteClient.untagged_groups`: the file group and task of every partition, from the driver's listing, when no
partition needs its keys looked up to choose its group (the one-pass write then routes in Spark SQL)."""
from __future__ import annotations

import pyarrow as pa
import pytest
from local_write import write

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.write import write_client
from hudi_engine.write.bucket_assigner import NEW_GROUP
from hudi_engine.write.write_client import WriteClient, table_for_write


def opts(table_type: str, operation: str) -> dict:
    return {"hoodie.table.name": "u", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation}


def rows(ids: range, ts: int = 1) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 3}" for i in ids]})


def groups_of(path, table_type: str, operation: str) -> dict | None:
    client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(opts(table_type, operation)),
                              rows(range(1)).schema)
    plan = client.map_side_plan(2)
    untagged = client.untagged_groups(plan)
    if untagged is None:
        return None
    out = dict(untagged.routes)
    # The write tasks take the driver's slices instead of listing: every listed partition's, as the client lists it.
    assert untagged.slices == client.latest_slices(sorted(untagged.slices))
    assert set(out) <= set(untagged.slices)
    if out:  # each partition's task is the one the map tasks would give its group
        slices = client.latest_slices(sorted(out))
        assert all(t == plan.tasks(p, [g], slices[p])[0] for p, (g, t) in out.items())
    return out


def file_ids(path, table_type: str = "MERGE_ON_READ") -> dict[str, list[str]]:
    client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(opts(table_type, "upsert")),
                              rows(range(1)).schema)
    return {p: sorted(s.file_id for s in ss) for p, ss in client.latest_slices(["d0", "d1", "d2"]).items()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_partitions_of_one_file_group_route_untagged(tmp_path, table_type):
    assert groups_of(tmp_path, table_type, "upsert") == {}  # a new table: every partition is new
    write(tmp_path, rows(range(30)), opts(table_type, "bulk_insert"), parallelism=1)
    ids = file_ids(tmp_path, table_type)
    assert all(len(v) == 1 for v in ids.values())
    whole = {p: v[0] for p, v in ids.items()}
    assert {p: g for p, (g, _) in groups_of(tmp_path, table_type, "upsert").items()} == whole
    inserts = {p: g for p, (g, _) in groups_of(tmp_path, table_type, "insert").items()}
    assert inserts == (whole if table_type == "COPY_ON_WRITE" else dict.fromkeys(whole, NEW_GROUP))  # small files
    if table_type == "COPY_ON_WRITE":
        assert groups_of(tmp_path, table_type, "delete") is None  # a COW delete drops the keys it does not find
    else:
        assert {p: g for p, (g, _) in groups_of(tmp_path, table_type, "delete").items()} == whole


def test_a_partition_of_two_file_groups_needs_its_keys_tagged(tmp_path, monkeypatch):
    write(tmp_path, rows(range(30)), opts("MERGE_ON_READ", "bulk_insert"), parallelism=1)
    write(tmp_path, rows(range(101, 102)), opts("MERGE_ON_READ", "insert"))  # MOR inserts: a new file group in d2
    assert len(file_ids(tmp_path)["d2"]) == 2
    assert groups_of(tmp_path, "MERGE_ON_READ", "upsert") is None
    assert groups_of(tmp_path, "MERGE_ON_READ", "delete") is None
    assert {g for g, _ in groups_of(tmp_path, "MERGE_ON_READ", "insert").values()} == {NEW_GROUP}  # no lookup
    monkeypatch.setattr(write_client, "MAX_LISTED_FOLDERS", 3)  # the base path and d0..d2 are 4 folders
    assert groups_of(tmp_path, "MERGE_ON_READ", "insert") is None
