"""Hudi's repair procedures on a table's partition metafiles and `hoodie.properties`: `repair_add_partition_meta`,
`repair_migrate_partition_meta`, `repair_overwrite_hoodie_props` (`repair_corrupted_clean_files` is with the
services), and `repair_deduplicate` on a partition's base files. The partition ones change files only without `dry_run` (default true, as Hudi); all run under the table
lock."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.file_naming import is_base_file_name, is_log_file_name
from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.io.base_file import (
    RECORD_KEY_COLUMN,
    read_base_file,
    read_footer,
    read_record_keys,
    write_base_file,
)
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
from hudi_engine.schema import META_COLUMNS
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


COMMIT_TIME_COLUMN = META_COLUMNS[0]  # _hoodie_commit_time
# repair_deduplicate's dedupe types (Hudi's DeDupeType): which copies of a duplicated key a file loses.
DEDUPE_TYPES = ("insert_type", "update_type", "upsert_type")


def repair_deduplicate(args: Arguments) -> list[Row]:
    """Hudi's DedupeSparkJob on one partition's latest base files (of completed commits; log files are not read, as
    Hudi's job reads none): keys stored more than once are found, each file losing the copies `dedupe_type` says
    (`insert_type`: those older than the key's newest commit; `update_type`: all but one; `upsert_type`: the older
    ones, then all but one of the newest; copies within one file too), written to `repaired_output_path` (every latest file, the fixed ones
    rewritten with their footer's bloom filter and key range made afresh). Refused, nothing copied back, when a key
    is still duplicated or one was lost. Without `dry_run` the fixed files replace the originals under their names,
    under the table lock, as Hudi's job copies them back (no commit); a metadata table is disabled first, since its
    file sizes would no longer hold."""
    kind = str(args["dedupe_type"]).lower()
    if kind not in DEDUPE_TYPES:
        raise ConfigError(f"Please provide valid dedupe type! (dedupe_type => {args['dedupe_type']!r}; one of "
                          f"{', '.join(DEDUPE_TYPES)})")
    table = HudiTable.load(args.table_path())
    partition = str(args["duplicated_partition_path"]).strip("/")
    out_storage, out_folder = Storage.for_uri(args["repaired_output_path"])
    files = _latest_base_files(table, partition)
    storage = table.location.storage
    drop = _dedupe_plan(storage, files, kind)
    fixed: dict[str, str] = {}
    for path in files:
        name = path.rsplit("/", 1)[-1]
        target = Storage.join(out_folder, name)
        if path in drop:
            rows = read_base_file(storage, path)
            keep = np.ones(rows.num_rows, dtype=bool)
            keep[sorted(drop[path])] = False
            write_base_file(out_storage, target, rows.filter(pa.array(keep)),
                            **read_footer(storage, path).rewrite_options())
        else:
            out_storage.write_bytes(target, storage.read_bytes(path))
        fixed[path] = target
    _check_fixed(storage, files, out_storage, list(fixed.values()))
    if args["dry_run"]:
        return [(f"Deduplicated files placed in: {args['repaired_output_path']}.",)]
    with _locked(table):
        TableConfig.load(table.location).disable_metadata_table(
            table.location, "CALL repair_deduplicate rewrote base files in place")
        for path, target in fixed.items():
            storage.write_bytes(path, out_storage.read_bytes(target))
    return [(f"Deduplicated files placed in: {args['duplicated_partition_path']}.",)]


def _latest_base_files(table: HudiTable, partition: str) -> list[str]:
    if not table.config.populate_meta_fields:
        raise ConfigError(f"repair_deduplicate: table {table.config.name!r} ({table.base_path}) stores no "
                          "_hoodie_record_key (hoodie.populate.meta.fields=false): nothing to find duplicates by")
    view = FileSystemView.for_partitions(table.location, [partition], slicing_for(table.timeline))
    files = sorted(s.base_file.path for s in view.latest_file_slices(Visibility.of(table.timeline), partition)
                   if s.base_file is not None)
    if not files:
        raise ConfigError(f"repair_deduplicate: partition {partition!r} of table {table.config.name!r} "
                          f"({table.base_path}) has no base file of a completed commit")
    return files


def _dedupe_plan(storage: Storage, files: list[str], kind: str) -> dict[str, set[int]]:
    """File -> the positions of the rows it loses (DedupeSparkJob.getDedupePlan, which names keys per file: copies
    of a key within one file are then all dropped, and its check fails; rows here, so they are told apart). Copies
    of one key are ordered by commit time, file and row: `update_type` keeps the last (Hudi keeps whichever Spark
    collected last)."""
    tables = []
    for i, path in enumerate(files):
        t = read_base_file(storage, path, [RECORD_KEY_COLUMN, COMMIT_TIME_COLUMN])
        tables.append(t.append_column("file", pa.array(np.full(t.num_rows, i, dtype=np.int32)))
                      .append_column("row", pa.array(np.arange(t.num_rows, dtype=np.int64))))
    rows = pa.concat_tables(tables)
    counts = rows.group_by(RECORD_KEY_COLUMN).aggregate([(COMMIT_TIME_COLUMN, "count"),
                                                          (COMMIT_TIME_COLUMN, "max")])
    dupes = counts.filter(pc.greater(counts[f"{COMMIT_TIME_COLUMN}_count"], 1))
    if dupes.num_rows == 0:
        return {}
    copies = rows.join(dupes.select([RECORD_KEY_COLUMN, f"{COMMIT_TIME_COLUMN}_max"]), RECORD_KEY_COLUMN,
                       join_type="inner")
    copies = copies.sort_by([(RECORD_KEY_COLUMN, "ascending"), (COMMIT_TIME_COLUMN, "ascending"),
                             ("file", "ascending"), ("row", "ascending")]).combine_chunks()
    keys = np.asarray(copies[RECORD_KEY_COLUMN].to_pylist(), dtype=object)
    newest = np.asarray(pc.equal(copies[COMMIT_TIME_COLUMN], copies[f"{COMMIT_TIME_COLUMN}_max"]), dtype=bool)
    last_of_key = np.append(keys[1:] != keys[:-1], True)
    if kind == "insert_type":
        lose = ~newest
    elif kind == "update_type":
        lose = ~last_of_key
    else:  # upsert_type: the older copies, then all newest copies but one
        lose = ~newest | (newest & ~last_of_key)
    plan: dict[str, set[int]] = {}
    for file, row in zip(np.asarray(copies["file"])[lose], np.asarray(copies["row"])[lose], strict=True):
        plan.setdefault(files[int(file)], set()).add(int(row))
    return plan


def _check_fixed(storage: Storage, files: list[str], out_storage: Storage, fixed: list[str]) -> None:
    """DedupeSparkJob's checks before anything is copied back: no key stored twice, no key lost."""
    before = pa.concat_arrays([read_record_keys(storage, p) for p in files]).unique()
    after = pa.concat_arrays([read_record_keys(out_storage, p) for p in fixed])
    if len(after.unique()) != len(after):
        raise HudiError(f"repair_deduplicate: Still found some duplicates!!.. Inspect output ({len(after)} records, "
                        f"{len(after.unique())} keys in the fixed files); nothing was copied back")
    lost = pc.invert(pc.is_in(before, after.unique()))
    if pc.any(lost).as_py():
        raise HudiError(f"repair_deduplicate: Some records in source are not found in fixed files. Inspect output!! "
                        f"(e.g. {before.filter(lost)[0]}); nothing was copied back")
