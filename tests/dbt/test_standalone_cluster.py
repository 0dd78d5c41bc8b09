"""The adapter with `spark.master` pointing at a local standalone cluster whose executors never had this project
installed (issue 14): their Python is another virtual environment with the engine's dependencies only, handed to
them packed in `spark.archives` as docs/operations.md says for YARN and Kubernetes (`executor_pythons`), and nothing of this
checkout is on their path. Two days of a COW and a MOR `hudi_incremental` model, the Hudi tests of the second day
(the timeline table function runs on the executors), read back with hudi-rs and Spark SQL; the tables equal those
of the same project run in local mode."""
from __future__ import annotations

import pytest
from dbt_helpers import node, run_driver
from oracle import rs_snapshot

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MODEL = """
{{{{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part',
          table_type='{table_type}') }}}}
select id, part, val, ts from values
  (1, 'a', 10, 1, 1), (2, 'a', 20, 1, 1), (3, 'b', 30, 1, 1), (2, 'a', 21, 2, 2), (4, 'c', 40, 2, 2)
  as t(id, part, val, ts, day)
where day {{% if is_incremental() %}}={{% else %}}<={{% endif %}} {{{{ var('day') }}}}
"""

SCHEMA_YML = """
version: 2
models:
  - name: events_cow
    data_tests: [hudi_no_pending_instants, hudi_unique_record_key]
  - name: events_mor
    data_tests: [hudi_no_pending_instants, hudi_unique_record_key]
"""

MODELS = ("events_cow", "events_mor")
WANT = [(1, "a", 10), (2, "a", 21), (3, "b", 30), (4, "c", 40)]


def _project(root, server_side_parameters: dict[str, str]):
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: cluster\nversion: '1.0'\nconfig-version: 2\nprofile: cluster\n"
                                          "vars: {day: 1}\n")
    for name, table_type in zip(MODELS, ("cow", "mor")):
        (root / "models" / f"{name}.sql").write_text(MODEL.format(table_type=table_type))
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)
    params = "".join(f'        {k}: "{v}"\n' for k, v in server_side_parameters.items())
    (root / "profiles.yml").write_text(f"""
cluster:
  target: dev
  outputs:
    dev:
      type: hudi
      schema: cl
      server_side_parameters:
{params}""")
    return root


def _rows(project, model: str) -> list[tuple]:
    t = rs_snapshot(project / "spark-warehouse" / "cl.db" / model)
    return sorted(zip(*(t.column(c).to_pylist() for c in ("id", "part", "val"))))


def test_two_days_on_a_cluster_whose_executors_lack_the_project(tmp_path, standalone_master, executor_pythons):
    cluster = _project(tmp_path / "cluster", {
        "spark.master": standalone_master, "spark.executor.memory": "512m", "spark.executor.cores": "1",
        "spark.cores.max": "2", "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.sql.shuffle.partitions": "2", "spark.archives": f"{executor_pythons.archive}#environment",
        "spark.sql.execution.pyspark.python": "./environment/bin/python"})
    steps = [{"dbt": ["run", "--vars", "{day: 1}"]}, {"dbt": ["build", "--vars", "{day: 2}"]},
             *[{"sql": f"select id, part, val from cl.{m}"} for m in MODELS], {"info": True}]
    day1, day2, sql_cow, sql_mor, info = run_driver(cluster, steps, tmp_path / "cluster-driver")
    info = info["info"]
    assert info["master"] == standalone_master and info["executors"] == 2, info
    # The executors ran the venv unpacked from the archive in their work folders, had no hudi_engine, and got the
    # driver's.
    pythons = info["executor_pythons"]
    assert len(pythons) == 2 and all(p.endswith("/environment/bin/python") for p in pythons), info
    assert info["executor_engines"] == ["None"], info
    assert info["engine_shipped"] and info["engine_shipped"].endswith(".zip"), info
    assert day1["success"] and day2["success"], (day1, day2)
    tests = [r for r in day2["results"] if (r["unique_id"] or "").startswith("test.")]
    assert len(tests) == 4 and all(r["status"] == "pass" for r in tests), tests
    for m, sql in zip(MODELS, (sql_cow, sql_mor)):
        response = node(day2, m)["adapter_response"]
        assert (response["operation"], response["rows_inserted"], response["rows_updated"]) == ("upsert", 1, 1), m
        assert sql["error"] is None and sorted((r["id"], r["part"], r["val"]) for r in sql["rows"]) == WANT, m

    local = _project(tmp_path / "local", {"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    day1, day2 = run_driver(local, steps[:2], tmp_path / "local-driver")
    assert day1["success"] and day2["success"], (day1, day2)
    for m in MODELS:
        assert _rows(cluster, m) == _rows(local, m) == WANT, m
