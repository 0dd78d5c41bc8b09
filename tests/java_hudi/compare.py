"""Whole tables compared as the oracle's answer demands: same columns (by name), same types, same rows,
sorted by record key then by every column. Only representations that carry the same values are taken as equal
(string and large_string, a list's item field name, a dictionary and its values, the spelling of UTC); an int
against a long, a timestamp's unit or a decimal's scale is a difference."""
from __future__ import annotations

import pyarrow as pa

KEY = "_hoodie_record_key"
_UTC = {"UTC", "+00:00", "Etc/UTC", "Z"}


def normal_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(t):
        return normal_type(t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t) and t.tz in _UTC:
        return pa.timestamp(t.unit, "UTC")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(normal_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, normal_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(normal_type(t.key_type), normal_type(t.item_type))
    return t


def normal_table(t: pa.Table) -> pa.Table:
    schema = pa.schema([pa.field(f.name, normal_type(f.type)) for f in t.schema])
    return t.cast(schema) if schema != pa.schema([pa.field(f.name, f.type) for f in t.schema]) else t


def _sort_keys(t: pa.Table, key: str) -> list[str]:
    first = [key] if key in t.column_names else []
    rest = [c for c in t.column_names if c != key and (pa.types.is_primitive(t.schema.field(c).type)
                                                       or pa.types.is_string(t.schema.field(c).type))]
    return first + rest


def assert_same_table(ours: pa.Table, java: pa.Table, what: str, key: str = KEY,
                      ignore: tuple[str, ...] = ()) -> None:
    """`ours` (the engine's read or model) equals `java` (Java Hudi's answer): columns, types, every row."""
    ours = normal_table(ours.drop_columns([c for c in ignore if c in ours.column_names]))
    java = normal_table(java.drop_columns([c for c in ignore if c in java.column_names]))
    # Spark's file source puts partition columns last (0.15) or keeps the writer's order (1.x): names, not order.
    assert sorted(ours.column_names) == sorted(java.column_names), \
        f"{what}: columns\nours {ours.column_names}\njava {java.column_names}"
    java = java.select(ours.column_names)
    for name in ours.column_names:
        a, b = ours.schema.field(name).type, java.schema.field(name).type
        assert a == b, f"{what}: column {name} is {a} in ours, {b} in Java Hudi's"
    assert ours.num_rows == java.num_rows, f"{what}: {ours.num_rows} rows, Java Hudi has {java.num_rows}"
    order = [(c, "ascending") for c in _sort_keys(ours, key)]
    if order:
        ours, java = ours.sort_by(order), java.sort_by(order)
    for name in ours.column_names:
        a, b = ours.column(name).to_pylist(), java.column(name).to_pylist()
        if a != b:
            bad = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
            row = {c: ours.column(c)[bad].as_py() for c in ([key] if key in ours.column_names else [])}
            raise AssertionError(f"{what}: column {name} differs at row {bad} {row}: ours {a[bad]!r}, "
                                 f"Java Hudi {b[bad]!r}")
