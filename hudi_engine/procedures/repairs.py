"""Hudi's repair procedures on a table's partition metafiles and `hoodie.properties`: `repair_add_partition_meta`,
`repair_migrate_partition_meta`, `repair_overwrite_hoodie_props` (`repair_corrupted_clean_files` is with the
services). The partition ones change files only without `dry_run` (default true, as Hudi); all run under the table
lock."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.file_naming import is_base_file_name, is_log_file_name
from hudi_engine.java_properties import PropertiesError, parse_properties
from hudi_engine.location import TableLocation
from hudi_engine.partition_metadata import (
    PARQUET_PARTITION_METAFILE,
    PARTITION_METAFILE,
    PARTITION_METAFILES,
    format_partition_metadata_parquet,
    partition_depth,
)
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row
from hudi_engine.storage import Storage
from hudi_engine.table import HudiTable
from hudi_engine.table_config import CHECKSUM, PARTITION_METAFILE_USE_BASE_FORMAT, TableConfig
from hudi_engine.table_services import held_by_caller
from hudi_engine.write.commit import write_partition_metadata
from hudi_engine.write.lock import table_lock


@contextmanager
def _locked(table: HudiTable) -> Iterator[None]:
    """The table lock, taken with the table as loaded (a table the engine only reads is refused); a metadata table is
    kept: it records neither partition metafiles nor hoodie.properties."""
    with table_lock(table.location, table_name=table.config.name, table=table.config, timeline=table.timeline), \
            held_by_caller(table.location):
        yield


def _folders(location: TableLocation) -> list[tuple[str, set[str]]]:
    """Every folder of the table outside `.hoodie` (relative path, its file names), parents first, sorted."""
    out: list[tuple[str, set[str]]] = []
    level = [""]
    while level:
        below: list[str] = []
        for rel in level:
            entries = location.storage.list_dir(location.join(rel))
            out.append((rel, {e.name for e in entries if not e.is_dir}))
            below += [f"{rel}/{e.name}" if rel else e.name for e in entries
                      if e.is_dir and not (rel == "" and e.name.startswith("."))]
        level = sorted(below)
    return sorted(out)


def _latest_commit(table: HudiTable, procedure: str) -> str:
    latest = table.timeline.completed_commits().last()
    if latest is None:
        raise ConfigError(f"{procedure}: table {table.config.name!r} ({table.base_path}) has no completed commit")
    return latest.timestamp


def repair_add_partition_meta(args: Arguments) -> list[Row]:
    """Every folder holding Hudi data files (base or log files): whether it has a partition metafile; without
    `dry_run` a missing one is written (text, or parquet as the table says), with the latest commit as its
    `commitTime`, as Hudi does. Hudi looks only three levels down (`yyyy/mm/dd` partitions); this looks at every
    level, so tables partitioned otherwise are repaired too."""
    table = HudiTable.load(args.table_path())
    latest = _latest_commit(table, "repair_add_partition_meta")
    rows: list[Row] = []
    with _locked(table):
        for rel, names in _folders(table.location):
            if not any(is_base_file_name(n) or is_log_file_name(n) for n in names):
                continue
            present = any(n in PARTITION_METAFILES for n in names)
            action = "None"
            if not present and not args["dry_run"]:
                write_partition_metadata(table.location, rel, latest,
                                         base_format=table.config.partition_metafile_use_base_format)
                action = "Repaired"
            rows.append((rel, "Yes" if present else "No", action))
    return rows


def repair_migrate_partition_meta(args: Arguments) -> list[Row]:
    """Every partition (a folder with a metafile): whether it has the text and the parquet metafile; without
    `dry_run` the parquet one is written where missing (the latest commit as its `commitTime`, as Hudi), the text
    one deleted, and `hoodie.partition.metafile.use.base.format=true` set in `hoodie.properties` (Hudi sets it even in
    a dry run; here a dry run changes nothing)."""
    table = HudiTable.load(args.table_path())
    latest = _latest_commit(table, "repair_migrate_partition_meta")
    location, storage = table.location, table.storage
    rows: list[Row] = []
    with _locked(table):
        for rel, names in _folders(location):
            if not any(n in PARTITION_METAFILES for n in names):
                continue
            text, base = PARTITION_METAFILE in names, PARQUET_PARTITION_METAFILE in names
            action = "MIGRATE" if text else "NONE"
            if not args["dry_run"]:
                folder = location.join(rel)
                if not base:
                    storage.create_exclusive(Storage.join(folder, PARQUET_PARTITION_METAFILE),
                                             format_partition_metadata_parquet(latest, partition_depth(rel)))
                if text:
                    storage.delete(Storage.join(folder, PARTITION_METAFILE))
                action = "MIGRATED"
            rows.append((rel, str(text).lower(), str(base).lower(), action))
        if not args["dry_run"]:
            TableConfig.load(location).with_props({PARTITION_METAFILE_USE_BASE_FORMAT: "true"}).save(location)
    return rows


def repair_overwrite_hoodie_props(args: Arguments) -> list[Row]:
    """Replace `hoodie.properties` with the properties file at `new_props_file_path` (its checksum made afresh, as
    Hudi's HoodieTableConfig.create does): one row per key of either, sorted, with the old and new value (`null`
    where a side lacks it). A file that is not a table config this engine can load is refused, nothing written."""
    table = HudiTable.load(args.table_path())
    source = args["new_props_file_path"]
    storage, path = Storage.for_uri(source)
    try:
        new_props = parse_properties(storage.read_bytes(path))
    except (OSError, PropertiesError) as e:
        raise ConfigError(f"Argument: new_props_file_path of repair_overwrite_hoodie_props: {source} cannot be read "
                          f"as a properties file: {e}") from None
    try:
        config = TableConfig.from_properties({k: v for k, v in new_props.items() if k != CHECKSUM}, source)
    except HudiError as e:
        raise ConfigError(f"repair_overwrite_hoodie_props: {source} is not a table config this engine can load: {e}; "
                          "nothing was written") from None
    with _locked(table):
        old = dict(TableConfig.load(table.location).props)
        config.save(table.location)
        new = dict(TableConfig.load(table.location).props)
    return [(key, old.get(key, "null"), new.get(key, "null")) for key in sorted(set(old) | set(new))]
