"""Schema evolution on read between the engine and Java Hudi (0.15.0 on a version-6 COW table, 1.2.0 on a version-9
MOR table): Java reads the engine's renamed, retyped and dropped columns with `hoodie.schema.on.read.enable=true` as
the engine reads them (snapshot, and time travel to before the changes); Java then writes after the engine's ALTER
and the engine reads Java's commit by id. The write-only cases are tests/test_column_change.py (no Java)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable, write_table
from hudi_engine.internal_schema import SchemaHistory
from java_hudi.compare import assert_same_table

ON = {"hoodie.schema.on.read.enable": "true"}
CASES = [("0.15.0", 6, "COPY_ON_WRITE"), ("1.2.0", 9, "MERGE_ON_READ")]


def _options(table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": "upsert"}


@pytest.mark.parametrize(("hudi", "version", "table_type"), CASES, ids=[f"{h}-v{v}" for h, v, _ in CASES])
def test_java_reads_our_evolved_table_and_we_read_javas_next_write(java_hudi, tmp_path: Path, hudi: str,
                                                                    version: int, table_type: str) -> None:
    java = java_hudi(hudi)
    path = str(tmp_path / "t")
    opts = _options(table_type)
    write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"], "ts": pa.array([1, 1], pa.int32()),
                          "amount": [1.5, 3.0], "p": ["x", "y"]}),
                path, {**opts, "hoodie.write.table.version": str(version)})
    table = HudiTable.load(path)
    first = table.timeline.completed_commits()[-1].timestamp
    table.rename_column("v", "name", options={**opts, **ON})
    table.alter_column_type("ts", pa.int64(), options={**opts, **ON})
    table.drop_columns(["amount"], options={**opts, **ON})
    write_table(pa.table({"id": pa.array([3, 1], pa.int64()), "name": ["c", "a2"], "ts": pa.array([2, 2], pa.int64()),
                          "p": ["x", "x"], "extra": pa.array([7, 8], pa.int32())}), path, opts)
    table = HudiTable.load(path)
    assert_same_table(table.read_snapshot(), java.snapshot(path, **ON), f"Java {hudi} reads our evolved table")
    assert_same_table(table.read_snapshot(as_of=first), java.time_travel(path, first, **ON),
                      f"Java {hudi} time travel to before our changes")
    # Java's write after our ALTER: its columns by the names the table has now, the history kept going.
    java.write(path, pa.table({"id": pa.array([2, 4], pa.int64()), "name": ["b-java", "d-java"],
                               "ts": pa.array([3, 3], pa.int64()), "p": ["y", "y"],
                               "extra": pa.array([9, 10], pa.int32())}),
               {**opts, **ON, "hoodie.metadata.enable": "false"})
    table = HudiTable.load(path)
    ours = table.read_snapshot()
    assert_same_table(ours, java.snapshot(path, **ON), f"we read Java {hudi}'s write after our ALTER")
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("name").to_pylist(), strict=True)) == \
        [(1, "a2"), (2, "b-java"), (3, "c"), (4, "d-java")]
    history = SchemaHistory.load(table.location.storage, table.location.meta_path,
                                 [i.timestamp for i in table.timeline.completed_commits()])
    assert history is not None and [f.id for f in history.latest.fields][5:] == [5, 6, 7, 9, 10]
