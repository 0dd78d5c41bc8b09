"""Java Hudi 1.2 on the column and partition stats the engine keeps (hudi_engine/metadata/stats_index.py) in a
metadata table Java built with Spark's defaults (files, column_stats, partition_stats; version 9): after the engine's
upserts, delete, compaction (MOR), clean and clustering, Java's queries with data skipping on return what the
engine reads, Java's `show_metadata_table_column_stats` shows what the engine does, an engine write killed after its
metadata delta commit stays invisible, and Java's next write rolls it back and extends the metadata table (no
rebuild), after which the engine keeps it again. A control shows Java does skip by those stats:
with one file's stats made wrong on purpose, the same query misses that file's row."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import WRITE_OPTIONS, assert_stats_match_files, feature_rows, write_rows

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import ColumnStats, StatValue
from hudi_engine.metadata.stats_index import StatsIndex
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.procedures import call
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table
from java_hudi.test_mdt_files import _killed_after_the_metadata_commit

SKIPPING = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true"}
JAVA_WRITE = {**WRITE_OPTIONS, "hoodie.datasource.write.operation": "upsert",
              "hoodie.datasource.compaction.async.enable": "false"}


def _java_table(java, path: Path, mor: bool) -> Path:
    """A version-9 table Java 1.2 wrote with Spark's defaults: its metadata table has files, column_stats and
    partition_stats."""
    opts = {**JAVA_WRITE, "hoodie.table.name": path.name,
            "hoodie.datasource.write.table.type": "MERGE_ON_READ" if mor else "COPY_ON_WRITE"}
    java.write(path, feature_rows(list(range(6)), "one"), opts, mode="overwrite")
    java.write(path, feature_rows(list(range(3, 9)), "two"), opts)
    assert TableConfig.load(TableLocation.of(str(path))).metadata_partitions == [
        "column_stats", "files", "partition_stats"]
    return path


def _engine_sequence(table: Path, mor: bool) -> None:
    write_rows(table, feature_rows([1, 2, 51], "e1"))
    write_rows(table, feature_rows([1, 3, 52], "e2"))
    write_rows(table, feature_rows([2], "gone"), "delete")
    if mor:
        assert HudiTable.load(str(table)).compact() is not None
    HudiTable.load(str(table)).clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                              "hoodie.cleaner.fileversions.retained": "1"})
    HudiTable.load(str(table)).cluster(options={**WRITE_OPTIONS, "hoodie.clustering.plan.strategy.sort.columns": "id"})
    write_rows(table, feature_rows([53, 54], "e3"))


def _query(java, name: str, where: str) -> list[tuple]:
    for k, v in SKIPPING.items():
        java.sql(f"SET {k}={v}")
    java.sql(f"REFRESH TABLE {name}")  # the table may have changed since Spark listed it
    got = java.sql(f"SELECT id, v FROM {name} WHERE {where}")
    assert got is not None
    return sorted(zip(got.column("id").to_pylist(), got.column("v").to_pylist(), strict=True))


def _reset(java) -> None:
    """The session's settings back to their defaults: one oracle serves the whole test session."""
    for key in SKIPPING:
        java.sql(f"RESET {key}")


def _ours(table: Path, ids: list[int]) -> list[tuple]:
    rows = HudiTable.load(str(table)).read_snapshot().select(["id", "v"]).to_pylist()
    return sorted((r["id"], r["v"]) for r in rows if r["id"] in ids)


def _mdt_inits(table: Path) -> list[str]:
    return [i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(table)))).instants
            if i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP)]


@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_java_skips_by_the_engines_stats_and_extends_them(java_hudi, tmp_path: Path, mor: bool) -> None:
    java = java_hudi("1.2.0")
    table = _java_table(java, tmp_path / f"stats_{'mor' if mor else 'cow'}", mor)
    _engine_sequence(table, mor)
    assert assert_stats_match_files(table) > 0
    inits = _mdt_inits(table)
    copy = tmp_path / "java"
    shutil.copytree(table, copy)  # registering a table rewrites its hoodie.properties
    name = f"stats_{'mor' if mor else 'cow'}"
    java.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    try:
        for where, ids in [("id = 51", [51]), ("id >= 52", [52, 53, 54]), ("id = 2", [])]:
            assert _query(java, name, where) == _ours(table, ids), where
        assert _query(java, name, "v = 'e2'") == [r for r in _ours(table, [1, 3, 52]) if r[1] == "e2"]
        for columns in ("id,v,_hoodie_commit_time", "ts,amount,p"):
            theirs = java.sql(f"CALL show_metadata_table_column_stats(table => '{name}', targetColumns => "
                              f"'{columns}')")
            assert theirs is not None
            ours = call("show_metadata_table_column_stats", str(copy), targetColumns=columns)
            assert sorted(tuple(r.values()) for r in ours.to_pylist()) == sorted(
                tuple(r.values()) for r in theirs.to_pylist()), columns
        # An engine write killed between its metadata delta commit (stats of files it wrote) and its data commit:
        # Java skips those blocks; its next write rolls the instant back, in the metadata table too, and extends the
        # metadata table the engine kept: no new initialization
        name_of_table = TableConfig.load(TableLocation.of(str(copy))).name
        crashed = _killed_after_the_metadata_commit(copy, feature_rows([2, 90], "crashed"), {
            **WRITE_OPTIONS, "hoodie.table.name": name_of_table, "hoodie.datasource.write.operation": "upsert"},
            tmp_path)
        assert crashed in {i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(copy)))).instants}
        assert _query(java, name, "id = 90") == [] and _query(java, name, "id = 51") == _ours(table, [51])
        java.write(copy, feature_rows([1, 61], "java").set_column(2, "ts", pa.array([20, 20], pa.int64())),
                   {**JAVA_WRITE, "hoodie.table.name": name_of_table})
        assert crashed not in {i.timestamp for i in Timeline.load(TableLocation.of(str(copy))).instants}
        assert _mdt_inits(copy) == inits
        assert _query(java, name, "id = 90") == []
        assert TableConfig.load(TableLocation.of(str(copy))).metadata_partitions == [
            "column_stats", "files", "partition_stats"]
        assert _query(java, name, "id = 61") == [(61, "java")]
        write_rows(copy, feature_rows([62], "e4"))  # and the engine keeps it after Java
        assert assert_stats_match_files(copy) > 0
        assert _query(java, name, "id = 62") == [(62, "e4")]
        # a write that adds a column indexes it and names it in index.json (beside Java's .crc), as Java would
        write_rows(copy, feature_rows([63], "e5").append_column("extra", pa.array([2.5], pa.float64())))
        assert assert_stats_match_files(copy) > 0
        java.sql(f"DROP TABLE {name}")  # the catalog keeps the schema it registered: register it again
        java.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
        assert _query(java, name, "extra = 2.5") == [(63, "e5")]
        # Java's write compacts the metadata table (every delta commit), merging the engine's stats blocks
        java.write(copy, feature_rows([64], "java").set_column(2, "ts", pa.array([20], pa.int64())).append_column(
            "extra", pa.array([3.5], pa.float64())),
            {**JAVA_WRITE, "hoodie.table.name": TableConfig.load(TableLocation.of(str(copy))).name,
             "hoodie.metadata.compact.max.delta.commits": "1"})
        mdt = Timeline.load(metadata_location(TableLocation.of(str(copy))))
        assert any(i.action.value == "commit" and i.is_completed for i in mdt.instants)
        assert assert_stats_match_files(copy) > 0
        assert _query(java, name, "extra > 2") == [(63, "e5"), (64, "java")]
        assert _mdt_inits(copy) == inits
    finally:
        _reset(java)
        java.sql(f"DROP TABLE IF EXISTS {name}")


def test_java_misses_a_row_when_a_files_stats_are_wrong(java_hudi, tmp_path: Path, monkeypatch) -> None:
    """The control: Java's data skipping reads the engine's records, so a wrong range hides the row."""
    java = java_hudi("1.2.0")
    table = _java_table(java, tmp_path / "liar", mor=False)
    original = StatsIndex.file_records

    def lying(self, location, partition, file_name, instant_time):
        wrong = StatValue("LongWrapper", -1)
        ranges, bloom = original(self, location, partition, file_name, instant_time)
        return [ColumnStats(s.file_name, s.column_name, wrong, wrong, s.value_count, s.null_count, s.total_size,
                            s.total_uncompressed_size, False, False, s.value_type) if s.column_name == "id" else s
                for s in ranges], bloom

    monkeypatch.setattr(StatsIndex, "file_records", lying)
    write_rows(table, feature_rows([71], "liar"))
    monkeypatch.undo()
    java.sql(f"CREATE TABLE stats_liar USING hudi LOCATION '{table}'")
    try:
        assert _query(java, "stats_liar", "id = 71") == []  # skipped by the wrong stats
        java.sql("SET hoodie.enable.data.skipping=false")
        java.sql("SET hoodie.metadata.enable=false")
        java.sql("REFRESH TABLE stats_liar")
        got = java.sql("SELECT id FROM stats_liar WHERE id = 71")
        assert got is not None and got.column("id").to_pylist() == [71]
    finally:
        _reset(java)
        java.sql("DROP TABLE IF EXISTS stats_liar")


@pytest.mark.parametrize("version", [9, 8])
def test_java_reads_and_keeps_the_stats_the_engine_built(java_hudi, tmp_path: Path, version: int) -> None:
    """Column and partition stats the engine built on request (`hoodie.metadata.index.column.stats.enable=true`;
    index version 2 on table version 9, 1 on 8): Java 1.2 skips by them as the engine reads, shows them alike, and
    its next write keeps them (no rebuild)."""
    java = java_hudi("1.2.0")
    table = tmp_path / f"built_v{version}"
    options = {**WRITE_OPTIONS, "hoodie.table.name": table.name, "hoodie.write.table.version": str(version),
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_table(feature_rows(list(range(6)), "one"), str(table), options)
    write_table(feature_rows([1, 2, 40], "two"), str(table), options)
    write_table(feature_rows([3, 41], "three"), str(table), {**options, "hoodie.metadata.index.column.stats.enable":
                                                             "true"})
    write_table(feature_rows([4, 42], "four"), str(table), options)
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == [
        "column_stats", "files", "partition_stats"]
    assert assert_stats_match_files(table) > 0
    inits = _mdt_inits(table)
    name = f"built_v{version}"
    java.sql(f"CREATE TABLE {name} USING hudi LOCATION '{table}'")
    try:
        for where, ids in [("id = 41", [41]), ("id >= 40", [40, 41, 42]), ("id = 99", [])]:
            assert _query(java, name, where) == _ours(table, ids), where
        theirs = java.sql(f"CALL show_metadata_table_column_stats(table => '{name}', targetColumns => 'id,v,ts')")
        assert theirs is not None and theirs.num_rows > 0
        ours = call("show_metadata_table_column_stats", str(table), targetColumns="id,v,ts")
        assert sorted(tuple(r.values()) for r in ours.to_pylist()) == sorted(
            tuple(r.values()) for r in theirs.to_pylist())
        java.write(table, feature_rows([43], "java").set_column(2, "ts", pa.array([20], pa.int64())),
                   {**JAVA_WRITE, "hoodie.table.name": table.name, "hoodie.write.table.version": str(version),
                    "hoodie.write.auto.upgrade": "false", "hoodie.datasource.write.table.type": "MERGE_ON_READ"})
        assert _mdt_inits(table) == inits
        assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == [
            "column_stats", "files", "partition_stats"]
        assert _query(java, name, "id >= 42") == _ours(table, [42, 43])
        assert assert_stats_match_files(table) > 0
    finally:
        _reset(java)
        java.sql(f"DROP TABLE IF EXISTS {name}")


def test_java_tags_by_the_bloom_filters_the_engine_kept(java_hudi, tmp_path: Path) -> None:
    """A table Java wrote with bloom filters in its metadata table: after the engine's upserts and clean kept them,
    Java's BLOOM index tagging from the metadata table (`hoodie.bloom.index.use.metadata`) finds the keys in the
    engine's files: its upsert updates them, no key twice."""
    java = java_hudi("1.2.0")
    path = tmp_path / "blooms"
    opts = {**JAVA_WRITE, "hoodie.table.name": path.name, "hoodie.metadata.index.bloom.filter.enable": "true"}
    java.write(path, feature_rows(list(range(6)), "one"), opts, mode="overwrite")
    assert "bloom_filters" in TableConfig.load(TableLocation.of(str(path))).metadata_partitions
    write_rows(path, feature_rows([1, 2, 51, 52], "e1"))
    write_rows(path, feature_rows([3, 53], "e2"))
    HudiTable.load(str(path)).clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                             "hoodie.cleaner.fileversions.retained": "1"})
    assert "bloom_filters" in TableConfig.load(TableLocation.of(str(path))).metadata_partitions
    inits = _mdt_inits(path)
    java.write(path, feature_rows([2, 51, 53, 70], "java").set_column(2, "ts", pa.array([20] * 4, pa.int64())),
               {**opts, "hoodie.index.type": "BLOOM", "hoodie.bloom.index.use.metadata": "true"})
    assert _mdt_inits(path) == inits
    got = java.snapshot(path, **{"hoodie.metadata.enable": "true"}).select(["id", "v"]).to_pylist()
    ids = [r["id"] for r in got]
    assert len(ids) == len(set(ids)), "a key twice: Java's tagging missed the engine's file"
    want = {**{i: "one" for i in range(6)}, 1: "e1", 3: "e2", 52: "e1"} | {i: "java" for i in (2, 51, 53, 70)}
    assert {r["id"]: r["v"] for r in got} == want
