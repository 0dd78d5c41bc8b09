"""The same adapter with `spark.master` pointing at a local standalone cluster (executors in their own JVMs and
Python workers): a MOR model upserted on two days, read back with hudi-rs and with Spark SQL."""
from __future__ import annotations

import pytest
from dbt_helpers import node, run_driver
from oracle import rs_snapshot

from hudi_engine.spark.session import standalone_cluster

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MODEL = """
{{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part',
          table_type='mor') }}
select id, part, val, ts from values
  (1, 'a', 10, 1, 1), (2, 'a', 20, 1, 1), (3, 'b', 30, 1, 1), (2, 'a', 21, 2, 2), (4, 'c', 40, 2, 2)
  as t(id, part, val, ts, day)
where day {% if is_incremental() %}={% else %}<={% endif %} {{ var('day') }}
"""


def test_two_days_on_a_standalone_cluster(tmp_path):
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: cluster\nversion: '1.0'\nconfig-version: 2\nprofile: cluster\n"
                                             "vars: {day: 1}\n")
    (project / "models" / "events.sql").write_text(MODEL)
    with standalone_cluster(n_workers=2) as master:
        (project / "profiles.yml").write_text(f"""
cluster:
  target: dev
  outputs:
    dev:
      type: hudi
      schema: cl
      server_side_parameters:
        spark.master: "{master}"
        spark.executor.memory: "512m"
        spark.executor.cores: "1"
        spark.sql.shuffle.partitions: "2"
""")
        steps = [{"dbt": ["run", "--vars", "{day: 1}"]}, {"dbt": ["run", "--vars", "{day: 2}"]},
                 {"sql": "select id, part, val from cl.events"}, {"info": True}]
        day1, day2, sql, info = run_driver(project, steps, tmp_path / "driver")
    assert info["info"]["master"] == master and info["info"]["executors"] == 2, info
    assert day1["success"] and day2["success"], (day1, day2)
    response = node(day2, "events")["adapter_response"]
    assert (response["operation"], response["rows_inserted"], response["rows_updated"]) == ("upsert", 1, 1)
    want = [(1, "a", 10), (2, "a", 21), (3, "b", 30), (4, "c", 40)]
    t = rs_snapshot(project / "spark-warehouse" / "cl.db" / "events")
    assert sorted(zip(*(t.column(c).to_pylist() for c in ("id", "part", "val")))) == want
    assert sql["error"] is None and sorted((r["id"], r["part"], r["val"]) for r in sql["rows"]) == want
