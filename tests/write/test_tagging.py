"""Tagging where a key has two copies: the live one is updated (`hudi_engine.write.tagging._live_holder`)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from write.local_write import write

from hudi_engine.table import HudiTable

OPTIONS = {
    "hoodie.table.name": "orders",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.parquet.small.file.limit": "0",  # every insert opens a new file group
}


def _rows(ids: list[str], ts: int, v: str) -> pa.Table:
    return pa.table({"id": ids, "p": ["p0"] * len(ids), "ts": [ts] * len(ids), "v": [v] * len(ids)})


def _groups_holding(path: Path, key: str) -> list[str]:
    table = HudiTable.load(str(path)).read_snapshot()
    return table.filter(pc.equal(table["id"], key)).column("_hoodie_file_name").to_pylist()


def test_an_upsert_updates_the_live_copy_of_a_key_whose_deleted_copy_stays_in_a_base_file(tmp_path):
    """On MOR a delete is a log block, so the key stays in its base file. A writer whose index knows it is gone
    (Java's record index; here the insert operation, which looks nothing up) writes it again into a new file group.
    An upsert must update that live copy; updating the dead one would bring it back, the key twice."""
    path = tmp_path / "orders"
    write(path, _rows(["k1", "k2", "k3"], 1, "a"), {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    write(path, _rows(["k2"], 2, "-"), {**OPTIONS, "hoodie.datasource.write.operation": "delete"})
    write(path, _rows(["k2"], 3, "b"), {**OPTIONS, "hoodie.datasource.write.operation": "insert"})
    [live] = _groups_holding(path, "k2")
    write(path, _rows(["k1", "k2"], 4, "c"), {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    table = HudiTable.load(str(path)).read_snapshot()
    rows = sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())
    assert rows == [("k1", "c"), ("k2", "c"), ("k3", "a")]
    [now] = _groups_holding(path, "k2")
    assert now.split("_")[0] == live.split("_")[0]  # the same file group as the live copy
