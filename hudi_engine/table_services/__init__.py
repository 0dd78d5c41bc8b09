"""Table services: MOR compaction, cleaning and rollback on request (FORMAT.md, Compaction, Clean, Rollback).

Engine-neutral: nothing here imports pyspark. Work that spreads over file groups (a compaction plan's operations)
runs through an injected `Executor` (`hudi_engine.spark.spark_executor(spark)` runs them as Spark tasks);
`runner` sequences the services a write runs around its commit, and `HudiTable.compact()` / `clean()` /
`rollback()` are the user-facing entry points.

Each service keeps Hudi's metadata table where this engine can (`hudi_engine.metadata.writer.keep_or_disable`, a
metadata delta commit before the service's instant completes) and disables it otherwise, before it changes a file:
a compaction, clean, archival or rollback that the metadata table does not record leaves Java readers listing files
from it that are gone, and missing the ones it wrote (issue 36).

Every function that changes the table takes the table's write lock (the one writers take), so a
service never interleaves with a write. `service_lock` is re-entrant within a thread: a service that calls another
(compaction, then cleaning) takes the lock once.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write.lock import table_lock

_held = threading.local()


@contextmanager
def service_lock(location: TableLocation, lock: LockConfig | None = None, *,
                 table: TableConfig, timeline: Timeline, checked: bool = False) -> Iterator[None]:
    """Hold the table's write lock; a nested call in the same thread for the same table does not lock again.
    `table` and `timeline`: the table as the caller loaded it, for the lock's writability check (not read again).
    `checked`: the caller checked that same `table` and `timeline` writable already (HudiTable's services, with the
    service's own message), so the lock does not check them again."""
    if _is_held(location):
        yield
        return
    lock = lock or LockConfig()
    taken = table_lock(location, lock, table_name=table.name) if checked else \
        table_lock(location, lock, table=table, timeline=timeline)
    with taken, held_by_caller(location):
        yield


@contextmanager
def service_lock_at(location: TableLocation, lock: LockConfig | None = None) -> Iterator[None]:
    """`service_lock` for a service called with a location only (`schedule_compaction`, `run_compaction`, ...): the
    door, where the table is loaded, once, for the lock's writability check, only when the lock is taken here (a
    nested call reads nothing). A config that does not load (wrong checksum, bad table type) stops the service here:
    a service must not change files of a table it cannot read the config of."""
    if _is_held(location):
        yield
        return
    table = TableConfig.load(location)
    table.require_writable()  # before the timeline is listed
    with service_lock(location, lock, table=table, timeline=Timeline.load(location)):
        yield


def _is_held(location: TableLocation) -> bool:
    return location.base_path.rstrip("/") in getattr(_held, "tables", ())


@contextmanager
def held_by_caller(location: TableLocation) -> Iterator[None]:
    """The calling thread holds the table's write lock (a write keeps its commit's lock for the post-commit
    services): `service_lock` inside the block does not take it again."""
    held: set[str] = getattr(_held, "tables", None) or set()
    _held.tables = held
    key = location.base_path.rstrip("/")
    if key in held:
        yield
        return
    held.add(key)
    try:
        yield
    finally:
        held.discard(key)
