"""The column_stats and partition_stats partitions of a Java-built metadata table (hudi_engine/metadata/
stats_index.py), kept through the engine's writes and services, without Java: after each action the metadata table
is kept, lists what storage holds, and holds for every file of the latest slices the stats its footer or records
give, as Hudi computes them, and partition stats that merge them. tests/java_hudi/test_mdt_stats.py has Java read
with data skipping and write after them."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from java_tables import unzip_feature_table
from metadata_tables import (
    MDT_TABLES,
    WRITE_OPTIONS,
    assert_stats_match_files,
    feature_rows,
    mdt_listing,
    stats_only,
    storage_listing,
    write_rows,
)

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import COLUMN_STATS_PARTITION
from hudi_engine.metadata.stats_index import default_columns
from hudi_engine.metadata.table import metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action

CLEAN_ONE = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
COMPACT_OFTEN = {"hoodie.metadata.compact.max.delta.commits": "2"}


def stats_table(tmp_path: Path, *, mor: bool) -> Path:
    """Java 1.2's version-9 feature table with files, column_stats and partition_stats (Spark's defaults); with
    `mor`, made MERGE_ON_READ (the engine's updates then go to log files)."""
    table, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v9"], tmp_path)
    stats_only(table)
    if mor:
        location = TableLocation.of(str(table))
        TableConfig.load(location).with_props({"hoodie.table.type": "MERGE_ON_READ"}).save(location)
    return table


def _kept(table: Path) -> int:
    config = TableConfig.load(TableLocation.of(str(table)))
    assert config.metadata_partitions == ["column_stats", "files", "partition_stats"]
    assert mdt_listing(table) == storage_listing(table)
    return assert_stats_match_files(table)


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_kept_through_writes_and_services(tmp_path: Path, mor: bool) -> None:
    table = stats_table(tmp_path, mor=mor)
    assert _kept(table) > 0  # Java's own stats hold
    write_rows(table, feature_rows([1, 2, 51], "e1"), **COMPACT_OFTEN)  # updates and inserts
    _kept(table)
    write_rows(table, feature_rows([1, 3], "e2"), **COMPACT_OFTEN)
    _kept(table)
    write_rows(table, feature_rows([2], "gone"), "delete", **COMPACT_OFTEN)  # a delete-only write
    _kept(table)
    if mor:
        assert HudiTable.load(str(table)).compact() is not None
        _kept(table)
    cleaned = HudiTable.load(str(table)).clean(options=CLEAN_ONE)
    assert cleaned is not None and cleaned.deleted
    _kept(table)
    clustered = HudiTable.load(str(table)).cluster(options={**WRITE_OPTIONS, "hoodie.clustering.plan.strategy."
                                                             "sort.columns": "id"})
    assert clustered is not None
    _kept(table)
    last = write_rows(table, feature_rows([4, 60], "e3"), **COMPACT_OFTEN)
    _kept(table)
    rolled = HudiTable.load(str(table)).rollback()
    assert rolled.rolled_back.timestamp == last
    _kept(table)
    folder = Path(metadata_location(TableLocation.of(str(table))).base_path)
    compacted = [i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(table)))).instants
                 if i.action is Action.COMMIT and i.is_completed]
    assert compacted, "the metadata table compacted"
    # its compactions rewrote the stats file groups' base files too
    assert {f.parent.name for f in folder.rglob(f"*_{compacted[-1]}.hfile")} == {
        "files", "column_stats", "partition_stats"}


def test_a_new_column_is_indexed_and_the_definition_follows(tmp_path: Path) -> None:
    """A write that adds a column (schema evolution) indexes it, as Java's default rule does, and index.json's
    sourceFields name it (Java's next commit would write the same)."""
    table = stats_table(tmp_path, mor=False)
    rows = feature_rows([1, 70], "e1")
    write_rows(table, rows.append_column("extra", pa.array([1.5, None], pa.float64())))
    _kept(table)
    config = TableConfig.load(TableLocation.of(str(table)))
    defs = json.loads((table / config.get("hoodie.table.index.defs.path")).read_text())
    fields = defs["indexDefinitions"][COLUMN_STATS_PARTITION]["sourceFields"]
    assert fields[-1] == "extra" and defs["indexDefinitions"][COLUMN_STATS_PARTITION]["version"] == "V2"
    loaded = HudiTable.load(str(table))
    schema = json.loads(loaded.timeline.commit_metadata(loaded.timeline.completed_commits().last())
                        .extra_metadata["schema"])
    assert tuple(fields) == default_columns(schema, 2)


def test_a_version_6_table_with_column_stats_is_disabled_by_name(tmp_path: Path) -> None:
    table, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v6"], tmp_path)
    stats_only(table)
    with pytest.warns(match="column_stats on a table of version 6"):
        write_rows(table, feature_rows([1], "e1"))
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == []
