"""Hudi log blocks (FORMAT.md, Log files): the block value type, its header keys, and the content of each block type.

Builders make blocks the way Hudi 0.14/0.15 writes them; readers turn block content into Arrow tables.
Byte framing of blocks in a file is in `log_format`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from functools import cached_property
from typing import Any, cast

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import LogFormatError, SchemaError, WriteError
from ..schema import avro_to_arrow_schema, schema_to_json
from . import avro_codec

MAGIC = b"#HUDI#"
AVRO_DATA_BLOCK_VERSION = 3
DELETE_BLOCK_VERSION = 3


class BlockType(IntEnum):
    """`HoodieLogBlockType` ordinals (append-only)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """`HeaderMetadataType` ordinals; also used for footer keys."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandType(IntEnum):
    """`HoodieCommandBlockTypeEnum`: the value of the COMMAND_BLOCK_TYPE header, as a decimal string."""

    ROLLBACK = 0


@dataclass(frozen=True)
class LogBlock:
    """One block of a log file.

    `header`/`footer` keep their on-disk entry order (Java writes HashMap order), so re-encoding a parsed
    block gives the same bytes. For a CORRUPT block, `content` is the raw bytes of the unreadable region
    (from its MAGIC, if it has one, up to the next MAGIC or EOF) and header/footer are empty.
    `offset` is the file offset of the block's first byte (-1 for a block not read from a file), `size`
    its length on disk, `source` the file name it was read from (for error messages).
    """

    block_type: BlockType
    header: dict[HeaderKey, str]
    content: bytes
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    offset: int = field(default=-1, compare=False)
    size: int = -1
    format_version: int = 1
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.size < 0:
            object.__setattr__(self, "size", _encoded_size(self))

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def is_partial(self) -> bool:
        """Hudi 1.x's partial data block: its records hold a subset of the columns (IS_PARTIAL header)."""
        return (self.header.get(HeaderKey.IS_PARTIAL) or "").strip().lower() == "true"

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        return self.header.get(HeaderKey.SCHEMA)

    @cached_property
    def schema(self) -> dict | None:
        text = self.schema_json
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError as e:
            raise LogFormatError(f"{self._where()}: SCHEMA header is not valid JSON: {e}") from None

    @property
    def command_type(self) -> CommandType | None:
        value = self.header.get(HeaderKey.COMMAND_BLOCK_TYPE)
        if value is None:
            return None
        try:
            return CommandType(int(value))
        except ValueError:
            raise LogFormatError(
                f"{self._where()}: unknown COMMAND_BLOCK_TYPE {value!r}; expected '0' (rollback)"
            ) from None

    @property
    def is_rollback(self) -> bool:
        return self.block_type == BlockType.COMMAND and self.command_type == CommandType.ROLLBACK

    def _where(self) -> str:
        return f"{self.source or '<log file>'}: {self.block_type.name} block at offset {self.offset}"


def _encoded_size(block: LogBlock) -> int:
    if block.block_type == BlockType.CORRUPT:
        return len(block.content)

    def map_size(entries: dict[HeaderKey, str]) -> int:
        return 4 + sum(8 + len(v.encode("utf-8", "surrogateescape")) for v in entries.values())

    return len(MAGIC) + 8 + 4 + 4 + map_size(block.header) + 8 + len(block.content) + map_size(block.footer) + 8


# --------------------------------------------------------------------------------------------- data blocks


def build_avro_data_block(table: pa.Table, avro_schema: dict, instant_time: str) -> LogBlock:
    """AVRO_DATA block (FORMAT.md, Data blocks) of the rows of `table`, written with `avro_schema` (the writer schema
    with meta fields).

    Header order as real 0.15 files: INSTANT_TIME, SCHEMA.
    """
    body = avro_codec.encode_records_framed(table, avro_schema)
    content = struct.pack(">ii", AVRO_DATA_BLOCK_VERSION, table.num_rows) + body
    return LogBlock(BlockType.AVRO_DATA, _data_header(instant_time, avro_schema), content)


def build_parquet_data_block(
    table: pa.Table, avro_schema: dict, instant_time: str, *, compression: str = "gzip"
) -> LogBlock:
    """PARQUET_DATA block (FORMAT.md, Data blocks): the content is a whole Parquet file of `table` in the Arrow form
    of `avro_schema`.

    The file carries `parquet.avro.schema` like files written through parquet-avro, so Java's Avro read path
    sees the header schema's names.
    """
    target = avro_to_arrow_schema(avro_schema)
    columns = []
    for f in target:
        if f.name not in table.column_names:
            raise SchemaError(
                f"parquet data block: Avro field {f.name!r} has no column in the table ({table.column_names})"
            )
        col = table.column(f.name)
        try:
            columns.append(col if col.type == f.type else col.cast(f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise SchemaError(
                f"parquet data block: column {f.name!r} ({col.type}) cannot be written as {f.type}: {e}"
            ) from None
    metadata = {b"parquet.avro.schema": schema_to_json(avro_schema).encode(), b"writer.model.name": b"avro"}
    out_table = pa.Table.from_arrays(columns, schema=target.with_metadata(metadata))
    sink = pa.BufferOutputStream()
    pq.write_table(out_table, sink, compression=compression)
    return LogBlock(BlockType.PARQUET_DATA, _data_header(instant_time, avro_schema), sink.getvalue().to_pybytes())


def data_block_records(
    block: LogBlock, *, reader_schema: dict | None = None, arrow_schema: pa.Schema | None = None
) -> pa.Table:
    """Rows of an AVRO_DATA, CDC_DATA or PARQUET_DATA block as a table (a CDC_DATA block is an Avro data block of
    change records: `HoodieCDCDataBlock extends HoodieAvroDataBlock`).

    Columns follow `reader_schema` if given (Avro schema resolution: fields added later read as their
    default/null), else the block's header SCHEMA; Arrow types from `arrow_schema` or
    `schema.avro_to_arrow_schema`.
    """
    writer = block.schema
    if writer is None:
        raise LogFormatError(f"{block._where()}: data block has no SCHEMA header")
    if block.block_type in (BlockType.AVRO_DATA, BlockType.CDC_DATA):
        content = block.content
        if len(content) < 8:
            raise LogFormatError(
                f"{block._where()}: Avro data content is {len(content)} bytes; expected version and record count"
            )
        _version, count = struct.unpack_from(">ii", content, 0)
        if count < 0:
            raise LogFormatError(f"{block._where()}: negative record count {count}")
        return avro_codec.decode_records_framed(
            content, 8, count, writer, arrow_schema, reader_schema=reader_schema, where=block._where()
        )
    if block.block_type == BlockType.PARQUET_DATA:
        return _parquet_records(block, reader_schema or writer, arrow_schema)
    raise LogFormatError(f"{block._where()}: not a data block (AVRO_DATA, CDC_DATA or PARQUET_DATA)")


def _parquet_records(block: LogBlock, avro: dict, arrow_schema: pa.Schema | None) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(block.content))
    except (pa.ArrowInvalid, OSError) as e:
        raise LogFormatError(f"{block._where()}: content is not a readable Parquet file: {e}") from None
    target = arrow_schema if arrow_schema is not None else avro_to_arrow_schema(avro)
    columns = []
    for f in target:
        if f.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, f.type))  # a field added after the block was written
            continue
        col = table.column(f.name)
        if col.type != f.type:
            try:
                col = col.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise LogFormatError(
                    f"{block._where()}: Parquet column {f.name!r} ({col.type}) "
                    f"does not match the schema type {f.type}: {e}"
                ) from None
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=pa.schema(list(target)))


def _data_header(instant_time: str, schema: dict | str) -> dict[HeaderKey, str]:
    text = schema if isinstance(schema, str) else schema_to_json(schema)
    return {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: text}


# --------------------------------------------------------------------------------------------- command blocks


def build_rollback_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """ROLLBACK command block (FORMAT.md, Command blocks).

    Header order as in a real 0.15 file: INSTANT_TIME, COMMAND_BLOCK_TYPE, TARGET_INSTANT_TIME.
    """
    header = {
        HeaderKey.INSTANT_TIME: instant_time,
        HeaderKey.COMMAND_BLOCK_TYPE: str(int(CommandType.ROLLBACK)),
        HeaderKey.TARGET_INSTANT_TIME: target_instant_time,
    }
    return LogBlock(BlockType.COMMAND, header, b"")


# --------------------------------------------------------------------------------------------- delete blocks

_MODEL_NS = "org.apache.hudi.avro.model"

# The orderingVal union of HoodieDeleteRecord, in branch order after "null" (FORMAT.md, Delete blocks):
# (wrapper record name, Avro type of its `value`, Arrow type this module uses for it)
ORDERING_WRAPPERS: tuple[tuple[str, Any, pa.DataType], ...] = (
    ("BooleanWrapper", "boolean", pa.bool_()),
    ("IntWrapper", "int", pa.int32()),
    ("LongWrapper", "long", pa.int64()),
    ("FloatWrapper", "float", pa.float32()),
    ("DoubleWrapper", "double", pa.float64()),
    ("BytesWrapper", "bytes", pa.binary()),
    ("StringWrapper", "string", pa.string()),
    ("DateWrapper", {"type": "int", "logicalType": "date"}, pa.date32()),
    (
        "DecimalWrapper",
        {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
        pa.decimal128(30, 15),
    ),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
    ("TimestampMicrosWrapper", {"type": "long", "logicalType": "timestamp-micros"}, pa.timestamp("us", tz="UTC")),
)
_WRAPPER_NAMES = tuple(w[0] for w in ORDERING_WRAPPERS)
_WRAPPER_ARROW = {name: t for name, _, t in ORDERING_WRAPPERS}
_DECIMAL_SCALE = 15

HOODIE_DELETE_RECORD_LIST_SCHEMA: dict = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": _MODEL_NS,
    "fields": [
        {
            "name": "deleteRecordList",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieDeleteRecord",
                    "fields": [
                        {"name": "recordKey", "type": ["null", "string"], "default": None},
                        {"name": "partitionPath", "type": ["null", "string"], "default": None},
                        {
                            "name": "orderingVal",
                            "type": ["null"]
                            + [
                                {
                                    "type": "record",
                                    "name": name,
                                    "namespace": _MODEL_NS,
                                    "fields": [{"name": "value", "type": value}],
                                }
                                for name, value, _ in ORDERING_WRAPPERS
                            ],
                            "default": None,
                        },
                    ],
                },
            },
        }
    ],
}
# fastavro sees raw values (days, micros, unscaled bytes); conversions are done here, column-wise.
_DELETE_SCHEMA_RAW = fastavro.parse_schema(avro_codec.strip_logical_types(HOODIE_DELETE_RECORD_LIST_SCHEMA))

ORDERING_VAL_TYPE = pa.struct([pa.field(name, t) for name, _, t in ORDERING_WRAPPERS])
DELETE_KEYS_SCHEMA = pa.schema(
    [
        pa.field("record_key", pa.string()),
        pa.field("partition_path", pa.string()),
        pa.field("ordering_val_type", pa.string()),
        pa.field("ordering_val", ORDERING_VAL_TYPE),
        pa.field("natural_order", pa.bool_(), nullable=False),
    ]
)


@dataclass(frozen=True)
class OrderingVal:
    """A delete record's ordering value: the wrapper (Java class) and its value; wrapper None = the null branch."""

    wrapper: str | None
    value: Any = None

    def __post_init__(self) -> None:
        if self.wrapper is not None and self.wrapper not in _WRAPPER_NAMES:
            raise WriteError(f"unknown orderingVal wrapper {self.wrapper!r}; expected one of {_WRAPPER_NAMES}")

    @property
    def is_natural_order(self) -> bool:
        """Integer 0 (or no value): processing-time order, the delete always wins (FORMAT.md, Delete blocks)."""
        return self.wrapper is None or (self.wrapper == "IntWrapper" and self.value == 0)


NATURAL_ORDER = OrderingVal("IntWrapper", 0)


def ordering_wrapper_for(arrow_type: pa.DataType) -> str:
    """Wrapper (Java class) Hudi uses for an ordering value of this Arrow type (via its Avro type)."""
    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_boolean(t):
        return "BooleanWrapper"
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return "IntWrapper"
    if t in (pa.int64(), pa.uint32()):
        return "LongWrapper"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FloatWrapper"
    if pa.types.is_float64(t):
        return "DoubleWrapper"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "BytesWrapper"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "StringWrapper"
    if pa.types.is_date(t):
        return "DateWrapper"
    if pa.types.is_decimal(t):
        return "DecimalWrapper"
    if pa.types.is_time(t):
        return "TimeMicrosWrapper"
    if pa.types.is_timestamp(t):
        return "TimestampMicrosWrapper"
    raise WriteError(f"no orderingVal wrapper for Arrow type {arrow_type}; ordering fields must be primitive")


DeleteKey = tuple  # (record_key, partition_path, ordering value | OrderingVal | None)


def build_delete_block(
    keys: Iterable[DeleteKey] | pa.Table,
    instant_time: str,
    schema_json: str | dict,
    *,
    ordering_field: str | None = None,
    ordering_type: pa.DataType | str | None = None,
) -> LogBlock:
    """DELETE block (FORMAT.md, Delete blocks; content version 3) deleting `keys`; header INSTANT_TIME, SCHEMA (the
    writer schema).

    `keys` is a list of (record_key, partition_path, ordering) tuples or a table with columns record_key,
    partition_path and optionally ordering_val. A table shaped like `delete_block_keys` output (with
    ordering_val_type) is taken branch for branch. The wrapper of an ordering value comes from, in order:
    an OrderingVal given as the value; `ordering_type` (Arrow type or wrapper name); the table's
    ordering_val column type; the Avro type of `ordering_field` in `schema_json`; the Python type of the
    value (bool, float, str, bytes, Decimal, date, time, datetime; a bare int is ambiguous between Integer
    and Long and is refused). A missing (None/null) ordering value is written as IntWrapper(0), natural
    order, which every reader (hudi-rs included) accepts.
    """
    wrapper = None
    if isinstance(ordering_type, str):
        wrapper = OrderingVal(ordering_type).wrapper
    elif ordering_type is not None:
        wrapper = ordering_wrapper_for(ordering_type)
    if isinstance(keys, pa.Table):
        records = _delete_rows_from_table(keys, wrapper)
    else:
        if wrapper is None and ordering_field is not None:
            wrapper = _wrapper_of_field(schema_json, ordering_field)
        records = [(k, p, _ordering_val(v, wrapper, k)) for k, p, v in keys]
    items = []
    for key, partition, ov in records:
        if ov is None:
            ov = NATURAL_ORDER
        value = None if ov.wrapper is None else (f"{_MODEL_NS}.{ov.wrapper}", {"value": _raw_ordering_value(ov, key)})
        items.append({"recordKey": key, "partitionPath": partition, "orderingVal": value})
    buf = io.BytesIO()
    try:
        fastavro.schemaless_writer(buf, _DELETE_SCHEMA_RAW, {"deleteRecordList": items})
    except (ValueError, TypeError, OverflowError) as e:
        raise WriteError(f"delete block for instant {instant_time}: cannot encode delete records: {e!r}") from None
    payload = buf.getvalue()
    content = struct.pack(">ii", DELETE_BLOCK_VERSION, len(payload)) + payload
    return LogBlock(BlockType.DELETE, _data_header(instant_time, schema_json), content)


def delete_block_keys(block: LogBlock) -> pa.Table:
    """The deleted keys of a DELETE block, one row per HoodieDeleteRecord, schema DELETE_KEYS_SCHEMA:

    * record_key, partition_path: strings (null if the record has null there);
    * ordering_val_type: the wrapper record name of the orderingVal branch ("IntWrapper", "LongWrapper", ...,
      one of ORDERING_WRAPPERS; it stands for the Java class the value compares as), null for the null branch;
    * ordering_val: a struct with one child per wrapper, named like it and typed as in ORDERING_WRAPPERS
      (IntWrapper int32, DateWrapper date32, DecimalWrapper decimal128(30,15), TimestampMicrosWrapper
      timestamp[us, UTC], ...). Exactly the child named by ordering_val_type is set; the struct is null for
      the null branch. `ordering_val.field(wrapper)` gives a typed column to compare with record ordering values;
    * natural_order: true when the orderingVal is null or Integer 0: the delete wins whatever the existing
      record's ordering value (FORMAT.md, Merging).
    """
    if block.block_type != BlockType.DELETE:
        raise LogFormatError(f"{block._where()}: not a DELETE block")
    content = block.content
    if len(content) < 8:
        raise LogFormatError(f"{block._where()}: delete content is {len(content)} bytes; expected version and length")
    version, length = struct.unpack_from(">ii", content, 0)
    if version != DELETE_BLOCK_VERSION:
        raise LogFormatError(
            f"{block._where()}: delete block content version {version}; only version 3 (Avro HoodieDeleteRecordList) "
            "is read, versions 1/2 are legacy Java-serialized key arrays"
        )
    if length < 0 or 8 + length != len(content):
        raise LogFormatError(
            f"{block._where()}: delete payload length {length} does not match content length {len(content)} - 8"
        )
    fo = io.BytesIO(content)
    fo.seek(8)
    try:
        # fastavro types the result as any Avro value; this schema is a record, so it is a dict.
        decoded = cast(dict, fastavro.schemaless_reader(fo, _DELETE_SCHEMA_RAW, None, return_record_name=True))
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise LogFormatError(f"{block._where()}: cannot decode HoodieDeleteRecordList: {e!r}") from None
    if fo.tell() != len(content):
        raise LogFormatError(f"{block._where()}: HoodieDeleteRecordList ends at {fo.tell()} of {len(content)} bytes")
    return _delete_table(decoded["deleteRecordList"])


def _delete_table(records: list[dict]) -> pa.Table:
    n = len(records)
    keys, partitions = [], []
    types: list[str | None] = []  # the orderingVal union's branch of each record (None: null)
    raw: dict[str, list] = {name: [None] * n for name in _WRAPPER_NAMES}
    for i, rec in enumerate(records):
        keys.append(rec["recordKey"])
        partitions.append(rec["partitionPath"])
        ov = rec["orderingVal"]
        if ov is None:
            types.append(None)
        else:
            name = ov[0].rsplit(".", 1)[-1]
            types.append(name)
            raw[name][i] = ov[1]["value"]
    children = [_raw_wrapper_array(name, raw[name]) for name in _WRAPPER_NAMES]
    type_col = pa.array(types, pa.string())
    ordering = pa.StructArray.from_arrays(children, fields=list(ORDERING_VAL_TYPE), mask=pc.is_null(type_col))
    int_zero = pc.fill_null(pc.equal(ordering.field("IntWrapper"), 0), False)
    natural = pc.or_(pc.is_null(type_col), pc.and_(pc.fill_null(pc.equal(type_col, "IntWrapper"), False), int_zero))
    return pa.Table.from_arrays(
        [pa.array(keys, pa.string()), pa.array(partitions, pa.string()), type_col, ordering, natural],
        schema=DELETE_KEYS_SCHEMA,
    )


def _raw_wrapper_array(name: str, values: list) -> pa.Array:
    target = _WRAPPER_ARROW[name]
    if name == "DateWrapper":
        return pa.array(values, pa.int32()).view(target)
    if name in ("TimeMicrosWrapper", "TimestampMicrosWrapper"):
        return pa.array(values, pa.int64()).view(target)
    if name == "DecimalWrapper":
        return avro_codec.binary_to_decimal(pa.array(values, pa.binary()), target)
    return pa.array(values, target)


def _delete_rows_from_table(
    table: pa.Table, wrapper: str | None
) -> list[tuple[str | None, str | None, OrderingVal | None]]:
    for col in ("record_key", "partition_path"):
        if col not in table.column_names:
            raise WriteError(f"delete keys table needs a {col!r} column; it has {table.column_names}")
    keys = table.column("record_key").to_pylist()
    partitions = table.column("partition_path").to_pylist()
    if "ordering_val_type" in table.column_names and "ordering_val" in table.column_names:
        # delete_block_keys() shape: take each row's branch as it is (the null branch included)
        types = table.column("ordering_val_type").to_pylist()
        structs = table.column("ordering_val").to_pylist()
        vals = [OrderingVal(t, s[t]) if t is not None else OrderingVal(None) for t, s in zip(types, structs)]
        return list(zip(keys, partitions, vals))
    if "ordering_val" not in table.column_names:
        return [(k, p, None) for k, p in zip(keys, partitions)]
    col = table.column("ordering_val")
    wrapper = wrapper or ordering_wrapper_for(col.type)
    return [
        (k, p, None if v is None else OrderingVal(wrapper, v)) for k, p, v in zip(keys, partitions, col.to_pylist())
    ]


def _wrapper_of_field(schema_json: str | dict, field_path: str) -> str:
    schema = avro_to_arrow_schema(schema_json)
    t: pa.DataType | None = None
    fields = list(schema)
    for part in field_path.split("."):
        match = [f for f in fields if f.name == part]
        if not match:
            raise WriteError(f"ordering field {field_path!r} is not in the delete block schema")
        t = match[0].type
        fields = list(t) if pa.types.is_struct(t) else []
    assert t is not None
    return ordering_wrapper_for(t)


def _ordering_val(value: Any, wrapper: str | None, key: Any) -> OrderingVal | None:
    if value is None or isinstance(value, OrderingVal):
        return value
    if wrapper is None:
        wrapper = _python_wrapper(value, key)
    return OrderingVal(wrapper, value)


def _python_wrapper(value: Any, key: Any) -> str:
    if isinstance(value, bool):
        return "BooleanWrapper"
    if isinstance(value, int):
        raise WriteError(
            f"delete of key {key!r}: ordering value {value!r} is an int, which could be Java Integer or Long; "
            "pass ordering_field, ordering_type or an OrderingVal"
        )
    for py_type, name in (
        (float, "DoubleWrapper"),
        (str, "StringWrapper"),
        ((bytes, bytearray), "BytesWrapper"),
        (Decimal, "DecimalWrapper"),
        (dt.datetime, "TimestampMicrosWrapper"),  # before date: datetime is a date subclass
        (dt.date, "DateWrapper"),
        (dt.time, "TimeMicrosWrapper"),
    ):
        if isinstance(value, py_type):
            return name
    raise WriteError(f"delete of key {key!r}: no orderingVal wrapper for a {type(value).__name__} value {value!r}")


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICRO = dt.timedelta(microseconds=1)


def _raw_ordering_value(ov: OrderingVal, key: Any) -> Any:
    """The value as fastavro writes it with logical types stripped (days, micros, unscaled bytes)."""
    v, name = ov.value, ov.wrapper
    try:
        if name == "BooleanWrapper":
            if not isinstance(v, bool):
                raise TypeError("expected a bool")
            return v
        if name in ("IntWrapper", "LongWrapper"):
            if isinstance(v, bool) or int(v) != v:
                raise TypeError("expected an integer")
            bits = 31 if name == "IntWrapper" else 63
            if not -(2**bits) <= int(v) < 2**bits:
                raise OverflowError(f"out of range for {name}")
            return int(v)
        if name in ("FloatWrapper", "DoubleWrapper"):
            return float(v)
        if name == "BytesWrapper":
            return bytes(v)
        if name == "StringWrapper":
            if not isinstance(v, str):
                raise TypeError("expected a str")
            return v
        if name == "DateWrapper":
            return v if isinstance(v, int) else (v - dt.date(1970, 1, 1)).days
        if name == "DecimalWrapper":
            unscaled = Decimal(v).scaleb(_DECIMAL_SCALE)
            if unscaled != unscaled.to_integral_value():
                raise ValueError(f"more than {_DECIMAL_SCALE} fractional digits")
            return avro_codec.java_big_integer_bytes(int(unscaled))
        if name == "TimeMicrosWrapper":
            if isinstance(v, int):
                return v
            return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        if name == "TimestampMicrosWrapper":
            if isinstance(v, int):
                return v
            if v.tzinfo is None:
                v = v.replace(tzinfo=dt.UTC)  # naive = UTC wall time, as elsewhere in this engine
            return (v - _EPOCH) // _MICRO
    except (TypeError, ValueError, OverflowError, AttributeError) as e:
        raise WriteError(f"delete of key {key!r}: ordering value {v!r} cannot be written as {name}: {e}") from None
    raise WriteError(f"delete of key {key!r}: unknown orderingVal wrapper {name!r}")
