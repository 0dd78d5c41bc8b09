"""Tables with known instants for the procedures' tests (tests/procedures), written by the engine."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_engine.write_pipeline import write_table

OPTIONS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
           # the metadata table (on by default) compacted before every write: archival, which stops at its latest
           # compaction as Hudi's does, can archive all but the latest commit
           "hoodie.metadata.compact.max.delta.commits": "1"}


def rows(ids: list[int], ts: int, dt: list[str]) -> pa.Table:
    return pa.table({"id": ids, "v": [f"v{i}-{ts}" for i in ids], "ts": [ts] * len(ids), "dt": dt})


def two_commits(path: Path, table_type: str) -> tuple[str, str]:
    """An insert of 3 rows into partitions x and y, then an upsert updating id 1 (x) and inserting id 4 (y)."""
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    first = write_table(rows([1, 2, 3], 1, ["x", "x", "y"]), str(path), options).instant_time
    second = write_table(rows([1, 4], 2, ["x", "y"]), str(path), options).instant_time
    return first, second
