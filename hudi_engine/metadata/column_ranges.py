"""The column ranges of a data file as Hudi 1.x computes them for its `column_stats` index
(`HoodieColumnRangeMetadata`): per indexed column the min, max, value count, null count and sizes, each value
wrapped as the index's version wants it (FORMAT.md, Metadata table; `column_stats` has the records).

* A base file's ranges come from its parquet footer (`ParquetUtils.readColumnStatsFromMetadata`): the chunks of the
  indexed top-level columns merged over row groups (min of the mins, max of the maxes, counts and compressed and
  uncompressed sizes summed); the null count is the chunk's value count when the chunk has no statistics. A chunk
  of nulls only has min and max null, or the type's zero for a number or boolean (what parquet-mr reads).
* A log file's ranges come from its data blocks' records (`HoodieAppendHandle`, `collectColumnRangeMetadata`): the
  value count is the number of records, the sizes are 0; delete blocks do not count. A log file without records has
  empty ranges (counts 0; value type NULL on version 2).

Values by index version (`HoodieIndexVersion`):
* version 1 (tables of version 8; `valueType` null): the wrapper follows the Java value: strings StringWrapper,
  booleans, ints, longs, floats and doubles their own wrappers, dates DateWrapper (epoch day), decimals
  DecimalWrapper (the unscaled value at scale 15, as Avro's decimal(30,15) bytes), timestamps and times the raw
  long or int, other binaries BytesWrapper. A footer column Hudi 1.x cannot wrap (a non-decimal fixed) gives the
  file no ranges at all, as Java's caught exception does.
* version 2 (tables of version 9): primitive wrappers only, with `valueType` = (ValueType ordinal, extra info): see
  `VALUE_TYPES`; decimals are their unscaled value's minimal two's-complement bytes with info "precision,scale". A
  footer column of an annotation Hudi 1.2 does not map (INT(8), INT(16), JSON, ENUM, ...) gives the file no ranges.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_engine.metadata.column_stats import V1_DECIMAL_SCALE, VALUE_TYPES, ColumnStats, StatValue, extreme

_WRAPPER = {"BOOLEAN": "BooleanWrapper", "INT": "IntWrapper", "LONG": "LongWrapper", "FLOAT": "FloatWrapper",
            "DOUBLE": "DoubleWrapper", "STRING": "StringWrapper", "BYTES": "BytesWrapper", "FIXED": "BytesWrapper",
            "DECIMAL": "BytesWrapper", "UUID": "StringWrapper", "DATE": "IntWrapper", "TIME_MILLIS": "IntWrapper"}
# What parquet-mr's Int/Long/Float/Double/BooleanStatistics answer as min and max when no value was set.
_PRIMITIVE_ZERO: dict[str, Any] = {"INT32": 0, "INT64": 0, "FLOAT": 0.0, "DOUBLE": 0.0, "BOOLEAN": False}


class Unindexable(Exception):
    """A column of a type Hudi's writer cannot put in the index: the file gets no ranges (Hudi catches the error)."""


@dataclass(frozen=True, slots=True)
class ValueKind:
    """How one column's values are indexed: Hudi's ValueType name and, for decimals, precision and scale."""

    name: str
    precision: int = 0
    scale: int = 0

    def value_type(self, version: int) -> tuple[int, str | None] | None:
        if version < 2:
            return None
        info = f"{self.precision},{self.scale}" if self.name == "DECIMAL" else None
        return VALUE_TYPES[self.name], info

    def wrap(self, value: Any, version: int) -> StatValue | None:
        """A raw value (int, float, bool, str, bytes, Decimal, date) as the index version stores it."""
        if value is None:
            return None
        name = self.name
        if name == "DECIMAL":
            d = decimal.Decimal(value)
            if version < 2:
                return StatValue("DecimalWrapper", _twos_complement(int(d.scaleb(V1_DECIMAL_SCALE))))
            return StatValue("BytesWrapper", _twos_complement(int(d.scaleb(self.scale))))
        if name == "DATE":
            days = (value - dt.date(1970, 1, 1)).days if isinstance(value, dt.date) else int(value)
            return StatValue("DateWrapper" if version < 2 else "IntWrapper", days)
        if name == "FIXED" and version < 2:
            raise Unindexable("a non-decimal fixed column")
        if name.startswith(("TIMESTAMP", "LOCAL_TIMESTAMP", "TIME_MICROS")):
            return StatValue("LongWrapper", int(value))
        return StatValue(_WRAPPER[name], value)


def _twos_complement(n: int) -> bytes:
    """Java's BigInteger.toByteArray: the minimal big-endian two's-complement bytes of `n`."""
    return n.to_bytes(max(1, (n + (n < 0)).bit_length() // 8 + 1), "big", signed=True)


def kind_of_arrow(t: pa.DataType) -> ValueKind | None:
    """The value kind of an Arrow column (a log file's records; the table schema), None for types Hudi does not
    index (structs, lists, maps)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ValueKind("STRING")
    if pa.types.is_boolean(t):
        return ValueKind("BOOLEAN")
    if pa.types.is_integer(t):
        return ValueKind("LONG" if t.bit_width > 32 or t in (pa.uint32(),) else "INT")
    if pa.types.is_float32(t):
        return ValueKind("FLOAT")
    if pa.types.is_floating(t):
        return ValueKind("DOUBLE")
    if pa.types.is_decimal(t):
        return ValueKind("DECIMAL", t.precision, t.scale)
    if pa.types.is_date(t):
        return ValueKind("DATE")
    if pa.types.is_timestamp(t):
        unit = {"ms": "MILLIS", "us": "MICROS", "ns": "NANOS"}.get(t.unit, "MICROS")
        return ValueKind(("TIMESTAMP_" if t.tz else "LOCAL_TIMESTAMP_") + unit)
    if pa.types.is_fixed_size_binary(t):
        return ValueKind("FIXED")
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return ValueKind("BYTES")
    return None


def _kind_of_parquet(column: Any) -> ValueKind:
    """The value kind of a parquet footer column (`ValueType.fromParquetPrimitiveType`); Unindexable for the
    annotations Hudi 1.2 does not map."""
    physical, logical = column.physical_type, column.logical_type
    name = logical.type
    if name == "STRING":
        return ValueKind("STRING")
    if name == "DECIMAL":
        return ValueKind("DECIMAL", column.precision, column.scale)
    if name == "DATE":
        return ValueKind("DATE")
    if name in ("TIMESTAMP", "TIME"):
        info = json.loads(logical.to_json())
        unit = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}[info["timeUnit"]]
        if name == "TIME":
            if unit == "NANOS":
                raise Unindexable("a TIME(NANOS) column")
            return ValueKind("TIME_" + unit)
        return ValueKind(("TIMESTAMP_" if info.get("isAdjustedToUTC") else "LOCAL_TIMESTAMP_") + unit)
    if name == "UUID":
        return ValueKind("UUID")
    if name != "NONE":
        raise Unindexable(f"a {logical} column")
    plain = {"INT64": "LONG", "INT32": "INT", "BOOLEAN": "BOOLEAN", "BYTE_ARRAY": "BYTES", "FLOAT": "FLOAT",
             "DOUBLE": "DOUBLE", "FIXED_LEN_BYTE_ARRAY": "FIXED"}
    if physical not in plain:
        raise Unindexable(f"a {physical} column")
    return ValueKind(plain[physical])


def _from_raw(kind: ValueKind, raw: Any) -> Any:
    """A footer statistic's raw (physical) value as the kind's plain value."""
    if kind.name in ("STRING",):
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if kind.name == "UUID":
        import uuid
        return str(uuid.UUID(bytes=raw))
    if kind.name == "DECIMAL":
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return decimal.Decimal(unscaled).scaleb(-kind.scale)
    return raw


def base_file_ranges(metadata: pq.FileMetaData, file_name: str, columns: Sequence[str],
                     version: int) -> list[ColumnStats]:
    """The ranges of the indexed `columns` a parquet footer holds, in `columns` order; empty when a column is of a
    type Hudi's writer cannot index (module doc)."""
    wanted = {c: i for i, c in enumerate(columns)}
    found: dict[str, ColumnStats] = {}
    try:
        for rg in range(metadata.num_row_groups):
            group = metadata.row_group(rg)
            for j in range(group.num_columns):
                chunk = group.column(j)
                name = chunk.path_in_schema
                if name not in wanted:
                    continue
                column = metadata.schema.column(j)
                kind = _kind_of_parquet(column)
                stats = chunk.statistics
                if stats is not None and stats.has_min_max:
                    lo = kind.wrap(_from_raw(kind, stats.min_raw), version)
                    hi = kind.wrap(_from_raw(kind, stats.max_raw), version)
                elif stats is not None and column.physical_type in _PRIMITIVE_ZERO:
                    # parquet-mr's statistics of a chunk of nulls only answer the type's zero as min and max (a
                    # primitive field never set), and Hudi records them so
                    lo = hi = kind.wrap(_from_raw(kind, _PRIMITIVE_ZERO[column.physical_type]), version)
                else:
                    lo = hi = None
                nulls = stats.null_count if stats is not None and stats.has_null_count else chunk.num_values
                one = ColumnStats(file_name, name, lo, hi, chunk.num_values, nulls, chunk.total_compressed_size,
                                  chunk.total_uncompressed_size, False, False, kind.value_type(version))
                found[name] = one if name not in found else merge_ranges(found[name], one)
    except Unindexable:
        return []
    return sorted(found.values(), key=lambda s: wanted[s.column_name])


def log_file_ranges(records: pa.Table, file_name: str, columns: Sequence[str], version: int) -> list[ColumnStats]:
    """The ranges of the indexed `columns` over a log file's data-block `records` (empty ranges when it has none),
    in `columns` order. A column the records lack is left out."""
    out = []
    for name in columns:
        if records.num_rows == 0:
            out.append(ColumnStats(file_name, name, None, None, 0, 0, 0, 0, False, False,
                                   (VALUE_TYPES["NULL"], None) if version >= 2 else None))
            continue
        if name not in records.column_names:
            continue
        column = records.column(name)
        kind = kind_of_arrow(column.type)
        if kind is None:
            continue
        lo = hi = None
        if column.null_count < len(column):
            found = pc.min_max(column)
            lo, hi = _plain(kind, found["min"].as_py()), _plain(kind, found["max"].as_py())
        try:
            out.append(ColumnStats(file_name, name, kind.wrap(lo, version), kind.wrap(hi, version), len(column),
                                   column.null_count, 0, 0, False, False, kind.value_type(version)))
        except Unindexable:
            continue
    return out


def _plain(kind: ValueKind, value: Any) -> Any:
    """An Arrow scalar's Python value as the kind's plain value (timestamps and times as their integer count)."""
    if isinstance(value, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        micros = (value - epoch) // dt.timedelta(microseconds=1)
        return micros // 1000 if kind.name.endswith("MILLIS") else micros
    if isinstance(value, dt.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return micros // 1000 if kind.name == "TIME_MILLIS" else micros
    return value


def merge_ranges(a: ColumnStats, b: ColumnStats) -> ColumnStats:
    """Two ranges of one column merged (`HoodieColumnRangeMetadata.merge`): min of the mins, max of the maxes
    (decimals by value), counts and sizes summed."""
    value_type = a.value_type if a.value_type and a.value_type[0] != VALUE_TYPES["NULL"] else b.value_type
    return ColumnStats(a.file_name, a.column_name, extreme(min, a.min_value, b.min_value, value_type),
                       extreme(max, a.max_value, b.max_value, value_type), a.value_count + b.value_count,
                       a.null_count + b.null_count, a.total_size + b.total_size,
                       a.total_uncompressed_size + b.total_uncompressed_size, False, a.is_tight_bound, value_type)
