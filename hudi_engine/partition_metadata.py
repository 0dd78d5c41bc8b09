"""`.hoodie_partition_metadata` (FORMAT.md, Partition metadata): the marker file that makes a folder a Hudi partition.

Text properties (`HoodiePartitionMetadata`, default text format):
    #partition metadata
    #<java.util.Date.toString()>
    commitTime=<instant that created the partition>
    partitionDepth=<number of path segments; 0 for the base path of a non-partitioned table>
"""
from __future__ import annotations

from datetime import datetime

from .errors import HudiError
from .java_properties import PropertiesError, format_properties, java_date_string, parse_properties

PARTITION_METAFILE = ".hoodie_partition_metadata"
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
