"""Spark's Thrift server (HiveThriftServer2 from pyspark's jars: what JDBC/ODBC clients connect to) with the native
`hudi` source (`hudi_engine.spark.native.server_args`), and beeline (pyspark's jars too) as its JDBC client. Used by
tests/spark/test_native_thrift.py (one server per test session) and bench/bench_native_read.py."""
from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from hudi_engine.spark.native import server_args, spark_jars_dir

SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
# beeline echoes its prompt (`0: jdbc:hive2://...> `) before a statement's output when stdin is no terminal.
_PROMPT = re.compile(r"^\d+: jdbc:hive2://\S+> ", flags=re.MULTILINE)
# beeline's own timing of each statement, after its rows when not silent: "12 rows selected (0.345 seconds)".
_ELAPSED = re.compile(r"^(?:[\d,]+ rows? selected|No rows selected|No rows affected) \(([\d.]+) seconds\)$",
                      flags=re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _java() -> str:
    return os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"


class BeelineError(AssertionError):
    """A statement beeline ran failed: its output and the server's error (stderr) are the message."""


class ThriftServer:
    """A Thrift server on 127.0.0.1 with a Derby metastore and a warehouse in `folder`."""

    def __init__(self, folder: Path, *, master: str = "local[2]", driver_memory: str = "1g",
                 conf: Mapping[str, str] | None = None) -> None:
        self.port = _free_port()
        self.folder = folder
        self.log = folder / "thrift.log"
        args, env = server_args({
            "spark.sql.warehouse.dir": str(folder / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={folder}/metastore_db;create=true",
            "spark.ui.enabled": "false", "spark.sql.session.timeZone": "UTC", "spark.driver.host": "127.0.0.1",
            **(conf or {}),
        })
        submit = Path(spark_jars_dir()).parent / "bin" / "spark-submit"
        cmd = [str(submit), "--master", master, "--driver-memory", driver_memory, "--class", SERVER, *args,
               "--hiveconf", f"hive.server2.thrift.port={self.port}", "--hiveconf",
               "hive.server2.thrift.bind.host=127.0.0.1", "spark-internal"]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
                                            env={**os.environ, **env}, start_new_session=True)

    def wait(self, seconds: float = 240) -> "ThriftServer":
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"Thrift server exited {self.process.returncode}:\n{self.tail()}")
            try:
                self.query("SELECT 1")
                return self
            except BeelineError:
                time.sleep(3)
        raise AssertionError(f"Thrift server not answering on port {self.port}:\n{self.tail()}")

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def _beeline(self, script: str, *options: str) -> subprocess.CompletedProcess:
        """beeline on one JDBC connection (one session) running `script`'s statements in order."""
        with tempfile.NamedTemporaryFile("w", suffix=".sql", dir=self.folder, delete=False) as f:
            f.write(script)
        try:
            cmd = [_java(), "-cp", str(spark_jars_dir() / "*"), "org.apache.hive.beeline.BeeLine",
                   "-u", f"jdbc:hive2://127.0.0.1:{self.port}/default", "-n", "test", "--outputformat=csv2",
                   *options, "-f", f.name]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        finally:
            os.unlink(f.name)

    def text(self, sql: str) -> str:
        """beeline's output of the statements in `sql` (`;`-separated, one session): CSV, a header before each
        result's rows."""
        done = self._beeline(sql.rstrip().rstrip(";") + ";\n", "--silent=true")
        if done.returncode != 0:
            # The server's error, without the Java stack frames that bury it.
            error = "\n".join(line for line in done.stderr.splitlines() if not line.lstrip().startswith("at "))
            raise BeelineError(f"beeline {sql!r}: exit {done.returncode}\n{done.stdout}\n{error[:20000]}")
        return _PROMPT.sub("", done.stdout.strip())

    def query(self, sql: str, setup: Sequence[str] = ()) -> list[dict]:
        """Rows of the query `sql`, as strings by column name; in the same session after the `setup` statements
        (commands such as CREATE TEMPORARY VIEW), each of which prints an empty result, its header `Result`."""
        lines = self.text("; ".join([*setup, sql])).splitlines()
        if lines[:len(setup)] != ["Result"] * len(setup):
            raise BeelineError(f"beeline: expected {len(setup)} empty results before the query's:\n" + "\n".join(lines[:20]))
        return list(csv.DictReader(io.StringIO("\n".join(lines[len(setup):]))))

    def timed(self, statements: Sequence[str]) -> list[float]:
        """Seconds beeline reports for each of `statements`, run in order on one connection (its own per-statement
        elapsed time: from sending the statement to the last row fetched)."""
        done = self._beeline("".join(s.rstrip().rstrip(";") + ";\n" for s in statements), "--silent=false")
        seconds = [float(s) for s in _ELAPSED.findall(done.stdout + done.stderr)]
        if done.returncode != 0 or len(seconds) != len(statements):
            raise BeelineError(f"beeline timed {len(statements)} statements, got {len(seconds)} timings "
                               f"(exit {done.returncode})\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return seconds

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
