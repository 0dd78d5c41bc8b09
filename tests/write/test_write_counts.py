"""One write reads the table's metadata a bounded number of times (issue 25): `hoodie.properties` once, the
timeline listed twice (when the write opens, and under the table lock), once more by the table services after the
commit under their lock; `.hoodie` is listed besides by the instant protocol's own checks at the commit point (is
the instant still ours) and for the temp files a crash may have left. Counted on real writes (tests/io_counts.py).
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from io_counts import counting

from hudi_engine.write_pipeline import write_table

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part"}


def rows(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "part": [f"p{i % 2}" for i in ids],
                     "v": [f"v{i}" for i in ids]})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_upsert_reads_the_config_once_and_lists_the_timeline_at_most_three_times(tmp_path: Path,
                                                                                     table_type: str) -> None:
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    write_table(rows(list(range(10)), 1), path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    with counting() as counter:
        write_table(rows([2, 3, 11], 2), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    # Before issue 25 (same upsert, services included): 4 reads of hoodie.properties, 13 Timeline.load, 16 listings.
    assert counter.properties_reads == 1
    # Two for the write (opened; under the lock), one for the services after the commit (under their lock).
    assert counter.timeline_loads == 3
    # Besides: the ownership check at the commit point and after it, and the crash temp files.
    assert counter.meta_listings == counter.timeline_loads + 3


def test_a_first_write_creates_the_table_without_reading_its_config_back(tmp_path: Path) -> None:
    with counting() as counter:
        write_table(rows([1, 2], 1), str(tmp_path / "t"), {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    assert counter.properties_reads == 0
    assert counter.timeline_loads == 2  # under the write lock; under the services' lock (before issue 25: 12)
