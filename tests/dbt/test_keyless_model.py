"""A `hudi_incremental` model without unique_key (docs/keyless.md): an append-only model writing a keyless Hudi
table (keys generated, `<instant>_<split>_<row>`). Two runs with real dbt: the first bulk_inserts, the second
inserts (appends); hudi-rs reads every row with a unique generated key. A keyless model asking for upsert is one
compile error naming the model, and nothing is written."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt_helpers import node, run_driver, write_small_project
from oracle import rs_snapshot

from hudi_engine import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "kl"
EVENTS = """{{ config(materialized='hudi_incremental', partition_by='day') }}
select cast(id as bigint) as id, concat('e', cast(id as string)) as event, {{ var('day') }} as day
from range({{ var('day') }} * 100, {{ var('day') }} * 100 + 5)
"""
UPSERTS = """{{ config(materialized='hudi_incremental', incremental_strategy='upsert') }}
select 1 as id
"""


def write_project(root: Path) -> None:
    write_small_project(root, "keyless", SCHEMA, {"events": EVENTS, "upserts": UPSERTS}, threads=1)


def test_keyless_model_appends_over_two_runs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_project(project)
    results = run_driver(project, [
        {"dbt": ["run", "--select", "events"]},
        {"dbt": ["run", "--select", "events", "--vars", "{day: 2}"]},
        {"dbt": ["run", "--select", "upserts"]},
    ], tmp_path / "run", timeout=900)
    first, second, refused = results
    assert first["success"] and second["success"], (first, second)
    path = project / "spark-warehouse" / f"{SCHEMA}.db" / "events"
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.recordkey.fields" not in props
    assert "hoodie.table.keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator" in props
    timeline = HudiTable.load(str(path)).timeline
    operations = sorted(timeline.commit_metadata(i).operation_type for i in timeline.completed_commits())
    assert operations == ["BULK_INSERT", "INSERT"]

    rows = rs_snapshot(path)
    assert sorted(rows.column("id").to_pylist()) == [100, 101, 102, 103, 104, 200, 201, 202, 203, 204]
    keys = rows.column("_hoodie_record_key").to_pylist()
    assert len(set(keys)) == 10 and all(re.fullmatch(r"\d{17}_\d+_\d+", k) for k in keys)
    instants = {k.split("_")[0] for k in keys}
    assert instants == set(rows.column("_hoodie_commit_time").to_pylist()) and len(instants) == 2

    assert not refused["success"]
    msg = node(refused, "upserts")["message"]
    assert "model upserts" in msg and "incremental_strategy='upsert'" in msg and "unique_key" in msg
    assert not (project / "spark-warehouse" / f"{SCHEMA}.db" / "upserts").exists()
