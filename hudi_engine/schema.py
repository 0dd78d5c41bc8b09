"""Arrow <-> Avro schema conversion with the naming Spark's `AvroConversionUtils` gives Hudi tables (FORMAT.md,
Avro schema naming).

Hudi resolves Avro data with reader = table schema and writer = file / log-header schema, and Avro matches
named types (records, fixed) by full name. So a schema written by this engine must use exactly the names
Spark would have chosen, or real Hudi fails to read our log blocks against its commit schema:

* top record `<table>_record` in namespace `hoodie.<table>`;
* a struct field becomes a record named after the field, namespace = full name of the enclosing record;
  structs inside arrays/maps take the name of the field holding the array/map;
* a decimal becomes `fixed` named `fixed`, namespace `<enclosing record full name>.<field name>`, size =
  the fewest bytes that hold the precision;
* every field is a union `["null", T]` with `"default": null`; array items and map values are nullable
  unions without a default.

Choices where Arrow has more types than Spark (documented because readers of the other direction rely on them):
* Every Arrow field becomes nullable in Avro, whatever its Arrow nullability: Hudi's Spark path makes all
  columns nullable, and a non-union field would break schema evolution against real tables.
* int8/int16/uint8/uint16 -> `int` (Spark ByteType/ShortType are Avro ints too); uint32 -> `long`;
  uint64 is refused. float16 -> `float`.
* Every timestamp (any unit, with or without a time zone) -> `long` `timestamp-micros`, Spark's TimestampType.
  A naive Arrow timestamp is read as UTC wall time. date64 -> `int` `date`.
* fixed_size_binary -> Avro `fixed` named like a decimal's (`fixed`, namespace `<parent>.<field>`) so that
  it round-trips through `avro_to_arrow_schema`; binary/large_binary -> `bytes`.
* dictionary columns convert as their value type; large_string/large_list/fixed_size_list as string/array.
* Arrow null type -> Avro `"null"` (Spark NullType), not wrapped in a union.

In the other direction (`avro_to_arrow_schema`) unions with more than one non-null branch become a struct
with fields `member0`, `member1`, ... (Spark's convention), except `[int, long]` -> int64 and
`[float, double]` -> float64. Lists are `pa.list_` with the default element name `item`; map entries are
`pa.map_` with key `key` (string, non-null) and value `value`.
"""
from __future__ import annotations

import copy
import json
import re
from typing import Any

import pyarrow as pa

from .avro_visitor import AvroSchemaVisitor
from .errors import SchemaError

META_COLUMNS: tuple[str, ...] = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
OPERATION_COLUMN = "_hoodie_operation"

_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def meta_field(name: str) -> dict:
    """The exact field JSON Hudi writes for a meta column (`HoodieAvroUtils.addMetadataFields`)."""
    return {"name": name, "type": ["null", "string"], "doc": "", "default": None}


def decimal_fixed_size(precision: int) -> int:
    """Fewest bytes whose two's complement range holds every unscaled value of `precision` digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def schema_to_json(avro: dict | list | str) -> str:
    """Compact JSON as Java's `Schema.toString()` prints it (no spaces), for commit metadata and log headers."""
    return json.dumps(avro, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------------- Arrow -> Avro


def arrow_to_avro_schema(schema: pa.Schema, table_name: str, *, with_meta: bool) -> dict:
    """Avro record schema for `schema`, named as Spark names a Hudi table's schema.

    with_meta=True puts the five meta fields first (Hudi's shape, replacing any meta columns the Arrow
    schema carries); with_meta=False leaves them out altogether, which is the commit `schema` convention.
    A `_hoodie_operation` column is kept as an ordinary field where it is.
    """
    if not table_name:
        raise SchemaError("arrow_to_avro_schema: table_name is empty; expected the hoodie.table.name")
    fields = [f for f in schema if f.name not in META_COLUMNS]
    record = _struct_to_record(fields, f"{table_name}_record", f"hoodie.{table_name}", path=table_name)
    return add_meta_fields(record) if with_meta else record


def _struct_to_record(fields: list[pa.Field] | pa.StructType, name: str, namespace: str, path: str) -> dict:
    full_name = f"{namespace}.{name}" if namespace else name
    out = []
    seen: set[str] = set()
    for f in fields:
        if not _AVRO_NAME.match(f.name):
            raise SchemaError(
                f"column {path}.{f.name!r} is not a valid Avro name: expected [A-Za-z_][A-Za-z0-9_]*"
            )
        if f.name in seen:
            raise SchemaError(f"column {path}.{f.name!r} appears twice; Avro records need unique field names")
        seen.add(f.name)
        avro_type = _arrow_to_avro_type(f.type, f.name, full_name, f"{path}.{f.name}")
        if avro_type == "null":
            out.append({"name": f.name, "type": "null", "default": None})
        else:
            out.append({"name": f.name, "type": ["null", avro_type], "default": None})
    return {"type": "record", "name": name, "namespace": namespace, "fields": out}


def _nullable(avro_type: Any) -> Any:
    return avro_type if avro_type == "null" else ["null", avro_type]


def _arrow_to_avro_type(t: pa.DataType, field_name: str, namespace: str, path: str) -> Any:
    """Avro type of an Arrow type; `field_name`/`namespace` name any record or fixed it creates."""
    if pa.types.is_dictionary(t):
        return _arrow_to_avro_type(t.value_type, field_name, namespace, path)
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_boolean(t):
        return "boolean"
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return "int"
    if t in (pa.int64(), pa.uint32()):
        return "long"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "string_view"):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or _is_view(t, "binary_view"):
        return "bytes"
    if pa.types.is_fixed_size_binary(t) and not pa.types.is_decimal(t):
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{field_name}", "size": t.byte_width}
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise SchemaError(f"column {path}: {t} has precision {t.precision}; Spark/Hudi allow at most 38")
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{field_name}",
            "size": decimal_fixed_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if pa.types.is_struct(t):
        return _struct_to_record(list(t), field_name, namespace, path)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is_view(t, "list_view"):
        items = _arrow_to_avro_type(t.value_type, field_name, namespace, f"{path}[]")
        return {"type": "array", "items": _nullable(items)}
    if pa.types.is_map(t):
        key = t.key_type
        if pa.types.is_dictionary(key):
            key = key.value_type
        if not (pa.types.is_string(key) or pa.types.is_large_string(key)):
            raise SchemaError(f"column {path}: map key type {t.key_type}; Avro maps only have string keys")
        values = _arrow_to_avro_type(t.item_type, field_name, namespace, f"{path}{{}}")
        return {"type": "map", "values": _nullable(values)}
    raise SchemaError(f"column {path}: Arrow type {t} has no Spark/Avro equivalent in a Hudi table")


def _is_view(t: pa.DataType, name: str) -> bool:
    check = getattr(pa.types, f"is_{name}", None)
    return bool(check and check(t))


# --------------------------------------------------------------------------------------------- Avro -> Arrow


def avro_to_arrow_schema(avro: dict | str) -> pa.Schema:
    """Arrow schema of an Avro record schema (dict or JSON text). Nullable iff the Avro type is a union with null."""
    if isinstance(avro, (str, bytes)):
        try:
            avro = json.loads(avro)
        except ValueError as e:
            raise SchemaError(f"Avro schema is not valid JSON: {e}") from None
    if not isinstance(avro, dict) or avro.get("type") != "record":
        raise SchemaError(f"Avro schema must be a record, found {str(avro)[:200]}")
    return pa.schema(list(_ArrowTypes().visit(avro, None)))


class _ArrowTypes(AvroSchemaVisitor[pa.DataType, None]):
    """Avro -> Arrow types, as Spark's SchemaConverters maps them (Hudi's readers and writers agree on it)."""

    def field(self, name: str, node: Any, ns: str, path: str) -> pa.Field:
        """A record field, array item or map value: nullable iff its type is a union with null (or null)."""
        t = self.visit(node, None, ns, path)
        return pa.field(name, t, nullable=(isinstance(node, list) and "null" in node) or pa.types.is_null(t))

    def union(self, node: list, branches: list, has_null: bool, ctx: None, ns: str, path: str) -> pa.DataType:
        if not branches:
            return pa.null()
        types = [self.visit(b, None, ns, path) for b in branches]
        if len(types) == 1:
            return types[0]
        # Spark's SchemaConverters widens these two pairs instead of building a struct.
        if set(map(str, types)) == {"int32", "int64"}:
            return pa.int64()
        if set(map(str, types)) == {"float", "double"}:
            return pa.float64()
        return pa.struct([pa.field(f"member{i}", ty, nullable=True) for i, ty in enumerate(types)])

    def record(self, node: dict, name: str, ns: str, ctx: None, path: str) -> pa.DataType:
        return pa.struct([self.field(f["name"], f["type"], ns, f"{path}.{f['name']}") for f in node.get("fields", [])])

    def enum(self, node: dict, ctx: None, path: str) -> pa.DataType:
        return pa.string()

    def fixed(self, node: dict, size: int, logical: str | None, ctx: None, path: str) -> pa.DataType:
        return _decimal(node, path) if logical == "decimal" else pa.binary(size)

    def array(self, node: dict, ctx: None, ns: str, path: str) -> pa.DataType:
        return pa.list_(self.field("item", node["items"], ns, f"{path}[]"))

    def map(self, node: dict, ctx: None, ns: str, path: str) -> pa.DataType:
        return pa.map_(pa.field("key", pa.string(), nullable=False), self.field("value", node["values"], ns, f"{path}{{}}"))

    def primitive(self, kind: str, logical: str | None, node: dict, ctx: None, path: str) -> pa.DataType:
        if logical is None:
            return AVRO_PRIMITIVE_TYPES[kind]
        if kind == "int" and logical == "date":
            return pa.date32()
        if kind == "int" and logical == "time-millis":
            return pa.time32("ms")
        if kind == "long" and logical == "time-micros":
            return pa.time64("us")
        if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
            return pa.timestamp("us", tz="UTC")
        if kind == "long" and logical == "timestamp-nanos":
            return pa.timestamp("ns", tz="UTC")
        if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return pa.timestamp("us")
        if kind == "long" and logical == "local-timestamp-nanos":
            return pa.timestamp("ns")
        if kind == "bytes" and logical == "decimal":
            return _decimal(node, path)
        return AVRO_PRIMITIVE_TYPES[kind]


# The Arrow type of each Avro primitive (no logical type), as Spark reads and writes them.
AVRO_PRIMITIVE_TYPES = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


def _decimal(node: dict, path: str) -> pa.DataType:
    try:
        precision = int(node["precision"])
        scale = int(node.get("scale", 0))
    except (KeyError, TypeError, ValueError):
        raise SchemaError(f"Avro decimal at {path}: needs an integer precision, found {node}") from None
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


# --------------------------------------------------------------------------------------------- meta fields


def add_meta_fields(avro: dict) -> dict:
    """`HoodieAvroUtils.addMetadataFields`: the five meta fields first, then the other fields in order.

    Meta fields already in the schema are replaced by the standard ones, so this is idempotent.
    """
    _require_record(avro, "add_meta_fields")
    out = {k: v for k, v in avro.items() if k != "fields"}
    fields = [meta_field(n) for n in META_COLUMNS]
    fields += [copy.deepcopy(f) for f in avro["fields"] if f["name"] not in META_COLUMNS]
    out["fields"] = fields
    return _order_record(out)


def remove_meta_fields(avro: dict) -> dict:
    """`HoodieAvroUtils.removeMetadataFields`: drops the meta fields, `_hoodie_operation` included."""
    _require_record(avro, "remove_meta_fields")
    out = {k: v for k, v in avro.items() if k != "fields"}
    out["fields"] = [
        copy.deepcopy(f) for f in avro["fields"] if f["name"] not in META_COLUMNS and f["name"] != OPERATION_COLUMN
    ]
    return _order_record(out)


def has_meta_fields(avro: dict) -> bool:
    _require_record(avro, "has_meta_fields")
    names = {f["name"] for f in avro["fields"]}
    return all(n in names for n in META_COLUMNS)


def _order_record(record: dict) -> dict:
    # Keep Java's key order (type, name, namespace, doc, fields, ...) so printed schemas read like Hudi's.
    order = ["type", "name", "namespace", "doc", "fields"]
    return {k: record[k] for k in order if k in record} | {k: v for k, v in record.items() if k not in order}


def _require_record(avro: Any, what: str) -> None:
    if not isinstance(avro, dict) or avro.get("type") != "record" or not isinstance(avro.get("fields"), list):
        raise SchemaError(f"{what}: expected an Avro record schema with fields, found {str(avro)[:200]}")


# --------------------------------------------------------------------------------------------- create schema


def to_create_schema(avro: dict) -> dict:
    """The `hoodie.table.create.schema` shape Spark SQL writes: unions `[T, "null"]`, no defaults, no meta fields."""
    _require_record(avro, "to_create_schema")
    return _create_shape(remove_meta_fields(avro))


def _create_shape(node: Any) -> Any:
    if isinstance(node, list):
        branches = [_create_shape(b) for b in node if b != "null"]
        return branches + ["null"] if len(branches) < len(node) else branches
    if isinstance(node, dict):
        kind = node.get("type")
        if kind == "record":
            out = {k: v for k, v in node.items() if k != "fields"}
            out["fields"] = [
                {k: _create_shape(v) if k == "type" else v for k, v in f.items() if k != "default"}
                for f in node["fields"]
            ]
            return out
        if kind == "array":
            return {**node, "items": _create_shape(node["items"])}
        if kind == "map":
            return {**node, "values": _create_shape(node["values"])}
    return node
