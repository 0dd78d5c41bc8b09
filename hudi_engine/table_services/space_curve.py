"""Space-filling curve orders for clustering (`hoodie.layout.optimize.strategy` z-order / hilbert, build method
DIRECT), as Hudi's SpaceCurveSortingHelper.orderDataFrameByMappingValues computes them, vectorised over columns.

    z-order   each sort column's value mapped to 8 bytes (BinaryUtil: signed integers with the sign bit flipped,
              doubles sign-adjusted, strings and binaries cut or left-padded to 8 bytes), the bits interleaved
              column by column from the most significant (BinaryUtil.interleaving); rows in unsigned byte order.
    hilbert   each value mapped to a long (mapColumnValueToLong), its low 63 bits the coordinates of a 63-bit
              Hilbert curve of one dimension per column (Skilling's transform, as org.davidmoten.hilbert computes
              it); rows in order of the curve index.

Nulls map as Hudi maps them (the type's MAX_VALUE; "" for a z-order string, false for a boolean). One sort column is
a linear sort (Hudi skips the curve then). Hudi takes the columns in the order of its HashMap keyed by the columns'
positions in the clustered rows (meta columns first), not in the order `sort.columns` names them: followed here.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import ConfigError

LINEAR, ZORDER, HILBERT = "linear", "z-order", "hilbert"
LAYOUTS = (LINEAR, ZORDER, HILBERT)
_ALIASES = {"zorder": ZORDER}  # Hudi 1.x also takes the enum names (ZORDER) case-insensitively
_SIGN = np.uint64(1 << 63)
_LOW63 = np.uint64((1 << 63) - 1)
_LONG_MAX = (1 << 63) - 1
_INT_MAX = (1 << 31) - 1
_MS_PER_DAY = 86_400_000


def layout_of(value: str) -> str | None:
    """Hudi's name of a layout strategy value (linear, z-order, hilbert; case-insensitive), None when unknown."""
    text = (value or "").strip().lower() or LINEAR
    text = _ALIASES.get(text, text)
    return text if text in LAYOUTS else None


def _u64(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int64, copy=False).view(np.uint64)


def _filled(col: pa.ChunkedArray | pa.Array, fill: object, dtype: str) -> np.ndarray:
    return np.asarray(pc.fill_null(col, pa.scalar(fill, col.type)).to_numpy(zero_copy_only=False), dtype=dtype)


def _head8(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """BinaryUtil.paddingTo8Byte of each value's bytes (utf-8 for strings) as a big-endian uint64: the first 8
    bytes, or fewer right-aligned after zero bytes. Nulls give 0."""
    arr = pa.concat_arrays(col.chunks) if isinstance(col, pa.ChunkedArray) else col
    arr = arr.cast(pa.large_binary()) if not pa.types.is_large_binary(arr.type) else arr
    arr = pc.fill_null(arr, b"")
    if not len(arr):
        return np.zeros(0, np.uint64)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    if not len(data):
        data = np.zeros(1, np.uint8)
    starts, lengths = offsets[:-1], np.minimum(offsets[1:] - offsets[:-1], 8)
    out = np.zeros(len(arr), np.uint64)
    for k in range(8):
        has = lengths > k
        byte = data[np.where(has, starts + k, 0)].astype(np.uint64)
        out = np.where(has, (out << np.uint64(8)) | byte, out)
    return out


def _double_bits(values: np.ndarray) -> np.ndarray:
    """BinaryUtil.doubleTo8Byte: the raw bits, the sign bit set for positives, all bits flipped for negatives."""
    bits = values.astype(np.float64).view(np.uint64)
    return np.where(values > 0, bits ^ _SIGN, np.where(values < 0, ~bits, bits))


def _millis(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """java.sql.Date / Timestamp getTime(): milliseconds since the epoch (a date at UTC midnight, as on a UTC JVM);
    nulls give Long.MAX_VALUE."""
    if pa.types.is_date(col.type):
        days = _filled(col.cast(pa.date32()).cast(pa.int32()).cast(pa.int64()), _LONG_MAX, "int64")
        return np.where(np.asarray(col.is_null()), _LONG_MAX, days * _MS_PER_DAY)
    per_ms = {"s": 1, "ms": 1, "us": 1000, "ns": 1_000_000}[col.type.unit]
    raw = _filled(col.cast(pa.int64()), _LONG_MAX, "int64")
    millis = raw * 1000 if col.type.unit == "s" else np.floor_divide(raw, per_ms)
    return np.where(np.asarray(col.is_null()), _LONG_MAX, millis)


def _unsupported(name: str, t: pa.DataType, where: str) -> ConfigError:
    return ConfigError(f"table {where}: sort column {name!r} is of type {t}, which Hudi's space-curve mapping does not "
                       "take (Unsupported data-type); sort it with hoodie.layout.optimize.strategy=linear, or name "
                       "columns of numeric, string, binary, boolean, date, timestamp or decimal type")


def _is_bytes(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
        pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)


def _as_long(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A 64-bit column (long, decimal by BigDecimal.longValue, date, timestamp) as int64, nulls Long.MAX_VALUE."""
    t = col.type
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        return _millis(col)
    if pa.types.is_decimal(t):
        col = pc.cast(col, pa.int64(), safe=False)  # truncated toward zero, as BigDecimal.longValue
    return _filled(col, _LONG_MAX, "int64")


def _is_long(t: pa.DataType) -> bool:
    return pa.types.is_int64(t) or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_decimal(t)


def z_value(col: pa.ChunkedArray | pa.Array, name: str, where: str) -> np.ndarray:
    """SpaceCurveSortingHelper.mapColumnValueTo8Bytes, the 8 bytes as a big-endian uint64 per row."""
    t = col.type
    if _is_long(t):
        return _u64(_as_long(col)) ^ _SIGN  # longTo8Byte
    if pa.types.is_int32(t) or pa.types.is_int16(t):  # intTo8Byte: 4 bytes, sign bit flipped, after 4 zero bytes
        short_max = (1 << 15) - 1
        return (_filled(col, _INT_MAX if pa.types.is_int32(t) else short_max, "int64").astype(np.uint32) ^ np.uint32(1 << 31)).astype(np.uint64)
    if pa.types.is_int8(t):  # byteTo8Byte: the raw byte, sign not flipped
        return _filled(col, 127, "int64").astype(np.uint8).astype(np.uint64)
    if pa.types.is_floating(t):
        top = float(np.finfo(np.float64 if pa.types.is_float64(t) else np.float32).max)
        return _double_bits(_filled(col.cast(pa.float64()), top, "float64"))
    if pa.types.is_boolean(t):  # intTo8Byte(1 or 0), null as false
        return (_filled(col, False, "bool").astype(np.uint32) ^ np.uint32(1 << 31)).astype(np.uint64)
    if _is_bytes(t):  # utf8To8Byte / paddingTo8Byte; a null string is "", a null binary [0]: both 0
        return _head8(col)
    raise _unsupported(name, t, where)


def hilbert_value(col: pa.ChunkedArray | pa.Array, name: str, where: str) -> np.ndarray:
    """SpaceCurveSortingHelper.mapColumnValueToLong, as the uint64 of its bits; nulls Long.MAX_VALUE (a boolean's
    false)."""
    t = col.type
    nulls = np.asarray(col.is_null())
    if _is_long(t):
        return _u64(_as_long(col))
    if pa.types.is_int32(t) or pa.types.is_int16(t):
        values = _filled(col, 0, "int64")
    elif pa.types.is_int8(t):  # convertBytesToLong of the one byte: unsigned
        values = _filled(col, 0, "int64").astype(np.uint8).astype(np.int64)
    elif pa.types.is_floating(t):  # Double.doubleToLongBits: NaN canonical
        doubles = _filled(col.cast(pa.float64()), 0.0, "float64")
        values = np.where(np.isnan(doubles), 0x7FF8000000000000, doubles.view(np.int64))
    elif pa.types.is_boolean(t):
        return np.where(_filled(col, False, "bool"), np.uint64(_LONG_MAX), np.uint64(0))
    elif _is_bytes(t):  # convertStringToLong / convertBytesToLong: the padded 8 bytes, big-endian
        return np.where(nulls, np.uint64(_LONG_MAX), _head8(col))
    else:
        raise _unsupported(name, t, where)
    return np.where(nulls, np.uint64(_LONG_MAX), _u64(values))


def _interleave(coordinates: Sequence[np.ndarray], bits: int) -> list[np.ndarray]:
    """The top `bits` bits of each coordinate interleaved (the first coordinate's most significant bit first, as
    BinaryUtil.interleaving and HilbertCurve.toIndex take them), packed into uint64 words from the most significant;
    rows compare as the words compare."""
    n = len(coordinates)
    rows = len(coordinates[0])
    words = [np.zeros(rows, np.uint64) for _ in range((bits * n + 63) // 64)]
    position = 0
    for b in range(bits - 1, -1, -1):
        for x in coordinates:
            bit = (x >> np.uint64(b)) & np.uint64(1)
            words[position // 64] |= bit << np.uint64(63 - position % 64)
            position += 1
    return words


def _hilbert_transposed(coordinates: Sequence[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's AxesToTranspose over rows (org.davidmoten.hilbert.HilbertCurve.transposedIndex)."""
    x = [c.copy() for c in coordinates]
    n = len(x)
    q = 1 << (bits - 1)
    while q > 1:
        qq, p = np.uint64(q), np.uint64(q - 1)
        for i in range(n):
            high = (x[i] & qq) != 0
            if i == 0:
                x[0] = np.where(high, x[0] ^ p, x[0])
                continue
            t = (x[0] ^ x[i]) & p
            x[0] = np.where(high, x[0] ^ p, x[0] ^ t)
            x[i] = np.where(high, x[i], x[i] ^ t)
        q >>= 1
    for i in range(1, n):
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros(len(x[0]), np.uint64)
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where((x[n - 1] & np.uint64(q)) != 0, t ^ np.uint64(q - 1), t)
        q >>= 1
    return [xi ^ t for xi in x]


def curve_columns(rows: pa.Table, columns: Sequence[str]) -> list[str]:
    """The sort columns in the order Hudi's curve takes them: its HashMap keyed by column position iterates by
    position modulo its capacity (16, doubled past 3/4 full), ties in the order `sort.columns` names them."""
    capacity = 16
    while len(columns) > capacity * 3 // 4:
        capacity *= 2
    position = {c: rows.schema.get_field_index(c) for c in columns}
    return sorted(columns, key=lambda c: (position[c] & (capacity - 1), list(columns).index(c)))


def curve_order(rows: pa.Table, columns: Sequence[str], layout: str, where: str) -> np.ndarray:
    """The row indices of `rows` in the order of the `layout` curve (z-order or hilbert) over `columns` (two or
    more)."""
    ordered = curve_columns(rows, columns)
    if layout == ZORDER:
        words = _interleave([z_value(rows.column(c), c, where) for c in ordered], 64)
    elif layout == HILBERT:
        # HilbertCurve.bits(63): the coordinates' sign bit never reaches the index.
        coords = [hilbert_value(rows.column(c), c, where) & _LOW63 for c in ordered]
        words = _interleave(_hilbert_transposed(coords, 63), 63)
    else:
        raise ValueError(layout)
    return np.lexsort(words[::-1]) if rows.num_rows else np.zeros(0, np.int64)


def check_curve_columns(schema: pa.Schema, columns: Sequence[str], where: str) -> None:
    """Every sort column has a type the curves map (before planning)."""
    for c in columns:
        t = schema.field(c).type
        if not (_is_long(t) or (pa.types.is_integer(t) and t.bit_width <= 32 and pa.types.is_signed_integer(t))
                or (pa.types.is_floating(t) and not pa.types.is_float16(t)) or pa.types.is_boolean(t) or _is_bytes(t)):
            raise _unsupported(c, t, where)


__all__ = ["HILBERT", "LAYOUTS", "LINEAR", "ZORDER", "check_curve_columns", "curve_columns", "curve_order",
           "hilbert_value", "layout_of", "z_value"]
