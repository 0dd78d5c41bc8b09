"""Avro record codec: Arrow <-> schemaless Avro binary, checked against fastavro's own logical-type decoding."""

from __future__ import annotations

import datetime as dt
import io
import struct
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hudi_engine.errors import LogFormatError, SchemaError
from hudi_engine.io.avro_codec import (
    binary_to_decimal,
    decimal_to_fixed,
    decode_records,
    decode_records_framed,
    encode_records,
    encode_records_framed,
    java_big_integer_bytes,
    strip_logical_types,
)
from hudi_engine.schema import arrow_to_avro_schema, avro_to_arrow_schema

UTC = dt.UTC


def rich_table() -> pa.Table:
    return pa.table(
        {
            "i": pa.array([1, None, -(2**31)], pa.int32()),
            "small": pa.array([1, -3, None], pa.int16()),
            "l": pa.array([2**62, None, -1], pa.int64()),
            "flag": pa.array([True, None, False]),
            "f": pa.array([1.5, None, -0.0], pa.float32()),
            "d": pa.array([3.14159, float("inf"), None]),
            "s": pa.array(["héllo", None, ""]),
            "b": pa.array([b"\x00\xff", None, b""]),
            "ts": pa.array(
                [
                    dt.datetime(2023, 4, 1, 12, 1, tzinfo=UTC),
                    None,
                    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "day": pa.array([dt.date(2023, 4, 1), None, dt.date(1, 1, 1)]),
            "dec": pa.array([Decimal("12345.67890"), None, Decimal("-0.00001")], pa.decimal128(10, 5)),
            "bigdec": pa.array([Decimal("-" + "9" * 38), Decimal("1"), None], pa.decimal128(38, 0)),
            "arr": pa.array(
                [[{"a": "red", "n": 1}, None], None, []], pa.list_(pa.struct([("a", pa.string()), ("n", pa.int32())]))
            ),
            "m": pa.array(
                [[("k1", {"x": 1.5, "when": dt.date(2020, 1, 1)})], None, [("k2", None)]],
                pa.map_(pa.string(), pa.struct([("x", pa.float64()), ("when", pa.date32())])),
            ),
            "st": pa.array(
                [
                    {"f": 1, "c": {"t": dt.datetime(2020, 1, 1, tzinfo=UTC), "amt": Decimal("1.25")}},
                    None,
                    {"f": None, "c": None},
                ],
                pa.struct(
                    [
                        ("f", pa.int64()),
                        ("c", pa.struct([("t", pa.timestamp("us", tz="UTC")), ("amt", pa.decimal128(5, 2))])),
                    ]
                ),
            ),
        }
    )


def expected_arrow(table: pa.Table) -> pa.Table:
    """The table as Avro round-trips it: Spark's Avro has no short, so int16 comes back int32."""
    return table.set_column(1, "small", table.column("small").cast(pa.int32()))


def test_round_trip_rich_types_with_converted_schema() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=False)
    payloads = encode_records(table, avro)
    assert len(payloads) == 3
    got = decode_records(payloads, avro)
    assert got.schema == avro_to_arrow_schema(avro)
    assert got.equals(expected_arrow(table))


def test_decoded_values_agree_with_fastavro_logical_types() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=False)
    parsed = fastavro.parse_schema(avro)
    ours = expected_arrow(table).to_pylist()
    for payload, row in zip(encode_records(table, avro), ours):
        theirs = fastavro.schemaless_reader(io.BytesIO(payload), parsed)
        row["m"] = None if row["m"] is None else dict(row["m"])
        assert theirs == row


def test_fastavro_encoded_records_decode() -> None:
    """Records written by fastavro from Python objects (independent encoder) decode to the same values."""
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=False)
    parsed = fastavro.parse_schema(avro)
    rows = expected_arrow(table).to_pylist(maps_as_pydicts="strict")
    payloads = []
    for row in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        payloads.append(buf.getvalue())
    assert payloads == encode_records(table, avro)  # byte-identical to ours
    assert decode_records(payloads, avro).equals(expected_arrow(table))


def test_explicit_arrow_schema() -> None:
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
            {"name": "n", "type": "int"},
        ],
    }
    table = pa.table({"ts": pa.array([0, None], pa.timestamp("us", tz="UTC")), "n": pa.array([1, 2], pa.int32())})
    schema = pa.schema([pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("n", pa.int64())])
    got = decode_records(encode_records(table, avro), avro, schema)
    assert got.schema == schema
    assert got.column("n").to_pylist() == [1, 2]


def test_real_record_bytes(conformance_dir: Path) -> None:
    """The Avro record in the real AVRO_DATA block decodes and re-encodes to the same bytes."""
    import json

    path = next((conformance_dir / "log_files" / "valid_log_avro_data").iterdir())
    data = path.read_bytes()
    # header entries: INSTANT_TIME (17 bytes) then SCHEMA; see test_log_format for the framing
    (schema_len,) = struct.unpack_from(">i", data, 22 + 4 + 8 + 17 + 4)
    schema_at = 22 + 4 + 8 + 17 + 8
    avro = json.loads(data[schema_at : schema_at + schema_len])
    (content_len,) = struct.unpack_from(">q", data, schema_at + schema_len)
    content = data[schema_at + schema_len + 8 : schema_at + schema_len + 8 + content_len]
    assert struct.unpack_from(">ii", content) == (3, 1)
    table = decode_records_framed(content, 8, 1, avro)
    assert table.column("rider").to_pylist() == ["rider-A"]
    assert table.column("ts").to_pylist() == [1695159649088]
    assert encode_records_framed(table, avro) == content[8:]
    (length,) = struct.unpack_from(">i", content, 8)
    assert encode_records(table, avro) == [content[12 : 12 + length]]
    assert decode_records([content[12:]], avro).equals(table)


def test_framed_round_trip_and_length_checks() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=False)
    body = encode_records_framed(table, avro)
    lengths = [len(p) for p in encode_records(table, avro)]
    assert len(body) == sum(lengths) + 4 * len(lengths)
    assert struct.unpack_from(">i", body, 0) == (lengths[0],)
    assert decode_records_framed(body, 0, 3, avro).equals(expected_arrow(table))
    with pytest.raises(LogFormatError, match="f.log: 3 bytes after the last of 3 records"):
        decode_records_framed(body + b"xyz", 0, 3, avro, where="f.log")
    with pytest.raises(LogFormatError, match="record 3 of 4"):
        decode_records_framed(body, 0, 4, avro)
    bad = bytearray(body)
    struct.pack_into(">i", bad, 0, lengths[0] + 1)  # a length that disagrees with the record
    with pytest.raises(LogFormatError):
        decode_records_framed(bytes(bad), 0, 3, avro)


def test_timestamp_units_and_local_timestamps() -> None:
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
            {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        ],
    }
    raw = fastavro.parse_schema(strip_logical_types(avro))
    payloads = []
    for ms, local, t_us, t_ms in [(1_680_350_460_123, 5, 1, 2), (-1, -1, 86_399_999_999, 86_399_999)]:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, raw, {"ms": ms, "local": local, "t_us": t_us, "t_ms": t_ms})
        payloads.append(buf.getvalue())
    got = decode_records(payloads, avro)
    assert got.schema.field("ms").type == pa.timestamp("us", tz="UTC")
    assert got.column("ms").to_pylist() == [
        dt.datetime(2023, 4, 1, 12, 1, 0, 123000, tzinfo=UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
    ]
    assert got.schema.field("local").type == pa.timestamp("us")
    assert got.column("t_us").to_pylist() == [dt.time(0, 0, 0, 1), dt.time(23, 59, 59, 999999)]
    assert got.column("t_ms").to_pylist() == [dt.time(0, 0, 0, 2000), dt.time(23, 59, 59, 999000)]
    assert encode_records(got, avro) == payloads  # millis written back as millis
    # micros -> millis rounds toward -inf (Java's floorDiv): -1500 us is -2 ms, not -1
    sub_ms = got.set_column(0, "ms", pa.array([-1500, 1500], pa.int64()).cast(pa.timestamp("us", tz="UTC")))
    assert [fastavro.schemaless_reader(io.BytesIO(p), raw)["ms"] for p in encode_records(sub_ms, avro)] == [-2, 1]
    # and nanos read into a micros column floor the same way
    nanos = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "t", "type": {"type": "long", "logicalType": "timestamp-nanos"}}],
    }
    payloads = [fastavro_bytes(nanos, {"t": v}) for v in (-1500, 1500)]
    as_us = decode_records(payloads, nanos, pa.schema([("t", pa.timestamp("us", tz="UTC"))]))
    assert as_us.column("t").cast(pa.int64()).to_pylist() == [-2, 1]


def fastavro_bytes(schema: dict, record: dict) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(strip_logical_types(schema)), record)
    return buf.getvalue()


def test_enum_fixed_and_widened_union() -> None:
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "n",
        "fields": [
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
            {"name": "fx", "type": ["null", {"type": "fixed", "name": "four", "size": 4}]},
            {"name": "again", "type": "four"},
            {"name": "num", "type": ["null", "int", "long"]},
        ],
    }
    table = pa.table(
        {
            "e": pa.array(["GREEN", "RED"]),
            "fx": pa.array([b"abcd", None], pa.binary(4)),
            "again": pa.array([b"wxyz", b"1234"], pa.binary(4)),
            "num": pa.array([7, 2**40], pa.int64()),
        }
    )
    got = decode_records(encode_records(table, avro), avro)
    assert got.to_pylist() == table.to_pylist()
    assert got.schema.field("fx").type == pa.binary(4)


def test_general_unions_are_refused() -> None:
    avro = {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["null", "string", "int"]}]}
    with pytest.raises(SchemaError, match="field r.u: union"):
        decode_records([], avro, pa.schema([("u", pa.struct([("member0", pa.string()), ("member1", pa.int32())]))]))


def test_reader_schema_resolution() -> None:
    writer = arrow_to_avro_schema(pa.schema([("a", pa.int32()), ("b", pa.string())]), "t", with_meta=False)
    reader = arrow_to_avro_schema(
        pa.schema([("b", pa.string()), ("a", pa.int64()), ("c", pa.float64())]), "t", with_meta=False
    )
    table = pa.table({"a": pa.array([1, None], pa.int32()), "b": ["x", "y"]})
    got = decode_records(encode_records(table, writer), writer, reader_schema=reader)
    assert got.column_names == ["b", "a", "c"]
    assert got.column("a").type == pa.int64()  # int promoted to long
    assert got.to_pylist() == [{"b": "x", "a": 1, "c": None}, {"b": "y", "a": None, "c": None}]


def test_encode_casts_and_errors() -> None:
    avro = arrow_to_avro_schema(
        pa.schema([("n", pa.int32()), ("ts", pa.timestamp("us", tz="UTC"))]), "t", with_meta=False
    )
    table = pa.table(
        {
            "ts": pa.array([1_500, -1_500], pa.timestamp("ns")),  # naive ns: read as UTC, truncated to micros
            "n": pa.array([1, 2], pa.int64()),
            "extra": ["ignored", "too"],
        }
    )
    got = decode_records(encode_records(table, avro), avro)
    assert got.column("ts").cast(pa.int64()).to_pylist() == [1, -1]
    assert got.column("n").to_pylist() == [1, 2]
    with pytest.raises(SchemaError, match="'n'.*no column"):
        encode_records(table.drop_columns(["n"]), avro)
    with pytest.raises(SchemaError, match="column 'n'"):
        encode_records(table.set_column(1, "n", pa.array([2**40, 1])), avro)
    non_null = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "int"}]}
    with pytest.raises(SchemaError, match="row 1"):
        encode_records(pa.table({"n": pa.array([1, None], pa.int32())}), non_null)


def test_schema_mismatch_is_detected() -> None:
    writer = arrow_to_avro_schema(pa.schema([("s", pa.string())]), "t", with_meta=False)
    other = arrow_to_avro_schema(pa.schema([("s", pa.string()), ("n", pa.int64())]), "t", with_meta=False)
    payloads = encode_records(pa.table({"s": ["hello"]}), writer)
    with pytest.raises((SchemaError, LogFormatError)):
        decode_records(payloads, other)


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "0080"),
        (-1, "ff"),
        (-128, "80"),
        (-129, "ff7f"),
        (255, "00ff"),
        (-(2**63), "8000000000000000"),
    ],
)
def test_java_big_integer_bytes(value: int, expected: str) -> None:
    assert java_big_integer_bytes(value).hex() == expected
    assert int.from_bytes(bytes.fromhex(expected), "big", signed=True) == value


def test_decimal_byte_conversions() -> None:
    values = [0, 1, -1, 127, 128, -128, -129, 10**37, -(10**37), None]
    variable = pa.array([None if v is None else java_big_integer_bytes(v) for v in values], pa.binary())
    dec = binary_to_decimal(variable, pa.decimal128(38, 2))
    assert dec.to_pylist() == [None if v is None else Decimal(v).scaleb(-2) for v in values]
    fixed = decimal_to_fixed(dec, 16)
    assert fixed.to_pylist() == [None if v is None else v.to_bytes(16, "big", signed=True) for v in values]
    assert binary_to_decimal(fixed, pa.decimal128(38, 2)).equals(dec)
    assert binary_to_decimal(decimal_to_fixed(dec.slice(0, 7), 2), pa.decimal128(38, 2)).equals(dec.slice(0, 7))
    with pytest.raises(SchemaError, match="does not fit an Avro fixed of 1 bytes"):
        decimal_to_fixed(dec, 1)
    with pytest.raises(SchemaError, match="does not fit"):
        binary_to_decimal(pa.array([b"\x01" + b"\x00" * 16]), pa.decimal128(38, 0))
    # sign extension beyond 16 bytes is fine
    assert binary_to_decimal(pa.array([b"\xff" * 20]), pa.decimal128(38, 0)).to_pylist() == [Decimal(-1)]
    assert binary_to_decimal(decimal_to_fixed(dec, 20), pa.decimal128(38, 2)).equals(dec)


def test_sliced_and_chunked_input() -> None:
    table = pa.concat_tables([rich_table(), rich_table()]).slice(1, 4)
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=False)
    got = decode_records(encode_records(table, avro), avro)
    assert got.equals(expected_arrow(table).combine_chunks())


# --------------------------------------------------------------------------------------------- columnar codec

from hudi_engine.io import avro_codec, avro_columnar  # noqa: E402

FLAT_SCHEMA = {
    "type": "record",
    "name": "flat_record",
    "namespace": "hoodie.flat",
    "fields": [
        {"name": "s", "type": ["null", "string"], "default": None},
        {"name": "s_last", "type": ["string", "null"]},  # create-schema style union order
        {"name": "i", "type": ["null", "int"], "default": None},
        {"name": "l", "type": "long"},
        {"name": "f", "type": ["null", "float"]},
        {"name": "d", "type": "double"},
        {"name": "flag", "type": ["null", "boolean"]},
        {"name": "b", "type": ["null", "bytes"]},
        {"name": "nothing", "type": "null"},
        {"name": "e", "type": ["null", {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}]},
        {"name": "fx", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "hoodie.flat.fx", "size": 3}]},
        {
            "name": "dec",
            "type": [
                "null",
                {
                    "type": "fixed",
                    "name": "fixed",
                    "namespace": "hoodie.flat.dec",
                    "size": 5,
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
        },
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {
            "name": "st",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "st",
                    "namespace": "hoodie.flat.flat_record",
                    "fields": [
                        {"name": "x", "type": ["null", "long"]},
                        {
                            "name": "inner",
                            "type": [
                                "null",
                                {"type": "record", "name": "inner", "fields": [{"name": "y", "type": "string"}]},
                            ],
                        },
                    ],
                },
            ],
        },
        {"name": "again", "type": ["null", "hoodie.flat.fx.fixed"]},
    ],
}


def flat_table(n: int = 500) -> pa.Table:
    import random

    rnd = random.Random(7)

    def maybe(v):
        return None if rnd.random() < 0.2 else v

    longs = [0, 1, -1, 63, 64, -64, -65, 2**31, -(2**63), 2**63 - 1]
    rows = []
    for k in range(n):
        rows.append(
            {
                "s": maybe(rnd.choice(["", "a", "héllo wörld", "x" * 200, "日本"])),
                "s_last": maybe(str(k)),
                "i": maybe(rnd.choice([0, -(2**31), 2**31 - 1, rnd.randint(-1000, 1000)])),
                "l": rnd.choice(longs + [rnd.randint(-(2**62), 2**62)]),
                "f": maybe(rnd.choice([0.5, -1e30, float("inf")])),
                "d": rnd.choice([0.0, -0.0, 1e-300, rnd.random()]),
                "flag": maybe(rnd.random() < 0.5),
                "b": maybe(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))),
                "nothing": None,
                "e": maybe(rnd.choice(["RED", "GREEN", "BLUE"])),
                "fx": maybe(bytes([k % 256, 0, 255])),
                "dec": maybe(Decimal(rnd.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2)),
                "ts": maybe(
                    dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rnd.randint(-(2**55), 2**55))
                ),
                "day": maybe(dt.date(1970, 1, 1) + dt.timedelta(days=rnd.randint(-700000, 700000))),
                "st": maybe({"x": maybe(rnd.choice(longs)), "inner": maybe({"y": str(k)})}),
                "again": maybe(b"abc"),
            }
        )
    return pa.Table.from_pylist(rows, schema=avro_to_arrow_schema(FLAT_SCHEMA))


@pytest.fixture
def fastavro_only(monkeypatch: pytest.MonkeyPatch):
    """Route the codec through fastavro: the reference the columnar codec is checked against."""

    def unsupported(*_args, **_kwargs):
        raise avro_columnar.Unsupported("disabled for the test")

    monkeypatch.setattr(avro_codec, "_CODEC_CACHE", {})
    monkeypatch.setattr(avro_codec, "Columnar", unsupported)


def test_columnar_codec_is_used_for_flat_schemas() -> None:
    assert avro_codec._codec(FLAT_SCHEMA, None, None).columnar is not None
    nested = arrow_to_avro_schema(rich_table().schema, "t", with_meta=False)  # has arrays and maps
    assert avro_codec._codec(nested, None, None).columnar is None


def test_columnar_matches_fastavro(monkeypatch: pytest.MonkeyPatch, fastavro_only) -> None:
    table = flat_table()
    reference = encode_records(table, FLAT_SCHEMA)
    reference_framed = encode_records_framed(table, FLAT_SCHEMA)
    reference_table = decode_records(reference, FLAT_SCHEMA)
    assert reference_table.equals(table)
    monkeypatch.undo()  # back to the columnar codec
    assert avro_codec._codec(FLAT_SCHEMA, None, None).columnar is not None
    assert encode_records(table, FLAT_SCHEMA) == reference
    assert encode_records_framed(table, FLAT_SCHEMA) == reference_framed
    assert decode_records(reference, FLAT_SCHEMA).equals(table)
    assert decode_records_framed(reference_framed, 0, table.num_rows, FLAT_SCHEMA).equals(table)
    # sliced and chunked input
    part = pa.concat_tables([table.slice(3, 50), table.slice(100, 7)])
    assert encode_records(part, FLAT_SCHEMA) == reference[3:53] + reference[100:107]
    assert decode_records([], FLAT_SCHEMA).num_rows == 0
    assert encode_records(table.slice(0, 0), FLAT_SCHEMA) == []
    # records past 2 GiB are joined with 64-bit offsets: the same bytes
    monkeypatch.setattr(avro_columnar, "_INT32_BYTES", 0)
    assert encode_records_framed(table, FLAT_SCHEMA) == reference_framed


def test_columnar_encoder_joins_fixed_width_fields_alone() -> None:
    """Fields of one width in every row are joined into one matrix before the row-wise join: a schema of only those
    (and one of a single field) encodes as fastavro does."""
    schema = {"type": "record", "name": "r", "fields": [{"name": "d", "type": "double"}, {"name": "b", "type": "boolean"},
                                                        {"name": "l", "type": "long"}]}
    table = pa.table({"d": [0.5, -1.0, 2.0], "b": [True, False, True], "l": [1, 2, 3]})
    for fields in (schema, {**schema, "fields": schema["fields"][:1]}):
        names = [f["name"] for f in fields["fields"]]
        want = []
        for row in table.select(names).to_pylist():
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, fastavro.parse_schema(fields), row)
            want.append(buf.getvalue())
        assert avro_codec._codec(fields, None, None).columnar is not None
        assert encode_records(table.select(names), fields) == want


def test_columnar_decoder_reports_corruption() -> None:
    table = flat_table(20)
    payloads = encode_records(table, FLAT_SCHEMA)
    with pytest.raises(LogFormatError, match="record 0"):
        decode_records([payloads[0][:-1]] + payloads[1:], FLAT_SCHEMA)  # one byte short
    with pytest.raises(LogFormatError):
        decode_records([payloads[0] + b"\x00"], FLAT_SCHEMA)  # one byte too many
    with pytest.raises(LogFormatError, match="union branch"):
        decode_records([b"\x06" + payloads[0][1:]], FLAT_SCHEMA)
    with pytest.raises(LogFormatError, match="longer than 10 bytes"):
        decode_records([b"\x02" + b"\xff" * 12], FLAT_SCHEMA)
    with pytest.raises(LogFormatError, match="past the end"):
        decode_records([b"\x02\x7e"], FLAT_SCHEMA)  # a string of 63 bytes in a 2-byte record
    with pytest.raises(LogFormatError, match="negative Avro string length"):
        decode_records([b"\x02\x7f"], FLAT_SCHEMA)
    bad_utf8 = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    with pytest.raises(LogFormatError, match="UTF-8"):
        decode_records([b"\x04\xff\xfe"], bad_utf8)


def test_columnar_encoder_refuses_nulls_in_non_null_fields() -> None:
    table = flat_table(10)
    table = table.set_column(3, "l", pa.array([1, None] * 5, pa.int64()))
    with pytest.raises(SchemaError, match="row 1: field l is null"):
        encode_records(table, FLAT_SCHEMA)
