"""Hive metastore sync: Spark writes with Hudi's hive_sync keys in a session with an embedded Derby metastore (its own
process, tests/spark/hive_sync_job.py: the shared test session has Spark's in-memory catalog), the entries read back
through the metastore client and compared field by field with what Hudi 0.14/0.15's HiveSyncTool (mode hms) writes
for the same tables; Spark reads the synced entries through the native `hudi` source. In this process: a session
without a Hive metastore is refused before anything is written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.spark import write

HERE = Path(__file__).resolve().parent
META = [["_hoodie_commit_time", "string"], ["_hoodie_commit_seqno", "string"], ["_hoodie_record_key", "string"],
        ["_hoodie_partition_path", "string"], ["_hoodie_file_name", "string"]]
HOODIE_INPUT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hive-sync")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(HERE / "hive_sync_job.py"), str(root)], capture_output=True, text=True,
                          env=env, cwd=root, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["root"] = str(root)
    return out


def spark_schema(entry: dict) -> list[list[str]]:
    parts = int(entry["params"]["spark.sql.sources.schema.numParts"])
    text = "".join(entry["params"][f"spark.sql.sources.schema.part.{i}"] for i in range(parts))
    return [[f["name"], f["type"]] for f in json.loads(text)["fields"]]


def hudi_params(entry: dict, instant: str) -> dict:
    """The table parameters HiveSyncTool writes (EXTERNAL, the Spark data source ones, last_commit_time_sync)."""
    schema_parts = {k: v for k, v in entry["params"].items() if k.startswith("spark.sql.sources.schema.part.")}
    return {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi", "spark.sql.create.version": "4.3.0",
            "spark.sql.sources.schema.numParts": str(len(schema_parts)), **schema_parts,
            **({"spark.sql.sources.schema.numPartCols": "1", "spark.sql.sources.schema.partCol.0": entry[
                "partition_keys"][0][0]} if entry["partition_keys"] else {}),
            "last_commit_time_sync": instant}


def test_cow_partitioned_entry_is_hive_sync_tools(seen):
    root = seen["root"]
    step = seen["orders_1"]
    e = step["entry"]
    assert (e["input_format"], e["output_format"], e["serde"], e["table_type"]) == (
        HOODIE_INPUT, PARQUET_OUTPUT, PARQUET_SERDE, "EXTERNAL_TABLE")
    assert e["location"] == f"file:{root}/orders"
    assert e["serde_params"] == {"path": f"{root}/orders", "hoodie.query.as.ro.table": "false",
                                 "serialization.format": "1"}
    assert e["columns"] == [*META, ["id", "bigint"], ["ts", "bigint"], ["name", "string"]]
    assert e["partition_keys"] == [["day", "string"]]
    assert e["params"] == hudi_params(e, step["instant"])
    assert spark_schema(e) == [*META, ["id", "long"], ["ts", "long"], ["name", "string"], ["day", "string"]]
    assert e["partitions"] == {"2024-01-01": f"file:{root}/orders/2024-01-01",
                               "2024-01-02": f"file:{root}/orders/2024-01-02"}
    assert e["partition_names"] == ["day=2024-01-01", "day=2024-01-02"]
    # Spark reads the synced entry (a data source table of provider hudi) through the native source.
    assert step["read"] == [[1, "a", "2024-01-01"], [2, "b", "2024-01-02"]]


def test_added_column_and_new_partition_are_synced(seen):
    step = seen["orders_2"]
    e = step["entry"]
    assert e["columns"][-1] == ["amount", "double"]
    assert spark_schema(e)[-2:] == [["amount", "double"], ["day", "string"]]
    assert e["params"] == hudi_params(e, step["instant"])
    assert sorted(e["partitions"]) == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert step["read"] == [[1, None], [2, None], [3, 2.5]]


def test_insert_overwrite_table_drops_the_partitions_it_emptied(seen):
    step = seen["orders_3"]
    e = step["entry"]
    assert e["partition_names"] == ["day=2024-01-02"]
    assert e["params"]["last_commit_time_sync"] == step["instant"]
    assert step["read"] == [[9]]
    assert "FileScan parquet" in step["plan"]  # Spark's own parquet reader: the native path


def test_mor_unpartitioned_gets_ro_and_rt_entries(seen):
    root = seen["root"]
    step = seen["events"]
    ro, rt = step["ro"], step["rt"]
    assert {"events_ro", "events_rt"} <= set(step["tables"]) and "events" not in step["tables"]
    assert (ro["input_format"], rt["input_format"]) == (HOODIE_INPUT, REALTIME_INPUT)
    for e, ro_flag in ((ro, "true"), (rt, "false")):
        assert (e["output_format"], e["serde"], e["table_type"]) == (PARQUET_OUTPUT, PARQUET_SERDE, "EXTERNAL_TABLE")
        assert e["serde_params"] == {"path": f"{root}/events", "hoodie.query.as.ro.table": ro_flag,
                                     "serialization.format": "1"}
        assert e["partition_keys"] == [] and e["partitions"] == {}
        assert e["columns"] == [*META, ["id", "bigint"], ["ts", "bigint"], ["name", "string"]]
        assert e["params"] == hudi_params(e, step["instant"])
    # _ro reads the base files only (the update is in a log file); _rt merges it.
    assert step["read_ro"] == [["old"]]
    assert step["read_rt"] == [["new"]]


def test_the_entry_dbt_makes_and_the_synced_one_are_the_same(seen):
    step = seen["made"]
    assert step["before"] == [[1]]
    assert step["synced"] == [["made"]]
    e = step["entry"]
    assert e["input_format"] == HOODIE_INPUT and e["partition_keys"] == [["p", "string"]]
    assert list(e["partitions"]) == ["x"]
    assert step["read"] == [[1, "x"]]


def test_a_sync_failure_after_the_commit_names_the_instant_and_the_next_write_repairs(seen):
    step = seen["broken"]
    failure = step["failure"]
    assert failure is not None and failure["instant"] == step["committed"]
    assert (f"the write committed at instant {step['committed']} (its data is in the table), then Hive metastore "
            "sync (HiveSyncTool) of nodb.broken failed") in failure["message"]
    assert "hoodie.datasource.hive_sync.auto_create_database=false" in failure["message"]
    assert step["synced"] == step["repaired"]
    assert step["read"] == [[1], [2]]


def test_call_hive_sync_syncs_a_catalog_table_and_drops_a_dropped_partition(seen):
    first, second = seen["called_1"], seen["called_2"]
    assert first["result"] == [["hive sync success."]]
    e = first["entry"]
    assert (e["input_format"], e["serde"], e["partition_keys"]) == (HOODIE_INPUT, PARQUET_SERDE, [["p", "string"]])
    assert e["params"]["last_commit_time_sync"] == first["instant"] and sorted(e["partitions"]) == ["x", "y"]
    assert second["dropped"] == [["Success"]] and second["read"] == [[2]]
    assert second["entry"]["params"]["last_commit_time_sync"] == second["instant"] != first["instant"]
    assert sorted(second["entry"]["partitions"]) == ["y"]


def test_a_session_without_hive_metastore_is_refused_before_the_write(spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.createDataFrame([(1, 1)], "id long, ts long")
    with pytest.raises(ConfigError) as e:
        write(df, path, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                         "hoodie.datasource.hive_sync.enable": "true"})
    assert "hoodie.datasource.hive_sync.enable / HiveSyncTool syncs into the Spark session's Hive metastore" in str(
        e.value)
    assert not Path(path).exists()


def test_sync_partition_fields_of_a_new_table_are_checked_before_the_write(spark, tmp_path):
    path = str(tmp_path / "t")
    df = spark.createDataFrame([(1, 1, "d")], "id long, ts long, day string")
    with pytest.raises(ConfigError) as e:
        write(df, path, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                         "hoodie.datasource.meta.sync.enable": "true",
                         "hoodie.meta.sync.client.tool.class": "AwsGlueCatalogSyncTool",
                         "hoodie.datasource.hive_sync.partition_fields": "day"})
    assert "hoodie.datasource.hive_sync.partition_fields='day' are not the partition fields of table" in str(e.value)
    assert not Path(path).exists()
