"""HudiTable against hudi-rs on every real Hudi 1.x table (../shared/conformance/v8_v9, table versions 8 and 9).

hudi-rs reads all 42 tables; this engine reads the 36 with parquet base files and refuses the 6 with Lance ones.
Incremental ranges are of completion times in timeline layout 2 (what Hudi 1.x and hudi-rs take), so the ranges
checked run between consecutive completion times: each selects exactly one commit.
"""
from __future__ import annotations

import shutil

import pytest
from conformance import V8_V9_LANCE, V8_V9_MOR, V8_V9_PARQUET, V8_V9_TABLES
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError, UnsupportedTableVersionError
from hudi_engine.file_group import SliceByCompletionTime

V8_V9 = "v8_v9"


def test_every_v8_v9_zip_is_listed(conformance_dir):
    assert sorted(p.stem for p in (conformance_dir / V8_V9).glob("*.zip")) == sorted(V8_V9_TABLES)


def _load(unzip_table, name: str) -> tuple[str, HudiTable]:
    path = unzip_table(name, V8_V9)
    return path, HudiTable.load(path)


def _key(table: HudiTable) -> str:
    return "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]


def completion_bounds(table: HudiTable) -> list[str]:
    """"0" then the completion time of every completed commit: consecutive pairs are one-commit ranges."""
    return ["00000000000000", *(i.completion_time for i in table.timeline.completed_commits())]


@pytest.mark.parametrize("name", V8_V9_PARQUET)
def test_snapshot_equals_hudi_rs(unzip_table, name):
    path, table = _load(unzip_table, name)
    assert table.config.version in (8, 9) and table.timeline.layout.version == 2
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), f"{name} snapshot", _key(table))


@pytest.mark.parametrize("name", V8_V9_PARQUET)
def test_time_travel_to_every_commit_equals_hudi_rs(unzip_table, name):
    path, table = _load(unzip_table, name)
    for ts in (i.timestamp for i in table.timeline.completed_commits()):
        assert_same_rows(table.read_snapshot(as_of=ts), rs_snapshot(path, as_of=ts), f"{name} as of {ts}",
                         _key(table))


# One-commit ranges hudi-rs 0.5 reads differently: the range of a log compaction alone. The log compaction rewrote
# every record of the file group under its own instant (LOG_COMPACT, numWrites 3) and this engine returns them, as
# the range over it with the commit before does in both readers; hudi-rs returns nothing for it alone.
HUDI_RS_DIFFERS = {("mor_avrolog_table_log_compaction", "20260409030522412")}


@pytest.mark.parametrize("name", V8_V9_PARQUET)
def test_incremental_of_every_commit_equals_hudi_rs(unzip_table, name):
    path, table = _load(unzip_table, name)
    bounds = completion_bounds(table)
    for commit, start, end in zip(table.timeline.completed_commits(), bounds, bounds[1:]):
        ours = table.read_incremental(start, end)
        if (name, commit.timestamp) in HUDI_RS_DIFFERS:
            meta = table.timeline.commit_metadata(commit)
            assert meta.operation_type == "LOG_COMPACT"
            assert ours.num_rows == meta.total_records_written == 3
            assert set(ours.column("_hoodie_commit_time").to_pylist()) == {commit.timestamp}
            assert_same_rows(ours, table.read_snapshot(as_of=commit.timestamp), "log compaction", _key(table))
            continue
        assert_same_rows(ours, rs_incremental(path, start, end), f"{name} incremental ({start}, {end}]", _key(table))
    # and the whole history in one range
    if len(bounds) > 2:
        assert_same_rows(table.read_incremental(bounds[0], bounds[-1]), rs_incremental(path, bounds[0], bounds[-1]),
                         f"{name} incremental (0, {bounds[-1]}]", _key(table))


@pytest.mark.parametrize("name", V8_V9_MOR)
def test_read_optimized_equals_hudi_rs(unzip_table, name):
    path, table = _load(unzip_table, name)
    assert_same_rows(table.read_snapshot(read_optimized=True), rs_snapshot(path, read_optimized=True),
                     f"{name} read-optimized", _key(table))


@pytest.mark.parametrize("name", V8_V9_LANCE)
def test_lance_base_files_are_refused(unzip_table, name):
    path = unzip_table(name, V8_V9)
    assert rs_snapshot(path).num_rows > 0  # hudi-rs reads them; this engine says it does not
    with pytest.raises(HudiError, match=r"base file format LANCE \(hoodie.table.base.file.format\) is not "
                                        r"supported; this engine reads PARQUET base files only"):
        HudiTable.load(path)


def test_incremental_range_is_of_completion_times(unzip_table):
    """A commit requested at R and completed at C is in (begin, end] when C is: not when only R is."""
    path, table = _load(unzip_table, "mor_avrolog_v9_txns_simple_overwrite")
    first, second = table.timeline.completed_commits()[:2]
    assert first.timestamp < first.completion_time < second.timestamp < second.completion_time
    assert table.read_incremental("0", first.timestamp).num_rows == 0  # requested in range, completed after
    got = table.read_incremental(first.timestamp, second.timestamp)  # holds the first commit's completion
    assert set(got.column("_hoodie_commit_time").to_pylist()) == {first.timestamp}
    assert_same_rows(got, rs_incremental(path, first.timestamp, second.timestamp), "requested-time bounds")


def test_log_files_are_sliced_by_completion_time(unzip_table):
    """v8 trips 8i3u1d: a compaction requested at 129235 cut new base files; a log file names the delta commit
    that wrote it, and goes to the slice of the latest base instant at or before that commit's completion."""
    _, table = _load(unzip_table, "mor_avrolog_v8_trips_8i3u1d")
    assert isinstance(table._slicing, SliceByCompletionTime)
    slices = {s.partition_path: s for s in table.file_slices()}
    sao_paulo, chennai = slices["city=sao_paulo"], slices["city=chennai"]
    assert sao_paulo.base_instant == chennai.base_instant == "20251220210129235"
    # written by the delta commit 130911 (completed 131755), after the compaction: on the new base file
    assert [f.base_instant for f in sao_paulo.log_files] == ["20251220210130911"]
    assert chennai.log_files == []  # its logs (127080, 128625) were compacted into the new base file
    before = {s.partition_path: s for s in table.file_slices(as_of="20251220210128625")}
    assert before["city=chennai"].base_instant == "20251220210108078"
    assert [f.base_instant for f in before["city=chennai"].log_files] == ["20251220210127080", "20251220210128625"]


def test_merge_mode_commit_time_ordering(unzip_table):
    """A v9 table that names no payload but COMMIT_TIME_ORDERING: the later write wins whatever its ts."""
    path, table = _load(unzip_table, "mor_avrolog_v9_mor_8i4u_commit_time")
    assert table.config.payload_class.endswith("OverwriteWithLatestAvroPayload")
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), "commit time ordering", _key(table))


# ---- bad input ----------------------------------------------------------------------------------------------


def test_begin_after_end_is_one_clear_error(unzip_table):
    _, table = _load(unzip_table, "cow_v9_txns_simple_nometa")
    commits = table.timeline.completed_commits()
    late, early = commits[-1].completion_time, commits[0].completion_time
    with pytest.raises(HudiError, match=rf"table '{table.config.name}' \(.*\): incremental begin instant {late} is "
                                        rf"after the end instant {early}; the range is \(begin, end\]. Available: "
                                        rf"12 completed commits, requested from {commits[0].timestamp} to "
                                        rf"{commits[-1].timestamp}, completed from {early} to {late}"):
        table.read_incremental(late, early)


def test_malformed_instant_names_the_table(unzip_table):
    _, table = _load(unzip_table, "cow_v8_nonpartitioned")
    with pytest.raises(HudiError, match=r"table 'v8_nonpartitioned' \(.*\): time travel instant 'yesterday': "
                                        r"expected digits"):
        table.read_snapshot(as_of="yesterday")


def test_unreadable_table_version_names_the_table_and_versions(unzip_table, tmp_path):
    table = tmp_path / "t"
    shutil.copytree(unzip_table("cow_v8_nonpartitioned", V8_V9), table)
    props = table / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=8", "hoodie.table.version=10"))
    with pytest.raises(UnsupportedTableVersionError,
                       match=r"t/.hoodie/hoodie.properties: hoodie.table.version=10 \(an unknown Hudi release\) is "
                             r"not supported \(a newer Hudi wrote it: read and write it with that Hudi\); readable: "
                             r"6, 8, 9, writable: 6, 8, 9"):
        HudiTable.load(table)


def test_several_ordering_fields_are_refused_on_merge(unzip_table, tmp_path):
    table = tmp_path / "t"
    shutil.copytree(unzip_table("mor_avrolog_v9_txns_simple_nometa", V8_V9), table)
    props = table / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.ordering.fields=txn_ts",
                                               "hoodie.table.ordering.fields=txn_ts,amount"))
    with pytest.raises(HudiError, match=r"ordering fields \['txn_ts', 'amount'\] \(hoodie.table.ordering.fields\): "
                                        r"merging log records by several ordering fields is not supported"):
        HudiTable.load(table).read_snapshot()
