"""The native `hudi` source (`hudi_engine.spark.native`, issue 24): `spark.table`, SQL on the catalog name and
`spark.read.format("hudi")` against hudi-rs on COW, MOR with and without log files, after compaction, with time
travel and incremental ranges; base files planned as Spark's own `FileScan parquet`, only slices with log files on
the `hudi_merge` source; a commit by another process seen by the next query; the compiled component rebuilt when
its source, the Spark version or the jar changes, and not otherwise. The test session runs on the native source
(tests/spark/conftest.py)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conformance import V6_WITH_COMMITS
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError
from hudi_engine.spark import create_catalog_table, native, spark_executor, write
from hudi_engine.spark.datasource import BEGIN_INSTANT, END_INSTANT, QUERY_TYPE, HudiDataSource

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"


def _opts(table_type: str, operation: str) -> dict:
    return {
        "hoodie.table.name": "native", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
        "hoodie.compact.inline": "false",
    }


def _write(spark, path: Path, table_type: str, rows: list[tuple], operation: str = "upsert") -> str:
    return write(spark.createDataFrame(rows, SCHEMA), str(path), _opts(table_type, operation)).instant_time


def _rec(i: int, ts: int) -> tuple:
    return (i, f"n{i}_{ts}", ts, i * 1.5 + ts, f"d{i % 4}")


def _plan_text(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def _every_path_equals_hudi_rs(spark, path: Path, catalog: str, what: str) -> None:
    expected = rs_snapshot(path)
    assert_same_rows(spark.table(catalog).toArrow(), expected, f"{what}: spark.table")
    assert_same_rows(spark.sql(f"SELECT * FROM {catalog}").toArrow(), expected, f"{what}: SQL")
    assert_same_rows(spark.read.format("hudi").load(str(path)).toArrow(), expected, f"{what}: format('hudi')")
    # Column pruning and a pushed filter give the same rows as hudi-rs filtered.
    got = spark.sql(f"SELECT id, amount FROM {catalog} WHERE dt = 'd1' AND id > 4").toArrow()
    want = expected.filter((expected["dt"].to_numpy(zero_copy_only=False) == "d1")
                           & (expected["id"].to_numpy() > 4)).select(["id", "amount"])
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == sorted(want.to_pylist(), key=lambda r: r["id"]), what
    if HudiTable.load(str(path)).is_mor:
        ro = spark.read.format("hudi").option(QUERY_TYPE, "read_optimized").load(str(path))
        assert_same_rows(ro.toArrow(), rs_snapshot(path, read_optimized=True), f"{what}: read-optimized")
        assert "hudi_merge" not in _plan_text(ro), f"{what}: a read-optimized query reads base files only"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_native_paths_equal_hudi_rs_through_a_tables_life(spark, tmp_path, table_type):
    path = tmp_path / "t"
    catalog = f"native_{table_type.lower()}"
    first = _write(spark, path, table_type, [_rec(i, 1) for i in range(40)], "bulk_insert")
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    _every_path_equals_hudi_rs(spark, path, catalog, "after the first commit")
    query = spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7")
    plan = _plan_text(query)
    assert "FileScan parquet" in plan and "PushedFilters: [IsNotNull(id), EqualTo(id,7)]" in plan, plan
    assert "Batched: true" in plan and "ReadSchema: struct<id:bigint,name:string>" in plan, plan
    assert "hudi_merge" not in plan, plan
    # Spark's statistics for join planning: the base files' bytes, so a small table is broadcast.
    a, b = spark.table(catalog).alias("a"), spark.table(catalog).alias("b")
    assert "BroadcastHashJoin" in _plan_text(a.join(b, "id")), "the relation reports its size"

    second = _write(spark, path, table_type, [_rec(i, 2) for i in range(0, 40, 4)])  # partition d0 only
    _every_path_equals_hudi_rs(spark, path, catalog, "after an upsert")
    plan = _plan_text(spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7"))
    if table_type == "MERGE_ON_READ":  # d0's slices have log files now: only they go to the merge source
        assert "FileScan parquet" in plan and "BatchScan hudi_merge" in plan, plan
        groups = json.loads(native.plan_json({"path": str(path)}))["source_options"]["hudi_engine.read.file_groups"]
        assert groups and all(json.loads(groups)[i].startswith("d0/") for i in range(len(json.loads(groups))))
        HudiTable.load(str(path)).compact(executor=spark_executor(spark))
        _every_path_equals_hudi_rs(spark, path, catalog, "after compaction")
        assert "hudi_merge" not in _plan_text(spark.sql(f"SELECT id, name FROM {catalog} WHERE id = 7"))
    else:
        assert "hudi_merge" not in plan, plan

    # Time travel and incremental ranges through format("hudi").
    for ts in (first, second):
        as_of = spark.read.format("hudi").option("as.of.instant", ts).load(str(path))
        assert_same_rows(as_of.toArrow(), rs_snapshot(path, as_of=ts), f"{table_type} as of {ts}")
    for begin, end in (("000", first), (first, second)):
        options = {QUERY_TYPE: "incremental", BEGIN_INSTANT: begin, END_INSTANT: end}
        got = spark.read.format("hudi").options(**options).load(str(path))
        assert_same_rows(got.toArrow(), rs_incremental(path, begin, end), f"{table_type} ({begin}, {end}]")


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_native_source_equals_hudi_rs_on_real_hudi_tables(spark, unzip_table, name):
    path = unzip_table(name)
    table = HudiTable.load(path)
    key = "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]
    df = spark.read.format("hudi").load(str(path))
    assert_same_rows(df.toArrow(), rs_snapshot(path), f"{name}: format('hudi')", key)
    with_logs = any(s.log_files for s in table.file_slices())
    assert ("hudi_merge" in _plan_text(df)) == with_logs, name


_OTHER_PROCESS = """
import sys, pyarrow as pa
from hudi_engine.write.local_writer import write_table
rows = pa.table({"id": pa.array([3, 100], pa.int64()), "name": ["other", "new"], "ts": pa.array([9, 9], pa.int64()),
                 "amount": [0.5, 1.5], "dt": ["d3", "d0"]})
write_table(rows, sys.argv[1], dict(zip(sys.argv[2::2], sys.argv[3::2])))
"""


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_commit_by_another_process_is_seen_by_the_next_query(spark, tmp_path, table_type):
    path = tmp_path / "t"
    catalog = f"native_other_{table_type.lower()}"
    _write(spark, path, table_type, [_rec(i, 1) for i in range(8)], "bulk_insert")
    spark.sql(f"DROP TABLE IF EXISTS {catalog}")
    create_catalog_table(spark, catalog, str(path))
    assert spark.sql(f"SELECT name FROM {catalog} WHERE id = 3").collect()[0][0] == "n3_1"
    loaded = spark.read.format("hudi").load(str(path))
    args = [str(x) for kv in _opts(table_type, "upsert").items() for x in kv]
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path), *args], check=True, env=os.environ.copy())
    # No refresh: the catalog entry, and a DataFrame made before the commit, read the new commit at the next query.
    assert spark.sql(f"SELECT name FROM {catalog} WHERE id = 3").collect()[0][0] == "other"
    assert spark.table(catalog).count() == 9
    assert loaded.where("id = 100").count() == 1
    assert_same_rows(spark.table(catalog).toArrow(), rs_snapshot(path), f"{table_type}: after the other process")


def test_a_python_source_named_hudi_is_refused_beside_the_jvm_one(spark):
    """How Spark 4.3 resolves `hudi` with the component loaded: the JVM `DataSourceRegister` owns the name; a Python
    source of the same name is refused when registered (DATA_SOURCE_ALREADY_EXISTS), so no read is ambiguous."""
    assert native.native_enabled(spark)
    with pytest.raises(Exception, match="DATA_SOURCE_ALREADY_EXISTS"):
        spark.dataSource.register(HudiDataSource)


def test_a_catalog_entry_that_is_not_a_hudi_table_names_its_location(spark, tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(Exception, match="plain"):
        spark.read.format("hudi").load(str(tmp_path / "plain")).collect()


# ---- the compiled component -----------------------------------------------------------------------------------


@pytest.fixture
def private_component(tmp_path, monkeypatch):
    """The component's source copied into a folder of this test's, built into a cache of its own."""
    source = tmp_path / "src"
    shutil.copytree(native.SOURCE_DIR, source)
    monkeypatch.setattr(native, "SOURCE_DIR", source)
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "cache"))
    return source


def _built(jar: Path) -> tuple[int, int]:
    st = jar.stat()
    return st.st_ino, st.st_mtime_ns


def test_the_component_is_rebuilt_when_its_source_the_spark_version_or_the_jar_changes(private_component,
                                                                                      monkeypatch):
    jar = native.component_jar()
    assert native.jar_is_current(jar, native.source_hash(), native.spark_version())
    with zipfile.ZipFile(jar) as z:
        assert "hudiengine/spark/DefaultSource.class" in z.namelist()
    first = _built(jar)
    assert native.component_jar() == jar and _built(jar) == first, "reused, not rebuilt"

    scala = next(private_component.glob("*.scala"))
    scala.write_text(scala.read_text() + "\n// changed\n")
    changed = native.component_jar()
    assert changed != jar and changed.exists(), "a new source hash: a new jar"

    monkeypatch.setattr(native, "spark_version", lambda: "0.0.0-other")
    other_spark = native.component_jar()
    assert other_spark.parent.name.startswith("spark-0.0.0-other-")
    monkeypatch.undo()
    monkeypatch.setattr(native, "SOURCE_DIR", private_component)
    monkeypatch.setenv(native.CACHE_ENV, str(private_component.parent / "cache"))

    changed.write_bytes(b"not a jar")  # broken: rebuilt in place
    assert native.component_jar() == changed and native.jar_is_current(changed, native.source_hash(),
                                                                       native.spark_version())


def test_a_component_that_does_not_compile_is_a_clear_error(private_component):
    scala = next(private_component.glob("*.scala"))
    scala.write_text(scala.read_text() + "\nobject Broken { val x: Int = \"no\" }\n")
    with pytest.raises(HudiError, match=r"compiling .* against Spark .* failed[\s\S]*type mismatch[\s\S]*delete"):
        native.component_jar()
    assert not list((private_component.parent / "cache").rglob("*.jar")), "no jar left behind"


def test_a_dbt_profile_turns_the_native_source_on_by_its_extension(private_component, tmp_path):
    """dbt's session (method: session) gets the component's jar when the profile names its extension."""
    from dbt.adapters.hudi.session import SessionSettings

    plain = SessionSettings.resolve({}, tmp_path).conf
    assert "spark.jars" not in plain and native.EXTENSIONS_CLASS not in plain.get("spark.sql.extensions", "")
    conf = SessionSettings.resolve({"spark.sql.extensions": native.EXTENSIONS_CLASS}, tmp_path).conf
    assert conf["spark.jars"] == str(native.component_jar())
    assert conf["spark.sql.extensions"] == native.EXTENSIONS_CLASS
