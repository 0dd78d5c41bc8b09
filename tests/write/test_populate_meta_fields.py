"""hoodie.populate.meta.fields given to a write: false creates a table without meta columns (virtual keys, as Hudi's
HoodieTableConfig.POPULATE_META_FIELDS), which every later write and hudi-rs read as such; a write to an existing
table must match the table's setting (refused by name before any file otherwise)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.schema import META_COLUMNS

KEY = "hoodie.populate.meta.fields"


def rows(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "city": ["sf" if i % 2 else "la" for i in ids],
                     "v": pa.array([ts] * len(ids), pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64())})


def options(table_type: str, operation: str, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation, **extra}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_table_created_without_meta_fields(tmp_path, table_type):
    path = tmp_path / "t"
    write(path, rows([1, 2, 3], 1), options(table_type, "insert", **{KEY: "false"}))
    assert HudiTable.load(str(path)).config.populate_meta_fields is False
    write(path, rows([2, 4], 2), options(table_type, "upsert", **{KEY: "false"}))
    write(path, rows([3], 3), options(table_type, "delete"))  # left out: the table's setting holds
    ours = HudiTable.load(str(path)).read_snapshot()
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("v").to_pylist())) == [(1, 1), (2, 2), (4, 2)]
    assert all(ours.column(c).null_count == ours.num_rows for c in META_COLUMNS if c in ours.column_names)
    assert_same_rows(ours, rs_snapshot(path), f"{table_type} without meta fields", key="id")


def test_a_write_that_contradicts_the_tables_setting_is_refused(tmp_path):
    path = tmp_path / "t"
    write(path, rows([1, 2], 1), options("COPY_ON_WRITE", "insert"))
    before = tree(path)
    with pytest.raises(ConfigError, match=rf"{KEY}='false' contradicts the table's 'true'"):
        write(path, rows([3], 2), options("COPY_ON_WRITE", "upsert", **{KEY: "false"}))
    assert tree(path) == before
