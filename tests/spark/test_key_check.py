"""Composite keys that Hudi's key format cannot tell apart are refused before any data file is written, on every
path of the Spark writer; unambiguous keys (commas and colons included) are written exactly as Hudi writes them."""
from __future__ import annotations

import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import KeyGeneratorError
from hudi_engine.location import TableLocation
from hudi_engine.spark import write
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata

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


SEPARATOR_IN_A_VALUE = ([("1,b:2", "3", 2, "x"), ("1", "2,b:3", 2, "x")], "reads both as")
NULL_SPELLED_OUT = ([("p", None, 2, "x"), ("p", "__null__", 2, "x")], "which is how Hudi writes a null 'b'")


# Every pair of (key generator, operation, ambiguity) once: the three are checked apart from each other.
@pytest.mark.parametrize("path_kind,operation,bad,why", [
    ("complex keygen", "upsert", *SEPARATOR_IN_A_VALUE), ("complex keygen", "bulk_insert", *NULL_SPELLED_OUT),
    ("custom keygen", "upsert", *NULL_SPELLED_OUT), ("custom keygen", "bulk_insert", *SEPARATOR_IN_A_VALUE),
])
def test_ambiguous_keys_are_refused_before_any_file_is_written(spark, tmp_path, path_kind, operation, bad, why):
    path = tmp_path / "t"
    opts = _opts() if path_kind == "complex keygen" else _opts("org.apache.hudi.keygen.CustomKeyGenerator", "p:SIMPLE")
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
    assert_same_rows(rs_snapshot(path), before, "hudi-rs after the refused write")
    assert_same_rows(HudiTable.load(path).read_snapshot(), before, "our reader after the refused write")
    # The failed instant was rolled back, and it had written nothing to roll back.
    timeline = Timeline.load(TableLocation.of(str(path)))
    (rollback,) = [i for i in timeline if i.action.value == "rollback"]
    meta = read_avro_metadata(timeline.read_content(rollback), "HoodieRollbackMetadata")
    assert meta["totalFilesDeleted"] == 0, meta
