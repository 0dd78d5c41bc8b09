"""Savepoints and restore (`table_services.savepoint`, `table_services.restore`), on table versions 6 and 9, COW and
MOR, partitioned: savepoint, writes, a clean that keeps the savepointed files, archival that stops before the
savepoint, then a restore. hudi-rs and the engine read the model at every instant kept, before and after."""
from __future__ import annotations

import copy
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable, TableServiceError
from hudi_engine.errors import UnsupportedTableFeatureError
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.instant import Action, State
from hudi_engine.write_pipeline import write_table

SCHEMA = pa.schema([("id", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.float64())])
COLS = SCHEMA.names


def opts(table_type: str, version: int, **extra: str) -> dict:
    return {"hoodie.table.name": "sp", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.operation": "upsert", "hoodie.clean.automatic": "false",
            "hoodie.archive.automatic": "false", "hoodie.compact.inline": "false",
            "hoodie.metadata.enable": "false", **extra}


class Model:
    """A table written through `write_table`, and the rows each of its commits left."""

    def __init__(self, path: Path, table_type: str, version: int) -> None:
        self.path, self.options = path, opts(table_type, version)
        self.rows: dict[str, tuple] = {}
        self.history: dict[str, dict[str, tuple]] = {}

    def write(self, ids: list[int], ts: int) -> str:
        rows = [{"id": f"k{i:02d}", "part": f"p{i % 3}", "ts": ts, "val": float(ts * 100 + i)} for i in ids]
        result = write_table(pa.Table.from_pylist(rows, SCHEMA), str(self.path), self.options)
        self.rows.update({r["id"]: tuple(r[c] for c in COLS) for r in rows})
        self.history[result.instant_time] = copy.deepcopy(self.rows)
        return result.instant_time

    def table(self) -> HudiTable:
        return HudiTable.load(str(self.path))

    def check(self, what: str, rows: dict[str, tuple]) -> None:
        ours = self.table().read_snapshot()
        assert _rows(ours) == sorted(rows.values()), f"{what}: ours != model"
        assert_same_rows(ours, rs_snapshot(self.path), f"{what}: hudi-rs")

    def check_every_instant(self, what: str) -> None:
        table = self.table()
        for instant, rows in self.history.items():
            assert _rows(table.read_snapshot(as_of=instant)) == sorted(rows.values()), f"{what}: as of {instant}"
            assert _rows(rs_snapshot(self.path, as_of=instant)) == sorted(rows.values()), f"{what}: hudi-rs {instant}"


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLS) for r in t.select(COLS).to_pylist())


def _hoodie_names(path: Path) -> list[str]:
    folder = path / ".hoodie" / "timeline" if (path / ".hoodie" / "timeline").is_dir() else path / ".hoodie"
    return sorted(p.name for p in folder.iterdir() if p.is_file())


CASES = [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6), ("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 9)]


@pytest.mark.parametrize("table_type,version", CASES)
def test_savepoint_clean_archive_restore(tmp_path, table_type, version):
    m = Model(tmp_path / "t", table_type, version)
    first = m.write(list(range(9)), 1)
    kept = m.write([0, 1, 2], 2)
    at_savepoint = copy.deepcopy(m.rows)
    sp = m.table().savepoint(kept, user="me", comment="before the backfill")
    assert (sp.instant_time, sp.savepointed_by, sp.comments) == (kept, "me", "before the backfill")
    assert sum(len(v) for v in sp.files.values()) >= 3
    assert [s.instant_time for s in m.table().savepoints()] == [kept]
    for ts in range(3, 9):
        m.write([ts % 9, (ts + 3) % 9], ts)
    if table_type == "MERGE_ON_READ":
        m.table().compact()
    m.write([4, 5], 9)  # after the compaction too
    table = m.table()
    assert table.clean(options={"hoodie.cleaner.commits.retained": "1"}) is not None
    saved = {p: set(names) for p, names in sp.files.items()}
    for partition, names in saved.items():
        assert names <= {p.name for p in (m.path / partition).iterdir()}, "cleaning kept the savepointed files"
    m.table().archive(options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                "hoodie.cleaner.commits.retained": "1"})
    timeline = m.table().timeline
    assert timeline.completed_commits().first().timestamp <= kept, "archival stopped before the savepoint"
    m.check("before the restore", m.rows)

    result = m.table().restore(kept)
    assert result.restored_to == kept and result.rolled_back and not result.resumed
    assert all(i.timestamp > kept for i in result.rolled_back)
    m.check("after the restore", at_savepoint)
    table = m.table()
    assert [i.timestamp for i in table.timeline.write_timeline() if i.timestamp > kept] == []
    assert not table.timeline.filter_by([Action.ROLLBACK]).pending()
    restore = table.timeline.filter_by([Action.RESTORE], [State.COMPLETED]).last()
    meta = read_avro_metadata(table.timeline.read_content(restore), "HoodieRestoreMetadata")
    assert sorted(meta["instantsToRollback"]) == sorted(i.timestamp for i in result.rolled_back)
    assert set(meta["hoodieRestoreMetadata"]) == set(meta["instantsToRollback"])
    plan = read_avro_metadata(table.timeline.read_content(restore.with_state(State.REQUESTED)), "HoodieRestorePlan")
    assert plan["savepointToRestoreTimestamp"] == kept
    # Reads of instants before the restore point stay right; the next write comes after the restore.
    start = table.timeline.completed_commits().first().timestamp  # archival may have taken the first commit
    m.history = {i: rows for i, rows in m.history.items() if start <= i <= kept}
    assert kept in m.history and first <= start
    m.rows = copy.deepcopy(at_savepoint)
    m.check_every_instant("after the restore")
    after = m.write([7], 20)
    assert after > result.restore_instant
    m.check("a write after the restore", m.rows)
    begin = m.table().timeline.completion_times().get(kept, kept)  # layout 2: ranges of completion times
    assert m.table().read_incremental(begin).column("id").to_pylist() == ["k07"]


def test_restore_to_a_commit_without_a_savepoint_and_the_refusals(tmp_path):
    m = Model(tmp_path / "t", "COPY_ON_WRITE", 6)
    a = m.write(list(range(6)), 1)
    b = m.write([1], 2)
    at_b = copy.deepcopy(m.rows)
    c = m.write([2], 3)
    table = m.table()
    with pytest.raises(TableServiceError, match="not a completed commit on the active timeline"):
        table.savepoint("20200101000000000")
    table.savepoint(b)
    with pytest.raises(TableServiceError, match="already savepointed"):
        table.savepoint(b)
    with pytest.raises(TableServiceError, match=f"cannot restore to 20200101000000000: it is older than the active timeline.*savepoints: {b}"):
        table.restore("20200101000000000")
    m.write([3], 4)
    m.write([4], 5)
    assert table.clean(options={"hoodie.cleaner.commits.retained": "1"}) is not None
    with pytest.raises(TableServiceError, match=f"cannot restore to {a}: cleaning.*savepoints: {b}"):
        table.restore(a)
    with pytest.raises(TableServiceError, match=f"cannot savepoint {c}: cleaning"):
        table.savepoint(c)
    assert len(list((m.path / ".hoodie").glob("*.restore*"))) == 0, "nothing written by a refusal"
    table.delete_savepoint(b)
    assert table.savepoints() == []
    with pytest.raises(TableServiceError, match=f"no savepoint {b} to delete"):
        table.delete_savepoint(b)
    m.rows = at_b
    with pytest.raises(TableServiceError, match=f"cannot restore to {b}"):
        table.restore(b)  # its savepoint is gone and the clean passed it


def test_restore_rolls_back_a_pending_compaction_and_a_completed_one(tmp_path):
    from hudi_engine.table_services.compaction import schedule_compaction

    m = Model(tmp_path / "t", "MERGE_ON_READ", 9)
    m.write(list(range(6)), 1)
    kept = m.write([1, 2], 2)
    at_kept = copy.deepcopy(m.rows)
    m.table().savepoint(kept)
    m.write([3, 4], 3)
    m.table().compact()
    m.write([0, 5], 4)
    planned = schedule_compaction(m.table().location)
    assert planned is not None
    result = m.table().restore(kept)
    actions = [str(i.action) for i in result.rolled_back]
    assert actions[0] == "compaction" and "commit" in actions and actions.count("deltacommit") == 2, actions
    m.check("after the restore", at_kept)
    table = m.table()
    assert not table.timeline.pending_compactions() and not list((m.path / ".hoodie" / ".temp").glob("*"))


def test_restore_rolls_back_pending_instants_and_a_crashed_restore_is_finished(tmp_path, monkeypatch):
    from hudi_engine.table_services import restore as restore_module
    from hudi_engine.write.commit import start_commit

    m = Model(tmp_path / "t", "MERGE_ON_READ", 6)
    m.write(list(range(6)), 1)
    kept = m.write([1, 2], 2)
    at_kept = copy.deepcopy(m.rows)
    m.table().savepoint(kept)
    m.write([3], 3)
    m.write([4], 4)
    table = m.table()
    start_commit(table.location, table.config, "UPSERT")  # another writer's write, inflight
    calls = {"n": 0}
    real = restore_module.rollback_for_restore

    def crash_on_second(timeline, target):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("killed")
        return real(timeline, target)

    monkeypatch.setattr(restore_module, "rollback_for_restore", crash_on_second)
    with pytest.raises(OSError, match="killed"):
        m.table().restore(kept)
    monkeypatch.setattr(restore_module, "rollback_for_restore", real)
    with pytest.raises(UnsupportedTableFeatureError, match="pending restore"):
        m.write([5], 5)
    with pytest.raises(TableServiceError, match=f"did not finish; finish it first \\(HudiTable.restore\\('{kept}'\\)\\)"):
        m.table().restore(next(iter(m.history)))
    result = m.table().restore(kept)
    assert result.resumed
    assert [i for i in m.table().timeline.write_timeline() if i.timestamp > kept] == [], "the inflight write too"
    m.check("after the finished restore", at_kept)
    names = _hoodie_names(m.path)
    assert not [n for n in names if n.endswith((".rollback.inflight", ".rollback.requested"))]
    assert len([n for n in names if n.endswith(".restore")]) == 1


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_restore_without_savepoint_after_a_clean_of_file_versions(tmp_path, table_type):
    """KEEP_LATEST_FILE_VERSIONS records no earliest commit: the deleted versions themselves refuse the restore."""
    m = Model(tmp_path / "t", table_type, 6)
    a = m.write(list(range(3)), 1)
    for ts in range(2, 5):
        m.write([0, 1, 2], ts)
    if table_type == "MERGE_ON_READ":
        m.table().compact()
        m.write([0, 1, 2], 5)
        m.table().compact()
    m.table().clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                             "hoodie.cleaner.fileversions.retained": "1"})
    with pytest.raises(TableServiceError, match=f"cannot restore to {a}: .*was cleaned.*Can be restored: savepoints: none"):
        m.table().restore(a)


@pytest.mark.parametrize("version", [6, 9])
def test_a_savepoint_of_an_older_commit_restores_every_commit_after_that_commit(tmp_path, version):
    """The savepoint shares its commit's requested time but completes after later commits did: on version 9 the
    restore still takes the commits completed after the savepointed *commit*, not after the savepoint."""
    m = Model(tmp_path / "t", "COPY_ON_WRITE", version)
    first = m.write([0, 1, 2], 1)
    at_first = copy.deepcopy(m.rows)
    second = m.write([0, 3], 2)
    m.table().savepoint(first)
    third = m.write([1, 4], 3)
    result = m.table().restore(first)
    assert sorted(i.timestamp for i in result.rolled_back) == [second, third]
    m.check("after the restore", at_first)
    if version == 9:  # the savepoint completed after the second commit; the commit's own completion time is kept
        timeline = m.table().timeline
        commit = next(i for i in timeline.completed_commits() if i.timestamp == first)
        assert timeline.completion_times()[first] == commit.completion_time


# ---- the metadata table through a restore (issue 37) --------------------------------------------------------------
def _mdt_opts(table_type: str, version: int, **extra: str) -> dict:
    return opts(table_type, version, **{"hoodie.metadata.enable": "true", "hoodie.index.type": "RECORD_INDEX",
                                        "hoodie.metadata.record.index.enable": "true", **extra})


def _rows_of(path: Path, through_metadata: bool) -> list[tuple]:
    table = HudiTable.load(str(path))
    if through_metadata:
        assert table._metadata_table() is not None, "readers list files from the metadata table"
    else:
        table._metadata_table_read = False  # list storage
    return _rows(table.read_snapshot())


def _assert_metadata_table_right(path: Path) -> None:
    from metadata_tables import assert_index_matches, mdt_listing, storage_listing

    assert mdt_listing(path) == storage_listing(path), "the files partition lists exactly the files on storage"
    assert _rows_of(path, True) == _rows_of(path, False)
    assert assert_index_matches(path) == len(_rows_of(path, False))


@pytest.mark.parametrize("table_type,version", [*CASES, ("MERGE_ON_READ", 8)])
def test_a_restore_keeps_the_metadata_table_and_its_record_index(tmp_path, table_type, version):
    """The metadata table restored with the data table, as Hudi does: a restore on its own timeline to the same
    instant, then a delta commit listing what the data table's cleans after it deleted; the record index as of the
    instant; readers list files from it, and the next write extends it."""
    import warnings

    from hudi_engine.errors import MetadataTableDisabled
    from hudi_engine.location import TableLocation
    from hudi_engine.metadata.table import metadata_location
    from hudi_engine.timeline import Timeline

    m = Model(tmp_path / "t", table_type, version)
    # few writes: no metadata-table compaction after the savepoint (the next test's case; a data compaction or clean
    # compacts it at the default 10 delta commits)
    no_compaction = {"hoodie.metadata.compact.max.delta.commits": "50"}
    # column and partition stats on COW (on MOR their initializations and the compaction would take the metadata
    # table to a compaction after the savepoint: a clean or compaction runs its services at the default 10)
    stats = {"hoodie.metadata.index.column.stats.enable": "true"} \
        if version >= 8 and table_type == "COPY_ON_WRITE" else {}  # partition stats come with them
    m.options = _mdt_opts(table_type, version, **no_compaction, **stats)
    m.write(list(range(9)), 1)
    kept = m.write([0, 1, 2, 20], 2)
    at_savepoint = copy.deepcopy(m.rows)
    m.table().savepoint(kept)
    for ts in range(3, 5):
        m.write([ts % 9, ts + 30], ts)
    if table_type == "MERGE_ON_READ":
        m.table().compact(options=no_compaction)
    m.write([5, 40], 7)
    assert m.table().clean(options={"hoodie.cleaner.commits.retained": "1", **no_compaction}) is not None
    m.write([6, 41], 8)
    partitions = m.table().config.metadata_partitions
    assert "record_index" in partitions
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetadataTableDisabled)
        result = m.table().restore(kept)
    m.rows = copy.deepcopy(at_savepoint)
    m.check("after the restore", m.rows)
    assert m.table().config.metadata_partitions == partitions
    mdt = Timeline.load(metadata_location(TableLocation.of(str(m.path))))
    restores = mdt.filter_by([Action.RESTORE]).instants
    assert [i.state for i in restores] == [State.COMPLETED] and restores[0].timestamp > result.restore_instant
    sync = mdt.filter_by([Action.DELTA_COMMIT]).last()
    assert sync is not None and sync.is_completed and sync.timestamp > restores[0].timestamp
    assert len(sync.timestamp) == (20 if version == 6 else 17)  # version 6: the restore suffix 003
    assert sync.timestamp.endswith("003") or version != 6
    assert not [i for i in mdt.instants if not i.is_completed]
    assert [i.timestamp for i in mdt.write_timeline() if kept < i.timestamp < restores[0].timestamp] == []
    _assert_metadata_table_right(m.path)
    m.write([7, 41], 20)
    m.check("a write after the restore", m.rows)
    _assert_metadata_table_right(m.path)
    if stats:  # the column and partition stats as of the instant, then extended
        from metadata_tables import assert_stats_match_files

        assert {"column_stats", "partition_stats"} <= set(partitions)
        assert assert_stats_match_files(m.path) > 0


def test_a_crashed_restore_finishes_the_metadata_tables_restore(tmp_path, monkeypatch):
    """A restore killed after the metadata table's own restore, before its sync delta commit: restoring to the same
    instant again finishes both."""
    from hudi_engine.metadata.writer import MetadataWriter

    m = Model(tmp_path / "t", "MERGE_ON_READ", 9)
    m.options = _mdt_opts("MERGE_ON_READ", 9)
    m.write(list(range(6)), 1)
    kept = m.write([1, 2], 2)
    at_savepoint = copy.deepcopy(m.rows)
    m.write([3, 30], 3)
    m.write([4], 4)

    def killed(self, *args):
        raise KeyboardInterrupt("killed")
    monkeypatch.setattr(MetadataWriter, "record_restore", killed)
    with pytest.raises(KeyboardInterrupt):
        m.table().restore(kept)
    monkeypatch.undo()
    assert m.table().timeline.filter_by([Action.RESTORE]).pending()
    result = m.table().restore(kept)
    assert result.resumed
    m.check("after the finished restore", at_savepoint)
    _assert_metadata_table_right(m.path)


def test_a_restore_to_before_the_metadata_tables_oldest_compaction_deletes_it(tmp_path):
    """As Hudi's restoreToSavepoint: an instant at or before the metadata table's oldest compaction cannot be
    restored in it (its older file slices are gone), so the metadata table is deleted before the restore begins
    (the next write with hoodie.metadata.enable=true builds it again)."""
    from hudi_engine.errors import MetadataTableDisabled

    m = Model(tmp_path / "t", "COPY_ON_WRITE", 9)
    m.options = _mdt_opts("COPY_ON_WRITE", 9, **{"hoodie.metadata.compact.max.delta.commits": "2"})
    kept = m.write(list(range(6)), 1)
    at_savepoint = copy.deepcopy(m.rows)
    for ts in range(2, 6):
        m.write([ts], ts)
    assert list((m.path / ".hoodie" / "metadata" / ".hoodie" / "timeline").glob("*.commit")), "it was compacted"
    with pytest.warns(MetadataTableDisabled, match="oldest compaction"):
        m.table().restore(kept)
    assert not (m.path / ".hoodie" / "metadata").exists() and m.table().config.metadata_partitions == []
    m.check("after the restore", at_savepoint)
    m.write([7], 7)  # builds it again
    _assert_metadata_table_right(m.path)


def test_a_restore_the_metadata_table_cannot_follow_is_refused_before_anything_is_written(tmp_path):
    """Hudi's metadata restore needs a slice of the files file group based at or before the instant ("Can't restore
    to ... since there is no base file in MDT lesser than the commit to restore to"): without one (its cleaning
    removed it) the restore is refused, naming the file group, before anything is written."""
    import shutil

    m = Model(tmp_path / "t", "COPY_ON_WRITE", 9)
    m.options = _mdt_opts("COPY_ON_WRITE", 9, **{"hoodie.metadata.compact.max.delta.commits": "2"})
    for ts in range(1, 4):
        m.write([ts], ts)
    kept = m.write([9], 4)  # after the first compaction
    for ts in range(5, 9):
        m.write([ts], ts)
    files = m.path / ".hoodie" / "metadata" / "files"
    bases = sorted(p.name.rsplit("_", 1)[-1].split(".")[0] for p in files.glob("*.hfile"))
    assert bases[0] < kept < bases[-1], bases
    for p in files.iterdir():  # as the metadata table's cleaning leaves it: only the latest slice
        if p.is_file() and not p.name.startswith(".hoodie") and bases[-1] not in p.name:
            p.unlink()
    before = (_hoodie_names(m.path), sorted(str(p) for p in (m.path / ".hoodie" / "metadata").rglob("*")))
    with pytest.raises(TableServiceError, match="files file group files-0000-0 has no file slice based at or before"):
        m.table().restore(kept)
    assert (_hoodie_names(m.path), sorted(str(p) for p in (m.path / ".hoodie" / "metadata").rglob("*"))) == before
    shutil.rmtree(m.path)


def test_a_restore_to_before_the_metadata_tables_timeline_deletes_it(tmp_path):
    """As Hudi's restoreToSavepoint: an instant older than the metadata table's timeline (built after it: version 6
    names its initialization `<latest>010`) is not in it, so the metadata table is deleted before the restore."""
    from hudi_engine.errors import MetadataTableDisabled

    m = Model(tmp_path / "t", "COPY_ON_WRITE", 6)
    kept = m.write(list(range(6)), 1)  # no metadata table yet
    at_savepoint = copy.deepcopy(m.rows)
    m.write([1], 2)
    m.options = _mdt_opts("COPY_ON_WRITE", 6)
    m.write([2], 3)  # builds it, after `kept`
    assert m.table().config.metadata_partitions
    with pytest.warns(MetadataTableDisabled, match="older than the metadata table's timeline"):
        m.table().restore(kept)
    assert not (m.path / ".hoodie" / "metadata").exists()
    m.check("after the restore", at_savepoint)
