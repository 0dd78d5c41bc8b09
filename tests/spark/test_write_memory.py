"""A write of 5M records into one partition succeeds with Python workers capped at 1 GB
(`spark.executor.pyspark.memory=1g`): a task holds one file group's records, never a partition's batch.

Runs in its own Spark application (the cap applies when the workers start)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyarrow.compute as pc
import pytest
from oracle import rs_snapshot

from hudi_engine.spark.session import python_env

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_DRIVER = textwrap.dedent("""
    import json, sys
    from pyspark.sql import functions as F
    from hudi_engine.spark import local_spark_session, write
    path, n = sys.argv[1], int(sys.argv[2])
    spark = local_spark_session(app_name="hudi-memory", master="local[2]", extra_conf={
        "spark.executor.pyspark.memory": "1g", "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "8"})
    opts = {"hoodie.table.name": "mem", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            # ~2M records a file group at this row width (the first commit is too small to measure it).
            "hoodie.copyonwrite.record.size.estimate": "60"}

    def day(start, count, ts):
        return (spark.range(start, start + count, numPartitions=8)
                .select(F.format_string("k%010d", "id").alias("id"), F.lit(ts).cast("long").alias("ts"),
                        (F.col("id") * 7 % 1000).cast("double").alias("amount"), F.lit("2024-01-01").alias("dt")))

    write(day(0, 1000, 1), path, {**opts, "hoodie.datasource.write.operation": "bulk_insert"})
    # One partition: 5M new records and 500 updates, through tagging, buckets and handles.
    r = write(day(500, n, 2), path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    print(json.dumps({"inserted": r.records_inserted, "updated": r.records_updated,
                      "files": r.files_created + r.files_rewritten, "tasks": r.tasks}))
    spark.stop()
""")


def test_five_million_records_into_one_partition_with_workers_capped_at_1g(tmp_path):
    path = tmp_path / "t"
    n = 5_000_000
    env = {**os.environ, **python_env()}
    env.pop("JDK_JAVA_OPTIONS", None)  # 5M records through one JVM: its C2 compiles pay (tests/conftest.py)
    proc = subprocess.run([sys.executable, "-c", _DRIVER, str(path), str(n)], capture_output=True, text=True,
                          env=env, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["inserted"] == n - 500 and out["updated"] == 500
    # The inserts fill the small files of the first write, then new file groups: several file groups of over a
    # million records each, a task per file group, each holding one at a time.
    assert out["files"] >= 3 and out["tasks"] == min(out["files"], 4), out  # spark.default.parallelism=4
    got = rs_snapshot(path)
    assert got.num_rows == n + 500 and pc.count_distinct(got.column("_hoodie_record_key")).as_py() == n + 500
