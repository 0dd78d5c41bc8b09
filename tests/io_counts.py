"""Counting a table's metadata reads during one operation: reads of `hoodie.properties` (the `TableConfig` loads)
and listings of the `.hoodie` folder (the timeline listings, with the instant protocol's own ownership listings),
by wrapping `Storage`'s read and list methods (every listing goes through `Storage._list`). The data table's and its
metadata table's (`.hoodie/metadata`) `hoodie.properties` reads and `Timeline.load` calls are counted apart; the
listings of either `.hoodie` together."""
from __future__ import annotations

import collections
from collections.abc import Iterator
from contextlib import contextmanager

from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline

PROPERTIES = "hoodie.properties"
METADATA = ".hoodie/metadata"  # the metadata table's base path below the data table's


class IOCounter:
    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()

    @property
    def properties_reads(self) -> int:
        return self.counts["properties"]

    @property
    def metadata_properties_reads(self) -> int:
        """Reads of the metadata table's `hoodie.properties`."""
        return self.counts["metadata_properties"]

    @property
    def metadata_timeline_loads(self) -> int:
        """`Timeline.load` calls of the metadata table's timeline."""
        return self.counts["metadata_timeline"]

    @property
    def meta_listings(self) -> int:
        """Every listing of `.hoodie` or `.hoodie/timeline` (timeline loads, the ownership checks at the commit, temp
        files)."""
        return self.counts["listings"]

    @property
    def timeline_loads(self) -> int:
        """`Timeline.load` calls: the active timeline read into a `Timeline`."""
        return self.counts["timeline"]

    def snapshot(self) -> dict[str, int]:
        return {"properties_reads": self.properties_reads, "meta_listings": self.meta_listings,
                "timeline_loads": self.timeline_loads}


def install() -> tuple[IOCounter, list[tuple[object, str, object]]]:
    """Wrap the methods; returns the counter and what to restore."""
    counter = IOCounter()
    read, listing, load = Storage.read_bytes, Storage._list, Timeline.__dict__["load"].__func__

    def read_bytes(self, path):
        if path.rsplit("/", 1)[-1].startswith(PROPERTIES):
            counter.counts["metadata_properties" if f"/{METADATA}/" in path else "properties"] += 1
        return read(self, path)

    def _list(self, path):
        if path.rstrip("/").endswith(("/.hoodie", "/.hoodie/timeline")):  # the timeline's folder in layouts 1 and 2
            counter.counts["listings"] += 1
        return listing(self, path)

    def timeline_load(location, *args, **kwargs):
        counter.counts["metadata_timeline" if location.base_path.rstrip("/").endswith(f"/{METADATA}") else
                       "timeline"] += 1
        return load(location, *args, **kwargs)

    Storage.read_bytes, Storage._list = read_bytes, _list  # type: ignore[method-assign]
    Timeline.load = staticmethod(timeline_load)  # type: ignore[method-assign]
    return counter, [(Storage, "read_bytes", read), (Storage, "_list", listing),
                     (Timeline, "load", staticmethod(load))]


def uninstall(saved: list[tuple[object, str, object]]) -> None:
    for owner, name, original in saved:
        setattr(owner, name, original)


@contextmanager
def counting() -> Iterator[IOCounter]:
    counter, saved = install()
    try:
        yield counter
    finally:
        uninstall(saved)
