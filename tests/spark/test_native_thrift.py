"""Spark's Thrift server (HiveThriftServer2 from pyspark's jars: what JDBC/ODBC clients connect to) reads tables this
engine wrote through the native `hudi` source (issue 24), queried with beeline (pyspark's jars) over JDBC: the same
rows as hudi-rs on COW and MOR with log files, a commit made after the server started is seen by the next query,
base files planned as Spark's `FileScan parquet`."""
from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from oracle import rs_snapshot

from hudi_engine.spark import write
from hudi_engine.spark.datasource import catalog_table_ddl
from hudi_engine.spark.native import server_args, spark_jars_dir

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def _opts(table_type: str, operation: str) -> dict:
    return {"hoodie.table.name": "thrift", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.compact.inline": "false"}


def _write(spark, path: Path, table_type: str, rows: list[tuple], operation: str = "upsert") -> None:
    write(spark.createDataFrame(rows, SCHEMA), str(path), _opts(table_type, operation))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _java() -> str:
    return os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"


class ThriftServer:
    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.log = folder / "thrift.log"
        args, env = server_args({
            "spark.sql.warehouse.dir": str(folder / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={folder}/metastore_db;create=true",
            "spark.ui.enabled": "false", "spark.sql.session.timeZone": "UTC", "spark.driver.host": "127.0.0.1",
        })
        submit = Path(spark_jars_dir()).parent / "bin" / "spark-submit"
        cmd = [str(submit), "--master", "local[2]", "--driver-memory", "1g", "--class", SERVER, *args,
               "--hiveconf", f"hive.server2.thrift.port={self.port}", "--hiveconf",
               "hive.server2.thrift.bind.host=127.0.0.1", "spark-internal"]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
                                            env={**os.environ, **env}, start_new_session=True)

    def wait(self, seconds: float = 240) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"Thrift server exited {self.process.returncode}:\n{self.tail()}")
            try:
                self.query("SELECT 1")
                return
            except AssertionError:
                time.sleep(3)
        raise AssertionError(f"Thrift server not answering on port {self.port}:\n{self.tail()}")

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def query(self, sql: str) -> list[dict]:
        """Rows of `sql` through JDBC (beeline), as strings by column name."""
        return list(csv.DictReader(io.StringIO(self.text(sql))))

    def text(self, sql: str) -> str:
        """beeline's output of `sql` (CSV, header first)."""
        cmd = [_java(), "-cp", str(spark_jars_dir() / "*"), "org.apache.hive.beeline.BeeLine",
               "-u", f"jdbc:hive2://127.0.0.1:{self.port}/default", "-n", "test", "--silent=true",
               "--outputformat=csv2", "-e", sql]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise AssertionError(f"beeline {sql!r}: exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}")
        # beeline echoes its prompt (`0: jdbc:hive2://...> `) before the header when stdin is no terminal.
        return re.sub(r"^\d+: jdbc:hive2://\S+> ", "", done.stdout.strip(), flags=re.MULTILINE)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def _rows(rows: list[dict]) -> list[tuple]:
    return sorted((int(r["id"]), r["name"], int(r["ts"]), float(r["amount"]), r["dt"]) for r in rows)


def _expected(path: Path) -> list[tuple]:
    t = rs_snapshot(path)
    return sorted(zip(t["id"].to_pylist(), t["name"].to_pylist(), t["ts"].to_pylist(), t["amount"].to_pylist(),
                      t["dt"].to_pylist()))


def test_thrift_server_reads_engine_tables_over_jdbc(spark, tmp_path):
    cow, mor = tmp_path / "cow", tmp_path / "mor"
    for path, table_type in ((cow, "COPY_ON_WRITE"), (mor, "MERGE_ON_READ")):
        _write(spark, path, table_type, [(i, f"n{i}", 1, i * 1.5, f"d{i % 3}") for i in range(30)], "bulk_insert")
        _write(spark, path, table_type, [(i, f"u{i}", 2, i * 2.5, f"d{i % 3}") for i in range(0, 30, 3)])
    server = ThriftServer(tmp_path)
    try:
        server.wait()
        for path, name in ((cow, "thrift_cow"), (mor, "thrift_mor")):
            server.query(catalog_table_ddl(name, str(path)).replace("\n", " "))
            columns = "id, name, ts, amount, dt"
            assert _rows(server.query(f"SELECT {columns} FROM {name}")) == _expected(path), name
            assert server.query(f"SELECT count(*) AS n FROM {name} WHERE dt = 'd1'")[0]["n"] == "10"
        plan = server.text("EXPLAIN SELECT id FROM thrift_cow WHERE id = 3")  # a multi-line cell: the raw text
        assert "FileScan parquet" in plan and "PushedFilters: [IsNotNull(id), EqualTo(id,3)]" in plan, plan
        # A commit made after the server started: the next query sees it, no refresh.
        _write(spark, mor, "MERGE_ON_READ", [(3, "late", 3, 0.0, "d0")])
        assert server.query("SELECT name FROM thrift_mor WHERE id = 3")[0]["name"] == "late"
        assert _rows(server.query("SELECT id, name, ts, amount, dt FROM thrift_mor")) == _expected(mor)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- server log ---\n{server.tail()}") from None
    finally:
        server.stop()


