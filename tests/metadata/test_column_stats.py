"""The metadata table's column_stats partition (hudi_engine/metadata/column_stats.py) of tables real Java Hudi 1.x
wrote: every record's key is the one the engine computes from its partition, file and column, it sits in the file
group the engine maps it to, and the merged records are what Hudi's procedure shows (tests/java_hudi/
test_procedures_java.py compares with Java's)."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_engine.io.hfile import HFileReader
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import (
    ColumnStats,
    StatValue,
    column_stats_key,
    file_group_index,
)
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for

# Hudi 1.0 (version 8, non-partitioned, merge-on-read with log files) and 1.2 (version 9, partitioned, clustered).
TABLES = ["mor_avrolog_v8_nonpartitioned_mdt", "cow_v9_txns_simple_meta", "mor_avrolog_v9_txns_complex_meta"]


def _metadata_table(path: Path) -> MetadataTable:
    location = TableLocation.of(str(path))
    config = TableConfig.load(location)
    return MetadataTable.load(location, config, Timeline.load(location, layout_for(config)))


@pytest.mark.parametrize("name", TABLES)
def test_keys_and_file_groups_are_hudis(unzip_table, name: str) -> None:
    table = unzip_table(name, "v8_v9")
    # a data file's partition, from storage (cleaned files included: the partition of a file id does not change)
    partition_of = {f.name.split("_", 1)[0].lstrip("."): "" if f.parent == table else str(f.parent.relative_to(table))
                    for f in table.rglob("*") if f.is_file() and ".hoodie" not in f.parts and "-" in f.name}
    stats = _metadata_table(table).read_column_stats()
    assert len(stats) > 50
    for key, record in stats.items():
        file_id = record.file_name.split("_", 1)[0].lstrip(".")
        assert key == column_stats_key(partition_of[file_id], record.file_name, record.column_name), record
    groups = sorted((table / ".hoodie" / "metadata" / "column_stats").glob("*.hfile"))
    count = len({g.name.split("_", 1)[0] for g in groups})
    for g in groups:
        index = int(g.name.split("-")[2])
        assert {file_group_index(k.decode(), count) for k, _ in HFileReader(g.read_bytes()).cells()} == {index}, g.name


def test_base_file_stats_are_the_parquet_footers(unzip_table) -> None:
    """Hudi takes a base file's stats from its parquet footer: min and max over the row groups, the value count,
    the null count and the column chunks' sizes."""
    table = unzip_table("cow_v9_txns_simple_meta", "v8_v9")
    stats = _metadata_table(table).read_column_stats(["txn_id", "txn_ts", "is_international"])
    paths = {p.name: p for p in table.rglob("*.parquet")}
    checked = 0
    for record in stats.values():
        meta = pq.ParquetFile(paths[record.file_name]).metadata
        chunks = [meta.row_group(i).column(j) for i in range(meta.num_row_groups)
                  for j in range(meta.num_columns) if meta.row_group(i).column(j).path_in_schema == record.column_name]
        assert record.value_count == sum(c.num_values for c in chunks)
        assert record.null_count == sum(c.statistics.null_count for c in chunks)
        assert record.total_size == sum(c.total_compressed_size for c in chunks)
        assert record.total_uncompressed_size == sum(c.total_uncompressed_size for c in chunks)
        assert record.min_value is not None and record.max_value is not None
        assert record.min_value.value == min(c.statistics.min for c in chunks)
        assert record.max_value.value == max(c.statistics.max for c in chunks)
        checked += 1
    assert checked >= 30


def test_merging_and_printing_follow_hudi() -> None:
    def stats(lo: int, hi: int, n: int, *, deleted: bool = False, tight: bool = False) -> ColumnStats:
        return ColumnStats("f.parquet", "c", StatValue("LongWrapper", lo), StatValue("LongWrapper", hi), n, 1, 10,
                           20, deleted, tight)
    merged = stats(5, 9, 3).combine(stats(1, 7, 2))
    assert (merged.min_value.value, merged.max_value.value, merged.value_count, merged.null_count,
            merged.total_size) == (1, 9, 5, 2, 20)
    assert stats(5, 9, 3).combine(stats(1, 7, 2, tight=True)) == stats(1, 7, 2, tight=True)
    assert stats(5, 9, 3, deleted=True).combine(stats(1, 7, 2)) == stats(1, 7, 2)
    assert stats(5, 9, 3).combine(stats(1, 7, 2, deleted=True)).is_deleted
    # as Java's String.valueOf and Arrays.toString print them
    assert [StatValue("DoubleWrapper", v).text() for v in (1.0, 1e7, 0.0001, 123.25, -2.5e-7)] == \
        ["1.0", "1.0E7", "1.0E-4", "123.25", "-2.5E-7"]
    assert StatValue("FloatWrapper", 0.10000000149011612).text() == "0.1"
    assert StatValue("BytesWrapper", b"\x00\xff\x7f").text() == "[0, -1, 127]"
    assert StatValue("BooleanWrapper", True).text() == "true"
