"""Clustering shared with Java Hudi (issue 39): Java reads a table the engine clustered (snapshot, and time travel to
before the clustering), and Java executes a plan the engine scheduled (`CALL run_clustering(op => 'execute')`); the
engine then reads what Java wrote. Java 0.15.0 on a version-6 COW table, Java 1.2.0 on a version-9 MOR table. The
engine's execution of Java's own plans is tests/table_services/test_clustering.py (the feature tables)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from local_write import write

from hudi_engine import HudiTable
from java_hudi.compare import assert_same_table

pytestmark = pytest.mark.timeout(900)

FILE_NAME = "_hoodie_file_name"


def _options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "clustered", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0", "hoodie.datasource.write.operation": "upsert"}


def _batch(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": [f"k{i:03d}" for i in ids], "part": ["a" if i % 2 else "b" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "val": [float((i * 37) % 101) for i in ids]})


def _java_rows(java, path: Path, instant: str | None = None) -> pa.Table:
    rows = java.snapshot(path) if instant is None else java.time_travel(path, instant)
    return rows.select(HudiTable.load(str(path)).read_snapshot().column_names)


@pytest.mark.parametrize("hudi, table_type, version", [("0.15.0", "COPY_ON_WRITE", 6), ("1.2.0", "MERGE_ON_READ", 9)],
                         ids=["v6-0.15-cow", "v9-1.2-mor"])
def test_java_reads_our_clustering_and_executes_our_plan(java_hudi, tmp_path: Path, hudi: str, table_type: str,
                                                        version: int) -> None:
    java = java_hudi(hudi)
    path = tmp_path / "t"
    opts = _options(table_type, version)
    for b in range(3):
        write(path, _batch(list(range(b * 6, b * 6 + 6)), b), opts)
    write(path, _batch([1, 2], 9), opts)  # MOR: log files, merged by the clustering
    before = HudiTable.load(str(path)).timeline.latest_time()
    assert before is not None

    done = HudiTable.load(str(path)).cluster(options={**opts, "hoodie.clustering.plan.strategy.sort.columns": "val"})
    assert done is not None and len(done.new_file_ids) == 2
    t = HudiTable.load(str(path))
    assert_same_table(t.read_snapshot(), _java_rows(java, path), f"Java {hudi} reads our clustering")
    assert_same_table(t.read_snapshot(as_of=before), _java_rows(java, path, before),
                      f"Java {hudi} time travel to before our clustering")

    # More small files, a plan of ours, executed by Java.
    for b in range(3, 5):
        write(path, _batch(list(range(b * 6, b * 6 + 6)), b), opts)
    expected = HudiTable.load(str(path)).read_snapshot()
    scheduled = HudiTable.load(str(path)).cluster(options=opts, op="schedule")
    assert scheduled is not None
    java.sql(f"CALL run_clustering(path => '{path}', op => 'execute')")
    t = HudiTable.load(str(path))
    completed = [i for i in t.timeline.instants_at(scheduled.instant_time) if i.is_completed]
    assert [i.action.value for i in completed] == ["replacecommit"], "Java did not complete our plan"
    assert not {f for ids in scheduled.replaced.values() for f in ids} & {s.file_id for s in t.file_slices()}
    ours = t.read_snapshot()
    columns = [c for c in ours.column_names if c != FILE_NAME]
    assert_same_table(ours.select(columns), expected.select(columns), "the rows after Java's execution")
    assert_same_table(ours, _java_rows(java, path), f"Java {hudi} reads its execution of our plan")


def test_java_executes_our_plan_along_the_z_curve_as_we_do(java_hudi, tmp_path: Path) -> None:
    """Java 0.15.0 executes a plan of ours with `order_strategy => 'z-order'`: every file it writes is in the order
    the engine's z-curve gives its rows (Hudi's byte mapping and interleaving, the same on both sides); then the
    engine clusters along the curve and Java reads the result."""
    import pyarrow.parquet as pq

    from hudi_engine.table_services.space_curve import ZORDER, curve_order

    java = java_hudi("0.15.0")
    path = tmp_path / "t"
    opts = _options("COPY_ON_WRITE", 6)
    for b in range(3):
        write(path, _batch(list(range(b * 20, b * 20 + 20)), b).set_column(
            2, "ts", pa.array([(i * 7919) % 1000 - 500 for i in range(b * 20, b * 20 + 20)], pa.int64())), opts)
    sort = {"hoodie.clustering.plan.strategy.sort.columns": "val,ts"}
    expected = HudiTable.load(str(path)).read_snapshot()
    scheduled = HudiTable.load(str(path)).cluster(options={**opts, **sort}, op="schedule")
    assert scheduled is not None
    java.sql(f"CALL run_clustering(path => '{path}', op => 'execute', order => 'val,ts', order_strategy => 'z-order')")
    t = HudiTable.load(str(path))
    assert [i.action.value for i in t.timeline.instants_at(scheduled.instant_time) if i.is_completed] == \
        ["replacecommit"], "Java did not complete our plan"
    files = [path / s.partition_path / s.base_file.path.rsplit("/", 1)[-1] for s in t.file_slices()
             if s.base_instant == scheduled.instant_time and s.base_file is not None]
    assert files
    for name in files:
        rows = pq.read_table(name)
        in_curve_order = rows.take(pa.array(curve_order(rows, ["val", "ts"], ZORDER, str(path))))
        assert in_curve_order.select(["id"]).equals(rows.select(["id"])), f"Java's {name} is not in our z-order"
    columns = [c for c in expected.column_names if c != FILE_NAME]
    assert_same_table(t.read_snapshot().select(columns), expected.select(columns), "rows after Java's z-order")

    for b in range(3, 5):
        write(path, _batch(list(range(b * 20, b * 20 + 20)), b), opts)
    done = HudiTable.load(str(path)).cluster(options={**opts, **sort, "hoodie.layout.optimize.strategy": "z-order",
                                                      "hoodie.clustering.plan.strategy.small.file.limit": str(1 << 30)})
    assert done is not None
    t = HudiTable.load(str(path))
    assert_same_table(t.read_snapshot(), _java_rows(java, path), "Java 0.15.0 reads our z-order clustering")
