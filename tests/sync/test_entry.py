"""The entry values a sync writes, without a catalog: Hive and Spark types as HiveSyncTool writes them for the
parquet this engine writes, the Spark schema cut into parts, partition values from paths (Hudi's extractors, URL
decoding), and the `hoodie.query.as.ro.table` SerDe parameter a synced `_ro` entry is read with."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import SyncError
from hudi_engine.read_options import ReadOptions
from hudi_engine.sync.entry import describe, entry_names, hive_type, spark_table_params
from hudi_engine.table import HudiTable
from hudi_engine.write_pipeline import write_table


@pytest.mark.parametrize(("arrow", "hive", "with_timestamp"), [
    (pa.int32(), "int", None), (pa.int16(), "int", None), (pa.int64(), "bigint", None),
    (pa.float32(), "float", None), (pa.float64(), "double", None), (pa.bool_(), "boolean", None),
    (pa.string(), "string", None), (pa.binary(), "binary", None), (pa.decimal128(12, 3), "decimal(12,3)", None),
    (pa.date32(), "date", None), (pa.timestamp("us", tz="UTC"), "bigint", "timestamp"),
    (pa.list_(pa.int64()), "array<bigint>", None), (pa.map_(pa.string(), pa.float64()), "map<string,double>", None),
    (pa.struct([("a", pa.int32()), ("b-c", pa.list_(pa.string()))]), "struct<a:int,b_c:array<string>>", None),
])
def test_hive_types_are_hive_sync_tools(arrow, hive, with_timestamp):
    assert hive_type(arrow) == hive
    assert hive_type(arrow, support_timestamp=True) == (with_timestamp or hive)


def test_spark_schema_parts_put_partition_columns_last_and_cut_at_the_threshold():
    schema = pa.schema([("day", pa.string()), ("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")),
                        ("tags", pa.list_(pa.string()))])
    params = spark_table_params(schema, ["day"], "3.5.1", 40)
    parts = int(params["spark.sql.sources.schema.numParts"])
    assert parts > 1 and all(len(params[f"spark.sql.sources.schema.part.{i}"]) <= 40 for i in range(parts))
    text = "".join(params[f"spark.sql.sources.schema.part.{i}"] for i in range(parts))
    fields = json.loads(text)["fields"]
    assert [(f["name"], f["type"]) for f in fields] == [
        ("id", "long"), ("ts", "timestamp"),
        ("tags", {"type": "array", "elementType": "string", "containsNull": True}), ("day", "string")]
    assert params["spark.sql.sources.provider"] == "hudi" and params["spark.sql.create.version"] == "3.5.1"
    assert (params["spark.sql.sources.schema.numPartCols"], params["spark.sql.sources.schema.partCol.0"]) == ("1", "day")


def _table(tmp_path, **options: str) -> HudiTable:
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", **options}
    write_table(pa.table({"id": [1, 2], "ts": [1, 1], "region": ["eu/west", "us"], "day": ["2024/01/02", "2024/01/03"]}),
                path, opts)
    return HudiTable.load(path)


def sync_config(**options: str):
    return WriteConfig.from_options({"hoodie.datasource.hive_sync.enable": "true", **options}).sync


def test_partition_values_from_hive_style_and_url_encoded_paths(tmp_path):
    table = _table(tmp_path, **{"hoodie.datasource.write.partitionpath.field": "region",
                                "hoodie.datasource.write.hive_style_partitioning": "true",
                                "hoodie.datasource.write.partitionpath.urlencode": "true"})
    synced = describe(table, table.base_path, sync_config(), database="db", name="t")
    # HiveStylePartitionValueExtractor (one hive-style field), values URL-decoded as the table encodes them.
    assert synced.partitions == {("eu/west",): f"{table.base_path}/region=eu%2Fwest",
                                 ("us",): f"{table.base_path}/region=us"}
    (entry,) = synced.entries
    assert [c.name for c in entry.partition_keys] == ["region"]
    assert "region" not in [c.name for c in entry.columns]


def test_slash_encoded_day_extractor_and_a_mismatch_is_an_error(tmp_path):
    table = _table(tmp_path, **{"hoodie.datasource.write.partitionpath.field": "day"})
    day = sync_config(**{"hoodie.datasource.hive_sync.partition_extractor_class": "SlashEncodedDayPartitionValueExtractor"})
    assert set(describe(table, table.base_path, day, database="db", name="t").partitions) == {
        ("2024-01-02",), ("2024-01-03",)}
    with pytest.raises(SyncError, match="gives the values"):  # MultiPartKeys: three values for one field
        describe(table, table.base_path, sync_config(), database="db", name="t")


def test_table_names_by_type_and_strategy():
    assert entry_names("t", False, sync_config()) == ["t"]
    assert entry_names("t", True, sync_config()) == ["t_ro", "t_rt"]
    assert entry_names("t", True, sync_config(**{"hoodie.datasource.hive_sync.skip_ro_suffix": "true"})) == [
        "t", "t_rt"]
    assert entry_names("t", True, sync_config(**{"hoodie.datasource.hive_sync.table.strategy": "RT"})) == ["t"]


def test_a_synced_ro_entry_reads_read_optimized_unless_the_query_says_otherwise():
    assert ReadOptions.parse({"hoodie.query.as.ro.table": "true"}).query_type == "read_optimized"
    assert ReadOptions.parse({"hoodie.query.as.ro.table": "false"}).query_type == "snapshot"
    assert ReadOptions.parse({"hoodie.query.as.ro.table": "true",
                              "hoodie.datasource.query.type": "snapshot"}).query_type == "snapshot"
