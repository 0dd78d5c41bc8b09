"""The `hudi` Spark data source on every real v6 table, checked against HudiTable and hudi-rs."""
from __future__ import annotations

import datetime as dt
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from conformance import V6_TABLES
from oracle import assert_same_rows, rs_incremental, rs_snapshot
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, Not, StringStartsWith
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError, SchemaError
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.catalog_entry import PATH_COMMENT_PREFIX, catalog_path, catalog_table_ddl, with_path_comment
from hudi_engine.spark.datasource import MERGE_FORMAT, HudiDataSource, ReadOptions, normalize_instant
from hudi_engine.spark.pushdown import filter_expression
from hudi_engine.spark.registration import create_catalog_table
from hudi_engine.spark.session import python_env
from hudi_engine.spark.spark_types import arrow_target, spark_schema, spark_type, to_spark_arrow

pytestmark = pytest.mark.spark

MOR_TABLES = [n for n in V6_TABLES if n.startswith("mor_")]
TRIPS = "mor_avrolog_v6_trips_8i1u"
QUERY_TYPE = "hoodie.datasource.query.type"
BEGIN, END = "hoodie.datasource.read.begin.instanttime", "hoodie.datasource.read.end.instanttime"


def _key(table: HudiTable) -> str:
    # Tables without meta fields have null record keys: sort on the record key field instead.
    return "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]


def _read(spark, path, **options):
    reader = spark.read.format("hudi")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def _fares(t: pa.Table) -> dict[str, float]:
    return {r["rider"]: r["fare"] for r in t.select(["rider", "fare"]).to_pylist()}


def _commits(table: HudiTable) -> list[str]:
    return [i.timestamp for i in table.timeline.completed_commits()]


# ---- reads through Spark -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", V6_TABLES)
def test_snapshot_equals_hudi_table_and_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    df = _read(spark, path)
    assert df.schema == with_path_comment(spark_schema(table.schema()), str(path))
    got = df.toArrow()
    assert_same_rows(got, table.read_snapshot(), f"{name} via Spark vs HudiTable", _key(table))
    assert_same_rows(got, rs_snapshot(path), f"{name} via Spark vs hudi-rs", _key(table))


def test_schema_keeps_meta_columns_first_and_nested_types(spark, unzip_table):
    df = _read(spark, unzip_table("cow_v6_nonpartitioned"))
    assert df.columns[:5] == list(META_COLUMNS)
    types = {f.name: f.dataType for f in df.schema.fields}
    assert types["decimalField"] == DecimalType(10, 5)
    assert types["timestampField"] == TimestampType()
    assert types["dateField"] == DateType()
    assert types["binaryField"] == BinaryType()
    assert isinstance(types["arrayField"], ArrayType) and isinstance(types["arrayField"].elementType, StructType)
    assert isinstance(types["mapField"], MapType) and types["mapField"].keyType == StringType()
    row = df.where("id = 1").collect()[0]
    assert isinstance(row["decimalField"], Decimal) and isinstance(row["timestampField"], dt.datetime)


@pytest.mark.parametrize("name", ["cow_v6_nonpartitioned", "cow_v6_simplekeygen_nonhivestyle_overwritetable",
                                  "mor_parquetlog_v6_nonpartitioned", "mor_parquetlog_v6_complexkeygen_hivestyle",
                                  TRIPS])
def test_time_travel_to_every_instant(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    for ts in _commits(table):
        got = _read(spark, path, **{"as.of.instant": ts}).toArrow()
        assert_same_rows(got, table.read_snapshot(as_of=ts), f"{name} as of {ts} vs HudiTable", _key(table))
        assert_same_rows(got, rs_snapshot(path, as_of=ts), f"{name} as of {ts} vs hudi-rs", _key(table))


def test_time_travel_option_forms(spark, unzip_table):
    """Hudi's `as.of.instant`, the `as_of_instant` alias and the 'yyyy-MM-dd HH:mm:ss.SSS' form agree."""
    path = unzip_table(TRIPS)
    first = _commits(HudiTable.load(path))[0]
    dashed = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    for key, value in (("as.of.instant", first), ("as_of_instant", first), ("as.of.instant", dashed)):
        assert _fares(_read(spark, path, **{key: value}).toArrow())["rider-D"] == 33.9, (key, value)
    assert _fares(_read(spark, path).toArrow())["rider-D"] == 25.0
    # Before the first commit nothing is visible.
    assert _read(spark, path, **{"as.of.instant": "20000101000000000"}).count() == 0


@pytest.mark.parametrize("name", MOR_TABLES)
def test_read_optimized_equals_hudi_rs(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    got = _read(spark, path, **{QUERY_TYPE: "read_optimized"}).toArrow()
    assert_same_rows(got, table.read_snapshot(read_optimized=True), f"{name} read-optimized", _key(table))
    assert_same_rows(got, rs_snapshot(path, read_optimized=True), f"{name} read-optimized vs hudi-rs",
                     _key(table))


@pytest.mark.parametrize("name", ["cow_v6_simplekeygen_nonhivestyle", "mor_parquetlog_v6_nonpartitioned", TRIPS])
def test_incremental_between_consecutive_instants(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    instants = ["000", *_commits(table)]
    for start, end in zip(instants, instants[1:]):
        got = _read(spark, path, **{QUERY_TYPE: "incremental", BEGIN: start, END: end}).toArrow()
        what = f"{name} incremental ({start}, {end}]"
        assert_same_rows(got, table.read_incremental(start, end), what, _key(table))
        assert_same_rows(got, rs_incremental(path, start, end), f"{what} vs hudi-rs", _key(table))


def test_incremental_without_end_reads_to_the_latest_commit(spark, unzip_table):
    path = unzip_table(TRIPS)
    first, last = _commits(HudiTable.load(path))
    got = _read(spark, path, **{QUERY_TYPE: "incremental", BEGIN: first}).toArrow()
    assert got.column("rider").to_pylist() == ["rider-D"] and _fares(got)["rider-D"] == 25.0
    assert got.column("_hoodie_commit_time").to_pylist() == [last]
    assert _read(spark, path, **{QUERY_TYPE: "incremental", BEGIN: last}).count() == 0


# ---- pruning and projection ---------------------------------------------------------------------------------


def test_partition_filter_prunes_file_slices(spark, unzip_table):
    """The Python source (`hudi_merge`: one Spark partition per file slice) prunes slices by partition filters."""
    path = unzip_table(TRIPS)
    table = HudiTable.load(path)
    df = spark.read.format(MERGE_FORMAT).load(str(path))
    everything = df.rdd.getNumPartitions()
    assert everything == len(table.file_slices()) == 3
    pruned = df.where("city = 'san_francisco'")
    assert pruned.rdd.getNumPartitions() == 1
    expected = table.read_snapshot(filters=[("city", "=", "san_francisco")])
    assert_same_rows(pruned.toArrow(), expected, "city = san_francisco")
    assert _fares(pruned.toArrow())["rider-D"] == 25.0  # the log block of the kept slice is merged
    # IN, NOT and LIKE prefix prune too; a filter on a data column prunes nothing but still filters rows.
    assert df.where("city IN ('chennai', 'sao_paulo')").rdd.getNumPartitions() == 2
    assert df.where("city <> 'chennai'").rdd.getNumPartitions() == 2
    assert df.where("city LIKE 'san%'").rdd.getNumPartitions() == 1
    by_fare = df.where("fare > 40")
    assert by_fare.rdd.getNumPartitions() == 3
    assert_same_rows(by_fare.toArrow(), table.read_snapshot(filters=[("fare", ">", 40)]), "fare > 40")


def test_filter_on_two_partition_columns(spark, unzip_table):
    path = unzip_table("mor_parquetlog_v6_complexkeygen_hivestyle")
    table = HudiTable.load(path)
    snapshot = table.read_snapshot()
    row = snapshot.slice(0, 1).to_pylist()[0]
    b, s = row["byteField"], row["shortField"]
    df = _read(spark, path).where(f"byteField = {b} AND shortField = {s}")
    assert df.rdd.getNumPartitions() < len(table.file_slices())
    expected = snapshot.filter((pc.field("byteField") == b) & (pc.field("shortField") == s))
    assert_same_rows(df.toArrow(), expected, "complex key filter", _key(table))


def test_declared_schema_reads_only_those_columns(spark, unzip_table):
    path = unzip_table(TRIPS)
    df = spark.read.format("hudi").schema("RIDER string, fare double").load(str(path))
    got = df.toArrow()
    assert got.column_names == ["RIDER", "fare"]
    assert dict(zip(got.column("RIDER").to_pylist(), got.column("fare").to_pylist()))["rider-D"] == 25.0
    with pytest.raises(Exception, match="no_such_column"):
        spark.read.format("hudi").schema("no_such_column string").load(str(path)).collect()


# ---- catalog tables -----------------------------------------------------------------------------------------


def test_catalog_table_reads_the_current_merged_snapshot(spark, unzip_table, tmp_path):
    """`spark.table(name)` finds the path in the column comment and reads the snapshot of each new query."""
    path = Path(shutil.copytree(unzip_table(TRIPS), tmp_path / "trips"))
    last = _commits(HudiTable.load(path))[-1]
    completed = path / ".hoodie" / f"{last}.deltacommit"
    hidden = tmp_path / completed.name
    completed.rename(hidden)  # the update's deltacommit not completed yet: its log block is invisible
    ddl = create_catalog_table(spark, "trips_catalog", str(path))
    try:
        assert f"COMMENT '{PATH_COMMENT_PREFIX}{path}'" in ddl
        comment = [f for f in spark.table("trips_catalog").schema.fields if f.name == "_hoodie_commit_time"]
        assert comment[0].metadata.get("comment") == f"{PATH_COMMENT_PREFIX}{path}"
        before = spark.table("trips_catalog").toArrow()
        assert before.num_rows == 8 and _fares(before)["rider-D"] == 33.9

        hidden.rename(completed)  # the deltacommit completes: a new query sees the merged log record
        after = spark.table("trips_catalog").toArrow()
        assert_same_rows(after, HudiTable.load(path).read_snapshot(), "catalog table snapshot")
        assert _fares(after)["rider-D"] == 25.0
        sql = spark.sql("SELECT rider, fare FROM trips_catalog WHERE city = 'san_francisco'")
        # One slice read, its base file split by key: Spark's scan of it and the merge of its logged key.
        plan = sql._jdf.queryExecution().executedPlan().toString()
        assert "hudi_unlogged_key" in plan and "1 logged keys" in plan and "MapInArrow hudi_merge" in plan, plan
        assert sql.rdd.getNumPartitions() == 2
        assert _fares(sql.toArrow())["rider-D"] == 25.0
    finally:
        spark.sql("DROP TABLE IF EXISTS trips_catalog")
    assert path.joinpath(".hoodie", "hoodie.properties").is_file()  # dropping the catalog entry kept the data


@pytest.mark.parametrize("name", ["mor_parquetlog_v6_nonpartitioned", "cow_v6_complexkeygen_hivestyle"])
def test_catalog_table_created_with_a_path_option(spark, unzip_table, name):
    """Spark drops OPTIONS when it reads a catalog table, but passes them to schema() at CREATE time, and the
    inferred schema keeps the path comment: `USING hudi OPTIONS (path ...)` works without our helper."""
    path = unzip_table(name)
    table = HudiTable.load(path)
    spark.sql(f"CREATE TABLE opts_{name} USING hudi OPTIONS (path 'file:{path}')")
    try:
        assert_same_rows(spark.table(f"opts_{name}").toArrow(), table.read_snapshot(), f"{name} catalog table",
                         _key(table))
    finally:
        spark.sql(f"DROP TABLE IF EXISTS opts_{name}")


def test_catalog_table_ddl_quotes_names_and_nested_types(unzip_table):
    path = unzip_table("cow_v6_nonpartitioned")
    ddl = catalog_table_ddl("db.t", str(path), if_not_exists=True)
    assert ddl.startswith("CREATE TABLE IF NOT EXISTS db.t (")
    assert "`_hoodie_commit_time` STRING COMMENT 'hudi.path=" in ddl
    assert "`decimalField` DECIMAL(10,5)" in ddl
    assert "`arrayField` ARRAY<STRUCT<`arr_struct_f1`: STRING, `arr_struct_f2`: INT>>" in ddl
    assert ddl.rstrip().endswith("USING hudi")


# ---- errors --------------------------------------------------------------------------------------------------


def test_errors_name_the_option_at_fault(spark, unzip_table, tmp_path):
    path = unzip_table(TRIPS)
    with pytest.raises(Exception, match="hoodie.datasource.query.type='bogus'"):
        _read(spark, path, **{QUERY_TYPE: "bogus"}).collect()
    with pytest.raises(Exception, match="needs hoodie.datasource.read.begin.instanttime"):
        _read(spark, path, **{QUERY_TYPE: "incremental"}).collect()
    with pytest.raises(Exception, match="no table path"):
        spark.read.format("hudi").schema("a string").load().collect()
    with pytest.raises(Exception, match="not a Hudi table"):
        _read(spark, tmp_path).collect()


# ---- pieces, without Spark jobs -----------------------------------------------------------------------------


def test_tasks_get_the_scan_plan_not_the_table(unzip_table):
    """What Spark ships to executors is the reader as pickled before `partitions()`: the fixed scan plan, without the
    table; a task reads its slice with it alone."""
    path = str(unzip_table(TRIPS))
    source = HudiDataSource({"path": path})
    reader = source.reader(source.schema())
    shipped = pickle.loads(pickle.dumps(reader))
    assert not hasattr(shipped, "table") and shipped.plan.slices == ()
    assert (shipped.plan.query, shipped.plan.visibility) == (reader.plan.query, reader.plan.visibility)
    batches = [b for p in reader.partitions() for b in shipped.read(p)]
    rows = pa.Table.from_batches(batches, reader.target)
    expected = rs_snapshot(path)
    assert sorted(rows.column("_hoodie_record_key").to_pylist()) == \
        sorted(expected.column("_hoodie_record_key").to_pylist())
    assert sorted(rows.column("fare").to_pylist()) == sorted(expected.column("fare").to_pylist())


def test_read_options_parse_and_validate():
    o = ReadOptions.parse({"path": "/t", "Hoodie.Datasource.Query.Type": "INCREMENTAL", BEGIN: "100"})
    assert (o.path, o.query_type, o.begin, o.end, o.schema_instant) == ("/t", "incremental", "100", None, None)
    assert ReadOptions.parse({"path": "file:/t/x"}).path == "/t/x"  # how Spark qualifies catalog paths
    assert ReadOptions.parse({"path": "s3://b/t"}).path == "s3://b/t"
    o = ReadOptions.parse({"path": "/t", "as_of_instant": "2024-03-01"})
    assert (o.query_type, o.as_of, o.schema_instant) == ("snapshot", "20240301000000000", "20240301000000000")
    with pytest.raises(HudiError, match="need hoodie.datasource.query.type=incremental"):
        ReadOptions.parse({"path": "/t", END: "1"})
    with pytest.raises(HudiError, match="does not combine"):
        ReadOptions.parse({QUERY_TYPE: "incremental", BEGIN: "1", "as.of.instant": "20240301101112123"})
    for typo in ("2024", "202403011011121234"):  # as Java Hudi refuses a time travel instant of another length
        with pytest.raises(HudiError, match=rf"option as.of.instant='{typo}': expected an instant time"):
            ReadOptions.parse({"path": "/t", "as.of.instant": typo})
    assert ReadOptions.parse({"path": "/t", "as.of.instant": "20240301101112"}).as_of == "20240301101112"


def test_normalize_instant():
    assert normalize_instant("20240301101112123", "k") == "20240301101112123"
    assert normalize_instant("2024-03-01 10:11:12.123", "k") == "20240301101112123"
    assert normalize_instant("2024-03-01 10:11:12", "k") == "20240301101112000"
    assert normalize_instant("2024-03-01", "k") == "20240301000000000"
    with pytest.raises(HudiError, match=r"option k='yesterday'"):
        normalize_instant("yesterday", "k")


def test_spark_types_of_hudi_columns():
    assert spark_type(pa.time32("ms"), "c") == IntegerType()
    assert spark_type(pa.time64("us"), "c") == LongType()
    assert spark_type(pa.timestamp("us"), "c") == TimestampNTZType()
    assert spark_type(pa.timestamp("ns", tz="UTC"), "c") == TimestampType()
    assert spark_type(pa.binary(16), "c") == BinaryType()
    assert spark_type(pa.dictionary(pa.int32(), pa.string()), "c") == StringType()
    with pytest.raises(SchemaError, match="'c.element'"):
        spark_type(pa.list_(pa.decimal256(60, 2)), "c")
    with pytest.raises(SchemaError, match="'u'"):
        spark_type(pa.uint64(), "u")


def test_rows_are_cast_to_the_exact_arrow_schema_spark_expects():
    rows = pa.table({
        "t": pa.array([1000], pa.time32("ms")),
        "ts": pa.array([1_000_000_000], pa.timestamp("ns", tz="UTC")),
        "f": pa.array([b"ab"], pa.binary(2)),
        "l": pa.array([[1]], pa.list_(pa.field("item", pa.int32(), nullable=False))),
        "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
    })
    declared = spark_schema(rows.schema)
    target = arrow_target(declared)
    out = to_spark_arrow(rows, target, "test")
    assert out.schema.equals(target)
    assert out.column("t").to_pylist() == [1000] and out.column("f").to_pylist() == [b"ab"]
    assert out.column("ts").type == pa.timestamp("us", tz="UTC")


def test_filter_expression_keeps_only_partition_column_filters():
    cols = {"city": "city"}
    row = pa.table({"city": ["san_francisco"]})

    def keeps(f) -> bool:
        e = filter_expression(f, cols)
        return row.filter(e).num_rows == 1

    assert keeps(EqualTo(("City",), "san_francisco")) and not keeps(EqualTo(("city",), "chennai"))
    assert keeps(In(("city",), ("chennai", "san_francisco"))) and not keeps(Not(EqualTo(("city",), "san_francisco")))
    assert keeps(StringStartsWith(("city",), "san")) and not keeps(IsNull(("city",)))
    assert not keeps(GreaterThan(("city",), "x"))
    assert filter_expression(EqualTo(("fare",), 1.0), cols) is None
    assert filter_expression(EqualTo(("city", "nested"), "x"), cols) is None
    assert filter_expression(Not(EqualTo(("fare",), 1.0)), cols) is None


def test_catalog_path_is_read_from_a_column_comment():
    schema = StructType([StructField("x", StringType()),
                         StructField("_hoodie_commit_time", StringType(), metadata={"comment": "hudi.path=s3://b/t"})])
    assert catalog_path(schema) == "s3://b/t"
    assert catalog_path(StructType([StructField("x", StringType())])) is None


# ---- a standalone cluster -----------------------------------------------------------------------------------

_CLUSTER_DRIVER = textwrap.dedent("""
    import json, sys
    import pyarrow.parquet as pq
    from hudi_engine.spark.executor_env import checked_env
    from hudi_engine.spark.session import local_spark_session
    master, path, out, executor_python = sys.argv[1:5]
    spark = local_spark_session(app_name="hudi-cluster-test", master=master,
                                extra_conf={"spark.cores.max": "2", "spark.executor.cores": "1",
                                            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                                            "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1",
                                            "spark.pyspark.python": executor_python})
    df = spark.read.format("hudi").load(path)
    pq.write_table(df.toArrow(), out)
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
    print(json.dumps({"partitions": df.rdd.getNumPartitions(), "executors": executors,
                      "shipped": checked_env(spark).shipped is not None}))
    spark.stop()
""")


@pytest.mark.slow
def test_read_through_a_standalone_cluster(unzip_table, tmp_path, standalone_master, executor_pythons):
    """Executors in separate JVMs and Python workers read the slices; a separate driver process, since this
    test session already has its one SparkContext. Their Python has no hudi_engine: the driver ships it."""
    path = unzip_table(TRIPS)
    out = tmp_path / "rows.parquet"
    master = standalone_master
    assert master.startswith("spark://127.0.0.1:")
    done = subprocess.run([sys.executable, "-c", _CLUSTER_DRIVER, master, str(path), str(out), executor_pythons.full],
                          env={**os.environ, **python_env()}, cwd=tmp_path, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"partitions": 3, "executors": 2, "shipped": True}
    got = pq.read_table(out)
    assert_same_rows(got, HudiTable.load(path).read_snapshot(), "standalone cluster read")
    assert_same_rows(got, rs_snapshot(path), "standalone cluster read vs hudi-rs")


def test_spark_filters_skip_file_slices_by_column_stats(spark, tmp_path):
    """A table with column stats: Spark's pushed comparisons and IN skip the file slices no file of which can match
    (the `hudi` source's planner and read_table's), and the query's rows are those of a full read filtered."""
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    from hudi_engine.read_options import ReadOptions
    from hudi_engine.spark.pushdown import skipping_filters
    from hudi_engine.spark.read_plan import plan_read
    from hudi_engine.write_pipeline import write_table

    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.metadata.index.column.stats.enable": "true", "hoodie.parquet.small.file.limit": "0",
               "hoodie.datasource.write.operation": "insert"}
    for start in range(0, 300, 100):
        ids = list(range(start, start + 100))
        write_table(pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([1] * 100, pa.int64()),
                              "p": [f"p{i % 2}" for i in ids]}), path, options)
    table = HudiTable.load(path)
    schema = table.schema()
    assert skipping_filters(schema, [EqualTo(("ID",), 150), In(("id",), (1, None))]) == [("id", "=", 150)]
    every = plan_read(table, ReadOptions.parse({"path": path}))
    some = plan_read(table, ReadOptions.parse({"path": path}), filters=[EqualTo(("id",), 150)])
    assert 0 < len(some.scan.slices) < len(every.scan.slices)
    df = spark.read.format("hudi").load(path).where("id >= 120 and id < 130")
    assert sorted(r.id for r in df.collect()) == list(range(120, 130))
    assert len(plan_read(table, ReadOptions.parse({"path": path}), filters=[
        GreaterThanOrEqual(("id",), 120), LessThan(("id",), 130)]).scan.slices) == 2  # one file group a partition
