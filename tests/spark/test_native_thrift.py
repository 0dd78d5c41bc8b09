"""Spark's Thrift server (HiveThriftServer2 from pyspark's jars: what JDBC/ODBC clients connect to) reads tables this
engine wrote through the native `hudi` source (issue 24), queried with beeline over JDBC (tests/thrift_server.py; one
server per test session): the same rows as hudi-rs on COW, MOR without and with log files, after compaction and
after an insert_overwrite (a clustering-free replacecommit), through catalog names and through `USING hudi` views
with time travel and incremental options; commits made after the server read a table (which its planning worker
keeps, `table_cache`) are seen by the next query, unchanged tables are planned again without a round trip to the
Python planner (the JVM's `PlanCache`), base files are planned as Spark's `FileScan parquet` and logged
slices split by key; a catalog entry without a readable table is an error naming it, and a `CALL` is refused by
name (no Python driver runs Hudi's procedures there)."""
from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from oracle import completed, rs_incremental, rs_snapshot
from thrift_server import BeelineError

from hudi_engine import HudiTable
from hudi_engine.read_options import AS_OF_INSTANT, BEGIN_INSTANT, END_INSTANT, QUERY_TYPE
from hudi_engine.spark import spark_executor, write
from hudi_engine.spark.catalog_entry import catalog_table_ddl

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
COLUMNS = "id, name, ts, amount, dt"


def _opts(table_type: str, operation: str) -> dict:
    return {"hoodie.table.name": "thrift", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.compact.inline": "false"}


def _write(spark, path: Path, table_type: str, rows: list[tuple], operation: str = "upsert") -> str:
    return write(spark.createDataFrame(rows, SCHEMA), str(path), _opts(table_type, operation)).instant_time


def _tuples(t) -> list[tuple]:
    return sorted(zip(*(t[c].to_pylist() for c in COLUMNS.split(", "))))


def _by_query(rows: list[dict]) -> dict[str, list[tuple]]:
    """beeline's rows of a `SELECT '<q>' AS q, <COLUMNS> ... UNION ALL ...`, per q."""
    out: dict[str, list[tuple]] = defaultdict(list)
    for r in rows:
        out[r["q"]].append((int(r["id"]), r["name"], int(r["ts"]), float(r["amount"]), r["dt"]))
    return {q: sorted(v) for q, v in out.items()}


def _view(name: str, path: Path, options: dict[str, str]) -> str:
    pairs = ", ".join(f"'{k}' '{v}'" for k, v in {"path": str(path), **options}.items())
    return f"CREATE TEMPORARY VIEW {name} USING hudi OPTIONS ({pairs})"


def _union(queries: dict[str, str]) -> str:
    return " UNION ALL ".join(f"SELECT '{q}' AS q, {COLUMNS} FROM {source}" for q, source in queries.items())


def test_thrift_server_reads_engine_tables_over_jdbc(spark, thrift_server, tmp_path):
    server = thrift_server
    paths = {n: tmp_path / n for n in ("cow", "mor", "mor_base", "replaced")}
    rows = [(i, f"n{i}", 1, i * 1.5, f"d{i % 3}") for i in range(30)]
    first = _write(spark, paths["cow"], "COPY_ON_WRITE", rows, "bulk_insert")
    second = _write(spark, paths["cow"], "COPY_ON_WRITE", [(i, f"u{i}", 2, i * 2.5, f"d{i % 3}") for i in range(0, 30, 3)])
    _write(spark, paths["mor"], "MERGE_ON_READ", rows, "bulk_insert")
    _write(spark, paths["mor"], "MERGE_ON_READ", [(i, f"u{i}", 2, i * 2.5, "d0") for i in range(0, 30, 3)])
    _write(spark, paths["mor_base"], "MERGE_ON_READ", rows, "bulk_insert")  # no log files
    _write(spark, paths["replaced"], "COPY_ON_WRITE", rows, "bulk_insert")
    _write(spark, paths["replaced"], "COPY_ON_WRITE", [(100, "over", 2, 0.5, "d1")], "insert_overwrite")
    assert HudiTable.load(str(paths["replaced"])).timeline.completed_commits().last().action == "replacecommit"
    assert any(s.log_files for s in HudiTable.load(str(paths["mor"])).file_slices())
    begin, end = completed(paths["cow"], first), completed(paths["cow"], second)  # the range of the second commit
    names = {n: f"thrift_{n}" for n in paths}
    ddl = "; ".join(f"DROP TABLE IF EXISTS {names[n]}; {catalog_table_ddl(names[n], str(p))}".replace("\n", " ")
                    for n, p in paths.items())
    try:
        server.text(ddl)
        views = [_view("cow_as_of", paths["cow"], {AS_OF_INSTANT: first}),
                 _view("cow_incr", paths["cow"], {QUERY_TYPE: "incremental", BEGIN_INSTANT: begin, END_INSTANT: end}),
                 _view("mor_path", paths["mor"], {})]
        queries = {**{n: names[n] for n in paths}, "cow_as_of": "cow_as_of", "cow_incr": "cow_incr",
                   "mor_path": "mor_path", "cow_sql_as_of": f"{names['cow']} TIMESTAMP AS OF '{first}'"}
        got = _by_query(server.query(_union(queries), setup=views))
        expected = {**{n: _tuples(rs_snapshot(p)) for n, p in paths.items()},
                    "cow_as_of": _tuples(rs_snapshot(paths["cow"], as_of=first)),
                    "cow_sql_as_of": _tuples(rs_snapshot(paths["cow"], as_of=first)),
                    "cow_incr": _tuples(rs_incremental(paths["cow"], begin, end)),
                    "mor_path": _tuples(rs_snapshot(paths["mor"]))}
        for q, want in expected.items():
            assert got.get(q, []) == want, q
        assert len(expected["cow_incr"]) == 10 and expected["cow_as_of"] != expected["cow"]

        plans = server.text(f"EXPLAIN SELECT id FROM {names['cow']} WHERE id = 3; "
                            f"EXPLAIN SELECT {COLUMNS} FROM {names['mor']}").split("== Physical Plan ==")
        assert len(plans) == 3, plans
        point, mor = plans[1], plans[2]
        assert "FileScan parquet" in point and "PushedFilters: [IsNotNull(id), EqualTo(id,3)]" in point, point
        assert "hudi_merge" not in point, point
        # d1 and d2 scanned; d0's base file scanned but for its 10 logged keys, which hudi_merge merges.
        assert "FileScan parquet" in mor and "hudi_merge" in mor, mor
        assert "hudi_unlogged_key(_metadata" in mor and "10 logged keys" in mor, mor

        # Unchanged tables, planned again: the server's JVM reuses the plans it made (`PlanCache`, no round trip to
        # the Python planner, counted by `Planner.roundTrips`), with the same rows.
        trips = "SELECT reflect('hudiengine.spark.Planner', 'roundTrips') AS n"
        before = int(server.query(trips)[0]["n"])
        again = _by_query(server.query(_union({n: names[n] for n in ("cow", "mor")})))
        assert again["cow"] == expected["cow"] and again["mor"] == expected["mor"]
        assert int(server.query(trips)[0]["n"]) == before, "an unchanged table's plan is reused through the server"

        # Commits made after the server read the tables (a compaction, upserts): the next query sees them.
        HudiTable.load(str(paths["mor"])).compact(executor=spark_executor(spark))
        _write(spark, paths["mor"], "MERGE_ON_READ", [(3, "late", 3, 0.0, "d0")])
        _write(spark, paths["cow"], "COPY_ON_WRITE", [(4, "late", 3, 0.0, "d1")])
        got = _by_query(server.query(_union({n: names[n] for n in ("cow", "mor")})))
        assert int(server.query(trips)[0]["n"]) == before + 2, "each changed table planned afresh, once"
        assert got["mor"] == _tuples(rs_snapshot(paths["mor"])) and (3, "late", 3, 0.0, "d0") in got["mor"]
        assert got["cow"] == _tuples(rs_snapshot(paths["cow"])) and (4, "late", 3, 0.0, "d1") in got["cow"]
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- server log ---\n{server.tail()}") from None


def test_a_thrift_query_on_a_location_without_a_readable_table_names_the_table(spark, thrift_server, tmp_path):
    """Issue 24, bad input, through JDBC: the client's error names the catalog table, its location and what was
    found there (a folder of other files; a table version the reader cannot read)."""
    path = tmp_path / "t"
    _write(spark, path, "COPY_ON_WRITE", [(1, "a", 1, 1.0, "d0")], "bulk_insert")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "part-0.parquet").write_bytes(b"not a table")
    old = tmp_path / "old"
    shutil.copytree(path, old)
    ddl = (f"DROP TABLE IF EXISTS thrift_bad_plain; DROP TABLE IF EXISTS thrift_bad_version; "
           f"{catalog_table_ddl('thrift_bad_plain', str(path)).replace(str(path), str(plain))}; "
           f"{catalog_table_ddl('thrift_bad_version', str(old))}").replace("\n", " ")
    thrift_server.text(ddl)
    props = old / ".hoodie" / "hoodie.properties"
    props.write_text(re.sub(r"hoodie\.table\.version=\d+", "hoodie.table.version=5", props.read_text()))
    with pytest.raises(BeelineError, match=r"catalog table (spark_catalog\.)?default\.thrift_bad_plain at \S*plain: "
                                           r"no \.hoodie folder .*; found: part-0\.parquet"):
        thrift_server.query("SELECT id FROM thrift_bad_plain")
    with pytest.raises(BeelineError, match=r"catalog table (spark_catalog\.)?default\.thrift_bad_version at \S*old: "
                                           r".*hoodie\.table\.version=5 \(.*\) is older than supported"):
        thrift_server.query("SELECT id FROM thrift_bad_version")
    # Hudi's procedures run in the Python driver, which the server has not (docs/procedures.md): refused by name
    with pytest.raises(BeelineError, match=r"CALL show_commits: Hudi's procedures run in the Python engine of the "
                                           r"Spark driver .* this Spark process has none"):
        thrift_server.query("CALL show_commits(table => 'thrift_bad_version')")
