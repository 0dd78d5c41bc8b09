"""hudi_engine.write.local_writer: a write's tasks on threads (what a small write on the Spark driver does) make the
table the same tasks make one after the other, each task under its own write token; a task that fails leaves no
file once the write is given up, even while another task is still writing."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import local_write
import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import WriteError
from hudi_engine.write.handles import merge

BASE = {"hoodie.table.name": "threads", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}
PARTITIONS = ["a", "b", "c", "d"]


def rows(ids: range, ts: int, value: str) -> pa.Table:
    return pa.table({"id": [f"k{i:04d}" for i in ids], "p": [PARTITIONS[i % 4] for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "v": [f"{value}{i}" for i in ids]})


def write(path: Path, table: pa.Table, operation: str, table_type: str, threads: int) -> None:
    local_write.write(path, table, {**BASE, "hoodie.datasource.write.operation": operation,
                                    "hoodie.datasource.write.table.type": table_type},
                      parallelism=4, chunk=65536, table_services=True, threads=threads)


def data(table: pa.Table) -> pa.Table:
    return table.select(["id", "p", "ts", "v"])


def data_files(path: Path) -> list[Path]:
    return sorted(f for p in PARTITIONS for f in (path / p).glob("*") if f.is_file())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tasks_on_threads_write_what_tasks_one_after_another_write(tmp_path, table_type):
    steps = [("insert", rows(range(400), 1, "v")),
             ("upsert", pa.concat_tables([rows(range(0, 400, 7), 2, "u"), rows(range(400, 480), 2, "n")])),
             ("delete", rows(range(1, 400, 11), 3, "d"))]
    for threads in (1, 4):
        for operation, batch in steps:
            write(tmp_path / str(threads), batch, operation, table_type, threads)
    one, four = HudiTable.load(str(tmp_path / "1")), HudiTable.load(str(tmp_path / "4"))
    assert_same_rows(data(four.read_snapshot()), data(one.read_snapshot()), "threads against one after another",
                     key="id")
    assert_same_rows(data(rs_snapshot(tmp_path / "4")), data(one.read_snapshot()), "hudi-rs", key="id")
    assert sorted((s.partition_path, len(s.log_files)) for s in four.file_slices()) == \
        sorted((s.partition_path, len(s.log_files)) for s in one.file_slices())
    # The upsert's four tasks, each under its own write token, as Spark's tasks are.
    upsert = four.timeline.completed_commits()[1]
    tokens = {re.search(r"_(\d+-\d+-\d+)(_|$)", s.path).group(1)  # type: ignore[union-attr]
              for s in four.timeline.commit_metadata(upsert).write_stats()}
    assert len(tokens) == 4


def test_a_failed_task_leaves_no_file_though_another_was_still_writing(tmp_path, monkeypatch):
    path = tmp_path / "t"
    write(path, rows(range(400), 1, "v"), "bulk_insert", "COPY_ON_WRITE", 1)
    before = data_files(path)
    started = threading.Barrier(2, timeout=10)
    close = merge.MergeHandle.close
    ended: list[str] = []

    def failing_or_slow(self):
        started.wait()  # both tasks' first merges are under way
        if self.partition_path == "a":
            raise WriteError("injected: the merge of partition a fails")
        time.sleep(0.5)  # the other task still writes while the error is raised
        try:
            return close(self)
        finally:
            ended.append(self.partition_path)

    monkeypatch.setattr(merge.MergeHandle, "close", failing_or_slow)
    with pytest.raises(WriteError, match="injected"):
        write(path, rows(range(0, 400, 3), 2, "u"), "upsert", "COPY_ON_WRITE", 4)
    assert len(ended) == 3  # every other task ended before the error reached the caller and the write was given up
    monkeypatch.undo()
    assert data_files(path) == before
    assert_same_rows(data(HudiTable.load(str(path)).read_snapshot()), rows(range(400), 1, "v"), "after the failed write",
                     key="id")
