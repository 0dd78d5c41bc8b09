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
    as_merge_on_read,
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
        as_merge_on_read(table)
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
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == ["files"]  # rebuilt: files only


def _rows(ids: list[int], value: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids),
                     "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids],
                     "d": pa.array([None if i % 3 == 0 else i * 1.5 for i in ids], pa.float64())})


def _options(table_type: str, version: int = 9, partitioned: bool = True) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p" if partitioned else "",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type,
            "hoodie.write.table.version": str(version)}


@pytest.mark.parametrize(("table_type", "partitioned"), [("COPY_ON_WRITE", True), ("MERGE_ON_READ", True),
                                                         ("MERGE_ON_READ", False)])
def test_built_on_request_kept_then_dropped(tmp_path: Path, table_type: str, partitioned: bool) -> None:
    """`hoodie.metadata.index.column.stats.enable=true` builds column_stats (and partition_stats on a partitioned
    table) from the latest slices, with the metadata table when there is none; later writes keep them; `false`
    drops them and their index definition, as Hudi 1.2 does."""
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = _options(table_type, partitioned=partitioned)
    write_table(_rows([1, 2, 3, 4], "a"), path, options)
    write_table(_rows([2, 5], "b"), path, options)
    write_table(_rows([3, 6], "c"), path, {**options, "hoodie.metadata.index.column.stats.enable": "true"})
    config = TableConfig.load(TableLocation.of(path))
    assert config.metadata_partitions == (["column_stats", "files", "partition_stats"] if partitioned
                                          else ["column_stats", "files"])
    defs = json.loads(Path(path, config.get("hoodie.table.index.defs.path")).read_text())["indexDefinitions"]
    assert defs["column_stats"]["sourceFields"] == [
        "_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "id", "v", "ts", "p", "d"]
    assert defs["column_stats"]["version"] == "V2"
    assert assert_stats_match_files(Path(path)) > 0 and mdt_listing(Path(path)) == storage_listing(Path(path))
    write_table(_rows([7, 8], "d"), path, options)
    assert assert_stats_match_files(Path(path)) > 0
    write_table(_rows([9], "e"), path, {**options, "hoodie.metadata.index.column.stats.enable": "false"})
    config = TableConfig.load(TableLocation.of(path))
    assert config.metadata_partitions == ["files"]
    assert not (Path(metadata_location(TableLocation.of(path)).base_path) / "column_stats").exists()
    assert "column_stats" not in json.loads(Path(path, config.get("hoodie.table.index.defs.path")).read_text())[
        "indexDefinitions"]
    assert mdt_listing(Path(path)) == storage_listing(Path(path))


def test_a_column_list_is_honoured_when_building(tmp_path: Path) -> None:
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    write_table(_rows([1, 2], "a"), path, {**_options("COPY_ON_WRITE"),
                                           "hoodie.metadata.index.column.stats.enable": "true",
                                           "hoodie.metadata.index.column.stats.column.list": "d,nope,id"})
    config = TableConfig.load(TableLocation.of(path))
    defs = json.loads(Path(path, config.get("hoodie.table.index.defs.path")).read_text())["indexDefinitions"]
    assert defs["column_stats"]["sourceFields"] == [
        "_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "d", "id"]
    assert assert_stats_match_files(Path(path)) > 0


def test_building_on_a_version_6_table_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from hudi_engine.errors import MetadataTableError
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = _options("COPY_ON_WRITE", version=6)
    write_table(_rows([1, 2], "a"), path, {**options, "hoodie.metadata.enable": "true"})
    before = sorted(p.name for p in Path(path).rglob("*.parquet"))
    with pytest.raises(MetadataTableError, match="column stats are built on tables of versions 8 and 9"):
        write_table(_rows([3], "b"), path, {**options, "hoodie.metadata.index.column.stats.enable": "true"})
    assert sorted(p.name for p in Path(path).rglob("*.parquet")) == before
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == ["files"]


def test_an_interrupted_build_is_started_over(tmp_path: Path, monkeypatch) -> None:
    """Killed after the column_stats delta commit, before hoodie.properties names it: the next build removes the
    leftovers (its folder, its instant) and builds again; readers never saw it."""
    from hudi_engine.metadata import initialization
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = _options("MERGE_ON_READ")
    write_table(_rows([1, 2, 3], "a"), path, {**options, "hoodie.metadata.enable": "true"})
    monkeypatch.setattr(initialization, "save_definition", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        write_table(_rows([4], "b"), path, {**options, "hoodie.metadata.index.column.stats.enable": "true"})
    monkeypatch.undo()
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == ["files"]
    write_table(_rows([5], "c"), path, {**options, "hoodie.metadata.index.column.stats.enable": "true"})
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == [
        "column_stats", "files", "partition_stats"]
    assert assert_stats_match_files(Path(path)) > 0
    inits = [i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(path))).instants
             if i.timestamp.startswith("00000000000000")]
    assert len(inits) == len(set(inits))


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_bloom_filters_are_kept_too(tmp_path: Path, mor: bool) -> None:
    """A Java-built metadata table with bloom filters (`hoodie.metadata.index.bloom.filter.enable`): each written
    base file's filter from its footer at the writing instant, cleaned files' filters deleted."""
    from metadata_tables import assert_blooms_match_files
    table, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v9"], tmp_path)
    stats_only(table, keep=("files", "column_stats", "partition_stats", "bloom_filters"))
    if mor:
        as_merge_on_read(table)
    assert assert_blooms_match_files(table) > 0
    write_rows(table, feature_rows([1, 2, 51], "e1"))
    write_rows(table, feature_rows([3, 52], "e2"))
    if mor:
        assert HudiTable.load(str(table)).compact() is not None
    assert HudiTable.load(str(table)).clean(options=CLEAN_ONE) is not None
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == [
        "bloom_filters", "column_stats", "files", "partition_stats"]
    assert assert_blooms_match_files(table) > 0 and assert_stats_match_files(table) > 0
    assert mdt_listing(table) == storage_listing(table)
