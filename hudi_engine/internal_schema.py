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
  add of the same name) by its id, not its name; so do ours, in base files and log blocks, for the top-level columns
  and for the struct members under them (down lists and map values too).
* `InternalSchema`'s changes: Hudi's TableChanges of columns and of struct members by their full names.
"""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

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

    # ---- changes of struct members (Hudi's TableChanges on a nested field's full name, `s.a`) ---------------------

    def member(self, path: Sequence[str]) -> dict | None:
        """The JSON of the struct member at `path` (a top-level column, then member names down records, `element`
        into an array's elements and `value` into a map's values, as Hudi's full names go), or None."""
        parent = self.node_at(path[:-1])
        if not isinstance(parent, dict) or parent.get("type") != "record":
            return None
        return next((m for m in parent["fields"] if m["name"] == path[-1]), None)

    def node_at(self, path: Sequence[str], root: dict | None = None) -> Any:
        """The type at `path` (the schema's own record at ()), or None where the path leads nowhere. In `root` (the
        schema's JSON) when given, so that the caller may change it there."""
        node: Any = root if root is not None else {"type": "record", "fields": [f.to_json() for f in self.fields]}
        for part in path:
            node = _child(node, part)
        return node

    def edited(self, parent: Sequence[str], edit: Callable[[list[dict]], list[dict]],
               max_column_id: int | None = None) -> InternalSchema:
        """The schema with the members of the struct at `parent` (a path to a record, `member`'s) replaced by
        `edit(members)`; every other id kept."""
        node = copy.deepcopy(self.to_json())
        record = self.node_at(parent, node)
        record["fields"][:] = edit(list(record["fields"]))
        if max_column_id is not None:
            node["max_column_id"] = max_column_id
        return InternalSchema.from_json(node)

    def renamed_member(self, path: Sequence[str], new: str) -> InternalSchema:
        return self.edited(path[:-1], lambda ms: [{**m, "name": new} if m["name"] == path[-1] else m for m in ms])

    def dropped_member(self, path: Sequence[str]) -> InternalSchema:
        return self.edited(path[:-1], lambda ms: [m for m in ms if m["name"] != path[-1]])

    def retyped_member(self, path: Sequence[str], new_type: str) -> InternalSchema:
        return self.edited(path[:-1], lambda ms: [{**m, "type": new_type} if m["name"] == path[-1] else m for m in ms])

    def moved_member(self, path: Sequence[str], after: str | None) -> InternalSchema:
        """A struct member put right after its sibling `after`, or first in its struct (None), as Hudi's
        ColumnPositionChange allows for nested fields."""
        def move(ms: list[dict]) -> list[dict]:
            column = next(m for m in ms if m["name"] == path[-1])
            rest = [m for m in ms if m is not column]
            at = 0 if after is None else next(i for i, m in enumerate(rest) if m["name"] == after) + 1
            return [*rest[:at], column, *rest[at:]]
        return self.edited(path[:-1], move)

    def added_member(self, path: Sequence[str], member_type: Any, after: str | None) -> InternalSchema:
        """A new optional struct member (Hudi's ColumnAddChange on a nested name): the next id, its nested types'
        ids after it; at the end of its struct, or after its sibling `after`."""
        counter = [self.max_column_id + 2]
        new = {"id": self.max_column_id + 1, "name": path[-1], "optional": True,
               "type": _renumbered(member_type, counter)}

        def add(ms: list[dict]) -> list[dict]:
            at = len(ms) if after is None else next(i for i, m in enumerate(ms) if m["name"] == after) + 1
            return [*ms[:at], new, *ms[at:]]
        return self.edited(path[:-1], add, max_column_id=counter[0] - 1)

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
    for key in (*_ID_KEYS, *_OLD_ID_KEYS):
        if key in node:
            out.append(int(node[key]))
    for f in node.get("fields", []):
        out.append(int(f["id"]))
        out.extend(_nested_ids(f["type"]))
    for key in ("element", "key", "value"):
        out.extend(_nested_ids(node.get(key)))
    return out


# SerDeHelper's names of the ids of an array's element and a map's key and value (Hudi 0.x's first releases wrote
# them with hyphens, as this engine did before it wrote Hudi's: those are read, never written).
_ID_KEYS = ("element_id", "key_id", "value_id")
_OLD_ID_KEYS = ("element-id", "key-id", "value-id")


def _without_old_ids(node: dict) -> dict:
    return {k: v for k, v in node.items() if k not in _OLD_ID_KEYS}


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
        return {**_without_old_ids(node), "element_id": element_id, "element": _renumbered(node["element"], counter)}
    key_id = counter[0]
    counter[0] += 2
    return {**_without_old_ids(node), "key_id": key_id, "value_id": key_id + 1,
            "value": _renumbered(node["value"], counter)}


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
        return {"type": "array", "element_id": element_id, "element": _type(element, counter),
                "element_optional": optional}
    if kind == "map":
        key_id = counter[0]
        counter[0] += 2
        value, optional = _unwrap(node["values"])
        return {"type": "map", "key_id": key_id, "key": "string", "value_id": key_id + 1,
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


class FileNames(dict[str, "str | None"]):
    """For each column of a query's schema: its name in a file (None: the file has no column of its id). `nested`:
    the query's columns whose struct members the file names or holds otherwise (renamed, dropped), with the file's
    and the query's internal types, by which `ColumnIds.as_query_names` finds the members by id."""

    nested: dict[str, tuple[Any, Any]]

    def __init__(self, names: dict[str, str | None], nested: dict[str, tuple[Any, Any]] | None = None) -> None:
        super().__init__(names)
        self.nested = nested or {}


@dataclass(frozen=True, slots=True)
class ColumnIds:
    """The versions of the schema history, ascending: (version id, ((column id, name[, internal type]), ...)).
    Version 0 is the schema before the first change; each other version's id is the instant of the change."""

    versions: tuple[tuple[int, tuple[tuple[Any, ...], ...]], ...]

    @staticmethod
    def load(storage: Storage, meta_path: str, completed: Iterable[str] | None = None) -> ColumnIds | None:
        """The ids of the history (`SchemaHistory.load`); None when there is none."""
        history = SchemaHistory.load(storage, meta_path, completed)
        if history is None:
            return None
        return ColumnIds(tuple(sorted((s.version_id, tuple((f.id, f.name, f.type) for f in s.fields))
                                      for s in history.schemas)))

    def _fields(self, instant: str | None) -> dict[int, tuple[str, Any]]:
        """(name, internal type) by id of the schema a file written at `instant` has (the newest version not after
        it)."""
        at = self.versions[0][1]
        for version, fields in self.versions:
            if instant is None or version <= int(instant):
                at = fields
        return {f[0]: (f[1], f[2] if len(f) > 2 else None) for f in at}

    def file_names(self, query_instant: str | None, file_instant: str) -> FileNames:
        """For each column of the schema a query at `query_instant` reads: its name in a file written at
        `file_instant`, or None when that file has no column of its id (added later); struct members by id too."""
        then, now = self._fields(file_instant), self._fields(query_instant)
        names = {name: then[i][0] if i in then else None for i, (name, _) in now.items()}
        nested = {name: (then[i][1], typ) for i, (name, typ) in now.items()
                  if i in then and isinstance(typ, dict) and _member_names(then[i][1]) != _member_names(typ)}
        return FileNames(names, nested)

    def dropped_since(self, file_instant: str) -> set[str]:
        """The names, in a file written at `file_instant`, of its columns the newest schema no longer has."""
        now = self._fields(None)
        return {name for i, (name, _) in self._fields(file_instant).items() if i not in now}

    def as_query_names(self, table: pa.Table, names: dict[str, str | None]) -> pa.Table:
        """`table` (a file's columns) with the query's names (`file_names`); a column of another id that has a
        query column's name (dropped, then added again) is left out. Struct members the query names otherwise are
        renamed, and those it dropped left out, by id (`FileNames.nested`); their types and order, and members added
        later, come from the cast to the query's schema."""
        back = {f: q for q, f in names.items() if f is not None}
        keep = [c for c in table.column_names if c in back or c not in names]
        out = table.select(keep).rename_columns([back.get(c, c) for c in keep])
        nested = getattr(names, "nested", {})
        for name, (file_type, query_type) in nested.items():
            if name in out.column_names:
                i = out.column_names.index(name)
                column = out.column(i)
                chunks = [_as_query_members(c, file_type, query_type) for c in column.chunks] or \
                    [_as_query_members(pa.array([], column.type), file_type, query_type)]
                out = out.set_column(i, name, pa.chunked_array(chunks))
        return out


def _child(node: Any, part: str) -> Any:
    """The type one step down a full name: a record's member, an array's `element`, a map's `value`; else None."""
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if kind == "record":
        return next((f["type"] for f in node["fields"] if f["name"] == part), None)
    if (kind, part) in (("array", "element"), ("map", "value")):
        return node[part]
    return None


def _member_names(node: Any) -> Any:
    """A nested type's (id, name) of every struct member, recursively: what a file must rename or drop by id."""
    if not isinstance(node, dict):
        return None
    if node.get("type") == "record":
        return tuple((f["id"], f["name"], _member_names(f["type"])) for f in node["fields"])
    if node.get("type") == "array":
        return ("array", _member_names(node.get("element")))
    if node.get("type") == "map":
        return ("map", _member_names(node.get("value")))
    return None


def _as_query_members(array: pa.Array, file_type: Any, query_type: Any) -> pa.Array:
    """`array` (a file's nested column of internal type `file_type`) with its struct members named as `query_type`
    names them by id, the members it lacks left out (down lists and map values too)."""
    if not isinstance(file_type, dict) or not isinstance(query_type, dict) or \
            file_type.get("type") != query_type.get("type"):
        return array
    kind = file_type["type"]
    mask = array.is_null() if array.null_count else None
    if kind == "record" and pa.types.is_struct(array.type):
        wanted = {f["id"]: f for f in query_type["fields"]}
        children, names = [], []
        for f in file_type["fields"]:
            index = array.type.get_field_index(f["name"])
            if f["id"] in wanted and index >= 0:
                children.append(_as_query_members(array.field(index), f["type"], wanted[f["id"]]["type"]))
                names.append(wanted[f["id"]]["name"])
        if not children:  # no member of the query's in the file: all null, the cast adds the query's members
            return pa.nulls(len(array), pa.struct([]))
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if kind in ("array", "map") and (pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or
                                     pa.types.is_map(array.type)):
        # Offsets from 0 over the values this (maybe sliced) array spans: Arrow takes no null mask with a slice.
        offsets = array.offsets
        start, end = (offsets[0].as_py(), offsets[-1].as_py()) if len(offsets) else (0, 0)
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
        if kind == "array":
            values = array.values.slice(start, end - start)
            values = _as_query_members(values, file_type.get("element"), query_type.get("element"))
            return type(array).from_arrays(offsets, values, mask=mask)
        items = _as_query_members(array.items.slice(start, end - start), file_type.get("value"),
                                  query_type.get("value"))
        return pa.MapArray.from_arrays(offsets, array.keys.slice(start, end - start), items, mask=mask)
    return array


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
