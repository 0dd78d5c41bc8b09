"""The only module that touches a filesystem: local paths and URIs through `pyarrow.fs`.

Paths handed to and returned by `Storage` are plain strings in the filesystem's own form (what
`pyarrow.fs.FileSystem.from_uri` returns), joined with "/". The table layer never builds URIs itself.

Conditional writes (what a lock and an atomic commit point need) are not in pyarrow: on local disks they are a hard
link (create-if-absent), `os.utime` (renew-if-present) and `flock` (a critical section among processes); on S3 they
are the store's own preconditions (`If-None-Match: *`, `If-Match: <etag>`) through boto3, with the same endpoint,
region and credentials as the pyarrow filesystem. Other stores have none: `atomic_create` says so, and callers that
need it (the lock) refuse such a store.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import posixpath
import re
import secrets
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

# Temp files of `create_exclusive` and `open_output` (local disks): `.hudi-engine-tmp-<pid>-<random>-<tag>` beside
# the target, where <tag> is a hash of the target's name (`temp_tag`): a rollback deletes the temp files of its own
# instant's files only, never those a concurrent writer is streaming into the same folder. The name
# shares nothing else with the target's, so no reader can take it for a Hudi file: Hudi instants are `<digits>.<action>`
# (Java reads the extension from the first dot: here the whole name), base files end in `.parquet`/`.orc`/`.hfile`,
# log files match `^\.<fileId>_<instant>\.log\.<n>` (Java does not anchor the end), markers hold `.marker.`,
# timeline-server markers start with `MARKERS`, the partition metafile with `.hoodie_partition_metadata`.
TEMP_FILE_PREFIX = ".hudi-engine-tmp-"
# Earlier versions named it `<target>.<pid>.tmp`, which list_markers took for a marker: still recognised, so a
# table such a crash left behind is listed and cleaned like any other.
_LEGACY_TEMP = re.compile(r".\.\d+\.tmp$")
_TEMP_ATTEMPTS = 5  # create_exclusive rewrites its temp file when a cleaner removed it before the link
# Hadoop's schemes for S3 (hadoop-aws's S3A, the older S3N): the same objects as pyarrow's `s3://`.
HADOOP_S3_SCHEMES = frozenset({"s3a", "s3n"})


def temp_tag(target_name: str) -> str:
    """The part of a temp file's name that says which file it was to become."""
    return hashlib.blake2b(target_name.encode(), digest_size=6).hexdigest()


def _temp_name(target: str) -> str:
    return f"{TEMP_FILE_PREFIX}{os.getpid()}-{secrets.token_hex(6)}-{temp_tag(posixpath.basename(target))}"


def is_temp_file_name(name: str) -> bool:
    """Whether `name` is a temp file of `create_exclusive` (never a table file, whatever its folder)."""
    return name.startswith(TEMP_FILE_PREFIX) or _LEGACY_TEMP.search(name) is not None


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    name: str
    size: int
    is_dir: bool


@dataclass(frozen=True, slots=True)
class Versioned:
    """A file's bytes with the version a conditional write compares against (an S3 ETag; on local disks the inode
    and modification time) and its modification time in epoch ms."""

    data: bytes
    version: str
    mtime_ms: int


class Storage:
    """A filesystem rooted nowhere in particular: every method takes a full path."""

    def __init__(self, fs: pafs.FileSystem) -> None:
        self.fs = fs
        self.is_local = isinstance(fs, pafs.LocalFileSystem)
        self.is_s3 = type(fs).__name__ == "S3FileSystem"
        self._s3_client: Any = None

    @property
    def scheme(self) -> str:
        """The store's kind as in a URI: file, s3, gs, hdfs, abfs, ..."""
        if self.is_local:
            return "file"
        return {"S3FileSystem": "s3", "GcsFileSystem": "gs", "HadoopFileSystem": "hdfs",
                "AzureFileSystem": "abfs"}.get(type(self.fs).__name__, self.fs.type_name)

    @property
    def atomic_create(self) -> bool:
        """Whether `create_exclusive` is atomic here (a hard link on local disks, `If-None-Match` on S3), so two
        processes creating one file can never both succeed. Elsewhere it is check-then-write."""
        return self.is_local or (self.is_s3 and _boto3_available())

    @staticmethod
    def is_uri(path: str) -> bool:
        """Whether `path` is a URI (`s3://bucket/t`, `file:///t`) rather than a local path."""
        return "://" in path

    @staticmethod
    def location(path: str) -> str:
        """Where a table is, as recorded for it (a catalog entry, an executor's storage): a URI as given, a local
        path made absolute."""
        return path if Storage.is_uri(path) else os.path.abspath(path)

    @staticmethod
    def for_uri(uri: str) -> tuple["Storage", str]:
        """Storage for `uri` and the path within it. Local paths are made absolute; Hadoop's names of S3 (`s3a://`,
        `s3n://`, what Spark with hadoop-aws opens) are S3 to pyarrow."""
        uri = Storage.location(uri)
        scheme, _, rest = uri.partition("://")
        if scheme.lower() in HADOOP_S3_SCHEMES:
            uri = "s3://" + rest
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

    def delete_temp_files(self, path: str, targets: Iterable[str] | None = None) -> list[str]:
        """Delete the temp files directly in `path` (only those meant to become one of the file names `targets`, if
        given); their paths. Safe while other processes create files there: `create_exclusive` writes its temp file
        again when it vanished before the link."""
        temps = self.list_temp_files(path)
        if targets is not None:
            names = set(targets)
            tags = {temp_tag(n) for n in names}
            temps = [e for e in temps if e.name.rsplit("-", 1)[-1] in tags
                     or any(e.name.startswith(n + ".") for n in names)]  # legacy `<target>.<pid>.tmp`
        return [e.path for e in temps if self.delete(e.path)]

    def _list(self, path: str) -> list[FileStatus]:
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=False))
        except FileNotFoundError:
            return []
        return [
            FileStatus(i.path, i.base_name, i.size or 0, i.type == pafs.FileType.Directory) for i in infos
        ]

    def content_summary(self, path: str) -> tuple[int, int, int]:
        """(folders, files, bytes) under `path`, itself counted when it is a folder, as Hadoop's ContentSummary
        counts them; a file is (0, 1, its size)."""
        info = self.fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            return 0, 1, info.size or 0
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(path)
        below = self.fs.get_file_info(pafs.FileSelector(path, recursive=True))
        folders = sum(1 for i in below if i.type == pafs.FileType.Directory)
        files = [i.size or 0 for i in below if i.type == pafs.FileType.File]
        return folders + 1, len(files), sum(files)

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
        target = posixpath.join(folder, _temp_name(path)) if self.is_local else path
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
                tmp = posixpath.join(folder, _temp_name(path))
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
        if self.is_s3 and _boto3_available():
            return self.create_versioned(path, data) is not None
        self.mkdirs(folder)
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    # ---- conditional writes -------------------------------------------------------------------------------------
    def create_versioned(self, path: str, data: bytes) -> str | None:
        """Create `path` only if absent (atomically where `atomic_create`); its version, None if it existed."""
        if self.is_s3 and _boto3_available():
            bucket, key = _bucket_key(path)
            try:
                return str(self._s3().put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")["ETag"])
            except Exception as e:
                if _s3_code(e) in _S3_LOST_RACE:
                    return None
                raise
        if not self.create_exclusive(path, data):
            return None
        versioned = self.read_versioned(path)
        return versioned.version if versioned is not None else None

    def read_versioned(self, path: str) -> Versioned | None:
        """The file's bytes, version and modification time; None when absent."""
        if self.is_s3 and _boto3_available():
            bucket, key = _bucket_key(path)
            try:
                r = self._s3().get_object(Bucket=bucket, Key=key)
            except Exception as e:
                if _s3_code(e) in ("NoSuchKey", "404"):
                    return None
                raise
            return Versioned(r["Body"].read(), str(r["ETag"]), int(r["LastModified"].timestamp() * 1000))
        try:
            if self.is_local:
                with open(path, "rb") as f:
                    st = os.fstat(f.fileno())
                    return Versioned(f.read(), f"{st.st_ino}:{st.st_mtime_ns}", st.st_mtime_ns // 1_000_000)
            info = self.fs.get_file_info(path)
            if info.type == pafs.FileType.NotFound:
                return None
            mtime = int(info.mtime.timestamp() * 1000) if info.mtime else 0
            return Versioned(self.read_bytes(path), str(mtime), mtime)
        except FileNotFoundError:
            return None

    @property
    def compare_and_swap(self) -> bool:
        """Whether `replace_if_version` / `delete_if_version` are atomic here (S3 preconditions)."""
        return self.is_s3 and _boto3_available()

    def replace_if_version(self, path: str, data: bytes, version: str) -> str | None:
        """Overwrite `path` only while it is still at `version`; the new version, None if it changed or vanished.
        Atomic only where `compare_and_swap`; elsewhere a check then a write (callers serialise with `critical_section`).
        """
        if self.compare_and_swap:
            bucket, key = _bucket_key(path)
            try:
                return str(self._s3().put_object(Bucket=bucket, Key=key, Body=data, IfMatch=version)["ETag"])
            except Exception as e:
                if _s3_code(e) in _S3_LOST_RACE:
                    return None
                raise
        current = self.read_versioned(path)
        if current is None or current.version != version:
            return None
        self.write_bytes(path, data)
        after = self.read_versioned(path)
        return after.version if after is not None else None

    def delete_if_version(self, path: str, version: str) -> bool:
        """Delete `path` only while it is still at `version`; False if it changed or vanished. Atomic where
        `compare_and_swap` (a store that refuses a conditional delete gets a check then a delete)."""
        if self.compare_and_swap:
            bucket, key = _bucket_key(path)
            try:
                self._s3().delete_object(Bucket=bucket, Key=key, IfMatch=version)
                return True
            except Exception as e:
                code = _s3_code(e)
                if code in _S3_LOST_RACE:
                    return False
                if code not in ("NotImplemented", "InvalidArgument", "501"):
                    raise
        current = self.read_versioned(path)
        if current is None or current.version != version:
            return False
        return self.delete(path)

    def touch(self, path: str, data: bytes = b"", version: str | None = None) -> str | None:
        """Renew an existing file: local disks set its modification time (fails if it was deleted, never
        re-creates it); S3 rewrites it with `data` only while it is at `version`. Returns its new version, None when
        it is gone (or, on S3, changed). Other stores: a check then a write."""
        if self.is_local:
            try:
                os.utime(path)
                st = os.stat(path)
            except FileNotFoundError:
                return None
            return f"{st.st_ino}:{st.st_mtime_ns}"
        if self.compare_and_swap and version is not None:
            return self.replace_if_version(path, data, version)
        if not self.exists(path):
            return None
        self.write_bytes(path, data)
        after = self.read_versioned(path)
        return after.version if after is not None else None

    def mtime_ms(self, path: str) -> int | None:
        """Modification time in epoch ms (S3: whole seconds), None when absent."""
        info = self.fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return None
        return int(info.mtime.timestamp() * 1000) if info.mtime else 0

    @contextmanager
    def critical_section(self, folder: str, *, timeout_s: float = 30.0) -> Iterator[None]:
        """Hold an exclusive `flock` on `folder` (local disks only) for the `with` block: processes of this host
        (and of NFS clients with working locks) run such blocks one at a time. The OS drops it if the process dies."""
        if not self.is_local:
            raise OSError(f"{folder}: critical sections need a local filesystem (flock); {self.scheme} has none")
        fd = os.open(folder, os.O_RDONLY)  # FileNotFoundError when the folder is gone
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"{folder}: another process held its flock for {timeout_s:g} s") from None
                    time.sleep(0.005)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _s3(self) -> Any:
        if self._s3_client is None:
            self._s3_client = _s3_client_for(self.fs)
        return self._s3_client

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


# ---- S3 through boto3 (conditional writes only; everything else goes through pyarrow) ------------------------------
_S3_LOST_RACE = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409", "NoSuchKey", "404")
_s3_clients: dict[tuple, Any] = {}
_s3_clients_lock = threading.Lock()


def _boto3_available() -> bool:
    try:
        import boto3  # noqa: F401
    except ImportError:
        return False
    return True


def _bucket_key(path: str) -> tuple[str, str]:
    bucket, _, key = path.lstrip("/").partition("/")
    return bucket, key


def _s3_code(error: Exception) -> str:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        raise error
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code or str(status)


def _s3_client_for(fs: pafs.FileSystem) -> Any:
    """A boto3 S3 client for the endpoint, region and credentials of a pyarrow S3FileSystem (one per process)."""
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    options = fs.__reduce__()[1][0]  # the S3FileSystem's constructor arguments
    endpoint = options.get("endpoint_override") or None
    if endpoint and "://" not in endpoint:
        endpoint = f"{options.get('scheme') or 'https'}://{endpoint}"
    key = (endpoint, options.get("region"), options.get("access_key"), options.get("anonymous"))
    with _s3_clients_lock:
        client = _s3_clients.get(key)
        if client is None:
            kwargs: dict[str, Any] = {"endpoint_url": endpoint, "region_name": options.get("region") or None}
            if options.get("access_key"):
                kwargs.update(aws_access_key_id=options["access_key"], aws_secret_access_key=options.get("secret_key"),
                              aws_session_token=options.get("session_token") or None)
            config = Config(retries={"max_attempts": 5, "mode": "standard"},
                            signature_version=UNSIGNED if options.get("anonymous") else None)
            client = boto3.session.Session().client("s3", config=config, **kwargs)
            _s3_clients[key] = client
        return client
