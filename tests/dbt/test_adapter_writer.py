"""dbt's `on_schema_change='sync_all_columns'` on a Hudi table (dbt/adapters/hudi/writer.py's sync_columns), without
Spark: the model's dropped columns dropped and its widened types widened through the engine's ALTER TABLE with
schema-on-read, a narrowing left to the write, a key column refused by name. dbt's own suite runs it end to end
(tests/dbt/adapter_suites/suite_delta_set.py, TestIncrementalOnSchemaChangeHudi)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, IntegerType, LongType

from dbt.adapters.hudi.writer import HudiModelError, sync_columns
from hudi_engine import HudiTable, write_table

OPTIONS = {"hoodie.table.name": "m", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _table(tmp_path: Path) -> HudiTable:
    path = str(tmp_path / "m")
    write_table(pa.table({"id": [1, 2], "val": pa.array([10, 20], pa.int32()), "note": ["a", "b"],
                          "ts": pa.array([1, 1], pa.int64()), "p": ["x", "y"]}), path, OPTIONS)
    return HudiTable.load(path)


def test_sync_all_columns_drops_and_widens_then_the_next_write_reads_by_id(tmp_path: Path) -> None:
    table = _table(tmp_path)
    sync_columns("m", table, ["note"], {"val": LongType(), "ts": IntegerType()})  # ts long -> int: a narrowing
    assert table.schema().names[5:] == ["id", "val", "ts", "p"]
    assert table.schema().field("val").type == pa.int64() and table.schema().field("ts").type == pa.int64()
    operations = [table.commit_metadata(i).operation_type for i in table.timeline.completed_commits()]
    assert operations == ["UPSERT", "ALTER_SCHEMA", "ALTER_SCHEMA"]
    write_table(pa.table({"id": [1, 3], "val": pa.array([11, 30], pa.int64()), "ts": pa.array([2, 2], pa.int64()),
                          "p": ["x", "x"]}), table.base_path, OPTIONS)
    rows = HudiTable.load(table.base_path).read_snapshot().select(["id", "val", "p"]).sort_by("id").to_pylist()
    assert rows == [{"id": 1, "val": 11, "p": "x"}, {"id": 2, "val": 20, "p": "y"}, {"id": 3, "val": 30, "p": "x"}]


def test_sync_all_columns_refuses_to_drop_a_key_column_by_name(tmp_path: Path) -> None:
    table = _table(tmp_path)
    with pytest.raises(HudiModelError, match="model m: on_schema_change='sync_all_columns'.*p is the table's "
                                             "partition field"):
        sync_columns("m", table, ["p"], {"val": DoubleType()})
    assert [i.timestamp for i in HudiTable.load(table.base_path).timeline.completed_commits()] == \
        [i.timestamp for i in table.timeline.completed_commits()]
