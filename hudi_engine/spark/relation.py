"""A Hudi table as a DataFrame that Spark plans natively where it can.

    read_table(spark, "/data/trips")                                    # latest snapshot, MOR merged
    read_table(spark, "analytics.trips", {"as.of.instant": "20240101120000000"})   # a catalog table, time travel
    read_table(spark, path, {"hoodie.datasource.query.type": "incremental",
                             "hoodie.datasource.read.begin.instanttime": begin})      # commits after `begin`
    register_view(spark, "trips_now", "/data/trips")                   # the same, as a temporary view for SQL

Options are the `hudi` source's (`hudi_engine.read_options`). The read is split by file slice (`read_plan.plan_read`:
which slices go to Spark's own parquet reader, which are split by record key, which the `hudi` source merges); this
module makes the plan one DataFrame (`dataframe`): `spark.read.parquet` over the listed base files, the split
slices' base files with a broadcast anti-join on the file and `_hoodie_record_key` against the logged keys, and
the `hudi_merge` source for the rest. Spark pushes filters and column pruning through the union into each part. A
DataFrame keeps reading the snapshot it was made for: make a new one to see later commits (dbt makes one per model
run, see `dbt/adapters/hudi/catalog.py`). An incremental read keeps the native files' rows written in the range
with a filter on `_hoodie_commit_time`, as the `hudi` source does.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from urllib.parse import urlparse

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.errors import HudiError
from hudi_engine.scan_plan import COMMIT_TIME, CommitTimeWindow
from hudi_engine.spark.catalog_entry import PATH_COMMENT_PREFIX
from hudi_engine.spark.datasource import MERGE_FORMAT
from hudi_engine.spark.read_plan import RECORD_KEY, SPLIT_FILE, SPLIT_KEY, ReadPlan, plan_read
from hudi_engine.spark.registration import register_data_source
from hudi_engine.spark.spark_types import spark_schema
from hudi_engine.table import HudiTable

# ---- DataFrames ------------------------------------------------------------------------------------------------


def dataframe(spark: SparkSession, plan: ReadPlan) -> DataFrame:
    """The plan as one DataFrame: Spark's parquet scan of the native files, union the hudi source's slices."""
    schema = spark_schema(plan.schema)
    parts = []
    if plan.native_files:
        native = _parquet(spark, schema, plan.native_files)
        if plan.window is not None and not plan.window.everything:
            native = native.where(window_column(plan.window))
        parts.append(native)
    if plan.split_files:
        # The base files of slices with logs, but the rows whose keys the logs change (the source merges those).
        base = _parquet(spark, schema, plan.split_files).withColumn(SPLIT_FILE, F.col("_metadata.file_name"))
        keys = F.broadcast(spark.createDataFrame(plan.split_keys))
        condition = (base[SPLIT_FILE] == keys[SPLIT_FILE]) & (base[RECORD_KEY] == keys[SPLIT_KEY])
        parts.append(base.join(keys, condition, "left_anti").select(*(F.col(f"`{n}`") for n in schema.names)))
    if plan.merged_groups or plan.split_groups:
        register_data_source(spark)
        reader = spark.read.format(MERGE_FORMAT).schema(schema)
        for key, value in plan.source_options().items():
            reader = reader.option(key, value)
        parts.append(reader.load(plan.path))
    if not parts:
        return spark.createDataFrame([], schema)
    return functools.reduce(DataFrame.union, parts)


_DISCOVERY_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_discovery_lock = threading.Lock()


def _parquet(spark: SparkSession, schema: T.StructType, files: tuple[str, ...]) -> DataFrame:
    """Spark's parquet reader over `files`. Past 32 paths Spark lists them with a Spark job (a task per file) before
    it plans anything; on a local disk the driver stats them in a fraction of that, so the threshold is raised for
    the call. Object stores keep the listing job, which runs their requests in parallel."""
    local = all(urlparse(f).scheme in ("", "file") for f in files)
    default = spark.conf.get(_DISCOVERY_THRESHOLD, "32") or "32"
    if not local or len(files) <= int(default):
        return spark.read.schema(schema).parquet(*files)
    with _discovery_lock:  # the setting is the session's: restored before another of our reads sets it
        spark.conf.set(_DISCOVERY_THRESHOLD, str(len(files) + 1))
        try:
            return spark.read.schema(schema).parquet(*files)
        finally:
            spark.conf.set(_DISCOVERY_THRESHOLD, default)


def window_column(window: CommitTimeWindow) -> Column:
    """`CommitTimeWindow` as a Spark filter (Spark pushes it into the parquet scan's row-group statistics)."""
    commit_time = F.col(COMMIT_TIME)
    if window.instants is not None:
        return commit_time.isin(list(window.instants))
    return (commit_time > F.lit(window.after)) & (commit_time <= F.lit(window.up_to))


def table_path(spark: SparkSession, source: str) -> str:
    """A table path or URI as given; a catalog table name (`db.table`) -> the path its `hudi.path` comment holds."""
    if "/" in source or "\\" in source:
        return source
    if not spark.catalog.tableExists(source):
        raise HudiError(f"{source!r}: neither a table path nor a table in the catalog")
    # The catalog's columns and comments, without planning a read of the table (which would start the source).
    comments = [c.description or "" for c in spark.catalog.listColumns(source)]
    path = next((c[len(PATH_COMMENT_PREFIX):].strip() for c in comments if c.startswith(PATH_COMMENT_PREFIX)), None)
    if path is None:
        raise HudiError(f"catalog table {source!r} is not a Hudi table of this engine: no column carries a "
                        "'hudi.path=<uri>' comment (see hudi_engine.spark.create_catalog_table)")
    return path


def read_table(spark: SparkSession, source: str, options: Mapping[str, str] | None = None) -> DataFrame:
    """The Hudi table at a path, or behind a catalog table name, as a DataFrame Spark plans natively where it can;
    `options` are the `hudi` source's (query type, time travel, incremental range)."""
    path = table_path(spark, source)
    opts = HudiTable.parse_read_options({**(options or {}), "path": path})
    if opts.cdc:  # a CDC query: changes, not rows of base files; the merge source reads them a file group a task
        register_data_source(spark)
        return spark.read.format(MERGE_FORMAT).options(**opts.to_options()).load(opts.path or path)
    table = HudiTable.load(opts.path or path)
    return dataframe(spark, plan_read(table, opts))


def register_view(spark: SparkSession, view: str, source: str, options: Mapping[str, str] | None = None) -> str:
    """`read_table` as the temporary view `view` (created or replaced); returns the view name as SQL text."""
    quoted = "`" + view.replace("`", "``") + "`"
    read_table(spark, source, options).createOrReplaceTempView(quoted)
    return quoted
