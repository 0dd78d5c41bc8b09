"""hudi_engine.spark.write and another writer's pending clustering: an update into a file group under the plan is
refused in the map stage, before any write task starts (no data file is written), on both Spark routes; an insert
goes to another file group; after the clustering completes, hudi-rs reads every acknowledged row."""
from __future__ import annotations

from pathlib import Path

import pytest
from oracle import rs_snapshot
from write.clustering_job import execute_clustering, schedule_clustering

from hudi_engine import HudiTable
from hudi_engine.errors import ClusteringUpdateError
from hudi_engine.spark import one_pass, write

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, dt string"


def opts(operation: str, **extra) -> dict:
    return {"hoodie.table.name": "clustered", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.operation": operation, **extra}


def data_files(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*")
            if p.is_file() and ".hoodie" not in p.relative_to(path).parts}


def rows_of(path: Path) -> dict[int, str]:
    return {r["id"]: r["name"] for r in rs_snapshot(path).to_pylist()}


# one_pass: a cached input (exact row count) below one file: map tasks choose file groups (MapSidePlan) and the
# refusal fails a map task; two_pass: an input of unknown size takes the counting pass and the driver's bucket plan.
@pytest.mark.parametrize("route", ["one_pass", "two_pass"])
def test_update_into_a_clustering_group_is_refused_before_any_file(spark, tmp_path, monkeypatch, route):
    path = tmp_path / "t"
    write_one_pass = one_pass.write_files
    routes: list[str] = []

    def spy(*args):
        routes.append("one_pass")
        return write_one_pass(*args)

    monkeypatch.setattr(one_pass, "write_files", spy)

    def frame(rows):
        df = spark.createDataFrame(rows, SCHEMA)
        if route == "one_pass":
            df = df.cache()
            df.count()
        return df
    write(spark.createDataFrame([(1, "a", 1, "d1"), (2, "b", 1, "d2")], SCHEMA), str(path), opts("bulk_insert"))
    (g1,) = [s.file_id for s in HudiTable.load(str(path)).file_slices() if s.partition_path == "d1"]
    ts = schedule_clustering(path, [("d1", g1)])
    files, acknowledged = data_files(path), rows_of(path)

    update = frame([(1, "changed", 2, "d1"), (2, "b2", 2, "d2")])
    with pytest.raises(ClusteringUpdateError) as e:
        write(update, str(path), opts("upsert"))
    assert routes == (["one_pass"] if route == "one_pass" else [])
    assert (f"Not allowed to update the clustering file group HoodieFileGroupId{{partitionPath='d1', "
            f"fileId='{g1}'}}") in str(e.value)
    assert data_files(path) == files and rows_of(path) == acknowledged

    # New keys, in the clustering's partition too, are written elsewhere.
    write(frame([(3, "c", 1, "d1"), (4, "d", 1, "d2")]), str(path), opts("upsert"))
    acknowledged.update({3: "c", 4: "d"})
    assert not [f for f in data_files(path) if g1 in f and f not in files]
    execute_clustering(path, ts)
    assert rows_of(path) == acknowledged
