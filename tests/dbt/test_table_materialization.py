"""dbt-spark's `materialized='table'` with `file_format='hudi'` (issue 29): every run rebuilds the model's Hudi table
in one instant, `bulk_insert` the first time and `insert_overwrite_table` after, so time travel to the previous
build keeps working; checked against hudi-rs. Other file formats stay dbt-spark's own table materialization."""
from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import node, run_driver, write_small_project
from oracle import rs_snapshot

from hudi_engine import HudiTable

SCHEMA = "tables"
ROWS = {1: [(1, "a", 10), (2, "b", 20), (3, "a", 30)], 2: [(2, "b", 21), (4, "b", 40)]}


def select(day_var: str = "var('day')") -> str:
    day1 = " union all ".join(f"select {i} as id, '{p}' as part, {v} as val" for i, p, v in ROWS[1])
    day2 = " union all ".join(f"select {i} as id, '{p}' as part, {v} as val" for i, p, v in ROWS[2])
    return f"{{% if {day_var} == 1 %}}{day1}{{% else %}}{day2}{{% endif %}}\n"


MODELS = {
    "t_cow": "{{ config(materialized='table', file_format='hudi', unique_key='id', partition_by='part') }}\n",
    "t_mor": "{{ config(materialized='table', file_format='hudi', tblproperties={'primaryKey': 'id', 'type': 'mor'}) }}\n",
    "t_keyless": "{{ config(materialized='table', file_format='hudi') }}\n",
    "t_parquet": "{{ config(materialized='table', file_format='parquet') }}\n",
}


def write_project(root: Path) -> None:
    write_small_project(root, "tables", SCHEMA, {name: config + select() for name, config in MODELS.items()}, threads=2)
    (root / "models" / "downstream.sql").write_text(
        "{{ config(materialized='view') }}\nselect id, val from {{ ref('t_cow') }}\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    project = root / "project"
    write_project(project)
    day1 = run_driver(project, [{"dbt": ["run", "--vars", "{day: 1}"]}], root / "day1")
    first = {m: HudiTable.load(table_path(project, m)).timeline.completed_commits().last().timestamp
             for m in ("t_cow", "t_mor", "t_keyless")}
    day2 = run_driver(project, [{"dbt": ["run", "--vars", "{day: 2}"]},
                                {"sql": f"select id, val from {SCHEMA}.downstream"},
                                {"sql": f"select id, val from {SCHEMA}.t_parquet"}], root / "day2")
    return {"project": project, "day1": day1, "day2": day2, "first": first}


def table_path(project: Path, name: str) -> str:
    return str(project / "spark-warehouse" / f"{SCHEMA}.db" / name)


def data(t) -> set[tuple]:
    return set(zip(t.column("id").to_pylist(), t.column("part").to_pylist(), t.column("val").to_pylist()))


def test_every_model_ran(built):
    for day in ("day1", "day2"):
        for name in [*MODELS, "downstream"]:
            assert node(built[day][0], name)["status"] == "success", (day, name, node(built[day][0], name))


@pytest.mark.parametrize("model", ["t_cow", "t_mor", "t_keyless"])
def test_each_run_is_one_instant_and_time_travel_keeps_the_old_build(built, model):
    path = table_path(built["project"], model)
    table = HudiTable.load(path)
    ops = [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_commits()]
    assert ops == ["BULK_INSERT", "INSERT_OVERWRITE_TABLE"]
    assert data(rs_snapshot(path)) == set(ROWS[2])
    assert data(rs_snapshot(path, as_of=built["first"][model])) == set(ROWS[1])


def test_table_settings(built):
    cow = HudiTable.load(table_path(built["project"], "t_cow")).config
    assert list(cow.record_key_fields) == ["id"] and list(cow.partition_fields) == ["part"]
    assert cow.table_type == "COPY_ON_WRITE"
    mor = HudiTable.load(table_path(built["project"], "t_mor")).config
    assert list(mor.record_key_fields) == ["id"] and mor.table_type == "MERGE_ON_READ"
    assert not list(HudiTable.load(table_path(built["project"], "t_keyless")).config.record_key_fields)


def test_reads_and_other_formats(built):
    downstream, parquet = built["day2"][1], built["day2"][2]
    assert sorted((r["id"], r["val"]) for r in downstream["rows"]) == sorted((i, v) for i, _, v in ROWS[2])
    assert sorted((r["id"], r["val"]) for r in parquet["rows"]) == sorted((i, v) for i, _, v in ROWS[2])
    assert not (Path(table_path(built["project"], "t_parquet")) / ".hoodie").exists()
