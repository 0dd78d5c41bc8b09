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


def run_suites(tmp_path, suite: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES / suite), "-p", "dbt.tests.fixtures.project",
         "-o", "python_files=suite_*.py", "-p", "no:cacheprovider", "-q", "--basetemp", str(tmp_path / "suites"),
         "--rootdir", str(SUITES)],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{proc.stdout[-12000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_base_suites(tmp_path):
    out = run_suites(tmp_path, "suite_base.py")
    assert "5 passed" in out, out[-3000:]


def test_feature_suites(tmp_path):
    """Unit testing, contracts, --empty, snapshots, microbatch and merge_exclude_columns on Hudi tables."""
    out = run_suites(tmp_path, "suite_features.py")
    assert "passed" in out and "skipped" not in out and "failed" not in out, out[-3000:]


def test_basic_suites_with_hudi_file_format(tmp_path):
    """The basic suites dbt-spark runs, with `+file_format: hudi` (models; seeds and snapshots where the suite
    UPDATEs its seed)."""
    out = run_suites(tmp_path, "suite_basic_hudi.py")
    assert "9 passed" in out and "skipped" not in out and "failed" not in out, out[-3000:]


def test_delta_suites_with_hudi_file_format(tmp_path):
    """The incremental, schema change, persist_docs and predicate suites dbt-spark runs for Delta, on Hudi tables
    (where Hudi's semantics differ, the suite asserts Hudi's behaviour: docs/dbt.md)."""
    out = run_suites(tmp_path, "suite_delta_set.py")
    assert "16 passed" in out and "skipped" not in out and "failed" not in out, out[-3000:]
