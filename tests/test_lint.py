"""Lint and types are part of the test command: `ruff check .` and mypy (both configured in pyproject.toml) must
pass on the repository; a failure shows the tool's own report."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's executables, installed with the test extras


def _check(*args: str) -> None:
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed (exit {result.returncode}):\n{result.stdout}{result.stderr}",
                    pytrace=False)


def test_ruff() -> None:
    _check(str(BIN / "ruff"), "check", "--no-cache", ".")  # no cache: nothing is written into the checkout


def test_mypy() -> None:
    # The cache goes into the venv (ignored by git, one per checkout), so a rerun takes seconds.
    _check(str(BIN / "mypy"), "--cache-dir", str(BIN.parent / ".mypy_cache"), "hudi_engine", "dbt")
