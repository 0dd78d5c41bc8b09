"""Metadata tables for the tests (hudi_engine/metadata): a Java-written table's metadata table cut down to its `files`
partition (what this engine keeps), and the listings to compare it with."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
from java_tables import CASES, unzip_feature_table

from hudi_engine import HudiTable
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


# ---- a files-only feature table the engine writes to

MDT_TABLES = {c.name: c for c in CASES if c.builder == "mdt"}
WRITE_OPTIONS = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
                 "hoodie.datasource.write.precombine.field": "ts"}


def feature_rows(ids: list[int], value: str) -> pa.Table:
    """Rows of the feature tables' schema: odd ids in partition a, even ones in b."""
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids), "ts": pa.array([9] * len(ids),
                     pa.int64()), "amount": [0.5] * len(ids), "p": ["a" if i % 2 else "b" for i in ids]})


def files_only_table(name: str, tmp_path: Path, *, mor: bool = False) -> Path:
    """Java's feature table `name` (tests/java_tables.py), its metadata table cut down to `files`; with `mor`, made
    MERGE_ON_READ (a table of base files only reads the same; the engine's updates then go to log files)."""
    table, _ = unzip_feature_table(MDT_TABLES[name], tmp_path)
    files_only(table)
    if mor:
        location = TableLocation.of(str(table))
        TableConfig.load(location).with_props({"hoodie.table.type": "MERGE_ON_READ"}).save(location)
    return table


def write_rows(table: Path, rows: pa.Table, operation: str = "upsert", **extra: str) -> str:
    """The engine's write of `rows` into the feature table at `table`; its instant."""
    loaded = HudiTable.load(str(table))
    return loaded.write(rows, {**WRITE_OPTIONS, "hoodie.table.name": loaded.config.name,
                               "hoodie.datasource.write.operation": operation, **extra}).instant_time
