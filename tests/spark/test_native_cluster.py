"""The native `hudi` source (issue 24) on a local standalone cluster whose executors run a Python without this
project (`executor_pythons.full`): a driver started with `native_conf` reads, through the catalog name (SQL),
`spark.table` and `format("hudi")`, a COW table and a MOR table with log slices, equal to hudi-rs; base-only slices
are planned as Spark's `FileScan parquet`, slices with log files go to `hudi_merge`, whose tasks run on the
executors with the `hudi_engine` the driver ships them. The component's jar reaches the executors through
`spark.jars`.

The same driver reads the two tables copied to the local S3 server under a plain `s3://bucket/...` URI (pyarrow
finds the endpoint in AWS_ENDPOINT_URL): Spark's own Hadoop file systems have no `s3` scheme in pyspark (no
hadoop-aws), so the JVM source's check must send every slice to `hudi_merge`; handing those files to Spark's
parquet scan would fail the query."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from oracle import rs_snapshot

from hudi_engine.spark import write
from hudi_engine.spark.session import python_env
from hudi_engine.storage import Storage

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
COLUMNS = ["id", "name", "ts", "amount", "dt"]

_DRIVER = textwrap.dedent("""
    import json, sys
    from hudi_engine.spark import create_catalog_table, local_spark_session
    from hudi_engine.spark.executor_env import checked_env
    master, executor_python, tables, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    spark = local_spark_session(app_name="hudi-native-cluster", master=master, native=True,
                                extra_conf={"spark.cores.max": "2", "spark.executor.cores": "1",
                                            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                                            "spark.pyspark.python": executor_python, **extra})
    columns = "id, name, ts, amount, dt"

    def rows(df):
        return sorted([r.id, r.name, r.ts, r.amount, r.dt] for r in df.selectExpr(*columns.split(", ")).collect())

    def plan(df):
        return df._jdf.queryExecution().executedPlan().toString()

    out = {}
    for name, location in tables.items():
        create_catalog_table(spark, name, location)
        point = spark.sql(f"SELECT id, name FROM {name} WHERE id = 7")
        out[name] = {"sql": rows(spark.sql(f"SELECT {columns} FROM {name}")), "table": rows(spark.table(name)),
                     "format": rows(spark.read.format("hudi").load(location)),
                     "point": [list(r) for r in point.collect()], "point_plan": plan(point),
                     "plan": plan(spark.table(name))}
    env = checked_env(spark)
    print(json.dumps({"tables": out, "jars": list(spark.sparkContext._jsc.jars()),
                      "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1,
                      "shipped": env.shipped, "executor_engines": sorted({str(r.engine) for r in env.reports})}))
    spark.stop()
""")


def _opts(table_type: str, operation: str) -> dict:
    return {"hoodie.table.name": "native_cluster", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.compact.inline": "false"}


def _make(spark, location: str, table_type: str) -> None:
    rows = [(i, f"n{i}", 1, i * 1.5, f"d{i % 4}") for i in range(40)]
    write(spark.createDataFrame(rows, SCHEMA), location, _opts(table_type, "bulk_insert"))
    # Partition d0 only: on MOR its slices get log files, d1-d3 stay base-only.
    upserts = [(i, f"u{i}", 2, i * 2.5, "d0") for i in range(0, 40, 4)] + [(100, "new", 2, 0.5, "d0")]
    write(spark.createDataFrame(upserts, SCHEMA), location, _opts(table_type, "upsert"))


def _expected(location: str) -> list[list]:
    t = rs_snapshot(location)
    return sorted([r[c] for c in COLUMNS] for r in t.to_pylist())


def test_native_reads_on_a_standalone_cluster_and_on_s3_equal_hudi_rs(spark, standalone_master, executor_pythons,
                                                                      s3_server, tmp_path):
    bucket = s3_server.new_bucket()
    tables: dict[str, str] = {}  # catalog name -> location the driver reads
    oracle: dict[str, str] = {}  # catalog name -> location hudi-rs reads (the same table)
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        kind = "cow" if table_type == "COPY_ON_WRITE" else "mor"
        local = str(tmp_path / kind)
        _make(spark, local, table_type)
        remote = s3_server.uri(bucket, kind)
        _make(spark, remote, table_type)
        assert Storage.for_uri(remote)[0].is_s3
        tables[f"local_{kind}"], oracle[f"local_{kind}"] = local, local
        tables[f"s3_{kind}"], oracle[f"s3_{kind}"] = f"s3://{bucket}/{kind}", remote
    # The driver's Python (planning) and the executors' (the merge source's tasks) find the local S3 server here.
    endpoint = {"AWS_ENDPOINT_URL": s3_server.endpoint_url}
    extra = {f"spark.executorEnv.{k}": v for k, v in endpoint.items()}
    # From outside the checkout: nothing of this project is importable from the working directory.
    done = subprocess.run([sys.executable, "-c", _DRIVER, standalone_master, executor_pythons.full,
                           json.dumps(tables), json.dumps(extra)],
                          env={**os.environ, **python_env(), **endpoint}, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["executors"] == 2
    # The executors had no hudi_engine and got the driver's; the component went to them with spark.jars.
    assert report["executor_engines"] == ["None"] and report["shipped"], report
    assert any(j.endswith("/hudi-engine-native.jar") for j in report["jars"]), report["jars"]
    for name, got in report["tables"].items():
        expected = _expected(oracle[name])
        assert len(expected) == 41, name
        for path in ("sql", "table", "format"):
            assert got[path] == expected, f"{name}: {path}"
        assert got["point"] == [[7, "n7"]], name
        point, whole = got["point_plan"], got["plan"]
        if name.startswith("local_"):
            # id 7 lives in d3, base-only on both tables: Spark's parquet scan, the filter pushed.
            assert "FileScan parquet" in point and "PushedFilters: [IsNotNull(id), EqualTo(id,7)]" in point, point
            merged = name == "local_mor"  # only d0's slices have log files
            assert "FileScan parquet" in whole and ("hudi_merge" in whole) == merged, whole
        else:
            # Spark cannot open s3:// here: every slice goes to the merge source, none to a parquet scan.
            assert "FileScan parquet" not in point and "hudi_merge" in point, point
            assert "FileScan parquet" not in whole and "hudi_merge" in whole, whole
