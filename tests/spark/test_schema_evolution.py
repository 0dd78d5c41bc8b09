"""Schema evolution through Spark writes: new nullable columns and widened types are read by hudi-rs over old base
files, old MOR log blocks (whose headers carry their own schema) and compacted files; drops, renames and
narrowing are refused before anything is written."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import SchemaError
from hudi_engine.spark import spark_executor, write

pytestmark = pytest.mark.spark


def opts(table_type: str, operation: str = "upsert") -> dict:
    return {
        "hoodie.table.name": "evolving",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": operation,
    }


V1 = "id bigint, ts bigint, qty int, price float, name string, dt string"
V2 = "id bigint, ts bigint, qty bigint, price double, name string, dt string, note string"


def v1_rows(n: int) -> list[tuple]:
    return [(i, 1, i * 10, i + 0.5, f"n{i}", f"d{i % 2}") for i in range(n)]


def read_both(path: Path) -> pa.Table:
    theirs = rs_snapshot(path)
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), theirs, f"ours vs hudi-rs at {path.name}")
    return theirs.sort_by("id")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_new_nullable_column_and_widened_types(spark, tmp_path, table_type):
    path = tmp_path / "t"
    write(spark.createDataFrame(v1_rows(6), V1), str(path), opts(table_type, "bulk_insert"))
    # v2 touches one partition only: the other keeps its v1 base file (and, on MOR, v1 stays in the base files
    # under v2 log blocks).
    write(spark.createDataFrame([(0, 2, 5_000_000_000, 0.25, "n0x", "d0", "new")], V2), str(path), opts(table_type))
    snap = read_both(path)
    assert snap.schema.field("qty").type == pa.int64() and snap.schema.field("price").type == pa.float64()
    got = {r["id"]: (r["qty"], r["price"], r["note"]) for r in snap.to_pylist()}
    assert got == {0: (5_000_000_000, 0.25, "new"), **{i: (i * 10, i + 0.5, None) for i in range(1, 6)}}
    if table_type == "MERGE_ON_READ":
        HudiTable.load(str(path)).compact(executor=spark_executor(spark))
        rows = [c for c in snap.column_names if c != "_hoodie_file_name"]  # the compaction names new files
        assert_same_rows(read_both(path).select(rows), snap.select(rows), "compacted = before compaction")
        assert_same_rows(rs_snapshot(path, read_optimized=True).sort_by("id").select(rows), snap.select(rows),
                         "read-optimized after compaction")
    # A later write with the v1 schema is refused: it would drop `note` and narrow `qty`.
    with pytest.raises(SchemaError, match=r"column 'qty' changes type from int64 to int32.*'note'"):
        write(spark.createDataFrame(v1_rows(1), V1), str(path), opts(table_type))


def test_drop_rename_and_narrowing_are_refused_before_writing(spark, tmp_path):
    path = tmp_path / "t"
    write(spark.createDataFrame(v1_rows(4), V1), str(path), opts("MERGE_ON_READ", "bulk_insert"))
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    attempts = {
        "id bigint, ts bigint, qty int, price float, dt string": r"column 'name' \(string\) is missing",
        "id bigint, ts bigint, qty int, price float, full_name string, dt string": r"column 'name' \(string\) is missing",
        "id bigint, ts int, qty int, price float, name string, dt string": r"'ts' changes type from int64 to int32",
        "id bigint, ts bigint, qty int, price float, name bigint, dt string": r"'name' changes type from string to int64",
    }
    for schema, message in attempts.items():
        row = tuple(1 if t.strip().split(" ")[1] in ("bigint", "int") else
                    0.5 if t.strip().endswith("float") else "x" for t in schema.split(","))
        with pytest.raises(SchemaError, match=message):
            write(spark.createDataFrame([row], schema), str(path), opts("MERGE_ON_READ"))
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before  # nothing started


def test_int_and_long_widen_to_decimal(spark, tmp_path):
    """int -> decimal(p, s) with p - s >= 10 and long -> decimal with p - s >= 19 hold every old value."""
    path = tmp_path / "t"
    schema1 = "id bigint, ts bigint, qty int, total bigint, dt string"
    write(spark.createDataFrame([(i, 1, i, i * 1_000_000_000_000, "d0") for i in range(3)], schema1), str(path),
          opts("MERGE_ON_READ", "bulk_insert"))
    schema2 = "id bigint, ts bigint, qty decimal(12,2), total decimal(21,2), dt string"
    write(spark.createDataFrame([(0, 2, Decimal("0.25"), Decimal("7.50"), "d0")], schema2), str(path),
          opts("MERGE_ON_READ"))
    snap = read_both(path)
    assert snap.schema.field("qty").type == pa.decimal128(12, 2)
    assert [(r["qty"], r["total"]) for r in snap.to_pylist()] == [
        (Decimal("0.25"), Decimal("7.50")), (Decimal("1.00"), Decimal("1000000000000.00")),
        (Decimal("2.00"), Decimal("2000000000000.00"))]
    HudiTable.load(str(path)).compact(executor=spark_executor(spark))
    rows = [c for c in snap.column_names if c != "_hoodie_file_name"]
    assert_same_rows(read_both(path).select(rows), snap.select(rows), "compacted")
    with pytest.raises(SchemaError, match=r"'qty' changes type from decimal128\(12, 2\) to decimal128\(5, 2\)"):
        write(spark.createDataFrame([(0, 3, Decimal("1.00"), Decimal("1.00"), "d0")],
                                    "id bigint, ts bigint, qty decimal(5,2), total decimal(21,2), dt string"),
              str(path), opts("MERGE_ON_READ"))
