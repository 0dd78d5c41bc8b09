"""The `hudi` Spark data source on the real Hudi 1.x tables (table versions 8 and 9) against hudi-rs.

Snapshot and read-optimized on every table with parquet base files; time travel to every completed commit and
one-commit incremental ranges (of completion times, as Hudi 1.x takes them) on tables that between them hold every
1.x feature: compaction and slicing by completion time, replace commits, log-only file groups and log compaction,
no meta fields, timestamp keys with a MOR log, a rollback. (HudiTable, whose slice reader the source runs on the
executors, is checked on all of them in tests/test_table_v8_v9.py.) Lance tables and writes are refused."""
from __future__ import annotations

import shutil

import pyarrow as pa
import pytest
from conformance import V8_V9_LANCE, V8_V9_MOR, V8_V9_PARQUET
from oracle import assert_same_rows, rs_incremental, rs_snapshot
from test_table_v8_v9 import HUDI_RS_DIFFERS, completion_bounds

from hudi_engine import HudiTable
from hudi_engine.spark import write

pytestmark = pytest.mark.spark

V8_V9 = "v8_v9"
QUERY_TYPE = "hoodie.datasource.query.type"
BEGIN, END = "hoodie.datasource.read.begin.instanttime", "hoodie.datasource.read.end.instanttime"


def _read(spark, path, **options) -> pa.Table:
    reader = spark.read.format("hudi")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path)).toArrow()


def _key(table: HudiTable) -> str:
    return "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]


HISTORY_TABLES = [
    "mor_avrolog_v8_trips_8i3u1d",
    "cow_v9_txns_simple_overwrite",
    "mor_avrolog_v9_txns_complex_nometa",
    "mor_avrolog_table_log_compaction",
    "cow_v8_simplekeygen_hivestyle_no_metafields",
    "mor_avrolog_v9_timebasedkeygen_nonhivestyle",
    "mor_avrolog_v9_nonpartitioned_rollback",
]


@pytest.mark.parametrize("name", V8_V9_PARQUET)
def test_snapshot_equals_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name, V8_V9)
    table = HudiTable.load(path)
    assert_same_rows(_read(spark, path), rs_snapshot(path), f"{name} snapshot", _key(table))


@pytest.mark.parametrize("name", HISTORY_TABLES)
def test_time_travel_equals_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name, V8_V9)
    table = HudiTable.load(path)
    for ts in (i.timestamp for i in table.timeline.completed_commits()):
        assert_same_rows(_read(spark, path, **{"as.of.instant": ts}), rs_snapshot(path, as_of=ts),
                         f"{name} as of {ts}", _key(table))


@pytest.mark.parametrize("name", HISTORY_TABLES)
def test_incremental_equals_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name, V8_V9)
    table = HudiTable.load(path)
    bounds = completion_bounds(table)
    for commit, start, end in zip(table.timeline.completed_commits(), bounds, bounds[1:]):
        got = _read(spark, path, **{QUERY_TYPE: "incremental", BEGIN: start, END: end})
        what = f"{name} incremental ({start}, {end}]"
        expected = (table.read_incremental(start, end) if (name, commit.timestamp) in HUDI_RS_DIFFERS
                    else rs_incremental(path, start, end))
        assert_same_rows(got, expected, what, _key(table))


@pytest.mark.parametrize("name", V8_V9_MOR)
def test_read_optimized_equals_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name, V8_V9)
    table = HudiTable.load(path)
    assert_same_rows(_read(spark, path, **{QUERY_TYPE: "read_optimized"}), rs_snapshot(path, read_optimized=True),
                     f"{name} read-optimized", _key(table))


@pytest.mark.parametrize("name", V8_V9_LANCE[:1])
def test_lance_table_is_refused(spark, unzip_table, name):
    with pytest.raises(Exception, match=r"base file format LANCE \(hoodie.table.base.file.format\) is not supported"):
        _read(spark, unzip_table(name, V8_V9))


def test_incremental_begin_after_end_is_refused(spark, unzip_table):
    path = unzip_table("mor_avrolog_v8_trips_8i3u1d", V8_V9)
    bounds = completion_bounds(HudiTable.load(path))
    with pytest.raises(Exception, match=rf"incremental begin instant {bounds[-1]} is after the end instant {bounds[1]}"):
        _read(spark, path, **{QUERY_TYPE: "incremental", BEGIN: bounds[-1], END: bounds[1]})


def test_spark_write_to_a_1x_table_keeps_its_version(spark, unzip_table, tmp_path):
    """A Spark upsert into a real Hudi 1.0 (version 8) MOR table: one completed deltacommit in layout 2, its log file
    named by that instant; hudi-rs and the native read see the new row; the table stays version 8."""
    path = tmp_path / "trips"
    shutil.copytree(unzip_table("mor_avrolog_v8_trips_8i1u", V8_V9), path)
    rows_before = rs_snapshot(path).num_rows
    df = spark.createDataFrame([(9, "u-new", "r", "d", 1.0, "chennai")], "ts long, uuid string, rider string, "
                               "driver string, fare double, city string")
    result = write(df, str(path), {"hoodie.table.name": "v8_trips_8i1u", "hoodie.datasource.write.recordkey.field": "uuid",
                                   "hoodie.datasource.write.partitionpath.field": "city",
                                   "hoodie.datasource.write.precombine.field": "ts",
                                   "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                                   "hoodie.datasource.write.operation": "upsert"})
    assert "hoodie.table.version=8" in (path / ".hoodie" / "hoodie.properties").read_text()
    assert list((path / ".hoodie" / "timeline").glob(f"{result.instant_time}_*.deltacommit"))
    theirs = rs_snapshot(path)
    assert theirs.num_rows == rows_before + 1 and "u-new" in theirs.column("uuid").to_pylist()
    ours = spark.read.format("hudi").load(str(path)).toArrow().select(theirs.column_names)
    assert_same_rows(ours, theirs, "after a Spark upsert into a version-8 table")
