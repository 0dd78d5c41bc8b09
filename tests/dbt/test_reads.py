"""dbt reads of Hudi tables: `ref()`, `{{ this }}` and `hudi_table_changes` render as views planned on Spark's parquet
reader, see every commit (one made outside dbt by the engine's Python API too), and equal hudi-rs.

Day 1 builds a MOR table (`orders`) and its readers; then the engine's Python API commits an update to `orders`
outside dbt; day 2 (the same process, a later dbt invocation) upserts `orders` again and reruns the readers.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from dbt_helpers import node, run_driver
from oracle import rs_snapshot

from hudi_engine import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "rd"
ROWS = [(1, "a", 10, 1), (2, "a", 20, 1), (3, "b", 30, 1), (4, "c", 40, 1), (5, "d", 50, 1),
        (2, "a", 21, 2), (6, "b", 60, 2)]
OUTSIDE = (3, "b", 333)  # the update the engine's Python API commits between the two days

MODELS = {
    "orders": """
        {{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part',
                  table_type='mor') }}
        select id, part, val, ts from {{ ref('events') }} where day = {{ var('day') }}
    """,
    # A plain dbt model reading the Hudi table: its ref() is the view.
    "orders_copy": """
        {{ config(materialized='table') }}
        select id, part, val from {{ ref('orders') }}
    """,
    # Rows of `orders` changed since this model last ran, the upstream commit time kept as the checkpoint.
    "orders_changes": """
        {{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts') }}
        select o.id, o.part, o.val, o.ts, o._hoodie_commit_time as source_commit_time
        from {% if is_incremental() %}
               {{ hudi_table_changes(ref('orders'), hudi_max_value(this, 'source_commit_time', 'earliest')) }}
             {% else %}
               {{ ref('orders') }}
             {% endif %} o
    """,
    # {{ this }} in the model's own SQL.
    "this_reader": """
        {{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts') }}
        select id, part, val, ts from {{ ref('events') }}
        {% if is_incremental() %} where ts > (select max(ts) from {{ this }}) {% else %} where day = 1 {% endif %}
    """,
}

SCHEMA_YML = """
version: 2
models:
  - name: orders
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

OUTSIDE_COMMIT = f"""
from hudi_engine.spark import write
df = spark.createDataFrame([({OUTSIDE[0]}, '{OUTSIDE[1]}', {OUTSIDE[2]}, '2024-01-01 12:00:00')],
                           'id bigint, part string, val int, ts string').selectExpr('id', 'part', 'val',
                                                                                  'cast(ts as timestamp) as ts')
result = write(df, path, {{'hoodie.datasource.write.operation': 'upsert'}}).instant_time
"""


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "seeds").mkdir()
    (root / "dbt_project.yml").write_text(textwrap.dedent("""
        name: reads
        version: "1.0"
        config-version: 2
        profile: reads
        vars: {day: 1}
        seeds:
          reads:
            events:
              +column_types: {id: bigint, part: string, val: int, ts: timestamp, day: int}
    """))
    (root / "profiles.yml").write_text(textwrap.dedent(f"""
        reads:
          target: dev
          outputs:
            dev:
              type: hudi
              schema: {SCHEMA}
              threads: 2
              server_side_parameters:
                spark.master: "local[2]"
                spark.sql.shuffle.partitions: "2"
    """))
    lines = ["id,part,val,ts,day"] + [f"{i},{p},{v},2024-01-0{d} 00:00:00,{d}" for i, p, v, d in ROWS]
    (root / "seeds" / "events.csv").write_text("\n".join(lines) + "\n")
    for name, sql in MODELS.items():
        (root / "models" / f"{name}.sql").write_text(textwrap.dedent(sql))
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)


def compiled(project: Path, name: str) -> str:
    return (project / "target" / "compiled" / "reads" / "models" / f"{name}.sql").read_text()


def table_path(project: Path, name: str) -> Path:
    return project / "spark-warehouse" / f"{SCHEMA}.db" / name


def rows_of(t, columns=("id", "part", "val")) -> list[tuple]:
    return sorted(zip(*(t.column(c).to_pylist() for c in columns)))


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    root = tmp_path_factory.mktemp("reads")
    project = root / "project"
    write_project(project)
    steps = [{"dbt": ["seed"]}, {"dbt": ["run", "--vars", "{day: 1}"]}]
    day1 = run_driver(project, steps, root / "day1")
    compiled_day1 = {name: compiled(project, name) for name in MODELS}
    orders = table_path(project, "orders")
    after_day1 = HudiTable.load(str(orders)).timeline.completed_commits().last().timestamp
    steps = [
        {"dbt": ["show", "--inline", "select 1"]},  # starts the session (with the project's metastore)
        # The engine's Python API commits outside dbt, before day 2's dbt runs (a new process: a later dbt run).
        {"python": f"path = {str(orders)!r}\n{OUTSIDE_COMMIT}"},
        {"dbt": ["run", "--vars", "{day: 2}"]},
        {"dbt": ["test", "--vars", "{day: 2}", "--select", "orders"]},
        {"dbt": ["show", "--inline", "select id, val from {{ ref('orders') }} order by id", "--vars", "{day: 2}",
                 "--limit", "50"]},
        {"sql": f"select id, part, val from {SCHEMA}.orders"},
        {"sql": f"select id, part, val from {SCHEMA}.orders_copy"},
        {"sql": f"select id, part, val, source_commit_time from {SCHEMA}.orders_changes"},
    ]
    day2 = run_driver(project, steps, root / "day2")[1:]
    return {"project": project, "day1": day1, "day2": day2, "compiled_day1": compiled_day1,
            "after_day1": after_day1, "compiled_day2": {name: compiled(project, name) for name in MODELS}}


def test_runs_succeed(days):
    assert all(step["success"] for step in days["day1"]), days["day1"]
    outside, run2, test, show = days["day2"][:4]
    assert outside["error"] is None and outside["result"]
    for step in (run2, test, show):
        assert step["success"], step


def test_ref_renders_a_view_of_the_latest_commit_and_reads_the_merged_snapshot(days):
    project = days["project"]
    orders = HudiTable.load(str(table_path(project, "orders")))
    latest = orders.timeline.completed_commits().last().timestamp
    assert f"`hudi__{SCHEMA}__orders__{latest}`" in days["compiled_day2"]["orders_copy"]
    assert f"`hudi__{SCHEMA}__orders__{days['after_day1']}`" in days["compiled_day1"]["orders_copy"]
    expected = rows_of(rs_snapshot(table_path(project, "orders")))
    assert (OUTSIDE[0], OUTSIDE[1], OUTSIDE[2]) in expected  # the commit made outside dbt
    assert (2, "a", 21) in expected and (6, "b", 60) in expected  # day 2's upsert
    copy_rows = sorted(tuple(r.values()) for r in days["day2"][5]["rows"])
    assert copy_rows == expected
    catalog_rows = sorted(tuple(r.values()) for r in days["day2"][4]["rows"])
    assert catalog_rows == expected  # SQL on the catalog table (the hudi source) agrees
    shown = node(days["day2"][3], "inline_query")["rows"]  # dbt show of a ref()
    assert sorted((r["id"], r["val"]) for r in shown) == [(i, v) for i, _, v in expected]


def test_hudi_table_changes_pulls_what_changed_since_the_last_run(days):
    project = days["project"]
    day1_instant = days["after_day1"]
    orders = HudiTable.load(str(table_path(project, "orders")))
    latest = orders.timeline.completed_commits().last().timestamp
    sql = days["compiled_day2"]["orders_changes"]
    assert re.search(rf"`hudi__{SCHEMA}__orders__changes__{day1_instant}__{latest}`", sql), sql
    assert "hudi__" in days["compiled_day1"]["orders_changes"]  # the first run read the ref's view
    rows = days["day2"][6]["rows"]
    expected = rows_of(rs_snapshot(table_path(project, "orders")))
    assert sorted((r["id"], r["part"], r["val"]) for r in rows) == expected
    commit_times = {r["id"]: r["source_commit_time"] for r in rows}
    changed = {i for i, _, _ in expected if commit_times[i] > day1_instant}
    assert changed == {OUTSIDE[0], 2, 6}  # the outside update and day 2's upsert, nothing else was pulled again
    pulled = rs_snapshot(table_path(project, "orders_changes"))
    assert max(pulled.column("source_commit_time").to_pylist()) == latest


def test_this_renders_a_view_in_the_models_sql_only(days):
    project = days["project"]
    sql = days["compiled_day2"]["this_reader"]
    this = HudiTable.load(str(table_path(project, "this_reader")))
    day1 = this.timeline.completed_commits()[0].timestamp
    assert f"`hudi__{SCHEMA}__this_reader__{day1}`" in sql, sql
    assert rows_of(rs_snapshot(table_path(project, "this_reader"))) == sorted(
        {i: (i, p, v) for i, p, v, _ in ROWS}.values())
    assert node(days["day2"][1], "this_reader")["status"] == "success"
