"""Table services never touch another writer's pending clustering or the slices its plan reads (Hudi 0.14/0.15):

* cleaning keeps every slice of a file group under pending clustering. Hudi's CleanPlanner keeps them by the
  earliest commit to retain, which a pending instant holds back (CleanerUtils.getEarliestCommitToRetain), and by
  always sparing a file group's latest slice; this engine skips those file groups outright, which also covers
  KEEP_LATEST_FILE_VERSIONS, where no earliest commit applies;
* compaction plans leave those file groups out (BaseHoodieCompactionPlanGenerator.generateCompactionPlan adds
  getFileGroupsInPendingClustering to the excluded groups), and a pending clustering does not block scheduling;
* the rollback of failed writes leaves a pending clustering alone
  (BaseHoodieTableServiceClient.getInflightTimelineExcludeCompactionAndClustering);
* archival never archives at or past the earliest pending clustering (HoodieTimelineArchiver.getCommitInstantsToArchive
  stops before the oldest pending compaction or replacecommit, and ClusteringUtils.getOldestInstantToRetainForClustering).
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import rs_snapshot
from write.clustering_job import execute_clustering, schedule_clustering
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.write_config import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, ArchivalConfig, CleanConfig
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.archival import instants_to_archive
from hudi_engine.table_services.clean import clean, plan_clean
from hudi_engine.table_services.compaction import CompactionPlan, run_compaction, schedule_compaction
from hudi_engine.timeline import Action, Instant, State, Timeline
from hudi_engine.write.heartbeat import heartbeat_path
from hudi_engine.write.rollback import rollback_failed_writes

COW = "cow_v6_simplekeygen_nonhivestyle"  # partition 10's file group has two base file versions
MOR = "mor_parquetlog_v6_simplekeygen_nonhivestyle"  # partition 10's file group has a log file


def copy_of(unzip_table, name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(unzip_table(name), target)
    return target


def group_of(path: Path, partition: str) -> str:
    (s,) = [s for s in HudiTable.load(str(path)).file_slices() if s.partition_path == partition]
    return s.file_id


def update(path: Path, ids: list[int], name: str) -> None:
    snap = HudiTable.load(str(path)).read_snapshot()
    data = snap.drop_columns([c for c in META_COLUMNS if c in snap.column_names])
    data = data.filter(pc.is_in(data.column("id"), pa.array(ids, pa.int32())))
    data = data.set_column(data.schema.get_field_index("name"), "name", pa.array([name] * data.num_rows))
    write(path, data, {"hoodie.datasource.write.operation": "upsert"})


@pytest.mark.parametrize("policy", [KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_COMMITS])
def test_cleaning_keeps_every_slice_of_a_file_group_under_pending_clustering(unzip_table, tmp_path, policy):
    path = copy_of(unzip_table, COW, tmp_path)
    storage, base = Storage.for_uri(str(path))
    update(path, [2], "x")  # partition 20's group gets a second and a third version
    update(path, [2], "y")
    config = CleanConfig(policy=policy, commits_retained=1, file_versions_retained=1)
    g10, g20 = group_of(path, "10"), group_of(path, "20")
    without = plan_clean(TableLocation.at(storage, base), config, Timeline.load(TableLocation.at(storage, base)))
    assert without is not None and any(g10 in p for p in without.files.get("10", ()))  # the control
    ts = schedule_clustering(path, [("10", g10)])
    plan = plan_clean(TableLocation.at(storage, base), config, Timeline.load(TableLocation.at(storage, base)))
    assert plan is not None and "10" not in plan.files and any(g20 in p for p in plan.files["20"])
    location = TableLocation.at(storage, base)
    result = clean(location, config, table=TableConfig.load(location), timeline=Timeline.load(location))
    assert result is not None
    # Every slice the plan reads is still there: the clustering runs and reads them.
    assert execute_clustering(path, ts) == {"10": [g10]}
    got = {r["id"]: r["name"] for r in rs_snapshot(path).to_pylist()}
    assert sorted(got) == [1, 2, 3, 4] and got[2] == "y"


def test_compaction_leaves_out_file_groups_under_pending_clustering(unzip_table, tmp_path):
    path = copy_of(unzip_table, MOR, tmp_path)
    storage, base = Storage.for_uri(str(path))
    update(path, [2], "x")  # partition 20's group gets a log file; partition 10's has one already
    g10, g20 = group_of(path, "10"), group_of(path, "20")
    ts = schedule_clustering(path, [("10", g10)], inflight=True)
    # A pending clustering writes new file groups only: scheduling goes ahead, without its groups.
    instant = schedule_compaction(TableLocation.at(storage, base))
    assert instant is not None
    plan = CompactionPlan.load(Timeline.load(TableLocation.at(storage, base)), instant.timestamp)
    assert [op.group for op in plan.operations] == [("20", g20)]
    run_compaction(TableLocation.at(storage, base), instant.timestamp)
    assert execute_clustering(path, ts) == {"10": [g10]}
    got = {r["id"]: r["name"] for r in rs_snapshot(path).to_pylist()}
    assert got[2] == "x" and sorted(got) == [1, 2, 3, 4]


def test_a_pending_clustering_alone_leaves_nothing_to_compact(unzip_table, tmp_path):
    path = copy_of(unzip_table, MOR, tmp_path)
    storage, base = Storage.for_uri(str(path))
    schedule_clustering(path, [("10", group_of(path, "10"))])
    assert schedule_compaction(TableLocation.at(storage, base)) is None


@pytest.mark.parametrize("inflight", [False, True])
def test_rollback_of_failed_writes_leaves_a_pending_clustering(unzip_table, tmp_path, inflight):
    path = copy_of(unzip_table, COW, tmp_path)
    storage, base = Storage.for_uri(str(path))
    ts = schedule_clustering(path, [("10", group_of(path, "10"))], inflight=inflight)
    # The clustering job's heartbeat, long expired (an empty file, as Java writes it, with an old mtime).
    beat = Path(heartbeat_path(TableLocation.at(storage, base), ts))
    beat.parent.mkdir(parents=True, exist_ok=True)
    beat.write_bytes(b"")
    os.utime(beat, (time.time() - 3600, time.time() - 3600))
    # A failed write of ours beside it is rolled back; the clustering is not, and its heartbeat stays.
    failed = Timeline.load(TableLocation.at(storage, base)).create_requested(Instant(f"{int(ts) + 1}", Action.COMMIT, State.REQUESTED))
    rolled_back = rollback_failed_writes(TableLocation.at(storage, base), LockConfig(heartbeat_interval_ms=10))
    assert [r.rolled_back.timestamp for r in rolled_back] == [failed.timestamp]
    assert beat.exists()
    assert rollback_failed_writes(TableLocation.at(storage, base)) == []
    pending = Timeline.load(TableLocation.at(storage, base)).pending()
    assert [(i.timestamp, i.action, i.state) for i in pending] == [
        (ts, Action.REPLACE_COMMIT, State.INFLIGHT if inflight else State.REQUESTED)]


def test_a_version_9_pending_clustering_is_left_alone_by_compaction_cleaning_and_rollback(tmp_path):
    """Hudi 1.x's `<ts>.clustering.requested` (layout 2): compaction plans leave its file group out, cleaning keeps
    its slices, the rollback of failed writes leaves it pending; then it completes and nothing is lost."""
    path = tmp_path / "v9"
    location = TableLocation.of(str(path))
    options = {"hoodie.table.name": "c9", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "9"}
    write(path, pa.table({"id": ["a", "b"], "p": ["x", "y"], "ts": [1, 1], "v": [1, 2]}), options)
    write(path, pa.table({"id": ["a", "b"], "p": ["x", "y"], "ts": [2, 2], "v": [10, 20]}), options)  # log files
    gx, gy = group_of(path, "x"), group_of(path, "y")
    ts = schedule_clustering(path, [("x", gx)], inflight=True)
    assert Timeline.load(location).pending().last().action is Action.CLUSTERING

    instant = schedule_compaction(location)
    assert instant is not None
    assert [op.group for op in CompactionPlan.load(Timeline.load(location), instant.timestamp).operations] == [("y", gy)]
    run_compaction(location, instant.timestamp)
    plan = plan_clean(location, CleanConfig(policy=KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1),
                      Timeline.load(location))
    assert plan is None or "x" not in plan.files
    failed = Timeline.load(location).create_requested(Instant(f"{int(ts) + 1}", Action.DELTA_COMMIT, State.REQUESTED))
    rolled_back = rollback_failed_writes(location, LockConfig(heartbeat_interval_ms=10))
    assert [r.rolled_back.timestamp for r in rolled_back] == [failed.timestamp]
    assert [(i.timestamp, i.action) for i in Timeline.load(location).pending()] == [(ts, Action.CLUSTERING)]

    assert execute_clustering(path, ts) == {"x": [gx]}
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == {"a": 10, "b": 20}


def test_archival_stops_before_the_earliest_pending_clustering(unzip_table, tmp_path):
    path = copy_of(unzip_table, COW, tmp_path)
    storage, base = Storage.for_uri(str(path))
    for i in range(2):
        update(path, [2], f"v{i}")
    ts = schedule_clustering(path, [("10", group_of(path, "10"))])
    for i in range(4):
        update(path, [4], f"w{i}")
    timeline = Timeline.load(TableLocation.at(storage, base))
    commits = [i.timestamp for i in timeline.completed_commits()]
    assert len(commits) == 8
    chosen = instants_to_archive(timeline, ArchivalConfig(True, 2, 3), merge_on_read=False, max_delta_commits=5)
    assert chosen and all(i.timestamp < ts for i in chosen)
    # Without the clustering, the commits after it would go too (the control).
    timeline.delete_instant_files(Instant(ts, Action.REPLACE_COMMIT, State.REQUESTED))
    unblocked = instants_to_archive(Timeline.load(TableLocation.at(storage, base)), ArchivalConfig(True, 2, 3), merge_on_read=False,
                                    max_delta_commits=5)
    assert any(i.timestamp > ts for i in unblocked)
