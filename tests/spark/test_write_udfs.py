"""The Arrow UDFs of Spark writes: what their map tasks do to the batches Spark hands them."""
from __future__ import annotations

import pyarrow as pa

from hudi_engine.spark.write_udfs import coalesced


def batches(sizes: list[int]) -> list[pa.RecordBatch]:
    out, start = [], 0
    for n in sizes:
        out.append(pa.record_batch({"id": pa.array(range(start, start + n), pa.int64()),
                                    "s": pa.array([f"v{i}" for i in range(start, start + n)], pa.string())}))
        start += n
    return out


def test_batches_are_joined_up_to_the_row_count_in_order_the_last_with_what_is_left() -> None:
    given = batches([4, 4, 4, 3, 0, 9, 2])
    got = list(coalesced(iter(given), 8))
    assert [b.num_rows for b in got] == [8, 16, 2]  # 4+4; 4+3+0+9 (a batch is never split); 2 left
    assert pa.Table.from_batches(got).equals(pa.Table.from_batches(given))
    assert all(b.schema == given[0].schema for b in got)


def test_a_batch_of_enough_rows_passes_as_it_is() -> None:
    (big,) = batches([10])
    (got,) = coalesced(iter([big]), 8)
    assert got is big
    assert list(coalesced(iter([]), 8)) == []
