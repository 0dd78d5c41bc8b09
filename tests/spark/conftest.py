"""One SparkSession for the whole test session (a JVM start costs seconds), `hudi` data source registered: the
native one (`hudi_engine.spark.native`, compiled into a cache of the test session's own), so that `format("hudi")`,
`spark.table` and SQL on catalog tables run through it in every Spark test."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudi_engine.spark.session import local_spark_session


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory):
    # Spark's Python workers import test helpers (e.g. a user payload class defined in tests/) too.
    tests_dir = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join([tests_dir, *filter(None, [os.environ.get("PYTHONPATH")])])
    os.environ.setdefault("HUDI_ENGINE_JVM_CACHE", str(tmp_path_factory.mktemp("jvm-cache")))
    session = local_spark_session(app_name="hudi-engine-tests", master="local[2]",
                                  warehouse_dir=tmp_path_factory.mktemp("spark-warehouse"), native=True)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def thrift_server(spark, tmp_path_factory: pytest.TempPathFactory):
    """One Spark Thrift server with the native `hudi` source (tests/thrift_server.py), started once per test session
    on a metastore of its own; after `spark`, whose component cache it shares."""
    from thrift_server import ThriftServer

    server = ThriftServer(tmp_path_factory.mktemp("thrift"))
    try:
        yield server.wait()
    finally:
        server.stop()
