"""File-system view: which file slices a reader sees as of an instant (FORMAT.md, File-system view).

Files are found by listing storage (a partition is a folder holding `.hoodie_partition_metadata`), grouped
into file groups and slices, then filtered against the timeline: slices of uncommitted instants are hidden,
base files of a pending compaction are ignored and its log files merged into the previous slice, and file
groups replaced by a completed replacecommit are hidden.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hudi_engine.file_group import (
    BY_BASE_INSTANT,
    BaseFile,
    FileGroup,
    FileSlice,
    FileSlicing,
    LogFile,
    SliceByCompletionTime,
)
from hudi_engine.file_naming import CDC_SUFFIX, BaseFileName, LogFileName, is_base_file_name, is_log_file_name
from hudi_engine.location import TableLocation
from hudi_engine.partition_metadata import PARTITION_METAFILES
from hudi_engine.storage import FileStatus
from hudi_engine.timeline import META_FOLDER, Timeline


@dataclass(frozen=True, slots=True)
class Visibility:
    """What a query as of one instant may see: the commit-like instants and where the timeline starts."""

    as_of: str | None
    completed: frozenset[str]
    pending_compactions: frozenset[str]
    timeline_start: str | None
    replaced: frozenset[tuple[str, str]]
    # How log files join slices on this timeline (`slicing_for`): views listed without it are sliced again by it.
    slicing: FileSlicing = BY_BASE_INSTANT

    @staticmethod
    def of(timeline: Timeline, as_of: str | None = None) -> "Visibility":
        commits = timeline.commits_timeline()
        completed = frozenset(
            i.timestamp for i in commits if i.is_completed and (as_of is None or i.timestamp <= as_of)
        )
        pending = frozenset(i.timestamp for i in commits if i.is_pending_compaction)
        start = commits.timeline_start()
        replaced: set[tuple[str, str]] = set()
        for instant in timeline.completed_replace_commits():
            if as_of is None or instant.timestamp <= as_of:
                meta = timeline.commit_metadata(instant)
                for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                    replaced.update((partition, f) for f in file_ids)
        return Visibility(as_of, completed, pending, start, frozenset(replaced), slicing_for(timeline))

    def is_committed(self, instant_time: str) -> bool:
        """A data file's instant is visible: completed (up to as_of), or older than the active timeline."""
        if self.as_of is not None and instant_time > self.as_of:
            return False
        if instant_time in self.completed:
            return True
        return self.timeline_start is None or instant_time < self.timeline_start

    @property
    def latest_instant(self) -> str | None:
        """The instant a log scan stops after: as_of, or the latest completed commit-like instant."""
        return self.as_of or (max(self.completed) if self.completed else None)


class FileSystemView:
    """File groups of a table, listed once; slices are filtered per query with a `Visibility`."""

    def __init__(self, location: TableLocation, partitions: dict[str, list[FileGroup]],
                 slicing: FileSlicing = BY_BASE_INSTANT) -> None:
        self.location = location
        self.storage = location.storage
        self.base_path = location.base_path
        self._partitions = partitions
        self._slicing = slicing

    def sliced_by(self, slicing: FileSlicing) -> "FileSystemView":
        """This view with its log files put into slices by `slicing` (itself when it already is): a writer lists
        partitions once and slices them the way its timeline says (by completion time in timeline layout 2)."""
        if slicing == self._slicing:
            return self
        return FileSystemView(self.location,
                              {p: _regroup(p, groups, slicing) for p, groups in self._partitions.items()}, slicing)

    @staticmethod
    def load(
        location: TableLocation,
        partition_filter: Callable[[str], bool] | None = None,
        slicing: FileSlicing = BY_BASE_INSTANT,
    ) -> "FileSystemView":
        """Every partition's file groups; `slicing` is the table's rule for log files (`slicing_for`)."""
        # One listing per folder: a partition's entries come with the walk that finds it.
        return FileSystemView(location, {
            rel: _file_groups(rel, entries, slicing) for rel, entries in _folders(location)
            if _is_partition(entries) and (partition_filter is None or partition_filter(rel))}, slicing)

    @staticmethod
    def load_within(location: TableLocation, max_folders: int,
                    slicing: FileSlicing = BY_BASE_INSTANT) -> "FileSystemView | None":
        """Every partition's file groups, one listing per folder, when the table has at most `max_folders` folders;
        None (after at most `max_folders + 1` listings) when it has more."""
        folders = list(itertools.islice(_folders(location), max_folders + 1))
        if len(folders) > max_folders:
            return None
        return FileSystemView(location, {rel: _file_groups(rel, entries, slicing)
                                         for rel, entries in folders if _is_partition(entries)}, slicing)

    @staticmethod
    def for_partitions(location: TableLocation, partitions: Iterable[str],
                       slicing: FileSlicing = BY_BASE_INSTANT) -> "FileSystemView":
        """The view of known partitions only: one listing per partition folder, none of the rest of the table."""
        return FileSystemView(location, {p: _list_file_groups(location, p, slicing) for p in partitions}, slicing)

    @staticmethod
    def from_listing(location: TableLocation, listing: Mapping[str, Mapping[str, int]],
                     slicing: FileSlicing = BY_BASE_INSTANT) -> "FileSystemView":
        """The view of a listing known without storage (partition -> file name -> size; a metadata table's `files`
        partition): no LIST call."""
        return FileSystemView(location, {
            p: _file_groups(p, [FileStatus(location.join(f"{p}/{n}" if p else n), n, size, False)
                                for n, size in files.items()], slicing)
            for p, files in listing.items()}, slicing)

    @property
    def partition_paths(self) -> list[str]:
        return sorted(self._partitions)

    def file_groups(self, partition: str | None = None) -> Iterable[FileGroup]:
        parts = self._partitions if partition is None else {partition: self._partitions.get(partition, [])}
        for groups in parts.values():
            yield from groups

    def latest_file_slices(self, visibility: Visibility, partition: str | None = None) -> list[FileSlice]:
        """The latest visible slice of every visible file group, pending-compaction logs merged in (log files
        sliced as `visibility` says)."""
        out = []
        for group in self.sliced_by(visibility.slicing).file_groups(partition):
            if (group.partition_path, group.file_id) in visibility.replaced:
                continue
            merged = _latest_merged_slice(group, visibility)
            if merged is not None and not merged.is_empty:
                out.append(merged)
        return out


def list_partitions(location: TableLocation) -> list[str]:
    """Relative partition paths: folders holding the partition metafile, `""` for the base path itself."""
    return sorted(rel for rel, entries in _folders(location) if _is_partition(entries))


# Folders listed at once: an object store answers each LIST in tens of milliseconds, one folder after another
# would add up to seconds for a table of a few hundred partitions.
LISTING_THREADS = 16


def _folders(location: TableLocation) -> Iterator[tuple[str, list[FileStatus]]]:
    """Every folder of the table outside the meta folder (its relative path and entries), a level of the tree at a
    time, up to LISTING_THREADS folders listed at once; a caller that stops early has listed at most that many
    folders more than it took."""
    def listed(rel: str) -> list[FileStatus]:
        return location.storage.list_dir(location.join(rel))

    level = [""]
    with ThreadPoolExecutor(LISTING_THREADS, thread_name_prefix="hudi-list") as pool:
        while level:
            below: list[str] = []
            for i in range(0, len(level), LISTING_THREADS):
                chunk = level[i:i + LISTING_THREADS]
                for rel, entries in zip(chunk, pool.map(listed, chunk) if len(chunk) > 1 else [listed(chunk[0])]):
                    yield rel, entries
                    below += [f"{rel}/{e.name}" if rel else e.name for e in entries
                              if e.is_dir and not (rel == "" and e.name == META_FOLDER) and not e.name.startswith(".")]
            level = below


def _is_partition(entries: list[FileStatus]) -> bool:
    return any(e.name in PARTITION_METAFILES for e in entries if not e.is_dir)


def slicing_for(timeline: Timeline) -> FileSlicing:
    """How the table's log files are sliced: by the instant in their names (layout 1) or by completion time."""
    if not timeline.layout.slices_by_completion_time:
        return BY_BASE_INSTANT
    return SliceByCompletionTime(timeline.completion_times(), timeline.timeline_start())


def _list_file_groups(location: TableLocation, partition: str, slicing: FileSlicing) -> list[FileGroup]:
    return _file_groups(partition, location.storage.list_dir(location.join(partition)), slicing)


def _file_groups(partition: str, entries: list[FileStatus], slicing: FileSlicing) -> list[FileGroup]:
    groups: dict[str, FileGroup] = {}
    logs: list[LogFile] = []
    for entry in entries:
        if entry.is_dir:
            continue
        if is_base_file_name(entry.name):
            base = BaseFileName.parse(entry.name)
            group = groups.setdefault(base.file_id, FileGroup(partition, base.file_id))
            group.slice_for(base.instant_time).base_file = BaseFile(base, entry.path, entry.size)
        elif is_log_file_name(entry.name):
            logs.append(LogFile(LogFileName.parse(entry.name), entry.path, entry.size))
    # Base files first, then log files in log order: where a log file goes may depend on the slices so far.
    for log in sorted(logs, key=lambda f: f.name.sort_key):
        group = groups.setdefault(log.name.file_id, FileGroup(partition, log.name.file_id))
        s = group.slice_for(slicing.slice_of(group, log))
        (s.cdc_log_files if log.name.suffix == CDC_SUFFIX else s.log_files).append(log)
    return list(groups.values())


def _regroup(partition: str, groups: list[FileGroup], slicing: FileSlicing) -> list[FileGroup]:
    """`groups` with their log files put into slices by `slicing` (base files stay where they are)."""
    out: list[FileGroup] = []
    for group in groups:
        fresh = FileGroup(partition, group.file_id)
        logs = []
        for s in group.slices.values():
            if s.base_file is not None:
                fresh.slice_for(s.base_instant).base_file = s.base_file
            logs += [(log, False) for log in s.log_files] + [(log, True) for log in s.cdc_log_files]
        for log, cdc in sorted(logs, key=lambda e: e[0].name.sort_key):
            target = fresh.slice_for(slicing.slice_of(fresh, log))
            (target.cdc_log_files if cdc else target.log_files).append(log)
        out.append(fresh)
    return out


def _latest_merged_slice(group: FileGroup, vis: Visibility) -> FileSlice | None:
    """Walk slices newest first; a pending compaction slice contributes only its logs to the one before."""
    carried_logs: list[LogFile] = []
    for base_instant in sorted(group.slices, reverse=True):
        s = group.slices[base_instant]
        if vis.as_of is not None and base_instant > vis.as_of:
            continue
        if base_instant in vis.pending_compactions:
            carried_logs = s.sorted_log_files() + carried_logs
            continue
        if not vis.is_committed(base_instant):
            continue
        return FileSlice(
            s.partition_path, s.file_id, s.base_instant, s.base_file, s.sorted_log_files() + carried_logs
        )
    if carried_logs:  # only a pending compaction's logs: a log-only slice
        return FileSlice(group.partition_path, group.file_id, "", None, carried_logs)
    return None
