"""AWS Glue sync against moto's Glue (the local AWS API server of the tests): the table, its partitions and its
parameters as Hudi's AWSGlueCatalogSyncClient writes them, 1,500 partitions within Glue's batch limits, schema
evolution, a partition an insert_overwrite_table emptied, and a failure after the commit that the next sync repairs.
Tables are written in this process (`write_table`); the sync runs as a write runs it after the commit."""
from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pytest

from hudi_engine.config.sync_config import GLUE
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError, SyncError
from hudi_engine.location import TableLocation
from hudi_engine.sync.entry import INPUT_FORMAT, OUTPUT_FORMAT, REALTIME_INPUT_FORMAT, SERDE
from hudi_engine.sync.glue import GlueClient, glue_settings_problems
from hudi_engine.sync.tool import sync_catalogs
from hudi_engine.table import HudiTable
from hudi_engine.table_config import TableConfig
from hudi_engine.write_pipeline import write_table

GLUE_SYNC = {"hoodie.datasource.meta.sync.enable": "true",
             "hoodie.meta.sync.client.tool.class": "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool",
             "hoodie.datasource.hive_sync.database": "lake"}
META = [("_hoodie_commit_time", "string"), ("_hoodie_commit_seqno", "string"), ("_hoodie_record_key", "string"),
        ("_hoodie_partition_path", "string"), ("_hoodie_file_name", "string")]


def options(name: str, **extra: str) -> dict[str, str]:
    """Write options (write_table runs no sync: the Spark writes do; `sync` below runs it as they do)."""
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "day",
            **extra}


def rows(ids: list[int], days: list[str], **more: list) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([1] * len(ids), pa.int64()),
                     "name": [f"n{i}" for i in ids], "day": days, **more})


@pytest.fixture
def glue(s3_server):
    client = s3_server.client("glue")
    yield client
    for db in client.get_databases()["DatabaseList"]:
        for t in client.get_tables(DatabaseName=db["Name"])["TableList"]:
            client.delete_table(DatabaseName=db["Name"], Name=t["Name"])
        client.delete_database(Name=db["Name"])


def sync(path: str, opts: dict[str, str], glue, instant: str | None = None):
    cfg = WriteConfig.from_options({**GLUE_SYNC, **opts}, path).sync
    return sync_catalogs(path, cfg, {GLUE: GlueClient(glue)}, instant=instant, spark_version="4.3.0")


def partitions(glue, table: str) -> dict[tuple[str, ...], str]:
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName="lake", TableName=table)
    return {tuple(p["Values"]): p["StorageDescriptor"]["Location"] for page in pages for p in page["Partitions"]}


def test_cow_table_partitions_and_parameters_as_hudi_writes_them(tmp_path, glue):
    path = str(tmp_path / "orders")
    result = write_table(rows([1, 2, 3], ["2024-01-01", "2024-01-02", "2024-01-02"]), path, options("orders"))
    sync(path, options("orders"), glue)

    t = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    assert t["TableType"] == "EXTERNAL_TABLE"
    sd = t["StorageDescriptor"]
    assert (sd["InputFormat"], sd["OutputFormat"], sd["SerdeInfo"]["SerializationLibrary"]) == (
        INPUT_FORMAT, OUTPUT_FORMAT, SERDE)
    assert sd["SerdeInfo"]["Parameters"] == {"path": path, "hoodie.query.as.ro.table": "false",
                                             "serialization.format": "1"}
    assert sd["Location"] == path
    assert [(c["Name"], c["Type"]) for c in sd["Columns"]] == [*META, ("id", "bigint"), ("ts", "bigint"),
                                                              ("name", "string")]
    assert [(c["Name"], c["Type"]) for c in t["PartitionKeys"]] == [("day", "string")]
    params = t["Parameters"]
    schema = json.loads(params.pop("spark.sql.sources.schema.part.0"))
    assert params == {"EXTERNAL": "TRUE", "hudi.metadata-listing-enabled": "FALSE",
                      "spark.sql.sources.provider": "hudi", "spark.sql.create.version": "4.3.0",
                      "spark.sql.sources.schema.numParts": "1", "spark.sql.sources.schema.numPartCols": "1",
                      "spark.sql.sources.schema.partCol.0": "day", "last_commit_time_sync": result.instant_time}
    # Spark's schema: the partition column last (SparkDataSourceTableUtils).
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        *META, ("id", "long"), ("ts", "long"), ("name", "string"), ("day", "string")]
    assert partitions(glue, "orders") == {("2024-01-01",): f"{path}/2024-01-01",
                                          ("2024-01-02",): f"{path}/2024-01-02"}


def test_mor_gets_ro_and_rt_tables_and_skip_ro_suffix(tmp_path, glue):
    path = str(tmp_path / "events")
    mor = options("events", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    write_table(rows([1], ["2024-01-01"]), path, mor)
    sync(path, mor, glue)
    names = {t["Name"]: t for t in glue.get_tables(DatabaseName="lake")["TableList"]}
    assert set(names) == {"events_ro", "events_rt"}
    assert names["events_ro"]["StorageDescriptor"]["InputFormat"] == INPUT_FORMAT
    assert names["events_rt"]["StorageDescriptor"]["InputFormat"] == REALTIME_INPUT_FORMAT
    assert names["events_ro"]["StorageDescriptor"]["SerdeInfo"]["Parameters"]["hoodie.query.as.ro.table"] == "true"
    assert names["events_rt"]["StorageDescriptor"]["SerdeInfo"]["Parameters"]["hoodie.query.as.ro.table"] == "false"
    sync(path, {**mor, "hoodie.datasource.hive_sync.skip_ro_suffix": "true"}, glue)
    assert "events" in {t["Name"] for t in glue.get_tables(DatabaseName="lake")["TableList"]}


def test_added_column_and_dropped_partition_are_synced(tmp_path, glue):
    path = str(tmp_path / "orders")
    write_table(rows([1, 2], ["2024-01-01", "2024-01-02"]), path, options("orders"))
    sync(path, options("orders"), glue)
    added = write_table(rows([3], ["2024-01-03"], amount=pa.array([1.5])), path, options("orders"))
    sync(path, options("orders"), glue)
    t = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    assert [c["Name"] for c in t["StorageDescriptor"]["Columns"]][-1:] == ["amount"]
    assert t["StorageDescriptor"]["Columns"][-1]["Type"] == "double"
    assert t["Parameters"]["last_commit_time_sync"] == added.instant_time
    assert set(partitions(glue, "orders")) == {("2024-01-01",), ("2024-01-02",), ("2024-01-03",)}
    # insert_overwrite_table replaces every file group: the partitions it did not write hold no data any more.
    write_table(rows([9], ["2024-01-02"], amount=pa.array([2.0])), path,
                options("orders", **{"hoodie.datasource.write.operation": "insert_overwrite_table"}))
    sync(path, options("orders"), glue)
    assert set(partitions(glue, "orders")) == {("2024-01-02",)}


def test_1500_partitions_in_batches_of_glues_limits(tmp_path, glue):
    path = str(tmp_path / "wide")
    n = 1500
    days = [f"d{i:04d}" for i in range(n)]
    write_table(rows(list(range(n)), days), path, options("wide", **{"hoodie.datasource.write.operation": "insert"}))
    batches: list[int] = []
    glue.meta.events.register("before-parameter-build.glue.BatchCreatePartition",
                              lambda params, **kw: batches.append(len(params["PartitionInputList"])))
    sync(path, options("wide"), glue)
    assert len(partitions(glue, "wide")) == n
    assert max(batches) <= 100 and sum(batches) == n and len(batches) == 15
    # Dropping goes 25 a request (BatchDeletePartition's limit).
    deletes: list[int] = []
    glue.meta.events.register("before-parameter-build.glue.BatchDeletePartition",
                              lambda params, **kw: deletes.append(len(params["PartitionsToDelete"])))
    write_table(rows([0], ["d0000"]), path,
                options("wide", **{"hoodie.datasource.write.operation": "insert_overwrite_table"}))
    sync(path, options("wide"), glue)
    assert set(partitions(glue, "wide")) == {("d0000",)}
    assert max(deletes) <= 25 and sum(deletes) == n - 1


class FailingGlue(GlueClient):
    """Glue that fails half way: the table is created, adding its partitions fails."""

    def add_partitions(self, entry, partitions):
        raise RuntimeError("Glue is unreachable")


class UnreachableGlue(GlueClient):
    def database_exists(self, database):
        raise RuntimeError("Glue is unreachable")


def test_a_failure_after_the_commit_names_the_instant_and_the_next_sync_repairs(tmp_path, glue):
    path = str(tmp_path / "orders")
    result = write_table(rows([1, 2], ["2024-01-01", "2024-01-02"]), path, options("orders"))
    cfg = WriteConfig.from_options({**GLUE_SYNC, **options("orders")}, path).sync
    with pytest.raises(SyncError) as e:
        sync_catalogs(path, cfg, {GLUE: FailingGlue(glue)}, instant=result.instant_time)
    message = str(e.value)
    assert f"the write committed at instant {result.instant_time} (its data is in the table)" in message
    assert "AWS Glue sync (AwsGlueCatalogSyncTool) of lake.orders failed" in message
    assert "Glue is unreachable" in message and e.value.instant == result.instant_time
    # The table is there without partitions and without last_commit_time_sync: the next sync does it all.
    t = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    assert "last_commit_time_sync" not in t["Parameters"] and partitions(glue, "orders") == {}
    assert HudiTable.load(path).read_snapshot().num_rows == 2  # the data committed
    sync(path, options("orders"), glue)
    assert len(partitions(glue, "orders")) == 2
    t = glue.get_table(DatabaseName="lake", Name="orders")["Table"]
    assert t["Parameters"]["last_commit_time_sync"] == result.instant_time
    # ignore_exceptions: a warning instead.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ignoring = {**GLUE_SYNC, **options("orders"), "hoodie.datasource.hive_sync.ignore_exceptions": "true"}
        sync_catalogs(path, WriteConfig.from_options(ignoring, path).sync, {GLUE: UnreachableGlue(glue)},
                      instant=result.instant_time)
    assert any("AWS Glue sync" in str(w.message) for w in caught)


def test_glue_without_region_or_credentials_is_refused_naming_the_keys(monkeypatch, tmp_path):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    problems = glue_settings_problems(WriteConfig.from_options({**GLUE_SYNC, **options("t")}).sync)
    assert len(problems) == 2
    assert "needs an AWS region: set hoodie.aws.glue.region" in problems[0]
    assert "found no AWS credentials" in problems[1]
    assert glue_settings_problems(WriteConfig.from_options(
        {**GLUE_SYNC, **options("t", **{"hoodie.aws.glue.region": "eu-west-1"})}).sync)[0].startswith(
        "hoodie.meta.sync.client.tool.class=org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool found no AWS credentials")


@pytest.mark.parametrize(("extra", "message"), [
    ({"hoodie.datasource.hive_sync.partition_fields": "region"},
     "hoodie.datasource.hive_sync.partition_fields='region' are not the partition fields of table /t (day)"),
    ({"hoodie.datasource.hive_sync.mode": "thrift"},
     "hoodie.datasource.hive_sync.mode='thrift': expected one of hms, hiveql, jdbc"),
    ({"hoodie.datasource.hive_sync.mode": "jdbc"}, "hoodie.datasource.hive_sync.mode='jdbc' is not supported"),
    ({"hoodie.meta.sync.client.tool.class": "org.apache.hudi.sync.datahub.DataHubSyncTool"},
     "hoodie.meta.sync.client.tool.class='org.apache.hudi.sync.datahub.DataHubSyncTool': this engine runs "
     "HiveSyncTool and AwsGlueCatalogSyncTool"),
    ({"hoodie.datasource.hive_sync.partition_extractor_class": "NonPartitionedExtractor"},
     "hoodie.datasource.hive_sync.partition_extractor_class=NonPartitionedExtractor contradicts the partition "
     "fields day"),
])
def test_contradicting_sync_settings_are_refused_before_the_write(extra, message):
    with pytest.raises(ConfigError) as e:
        WriteConfig.from_options({**GLUE_SYNC, **options("t", **extra)}, "/t")
    assert message in str(e.value)


def test_sync_partition_fields_are_checked_against_an_existing_table(tmp_path):
    path = str(tmp_path / "orders")
    write_table(rows([1], ["2024-01-01"]), path, options("orders"))
    written = {k: v for k, v in options("orders").items() if k != "hoodie.datasource.write.partitionpath.field"}
    config = WriteConfig.from_options({**GLUE_SYNC, **written, "hoodie.datasource.hive_sync.partition_fields": "name"})
    with pytest.raises(ConfigError, match="are not the partition fields of table"):
        config.for_table(TableConfig.load(TableLocation.of(path)), path)


def test_write_table_refuses_sync_options_it_would_not_honour(tmp_path):
    path = str(tmp_path / "orders")
    with pytest.raises(ConfigError, match="write_table does not sync"):
        write_table(rows([1], ["2024-01-01"]), path, {**GLUE_SYNC, **options("orders")})
    assert not (tmp_path / "orders").exists()
