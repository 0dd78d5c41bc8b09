from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conformance import V6_WITH_COMMITS

from hudi_engine.errors import SchemaError
from hudi_engine.java_properties import parse_properties
from hudi_engine.schema import (
    META_COLUMNS,
    add_meta_fields,
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    decimal_fixed_size,
    has_meta_fields,
    remove_meta_fields,
    schema_to_json,
    to_create_schema,
)


def _props(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie" / "hoodie.properties").read_text("latin-1"))


def _commit_schemas(base: Path) -> list[dict]:
    out = []
    for f in sorted((base / ".hoodie").iterdir()):
        if f.suffix in (".commit", ".deltacommit", ".replacecommit"):
            meta = json.loads(f.read_text("utf-8"))
            out.append(json.loads(meta["extraMetadata"]["schema"]))
    return out


def _parquet_files(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*.parquet") if not p.name.startswith("."))


def _header_schemas(data: bytes) -> list[dict]:
    """Every Avro record schema JSON embedded in a log file (the SCHEMA header), found by scanning."""
    decoder = json.JSONDecoder()
    text = data.decode("latin-1")
    out, pos = [], 0
    while (i := text.find('{"type":"record"', pos)) >= 0:
        obj, end = decoder.raw_decode(text, i)
        out.append(obj)
        pos = end
    return out


def _canonical(t: pa.DataType) -> pa.DataType:
    """Arrow type with list/map child names and nested nullability erased (parquet's 2-level lists differ)."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_canonical(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(_canonical(t.key_type), _canonical(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _canonical(f.type)) for f in t])
    return t


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_arrow_schema_of_real_parquet_gives_commit_schema(unzip_table, name):
    base = unzip_table(name)
    table_name = _props(base)["hoodie.table.name"]
    schemas = _commit_schemas(base)
    assert schemas and all(s == schemas[0] for s in schemas)
    for f in _parquet_files(base):
        arrow = pq.read_schema(f)
        assert arrow_to_avro_schema(arrow, table_name, with_meta=False) == schemas[0], f
        with_meta = arrow_to_avro_schema(arrow, table_name, with_meta=True)
        assert with_meta == add_meta_fields(schemas[0])
        footer = (arrow.metadata or {}).get(b"parquet.avro.schema")
        if footer is not None:  # parquet-avro writes the writer schema, meta fields included
            assert with_meta == json.loads(footer)


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_avro_to_arrow_matches_parquet_types(unzip_table, name):
    base = unzip_table(name)
    schema = _commit_schemas(base)[-1]
    arrow = avro_to_arrow_schema(add_meta_fields(schema))
    parquet = pq.read_schema(_parquet_files(base)[0])
    assert arrow.names == parquet.names
    for field in arrow:
        assert field.nullable
        assert _canonical(field.type) == _canonical(parquet.field(field.name).type), field.name
    # round trip, and JSON text input
    table_name = _props(base)["hoodie.table.name"]
    assert arrow_to_avro_schema(avro_to_arrow_schema(schema_to_json(schema)), table_name, with_meta=False) == schema


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_create_schema_shape(unzip_table, name):
    base = unzip_table(name)
    create = json.loads(_props(base)["hoodie.table.create.schema"])
    assert to_create_schema(_commit_schemas(base)[-1]) == create
    assert to_create_schema(add_meta_fields(_commit_schemas(base)[-1])) == create


def test_log_header_schema_has_meta_fields(unzip_table):
    base = unzip_table("mor_avrolog_v6_trips_8i1u")
    (log,) = [p for p in base.rglob(".*.log.*")]
    headers = _header_schemas(log.read_bytes())
    assert headers
    commit = _commit_schemas(base)[-1]
    arrow = pq.read_schema(_parquet_files(base)[0])
    for h in headers:
        assert h == add_meta_fields(commit)
        assert h == arrow_to_avro_schema(arrow, "v6_trips_8i1u", with_meta=True)
        assert h["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None}
        assert remove_meta_fields(h) == commit


def test_log_files_header_schemas_round_trip(conformance_dir):
    seen = 0
    for f in (conformance_dir / "log_files").rglob(".*"):
        if not f.is_file():
            continue
        for h in _header_schemas(f.read_bytes()):
            table = h["namespace"].removeprefix("hoodie.")
            assert h["name"] == f"{table}_record"
            assert has_meta_fields(h)
            assert arrow_to_avro_schema(avro_to_arrow_schema(h), table, with_meta=True) == h
            seen += 1
    assert seen >= 3


@pytest.mark.parametrize(
    "precision,size", [(1, 1), (2, 1), (3, 2), (4, 2), (9, 4), (10, 5), (18, 8), (19, 9), (28, 12), (38, 16)]
)
def test_decimal_fixed_size(precision, size):
    assert decimal_fixed_size(precision) == size


def test_spark_naming_of_nested_types():
    arrow = pa.schema(
        [
            pa.field("b", pa.int8()),
            pa.field("s", pa.int16(), nullable=False),
            pa.field("ts", pa.timestamp("ns")),
            pa.field("d", pa.date32()),
            pa.field("bin", pa.large_binary()),
            pa.field("dec_list", pa.list_(pa.decimal128(5, 2))),
            pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("x", pa.decimal128(20, 0))]))),
            pa.field("st", pa.struct([pa.field("inner", pa.struct([pa.field("y", pa.string())]))])),
        ]
    )
    avro = arrow_to_avro_schema(arrow, "t", with_meta=False)
    assert avro["name"] == "t_record" and avro["namespace"] == "hoodie.t"
    types = {f["name"]: f["type"] for f in avro["fields"]}
    assert all(f["default"] is None for f in avro["fields"])
    assert types["b"] == ["null", "int"] and types["s"] == ["null", "int"]
    assert types["ts"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert types["d"] == ["null", {"type": "int", "logicalType": "date"}]
    assert types["bin"] == ["null", "bytes"]
    assert types["dec_list"] == [
        "null",
        {
            "type": "array",
            "items": [
                "null",
                {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.dec_list", "size": 3,
                 "logicalType": "decimal", "precision": 5, "scale": 2},
            ],
        },
    ]
    m_value = types["m"][1]["values"][1]
    assert (m_value["name"], m_value["namespace"]) == ("m", "hoodie.t.t_record")
    assert m_value["fields"][0]["type"][1]["namespace"] == "hoodie.t.t_record.m.x"
    assert m_value["fields"][0]["type"][1]["size"] == 9
    inner = types["st"][1]["fields"][0]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.t.t_record.st")


def test_meta_columns_in_arrow_schema_are_normalised():
    arrow = pa.schema([pa.field("id", pa.int64()), pa.field("_hoodie_record_key", pa.string())])
    no_meta = arrow_to_avro_schema(arrow, "t", with_meta=False)
    assert [f["name"] for f in no_meta["fields"]] == ["id"]
    with_meta = arrow_to_avro_schema(arrow, "t", with_meta=True)
    assert [f["name"] for f in with_meta["fields"]] == [*META_COLUMNS, "id"]
    assert add_meta_fields(with_meta) == with_meta


def test_remove_meta_fields_drops_operation_field():
    avro = add_meta_fields({"type": "record", "name": "r", "fields": [{"name": "_hoodie_operation", "type": "string"}]})
    assert remove_meta_fields(avro)["fields"] == []


@pytest.mark.parametrize(
    "arrow_type,message",
    [
        (pa.uint64(), "uint64"),
        (pa.map_(pa.int32(), pa.string()), "string keys"),
        (pa.duration("s"), "no Spark/Avro equivalent"),
        (pa.decimal256(40, 2), "at most 38"),
    ],
)
def test_unconvertible_arrow_types(arrow_type, message):
    with pytest.raises(SchemaError, match=message) as e:
        arrow_to_avro_schema(pa.schema([pa.field("col", arrow_type)]), "t", with_meta=False)
    assert "col" in str(e.value)


def test_invalid_avro_field_name():
    with pytest.raises(SchemaError, match="not a valid Avro name"):
        arrow_to_avro_schema(pa.schema([pa.field("a-b", pa.int32())]), "t", with_meta=False)


def test_avro_to_arrow_general_avro():
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "req", "type": "long"},
            {"name": "late_null", "type": ["string", "null"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
            {"name": "e2", "type": ["null", "E"]},
            {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 16}},
            {"name": "bdec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}},
            {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "jstr", "type": {"type": "string", "avro.java.string": "String"}},
            {"name": "multi", "type": ["null", "int", "string"]},
            {"name": "widen", "type": ["int", "long"]},
            {"name": "arr", "type": {"type": "array", "items": "int"}},
            {"name": "rec", "type": {"type": "record", "name": "Inner", "fields": [{"name": "a", "type": "int"}]}},
            {"name": "rec2", "type": ["null", "ns.Inner"]},
        ],
    }
    s = avro_to_arrow_schema(avro)
    assert not s.field("req").nullable and s.field("req").type == pa.int64()
    assert s.field("late_null").nullable and s.field("late_null").type == pa.string()
    assert s.field("e").type == pa.string() and s.field("e2").type == pa.string()
    assert s.field("fx").type == pa.binary(16)
    assert s.field("bdec").type == pa.decimal128(12, 3)
    assert s.field("ms").type == pa.timestamp("us", tz="UTC")
    assert s.field("local").type == pa.timestamp("us")
    assert s.field("jstr").type == pa.string()
    assert s.field("multi").type == pa.struct([pa.field("member0", pa.int32()), pa.field("member1", pa.string())])
    assert s.field("widen").type == pa.int64()
    assert s.field("arr").type == pa.list_(pa.field("item", pa.int32(), nullable=False))
    assert s.field("rec2").type == s.field("rec").type == pa.struct([pa.field("a", pa.int32(), nullable=False)])


@pytest.mark.parametrize("bad", ["not json", '{"type":"int"}', {"type": "record", "name": "r", "fields": [{"name": "x", "type": "Nope"}]}])
def test_avro_to_arrow_errors(bad):
    with pytest.raises(SchemaError):
        avro_to_arrow_schema(bad)


def test_schema_to_json_is_compact():
    assert schema_to_json({"type": "record", "name": "r", "fields": []}) == '{"type":"record","name":"r","fields":[]}'
