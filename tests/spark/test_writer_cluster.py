"""The same writes on a local standalone cluster give identical tables. The executors run in separate processes
with a Python of their own that has the engine's dependencies but not this project (`executor_pythons`): the driver
ships `hudi_engine` to them (issue 14), and reads the tables back through them with `spark.read.format("hudi")`."""
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

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# Steps shared by both drivers: (operation, rows).
STEPS = [
    ("bulk_insert", [[i, f"v{i}", 1, f"p{i % 3}"] for i in range(40)]),
    ("upsert", [[i, f"u{i}", 2, f"p{i % 3}"] for i in range(0, 40, 3)] + [[100 + i, "n", 2, "p9"] for i in range(4)]),
    ("delete", [[i, "", 3, f"p{i % 3}"] for i in range(1, 40, 5)]),
]
SCHEMA = "id bigint, v string, ts bigint, dt string"


def options(table_type: str, operation: str) -> dict:
    return {"hoodie.table.name": "cluster", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation}


_DRIVER = textwrap.dedent("""
    import json, sys
    from hudi_engine.spark import local_spark_session, write
    from hudi_engine.spark.executor_env import checked_env
    master, root, executor_python = sys.argv[1:4]
    STEPS, SCHEMA, OPTIONS, ONE_PARTITION = json.loads(sys.argv[4])
    spark = local_spark_session(app_name="hudi-cluster-write", master=master,
                                extra_conf={"spark.cores.max": "2", "spark.executor.cores": "1",
                                            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                                            "spark.pyspark.python": executor_python,
                                            # the status API tells which executor ran each task
                                            "spark.ui.enabled": "true", "spark.ui.port": "0"})
    out, read = {}, {}
    for table_type, by_op in OPTIONS.items():
        out[table_type] = []
        for op, rows in STEPS:
            r = write(spark.createDataFrame(rows, SCHEMA), root + "/" + table_type, by_op[op])
            out[table_type].append([r.records_inserted, r.records_updated, r.records_deleted])
        df = spark.read.format("hudi").load(root + "/" + table_type)
        read[table_type] = sorted([r["id"], r["v"], r["ts"], r["dt"]] for r in df.collect())
    # One partition, several file groups: a bulk_insert cut into files by bytes over two tasks, then an upsert of
    # every file group. Which executors wrote the upsert's files: task attempt ids from the files' write tokens,
    # executors from Spark's status API.
    import urllib.request
    from hudi_engine import HudiTable
    from hudi_engine.write.write_result import write_token_of
    one = dict(ONE_PARTITION)
    rows = spark.range(0, 20000, numPartitions=4).selectExpr(
        "id", "concat('v', id, repeat('x', 40)) as v", "cast(1 as bigint) as ts", "'one' as dt")
    write(rows, root + "/one", {**one, "hoodie.datasource.write.operation": "bulk_insert"})
    upserted = write(rows.filter("id % 10 = 0").selectExpr("id", "'u' as v", "cast(2 as bigint) as ts", "dt"),
                     root + "/one", {**one, "hoodie.datasource.write.operation": "upsert"})
    table = HudiTable.load(root + "/one")
    stats = table.timeline.commit_metadata(table.timeline.completed_commits().last()).write_stats()
    attempts = {write_token_of(s).attempt_id for s in stats}
    api = spark.sparkContext.uiWebUrl + "/api/v1/applications/" + spark.sparkContext.applicationId
    stages = json.load(urllib.request.urlopen(api + "/stages?details=true&status=complete"))
    executor_of = {int(t["taskId"]): t["executorId"] for st in stages for t in (st.get("tasks") or {}).values()}
    one_partition = {"files": len(stats), "rewritten": upserted.files_rewritten, "tasks": upserted.tasks,
                     "executors": sorted({executor_of[a] for a in attempts})}
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    env = checked_env(spark)
    print(json.dumps({"counts": out, "read": read, "executors": executors, "shipped": env.shipped,
                      "one_partition": one_partition,
                      "executor_pythons": sorted({r.executable for r in env.reports}),
                      "executor_engines": sorted({str(r.engine) for r in env.reports})}))
    spark.stop()
""")


def _data(path) -> list[tuple]:
    t = rs_snapshot(path)
    return sorted(tuple(r[c] for c in ("id", "v", "ts", "dt")) for r in t.to_pylist())


def test_writes_on_a_standalone_cluster_equal_local_writes(spark, standalone_master, executor_pythons, tmp_path):
    types = ["COPY_ON_WRITE", "MERGE_ON_READ"]
    counts = {}
    for table_type in types:
        counts[table_type] = []
        for op, rows in STEPS:
            r = write(spark.createDataFrame(rows, SCHEMA), str(tmp_path / "local" / table_type), options(table_type, op))
            counts[table_type].append([r.records_inserted, r.records_updated, r.records_deleted])
    one_partition = {**options("COPY_ON_WRITE", "upsert"), "hoodie.table.name": "one",
                     "hoodie.parquet.max.file.size": "100000", "hoodie.parquet.small.file.limit": "0",
                     "hoodie.index.bloom.num_entries": "500", "hoodie.bulkinsert.shuffle.parallelism": "2"}
    plan = json.dumps([STEPS, SCHEMA, {t: {op: options(t, op) for op, _ in STEPS} for t in types}, one_partition])
    # From outside the checkout: nothing of this project is importable from the working directory.
    done = subprocess.run([sys.executable, "-c", _DRIVER, standalone_master, str(tmp_path / "cluster"),
                           executor_pythons.full, plan],
                          env={**os.environ, **python_env()}, cwd=tmp_path, capture_output=True, text=True,
                          timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["executors"] == 2
    # The executors ran the other venv, had no hudi_engine, and got the driver's.
    assert report["executor_pythons"] == [executor_pythons.full] and report["executor_engines"] == ["None"]
    assert report["shipped"] and report["shipped"].endswith(".zip")
    assert report["counts"] == counts
    # One partition's file groups were written by executors of both workers (issue 9).
    one = report["one_partition"]
    assert one["rewritten"] >= 4 and one["tasks"] >= 2 and one["executors"] == ["0", "1"], one
    for table_type in types:
        local, remote = _data(tmp_path / "local" / table_type), _data(tmp_path / "cluster" / table_type)
        assert remote == local, table_type
        assert len(local) == 40 + 4 - 8
        assert [tuple(r) for r in report["read"][table_type]] == local, table_type
