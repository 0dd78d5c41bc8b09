"""What a dbt user reaches for, on Hudi tables, with real dbt: merge_update_columns / merge_exclude_columns, dbt-spark's
spelling (file_format='hudi', options, tblproperties), microbatch (one instant per batch, `dbt retry`), contracts,
--empty, unit tests, persist_docs, Python models, snapshots, and the table services (run-operations and settings).

One project (features_project.py), two processes: day 1 (seed, --empty, first run, snapshot), then day 2 with every
incremental run, the bad inputs, the services, docs and Spark SQL reads. Tables are checked with hudi-rs (every
table here uses a payload hudi-rs merges) and the engine's reader.
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from dbt_helpers import node, run_driver
from features_project import EVENTS, PEOPLE, SCHEMA, latest_events, write_project
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archived_entries
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import Action, Instant, State

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAY1_EVENTS = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]
DAY2_EVENTS = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]
V2 = ["--vars", "{day: 2}"]
MAIN2 = ["run", *V2, "--exclude", "tag:bad", "tag:busy", "tag:contract_rows", "tag:retry", *DAY2_EVENTS]
BUSY_INSTANT = "20240105000000000"


# Hudi's procedures workflow on wf_ops (savepointed after day 1, day 2 run on it): inspect, restore, inspect again.
WF_OPS = [
    {"dbt": ["run-operation", "wf_call", "--args", "{procedure: show_commits, model: wf_ops}"]},
    {"dbt": ["run-operation", "wf_call", "--args", "{procedure: show_savepoints, model: wf_ops}"]},
    {"dbt": ["run-operation", "wf_call", "--args", "{procedure: show_table_properties, model: wf_ops, "
                                                   "args: ', limit => 100'}"]},
    {"dbt": ["run-operation", "hudi_restore", "--args", "{model: wf_ops}"]},
    {"dbt": ["run-operation", "wf_call", "--args", "{procedure: show_timeline, model: wf_ops}"]},
]
# SCD type 2 (a dbt snapshot): the current rows, and the dimension as of a point in time.
WF_SCD2_CURRENT = f"select id, name from {SCHEMA}.snap_ts where dbt_valid_to is null order by id"
WF_SCD2_AS_OF = (f"select id, name from {SCHEMA}.snap_ts where dbt_valid_from <= timestamp'2024-01-01 12:00:00' "
                 "and (dbt_valid_to is null or dbt_valid_to > timestamp'2024-01-01 12:00:00') order by id")


def table_path(project: Path, name: str) -> str:
    return str(project / "spark-warehouse" / f"{SCHEMA}.db" / name)


def hold_busy(path: str) -> None:
    """A write in flight on `path`: a requested commit and the table lock held by this (live) process."""
    storage, base = Storage.for_uri(path)
    Timeline.load(TableLocation.at(storage, base)).create_requested(Instant(BUSY_INSTANT, Action.COMMIT, State.REQUESTED), b"")
    now = int(time.time() * 1000)
    owner = f"{socket.gethostname()}:{os.getpid()}:test"
    storage.write_bytes(Storage.join(base, ".hoodie", "lock"),
                        json.dumps({"owner": owner, "acquired_ms": now, "expires_ms": now + 3_600_000}).encode())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("features")
    project = root / "project"
    write_project(project)
    day1 = run_driver(project, [
        {"dbt": ["seed"]},
        {"dbt": ["run", "--empty", "--select", "emptied"]},
        {"sql": f"select count(*) as n from {SCHEMA}.emptied"},
        {"sql": f"describe table {SCHEMA}.emptied"},
        {"dbt": ["run", "--exclude", "tag:bad", *DAY1_EVENTS]},
        {"dbt": ["snapshot"]},
        {"dbt": ["run-operation", "hudi_savepoint", "--args", "{model: wf_ops, comment: before day 2}"]},
    ], root / "day1", timeout=1500)
    first = {t: HudiTable.load(table_path(project, t)).timeline.completed_commits().last().timestamp
             for t in ("contract_rows", "svc_busy", "svc_rollback")}
    hold_busy(table_path(project, "svc_busy"))
    steps = [
        {"dbt": MAIN2},
        {"dbt": ["run", "--select", "contract_rows", *V2]},
        {"dbt": ["run", "--select", "contract_types", *V2]},
        {"dbt": ["run", "--select", "bad_update_column", *V2]},
        {"dbt": ["run", "--select", "bad_spark", *V2]},
        {"env": {"HUDI_BREAK_DAY": "2"}},
        {"dbt": ["run", "--select", "mb_retry", *V2, *DAY2_EVENTS]},
        {"env": {"HUDI_BREAK_DAY": "0"}},
        {"dbt": ["retry"]},
        {"dbt": ["snapshot", *V2]},
        {"dbt": ["test", *V2, "--select", "test_type:unit", "mu_cow"]},
        {"dbt": ["run-operation", "hudi_compact", "--args", "{model: svc_mor}"]},
        {"dbt": ["run", "--select", "svc_mor", *V2]},  # a third delta commit, on the compacted slices
        {"dbt": ["run-operation", "hudi_compact", "--args", "{model: svc_mor}"]},
        {"dbt": ["run-operation", "hudi_clean", "--args", "{model: svc_mor}"]},  # its cleaning: retained 1
        {"dbt": ["run-operation", "hudi_rollback", "--args", "{model: svc_rollback}"]},
        {"dbt": ["run-operation", "hudi_cluster", "--args", "{model: svc_cluster, op: execute}"]},
        {"dbt": ["run-operation", "hudi_compact", "--args", "{model: a_view}"]},
        {"dbt": ["run-operation", "hudi_compact", "--args", "{model: svc_mor, bogus: 1}"]},
        {"dbt": ["run-operation", "hudi_compact", "--args", f"{{relation: {SCHEMA}.mu_cow}}"]},
        {"dbt": ["run-operation", "hudi_compact", "--args", "{model: svc_busy}"]},
        {"dbt": ["run-operation", "hudi_rollback",
                 "--args", f"{{path: '{table_path(project, 'mu_mor')}', instant: '20200101000000000'}}"]},
        {"dbt": ["run", "--select", "svc_archive", *V2]},  # commits 3 and 4 (the same rows again)
        {"dbt": ["run", "--select", "svc_archive", *V2]},
        {"dbt": ["run-operation", "hudi_archive", "--args", "{model: svc_archive, min_commits: 2, max_commits: 3}"]},
        {"dbt": ["run-operation", "hudi_archive", "--args", "{model: svc_archive, min_commits: 2, max_commits: 3}"]},
        {"dbt": ["run-operation", "hudi_archive", "--args", "{model: svc_archive, min_commits: 3, max_commits: 2}"]},
        {"dbt": ["docs", "generate", *V2]},
        {"sql": f"describe table extended {SCHEMA}.documented"},
        {"sql": f"show table extended in {SCHEMA} like 'documented'"},
        {"sql": f"describe table {SCHEMA}.contracted"},
        {"sql": f"select * from {SCHEMA}.documented"},
        *WF_OPS,
        {"sql": WF_SCD2_CURRENT},
        {"sql": WF_SCD2_AS_OF},
    ]
    day2 = run_driver(project, steps, root / "day2", timeout=2400)
    return {"project": project, "root": root, "day1": day1, "day2": day2, "first": first,
            "out": (root / "day2" / "stdout.txt").read_text(),
            "by_args": {tuple(r["args"]): r for r in day2 if "args" in r},
            "sql": {s["sql"]: r for s, r in zip(steps, day2) if "sql" in s}}


def step(built, *args) -> dict:
    return built["by_args"][tuple(args)]


def sql(built, text: str) -> list[dict]:
    r = built["sql"][text]
    assert r["error"] is None, r["error"]
    return r["rows"]


def failed(result: dict, name: str) -> str:
    assert not result["success"], result
    r = node(result, name)
    assert r["status"] == "error", r
    return r["message"]


def rows_of(t, cols=("id", "name", "score")) -> list[tuple]:
    return sorted(zip(*(t.column(c).to_pylist() for c in cols)))


def checked(built, name: str):
    """The table read by hudi-rs, after checking the engine reads the same rows."""
    path = table_path(built["project"], name)
    theirs = rs_snapshot(path)
    assert_same_rows(HudiTable.load(path).read_snapshot(), theirs, name)
    return theirs


def operations(built, name: str) -> list[str]:
    timeline = HudiTable.load(table_path(built["project"], name)).timeline
    return [timeline.commit_metadata(i).operation_type for i in timeline.completed_commits()]


def test_both_days_ran(built):
    for r in [x for x in built["day1"] if "args" in x] + [step(built, *MAIN2), step(built, "snapshot", *V2)]:
        assert r["success"], (r["args"], [x for x in r["results"] if x["status"] not in ("success", "pass")])


# ---- merge_update_columns / merge_exclude_columns ------------------------------------------------------------


@pytest.mark.parametrize("name", ["mu_cow", "mu_mor", "mx_mor", "sp_merge"])
def test_only_the_update_columns_change_on_a_match(built, name):
    t = checked(built, name)
    day1 = {r[0]: r for r in EVENTS if r[4] == 1}
    want = []
    for i, (_, part, name_, score, day) in sorted(latest_events().items()):
        if i in day1:  # matched on day 2: only score changes; name and ts keep the stored (day 1) values
            want.append((i, part, day1[i][2], score, 1))
        else:
            want.append((i, part, name_, score, day))
    got = sorted(zip(*(t.column(c).to_pylist() for c in ("id", "part", "name", "score"))),
                 key=lambda r: r[0])
    assert got == [w[:4] for w in want]
    assert sorted(r.day for r in t.column("ts").to_pylist()) == sorted(w[4] for w in want)
    table = HudiTable.load(table_path(built["project"], name))
    if table.is_mor:  # the matched rows went to log files (whole records, the stored values filled in)
        assert any(s.log_files for s in table.file_slices())


def test_update_column_the_model_lacks(built):
    msg = failed(step(built, "run", "--select", "bad_update_column", *V2), "bad_update_column")
    assert "model bad_update_column" in msg and "merge_update_columns: column(s) ['nope']" in msg
    assert "select them in the model or remove them from merge_update_columns" in msg
    assert not Path(table_path(built["project"], "bad_update_column")).exists()


# ---- dbt-spark's spelling ------------------------------------------------------------------------------------


def test_spark_spelling_merge_honours_options_and_tblproperties(built):
    table = HudiTable.load(table_path(built["project"], "sp_merge"))
    assert table.config.table_type == "MERGE_ON_READ"  # options type: mor
    assert table.config.precombine_field == "ts"  # options preCombineField
    assert operations(built, "sp_merge") == ["BULK_INSERT", "UPSERT"]
    base = [s.base_file.path for s in table.file_slices() if s.base_file is not None]
    assert base and all(pq.ParquetFile(p).metadata.row_group(0).column(0).compression == "GZIP" for p in base)


def test_spark_spelling_append_and_insert_overwrite(built):
    assert operations(built, "sp_append") == ["BULK_INSERT", "INSERT"]  # dbt-spark's default strategy
    t = checked(built, "sp_append")
    assert set(t.column("id").to_pylist()) == set(latest_events())
    assert operations(built, "sp_overwrite") == ["BULK_INSERT", "INSERT_OVERWRITE"]
    t = checked(built, "sp_overwrite")
    day2 = [r for r in EVENTS if r[4] == 2]  # every partition day 2 touched is replaced, the others stay
    touched = {r[1] for r in day2}
    want = sorted([(r[0], r[2], r[3]) for r in EVENTS if r[4] == 1 and r[1] not in touched] +
                  [(r[0], r[2], r[3]) for r in day2])
    assert rows_of(t) == want


def test_spark_spelling_bad_options(built):
    msg = failed(step(built, "run", "--select", "bad_spark", *V2), "bad_spark")
    assert "model bad_spark: invalid Hudi config (materialized='incremental', file_format='hudi')" in msg
    assert "options['compression']: not a Hudi option" in msg
    assert not Path(table_path(built["project"], "bad_spark")).exists()


# ---- microbatch ----------------------------------------------------------------------------------------------


def test_microbatch_upserts_one_instant_per_batch(built):
    # Day 1: one batch (2024-01-01); day 2: two batches (the lookback day again, and 2024-01-02).
    assert operations(built, "mb_upsert") == ["BULK_INSERT", "UPSERT", "UPSERT"]
    t = checked(built, "mb_upsert")
    assert rows_of(t) == sorted((i, r[2], r[3]) for i, r in latest_events().items())
    out = built["out"]
    assert "Batch 1 of 2 OK created batch 2024-01-01 of feat.mb_upsert" in out
    assert "Batch 2 of 2 OK created batch 2024-01-02 of feat.mb_upsert" in out


def test_microbatch_without_unique_key_overwrites_the_batch_partitions(built):
    assert operations(built, "mb_partitions") == ["BULK_INSERT", "INSERT_OVERWRITE", "INSERT_OVERWRITE"]
    t = checked(built, "mb_partitions")
    got = sorted(zip(t.column("event_day").to_pylist(), t.column("id").to_pylist(), t.column("score").to_pylist()))
    assert got == sorted((f"2024-01-0{r[4]}", r[0], r[3]) for r in EVENTS)  # each day's rows once


def test_microbatch_retry_runs_the_failed_batch_only(built):
    run = step(built, "run", "--select", "mb_retry", *V2, *DAY2_EVENTS)
    assert not run["success"] and node(run, "mb_retry")["status"] == "partial success"
    assert step(built, "retry")["success"]
    out = built["out"]
    assert "model mb_retry: Hudi upsert into" in out and "broken batch" in out and "The table is unchanged" in out
    assert "Batch 1 of 1 OK created batch 2024-01-02 of feat.mb_retry" in out  # the retry: that batch alone
    table = HudiTable.load(table_path(built["project"], "mb_retry"))
    assert not table.timeline.pending()
    assert operations(built, "mb_retry") == ["BULK_INSERT", "UPSERT", "UPSERT"]  # the failed instant is gone
    assert rows_of(checked(built, "mb_retry")) == sorted((i, r[2], r[3]) for i, r in latest_events().items())


def test_microbatch_without_event_time_is_refused(tmp_path):
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: mb\nversion: '1.0'\nconfig-version: 2\nprofile: mb\n")
    (project / "profiles.yml").write_text("mb:\n  target: dev\n  outputs:\n    dev: {type: hudi, schema: mb}\n")
    (project / "models" / "no_time.sql").write_text(
        "{{ config(materialized='incremental', file_format='hudi', incremental_strategy='microbatch', "
        "unique_key='id', batch_size='day', begin='2024-01-01') }}\nselect 1 as id\n")
    r = run_driver(project, [{"dbt": ["parse"]}], tmp_path / "run")[0]
    assert not r["success"]
    assert "Microbatch model 'no_time' must provide an 'event_time'" in r["exception"]


# ---- contracts -----------------------------------------------------------------------------------------------


def test_contract_declares_the_columns(built):
    assert operations(built, "contracted") == ["BULK_INSERT", "UPSERT"]
    described = [(r["col_name"], r["data_type"]) for r in sql(built, f"describe table {SCHEMA}.contracted")]
    assert described[5:] == [("id", "bigint"), ("part", "string"), ("name", "string"), ("score", "int"),
                             ("ts", "timestamp")]


def test_contract_type_mismatch_is_dbts_contract_error_and_writes_nothing(built):
    msg = failed(step(built, "run", "--select", "contract_types", *V2), "contract_types")
    assert "This model has an enforced contract that failed" in msg
    assert "| part        | string          | int           | data type mismatch |" in msg
    assert not Path(table_path(built["project"], "contract_types")).exists()


def test_contract_constraints_are_checked_on_the_rows_before_the_write(built):
    msg = failed(step(built, "run", "--select", "contract_rows", *V2), "contract_rows")
    assert "model contract_rows: the model's rows break its contract: not_null on column 'score': 1 row(s)" in msg
    assert "Nothing was written" in msg
    table = HudiTable.load(table_path(built["project"], "contract_rows"))
    assert [i.timestamp for i in table.timeline.completed_commits()] == [built["first"]["contract_rows"]]
    assert not table.timeline.pending()


# ---- --empty, unit tests, persist_docs, Python models --------------------------------------------------------


def test_empty_builds_the_schema_and_the_next_run_fills_it(built):
    empty = built["day1"][1]
    assert empty["success"] and node(empty, "emptied")["adapter_response"]["rows_inserted"] == 0
    assert built["day1"][2]["rows"] == [{"n": 0}]
    assert [r["col_name"] for r in built["day1"][3]["rows"]][5:] == ["id", "part", "name", "score", "ts"]
    # The next normal run builds it in full (not incrementally on no rows), then day 2 upserts.
    assert operations(built, "emptied") == ["BULK_INSERT", "INSERT_OVERWRITE_TABLE", "UPSERT"]
    t = checked(built, "emptied")
    assert rows_of(t) == sorted((i, r[2], r[3]) for i, r in latest_events().items())


def test_unit_tests_on_an_incremental_hudi_model(built):
    r = step(built, "test", *V2, "--select", "test_type:unit", "mu_cow")
    statuses = {x["name"]: x["status"] for x in r["results"]}
    assert statuses == {"ut_latest_takes_rows_after_this": "pass", "ut_latest_first_run_takes_day_one": "pass",
                        "hudi_no_pending_instants_mu_cow_": "pass", "hudi_unique_record_key_mu_cow_": "pass"}


def test_persist_docs_keeps_the_path_comment(built):
    rows = sql(built, f"describe table extended {SCHEMA}.documented")
    comments = {r["col_name"]: r["comment"] for r in rows}
    assert comments["id"] == "the person's id" and comments["score"] == "score, it's the latest"
    assert comments["_hoodie_commit_time"].startswith("hudi.path=")  # the yml description did not replace it
    # Spark 4.3 shows a Python data source table's comment in SHOW TABLE EXTENDED (DESCRIBE shows the columns only).
    info = sql(built, f"show table extended in {SCHEMA} like 'documented'")[0]["information"]
    assert "\nComment: People's scores (documented: the 'relation' comment)\n" in info
    assert len(sql(built, f"select * from {SCHEMA}.documented")) == len(latest_events())
    assert "column '_hoodie_commit_time' keeps its comment" in built["out"]
    catalog = json.loads((built["project"] / "target" / "catalog.json").read_text())
    docs = catalog["nodes"]["model.features.documented"]
    assert docs["metadata"]["comment"] == "People's scores (documented: the 'relation' comment)"
    assert docs["columns"]["score"]["comment"] == "score, it's the latest"


def test_python_model_on_the_session(built):
    assert operations(built, "py_model") == ["BULK_INSERT", "UPSERT"]
    t = checked(built, "py_model")
    assert rows_of(t) == sorted((i, r[2], r[3] * 100) for i, r in latest_events().items())
    assert HudiTable.load(table_path(built["project"], "py_model")).is_mor


# ---- snapshots -----------------------------------------------------------------------------------------------


def snapshot_rows(built, name: str) -> list[dict]:
    t = checked(built, name)
    rows = t.select([c for c in t.column_names if not c.startswith("_hoodie")]).to_pylist()
    return sorted(rows, key=lambda r: (r["id"] is None, r["id"] or 0, r["dbt_valid_from"]))


def test_snapshot_timestamp_strategy_with_invalidated_deletes(built):
    table = HudiTable.load(table_path(built["project"], "snap_ts"))
    assert table.config.record_key_fields == ["dbt_scd_id"]
    assert operations(built, "snap_ts") == ["BULK_INSERT", "UPSERT"]
    rows = snapshot_rows(built, "snap_ts")
    history = [(r["id"], r["name"], r["dbt_valid_from"].day, r["dbt_valid_to"] is None) for r in rows]
    assert history == [(1, "ann", 1, True), (2, "bob", 1, False), (2, "bobby", 2, True), (3, "cy", 1, False),
                       (4, "dee", 1, True), (6, "fay", 2, True)]
    closed = {r["id"]: r for r in rows if r["dbt_valid_to"] is not None}
    assert closed[2]["dbt_valid_to"].day == 2  # closed at the new version's updated_at
    assert closed[3]["dbt_valid_to"].year >= 2025  # hard delete invalidated at snapshot time
    assert len({r["dbt_scd_id"] for r in rows}) == len(rows)


def test_snapshot_check_strategy_with_new_record_deletes_on_mor(built):
    table = HudiTable.load(table_path(built["project"], "snap_check"))
    assert table.is_mor and any(s.log_files for s in table.file_slices())
    rows = snapshot_rows(built, "snap_check")
    history = [(r["id"], r["name"], r["dbt_is_deleted"], r["dbt_valid_to"] is None) for r in rows]
    assert history == [(1, "ann", "False", True), (2, "bob", "False", False), (2, "bobby", "False", True),
                       (3, "cy", "False", False), (3, "cy", "True", True), (4, "dee", "False", True),
                       (6, "fay", "False", True)]
    assert {p[0] for p in PEOPLE if p[4] == 2} | {3} == {r["id"] for r in rows if r["dbt_valid_to"] is None}


# ---- table services ------------------------------------------------------------------------------------------


def lines_with(built, text: str) -> list[str]:
    return [line for line in built["out"].splitlines() if text in line]


def test_compact_and_clean_from_dbt(built):
    path = table_path(built["project"], "svc_mor")
    table = HudiTable.load(path)
    actions = [str(i.action) for i in table.timeline.completed_commits()]
    assert actions == ["deltacommit", "deltacommit", "commit", "deltacommit", "commit"]
    compactions = lines_with(built, f"hudi_compact {path}: instant ")
    assert len(compactions) == 2 and "log files compacted into" in compactions[0], compactions
    assert all(f"instant {i.timestamp}" in " ".join(compactions) for i in table.timeline.completed_commits()
               if str(i.action) == "commit")
    cleaned = lines_with(built, f"hudi_clean {path}: instant ")
    assert len(cleaned) == 1 and ", 0 rows (deleted" in cleaned[0], cleaned
    clean = table.timeline.filter_by([Action.CLEAN], [State.COMPLETED])
    assert len(clean) == 1 and f"instant {clean[0].timestamp}" in cleaned[0]
    assert not any(s.log_files for s in table.file_slices())
    checked(built, "svc_mor")


def test_inline_compaction_setting(built):
    # compaction={'delta_commits': 1}: hoodie.compact.inline with one delta commit per compaction.
    table = HudiTable.load(table_path(built["project"], "svc_inline"))
    assert [str(i.action) for i in table.timeline.completed_commits()] == ["deltacommit", "deltacommit", "commit"]
    checked(built, "svc_inline")


def test_clustering_setting_schedules_and_hudi_cluster_executes(built):
    path = table_path(built["project"], "svc_cluster")
    table = HudiTable.load(path)
    commits = [i for i in table.timeline.completed_commits()]
    assert [str(i.action) for i in commits] == ["commit", "commit", "replacecommit"], commits
    line = lines_with(built, f"hudi_cluster {path}: instant {commits[-1].timestamp}, ")
    assert len(line) == 1 and "file groups clustered into" in line[0], lines_with(built, "hudi_cluster")
    assert table.timeline.commit_metadata(commits[-1]).operation_type == "CLUSTER"
    assert len(table.file_slices()) == 4  # one file group per partition (a, b, c, d)
    assert rows_of(checked(built, "svc_cluster")) == sorted((r[0], r[2], r[3]) for r in latest_events(2).values())


def test_rollback_from_dbt(built):
    path = table_path(built["project"], "svc_rollback")
    line = lines_with(built, f"hudi_rollback {path}: instant ")
    assert len(line) == 1 and "rows (rolled back commit" in line[0], line
    table = HudiTable.load(path)
    assert [i.timestamp for i in table.timeline.completed_commits()] == [built["first"]["svc_rollback"]]
    assert rows_of(checked(built, "svc_rollback")) == sorted((r[0], r[2], r[3]) for r in EVENTS if r[4] == 1)


def test_archive_from_dbt(built):
    path = table_path(built["project"], "svc_archive")
    table = HudiTable.load(path)
    active = [i.timestamp for i in table.timeline.completed_commits()]
    location = TableLocation.at(table.storage, table.base_path)
    layout = table.timeline.layout
    if layout.version == 2:  # version 8+: the LSM history
        history = TimelineHistory.of(location, layout.timeline_path, layout.history_path)
        archived = sorted({i.timestamp for i in history.instants() if i.action in (Action.COMMIT, Action.DELTA_COMMIT)})
    else:
        archived = sorted({e["commitTime"] for e in archived_entries(location)})
    assert len(active) == 2 and len(archived) == 2 and archived[-1] < active[0]  # 4 commits, 2 kept active
    line = lines_with(built, f"hudi_archive {path}: archived 2 instants ({archived[0]} to {archived[1]}) into ")
    assert len(line) == 1, lines_with(built, "hudi_archive")
    assert f"hudi_archive {path}: nothing to archive (2 completed commits on the active timeline" in built["out"]
    bad = ["run-operation", "hudi_archive", "--args", "{model: svc_archive, min_commits: 3, max_commits: 2}"]
    assert not step(built, *bad)["success"]
    assert "hoodie.keep.max.commits=2 must be greater than hoodie.keep.min.commits=3" in built["out"]
    assert rows_of(checked(built, "svc_archive")) == sorted((i, r[2], r[3]) for i, r in latest_events().items())


def test_service_bad_input(built):
    out = built["out"]
    assert "hudi_compact: model a_view is materialized as 'view', which is not a Hudi table" in out
    assert "hudi_compact: unknown argument(s) ['bogus']. Accepted arguments: model, relation, path, options" in out
    assert f"hudi_compact {table_path(built['project'], 'mu_cow')}: the table is COPY_ON_WRITE" in out
    assert "hudi_rollback" in out and "no instant 20200101000000000 on the timeline" in out
    for args in (["hudi_compact", "--args", "{model: a_view}"], ["hudi_compact", "--args", "{model: svc_mor, bogus: 1}"]):
        assert not step(built, "run-operation", *args)["success"]


def test_service_refuses_while_a_write_is_in_flight(built):
    path = table_path(built["project"], "svc_busy")
    assert not step(built, "run-operation", "hudi_compact", "--args", "{model: svc_busy}")["success"]
    assert (f"hudi_compact {path}: a write is in flight (instant {BUSY_INSTANT} commit REQUESTED, lock held by "
            f"{socket.gethostname()}:{os.getpid()}:test)") in built["out"]
    table = HudiTable.load(path)
    assert [i.timestamp for i in table.timeline.completed_commits()] == [built["first"]["svc_busy"]]


# ---- Hudi's documented workflows (issue 38), as dbt spells them --------------------------------------------------


def test_workflow_crud_by_incremental_runs(built):
    """Quick Start's CRUD from dbt: day 1 inserts, day 2 updates, inserts and deletes (change_type_column); the
    first run's rows stay readable by time travel; a downstream model pulls the changes incrementally."""
    path = table_path(built["project"], "wf_crud")
    t = checked(built, "wf_crud")
    latest = latest_events()
    assert rows_of(t) == sorted((i, r[2], r[3]) for i, r in latest.items() if i != 5)
    table = HudiTable.load(path)
    first = table.timeline.completed_commits().first().timestamp
    assert rows_of(table.read_snapshot(as_of=first)) == sorted((r[0], r[2], r[3]) for r in EVENTS if r[4] == 1)
    # the pull sees the updates and inserts, not the delete (Hudi's incremental query returns written records)
    pulled = HudiTable.load(table_path(built["project"], "wf_crud_pull")).read_snapshot()
    assert rows_of(pulled) == sorted((i, r[2], r[3]) for i, r in latest.items())


def test_workflow_schema_evolution_sync_all_columns(built):
    """Schema Evolution from dbt: on_schema_change='sync_all_columns' drops, widens and adds columns as Hudi's
    ALTER TABLE with schema on read; the first day's rows read through the new schema."""
    table = HudiTable.load(table_path(built["project"], "wf_evolve"))
    data = table.read_snapshot()
    assert [c for c in data.column_names if not c.startswith("_hoodie")] == ["id", "part", "score", "ts", "region"]
    assert str(data.schema.field("score").type) == "int64"
    got = sorted(zip(*(data.column(c).to_pylist() for c in ("id", "score", "region"))))
    want = sorted((i, r[3], r[1].upper() if r[4] == 2 else None) for i, r in latest_events().items())
    assert got == want
    assert "ALTER_SCHEMA" in operations(built, "wf_evolve")


def test_workflow_scd_type_2_queries_on_a_snapshot(built):
    """SCD type 2 from dbt (a snapshot, checked in full above): Hudi's SCD page's current-row and point-in-time
    queries on it."""
    assert [(r["id"], r["name"]) for r in sql(built, WF_SCD2_CURRENT)] == [(1, "ann"), (2, "bobby"), (4, "dee"),
                                                                         (6, "fay")]
    assert [(r["id"], r["name"]) for r in sql(built, WF_SCD2_AS_OF)] == [(1, "ann"), (2, "bob"), (3, "cy"),
                                                                        (4, "dee")]


def test_workflow_procedures_savepoint_restore_and_calls(built):
    """SQL Procedures from dbt: hudi_savepoint after day 1, day 2's run on top, CALLs from a run-operation show the
    commits and the savepoint, hudi_restore undoes day 2 as one restore instant."""
    for s in WF_OPS:
        assert step(built, *s["dbt"])["success"], s
    path = table_path(built["project"], "wf_ops")
    table = HudiTable.load(path)
    (savepoint,) = table.savepoints()
    assert savepoint.comments == "before day 2"
    commits = lines_with(built, "wf_call show_commits: ")
    assert len(commits) == 2 and f"commit_time={savepoint.instant_time} " in commits[1]
    assert all("action=commit" in c and "total_records_written=" in c for c in commits)
    (shown,) = lines_with(built, "wf_call show_savepoints: ")
    assert f"savepoint_time={savepoint.instant_time}" in shown
    assert any("key=hoodie.table.name | value=" in line
               for line in lines_with(built, "wf_call show_table_properties: "))
    timeline = lines_with(built, "wf_call show_timeline: ")
    assert "action=restore" in timeline[0] and any("action=savepoint" in line for line in timeline)
    assert rows_of(checked(built, "wf_ops")) == sorted((r[0], r[2], r[3]) for r in EVENTS if r[4] == 1)
