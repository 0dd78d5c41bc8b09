"""Shared fixtures: the conformance data beside the checkout, unzipped per test session; a local S3 API server; a
local standalone cluster and executor virtual environments without this project, each made once per test session."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

import class_archive
import pytest
from executor_venvs import ExecutorPythons, build_executor_pythons
from s3_server import CREDENTIALS, S3Server, start_server
from spark_cluster import standalone_cluster
from suite_split import BESIDE, FIRST, WITH_THE_REST

# Before anything starts a JVM or a worker process: they inherit these (moto takes any credentials).
for _key, _value in CREDENTIALS.items():
    os.environ.setdefault(_key, _value)

# The suite starts many short-lived JVMs (Spark sessions, dbt drivers, oracles, servers, a cluster) on few cores, and
# their C2 compiles cost more CPU than they win back: C1 alone cut a Spark test file's CPU time by a third and an
# oracle test's by 45% (same run, quiet machine). The `java` launcher reads JDK_JAVA_OPTIONS; a test whose JVM does
# long heavy work drops it (test_write_memory).
# C1 alone keeps the non-tiered code cache of 48 MB, and JDK 17 sweeps all of it whenever 0.5% of it changes
# (`SweeperThreshold`): with Spark's generated classes compiled and unloaded all the time, the sweeper took 40% of a
# dbt suite's JVM CPU (perf). A larger cache swept at 10% took it out of the profile and cut a Spark test file's
# CPU by 9% (same run, quiet machine). JDK 20+ has no sweeper and ignores the setting.
# They also map one archive of Spark's classes (tests/class_archive.py: built once per machine, a minute), which cut a
# Spark JVM's start with a Hive metastore from 21 s of CPU to 13 s.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=256m -XX:SweeperThreshold=10"
if TEST_JVM_OPTIONS not in os.environ.get("JDK_JAVA_OPTIONS", ""):
    _options = f"{os.environ.get('JDK_JAVA_OPTIONS', '')} {TEST_JVM_OPTIONS}".strip()
    os.environ["JDK_JAVA_OPTIONS"] = f"{_options} {class_archive.jvm_options(_options)}".strip()

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    if not CONFORMANCE.is_dir():
        pytest.fail(f"conformance data not found at {CONFORMANCE}: CI has ../shared beside the clone")
    return CONFORMANCE


@pytest.fixture(scope="session")
def unzip_table(conformance_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """unzip_table("cow_v6_nonpartitioned") -> path of a fresh copy of the table, unzipped once per session."""
    cache: dict[str, Path] = {}

    def _unzip(name: str, version_dir: str = "v6") -> Path:
        if name not in cache:
            target = tmp_path_factory.mktemp(name)
            with zipfile.ZipFile(conformance_dir / version_dir / f"{name}.zip") as z:
                z.extractall(target)
            roots = [p for p in target.iterdir() if p.is_dir() and p.name != "__MACOSX"]
            assert len(roots) == 1, f"{name}.zip should hold one table folder, found {roots}"
            cache[name] = roots[0]
        return cache[name]

    return _unzip


@pytest.fixture(scope="session")
def standalone_master():
    """A local standalone cluster (a master and two workers, separate processes), started once. Each driver picks
    its executors' Python (`spark.pyspark.python`)."""
    with standalone_cluster(n_workers=2) as master:
        yield master


@pytest.fixture(scope="session")
def executor_pythons(tmp_path_factory: pytest.TempPathFactory) -> ExecutorPythons:
    """Pythons of virtual environments that have the engine's dependencies (or lack fastavro) but not this project."""
    return build_executor_pythons(tmp_path_factory.mktemp("executor-venvs"))


@pytest.fixture(scope="session")
def s3_server() -> S3Server:
    """moto's S3 (and DynamoDB) API on 127.0.0.1, started once per test session by the first test that needs it."""
    server = start_server()
    yield server
    server.stop()


@pytest.fixture
def s3_table(s3_server: S3Server) -> str:
    """The URI of a table in a new bucket of the local S3 API."""
    return s3_server.uri(s3_server.new_bucket(), "table")


@pytest.fixture(scope="session")
def java_hudi(tmp_path_factory: pytest.TempPathFactory):
    """java_hudi("0.15.0" | "1.2.0") -> that release's oracle (tests/java_hudi), one process per release per test
    session, started at its first request."""
    from java_hudi.client import JavaHudi
    from java_hudi.env import prepare

    started: dict[str, JavaHudi] = {}

    def _oracle(hudi: str) -> JavaHudi:
        if hudi not in started:
            (release,) = prepare([hudi])
            started[hudi] = JavaHudi(release, tmp_path_factory.mktemp(f"java-hudi-{hudi}"))
            _ORACLES.append(started[hudi])
        return started[hudi]

    yield _oracle
    for oracle in started.values():
        oracle.stop()


_ORACLES: list = []
_ORACLE_TIME = {"tests": 0, "failed": 0, "seconds": 0.0, "all": 0.0}


# tests/run.sh runs the suite as two sessions side by side (`-m beside`, `-m "not beside"`): tests/suite_split.py
# says which tests run beside the rest.
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "java_hudi" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.java_oracle)
        where = _relative(item)
        if where.startswith(BESIDE) and not where.startswith(WITH_THE_REST):
            item.add_marker(pytest.mark.beside)
    items.sort(key=lambda item: not _relative(item).startswith(FIRST))  # stable: modules stay whole and in order


def _relative(item: pytest.Item) -> str:
    return item.path.relative_to(_TESTS).as_posix() if item.path.is_relative_to(_TESTS) else ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _ORACLE_TIME["all"] += report.duration
    if "java_oracle" in report.keywords:
        _ORACLE_TIME["seconds"] += report.duration
        if report.when == "call":
            _ORACLE_TIME["tests"] += 1
        _ORACLE_TIME["failed"] += int(report.failed)


def pytest_terminal_summary(terminalreporter) -> None:
    """The Java oracle's share of the run: its tests, their time, and the requests each release answered."""
    if not _ORACLE_TIME["tests"]:
        return
    share = 100 * _ORACLE_TIME["seconds"] / max(_ORACLE_TIME["all"], 1e-9)
    requests = ", ".join(f"Hudi {o.hudi}: {o.requests} in {o.seconds:.0f} s" for o in _ORACLES)
    terminalreporter.write_line(
        f"Java Hudi oracle: {_ORACLE_TIME['tests']} tests ({_ORACLE_TIME['failed']} failed), "
        f"{_ORACLE_TIME['seconds']:.0f} s of {_ORACLE_TIME['all']:.0f} s ({share:.0f}%); requests: {requests}")
