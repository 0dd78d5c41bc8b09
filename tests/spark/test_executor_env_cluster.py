"""Executors that cannot run the engine are refused before anything is written (issue 14). One driver process runs
one SparkContext after the other, each with other executors: on the local standalone cluster, executors whose Python
lacks fastavro; then, in local mode (the same Python workers, without starting executor JVMs again), a Python with
another hudi_engine version installed, another minor version of Python, and a Python that does not exist. Each
time `write`, `compact` and the registration of the `hudi` source raise the one message, and the tables are
byte for byte as they were (a new table is not even created)."""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hudi_engine
from hudi_engine.spark import write
from hudi_engine.spark.session import python_env

pytestmark = [pytest.mark.spark, pytest.mark.slow]

OPTIONS = {"hoodie.table.name": "refused", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
SCHEMA = "id bigint, p string, ts bigint"

_DRIVER = textwrap.dedent("""
    import json, os, sys, time
    from pyspark.sql import SparkSession
    from hudi_engine import HudiTable
    from hudi_engine.spark import register_data_source, spark_executor, write
    from hudi_engine.spark.session import TEST_CONF
    plan_path = sys.argv[1]
    plan = json.loads(open(plan_path).read())
    out = {}
    for name, extra in plan["scenarios"].items():
        t0 = time.monotonic()
        os.environ["PYSPARK_PYTHON"] = extra["spark.pyspark.python"]  # what SparkContext gives its workers
        builder = SparkSession.builder.master(extra.pop("master")).appName("refused-" + name)
        conf = {**TEST_CONF, "spark.cores.max": "2", "spark.executor.cores": "1",
                "spark.scheduler.minRegisteredResourcesRatio": "1.0", **extra}
        for k, v in conf.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
        df = spark.createDataFrame([(1, "a", 9), (7, "b", 9)], plan["schema"])
        attempts = {"write": lambda: write(df, plan["existing"], plan["options"]),
                    "write_new": lambda: write(df, plan["new"], plan["options"]),
                    "compact": lambda: HudiTable.load(plan["existing"]).compact(executor=spark_executor(spark)),
                    "register": lambda: register_data_source(spark)}
        out[name] = {}
        for what, attempt in attempts.items():
            try:
                attempt()
                out[name][what] = None
            except Exception as e:
                out[name][what] = [type(e).__name__, str(e)]
        spark.stop()
        out[name]["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(out))
""")


def other_minor_python() -> str | None:
    """An interpreter of another Python 3 minor version than this one (3.10 or newer), on the PATH or in pyenv."""
    candidates = [shutil.which(f"python3.{m}") for m in range(10, 16) if m != sys.version_info.minor]
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    for c in filter(None, candidates):
        done = subprocess.run([c, "-c", "import sys; print(sys.version_info[1])"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip().isdigit():
            minor = int(done.stdout.strip())
            if minor >= 10 and minor != sys.version_info.minor:
                return c
    return None


def _old_engine_copy(root: Path) -> Path:
    """A folder with a copy of hudi_engine that says it is version 0.0.1, as an executor's stale install would."""
    target = root / "old-engine"
    shutil.copytree(Path(hudi_engine.__file__).parent, target / "hudi_engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = target / "hudi_engine" / "__init__.py"
    init.write_text(re.sub(r'__version__ = ".*"', '__version__ = "0.0.1"', init.read_text()))
    return target


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def refused(spark, standalone_master, executor_pythons, tmp_path_factory):
    """(results by scenario and attempt, the existing table's files before, the table path, the new path)."""
    root = tmp_path_factory.mktemp("refused")
    existing = root / "existing"
    for op, rows in (("bulk_insert", [(1, "a", 1), (2, "a", 1), (3, "b", 1)]), ("upsert", [(2, "a", 2)])):
        write(spark.createDataFrame(rows, SCHEMA), str(existing), {**OPTIONS, "hoodie.datasource.write.operation": op})
    before = _files(existing)
    scenarios = {
        "no_fastavro": {"master": standalone_master, "spark.pyspark.python": executor_pythons.no_fastavro},
        "old_engine": {"master": "local[2]", "spark.pyspark.python": executor_pythons.full,
                       "spark.executorEnv.PYTHONPATH": str(_old_engine_copy(root))},
        "no_python": {"master": "local[2]", "spark.pyspark.python": str(root / "no-such-venv" / "bin" / "python")},
    }
    other = other_minor_python()
    if other is not None:
        scenarios["other_python"] = {"master": "local[2]", "spark.pyspark.python": other}
    plan = root / "plan.json"
    plan.write_text(json.dumps({"scenarios": scenarios, "schema": SCHEMA, "existing": str(existing),
                                "new": str(root / "new"), "options": {**OPTIONS, "hoodie.datasource.write.operation": "upsert"}}))
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(plan)],
                          env={**os.environ, **python_env()}, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    print({k: v.get("seconds") for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()})
    return json.loads(done.stdout.strip().splitlines()[-1]), before, existing, root / "new", other


def _assert_refused(refused, scenario: str, *expected: str) -> str:
    results, before, existing, new, _ = refused
    attempts = results[scenario]
    messages = {what: r for what, r in attempts.items() if what != "seconds"}
    for what, r in messages.items():
        assert r is not None, f"{scenario}: {what} was not refused"
        assert r[0] == "ExecutorEnvironmentError", (scenario, what, r)
        for e in expected:
            assert e in r[1], (scenario, what, e, r[1])
    assert _files(existing) == before, f"{scenario}: the table changed"
    assert not new.exists(), f"{scenario}: a new table was started"
    return messages["write"][1]


def test_executors_without_fastavro_are_refused_before_the_instant(refused):
    message = _assert_refused(refused, "no_fastavro", f"executor host {socket.gethostname()}", "fastavro is missing",
                              "fastavro>=1.9", "spark.archives", "spark.pyspark.python")
    assert "pyarrow" not in message.split("\n")[1]  # only what is wrong is listed for the host


def test_an_executor_with_another_engine_version_is_refused_naming_both(refused):
    _assert_refused(refused, "old_engine", f"executor host {socket.gethostname()}", "hudi_engine 0.0.1 is installed",
                    f"the driver runs hudi_engine {hudi_engine.__version__}")


def test_executors_that_cannot_start_their_python_are_refused(refused):
    _assert_refused(refused, "no_python", "cannot start the Python", "no-such-venv", "spark.pyspark.python")


def test_an_executor_python_of_another_minor_version_is_refused_naming_both(refused):
    other = refused[4]
    if other is None:
        pytest.skip("no Python 3 of another minor version (3.10+) on this machine (PATH or pyenv)")
    ours = "%d.%d" % sys.version_info[:2]
    message = _assert_refused(refused, "other_python", "executor host", f"the driver Python {ours}")
    assert re.search(r"it runs Python 3\.\d+, the driver Python", message) and f"runs Python {ours}," not in message
