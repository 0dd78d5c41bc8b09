"""The real-Hudi side of bench_hudi_java.py: one Spark session with a pinned Apache Hudi release's bundle (Java),
driven by requests, one JSON object a line on stdin, answered one JSON object a line on the protocol pipe.

Runs under the release's own Python (tests/java_hudi/env.py: pyspark 3.5 and nothing of this project), so it imports
only the standard library and pyspark. It times what the engine's side times: from a cached, counted DataFrame of
the same source parquet to the completed commit, `df.write.format("hudi").options(...).mode(...).save(path)` only.

Requests (`op`):
- `cache`: `spark.read.parquet(src)`, cached and counted, kept under `name`; answers the row count.
- `write`: the timed write of DataFrame `name` to `path`; answers `seconds`, the Spark `tasks` and `jobs` of the
  write (the status tracker, by job group), and the peak RSS of this process's JVM during the write (sampled every
  20 ms), MB.
- `stop`: end the session.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import traceback


def _protocol_pipe():
    """Answers go to the real stdout; fd 1 then points at stderr so that nothing the JVM prints breaks a line."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _session(config: dict):
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(config["master"]).appName(f"hudi-bench-java-{config['hudi']}")
    conf = {
        "spark.jars": config["jar"],
        # What Hudi's quick start sets for Spark 3.5: Kryo with Hudi's registrar, the session extension and catalog.
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
        "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.sql.warehouse.dir": os.path.join(config["workdir"], "warehouse"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={config['workdir']}",
        "spark.driver.host": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        **config["conf"],
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _jvm_pid() -> int | None:
    """The JVM pyspark started for this process (a child running java)."""
    try:
        out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        pid, comm = line.split(None, 1)
        if "java" in comm:
            return int(pid)
    return None


class _PeakRss:
    """Peak VmRSS of a pid while a block runs, sampled every 20 ms (as bench/common.py's RssSampler does)."""

    def __init__(self, pid: int | None) -> None:
        self.pid, self.peak = pid, 0.0
        self._stop = threading.Event()

    def _rss(self) -> float:
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def _loop(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> "_PeakRss":
        if self.pid:
            self.peak = self._rss()
            self._t = threading.Thread(target=self._loop, daemon=True)
            self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.pid:
            self._stop.set()
            self._t.join()


def _tasks(sc, group: str) -> tuple[int, int]:
    """(jobs, tasks) that Spark ran under job group `group`."""
    tracker = sc.statusTracker()
    jobs = tracker.getJobIdsForGroup(group)
    tasks = 0
    for j in jobs:
        info = tracker.getJobInfo(j)
        for s in info.stageIds if info else []:
            stage = tracker.getStageInfo(s)
            tasks += stage.numTasks if stage else 0
    return len(jobs), tasks


def _error(e: BaseException) -> dict:
    java = getattr(e, "java_exception", None)
    if java is not None:
        chain, cause = [], java
        while cause is not None and len(chain) < 8:
            chain.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
            cause = cause.getCause()
        return {"ok": False, "error": chain[0], "causes": chain, "trace": traceback.format_exc()[-4000:]}
    return {"ok": False, "error": f"{type(e).__name__}: {e}", "causes": [], "trace": traceback.format_exc()[-4000:]}


def main() -> None:
    config = json.loads(sys.argv[1])
    out = _protocol_pipe()
    spark = _session(config)
    sc = spark.sparkContext
    jvm = _jvm_pid()
    frames: dict = {}
    out.write(json.dumps({"ok": True, "ready": True, "spark": spark.version, "jvm_pid": jvm}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req["op"] == "stop":
            break
        try:
            if req["op"] == "cache":
                df = spark.read.parquet(req["src"]).cache()
                frames[req["name"]] = df
                answer = {"ok": True, "rows": df.count()}
            elif req["op"] == "write":
                df, group = frames[req["name"]], req["label"]
                sc.setJobGroup(group, group)
                try:
                    with _PeakRss(jvm) as rss:
                        t0 = time.perf_counter()
                        df.write.format("hudi").options(**req["options"]).mode(req["mode"]).save(req["path"])
                        seconds = time.perf_counter() - t0
                finally:
                    sc._jsc.clearJobGroup()
                jobs, tasks = _tasks(sc, group)
                answer = {"ok": True, "seconds": seconds, "jobs": jobs, "tasks": tasks, "jvm_peak_rss_mb": rss.peak}
            else:
                answer = {"ok": False, "error": f"unknown op {req['op']!r}"}
        except Exception as e:  # noqa: BLE001 - every failure goes back to the benchmark, which stops on it
            answer = _error(e)
        out.write(json.dumps(answer) + "\n")
    spark.stop()
    out.write(json.dumps({"ok": True, "stopped": True}) + "\n")


if __name__ == "__main__":
    main()
