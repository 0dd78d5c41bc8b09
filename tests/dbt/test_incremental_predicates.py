"""`incremental_predicates` on Hudi models (docs/dbt.md#incremental_predicates), with real dbt in one process.

Used: a merge whose predicates name the partition column and whose rows all land inside them: the commit writes the
admitted partition's file group only, and the table equals a twin model merged without predicates (hudi-rs reads
both). Refused by name, nothing written: a run whose rows land in a partition the predicates exclude, and a
predicate on a column that is not a partition column (`hudi_incremental` spelling; the dbt-spark spelling's refusal
is dbt's own suite, adapter_suites/suite_delta_set.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt_helpers import node, run_driver, write_small_project
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.timeline import Action

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "preds"
ROWS = """
{% if var('step') == 1 %}
select cast(id as int) as id, cast(id * 10 as int) as v, cast((id - 1) div 3 + 1 as int) as day from range(1, 10)
{% elif var('step') == 2 %}
select * from values (7, 700, 3), (10, 1000, 3) as t(id, v, day)
{% else %}
select * from values (1, 100, 1), (8, 800, 3) as t(id, v, day)
{% endif %}
"""
MERGE = "materialized='incremental', file_format='hudi', incremental_strategy='merge', unique_key='id', " \
        "partition_by='day'"
MODELS = {
    "scoped": f"""{{{{ config({MERGE}, incremental_predicates=["DBT_INTERNAL_DEST.day >= 3"]) }}}}{ROWS}""",
    "plain": f"""{{{{ config({MERGE}) }}}}{ROWS}""",
    "by_value": """{{ config(materialized='hudi_incremental', unique_key='id', partition_by='day',
                           incremental_predicates=['v > 0']) }}""" + ROWS,
}


def commits(path: Path) -> list[dict]:
    """The completed commits' metadata as Hudi's JSON (read through the timeline: either layout)."""
    timeline = HudiTable.load(str(path)).timeline
    return [json.loads(timeline.commit_metadata(i).to_json()) for i in timeline.completed_commits()
            if i.action is Action.COMMIT]


def test_predicates_on_the_partition_column_are_used_and_others_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_small_project(project, "predicates", SCHEMA, MODELS)
    (project / "dbt_project.yml").write_text((project / "dbt_project.yml").read_text().replace(
        "vars: {day: 1}", "vars: {step: 1}"))
    first, second, outside = run_driver(project, [
        {"dbt": ["run"]},
        {"dbt": ["run", "--vars", "{step: 2}"]},
        {"dbt": ["run", "--select", "scoped", "--vars", "{step: 3}"]},
    ], tmp_path / "run", timeout=900)
    assert first["success"], first
    warehouse = project / "spark-warehouse" / f"{SCHEMA}.db"
    scoped, plain = warehouse / "scoped", warehouse / "plain"

    # used: one partition of three written, the same rows as the merge without predicates
    assert node(second, "scoped")["status"] == "success" and node(second, "plain")["status"] == "success"
    merged = commits(scoped)[-1]
    assert merged["operationType"] == "UPSERT"
    assert [p.rsplit("=", 1)[-1] for p in merged["partitionToWriteStats"]] == ["3"]
    assert len({s["fileId"] for stats in commits(scoped)[0]["partitionToWriteStats"].values() for s in stats}) == 3
    want = sorted([(i, i * 10, (i - 1) // 3 + 1) for i in range(1, 10) if i != 7] + [(7, 700, 3), (10, 1000, 3)])
    for path in (scoped, plain):
        t = rs_snapshot(path)
        assert sorted(zip(*(t.column(c).to_pylist() for c in ("id", "v", "day")), strict=True)) == want, path

    # refused: a column that is not a partition column (at the merge, before anything is written)
    by_value = node(second, "by_value")
    assert by_value["status"] == "error"
    assert ("model by_value: incremental_predicates[0] 'v > 0' reads column `v`, which is not a partition column "
            "(partition_by: day)") in by_value["message"]
    assert "would write a second row for their keys" in by_value["message"]
    assert [c["operationType"] for c in commits(warehouse / "by_value")] == ["BULK_INSERT"]

    # refused: a row landing in a partition the predicates exclude; the table is as it was
    assert not outside["success"]
    msg = node(outside, "scoped")["message"]
    assert "model scoped: rows of this run land in partitions the incremental_predicates exclude (day=1)" in msg
    assert "Nothing was written" in msg
    assert [c["operationType"] for c in commits(scoped)] == ["BULK_INSERT", "UPSERT"]
    timeline = HudiTable.load(str(scoped)).timeline
    assert all(i.is_completed for i in timeline.instants), timeline.instants  # none begun
