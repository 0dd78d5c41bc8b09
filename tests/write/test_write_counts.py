"""One write reads the table's metadata a bounded number of times (issue 25): `hoodie.properties` once, the
timeline listed twice (when the write opens, and under the table lock; the table services after the commit run
under the commit's lock and plan from that listing with the commit added); `.hoodie` is listed besides by the
instant protocol's own checks at the commit point (is the instant still ours) and for the temp files a crash may
have left. Counted on real writes (tests/io_counts.py), with the metadata table off, and with it on (issue 41): then
the data table's `hoodie.properties` is read once more and the metadata table's config and timeline once, all under
the table lock when the write starts; the commit records in the metadata table as the start found it, and the
archival after the commit takes it as the commit left it.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from io_counts import counting

from hudi_engine.write_pipeline import write_table

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
           "hoodie.metadata.enable": "false"}


def rows(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "part": [f"p{i % 2}" for i in ids],
                     "v": [f"v{i}" for i in ids]})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_upsert_reads_the_config_once_and_lists_the_timeline_twice(tmp_path: Path, table_type: str) -> None:
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    write_table(rows(list(range(10)), 1), path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    with counting() as counter:
        write_table(rows([2, 3, 11], 2), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    # Before issue 25 (same upsert, services included): 4 reads of hoodie.properties, 13 Timeline.load, 16 listings.
    assert counter.properties_reads == 1
    # Opened; under the lock (the services after the commit plan from it, under the same lock).
    assert counter.timeline_loads == 2
    # Besides: the ownership check at the commit point and after it, and the crash temp files (in layout 2 in
    # .hoodie, where the lock and hoodie.properties are, and in .hoodie/timeline, where the instants are).
    assert counter.meta_listings == counter.timeline_loads + 4


def test_a_loaded_table_writes_without_reading_its_config_or_listing_its_timeline_at_open(tmp_path: Path) -> None:
    """`HudiTable.write`: the table as loaded is the one the write checks against; the next write needs no load."""
    from hudi_engine import HudiTable

    path = str(tmp_path / "t")
    write_table(rows(list(range(10)), 1), path, {**OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"})
    table = HudiTable.load(path)
    for ts in (2, 3):
        with counting() as counter:
            table.write(rows([2, 3, 11], ts), {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
        assert counter.properties_reads == 0
        assert counter.timeline_loads == 1  # under the table lock only
    assert {r["id"]: r["ts"] for r in table.read_snapshot().to_pylist() if r["id"] in (2, 11)} == {2: 3, 11: 3}


def test_a_first_write_creates_the_table_without_reading_its_config_back(tmp_path: Path) -> None:
    with counting() as counter:
        write_table(rows([1, 2], 1), str(tmp_path / "t"), {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    assert counter.properties_reads == 0
    assert counter.timeline_loads == 1  # under the write lock, for the services too (before issue 25: 12)


def test_an_optimistic_write_lists_the_timeline_again_only_to_check_conflicts(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_table(rows(list(range(10)), 1), path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    with counting() as counter:
        result = write_table(rows([2, 3, 11], 2), path, {**options, "hoodie.datasource.write.operation": "upsert"})
    # Taking the lock again for the commit checks the table writable from storage once more (another writer may
    # have changed its config while this one wrote without the lock).
    assert counter.properties_reads == 2
    # Opened; under the lock to start the instant; under the commit's lock, for the conflict check and the services.
    assert counter.timeline_loads == 3
    # The result's timeline is the one under the commit's lock with the commit completed, as a listing shows it.
    assert result.timeline is not None
    assert result.timeline.instants == result.timeline.reload().instants
    assert result.timeline.last_completed().timestamp == result.instant_time


@pytest.mark.parametrize("version", ["6", "9"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_upsert_with_the_metadata_table_reads_each_config_and_timeline_a_bounded_number_of_times(
        tmp_path: Path, table_type: str, version: str) -> None:
    from hudi_engine import HudiTable

    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.metadata.enable": "true", "hoodie.datasource.write.table.type": table_type,
               "hoodie.write.table.version": version, "hoodie.datasource.write.operation": "upsert"}
    write_table(rows(list(range(10)), 1), path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    with counting() as counter:
        write_table(rows([2, 3, 11], 2), path, options)
    # Before issue 41 (table version 9): 4 reads of the data table's hoodie.properties and 8 of the metadata
    # table's, 2 + 5 Timeline.load.
    # The data table's: opened; under the lock (what the metadata table is kept by, and the listing the write plans
    # and commits with).
    assert (counter.properties_reads, counter.timeline_loads) == (2, 2)
    # The metadata table's: under the lock when the write starts. The commit records in it as the start found it,
    # the archival takes it as the delta commit left it (its timeline with the delta commit, not listed again).
    assert (counter.metadata_properties_reads, counter.metadata_timeline_loads) == (1, 1)
    table = HudiTable.load(path)
    with counting() as counter:
        table.write(rows([3, 12], 3), options)
    assert (counter.properties_reads, counter.timeline_loads) == (1, 1)  # not opened: the table as loaded
    assert (counter.metadata_properties_reads, counter.metadata_timeline_loads) == (1, 1)
    assert table.config.metadata_partitions == ["files"]
    assert {r["id"]: r["ts"] for r in table.read_snapshot().to_pylist() if r["id"] in (2, 3, 11, 12)} == \
        {2: 2, 3: 3, 11: 2, 12: 3}


@pytest.mark.parametrize("version", ["6", "9"])
def test_an_upsert_that_cleans_reads_the_metadata_tables_config_and_timeline_once(tmp_path: Path, version: str) -> None:
    """The cleaning after the commit records itself through the write's metadata writer (issue 41), and the archival
    after it takes that writer as the clean left it; the timeline is listed again once, after the clean."""
    from hudi_engine import HudiTable
    from hudi_engine.location import TableLocation
    from hudi_engine.timeline import Timeline

    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.metadata.enable": "true", "hoodie.write.table.version": version,
               "hoodie.cleaner.commits.retained": "1", "hoodie.metadata.compact.max.delta.commits": "100",
               "hoodie.datasource.write.operation": "upsert"}
    write_table(rows(list(range(10)), 1), path, options)
    table = HudiTable.load(path)
    loads, metadata_loads = [], []
    for ts in range(2, 7):
        with counting() as counter:
            table.write(rows([2, 3], ts), options)
        assert counter.properties_reads == 1, ts
        loads.append(counter.timeline_loads)
        metadata_loads.append((counter.metadata_properties_reads, counter.metadata_timeline_loads))
    cleans = [i for i in Timeline.load(TableLocation.of(path)).instants if i.action.value == "clean"]
    assert len(cleans) >= 3 and set(loads) <= {1, 2} and 2 in loads  # under the lock; after a clean
    # Once under the lock; once more only where the metadata table's own cleaning ran (it reloads after it). Before
    # issue 41: 6 to 14 reads of its hoodie.properties, 7 or 8 Timeline.load per write.
    assert set(metadata_loads) <= {(1, 1), (2, 2)} and metadata_loads.count((1, 1)) >= 3, metadata_loads
    assert {r["id"]: r["ts"] for r in table.read_snapshot().to_pylist() if r["id"] in (2, 3)} == {2: 6, 3: 6}
