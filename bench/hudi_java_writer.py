"""The real-Hudi side of bench_hudi_java.py: one Spark session with a pinned Apache Hudi release's bundle (Java),
driven by requests, one JSON object a line on stdin, answered one JSON object a line on the protocol pipe.

Runs under the release's own Python (tests/java_hudi/env.py: pyspark 3.5 and nothing of this project), so it imports
only the standard library and pyspark. It times what the engine's side times: from a cached, counted DataFrame of
the same source parquet to the completed commit, `df.write.format("hudi").options(...).mode(...).save(path)` only.

Requests (`op`):
- `cache`: `spark.read.parquet(src)`, cached and counted, kept under `name`; answers the row count.
- `write`: the timed write of DataFrame `name` to `path`; answers `seconds`, the Spark `tasks` and `jobs` of the
  write (the status tracker, by job group), and the peak RSS of this process's JVM during the write (sampled every
  20 ms), MB; and `fs`, what the write did through Hadoop's local file system (`FileSystem.getAllStatistics()`
  of scheme `file`, summed, after minus before: `read_ops` -- opens and listings --, `large_read_ops`, `bytes_read`,
  `write_ops`, `bytes_written`). In local mode the driver is the executor, so that is every file the write touched.
- `stop`: end the session.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "java_hudi"))
# The oracle's process (tests/java_hudi/server.py, standard library and pyspark only): the same Spark session of the
# release's bundle, with the benchmark's settings (`conf`) over the oracle's; the same protocol pipe and errors.
from server import error_answer, protocol_pipe, session
from spark_probe import PeakRss, job_group_tasks, jvm_pid


def fs_stats(sc) -> dict[str, int]:
    """Hadoop's counters of the local file system (scheme `file`), summed over its Statistics objects."""
    out = dict.fromkeys(("read_ops", "large_read_ops", "bytes_read", "write_ops", "bytes_written"), 0)
    for st in sc._jvm.org.apache.hadoop.fs.FileSystem.getAllStatistics():
        if st.getScheme() != "file":
            continue
        out["read_ops"] += st.getReadOps()
        out["large_read_ops"] += st.getLargeReadOps()
        out["bytes_read"] += st.getBytesRead()
        out["write_ops"] += st.getWriteOps()
        out["bytes_written"] += st.getBytesWritten()
    return out


def main() -> None:
    config = json.loads(sys.argv[1])
    out = protocol_pipe()
    spark = session(config)
    sc = spark.sparkContext
    jvm = jvm_pid()
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
                    fs0 = fs_stats(sc)
                    with PeakRss(jvm) as rss:
                        t0 = time.perf_counter()
                        df.write.format("hudi").options(**req["options"]).mode(req["mode"]).save(req["path"])
                        seconds = time.perf_counter() - t0
                    fs1 = fs_stats(sc)
                finally:
                    sc._jsc.clearJobGroup()
                jobs, tasks = job_group_tasks(sc, group)
                answer = {"ok": True, "seconds": seconds, "jobs": jobs, "tasks": tasks, "jvm_peak_rss_mb": rss.peak,
                          "fs": {k: fs1[k] - fs0[k] for k in fs0}}
            else:
                answer = {"ok": False, "error": f"unknown op {req['op']!r}"}
        except Exception as e:  # noqa: BLE001 - every failure goes back to the benchmark, which stops on it
            answer = error_answer(e)
        out.write(json.dumps(answer) + "\n")
    spark.stop()
    out.write(json.dumps({"ok": True, "stopped": True}) + "\n")


if __name__ == "__main__":
    main()
