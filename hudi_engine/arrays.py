"""Arrow arrays as the engine's kernels want them: one contiguous `pa.Array` from a column that may be chunked.

A value-level helper below io, write and the table services (it imports nothing of the engine).
"""
from __future__ import annotations

import pyarrow as pa


def one_chunk(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """`col` as one Array: a single chunk as it is (no copy), several concatenated, an Array unchanged."""
    if isinstance(col, pa.ChunkedArray):
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col
