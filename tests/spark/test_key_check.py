"""Composite keys that Hudi's key format cannot tell apart are refused before any data file is written, on every
path of the Spark writer; unambiguous keys (commas and colons included) are written exactly as Hudi writes them."""
from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import KeyGeneratorError
from hudi_engine.keygen import ComplexKeyGenerator
from hudi_engine.spark import write
from hudi_engine.spark.key_check import ambiguous_key
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata
from oracle import assert_same_rows, rs_snapshot

pytestmark = pytest.mark.spark

SCHEMA = "a string, b string, v bigint, p string"


def _opts(key_generator: str = "org.apache.hudi.keygen.ComplexKeyGenerator", partition: str = "p", **extra) -> dict:
    return {"hoodie.table.name": "keys", "hoodie.datasource.write.recordkey.field": "a,b",
            "hoodie.datasource.write.partitionpath.field": partition,
            "hoodie.datasource.write.precombine.field": "v", "hoodie.datasource.write.keygenerator.class": key_generator,
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE", **extra}


def _hudi_key(a, b) -> str:
    part = lambda v: "__null__" if v is None else "__empty__" if v == "" else v  # noqa: E731
    return f"a:{part(a)},b:{part(b)}"


GOOD = [("1", "2", 1, "x"), ("x,y", "12:30", 1, "x"), ("1", ",b:", 1, "y"), ("a:1", None, 1, "y")]


@pytest.mark.parametrize("path_kind", ["sql grouping", "python keys"])
@pytest.mark.parametrize("operation", ["upsert", "bulk_insert"])
@pytest.mark.parametrize("bad,why", [
    ([("1,b:2", "3", 2, "x"), ("1", "2,b:3", 2, "x")], "reads both as"),
    ([("p", None, 2, "x"), ("p", "__null__", 2, "x")], "which is how Hudi writes a null 'b'"),
])
def test_ambiguous_keys_are_refused_before_any_file_is_written(spark, tmp_path, path_kind, operation, bad, why):
    path = tmp_path / "t"
    # CustomKeyGenerator's partition paths are computed by Python, before the shuffle (the other path).
    opts = _opts() if path_kind == "sql grouping" else _opts("org.apache.hudi.keygen.CustomKeyGenerator", "p:SIMPLE")
    write(spark.createDataFrame(GOOD, SCHEMA), str(path), {**opts, "hoodie.datasource.write.operation": operation})
    before = rs_snapshot(path)
    assert sorted(before.column("_hoodie_record_key").to_pylist()) == sorted(_hudi_key(a, b) for a, b, _, _ in GOOD)

    rows = GOOD[:1] + bad
    with pytest.raises(KeyGeneratorError) as e:
        write(spark.createDataFrame(rows, SCHEMA), str(path), {**opts, "hoodie.datasource.write.operation": operation})
    message = str(e.value)
    assert "record key fields ['a', 'b']" in message and why in message, message
    assert "would silently replace the other" in message
    assert any(f'"a":"{a}"' in message or f"'a': '{a}'" in message for a, _, _, _ in bad), message
    if path_kind == "sql grouping":  # refused by the Spark expression before the shuffle (the row as JSON)
        assert '{"a":' in message, message
    assert_same_rows(rs_snapshot(path), before, "hudi-rs after the refused write")
    assert_same_rows(HudiTable.load(path).read_snapshot(), before, "our reader after the refused write")
    # The failed instant was rolled back, and it had written nothing to roll back.
    timeline = Timeline.load(*Storage.for_uri(str(path)))
    (rollback,) = [i for i in timeline if i.action.value == "rollback"]
    meta = read_avro_metadata((path / ".hoodie" / rollback.file_name).read_bytes(), "HoodieRollbackMetadata")
    assert meta["totalFilesDeleted"] == 0, meta


def test_the_sql_check_refuses_exactly_what_the_key_generator_refuses(spark):
    values = [None, "", "a", ",", ":", "__null__", "__empty__", ",b:", "1,b:2", "b:", ",b", "x,a:y"]
    rows = [(a, b) for a, b in itertools.product(values, repeat=2) if not (a in (None, "") and b in (None, ""))]
    keygen = ComplexKeyGenerator(["a", "b"])
    expected = []
    for a, b in rows:
        try:
            keygen.record_keys(pa.table({"a": pa.array([a], pa.string()), "b": pa.array([b], pa.string())}))
            expected.append(False)
        except KeyGeneratorError:
            expected.append(True)
    df = spark.createDataFrame(rows, "a string, b string")
    got = [r[0] for r in df.select(ambiguous_key(df, ["a", "b"])).collect()]
    assert got == expected, [(row, g, x) for row, g, x in zip(rows, got, expected) if g != x]
    assert sum(expected) > 20
    numbers = spark.createDataFrame([(1, 2)], "a bigint, b bigint")
    assert ambiguous_key(numbers, ["a", "b"]) is None  # no text value, nothing to check
