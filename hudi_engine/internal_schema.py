"""Hudi's schema-on-read history (`.hoodie/.schema`, written when `hoodie.schema.on.read.enable=true`): every version
of the table's schema, each column with an id. Java Hudi's schema-on-read readers find a column in a file written
before a rename (or a drop and an add of the same name) by its id, not its name; so do ours (`ColumnIds`), for the
top-level columns of base files and log blocks."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pyarrow as pa

from hudi_engine.storage import Storage

_HISTORY_FILE = re.compile(r"^(\d+)(?:_\d+)?\.schemacommit$")  # <instant>[_<completion>].schemacommit: completed


@dataclass(frozen=True, slots=True)
class ColumnIds:
    """The versions of the schema history, ascending: (version id, ((column id, name), ...)). Version 0 is the
    schema before the first change; each other version's id is the instant of the change."""

    versions: tuple[tuple[int, tuple[tuple[int, str], ...]], ...]

    @staticmethod
    def load(storage: Storage, meta_path: str) -> ColumnIds | None:
        """The history in the table's `.hoodie/.schema`: its newest completed file holds every version. None when
        there is none (the table never changed its schema with schema-on-read on)."""
        folder = Storage.join(meta_path, ".schema")
        files = sorted((int(m.group(1)), s.path) for s in storage.list_dir(folder)
                       if not s.is_dir and (m := _HISTORY_FILE.match(s.name)))
        if not files:
            return None
        schemas = json.loads(storage.read_bytes(files[-1][1]))["schemas"]
        versions = sorted((int(s["version_id"]), tuple((int(f["id"]), f["name"]) for f in s["fields"]))
                          for s in schemas)
        return ColumnIds(tuple(versions))

    def _at(self, instant: str | None) -> dict[int, str]:
        """Column names by id of the schema a file written at `instant` has (the newest version not after it)."""
        at = self.versions[0][1]
        for version, fields in self.versions:
            if instant is None or version <= int(instant):
                at = fields
        return dict(at)

    def file_names(self, query_instant: str | None, file_instant: str) -> dict[str, str | None]:
        """For each column of the schema a query at `query_instant` reads: its name in a file written at
        `file_instant`, or None when that file has no column of its id (added later)."""
        then = self._at(file_instant)
        return {name: then.get(i) for i, name in self._at(query_instant).items()}

    def as_query_names(self, table: pa.Table, names: dict[str, str | None]) -> pa.Table:
        """`table` (a file's columns) with the query's names (`file_names`); a column of another id that has a
        query column's name (dropped, then added again) is left out."""
        back = {f: q for q, f in names.items() if f is not None}
        keep = [c for c in table.column_names if c in back or c not in names]
        return table.select(keep).rename_columns([back.get(c, c) for c in keep])
