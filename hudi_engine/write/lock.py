"""One writer at a time per table: a lock file created with create-if-absent, with an owner and an expiry.

The file is `.hoodie/lock` (where Hudi's file-system lock provider keeps it). A lock past its expiry, or held by a
process of this host that no longer runs, belongs to a writer that died: the next writer removes it and takes it.
"""
from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from hudi_engine.errors import TableConfigError, UnsupportedTableVersionError, WriteError
from hudi_engine.storage import Storage
from hudi_engine.table_config import PROPERTIES_FILE, TableConfig

LOCK_FILE = "lock"


def lock_path(base_path: str) -> str:
    return Storage.join(base_path, ".hoodie", LOCK_FILE)


def lock_holder(storage: Storage, base_path: str) -> dict | None:
    """The lock file's content (`owner`, `acquired_ms`, `expires_ms`), None when the lock is free."""
    return _read(storage, lock_path(base_path))


@contextmanager
def table_lock(storage: Storage, base_path: str, *, wait_timeout_ms: int, expiry_ms: int,
               poll_ms: int = 200) -> Iterator[str]:
    """Hold the table's write lock for the `with` block; yields the owner id. Every writer and table service takes
    it first, so a table this engine only reads (Hudi 1.x) is refused here before anything is written."""
    _require_writable(storage, base_path)
    path = lock_path(base_path)
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    deadline = time.monotonic() + wait_timeout_ms / 1000
    while True:
        now_ms = int(time.time() * 1000)
        body = json.dumps({"owner": owner, "acquired_ms": now_ms, "expires_ms": now_ms + expiry_ms}).encode()
        if storage.create_exclusive(path, body):
            break
        holder = _read(storage, path)
        if holder is not None and (holder.get("expires_ms", 0) < now_ms or _owner_is_dead(holder.get("owner", ""))):
            storage.delete(path)  # the holder died: its lock has expired or its process is gone
            continue
        if time.monotonic() >= deadline:
            who = holder.get("owner", "?") if holder else "?"
            raise WriteError(
                f"table {base_path}: could not take the write lock within {wait_timeout_ms} ms; it is held by "
                f"{who} (lock file {path}). Wait for that writer, or remove the file if it is known to be dead."
            )
        time.sleep(poll_ms / 1000)
    try:
        yield owner
    finally:
        holder = _read(storage, path)
        if holder is not None and holder.get("owner") == owner:
            storage.delete(path)


def _require_writable(storage: Storage, base_path: str) -> None:
    if not storage.exists(Storage.join(base_path, ".hoodie", PROPERTIES_FILE)):
        return  # a table being created
    try:
        config = TableConfig.load(storage, base_path)
    except UnsupportedTableVersionError:
        raise
    except TableConfigError:
        return  # a damaged config is the caller's to report, with its own context
    config.require_writable()


def _owner_is_dead(owner: str) -> bool:
    """True only when the owner is a process of this host that is not running (elsewhere: wait for expiry)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _read(storage: Storage, path: str) -> dict | None:
    try:
        return json.loads(storage.read_bytes(path) or b"{}")
    except (FileNotFoundError, ValueError):
        return None
