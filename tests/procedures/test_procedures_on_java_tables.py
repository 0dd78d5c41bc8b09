"""Every served introspection procedure on tables Java Hudi wrote (../shared/conformance): Hudi's columns and
types, and rows that agree with the engine's own reading of the timeline and file slices."""
from __future__ import annotations

import pytest

from hudi_engine import HudiTable
from hudi_engine.procedures import SERVED, call
from hudi_engine.procedures.registry import spec
from hudi_engine.timeline.instant import Action

TABLES = [("mor_avrolog_v6_trips_8i1u", "v6"), ("cow_v6_complexkeygen_hivestyle", "v6"),
          ("mor_avrolog_v9_nonpartitioned_rollback", "v8_v9"), ("mor_avrolog_table_log_compaction", "v8_v9"),
          ("cow_v8_simplekeygen_nonhivestyle", "v8_v9")]
# Served procedures that need no argument but the table (actions left out: they change the table).
READS = ["show_commits", "show_commits_metadata", "stats_wa", "show_rollbacks", "show_savepoints", "show_cleans",
         "show_cleans_metadata", "show_clean_plans", "show_table_properties", "show_fsview_all", "show_fsview_latest",
         "stats_file_sizes", "show_commit_extra_metadata", "show_archived_commits"]


@pytest.mark.parametrize(("name", "folder"), TABLES)
def test_every_read_runs_on_java_tables(unzip_table, name, folder):
    path = str(unzip_table(name, folder))
    table = HudiTable.load(path)
    assert set(READS) <= set(SERVED)
    for procedure in READS:
        has_limit = any(p.name == "limit" for p in spec(procedure).parameters)
        got = call(procedure, path, **({"limit": 1000} if has_limit else {}))
        assert got.schema == spec(procedure).schema(), procedure
    latest = {(s.partition_path, s.file_id, s.base_instant) for s in table.file_slices()}
    shown = {(r["partition"], r["file_id"], r["base_instant"]) for r in call("show_fsview_latest", path,
                                                                            limit=1000).to_pylist()}
    assert shown == latest
    commits = sorted((i.timestamp for i in table.timeline.completed_commits()), reverse=True)
    assert call("show_commits", path, limit=1000).column("commit_time").to_pylist() == commits
    for commit in commits[:3]:
        files = call("show_commit_files", path, instant_time=commit, limit=1000).to_pylist()
        meta = table.commit_metadata(next(i for i in table.timeline.completed_commits() if i.timestamp == commit))
        assert len(files) == sum(len(v) for v in meta.partition_to_write_stats.values())
    if table.is_mor:
        compactions = [i.timestamp for i in table.timeline
                       if i.action is Action.COMPACTION or (i.is_completed and i.action is Action.COMMIT)]
        assert sorted(call("show_compaction", path, limit=1000).column("timestamp").to_pylist()) == sorted(compactions)


def test_show_rollbacks_on_javas_rollback(unzip_table):
    path = str(unzip_table("mor_avrolog_v9_nonpartitioned_rollback", "v8_v9"))
    rollbacks = call("show_rollbacks", path).to_pylist()
    assert rollbacks, "the table holds a rollback Java made"
    for r in rollbacks:
        assert not [i for i in HudiTable.load(path).timeline.completed_commits() if i.timestamp == r["rollback_instant"]]
        detail = call("show_rollback_detail", path, instant_time=r["instant"]).to_pylist()
        assert all(d["rollback_instant"] == f"[{r['rollback_instant']}]" for d in detail)
