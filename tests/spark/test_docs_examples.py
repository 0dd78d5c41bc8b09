"""The documents' Python examples that need Spark, run on the test session as written (tests/test_docs.py lists
them in RUN_ON_SPARK and checks every other block). Only the example's paths and catalog names are replaced, by a
temporary folder and a schema of this test's, and the example's input DataFrames (`df`) are made here."""
from __future__ import annotations

import pytest
from docs_blocks import block_with
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.spark import create_catalog_table, write

pytestmark = pytest.mark.spark


def _run(block, scope: dict, replace: dict[str, str]) -> dict:
    code = block.code
    for old, new in replace.items():
        assert old in code, f"{block.where}: the example no longer says {old!r}"
        code = code.replace(old, new)
    exec(compile(code, block.where, "exec"), scope)
    return scope


def test_writing_from_spark(spark, tmp_path):
    path = str(tmp_path / "trips")
    df = spark.createDataFrame([("a", "chennai", 1, 10.0, "d1"), ("b", "sf", 1, 20.5, "d2"),
                                ("c", "chennai", 2, 33.9, "d1")],
                               "uuid string, city string, ts long, fare double, driver string")
    scope = _run(block_with("docs/python-api.md", 'result = write(df, "/data/trips"'), {"df": df},
                 {'"/data/trips"': repr(path)})
    result = scope["result"]
    assert (result.operation, result.records_inserted) == ("upsert", 3)
    # The example ends with a rollback of the latest completed commit (the table's one write undone) and a truncate.
    assert HudiTable.load(path).read_snapshot().num_rows == 0
    assert HudiTable.load(path).config.table_type == "MERGE_ON_READ"


def test_reading_from_spark(spark, tmp_path):
    path = str(tmp_path / "orders")
    orders = spark.createDataFrame([(1, "2024-03-01", 10.0), (2, "2024-03-01", 5.0), (3, "2024-03-02", 7.5)],
                                   "order_id long, dt string, amount double")
    write(orders, path, {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "order_id",
                         "hoodie.datasource.write.partitionpath.field": "dt",
                         "hoodie.datasource.write.operation": "bulk_insert"})
    spark.sql("create database if not exists docs_examples")
    create_catalog_table(spark, "docs_examples.orders", path, if_not_exists=True)
    _run(block_with("docs/python-api.md", 'read_table(spark, "/data/orders")'), {"spark": spark},
         {'"/data/orders"': repr(path), '"analytics.orders"': '"docs_examples.orders"'})
    assert spark.sql("select sum(amount) from orders_now").collect()[0][0] == 22.5


def test_keyless_writes(spark, tmp_path):
    path = str(tmp_path / "events")
    df = spark.createDataFrame([("open", "2024-03-01"), ("close", "2024-03-01")], "event string, day string")
    df2 = spark.createDataFrame([("open", "2024-03-02")], "event string, day string")
    # The block is an excerpt of docs/keyless.md that uses `write` without importing it.
    _run(block_with("docs/keyless.md", 'write(df, "s3://bucket/events"'), {"df": df, "df2": df2, "write": write},
         {'"s3://bucket/events"': repr(path)})
    rows = rs_snapshot(path)
    assert rows.num_rows == 3 and len(set(rows.column("_hoodie_record_key").to_pylist())) == 3


def test_format_hudi_save(spark, tmp_path):
    path = str(tmp_path / "trips")
    _run(block_with("docs/spark-sql.md", "print(last_write_result())"), {}, {'"/tmp/hudi-docs/trips"': repr(path)})
    table = HudiTable.load(path)
    assert [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_commits()] == ["UPSERT"]
    assert rs_snapshot(path).column("v").to_pylist() == ["a"]
