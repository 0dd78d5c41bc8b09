"""Prepped DataFrame writes (hudi_engine/spark/prepped.py): rows read back with their meta columns, upserted and
deleted through `df.write.format("hudi")` as the stored rows they are, committed UPSERT_PREPPED / DELETE_PREPPED:
on a keyless table without the option (Hudi's canDoPreppedWrites) and with it, on a keyed table with
hoodie.datasource.write.prepped; read back by us and hudi-rs with the stored keys kept; every refusal by name with
nothing written."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from oracle import rs_snapshot
from pyspark.sql import functions as F

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.write_pipeline import write_table

pytestmark = pytest.mark.spark

PREPPED = "hoodie.datasource.write.prepped"


def _operations(path: str) -> list[str]:
    table = HudiTable.load(path)
    return [table.timeline.commit_metadata(i).operation_type or "" for i in table.timeline.completed_commits()]


def _files(path: str) -> list[str]:
    return sorted(str(p) for p in Path(path).rglob("*"))


def _save(df, path: str, options: dict[str, str]) -> None:
    df.write.format("hudi").options(**options).mode("append").save(path)


def _keys(path: str) -> dict[int, str]:
    t = HudiTable.load(path).read_snapshot()
    return dict(zip(t.column("id").to_pylist(), t.column("_hoodie_record_key").to_pylist(), strict=True))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_keyless_tables_rows_read_back_are_upserted_and_deleted_by_their_stored_keys(spark, tmp_path: Path,
                                                                                     table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": "insert"}
    write_table(pa.table({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"], "p": ["x", "x", "y", "y"]}), path, opts)
    keys = _keys(path)
    rows = spark.read.format("hudi").load(path)
    # No option: an upsert of rows carrying _hoodie_record_key is prepped, as Hudi decides for a keyless table.
    _save(rows.where("id IN (1, 3)").withColumn("v", F.upper("v")), path,
          {**opts, "hoodie.datasource.write.operation": "upsert"})
    _save(spark.read.format("hudi").load(path).where("id = 2"), path,
          {**opts, "hoodie.datasource.write.operation": "delete", PREPPED: "true"})
    assert _operations(path)[-2:] == ["UPSERT_PREPPED", "DELETE_PREPPED"]
    got = HudiTable.load(path).read_snapshot().sort_by("id")
    assert list(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True)) == \
        [(1, "A"), (3, "C"), (4, "d")]
    assert _keys(path) == {i: k for i, k in keys.items() if i != 2}  # the stored keys, none made again
    theirs = rs_snapshot(path).sort_by("id")
    assert theirs.column("_hoodie_record_key").to_pylist() == [keys[1], keys[3], keys[4]]
    assert theirs.column("v").to_pylist() == ["A", "C", "d"]


def test_a_keyed_tables_prepped_upsert_and_a_row_whose_key_changed(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.operation": "upsert"}
    write_table(pa.table({"id": [1, 2], "v": ["a", "b"], "ts": [1, 1], "p": ["x", "y"]}), path, opts)
    rows = spark.read.format("hudi").load(path)
    _save(rows.where("id = 1").withColumn("v", F.lit("a2")).withColumn("ts", F.lit(2).cast("long")), path,
          {**opts, PREPPED: "true"})
    assert _operations(path)[-1] == "UPSERT_PREPPED"
    got = HudiTable.load(path).read_snapshot().sort_by("id")
    assert got.column("v").to_pylist() == ["a2", "b"]
    # A key or partition field changed under the stored meta columns: refused, showing the row, nothing written.
    for changed in (F.col("id") + 10, None):
        before = _files(path)
        moved = rows.where("id = 2")
        moved = moved.withColumn("id", changed) if changed is not None else moved.withColumn("p", F.lit("z"))
        with pytest.raises(Exception, match="is not what its key and partition fields"):
            _save(moved, path, {**opts, PREPPED: "true"})
        assert _files(path) == before


def test_a_prepped_write_without_its_meta_columns_or_of_another_operation_is_refused(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.operation": "upsert"}
    data = pa.table({"id": [1], "v": ["a"], "ts": [1], "p": ["x"]})
    write_table(data, path, opts)
    before = _files(path)
    rows = spark.read.format("hudi").load(path)
    for df, extra, words in (
            (rows.drop("_hoodie_partition_path"), {}, "the rows have no _hoodie_partition_path column"),
            (rows.drop("_hoodie_record_key"), {}, "the rows have no _hoodie_record_key column"),
            (rows, {"hoodie.datasource.write.operation": "insert"}, "is for an upsert or a delete")):
        with pytest.raises(Exception, match=words):
            _save(df, path, {**opts, **extra, PREPPED: "true"})
        assert _files(path) == before
    with pytest.raises(ConfigError, match="served by Spark's DataFrame writer"):
        write_table(data, path, {**opts, "_hoodie.datasource.write.prepped": "true"})
    assert _files(path) == before
