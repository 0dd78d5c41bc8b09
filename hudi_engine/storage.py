"""The only module that touches a filesystem: local paths and URIs through `pyarrow.fs`.

Paths handed to and returned by `Storage` are plain strings in the filesystem's own form (what
`pyarrow.fs.FileSystem.from_uri` returns), joined with "/". The table layer never builds URIs itself.
"""
from __future__ import annotations

import os
import posixpath
import re
import secrets
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

# Temp files of `create_exclusive` (local disks): `.hudi-engine-tmp-<pid>-<random>` beside the target. The name
# shares nothing with the target's, so no reader can take it for a Hudi file: Hudi instants are `<digits>.<action>`
# (Java reads the extension from the first dot: here the whole name), base files end in `.parquet`/`.orc`/`.hfile`,
# log files match `^\.<fileId>_<instant>\.log\.<n>` (Java does not anchor the end), markers hold `.marker.`,
# timeline-server markers start with `MARKERS`, the partition metafile with `.hoodie_partition_metadata`.
TEMP_FILE_PREFIX = ".hudi-engine-tmp-"
# Earlier versions named it `<target>.<pid>.tmp`, which list_markers took for a marker: still recognised, so a
# table such a crash left behind is listed and cleaned like any other.
_LEGACY_TEMP = re.compile(r".\.\d+\.tmp$")
_TEMP_ATTEMPTS = 5  # create_exclusive rewrites its temp file when a cleaner removed it before the link


def is_temp_file_name(name: str) -> bool:
    """Whether `name` is a temp file of `create_exclusive` (never a table file, whatever its folder)."""
    return name.startswith(TEMP_FILE_PREFIX) or _LEGACY_TEMP.search(name) is not None


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    name: str
    size: int
    is_dir: bool


class Storage:
    """A filesystem rooted nowhere in particular: every method takes a full path."""

    def __init__(self, fs: pafs.FileSystem) -> None:
        self.fs = fs
        self.is_local = isinstance(fs, pafs.LocalFileSystem)

    @staticmethod
    def for_uri(uri: str) -> tuple["Storage", str]:
        """Storage for `uri` and the path within it. Local paths are made absolute."""
        if "://" not in uri:
            uri = os.path.abspath(uri)
        fs, path = pafs.FileSystem.from_uri(uri)
        return Storage(fs), path.rstrip("/") or "/"

    @staticmethod
    def join(*parts: str) -> str:
        return posixpath.join(*[p for p in parts if p != ""])

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def is_dir(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.Directory

    def size(self, path: str) -> int:
        info = self.fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        return info.size

    def list_dir(self, path: str) -> list[FileStatus]:
        """Direct children of `path`; an absent folder lists as empty (object stores have no empty folders).

        Temp files of `create_exclusive` are left out: no listing of the table may take one for a table file."""
        return [e for e in self._list(path) if e.is_dir or not is_temp_file_name(e.name)]

    def list_temp_files(self, path: str) -> list[FileStatus]:
        """The temp files of `create_exclusive` directly in `path` (left behind by a process killed mid-create)."""
        return [e for e in self._list(path) if not e.is_dir and is_temp_file_name(e.name)]

    def delete_temp_files(self, path: str) -> list[str]:
        """Delete the temp files directly in `path`; their paths. Safe while other processes create files there:
        `create_exclusive` writes its temp file again when it vanished before the link."""
        return [e.path for e in self.list_temp_files(path) if self.delete(e.path)]

    def _list(self, path: str) -> list[FileStatus]:
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=False))
        except FileNotFoundError:
            return []
        return [
            FileStatus(i.path, i.base_name, i.size or 0, i.type == pafs.FileType.Directory) for i in infos
        ]

    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as f:
            return f.read()

    def open_input_file(self, path: str) -> pa.NativeFile:
        """A random-access file, for parquet readers and log scanning."""
        return self.fs.open_input_file(path)

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write a whole file, replacing any file of that name."""
        self.mkdirs(posixpath.dirname(path))
        with self.fs.open_output_stream(path) as f:
            f.write(data)

    def open_output(self, path: str) -> "OutputFile":
        """A new file written as a stream that appears whole: on a local disk it is written under a temp name (see
        TEMP_FILE_PREFIX) and renamed into place on `commit()`; an object store publishes an object only when its
        upload completes. `abort()` leaves nothing behind."""
        folder = posixpath.dirname(path)
        self.mkdirs(folder)
        target = posixpath.join(folder, f"{TEMP_FILE_PREFIX}{os.getpid()}-{secrets.token_hex(8)}") \
            if self.is_local else path
        return OutputFile(self, path, target, self.fs.open_output_stream(target))

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create `path` holding `data` only if it does not exist; True if this call created it.

        Local disks get a temp file (see TEMP_FILE_PREFIX) hard-linked into place, which fails if `path`
        exists, so no reader sees a half-written file. A process killed in between leaves only the temp file,
        which every listing skips and the next writer deletes. Object stores have no such primitive in
        pyarrow: the check-then-write there is only safe with one writer at a time, which the write path's
        table lock provides.
        """
        folder = posixpath.dirname(path)
        if self.is_local:
            for _ in range(_TEMP_ATTEMPTS):
                self.mkdirs(folder)
                tmp = posixpath.join(folder, f"{TEMP_FILE_PREFIX}{os.getpid()}-{secrets.token_hex(8)}")
                try:
                    with open(tmp, "xb") as f:
                        f.write(data)
                    os.link(tmp, path)
                    return True
                except FileExistsError:
                    return False
                except FileNotFoundError:
                    continue  # a cleaner deleted the temp file (or its folder) before the link: write it again
                finally:
                    try:
                        os.unlink(tmp)
                    except FileNotFoundError:
                        pass
            raise OSError(f"{path}: its temp file in {folder} was deleted {_TEMP_ATTEMPTS} times before it could be "
                          "linked into place; something keeps deleting files in that folder")
        self.mkdirs(folder)
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    def mkdirs(self, path: str) -> None:
        if path:
            self.fs.create_dir(path, recursive=True)

    def delete(self, path: str) -> bool:
        """Delete one file; False if it was already gone."""
        try:
            self.fs.delete_file(path)
            return True
        except FileNotFoundError:
            return False

    def delete_dir(self, path: str) -> None:
        if self.exists(path):
            self.fs.delete_dir(path)

    def rename(self, src: str, dst: str) -> None:
        self.fs.move(src, dst)


class OutputFile:
    """A file being written by `Storage.open_output`: `stream` to write to, then `commit()` or `abort()`."""

    def __init__(self, storage: Storage, path: str, target: str, stream: pa.NativeFile) -> None:
        self.storage, self.path, self.target, self.stream = storage, path, target, stream

    def commit(self) -> None:
        self.stream.close()
        if self.target != self.path:
            os.replace(self.target, self.path)

    def abort(self) -> None:
        if not self.stream.closed:
            self.stream.close()
        self.storage.delete(self.target)
