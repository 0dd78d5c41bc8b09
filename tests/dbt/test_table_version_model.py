"""A `hudi_incremental` model with `table_version=9` (issue 26): real dbt creates a Hudi 1.x table (timeline layout
2) and upserts into it on the next run; hudi-rs reads the model's rows; a later run asking for version 6 without
--full-refresh is refused naming both versions, and the table is left as it was."""
from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import node, run_driver, write_small_project
from oracle import rs_snapshot

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "tv"
ORDERS = """{{ config(materialized='hudi_incremental', unique_key='id', partition_by='day',
                      table_version=var('version', 9)) }}
select cast(id as bigint) as id, concat('v', cast({{ var('run') }} as string)) as state, id % 2 as day
from range(0, {{ var('run') }} * 3)
"""


def test_a_version_9_model_is_created_and_upserted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_small_project(project, "tversion", SCHEMA, {"orders": ORDERS}, threads=1)
    first, second, refused = run_driver(project, [
        {"dbt": ["run", "--vars", "{run: 1}"]},
        {"dbt": ["run", "--vars", "{run: 2}"]},
        {"dbt": ["run", "--vars", "{run: 3, version: 6}"]},
    ], tmp_path / "run", timeout=900)
    assert first["success"] and second["success"], (first, second)
    path = project / "spark-warehouse" / f"{SCHEMA}.db" / "orders"
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.version=9" in props and "hoodie.timeline.layout.version=2" in props
    completed = sorted(p.name for p in (path / ".hoodie" / "timeline").glob("*_*.commit"))
    assert len(completed) == 2, "two instants, completion times in their names"

    rows = rs_snapshot(path).sort_by("id")
    assert rows.column("id").to_pylist() == list(range(6))
    assert rows.column("state").to_pylist() == ["v2"] * 6

    assert not refused["success"]
    message = node(refused, "orders")["message"]
    assert "table_version hoodie.table.version=9 -> 6" in message and "--full-refresh" in message, message
    assert sorted(p.name for p in (path / ".hoodie" / "timeline").glob("*_*.commit")) == completed
