"""Partition values <-> partition path strings (FORMAT.md, Partition paths), vectorized over Arrow data.

A partition path is one segment per partition field, joined by `/`; hive style writes `field=value`. A null or
empty value becomes `__HIVE_DEFAULT_PARTITION__`. With URL encoding, `PartitionPathEncodeUtils.escapePathName`
replaces control chars, DEL and `" # % ' * / : = ? \\ { [ ] ^` by `%XX` (upper-case hex); other chars, non-ASCII
included, stay as they are.

Values are stringified the way Hudi 0.14's Avro key generator path does (`HoodieAvroUtils.getNestedFieldValAsString`):
* integers in decimal, booleans `true`/`false`, strings as they are, dates `yyyy-MM-dd`;
* decimals as Java `BigDecimal.toString()` (plain, except scientific notation such as `1E-7` below 1e-6);
* float/double as Java `Float.toString`/`Double.toString` (`1.0`, `1.0E10`, `NaN`), shortest round-trip digits;
* timestamps: by default the Avro long, i.e. **epoch microseconds** as a decimal string (what Hudi writes while
  `hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled=false`, the default). With
  `consistent_logical_timestamp=True`, `java.sql.Timestamp.toString()` of the millisecond instant in **UTC**
  (`2024-01-02 03:04:05.123`, trailing fraction zeros dropped, at least `.0`); Java uses the JVM time zone there.
* binary, nested and other types are refused with a KeyGeneratorError.
"""
from __future__ import annotations

import decimal
import math
import struct
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .arrays import repeated
from .errors import KeyGeneratorError

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
PATH_SEPARATOR = "/"

# PartitionPathEncodeUtils.charToEscape (Hive's FileUtils list, non-Windows); '%' first so escapes are not re-escaped.
_ESCAPED_CHARS = "%" + "".join(chr(c) for c in range(0x20)) + "\x7f\"#'*/:=?\\{[]^"
_ESCAPED_SET = frozenset(_ESCAPED_CHARS)
_ESCAPE_REGEX = "[\\x00-\\x1f\\x7f\"#%'*/:=?\\\\{\\[\\]^]"


def escape_path_name(s: str) -> str:
    """`PartitionPathEncodeUtils.escapePathName` of a non-empty value."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED_SET else c for c in s)


def unescape_path_name(s: str) -> str:
    """`PartitionPathEncodeUtils.unescapePathName`: every `%XX` (two hex digits) becomes that char."""
    if "%" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "%" and _is_hex(s[i + 1 : i + 3]):
            out.append(chr(int(s[i + 1 : i + 3], 16)))
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _is_hex(t: str) -> bool:
    return len(t) == 2 and all(c in "0123456789abcdefABCDEF" for c in t)


def escape_path_names(values: pa.Array) -> pa.Array:
    """Vectorized `escape_path_name`; only chars that occur are replaced, and nothing is done if none occur."""
    values = _combine(values)
    if len(values) == 0 or not pc.any(pc.match_substring_regex(values, _ESCAPE_REGEX)).as_py():
        return values
    for c in _ESCAPED_CHARS:
        if pc.any(pc.match_substring(values, c)).as_py():
            values = pc.replace_substring(values, c, f"%{ord(c):02X}")
    return values


# --------------------------------------------------------------------------------------------- column access


def resolve_column(table: pa.Table, name: str) -> pa.Array:
    """Column `name` of `table`; a dotted name that is not a column walks into struct fields (`a.b.c`)."""
    if name in table.column_names:
        return _combine(table.column(name))
    parts = name.split(".")
    if parts[0] not in table.column_names:
        raise KeyGeneratorError(f"field {name!r} is not a column of the data: columns are {table.column_names}")
    arr = _combine(table.column(parts[0]))
    for depth, part in enumerate(parts[1:], start=1):
        if not pa.types.is_struct(arr.type) or arr.type.get_field_index(part) < 0:
            raise KeyGeneratorError(
                f"field {name!r}: {'.'.join(parts[:depth])} of type {arr.type} has no field {part!r}"
            )
        arr = pc.struct_field(arr, [part])
    return arr


def _combine(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


# --------------------------------------------------------------------------------------------- value strings


def value_strings(arr: pa.Array | pa.ChunkedArray, *, field: str = "", consistent_logical_timestamp: bool = False) -> pa.Array:
    """Hudi's string form of each value (see module doc); nulls stay null."""
    arr = _combine(arr)
    t = arr.type
    if pa.types.is_dictionary(t):
        return value_strings(arr.dictionary_decode(), field=field, consistent_logical_timestamp=consistent_logical_timestamp)
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_type(t, "string_view"):
        return arr.cast(pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return arr.cast(pa.string())
    if pa.types.is_date(t):
        return arr.cast(pa.date32()).cast(pa.string())
    if pa.types.is_decimal(t):
        return _decimal_strings(arr)
    if pa.types.is_floating(t):
        return _map_unique(arr, lambda v: java_float_string(v, single=not pa.types.is_float64(t)))
    if pa.types.is_timestamp(t):
        micros = arr.cast(pa.timestamp("us", tz=t.tz), safe=False)
        if consistent_logical_timestamp:
            return _java_sql_timestamp_strings(micros)
        return micros.cast(pa.int64()).cast(pa.string())
    raise KeyGeneratorError(
        f"field {field!r} has type {t}, which Hudi cannot turn into a record key or partition value"
    )


def _is_type(t: pa.DataType, name: str) -> bool:
    check = getattr(pa.types, f"is_{name}", None)
    return bool(check and check(t))


def _map_unique(arr: pa.Array, fn) -> pa.Array:
    """Apply a Python formatter once per distinct value, then spread the results back (vectorized take)."""
    uniques = pc.unique(arr.drop_null())
    formatted = pa.array([fn(v) for v in uniques.to_pylist()], pa.string())
    return pc.take(formatted, pc.index_in(arr, value_set=uniques))


def _decimal_strings(arr: pa.Array) -> pa.Array:
    out = arr.cast(pa.string())
    if arr.type.scale <= 6:  # BigDecimal.toString is plain whenever the adjusted exponent is >= -6
        return out
    small = pc.less(pc.abs(arr), pa.scalar(decimal.Decimal("0.000001"), arr.type))
    if not pc.any(small).as_py():
        return out
    fixed = _map_unique(pc.filter(arr, small), lambda d: java_big_decimal_string(d, arr.type.scale))
    return pc.replace_with_mask(out, pc.fill_null(small, False), fixed)


def _java_sql_timestamp_strings(micros: pa.Array) -> pa.Array:
    utc = micros.cast(pa.timestamp("us", tz="UTC"))
    millis_ts = pc.floor_temporal(utc, unit="millisecond")
    seconds = pc.strftime(millis_ts.cast(pa.timestamp("s", tz="UTC"), safe=False), format="%Y-%m-%d %H:%M:%S")
    ms = pc.utf8_lpad(pc.millisecond(millis_ts).cast(pa.string()), width=3, padding="0")
    ms = pc.utf8_rtrim(ms, characters="0")
    ms = pc.if_else(pc.equal(ms, ""), "0", ms)
    return pc.binary_join_element_wise(seconds, ms, ".")


def java_big_decimal_string(value: decimal.Decimal, scale: int) -> str:
    """`java.math.BigDecimal.toString()` of `value` at `scale`."""
    unscaled = int(value.scaleb(scale).to_integral_value())
    digits = str(abs(unscaled))
    sign = "-" if unscaled < 0 else ""
    adjusted = -scale + (len(digits) - 1)
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return sign + digits
        digits = digits.rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"
    mantissa = digits if len(digits) == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{sign}{mantissa}E{'+' if adjusted > 0 else ''}{adjusted}"


def java_float_string(value: float, *, single: bool = False) -> str:
    """Java `Double.toString` (or `Float.toString` with single=True), with shortest round-trip digits."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if single:
        for precision in range(1, 10):
            text = f"{value:.{precision}g}"
            try:
                if struct.unpack("<f", struct.pack("<f", float(text)))[0] == value:
                    break
            except OverflowError:  # rounded past FLT_MAX: needs more digits
                continue
    else:
        text = repr(value)
    d = decimal.Decimal(text).normalize()
    sign, digit_tuple, _ = d.as_tuple()
    digits = "".join(map(str, digit_tuple))
    if len(digits) == 1 and not 1e-3 <= abs(value) < 1e7:
        # Java prints at least two significant digits in E notation and picks the two-digit decimal nearest
        # the exact binary value (Double.MIN_VALUE is "4.9E-324", not "5.0E-324").
        d = decimal.Decimal(f"{value:.1e}")
        sign, digit_tuple, _ = d.as_tuple()
        digits = "".join(map(str, digit_tuple))
    sci_exp = d.adjusted()  # len(digits) - 1 + the exponent: d is finite
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        plain = format(abs(d), "f")
        return prefix + (plain if "." in plain else plain + ".0")
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{sci_exp}"


# --------------------------------------------------------------------------------------------- paths


def partition_path_segments(
    table: pa.Table,
    fields: Sequence[str],
    *,
    hive_style: bool,
    url_encode: bool,
    consistent_logical_timestamp: bool = False,
) -> list[pa.Array]:
    """One string array per field: the path segment of each row (`field=value` in hive style)."""
    segments = []
    for field in fields:
        values = value_strings(resolve_column(table, field), field=field, consistent_logical_timestamp=consistent_logical_timestamp)
        segments.append(finish_segment(values, field, hive_style=hive_style, url_encode=url_encode))
    return segments


def finish_segment(values: pa.Array, field: str, *, hive_style: bool, url_encode: bool) -> pa.Array:
    """Escape (if asked), default null/empty values, and prefix `field=` in hive style."""
    if url_encode:
        values = escape_path_names(values)
    values = pc.fill_null(values, "")
    values = pc.if_else(pc.equal(values, ""), DEFAULT_PARTITION, values)
    if hive_style:
        values = pc.binary_join_element_wise(f"{field}=", values, "")
    return values


def partition_paths(
    table: pa.Table,
    fields: Sequence[str],
    *,
    hive_style: bool,
    url_encode: bool,
    consistent_logical_timestamp: bool = False,
) -> pa.Array:
    """Partition path of every row of `table` (a string array; "" for every row when `fields` is empty)."""
    if not fields:
        return repeated("", table.num_rows)
    segments = partition_path_segments(
        table, fields, hive_style=hive_style, url_encode=url_encode,
        consistent_logical_timestamp=consistent_logical_timestamp,
    )
    if len(segments) == 1:
        return _combine(segments[0])
    return pc.binary_join_element_wise(*segments, PATH_SEPARATOR)


def format_partition_path(values: Sequence[Any], fields: Sequence[str], *, hive_style: bool, url_encode: bool) -> str:
    """Partition path of one row given as Python values (types inferred by Arrow: int, str, date, Decimal, ...)."""
    if len(values) != len(fields):
        raise KeyGeneratorError(f"{len(values)} partition values {list(values)!r} for {len(fields)} fields {list(fields)!r}")
    if not fields:
        return ""
    if len(set(fields)) != len(fields):
        raise KeyGeneratorError(f"partition fields {list(fields)!r} must be distinct")
    table = pa.Table.from_arrays([pa.array([v]) for v in values], names=list(fields))
    return partition_paths(table, fields, hive_style=hive_style, url_encode=url_encode)[0].as_py()


def parse_partition_path(path: str, fields: Sequence[str], *, hive_style: bool, url_encode: bool) -> dict[str, str | None]:
    """Partition values (strings, None for the default partition) of a partition path.

    One field takes the whole path, so values holding `/` (e.g. a `yyyy/MM/dd` timestamp partition) parse back.
    """
    fields = list(fields)
    if not fields:
        if path not in ("", "/"):
            raise KeyGeneratorError(f"partition path {path!r} for a non-partitioned table: expected ''")
        return {}
    path = path.strip("/")
    segments = [path] if len(fields) == 1 else path.split(PATH_SEPARATOR)
    if len(segments) != len(fields):
        raise KeyGeneratorError(
            f"partition path {path!r} has {len(segments)} segments; expected {len(fields)} for fields {fields}"
        )
    out: dict[str, str | None] = {}
    for field, segment in zip(fields, segments):
        if hive_style:
            prefix = f"{field}="
            if not segment.startswith(prefix):
                raise KeyGeneratorError(f"partition path {path!r}: segment {segment!r} should start with {prefix!r}")
            segment = segment[len(prefix):]
        if segment == DEFAULT_PARTITION:
            out[field] = None
        else:
            out[field] = unescape_path_name(segment) if url_encode else segment
    return out
