"""Log file format (hudi_engine/FORMAT.md, Log files) against the real log files written by Hudi 0.14/0.15, plus
torn/corrupt files."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine.errors import LogFormatError, WriteError
from hudi_engine.io.log_block import (
    MAGIC,
    BlockType,
    CommandType,
    HeaderKey,
    LogBlock,
    OrderingVal,
    build_avro_data_block,
    build_delete_block,
    build_parquet_data_block,
    build_rollback_block,
    data_block_records,
    delete_block_keys,
)
from hudi_engine.io.log_format import encode_block, encode_log_file, read_log_blocks
from hudi_engine.schema import arrow_to_avro_schema

KINDS = ("valid_log_avro_data", "valid_log_delete", "valid_log_parquet_data", "valid_log_rollback")
# MOR conformance tables that hold log files, and the block type each holds
TABLE_LOGS = {
    "mor_avrolog_v6_trips_8i1u": BlockType.AVRO_DATA,
    "mor_parquetlog_v6_nonpartitioned": BlockType.PARQUET_DATA,
    "mor_parquetlog_v6_simplekeygen_nonhivestyle": BlockType.PARQUET_DATA,
    "mor_parquetlog_v6_complexkeygen_hivestyle": BlockType.PARQUET_DATA,
    "mor_parquetlog_v6_simplekeygen_nonhivestyle_overwritetable": BlockType.PARQUET_DATA,
}


def log_file(conformance_dir: Path, kind: str) -> Path:
    files = [p for p in (conformance_dir / "log_files" / kind).iterdir() if p.name.startswith(".")]
    assert len(files) == 1, files
    return files[0]


def read(conformance_dir: Path, kind: str) -> tuple[str, bytes]:
    path = log_file(conformance_dir, kind)
    return path.name, path.read_bytes()


def assert_tiles(blocks: list[LogBlock], data: bytes) -> None:
    """Blocks cover the file exactly, in order, and re-encode to it."""
    pos = 0
    for b in blocks:
        assert b.offset == pos
        pos += b.size
    assert pos == len(data)
    assert encode_log_file(blocks) == data


# --------------------------------------------------------------------------------------------- real files


@pytest.mark.parametrize("kind", KINDS)
def test_real_log_file_parses_and_reencodes_identically(conformance_dir: Path, kind: str) -> None:
    name, data = read(conformance_dir, kind)
    blocks = read_log_blocks(data, file_name=name)
    assert len(blocks) == 1
    assert_tiles(blocks, data)
    assert encode_block(blocks[0]) == data
    # the same through a random-access pyarrow file
    with pa.OSFile(str(log_file(conformance_dir, kind))) as f:
        assert read_log_blocks(f, file_name=name) == blocks
    assert read_log_blocks(pa.BufferReader(data)) == blocks


def test_real_avro_data_block(conformance_dir: Path) -> None:
    name, data = read(conformance_dir, "valid_log_avro_data")
    (block,) = read_log_blocks(data, file_name=name)
    assert block.block_type == BlockType.AVRO_DATA
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert block.instant_time == "20250316025828811"
    assert block.schema["name"] == "trips_quickstart_mor_avro_record"
    assert block.footer == {}
    assert struct.unpack_from(">ii", block.content) == (3, 1)
    rows = data_block_records(block).to_pylist()
    assert rows == [
        {
            "_hoodie_commit_time": "20250316025828811",
            "_hoodie_commit_seqno": "20250316025828811_0_2",
            "_hoodie_record_key": "334e26e9-8355-45cc-97c6-c31daf0df330",
            "_hoodie_partition_path": "city=san_francisco",
            "_hoodie_file_name": "ff32ab89-5ad0-4968-83b4-89a34c95d32f-0",
            "ts": 1695159649088,
            "uuid": "334e26e9-8355-45cc-97c6-c31daf0df330",
            "rider": "rider-A",
            "driver": "driver-K",
            "fare": 29.1,
            "city": "san_francisco",
        }
    ]
    # rebuilding the block from its rows and header gives the same bytes
    rebuilt = build_avro_data_block(data_block_records(block), block.schema, block.instant_time)
    assert rebuilt.content == block.content
    assert rebuilt.header[HeaderKey.SCHEMA] == block.header[HeaderKey.SCHEMA]  # compact JSON like Java's toString
    assert encode_block(rebuilt) == data


def test_real_parquet_data_block(conformance_dir: Path) -> None:
    name, data = read(conformance_dir, "valid_log_parquet_data")
    (block,) = read_log_blocks(data, file_name=name)
    assert block.block_type == BlockType.PARQUET_DATA
    assert list(block.header) == [HeaderKey.SCHEMA, HeaderKey.INSTANT_TIME]  # HashMap order: arbitrary
    assert block.content[:4] == b"PAR1"
    table = data_block_records(block)
    assert table.num_rows == 1
    assert table.column_names[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    row = table.to_pylist()[0]
    assert row["_hoodie_commit_time"] == block.instant_time == "20250113230424191"
    assert (row["rider"], row["fare"], row["ts"]) == ("rider-A", 29.1, 1695159649088)


def test_real_delete_block(conformance_dir: Path) -> None:
    name, data = read(conformance_dir, "valid_log_delete")
    (block,) = read_log_blocks(data, file_name=name)
    assert block.block_type == BlockType.DELETE
    assert set(block.header) == {HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA}
    assert block.instant_time == "20250618054714114"
    assert block.schema["name"] == "v6_trips_8i3d_record"  # delete blocks carry the writer schema too
    keys = delete_block_keys(block)
    assert keys.column("record_key").to_pylist() == [
        "e96c4396-3fad-413a-a942-4cb36106d721",
        "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330",
    ]
    assert keys.column("partition_path").to_pylist() == ["city=san_francisco"] * 3
    assert keys.column("ordering_val_type").to_pylist() == ["IntWrapper"] * 3
    assert keys.column("ordering_val").combine_chunks().field("IntWrapper").to_pylist() == [0, 0, 0]
    assert keys.column("natural_order").to_pylist() == [True] * 3
    # IntWrapper(0) is union branch 2 then int 0: bytes 04 00 after each record's partition path
    assert block.content.count(b"city=san_francisco\x04\x00") == 3
    # rebuilding, from the keys table or from plain tuples, gives the same content
    schema_json = block.header[HeaderKey.SCHEMA]
    assert build_delete_block(keys, block.instant_time, schema_json).content == block.content
    tuples = [(k, p, None) for k, p in zip(keys["record_key"].to_pylist(), keys["partition_path"].to_pylist())]
    rebuilt = build_delete_block(tuples, block.instant_time, schema_json)
    assert rebuilt.content == block.content
    assert list(rebuilt.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]


def test_real_rollback_block(conformance_dir: Path) -> None:
    name, data = read(conformance_dir, "valid_log_rollback")
    (block,) = read_log_blocks(data, file_name=name)
    assert len(data) == block.size == 105
    assert struct.unpack_from(">q", data, 6) == (91,)  # blockSize
    assert struct.unpack_from(">q", data, 97) == (97,)  # totalBlockLength = blockSize + 6
    assert block.block_type == BlockType.COMMAND and block.content == b""
    assert block.is_rollback and block.command_type == CommandType.ROLLBACK
    assert block.header == {
        HeaderKey.INSTANT_TIME: "20250126040936578",
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
        HeaderKey.TARGET_INSTANT_TIME: "20250126040826878",
    }
    built = build_rollback_block("20250126040936578", "20250126040826878")
    assert list(built.header) == list(block.header)
    assert encode_block(built) == data
    assert built.size == 105


@pytest.mark.parametrize("table_name", sorted(TABLE_LOGS))
def test_conformance_table_log_files(unzip_table, table_name: str) -> None:
    base = unzip_table(table_name)
    logs = [p for p in base.rglob(".*.log.*") if p.is_file()]
    assert logs, f"no log file in {table_name}"
    for path in logs:
        data = path.read_bytes()
        blocks = read_log_blocks(data, file_name=path.name)
        assert_tiles(blocks, data)
        assert [b.block_type for b in blocks] == [TABLE_LOGS[table_name]]
        block = blocks[0]
        assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
        table = data_block_records(block)
        assert table.num_rows == 1
        row = table.to_pylist()[0]
        file_id = path.name[1:].split("_")[0]
        assert row["_hoodie_file_name"] == file_id  # log records carry only the fileId
        assert row["_hoodie_commit_time"] == block.instant_time
        if table_name == "mor_avrolog_v6_trips_8i1u":
            assert (row["rider"], row["fare"]) == ("rider-D", 25.0)
        else:
            assert row["name"] == "Alice"
            assert row["decimalField"] == Decimal("12345.67890")
            assert row["timestampField"] == dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.UTC)
            assert row["mapField"] == [
                ("key1", {"map_field_value_struct_f1": 123.456, "map_field_value_struct_f2": True}),
                ("key2", {"map_field_value_struct_f1": 789.012, "map_field_value_struct_f2": False}),
            ]


# --------------------------------------------------------------------------------------------- torn / corrupt


@pytest.fixture
def three_blocks(conformance_dir: Path) -> tuple[bytes, list[LogBlock]]:
    """A file of three real blocks: avro data, delete, rollback."""
    data = b"".join(
        read(conformance_dir, k)[1] for k in ("valid_log_avro_data", "valid_log_delete", "valid_log_rollback")
    )
    blocks = read_log_blocks(data, file_name="three")
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.DELETE, BlockType.COMMAND]
    assert_tiles(blocks, data)
    return data, blocks


def test_truncated_file_gives_corrupt_last_block(three_blocks) -> None:
    data, blocks = three_blocks
    ends = {b.offset + b.size for b in blocks}
    for cut in range(1, len(data)):
        got = read_log_blocks(data[:cut], file_name="torn")
        assert_tiles(got, data[:cut])
        whole = [b for b in blocks if b.offset + b.size <= cut]
        assert got[: len(whole)] == whole  # every complete block survives
        if cut in ends:
            assert len(got) == len(whole)
        else:
            # the torn block is one CORRUPT block to EOF (a torn "#HUD" tail included)
            assert len(got) == len(whole) + 1
            assert got[-1].block_type == BlockType.CORRUPT
            assert got[-1].content == data[got[-1].offset : cut]


@pytest.mark.parametrize(
    "garbage, first_survives",
    [
        (b"x", False),
        (b"garbage bytes " * 10, False),
        (b"\x00" * 5, False),
        (b"#HUD", False),
        # the garbage starts with MAGIC: the block before it is followed by MAGIC and so is fine
        (b"#HUDI#" + b"\xff" * 20, True),
        (b"#HUDI#\x00\x00", True),
        # "#HUDI" + the next block's "#HUDI#": MAGIC right after the first block, and the real block overlaps
        (b"#HUDI", True),
    ],
)
def test_garbage_between_blocks(three_blocks, garbage: bytes, first_survives: bool) -> None:
    data, (avro, delete, rollback) = three_blocks
    spliced = encode_block(avro) + garbage + encode_block(delete) + encode_block(rollback)
    got = read_log_blocks(spliced, file_name="spliced")
    assert_tiles(got, spliced)
    assert got[-2:] == [delete, rollback]  # valid blocks after the garbage are read
    if first_survives:
        assert got[0] == avro
        assert [b.block_type for b in got[1:-2]] == [BlockType.CORRUPT]
        assert got[1].content == garbage
    else:
        # Java's rule: no trailing garbage after a block, so the block before the garbage is unreadable
        assert len(got) == 3 and got[0].block_type == BlockType.CORRUPT
        assert got[0].content == encode_block(avro) + garbage


def test_garbage_at_start_and_end(three_blocks) -> None:
    data, (avro, delete, rollback) = three_blocks
    spliced = b"junk" + data + b"tail-garbage"
    got = read_log_blocks(spliced, file_name="x")
    assert_tiles(got, spliced)
    assert got[0].block_type == BlockType.CORRUPT and got[0].content == b"junk"
    assert got[1:3] == [avro, delete]
    # the rollback block is followed by >= 6 non-MAGIC bytes: it becomes corrupt up to EOF
    assert got[3].block_type == BlockType.CORRUPT and got[3].offset == rollback.offset + 4
    assert len(got) == 4


def test_bad_block_size_is_corrupt(three_blocks) -> None:
    data, (avro, delete, rollback) = three_blocks
    raw = bytearray(encode_block(delete))
    for bad in (2**40, -5, 10, len(raw) - 14 - 1):
        struct.pack_into(">q", raw, 6, bad)
        spliced = encode_block(avro) + bytes(raw) + encode_block(rollback)
        got = read_log_blocks(spliced, file_name="x")
        assert_tiles(got, spliced)
        assert [b.block_type for b in got] == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.COMMAND]
    # a wrong trailing length alone also marks the block corrupt
    raw = bytearray(encode_block(delete))
    struct.pack_into(">q", raw, len(raw) - 8, 12345)
    got = read_log_blocks(encode_block(avro) + bytes(raw), file_name="x")
    assert [b.block_type for b in got] == [BlockType.AVRO_DATA, BlockType.CORRUPT]


def _rollback_bytes(conformance_dir: Path) -> bytearray:
    return bytearray(read(conformance_dir, "valid_log_rollback")[1])


def test_unknown_block_type_raises(conformance_dir: Path) -> None:
    raw = _rollback_bytes(conformance_dir)
    struct.pack_into(">i", raw, 18, 9)  # blockType ordinal after MAGIC, blockSize, version
    data = bytes(read(conformance_dir, "valid_log_avro_data")[1]) + bytes(raw)
    with pytest.raises(LogFormatError, match=r"\.log\.2_1-0-1.*offset 1172.*block type ordinal 9"):
        read_log_blocks(data, file_name=".f_1.log.2_1-0-1")


def test_unknown_header_key_raises(conformance_dir: Path) -> None:
    raw = _rollback_bytes(conformance_dir)
    # header: count at 22, then entry (key 0, len 17, value), next key at 22+4+8+17
    assert struct.unpack_from(">i", raw, 51) == (3,)
    struct.pack_into(">i", raw, 51, 42)
    with pytest.raises(LogFormatError, match=r"my\.log.*offset 0.*header key ordinal 42 at offset 51"):
        read_log_blocks(bytes(raw), file_name="my.log")


def test_unsupported_log_format_version_raises(conformance_dir: Path) -> None:
    raw = _rollback_bytes(conformance_dir)
    struct.pack_into(">i", raw, 14, 0)
    with pytest.raises(LogFormatError, match="log format version 0"):
        read_log_blocks(bytes(raw), file_name="x")


def test_inconsistent_inner_lengths_raise(conformance_dir: Path) -> None:
    raw = _rollback_bytes(conformance_dir)
    # content length (8 bytes after the header) claims 3 bytes: framing is fine, the inside is not
    header_end = 22 + 4 + 3 * 8 + 17 + 1 + 17
    struct.pack_into(">q", raw, header_end, 3)
    with pytest.raises(LogFormatError, match="x: block at offset 0"):
        read_log_blocks(bytes(raw), file_name="x")


def test_empty_file() -> None:
    assert read_log_blocks(b"") == []


# --------------------------------------------------------------------------------------------- builders


def rich_table() -> pa.Table:
    meta = {
        "_hoodie_commit_time": pa.array(["001", "001", "001"]),
        "_hoodie_commit_seqno": pa.array(["001_0_1", "001_0_2", "001_0_3"]),
        "_hoodie_record_key": pa.array(["k1", "k2", "k3"]),
        "_hoodie_partition_path": pa.array(["p", "p", ""]),
        "_hoodie_file_name": pa.array(["f-0"] * 3),
    }
    return pa.table(
        {
            **meta,
            "id": pa.array([1, 2, None], pa.int32()),
            "ts": pa.array(
                [
                    dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.UTC),
                    None,
                    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "day": pa.array([dt.date(2023, 4, 1), dt.date(1900, 1, 1), None]),
            "amount": pa.array([Decimal("12345.67890"), Decimal("-0.00001"), None], pa.decimal128(10, 5)),
            "blob": pa.array([b"\x00\xff", b"", None]),
            "tags": pa.array([["a", None], [], None], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1.5)], None, []], pa.map_(pa.string(), pa.float64())),
            "nested": pa.array(
                [{"x": 1, "y": {"z": "deep"}}, None, {"x": None, "y": None}],
                pa.struct([("x", pa.int64()), ("y", pa.struct([("z", pa.string())]))]),
            ),
        }
    )


def test_build_avro_data_block_round_trip() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=True)
    block = build_avro_data_block(table, avro, "20250101000000000")
    assert list(block.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
    assert struct.unpack_from(">ii", block.content) == (3, 3)
    raw = encode_block(block)
    assert len(raw) == block.size
    (parsed,) = read_log_blocks(raw, file_name="x")
    assert parsed == block
    assert data_block_records(parsed).equals(table)


def test_build_avro_data_block_empty_table() -> None:
    table = rich_table().slice(0, 0)
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=True)
    (parsed,) = read_log_blocks(encode_block(build_avro_data_block(table, avro, "1")))
    assert data_block_records(parsed).equals(table)


def test_data_block_with_reader_schema() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=True)
    newer = arrow_to_avro_schema(
        table.append_column("added", pa.array([None] * 3, pa.string())).schema, "t", with_meta=True
    )
    for build in (build_avro_data_block, build_parquet_data_block):
        (parsed,) = read_log_blocks(encode_block(build(table, avro, "1")))
        got = data_block_records(parsed, reader_schema=newer)
        assert got.column_names[-1] == "added"
        assert got.column("added").null_count == 3
        assert got.drop_columns(["added"]).equals(table)


def test_build_parquet_data_block_round_trip() -> None:
    table = rich_table()
    avro = arrow_to_avro_schema(table.schema, "t", with_meta=True)
    block = build_parquet_data_block(table, avro, "20250101000000000")
    assert block.content[:4] == b"PAR1"
    (parsed,) = read_log_blocks(encode_block(block), file_name="x")
    assert parsed == block
    assert data_block_records(parsed).equals(table)


def test_data_block_records_rejects_other_blocks() -> None:
    with pytest.raises(LogFormatError, match="not a data block"):
        data_block_records(LogBlock(BlockType.DELETE, {HeaderKey.SCHEMA: "{}"}, b""))
    with pytest.raises(LogFormatError, match="no SCHEMA header"):
        data_block_records(LogBlock(BlockType.AVRO_DATA, {}, b""))


# --------------------------------------------------------------------------------------------- delete blocks

ALL_BRANCHES = [
    OrderingVal(None),
    OrderingVal("BooleanWrapper", True),
    OrderingVal("IntWrapper", -7),
    OrderingVal("LongWrapper", 2**40),
    OrderingVal("FloatWrapper", 1.5),
    OrderingVal("DoubleWrapper", -2.25),
    OrderingVal("BytesWrapper", b"\x01\x02"),
    OrderingVal("StringWrapper", "zz"),
    OrderingVal("DateWrapper", dt.date(2023, 4, 1)),
    OrderingVal("DecimalWrapper", Decimal("-12.5")),
    OrderingVal("TimeMicrosWrapper", dt.time(12, 30, 1, 5)),
    OrderingVal("TimestampMicrosWrapper", dt.datetime(1960, 1, 1, 0, 0, 0, 1, tzinfo=dt.UTC)),
]


def test_delete_block_every_ordering_branch_round_trips() -> None:
    keys = [(f"k{i}", "p", ov) for i, ov in enumerate(ALL_BRANCHES)] + [("kn", None, None)]
    block = build_delete_block(keys, "5", '{"type":"record","name":"r","fields":[]}')
    (parsed,) = read_log_blocks(encode_block(block), file_name="d")
    table = delete_block_keys(parsed)
    types = table.column("ordering_val_type").to_pylist()
    assert types == [ov.wrapper for ov in ALL_BRANCHES] + ["IntWrapper"]  # a missing value is IntWrapper(0)
    structs = table.column("ordering_val").to_pylist()
    for ov, s in zip(ALL_BRANCHES, structs):
        if ov.wrapper is None:
            assert s is None
        else:
            assert s[ov.wrapper] == ov.value
            assert sum(v is not None for v in s.values()) == 1
    assert table.column("natural_order").to_pylist() == [True] + [False] * 11 + [True]
    assert table.column("partition_path").to_pylist()[-1] is None
    # union branch index in the bytes: null=0, BooleanWrapper=1, ..., TimestampMicrosWrapper=11
    branch_bytes = [bytes([2 * i]) for i in range(12)]
    payload = parsed.content[8:]
    for i, (key, _, _) in enumerate(keys[:-1]):
        at = payload.index(key.encode() + b"\x02\x02p") + len(key) + 3
        assert payload[at : at + 1] == branch_bytes[i]
    # the table form rebuilds the same bytes
    assert build_delete_block(table, "5", parsed.schema_json).content == parsed.content


def test_delete_block_ordering_from_declared_types() -> None:
    schema = arrow_to_avro_schema(
        pa.schema([("ts", pa.int64()), ("n", pa.int32()), ("s", pa.struct([("v", pa.float64())]))]), "t", with_meta=True
    )
    by_field = delete_block_keys(
        build_delete_block([("a", "p", 5), ("b", "p", None)], "1", schema, ordering_field="ts")
    )
    assert by_field.column("ordering_val_type").to_pylist() == ["LongWrapper", "IntWrapper"]
    assert by_field.column("ordering_val").combine_chunks().field("LongWrapper").to_pylist() == [5, None]
    assert by_field.column("natural_order").to_pylist() == [False, True]
    by_int_field = delete_block_keys(build_delete_block([("a", "p", 5)], "1", schema, ordering_field="n"))
    assert by_int_field.column("ordering_val_type").to_pylist() == ["IntWrapper"]
    nested = delete_block_keys(build_delete_block([("a", "p", 5)], "1", schema, ordering_field="s.v"))
    assert nested.column("ordering_val_type").to_pylist() == ["DoubleWrapper"]
    by_type = delete_block_keys(build_delete_block([("a", "p", 5)], "1", schema, ordering_type=pa.int16()))
    assert by_type.column("ordering_val_type").to_pylist() == ["IntWrapper"]
    by_name = delete_block_keys(build_delete_block([("a", "p", 5)], "1", schema, ordering_type="LongWrapper"))
    assert by_name.column("ordering_val_type").to_pylist() == ["LongWrapper"]
    table = pa.table(
        {
            "record_key": ["a", "b"],
            "partition_path": ["p", "q"],
            "ordering_val": pa.array([dt.datetime(2020, 1, 1), None], pa.timestamp("us")),
        }
    )
    from_table = delete_block_keys(build_delete_block(table, "1", schema))
    assert from_table.column("ordering_val_type").to_pylist() == ["TimestampMicrosWrapper", "IntWrapper"]
    inferred = delete_block_keys(
        build_delete_block([("a", "p", "x"), ("b", "p", 1.0), ("c", "p", dt.date(2020, 1, 2))], "1", schema)
    )
    assert inferred.column("ordering_val_type").to_pylist() == ["StringWrapper", "DoubleWrapper", "DateWrapper"]


def test_delete_block_refuses_ambiguous_or_bad_values() -> None:
    with pytest.raises(WriteError, match="'a'.*Integer or Long"):
        build_delete_block([("a", "p", 5)], "1", "{}")
    with pytest.raises(WriteError, match="out of range for IntWrapper"):
        build_delete_block([("a", "p", OrderingVal("IntWrapper", 2**31))], "1", "{}")
    with pytest.raises(WriteError, match="fractional digits"):
        build_delete_block([("a", "p", Decimal("1e-16"))], "1", "{}")
    with pytest.raises(WriteError, match="unknown orderingVal wrapper"):
        OrderingVal("ShortWrapper", 1)


def test_legacy_delete_block_version_is_refused() -> None:
    block = LogBlock(
        BlockType.DELETE, {HeaderKey.INSTANT_TIME: "1"}, struct.pack(">ii", 2, 0), offset=40, source="old.log"
    )
    with pytest.raises(LogFormatError, match="old.log: DELETE block at offset 40: delete block content version 2"):
        delete_block_keys(block)


def test_magic_constant() -> None:
    assert MAGIC == b"#HUDI#"
