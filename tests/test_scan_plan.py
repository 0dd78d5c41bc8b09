"""The engine's one scan plan (`hudi_engine.scan_plan`): the instant a query is fixed to, what it sees (visibility,
incremental window, schema), the slices it reads after pruning, and what it refuses; on real Hudi tables (v6, and
v8/v9 whose incremental ranges are of completion times) and on tables written here. That every read path built on
it returns hudi-rs's rows is checked by the read paths' own tests (test_table*, tests/spark)."""
from __future__ import annotations

import pickle

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from archival import archive_before
from oracle import assert_same_rows, rs_incremental, rs_snapshot
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.config import keys
from hudi_engine.errors import HudiError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.location import TableLocation
from hudi_engine.read_options import InstantOptionError, ReadOptions
from hudi_engine.scan_plan import (
    CommitTimeBound,
    CommitTimeWindow,
    file_group_id,
    fix_query,
    list_slices,
    newest_commit_times,
    plan_scan,
)
from hudi_engine.write.commit import start_commit

TRIPS = "mor_avrolog_v6_trips_8i1u"
V8_MOR = "mor_avrolog_v8_trips_8i3u1d"


def _ids(slices) -> list[tuple[str, str, str]]:
    return sorted((s.partition_path, s.file_id, s.base_instant) for s in slices)


def _rows(plan, columns=None) -> pa.Table:
    ctx = plan.read_context()
    parts = [plan.read_slice(s, columns, context=ctx) for s in plan.slices]
    parts = [p for p in parts if p.num_rows]
    return pa.concat_tables(parts) if parts else plan.schema.empty_table()


def _options(**extra: str) -> dict:
    o = {"hoodie.table.name": "plan", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts"}
    o.update(extra)
    return o


def _batch(ids, ts: int) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 3}" for i in ids],
                     "v": [i * ts for i in ids]})


# ---- real tables ------------------------------------------------------------------------------------------------


def test_latest_snapshot_is_fixed_to_the_latest_commit_and_lists_every_file_group(unzip_table):
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    latest = table.timeline.completed_commits().last().timestamp
    plan = plan_scan(table)
    assert plan.query.query_type == "snapshot" and plan.query.as_of == latest, "the other half of a read pins it"
    assert plan.visibility == Visibility.of(table.timeline) and plan.window is None
    view = FileSystemView.load(TableLocation.at(table.storage, table.base_path))
    assert _ids(plan.slices) == _ids(view.latest_file_slices(Visibility.of(table.timeline)))
    assert any(s.log_files for s in plan.slices) and plan.schema == table.schema()
    assert plan.table_uri == table.storage_uri
    assert_same_rows(_rows(plan), rs_snapshot(path), "plan rows")
    assert _ids(table.file_slices()) == _ids(plan.slices)


def test_time_travel_sees_the_commits_up_to_its_instant(unzip_table):
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    first, last = (c.timestamp for c in table.timeline.completed_commits())
    plan = plan_scan(table, ReadOptions(as_of=first))
    assert plan.query.as_of == first and plan.visibility.as_of == first
    assert plan.visibility.is_committed(first) and not plan.visibility.is_committed(last)
    # Layout 1 names log files by their base instant: the slice keeps them; the visibility skips the later blocks.
    assert_same_rows(_rows(plan), rs_snapshot(path, as_of=first), f"as of {first}")
    # Dates are read as UTC instants, as Hudi's time travel takes them.
    dashed = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    assert plan_scan(table, ReadOptions.parse({keys.AS_OF_INSTANT.key: dashed})).query.as_of == first


def test_read_optimized_reads_base_files_only(unzip_table):
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    plan = plan_scan(table, ReadOptions.parse({keys.QUERY_TYPE.key: "read_optimized"}))
    assert plan.read_optimized and any(s.log_files for s in plan.slices)
    first = table.timeline.completed_commits()[0].timestamp
    rows = _rows(plan)
    assert set(rows.column("_hoodie_commit_time").to_pylist()) == {first}, "log records are not merged"
    assert_same_rows(rows, table.read_snapshot(read_optimized=True), "read-optimized")


def test_incremental_v6_fixes_its_range_and_keeps_the_window(unzip_table):
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    first, last = (c.timestamp for c in table.timeline.completed_commits())
    plan = plan_scan(table, ReadOptions(query_type="incremental", begin=first))
    assert (plan.query.begin, plan.query.end) == (first, last), "an open range ends at the latest commit, fixed"
    assert plan.window == CommitTimeWindow(after=first, up_to=last)
    assert plan.visibility.as_of == last and plan.schema == table.schema(last)
    touched = {(s.partition_path or "", s.file_id) for s in table.commit_metadata(
        table.timeline.completed_commits()[1]).write_stats()}
    assert {(s.partition_path, s.file_id) for s in plan.slices} == touched
    assert len(plan.slices) < len(plan_scan(table).slices)
    assert_same_rows(_rows(plan), rs_incremental(path, first, last), "incremental")
    assert _rows(plan, ["fare"]).column_names == ["fare"], "the window's column is read but not returned"
    nothing = plan_scan(table, ReadOptions(query_type="incremental", begin=last))
    assert nothing.slices == () and _rows(nothing).num_rows == 0


def test_incremental_v8_ranges_are_of_completion_times(unzip_table):
    path = unzip_table(V8_MOR, "v8_v9")
    table = HudiTable.load(path)
    commits = table.timeline.completed_commits()
    assert table.timeline.layout.incremental_by_completion_time
    begin, end = commits[0].completion_time, commits[2].completion_time
    plan = plan_scan(table, ReadOptions.parse({keys.QUERY_TYPE.key: "incremental", keys.BEGIN_INSTANT.key: begin,
                                               keys.END_INSTANT.key: end}))
    assert plan.window == CommitTimeWindow(instants=(commits[1].timestamp, commits[2].timestamp))
    assert plan.visibility.as_of == commits[2].timestamp, "slices as of the range's last requested time"
    assert_same_rows(_rows(plan), rs_incremental(path, begin, end), "v8 incremental")
    open_ended = plan_scan(table, ReadOptions(query_type="incremental", begin=begin))
    assert open_ended.query.end == max(c.completion_time for c in commits)
    assert set(open_ended.window.instants) == {c.timestamp for c in commits[1:]}


@pytest.mark.parametrize("name,version_dir", [("cow_v6_empty", "v6"), ("mor_parquetlog_v6_empty", "v6"),
                                              ("cow_v8_empty", "v8_v9")])
def test_an_empty_table_plans_no_slice(unzip_table, name, version_dir):
    table = HudiTable.load(unzip_table(name, version_dir))
    plan = plan_scan(table)
    assert plan.slices == () and plan.query.as_of is None and _rows(plan).num_rows == 0
    inc = plan_scan(table, ReadOptions(query_type="incremental", begin="0"))
    assert inc.slices == () and inc.query.end is None


def test_partition_filters_and_file_groups_restrict_the_slices(unzip_table):
    path = unzip_table("cow_v6_simplekeygen_nonhivestyle")
    table = HudiTable.load(path)
    everything = plan_scan(table).slices
    partitions = sorted({s.partition_path for s in everything})
    assert len(partitions) > 1
    field = table.config.partition_fields[0]
    value = table.read_snapshot().column(field)[0].as_py()
    by_tuple = plan_scan(table, filters=[(field, "=", value)]).slices
    by_expression = plan_scan(table, filters=pc.field(field) == value).slices
    assert _ids(by_tuple) == _ids(by_expression) and 0 < len(by_tuple) < len(everything)
    one = everything[0]
    limited = plan_scan(table, ReadOptions(file_groups=frozenset({file_group_id(one)})))
    assert _ids(limited.slices) == _ids([one])


def test_refused_queries_name_the_table_and_its_instants(unzip_table):
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    first, last = (c.timestamp for c in table.timeline.completed_commits())
    available = rf"Available: completed commits from {first} to {last} \(2\)"
    with pytest.raises(HudiError, match=rf"incremental begin instant {last} is after the end instant {first}"):
        plan_scan(table, ReadOptions(query_type="incremental", begin=last, end=first))
    with pytest.raises(HudiError, match=rf"table 'v6_trips_8i1u' \(.*\): time travel instant 'x1': .*{available}"):
        plan_scan(table, ReadOptions(as_of="x1"))
    with pytest.raises(InstantOptionError, match="option as.of.instant='yesterday'"):
        ReadOptions.parse({"as.of.instant": "yesterday"})
    with pytest.raises(HudiError, match=rf"table 'v6_trips_8i1u' \(.*\): option as.of.instant='yesterday'.*{available}"):
        HudiTable.parse_read_options({"as.of.instant": "yesterday"}, path)
    with pytest.raises(HudiError, match=r"option hoodie.datasource.query.type='cdc': expected one of snapshot, "
                                        r"read_optimized, incremental"):
        ReadOptions.parse({keys.QUERY_TYPE.key: "cdc"})
    with pytest.raises(HudiError, match="hudi_engine.read.file_groups='x': expected a JSON list"):
        ReadOptions.parse({keys.FILE_GROUPS.key: "x"})


def test_read_options_round_trip_through_their_declared_keys():
    queries = [ReadOptions(), ReadOptions(as_of="20240101000000000"),
               ReadOptions(query_type="read_optimized", file_groups=frozenset({"p/f1", "f2"})),
               ReadOptions(query_type="incremental", begin="1", end="2", file_groups=frozenset({"a/b"}),
                           logged_keys_only=frozenset({"a/b"}))]
    declared = {o.key for o in (*keys.READ_OPTIONS, *keys.INTERNAL_READ_OPTIONS)}
    for q in queries:
        options = q.to_options()
        assert set(options) <= declared, options
        assert ReadOptions.parse(options) == q
    assert not {o.key for o in keys.INTERNAL_READ_OPTIONS} & {o.key for o in keys.ALL_OPTIONS}, "not user options"


# ---- tables written here ----------------------------------------------------------------------------------------


def test_commit_time_pruning_drops_slices_whose_rows_are_all_older(tmp_path):
    first = write(tmp_path, _batch(range(30), 1), _options(**{keys.TABLE_TYPE.key: "MERGE_ON_READ"})).instant_time
    second = write(tmp_path, _batch(range(0, 30, 3), 2), _options(**{keys.TABLE_TYPE.key: "MERGE_ON_READ"})).instant_time
    table = HudiTable.load(str(tmp_path))
    everything = plan_scan(table)
    newest = dict(zip(map(file_group_id, everything.slices),
                      newest_commit_times(table, everything.slices, everything.visibility)))
    assert set(newest.values()) == {first, second}, "a log file's delta commit bounds its slice"
    after_first = plan_scan(table, commit_time_bound=CommitTimeBound(first))
    assert {file_group_id(s) for s in after_first.slices} == {g for g, n in newest.items() if n == second}
    assert plan_scan(table, filters=[("_hoodie_commit_time", ">", first)]).slices == after_first.slices
    assert plan_scan(table, commit_time_bound=CommitTimeBound(second)).slices == ()
    assert plan_scan(table, commit_time_bound=CommitTimeBound(second, inclusive=True)).slices == after_first.slices


def test_a_plan_read_later_and_elsewhere_sees_its_own_commit(tmp_path):
    """Tasks read with the plan alone (pickled, as Spark ships it): a commit that lands after planning is not seen,
    and the table is not loaded again."""
    options = _options(**{keys.TABLE_TYPE.key: "MERGE_ON_READ"})
    write(tmp_path, _batch(range(12), 1), options)
    table = HudiTable.load(str(tmp_path))
    expected = table.read_snapshot()
    fixed = fix_query(table, ReadOptions())
    plan = pickle.loads(pickle.dumps(list_slices(table, fixed)))
    write(tmp_path, _batch(range(12), 2), options)  # log files on every file group
    assert_same_rows(_rows(plan), expected, "planned before the second commit")
    assert_same_rows(_rows(plan_scan(HudiTable.load(str(tmp_path)))), HudiTable.load(str(tmp_path)).read_snapshot(),
                     "a new plan sees it")


def test_incremental_from_before_the_active_timeline_reads_every_newer_slice(tmp_path):
    # Version 6: archival simulated by moving instant files (tests/archival.py).
    options = _options(**{keys.TABLE_TYPE.key: "COPY_ON_WRITE", keys.TABLE_VERSION.key: "6"})
    first = write(tmp_path, _batch(range(12), 1), options).instant_time
    second = write(tmp_path, _batch([0, 3], 2), options).instant_time  # partition d0
    third = write(tmp_path, _batch([1, 4], 3), options).instant_time  # partition d1
    before = HudiTable.load(str(tmp_path)).read_incremental(first, third)
    archive_before(tmp_path, third)
    table = HudiTable.load(str(tmp_path))
    plan = plan_scan(table, ReadOptions(query_type="incremental", begin=first, end=third))
    assert {s.partition_path for s in plan.slices} == {"d0", "d1"}, "second's file group kept though archived"
    assert_same_rows(_rows(plan), before, "range over an archived commit")
    assert second not in {c.timestamp for c in table.timeline.completed_commits()}


def test_time_travel_to_a_cleaned_instant_is_refused(tmp_path):
    options = _options(**{keys.TABLE_TYPE.key: "COPY_ON_WRITE"})
    instants = [write(tmp_path, _batch(range(6), ts), options).instant_time for ts in range(1, 6)]
    HudiTable.load(str(tmp_path)).clean(options={keys.CLEANER_COMMITS_RETAINED.key: "2"})
    table = HudiTable.load(str(tmp_path))
    with pytest.raises(HudiError, match=rf"table 'plan' \(.*\): instant {instants[1]} was cleaned: .* Available: "
                                        "instants from"):
        plan_scan(table, ReadOptions(as_of=instants[1]))
    # Before what the last clean retains: refused as the query is fixed, before any listing, as Hudi refuses it.
    with pytest.raises(HudiError, match=rf"instant {instants[1]} was cleaned: the last clean \(\d+\) retains"):
        fix_query(table, ReadOptions(as_of=instants[1]))
    assert_same_rows(_rows(plan_scan(table, ReadOptions(as_of=instants[-2]))),
                     table.read_snapshot(as_of=instants[-2]), "a kept instant still reads")
    assert len(plan_scan(table).slices) == 3, "the latest snapshot is not checked against cleaning"


def test_time_travel_at_or_after_the_first_pending_write_is_refused(tmp_path):
    """As Hudi's validateTimestampAsOf refuses it: a read as of an instant at or after a write still pending would
    silently miss that write if it completed. The latest snapshot, and what a snapshot pins to its latest commit,
    are read whatever is pending."""
    options = _options(**{keys.TABLE_TYPE.key: "MERGE_ON_READ", "hoodie.cleaner.policy.failed.writes": "NEVER"})
    first = write(tmp_path, _batch(range(6), 1), options).instant_time
    table = HudiTable.load(str(tmp_path))
    pending = start_commit(table.location, table.config, "UPSERT")  # a writer still at work (or failed)
    later = write(tmp_path, _batch(range(3), 2), options).instant_time
    table = HudiTable.load(str(tmp_path))
    assert first < pending.timestamp < later and table.timeline.instants_at(pending.timestamp)
    for as_of in (pending.timestamp, "99991231235959999"):
        with pytest.raises(HudiError, match=rf"table 'plan' \(.*\): time travel instant {as_of} is at or after the "
                                            rf"first pending write, deltacommit {pending.timestamp} \(inflight\).* "
                                            rf"before {pending.timestamp}.* Available: "):
            plan_scan(table, ReadOptions(as_of=as_of))
    assert_same_rows(table.read_snapshot(as_of=first), _rows(plan_scan(table, ReadOptions(as_of=first))), "before it")
    latest = table.read_snapshot()
    assert latest.num_rows == 6 and later in set(latest.column("_hoodie_commit_time").to_pylist())
    assert_same_rows(_rows(plan_scan(table, ReadOptions(as_of=later))), latest, "pinned to the latest commit")
