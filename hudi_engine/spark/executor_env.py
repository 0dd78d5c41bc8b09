"""The executors' Python environment: checked once per SparkContext before a Hudi table is first written, compacted
or read, and `hudi_engine` shipped to executors that do not have it.

Every write, compaction and read runs `hudi_engine` in Spark's Python workers. On a cluster those run another
Python than the driver's (a packed venv from `spark.archives`, the cluster image's), which usually lacks this
project; without a check the first task fails with `ModuleNotFoundError` after the instant was requested.

`ensure_executor_env(spark)` runs one small job (a plain Python UDF, which needs nothing but Python, over a few tasks
spread over the executors) in which each worker reports its host, its Python, the versions of the engine's
dependencies and the `hudi_engine` it has installed, if any. Then, before anything is written:

* another Python minor version than the driver's (PySpark refuses to run the task), a Python the executors cannot
  start, a dependency missing or outside `REQUIREMENTS`, or a `hudi_engine` of another version than the driver's:
  `ExecutorEnvironmentError`, naming the host, what is wrong (both versions) and how to provide it;
* an executor without `hudi_engine`: the driver zips the package it runs (pure Python) and adds it with
  `SparkContext.addPyFile`, which puts it on the path of every later Python task of this SparkContext, on every
  executor and in the driver's own Python workers (data source planning);
* the same version everywhere: the executors use theirs.

Spark captures the SparkContext's Python files when a function or data source is created, so this runs before the
`hudi` data source is registered and before a write or compaction builds its tasks.
"""
from __future__ import annotations

import atexit
import json
import re
import shutil
import sys
import tempfile
import threading
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

import hudi_engine
from hudi_engine.errors import ExecutorEnvironmentError

# The engine's dependencies and their supported ranges: pyproject.toml's [project] dependencies are these and
# DRIVER_ONLY (a test keeps them equal).
REQUIREMENTS: Mapping[str, str] = {"pyarrow": ">=15", "fastavro": ">=1.9", "numpy": ">=1.26"}
# What only the driver imports, so an executor's Python need not have it: xxhash, for the metadata table's record keys
# (hudi_engine.metadata.column_stats imports it where it computes them).
DRIVER_ONLY: Mapping[str, str] = {"xxhash": ">=3.0"}

HOW_TO_PROVIDE = (
    "Give the executors a Python with these packages: pack a virtual environment (venv-pack or conda-pack) and pass "
    "it with spark.archives=<env>.tar.gz#environment and spark.pyspark.python=./environment/bin/python, or install "
    "them with the cluster's own package mechanism (an EMR bootstrap action, a Dataproc initialization action, the "
    "executor image on Kubernetes). See docs/operations.md, \"Running on a cluster\"."
)


# ---- what an executor reported -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExecutorReport:
    """One executor Python worker's answer to the probe (`executor_probe.probe`)."""

    host: str
    python: str  # "3.11.7"
    executable: str
    packages: Mapping[str, str | None]  # name -> version, None when it does not import
    errors: Mapping[str, str] = field(default_factory=dict)  # name -> import error
    engine: str | None = None  # the hudi_engine version installed there, None when absent
    engine_path: str | None = None
    engine_error: str | None = None  # installed but does not import

    @staticmethod
    def from_json(text: str) -> "ExecutorReport":
        d = json.loads(text)
        return ExecutorReport(d["host"], d["python"], d["executable"], d["packages"], d.get("errors") or {},
                              d.get("engine"), d.get("engine_path"), d.get("engine_error"))

    def problems(self, driver_python: str, driver_engine: str) -> list[str]:
        """What keeps this executor from running the engine the driver runs; empty when nothing does."""
        out = []
        if _minor(self.python) != _minor(driver_python):
            out.append(_python_mismatch(_minor(self.python), _minor(driver_python)))
        for name, spec in REQUIREMENTS.items():
            version = self.packages.get(name)
            if version is None:
                error = self.errors.get(name) or ""
                missing = not error or error == f"ModuleNotFoundError: No module named '{name}'"
                out.append(f"{name} is missing" if missing else f"{name} does not import ({error})")
            elif not satisfies(version, spec):
                what = "too old" if _below(version, spec) else "not supported"
                out.append(f"{name} {version} is {what} (hudi_engine needs {name}{spec})")
        if self.engine is not None and self.engine != driver_engine:
            out.append(f"hudi_engine {self.engine} is installed there ({self.engine_path}), the driver runs hudi_engine "
                       f"{driver_engine}: install {driver_engine} on the executors, or remove theirs so that the "
                       "driver ships its own")
        if self.engine_error is not None:
            out.append(f"hudi_engine is installed there ({self.engine_path or 'on the path'}) but does not import: "
                       f"{self.engine_error}")
        return out


@dataclass(frozen=True)
class ExecutorEnv:
    """The outcome of one SparkContext's check: what the executors reported, and whether the engine was shipped."""

    reports: tuple[ExecutorReport, ...]
    shipped: str | None  # the zip added with addPyFile, None when the executors use their own hudi_engine


def check(reports: Sequence[ExecutorReport], driver_python: str | None = None,
          driver_engine: str | None = None) -> None:
    """Raise ExecutorEnvironmentError when any executor cannot run the driver's engine (one message for all)."""
    driver_python = driver_python or "%d.%d.%d" % sys.version_info[:3]
    driver_engine = driver_engine or hudi_engine.__version__
    lines = []
    for r in sorted(reports, key=lambda r: (r.host, r.executable)):
        problems = r.problems(driver_python, driver_engine)
        if problems:
            lines.append(f"  executor host {r.host} (Python {r.python}, {r.executable}): " + "; ".join(problems))
    if not lines:
        return
    needs = ", ".join(f"{n}{s}" for n, s in REQUIREMENTS.items())
    raise ExecutorEnvironmentError(
        "Spark executors cannot run hudi_engine " + driver_engine + " (checked before anything was written):\n"
        + "\n".join(dict.fromkeys(lines)) + f"\nThe engine needs Python {_minor(driver_python)} (the driver's) with "
        f"{needs}; the driver ships hudi_engine itself. {HOW_TO_PROVIDE}")


# ---- versions -----------------------------------------------------------------------------------------------

_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<)\s*([0-9][0-9.]*)\s*$")


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string ("2.1.0rc1" -> (2, 1, 0)); () when it has none."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (a > b) - (a < b)


def _clauses(spec: str) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    for part in spec.split(","):
        m = _CLAUSE.match(part)
        if not m:
            raise ValueError(f"version range {spec!r}: expected clauses like >=1.2,<3")
        out.append((m.group(1), _release(m.group(2))))
    return out


_OPS = {">=": lambda c: c >= 0, ">": lambda c: c > 0, "<=": lambda c: c <= 0, "<": lambda c: c < 0,
        "==": lambda c: c == 0, "!=": lambda c: c != 0}


def satisfies(version: str, spec: str) -> bool:
    """Whether `version` is within `spec` (comma-separated clauses with >=, >, <=, <, ==, != on release numbers)."""
    release = _release(version)
    return bool(release) and all(_OPS[op](_cmp(release, bound)) for op, bound in _clauses(spec))


def _below(version: str, spec: str) -> bool:
    """Whether `version` fails a lower bound of `spec` (it is too old rather than too new)."""
    release = _release(version)
    return any(op in (">=", ">") and not _OPS[op](_cmp(release, bound)) for op, bound in _clauses(spec))


def _minor(python: str) -> str:
    return ".".join(python.split(".")[:2])


def _python_mismatch(executor: str, driver: str) -> str:
    return (f"it runs Python {executor}, the driver Python {driver}, and PySpark needs the same minor version on "
            f"both: point spark.pyspark.python at a Python {driver} on the executors (e.g. a packed venv in "
            f"spark.archives), or run the driver on Python {executor}")


# ---- the check ----------------------------------------------------------------------------------------------

class _ProcessState:
    """What this process knows of its executors: the check of the running SparkContext and the engine zip shipped.

    Only the latest SparkContext's check is kept: a JVM runs one SparkContext at a time, and the executors' Python
    is fixed for its life (spark.pyspark.python and spark.archives are read when it starts), so a stopped context's
    answer is never asked again and the state stays one entry however many sessions the process starts.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.application_id: str | None = None
        self.checked: ExecutorEnv | ExecutorEnvironmentError | None = None  # of `application_id`
        self.zip_path: Path | None = None

    def found(self, application_id: str) -> ExecutorEnv | ExecutorEnvironmentError | None:
        return self.checked if application_id == self.application_id else None

    def remember(self, application_id: str, checked: ExecutorEnv | ExecutorEnvironmentError) -> None:
        self.application_id, self.checked = application_id, checked


_state = _ProcessState()


def ensure_executor_env(spark: SparkSession) -> ExecutorEnv:
    """Check the executors' Python once per SparkContext and ship `hudi_engine` where it is missing (see above).

    Raises ExecutorEnvironmentError, before anything is written, when an executor cannot run the driver's engine
    (the same error again for every later call in that SparkContext).
    """
    sc = spark.sparkContext
    key = sc.applicationId
    with _state.lock:
        done = _state.found(key)
        if isinstance(done, ExecutorEnvironmentError):
            raise ExecutorEnvironmentError(str(done))
        if done is not None:
            return done
        try:
            reports = _probe(spark)
            check(reports)
        except ExecutorEnvironmentError as e:
            if not isinstance(e, _ProbeFailed):  # a job that failed for another reason may pass next time
                _state.remember(key, e)
            raise
        shipped = None
        if any(r.engine is None for r in reports):
            shipped = str(_engine_zip())
            sc.addPyFile(shipped)
        env = ExecutorEnv(tuple(reports), shipped)
        _state.remember(key, env)
        return env


def checked_env(spark: SparkSession) -> ExecutorEnv | None:
    """What `ensure_executor_env` found for this session's SparkContext; None before it ran or when it refused."""
    with _state.lock:
        done = _state.found(spark.sparkContext.applicationId)
    return done if isinstance(done, ExecutorEnv) else None


def _probe(spark: SparkSession) -> list[ExecutorReport]:
    """One job of a few single-row tasks (one per executor core, at least two), each answering `probe`."""
    from pyspark import cloudpickle
    from pyspark.sql import functions as F

    from hudi_engine.spark import executor_probe

    sc = spark.sparkContext
    n = max(2, sc.defaultParallelism)
    # By value: the workers may not have hudi_engine, which holds the function. The UDF is pickled when applied.
    cloudpickle.register_pickle_by_value(executor_probe)
    try:
        probe = F.udf(executor_probe.probe, "string", useArrow=False)
        df = spark.range(0, n, 1, numPartitions=n).select(probe(F.lit(",".join(REQUIREMENTS))).alias("report"))
    finally:
        cloudpickle.unregister_pickle_by_value(executor_probe)
    # A job group of its own, to find the hosts of its failed tasks.
    group = f"hudi-engine-executor-check-{uuid.uuid4().hex}"
    saved = {k: sc.getLocalProperty(k) for k in ("spark.jobGroup.id", "spark.job.description")}
    sc.setLocalProperty("spark.jobGroup.id", group)
    sc.setLocalProperty("spark.job.description", "hudi_engine: checking the executors' Python")
    try:
        rows = df.collect()
    except Exception as e:
        raise _job_error(e, _failed_task_hosts(spark, group)) from e
    finally:
        for k, v in saved.items():
            sc.setLocalProperty(k, v)  # type: ignore[arg-type]  # None removes it
    return [ExecutorReport.from_json(text) for text in dict.fromkeys(row[0] for row in rows)]


def _failed_task_hosts(spark: SparkSession, group: str) -> list[str]:
    """The hosts of the failed tasks of the jobs in `group` (Spark's status store); empty when it cannot tell."""
    sc = spark.sparkContext
    hosts = []
    try:
        tracker, store = sc.statusTracker(), sc._jsc.sc().statusStore()
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job else []:
                tasks = store.taskList(stage_id, 0, 1000)
                hosts += [t.host() for t in (tasks.apply(i) for i in range(tasks.size())) if t.status() == "FAILED"]
    except Exception:  # noqa: BLE001 - the host is a detail of the message, not worth another error
        return []
    return sorted(set(hosts))


class _ProbeFailed(ExecutorEnvironmentError):
    """The probe job failed for a reason that says nothing about the executors' Python (not remembered)."""


_VERSION_MISMATCH = re.compile(r"different version:? (\d+\.\d+) than that in driver:? (\d+\.\d+)")
_CANNOT_RUN = re.compile(r'Cannot run program "([^"]+)"')


def _job_error(e: Exception, hosts: Sequence[str]) -> ExecutorEnvironmentError:
    """The probe job's failure as the executors' environment error: another Python, or a Python that won't start."""
    text = str(e)
    where = f"executor host {', '.join(hosts)}" if hosts else "an executor"
    m = _VERSION_MISMATCH.search(text)
    if m:
        return ExecutorEnvironmentError(f"Spark executors cannot run hudi_engine (checked before anything was "
                                        f"written):\n  {where}: {_python_mismatch(m.group(1), m.group(2))}")
    m = _CANNOT_RUN.search(text)
    if m:
        return ExecutorEnvironmentError(
            f"Spark executors cannot run hudi_engine (checked before anything was written):\n  {where} cannot start "
            f"the Python {m.group(1)!r} (spark.sql.execution.pyspark.python, else spark.pyspark.python / the "
            f"driver's PYSPARK_PYTHON): point it at the executors' Python. {HOW_TO_PROVIDE}")
    first = next((line for line in text.splitlines() if line.strip()), type(e).__name__)
    return _ProbeFailed(f"could not check the Spark executors' Python environment before writing "
                                    f"(a one-row job on {where} failed): {first}")


# ---- shipping -----------------------------------------------------------------------------------------------

def _engine_zip() -> Path:
    """A zip of the running `hudi_engine` package (its .py files, `hudi_engine/` at the root), built once per process
    in a temporary folder removed at exit."""
    # Called under `_state.lock` (by the check).
    if _state.zip_path is not None and _state.zip_path.is_file():
        return _state.zip_path
    package = Path(hudi_engine.__file__).resolve().parent
    if not package.is_dir():
        raise ExecutorEnvironmentError(
            f"cannot ship hudi_engine to the executors from {package} (not a folder): install hudi_engine "
            f"{hudi_engine.__version__} on the executors or pass it with spark.submit.pyFiles")
    folder = Path(tempfile.mkdtemp(prefix="hudi-engine-ship-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / f"hudi_engine-{hudi_engine.__version__}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(package.rglob("*.py")):
            if "__pycache__" not in f.parts:
                z.write(f, Path("hudi_engine") / f.relative_to(package))
    _state.zip_path = path
    return path
