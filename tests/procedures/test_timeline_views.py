"""show_savepoints (savepoints as Java leaves them, and the engine's), show_compaction's copy-on-write refusal."""
from __future__ import annotations

import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import Timeline


def test_show_savepoints_lists_completed_savepoints_newest_first(cow):
    path, first, second = cow
    assert call("show_savepoints", path).num_rows == 0
    timeline = Timeline.load(HudiTable.load(path).location)
    for ts in (first, second):  # savepoint files as Java's create_savepoint leaves them (content is not read)
        timeline.create_inflight(Instant(ts, Action.SAVEPOINT, State.INFLIGHT))
        timeline.complete(Instant(ts, Action.SAVEPOINT, State.INFLIGHT))
    assert call("show_savepoints", path).to_pylist() == [{"savepoint_time": second}, {"savepoint_time": first}]


def test_show_compaction_is_for_merge_on_read_tables(cow):
    with pytest.raises(ConfigError, match="Cannot show compaction on a Non Merge On Read table"):
        call("show_compaction", cow[0])


def test_show_savepoints_lists_the_engines_savepoints(cow):
    path, first, second = cow
    HudiTable.load(path).savepoint(first)
    assert call("show_savepoints", path).to_pylist() == [{"savepoint_time": first}]
