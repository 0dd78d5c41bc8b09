"""Sessions that say what they lack. In a session with Hive support where `register_data_source` was not called, a
write with Hive sync registers the read sources the synced entry resolves to itself (it failed with Spark's
DATA_SOURCE_NOT_FOUND after the commit); a session whose `hudi` is the Python source warns once that its reads are
slower than with the native component, and a session with the component does not warn. The session without the
package's help runs in its own process (tests/spark/plain_session_job.py): the shared test session is native."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from hudi_engine.spark import register_data_source, write
from hudi_engine.spark.read_sources import PYTHON_SOURCE_WARNING

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("plain-session")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(HERE / "plain_session_job.py"), str(root)], capture_output=True,
                          text=True, env=env, cwd=root, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_hive_synced_write_registers_the_sources_it_needs(seen):
    assert seen["registered_before"] is False
    assert seen["instant"]
    assert seen["registered_after_write"] is True
    assert seen["entry"] is True


def test_registration_is_idempotent(seen):
    assert seen["reads"] == [2, 2]
    assert seen["changes"] == 2


def test_python_source_reads_warn_once_per_session_naming_native_conf(seen):
    assert seen["warnings"] == [PYTHON_SOURCE_WARNING]
    assert "hudi_engine.spark.native_conf()" in seen["warnings"][0] and "\n" not in seen["warnings"][0]


def test_a_session_with_the_native_component_does_not_warn(spark, tmp_path):
    path = str(tmp_path / "t")
    write(spark.createDataFrame([(1, 1)], "id long, ts long"), path,
          {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        register_data_source(spark)
        assert spark.read.format("hudi").load(path).count() == 1
    assert [str(w.message) for w in caught if "native_conf()" in str(w.message)] == []
