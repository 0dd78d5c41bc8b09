"""Hudi's schema-on-read schema (`InternalSchema`, written when `hoodie.schema.on.read.enable=true`): every column
with an id that a rename keeps, and the history of every version of it in `.hoodie/.schema`.

* `InternalSchema`: one version, as Hudi's `SerDeHelper` spells it in JSON (`latest_schema` in a commit's
  extraMetadata): `max_column_id`, `version_id` (the instant of the change; 0 for the schema before the first one),
  the fields with `id`, `name`, `optional`, `type` (`"long"`, `"decimal(10, 2)"`, or a nested record, array or map
  with their own ids) and `doc`. Made from an Avro schema as Hudi's `AvroInternalSchemaConverter` numbers it.
* `SchemaHistory`: the versions in `.hoodie/.schema/<instant>[_<completion>].schemacommit` (`{"schemas": [newest
  first]}`), as `FileBasedInternalSchemaStorageManager` keeps them: only the files of completed commits count, and
  every commit made with a history writes the whole history again under its own instant.
* `ColumnIds`: Java Hudi's schema-on-read readers find a column in a file written before a rename (or a drop and an
  add of the same name) by its id, not its name; so do ours, for the top-level columns of base files and log blocks.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from hudi_engine.errors import SchemaError
from hudi_engine.schema import add_meta_fields
from hudi_engine.storage import Storage

SCHEMA_FOLDER = ".schema"
LATEST_SCHEMA = "latest_schema"  # SerDeHelper.LATEST_SCHEMA: the commit's internal schema, in extraMetadata
_ACTION = "schemacommit"  # HoodieTimeline.SCHEMA_COMMIT_ACTION
_HISTORY_FILE = re.compile(r"^(\d+)(?:_(\d+))?\.schemacommit$")  # <instant>[_<completion>].schemacommit: completed
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_NUMERIC = ("int", "long", "float", "double")


@dataclass(frozen=True, slots=True)
class Field:
    """A top-level column: `type` is Hudi's type name, or the JSON of a nested type (kept as Hudi numbered it)."""

    id: int
    name: str
    optional: bool
    type: Any
    doc: str | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "optional": self.optional, "type": self.type}
        if self.doc is not None:
            out["doc"] = self.doc
        return out


@dataclass(frozen=True, slots=True)
class InternalSchema:
    """One version of a table's schema-on-read schema, meta columns included (ids 0-4, as Hudi numbers them)."""

    version_id: int
    max_column_id: int
    fields: tuple[Field, ...]

    @staticmethod
    def from_json(node: dict) -> InternalSchema:
        fields = tuple(Field(int(f["id"]), f["name"], bool(f["optional"]), f["type"], f.get("doc"))
                       for f in node["fields"])
        max_id = node.get("max_column_id")
        return InternalSchema(int(node.get("version_id", 0)),
                              int(max_id) if max_id is not None else _max_id(fields), fields)

    def to_json(self) -> dict:
        return {"max_column_id": self.max_column_id, "version_id": self.version_id, "type": "record",
                "fields": [f.to_json() for f in self.fields]}

    def text(self) -> str:
        """The JSON as Hudi writes it (Jackson's compact form)."""
        return json.dumps(self.to_json(), separators=(",", ":"))

    @staticmethod
    def from_avro(avro: dict, version_id: int = 0) -> InternalSchema:
        """`avro` (a writer schema, without or with the meta fields) numbered as Hudi's AvroInternalSchemaConverter
        numbers a schema: the fields of a record take the next ids in order, then their nested types, depth first."""
        record = add_meta_fields(avro)
        counter = [len(record["fields"])]
        fields = _record_fields(record, 0, counter)
        return InternalSchema(version_id, counter[0] - 1, tuple(fields))

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    # ---- changes (Hudi's TableChanges, applied to top-level columns) -------------------------------------------

    def renamed(self, old: str, new: str) -> InternalSchema:
        return replace(self, fields=tuple(replace(f, name=new) if f.name == old else f for f in self.fields))

    def dropped(self, names: Iterable[str]) -> InternalSchema:
        gone = set(names)
        return replace(self, fields=tuple(f for f in self.fields if f.name not in gone))

    def retyped(self, name: str, new_type: str) -> InternalSchema:
        return replace(self, fields=tuple(replace(f, type=new_type) if f.name == name else f for f in self.fields))

    def moved(self, name: str, after: str) -> InternalSchema:
        """`name` taken out and put right after `after` (Hudi's ColumnPositionChange AFTER, which keeps every id;
        FIRST of a top-level column Hudi refuses, so there is no top-level FIRST here)."""
        column = self.field(name)
        rest = [f for f in self.fields if f.name != name]
        at = next((i for i, f in enumerate(rest) if f.name == after), None)
        if column is None or at is None:
            raise SchemaError(f"no column {name if column is None else after!r} to move after; the columns are "
                              f"{self.names}")
        return replace(self, fields=(*rest[:at + 1], column, *rest[at + 1:]))

    def ordered(self, names: Iterable[str]) -> InternalSchema:
        """The fields named in `names` in that order, then any other field in the order it had."""
        by_name = {f.name: f for f in self.fields}
        first = [by_name[n] for n in dict.fromkeys(names) if n in by_name]
        return replace(self, fields=(*first, *(f for f in self.fields if f not in first)))

    def reconciled(self, writer: dict, version_id: int) -> InternalSchema:
        """The schema after a write whose writer schema is `writer` (Hudi's AvroSchemaEvolutionUtils.reconcileSchema):
        its new columns get the next ids, at the end; a column it widens (Hudi's allowed type changes) takes the new
        type; columns it lacks are kept. Itself when nothing changed (its version id kept, as Hudi keeps it)."""
        incoming = InternalSchema.from_avro(writer)
        fields = list(self.fields)
        next_id = self.max_column_id
        changed = False
        for f in incoming.fields:
            mine = next((i for i, g in enumerate(fields) if g.name == f.name), None)
            if mine is None:
                counter = [next_id + 2]
                typ = _renumbered(f.type, counter)
                fields.append(Field(next_id + 1, f.name, True, typ, f.doc))
                next_id = counter[0] - 1
                changed = True
            elif (isinstance(f.type, str) and isinstance(fields[mine].type, str) and f.type != fields[mine].type
                  and type_change_allowed(fields[mine].type, f.type)):
                fields[mine] = replace(fields[mine], type=f.type)
                changed = True
        if not changed:
            return self
        return InternalSchema(version_id, max(next_id, self.max_column_id), tuple(fields))

    def same_columns(self, other: InternalSchema) -> bool:
        return self.fields == other.fields


def type_change_allowed(old: str, new: str) -> bool:
    """Hudi's SchemaChangeUtils.isTypeUpdateAllow for primitive types: int -> long/float/double/string/decimal,
    long -> float/double/string/decimal, float -> double/string/decimal, double -> string/decimal, decimal -> a
    decimal as wide or wider / string, string -> date/decimal, date -> string."""
    if old == new:
        return True
    widen = {"int": ("long", "float", "double", "string"), "long": ("float", "double", "string"),
             "float": ("double", "string"), "double": ("string",), "date": ("string",), "string": ("date",)}
    if new in widen.get(old, ()):
        return True
    new_dec, old_dec = _DECIMAL.match(new), _DECIMAL.match(old)
    if new_dec and old in (*_NUMERIC, "string"):
        return True
    if old_dec:
        if new == "string":
            return True
        if new_dec:
            (p0, s0), (p1, s1) = (map(int, old_dec.groups())), (map(int, new_dec.groups()))
            wider = p1 - s1 >= p0 - s0 and s1 >= s0  # DecimalType.isWiderThan
            return wider or (p1 >= p0 and s1 == s0)
    return False


def internal_type(avro: dict) -> Any:
    """The internal type of a top-level column of `avro` (a record holding that one field): for a type change."""
    return _record_fields({"type": "record", "fields": avro["fields"]}, 0, [len(avro["fields"])])[0].type


def _max_id(fields: Iterable[Field]) -> int:
    ids = [f.id for f in fields]
    for f in fields:
        ids.extend(_nested_ids(f.type))
    return max(ids, default=-1)


def _nested_ids(node: Any) -> list[int]:
    if not isinstance(node, dict):
        return []
    out: list[int] = []
    for key in ("element-id", "key-id", "value-id"):
        if key in node:
            out.append(int(node[key]))
    for f in node.get("fields", []):
        out.append(int(f["id"]))
        out.extend(_nested_ids(f["type"]))
    for key in ("element", "key", "value"):
        out.extend(_nested_ids(node.get(key)))
    return out


def _renumbered(node: Any, counter: list[int]) -> Any:
    """A nested type numbered afresh from `counter` (a new column's)."""
    if not isinstance(node, dict):
        return node
    if node["type"] == "record":
        first = counter[0]
        counter[0] += len(node["fields"])
        return {"type": "record", "fields": [
            {**f, "id": first + i, "type": _renumbered(f["type"], counter)} for i, f in enumerate(node["fields"])]}
    if node["type"] == "array":
        element_id = counter[0]
        counter[0] += 1
        return {**node, "element-id": element_id, "element": _renumbered(node["element"], counter)}
    key_id = counter[0]
    counter[0] += 2
    return {**node, "key-id": key_id, "value-id": key_id + 1, "value": _renumbered(node["value"], counter)}


def _record_fields(record: dict, first_id: int, counter: list[int]) -> list[Field]:
    out = []
    for i, f in enumerate(record["fields"]):
        typ, optional = _unwrap(f["type"])
        out.append(Field(first_id + i, f["name"], optional, _type(typ, counter), f.get("doc")))
    return out


def _unwrap(node: Any) -> tuple[Any, bool]:
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) != 1:
            raise SchemaError(f"a union of {node} has no schema-on-read type (Hudi allows [null, T] only)")
        return branches[0], len(branches) < len(node)
    return node, False


def _type(node: Any, counter: list[int]) -> Any:
    """AvroInternalSchemaConverter's type of an Avro type; nested types take ids from `counter`."""
    if isinstance(node, str):
        node = {"type": node}
    kind, logical = node["type"], node.get("logicalType")
    if isinstance(kind, (dict, list)):
        return _type(kind, counter)
    if kind == "record":
        first = counter[0]
        counter[0] += len(node["fields"])
        return {"type": "record", "fields": [f.to_json() for f in _record_fields(node, first, counter)]}
    if kind == "array":
        element_id = counter[0]
        counter[0] += 1
        element, optional = _unwrap(node["items"])
        return {"type": "array", "element-id": element_id, "element": _type(element, counter),
                "element_optional": optional}
    if kind == "map":
        key_id = counter[0]
        counter[0] += 2
        value, optional = _unwrap(node["values"])
        return {"type": "map", "key-id": key_id, "key": "string", "value-id": key_id + 1,
                "value": _type(value, counter), "value_optional": optional}
    if logical == "decimal":
        return f"decimal({node['precision']}, {node.get('scale', 0)})"
    if logical == "date":
        return "date"
    if logical in ("timestamp-millis", "timestamp-micros"):
        return "timestamp"
    if logical in ("time-millis", "time-micros"):
        return "time"
    if logical == "uuid":
        return "uuid"
    simple = {"boolean": "boolean", "int": "int", "long": "long", "float": "float", "double": "double",
              "string": "string", "enum": "string", "bytes": "binary"}
    if kind in simple:
        return simple[kind]
    if kind == "fixed":
        return f"fixed[{node['size']}]"
    raise SchemaError(f"Avro type {node} has no schema-on-read type")


@dataclass(frozen=True, slots=True)
class SchemaHistory:
    """The table's `.hoodie/.schema` history: every version, newest first, as the newest valid file holds it."""

    schemas: tuple[InternalSchema, ...]
    text: str  # the file's JSON as read (a commit that changes nothing writes it again unchanged, as Hudi does)

    @staticmethod
    def load(storage: Storage, meta_path: str, completed: Iterable[str] | None = None) -> SchemaHistory | None:
        """The history in the newest file whose instant is a completed commit (`completed`: their times; None
        counts every completed file). None when there is none (the table never changed its schema with
        schema-on-read on)."""
        valid = None if completed is None else set(completed)
        folder = Storage.join(meta_path, SCHEMA_FOLDER)
        if not storage.exists(folder):
            return None
        files = sorted((m.group(1), s.path) for s in storage.list_dir(folder)
                       if not s.is_dir and (m := _HISTORY_FILE.match(s.name))
                       and (valid is None or m.group(1) in valid))
        if not files:
            return None
        text = storage.read_bytes(files[-1][1]).decode("utf-8")
        schemas = [InternalSchema.from_json(s) for s in json.loads(text)["schemas"]]
        return SchemaHistory(tuple(sorted(schemas, key=lambda s: s.version_id, reverse=True)), text)

    @property
    def latest(self) -> InternalSchema:
        return self.schemas[0]

    def changed_columns(self) -> list[str]:
        """Columns of an older version that the newest renamed, dropped or retyped (by id), named as they were:
        empty when every change only added columns."""
        now = {f.id: f for f in self.latest.fields}
        changed = {f.name for s in self.schemas[1:] for f in s.fields
                   if f.id not in now or (now[f.id].name, now[f.id].type) != (f.name, f.type)}
        return sorted(changed)

    def with_version(self, schema: InternalSchema) -> SchemaHistory:
        """The history with `schema` as its newest version (SerDeHelper.inheritSchemas)."""
        schemas = (schema, *self.schemas)
        return SchemaHistory(schemas, history_text(schemas))

    @staticmethod
    def starting(before: InternalSchema, after: InternalSchema) -> SchemaHistory:
        """A table's first history (Hudi's AlterTableCommand): the schema before the change as version 0, then it."""
        schemas = (after, replace(before, version_id=0))
        return SchemaHistory(schemas, history_text(schemas))

    @staticmethod
    def persist(storage: Storage, meta_path: str, instant: str, text: str, completion: str | None,
                residual: Iterable[str] = ()) -> None:
        """`<instant>.schemacommit.requested` and `.inflight` (empty), then the completed file holding `text`
        (`<instant>_<completion>.schemacommit` where the timeline records completion times), as
        FileBasedInternalSchemaStorageManager.persistHistorySchemaStr writes them; first the files of `residual`
        instants (left by writes that never completed) are deleted, as it deletes them."""
        folder = Storage.join(meta_path, SCHEMA_FOLDER)
        storage.mkdirs(folder)
        gone = set(residual)
        if gone:
            for s in storage.list_dir(folder):
                if not s.is_dir and s.name.split(".")[0].split("_")[0] in gone:
                    storage.delete(s.path)
        storage.write_bytes(Storage.join(folder, f"{instant}.{_ACTION}.requested"), b"")
        storage.write_bytes(Storage.join(folder, f"{instant}.{_ACTION}.inflight"), b"")
        name = f"{instant}_{completion}.{_ACTION}" if completion else f"{instant}.{_ACTION}"
        storage.write_bytes(Storage.join(folder, name), text.encode("utf-8"))

    @staticmethod
    def instants(storage: Storage, meta_path: str) -> set[str]:
        """The instants that have files in the history folder (any state)."""
        folder = Storage.join(meta_path, SCHEMA_FOLDER)
        if not storage.exists(folder):
            return set()
        return {s.name.split(".")[0].split("_")[0] for s in storage.list_dir(folder) if not s.is_dir}


def history_text(schemas: Iterable[InternalSchema]) -> str:
    return json.dumps({"schemas": [s.to_json() for s in schemas]}, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ColumnIds:
    """The versions of the schema history, ascending: (version id, ((column id, name), ...)). Version 0 is the
    schema before the first change; each other version's id is the instant of the change."""

    versions: tuple[tuple[int, tuple[tuple[int, str], ...]], ...]

    @staticmethod
    def load(storage: Storage, meta_path: str, completed: Iterable[str] | None = None) -> ColumnIds | None:
        """The ids of the history (`SchemaHistory.load`); None when there is none."""
        history = SchemaHistory.load(storage, meta_path, completed)
        if history is None:
            return None
        return ColumnIds(tuple(sorted((s.version_id, tuple((f.id, f.name) for f in s.fields))
                                      for s in history.schemas)))

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

    def dropped_since(self, file_instant: str) -> set[str]:
        """The names, in a file written at `file_instant`, of its columns the newest schema no longer has."""
        now = self._at(None)
        return {name for i, name in self._at(file_instant).items() if i not in now}

    def as_query_names(self, table: pa.Table, names: dict[str, str | None]) -> pa.Table:
        """`table` (a file's columns) with the query's names (`file_names`); a column of another id that has a
        query column's name (dropped, then added again) is left out."""
        back = {f: q for q, f in names.items() if f is not None}
        keep = [c for c in table.column_names if c in back or c not in names]
        return table.select(keep).rename_columns([back.get(c, c) for c in keep])


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """An ALTER TABLE's change: `base`, the schema before it (the history's newest version, or the table's schema
    numbered afresh where there is no history yet), and `changed`, the schema after it (None: ADD COLUMNS, the
    write's new columns numbered at commit). Its version id becomes the ALTER's instant when it commits."""

    base: InternalSchema
    changed: InternalSchema | None = None


@dataclass(frozen=True, slots=True)
class CommitSchema:
    """What a commit records of the internal schema: `latest_schema` for its extraMetadata and the history file
    written under its instant before it completes (BaseHoodieWriteClient.saveInternalSchema)."""

    latest: InternalSchema
    history: str

    @staticmethod
    def of(history: SchemaHistory | None, writer: dict, instant: str,
           change: SchemaChange | None = None) -> CommitSchema | None:
        """A write's record. An ALTER TABLE (`change`): its changed schema as the newest version, with the instant as
        its version id; a table's first change starts the history with the schema before it as version 0 (Hudi's
        AlterTableCommand). Any other write where the table has a history: the newest version reconciled with the
        write's schema (`writer`, meta fields included: new columns get new ids, and the version id is the instant;
        nothing changed: the version and the history are kept as they are). None where the table has no history:
        Hudi starts one with a schema change only."""
        if change is not None:
            changed = change.changed or change.base.reconciled(writer, int(instant))
            changed = replace(changed, version_id=int(instant))
            after = history.with_version(changed) if history is not None else SchemaHistory.starting(change.base,
                                                                                                      changed)
            return CommitSchema(changed, after.text)
        if history is None:
            return None
        evolved = history.latest.reconciled(writer, int(instant))
        if evolved is history.latest:
            return CommitSchema(evolved, history.text)
        return CommitSchema(evolved, history.with_version(evolved).text)

    def persist(self, storage: Storage, meta_path: str, instant: str, completion: str | None,
                completed: Iterable[str]) -> None:
        """The history file of `instant`; files of instants that are not completed commits go first."""
        valid = set(completed) | {instant}
        residual = SchemaHistory.instants(storage, meta_path) - valid
        SchemaHistory.persist(storage, meta_path, instant, self.history, completion, residual)
