"""show_commits and the other commit procedures on tables with known instants (the engine's and Java's)."""
from __future__ import annotations

import pytest
from procedure_tables import OPTIONS, rows

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call
from hudi_engine.procedures.registry import spec
from hudi_engine.write_pipeline import write_table


def test_show_commits(mor):
    path, first, second = mor
    t = call("show_commits", path)
    assert t.schema == spec("show_commits").schema()
    rows = t.to_pylist()
    assert [(r["commit_time"], r["action"]) for r in rows] == [(second, "deltacommit"), (first, "deltacommit")]
    assert [(r["total_files_added"], r["total_files_updated"], r["total_partitions_written"],
             r["total_records_written"], r["total_update_records_written"], r["total_errors"]) for r in rows] == [
        (1, 1, 2, 2, 1, 0), (2, 0, 2, 3, 0, 0)]
    completed = {i.timestamp: i for i in HudiTable.load(path).timeline}
    assert all(r["state_transition_time"] >= r["commit_time"] for r in rows)
    assert set(completed) >= {first, second}
    assert call("show_commits", path, limit=1).column("commit_time").to_pylist() == [second]


def test_show_commits_metadata_is_one_row_per_write_stat(cow):
    path, first, second = cow
    t = call("show_commits_metadata", path)
    assert t.schema == spec("show_commits_metadata").schema()
    got = sorted((r["commit_time"], r["partition"], r["previous_commit"] == "null", r["num_inserts"],
                  r["num_update_writes"]) for r in t.to_pylist())
    assert got == sorted([(first, "x", True, 2, 0), (first, "y", True, 1, 0), (second, "x", False, 0, 1),
                          (second, "y", False, 1, 0)])


def test_commit_files_partitions_and_write_stats(cow):
    path, first, second = cow
    files = call("show_commit_files", path, instant_time=second).to_pylist()
    assert sorted((f["partition_path"], f["previous_commit"], f["total_records_updated"], f["total_records_written"])
                  for f in files) == [("x", first, 1, 2), ("y", first, 0, 2)]
    assert all(f["file_size"] == f["total_bytes_written"] > 0 for f in files)
    parts = call("show_commit_partitions", path, instant_time=second).to_pylist()
    assert sorted((p["partition_path"], p["total_files_added"], p["total_files_updated"],
                   p["total_records_inserted"], p["total_records_updated"]) for p in parts) == [
        ("x", 0, 1, 0, 1), ("y", 0, 1, 1, 0)]
    (stats,) = call("show_commit_write_stats", path, instant_time=second).to_pylist()
    assert stats["total_records_written"] == 4
    assert stats["avg_record_size"] == -(-stats["total_bytes_written"] // 4)  # rounded up, as Hudi
    with pytest.raises(ConfigError, match=f"Commit 1 not found in Commits of .*{first}, {second}"):
        call("show_commit_files", path, instant_time="1")


def test_show_commit_extra_metadata_has_the_schema(cow):
    path, _, second = cow
    keys = {r["metadata_key"] for r in call("show_commit_extra_metadata", path).to_pylist()}
    assert "schema" in keys
    (row,) = call("show_commit_extra_metadata", path, metadata_key="schema").to_pylist()
    assert row["instant_time"] == second and row["action"] == "commit"


def test_commits_compare(cow, mor):
    (a, _, _), (b, b1, b2) = cow, mor  # mor's commits are the later ones
    assert call("commits_compare", a, path=b).column("compare_detail").to_pylist() == [
        f"Source trips is behind by 2 commits. Commits to catch up - [{b1}, {b2}]"]
    assert call("commits_compare", b, path=a).column("compare_detail").to_pylist() == [
        f"Source trips is ahead by 2 commits. Commits to catch up - [{b1}, {b2}]"]
    assert call("commits_compare", a, path=a).column("compare_detail").to_pylist() == [
        "Source trips is ahead by 0 commits. Commits to catch up - []"]


def test_stats_wa(cow, mor):
    rows = call("stats_wa", cow[0]).to_pylist()
    assert [(r["commit_time"], r["total_upserted"], r["total_written"], r["write_amplification_factor"])
            for r in rows] == [(cow[1], 0, 3, "0"), (cow[2], 1, 4, "4.00"), ("Total", 1, 7, "7.00")]
    # Hudi's stats_wa reads commit and replace commits only: a MOR table's deltacommits are not counted
    assert call("stats_wa", mor[0]).to_pylist() == [
        {"commit_time": "Total", "total_upserted": 0, "total_written": 0, "write_amplification_factor": "0"}]


@pytest.mark.parametrize(("name", "folder"), [("mor_avrolog_v6_trips_8i1u", "v6"),
                                              ("mor_avrolog_v9_mor_nonpart_3commits", "v8_v9")])
def test_show_commits_on_java_tables(unzip_table, name, folder):
    path = str(unzip_table(name, folder))
    timeline = HudiTable.load(path).timeline
    expected = sorted((i.timestamp for i in timeline.completed_commits()), reverse=True)[:10]
    rows = call("show_commits", path).to_pylist()
    assert [r["commit_time"] for r in rows] == expected
    assert all(r["state_transition_time"] and r["total_bytes_written"] > 0 for r in rows)
    if folder == "v8_v9":  # layout 2 records the completion time
        assert [r["state_transition_time"] for r in rows] == [
            next(i.completion_time for i in timeline if i.timestamp == r["commit_time"] and i.is_completed)
            for r in rows]


@pytest.mark.parametrize("version", ["6", "9"])
def test_show_archived_commits(tmp_path, version):
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.write.table.version": version}
    instants = [write_table(rows([1, 2], ts, ["x", "y"]), path, options).instant_time for ts in range(4)]
    call("archive_commits", path, min_commits=2, max_commits=3, retain_commits=1)
    assert call("show_archived_commits", path).num_rows == 0  # Hudi's default range ends a day ago
    everything = {"start_ts": "0", "end_ts": "99991231235959999"}
    archived = call("show_archived_commits", path, **everything).to_pylist()
    assert [r["commit_time"] for r in archived] == instants[1::-1]
    assert [(r["total_files_added"], r["total_files_updated"], r["total_records_written"]) for r in archived] == [
        (0, 2, 2), (2, 0, 2)]
    assert all(r["state_transition_time"] for r in archived)
    stats = call("show_archived_commits_metadata", path, **everything).to_pylist()
    assert sorted((r["commit_time"], r["partition"]) for r in stats) == sorted(
        (i, p) for i in instants[:2] for p in ("x", "y"))
    assert call("show_archived_commits", path, start_ts=instants[0], end_ts=instants[1]).column(
        "commit_time").to_pylist() == [instants[1]]
