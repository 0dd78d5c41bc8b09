"""Where a table is: the storage, the base path within it, the location tasks reopen it by (a URI for remote stores,
an absolute path for local ones), and the paths of its `.hoodie` folder. The one place that names `.hoodie`."""
from __future__ import annotations

from dataclasses import dataclass

from hudi_engine.storage import Storage

META_FOLDER = ".hoodie"  # the table's metadata folder (timeline, hoodie.properties, markers, locks)


@dataclass(frozen=True)
class TableLocation:
    storage: Storage
    base_path: str
    uri: str  # what a task or catalog reopens the table by: `Storage.location` of what the caller gave

    @staticmethod
    def of(path_or_uri: str) -> "TableLocation":
        storage, base_path = Storage.for_uri(str(path_or_uri))
        return TableLocation(storage, base_path, Storage.location(str(path_or_uri)))

    @staticmethod
    def at(storage: Storage, base_path: str) -> "TableLocation":
        """A location known by its storage and path only (its `uri` is the path)."""
        return TableLocation(storage, base_path, base_path)

    @property
    def meta_path(self) -> str:
        """The `.hoodie` folder."""
        return Storage.join(self.base_path, META_FOLDER)

    def meta(self, *parts: str) -> str:
        """A path inside the `.hoodie` folder."""
        return Storage.join(self.base_path, META_FOLDER, *parts)

    def join(self, *parts: str) -> str:
        """A path inside the table (a partition, a data file)."""
        return Storage.join(self.base_path, *parts)

    def planned_file(self, partition: str, planned: str) -> str:
        """A data file a clean or rollback plan names (Java: by its full path, or by its name), as a path in this
        table: its partition's folder and its name. Java writes the path with its own scheme (`file:/...`,
        `s3a://...`) and the base path the table had then, since copied or moved perhaps: a service of this table
        acts on this table's files only, never where a plan points outside it."""
        return self.join(partition, planned.rsplit("/", 1)[-1])

    def __str__(self) -> str:
        return self.base_path
