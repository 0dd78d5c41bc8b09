"""The procedures that read the table's files and properties: `show_table_properties`, `show_fsview_all`,
`show_fsview_latest`, `stats_file_sizes`, `show_invalid_parquet` and `show_fs_path_detail`, as Hudi 1.2's procedures of those names show
them (paths as Hadoop prints them, log files as Hudi 1.2's HoodieLogFile.toString)."""
from __future__ import annotations

import fnmatch
import math

from hudi_engine.errors import ConfigError
from hudi_engine.file_group import FileSlice, LogFile
from hudi_engine.file_naming import BaseFileName, LogFileName, is_base_file_name, is_log_file_name
from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.location import META_FOLDER, TableLocation
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row
from hudi_engine.storage import FileStatus, Storage
from hudi_engine.table import HudiTable
from hudi_engine.timeline import Timeline

ALL_PARTITIONS = "ALL_PARTITIONS"


def _limit(rows: list[Row], args: Arguments) -> list[Row]:
    return rows[: max(args["limit"], 0)]


def qualified(path: str) -> str:
    """A path as Hadoop's Path prints it: local paths with their `file:` scheme."""
    return path if Storage.is_uri(path) else f"file:{path}"


def _log_files_text(logs: list[LogFile], separator: str = ", ") -> str:
    """Log files as Hudi's FileSlice lists them (newest first); show_fsview_all prints the list as Java does, with
    ", ", show_fsview_latest joins them with ","."""
    logs = sorted(logs, key=lambda f: f.name.sort_key, reverse=True)
    return "[" + separator.join(f"HoodieLogFile(pathStr={qualified(f.path)}, fileSize={f.size})" for f in logs) + "]"


def show_table_properties(args: Arguments) -> list[Row]:
    """`hoodie.properties` in the file's order."""
    table = HudiTable.load(args.table_path())
    return _limit([(k, v) for k, v in table.config.props.items()], args)


def _view(args: Arguments) -> tuple[HudiTable, FileSystemView, Timeline]:
    """The file groups of the partitions `path_regex` matches, and the timeline the call sees (`max_instant`,
    `include_max`, `include_in_flight`, `exclude_compaction`)."""
    table = HudiTable.load(args.table_path())
    timeline = table.timeline
    if not args["include_in_flight"]:
        timeline = timeline.filter(lambda i: i.is_completed or (i.is_pending_compaction and
                                                                not args["exclude_compaction"]))
    if args["exclude_compaction"]:
        timeline = timeline.filter(lambda i: not i.is_pending_compaction)
    max_instant = args["max_instant"]
    if max_instant:
        timeline = timeline.filter(lambda i: i.timestamp < max_instant or
                                   (args["include_max"] and i.timestamp == max_instant))
    pattern = args["path_regex"]
    keep = None if pattern in (ALL_PARTITIONS, "", "*") else (lambda p: fnmatch.fnmatchcase(p, pattern))
    view = FileSystemView.load(table.location, keep, slicing_for(table.timeline))
    return table, view, timeline


def show_fsview_all(args: Arguments) -> list[Row]:
    """Every file slice of every file group, newest slice first, as of the timeline the arguments select."""
    _, view, timeline = _view(args)
    visible = Visibility.of(timeline)
    rows: list[Row] = []
    for group in view.sliced_by(visible.slicing).file_groups():
        for base in sorted(group.slices, reverse=True):
            s = group.slices[base]
            if not (visible.is_committed(base) or base in visible.pending_compactions):
                continue
            rows.append(_slice_head(s) + (sum(f.size for f in s.log_files), _log_files_text(s.sorted_log_files())))
    return _limit(rows, args)


def _slice_head(s: FileSlice) -> Row:
    data_file = qualified(s.base_file.path) if s.base_file else ""
    size = s.base_file.size if s.base_file else -1
    return (s.partition_path, s.file_id, s.base_instant, data_file, size, len(s.log_files))


def show_fsview_latest(args: Arguments) -> list[Row]:
    """The latest slice of each file group. As Hudi 1.2 computes them, the "scheduled" sizes are of the log files
    whose delta commit completed (else "unscheduled"), while the "scheduled" file list is of the log files named with
    the slice's base instant (else "unscheduled")."""
    table, view, timeline = _view(args)
    visible = Visibility.of(timeline)
    completed = {i.timestamp for i in table.timeline if i.is_completed}
    start = table.timeline.timeline_start()

    def done(log: LogFile) -> bool:  # Hudi's CompletionTimeQueryView: archived instants completed too
        return log.base_instant in completed or (start is not None and log.base_instant < start)

    partition = args["partition_path"]
    slices = view.latest_file_slices(visible, None if partition in (ALL_PARTITIONS, "") else partition)
    rows: list[Row] = []
    for s in slices:
        logs = s.log_files
        base = s.base_file.size if s.base_file else -1
        in_done, in_pending = sum(f.size for f in logs if done(f)), sum(f.size for f in logs if not done(f))
        rows.append(_slice_head(s) + (
            sum(f.size for f in logs), in_done, in_pending,
            in_done / base if base > 0 else -1.0, in_pending / base if base > 0 else -1.0,
            _log_files_text([f for f in logs if f.base_instant == s.base_instant], ","),
            _log_files_text([f for f in logs if f.base_instant != s.base_instant], ",")))
    return _limit(rows, args)


def _glob(location: TableLocation, pattern: str) -> list[tuple[str, int]]:
    """(name, size) of the files `<base>/<pattern>/*` matches, those under or named like `.hoodie` left out (as
    Hudi's glob excluding the meta folder finds them: log files are in, partition metadata files out)."""
    folders = [location.base_path]
    for part in [p for p in pattern.split("/") if p]:
        nxt = []
        for folder in folders:
            nxt += [e.path for e in location.storage.list_dir(folder)
                    if e.is_dir and META_FOLDER not in e.name and fnmatch.fnmatchcase(e.name, part)]
        folders = nxt
    return [(e.name, e.size) for folder in folders for e in location.storage.list_dir(folder)
            if not e.is_dir and META_FOLDER not in e.name]


def _quantile(values: list[int], q: float) -> float:
    # Dropwizard's UniformSnapshot.getValue: linear between the two values around q * (n + 1).
    pos = q * (len(values) + 1)
    index = int(pos)
    if index < 1:
        return float(values[0])
    if index >= len(values):
        return float(values[-1])
    low, high = values[index - 1], values[index]
    return low + (pos - math.floor(pos)) * (high - low)


def _histogram(name: str, sizes: list[int]) -> Row:
    values = sorted(sizes)
    mean = sum(values) / len(values)
    # Dropwizard's sample standard deviation, summed in its order (the last digit matches Java's)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return (name, values[0], _quantile(values, 0.1), _quantile(values, 0.5), mean,
            _quantile(values, 0.95), values[-1], len(values), std)


def stats_file_sizes(args: Arguments) -> list[Row]:
    """Data file sizes (base and log files) per commit (the instant in the file's name), newest first, then over
    all files."""
    table = HudiTable.load(args.table_path())
    by_commit: dict[str, list[int]] = {}
    for name, size in _glob(table.location, args["partition_path"]):
        if is_base_file_name(name):
            instant = BaseFileName.parse(name).instant_time
        elif is_log_file_name(name):
            instant = LogFileName.parse(name).base_instant
        else:
            continue
        by_commit.setdefault(instant, []).append(size)
    if not by_commit:  # Hudi's empty histogram (partition_path => a glob of partition folders finds files)
        return [("ALL", 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0)]
    rows = [_histogram(commit, sizes) for commit, sizes in sorted(by_commit.items(), reverse=True)]
    rows.append(_histogram("ALL", [s for sizes in by_commit.values() for s in sizes]))
    return _limit(rows, args)


_PARQUET_MAGIC = b"PAR1"


def _not_parquet(location: TableLocation, entry: FileStatus) -> bool:
    """What parquet-mr's footer read calls "not a Parquet file": too short for the magic and footer length, or no
    magic number at the tail."""
    if entry.size < 2 * len(_PARQUET_MAGIC) + 4:
        return True
    with location.storage.open_input_file(entry.path) as f:
        f.seek(entry.size - len(_PARQUET_MAGIC))
        return f.read(len(_PARQUET_MAGIC)) != _PARQUET_MAGIC


def show_invalid_parquet(args: Arguments) -> list[Row]:
    """The `.parquet` files of the table's partitions (those starting with one of `partitions`, of the commits in
    `instants`, when given) that are not Parquet files; `needDelete => true` (deleting them) is refused."""
    if args["needDelete"]:
        raise ConfigError("Argument: needDelete => true of show_invalid_parquet is not served (deleting data files "
                          "outside a rollback or clean); list them, then roll back or repair the commit that wrote them")
    location = TableLocation.of(args.table_path())
    prefixes = [p.strip() for p in args["partitions"].split(",") if p.strip()]
    instants = {i.strip() for i in args["instants"].split(",") if i.strip()}
    partitions = [p for p in FileSystemView.load(location).partition_paths
                  if not prefixes or any(p.startswith(prefix) for prefix in prefixes)]
    rows: list[Row] = []
    for partition in partitions:
        for e in location.storage.list_dir(location.join(partition)):
            if e.is_dir or not e.name.endswith(".parquet"):
                continue
            if instants and (not is_base_file_name(e.name) or BaseFileName.parse(e.name).instant_time not in instants):
                continue
            if _not_parquet(location, e):
                rows.append((qualified(e.path),))
    return _limit(rows, args)


def _human_size(size: int) -> str:
    """Hudi's getFileSize: two decimals in the largest of GB, MB, KB that fits, else bytes."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.2f}{unit}"
    return f"{size}B"


def show_fs_path_detail(args: Arguments) -> list[Row]:
    """Hadoop's content summary of `path` (a glob), or with `is_sub` of each entry under it: folders, files, bytes;
    largest first (`sort`), else most files first, at most `limit`. `space_consumed` is the bytes (no replication
    outside HDFS); `quota` and `space_quota` are -1 (none), as Hadoop reports a folder without quotas. (Java's
    procedure puts the quota under `space_consumed` and the bytes under `quota`; here each is under its name.)"""
    storage, path = Storage.for_uri(args["path"])
    if args["is_sub"]:
        paths = [e.path for e in storage.list_dir(path)]
    elif any(c in path for c in "*?["):
        parent, _, pattern = path.rstrip("/").rpartition("/")
        paths = [e.path for e in storage.list_dir(parent or "/") if fnmatch.fnmatchcase(e.name, pattern)]
    else:
        paths = [path] if storage.exists(path) else []
    rows: list[Row] = []
    for p in paths:
        folders, files, size = storage.content_summary(p)
        rows.append((folders, files, size, _human_size(size), qualified(p) if not Storage.is_uri(args["path"]) else
                     f"{args['path'].split('://', 1)[0]}://{p}", size, -1, -1))
    rows.sort(key=lambda r: r[2] if args["sort"] else r[1], reverse=True)
    return rows if args["limit"] is None else rows[: max(args["limit"], 0)]
