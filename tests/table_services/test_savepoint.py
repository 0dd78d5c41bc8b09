"""Savepoints (`table_services.savepoint`): what Hudi refuses is refused by name, before anything is written."""
from __future__ import annotations

import pytest
from test_restore import Model

from hudi_engine import TableServiceError
from hudi_engine.location import TableLocation
from hudi_engine.table_services.compaction import schedule_compaction


def test_savepoint_refused_while_a_compaction_is_pending(tmp_path):
    m = Model(tmp_path / "t", "MERGE_ON_READ", 6)
    m.write(list(range(6)), 1)
    m.write([1, 2], 2)
    schedule_compaction(TableLocation.of(str(m.path)))
    with pytest.raises(TableServiceError, match="compaction is pending"):
        m.table().savepoint()
    assert not list((m.path / ".hoodie").glob("*.savepoint*"))


def test_a_savepoint_lists_the_latest_base_and_log_files_as_of_its_commit(tmp_path):
    m = Model(tmp_path / "t", "MERGE_ON_READ", 6)
    first = m.write(list(range(6)), 1)
    m.write([1, 2], 2)
    sp = m.table().savepoint(first, comment="the first commit")
    names = sorted(n for files in sp.files.values() for n in files)
    # Every file of the slices as of the commit (Hudi's slice view also takes the later log files of a slice).
    assert len([n for n in names if n.endswith(".parquet")]) == 3 and all(first in n for n in names)
    latest = m.table().savepoint()
    logs = [n for files in latest.files.values() for n in files if ".log." in n]
    assert logs and [s.instant_time for s in m.table().savepoints()] == [first, latest.instant_time]
    m.table().delete_savepoint(first)
    assert [s.instant_time for s in m.table().savepoints()] == [latest.instant_time]
