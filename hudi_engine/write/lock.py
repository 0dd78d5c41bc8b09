"""The table lock: held by one writer at a time (for a whole write, or only to start and to commit an instant under
optimistic concurrency), by table services, and renewed while it is held.

`table_lock(location, config)` takes the lock through the provider `hoodie.write.lock.provider` names
(`lock_providers`), waits up to `hoodie.write.lock.wait_time_ms`, and keeps it renewed from a background thread until
the `with` block ends. A holder that could not renew in time has lost it (`TableLock.check` raises): another writer
may hold it now. A provider that cannot exclude a second writer on the table's storage is refused before anything
is written.
"""
from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.errors import WriteError
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import check_writable
from hudi_engine.timeline import Timeline
from hudi_engine.write.lock_providers import (
    LOCK_FILE,
    Lease,
    LockHolder,
    LockProvider,
    lock_path,
    lock_provider,
    read_lock_file,
)
from hudi_engine.write.renewal import Renewal

__all__ = ["LOCK_FILE", "LockHolder", "TableLock", "lock_holder", "lock_path", "table_lock"]


def new_owner() -> str:
    """An owner id: host, process and a random part (one process may hold locks of several tables)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lock_holder(location: TableLocation) -> dict | None:
    """The lock file's holder (`owner`, `acquired_ms`, ...), None when the file-system lock is free."""
    holder = read_lock_file(location.storage, lock_path(location))
    return None if holder is None else holder.to_dict()


class TableLock:
    """A held table lock and its renewal; `release()` (or the end of `table_lock`) gives it back."""

    def __init__(self, provider: LockProvider, lease: Lease, base_path: str) -> None:
        self.provider = provider
        self.lease = lease
        self.base_path = base_path
        self.owner = lease.holder.owner
        self.released = False
        tolerance = provider.lease_ms
        self.renewal = Renewal(f"the table lock ({provider.describe()})", provider.renew_period_ms, tolerance,
                               self._renew)
        if provider.renew_period_ms and tolerance:
            self.renewal.start()

    def _renew(self) -> bool:
        lease = self.provider.renew(self.lease)
        if lease is None:
            return False
        self.lease = lease
        return True

    @property
    def lost(self) -> str | None:
        """Why the lock is no longer ours (not renewed within its expiry, or taken over), None while it is."""
        return self.renewal.why_lost()

    def check(self, doing: str) -> None:
        """InstantLostError unless the lock is still ours with a quarter of its expiry left (renewals come every
        half expiry at most)."""
        if self.released:
            raise WriteError(f"the table lock of {self.base_path} was released; it cannot cover {doing}")
        self.renewal.check(doing, margin=0.75)

    def describe(self) -> str:
        return self.provider.describe()

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.renewal.stop()
        if self.lost is None:
            self.provider.release(self.lease)


def acquire(location: TableLocation, config: LockConfig, *, table_name: str | None = None,
            poll_ms: int = 200, table: TableConfig | None = None, timeline: Timeline | None = None) -> TableLock:
    """Take the table lock, waiting up to `config.wait_timeout_ms` (plus, for a lock service that judges expiry by
    watching, one lease of the holder it saw). The table is checked writable first, from `table` and `timeline`: the
    caller's, as it loaded them (nothing is read here); none for a location without a table (yet)."""
    base_path = location.base_path
    if (table is None) != (timeline is None):
        raise ValueError("acquire: a table's config and its timeline go together (both, or neither for no table)")
    name = _require_writable(location, table, timeline) if table is not None and timeline is not None else table_name
    provider = lock_provider(location, config, table_name=name)
    now = int(time.time() * 1000)
    holder = LockHolder(owner=new_owner(), acquired_ms=now, renewed_ms=now, expiry_ms=provider.lease_ms)
    deadline = time.monotonic() + config.wait_timeout_ms / 1000
    extended = False
    while True:
        lease = provider.try_acquire(holder)
        if lease is not None:
            return TableLock(provider, lease, base_path)
        if provider.expiry_by_observation and not extended:
            deadline += provider.lease_ms / 1000  # a stale lock is known only after watching it for one lease
            extended = True
        if time.monotonic() >= deadline:
            current = provider.holder()
            raise WriteError(
                f"table {base_path}: could not take the write lock within {config.wait_timeout_ms} ms "
                f"(hoodie.write.lock.wait_time_ms); {_describe_holder(current)} ({provider.describe()}). Wait for that "
                "writer, or remove the lock if that writer is known to be dead.")
        time.sleep(poll_ms / 1000)


@contextmanager
def table_lock(location: TableLocation, config: LockConfig | None = None, *,
               table_name: str | None = None, poll_ms: int = 200, table: TableConfig | None = None,
               timeline: Timeline | None = None) -> Iterator[TableLock]:
    """Hold the table lock for the `with` block. Every writer and table service takes it first with the table as it
    loaded it (`table`, `timeline`), so a table this engine only reads (Hudi 1.x) is refused here before anything is
    written."""
    lock = acquire(location, config or LockConfig(), table_name=table_name, poll_ms=poll_ms, table=table,
                   timeline=timeline)
    try:
        yield lock
    finally:
        lock.release()


def _describe_holder(holder: LockHolder | None) -> str:
    if holder is None:
        return "it was just released"
    since = ""
    if holder.acquired_ms:
        since = f" since {datetime.fromtimestamp(holder.acquired_ms / 1000, UTC):%Y-%m-%d %H:%M:%S} UTC"
    return f"it is held by {holder.owner or 'another writer'}{since}"


def _require_writable(location: TableLocation, config: TableConfig, timeline: Timeline) -> str:
    """Refuse a table this engine does not write; the table's name."""
    # Every writer and table service takes this lock first: refuse a feature we do not honour before any file.
    check_writable(location, config, timeline, action="write to it or run a table service on it")
    return config.name
