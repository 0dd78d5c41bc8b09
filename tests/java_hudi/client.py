"""Real Apache Hudi (Java) as the test oracle: a client for one long-lived oracle process per release
(tests/java_hudi/server.py), so hundreds of checks pay one JVM start.

    java = JavaHudi(release, workdir)        # the process starts at the first request
    java.snapshot(path)                      # -> pyarrow.Table, read by Java Hudi's Spark source
    java.sql("INSERT INTO t VALUES ...")     # any Spark SQL, Hudi's extension and catalog loaded
    java.write(path, table, options)         # df.write.format("hudi") of a pyarrow table's rows
    java.hfile_cells(path)                   # -> the cells of an HFile as Hudi's own HFile reader reads them

A Java exception comes back as `JavaHudiError` with Java's message and its causes.
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from java_hudi.env import OracleRelease

SERVER = Path(__file__).with_name("server.py")


class JavaHudiError(AssertionError):
    """A request Java Hudi failed: `error` is the Java exception, `causes` its chain."""

    def __init__(self, what: str, answer: Mapping[str, Any]) -> None:
        self.error = answer.get("error", "")
        self.causes = list(answer.get("causes", []))
        super().__init__(f"Java Hudi failed {what}: {self.error}\n" + "\n".join(f"  caused by {c}" for c in
                                                                              self.causes[1:]))

    def mentions(self, text: str) -> bool:
        return any(text in c for c in [self.error, *self.causes])


class JavaHudi:
    """One oracle process of one Hudi release; `workdir` holds its log, warehouse and answers."""

    def __init__(self, release: OracleRelease, workdir: Path, *, timeout: float = 300,
                 conf: Mapping[str, str] | None = None) -> None:
        self.release = release
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.conf = dict(conf or {})
        self.requests = 0
        self.seconds = 0.0  # time spent waiting for answers, JVM start included
        self._process: subprocess.Popen | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._ids = itertools.count()

    @property
    def hudi(self) -> str:
        return self.release.hudi

    @property
    def log(self) -> Path:
        return self.workdir / "oracle.log"

    def tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- the process

    def start(self) -> JavaHudi:
        if self._process is not None and self._process.poll() is None:
            return self
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = {"hudi": self.hudi, "jar": self.release.jar, "workdir": str(self.workdir), "conf": self.conf}
        env = {k: v for k, v in os.environ.items()
               if k not in ("SPARK_HOME", "PYSPARK_SUBMIT_ARGS", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                            "PYTHONPATH", "VIRTUAL_ENV", "SPARK_CONF_DIR")}
        env.update(JAVA_HOME=self.release.java_home, PYSPARK_PYTHON=self.release.python,
                   PYSPARK_DRIVER_PYTHON=self.release.python)
        log = open(self.log, "a")  # noqa: SIM115 - the process owns it
        self._process = subprocess.Popen([self.release.python, str(SERVER), json.dumps(config)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                         env=env, cwd=self.workdir, start_new_session=True)
        log.close()
        self._answers = queue.Queue()
        threading.Thread(target=self._pump, args=(self._process, self._answers), daemon=True).start()
        self._receive("starting", timeout=300)
        return self

    @staticmethod
    def _pump(process: subprocess.Popen, answers: queue.Queue) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            answers.put(line)
        answers.put(None)

    def _receive(self, what: str, timeout: float) -> dict:
        try:
            line = self._answers.get(timeout=timeout)
        except queue.Empty:
            self.stop(kill=True)
            raise AssertionError(f"Java Hudi {self.hudi} did not answer {what} within {timeout:.0f} s "
                                 f"(stopped):\n{self.tail()}") from None
        if line is None:
            code = self._process.wait() if self._process else None
            self._process = None
            raise AssertionError(f"Java Hudi {self.hudi} exited ({code}) while {what}:\n{self.tail()}")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise JavaHudiError(what, answer)
        return answer

    def request(self, what: str, **request: Any) -> dict:
        self.start()
        assert self._process is not None and self._process.stdin is not None
        self.requests += 1
        started = time.monotonic()
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            return self._receive(what, self.timeout)
        finally:
            self.seconds += time.monotonic() - started

    def stop(self, kill: bool = False) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        if not kill:
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps({"op": "stop"}) + "\n")
                process.stdin.flush()
                process.wait(timeout=60)
                return
            except (OSError, subprocess.TimeoutExpired):
                pass
        os.killpg(process.pid, 9)
        process.wait()

    # -- requests

    def _answer_dir(self) -> Path:
        return self.workdir / "answers" / str(next(self._ids))

    def _rows(self, out: Path) -> pa.Table:
        table = pq.read_table(out)
        shutil.rmtree(out, ignore_errors=True)
        return table

    def sql(self, statement: str, *, rows: bool = False) -> pa.Table | None:
        """Run one statement; with rows=True (or a query), answer its rows."""
        query = rows or statement.lstrip().split(None, 1)[0].upper() in ("SELECT", "WITH", "SHOW", "CALL",
                                                                         "DESCRIBE", "DESC")
        if not query:
            self.request(f"running {statement!r}", op="sql", sql=statement)
            return None
        out = self._answer_dir()
        self.request(f"running {statement!r}", op="sql", sql=statement, out=str(out))
        return self._rows(out)

    def read(self, path: str | Path, options: Mapping[str, str] | None = None) -> pa.Table:
        out = self._answer_dir()
        opts = {k: str(v) for k, v in (options or {}).items()}
        self.request(f"reading {path} with {opts}", op="read", path=str(path), options=opts, out=str(out))
        return self._rows(out)

    def snapshot(self, path: str | Path, **options: str) -> pa.Table:
        return self.read(path, {"hoodie.datasource.query.type": "snapshot", **options})

    def time_travel(self, path: str | Path, instant: str, **options: str) -> pa.Table:
        return self.read(path, {"as.of.instant": instant, **options})

    def read_optimized(self, path: str | Path, **options: str) -> pa.Table:
        return self.read(path, {"hoodie.datasource.query.type": "read_optimized", **options})

    def incremental(self, path: str | Path, begin: str, end: str | None = None, **options: str) -> pa.Table:
        opts = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
                **options}
        if end is not None:
            opts["hoodie.datasource.read.end.instanttime"] = end
        return self.read(path, opts)

    def cdc(self, path: str | Path, begin: str, end: str | None = None, **options: str) -> pa.Table:
        return self.incremental(path, begin, end, **{"hoodie.datasource.query.incremental.format": "cdc",
                                                     **options})

    def write(self, path: str | Path, rows: pa.Table, options: Mapping[str, str], mode: str = "append") -> None:
        """`df.write.format("hudi")` of `rows` (handed over as a parquet file) with Hudi's own options."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        source = self.workdir / f"input-{next(self._ids)}.parquet"
        pq.write_table(rows, source)
        opts = {k: str(v) for k, v in options.items()}
        try:
            self.request(f"writing {path} with {opts}", op="write", path=str(path), input=str(source),
                         options=opts, mode=mode)
        finally:
            source.unlink(missing_ok=True)

    def service(self, path: str | Path, options: Mapping[str, str], action: str, *, inflight: bool = False) -> str:
        """One step of a table service by Hudi's write client, leaving it pending (server.py, `service`): the
        instant."""
        opts = {k: str(v) for k, v in options.items()}
        return self.request(f"{action} on {path} with {opts}", op="service", path=str(path), options=opts,
                            action=action, inflight=inflight)["instant"]

    def hfile_cells(self, path: str | Path, *, reader: str = "native", lookup: list[str] | None = None
                    ) -> tuple[int, list[tuple[bytes, bytes]], dict[bytes, bytes]]:
        """(entry count, cells in file order, values found for `lookup`) of the HFile at `path`, read by Hudi's own
        reader ("native": `HFileReaderImpl`; "hbase": the shaded HBase reader of the 0.x bundles)."""
        answer = self.request(f"reading the HFile {path} with the {reader} reader", op="hfile_read", path=str(path),
                              reader=reader, lookup=list(lookup or []))
        cells = [(base64.b64decode(k), base64.b64decode(v)) for k, v in answer["cells"]]
        found = {k.encode("utf-8"): base64.b64decode(v) for k, v in answer["found"].items()}
        return answer["entries"], cells, found

    def write_hfile(self, path: str | Path, cells: list[tuple[str, bytes]], *, block_size: int = 1024 * 1024,
                    codec: str = "GZIP") -> None:
        """An HFile written by Hudi 1.x's own `HFileWriterImpl` (keys in order, as its callers give them)."""
        self.request(f"writing the HFile {path}", op="hfile_write", path=str(path), block_size=block_size,
                     codec=codec, cells=[[k, base64.b64encode(v).decode("ascii")] for k, v in cells])

    def versions(self) -> dict:
        return self.request("reporting versions", op="version")
