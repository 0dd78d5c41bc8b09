"""Reading a file slice: Hudi 1.x's partial log blocks (IS_PARTIAL), whose records hold a subset of the columns.
End to end against real files: tests/java_hudi/test_same_sql.py (the engine reads Java Hudi's MOR table after its
MERGE INTO, which writes them)."""
from __future__ import annotations

import pyarrow as pa

from hudi_engine.file_slice_reader import PartialBatch, SliceReadContext, _complete_partial_records
from hudi_engine.io.log_block import BlockType, HeaderKey, LogBlock
from hudi_engine.merge import DeleteBatch, merge_records
from hudi_engine.payload import payload_for

SCHEMA = pa.schema([("_hoodie_record_key", pa.string()), ("id", pa.int64()), ("name", pa.string()),
                    ("price", pa.float64()), ("ts", pa.int64())])


def _ctx(payload: str = "org.apache.hudi.common.model.DefaultHoodieRecordPayload") -> SliceReadContext:
    return SliceReadContext(None, SCHEMA, lambda t: t.column("_hoodie_record_key"),  # type: ignore[arg-type]
                            ("_hoodie_record_key",), "ts", payload_for(payload), None)  # type: ignore[arg-type]


def _rows(*rows: tuple) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], SCHEMA)


def test_a_partial_block_takes_its_absent_columns_from_the_record_before_it():
    """The partial record of key 1 names only `name` and `ts`: id and price come from the record as the base and the
    blocks before it left it (a full update of price); key 3, in no earlier version, keeps nulls."""
    ctx = _ctx()
    base = _rows(("1", 1, "a", 10.0, 100), ("2", 2, "b", 20.0, 100))
    full = _rows(("1", 1, "a", 11.0, 200))
    partial = PartialBatch(_rows(("1", None, "a2", None, 300), ("3", None, "c", None, 300)),
                           frozenset({"_hoodie_record_key", "name", "ts"}))
    batches = _complete_partial_records(ctx, base, [full, DeleteBatch(pa.array(["2"])), partial])
    assert batches[:2] == [full, batches[1]] and isinstance(batches[1], DeleteBatch)
    merged = merge_records(base, batches, key_of=ctx.key_of, ordering_field="ts", payload=ctx.payload).records
    assert sorted(merged.to_pylist(), key=lambda r: r["_hoodie_record_key"]) == [
        {"_hoodie_record_key": "1", "id": 1, "name": "a2", "price": 11.0, "ts": 300},
        {"_hoodie_record_key": "3", "id": None, "name": "c", "price": None, "ts": 300}]


def test_a_block_is_partial_by_its_header():
    header = {HeaderKey.INSTANT_TIME: "20250101000000000", HeaderKey.IS_PARTIAL: "true"}
    assert LogBlock(BlockType.AVRO_DATA, header, b"").is_partial
    assert not LogBlock(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: "20250101000000000"}, b"").is_partial
