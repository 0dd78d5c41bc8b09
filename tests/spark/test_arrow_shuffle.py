"""The one-pass write's shuffle as Arrow chunks: each chunk holds one file group's records of one task, every record
comes back once, and the chunks stay within their byte bounds."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.spark import arrow_shuffle
from hudi_engine.spark.arrow_shuffle import CHUNK, FIRST_KEY, ORDER, Packer, group_orders, unpacked
from hudi_engine.write.executor import KEY, TASK


def _batches(n_batches: int, rows: int, groups: int, seed: int = 0) -> list[tuple[pa.RecordBatch, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for b in range(n_batches):
        g = rng.integers(0, groups, rows)
        batch = pa.RecordBatch.from_pydict({
            "id": pa.array(np.arange(b * rows, (b + 1) * rows)), "g": pa.array(g),
            KEY: pa.array([f"k{x:04d}" for x in rng.integers(0, 1000, rows)]),
            "nested": pa.array([{"a": int(x), "b": [int(x)] * int(x % 3)} for x in g])})
        out.append((batch, (g % 3).astype(np.int32), (g * 7919 - 3).astype(np.int64)))
    return out


def _pack(packer: Packer, batches) -> list[pa.RecordBatch]:
    chunks = [c for batch, tasks, orders in batches for c in packer.add(batch, tasks, orders)]
    return chunks + list(packer.flush())


def test_every_record_comes_back_once_in_a_chunk_of_its_own_group_and_task() -> None:
    batches = _batches(5, 2_000, 6)
    chunks = _pack(Packer(), batches)
    seen = []
    for chunk in chunks:
        assert chunk.schema.names == [TASK, ORDER, FIRST_KEY, CHUNK] and chunk.num_rows == 1
        records = pa.Table.from_batches(list(unpacked(iter([chunk]))))
        assert chunk.column(FIRST_KEY)[0].as_py() == records.column(KEY)[0].as_py()
        groups = set(records.column("g").to_pylist())
        assert len(groups) == 1  # one file group per chunk
        (g,) = groups
        assert chunk.column(TASK)[0].as_py() == g % 3 and chunk.column(ORDER)[0].as_py() == g * 7919 - 3
        seen.append(records)
    got = pa.concat_tables(seen).sort_by("id")
    want = pa.Table.from_batches([b for b, _, _ in batches]).sort_by("id")
    assert got.equals(want)  # nested values and all


def test_a_group_past_the_chunk_size_goes_out_in_several_chunks_and_pending_records_stay_bounded(monkeypatch) -> None:
    monkeypatch.setattr(arrow_shuffle, "CHUNK_BYTES", 20_000)
    monkeypatch.setattr(arrow_shuffle, "PENDING_BYTES", 60_000)
    packer = Packer()
    chunks = []
    for batch, tasks, orders in _batches(20, 1_000, 4, seed=1):
        chunks += list(packer.add(batch, tasks, orders))
        assert packer._bytes < 60_000 + batch.nbytes
    chunks += list(packer.flush())
    per_order: dict[int, int] = {}
    for c in chunks:
        per_order[c.column(ORDER)[0].as_py()] = per_order.get(c.column(ORDER)[0].as_py(), 0) + 1
    assert len(per_order) == 4 and min(per_order.values()) > 1
    assert sum(b.num_rows for c in chunks for b in unpacked(iter([c]))) == 20_000


def test_empty_batches_make_no_chunks() -> None:
    packer = Packer()
    empty = pa.RecordBatch.from_pydict({"id": pa.array([], pa.int64())})  # no key column: no first key
    assert list(packer.add(empty, np.zeros(0, np.int32), np.zeros(0, np.int64))) == []
    assert list(packer.flush()) == []


def test_a_pairs_order_is_the_same_in_every_process_and_batch() -> None:
    parts, groups = pa.array(["dt=1", "dt=1", "dt=2", "dt=1"]), pa.array(["a", "b", "a", "a"])
    orders = group_orders(parts, groups)
    assert orders[0] == orders[3] and len({orders[0], orders[1], orders[2]}) == 3
    assert group_orders(pa.array(["dt=2"]), pa.array(["a"]))[0] == orders[2]
    # A group's records from two map tasks must sort together: the hash cannot be Python's salted hash().
    code = ("import pyarrow as pa; from hudi_engine.spark.arrow_shuffle import group_orders; "
            "print(group_orders(pa.array(['dt=1']), pa.array(['a']))[0])")
    got = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip() for seed in ("1", "2")}
    assert got == {str(orders[0])}


@pytest.mark.parametrize("rows", [0, 1])
def test_group_orders_of_few_records(rows: int) -> None:
    assert len(group_orders(pa.array(["p"] * rows, pa.string()), pa.array(["g"] * rows, pa.string()))) == rows


def test_a_routes_fields_are_cast_so_every_chunk_of_a_group_has_one_schema(monkeypatch) -> None:
    from hudi_engine.spark import write_udfs
    from hudi_engine.spark.write_udfs import RoutePackFn
    from hudi_engine.write.executor import BUCKET, DELETE, PARTITION

    def route(structs):  # one map task's routes: the key as a dictionary, then as large strings
        for i, s in enumerate(structs):
            keys = s.field("id").cast(pa.string())
            keys = keys.dictionary_encode() if i == 0 else keys.cast(pa.large_string())
            n = len(keys)
            yield pa.StructArray.from_arrays(
                [keys, pa.array(["p"] * n), pa.array([0] * (n - 1) + [-1], pa.int64()), pa.array([1] * n, pa.int32())],
                names=[KEY, PARTITION, BUCKET, TASK])

    monkeypatch.setattr(write_udfs, "ROUTE_ROWS", 1)  # each batch routed on its own
    fn = RoutePackFn.__new__(RoutePackFn)
    fn.route, fn.sources, fn.deleting = route, ["id"], False
    batches = [pa.RecordBatch.from_pydict({"id": pa.array([3, 1, 2])}), pa.RecordBatch.from_pydict({"id": pa.array([5, 4])})]
    chunks = list(fn(iter(batches)))
    records = [b for c in chunks for b in unpacked(iter([c]))]
    assert {b.schema for b in records} == {pa.schema([("id", pa.int64()), (KEY, pa.string()), (PARTITION, pa.string()),
                                                      (BUCKET, pa.int32()), (DELETE, pa.bool_())])}
    assert sorted(k for b in records for k in b.column(KEY).to_pylist()) == ["1", "3", "5"]  # the last of each: no bucket
    assert {c.column(TASK)[0].as_py() for c in chunks} == {1}
