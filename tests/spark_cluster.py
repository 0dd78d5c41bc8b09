"""A local Spark standalone cluster for tests: a master and workers as separate JVMs started from the pyspark
package, so executors run in their own processes with their own Python (the cluster tests' executors lack this
project, as a real cluster's do)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def spark_home() -> Path:
    """The Spark distribution inside the installed pyspark package (it holds `bin/spark-class` and `jars/`)."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise RuntimeError(f"{home}: no bin/spark-class in the pyspark package, cannot start a standalone cluster")
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
    timeout: float = 300.0,  # three JVMs starting on a loaded CI machine; a quiet one takes 10-20 s
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

    def fail(what: str) -> RuntimeError:
        logs = "\n".join(f"--- {log.name}:\n{_tail(log)}" for _, log in procs)
        return RuntimeError(f"standalone cluster {url}: {what}\n{logs}")

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
