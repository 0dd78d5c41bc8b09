"""Column ranges (hudi_engine/metadata/column_ranges.py) computed from the data files of tables Java Hudi 1.0 and
1.2 wrote equal the column_stats records Java put in their metadata tables, field for field: base files from their
parquet footers, log files from their records, index version 1 (table version 8) and 2 (version 9)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.io.log_block import BlockType, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_ranges import base_file_ranges, log_file_ranges
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def _with_column_stats() -> list[str]:
    out = []
    for z in sorted((CONFORMANCE / "v8_v9").glob("*.zip")):
        names = zipfile.ZipFile(z).namelist()
        if any("metadata/column_stats/" in n for n in names) and any(n.endswith(".parquet") for n in names):
            out.append(z.stem)
    return out


def log_records(path: Path) -> pa.Table:
    """The records of a log file's data blocks (what Hudi's append handle computes a log file's ranges over)."""
    blocks = read_log_blocks(pa.BufferReader(path.read_bytes()), file_name=str(path))
    tables = [data_block_records(b) for b in blocks if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
    return pa.concat_tables(tables, promote_options="default") if tables else pa.table({})


@pytest.mark.parametrize("name", _with_column_stats())
def test_ranges_equal_javas_column_stats(unzip_table, name: str) -> None:
    table = unzip_table(name, "v8_v9")
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    version = 2 if config.version >= 9 else 1
    theirs = {(s.file_name, s.column_name): s for s in MetadataTable.load(
        location, config, Timeline.load(location, layout_for(config))).read_column_stats().values()}
    columns = sorted({c for _, c in theirs})
    files = {f.name: f for f in table.rglob("*") if f.is_file() and ".hoodie" not in f.parts}
    compared = 0
    for file_name in sorted({f for f, _ in theirs} & files.keys()):
        path = files[file_name]
        if file_name.endswith(".parquet"):
            ours = base_file_ranges(pq.ParquetFile(path).metadata, file_name, columns, version)
        else:
            ours = log_file_ranges(log_records(path), file_name, columns, version)
        assert {s.column_name for s in ours} == {c for f, c in theirs if f == file_name}, file_name
        for s in ours:
            assert s == theirs[(file_name, s.column_name)], (file_name, s.column_name)
            compared += 1
    assert compared >= 30
