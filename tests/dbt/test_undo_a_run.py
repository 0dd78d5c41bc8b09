"""Undoing a bad `dbt run` (docs/dbt.md): a model run, `hudi_savepoint`, a bad run, `hudi_restore`: the model's rows
are the first run's again (hudi-rs and the engine read them), the table holds one completed savepoint and one
restore, and the next run upserts on top of the restored table. A restore of a table without a savepoint is refused
by name."""
from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import run_driver, write_small_project
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.timeline.instant import Action, State

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "undo"
ORDERS = """{{ config(materialized='hudi_incremental', unique_key='id', partition_by='day') }}
select cast(id as bigint) as id, concat('v', cast({{ var('day') }} as string)) as state, id % 2 as day
from range(0, {{ var('day') }} * 3)
"""
OTHER = """{{ config(materialized='hudi_incremental', unique_key='id') }}
select 1 as id
"""


def test_savepoint_before_a_bad_run_and_restore_after(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_small_project(project, "undo", SCHEMA, {"orders": ORDERS, "other": OTHER}, threads=1)
    steps = [
        {"dbt": ["run"]},
        {"dbt": ["run-operation", "hudi_savepoint", "--args", "{model: orders, comment: before day 2}"]},
        {"dbt": ["run", "--select", "orders", "--vars", "{day: 2}"]},  # the bad run
        {"dbt": ["run-operation", "hudi_savepoints", "--args", "{model: orders}"]},
        {"dbt": ["run-operation", "hudi_restore", "--args", "{model: orders}"]},
        {"dbt": ["run-operation", "hudi_restore", "--args", "{model: other}"]},
        {"dbt": ["run", "--select", "orders", "--vars", "{day: 1}"]},
    ]
    results = run_driver(project, steps, tmp_path / "run", timeout=900)
    first, saved, bad, listed, restored, refused, after = results
    assert all(r["success"] for r in (first, saved, bad, listed, restored, after)), results
    out = (tmp_path / "run" / "stdout.txt").read_text()
    path = project / "spark-warehouse" / f"{SCHEMA}.db" / "orders"
    table = HudiTable.load(str(path))
    savepoint = table.savepoints()
    assert len(savepoint) == 1 and savepoint[0].comments == "before day 2"
    assert f"hudi_savepoints {path}: savepoints: {savepoint[0].instant_time} (before day 2)" in out
    assert f"restored to {savepoint[0].instant_time}; rolled back commit " in out
    restores = table.timeline.filter_by([Action.RESTORE], [State.COMPLETED])
    assert len(restores) == 1
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    assert len(commits) == 2 and commits[0] == savepoint[0].instant_time and commits[1] > restores[0].timestamp

    rows = rs_snapshot(path).sort_by("id")
    assert rows.column("id").to_pylist() == [0, 1, 2] and rows.column("state").to_pylist() == ["v1"] * 3
    assert HudiTable.load(str(path)).read_snapshot().num_rows == 3

    assert not refused["success"]
    assert "hudi_restore" in out and "the table has no savepoint" in out
