"""Save modes and Hudi's SQL table properties as `hudi_engine.spark.save` resolves them (no Spark session)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.spark.save import create_table, save_operation, sql_write_options

OP = "hoodie.datasource.write.operation"


@pytest.mark.parametrize("mode, exists, configured, expected", [
    ("append", False, None, "upsert"),
    ("append", True, "insert", "insert"),
    ("overwrite", True, None, "insert_overwrite_table"),
    ("overwrite", True, "insert_overwrite", "insert_overwrite"),
    ("overwrite", False, None, "insert_overwrite_table"),
    ("overwrite", False, "bulk_insert", "bulk_insert"),
    ("errorifexists", False, "bulk_insert", "bulk_insert"),
    ("ignore", False, None, "upsert"),
    ("ignore", True, None, None),
    ("Append", True, None, "upsert"),
])
def test_save_operation(mode, exists, configured, expected):
    options = {OP: configured} if configured else {}
    assert save_operation(mode, exists, options, "hudi table at /t", "/t") == expected


@pytest.mark.parametrize("mode, configured, words", [
    ("overwrite", "upsert", ["hudi table at /t", f"{OP}=upsert", "overwrite"]),
    ("overwrite", "delete", [f"{OP}=delete"]),
    ("errorifexists", None, ["already exists at /t", "errorifexists"]),
    ("merge", None, ["save mode 'merge'"]),
    ("append", "upsertt", [f"{OP}='upsertt'"]),
])
def test_save_operation_refusals(mode, configured, words):
    options = {OP: configured} if configured else {}
    with pytest.raises(ConfigError) as info:
        save_operation(mode, True, options, "hudi table at /t", "/t")
    for w in words:
        assert w in str(info.value)


def test_sql_table_properties():
    given = {"hudi_engine.sql.table_properties.primaryKey": "id", "hudi_engine.sql.table_properties.type": "mor",
             "hudi_engine.sql.table_properties.preCombineField": "ts",
             "hudi_engine.sql.table_properties.hoodie.index.type": "BLOOM",
             "hudi_engine.sql.table_properties.comment": "ignored", "hudi_engine.sql.partition_columns": "dt",
             "hudi_engine.sql.table_name": "orders", "hudi_engine.sql.database": "analytics",
             "hudi_engine.sql.statement": "create_table_as_select", "hoodie.upsert.shuffle.parallelism": "4"}
    options, mode = sql_write_options(given, False, "catalog table analytics.orders")
    assert mode == "errorifexists"
    assert options == {
        "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.index.type": "BLOOM",
        "hoodie.upsert.shuffle.parallelism": "4", "hoodie.table.name": "orders", "hoodie.database.name": "analytics",
        "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.datasource.write.partitionpath.field": "dt",
        OP: "bulk_insert"}
    # an existing table: its hoodie.properties decide the layout; INSERT INTO is Hudi's `insert` unless set
    options, mode = sql_write_options({"hudi_engine.sql.statement": "insert_into",
                                       "hoodie.spark.sql.insert.into.operation": "upsert"}, True, "t")
    assert (options, mode) == ({OP: "upsert"}, "append")
    for statement, op, mode in [("insert_overwrite", "insert_overwrite_table", "overwrite"),
                                ("insert_overwrite_partition", "insert_overwrite", "overwrite"),
                                ("update", "upsert", "append"), ("delete", "delete", "append"),
                                ("merge", "upsert", "append"), ("merge_delete", "delete", "append")]:
        assert sql_write_options({"hudi_engine.sql.statement": statement}, True, "t") == ({OP: op}, mode)
    with pytest.raises(ConfigError, match="type='hash' is not cow or mor"):
        sql_write_options({"hudi_engine.sql.table_properties.type": "hash"}, False, "t")


def _create(path, schema: pa.Schema, exists: bool, partitions: str = "", **props: str) -> None:
    options = {"hudi_engine.sql.statement": "create_table", "hudi_engine.sql.table_name": "orders",
               "hudi_engine.sql.database": "shop", "hudi_engine.sql.partition_columns": partitions}
    options |= {f"hudi_engine.sql.table_properties.{k}": v for k, v in props.items()}
    create_table(schema, str(path), options, exists, "catalog table shop.orders")


COLUMNS = pa.schema([("id", pa.int32()), ("v", pa.string()), ("ts", pa.int64()), ("dt", pa.string())])


def test_create_table_without_rows(tmp_path):
    """CREATE TABLE without AS SELECT: hoodie.properties with the columns as the create schema, no instant; again at
    the same location: the table taken as it is, contradictions refused."""
    path = tmp_path / "orders"
    _create(path, COLUMNS, False, "dt", primaryKey="id", preCombineField="ts", type="mor")
    table = HudiTable.load(str(path))
    assert (table.config.name, table.config.database_name, table.config.table_type) == ("orders", "shop",
                                                                                        "MERGE_ON_READ")
    assert (list(table.config.record_key_fields), table.config.precombine_field) == (["id"], "ts")
    assert list(table.config.partition_fields) == ["dt"] and table.config.hive_style_partitioning
    assert [f["name"] for f in table.config.create_schema["fields"]] == ["id", "v", "ts", "dt"]
    assert table.schema().names[5:] == ["id", "v", "ts", "dt"] and list(table.timeline.instants) == []

    _create(path, COLUMNS, True, "dt", primaryKey="id", type="mor")
    _create(path, pa.schema([]), True)
    for schema, partitions, props, words in [
        (COLUMNS, "", {"primaryKey": "v"}, ["primaryKey='v'", "the table's is 'id'"]),
        (COLUMNS, "", {"preCombineField": "v"}, ["preCombineField='v'"]),
        (COLUMNS, "", {"type": "cow"}, ["type='cow'", "MERGE_ON_READ"]),
        (COLUMNS, "v", {}, ["PARTITIONED BY (v)", "(dt)"]),
        (pa.schema([("id", pa.int64())]), "", {}, ["the columns (id int64)", "id int32, v string"]),
    ]:
        with pytest.raises(ConfigError) as info:
            _create(path, schema, True, partitions, **props)
        for w in ["catalog table shop.orders", str(path), *words]:
            assert w in str(info.value)


@pytest.mark.parametrize("schema, props, words", [
    (pa.schema([]), {}, ["without columns", "holds none"]),
    (COLUMNS, {"primaryKey": "key"}, ["record key field key is not among the columns"]),
    (COLUMNS, {"primaryKey": "id", "preCombineField": "when"}, ["preCombineField when"]),
    (COLUMNS, {"type": "hash"}, ["type='hash' is not cow or mor"]),
])
def test_create_table_refusals(tmp_path, schema, props, words):
    with pytest.raises(ConfigError) as info:
        _create(tmp_path / "t", schema, False, **props)
    for w in ["catalog table shop.orders", *words]:
        assert w in str(info.value)
    assert not (tmp_path / "t" / ".hoodie").exists()
