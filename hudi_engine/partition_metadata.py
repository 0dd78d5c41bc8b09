"""`.hoodie_partition_metadata` (FORMAT.md, Partition metadata): the marker file that makes a folder a Hudi partition.

Text properties (`HoodiePartitionMetadata`, default text format):
    #partition metadata
    #<java.util.Date.toString()>
    commitTime=<instant that created the partition>
    partitionDepth=<number of path segments; 0 for the base path of a non-partitioned table>

With `hoodie.partition.metafile.use.base.format=true` Hudi writes `.hoodie_partition_metadata.parquet` instead: a
parquet file without rows (schema `message dummy { optional int64 dummyint; }`) whose footer key-value metadata holds
the same two keys (`ParquetUtils.writeMetaFile`). Readers look for the text file first, then `.parquet`, then `.orc`
(`HoodiePartitionMetadata.hasPartitionMetadata`).
"""
from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import HudiError
from .java_properties import PropertiesError, format_properties, java_date_string, parse_properties

PARTITION_METAFILE = ".hoodie_partition_metadata"
PARQUET_PARTITION_METAFILE = PARTITION_METAFILE + ".parquet"
# Every name that marks a partition, in the order Hudi looks for them.
PARTITION_METAFILES = (PARTITION_METAFILE, PARQUET_PARTITION_METAFILE, PARTITION_METAFILE + ".orc")
COMMIT_TIME_KEY = "commitTime"
PARTITION_DEPTH_KEY = "partitionDepth"


class PartitionMetadataError(HudiError, ValueError):
    """A `.hoodie_partition_metadata` file without the expected keys."""


def partition_depth(partition_path: str) -> int:
    """Number of path segments of a partition path (`""` -> 0, `2023/04/01/12` -> 4)."""
    return len([p for p in partition_path.strip("/").split("/") if p])


def format_partition_metadata(commit_time: str, depth: int, *, now: datetime | None = None) -> bytes:
    if not commit_time.isdigit():
        raise PartitionMetadataError(f"partition metadata commitTime {commit_time!r}: expected an instant time")
    if depth < 0:
        raise PartitionMetadataError(f"partition metadata partitionDepth {depth}: expected >= 0")
    text = format_properties(
        {COMMIT_TIME_KEY: commit_time, PARTITION_DEPTH_KEY: str(depth)},
        ["partition metadata", java_date_string(now)],
    )
    return text.encode("latin-1")


def parse_partition_metadata(data: bytes, *, source: str = PARTITION_METAFILE) -> dict:
    """{"commitTime": str, "partitionDepth": int, plus any other keys as strings}."""
    try:
        props: dict = parse_properties(data)
    except PropertiesError as e:
        raise PartitionMetadataError(f"{source}: {e}") from None
    for key in (COMMIT_TIME_KEY, PARTITION_DEPTH_KEY):
        if key not in props:
            raise PartitionMetadataError(f"{source}: key {key} is missing (found {sorted(props)})")
    try:
        props[PARTITION_DEPTH_KEY] = int(props[PARTITION_DEPTH_KEY])
    except ValueError:
        raise PartitionMetadataError(
            f"{source}: {PARTITION_DEPTH_KEY}={props[PARTITION_DEPTH_KEY]!r} is not an integer"
        ) from None
    return props


def format_partition_metadata_parquet(commit_time: str, depth: int) -> bytes:
    """`.hoodie_partition_metadata.parquet`: no rows, the two keys in the footer's key-value metadata."""
    format_partition_metadata(commit_time, depth)  # the same checks of both values
    table = pa.table({"dummyint": pa.array([], pa.int64())})
    table = table.replace_schema_metadata({COMMIT_TIME_KEY: commit_time, PARTITION_DEPTH_KEY: str(depth)})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="NONE")  # also stores ARROW:schema there: readers ask for their keys
    return sink.getvalue().to_pybytes()


def parse_partition_metadata_parquet(data: bytes, *, source: str = PARQUET_PARTITION_METAFILE) -> dict:
    """{"commitTime": str, "partitionDepth": int, plus any other footer keys as strings}."""
    try:
        footer = pq.ParquetFile(pa.BufferReader(data)).metadata.metadata or {}
    except (OSError, pa.ArrowException) as e:
        raise PartitionMetadataError(f"{source}: not a parquet file ({e})") from None
    text = "".join(f"{k.decode()}={v.decode()}\n" for k, v in footer.items() if not k.startswith(b"ARROW:"))
    return parse_partition_metadata(text.encode("latin-1"), source=source)
