"""SparkSessions for this engine: an in-process local session, and a local standalone cluster for honest tests.

Spark's Python workers run `sys.executable` unless `spark.pyspark.python` says otherwise (by default they would
run the first `python3` on PATH, which lacks this venv's packages); that is fixed when the JVM starts. They get
`hudi_engine` from the driver when they lack it (`executor_env`), never from this machine's folders: a cluster's
executors could not see those.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from hudi_engine.errors import HudiError

TEST_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # The Hudi data source prunes partitions in `pushFilters`; Spark refuses a reader that implements it
    # unless this is on (DATA_SOURCE_PUSHDOWN_DISABLED).
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "512m",
    # Python workers are reused between tasks: a fresh interpreter per task would re-import pyarrow each time.
    "spark.python.worker.reuse": "true",
}


def python_env() -> dict[str, str]:
    """Environment for the JVM and its Python workers: this interpreter on the driver and in the workers."""
    return {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}


def local_spark_session(
    app_name: str = "hudi-tests",
    master: str = "local[2]",
    warehouse_dir: str | os.PathLike | None = None,
    extra_conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession (created, or the running one) with the `hudi` data source registered.

    `master` may be `local[n]` or a standalone master URL (`spark://host:port`, see `standalone_cluster`).
    `spark.pyspark.python` in `extra_conf` is the Python of the workers (default: this interpreter). Settings that
    only apply when the JVM starts (Python executable, memory) do nothing if a session is already running in this
    process.
    """
    from hudi_engine.spark.datasource import register_data_source

    builder = SparkSession.builder.appName(app_name).master(master)
    conf = dict(TEST_CONF)
    conf["spark.pyspark.python"] = sys.executable
    conf["spark.pyspark.driver.python"] = sys.executable
    if warehouse_dir is not None:
        conf["spark.sql.warehouse.dir"] = str(Path(warehouse_dir).resolve())
    conf.update(extra_conf or {})
    # Read by the JVM launcher and by SparkContext when it starts (its Python workers run PYSPARK_PYTHON).
    os.environ.update({**python_env(), "PYSPARK_PYTHON": conf["spark.pyspark.python"]})
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register_data_source(spark)
    return spark


# ---- a local standalone cluster ---------------------------------------------------------------------------


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (it holds `bin/spark-class` and `jars/`)."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise HudiError(f"{home}: no bin/spark-class in the pyspark package, cannot start a standalone cluster")
    return home


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive_workers(web_port: int) -> int:
    """ALIVE workers the master reports on its JSON page; -1 while the master is not answering."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=2) as r:
            state = json.load(r)
    except (OSError, ValueError):
        return -1
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


@contextlib.contextmanager
def standalone_cluster(
    n_workers: int = 2,
    *,
    worker_cores: int = 1,
    worker_memory: str = "1g",
    daemon_memory: str = "256m",
    timeout: float = 90.0,
) -> Iterator[str]:
    """Start a Spark standalone master and `n_workers` workers on 127.0.0.1; yield the master URL.

    Each is a separate JVM started with the pyspark package's `bin/spark-class`, so executors run in their own
    processes and nothing can lean on driver memory. Waits at most `timeout` seconds for every worker to
    register; all processes (and their process groups) are killed on exit, also when startup fails.
    """
    home = spark_home()
    work = Path(tempfile.mkdtemp(prefix="hudi-spark-cluster-"))
    # Executors inherit the workers' environment: nothing of this machine's Python path, so that they get
    # `hudi_engine` the way a real cluster's executors do (each driver picks their Python, spark.pyspark.python).
    inherited = {k: v for k, v in os.environ.items()
                 if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env = {**inherited, "SPARK_HOME": str(home), "SPARK_DAEMON_MEMORY": daemon_memory,
           # Master and workers only route messages: skip the optimizing JIT and its CPU at startup.
           "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
           "SPARK_LOG_DIR": str(work / "logs"), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_WORKER_DIR": str(work / "work"), "SPARK_NO_DAEMONIZE": "1"}
    port, web_port = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[tuple[subprocess.Popen, Path]] = []

    def start(name: str, args: list[str]) -> None:
        log = work / f"{name}.log"
        with open(log, "wb") as out:
            # A new session per daemon so the whole process group can be killed on exit.
            p = subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        procs.append((p, log))

    def fail(what: str) -> HudiError:
        logs = "\n".join(f"--- {log.name}:\n{_tail(log)}" for _, log in procs)
        return HudiError(f"standalone cluster {url}: {what}\n{logs}")

    try:
        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(web_port)])
        for i in range(n_workers):
            start(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                  "--port", "0", "--webui-port", "0", "--cores", str(worker_cores),
                                  "--memory", worker_memory, "--work-dir", str(work / f"work-{i}")])
        deadline = time.monotonic() + timeout
        while (alive := _alive_workers(web_port)) < n_workers:
            dead = [log.name for p, log in procs if p.poll() is not None]
            if dead:
                raise fail(f"{', '.join(dead)} exited during startup")
            if time.monotonic() > deadline:
                raise fail(f"{max(alive, 0)} of {n_workers} workers registered after {timeout:.0f} s")
            time.sleep(0.5)
        yield url
    finally:
        for p, _ in reversed(procs):
            _stop(p)
        shutil.rmtree(work, ignore_errors=True)


def _stop(p: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the daemon's process group (a worker's executors included), SIGKILL it if it lingers."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # children the daemon left behind (executors, Python workers)
        return
