"""Rollback of failed (pending) and of the latest completed write instant, read back by hudi-rs."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from handle_table import DATA, HandleTable

import hudi_engine.write.rollback as rollback_module
from hudi_engine import HudiTable
from hudi_engine.errors import WriteError
from hudi_engine.io.log_block import BlockType
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, request_commit, start_commit
from hudi_engine.write.handles import append_handle, create_handle, merge_handle
from hudi_engine.write.markers import delete_marker_dir, marker_dir
from hudi_engine.write.rollback import rollback_completed, rollback_failed_writes, rollback_instant


class Table(HandleTable):
    """The handle-written table, with what the rollback tests look at."""

    def slice_of(self, partition: str):
        (s,) = [s for s in HudiTable.load(str(self.path)).file_slices() if s.partition_path == partition]
        return s

    def files(self) -> set[str]:
        """Data and partition files (not `.hoodie`)."""
        return {str(p.relative_to(self.path)) for p in self.path.rglob("*")
                if p.is_file() and p.relative_to(self.path).parts[0] != ".hoodie"}

    def hoodie_files(self) -> list[str]:
        return sorted(p.name for p in (self.path / ".hoodie").iterdir() if p.is_file() and p.name != "hoodie.properties")


def _rollback_files(t: Table, ts: str) -> tuple[dict, dict]:
    meta = t.path / ".hoodie"
    assert (meta / f"{ts}.rollback.inflight").read_bytes() == b""
    plan = read_avro_metadata((meta / f"{ts}.rollback.requested").read_bytes(), "HoodieRollbackPlan")
    done = read_avro_metadata((meta / f"{ts}.rollback").read_bytes(), "HoodieRollbackMetadata")
    return plan, done


# --------------------------------------------------------------------------------------------- pending


@pytest.mark.parametrize("with_markers", [True, False])
def test_rollback_of_a_pending_commit_deletes_what_it_wrote(tmp_path, with_markers):
    t = Table(tmp_path)
    first = t.insert()
    before, files_before = t.snapshot(), t.files()
    failed = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    ctx = t.ctx(failed)
    s = t.slice_of("p1")
    merged = merge_handle(ctx, "p1", s.file_id, s.base_file.path, DATA.slice(0, 1).set_column(3, "val", pa.array([9.0])))
    created = create_handle(ctx, "p3", pa.table({"id": ["z"], "part": ["p3"], "ts": pa.array([1], pa.int64()), "val": [0.0]}))
    if not with_markers:
        delete_marker_dir(TableLocation.at(t.storage, t.base), failed.timestamp)
    result = rollback_instant(TableLocation.at(t.storage, t.base), failed)
    assert sorted(result.deleted_files) == sorted(str(t.path / x.path) for x in (merged, created))
    assert t.files() == files_before
    assert not any(f.startswith(failed.timestamp) for f in t.hoodie_files())
    assert not t.storage.exists(marker_dir(TableLocation.at(t.storage, t.base), failed.timestamp))
    plan, done = _rollback_files(t, result.rollback_instant)
    assert plan["instantToRollback"] == {"commitTime": failed.timestamp, "action": "commit"}
    assert sorted(f for r in plan["RollbackRequests"] for f in r["filesToBeDeleted"]) == sorted(result.deleted_files)
    assert done["commitsRollback"] == [failed.timestamp] and done["totalFilesDeleted"] == 2
    assert done["instantsRollback"] == [{"commitTime": failed.timestamp, "action": "commit"}]
    assert sorted(done["partitionMetadata"]) == ["p1", "p3"]
    assert done["partitionMetadata"]["p3"]["successDeleteFiles"] == [str(t.path / created.path)]
    assert t.snapshot().equals(before)
    assert Timeline.load(TableLocation.at(t.storage, t.base)).completed_commits().last() == first


def test_rollback_of_a_failed_deltacommit_deletes_its_log_file_or_writes_a_command_block(tmp_path):
    t = Table(tmp_path, "MERGE_ON_READ")
    t.insert()
    before = t.snapshot()
    for use_blocks in (False, True):
        failed = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
        s = t.slice_of("p2")
        stat = append_handle(t.ctx(failed), "p2", s.file_id, s.base_instant, DATA.slice(2, 1), deletes=["d"])
        log_path = str(t.path / stat.path)
        result = rollback_instant(TableLocation.at(t.storage, t.base), failed, use_command_blocks=use_blocks)
        plan, done = _rollback_files(t, result.rollback_instant)
        pm = done["partitionMetadata"]["p2"]
        (request,) = plan["RollbackRequests"]
        assert (request["fileId"], request["latestBaseInstant"]) == (s.file_id, s.base_instant)
        if not use_blocks:
            assert result.deleted_files == [log_path] and not Path(log_path).exists()
            assert request["filesToBeDeleted"] == [log_path] and pm["successDeleteFiles"] == [log_path]
            assert pm["logFilesFromFailedCommit"] == {log_path: stat.file_size_in_bytes}
        else:
            assert Path(log_path).exists() and result.deleted_files == []
            (new_log,) = result.rollback_log_files
            assert new_log.endswith(f".{s.file_id}_{s.base_instant}.log.2_1-0-1")
            (block,) = read_log_blocks(Path(new_log).read_bytes())
            assert block.block_type == BlockType.COMMAND and block.is_rollback
            assert (block.instant_time, block.target_instant_time) == (result.rollback_instant, failed.timestamp)
            assert request["logBlocksToBeDeleted"] == {log_path: stat.file_size_in_bytes}
            assert pm["rollbackLogFiles"] == {new_log: Path(new_log).stat().st_size}
            assert pm["logFilesFromFailedCommit"] == {log_path: stat.file_size_in_bytes}
        assert t.snapshot().equals(before)


def test_rollback_failed_writes_rolls_back_every_pending_write_newest_first(tmp_path):
    t = Table(tmp_path)
    t.insert()
    before = t.snapshot()
    a = start_commit(TableLocation.at(t.storage, t.base), t.config, "INSERT")
    create_handle(t.ctx(a), "p9", DATA.slice(0, 1).set_column(1, "part", pa.array(["p9"])))
    b = request_commit(TableLocation.at(t.storage, t.base), t.config, "INSERT")
    results = rollback_failed_writes(TableLocation.at(t.storage, t.base))
    assert [r.rolled_back.timestamp for r in results] == [b.timestamp, a.timestamp]
    assert [r.rolled_back.state for r in results] == [State.REQUESTED, State.INFLIGHT]
    assert Timeline.load(TableLocation.at(t.storage, t.base)).pending().filter_by([Action.COMMIT]).instants == ()
    assert t.snapshot().equals(before)
    assert rollback_failed_writes(TableLocation.at(t.storage, t.base)) == []


def test_pending_clustering_is_not_a_failed_write(tmp_path):
    t = Table(tmp_path)
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    plan = write_avro_metadata("HoodieRequestedReplaceMetadata", {"operationType": "CLUSTER", "clusteringPlan": None,
                                                                   "extraMetadata": None, "version": 1})
    timeline.create_requested(Instant("20300101000000000", Action.REPLACE_COMMIT, State.REQUESTED), plan)
    assert rollback_failed_writes(TableLocation.at(t.storage, t.base)) == []
    assert "20300101000000000.replacecommit.requested" in t.hoodie_files()


# --------------------------------------------------------------------------------------------- completed


def test_rollback_completed_restores_the_previous_state(tmp_path):
    t = Table(tmp_path)
    first = t.insert()
    before = t.snapshot()
    second = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    ctx = t.ctx(second)
    s = t.slice_of("p1")
    stat = merge_handle(ctx, "p1", s.file_id, s.base_file.path, DATA.slice(0, 1).set_column(3, "val", pa.array([9.0])))
    complete_commit(TableLocation.at(t.storage, t.base), second, [stat], "UPSERT", ctx.schema,
                    layout=layout_at(TableLocation.at(t.storage, t.base)))
    assert t.snapshot().column("val").to_pylist() == [9.0, 2.0, 3.0, 4.0]
    with pytest.raises(WriteError, match="not the latest completed commit"):
        rollback_completed(TableLocation.at(t.storage, t.base), first)
    result = rollback_completed(TableLocation.at(t.storage, t.base))
    assert result.rolled_back.timestamp == second.timestamp and result.deleted_files == [str(t.path / stat.path)]
    assert not any(f.startswith(second.timestamp) for f in t.hoodie_files())
    assert t.snapshot().equals(before)
    _rollback_files(t, result.rollback_instant)


def test_rollback_completed_refuses_when_a_newer_write_is_pending(tmp_path):
    t = Table(tmp_path)
    t.insert()
    start_commit(TableLocation.at(t.storage, t.base), t.config, "INSERT")
    with pytest.raises(WriteError, match="newer write instants"):
        rollback_completed(TableLocation.at(t.storage, t.base))


def test_an_interrupted_rollback_is_finished_by_rollback_failed_writes(tmp_path, monkeypatch):
    t = Table(tmp_path, "MERGE_ON_READ")
    t.insert()
    before = t.snapshot()
    second = start_commit(TableLocation.at(t.storage, t.base), t.config, "UPSERT")
    s = t.slice_of("p1")
    stat = append_handle(t.ctx(second), "p1", s.file_id, s.base_instant, DATA.slice(1, 1).set_column(3, "val", pa.array([7.0])))
    complete_commit(TableLocation.at(t.storage, t.base), second, [stat], "UPSERT", t.ctx(second).schema,
                    layout=layout_at(TableLocation.at(t.storage, t.base)))

    def crash(*args, **kwargs):
        raise RuntimeError("killed")

    monkeypatch.setattr(rollback_module, "_execute", crash)
    with pytest.raises(RuntimeError):
        rollback_completed(TableLocation.at(t.storage, t.base))
    monkeypatch.undo()
    # The commit is already undone for readers (its completed file is gone), the rollback is pending.
    names = t.hoodie_files()
    assert f"{second.timestamp}.deltacommit" not in names and any(n.endswith(".rollback.requested") for n in names)
    assert t.snapshot().equals(before)
    (result,) = rollback_failed_writes(TableLocation.at(t.storage, t.base))
    assert result.rolled_back.timestamp == second.timestamp
    assert not (t.path / stat.path).exists()
    assert not any(f.startswith(second.timestamp) for f in t.hoodie_files())
    assert t.snapshot().equals(before)
