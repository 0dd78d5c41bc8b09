"""Java Hudi on the record index the engine keeps (hudi_engine/metadata/record_index.py): Java 1.2 reads an engine
table with its metadata table on, and its upserts with `hoodie.index.type=RECORD_INDEX` find every key the engine
wrote (no duplicate row) without rebuilding the metadata table; the engine's RECORD_INDEX upserts on a table Java
built with a record index are right, and Java's next write extends the metadata table (its partitions and
initializations unchanged). tests/metadata/test_record_index.py has the engine-only side."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import WRITE_OPTIONS, assert_index_matches, feature_rows, write_rows

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table

JAVA_RLI = {**WRITE_OPTIONS, "hoodie.datasource.write.operation": "upsert", "hoodie.metadata.enable": "true",
            "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX",
            "hoodie.datasource.compaction.async.enable": "false",
            # new keys to new file groups: an update the index missed would then be a second row, not merged into
            # the small file that holds the key (the control below)
            "hoodie.parquet.small.file.limit": "0"}


def _mdt_state(table: Path) -> tuple[list[str], list[str]]:
    """The metadata table's partitions and its initialization instants (a rebuild changes them)."""
    location = TableLocation.of(str(table))
    inits = [i.timestamp for i in Timeline.load(metadata_location(location)).instants
             if i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP) or len(i.timestamp) == 20]
    return TableConfig.load(location).metadata_partitions, inits


def _java_rows(java, table: Path) -> dict[int, tuple[str, str]]:
    rows = java.snapshot(table, **{"hoodie.metadata.enable": "true"}).select(
        ["id", "v", "_hoodie_partition_path"]).to_pylist()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    return {r["id"]: (r["v"], r["_hoodie_partition_path"]) for r in rows}


def _ours(table: Path) -> dict[int, tuple[str, str]]:
    rows = HudiTable.load(str(table)).read_snapshot().select(["id", "v", "_hoodie_partition_path"]).to_pylist()
    return {r["id"]: (r["v"], r["_hoodie_partition_path"]) for r in rows}


@pytest.mark.parametrize(("hudi", "version", "table_type"), [
    ("1.2.0", 9, "COPY_ON_WRITE"), ("1.2.0", 9, "MERGE_ON_READ"), ("0.15.0", 6, "COPY_ON_WRITE")])
def test_java_upserts_find_every_key_of_the_engines_record_index(java_hudi, tmp_path: Path, hudi: str, version: int,
                                                                 table_type: str) -> None:
    java = java_hudi(hudi)
    table = tmp_path / "t"
    options = {**WRITE_OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
               "hoodie.write.table.version": str(version)}
    write_table(feature_rows(list(range(1, 21)), "one"), str(table), options)
    write_table(feature_rows([2, 3, 40], "two"), str(table), {**options, "hoodie.index.type": "RECORD_INDEX"})
    write_table(feature_rows([4, 41], "three"), str(table), {**options, "hoodie.index.type": "RECORD_INDEX"})
    # Java 0.15's record-index lookup reads delete blocks on ForkJoin pool threads, whose Avro may not see Hudi's
    # classes in the oracle (a ClassCastException to HoodieDeleteRecord now and then, its own blocks' alike: ours
    # have Java's bytes, tests/metadata/test_record_index.py): no delete on 0.15, for a test that does not flake.
    deletes = hudi != "0.15.0"
    if deletes:
        write_table(feature_rows([5], "gone"), str(table), {**options, "hoodie.datasource.write.operation": "delete"})
    assert assert_index_matches(table) == 21 if deletes else 22
    before = _mdt_state(table)
    assert "record_index" in before[0]
    assert _java_rows(java, table) == _ours(table)  # Java reads it with the metadata table on
    # Java's RECORD_INDEX upsert of keys the engine wrote (and one new key, one deleted key back)
    # (column stats off: Java would build them beside, which is no rebuild but changes what is compared)
    java.write(table, feature_rows([1, 3, 40, 41, 5, 60], "java").set_column(2, "ts", pa.array([20] * 6, pa.int64())),
               {**JAVA_RLI, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
                "hoodie.metadata.index.column.stats.enable": "false"})
    got = _java_rows(java, table)
    assert len(got) == 23 and all(got[i][0] == "java" for i in (1, 3, 40, 41, 5, 60))
    assert _ours(table) == got
    assert _mdt_state(table) == before  # extended, not rebuilt
    assert assert_index_matches(table) == 23
    write_rows(table, feature_rows([6, 61], "e"), **{"hoodie.index.type": "RECORD_INDEX"})  # and the engine goes on
    assert assert_index_matches(table) == 24
    assert _java_rows(java, table) == _ours(table)


@pytest.mark.parametrize(("hudi", "version", "table_type"), [("1.2.0", 9, "MERGE_ON_READ"), ("0.15.0", 6, "COPY_ON_WRITE")])
def test_java_upserts_find_every_key_of_the_engines_compacted_record_index(java_hudi, tmp_path: Path, hudi: str,
                                                                           version: int, table_type: str) -> None:
    """The engine compacts the metadata table every 2 delta commits: its record_index base files (merged at the cell
    level, metadata/compaction.py) are what Java's RECORD_INDEX upsert reads; it finds every key."""
    java = java_hudi(hudi)
    table = tmp_path / "t"
    options = {**WRITE_OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
               "hoodie.write.table.version": str(version), "hoodie.index.type": "RECORD_INDEX",
               "hoodie.metadata.compact.max.delta.commits": "2"}
    write_table(feature_rows(list(range(1, 21)), "one"), str(table), options)
    write_table(feature_rows([2, 3, 40], "two"), str(table), options)
    deletes = hudi != "0.15.0"  # as above: no delete blocks for 0.15's lookup
    if deletes:
        write_table(feature_rows([5, 6], "gone"), str(table), {**options, "hoodie.datasource.write.operation": "delete"})
        write_table(feature_rows([6, 41], "back"), str(table), options)  # a deleted key written again
    else:
        write_table(feature_rows([41], "three"), str(table), options)
    write_table(feature_rows([42], "four"), str(table), options)
    live = 22 if deletes else 23
    assert assert_index_matches(table) == live
    location = TableLocation.of(str(table))
    compacted = [i.timestamp for i in Timeline.load(metadata_location(location)).instants
                 if i.action.value == "commit" and i.is_completed]
    folder = Path(metadata_location(location).base_path) / "record_index"
    assert compacted and any(folder.glob(f"*_{t}.hfile") for t in compacted)
    assert _java_rows(java, table) == _ours(table)
    java.write(table, feature_rows([1, 3, 40, 41, 6, 60], "java").set_column(2, "ts", pa.array([20] * 6, pa.int64())),
               {**JAVA_RLI, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
                "hoodie.metadata.index.column.stats.enable": "false"})
    got = _java_rows(java, table)  # no key written twice: every update found in the index
    assert len(got) == live + 1 and all(got[i][0] == "java" for i in (1, 3, 40, 41, 6, 60))
    assert _ours(table) == got
    assert assert_index_matches(table) == live + 1


def test_the_engines_record_index_upserts_on_a_table_java_built(java_hudi, tmp_path: Path) -> None:
    java = java_hudi("1.2.0")
    table = tmp_path / "j"
    opts = {**JAVA_RLI, "hoodie.table.name": "j", "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    java.write(table, feature_rows(list(range(1, 11)), "java"), opts, mode="overwrite")
    java.write(table, feature_rows([2, 12], "java2"), opts)
    before = _mdt_state(table)
    assert "record_index" in before[0], before
    assert assert_index_matches(table) == 11
    rli = {"hoodie.index.type": "RECORD_INDEX"}
    write_rows(table, feature_rows([1, 2, 30], "e1"), **rli)
    moved = feature_rows([3], "e2").set_column(4, "p", pa.array(["b"]))  # 3 lives in partition a
    write_rows(table, moved, **rli)
    write_rows(table, feature_rows([4], "gone"), "delete", **rli)
    ours = _ours(table)
    assert len(ours) == 11 and ours[3][0] == "e2" and ours[3][1].endswith("a") and 4 not in ours
    assert assert_index_matches(table) == 11
    java.write(table, feature_rows([1, 3, 30, 31], "java3").set_column(2, "ts", pa.array([20] * 4, pa.int64())), opts)
    got = _java_rows(java, table)
    assert got == _ours(table) and len(got) == 12
    assert all(got[i][0] == "java3" for i in (1, 3, 30, 31))
    after = _mdt_state(table)
    assert after == before  # Java's next write does not rebuild it


def test_java_writes_a_duplicate_when_the_index_misses_a_key(java_hudi, tmp_path: Path, monkeypatch) -> None:
    """The control: Java tags by the engine's records, so a key left out of the index comes back as a new row."""
    from hudi_engine.metadata import writer

    java = java_hudi("1.2.0")
    table = tmp_path / "liar"
    options = {**WRITE_OPTIONS, "hoodie.table.name": "liar", "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    write_table(feature_rows([1, 2], "one"), str(table), {**options, "hoodie.index.type": "RECORD_INDEX"})
    original = writer.index_records_for_commit
    monkeypatch.setattr(writer, "index_records_for_commit", lambda *a: [
        r for r in original(*a) if r.key != "7"])
    write_table(feature_rows([7, 8], "two"), str(table), {**options, "hoodie.index.type": "RECORD_INDEX"})
    monkeypatch.undo()
    java.write(table, feature_rows([7, 8], "java").set_column(2, "ts", pa.array([20, 20], pa.int64())),
               {**JAVA_RLI, "hoodie.table.name": "liar", "hoodie.metadata.index.column.stats.enable": "false"})
    rows = java.snapshot(table, **{"hoodie.metadata.enable": "true"}).select(["id", "v"]).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows if r["id"] in (7, 8)) == [(7, "java"), (7, "two"), (8, "java")]


def test_a_write_killed_after_its_metadata_commit_misleads_no_reader(java_hudi, tmp_path: Path) -> None:
    """An engine write killed between its metadata delta commit (record index entries for files it wrote) and its
    data commit: neither the engine's nor Java's RECORD_INDEX tagging takes those entries; Java's next write rolls the
    instant back and extends the metadata table."""
    from java_hudi.test_mdt_files import _killed_after_the_metadata_commit

    java = java_hudi("1.2.0")
    table = tmp_path / "k"
    options = {**WRITE_OPTIONS, "hoodie.table.name": "k", "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
               "hoodie.index.type": "RECORD_INDEX"}
    write_table(feature_rows(list(range(1, 9)), "one"), str(table), options)
    before = _mdt_state(table)
    crashed = _killed_after_the_metadata_commit(table, feature_rows([2, 90], "crashed"), {
        **options, "hoodie.datasource.write.operation": "upsert"}, tmp_path)
    assert crashed in {i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(table)))).instants}
    assert assert_index_matches(table) == 8  # the crashed entries do not count
    java.write(table, feature_rows([2, 90], "java").set_column(2, "ts", pa.array([20, 20], pa.int64())),
               {**JAVA_RLI, "hoodie.table.name": "k", "hoodie.metadata.index.column.stats.enable": "false"})
    assert crashed not in {i.timestamp for i in Timeline.load(TableLocation.of(str(table))).instants}
    got = _java_rows(java, table)
    assert len(got) == 9 and got[2][0] == "java" and got[90][0] == "java"
    assert _mdt_state(table) == before and assert_index_matches(table) == 9
    write_rows(table, feature_rows([90, 91], "e"), **{"hoodie.index.type": "RECORD_INDEX"})
    assert _ours(table) == _java_rows(java, table) and len(_ours(table)) == 10
