"""`TableCache`: the tables one planning process loaded, kept for its next queries while their timelines are unchanged.

Spark plans every query of the native `hudi` source, and every read of the `hudi_merge` source, in its planning
Python worker on the driver, a process it reuses from one query to the next (a Thrift server's queries included).
Loading a table there reads `hoodie.properties`, lists the timeline, and lists every partition folder for the file
slices; the commit metadata the plan reads (writer schemas, replaced file groups, cleans) is kept by the `HudiTable`.
`TABLES.load(path)` hands back the table the last query loaded, with its partition listings, as long as the
table's timeline is what it was then, and loads it afresh otherwise.

Never stale: before a query reuses a table, its timeline folder is listed again (`.hoodie/`, and `.hoodie/timeline/`
in timeline layout 2), its file names, sizes and `hoodie.properties`' modification time compared with the ones
taken before the table was loaded. A commit, compaction, clean, rollback or archival adds or removes a file there,
so the next query sees it. Data files a write adds before its commit completes are not visible to the kept
timeline anyway (their instant is not completed in it), and the write's completion changes the timeline. The
kept partition listings are only ever read together with the timeline they were listed under.

Bounded: `MAX_TABLES` tables per process, least recently used first out.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from hudi_engine.location import TableLocation
from hudi_engine.storage import FileStatus, Storage
from hudi_engine.table import HudiTable
from hudi_engine.table_config import PROPERTIES_FILE

MAX_TABLES = 4

# A timeline's state as `TableCache` compares it: the meta folders' (folder, file name, size), and the properties'
# modification time (rewritten in place, e.g. by an upgrade, possibly with the same size).
Stamp = tuple[tuple[tuple[str, str, int], ...], int | None]


def timeline_stamp(location: TableLocation) -> Stamp | None:
    """What changes when anything lands on the table's timeline; None when there is no meta folder (no table)."""
    storage, meta = location.storage, location.meta_path
    entries = storage.list_dir(meta)
    if not entries:
        return None
    files = [("", e.name, e.size) for e in entries if not e.is_dir]
    if any(e.is_dir and e.name == "timeline" for e in entries):  # timeline layout 2 keeps its instants there
        files += [("timeline", e.name, e.size) for e in storage.list_dir(location.meta("timeline"))
                  if not e.is_dir]
    return tuple(sorted(files)), storage.mtime_ms(location.meta(PROPERTIES_FILE))


class ListedStorage(Storage):
    """A table's storage that lists each data folder once (the file-system view's walk over the partitions); the
    meta folder and everything below it is listed afresh every time. For reads only: it belongs to one timeline."""

    def __init__(self, location: TableLocation) -> None:
        super().__init__(location.storage.fs)
        self._meta = location.meta_path
        self._listings: dict[str, list[FileStatus]] = {}
        self._lock = threading.Lock()
        self.listings = 0  # folders listed from storage (the rest came from memory)

    def list_dir(self, path: str) -> list[FileStatus]:
        if path == self._meta or path.startswith(self._meta + "/"):
            return super().list_dir(path)
        with self._lock:
            found = self._listings.get(path)
        if found is None:
            found = super().list_dir(path)
            with self._lock:
                self._listings[path] = found
                self.listings += 1
        return list(found)

    def __reduce__(self) -> tuple[Any, ...]:
        """Tasks get the plain storage (a read plan is shipped to executors with its table's storage)."""
        return Storage, (self.fs,)


@dataclass
class _Kept:
    stamp: Stamp
    table: HudiTable
    memo: dict[Any, Any] = field(default_factory=dict)  # what plans of this timeline derive and may share


class TableCache:
    """Loaded tables by location, reused while their timeline stamp is unchanged; at most `max_tables`."""

    def __init__(self, max_tables: int = MAX_TABLES) -> None:
        self.max_tables = max_tables
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, path_or_uri: str) -> HudiTable:
        """The table at `path_or_uri` as of its latest timeline: the kept one if nothing landed since, else loaded
        (and kept). Errors are `HudiTable.load`'s."""
        key = str(path_or_uri)
        location = TableLocation.of(key)
        stamp = timeline_stamp(location)
        if stamp is None:
            return HudiTable.load(key)  # no table there: its error
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept.stamp == stamp:
                self._kept.move_to_end(key)
                return kept.table
        # Loaded after the stamp was taken: a commit landing in between makes the next query's stamp differ.
        listed = TableLocation(ListedStorage(location), location.base_path, location.uri)
        table = HudiTable.load(listed)
        with self._lock:
            self._kept[key] = _Kept(stamp, table)
            self._kept.move_to_end(key)
            while len(self._kept) > self.max_tables:
                self._kept.popitem(last=False)
        return table

    def memo(self, table: HudiTable) -> dict[Any, Any] | None:
        """A dict that lives as long as `table` is kept (for what its plans derive from its files, such as the keys
        of its log files); None for a table this cache does not hold."""
        with self._lock:
            for kept in self._kept.values():
                if kept.table is table:
                    return kept.memo
        return None

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


# The planning process's tables (Spark's planning Python worker: `native.plan_json`, the `hudi_merge` reader).
TABLES = TableCache()
