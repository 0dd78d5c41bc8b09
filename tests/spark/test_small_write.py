"""hudi_engine.spark.small_write: a write Spark estimates small runs on the driver, with the Spark write's checks,
the same table services around its commit, and the same table as the Spark write (rows, file groups, commit
stats), read alike by the engine and hudi-rs."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError, KeyGeneratorError, WriteError
from hudi_engine.spark import write
from hudi_engine.spark.small_write import DRIVER_MAX_BYTES, fits_driver, write_on_driver, write_small

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, at timestamp, amount decimal(10,2), dt string"
META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


def opts(table_type: str, operation: str, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "small", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            # A bulk_insert cuts one file per task and partition; on the driver there is one task. With one task
            # on Spark as well, the two tables have the same file groups and every later write can be compared.
            "hoodie.bulkinsert.shuffle.parallelism": "1", **extra}


def row(i: int, ts: int, name: str = "n", dt: str | None = None) -> tuple:
    return (i, f"{name}{i}", ts, datetime(2024, 1, 1 + i % 5, 12, i % 60), Decimal(f"{i}.25"),
            dt or f"2024-01-0{i % 3 + 1}")


# Each step: operation, rows. The upsert carries two versions of key 3 (pre-combined by ts) and new keys.
STEPS = [
    ("bulk_insert", [row(i, 1) for i in range(12)]),
    ("upsert", [row(3, 5, "old"), row(3, 7, "new"), row(4, 2, "u"), *[row(i, 2, "ins") for i in range(20, 25)]]),
    ("insert", [row(30, 1), row(31, 1, dt="2024-01-09")]),
    ("delete", [row(5, 9), row(21, 9)]),
    ("insert_overwrite", [row(40, 1, dt="2024-01-02")]),
]


def frame(spark, rows: list[tuple], folder: Path):
    """The rows as a parquet file read back: a plan with statistics, as a dbt model's seed or table is (a DataFrame
    made from Python objects has none, so Spark cannot say it is small)."""
    at = folder / f"input-{len(list(folder.glob('input-*')))}"
    spark.createDataFrame(rows, SCHEMA).coalesce(1).write.parquet(str(at))
    return spark.read.parquet(str(at))


def data_rows(t) -> list[dict]:
    cols = [c for c in t.column_names if c not in META]
    return sorted(t.select(cols).to_pylist(), key=lambda r: r["id"])


def layout(path: Path) -> list[tuple]:
    """Per partition: the number of file groups and which have log files (file ids are random per write)."""
    table = HudiTable.load(path)
    slices = table.file_slices()
    return sorted((s.partition_path, s.base_file is not None, len(s.log_files)) for s in slices)


def commit_totals(path: Path) -> list[tuple]:
    table = HudiTable.load(path)
    out = []
    for i in table.timeline.completed_commits():
        stats = table.timeline.commit_metadata(i).write_stats()
        out.append((str(i.action), table.timeline.commit_metadata(i).operation_type,
                    sum(s.num_inserts for s in stats), sum(s.num_update_writes for s in stats),
                    sum(s.num_deletes for s in stats)))
    return out


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_driver_writes_the_table_the_spark_write_writes(spark, tmp_path, table_type):
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")  # timestamps cross the session zone alike
    try:
        on_spark, on_driver = tmp_path / "spark", tmp_path / "driver"
        for operation, rows in STEPS:
            df = frame(spark, rows, tmp_path)
            config = WriteConfig.from_options(opts(table_type, operation))
            assert fits_driver(df, config)
            a = write(df, str(on_spark), config)
            b = write_on_driver(df, str(on_driver), config)
            assert "collect" in b.timings and "collect" not in a.timings  # each went its own way
            assert (a.operation, a.records_inserted, a.records_updated, a.records_deleted, a.files_created,
                    a.files_rewritten, a.files_appended) == \
                   (b.operation, b.records_inserted, b.records_updated, b.records_deleted, b.files_created,
                    b.files_rewritten, b.files_appended), operation
            ours = HudiTable.load(on_driver).read_snapshot()
            assert data_rows(ours) == data_rows(HudiTable.load(on_spark).read_snapshot()), operation
            assert_same_rows(ours, rs_snapshot(on_driver), f"{table_type} {operation} on the driver")
        assert layout(on_driver) == layout(on_spark)
        assert commit_totals(on_driver) == commit_totals(on_spark)
        assert next(r for r in data_rows(ours) if r["id"] == 3)["name"] == "new3"  # pre-combined by ts
    finally:
        spark.conf.unset("spark.sql.session.timeZone")


def test_inline_compaction_and_cleaning_run_around_a_driver_write(spark, tmp_path):
    services = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
                "hoodie.cleaner.commits.retained": "1"}
    on_spark, on_driver = tmp_path / "spark", tmp_path / "driver"
    for operation, rows in [STEPS[0], STEPS[1], ("upsert", [row(i, 3 + i) for i in range(6)]),
                            ("upsert", [row(i, 20) for i in range(3, 9)])]:
        df = frame(spark, rows, tmp_path)
        config = WriteConfig.from_options(opts("MERGE_ON_READ", operation, **services))
        write(df, str(on_spark), config)
        write_on_driver(df, str(on_driver), config)
    actions = [(str(i.action), i.state.name) for i in HudiTable.load(on_driver).timeline.instants]
    assert actions == [(str(i.action), i.state.name) for i in HudiTable.load(on_spark).timeline.instants]
    assert ("commit", "COMPLETED") in actions and ("clean", "COMPLETED") in actions  # compacted, then cleaned
    assert data_rows(HudiTable.load(on_driver).read_snapshot()) == data_rows(HudiTable.load(on_spark).read_snapshot())
    assert_same_rows(HudiTable.load(on_driver).read_snapshot(), rs_snapshot(on_driver), "after compaction")


def files_under(path: Path) -> set[str]:
    return {str(p) for p in path.rglob("*") if p.is_file() and ".hoodie" not in p.parts}


@pytest.mark.parametrize("bad, error, says", [
    ((None, "x", 1, None, None, "2024-01-01"), KeyGeneratorError,
     "record key field 'id' is null or empty in row {\"name\":\"x\""),
    ((7, "x", None, None, None, "2024-01-01"), WriteError, "precombine field 'ts'"),
])
def test_bad_rows_fail_before_any_file_and_leave_the_table(spark, tmp_path, bad, error, says):
    path = tmp_path / "t"
    write_on_driver(frame(spark, STEPS[0][1], tmp_path), str(path),
                    WriteConfig.from_options(opts("MERGE_ON_READ", "bulk_insert")))
    before, commits = files_under(path), commit_totals(path)
    df = frame(spark, [row(1, 2), bad], tmp_path)
    with pytest.raises(error) as e:
        write_on_driver(df, str(path), WriteConfig.from_options(opts("MERGE_ON_READ", "upsert")))
    assert says in str(e.value)
    assert files_under(path) == before and commit_totals(path) == commits
    assert not HudiTable.load(path).timeline.pending()


def test_only_what_spark_estimates_small_goes_to_the_driver(spark, tmp_path):
    config = WriteConfig.from_options(opts("COPY_ON_WRITE", "upsert"))
    small = frame(spark, STEPS[0][1], tmp_path)
    assert fits_driver(small, config)
    assert not fits_driver(spark.range(10**9).selectExpr("id", "'x' as dt"), config)  # ~8 GB by its estimate
    assert not fits_driver(small, config, max_bytes=0)
    glob = WriteConfig.from_options(opts("COPY_ON_WRITE", "upsert", **{"hoodie.index.type": "GLOBAL_SIMPLE"}))
    assert not fits_driver(small, glob)  # its join against every key is a Spark job either way
    write(small, str(tmp_path / "t"), config)
    through_source = spark.read.format("hudi_merge").load(str(tmp_path / "t"))  # no statistics: unknown, so Spark
    assert not fits_driver(through_source, config)
    native = spark.read.format("hudi").load(str(tmp_path / "t"))  # the native source reports its base files' bytes
    assert fits_driver(native, config)
    spark.conf.set(DRIVER_MAX_BYTES, "0")
    try:
        assert "collect" not in write_small(small, str(tmp_path / "t"), config).timings
        spark.conf.set(DRIVER_MAX_BYTES, "lots")
        with pytest.raises(ConfigError, match="spark.hudi.write.driverMaxBytes='lots': expected a whole number"):
            write_small(small, str(tmp_path / "t"), config)
    finally:
        spark.conf.unset(DRIVER_MAX_BYTES)
    assert "collect" in write_small(small, str(tmp_path / "t"), config).timings
    assert rs_snapshot(tmp_path / "t").num_rows == 12
