"""The `hudi` Spark data source: Hudi tables through `spark.read`, built on PySpark 4's Python data source API.

    register_data_source(spark)
    spark.read.format("hudi").load(path)                                  # latest snapshot (MOR merged)
    spark.read.format("hudi").option("as.of.instant", "20240101120000000").load(path)      # time travel
    spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized").load(path)
    (spark.read.format("hudi").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.read.begin.instanttime", begin)           # exclusive
          .option("hoodie.datasource.read.end.instanttime", end).load(path))   # inclusive, default latest
    # ... and .option("hoodie.datasource.query.incremental.format", "cdc"): Hudi's CDC query (docs/cdc.md)

Options use Hudi's own names (`as_of_instant` is accepted for `as.of.instant`). Instants are
`yyyyMMddHHmmssSSS`, or `yyyy-MM-dd HH:mm:ss[.SSS]` / `yyyy-MM-dd` (UTC), as Hudi's time travel accepts.
On a Hudi 1.x table (versions 8, 9) begin and end are completion times, as Hudi 1.x takes them (docs/python-api.md).

How a read runs. The driver side (`HudiDataSource.reader`, in Spark's planning Python worker) loads the table (kept
there for the next query while its timeline is unchanged: `hudi_engine.spark.table_cache`) and plans the read with the engine's scan plan (`hudi_engine.scan_plan`): the query fixed to one instant or range, its
visibility and window when the reader is made, the latest file slices once Spark pushed its filters; every file slice
becomes one Spark input partition (`SlicePartition`, holding the slice's file paths). Executors read their slice with
the plan alone (`ScanPlan.read_slice`: base file, or base + log files merged by the table's payload) and yield Arrow
record batches cast to the declared Spark schema, so rows never pass through Python objects. Option keys are
declared in `hudi_engine.config.keys` and parsed by `hudi_engine.read_options.ReadOptions`.

A CDC query (`hoodie.datasource.query.incremental.format=cdc`) is planned by `hudi_engine.cdc_query` and read by
`ChangeReader`: one task per file group, rows `op`, `ts_ms`, `before`, `after` (`hudi_engine.cdc.images`: json or
struct).

Pushdown. PySpark 4.3 offers filter pushdown (`DataSourceReader.pushFilters`, enabled by
`spark.sql.python.filterPushdown.enabled`, which `register_data_source` turns on) but no column pruning.
Filters on partition columns (=, <=>, <, <=, >, >=, IN, IS [NOT] NULL, NOT, LIKE prefix/suffix/infix) prune
partitions before file slices are listed; every filter is still handed back to Spark, which evaluates it on
the rows, so pruning only has to be conservative, never exact. Key generators whose partition path is not the
column's value (timestamp-based, custom) are not pruned. Lower bounds on `_hoodie_commit_time` (>, >=, =, IN)
prune file slices whose rows are all older (`scan_plan.newest_commit_times`): `where _hoodie_commit_time > X`
reads only the slices commits after X wrote. For fewer columns, declare them:
`spark.read.format("hudi").schema("rider string, fare double").load(path)` reads only those; for Spark's own
parquet reader on base files (column pruning, vectorized decoding), `hudi_engine.spark.relation.read_table`.

Catalog tables. Spark 4.3 hands a Python data source neither the OPTIONS nor the LOCATION of a catalog table
when it is read (a `LOCATION` makes no difference, the table is recorded as MANAGED), but it does hand over the
table's schema with its column comments. So the table's path travels in a comment: when the `path` option is
missing, the reader takes the path from the comment `hudi.path=<uri>` on the first meta column
`_hoodie_commit_time` (any column carrying such a comment is accepted). Two ways to get there:
`create_catalog_table(spark, name, path)` issues `CREATE TABLE name (<columns, comment on the first>) USING
hudi` from the table's current schema; and `CREATE TABLE name USING hudi OPTIONS (path '<uri>')` works too,
because Spark does pass OPTIONS when it infers the schema at CREATE time and `HudiDataSource.schema()` puts
the comment into that schema. Other OPTIONS (query type, instants) are lost the same way and not supported on
catalog tables. Every query of a catalog table reads the snapshot current at that query.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudi_engine.cdc_query import ChangePlan, ChangeSplit, plan_changes, read_changes
from hudi_engine.errors import HudiError, SchemaError
from hudi_engine.file_group import FileSlice

# The read options' keys and parse are the engine's; Spark code has always found them here too.
from hudi_engine.read_options import BEGIN_INSTANT as BEGIN_INSTANT
from hudi_engine.read_options import END_INSTANT as END_INSTANT
from hudi_engine.read_options import QUERY_TYPE as QUERY_TYPE
from hudi_engine.read_options import ReadOptions
from hudi_engine.read_options import normalize_instant as normalize_instant
from hudi_engine.scan_plan import CommitTimeBound, file_group_id, fix_query, list_slices
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.executor_env import ensure_executor_env
from hudi_engine.spark.table_cache import TABLES
from hudi_engine.table import UNPRUNABLE_KEYGENS, HudiTable

FORMAT = "hudi"
# The same source under a name of its own: the half of a split read that merges log files (`relation.py`), and the
# merge source of the native `hudi` source (`native.py`), which answers `hudi` when the session has it.
MERGE_FORMAT = "hudi_merge"
PATH_COMMENT_PREFIX = "hudi.path="
COMMIT_TIME = "_hoodie_commit_time"


# ---- types --------------------------------------------------------------------------------------------------


def spark_type(t: pa.DataType, column: str) -> DataType:
    """The Spark type a Hudi (Arrow) column is read as; every field nullable (columns added later read null)."""
    if pa.types.is_dictionary(t):
        return spark_type(t.value_type, column)
    simple = _SIMPLE_TYPES.get(t.id)
    if simple is not None:
        return simple
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise SchemaError(f"column {column!r}: {t} exceeds Spark's largest decimal, decimal(38, s)")
        return DecimalType(t.precision, t.scale)
    if pa.types.is_timestamp(t):
        # Avro timestamp-* is an instant (Spark TIMESTAMP); local-timestamp-* has no zone (TIMESTAMP_NTZ).
        return TimestampType() if t.tz is not None else TimestampNTZType()
    if pa.types.is_time32(t):
        return IntegerType()  # time-millis: Spark has no time-of-day type by default; spark-avro reads the int
    if pa.types.is_time64(t):
        return LongType()  # time-micros, as spark-avro reads it
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(spark_type(t.value_type, f"{column}.element"), containsNull=True)
    if pa.types.is_map(t):
        return MapType(spark_type(t.key_type, f"{column}.key"), spark_type(t.item_type, f"{column}.value"),
                       valueContainsNull=True)
    if pa.types.is_struct(t):
        return StructType([StructField(f.name, spark_type(f.type, f"{column}.{f.name}"), True)
                           for f in t])
    raise SchemaError(f"column {column!r}: Arrow type {t} has no Spark type")


_SIMPLE_TYPES: dict[int, DataType] = {
    pa.bool_().id: BooleanType(), pa.int8().id: ByteType(), pa.int16().id: ShortType(),
    pa.int32().id: IntegerType(), pa.int64().id: LongType(), pa.float32().id: FloatType(),
    pa.float64().id: DoubleType(), pa.string().id: StringType(), pa.large_string().id: StringType(),
    pa.binary().id: BinaryType(), pa.large_binary().id: BinaryType(), pa.binary(1).id: BinaryType(),
    pa.date32().id: DateType(), pa.date64().id: DateType(), pa.null().id: NullType(),
}


def spark_schema(schema: pa.Schema) -> StructType:
    """A Hudi table's Arrow schema (meta columns first) as the Spark schema the source declares."""
    return StructType([StructField(f.name, spark_type(f.type, f.name), True) for f in schema])


def arrow_target(schema: StructType) -> pa.Schema:
    """The exact Arrow schema Spark expects batches in for `schema` (Spark compares it field by field)."""
    return to_arrow_schema(schema, timezone="UTC")


def to_spark_arrow(table: pa.Table, target: pa.Schema, source: str) -> pa.Table:
    """`table` (columns already in `target`'s order) cast to the Arrow types Spark expects."""
    if table.schema.equals(target):
        return table
    try:
        return table.rename_columns(target.names).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise SchemaError(f"{source}: cannot convert rows {table.schema} to the Spark schema {target}: {e}") from e


# ---- the data source ----------------------------------------------------------------------------------------


class HudiDataSource(DataSource):
    """`spark.read.format("hudi")`; see the module docstring for options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        """The schema of the query's rows (the scan plan's); `_hoodie_commit_time` carries the path comment, so that
        a catalog table created from it (`CREATE TABLE t USING hudi OPTIONS (path ...)`, whose options later reads
        lose) finds it."""
        opts = ReadOptions.parse_for_table(self.options)
        path = _require_path(opts.path, None)
        table = TABLES.load(path)
        if opts.cdc:
            return spark_schema(change_plan(table, opts).output_schema)
        schema = fix_query(table, opts).schema
        return with_path_comment(spark_schema(schema), table_location(table, path))

    def reader(self, schema: StructType) -> "DataSourceReader":
        opts = ReadOptions.parse_for_table(self.options, catalog_path(schema))
        table = TABLES.load(_require_path(opts.path, schema))
        if opts.cdc:
            return ChangeReader(table, opts, schema)
        return HudiReader(table, opts, schema)


class HudiMergeSource(HudiDataSource):
    """`HudiDataSource` as `hudi_merge`."""

    @classmethod
    def name(cls) -> str:
        return MERGE_FORMAT


def catalog_path(schema: StructType) -> str | None:
    """The table path a catalog table's schema carries in a column comment `hudi.path=<uri>`."""
    fields = sorted(schema.fields, key=lambda f: f.name != COMMIT_TIME)  # the first meta column first
    for f in fields:
        comment = (f.metadata or {}).get("comment") or ""
        if comment.startswith(PATH_COMMENT_PREFIX):
            return comment[len(PATH_COMMENT_PREFIX):].strip() or None
    return None


def table_location(table: HudiTable, path: str) -> str:
    """The path a catalog table records: a URI as given, a local path made absolute."""
    return str(path) if "://" in str(path) else table.base_path


def with_path_comment(schema: StructType, location: str) -> StructType:
    """`schema` with the comment `hudi.path=<location>` on `_hoodie_commit_time` (if the column is there)."""
    return StructType([
        StructField(f.name, f.dataType, f.nullable,
                    {**(f.metadata or {}), "comment": PATH_COMMENT_PREFIX + location})
        if f.name == COMMIT_TIME else f
        for f in schema.fields
    ])


def _require_path(path: str | None, schema: StructType | None) -> str:
    if path:
        return path
    found = catalog_path(schema) if schema is not None else None
    if found:
        return found
    raise HudiError(f"hudi source: no table path; use load(path), option('path', ...), or for a catalog table "
                    f"a comment '{PATH_COMMENT_PREFIX}<uri>' on column {COMMIT_TIME} (see create_catalog_table)")


# Slices read for their logged keys only (the merge half of a key split) yield few rows each: a task reads up to
# this many of them, one after the other, rather than paying a Python task's fixed cost for each.
LOGGED_SLICES_PER_TASK = 4


def pack_slices(slices: Sequence[FileSlice], logged_keys_only: AbstractSet[str]) -> list[list[FileSlice]]:
    """The slices of a read as Spark tasks: a slice merged whole alone, those read for their logged keys only (their
    file groups in `logged_keys_only`) `LOGGED_SLICES_PER_TASK` to a task."""
    logged = [s for s in slices if file_group_id(s) in logged_keys_only]
    whole = [[s] for s in slices if file_group_id(s) not in logged_keys_only]
    return whole + [logged[i:i + LOGGED_SLICES_PER_TASK] for i in range(0, len(logged), LOGGED_SLICES_PER_TASK)]


class SlicePartition(InputPartition):
    """One Spark input partition: file slices (base file and log files, with their paths), read one after the other;
    one, unless they are read for their logged keys only."""

    def __init__(self, file_slices: Sequence[FileSlice]) -> None:
        super().__init__(",".join(f"{s.partition_path}/{s.file_id}@{s.base_instant}" for s in file_slices))
        self.file_slices = tuple(file_slices)


class HudiReader(DataSourceReader):
    """Plans on the driver with the engine's scan plan; `read` runs on executors.

    Spark pickles the reader for the executors after `pushFilters` but *before* it calls `partitions()`, so the
    query is fixed in `__init__` (`fix_query`: instant, visibility, window, schema: all a task needs) and the
    slices are listed in `partitions()` (`list_slices`, with the pushed filters' pruning).
    """

    def __init__(self, table: HudiTable, opts: ReadOptions, schema: StructType) -> None:
        self.table = table
        self.plan = fix_query(table, opts)
        self.columns = resolve_columns(schema, self.plan.schema, table.base_path)
        self.target = arrow_target(schema)
        self.partition_filter: pc.Expression | None = None
        self.commit_time_bound: CommitTimeBound | None = None

    def __getstate__(self) -> dict[str, Any]:
        """What Spark ships to the tasks: the plan (instant, visibility, window, schema; no slice, each task gets
        its own), the columns and the Arrow target. The table (its timeline, commit metadata) stays with the planner,
        which calls `partitions()` on this object, not on a copy."""
        return {"plan": self.plan, "columns": self.columns, "target": self.target}

    # -- planning (driver) --
    def pushFilters(self, filters: list[Filter]) -> list[Filter]:
        """Keep filters on partition columns for pruning partitions, and lower bounds on `_hoodie_commit_time` for
        pruning file slices whose rows are all older; return all, so Spark still applies each to rows."""
        self.partition_filter, self.commit_time_bound = pruning(self.table, self.plan.schema, filters)
        return list(filters)

    def partitions(self) -> Sequence[InputPartition]:
        return [SlicePartition(group) for group in pack_slices(self.file_slices(), self.plan.query.logged_keys_only)]

    def file_slices(self) -> list[FileSlice]:
        """The slices this query reads, after pruning; for incremental, the file groups the range touched."""
        plan = list_slices(self.table, self.plan, filters=self.partition_filter,
                           commit_time_bound=self.commit_time_bound)
        return list(plan.slices)

    # -- reading (executors) --
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SlicePartition):
            return  # Spark's stand-in partition when a query has no slices
        names = [c for c, _ in self.columns]
        for file_slice in partition.file_slices:
            logged_keys_only = file_group_id(file_slice) in self.plan.query.logged_keys_only
            rows = self.plan.read_slice(file_slice, names, logged_keys_only=logged_keys_only)
            if rows.num_rows == 0:
                continue
            rows = to_spark_arrow(rows, self.target,
                                  f"file slice {file_slice.partition_path}/{file_slice.file_id}@{file_slice.base_instant}")
            yield from rows.to_batches()


# ---- the CDC query -------------------------------------------------------------------------------------------


def change_plan(table: HudiTable, opts: ReadOptions) -> ChangePlan:
    """The CDC query (`hoodie.datasource.query.incremental.format=cdc`) of `opts` on `table`."""
    return plan_changes(table, opts.begin_instant, opts.end, images=opts.cdc_images, table_uri=table.storage_uri)


class ChangePartition(InputPartition):
    """One Spark input partition of a CDC query: the splits of one file group, in commit order."""

    def __init__(self, splits: Sequence[ChangeSplit]) -> None:
        super().__init__(splits[0].file_group)
        self.splits = tuple(splits)


class ChangeReader(DataSourceReader):
    """A CDC query: planned on the driver (`hudi_engine.cdc_query.plan_changes`), one task per file group, each
    reading its splits with the plan alone (`read_changes`)."""

    def __init__(self, table: HudiTable, opts: ReadOptions, schema: StructType) -> None:
        self.plan = change_plan(table, opts)
        names = {n.lower(): n for n in self.plan.output_schema.names}
        missing = [f.name for f in schema.fields if f.name.lower() not in names]
        if missing:
            raise SchemaError(f"{table.base_path}: declared column(s) {missing} are not columns of the CDC query "
                              f"(columns: {self.plan.output_schema.names})")
        self.columns = [names[f.name.lower()] for f in schema.fields]
        self.target = arrow_target(schema)

    def __getstate__(self) -> dict[str, Any]:
        """The plan without its splits (each task gets its own in its partition)."""
        return {"plan": replace(self.plan, splits=()), "columns": self.columns, "target": self.target}

    def partitions(self) -> Sequence[InputPartition]:
        return [ChangePartition(group) for group in self.plan.file_groups()]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ChangePartition):
            return  # Spark's stand-in partition when a query has no splits
        rows = read_changes(self.plan, partition.splits)
        if rows.num_rows:
            yield from to_spark_arrow(rows.select(self.columns), self.target,
                                      f"CDC file group {partition.value}").to_batches()


def pruning(table: HudiTable, table_schema: pa.Schema,
            filters: Sequence[Filter]) -> tuple[pc.Expression | None, CommitTimeBound | None]:
    """What a query's Spark filters let the scan plan prune: partitions (`partition_filter`) and file slices
    (the tightest lower bound on `_hoodie_commit_time`)."""
    return (partition_filter(table, table_schema, filters),
            CommitTimeBound.tightest(map(commit_time_lower_bound, filters)))


def partition_filter(table: HudiTable, table_schema: pa.Schema, filters: Sequence[Filter]) -> pc.Expression | None:
    """The filters on partition columns as one Arrow expression over partition values, for pruning partitions
    (conservative: every filter is still applied to the rows); None when none of them prunes."""
    columns = _prunable_columns(table, table_schema)
    exprs = [e for e in (filter_expression(f, columns) for f in filters) if e is not None]
    if not exprs:
        return None
    expr = exprs[0]
    for e in exprs[1:]:
        expr = expr & e
    # Null and empty values both land in the default partition, whose path cannot tell them apart: keep it
    # whatever the filter says.
    for name in set(columns.values()):
        expr = expr | pc.field(name).is_null()
    return expr


def _prunable_columns(table: HudiTable, table_schema: pa.Schema) -> dict[str, str]:
    """Partition columns present in the rows, by lower-case name (Spark resolves names case-insensitively)."""
    cfg = table.config
    if any(k in (cfg.key_generator_class or "") for k in UNPRUNABLE_KEYGENS):
        return {}
    return {f.lower(): f for f in cfg.partition_fields if f in table_schema.names}


def resolve_columns(schema: StructType, table_schema: pa.Schema, where: str) -> list[tuple[str, str]]:
    """(table column, declared name) for each declared column: exact name first, then case-insensitively; `where`
    (the table's path) names the table in errors."""
    by_lower: dict[str, list[str]] = {}
    for n in table_schema.names:
        by_lower.setdefault(n.lower(), []).append(n)
    out = []
    for f in schema.fields:
        if f.name in table_schema.names:
            out.append((f.name, f.name))
            continue
        matches = by_lower.get(f.name.lower(), [])
        if len(matches) != 1:
            raise SchemaError(f"{where}: declared column {f.name!r} is "
                              f"{'ambiguous' if matches else 'not in the table'} (columns: {table_schema.names})")
        out.append((matches[0], f.name))
    return out


# ---- filters ------------------------------------------------------------------------------------------------

_COMPARISONS = {EqualTo: "__eq__", GreaterThan: "__gt__", GreaterThanOrEqual: "__ge__", LessThan: "__lt__",
                LessThanOrEqual: "__le__"}


def filter_expression(f: Filter, columns: Mapping[str, str]) -> pc.Expression | None:
    """A Spark filter on the given columns (lower-case name -> name) as an Arrow expression; None otherwise."""
    if isinstance(f, Not):
        child = filter_expression(f.child, columns)
        return None if child is None else ~child
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0].lower() not in columns:
        return None
    field = pc.field(columns[attribute[0].lower()])
    value: Any = getattr(f, "value", None)
    if type(f) in _COMPARISONS:
        return None if value is None else getattr(field, _COMPARISONS[type(f)])(value)
    if isinstance(f, EqualNullSafe):
        return field.is_null() if value is None else field == value
    if isinstance(f, In):
        values = [v for v in value if v is not None]
        return field.isin(values) if values else None
    if isinstance(f, IsNull):
        return field.is_null()
    if isinstance(f, IsNotNull):
        return field.is_valid()
    if isinstance(f, StringStartsWith):
        return pc.starts_with(field, pattern=value)
    if isinstance(f, StringEndsWith):
        return pc.ends_with(field, pattern=value)
    if isinstance(f, StringContains):
        return pc.match_substring(field, pattern=value)
    return None


_BOUND_FILTERS = {GreaterThan: False, GreaterThanOrEqual: True, EqualTo: True, EqualNullSafe: True}


def commit_time_lower_bound(f: Filter) -> CommitTimeBound | None:
    """A Spark filter `_hoodie_commit_time > | >= | = | IN ...` as a lower bound on commit times; None otherwise."""
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0].lower() != COMMIT_TIME:
        return None
    value: Any = getattr(f, "value", None)
    if type(f) in _BOUND_FILTERS:
        return None if value is None else CommitTimeBound(str(value), _BOUND_FILTERS[type(f)])
    if isinstance(f, In):
        values = [str(v) for v in value if v is not None]
        return CommitTimeBound(min(values), True) if values else None
    return None


# ---- registration and catalog tables ------------------------------------------------------------------------


def register_data_source(spark: SparkSession) -> None:
    """Make `spark.read.format("hudi")` and the SQL function `hudi_table_changes` available in `spark`
    (idempotent); executors checked and the engine shipped first (`executor_env`), since the source captures the
    session's Python files when it is registered."""
    from hudi_engine.spark.native import HudiPlanSource, native_enabled
    from hudi_engine.spark.save import register_writer
    from hudi_engine.spark.table_changes import register_table_changes

    ensure_executor_env(spark)
    # Without this Spark rejects a reader that implements pushFilters (DATA_SOURCE_PUSHDOWN_DISABLED).
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    if native_enabled(spark):
        # The JVM source answers `hudi`: a Python source of the same name would make every `hudi` read fail with
        # FOUND_MULTIPLE_DATA_SOURCES. It plans with `hudi_engine_plan` and merges with `hudi_merge`.
        spark.dataSource.register(HudiPlanSource)
        register_writer(spark)  # `df.write.format("hudi")` and SQL writes, planned by the JVM, run by this driver
    else:
        try:
            spark.dataSource.register(HudiDataSource)
        except Exception as e:  # pyspark's AnalysisException, whose import path moves between releases
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):
                raise
            # Another JVM source owns `hudi` (Apache Hudi's own jar, org.apache.hudi.DefaultSource): `hudi` reads
            # are its own; `read_table`, dbt's views and the merge half still run on `hudi_merge`.
    spark.dataSource.register(HudiMergeSource)
    register_table_changes(spark)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ddl_type(t: DataType) -> str:
    """Spark SQL DDL text of a type, nested field names quoted."""
    if isinstance(t, StructType):
        return "STRUCT<" + ", ".join(f"{_quote(f.name)}: {ddl_type(f.dataType)}" for f in t.fields) + ">"
    if isinstance(t, ArrayType):
        return f"ARRAY<{ddl_type(t.elementType)}>"
    if isinstance(t, MapType):
        return f"MAP<{ddl_type(t.keyType)}, {ddl_type(t.valueType)}>"
    if isinstance(t, NullType):
        return "VOID"
    return t.simpleString().upper()


def catalog_table_ddl(name: str, path: str, *, if_not_exists: bool = False) -> str:
    """`CREATE TABLE` text for a catalog table over the Hudi table at `path` (path in a column comment)."""
    table = HudiTable.load(path)
    schema = spark_schema(table.schema())
    location = table_location(table, path)
    columns = []
    for f in schema.fields:
        column = f"{_quote(f.name)} {ddl_type(f.dataType)}"
        if f.name == COMMIT_TIME:
            column += f" COMMENT {_sql_string(PATH_COMMENT_PREFIX + location)}"
        columns.append(column)
    if COMMIT_TIME not in schema.names:
        raise SchemaError(f"{path}: schema has no {COMMIT_TIME} column to carry the table path ({META_COLUMNS})")
    exists = " IF NOT EXISTS" if if_not_exists else ""
    return f"CREATE TABLE{exists} {name} (\n  " + ",\n  ".join(columns) + f"\n) USING {FORMAT}"


def create_catalog_table(spark: SparkSession, name: str, path: str, *, if_not_exists: bool = False) -> str:
    """Create catalog table `name` reading the Hudi table at `path`; returns the DDL it ran.

    `name` is used as written (quote it yourself if it needs quoting). The column list is the table's schema
    now; queries read the current snapshot with it.
    """
    register_data_source(spark)
    ddl = catalog_table_ddl(name, path, if_not_exists=if_not_exists)
    spark.sql(ddl)
    return ddl
