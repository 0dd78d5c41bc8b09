"""One SparkSession for the whole test session (a JVM start costs seconds), `hudi` data source registered."""
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
    session = local_spark_session(app_name="hudi-engine-tests", master="local[2]",
                                  warehouse_dir=tmp_path_factory.mktemp("spark-warehouse"))
    yield session
    session.stop()
