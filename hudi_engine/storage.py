"""The only module that touches a filesystem: local paths and URIs through `pyarrow.fs`.

Paths handed to and returned by `Storage` are plain strings in the filesystem's own form (what
`pyarrow.fs.FileSystem.from_uri` returns), joined with "/". The table layer never builds URIs itself.
"""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs


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
        """Direct children of `path`; an absent folder lists as empty (object stores have no empty folders)."""
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

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create `path` holding `data` only if it does not exist; True if this call created it.

        Local disks get an atomic O_EXCL create of a temp file linked into place, so no reader sees a
        half-written file. Object stores have no such primitive in pyarrow: the check-then-write there
        is only safe with one writer at a time, which the write path's table lock provides.
        """
        self.mkdirs(posixpath.dirname(path))
        if self.is_local:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            try:
                os.link(tmp, path)
                return True
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
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
