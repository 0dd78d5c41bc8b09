from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conformance import V6_WITH_COMMITS

from hudi_engine.partition_metadata import (
    PARTITION_METAFILE,
    PartitionMetadataError,
    format_partition_metadata,
    format_partition_metadata_parquet,
    parse_partition_metadata,
    parse_partition_metadata_parquet,
    partition_depth,
)


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_real_partition_metadata_files(unzip_table, name):
    base = unzip_table(name)
    files = sorted(base.rglob(PARTITION_METAFILE))
    assert files
    instants = {p.name.split(".")[0] for p in (base / ".hoodie").iterdir() if p.is_file()}
    for f in files:
        data = f.read_bytes()
        meta = parse_partition_metadata(data, source=str(f))
        partition = f.parent.relative_to(base).as_posix()
        partition = "" if partition == "." else partition
        assert meta["partitionDepth"] == partition_depth(partition)
        assert meta["commitTime"] in instants
        # Our writer produces the same bytes, given the date line Java wrote
        lines = data.decode("latin-1").splitlines()
        assert lines[0] == "#partition metadata"
        ours = format_partition_metadata(meta["commitTime"], meta["partitionDepth"]).decode("latin-1").splitlines()
        assert ours[0] == lines[0] and ours[2:] == lines[2:]


def test_format_exact_bytes():
    now = datetime(2025, 3, 31, 3, 6, 44, tzinfo=UTC)
    assert format_partition_metadata("20250331030642808", 1, now=now) == (
        b"#partition metadata\n#Mon Mar 31 03:06:44 UTC 2025\ncommitTime=20250331030642808\npartitionDepth=1\n"
    )


def test_partition_depth():
    assert partition_depth("") == 0
    assert partition_depth("city=x") == 1
    assert partition_depth("byteField=10/shortField=300") == 2
    assert partition_depth("2023/04/01/12") == 4


@pytest.mark.parametrize(
    "data,message",
    [
        (b"commitTime=1\n", "partitionDepth is missing"),
        (b"partitionDepth=1\n", "commitTime is missing"),
        (b"commitTime=1\npartitionDepth=x\n", "partitionDepth='x' is not an integer"),
    ],
)
def test_parse_errors(data, message):
    with pytest.raises(PartitionMetadataError, match=message):
        parse_partition_metadata(data, source="p/.hoodie_partition_metadata")


def test_format_errors():
    with pytest.raises(PartitionMetadataError, match="commitTime"):
        format_partition_metadata("abc", 1)
    with pytest.raises(PartitionMetadataError, match="partitionDepth"):
        format_partition_metadata("1", -1)


def test_parquet_form_is_a_rowless_parquet_file_with_the_keys_in_its_footer():
    """`.hoodie_partition_metadata.parquet` as ParquetUtils.writeMetaFile makes it: one optional int64 column
    `dummyint`, no rows, commitTime and partitionDepth in the footer's key-value metadata."""
    data = format_partition_metadata_parquet("20240101000000000", 2)
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata
    assert meta.num_rows == 0
    assert [(c.name, c.physical_type) for c in meta.schema] == [("dummyint", "INT64")]
    assert meta.metadata[b"commitTime"] == b"20240101000000000" and meta.metadata[b"partitionDepth"] == b"2"
    assert parse_partition_metadata_parquet(data) == {"commitTime": "20240101000000000", "partitionDepth": 2}
    with pytest.raises(PartitionMetadataError, match="not a parquet file"):
        parse_partition_metadata_parquet(b"commitTime=1\n")
    with pytest.raises(PartitionMetadataError, match="commitTime"):
        format_partition_metadata_parquet("abc", 1)
