"""The Spark writers check a Java job's options like the local one (config/hudi_keys.py): a refused option fails
the write, naming the table and the key, before the table is started; a table written with no-op options reads
back the same with hudi-rs."""
from __future__ import annotations

import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.spark import write, write_small

pytestmark = pytest.mark.spark

OPTIONS = {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "upsert"}


@pytest.mark.parametrize("writer", [write, write_small], ids=["write", "write_small"])
def test_spark_writers_refuse_before_starting_the_table(spark, tmp_path, writer):
    df = spark.createDataFrame([(1, 10, 1.5), (2, 10, 2.5)], "id bigint, ts bigint, amount double")
    path = tmp_path / "orders"
    refused = {"hoodie.layout.optimize.curve.build.method": "SAMPLE", "hoodie.datasource.hive_sync.mode": "jdbc"}
    with pytest.raises(ConfigError) as e:
        writer(df, str(path), {**OPTIONS, **refused})
    assert str(e.value).startswith(f"table {path}: invalid Hudi write options:")
    assert "hoodie.layout.optimize.curve.build.method='SAMPLE' is not supported" in str(e.value)
    assert "hoodie.datasource.hive_sync.mode='jdbc' is not supported" in str(e.value)
    assert not path.exists()
    no_ops = {"hoodie.embed.timeline.server": "false", "hoodie.memory.merge.fraction": "0.75",
              "hoodie.metadata.enable": "false", "hoodie.clustering.async.enabled": "false"}
    writer(df, str(path), {**OPTIONS, **no_ops})
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "written with no-op options")
