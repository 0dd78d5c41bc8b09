"""Tables the engine moved to another version, read and written by Java Hudi (issue 38): Java 1.2.0 on a MERGE_ON_READ
table the engine upgraded 6 -> 9 (archived instants moved into the LSM history), Java 0.15.0 on one it downgraded
9 -> 6. Java's snapshot and time travel equal the engine's, then Java writes, then the engine writes, and both read
the same rows after each."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.write_pipeline import write_table
from java_hudi.compare import assert_same_table

pytestmark = pytest.mark.timeout(900)

SCHEMA = pa.schema([("id", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.float64())])
KEYS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.datasource.write.operation": "upsert"}


def _rows(ids: list[int], ts: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": f"k{i:02d}", "part": f"p{i % 2}", "ts": ts, "val": float(ts * 100 + i)}
                                 for i in ids], SCHEMA)


def _engine_write(path: Path, ids: list[int], ts: int, version: int) -> str:
    opts = {**KEYS, "hoodie.write.table.version": str(version), "hoodie.compact.inline": "false",
            "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false", "hoodie.metadata.enable": "false"}
    return write_table(_rows(ids, ts), str(path), opts).instant_time


def _alike(java, path: Path, what: str, travel: str | None = None) -> None:
    table = HudiTable.load(str(path))
    assert_same_table(table.read_snapshot(), java.snapshot(path), f"{what}: Java {java.hudi}'s snapshot")
    if travel is not None:
        assert_same_table(table.read_snapshot(as_of=travel), java.time_travel(path, travel),
                          f"{what}: Java {java.hudi} as of {travel}")


@pytest.mark.parametrize(("hudi", "start", "target"), [("1.2.0", 6, 9), ("0.15.0", 9, 6)])
def test_java_reads_and_writes_a_table_the_engine_moved(java_hudi, tmp_path, hudi, start, target):
    path = tmp_path / "t"
    instants = [_engine_write(path, list(range(8)) if ts == 1 else [ts, ts + 3], ts, start) for ts in range(1, 7)]
    table = HudiTable.load(str(path))
    table.archive(options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                           "hoodie.cleaner.commits.retained": "1"})
    done = table.upgrade(target) if target > start else table.downgrade(target)
    assert done.archived_instants_moved > 0 and done.compacted
    assert HudiTable.load(str(path)).config.version == target
    java = java_hudi(hudi)
    _alike(java, path, f"moved {start} -> {target}", travel=instants[-1])

    java_opts = dict(KEYS)
    if hudi == "1.2.0":  # its default writer version is 9, the table's
        java_opts["hoodie.write.table.version"] = str(target)
    java.write(path, _rows([1, 7, 20], 50), java_opts)
    assert HudiTable.load(str(path)).config.version == target, "Java kept the version"
    _alike(java, path, "after Java's write")
    _engine_write(path, [2, 20, 21], 60, target)
    _alike(java, path, "after the engine's write")
