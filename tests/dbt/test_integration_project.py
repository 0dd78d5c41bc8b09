"""The README's main command: `bash integration_project/run.sh` builds the example project for two days.

Runs the real script in place (as a user would; its output folders are git-ignored) on a machine without Java (the
system JDK hidden: the script takes a JDK from PyPI, see docs/operations.md "Without Java"), then checks the tables it left with
hudi-rs and the artifacts dbt wrote.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from no_java import without_java
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROJECT = Path(__file__).resolve().parents[2] / "integration_project"
WAREHOUSE = PROJECT / "spark-warehouse" / "analytics.db"
HUDI_TABLES = ["customers", "customers_history", "daily_revenue", "open_order_lines", "open_order_lines_mirror",
               "order_activity", "order_lines_enriched", "orders"]


@pytest.fixture(scope="module")
def main_command(tmp_path_factory):
    """run.sh as on a fresh machine without Java (tests/no_java.py): it runs on the JDK from PyPI."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    argv, env, _ = without_java(f'exec bash "{PROJECT / "run.sh"}"', tmp_path_factory.mktemp("no-java") / "bin", env)
    proc = subprocess.run(argv, cwd=PROJECT.parent, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"run.sh failed:\n{proc.stdout[-10000:]}\n{proc.stderr[-5000:]}"
    assert "No Java 17+ found (JAVA_HOME, PATH)" in proc.stderr, proc.stderr[-3000:]
    return proc.stdout


def test_both_days_build_green(main_command):
    done = [line for line in main_command.splitlines() if "Done. PASS=" in line]
    assert len(done) == 2, done
    for line in done:
        assert "ERROR=0" in line and "SKIP=0" in line and "WARN=0" in line, line
        assert "PASS=56" in line, line


def test_timelines_are_printed(main_command):
    out = main_command[main_command.index("Timelines of the 8 Hudi tables"):]
    for name in HUDI_TABLES:
        assert f"\n{name}  (" in out, name
    assert "replacecommit  COMPLETED  INSERT_OVERWRITE" in out
    assert "deltacommit    COMPLETED  DELETE" in out


@pytest.mark.parametrize("name", ["orders", "open_order_lines", "open_order_lines_mirror", "daily_revenue",
                                  "order_lines_enriched", "customers_history"])
def test_tables_read_the_same_with_hudi_rs(main_command, name):
    path = WAREHOUSE / name
    ours = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), name)
    assert len(HudiTable.load(str(path)).timeline.completed_commits()) == 2


def test_partial_updates_merged(main_command):
    # hudi-rs refuses tables whose payload merges field by field; the engine's snapshot is checked by value (and
    # the project's own tests checked the same through Spark SQL).
    rows = {r["customer_id"]: r for r in HudiTable.load(str(WAREHOUSE / "customers")).read_snapshot().to_pylist()}
    assert len(rows) == 7
    assert (rows[2]["name"], rows[2]["email"], rows[2]["tier"]) == ("Bob", "bob@new.example", "silver")
    assert (rows[4]["name"], rows[4]["email"], rows[4]["tier"]) == ("Dan", "dan@example.com", "gold")


def test_run_results_carry_the_commit(main_command):
    results = json.loads((PROJECT / "target" / "run_results.json").read_text())["results"]
    by_id = {r["unique_id"]: r for r in results}
    orders = by_id["model.hudi_example.orders"]["adapter_response"]
    assert (orders["operation"], orders["rows_inserted"], orders["rows_updated"], orders["rows_deleted"]) == (
        "upsert", 3, 2, 0)
    assert orders["instant_time"] == HudiTable.load(str(WAREHOUSE / "orders")).timeline.completed_commits()[-1].timestamp
    deletes = by_id["model.hudi_example.open_order_lines"]["adapter_response"]
    assert (deletes["operation"], deletes["rows_deleted"]) == ("delete", 2)


def test_a_line_deleted_upstream_is_deleted_downstream_through_the_cdc_query(main_command):
    """open_order_lines (a CDC table) deleted the lines cancelled on day 2; open_order_lines_mirror applied its CDC
    changes in one upsert that deleted the same keys."""
    upstream = HudiTable.load(str(WAREHOUSE / "open_order_lines"))
    first, second = upstream.timeline.completed_commits()
    changes = upstream.read_changes(first.completion_time).to_pylist()  # version 9: after the first's completion
    assert [c["op"] for c in changes] == ["d", "d"]
    mirror = HudiTable.load(str(WAREHOUSE / "open_order_lines_mirror"))
    last = mirror.timeline.completed_commits()[-1]
    assert mirror.timeline.commit_metadata(last).operation_type == "UPSERT"
    keys = lambda t: sorted((r["order_id"], r["line_no"]) for r in t.read_snapshot().to_pylist())  # noqa: E731
    assert keys(mirror) == keys(upstream) and len(keys(mirror)) == 5


def test_microbatch_model_wrote_one_instant_per_batch(main_command):
    # Day 1: the batch of 2024-03-01; day 2: that day again and 2024-03-02 (run.sh passes the event time range).
    assert "Batch 2 of 2 OK created batch 2024-03-02 of analytics.order_activity" in main_command
    table = HudiTable.load(str(WAREHOUSE / "order_activity"))
    assert [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_commits()] == [
        "BULK_INSERT", "UPSERT", "UPSERT"]
    rows = rs_snapshot(WAREHOUSE / "order_activity")
    assert rows.num_rows == 10  # distinct (order_id, line_no) of raw_orders
    assert_same_rows(table.read_snapshot(), rows, "order_activity")


def test_snapshot_history_of_customers(main_command):
    rows = rs_snapshot(WAREHOUSE / "customers_history").to_pylist()
    assert HudiTable.load(str(WAREHOUSE / "customers_history")).config.record_key_fields == ["dbt_scd_id"]
    versions = sorted((r["customer_id"], r["dbt_valid_to"] is None) for r in rows)
    # Customers 2 and 4 changed on day 2 (a closed and a current version each), 7 arrived.
    assert versions == [(1, True), (2, False), (2, True), (3, True), (4, False), (4, True), (5, True), (6, True),
                        (7, True)]
    current = {r["customer_id"]: r for r in rows if r["dbt_valid_to"] is None}
    assert current[2]["email"] == "bob@new.example" and current[4]["tier"] == "gold"


def test_contract_on_orders(main_command):
    assert "model.hudi_example.orders" in (PROJECT / "target" / "manifest.json").read_text()
    manifest = json.loads((PROJECT / "target" / "manifest.json").read_text())
    assert manifest["nodes"]["model.hudi_example.orders"]["config"]["contract"]["enforced"] is True


def test_the_manifest_and_the_console_name_the_hudi_tables(main_command):
    """dbt renders a Hudi table by its catalog name (the native hudi source, on by default): manifest.json's
    relation_name of every Hudi model and of the snapshot, and the console's START / OK lines."""
    manifest = json.loads((PROJECT / "target" / "manifest.json").read_text())
    names = {n["name"]: n["relation_name"] for n in manifest["nodes"].values() if n["name"] in HUDI_TABLES}
    assert names == {name: f"analytics.{name}" for name in HUDI_TABLES}
    assert "hudi__" not in main_command
    assert "model analytics.orders " in main_command and "snapshot analytics.customers_history " in main_command


def test_orders_keeps_column_stats(main_command):
    """`column_stats=true` on orders: its metadata table has column and partition stats, built on day 1 and kept by
    day 2's upsert, each file's as its footer gives them (Java reads the table with them below)."""
    from metadata_tables import assert_stats_match_files

    path = WAREHOUSE / "orders"
    assert HudiTable.load(str(path)).config.metadata_partitions == ["column_stats", "files", "partition_stats"]
    assert assert_stats_match_files(path) > 0


@pytest.mark.parametrize("hudi", ["0.15.0", "1.2.0"])
def test_java_hudi_reads_every_table_as_the_engine_does(main_command, java_hudi, hudi):
    """Real Apache Hudi reads each Hudi table of both days equal to the engine's snapshot: every column, with types,
    sorted by record key (issue 40, item 2). The tables are version 9 (the default), daily_revenue version 6
    (`table_version=6`): 1.2.0 reads them all, 0.15.0 the version-6 one (Hudi 0.x reads no version 8 or 9)."""
    from java_hudi.compare import assert_same_table

    java = java_hudi(hudi)
    versions = {name: HudiTable.load(str(WAREHOUSE / name)).config.version for name in HUDI_TABLES}
    assert versions == {name: 6 if name == "daily_revenue" else 9 for name in HUDI_TABLES}, versions
    for name in HUDI_TABLES:
        if hudi.startswith("0.") and versions[name] != 6:
            continue
        path = WAREHOUSE / name
        table = HudiTable.load(str(path))
        assert_same_table(table.read_snapshot(), java.snapshot(path), f"{name}, read by Java Hudi {hudi}")
