"""Write markers: one empty file per data file an instant is about to create, so a crash can be undone (FORMAT.md,
Write markers).

A marker is `.hoodie/.temp/<instant>/<partitionPath>/<dataFileName>.marker.<IOType>` (DIRECT markers). It is
created *before* its data file, so every file a failed writer may have left behind has a marker, and rollback
(ours or real Hudi's `MarkerBasedRollbackStrategy`) finds them all without listing partitions. After a
successful commit the instant's marker folder is deleted.

A leaf of the instant protocol: markers know nothing of who owns an instant. A writer makes its markers through
`inflight.InflightInstant`, which checks after each marker (and again once the file is there) that the instant is
still its own.

Reading also understands the TIMELINE_SERVER_BASED layout Spark writes by default (`MARKERS.type` plus
`MARKERS<n>` files of newline-separated relative marker paths), so a failed Spark write can be rolled back too.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from enum import StrEnum

from hudi_engine.errors import WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage

TEMP_FOLDER = ".temp"
MARKER_INFIX = ".marker."
MARKERS_TYPE_FILE = "MARKERS.type"
TIMELINE_SERVER_BASED = "TIMELINE_SERVER_BASED"
_TIMELINE_SERVER_PREFIX = "MARKERS"


class IOType(StrEnum):
    """What the writer does to the data file the marker stands for."""

    CREATE = "CREATE"  # a new base file (new file group)
    MERGE = "MERGE"  # a new base file version of an existing file group (COW update)
    APPEND = "APPEND"  # a log file of an existing file group (MOR)


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker: the partition, the data file's name and the IO type."""

    partition_path: str
    file_name: str
    io_type: IOType

    @staticmethod
    def parse(relative_path: str) -> Marker:
        """`<partition>/<file>.marker.<TYPE>` (the partition may be empty or nested) -> Marker."""
        partition, _, name = relative_path.strip("/").rpartition("/")
        file_name, infix, io_type = name.rpartition(MARKER_INFIX)
        if not infix or not file_name:
            raise WriteError(f"marker {relative_path!r}: expected <partition>/<data file>.marker.<CREATE|MERGE|APPEND>")
        try:
            return Marker(partition, file_name, IOType(io_type))
        except ValueError:
            raise WriteError(
                f"marker {relative_path!r}: unknown IO type {io_type!r}; expected CREATE, MERGE or APPEND"
            ) from None

    @property
    def name(self) -> str:
        return f"{self.file_name}{MARKER_INFIX}{self.io_type.value}"

    @property
    def relative_path(self) -> str:
        """Path below the instant's marker folder."""
        return f"{self.partition_path}/{self.name}" if self.partition_path else self.name

    @property
    def data_file_path(self) -> str:
        """Path of the data file relative to the table's base path."""
        return f"{self.partition_path}/{self.file_name}" if self.partition_path else self.file_name

    def __str__(self) -> str:
        return self.relative_path


def marker_dir(location: TableLocation, instant_time: str) -> str:
    return location.meta(TEMP_FOLDER, instant_time)


def create_marker(
    location: TableLocation,
    instant_time: str,
    partition_path: str,
    file_name: str,
    io_type: IOType | str,
) -> Marker:
    """Create the DIRECT marker for a data file about to be written. A second marker for the same file means two
    writers chose one file name (a task retried with the same write token): refused, naming the marker. A writer
    makes its markers through `InflightInstant.create_marker`, which then checks the instant is still its own."""
    marker = Marker(partition_path, file_name, IOType(io_type))
    path = Storage.join(marker_dir(location, instant_time), marker.relative_path)
    if not location.storage.create_exclusive(path, b""):
        raise WriteError(
            f"marker {path} already exists: another writer of instant {instant_time} is writing {file_name}; "
            "expected a unique write token per task attempt"
        )
    return marker


def remove_marker(location: TableLocation, instant_time: str, partition_path: str, file_name: str,
                  io_type: IOType | str) -> bool:
    """Remove a marker whose data file was not written (its name was taken by another writer of the file group), so
    neither reconciliation nor a rollback of this instant ever deletes the other writer's file of that name."""
    marker = Marker(partition_path, file_name, IOType(io_type))
    return location.storage.delete(Storage.join(marker_dir(location, instant_time), marker.relative_path))


def list_markers(location: TableLocation, instant_time: str) -> list[Marker]:
    """Every marker of an instant, DIRECT or timeline-server based, sorted by path; [] if there are none."""
    storage = location.storage
    root = marker_dir(location, instant_time)
    entries = storage.list_dir(root)
    names = {e.name for e in entries if not e.is_dir}
    if MARKERS_TYPE_FILE in names or any(_is_timeline_server_file(n) for n in names):
        return _timeline_server_markers(storage, root, entries)
    found: list[Marker] = []
    stack = [("", entries)]
    while stack:
        rel, listing = stack.pop()
        for e in listing:
            child = f"{rel}/{e.name}" if rel else e.name
            if e.is_dir:
                stack.append((child, storage.list_dir(e.path)))
            elif MARKER_INFIX in e.name:
                found.append(Marker.parse(child))
    return sorted(found, key=lambda m: m.relative_path)


def _is_timeline_server_file(name: str) -> bool:
    return name.startswith(_TIMELINE_SERVER_PREFIX) and name[len(_TIMELINE_SERVER_PREFIX):].isdigit()


def _timeline_server_markers(storage: Storage, root: str, entries) -> list[Marker]:
    type_path = posixpath.join(root, MARKERS_TYPE_FILE)
    if storage.exists(type_path):
        kind = storage.read_bytes(type_path).decode("utf-8").strip()
        if kind != TIMELINE_SERVER_BASED:
            raise WriteError(f"{type_path}: marker type {kind!r}; expected {TIMELINE_SERVER_BASED}")
    found: set[Marker] = set()
    for e in entries:
        if not e.is_dir and _is_timeline_server_file(e.name):
            for line in storage.read_bytes(e.path).decode("utf-8").splitlines():
                if line.strip():
                    found.add(Marker.parse(line.strip()))
    return sorted(found, key=lambda m: m.relative_path)


def delete_marker_dir(location: TableLocation, instant_time: str) -> bool:
    """Delete an instant's marker folder; False if it did not exist."""
    root = marker_dir(location, instant_time)
    if not location.storage.exists(root):
        return False
    location.storage.delete_dir(root)
    return True
