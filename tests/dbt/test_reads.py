"""dbt reads of Hudi tables: `ref()`, `source()` and `{{ this }}` render the catalog name (the adapter's default, the
native `hudi` source) or, with `spark.hudi_engine.native: "false"`, per-run views; either way they see every commit
(one made by another process too) and equal hudi-rs, and `hudi_table_changes` keeps its view.

Day 1 builds a MOR table (`orders`) and its readers. Day 2 is one later process: a `dbt show` reads `orders` (the
session resolves its catalog entry), another process commits an update to `orders` through the engine's Python
API, a model run must see it with no refresh, then the whole project runs again and is tested. With the native
source, a third process then runs the compiled SQL in a plain SparkSession on the project's metastore.
"""
from __future__ import annotations

import json
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
OUTSIDE = (3, "b", 333)  # the update another process commits between the two days

MODELS = {
    "orders": """
        {{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part',
                  table_type='mor') }}
        select id, part, val, ts from {{ ref('events') }} where day = {{ var('day') }}
    """,
    # A plain dbt model reading the Hudi table.
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
    # A Hudi table read as a dbt source (the table of the model `orders`).
    "from_source": """
        {{ config(materialized='table') }}
        -- depends_on: {{ ref('orders') }}
        select id, part, val from {{ source('hudi_src', 'orders') }}
    """,
}

SCHEMA_YML = f"""
version: 2
sources:
  - name: hudi_src
    schema: {SCHEMA}
    tables:
      - name: orders
models:
  - name: orders
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

# Run by another process: an upsert through the engine's Python API (Arrow rows, no Spark: the process needs no JVM).
OUTSIDE_WRITER = f"""
import datetime, sys
import pyarrow as pa
from hudi_engine import HudiTable
rows = pa.table({{'id': pa.array([{OUTSIDE[0]}], pa.int64()), 'part': ['{OUTSIDE[1]}'],
                 'val': pa.array([{OUTSIDE[2]}], pa.int32()),
                 'ts': pa.array([datetime.datetime(2024, 1, 1, 12)], pa.timestamp('us', 'UTC'))}})
print(HudiTable.load(sys.argv[1]).write(rows, {{'hoodie.datasource.write.operation': 'upsert'}}).instant_time)
"""

OUTSIDE_COMMIT = """
import subprocess, sys
done = subprocess.run([sys.executable, '-c', writer, path], capture_output=True, text=True)
assert done.returncode == 0, done.stderr[-4000:]
result = done.stdout.strip().splitlines()[-1]
"""

# A plain SparkSession (not dbt's) on the project's warehouse and metastore, with the native source and the
# engine's Python sources registered: the compiled SQL of dbt's models runs there.
FRESH_SESSION = """
from pyspark.sql import SparkSession
from hudi_engine.spark import native_conf, register_data_source
conf = native_conf({'spark.master': 'local[1]', 'spark.sql.warehouse.dir': f'{root}/spark-warehouse',
                    'spark.hadoop.javax.jdo.option.ConnectionURL':
                        f'jdbc:derby:;databaseName={root}/metastore_db;create=false',
                    'spark.ui.enabled': 'false'})
builder = SparkSession.builder.enableHiveSupport()
for k, v in conf.items():
    builder = builder.config(k, v)
spark = builder.getOrCreate()
register_data_source(spark)
result = {name: [r.asDict() for r in spark.sql(sql).collect()] for name, sql in queries.items()}
result['plan'] = spark.sql('select * from rd.this_reader')._jdf.queryExecution().executedPlan().toString()
spark.stop()
"""


def write_project(root: Path, native: bool) -> None:
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
    opt_out = "" if native else '\n                spark.hudi_engine.native: "false"'
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
                spark.sql.shuffle.partitions: "2"{opt_out}
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


def sql_rows(result: dict) -> list[tuple]:
    return sorted(tuple(r.values()) for r in result["rows"])


DAY2 = ("show1", "outside", "copy_run", "copy1", "run2", "test", "show2", "orders", "copy2", "changes", "from_source",
        "plan")


def build_days(root: Path, native: bool) -> dict:
    project = root / "project"
    write_project(project, native)
    steps: list[dict] = [{"dbt": ["seed"]}, {"dbt": ["run", "--vars", "{day: 1}"]}]
    day1 = run_driver(project, steps, root / "day1")
    compiled_day1 = {name: compiled(project, name) for name in MODELS}
    orders = table_path(project, "orders")
    after_day1 = HudiTable.load(str(orders)).timeline.completed_commits().last().timestamp
    steps = [
        # Starts the session (with the project's metastore) and reads `orders` through it.
        {"dbt": ["show", "--inline", "select id, val from {{ ref('orders') }}", "--limit", "50"]},
        {"python": f"path = {str(orders)!r}\nwriter = {OUTSIDE_WRITER!r}\n{OUTSIDE_COMMIT}"},
        {"dbt": ["run", "--select", "orders_copy", "--vars", "{day: 1}"]},  # must see the other process's commit
        {"sql": f"select id, part, val from {SCHEMA}.orders_copy"},
        {"dbt": ["run", "--vars", "{day: 2}"]},
        {"dbt": ["test", "--vars", "{day: 2}", "--select", "orders"]},
        {"dbt": ["show", "--inline", "select id, val from {{ ref('orders') }} order by id", "--vars", "{day: 2}",
                 "--limit", "50"]},
        {"sql": f"select id, part, val from {SCHEMA}.orders"},
        {"sql": f"select id, part, val from {SCHEMA}.orders_copy"},
        {"sql": f"select id, part, val, source_commit_time from {SCHEMA}.orders_changes"},
        {"sql": f"select id, part, val from {SCHEMA}.from_source"},
        {"python": f"result = spark.sql('select * from {SCHEMA}.this_reader')._jdf.queryExecution()"
                   f".executedPlan().toString()"},
    ]
    day2 = dict(zip(DAY2, run_driver(project, steps, root / "day2")))
    out = {"project": project, "day1": day1, "day2": day2, "compiled_day1": compiled_day1, "after_day1": after_day1,
           "compiled_day2": {name: compiled(project, name) for name in MODELS},
           "manifest": json.loads((project / "target" / "manifest.json").read_text()),
           "stdout_day2": (root / "day2" / "stdout.txt").read_text(),
           "stderr_day2": (root / "day2" / "stderr.txt").read_text()}
    if native:
        # A third process, after dbt's ended (Derby allows one process on the metastore).
        queries = {name: compiled(project, name) for name in ("orders_copy", "from_source")}
        code = f"root = {str(project)!r}\nqueries = {queries!r}\n{FRESH_SESSION}"
        out["fresh"] = run_driver(project, [{"python": code}], root / "fresh")[0]
    return out


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    return build_days(tmp_path_factory.mktemp("reads-native"), native=True)


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    return build_days(tmp_path_factory.mktemp("reads-views"), native=False)


BOTH = pytest.mark.parametrize("mode", ["native", "views"])


@BOTH
def test_runs_succeed(mode, request):
    days = request.getfixturevalue(mode)
    assert all(step["success"] for step in days["day1"]), days["day1"]
    day2 = days["day2"]
    assert day2["outside"]["error"] is None and day2["outside"]["result"], day2["outside"]
    for name in ("show1", "copy_run", "run2", "test", "show2"):
        assert day2[name]["success"], day2[name]
    for name in ("copy1", "orders", "copy2", "changes", "from_source", "plan"):
        assert day2[name]["error"] is None, day2[name]
    # dbt's session scans a copy-on-write table's catalog name with Spark's parquet reader only when native.
    assert ("FileScan parquet" in day2["plan"]["result"]) == (mode == "native"), day2["plan"]["result"]


@BOTH
def test_a_commit_by_another_process_is_seen_by_the_next_model_run(mode, request):
    """The session read `orders` before another process committed; the next run of a reader sees that commit with
    no refresh (the native source plans every query; the views are registered anew by each run)."""
    days = request.getfixturevalue(mode)
    project, day2 = days["project"], days["day2"]
    before = {r["id"]: r["val"] for r in node(day2["show1"], "inline_query")["rows"]}
    assert before[OUTSIDE[0]] != OUTSIDE[2]
    outside = day2["outside"]["result"]
    commits = HudiTable.load(str(table_path(project, "orders"))).timeline.completed_commits()
    assert outside in {i.timestamp for i in commits}
    copied = sql_rows(day2["copy1"])
    assert (OUTSIDE[0], OUTSIDE[1], OUTSIDE[2]) in copied
    assert copied == rows_of(rs_snapshot(table_path(project, "orders"), as_of=outside))


@BOTH
def test_reads_see_the_merged_snapshot_of_the_latest_commit(mode, request):
    days = request.getfixturevalue(mode)
    project, day2 = days["project"], days["day2"]
    expected = rows_of(rs_snapshot(table_path(project, "orders")))
    assert (OUTSIDE[0], OUTSIDE[1], OUTSIDE[2]) in expected  # the commit made outside dbt
    assert (2, "a", 21) in expected and (6, "b", 60) in expected  # day 2's upsert
    assert sql_rows(day2["copy2"]) == expected  # ref()
    assert sql_rows(day2["from_source"]) == expected  # source()
    assert sql_rows(day2["orders"]) == expected  # SQL on the catalog name
    shown = node(day2["show2"], "inline_query")["rows"]  # dbt show of a ref()
    assert sorted((r["id"], r["val"]) for r in shown) == [(i, v) for i, _, v in expected]


def test_native_renders_the_catalog_name_in_compiled_sql_manifest_and_console(native):
    for day in ("compiled_day1", "compiled_day2"):
        assert all("hudi__" not in sql for name, sql in native[day].items() if name != "orders_changes"), native[day]
    day2 = native["compiled_day2"]
    assert f"from {SCHEMA}.orders" in day2["orders_copy"], day2["orders_copy"]
    assert f"from {SCHEMA}.orders" in day2["from_source"], day2["from_source"]
    assert f"from {SCHEMA}.this_reader" in day2["this_reader"], day2["this_reader"]
    assert re.search(rf"from\s+{SCHEMA}\.orders\s", native["compiled_day1"]["orders_changes"])  # first run: the ref
    manifest = native["manifest"]
    models = {n["name"]: n["relation_name"] for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    assert models == {name: f"{SCHEMA}.{name}" for name in MODELS}
    assert manifest["sources"]["source.reads.hudi_src.orders"]["relation_name"] == f"{SCHEMA}.orders"
    console = native["stdout_day2"]
    assert "hudi__" not in console.replace(f"hudi__{SCHEMA}__orders__changes__", ""), console
    assert f"model {SCHEMA}.orders " in console and f"model {SCHEMA}.this_reader " in console, console


def test_the_opt_out_renders_per_run_views(views):
    project = views["project"]
    latest = HudiTable.load(str(table_path(project, "orders"))).timeline.completed_commits().last().timestamp
    assert f"`hudi__{SCHEMA}__orders__{latest}`" in views["compiled_day2"]["orders_copy"]
    assert f"`hudi__{SCHEMA}__orders__{latest}`" in views["compiled_day2"]["from_source"]
    assert f"`hudi__{SCHEMA}__orders__{views['after_day1']}`" in views["compiled_day1"]["orders_copy"]
    first = HudiTable.load(str(table_path(project, "this_reader"))).timeline.completed_commits()[0].timestamp
    assert f"`hudi__{SCHEMA}__this_reader__{first}`" in views["compiled_day2"]["this_reader"]
    assert "hudi__" in views["compiled_day1"]["orders_changes"]  # the first run read the ref's view


def test_the_opt_out_is_not_warned_about_the_python_source(views, native):
    """A profile that turns the native component off chose it: the slow-path warning (`PYTHON_SOURCE_WARNING`) is
    for sessions that lack the component unawares, and a native session has nothing to warn about."""
    from hudi_engine.spark.read_sources import PYTHON_SOURCE_WARNING

    assert PYTHON_SOURCE_WARNING[:40] not in views["stderr_day2"]
    assert PYTHON_SOURCE_WARNING[:40] not in native["stderr_day2"]


def test_compiled_sql_runs_in_a_fresh_spark_session(native):
    """A plain SparkSession (no dbt) on the project's metastore runs the compiled SQL and gets the models' rows,
    which equal hudi-rs; the copy-on-write table's base files are scanned by Spark's parquet reader."""
    fresh = native["fresh"]
    assert fresh["error"] is None, fresh["error"]
    expected = rows_of(rs_snapshot(table_path(native["project"], "orders")))
    for name in ("orders_copy", "from_source"):
        assert sorted(tuple(r.values()) for r in fresh["result"][name]) == expected, name
    assert "FileScan parquet" in fresh["result"]["plan"], fresh["result"]["plan"]


@BOTH
def test_hudi_table_changes_pulls_what_changed_since_the_last_run(mode, request):
    days = request.getfixturevalue(mode)
    project = days["project"]
    day1_instant = days["after_day1"]
    timeline = HudiTable.load(str(table_path(project, "orders"))).timeline
    latest = timeline.completed_commits().last().timestamp
    # The checkpoint is the day-1 commit's requested time; on version 9 the range is of completion times, and the
    # checkpoint names the day-1 commit: the range starts at its completion, so day 1 is not pulled again.
    done = timeline.completion_times()
    assert done, "the table is version 9 (completion times)"
    sql = days["compiled_day2"]["orders_changes"]
    assert re.search(rf"`hudi__{SCHEMA}__orders__changes__{done[day1_instant]}__{done[latest]}`", sql), sql
    rows = days["day2"]["changes"]["rows"]
    expected = rows_of(rs_snapshot(table_path(project, "orders")))
    assert sorted((r["id"], r["part"], r["val"]) for r in rows) == expected
    commit_times = {r["id"]: r["source_commit_time"] for r in rows}
    changed = {i for i, _, _ in expected if commit_times[i] > day1_instant}
    assert changed == {OUTSIDE[0], 2, 6}  # the outside update and day 2's upsert, nothing else was pulled again
    pulled = rs_snapshot(table_path(project, "orders_changes"))
    assert max(pulled.column("source_commit_time").to_pylist()) == latest


@BOTH
def test_this_reads_the_models_own_table_as_of_its_latest_commit(mode, request):
    days = request.getfixturevalue(mode)
    project = days["project"]
    assert rows_of(rs_snapshot(table_path(project, "this_reader"))) == sorted(
        {i: (i, p, v) for i, p, v, _ in ROWS}.values())
    assert node(days["day2"]["run2"], "this_reader")["status"] == "success"
