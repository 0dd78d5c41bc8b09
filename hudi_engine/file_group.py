"""Value types of a table's data files: base files, log files, file slices and file groups."""
from __future__ import annotations

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
        return self.name.base_instant


@dataclass(slots=True)
class FileSlice:
    """A base file (or none) and the log files written on top of it, keyed by the base instant."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)

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
