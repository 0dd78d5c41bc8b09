"""Names of data files (FORMAT.md, File names): file ids, write tokens, base files and log files.

* fileId: `<uuid>-<n>` (no `_`, since `_` separates the parts of file names).
* write token: `<taskPartitionId>-<stageId>-<taskAttemptId>`.
* base file: `<fileId>_<writeToken>_<instantTime><ext>`, ext `.parquet` (`.hfile`/`.orc` exist too).
* log file: `.<fileId>_<baseInstant>.log.<version>[_<writeToken>][.cdc]`; `archive` instead of `log` for
  the layout-1 archived timeline (`.commits_.archive.<N>_<token>`, empty base instant).
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from .errors import HudiError


class FileNameError(HudiError, ValueError):
    """A file name that is not a Hudi base or log file name."""


UNKNOWN_WRITE_TOKEN = "1-0-1"  # rollback / rollover without a task context
DEFAULT_WRITE_TOKEN = "0-0-0"
LOG_FILE_BASE_VERSION = 1
BASE_FILE_EXTENSION = ".parquet"
LOG_FILE_EXTENSION = "log"
CDC_SUFFIX = ".cdc"

_WRITE_TOKEN = re.compile(r"^(\d+)-(\d+)-(\d+)$")
_FILE_ID = re.compile(r"^([^_/]+)-(\d+)$")
_BASE_FILE = re.compile(r"^([^_/]+)_(\d+-\d+-\d+)_(\d+)(\.[A-Za-z0-9]+)$")
# FSUtils.LOG_FILE_PATTERN, anchored at the end so a trailing oddity is an error and not silently ignored
_LOG_FILE = re.compile(r"^\.([^_/]+)_([^/]*)\.(log|archive)\.(\d+)(?:_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")


def new_file_id(index: int = 0) -> str:
    """`FSUtils.createNewFileId(createNewFileIdPfx(), index)`: a random UUID v4 then `-<index>`."""
    return f"{uuid.uuid4()}-{index}"


def split_file_id(file_id: str) -> tuple[str, int]:
    """(prefix, index) of a fileId `<prefix>-<index>`."""
    m = _FILE_ID.match(file_id)
    if not m:
        raise FileNameError(f"file id {file_id!r}: expected '<uuid>-<n>' without '_' or '/'")
    return m.group(1), int(m.group(2))


def _check_file_id(file_id: str, name: str) -> None:
    if not file_id or "_" in file_id or "/" in file_id:
        raise FileNameError(f"{name}: file id {file_id!r} must be non-empty and contain no '_' or '/'")


def _check_instant(instant: str, name: str, *, allow_empty: bool = False) -> None:
    if not (instant.isdigit() and instant.isascii()) and not (allow_empty and instant == ""):
        raise FileNameError(f"{name}: instant time {instant!r} must be digits (yyyyMMddHHmmssSSS)")


@dataclass(frozen=True, order=True)
class WriteToken:
    partition_id: int
    stage_id: int
    attempt_id: int

    @staticmethod
    def parse(token: str) -> "WriteToken":
        m = _WRITE_TOKEN.match(token)
        if not m:
            raise FileNameError(f"write token {token!r}: expected '<partitionId>-<stageId>-<attemptId>' (e.g. 0-13-60)")
        return WriteToken(int(m.group(1)), int(m.group(2)), int(m.group(3)))

    def format(self) -> str:
        return f"{self.partition_id}-{self.stage_id}-{self.attempt_id}"

    def __str__(self) -> str:
        return self.format()


def _token_str(token: "str | WriteToken") -> str:
    return token.format() if isinstance(token, WriteToken) else token


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str
    extension: str = BASE_FILE_EXTENSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "write_token", _token_str(self.write_token))
        what = f"base file {self.file_id}_{self.write_token}_{self.instant_time}{self.extension}"
        _check_file_id(self.file_id, what)
        WriteToken.parse(self.write_token)
        _check_instant(self.instant_time, what)
        if not re.match(r"^\.[A-Za-z0-9]+$", self.extension):
            raise FileNameError(f"{what}: extension {self.extension!r} must look like '.parquet'")

    @staticmethod
    def parse(name: str) -> "BaseFileName":
        m = _BASE_FILE.match(name)
        if not m:
            raise FileNameError(
                f"{name!r} is not a base file name: expected '<fileId>_<writeToken>_<instantTime>.parquet'"
            )
        return BaseFileName(m.group(1), m.group(2), m.group(3), m.group(4))

    def format(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant_time}{self.extension}"

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    extension: str = LOG_FILE_EXTENSION
    suffix: str = ""

    def __post_init__(self) -> None:
        if self.write_token is not None:
            object.__setattr__(self, "write_token", _token_str(self.write_token))
        what = f"log file of {self.file_id}"
        _check_file_id(self.file_id, what)
        _check_instant(self.base_instant, what, allow_empty=True)
        if self.extension not in ("log", "archive"):
            raise FileNameError(f"{what}: extension {self.extension!r} must be 'log' or 'archive' (no dot)")
        if not isinstance(self.version, int) or self.version < 0:
            raise FileNameError(f"{what}: version {self.version!r} must be a non-negative int")
        if self.write_token is not None:
            WriteToken.parse(self.write_token)
        if self.suffix not in ("", CDC_SUFFIX):
            raise FileNameError(f"{what}: suffix {self.suffix!r} must be '' or '.cdc'")
        if self.suffix and self.write_token is None:
            raise FileNameError(f"{what}: a '.cdc' suffix needs a write token")

    @staticmethod
    def parse(name: str) -> "LogFileName":
        m = _LOG_FILE.match(name)
        if not m:
            raise FileNameError(
                f"{name!r} is not a log file name: expected '.<fileId>_<baseInstant>.log.<version>_<writeToken>'"
            )
        return LogFileName(m.group(1), m.group(2), int(m.group(4)), m.group(5), m.group(3), m.group(9) or "")

    def format(self) -> str:
        token = f"_{self.write_token}" if self.write_token is not None else ""
        return f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}{token}{self.suffix}"

    def __str__(self) -> str:
        return self.format()

    @property
    def sort_key(self) -> tuple:
        """`HoodieLogFile.getLogFileComparator`: base instant, version, write token (missing first, then as text), suffix."""
        return (self.base_instant, self.version, self.write_token is not None, self.write_token or "", self.suffix)

    def next_version(self, write_token: str | WriteToken) -> "LogFileName":
        """The file a rollover writes after this one: same slice, version + 1, the new writer's token."""
        return LogFileName(self.file_id, self.base_instant, self.version + 1, _token_str(write_token), self.extension)


def is_base_file_name(name: str) -> bool:
    return _BASE_FILE.match(name) is not None


def is_log_file_name(name: str) -> bool:
    return _LOG_FILE.match(name) is not None


def file_id_of(name: str) -> str:
    """File id of a base or log file name."""
    if is_log_file_name(name):
        return LogFileName.parse(name).file_id
    return BaseFileName.parse(name).file_id
