"""Java Hudi 1.2 on the partitioned record index the engine keeps (hoodie.metadata.record.level.index.enable, Hudi
1.1's partition-level variant; hudi_engine/metadata/record_index.py): the engine's writes to a table whose metadata
table Java built with it keep it (each key in its data partition's file groups, `record-index-<partition>-000N-0`, a
new data partition given its own file group), and Java's next upserts with hoodie.index.type=RECORD_LEVEL_INDEX find
every (partition, key) the engine wrote: no duplicate, no rebuild of the metadata table, and Java reads the table
with the metadata table on as the engine does. tests/metadata/test_partitioned_record_index.py has the engine-only
side."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import WRITE_OPTIONS, assert_partitioned_index_matches, feature_rows, write_rows

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table

# Hudi 1.2's partitioned record index: its own enable key, and RECORD_LEVEL_INDEX to tag with it (RECORD_INDEX, the
# global index's name, fails on such a table in Java: "File pruning with partitioned rli has not yet been
# implemented")
JAVA_PRLI = {**WRITE_OPTIONS, "hoodie.datasource.write.operation": "upsert", "hoodie.metadata.enable": "true",
             "hoodie.metadata.record.level.index.enable": "true", "hoodie.index.type": "RECORD_LEVEL_INDEX",
             "hoodie.metadata.index.column.stats.enable": "false",
             "hoodie.datasource.compaction.async.enable": "false", "hoodie.parquet.small.file.limit": "0"}


def _mdt_state(table: Path) -> tuple[list[str], list[str]]:
    """The metadata table's partitions and its initialization instants (a rebuild changes them)."""
    location = TableLocation.of(str(table))
    inits = [i.timestamp for i in Timeline.load(metadata_location(location)).instants
             if i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP) or len(i.timestamp) == 20]
    return TableConfig.load(location).metadata_partitions, inits


def _rows(rows: list[dict]) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for r in rows:
        where = (r["_hoodie_partition_path"], r["id"])
        assert where not in out, f"{where} twice"
        out[where] = r["v"]
    return out


def _java_rows(java, table: Path) -> dict[tuple[str, int], str]:
    return _rows(java.snapshot(table, **{"hoodie.metadata.enable": "true"}).select(
        ["id", "v", "_hoodie_partition_path"]).to_pylist())


def _ours(table: Path) -> dict[tuple[str, int], str]:
    return _rows(HudiTable.load(str(table)).read_snapshot().select(["id", "v", "_hoodie_partition_path"]).to_pylist())


def _in(rows: pa.Table, partition: str) -> pa.Table:
    return rows.set_column(4, "p", pa.array([partition] * rows.num_rows))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_engine_keeps_javas_partitioned_record_index(java_hudi, tmp_path: Path, table_type: str) -> None:
    java = java_hudi("1.2.0")
    table = tmp_path / "t"
    opts = {**JAVA_PRLI, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type}
    java.write(table, feature_rows(list(range(1, 11)), "java"), opts, mode="overwrite")
    before = _mdt_state(table)
    assert "record_index" in before[0], before
    assert assert_partitioned_index_matches(table) == 10

    write_rows(table, feature_rows([1, 2, 20, 21], "e1"))  # updates and inserts in a and b
    write_rows(table, _in(feature_rows([3, 30], "e2"), "c"))  # a new partition; 3 lives in a too (non-global)
    write_rows(table, feature_rows([4], "gone"), "delete")
    assert assert_partitioned_index_matches(table) == 13
    assert (Path(metadata_location(TableLocation.of(str(table))).base_path) / "record_index").glob(
        ".record-index-c-0000-0_*")
    ours = _ours(table)
    assert len(ours) == 13 and ours[("c", 3)] == "e2" and ours[("a", 3)] == "java" and ("b", 4) not in ours
    assert _java_rows(java, table) == ours  # Java reads it with the metadata table on
    assert _mdt_state(table) == before

    # Java's RECORD_LEVEL_INDEX upsert of keys the engine wrote, in each partition, and new ones
    upsert = pa.concat_tables([feature_rows([1, 2, 20, 21, 40], "java2"), _in(feature_rows([3, 30, 31], "java2"), "c")])
    java.write(table, upsert.set_column(2, "ts", pa.array([20] * upsert.num_rows, pa.int64())), opts)
    got = _java_rows(java, table)  # no (partition, key) twice: every update found in the index
    assert len(got) == 15 and all(got[w] == "java2" for w in [("a", 1), ("b", 2), ("c", 3), ("c", 30), ("c", 31)])
    assert got[("a", 3)] == "java"
    assert _ours(table) == got
    assert _mdt_state(table) == before  # extended, not rebuilt
    assert assert_partitioned_index_matches(table) == 15
    write_rows(table, _in(feature_rows([31, 50], "e3"), "c"))  # and the engine goes on
    assert assert_partitioned_index_matches(table) == 16
    assert _java_rows(java, table) == _ours(table)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_java_reads_and_upserts_with_the_engines_partitioned_record_index(java_hudi, tmp_path: Path,
                                                                          table_type: str) -> None:
    """The engine builds the index on a table it wrote without one (file groups per data partition, from the latest
    slices' keys, base files and all), tags with it (RECORD_LEVEL_INDEX) and keeps it; Java tags with it too."""
    java = java_hudi("1.2.0")
    table = tmp_path / "t"
    options = {**WRITE_OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
               "hoodie.write.table.version": "9"}
    write_table(feature_rows(list(range(1, 11)), "one"), str(table), options)
    rli = {**options, "hoodie.index.type": "RECORD_LEVEL_INDEX"}  # builds the index, then tags with it
    write_table(feature_rows([1, 2, 20], "two"), str(table), rli)
    write_table(_in(feature_rows([1, 31], "three"), "c"), str(table), rli)  # 1 lives in a too: a new row in c
    write_table(feature_rows([4], "gone"), str(table), {**rli, "hoodie.datasource.write.operation": "delete"})
    assert assert_partitioned_index_matches(table) == 12
    ours = _ours(table)
    assert ours[("a", 1)] == "two" and ours[("c", 1)] == "three" and ("b", 4) not in ours
    before = _mdt_state(table)
    assert _java_rows(java, table) == ours
    opts = {**JAVA_PRLI, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type}
    upsert = pa.concat_tables([feature_rows([1, 2, 20, 41], "java"), _in(feature_rows([1, 31], "java"), "c")])
    java.write(table, upsert.set_column(2, "ts", pa.array([20] * upsert.num_rows, pa.int64())), opts)
    got = _java_rows(java, table)
    assert len(got) == 13 and all(got[w] == "java" for w in [("a", 1), ("b", 2), ("b", 20), ("c", 1), ("c", 31)])
    assert _ours(table) == got
    assert _mdt_state(table) == before  # extended, not rebuilt
    assert assert_partitioned_index_matches(table) == 13
