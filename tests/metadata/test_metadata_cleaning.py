"""The metadata table's own cleaning (hudi_engine/metadata/cleaning.py), without Java: once enough delta commits and
compactions passed, the old slices of the `files` file group are deleted by a clean on the metadata table's
timeline at Hudi's instant, and the listing still equals storage."""
from __future__ import annotations

from pathlib import Path

import pytest
from metadata_tables import feature_rows, files_only_table, mdt_listing, storage_listing, write_rows

from hudi_engine.location import TableLocation
from hudi_engine.metadata import cleaning
from hudi_engine.metadata.table import MetadataTable, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, State

OFTEN = {"hoodie.metadata.compact.max.delta.commits": "3"}  # 3 instants after it: cleaning may run


def _mdt(table: Path) -> Timeline:
    return Timeline.load(metadata_location(TableLocation.of(str(table))))


def _base_files(table: Path) -> list[str]:
    return sorted(p.name for p in (table / ".hoodie" / "metadata" / "files").iterdir() if p.name.endswith(".hfile"))


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_old_slices_of_the_files_file_group_are_cleaned(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cleaning, "COMMITS_RETAINED", 4)  # Hudi's 20, fewer here to keep the test short
    table = files_only_table(name, tmp_path, mor=True)
    java_base = _base_files(table)[0]
    for n in range(12):
        write_rows(table, feature_rows([n, 50 + n], f"e{n}"), **OFTEN, **{"hoodie.cleaner.commits.retained": "1"})
        assert mdt_listing(table) == storage_listing(table), n
    mdt = _mdt(table)
    cleans = mdt.filter_by([Action.CLEAN], [State.COMPLETED]).instants
    assert cleans, [str(i) for i in mdt.instants]
    if name.endswith("v6"):  # the latest delta commit's time + 002
        deltas = [i.timestamp for i in mdt.instants if i.action is Action.DELTA_COMMIT and i.timestamp < cleans[0].timestamp]
        assert cleans[0].timestamp == max(deltas) + cleaning.CLEAN_SUFFIX
    assert java_base not in _base_files(table)  # Java's initial slice is gone
    meta = mdt.avro_metadata(cleans[-1]) or {}
    deleted = meta["partitionMetadata"]["files"]["successDeleteFiles"]
    assert deleted and not set(deleted) & {p.name for p in (table / ".hoodie" / "metadata" / "files").iterdir()}
    compactions = mdt.filter_by([Action.COMMIT], [State.COMPLETED]).instants
    assert len(_base_files(table)) < len(compactions) + 1  # older compactions' base files went too


def test_no_clean_right_after_a_compaction(tmp_path: Path) -> None:
    """Fewer than 3 instants after the latest compaction: nothing is cleaned (readers of the old slice finish)."""
    table = files_only_table("mdt_cow_v6", tmp_path)
    location = TableLocation.of(str(table))
    write_rows(table, feature_rows([1], "e1"), **{"hoodie.metadata.compact.max.delta.commits": "1"})
    config = TableConfig.load(location)
    mdt = MetadataTable.load(location, config, Timeline.load(location))
    assert mdt.timeline.filter_by([Action.COMMIT], [State.COMPLETED]).instants
    assert cleaning.plan(mdt, 1) is None
