"""Table services on Hudi 1.x tables (versions 8 and 9, timeline layout 2), as Hudi 1.x runs them: compaction and
cleaning complete with completion times and Avro metadata and leave tables hudi-rs reads alike; a failed delta
commit's log files are deleted (no command blocks); archival is refused (the LSM history is not written here) and
never run after a write."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable, WriteConfig
from hudi_engine.errors import HudiError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.writer import KEPT_PARTITIONS
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.write import local_writer
from hudi_engine.write.write_client import WriteClient, table_for_write
from hudi_engine.write_pipeline import write_table

KEY = "_hoodie_record_key"


def _new_table(path: Path, version: int = 9) -> dict:
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": str(version),
               "hoodie.compact.inline": "false"}
    write_table(pa.table({"id": ["a", "b", "c", "d"], "p": ["x", "x", "y", "y"], "ts": [1] * 4,
                          "v": [1.0, 2.0, 3.0, 4.0]}), str(path), options)
    return options


def _upsert(path: Path, options: dict, ids: list[str], ts: int, **extra: str) -> None:
    rows = pa.table({"id": ids, "p": ["x" if i in "ab" else "y" for i in ids], "ts": [ts] * len(ids),
                     "v": [float(ts * 10 + n) for n in range(len(ids))]})
    write_table(rows, str(path), {**options, **extra})


def _data(table: pa.Table) -> pa.Table:
    return table.drop_columns(["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name"])


def _same_as_hudi_rs(path: Path, what: str, *, since: str = "") -> HudiTable:
    """Equal to hudi-rs now and as of every commit from `since` on (cleaning takes the older ones away)."""
    table = HudiTable.load(str(path))
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), what)
    for instant in (i for i in table.timeline.completed_commits() if i.timestamp >= since):
        assert_same_rows(table.read_snapshot(as_of=instant.timestamp), rs_snapshot(path, as_of=instant.timestamp),
                         f"{what} as of {instant.timestamp}")
    return table


def test_compaction_of_a_v9_table(tmp_path):
    path = tmp_path / "t"
    options = _new_table(path)
    _upsert(path, options, ["a", "c"], 2)
    _upsert(path, options, ["b", "c"], 3)
    before = HudiTable.load(str(path)).read_snapshot()
    result = HudiTable.load(str(path)).compact()
    assert result is not None
    table = _same_as_hudi_rs(path, "compacted")
    assert_same_rows(_data(table.read_snapshot()), _data(before), "compaction keeps the rows")
    (commit,) = [i for i in table.timeline.completed_commits() if i.timestamp == result.instant_time]
    assert commit.action.value == "commit" and commit.completion_time is not None
    folder = path / ".hoodie" / "timeline"
    assert (folder / f"{commit.timestamp}.compaction.requested").exists()
    assert (folder / f"{commit.timestamp}_{commit.completion_time}.commit").exists()
    meta = table.timeline.commit_metadata(commit)
    assert meta.compacted and meta.operation_type == "COMPACT"
    # Read-optimized reads the compacted base files only: every row is there.
    assert_same_rows(table.read_snapshot(), rs_snapshot(path, read_optimized=True), "read-optimized after compaction")
    # A write after the compaction goes on top of the new base files (its log file joins the compacted slice).
    _upsert(path, options, ["d"], 4)
    table = _same_as_hudi_rs(path, "written after compaction")
    slices = {s.file_id: s for s in table.file_slices()}
    assert any(s.base_instant == commit.timestamp and s.log_files for s in slices.values())


def test_cleaning_of_a_v9_table(tmp_path):
    path = tmp_path / "t"
    options = _new_table(path)
    for ts in (2, 3):
        _upsert(path, options, ["a", "c"], ts)
    HudiTable.load(str(path)).compact()
    _upsert(path, options, ["a"], 4)
    base_files = sorted(p.name for p in path.rglob("*.parquet"))
    last = HudiTable.load(str(path)).timeline.completed_commits().last()
    result = HudiTable.load(str(path)).clean(options={"hoodie.cleaner.commits.retained": "1"})
    assert result is not None and last is not None
    table = _same_as_hudi_rs(path, "cleaned", since=last.timestamp)
    assert len(sorted(p.name for p in path.rglob("*.parquet"))) < len(base_files)
    (clean,) = table.timeline.filter_by(["clean"]).completed()
    assert (path / ".hoodie" / "timeline" / f"{clean.timestamp}_{clean.completion_time}.clean").exists()
    rows = table.read_snapshot()
    assert dict(zip(rows.column("id").to_pylist(), rows.column("ts").to_pylist())) == {"a": 4, "b": 1, "c": 3, "d": 1}


def test_a_failed_delta_commit_is_rolled_back_by_deleting_its_log_files(tmp_path):
    path = tmp_path / "t"
    options = _new_table(path)
    before = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and ".hoodie" not in p.parts)
    rows = pa.table({"id": ["a", "c"], "p": ["x", "y"], "ts": [5, 5], "v": [5.0, 5.0]})
    client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(options, str(path)), rows.schema)
    with pytest.raises(RuntimeError, match="task failed"):
        with client.transaction() as txn:
            stats = local_writer.write_files(client, txn, rows)
            assert any(".log." in (s.path or "") for s in stats)
            failed = txn.instant
            raise RuntimeError("task failed")
    after = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and ".hoodie" not in p.parts)
    assert after == before, "the failed delta commit's log files are deleted, no command block is written"
    table = _same_as_hudi_rs(path, "after the rollback")
    (rollback,) = table.timeline.filter_by(["rollback"]).completed()
    plan = table.timeline.avro_metadata(rollback.with_state(rollback.state.REQUESTED))
    assert plan["instantToRollback"]["commitTime"] == failed
    assert all(not r["logBlocksToBeDeleted"] for r in plan["RollbackRequests"])
    assert not [i for i in table.timeline if i.timestamp == failed]


def test_writes_archive_a_v9_table_into_the_lsm_history(tmp_path):
    """Real writes (not synthesised instants) archive as version 6 does, into `.hoodie/timeline/history/`."""
    path = tmp_path / "t"
    retention = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    options = {**_new_table(path), "hoodie.datasource.write.table.type": "COPY_ON_WRITE", **retention}
    shutil.rmtree(path)
    write_table(pa.table({"id": ["a", "b", "c", "d"], "p": ["x", "x", "y", "y"], "ts": [1] * 4,
                          "v": [1.0, 2.0, 3.0, 4.0]}), str(path), options)
    for ts in range(2, 12):
        _upsert(path, options, ["a", "c"], ts)
    table = HudiTable.load(str(path))
    active = table.timeline.completed_commits()
    assert 2 <= len(active) <= 3, [i.timestamp for i in active]
    history = TimelineHistory.of(TableLocation.of(str(path)))
    archived = [i for i in history.instants() if i.action.value == "commit"]
    assert len(archived) + len(active) == 11, "every commit is active or archived, none lost"
    assert max(i.timestamp for i in archived) < min(i.timestamp for i in active)
    assert not (path / ".hoodie" / "archived").exists(), "layout 2 never writes the version-6 archive"
    _same_as_hudi_rs(path, "archived", since=active[-1].timestamp)
    with pytest.raises(HudiError, match="before the active timeline"):
        table.read_snapshot(as_of=archived[0].timestamp)


@pytest.mark.parametrize("name", ["mor_avrolog_v8_trips_8i3u1d", "mor_avrolog_v9_txns_simple_meta"])
def test_compaction_of_a_real_1x_table_after_our_upsert(unzip_table, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(unzip_table(name, "v8_v9"), path)
    table = HudiTable.load(str(path))
    rows = table.read_snapshot().slice(0, 2)
    data = rows.drop_columns([c for c in rows.column_names if c.startswith("_hoodie_")])
    # a metadata table with Java's secondary indexes is deleted first (the engine refuses to leave them stale)
    unmaintained = any(p not in KEPT_PARTITIONS for p in table.config.metadata_partitions)
    write_table(data, str(path), {"hoodie.table.name": table.config.name, "hoodie.compact.inline": "false",
                                  **({"hoodie.metadata.enable": "false"} if unmaintained else {})})
    before = HudiTable.load(str(path)).read_snapshot()
    assert HudiTable.load(str(path)).compact() is not None
    after = HudiTable.load(str(path))
    assert_same_rows(after.read_snapshot(), rs_snapshot(path), f"{name} compacted")
    assert_same_rows(_data(after.read_snapshot()), _data(before), f"{name} compaction keeps the rows")


def test_rolling_back_the_latest_v9_delta_commit_deletes_its_log_files(tmp_path):
    path = tmp_path / "t"
    options = _new_table(path)
    before = HudiTable.load(str(path)).read_snapshot()
    _upsert(path, options, ["a", "c"], 2)
    def data_logs() -> list[str]:  # not the metadata table's
        return sorted(p.name for p in path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(path).parts)
    assert data_logs()
    result = HudiTable.load(str(path)).rollback(use_command_blocks=True)
    assert not data_logs(), "the delta commit's log files are deleted, no command block written"
    assert result.rollback_log_files == {} and any(".log." in p for p in result.deleted_files)
    table = _same_as_hudi_rs(path, "rolled back")
    assert_same_rows(table.read_snapshot(), before, "the rows before the rolled-back commit")


def test_partial_update_of_a_v9_table_is_written_as_full_records(tmp_path):
    path = tmp_path / "t"
    options = _new_table(path)
    write_table(pa.table({"id": ["a"], "p": ["x"], "ts": [2], "v": [99.0]}), str(path),
                {**options, "hoodie.datasource.write.partial.update.columns": "ts"})
    table = _same_as_hudi_rs(path, "partial update")
    rows = {r["id"]: (r["ts"], r["v"]) for r in table.read_snapshot().to_pylist()}
    assert rows["a"] == (2, 1.0), "only ts took the incoming value; v kept the stored one in a whole record"
