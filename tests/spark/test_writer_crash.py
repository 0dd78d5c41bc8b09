"""A writer that dies mid-write leaves the table as it was for readers; the next write rolls it back.

The crash is simulated in the driver: the write stops at a point (after the inflight instant, after the data
files, right before the completed instant file) and, as a killed process would, does not roll back.
"""
from __future__ import annotations

import pytest
from oracle import assert_same_rows, rs_snapshot

import hudi_engine.spark.writer as writer_mod
from hudi_engine import HudiTable
from hudi_engine.spark import write
from hudi_engine.timeline.timeline import Timeline
from hudi_engine.write.write_client import Transaction

pytestmark = pytest.mark.spark


class Killed(BaseException):
    """Stands for the process dying: not an Exception, so nothing on the way catches it as an error."""


def _opts(table_type: str) -> dict:
    return {"hoodie.table.name": "crash", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type}


def _df(spark, rows):
    return spark.createDataFrame(rows, "id bigint, v string, ts bigint, dt string")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("point", ["after_inflight", "after_data_files", "before_completed_file"])
def test_crashed_write_is_invisible_and_rolled_back_by_the_next(spark, tmp_path, monkeypatch, table_type, point):
    path = tmp_path / "t"
    first = [(i, "a", 1, f"p{i % 2}") for i in range(10)]
    write(_df(spark, first), str(path), _opts(table_type))
    before = rs_snapshot(path)

    real_run = writer_mod._run
    with monkeypatch.context() as m:
        m.setattr(Transaction, "abort", lambda self: None)  # a killed process rolls nothing back
        if point == "after_inflight":
            m.setattr(writer_mod, "_run", lambda *a: (_ for _ in ()).throw(Killed()))
        elif point == "after_data_files":
            def run_then_die(*a):
                real_run(*a)
                raise Killed()
            m.setattr(writer_mod, "_run", run_then_die)
        else:
            m.setattr(Timeline, "complete", lambda *a, **k: (_ for _ in ()).throw(Killed()))
        updates = [(i, "b", 2, f"p{i % 2}") for i in range(0, 10, 2)] + [(100, "new", 2, "p5")]
        with pytest.raises(Killed):
            write(_df(spark, updates), str(path), _opts(table_type))

    pending = [i for i in Timeline.load(*_storage(path)) if not i.is_completed]
    assert pending, "the crashed write left its instant pending"
    if point != "after_inflight":
        assert len(list(path.rglob("*.parquet"))) + len(list(path.rglob(".*.log.*"))) > 2
    assert_same_rows(rs_snapshot(path), before, f"hudi-rs after a crash {point}")
    assert_same_rows(HudiTable.load(path).read_snapshot(), before, f"our reader after a crash {point}")

    # The next write rolls the crashed instant back, then succeeds.
    write(_df(spark, [(5, "c", 3, "p1")]), str(path), _opts(table_type))
    timeline = Timeline.load(*_storage(path))
    assert all(i.is_completed for i in timeline), [str(i) for i in timeline]
    assert any(i.action.value == "rollback" for i in timeline)
    rows = {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()}
    assert rows == {**{i: "a" for i in range(10)}, 5: "c"}
    assert not (path / ".hoodie" / ".temp").exists() or not any((path / ".hoodie" / ".temp").iterdir())


def _storage(path):
    from hudi_engine.storage import Storage

    return Storage.for_uri(str(path))
