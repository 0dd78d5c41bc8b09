"""A Spark write (`hudi_engine.spark.write`, the handles in Spark tasks) into a CDC-enabled table writes the same
CDC log files as the in-process write (tests/write/test_cdc.py): the task's stat carries `cdcStats` to the commit."""
from __future__ import annotations

import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.io.log_block import BlockType, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.spark import write

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, p string, ts bigint, v string"
OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE"}


def test_spark_upsert_into_a_cdc_table_writes_its_cdc_log_file(spark, tmp_path):
    path = tmp_path / "t"
    write(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 1, "y"), (3, "b", 1, "z")], SCHEMA), str(path), OPTIONS)
    up = write(spark.createDataFrame([(2, "a", 2, "Y"), (9, "a", 2, "n")], SCHEMA), str(path), OPTIONS)
    [cdc] = [f for f in path.rglob("*.cdc")]
    assert cdc.parent.name == "a" and f"_{up.instant_time}.log.1_" in cdc.name
    table = HudiTable.load(str(path))
    [instant] = [i for i in table.timeline.completed_commits().instants if i.timestamp == up.instant_time]
    [stat] = table.commit_metadata(instant).write_stats()
    assert stat.cdc_stats == {f"a/{cdc.name}": cdc.stat().st_size}
    [block] = read_log_blocks(cdc.read_bytes(), file_name=cdc.name)
    assert block.block_type is BlockType.CDC_DATA
    assert sorted(data_block_records(block).to_pylist(), key=lambda r: r["op"]) == [
        {"op": "i", "record_key": "9", "before": None},
        {"op": "u", "record_key": "2", "before": {"id": 2, "p": "a", "ts": 1, "v": "y"}},
    ]
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), "CDC table written by Spark")
