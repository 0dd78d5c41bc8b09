"""Table services: MOR compaction, cleaning and rollback on request (spec §11, §13).

Engine-neutral: nothing here imports pyspark. `hudi_engine.spark.compactor` runs a compaction plan's operations
as Spark tasks and wires these services into the write path.

Every function that changes the table takes the table's write lock (`.hoodie/lock`, the one writers take), so a
service never interleaves with a write. `service_lock` is re-entrant within a thread: a service that calls another
(compaction, then cleaning) takes the lock once.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from hudi_engine.errors import WriteError
from hudi_engine.storage import Storage
from hudi_engine.write.lock import table_lock

_DEFAULT_WAIT_MS = 60_000  # hoodie.write.lock.wait.timeout.ms
_DEFAULT_EXPIRY_MS = 600_000  # hoodie.write.lock.expiry.ms
_held = threading.local()


def _int_option(options: Mapping[str, str] | None, key: str, default: int) -> int:
    value = (options or {}).get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise WriteError(f"option {key}={value!r}: expected a whole number") from None


@contextmanager
def service_lock(storage: Storage, base_path: str, options: Mapping[str, str] | None = None) -> Iterator[None]:
    """Hold the table's write lock; a nested call in the same thread for the same table does not lock again."""
    held: set[str] = getattr(_held, "tables", None) or set()
    _held.tables = held
    key = base_path.rstrip("/")
    if key in held:
        yield
        return
    with table_lock(storage, base_path,
                    wait_timeout_ms=_int_option(options, "hoodie.write.lock.wait.timeout.ms", _DEFAULT_WAIT_MS),
                    expiry_ms=_int_option(options, "hoodie.write.lock.expiry.ms", _DEFAULT_EXPIRY_MS)):
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


def rollback_last_commit(path: str, *, use_command_blocks: bool = False,
                         options: Mapping[str, str] | None = None):
    """Roll back the latest completed commit / deltacommit / replacecommit of the table at `path`, as Hudi's CLI
    `commit rollback` does (data files deleted or neutralised by command blocks, a rollback instant recorded).

    Refused (WriteError) for a compaction commit, when newer write instants exist (a pending compaction included),
    and when a clean after the commit deleted older files of a file group the commit wrote: rolling back would
    then leave that file group without the version it replaced. Returns the `RollbackResult`.
    """
    from hudi_engine.table_services.clean import check_rollback_keeps_previous_versions
    from hudi_engine.write.rollback import rollback_completed

    storage, base_path = Storage.for_uri(str(path))
    with service_lock(storage, base_path, options):
        check_rollback_keeps_previous_versions(storage, base_path)
        return rollback_completed(storage, base_path, use_command_blocks=use_command_blocks)


# Re-exports (after the lock helper: the submodules import it from here).
from hudi_engine.table_services.clean import CleanConfig, CleanResult, clean  # noqa: E402
from hudi_engine.table_services.compaction import (  # noqa: E402
    CompactionOperation,
    CompactionPlan,
    compaction_due,
    run_compaction,
    schedule_compaction,
)

__all__ = [
    "CleanConfig", "CleanResult", "CompactionOperation", "CompactionPlan", "clean", "compaction_due",
    "rollback_last_commit", "run_compaction", "schedule_compaction", "service_lock",
]
