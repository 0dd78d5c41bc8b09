"""The engine's table services and rollbacks recorded in a files-only metadata table (hudi_engine/metadata/writer.py),
without Java: after each one the metadata table is kept and lists what storage holds. Tables: Java's feature tables
cut down to the files partition, and Hudi 1.x conformance tables. tests/java_hudi/test_mdt_files.py has Java read,
validate and write after them."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from java_tables import unzip_feature_table
from metadata_tables import (
    MDT_TABLES,
    feature_rows,
    files_only,
    files_only_table,
    mdt_listing,
    storage_listing,
    write_rows,
)

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import MetadataTableDisabled, MetadataTableError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import metadata_location
from hudi_engine.metadata.writer import ROLLBACK_SUFFIX, MetadataWriter, keep_through_rollback
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.archival import instants_to_archive
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write.rollback import rollback_failed_writes

CLEAN_ONE = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
# Hudi 1.x conformance tables with a metadata table (MOR with log files, a COW with an overwrite).
CONFORMANCE = ["mor_avrolog_v9_txns_complex_meta", "mor_avrolog_v8_trips_8i3u1d", "cow_v9_txns_simple_overwrite"]


def _kept(table: Path) -> None:
    """The metadata table is still there and lists what storage holds."""
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == ["files"]
    assert mdt_listing(table) == storage_listing(table)


def _killed_after(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """`MetadataWriter.<method>` does its work, then the process "dies" (RuntimeError "killed"); the instants it
    recorded."""
    original = getattr(MetadataWriter, method)
    seen: list[str] = []

    def killed(self, instant_time, *args):
        original(self, instant_time, *args)
        seen.append(instant_time)
        raise RuntimeError("killed")

    monkeypatch.setattr(MetadataWriter, method, killed)
    return seen


def _conformance(conformance_dir: Path, name: str, tmp_path: Path) -> Path:
    """A fresh copy of a Hudi 1.x conformance table, its metadata table cut down to `files`."""
    with zipfile.ZipFile(conformance_dir / "v8_v9" / f"{name}.zip") as z:
        z.extractall(tmp_path)
    (table,) = [p for p in tmp_path.iterdir() if p.is_dir() and p.name != "__MACOSX"]
    return files_only(table)


def _mdt(table: Path) -> Timeline:
    return Timeline.load(metadata_location(TableLocation.of(str(table))))


def _at(timeline: Timeline, instant_time: str) -> list[str]:
    return [f"{i.action.value}:{i.state.name}" for i in timeline.instants if i.timestamp == instant_time]


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v6_hudi1", "mdt_cow_v9"])
@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_services_and_rollback_keep_it(name: str, mor: bool, tmp_path: Path) -> None:
    table = files_only_table(name, tmp_path, mor=mor)
    write_rows(table, feature_rows([1, 2, 51], "e1"))
    write_rows(table, feature_rows([1, 3], "e2"))
    _kept(table)
    if mor:
        compacted = HudiTable.load(str(table)).compact()
        assert compacted is not None
        assert _at(_mdt(table), compacted.instant_time) == ["deltacommit:COMPLETED"]
        _kept(table)
    cleaned = HudiTable.load(str(table)).clean(options=CLEAN_ONE)
    assert cleaned is not None and cleaned.deleted
    assert _at(_mdt(table), cleaned.instant_time) == ["deltacommit:COMPLETED"]
    _kept(table)
    rows = HudiTable.load(str(table)).read_snapshot().sort_by("id")
    last = write_rows(table, feature_rows([1, 5], "e3"))
    assert _at(_mdt(table), last) == ["deltacommit:COMPLETED"]
    rollback = HudiTable.load(str(table)).rollback()
    assert rollback.rolled_back.timestamp == last
    mdt = _mdt(table)
    assert _at(mdt, last) == []  # its delta commit rolled back on the metadata table
    r = rollback.rollback_instant
    if TableConfig.load(TableLocation.of(str(table))).version == 6:  # Hudi 0.15: a delta commit at R, then R006
        assert _at(mdt, r) == ["deltacommit:COMPLETED"] and _at(mdt, r + ROLLBACK_SUFFIX) == ["rollback:COMPLETED"]
    else:  # Hudi 1.x: the metadata table's rollback at R
        assert _at(mdt, r) == ["rollback:COMPLETED"]
    _kept(table)
    assert HudiTable.load(str(table)).read_snapshot().sort_by("id") == rows
    write_rows(table, feature_rows([7], "e4"))  # and the next commit is recorded after it
    _kept(table)


@pytest.mark.parametrize("name", CONFORMANCE)
def test_conformance_tables_keep_it_through_services(conformance_dir: Path, name: str, tmp_path: Path) -> None:
    table = _conformance(conformance_dir, name, tmp_path)
    _kept(table)
    HudiTable.load(str(table)).rollback()  # the latest commit
    _kept(table)
    loaded = HudiTable.load(str(table))
    if loaded.config.table_type == "MERGE_ON_READ" and loaded.compact() is not None:
        _kept(table)
    HudiTable.load(str(table)).clean(options=CLEAN_ONE)  # the compacted MOR slices; the COW table has nothing left
    _kept(table)


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_a_failed_commit_is_rolled_back_in_it(name: str, tmp_path: Path, monkeypatch) -> None:
    """Killed between the metadata delta commit and the data commit: the listing is the one before, and the next
    writer's rollback rolls the metadata delta commit back too."""
    table = files_only_table(name, tmp_path, mor=False)
    rows = HudiTable.load(str(table)).read_snapshot().sort_by("id")
    seen = _killed_after(monkeypatch, "record_commit")
    with pytest.raises(RuntimeError, match="killed"):
        write_rows(table, feature_rows([1, 51], "e1"))
    monkeypatch.undo()
    _kept(table)
    assert _at(_mdt(table), seen[0]) == []  # the writer's own rollback rolled it back
    assert HudiTable.load(str(table)).read_snapshot().sort_by("id") == rows


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_a_clean_killed_after_its_delta_commit_is_resumed(name: str, tmp_path: Path, monkeypatch) -> None:
    table = files_only_table(name, tmp_path, mor=False)
    write_rows(table, feature_rows([1, 2], "e1"))
    _killed_after(monkeypatch, "record_clean")
    with pytest.raises(RuntimeError, match="killed"):
        HudiTable.load(str(table)).clean(options=CLEAN_ONE)
    monkeypatch.undo()
    location = TableLocation.of(str(table))
    (pending,) = Timeline.load(location).filter_by([Action.CLEAN]).pending()
    write_rows(table, feature_rows([2], "e2"))  # the next write finishes the clean first, its delta commit again
    assert Timeline.load(location).filter_by([Action.CLEAN]).completed().instants
    assert _at(_mdt(table), pending.timestamp) == ["deltacommit:COMPLETED"]
    _kept(table)


def test_a_compaction_killed_after_its_delta_commit_is_run_again(tmp_path: Path, monkeypatch) -> None:
    table = files_only_table("mdt_cow_v6", tmp_path, mor=True)
    write_rows(table, feature_rows([1, 2], "e1"))
    _killed_after(monkeypatch, "record_commit")
    with pytest.raises(RuntimeError, match="killed"):
        HudiTable.load(str(table)).compact()
    monkeypatch.undo()
    done = HudiTable.load(str(table)).compact()  # the interrupted one is run again
    assert done is not None
    _kept(table)


def test_archival_stops_at_the_metadata_tables_compaction(tmp_path: Path) -> None:
    """Nothing is archived before the metadata table's first compaction (Java's feature table has none after its
    initialization), and the metadata table stays."""
    table = files_only_table("mdt_cow_v6", tmp_path, mor=False)
    few = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    for n in range(4):
        write_rows(table, feature_rows([n], f"e{n}"))
    location = TableLocation.of(str(table))
    loaded = HudiTable.load(str(table))
    assert loaded.archive(options=few) is None
    _kept(table)
    assert not _mdt(table).filter_by([Action.COMMIT]).completed().instants
    wc = WriteConfig.from_options(few)  # without the metadata table, archival would have archived
    assert instants_to_archive(Timeline.load(location), wc.archival, merge_on_read=False, max_delta_commits=5)


def test_what_cannot_be_kept_is_refused_by_name(tmp_path: Path) -> None:
    full, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v6"], tmp_path)  # files, column stats, bloom, record index
    files = sorted(full.rglob("*"))
    with pytest.raises(MetadataTableError, match=r"clean: .*\['bloom_filters', 'column_stats'\].*version 6"):
        HudiTable.load(str(full)).clean(options=CLEAN_ONE)
    assert sorted(full.rglob("*")) == files  # nothing written, nothing deleted


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_another_writers_failed_write_is_rolled_back_in_it(name: str, tmp_path: Path) -> None:
    """A writer died after its metadata delta commit (its data commit undone here): the rollback of failed writes
    keeps the metadata table when given the metadata update, and disables it, saying why, without."""
    for keep in (True, False):
        table = files_only_table(name, tmp_path / str(keep), mor=True)
        rows = HudiTable.load(str(table)).read_snapshot().sort_by("id")
        t = write_rows(table, feature_rows([1, 51], "dead"))
        location = TableLocation.of(str(table))
        timeline = Timeline.load(location)
        (commit,) = [i for i in timeline.instants if i.timestamp == t and i.is_completed]
        Path(timeline.path_of(commit)).unlink()
        if keep:
            (result,) = rollback_failed_writes(location, metadata=keep_through_rollback(location))
            assert result.rolled_back.timestamp == t and _at(_mdt(table), t) == []
            _kept(table)
        else:
            with pytest.warns(MetadataTableDisabled, match=f"the rollback of .*{t}.* does not record itself"):
                rollback_failed_writes(location)
            assert not (table / ".hoodie" / "metadata").exists()
        assert HudiTable.load(str(table)).read_snapshot().sort_by("id") == rows


@pytest.mark.parametrize(("name", "bounded"), [("mor_avrolog_v9_txns_complex_meta", True),
                                               ("mor_avrolog_v8_trips_8i3u1d", False)])
def test_archival_keeps_what_the_metadata_table_has_not_compacted(conformance_dir: Path, name: str, bounded: bool,
                                                                   tmp_path: Path) -> None:
    """Archival stops before the metadata table's latest compaction (by completion time on 1.x: the v9 table's
    last delta commit before it completed after it), and the metadata table stays."""
    table = _conformance(conformance_dir, name, tmp_path)
    compacted = _mdt(table).filter_by([Action.COMMIT]).completed().last()
    assert compacted is not None  # Java compacted this metadata table
    few = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}
    due = instants_to_archive(Timeline.load(TableLocation.of(str(table))), WriteConfig.from_options(few).archival,
                              merge_on_read=True, max_delta_commits=5)
    result = HudiTable.load(str(table)).archive(options=few)
    assert result is not None and result.archived
    assert all(i.timestamp < compacted.timestamp for i in result.archived)
    assert (len(result.archived) < len(due)) is bounded  # without the metadata table: further on the v9 table
    _kept(table)


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_a_rollback_killed_after_its_metadata_update_is_finished(name: str, tmp_path: Path, monkeypatch) -> None:
    """Killed after the metadata table recorded the rollback, before the rollback completed: the listing is right
    meanwhile, and the next writer finishes the rollback without recording it twice."""
    table = files_only_table(name, tmp_path, mor=False)
    rows = HudiTable.load(str(table)).read_snapshot().sort_by("id")
    t = write_rows(table, feature_rows([1, 51], "undone"))
    _killed_after(monkeypatch, "record_rollback")
    with pytest.raises(RuntimeError, match="killed"):
        HudiTable.load(str(table)).rollback()
    monkeypatch.undo()
    location = TableLocation.of(str(table))
    (pending,) = Timeline.load(location).filter_by([Action.ROLLBACK]).pending()
    before = [str(i) for i in _mdt(table).instants]
    assert _at(_mdt(table), t) == []
    write_rows(table, feature_rows([999], "e2"))  # the writer finishes the interrupted rollback first
    assert Timeline.load(location).filter_by([Action.ROLLBACK]).completed().instants
    assert [str(i) for i in _mdt(table).instants if i.timestamp <= pending.timestamp + ROLLBACK_SUFFIX] == before
    _kept(table)
    assert HudiTable.load(str(table)).read_snapshot().num_rows == rows.num_rows + 1


def test_a_rollback_past_the_metadata_tables_compaction_disables_it(tmp_path: Path) -> None:
    """Java compacted the metadata table after F's delta commit (Hudi 0.15 names that compaction `<F>001`): rolling
    F's log file back would leave F's files in the compacted base file, so the rollback disables the metadata table
    first (Hudi refuses such a rollback)."""
    table = files_only_table("mdt_cow_v6", tmp_path)
    t = write_rows(table, feature_rows([1, 51], "e1"))
    mdt = _mdt(table)
    mdt.complete(mdt.transition_to_inflight(mdt.create_requested(Instant(t + "001", Action.COMPACTION,
                                                                         State.REQUESTED))),
                 CommitMetadata(compacted=True, operation_type="COMPACT"))
    with pytest.warns(MetadataTableDisabled, match=f"compaction {t}001 holds its delta commit"):
        HudiTable.load(str(table)).rollback()
    assert not (table / ".hoodie" / "metadata").exists()


@pytest.mark.parametrize("version", [6, 9])
def test_the_metadata_tables_own_instants_are_archived(tmp_path: Path, version: int) -> None:
    """Archival also archives the metadata table's own instants (into its own archive log files or LSM history):
    before its latest compaction and before the data table's first active instant, so its active timeline stays
    bounded while every read and the listing stay right."""
    from hudi_engine.write_pipeline import write_table
    path = tmp_path / "t"
    few = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
           "hoodie.metadata.compact.max.delta.commits": "2"}
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.write.table.version": str(version), "hoodie.metadata.enable": "true", **few}
    for n in range(12):
        write_table(feature_rows([n, n + 100], f"e{n}"), str(path), options)
    mdt = _mdt(path)
    location = metadata_location(TableLocation.of(str(path)))
    history = Path(location.base_path) / ".hoodie" / ("archived" if version == 6 else "timeline/history")
    archived = [f for f in history.iterdir() if not f.name.startswith(".hoodie")] if history.exists() else []
    assert archived, "the metadata table's instants were archived"
    assert len(mdt.instants) < 12  # without archival: a delta commit per write, and its compactions: bounded
    data_first = Timeline.load(TableLocation.of(str(path))).instants[0].timestamp
    assert min(i.timestamp for i in mdt.instants)[:17] >= data_first[:17]  # the initialization is archived too
    _kept(path)
    assert sorted(HudiTable.load(str(path)).read_snapshot().column("id").to_pylist()) == sorted(
        [n for n in range(12)] + [n + 100 for n in range(12)])
