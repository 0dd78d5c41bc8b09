"""The action procedures through the engine's table services; refusals leave the table as it was."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
import pytest
from procedure_tables import OPTIONS, rows

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.procedures import call, run
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write_pipeline import write_table


def test_run_compaction_schedule_then_run(mor):
    path, _, _ = mor
    (scheduled,) = call("run_compaction", path, op="schedule").to_pylist()
    assert (scheduled["operation_size"], scheduled["state"]) == (1, "REQUESTED")  # one file group has a log file
    assert call("show_compaction", path).to_pylist() == [scheduled]
    (done,) = call("run_compaction", path, op="run").to_pylist()
    assert done == {**scheduled, "state": "COMPLETED"}
    assert call("show_compaction", path).to_pylist() == [done]
    assert call("run_compaction", path, op="scheduleAndExecute").num_rows == 0  # nothing left to compact


def test_run_compaction_refusals(cow, mor):
    with pytest.raises(ConfigError, match="Compaction is not supported on a CopyOnWrite table"):
        call("run_compaction", cow[0], op="run")
    with pytest.raises(ConfigError, match="Argument: op of run_compaction is 'go'"):
        call("run_compaction", mor[0], op="go")
    with pytest.raises(ConfigError, match="no pending compaction at 123"):
        call("run_compaction", mor[0], op="run", instants="123")


def test_rollback_to_instant_and_show_rollbacks(cow):
    path, first, second = cow
    with pytest.raises(HudiError):  # not the latest commit: later ones may depend on it (Hudi refuses it too)
        call("rollback_to_instant", path, instant_time=first)
    with pytest.raises(ConfigError, match="Commit 9 not found in Commits"):
        call("rollback_to_instant", path, instant_time="9")
    assert call("rollback_to_instant", path, instant_time=second).to_pylist() == [{"rollback_result": True}]
    assert [r["commit_time"] for r in call("show_commits", path).to_pylist()] == [first]
    (rb,) = call("show_rollbacks", path).to_pylist()
    assert (rb["rollback_instant"], rb["total_files_deleted"], rb["total_partitions"]) == (second, 2, 2)
    detail = call("show_rollback_detail", path, instant_time=rb["instant"]).to_pylist()
    assert {(d["rollback_instant"], d["partition"], d["succeeded"]) for d in detail} == {
        (f"[{second}]", "x", True), (f"[{second}]", "y", True)}
    assert all(second in d["deleted_file"] for d in detail)
    gone = detail[0]["deleted_file"].rsplit("/", 1)[-1]
    assert call("show_file_status", path, partition=detail[0]["partition"], file=gone).to_pylist() == [
        {"status": "deleted", "action": "rollback", "instant": rb["instant"], "timeline": "active", "full_path": ""}]
    (kept,) = [r["data_file"] for r in call("show_fsview_latest", path, path_regex="x").to_pylist()]
    assert call("show_file_status", path, partition="x", file=kept.rsplit("/", 1)[-1]).to_pylist() == [
        {"status": "exist", "action": "", "instant": "", "timeline": "active", "full_path": kept.removeprefix("file:")}]
    assert call("show_file_status", path, partition="x", file="nope.parquet").column("status").to_pylist() == [
        "unknown"]
    with pytest.raises(ConfigError, match="is a partitioned table. Please specify the partition"):
        call("show_file_status", path, file="nope.parquet")
    timeline = call("show_timeline", path).to_pylist()
    assert [(t["instant_time"], t["action"], t["state"], t["timeline_type"], t["rollback_info"]) for t in timeline] == [
        (rb["instant"], "rollback", "COMPLETED", "ACTIVE", f"Rolled back: {second}"),
        (first, "commit", "COMPLETED", "ACTIVE", None)]
    assert all(t["requested_time"] and t["completed_time"] for t in timeline)


def third_commit(path: str) -> str:
    return write_table(rows([1, 4], 3, ["x", "y"]), path, OPTIONS).instant_time


def test_run_clean_and_show_cleans(cow):
    path, first, second = cow
    third = third_commit(path)
    assert call("run_clean", path).num_rows == 0  # the default retains 10 commits: nothing to delete
    (clean,) = call("run_clean", path, retain_commits=1).to_pylist()
    # the slices of the first commit go; the second's stay, as a query as of the third reads them
    assert (clean["total_files_deleted"], clean["earliest_commit_to_retain"]) == (2, third)
    (shown,) = call("show_cleans", path).to_pylist()
    assert (shown["clean_time"], shown["action"], shown["total_files_deleted"]) == (clean["start_clean_time"],
                                                                                      "clean", 2)
    assert {r["partition_path"] for r in call("show_cleans_metadata", path).to_pylist()} == {"x", "y"}
    (plan,) = call("show_clean_plans", path).to_pylist()
    assert (plan["plan_time"], plan["state"], plan["earliest_instant_to_retain"], plan["policy"],
            plan["total_partitions_to_clean"], plan["total_partitions_to_delete"]) == (
        clean["start_clean_time"], "COMPLETED", third, "KEEP_LATEST_COMMITS", 2, 0)
    with pytest.raises(ConfigError, match="Argument: hours_retained of run_clean is not served"):
        call("run_clean", path, hours_retained=1)


def test_archive_commits(cow):
    path, first, second = cow
    third, fourth = third_commit(path), third_commit(path)
    with pytest.raises(ConfigError, match="hoodie.keep.min.commits=1 must be greater than hoodie.cleaner.commits"):
        call("archive_commits", path, min_commits=1, max_commits=2, retain_commits=1)
    assert call("archive_commits", path, min_commits=2, max_commits=3, retain_commits=1).to_pylist() == [
        {"result": 0}]
    active = [i.timestamp for i in HudiTable.load(path).timeline.completed_commits()]
    assert active == [third, fourth]
    assert second not in active


def test_delete_marker_and_rollback_inflight_tableservice(mor, tmp_path):
    path, _, _ = mor
    assert call("delete_marker", path, instant_time="20200101000000000").to_pylist() == [
        {"delete_marker_result": True}]
    (scheduled,) = call("run_compaction", path, op="schedule").to_pylist()
    (undone,) = call("run_rollback_inflight_tableservice", path, pending_instant=scheduled["timestamp"],
                     delete_request_instant_file=True).to_pylist()
    assert undone["instant"] == scheduled["timestamp"]
    assert not [i for i in HudiTable.load(path).timeline if i.action is Action.COMPACTION]
    with pytest.raises(ConfigError, match="no pending table service at 1 "):
        call("run_rollback_inflight_tableservice", path, pending_instant="1")


def test_truncate_table(cow):
    path, _, _ = cow
    with pytest.raises(ConfigError, match="partition 'dt=x' does not exist"):
        call("truncate_table", path, partitions="dt=x")
    assert call("show_commits", path).num_rows == 2  # refused: nothing changed
    assert call("truncate_table", path, partitions="x").num_rows == 0  # delete_partition, no rows (as Hudi)
    assert sorted(HudiTable.load(path).read_snapshot().column("id").to_pylist()) == [3, 4]
    assert call("truncate_table", path).num_rows == 0
    table = HudiTable.load(path)
    assert not list(table.timeline) and table.read_snapshot().num_rows == 0
    assert table.config.name == "trips"


def test_savepoint_procedures_create_show_restore_and_delete(cow):
    path, first, second = cow
    with pytest.raises(ConfigError, match="no completed savepoints"):
        call("rollback_to_savepoint", path)
    with pytest.raises(ConfigError, match="Commit 9 not found in Commits"):
        call("create_savepoint", path, commit_time="9")
    assert call("create_savepoint", path, commit_time=first, user="ops", comments="before").to_pylist() == [
        {"create_savepoint_result": True}]
    assert call("create_savepoint", path).to_pylist() == [{"create_savepoint_result": True}]  # the latest: second
    assert call("show_savepoints", path).column("savepoint_time").to_pylist() == [second, first]
    third = third_commit(path)
    with pytest.raises(ConfigError, match=f"savepoint {third} not found .*\\[{first}, {second}\\]"):
        call("rollback_to_savepoint", path, instant_time=third)
    with pytest.raises(ConfigError, match="names one savepoint"):
        call("rollback_to_savepoint", path, instant_time=f"{first},{second}")
    assert call("rollback_to_savepoint", path, instant_time=first).to_pylist() == [
        {"rollback_savepoint_result": True}]
    table = HudiTable.load(path)
    assert sorted(table.read_snapshot().column("v").to_pylist()) == ["v1-1", "v2-1", "v3-1"]
    assert [r["commit_time"] for r in call("show_commits", path).to_pylist()] == [first]
    assert [i.action for i in table.timeline.instants if i.timestamp > third] == [Action.RESTORE]
    # both savepoint instants stay on the timeline, as Hudi's restore leaves them; the latest is deleted by default
    assert call("delete_savepoint", path).to_pylist() == [{"delete_savepoint_result": True}]
    assert call("show_savepoints", path).column("savepoint_time").to_pylist() == [first]
    call("delete_savepoint", path, instant_time=first)
    assert call("show_savepoints", path).num_rows == 0


def test_run_clustering_schedule_execute_and_show_clustering(tmp_path):
    path = str(tmp_path / "small")
    options = {**OPTIONS, "hoodie.parquet.small.file.limit": "0"}  # every insert a new file group
    for n in range(3):
        write_table(rows([10 * n + 1, 10 * n + 2], 1, ["x", "y"]), path, {**options,
                    "hoodie.datasource.write.operation": "insert"})
    assert call("show_clustering", path).num_rows == 0
    with pytest.raises(ConfigError, match="Argument: instants of run_clustering: 9 not pending clusterings"):
        call("run_clustering", path, instants="9")
    (planned,) = call("run_clustering", path, op="schedule", order="v", show_involved_partition=True).to_pylist()
    assert (planned["input_group_size"], planned["state"], set(planned["involved_partitions"].split(","))) == (
        2, "REQUESTED", {"x", "y"})
    (done,) = call("run_clustering", path).to_pylist()  # no op, no instants: scheduleAndExecute runs the pending one
    assert (done["timestamp"], done["state"], done["involved_partitions"]) == (planned["timestamp"], "COMPLETED", "*")
    assert call("show_clustering", path).to_pylist() == [done]
    table = HudiTable.load(path)
    assert sorted(table.read_snapshot().column("id").to_pylist()) == [1, 2, 11, 12, 21, 22]
    assert len(table.file_slices()) == 2  # three small file groups per partition stitched into one


def _files(path: str) -> dict[str, int]:
    root = Path(path)
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("name", "args", "message"), [
    ("run_compaction", {"op": "run", "bogus": 1}, "Argument: bogus is not a parameter of run_compaction"),
    ("run_compaction", {"op": 1}, "Argument: op of run_compaction is of type string"),
    ("run_clean", {"retain_commits": "1"}, "Argument: retain_commits of run_clean is of type integer"),
    ("archive_commits", {"min_commits": 1.5}, "Argument: min_commits of archive_commits is of type integer"),
    ("rollback_to_instant", {}, "Argument: instant_time is required"),
    ("delete_marker", {"instant": "1"}, "Argument: instant is not a parameter of delete_marker"),
    ("truncate_table", {"partition": "x"}, "Argument: partition is not a parameter of truncate_table"),
    ("run_rollback_inflight_tableservice", {}, "Argument: pending_instant is required"),
    ("delete_savepoint", {"instant_time": 1}, "Argument: instant_time of delete_savepoint is of type string"),
    ("delete_savepoint", {}, "no completed savepoints"),
])
def test_bad_arguments_write_nothing(mor, name, args, message):
    path, _, _ = mor
    before = _files(path)
    with pytest.raises(ConfigError, match=message):
        call(name, path, **args)
    assert _files(path) == before


def test_drop_partition(mor):
    path, _, second = mor
    with pytest.raises(ConfigError, match=r"partition 'z' does not exist .*\['x', 'y'\]"):
        call("drop_partition", path, partition="y,z")
    assert call("drop_partition", path, partition="x").to_pylist() == [{"result": "Success"}]
    latest = call("show_commits", path, limit=1).to_pylist()[0]
    assert latest["action"] == "replacecommit"
    assert latest["total_files_added"] == latest["total_files_updated"] == latest["total_partitions_written"] == 0
    table = HudiTable.load(path)
    assert sorted(table.read_snapshot().column("id").to_pylist()) == [3, 4]
    assert sorted(table.read_snapshot(as_of=second).column("id").to_pylist()) == [1, 2, 3, 4]


class FakeCatalog:
    def __init__(self) -> None:
        self.synced: list[tuple[str, dict]] = []

    def sync_hive(self, table: str, options) -> None:
        self.synced.append((table, dict(options)))


def test_hive_sync_hands_hudis_sync_keys_to_the_sessions_catalog():
    catalog = FakeCatalog()
    out = run("hive_sync", ["lake.t", "", "", "", "", "hms", "dt", "", "RO"], session=catalog)
    assert out.to_pylist() == [{"result": "hive sync success."}]
    assert catalog.synced == [("lake.t", {"hoodie.datasource.hive_sync.enable": "true",
                                          "hoodie.datasource.hive_sync.mode": "hms",
                                          "hoodie.datasource.hive_sync.partition_fields": "dt",
                                          "hoodie.datasource.hive_sync.table.strategy": "RO"})]
    with pytest.raises(ConfigError, match="Argument: metastore_uri of hive_sync is not served"):
        run("hive_sync", [], {"table": "t", "metastore_uri": "thrift://h:9083"}, session=catalog)
    with pytest.raises(ConfigError, match="table => '/data/t' is a path"):
        run("hive_sync", ["/data/t"], session=catalog)
    with pytest.raises(ConfigError, match="acts on the Spark session's catalog"):
        call("hive_sync", table="t")
    assert len(catalog.synced) == 1


def test_repair_corrupted_clean_files(cow):
    path, _, _ = cow
    timeline = HudiTable.load(path).timeline
    torn = timeline.create_requested(Instant("20300101000000000", Action.CLEAN, State.REQUESTED), b"not avro")
    assert call("repair_corrupted_clean_files", path).to_pylist() == [{"result": True}]
    after = HudiTable.load(path).timeline
    assert not after.filter_by([Action.CLEAN]) and torn.timestamp not in after.timestamps()
    assert call("show_commits", path).num_rows == 2  # nothing else touched


def test_sync_validate_counts_both_tables_and_the_catch_up(tmp_path):
    """A replica one commit behind its source: the count difference and the new records of the source's commits
    after the replica's latest, in Java's words; the HiveServer2 arguments taken and not used."""
    opts = {"hoodie.table.name": "src", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "upsert"}
    src, dst = str(tmp_path / "src"), str(tmp_path / "dst")
    batches = [pa.table({"id": [1, 2, 3], "ts": [1, 1, 1], "datestr": [date.today().isoformat()] * 3}),
               pa.table({"id": [3, 4], "ts": [2, 2], "datestr": ["2000-01-01"] * 2})]
    write_table(batches[0], src, opts)
    write_table(batches[0], dst, {**opts, "hoodie.table.name": "dst"})
    write_table(batches[1], src, opts)
    hive = {"hive_server_url": "jdbc:hive2://unused:10000", "hive_pass": ""}
    (row,) = call("sync_validate", None, src_table=src, dst_table=dst, mode="complete", **hive).to_pylist()
    # Java's catch-up count: records written minus updated, the rows a copy-on-write merge copied counted too.
    assert row["result"] == "Count difference now is count(src) - count(dst) == 1. Catach up count is 3"
    (row,) = call("sync_validate", None, src_table=src, dst_table=dst, mode="latestPartitions",
                  **hive).to_pylist()
    assert row["result"] == "Count difference now is count(src) - count(dst) == -1. Catach up count is 3"
    write_table(batches[1], dst, {**opts, "hoodie.table.name": "dst"})
    (row,) = call("sync_validate", None, src_table=src, dst_table=dst, mode="complete", **hive).to_pylist()
    assert row["result"] == "Count difference now is count(dst) - count(src) == 0. Catach up count is 3"
