"""Value types of a table's data files: base files, log files, file slices, file groups, and the rule that puts
a log file into a slice (`FileSlicing`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_engine.file_naming import BaseFileName, LogFileName


@dataclass(frozen=True, slots=True)
class BaseFile:
    name: BaseFileName
    path: str
    size: int

    @property
    def instant_time(self) -> str:
        return self.name.instant_time


@dataclass(frozen=True, slots=True)
class LogFile:
    name: LogFileName
    path: str
    size: int

    @property
    def base_instant(self) -> str:
        """The instant in the file's name: the slice's base instant (table version 6), or the delta commit
        that wrote the file (Hudi 1.x, where `SliceByCompletionTime` finds the slice)."""
        return self.name.base_instant


@dataclass(slots=True)
class FileSlice:
    """A base file (or none) and the log files written on top of it, keyed by the base instant."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)
    # CDC log files (`.cdc` suffix) of the slice: no reader merges them (Hudi's log readers filter them out),
    # the cleaner deletes them with the slice.
    cdc_log_files: list[LogFile] = field(default_factory=list)

    def sorted_log_files(self) -> list[LogFile]:
        return sorted(self.log_files, key=lambda f: f.name.sort_key)

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files


@dataclass(slots=True)
class FileGroup:
    """All versions (slices) of one logical file in a partition."""

    partition_path: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)

    def slice_for(self, base_instant: str) -> FileSlice:
        s = self.slices.get(base_instant)
        if s is None:
            s = self.slices[base_instant] = FileSlice(self.partition_path, self.file_id, base_instant)
        return s


@dataclass(frozen=True, slots=True)
class SliceByBaseInstant:
    """Table version 6: a log file names the base instant of its slice."""

    def slice_of(self, group: FileGroup, log: LogFile) -> str:
        return log.base_instant


@dataclass(frozen=True, slots=True)
class SliceByCompletionTime:
    """Hudi 1.x (`HoodieFileGroup.getBaseInstantTime`): a log file names the delta commit that wrote it and belongs
    to the slice with the greatest base instant at or before that commit's completion time.

    A commit still pending goes to the latest slice (its blocks are skipped on read until it completes). One older
    than the active timeline (archived into the LSM history, which is not read) is taken as completed at its
    requested time, the fallback Hudi uses when no completion time is known.
    """

    completion_times: Mapping[str, str]
    timeline_start: str | None = None

    def slice_of(self, group: FileGroup, log: LogFile) -> str:
        instant = log.base_instant
        bases = sorted(group.slices, reverse=True)
        if not bases:
            return instant  # no base file: a log-only slice keyed by its first delta commit
        completed = self.completion_times.get(instant)
        if completed is None:
            if self.timeline_start is None or instant >= self.timeline_start:
                return bases[0]  # pending
            completed = instant  # archived
        return next((b for b in bases if b <= completed), instant)


FileSlicing = SliceByBaseInstant | SliceByCompletionTime
BY_BASE_INSTANT = SliceByBaseInstant()
