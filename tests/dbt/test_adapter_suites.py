"""dbt's adapter test framework (dbt-tests-adapter) suites, all in one pytest process of their own.

The framework runs dbt in-process (one SparkSession with Hive support for the process), so it gets its own
process: the pytest process that runs this keeps the engine's tests/spark session to itself. One process for every
suite: each more would start (and JIT) another JVM for the same work.
"""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(2400)]  # 50 dbt tests: 8 to 12 min, by machine

pytest.importorskip("dbt.tests.adapter.basic.test_base", reason="dbt-tests-adapter is part of the test extras")

SUITES = Path(__file__).resolve().parent / "adapter_suites"

# Tests each suite holds; every one must pass (none skipped):
EXPECTED = {
    # dbt's base suites on `type: hudi`.
    "suite_base": 3,
    # The basic suites dbt-spark runs, with `+file_format: hudi` (models; seeds and snapshots where the suite
    # UPDATEs its seed).
    "suite_basic_hudi": 9,
    # The incremental, schema change, persist_docs and predicate suites dbt-spark runs for Delta, on Hudi tables
    # (where Hudi's semantics differ, the suite asserts Hudi's behaviour: docs/dbt.md).
    "suite_delta_set": 16,
    # Unit testing, contracts, --empty, snapshots, microbatch and merge_exclude_columns on Hudi tables.
    "suite_features": 22,
}


def test_the_adapter_suites_pass_on_hudi_tables(tmp_path):
    report = tmp_path / "suites.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *(str(SUITES / f"{name}.py") for name in EXPECTED),
         "-p", "dbt.tests.fixtures.project", "-o", "python_files=suite_*.py", "-p", "no:cacheprovider", "-q",
         "--basetemp", str(tmp_path / "suites"), "--rootdir", str(SUITES), "--junitxml", str(report)],
        cwd=tmp_path, capture_output=True, text=True, timeout=2300)
    assert proc.returncode == 0, f"{proc.stdout[-12000:]}\n{proc.stderr[-4000:]}"
    outcomes: Counter[tuple[str, str]] = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        suite = case.get("classname", "").split(".")[0]
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[suite, kinds[0] if kinds else "passed"] += 1
    assert dict(outcomes) == {(name, "passed"): n for name, n in EXPECTED.items()}, proc.stdout[-3000:]
