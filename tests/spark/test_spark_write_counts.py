"""A Spark write (`hudi_engine.spark.write`) and a small write on the driver (`write_on_driver`) read the table's
metadata as the pure-Python write does (tests/write/test_write_counts.py): `hoodie.properties` once, the timeline
listed twice (when the write opens, and under the table lock, which the table services after the commit share). Counted on the driver (the tasks run in
Python workers: they get what they need from the driver's plan, `WriteTask`, and list partitions only)."""
from __future__ import annotations

from pathlib import Path

import pytest
from io_counts import counting

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.spark import write
from hudi_engine.spark.small_write import write_on_driver

pytestmark = pytest.mark.spark

# The timeline's two loads, the ownership check at the commit point and after it, and the crash temp files (of a
# version-9 table: in .hoodie and in .hoodie/timeline, tests/write/test_write_counts.py).
LISTINGS = 6

# The data table's reads (the metadata table's own, on by default, are counted apart: tests/write/test_write_counts.py)
OPTIONS = {"hoodie.table.name": "c", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
           "hoodie.metadata.enable": "false"}


@pytest.mark.parametrize("on_driver", [False, True])
def test_one_upsert_reads_the_config_once_and_lists_the_timeline_twice(spark, tmp_path: Path,
                                                                             on_driver: bool) -> None:
    path = str(tmp_path / "t")
    options = dict(OPTIONS)
    first = spark.createDataFrame([(i, 1, f"p{i % 2}") for i in range(10)], "id bigint, ts bigint, part string")
    write(first, path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    df = spark.createDataFrame([(2, 2, "p0"), (3, 2, "p1"), (11, 2, "p1")], "id bigint, ts bigint, part string")
    with counting() as counter:
        if on_driver:
            write_on_driver(df, path, WriteConfig.from_options(upsert, path))
        else:
            write(df, path, upsert)
    # Before issue 25: 4 reads of hoodie.properties, 13 Timeline.load and 16 listings of .hoodie on the driver.
    assert counter.snapshot() == {"properties_reads": 1, "timeline_loads": 2, "meta_listings": LISTINGS}


@pytest.mark.parametrize("statement", ["insert", "update", "merge"])
def test_one_sql_write_reads_the_config_once_and_lists_the_timeline_twice(spark, tmp_path: Path,
                                                                           statement: str) -> None:
    """A Spark SQL write (`spark.save`) loads the table once for the statement's checks and its write."""
    table, path = f"counts_{statement}", str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {table} USING hudi PARTITIONED BY (part) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.metadata.enable' = 'false')
                  AS SELECT * FROM VALUES (1L, 1L, 'p1'), (2L, 1L, 'p0') AS s(id, ts, part)""")
    sql = {"insert": f"INSERT INTO {table} VALUES (3, 2, 'p1')",
           "update": f"UPDATE {table} SET ts = 3 WHERE id = 1",
           "merge": f"MERGE INTO {table} t USING (SELECT 1L AS id, 4L AS ts, 'p1' AS part) s ON t.id = s.id "
                    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"}[statement]
    try:
        with counting() as counter:
            spark.sql(sql)
    finally:
        spark.sql(f"DROP TABLE {table}")
    # Before issue 35: UPDATE and MERGE read hoodie.properties twice (their key checks, then the write).
    assert counter.snapshot() == {"properties_reads": 1, "timeline_loads": 2, "meta_listings": LISTINGS}
