"""Catalog sync from dbt (docs/catalog-sync.md): a model with `hive_sync: true` is synced into the project's Hive
metastore after each run, its relation becoming the entry HiveSyncTool writes (Hudi's input format, partitions,
last_commit_time_sync) that Spark and `ref()` keep reading; `dbt run-operation hudi_sync` syncs an existing table
(a MERGE_ON_READ model's _ro / _rt entries beside dbt's own)."""
from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import node, run_driver, write_small_project

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "cs"
ORDERS = """{{ config(materialized='hudi_incremental', unique_key='id', partition_by='day', hive_sync=true) }}
select cast(id as bigint) as id, cast({{ var('day') }} as bigint) as ts, concat('d', {{ var('day') }}) as day
from range({{ var('day') }} * 10, {{ var('day') }} * 10 + 3)
"""
EVENTS = """{{ config(materialized='hudi_incremental', unique_key='id', table_type='mor') }}
select cast(1 as bigint) as id, cast({{ var('day') }} as bigint) as ts
"""
DOWNSTREAM = """select count(*) as n from {{ ref('orders') }}"""
ENTRY = """
from hudi_engine.spark.hive_metastore import HiveMetastoreClient
m = HiveMetastoreClient(spark)
result = {}
for name in ("orders", "events", "events_ro", "events_rt"):
    e = m.get_table("cs", name)
    result[name] = None if e is None else {
        "input_format": e.input_format, "provider": e.params.get("spark.sql.sources.provider"),
        "last_commit_time_sync": e.params.get("last_commit_time_sync"),
        "partitions": sorted("/".join(v) for v in m.partitions(e)) if e.partition_keys else []}
"""


def write_project(root: Path) -> None:
    write_small_project(root, "sync", SCHEMA, {"orders": ORDERS, "events": EVENTS, "downstream": DOWNSTREAM}, threads=1)


def test_a_synced_model_is_the_one_entry_and_hudi_sync_syncs_an_existing_table(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project)
    first, second, downstream, read, events, sync_op, entries = run_driver(project, [
        {"dbt": ["run", "--select", "orders"]},
        {"dbt": ["run", "--select", "orders", "--vars", "{day: 2}"]},
        {"dbt": ["run", "--select", "downstream"]},
        {"sql": f"select id, day from {SCHEMA}.orders order by id"},
        {"dbt": ["run", "--select", "events"]},
        {"dbt": ["run-operation", "hudi_sync", "--args", "{model: events, options: "
                 "{hoodie.datasource.hive_sync.enable: true}}"]},
        {"python": ENTRY},
    ], tmp_path / "run", timeout=1200)
    assert first["success"] and second["success"], (first, second)
    instant = node(second, "orders")["adapter_response"]["instant_time"]
    assert downstream["success"], downstream
    assert read["error"] is None and [r["day"] for r in read["rows"]] == ["d1"] * 3 + ["d2"] * 3
    assert events["success"] and sync_op["success"], (events, sync_op)
    seen = entries["result"]
    assert entries["error"] is None, entries
    orders = seen["orders"]
    assert orders["input_format"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert orders["provider"] == "hudi" and orders["last_commit_time_sync"] == instant
    assert orders["partitions"] == ["d1", "d2"]
    # MERGE_ON_READ: dbt keeps its own entry for ref(); the sync adds _ro and _rt.
    assert seen["events"] is not None and seen["events"]["input_format"] != orders["input_format"]
    assert seen["events_ro"]["input_format"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert seen["events_rt"]["input_format"] == "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
