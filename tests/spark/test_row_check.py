"""hudi_engine.spark.row_check: a small write's collected rows are cleared in Python only where Spark's check would
pass every one of them too (`collected_rows_pass` against `checked`, row set by row set)."""
from __future__ import annotations

import pytest

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import HudiError
from hudi_engine.spark.row_check import checked, collected_rows_pass
from hudi_engine.spark.task_error import unwrap_task_error

pytestmark = pytest.mark.spark

SCHEMA = "k string, b binary, n bigint, ts bigint, d date, p string"


def opts(key: str, operation: str = "upsert", **extra: str) -> WriteConfig:
    return WriteConfig.from_options({
        "hoodie.table.name": "check", "hoodie.datasource.write.recordkey.field": key,
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": operation, **extra}, "/nowhere")


GOOD = ("a", b"x", 1, 1, None, "p")
CASES = [
    ("k", [GOOD]),
    ("k", [GOOD, (None, b"x", 1, 1, None, "p")]),  # a null key
    ("k", [GOOD, ("", b"x", 1, 1, None, "p")]),  # an empty key
    ("k", [GOOD, (" ", b"x", 1, 1, None, "p")]),  # a blank key is a key
    ("b", [GOOD, ("a", b"", 1, 1, None, "p")]),  # empty bytes
    ("n", [GOOD, ("a", b"x", None, 1, None, "p")]),  # a null number
    ("n", [GOOD, ("a", b"x", 0, 1, None, "p")]),
    ("k,n", [GOOD, ("", b"x", None, 1, None, "p")]),  # every key field missing
    ("k,n", [GOOD, ("", b"x", 3, 1, None, "p")]),  # one of them is enough
    ("k", [GOOD, ("a", b"x", 1, None, None, "p")]),  # a null ordering value
    ("d", [GOOD]),  # a date key: null in GOOD
    ("missing_field", [GOOD]),  # a key field the input lacks: checked elsewhere
]


@pytest.mark.parametrize("key, rows", CASES)
@pytest.mark.parametrize("operation, extra", [
    ("upsert", {}),
    ("delete", {}),  # a delete orders nothing
    ("upsert", {"hoodie.datasource.write.payload.class": "test_payloads.KeepMaxAmount"}),  # a user payload decides
])
def test_python_clears_rows_only_where_the_spark_check_passes(spark, key, rows, operation, extra):
    df = spark.createDataFrame(rows, SCHEMA)
    config = opts(key, operation, **extra)
    try:
        checked(df, config).collect()
        spark_passes = True
    except Exception as e:  # noqa: BLE001  # Spark's error: the check's own inside it
        assert isinstance(unwrap_task_error(e), HudiError)
        spark_passes = False
    python_passes = collected_rows_pass(df.toArrow(), df, config)
    assert python_passes == spark_passes
