"""dbt runs `materialized='hudi_incremental'` twice for every strategy and table type; hudi-rs checks the tables.

One project, two processes (each one JVM): day 1 (seed, first run), then day 2 in a new process (the tables are
found through the metastore the first process left in the project folder), followed in that process by the bad
inputs, full refreshes, dbt test, docs generate, dbt show, and Spark SQL reads of every table. Every write here
goes through Spark's tasks (spark.hudi.write.driverMaxBytes 0); tests/dbt/test_features.py's tiny models are
written on the driver (hudi_engine.spark.small_write).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from dbt_helpers import node, run_driver
from oracle import rs_snapshot

from hudi_engine import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

STRATEGIES = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")
TABLE_TYPES = ("cow", "mor")
SCHEMA = "fx"

# id, part, val, day. Day 2 updates ids 2 and 4, adds 7 (existing partition c) and 8 (new partition d);
# partition e (id 9) is never touched on day 2.
ROWS = [(1, "a", 10, 1), (2, "a", 20, 1), (3, "b", 30, 1), (4, "b", 40, 1), (5, "c", 50, 1), (6, "c", 60, 1),
        (9, "e", 90, 1), (2, "a", 21, 2), (4, "b", 41, 2), (7, "c", 70, 2), (8, "d", 80, 2)]
DAY1 = [(i, p, v) for i, p, v, d in ROWS if d == 1]
DAY2 = [(i, p, v) for i, p, v, d in ROWS if d == 2]


def expected(strategy: str, table_type: str = "mor") -> list[tuple]:
    """(id, part, val) rows of the table after day 2."""
    day2_keys = {i for i, _, _ in DAY2}
    if strategy == "upsert" or (strategy == "insert" and table_type == "cow"):
        # A copy-on-write insert packs new records into the partition's small file, rewriting it; a key that
        # file already holds is merged there, as Hudi does (hoodie.merge.allow.duplicate.on.inserts=false).
        return sorted({i: (i, p, v) for i, p, v in DAY1 + DAY2}.values())
    if strategy in ("insert", "bulk_insert"):  # new file groups, no index lookup: a key written again is a
        return sorted(DAY1 + DAY2)             # second record
    if strategy == "delete":
        return sorted(r for r in DAY1 if r[0] not in day2_keys)
    if strategy == "insert_overwrite":
        touched = {p for _, p, _ in DAY2}
        return sorted([r for r in DAY1 if r[1] not in touched] + DAY2)
    if strategy == "insert_overwrite_table":
        return sorted(DAY2)
    raise AssertionError(strategy)


FIRST_RUN = """
select id, part, val, ts from (
  select *, row_number() over (partition by id order by ts desc) as version
  from {{ ref('events') }} where day <= {{ var('day') }}
) where version = 1
"""


def hudi_model(config: str, incremental: str, first: str = FIRST_RUN) -> str:
    return (f"{{{{ config(materialized='hudi_incremental', {config}) }}}}\n"
            f"{{% if is_incremental() %}}\n{incremental}\n{{% else %}}\n{first}\n{{% endif %}}\n")


DAY_ROWS = "select id, part, val, ts from {{ ref('events') }} where day = {{ var('day') }}"
KEYS = "unique_key='id', precombine_field='ts', partition_by='part'"


def models() -> dict[str, str]:
    out = {}
    for strategy in STRATEGIES:
        for table_type in TABLE_TYPES:
            out[f"s_{strategy}_{table_type}"] = hudi_model(
                f"{KEYS}, table_type='{table_type}', incremental_strategy='{strategy}'", DAY_ROWS)
    # `select *` of the table itself: its five meta columns go back into the write.
    # Also: the table outside the warehouse (location_root, relative to the project folder).
    out["select_star_this"] = hudi_model(
        f"{KEYS}, table_type='mor', location_root='lake'",
        "select * except (val), val + 1000 as val from {{ this }} where id in (1, 3)")
    out["null_key"] = hudi_model(
        f"{KEYS}, tags=['null_key']",
        "select cast(null as bigint) as id, 'a' as part, 0 as val, timestamp'2024-01-03 00:00:00' as ts\n"
        f"union all {DAY_ROWS}")
    out["layout_change"] = hudi_model(f"{KEYS}, table_type=var('lc_type', 'cow'), tags=['layout']", DAY_ROWS)
    out["fr"] = hudi_model(f"{KEYS}, index_type='bloom', hudi_options={{'hoodie.parquet.compression.codec': 'gzip',"
                           " 'hoodie.bloom.index.filter.type': 'SIMPLE'}", DAY_ROWS)
    out["osc_append"] = hudi_model(f"{KEYS}, on_schema_change='append_new_columns'",
                                   "select id, part, ts, 'x' || id as extra from {{ ref('events') }} "
                                   "where day = {{ var('day') }}")
    out["osc_fail"] = hudi_model(f"{KEYS}, on_schema_change='fail', tags=['osc_fail']",
                                 "select id, part, ts, 'x' || id as extra from {{ ref('events') }} "
                                 "where day = {{ var('day') }}")
    out["bad_config"] = ("{{ config(materialized='hudi_incremental', table_type='delta', incremental_strategy='merge',"
                         " hudi_options={'hoodie.datasource.write.operation': 'insert'}, tags=['bad']) }}\n"
                         "select 1 as id")
    out["bad_precombine"] = ("{{ config(materialized='hudi_incremental', unique_key='id', precombine_field='nope',"
                             " tags=['bad']) }}\nselect 1 as id, 2 as val")
    return out


SCHEMA_YML = """
version: 2
models:
  - name: s_upsert_mor
    data_tests:
      - hudi_no_pending_instants
      - hudi_unique_record_key
      - hudi_commit_count: {arguments: {min_count: 2, max_count: 2, action: deltacommit}}
      - hudi_latest_commit: {arguments: {operation: upsert, min_inserts: 2, max_inserts: 2, min_updates: 2, max_updates: 2}}
    columns:
      - name: id
        data_tests: [unique, not_null]
  - name: s_insert_overwrite_cow
    data_tests:
      - hudi_commit_count: {arguments: {min_count: 1, max_count: 1, action: replacecommit}}
      - hudi_latest_commit: {arguments: {operation: insert_overwrite, min_inserts: 4}}
  - name: s_delete_mor
    data_tests:
      - hudi_latest_commit: {arguments: {operation: delete, min_deletes: 2, max_deletes: 2, max_inserts: 0}}
  - name: s_insert_mor
    data_tests:
      - hudi_unique_record_key:
          config: {severity: warn}
"""


def write_project(root: Path) -> None:
    (root / "models").mkdir(parents=True)
    (root / "seeds").mkdir()
    (root / "dbt_project.yml").write_text("""
name: functional
version: "1.0"
config-version: 2
profile: functional
vars: {day: 1}
seeds:
  functional:
    events:
      +column_types: {id: bigint, part: string, val: int, ts: timestamp, day: int}
""")
    (root / "profiles.yml").write_text(f"""
functional:
  target: dev
  outputs:
    dev:
      type: hudi
      schema: {SCHEMA}
      threads: 4
      server_side_parameters:
        spark.master: "local[2]"
        spark.sql.shuffle.partitions: "2"
        spark.hudi.write.driverMaxBytes: "0"
""")
    lines = ["id,part,val,ts,day"] + [f"{i},{p},{v},2024-01-0{d} 00:00:00,{d}" for i, p, v, d in ROWS]
    (root / "seeds" / "events.csv").write_text("\n".join(lines) + "\n")
    for name, sql in models().items():
        (root / "models" / f"{name}.sql").write_text(sql)
    (root / "models" / "schema.yml").write_text(SCHEMA_YML)


VARS2 = "{day: 2}"
SHOW = ["show", "--inline", "select * from {{ ref('s_upsert_mor') }}", "--vars", VARS2, "--limit", "50"]
STRATEGY_TABLES = [f"s_{s}_{t}" for s in STRATEGIES for t in TABLE_TYPES]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("functional")
    project = root / "project"
    write_project(project)
    day1 = run_driver(project, [{"dbt": ["seed"]}, {"dbt": ["run", "--vars", "{day: 1}", "--exclude", "tag:bad"]}],
                      root / "day1")
    first_instants = {t: HudiTable.load(table_path(project, t)).timeline.completed_commits().last().timestamp
                      for t in ("fr", "null_key")}
    steps = [
        {"dbt": ["run", "--vars", VARS2, "--exclude", "tag:bad", "tag:null_key", "tag:layout", "tag:osc_fail"]},
        {"dbt": ["run", "--select", "bad_config", "--vars", VARS2]},
        {"dbt": ["run", "--select", "bad_precombine", "--vars", VARS2]},
        {"dbt": ["run", "--select", "null_key", "--vars", VARS2]},
        {"dbt": ["run", "--select", "layout_change", "--vars", "{day: 2, lc_type: mor}"]},
        {"dbt": ["run", "--select", "layout_change", "--full-refresh", "--vars", "{day: 2, lc_type: mor}"]},
        {"dbt": ["run", "--select", "osc_fail", "--vars", VARS2]},
        {"dbt": ["run", "--select", "fr", "--full-refresh", "--vars", VARS2]},
        {"dbt": ["test", "--vars", VARS2, "--select", "s_upsert_mor", "s_insert_overwrite_cow", "s_delete_mor",
                 "s_insert_mor"]},
        {"dbt": ["docs", "generate", "--vars", VARS2]},
        {"dbt": SHOW},
        {"dbt": ["debug"]},
        # Spark SQL reads through the catalog tables (one query for the strategy tables).
        {"sql": " union all ".join(f"select '{t}' as table_name, id, part, val from {SCHEMA}.{t}"
                                   for t in STRATEGY_TABLES)},
        {"sql": f"select * from {SCHEMA}.select_star_this"},
        {"sql": f"select * from {SCHEMA}.osc_append"},
    ]
    day2 = run_driver(project, steps, root / "day2")
    return {"project": project, "root": root, "day1": day1, "day2": day2, "first": first_instants,
            "by_args": {tuple(r["args"]): r for r in day2 if "args" in r},
            "sql": {"strategies": day2[-3], "select_star_this": day2[-2], "osc_append": day2[-1]}}


def table_path(project: Path, name: str) -> str:
    return str(project / "spark-warehouse" / f"{SCHEMA}.db" / name)


def step(built, *args) -> dict:
    return built["by_args"][tuple(args)]


def data_rows(t: pa.Table) -> list[tuple]:
    return sorted(zip(t.column("id").to_pylist(), t.column("part").to_pylist(), t.column("val").to_pylist()))


# ---- the two runs -------------------------------------------------------------------------------------------


def test_both_days_ran(built):
    seed, day1 = built["day1"]
    assert seed["success"], seed
    assert day1["success"], [r for r in day1["results"] if r["status"] != "success"]
    day2 = step(built, "run", "--vars", VARS2, "--exclude", "tag:bad", "tag:null_key", "tag:layout", "tag:osc_fail")
    assert day2["success"], [r for r in day2["results"] if r["status"] != "success"]


def test_warehouse_and_metastore_live_in_the_project_folder(built):
    project, root = built["project"], built["root"]
    assert (project / "metastore_db").is_dir() and (project / "spark-warehouse" / f"{SCHEMA}.db").is_dir()
    assert (project / "derby.log").is_file()
    for workdir in ("day1", "day2"):  # dbt ran from these folders
        assert not (root / workdir / "metastore_db").exists() and not (root / workdir / "spark-warehouse").exists()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_strategy_against_hudi_rs(built, strategy, table_type):
    name = f"s_{strategy}_{table_type}"
    path = table_path(built["project"], name)
    theirs = rs_snapshot(path)
    assert data_rows(theirs) == expected(strategy, table_type), name
    ours = HudiTable.load(path)
    assert ours.config.table_type == ("MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE")
    assert not ours.timeline.pending(), f"{name}: instants left pending"
    # What Spark SQL reads through the catalog table (the merged snapshot, MOR included).
    spark = built["sql"]["strategies"]
    assert spark["error"] is None, spark["error"]
    rows = sorted((r["id"], r["part"], r["val"]) for r in spark["rows"] if r["table_name"] == name)
    assert rows == expected(strategy, table_type)


@pytest.mark.parametrize("strategy, day1_op, day2_op, action", [
    ("upsert", "bulk_insert", "upsert", None), ("insert", "bulk_insert", "insert", None),
    ("delete", "bulk_insert", "delete", None), ("insert_overwrite", "bulk_insert", "insert_overwrite", "replacecommit"),
    ("insert_overwrite_table", "bulk_insert", "insert_overwrite_table", "replacecommit"),
])
def test_adapter_response_and_timeline(built, strategy, day1_op, day2_op, action):
    name = f"s_{strategy}_mor"
    first = node(built["day1"][1], name)["adapter_response"]
    second = node(step(built, "run", "--vars", VARS2, "--exclude", "tag:bad", "tag:null_key", "tag:layout",
                       "tag:osc_fail"), name)["adapter_response"]
    assert (first["operation"], first["rows_inserted"]) == (day1_op, len(DAY1))
    assert second["operation"] == day2_op
    assert second["_message"] == (f"{day2_op} {second['instant_time']}: +{second['rows_inserted']} "
                                  f"~{second['rows_updated']} -{second['rows_deleted']}")
    assert second["table_type"] == "MERGE_ON_READ" and second["table_path"] == table_path(built["project"], name)
    if strategy == "upsert":
        assert (second["rows_inserted"], second["rows_updated"], second["rows_deleted"]) == (2, 2, 0)
    if strategy == "delete":
        assert (second["rows_inserted"], second["rows_deleted"]) == (0, 2)
    timeline = HudiTable.load(second["table_path"]).timeline
    commits = timeline.completed_commits()
    assert [i.timestamp for i in commits] == [first["instant_time"], second["instant_time"]]
    assert commits[-1].action == (action or "deltacommit")
    assert timeline.commit_metadata(commits[-1]).operation_type == day2_op.upper()


def test_select_star_of_this_writes_back_without_meta_column_trouble(built):
    path = str(built["project"] / "lake" / "select_star_this")  # location_root='lake'
    assert not Path(table_path(built["project"], "select_star_this")).exists()
    want = sorted((i, p, v + 1000 if i in (1, 3) else v) for i, p, v in DAY1)
    assert data_rows(rs_snapshot(path)) == want
    rows = built["sql"]["select_star_this"]["rows"]
    assert sorted((r["id"], r["part"], r["val"]) for r in rows) == want
    assert all(r["_hoodie_record_key"] == str(r["id"]) for r in rows)


def test_append_new_columns(built):
    path = table_path(built["project"], "osc_append")
    t = rs_snapshot(path)
    assert t.column_names[5:] == ["id", "part", "val", "ts", "extra"]
    got = sorted(zip(t.column("id").to_pylist(), t.column("val").to_pylist(), t.column("extra").to_pylist()))
    day2 = {i for i, _, _ in DAY2}
    want = sorted([(i, None if i in day2 else v, f"x{i}" if i in day2 else None)
                   for i, _, v in DAY1 if i not in day2] + [(i, None, f"x{i}") for i, _, _ in DAY2])
    assert got == want
    # Spark SQL through the catalog table: the older base files have no `extra` column.
    spark = built["sql"]["osc_append"]
    assert spark["error"] is None, spark["error"]
    assert list(spark["rows"][0])[5:] == ["id", "part", "val", "ts", "extra"]


# ---- bad input ----------------------------------------------------------------------------------------------


def failed(result: dict, name: str) -> str:
    assert not result["success"], result
    r = node(result, name)
    assert r["status"] == "error", r
    return r["message"]


def test_bad_config_is_one_compile_error_listing_everything(built):
    msg = failed(step(built, "run", "--select", "bad_config", "--vars", VARS2), "bad_config")
    assert "model bad_config: invalid hudi_incremental config" in msg
    assert "table_type='delta': expected one of COPY_ON_WRITE, MERGE_ON_READ (or cow, mor)" in msg
    assert "incremental_strategy='merge': expected one of upsert, insert, bulk_insert, delete" in msg
    assert "set by the materialization (incremental_strategy)" in msg
    assert not Path(table_path(built["project"], "bad_config")).exists()


def test_precombine_field_not_in_the_model(built):
    msg = failed(step(built, "run", "--select", "bad_precombine", "--vars", VARS2), "bad_precombine")
    assert "model bad_precombine" in msg and "precombine_field: column 'nope' is not in the model's result" in msg
    assert "columns: id, val" in msg


def test_null_key_fails_and_leaves_the_table_as_it_was(built):
    msg = failed(step(built, "run", "--select", "null_key", "--vars", VARS2), "null_key")
    assert "model null_key" in msg and "id" in msg and "null" in msg.lower() and "unchanged" in msg
    path = table_path(built["project"], "null_key")
    assert data_rows(rs_snapshot(path)) == sorted(DAY1)
    timeline = HudiTable.load(path).timeline
    assert not timeline.pending()
    assert [i.timestamp for i in timeline.completed_commits()] == [built["first"]["null_key"]]


def test_layout_change_needs_full_refresh(built):
    msg = failed(step(built, "run", "--select", "layout_change", "--vars", "{day: 2, lc_type: mor}"),
                 "layout_change")
    assert "table_type COPY_ON_WRITE -> MERGE_ON_READ" in msg and "--full-refresh" in msg
    ok = step(built, "run", "--select", "layout_change", "--full-refresh", "--vars", "{day: 2, lc_type: mor}")
    assert ok["success"], ok
    assert node(ok, "layout_change")["adapter_response"]["operation"] == "bulk_insert"
    path = table_path(built["project"], "layout_change")
    assert HudiTable.load(path).config.table_type == "MERGE_ON_READ"
    assert data_rows(rs_snapshot(path)) == expected("upsert")


def test_on_schema_change_fail(built):
    msg = failed(step(built, "run", "--select", "osc_fail", "--vars", VARS2), "osc_fail")
    assert "on_schema_change='fail'" in msg and "new columns ['extra']" in msg and "missing columns ['val']" in msg


def test_full_refresh_keeps_time_travel(built):
    r = step(built, "run", "--select", "fr", "--full-refresh", "--vars", VARS2)
    assert r["success"], r
    assert node(r, "fr")["adapter_response"]["operation"] == "insert_overwrite_table"
    path = table_path(built["project"], "fr")
    assert data_rows(rs_snapshot(path)) == expected("upsert")
    table = HudiTable.load(path)
    timeline = table.timeline
    assert [i.action for i in timeline.completed_commits()] == ["commit", "commit", "replacecommit"]
    # hudi_options reached the engine: the base files of the full refresh are gzip-compressed.
    import pyarrow.parquet as pq

    slices = table.file_slices()
    assert slices and all(pq.ParquetFile(s.base_file.path).metadata.row_group(0).column(0).compression == "GZIP"
                          for s in slices)
    assert data_rows(rs_snapshot(path, as_of=built["first"]["fr"])) == sorted(DAY1)


# ---- dbt test, docs, show ---------------------------------------------------------------------------------


def test_generic_timeline_tests(built):
    r = step(built, "test", "--vars", VARS2, "--select", "s_upsert_mor", "s_insert_overwrite_cow", "s_delete_mor",
             "s_insert_mor")
    statuses = {x["name"]: x["status"] for x in r["results"]}
    assert len(statuses) == 10, statuses
    # s_insert_mor holds keys 2 and 4 twice (insert does not look keys up): the key test sees it.
    warned = [n for n, s in statuses.items() if s == "warn"]
    assert [n for n in warned if n.startswith("hudi_unique_record_key_s_insert_mor")] == warned and warned, statuses
    assert all(s == "pass" for n, s in statuses.items() if n not in warned), statuses


def test_docs_catalog_has_hudi_stats(built):
    assert step(built, "docs", "generate", "--vars", VARS2)["success"]
    catalog = json.loads((built["project"] / "target" / "catalog.json").read_text())
    stats = catalog["nodes"]["model.functional.s_upsert_mor"]["stats"]
    assert stats["hudi_table_type"]["value"] == "MERGE_ON_READ"
    assert stats["hudi_record_key"]["value"] == "id"
    assert stats["hudi_latest_instant"]["value"].endswith("deltacommit")
    assert stats["hudi_commits"]["value"] == 2
    assert stats["hudi_log_files"]["value"] >= 1 and stats["hudi_base_files"]["value"] >= 1
    assert "hudi_table_type" not in catalog["nodes"]["seed.functional.events"]["stats"]


def test_show_reads_the_merged_snapshot(built):
    r = step(built, *SHOW)
    assert r["success"], r
    rows = r["results"][0]["rows"]
    assert sorted((x["id"], x["part"], x["val"]) for x in rows) == expected("upsert")


def test_debug_reports_versions(built):
    assert step(built, "debug")["success"]
    out = (built["root"] / "day2" / "stdout.txt").read_text()
    import pyspark

    import hudi_engine

    line = next(x for x in out.splitlines() if "Hudi adapter: Spark " in x)  # asked of the running session
    import re

    assert re.search(rf"Spark {re.escape(pyspark.__version__)} \(master local\[2\]\), Java \d+", line), line
    assert f"hudi_engine {hudi_engine.__version__}" in line, line
    assert "OK connection ok" in out
