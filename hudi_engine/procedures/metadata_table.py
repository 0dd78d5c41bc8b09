"""The metadata-table procedures: `create_metadata_table`, `init_metadata_table`, `delete_metadata_table` (through
`hudi_engine.metadata.initialization` and `TableConfig.disable_metadata_table`, under the table lock), and the
views `show_metadata_table_partitions`, `show_metadata_table_files`, `show_metadata_table_stats` and
`validate_metadata_table_files` (the `files` partition as `hudi_engine.metadata.table` reads it, against storage),
and `show_metadata_table_column_stats` (a Java-built `column_stats` partition, read). `show_metadata_column_stats_overlap`
stays refused."""
from __future__ import annotations

import time

from hudi_engine.errors import ConfigError
from hudi_engine.file_naming import is_base_file_name, is_log_file_name
from hudi_engine.fs_view import FileSystemView, Visibility, list_partitions, slicing_for
from hudi_engine.location import TableLocation
from hudi_engine.metadata.initialization import initialize
from hudi_engine.metadata.table import FilesPartition, MetadataTable, metadata_location
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import check_writable
from hudi_engine.table_services import service_lock_at
from hudi_engine.timeline import Timeline

_NOT_ENABLED = "Metadata Table not enabled/initialized."  # Hudi's message


def _location(args: Arguments, path: str | None = None) -> TableLocation:
    return TableLocation.of(path or args.table_path())


def _metadata_table(location: TableLocation) -> MetadataTable:
    """The table's metadata table; refused as Hudi refuses a table without one."""
    config = TableConfig.load(location)
    if not config.is_metadata_table_enabled:
        raise ConfigError(f"{_NOT_ENABLED} (table {location.base_path}: hoodie.table.metadata.partitions does not "
                          "list files; CALL create_metadata_table(table => ...) creates it)")
    return MetadataTable.load(location, config, Timeline.load(location))


def _files(location: TableLocation) -> FilesPartition:
    """The metadata table's `files` partition as Hudi's reader merges it."""
    return _metadata_table(location).read_files_partition()


def _seconds(started: float) -> float:
    return round(time.monotonic() - started, 3)


def create_metadata_table(args: Arguments) -> list[Row]:
    """Create the metadata table with its `files` partition from a listing; refused, as Hudi refuses it, when
    `.hoodie/metadata` already holds anything."""
    location = _location(args)
    folder = metadata_location(location).base_path
    if location.storage.list_dir(folder):
        raise ConfigError(f"Metadata directory ({folder}) not empty. (CALL delete_metadata_table first to build it "
                          "again)")
    started = time.monotonic()
    _initialize(location, "create the metadata table")
    return [(f"Created Metadata Table in {folder} (duration={_seconds(started)}secs)",)]


def init_metadata_table(args: Arguments) -> list[Row]:
    """Hudi's init: the metadata folder must exist; `read_only` opens it, else a table whose `hoodie.properties`
    does not list `files` gets it built (as Hudi's metadata writer initialises a missing partition)."""
    location = _location(args)
    folder = metadata_location(location).base_path
    if not location.storage.exists(folder):
        raise ConfigError(f"Metadata directory ({folder}) does not exist. (CALL create_metadata_table(table => ...) "
                          "creates it)")
    started = time.monotonic()
    if args["read_only"]:
        _files(location)
        return [(f"Opened Metadata Table in {folder} (duration={_seconds(started)}sec)",)]
    if not TableConfig.load(location).is_metadata_table_enabled:
        _initialize(location, "initialize the metadata table")
    return [(f"Initialized Metadata Table in {folder} (duration={_seconds(started)}sec)",)]


def _initialize(location: TableLocation, action: str) -> None:
    with service_lock_at(location):
        config = TableConfig.load(location)
        timeline = Timeline.load(location)
        check_writable(location, config, timeline, action=action)
        initialize(location, config, timeline)


def delete_metadata_table(args: Arguments) -> list[Row]:
    """Disable the metadata table of each table of `table` (comma-separated) the way every Hudi writer disables it.
    The answer is Hudi's, its leading comma included."""
    paths = ""
    for name in str(args["table"]).split(","):
        location = _location(args, _resolve(args, name.strip()))
        with service_lock_at(location):
            TableConfig.load(location).disable_metadata_table(location, "CALL delete_metadata_table")
        paths += "," + metadata_location(location).base_path
    return [(f"Deleted Metadata Table at '{paths}'",)]


def _resolve(args: Arguments, name: str) -> str:
    one = Arguments(args.procedure, {**args.values, "table": name}, args.resolver, args.session)
    return one.table_path()


def show_metadata_table_partitions(args: Arguments) -> list[Row]:
    return [(p,) for p in _files(_location(args)).partitions]


def show_metadata_table_files(args: Arguments) -> list[Row]:
    """The file names the metadata table lists for `partition` (the table's base path when empty), sorted."""
    names = sorted(_files(_location(args)).files(args["partition"] or ""))
    limit = args["limit"]
    return [(n,) for n in (names[:limit] if limit is not None and limit >= 0 else names)]


def show_metadata_table_stats(args: Arguments) -> list[Row]:
    """The sizes and counts of the metadata table's latest file slices per partition, and the data table's partition
    count: what Hudi's `HoodieMetadataMetrics.getStats` gives (Java's procedure prints them only when its metadata
    metrics are on; the engine always does)."""
    table = _metadata_table(_location(args))
    files = table.read_files_partition()
    view = FileSystemView.load(table.location, slicing=slicing_for(table.timeline))
    stats: dict[str, str] = {}
    for partition in table.data_config.metadata_partitions:
        slices = view.latest_file_slices(Visibility.of(table.timeline), partition)
        bases = [s.base_file.size for s in slices if s.base_file is not None]
        logs = [f.size for s in slices for f in s.log_files]
        stats |= {f"{partition}.totalBaseFileSizeInBytes": str(sum(bases)),
                  f"{partition}.totalLogFileSizeInBytes": str(sum(logs)),
                  f"{partition}.baseFileCount": str(len(bases)), f"{partition}.logFileCount": str(len(logs))}
    stats["partitionCount"] = str(len(files.partitions))
    return sorted(stats.items())


def show_metadata_table_column_stats(args: Arguments) -> list[Row]:
    """The column stats of `targetColumns` (comma-separated) for the base files of the latest file slices, in
    `partition` (comma-separated partition paths) or in every partition the metadata table lists, sorted by column
    and file, as Hudi 1.2's procedure gives them: min and max printed as Java prints them ("null" for none), and the
    null count. Without `targetColumns` Hudi looks up the column "" and so finds nothing; so does the engine."""
    location = _location(args)
    table = _metadata_table(location)
    columns = (args["targetColumns"] or "").split(",")
    stats = table.read_column_stats(columns)
    asked = [p for p in (args["partition"] or "").split(",") if p]
    partitions = asked or table.read_files_partition().partitions
    view = FileSystemView.for_partitions(location, partitions, slicing_for(table.data_timeline))
    visibility = Visibility.of(table.data_timeline)
    # Hudi takes every latest slice's base file; a slice of log files only (merge-on-read) has none to show.
    names = {s.base_file.path.rsplit("/", 1)[-1] for p in partitions
             for s in view.latest_file_slices(visibility, p) if s.base_file is not None}
    rows = [(c.file_name, c.column_name, c.min_value.text() if c.min_value else "null",
             c.max_value.text() if c.max_value else "null", c.null_count)
            for c in stats.values() if c.file_name in names]
    return sorted(rows, key=lambda r: (r[1], r[0]))


def validate_metadata_table_files(args: Arguments) -> list[Row]:
    """Every data file of every partition, as storage lists it and as the metadata table does; with `verbose`
    false only those that differ (missing on one side, or of another size). Storage counts the base and log files
    in a partition folder, those of pending or failed writes too, as Hudi's listing does."""
    location = _location(args)
    files = _files(location)
    storage = location.storage
    partitions = sorted(set(files.partitions) | set(list_partitions(location)))
    rows: list[Row] = []
    for partition in partitions:
        listed = {e.name: e.size for e in storage.list_dir(location.join(partition))
                  if not e.is_dir and (is_base_file_name(e.name) or is_log_file_name(e.name))}
        recorded = files.files(partition)
        for name in sorted(set(listed) | set(recorded)):
            in_fs, in_md = name in listed, name in recorded
            fs_size, md_size = listed.get(name, 0), recorded.get(name, 0)
            if args["verbose"] or in_fs != in_md or fs_size != md_size:
                rows.append((partition, name, in_fs, in_md, fs_size, md_size))
    return rows
