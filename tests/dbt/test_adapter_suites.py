"""dbt's adapter test framework (dbt-tests-adapter) base suites, run in a pytest process of their own.

The framework runs dbt in-process (one SparkSession with Hive support for the process), so it gets its own
process: the pytest process that runs this keeps the engine's tests/spark session to itself.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

pytest.importorskip("dbt.tests.adapter.basic.test_base", reason="dbt-tests-adapter is part of the test extras")

SUITES = Path(__file__).resolve().parent / "adapter_suites"


def test_base_suites(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES / "suite_base.py"), "-p", "dbt.tests.fixtures.project",
         "-o", "python_files=suite_*.py", "-p", "no:cacheprovider", "-q", "--basetemp", str(tmp_path / "suites"),
         "--rootdir", str(SUITES)],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"{proc.stdout[-12000:]}\n{proc.stderr[-4000:]}"
    assert "4 passed" in proc.stdout, proc.stdout[-3000:]
