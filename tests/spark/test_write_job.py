"""A write's own Spark jobs (`hudi_engine.spark.write_job.single_job`): without adaptive execution where the write's
own exchange is the plan's only one, so the shuffle's map stage and the write run as one Spark job; with it where
the input has a join or a subquery; the session's own conf untouched."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from spark_jobs import jobs_of

from hudi_engine.spark import write, write_job

pytestmark = pytest.mark.spark


def _jobs(spark: SparkSession, run: Callable[[], object], site: str | None = None) -> tuple[int, object]:
    """The Spark jobs `run` started, and what it returned. `site`: the file every job's stages must be named by."""
    out, jobs, sites = jobs_of(spark, run)
    assert site is None or all(site in name for name in sites), sites
    return len(jobs), out


@pytest.fixture
def rows(spark: SparkSession) -> Iterator[DataFrame]:
    df = spark.range(2000).selectExpr("id", "cast(id % 7 as int) AS k").cache()
    df.count()
    yield df
    df.unpersist()


def test_the_writes_shuffle_and_its_tasks_run_as_one_job(spark: SparkSession, rows: DataFrame) -> None:
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    def identity(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # pickled whole: a local function
        yield from batches

    shuffled = rows.repartitionById(2, F.col("k")).sortWithinPartitions("id").mapInArrow(identity, rows.schema)
    # Spark's UI names the caller's line, not write_job's
    jobs, out = _jobs(spark, lambda: write_job.single_job(shuffled).collect(), site=Path(__file__).name)
    adaptive_jobs, expected = _jobs(spark, shuffled.collect)
    assert (jobs, adaptive_jobs) == (1, 2)  # AQE ends a job at the exchange
    assert out == expected  # the same rows, in the same tasks, in the same order


def test_an_aggregate_runs_in_the_partitions_given(spark: SparkSession, rows: DataFrame) -> None:
    counted = rows.groupBy("k").count()
    plain = write_job._plain_plan(counted, 1)
    assert plain is not None
    assert plain.rdd().getNumPartitions() == 1  # not Spark's spark.sql.shuffle.partitions (200 by default)
    jobs, out = _jobs(spark, lambda: write_job.single_job(counted, shuffle_partitions=1).collect())
    assert jobs == 1
    assert sorted(map(tuple, out)) == [(k, len(range(k, 2000, 7))) for k in range(7)]


@pytest.mark.parametrize("shape", ["join", "subquery", "no exchange", "two exchanges"])
def test_a_plan_with_more_than_the_writes_exchange_keeps_adaptive_execution(
        spark: SparkSession, rows: DataFrame, shape: str) -> None:
    source = {"join": rows.join(rows.groupBy("k").count(), "k"),
              "subquery": rows.where(F.col("id") < rows.select(F.max("k")).scalar()),
              "no exchange": rows,
              "two exchanges": rows.dropDuplicates(["k"])}[shape]
    df = source.repartitionById(2, F.col("k")) if shape != "no exchange" else source
    assert write_job._plain_plan(df, None) is None
    assert sorted(map(tuple, write_job.single_job(df).collect())) == sorted(map(tuple, df.collect()))


def test_the_sessions_conf_is_left_as_it_was(spark: SparkSession, rows: DataFrame) -> None:
    before = (spark.conf.get("spark.sql.adaptive.enabled"), spark.conf.get("spark.sql.shuffle.partitions"))
    write_job.single_job(rows.groupBy("k").count(), shuffle_partitions=1).collect()
    write_job.single_job(rows.repartitionById(2, F.col("k"))).collect()
    assert (spark.conf.get("spark.sql.adaptive.enabled"), spark.conf.get("spark.sql.shuffle.partitions")) == before


def test_a_session_without_adaptive_execution_plans_as_it_does(spark: SparkSession, rows: DataFrame) -> None:
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        assert write_job._plain_plan(rows.repartitionById(2, F.col("k")), None) is None
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", "true")


def test_a_one_pass_upsert_is_one_spark_job(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "part", "hoodie.metadata.enable": "false"}
    first = spark.createDataFrame([(i, 1, f"p{i % 3}") for i in range(30)], "id bigint, ts bigint, part string")
    write(first, path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    # Cached and counted: Spark knows its rows, which are below one file (a one-pass write, `one_pass`).
    batch = spark.createDataFrame([(i, 2, f"p{i % 3}") for i in range(20, 40)], "id bigint, ts bigint, part string")
    batch.cache().count()
    try:
        jobs, result = _jobs(spark, lambda: write(batch, path, {**options,
                                                               "hoodie.datasource.write.operation": "upsert"}))
    finally:
        batch.unpersist()
    assert jobs == 1  # the map stage and the write tasks
    assert (result.records_inserted, result.records_updated) == (10, 10)  # type: ignore[attr-defined]
