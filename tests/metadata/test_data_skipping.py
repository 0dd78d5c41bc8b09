"""Reads through the metadata table (hudi_engine/table.py with hudi_engine/metadata/data_skipping.py): file listings
from its files partition (no LIST call on a data partition), and file slices skipped by column stats where a filter
cannot hold for any of their files; every read equal to a read of everything, filtered."""
from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.metadata.column_stats import ColumnStats, StatValue
from hudi_engine.metadata.data_skipping import cannot_match
from hudi_engine.storage import Storage
from hudi_engine.write_pipeline import write_table

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.metadata.index.column.stats.enable": "true", "hoodie.parquet.small.file.limit": "0"}


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}-{i:04d}" for i in ids],
                     "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids],
                     "amount": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(10, 2)),
                     "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i % 50) for i in ids], pa.date32())})


def _stats(lo: object, hi: object, wrapper: str = "LongWrapper", nulls: int = 0, count: int = 10,
           value_type: tuple[int, str | None] | None = None) -> ColumnStats:
    return ColumnStats("f", "c", StatValue(wrapper, lo), StatValue(wrapper, hi), count, nulls, 1, 1, False,
                       value_type=value_type)


def test_cannot_match_reads_ranges_as_hudi_writes_them() -> None:
    long = pa.int64()
    assert cannot_match(_stats(10, 20), "=", 5, long) and not cannot_match(_stats(10, 20), "=", 10, long)
    assert cannot_match(_stats(10, 20), ">", 20, long) and not cannot_match(_stats(10, 20), ">=", 20, long)
    assert cannot_match(_stats(10, 20), "<", 10, long) and not cannot_match(_stats(10, 20), "<=", 10, long)
    assert cannot_match(_stats(10, 20), "in", [1, 30], long) and not cannot_match(_stats(10, 20), "in", [1, 15], long)
    assert not cannot_match(_stats(10, 20), "!=", 10, long)  # not read: kept
    assert cannot_match(_stats(None, None, nulls=10), "=", 3, long)  # only nulls: no comparison holds
    assert not cannot_match(_stats(10, 20), "=", "x", long)  # another type: kept
    # a decimal, index version 2 (unscaled bytes, "precision,scale") and 1 (decimal(30, 15))
    v2 = _stats(b"\x04\xd2", b"\x09\x29", "BytesWrapper", value_type=(10, "10,2"))  # 12.34 .. 23.45
    assert cannot_match(v2, "=", decimal.Decimal("12.33"), pa.decimal128(10, 2))
    assert not cannot_match(v2, "=", decimal.Decimal("12.34"), pa.decimal128(10, 2))
    v1 = _stats((1234 * 10 ** 13).to_bytes(8, "big", signed=True), (2345 * 10 ** 13).to_bytes(8, "big", signed=True),
                "DecimalWrapper")
    assert cannot_match(v1, ">", decimal.Decimal("23.45"), pa.decimal128(10, 2))
    days = _stats(20454, 20460, "IntWrapper", value_type=(12, None))  # 2026-01-01 .. 2026-01-07
    assert cannot_match(days, "<", dt.date(2026, 1, 1), pa.date32())
    assert not cannot_match(days, "=", dt.date(2026, 1, 3), pa.date32())
    micros = _stats(0, 10 ** 6, value_type=(16, None))
    assert cannot_match(micros, ">", dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC), pa.timestamp("us", "UTC"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_filtered_reads_skip_slices_and_equal_a_full_read(tmp_path: Path, table_type: str, monkeypatch) -> None:
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    for start in range(0, 400, 100):  # four batches: four file groups a partition
        write_table(_rows(list(range(start, start + 100)), "a"), path, {**options, "hoodie.datasource.write."
                                                                        "operation": "insert"})
    write_table(_rows(list(range(0, 400, 7)), "b"), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    table = HudiTable.load(path)
    everything = table.read_snapshot()
    assert table.plan_scan(filters=[("id", "=", 150)]).slices.__len__() < len(table.plan_scan().slices)
    assert not table.plan_scan(filters=[("id", "=", 10_000)]).slices
    rng = random.Random(7)
    for _ in range(30):
        column = rng.choice(["id", "v", "amount", "day"])
        op = rng.choice(["=", "<", "<=", ">", ">=", "in"])
        i = rng.randrange(-10, 410)
        value = {"id": i, "v": f"{rng.choice('ab')}-{i:04d}", "amount": decimal.Decimal(i) / 4,
                 "day": dt.date(2026, 1, 1) + dt.timedelta(days=i % 60)}[column]
        if op == "in":
            value = [value, value]
        got = HudiTable.load(path).read_snapshot(filters=[(column, op, value)]).sort_by("id")
        want = pa.Table.from_pylist([r for r in everything.to_pylist() if _holds(r[column], op, value)],
                                    schema=everything.schema).sort_by("id")
        assert got.column("id").to_pylist() == want.column("id").to_pylist(), (column, op, value)


def _holds(x: object, op: str, value: object) -> bool:
    if op == "in":
        return x in value  # type: ignore[operator]
    return {"=": x == value, "<": x < value, "<=": x <= value, ">": x > value,  # type: ignore[operator]
            ">=": x >= value}[op]  # type: ignore[operator]


def test_a_snapshot_lists_no_data_partition_with_a_metadata_table(tmp_path: Path, monkeypatch) -> None:
    path = str(tmp_path / "t")
    write_table(_rows(list(range(20)), "a"), path, OPTIONS)
    write_table(_rows(list(range(10, 30)), "b"), path, OPTIONS)
    listed: list[str] = []
    original = Storage._list

    def counting(self, folder):
        listed.append(folder)
        return original(self, folder)

    monkeypatch.setattr(Storage, "_list", counting)
    rows = HudiTable.load(path).read_snapshot()
    assert rows.num_rows == 30
    assert not [f for f in listed if f.rstrip("/").endswith(("/p0", "/p1"))], listed
