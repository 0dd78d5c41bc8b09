"""Tables with known instants for the procedures' tests, written by the engine (procedure_tables.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from procedure_tables import two_commits


@pytest.fixture
def cow(tmp_path: Path) -> tuple[str, str, str]:
    """(path, first instant, second instant) of a copy-on-write table."""
    return (str(tmp_path / "cow"), *two_commits(tmp_path / "cow", "COPY_ON_WRITE"))


@pytest.fixture
def mor(tmp_path: Path) -> tuple[str, str, str]:
    """(path, first instant, second instant) of a merge-on-read table: the update is a log file."""
    return (str(tmp_path / "mor"), *two_commits(tmp_path / "mor", "MERGE_ON_READ"))
