"""Arrow arrays as the engine's kernels want them: one contiguous `pa.Array` from a column that may be chunked, and
an array's bytes and validity as numpy arrays.

A value-level helper below io, write and the table services (it imports nothing of the engine).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def one_chunk(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`col` as one Array: a single chunk as it is (no copy), several concatenated, an Array unchanged."""
    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def repeated(value: str, n: int, *, dictionary: bool = False) -> pa.Array:
    """`value` `n` times, as one string array (one buffer copy per row; no Python list), or (`dictionary`) as a
    dictionary array of that one value (int32 indices, all zero: no string copied)."""
    if dictionary:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value], pa.string()))
    return pa.repeat(pa.scalar(value, pa.string()), n)


def np_bytes(buf: pa.Buffer | None) -> np.ndarray:
    """The bytes of an Arrow buffer as a uint8 array (no copy); empty for a missing buffer."""
    return np.zeros(0, np.uint8) if buf is None else np.frombuffer(buf, dtype=np.uint8)


def valid_mask(arr: pa.Array) -> np.ndarray:
    """True where `arr` is not null, as a numpy bool array."""
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return pc.is_valid(arr).to_numpy(zero_copy_only=False)
