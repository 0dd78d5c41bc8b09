"""A writer whose instant is rolled back under it (another writer took its expired lock) writes no more files,
removes what it wrote and says why; a rollback picks up files marked after its plan; cleaning removes what such a
writer could still leave; archival never turns any of it into rows."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from archival import archive_all_but_latest_commit
from handle_table import HandleTable
from oracle import assert_same_rows

import hudi_engine.write.rollback as rollback_module
from hudi_engine import HudiTable
from hudi_engine.config import CleanConfig
from hudi_engine.errors import InstantLostError, WriteError
from hudi_engine.file_naming import BaseFileName, is_base_file_name
from hudi_engine.io.base_file import BaseFileWriter
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.clean import clean as clean_table
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, request_commit, start_commit
from hudi_engine.write.handles import append_handle
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.lock import lock_path
from hudi_engine.write.markers import IOType, list_markers, marker_dir
from hudi_engine.write.rollback import rollback_failed_writes, rollback_instant


class Table(HandleTable):
    def files_of(self, instant_time: str) -> list[str]:
        """Base files named after the instant, and log files, anywhere under the table."""
        out = []
        for p in self.path.rglob("*"):
            if p.is_file() and ".hoodie" not in p.relative_to(self.path).parts:
                if is_base_file_name(p.name) and BaseFileName.parse(p.name).instant_time == instant_time:
                    out.append(str(p.relative_to(self.path)))
        return sorted(out)


UPDATE = pa.table({"id": ["a", "c", "z"], "part": ["p1", "p2", "p2"], "ts": pa.array([9, 9, 9], pa.int64()),
                   "val": [-1.0, -3.0, -26.0]})


def _taken(t: Table, inflight: Instant) -> str:
    """Another writer rolls the instant back (as `rollback_failed_writes` does after taking an expired lock)."""
    return rollback_instant(TableLocation.at(t.storage, t.base), inflight).rollback_instant


def test_no_marker_and_no_file_once_the_instant_is_rolled_back(tmp_path):
    t = Table(tmp_path)
    t.insert()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    t.write(inflight, UPDATE, "p1")
    rollback = _taken(t, inflight)
    with pytest.raises(InstantLostError, match=rf"instant {inflight.timestamp} was rolled back by rollback "
                                               rf"{rollback} \(completed\), so this writer is not writing p2/"):
        t.write(inflight, UPDATE, "p2", task=1)
    assert t.files_of(inflight.timestamp) == [] and list_markers(TableLocation.at(t.storage, t.base), inflight.timestamp) == []


def test_a_file_written_while_the_instant_was_taken_is_removed_by_its_writer(tmp_path, monkeypatch):
    t = Table(tmp_path)
    t.insert()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    real = BaseFileWriter.close

    def rolled_back_mid_write(self):  # the marker exists and was checked; the file is not there yet
        _taken(t, inflight)
        return real(self)

    monkeypatch.setattr(BaseFileWriter, "close", rolled_back_mid_write)
    with pytest.raises(InstantLostError, match="so this writer is not keeping p1/"):
        t.write(inflight, UPDATE, "p1")
    assert t.files_of(inflight.timestamp) == []
    assert not t.storage.exists(marker_dir(TableLocation.at(t.storage, t.base), inflight.timestamp)) or \
        list_markers(TableLocation.at(t.storage, t.base), inflight.timestamp) == []


def test_a_rollback_deletes_files_marked_after_its_plan(tmp_path, monkeypatch):
    t = Table(tmp_path, "MERGE_ON_READ")
    t.insert()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    t.write(inflight, UPDATE, "p1")
    group = next(s for s in HudiTable.load(str(t.path)).file_slices() if s.partition_path == "p2")
    real_plan = rollback_module._plan_pending
    late = []

    def plan_then_zombie_writes(*args, **kwargs):
        requests = real_plan(*args, **kwargs)
        # The old writer's checks pass (the rollback is not requested yet): a new base file and a log file.
        late.append(t.write(inflight, UPDATE, "p2", task=1).path)
        late.append(append_handle(t.ctx(inflight, 2), "p2", group.file_id, group.base_instant,
                                  UPDATE.filter(pc.equal(UPDATE["id"], "c"))).path)
        return requests

    monkeypatch.setattr(rollback_module, "_plan_pending", plan_then_zombie_writes)
    result = rollback_instant(TableLocation.at(t.storage, t.base), inflight)
    assert len(late) == 2 and all(not (t.path / p).exists() for p in late)
    assert {p.rsplit("/", 1)[-1] for p in late} <= {p.rsplit("/", 1)[-1] for p in result.deleted_files}
    assert t.files_of(inflight.timestamp) == []
    assert not any(p.name.startswith(".") and ".log." in p.name for p in (t.path / "p2").iterdir())


def test_committing_a_lost_instant_fails_and_the_abort_removes_what_it_wrote(tmp_path, monkeypatch):
    t = Table(tmp_path)
    t.insert()
    before = t.snapshot()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    stats = [t.write(inflight, UPDATE, "p1")]
    rollback = _taken(t, inflight)
    # A file the old writer wrote after the rollback had listed its markers (its checks had passed before).
    monkeypatch.setattr(InflightInstant, "check_inflight", lambda *a, **k: None)
    stats.append(t.write(inflight, UPDATE, "p2", task=1))
    monkeypatch.undo()
    assert t.files_of(inflight.timestamp)
    with pytest.raises(InstantLostError, match=f"instant {inflight.timestamp} was rolled back by rollback"):
        complete_commit(TableLocation.at(t.storage, t.base), inflight, stats, "UPSERT", t.ctx(inflight).schema,
                        layout=layout_at(TableLocation.at(t.storage, t.base)))
    with pytest.raises(InstantLostError) as e:
        InflightInstant(TableLocation.at(t.storage, t.base), inflight.timestamp).abort(inflight, lock_expiry_ms=1234)
    message = str(e.value)
    for part in (f"instant {inflight.timestamp}", f"rollback {rollback} (completed)", lock_path(TableLocation.at(t.storage, t.base)),
                 "hoodie.write.lock.filesystem.expire=0.0205667 minutes", "1 data file(s) it had written were removed"):
        assert part in message, message
    assert t.files_of(inflight.timestamp) == []
    assert not t.storage.exists(marker_dir(TableLocation.at(t.storage, t.base), inflight.timestamp))
    assert t.snapshot().equals(before)
    archive_all_but_latest_commit(t.path)
    assert t.snapshot().equals(before)


def test_abort_of_an_instant_that_is_still_ours_rolls_it_back(tmp_path):
    t = Table(tmp_path)
    t.insert()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    t.write(inflight, UPDATE, "p1")
    assert InflightInstant(TableLocation.at(t.storage, t.base), inflight.timestamp).loss() is None
    InflightInstant(TableLocation.at(t.storage, t.base), inflight.timestamp).abort(inflight, lock_expiry_ms=1)
    assert t.files_of(inflight.timestamp) == []
    assert any(i.action is Action.ROLLBACK for i in Timeline.load(TableLocation.at(t.storage, t.base)))


def test_a_rollback_gives_up_when_its_instant_completes_meanwhile(tmp_path, monkeypatch):
    t = Table(tmp_path)
    t.insert()
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    stat = t.write(inflight, UPDATE, "p1")
    real_plan = rollback_module._plan_pending

    def plan_then_old_writer_commits(*args, **kwargs):
        requests = real_plan(*args, **kwargs)
        complete_commit(TableLocation.at(t.storage, t.base), inflight, [stat], "UPSERT", t.ctx(inflight).schema,
                        layout=layout_at(TableLocation.at(t.storage, t.base)))
        return requests

    monkeypatch.setattr(rollback_module, "_plan_pending", plan_then_old_writer_commits)
    assert rollback_failed_writes(TableLocation.at(t.storage, t.base)) == []
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    assert not any(i.action is Action.ROLLBACK for i in timeline)
    assert timeline.completed_commits().last().timestamp == inflight.timestamp
    assert t.files_of(inflight.timestamp) == [stat.path]
    assert sorted(t.snapshot().column("val").to_pylist()) == [-1.0, 1.0, 2.0, 3.0, 4.0]  # its new file group is read


def test_a_requested_rollback_of_a_completed_instant_is_given_up_not_resumed(tmp_path):
    t = Table(tmp_path)
    committed = t.insert()
    before = t.snapshot()
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    plan = rollback_module.write_avro_metadata(rollback_module.ROLLBACK_PLAN, {
        "instantToRollback": {"commitTime": committed.timestamp, "action": "commit"},
        "RollbackRequests": [{"partitionPath": "p1", "fileId": "", "latestBaseInstant": "",
                              "filesToBeDeleted": [str(t.path / t.files_of(committed.timestamp)[0])],
                              "logBlocksToBeDeleted": {}}], "version": 1})
    timeline.create_requested(Instant("29990101000000000", Action.ROLLBACK, State.REQUESTED), plan)
    assert rollback_failed_writes(TableLocation.at(t.storage, t.base)) == []
    assert not any(i.action is Action.ROLLBACK for i in Timeline.load(TableLocation.at(t.storage, t.base)))
    assert t.snapshot().equals(before)


def test_cleaning_removes_orphans_of_rolled_back_instants_and_archival_changes_no_row(tmp_path, monkeypatch):
    t = Table(tmp_path, "MERGE_ON_READ")
    t.insert()
    lost = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    _taken(t, lost)
    # Files a writer left after its instant was rolled back (it died between writing and checking again): a new
    # base file (found by its name) and a log file (found through its marker).
    group = next(s for s in HudiTable.load(str(t.path)).file_slices() if s.partition_path == "p1")
    monkeypatch.setattr(InflightInstant, "check_inflight", lambda *a, **k: None)
    orphan_base = t.write(lost, UPDATE, "p2").path
    for marker in list_markers(TableLocation.at(t.storage, t.base), lost.timestamp):  # lost with the writer: no marker for it
        t.storage.delete(Storage.join(marker_dir(TableLocation.at(t.storage, t.base), lost.timestamp), marker.relative_path))
    orphan_log = append_handle(t.ctx(lost, 1), "p1", group.file_id, group.base_instant,
                               UPDATE.filter(pc.equal(UPDATE["part"], "p1"))).path
    monkeypatch.undo()
    # A live writer's pending instant and its file are not orphans.
    live = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    live_file = t.write(live, UPDATE, "p2", task=3).path
    before = t.snapshot()

    location = TableLocation.at(t.storage, t.base)
    result = clean_table(location, CleanConfig(commits_retained=10), table=TableConfig.load(location),
                         timeline=Timeline.load(location))
    assert result is not None
    assert sorted(p.split("/t/", 1)[1] for p in result.deleted) == sorted([orphan_base, orphan_log])
    assert not (t.path / orphan_base).exists() and not (t.path / orphan_log).exists()
    assert not t.storage.exists(marker_dir(TableLocation.at(t.storage, t.base), lost.timestamp))
    assert (t.path / live_file).exists()
    clean = Timeline.load(TableLocation.at(t.storage, t.base)).filter_by([Action.CLEAN], [State.COMPLETED]).last()
    meta = read_avro_metadata((t.path / ".hoodie" / clean.file_name).read_bytes(), "HoodieCleanMetadata")
    assert sorted(n for pm in meta["partitionMetadata"].values() for n in pm["successDeleteFiles"]) == sorted(
        [orphan_base.rsplit("/", 1)[-1], orphan_log.rsplit("/", 1)[-1]])
    assert clean_table(location, CleanConfig(), table=TableConfig.load(location),
                       timeline=Timeline.load(location)) is None  # nothing left to find

    rollback_instant(TableLocation.at(t.storage, t.base), live)
    t.insert(UPDATE.slice(2, 1).set_column(3, "val", pa.array([5.0])))
    after_write = t.snapshot()
    assert after_write.num_rows == before.num_rows + 1
    archive_all_but_latest_commit(t.path)
    assert_same_rows(t.snapshot(), after_write, "after archival")


def test_a_pending_instant_is_not_lost_and_a_completed_one_takes_no_more_files(tmp_path):
    t = Table(tmp_path)
    requested = request_commit(TableLocation.at(t.storage, t.base), t.config, "INSERT")
    assert InflightInstant(TableLocation.at(t.storage, t.base), requested.timestamp).loss() is None
    t.storage.delete(Storage.join(t.base, ".hoodie", requested.file_name))
    committed = t.insert()
    with pytest.raises(InstantLostError, match="COMPLETED on the timeline"):
        InflightInstant(TableLocation.at(t.storage, t.base), committed.timestamp).create_marker(
            "p1", f"x-0_0-1-1_{committed.timestamp}.parquet", IOType.CREATE)
    with pytest.raises(WriteError):
        rollback_instant(TableLocation.at(t.storage, t.base), committed)
