"""The executors' environment check: versions and ranges, what a report's problems read like, the probe run here,
the zip the driver ships, and what the test session's own local SparkContext found."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import hudi_engine
from hudi_engine.errors import ExecutorEnvironmentError
from hudi_engine.spark import executor_env
from hudi_engine.spark.executor_env import DRIVER_ONLY, REQUIREMENTS, ExecutorReport, check, checked_env, satisfies
from hudi_engine.spark.executor_probe import probe

ROOT = Path(__file__).resolve().parents[2]
PY = "%d.%d.%d" % sys.version_info[:3]
MINOR = "%d.%d" % sys.version_info[:2]


def test_requirements_are_the_projects_dependencies():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    parsed = {}
    for d in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", d.strip())
        parsed[m.group(1)] = m.group(2).replace(" ", "")
    assert parsed == {**REQUIREMENTS, **DRIVER_ONLY}


@pytest.mark.parametrize("version, spec, ok", [
    ("15.0.0", ">=15", True), ("14.0.2", ">=15", False), ("26.0.1", ">=15", True), ("1.9", ">=1.9", True),
    ("1.8.4", ">=1.9", False), ("1.26.0rc1", ">=1.26", True), ("2.0.0", ">=1.26,<2", False), ("1.5", ">1.5", False),
    ("3", "==3.0", True), ("3.1", "!=3.1.0", False), ("unknown", ">=1", False),
])
def test_satisfies(version, spec, ok):
    assert satisfies(version, spec) is ok


def _report(**kw) -> ExecutorReport:
    base = dict(host="worker-7", python=PY, executable="/opt/env/bin/python",
                packages={"pyarrow": "16.1.0", "fastavro": "1.9.4", "numpy": "1.26.4"})
    return ExecutorReport(**{**base, **kw})


def test_a_complete_executor_has_no_problems():
    assert _report().problems(PY, "0.1.0") == []
    assert _report(engine="0.1.0", engine_path="/opt/env/x").problems(PY, "0.1.0") == []
    check([_report(), _report(host="worker-8")], PY, "0.1.0")


def test_missing_and_too_old_packages_are_named_with_the_host_and_the_fix():
    bad = _report(packages={"pyarrow": "12.0.1", "fastavro": None, "numpy": "1.26.4"},
                  errors={"fastavro": "ModuleNotFoundError: No module named 'fastavro'"})
    with pytest.raises(ExecutorEnvironmentError) as e:
        check([_report(host="worker-1"), bad], PY, "0.1.0")
    text = str(e.value)
    line = next(s for s in text.splitlines() if "worker-7" in s)
    assert "Python " + PY in line and "/opt/env/bin/python" in line
    assert "fastavro is missing" in line and "pyarrow 12.0.1 is too old (hudi_engine needs pyarrow>=15)" in line
    assert "worker-1" not in text  # the healthy executor is not listed
    assert "spark.archives" in text and "spark.pyspark.python" in text and "before anything was written" in text


def test_a_package_that_does_not_import_says_why():
    bad = _report(packages={"pyarrow": None, "fastavro": "1.9.4", "numpy": "1.26.4"},
                  errors={"pyarrow": "ImportError: libarrow.so.1600: cannot open shared object file"})
    assert bad.problems(PY, "0.1.0") == ["pyarrow does not import (ImportError: libarrow.so.1600: cannot open shared "
                                         "object file)"]


def test_another_engine_version_names_both():
    [problem] = _report(engine="0.0.9", engine_path="/opt/env/hudi_engine/__init__.py").problems(PY, "0.1.0")
    assert "hudi_engine 0.0.9 is installed there" in problem and "the driver runs hudi_engine 0.1.0" in problem


def test_another_python_minor_version_names_both():
    [problem] = _report(python="3.99.1").problems(PY, "0.1.0")
    assert f"it runs Python 3.99, the driver Python {MINOR}" in problem


def test_the_probe_reports_this_python():
    report = ExecutorReport.from_json(probe(",".join(REQUIREMENTS) + ",no_such_module_x"))
    assert report.python == PY and report.executable == sys.executable
    assert report.engine == hudi_engine.__version__
    assert report.packages["no_such_module_x"] is None and "No module named" in report.errors["no_such_module_x"]
    import pyarrow
    assert report.packages["pyarrow"] == pyarrow.__version__
    assert report.problems(PY, hudi_engine.__version__) == []


def test_the_shipped_zip_is_the_running_package(tmp_path):
    path = executor_env._engine_zip()
    assert path.name == f"hudi_engine-{hudi_engine.__version__}.zip"
    package = Path(hudi_engine.__file__).parent
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
    expected = {f"hudi_engine/{p.relative_to(package).as_posix()}" for p in package.rglob("*.py")
                if "__pycache__" not in p.parts}
    assert names == expected and "hudi_engine/spark/executor_env.py" in names
    # Imported from the zip alone, ahead of this venv's install (as on an executor's path).
    done = subprocess.run([sys.executable, "-c", "import json, hudi_engine, hudi_engine.spark.writer; "
                           "print(json.dumps([hudi_engine.__version__, hudi_engine.__file__]))"],
                          env={**os.environ, "PYTHONPATH": str(path)}, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    version, file = json.loads(done.stdout)
    assert version == hudi_engine.__version__ and file.startswith(str(path))


@pytest.mark.spark
def test_the_check_is_kept_for_the_running_spark_context_only(monkeypatch):
    """Checked once per SparkContext; a new context (the JVM runs one at a time) is checked again and replaces the
    old answer, so the process keeps one entry however many sessions it starts."""
    from types import SimpleNamespace

    monkeypatch.setattr(executor_env, "_state", executor_env._ProcessState())
    probes = []
    report = ExecutorReport.from_json(probe(",".join(REQUIREMENTS)))
    monkeypatch.setattr(executor_env, "_probe", lambda spark: probes.append(spark) or [report])
    first, second = (SimpleNamespace(sparkContext=SimpleNamespace(applicationId=a)) for a in ("app-1", "app-2"))
    env = executor_env.ensure_executor_env(first)
    assert executor_env.ensure_executor_env(first) is env and checked_env(first) is env and probes == [first]
    assert env.shipped is None and env.reports == (report,)  # this Python has the engine: nothing shipped
    assert checked_env(second) is None
    assert executor_env.ensure_executor_env(second) is not env and probes == [first, second]
    assert checked_env(first) is None  # a stopped context's answer is not kept


def test_a_local_session_uses_the_engine_its_workers_have(spark):
    env = checked_env(spark)
    assert env is not None and env.shipped is None  # the test venv has hudi_engine installed
    assert {r.engine for r in env.reports} == {hudi_engine.__version__}
    assert executor_env.ensure_executor_env(spark) is env  # once per SparkContext
