"""Z-order and Hilbert orders (hudi_engine/table_services/space_curve.py) against a row-at-a-time rendering of
Hudi's BinaryUtil / SpaceCurveSortingHelper / HilbertCurve rules written here from their definitions, and the curve's
locality."""
from __future__ import annotations

import datetime as dt
import decimal
import struct

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.table_services import space_curve as sc

LONG_MAX = (1 << 63) - 1
M64 = (1 << 64) - 1


def pad8(b: bytes) -> int:
    b = b[:8]
    return int.from_bytes(b"\0" * (8 - len(b)) + b, "big")


def ref_z(value, kind: str) -> int:
    """mapColumnValueTo8Bytes, one value at a time."""
    if kind == "long":
        return ((LONG_MAX if value is None else value) ^ (1 << 63)) & M64
    if kind == "int":
        return ((0x7FFFFFFF if value is None else value) ^ (1 << 31)) & 0xFFFFFFFF
    if kind == "double":
        d = 1.7976931348623157e308 if value is None else value
        bits = struct.unpack(">Q", struct.pack(">d", d))[0]
        return bits ^ (1 << 63) if d > 0 else (~bits & M64 if d < 0 else bits)
    if kind == "string":
        return pad8(("" if value is None else value).encode())
    if kind == "bool":
        return (1 if value else 0) ^ (1 << 31)
    if kind == "date":
        return ref_z(None if value is None else (value - dt.date(1970, 1, 1)).days * 86_400_000, "long")
    if kind == "decimal":
        return ref_z(None if value is None else int(value), "long")
    raise AssertionError(kind)


def ref_hilbert_long(value, kind: str) -> int:
    """mapColumnValueToLong, as unsigned 64 bits."""
    if value is None:
        return 0 if kind == "bool" else LONG_MAX
    if kind in ("long", "int"):
        return value & M64
    if kind == "double":
        return struct.unpack(">Q", struct.pack(">d", value))[0]
    if kind == "string":
        return pad8(value.encode())
    if kind == "bool":
        return LONG_MAX if value else 0
    raise AssertionError(kind)


def ref_interleave(values: list[int], bits: int) -> int:
    out = 0
    for b in range(bits - 1, -1, -1):
        for v in values:
            out = (out << 1) | ((v >> b) & 1)
    return out


def ref_hilbert_index(point: list[int], bits: int) -> int:
    """Skilling's AxesToTranspose then the transposed bits interleaved, one point at a time."""
    x = list(point)
    n, mask = len(x), (1 << 64) - 1
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t, q = 0, 1 << (bits - 1)
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    return ref_interleave([(v ^ t) & mask for v in x], bits)


COLUMNS = {
    "long": (pa.array([5, -5, 0, None, LONG_MAX, -LONG_MAX - 1], pa.int64()), "long"),
    "int": (pa.array([7, -7, 0, None, 2**31 - 1, -2**31], pa.int32()), "int"),
    "double": (pa.array([1.5, -1.5, 0.0, None, -0.0, 1e300], pa.float64()), "double"),
    "string": (pa.array(["b", "ab", "", None, "abcdefghij", "é"], pa.string()), "string"),
    "bool": (pa.array([True, False, None, True, False, None]), "bool"),
    "date": (pa.array([dt.date(2024, 1, 2), dt.date(1969, 12, 31), None, dt.date(1970, 1, 1),
                       dt.date(2000, 2, 29), None]), "date"),
    "decimal": (pa.array([decimal.Decimal("-2.75"), decimal.Decimal("3.99"), None, decimal.Decimal("0"),
                          decimal.Decimal("123456.01"), None], pa.decimal128(10, 2)), "decimal"),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_z_values_map_as_hudis_bytes(name):
    col, kind = COLUMNS[name]
    assert sc.z_value(col, name, "t").tolist() == [ref_z(v, kind) for v in col.to_pylist()]


@pytest.mark.parametrize("name", ["long", "int", "double", "string", "bool"])
def test_hilbert_values_map_as_hudis_longs(name):
    col, kind = COLUMNS[name]
    assert sc.hilbert_value(col, name, "t").tolist() == [ref_hilbert_long(v, kind) for v in col.to_pylist()]


def test_the_orders_match_the_row_at_a_time_rendering():
    rng = np.random.default_rng(7)
    rows = pa.table({"x": pa.array(rng.integers(-1000, 1000, 300), pa.int64()),
                     "y": pa.array(rng.normal(size=300)),
                     "s": pa.array([f"k{int(v)}" for v in rng.integers(0, 50, 300)])})
    cols = ["x", "y", "s"]
    z = [ref_interleave([ref_z(rows["x"][i].as_py(), "long"), ref_z(rows["y"][i].as_py(), "double"),
                         ref_z(rows["s"][i].as_py(), "string")], 64) for i in range(300)]
    assert [z[i] for i in sc.curve_order(rows, cols, sc.ZORDER, "t")] == sorted(z)
    h = [ref_hilbert_index([ref_hilbert_long(rows[c][i].as_py(), k) & LONG_MAX
                            for c, k in (("x", "long"), ("y", "double"), ("s", "string"))], 63) for i in range(300)]
    assert [h[i] for i in sc.curve_order(rows, cols, sc.HILBERT, "t")] == sorted(h)


def test_the_hilbert_curve_steps_to_a_neighbour():
    """Consecutive cells of the 3-bit curve over an 8x8 grid are adjacent: the transform is a Hilbert curve."""
    xs, ys = np.meshgrid(np.arange(8, dtype=np.uint64), np.arange(8, dtype=np.uint64))
    words = sc._interleave(sc._hilbert_transposed([xs.ravel(), ys.ravel()], 3), 3)
    order = np.lexsort(words[::-1])
    path = np.stack([xs.ravel()[order], ys.ravel()[order]], axis=1).astype(int)
    assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()
    assert [ref_hilbert_index([int(a), int(b)], 3) for a, b in path] == list(range(64))


def test_columns_are_taken_in_hudis_hashmap_order():
    rows = pa.table({f"c{i}": [1] for i in range(20)})
    assert sc.curve_columns(rows, ["c3", "c1"]) == ["c1", "c3"]
    assert sc.curve_columns(rows, ["c17", "c2"]) == ["c17", "c2"]  # position 17 lands in bucket 1 of 16


def test_layout_names_and_unsupported_types():
    assert [sc.layout_of(v) for v in ("", "LINEAR", "z-order", "ZORDER", "Hilbert", "spiral")] == \
        ["linear", "linear", "z-order", "z-order", "hilbert", None]
    with pytest.raises(ConfigError, match=r"sort column 't' is of type time64\[us\].*linear"):
        sc.check_curve_columns(pa.schema([("t", pa.time64("us")), ("x", pa.int64())]), ["t", "x"], "tbl")
