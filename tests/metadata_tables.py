"""Metadata tables for the tests (hudi_engine/metadata): a Java-written table's metadata table cut down to its `files`
partition (what this engine keeps), and the listings to compare it with."""
from __future__ import annotations

import shutil
from pathlib import Path

from hudi_engine.fs_view import FileSystemView
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for


def files_only(table: Path) -> Path:
    """Drop every metadata partition but `files` from the table at `table` (its folder and its name in
    hoodie.properties), as Hudi leaves a table whose other indexes were dropped."""
    meta = table / ".hoodie" / "metadata"
    for p in meta.iterdir():
        if p.is_dir() and p.name not in ("files", ".hoodie"):
            shutil.rmtree(p)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    config.with_props({"hoodie.table.metadata.partitions": "files",
                       "hoodie.table.metadata.partitions.inflight": None}).save(location)
    return table


def mdt_listing(table: Path) -> dict[str, dict[str, int]]:
    """Partition -> file -> size, as the table's metadata table lists them."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    return MetadataTable.load(location, config, Timeline.load(location, layout_for(config))).read_files_partition() \
        .listing()


def storage_listing(table: Path) -> dict[str, dict[str, int]]:
    """Partition -> file -> size of every data file (base, log and CDC log files) in storage."""
    out: dict[str, dict[str, int]] = {}
    for group in FileSystemView.load(TableLocation.of(str(table))).file_groups():
        for s in group.slices.values():
            for f in ([s.base_file] if s.base_file else []) + s.log_files + s.cdc_log_files:
                out.setdefault(group.partition_path, {})[f.path.rsplit("/", 1)[-1]] = f.size
    return out
