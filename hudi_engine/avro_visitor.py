"""One walk over Avro schemas: `AvroSchemaVisitor` resolves what every user of a schema must resolve the same way,
and leaves to a subclass only what it makes of each kind of type.

The walk (Avro specification 1.11, "Schema Declaration" and "Names"):
* a union (a JSON list) goes to `union` with its non-null branches and whether `null` was one of them;
* a type name (`"string"`, `"hoodie.t.t_record.fixed"`) is a primitive, or a named type declared earlier in the
  schema (full name first, then the name in the enclosing namespace), handed to `reference`;
* `{"type": <union or schema>}` is walked as its inner type, `{"type": "<name>"}` as that name;
* records (and errors), enums and fixed types are named: their full name and the namespace their fields are
  resolved in follow the spec (a dotted name is full, else `namespace`, else the enclosing one), and what the
  visitor returns for them is registered under that name for later references;
* arrays, maps and primitives (with their `logicalType`) go to their hooks; a hook for a type with children
  (`record`, `array`, `map`, `union`) calls `visit` on each child with the child's context and path.

`C` is what a visitor carries down the walk (the Arrow type a position must decode to, or nothing), `T` what it
builds. Users: `schema.avro_to_arrow_schema` (Avro -> Arrow types) and the Avro record codec's conversion plans
(`io.avro_codec`). A leaf module: it imports nothing of the engine beyond its errors.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar

from hudi_engine.errors import SchemaError

T = TypeVar("T")
C = TypeVar("C")

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def full_name(node: dict, enclosing_ns: str) -> tuple[str, str]:
    """(full name, namespace for the names nested in it) of a named Avro type."""
    name = node.get("name", "")
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = node.get("namespace", enclosing_ns) or ""
    return (f"{ns}.{name}" if ns else name), ns


class AvroSchemaVisitor(Generic[T, C]):
    """Walk one Avro schema with `visit`; one instance per schema (it remembers the named types it met)."""

    def __init__(self) -> None:
        self.names: dict[str, T] = {}

    def visit(self, node: Any, ctx: C, ns: str = "", path: str = "") -> T:
        """What this visitor makes of the Avro type `node`, in namespace `ns`, at `path` (for messages)."""
        if isinstance(node, list):
            branches = [b for b in node if b != "null"]
            return self.union(node, branches, len(branches) < len(node), ctx, ns, path)
        if isinstance(node, str):
            if node in PRIMITIVES:
                return self.primitive(node, None, {}, ctx, path)
            full = node if "." in node or not ns else f"{ns}.{node}"
            named = self.names.get(full)
            if named is None:
                named = self.names.get(node)
            if named is None:
                raise SchemaError(f"{self.where(path)}: unknown Avro type name {node!r}")
            return self.reference(named, ctx, path)
        if not isinstance(node, dict) or "type" not in node:
            raise SchemaError(f"{self.where(path)}: expected an Avro type, found {str(node)[:200]}")
        kind = node["type"]
        if isinstance(kind, (dict, list)):
            return self.visit(kind, ctx, ns, path)
        if kind in ("record", "error"):
            full, child_ns = full_name(node, ns)
            self.names[full] = result = self.record(node, full, child_ns, ctx, path)
            return result
        if kind == "enum":
            full, _ = full_name(node, ns)
            self.names[full] = result = self.enum(node, ctx, path)
            return result
        if kind == "fixed":
            full, _ = full_name(node, ns)
            self.names[full] = result = self.fixed(node, int(node["size"]), node.get("logicalType"), ctx, path)
            return result
        if kind == "array":
            return self.array(node, ctx, ns, path)
        if kind == "map":
            return self.map(node, ctx, ns, path)
        if kind in PRIMITIVES:
            return self.primitive(kind, node.get("logicalType"), node, ctx, path)
        return self.visit(kind, ctx, ns, path)  # {"type": "<named type>"}

    # ---- what a visitor makes of each kind (a child is walked with `self.visit(child, child_ctx, ns, path)`)

    def where(self, path: str) -> str:
        """The prefix of an error at `path`."""
        return f"Avro schema at {path or '<top>'}"

    def union(self, node: list, branches: list, has_null: bool, ctx: C, ns: str, path: str) -> T:
        raise NotImplementedError

    def record(self, node: dict, name: str, ns: str, ctx: C, path: str) -> T:
        """`ns` is the namespace of the record's fields; `name` its full name."""
        raise NotImplementedError

    def enum(self, node: dict, ctx: C, path: str) -> T:
        raise NotImplementedError

    def fixed(self, node: dict, size: int, logical: str | None, ctx: C, path: str) -> T:
        raise NotImplementedError

    def array(self, node: dict, ctx: C, ns: str, path: str) -> T:
        raise NotImplementedError

    def map(self, node: dict, ctx: C, ns: str, path: str) -> T:
        raise NotImplementedError

    def primitive(self, kind: str, logical: str | None, node: dict, ctx: C, path: str) -> T:
        """`node` is {} for a bare primitive name (no logical type, no properties)."""
        raise NotImplementedError

    def reference(self, named: T, ctx: C, path: str) -> T:
        """A later use of a named type: what the visitor made of its declaration."""
        return named
