"""Hudi 1.1's partitioned record index kept by the engine (hudi_engine/metadata/record_index.py,
`partitioned_records_for_commit`; writer.py, `_partitioned_groups`): per data partition its own file groups
(`record-index-<escaped partition>-000N-0`, as Java 1.2 names them), a (partition, key) pair in the file group of its
partition that Java's hash of the key names, built on request (hoodie.metadata.record.level.index.enable, or
hoodie.index.type=RECORD_LEVEL_INDEX), kept through upserts, deletes, new partitions, the metadata table's
compaction and rollbacks, and tagged with by RECORD_LEVEL_INDEX. tests/java_hudi/test_mdt_partitioned_record_index.py
has Java's side (it reads, tags and extends the engine's index, and the engine keeps Java's)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import WRITE_OPTIONS, assert_partitioned_index_matches, feature_rows

from hudi_engine import HudiTable
from hudi_engine.errors import MetadataTableError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.index_definitions import is_partitioned_record_index
from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION, data_partition_of, partitioned_file_id
from hudi_engine.metadata.table import metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table

PRLI = {"hoodie.index.type": "RECORD_LEVEL_INDEX"}


def _options(table_type: str, **extra: str) -> dict[str, str]:
    return {**WRITE_OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.write.table.version": "9", **extra}


def _in(rows: pa.Table, partition: str) -> pa.Table:
    return rows.set_column(4, "p", pa.array([partition] * rows.num_rows))


def _rows(table: Path) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for r in HudiTable.load(str(table)).read_snapshot().select(["id", "v", "_hoodie_partition_path"]).to_pylist():
        where = (r["_hoodie_partition_path"], r["id"])
        assert where not in out, f"{where} twice"
        out[where] = r["v"]
    return out


def _files(table: Path) -> list[str]:
    return sorted(p.relative_to(table).as_posix() for p in table.rglob("*") if p.is_file())


def test_file_group_names_carry_the_escaped_data_partition() -> None:
    assert partitioned_file_id("p0", 0) == "record-index-p0-0000-0"
    assert partitioned_file_id("p=p0", 3) == "record-index-p%3Dp0-0003-0"  # as Java 1.2 names a hive-style one
    assert partitioned_file_id("a/x y", 0) == "record-index-a%2Fx y-0000-0"  # and a two-level one (seen from Java)
    assert partitioned_file_id("", 0) == "record-index--0000-0"  # a non-partitioned table's (Java 1.2 names it so)
    for partition in ("a", "year=2024/month=01", "x-0001-0", "50%"):
        assert data_partition_of(partitioned_file_id(partition, 12)) == partition
    assert data_partition_of("record-index-0003-0") is None  # the global index's


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_built_kept_and_tagged_with(tmp_path: Path, table_type: str) -> None:
    table = tmp_path / "t"
    write_table(feature_rows(list(range(1, 11)), "one"), str(table), _options(table_type))
    options = _options(table_type, **PRLI)  # builds the index from the latest slices, then tags with it
    write_table(feature_rows([1, 2, 20], "two"), str(table), options)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    assert RECORD_INDEX_PARTITION in config.metadata_partitions and is_partitioned_record_index(location, config)
    folder = Path(metadata_location(location).base_path) / RECORD_INDEX_PARTITION
    assert any(folder.glob("record-index-a-0000-0_*.hfile")) and any(folder.glob("record-index-b-0000-0_*.hfile"))
    assert assert_partitioned_index_matches(table) == 11
    # a new partition gets its own file group; the same key in two partitions is two rows (a non-global index)
    write_table(_in(feature_rows([1, 31], "three"), "c"), str(table), options)
    assert any(folder.glob(".record-index-c-0000-0_*.log.*"))
    write_table(feature_rows([4, 1], "gone"), str(table), {**options, "hoodie.datasource.write.operation": "delete"})
    assert assert_partitioned_index_matches(table) == 11
    rows = _rows(table)
    assert rows[("c", 1)] == "three" and ("a", 1) not in rows and ("b", 4) not in rows and rows[("b", 2)] == "two"
    write_table(feature_rows([1, 2], "four"), str(table), options)  # 1 back in a, 2 updated where it lives
    assert assert_partitioned_index_matches(table) == 12
    assert _rows(table)[("a", 1)] == "four" and _rows(table)[("b", 2)] == "four"


def test_kept_through_the_metadata_tables_compaction_and_a_rollback(tmp_path: Path) -> None:
    table = tmp_path / "t"
    options = _options("MERGE_ON_READ", **PRLI, **{"hoodie.metadata.compact.max.delta.commits": "2"})
    for n in range(4):
        write_table(feature_rows([n * 10 + 1, n * 10 + 2, 1], f"w{n}"), str(table), options)
    location = TableLocation.of(str(table))
    mdt = metadata_location(location)
    assert any(i.action.value == "commit" and i.is_completed for i in Timeline.load(mdt).instants)
    assert assert_partitioned_index_matches(table) == 8
    instant = HudiTable.load(str(table)).write(feature_rows([2, 99], "bad"), {**options, "hoodie.table.name": "t"}
                                               ).instant_time
    assert assert_partitioned_index_matches(table) == 9
    HudiTable.load(str(table)).rollback(instant)
    assert assert_partitioned_index_matches(table) == 8
    assert ("b", 99) not in _rows(table)


def test_turned_off_by_its_own_key_only(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_table(feature_rows([1, 2], "one"), str(table), _options("COPY_ON_WRITE", **PRLI))
    write_table(feature_rows([3], "two"), str(table), _options(
        "COPY_ON_WRITE", **{"hoodie.metadata.global.record.level.index.enable": "false"}))
    assert RECORD_INDEX_PARTITION in TableConfig.load(TableLocation.of(str(table))).metadata_partitions
    write_table(feature_rows([4], "three"), str(table), _options(
        "COPY_ON_WRITE", **{"hoodie.metadata.record.level.index.enable": "false"}))
    assert RECORD_INDEX_PARTITION not in TableConfig.load(TableLocation.of(str(table))).metadata_partitions


@pytest.mark.parametrize(("first", "then", "message"), [
    (PRLI, {"hoodie.index.type": "RECORD_INDEX"}, "record index is the partitioned one"),
    ({"hoodie.index.type": "RECORD_INDEX"}, PRLI, "record index is the global one"),
    ({}, {**PRLI, "hoodie.metadata.global.record.level.index.enable": "true"}, "a table has one record index"),
    ({}, {**PRLI, "hoodie.metadata.enable": "false"}, "turns it off"),
])
def test_refused_before_anything_is_written(tmp_path: Path, first: dict[str, str], then: dict[str, str],
                                            message: str) -> None:
    table = tmp_path / "t"
    write_table(feature_rows([1, 2], "one"), str(table), _options("COPY_ON_WRITE", **first))
    before = _files(table)
    with pytest.raises(MetadataTableError, match=message):
        write_table(feature_rows([1, 3], "two"), str(table), _options("COPY_ON_WRITE", **then))
    assert _files(table) == before


def test_refused_on_version_6(tmp_path: Path) -> None:
    table = tmp_path / "t"
    with pytest.raises(MetadataTableError, match="versions 8 and 9"):
        write_table(feature_rows([1, 2], "one"), str(table), {**_options("COPY_ON_WRITE", **PRLI),
                                                              "hoodie.write.table.version": "6"})


def test_kept_through_data_compaction_clean_savepoint_and_restore(tmp_path: Path) -> None:
    """The data table's compaction (no key moves), clean (nothing to record) and a restore (the metadata table restored
    with it: the file group a later commit gave a new partition goes with that commit) leave the index exact."""
    table = tmp_path / "t"
    options = _options("MERGE_ON_READ", **PRLI, **{"hoodie.cleaner.commits.retained": "1"})
    write_table(feature_rows([1, 2, 3], "one"), str(table), options)
    write_table(feature_rows([1, 4], "two"), str(table), options)
    assert HudiTable.load(str(table)).compact(options=options) is not None
    write_table(feature_rows([2, 5], "three"), str(table), options)
    HudiTable.load(str(table)).clean(options=options)
    assert assert_partitioned_index_matches(table) == 5
    saved = HudiTable.load(str(table)).savepoint()
    write_table(_in(feature_rows([7, 8], "later"), "c"), str(table), options)
    write_table(feature_rows([1], "later"), str(table), {**options, "hoodie.datasource.write.operation": "delete"})
    assert assert_partitioned_index_matches(table) == 6
    HudiTable.load(str(table)).restore(saved.instant_time)
    assert assert_partitioned_index_matches(table) == 5
    folder = Path(metadata_location(TableLocation.of(str(table))).base_path) / RECORD_INDEX_PARTITION
    assert not any(folder.glob("*record-index-c-*"))
    assert _rows(table)[("a", 1)] == "two"


def test_a_new_partition_gets_the_writes_min_file_groups(tmp_path: Path) -> None:
    table = tmp_path / "t"
    options = _options("COPY_ON_WRITE", **PRLI, **{"hoodie.metadata.record.level.index.min.filegroup.count": "2"})
    write_table(feature_rows(list(range(1, 9)), "one"), str(table), options)
    write_table(_in(feature_rows(list(range(10, 20)), "two"), "c"), str(table), options)
    folder = Path(metadata_location(TableLocation.of(str(table))).base_path) / RECORD_INDEX_PARTITION
    groups = {data_partition_of(p.name.lstrip(".").split("_")[0]) for p in folder.iterdir() if "record-index" in p.name}
    names = {p.name.lstrip(".").split("_")[0] for p in folder.iterdir() if "record-index" in p.name}
    assert groups == {"a", "b", "c"}
    assert names == {partitioned_file_id(p, i) for p in ("a", "b", "c") for i in range(2)}
    assert assert_partitioned_index_matches(table) == 18
