"""Instant heartbeats (Hudi's `.hoodie/.heartbeat/<instant>`): how writers tell a live pending instant from a dead one.

A writer creates its instant's heartbeat file before the instant's requested file and renews it every
`hoodie.client.heartbeat.interval_in_ms` from a background thread (`Renewal`); it deletes it right before its commit
point and when it gives the instant up. Java reads the file's modification time only (an empty file there); this
engine also writes the renewal time into it, because S3 keeps modification times in whole seconds.

A pending instant whose heartbeat is older than interval x `hoodie.client.heartbeat.tolerable.misses` (or missing:
the writer died, or wrote without heartbeats) is a failed write: a writer holding the table lock may roll it back
(`rollback.rollback_failed_writes`), deleting its heartbeat first, so the dead writer's tasks (which look for the
heartbeat before and after every data file, see `inflight`) stop at once if it was only paused. An instant whose
heartbeat is alive is never rolled back by another writer.

A leaf of the instant protocol (as Hudi's HoodieHeartbeatClient): heartbeat files only, nothing of who rolls back.
"""
from __future__ import annotations

import json
import time

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.location import TableLocation
from hudi_engine.write.renewal import Renewal

HEARTBEAT_FOLDER = ".heartbeat"


def heartbeat_path(location: TableLocation, instant_time: str) -> str:
    return location.meta(HEARTBEAT_FOLDER, instant_time)


def heartbeat_exists(location: TableLocation, instant_time: str) -> bool:
    """One HEAD request: whether the instant's heartbeat file is there."""
    return location.storage.exists(heartbeat_path(location, instant_time))


def last_heartbeat_ms(location: TableLocation, instant_time: str) -> int | None:
    """When the instant's heartbeat was last renewed (epoch ms), None when it has none."""
    current = location.storage.read_versioned(heartbeat_path(location, instant_time))
    if current is None:
        return None
    try:
        renewed = int((json.loads(current.data or b"{}") or {}).get("renewed_ms") or 0)
    except (ValueError, AttributeError, TypeError):
        renewed = 0  # an empty file (Java) or a foreign one: its modification time tells
    return max(renewed, current.mtime_ms)


def heartbeat_expired(location: TableLocation, instant_time: str, expiry_ms: int) -> bool:
    """Whether the instant's writer is dead: no heartbeat, or one older than `expiry_ms`."""
    last = last_heartbeat_ms(location, instant_time)
    return last is None or time.time() * 1000 - last > expiry_ms


def delete_heartbeat(location: TableLocation, instant_time: str) -> bool:
    return location.storage.delete(heartbeat_path(location, instant_time))


class Heartbeat:
    """The heartbeat of an instant this process writes; renewed until `stop()`."""

    def __init__(self, location: TableLocation, instant_time: str, config: LockConfig, owner: str) -> None:
        self.storage = location.storage
        self.base_path = location.base_path
        self.instant_time = instant_time
        self.owner = owner
        self.path = heartbeat_path(location, instant_time)
        self.expiry_ms = config.heartbeat_expiry_ms
        self.renewal = Renewal(f"the heartbeat of instant {instant_time} ({self.path})",
                               config.heartbeat_interval_ms, self.expiry_ms, self._renew)
        self._version: str | None = None
        self.stopped = False
        self.alive_when_stopped = False  # renewed in time up to `stop`: no writer could take the instant before

    def _content(self) -> bytes:
        return json.dumps({"owner": self.owner, "renewed_ms": int(time.time() * 1000)}).encode()

    def start(self) -> Heartbeat:
        """Create the file (before the instant exists) and start renewing it."""
        data = self._content()
        self._version = self.storage.create_versioned(self.path, data)
        if self._version is None:  # only a process that issued this instant time before could have left it
            self.storage.write_bytes(self.path, data)
            current = self.storage.read_versioned(self.path)
            self._version = current.version if current is not None else None
        self.renewal.start()
        return self

    def _renew(self) -> bool:
        # Never re-creates the file: a writer that rolls this instant back deletes it first.
        version = self.storage.touch(self.path, self._content(), self._version)
        if version is None:
            return False
        self._version = version
        return True

    @property
    def lost(self) -> str | None:
        return self.renewal.why_lost()

    def check(self, doing: str) -> None:
        """InstantLostError when the heartbeat was not renewed in time (others may have rolled the instant back)."""
        self.renewal.check(doing)

    def stop(self, *, delete: bool = True) -> None:
        """Stop renewing; delete the file (before a commit point, or when the instant is given up)."""
        if self.stopped:
            return
        self.stopped = True
        self.alive_when_stopped = self.renewal.why_lost() is None
        self.renewal.stop()
        if delete:
            self.storage.delete(self.path)
