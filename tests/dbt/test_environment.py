"""The adapter's Spark environment (`dbt.adapters.hudi.session.SparkEnvironment`): the settings a session starts
with, one session per process reused while it runs, and the error when the native component cannot be built.
The JVM is replaced by a fake session here; the dbt tests start the real one."""
from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError

import hudi_engine.spark
from dbt.adapters.hudi.connections import HudiConnectionManager, HudiSessionConnection
from dbt.adapters.hudi.session import NATIVE_KEY, WAREHOUSE_KEY, SparkEnvironment
from hudi_engine import HudiError


class FakeSession:
    def __init__(self, conf: dict[str, str]) -> None:
        self.conf = dict(conf)
        self.sparkContext = SimpleNamespace(_jsc=object())  # a running context has its Java handle

    def stop(self) -> None:
        self.sparkContext._jsc = None


class FakeEnvironment(SparkEnvironment):
    """Starts a fake session of the resolved configuration instead of a JVM."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[FakeSession] = []

    def _start(self, conf, *, chosen_without_native=False):
        spark = FakeSession(conf)
        self.started.append(spark)
        return spark


@pytest.fixture(autouse=True)
def _own_environ(monkeypatch):
    monkeypatch.setattr(os, "environ", os.environ.copy())  # a start exports the workers' Python


@pytest.fixture
def native_jar(monkeypatch):
    monkeypatch.setattr(hudi_engine.spark, "native_conf",
                        lambda conf: {**conf, "spark.jars": "component.jar", "spark.sql.extensions": "X"})


def test_a_session_starts_once_with_the_project_settings_and_is_reused(tmp_path, native_jar):
    env = FakeEnvironment()
    assert env.running_session() is None and env.native is None and env.settings is None
    env.use_project(tmp_path)
    env.use_project(None)  # a profile without a project root keeps the one set
    spark = env.session({"spark.master": "local[1]"})
    assert env.started == [spark] and env.running_session() is spark
    assert spark.conf[WAREHOUSE_KEY] == str(Path(tmp_path).resolve() / "spark-warehouse")
    assert spark.conf["spark.jars"] == "component.jar" and env.native is True
    assert env.settings is not None and env.settings.conf["spark.master"] == "local[1]"
    assert os.environ["PYSPARK_PYTHON"] == env.settings.env["PYSPARK_PYTHON"]
    # A running session's static settings cannot change: later profiles get the same session.
    assert env.session({"spark.master": "spark://elsewhere:7077", NATIVE_KEY: "false"}) is spark
    assert len(env.started) == 1


def test_a_stopped_session_is_started_again_with_the_settings_of_that_time(tmp_path, native_jar):
    env = FakeEnvironment()
    env.use_project(tmp_path / "one")
    first = env.session({})
    first.stop()
    assert env.running_session() is None and env.native is None
    env.use_project(tmp_path / "two")
    second = env.session({NATIVE_KEY: "false"})
    assert second is not first and env.started == [first, second]
    assert second.conf[WAREHOUSE_KEY].endswith(os.path.join("two", "spark-warehouse"))
    assert "spark.jars" not in second.conf and env.native is False


def test_a_native_component_that_cannot_be_built_stops_the_start(tmp_path, monkeypatch):
    def broken(conf):
        raise HudiError("scalac: error: not found: type Foo")

    monkeypatch.setattr(hudi_engine.spark, "native_conf", broken)
    env = FakeEnvironment()
    env.use_project(tmp_path)
    with pytest.raises(DbtRuntimeError, match=r"(?s)not found: type Foo.*spark.hudi_engine.native: \"false\""):
        env.session({})
    assert env.started == [] and env.running_session() is None
    assert env.session({NATIVE_KEY: "false"}) is env.started[0]  # the opt-out the error names works


def test_the_connection_manager_holds_the_one_environment_its_connections_use(monkeypatch):
    env = FakeEnvironment()
    monkeypatch.setattr(HudiConnectionManager, "environment", env)
    connection = HudiSessionConnection(HudiConnectionManager.environment, {NATIVE_KEY: "false"})
    assert connection.cursor().environment is env
    assert connection.spark is env.running_session() is env.started[0]
