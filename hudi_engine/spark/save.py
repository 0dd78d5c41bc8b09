"""Saving through Spark's writer API and Spark SQL: `df.write.format("hudi")`, `saveAsTable`, CTAS, INSERT, UPDATE,
DELETE FROM and MERGE INTO (docs/spark-sql.md).

    df.write.format("hudi").options(**hudi_options).mode("append").save(path)
    last_write_result()                     # the WriteResult of this driver's last such write

The native component (`jvm/`: `HudiWriteRule` and the SQL commands) plans these writes on the JVM and hands each
one, as a DataFrame with its path, options and save mode, to `PythonWriter.write` here, a py4j callback that
`register_data_source` registers (as pyspark's `foreachBatch` does). The callback runs exactly
`hudi_engine.spark.write(df, path, options)`: the same checks, commit and parallelism as a call from Python. What
the save mode and the SQL statement mean is decided here, as Hudi gives them meaning:

| save mode | no table at the path | a Hudi table at the path |
|---|---|---|
| `append` | the configured operation | the configured operation (`hoodie.datasource.write.operation`, default `upsert`) |
| `overwrite` | the configured operation, else `insert_overwrite_table` | `insert_overwrite_table` (or a configured `insert_overwrite`); any other configured operation is refused |
| `errorifexists` (Spark's default) | the configured operation | refused |
| `ignore` | the configured operation | nothing is written |

A refusal is the engine's error message, raised by the JVM as one `IllegalArgumentException` naming the table.
"""
from __future__ import annotations

import dataclasses
import json
import traceback
from collections.abc import Callable, Mapping
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

import pyarrow as pa
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructField, StructType, _parse_datatype_json_string

from hudi_engine.column_change import added_columns_change, placed
from hudi_engine.config import hudi_keys
from hudi_engine.config import keys as K
from hudi_engine.config.option import ConfigOption
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS, arrow_to_avro_schema, schema_to_json, to_create_schema
from hudi_engine.spark.spark_types import arrow_target
from hudi_engine.table import HudiTable
from hudi_engine.table_config import CREATE_SCHEMA, TableConfig
from hudi_engine.write.commit import create_table as create_empty_table
from hudi_engine.write.write_result import WriteResult

# What the JVM hands over for a SQL write besides Hudi's own options (jvm/SqlTable.scala, `HudiWriteNames`).
TABLE_PROPERTIES = "hudi_engine.sql.table_properties."
PARTITION_COLUMNS = "hudi_engine.sql.partition_columns"
SQL_TABLE_NAME = "hudi_engine.sql.table_name"
SQL_DATABASE = "hudi_engine.sql.database"
STATEMENT = "hudi_engine.sql.statement"
ASSIGNED_COLUMNS = "hudi_engine.sql.assigned_columns"  # the columns an UPDATE or MERGE sets
MERGE_KEYS = "hudi_engine.sql.merge_keys"  # the target columns a MERGE's ON clause equates
# "true": the rows' `_hoodie_is_deleted` only flags the keys a MERGE's delete clauses delete; not a table column
DELETE_MARKER = "hudi_engine.sql.delete_marker"
ALTER_CHANGE = "hudi_engine.sql.alter_change"  # ALTER TABLE RENAME / DROP / ALTER COLUMN TYPE: the change, JSON
ADD_POSITIONS = "hudi_engine.sql.add_positions"  # ADD COLUMNS ... FIRST / AFTER: [[column, after or null], ...], JSON
# Hudi's Spark SQL: the operation of INSERT INTO (Hudi 0.14+: `insert`).
INSERT_INTO_OPERATION = "hoodie.spark.sql.insert.into.operation"

SAVE_MODES = ("append", "overwrite", "errorifexists", "ignore")


def last_write_result(spark: SparkSession | None = None) -> WriteResult | None:
    """The `WriteResult` of the last write `df.write.format("hudi")` or Spark SQL ran in `spark`'s JVM (default: the
    active session). None: none yet, or the last one wrote nothing (save mode `ignore` on an existing table)."""
    jvm = (spark or SparkSession.active()).sparkContext._jvm
    assert jvm is not None
    found = json.loads(jvm.hudiengine.spark.Writes.lastResult())
    return WriteResult(**found) if found is not None else None


def local_path(path: str) -> str:
    """A `file:` URI as Spark's catalog gives a location (`file:/x`, `file:///x`) as the local path; others as given."""
    if path.startswith("file:"):
        return unquote(urlparse(path).path)
    return path


def table_exists(path: str) -> bool:
    return TableConfig.exists(TableLocation.of(path))


def save_operation(mode: str, exists: bool, options: Mapping[str, Any], target: str, path: str) -> str | None:
    """The operation a save runs (None: nothing to write), or a ConfigError naming the table and the setting."""
    mode = mode.lower()
    if mode not in SAVE_MODES:
        raise ConfigError(f"{target}: save mode {mode!r} is not one of {', '.join(SAVE_MODES)}")
    configured = _given(options, K.OPERATION)
    if configured is not None and configured.lower() not in K.OPERATION.choices:
        raise ConfigError(f"{target}: {K.OPERATION.key}={configured!r} is not one of {', '.join(K.OPERATION.choices)}")
    operation = configured.lower() if configured is not None else None
    if mode == "overwrite":
        if operation in (None, "insert_overwrite_table", "insert_overwrite"):
            return operation or "insert_overwrite_table"
        if not exists:
            return operation
        raise ConfigError(
            f"{target}: save mode overwrite replaces the table's rows, which contradicts {K.OPERATION.key}="
            f"{operation}; use mode('append') for {operation}, or leave the operation unset (insert_overwrite_table)")
    if exists and mode == "errorifexists":
        raise ConfigError(f"{target}: a Hudi table already exists at {path} and the save mode is errorifexists "
                          "(Spark's default, and CREATE TABLE ... AS SELECT's); use mode('append') to write to it, "
                          "mode('overwrite') to replace its rows, or INSERT INTO / INSERT OVERWRITE its catalog table")
    if exists and mode == "ignore":
        return None
    return operation or K.OPERATION.default


def _given(options: Mapping[str, Any], option: ConfigOption) -> str | None:
    names = {option.key, *option.aliases}
    for k, v in options.items():
        if k in names and v is not None and str(v).strip():
            return str(v).strip()
    return None


# Hudi's Spark SQL short names (HoodieOptionConfig of Hudi 1.2, keys in any case) and the options they stand for, in
# TBLPROPERTIES and OPTIONS alike; `preCombineField` is 1.x's older name of `orderingFields`.
_SQL_SHORT_NAMES = {"primarykey": K.RECORD_KEY_FIELDS.key, "orderingfields": K.PRECOMBINE_FIELD.key,
                    "precombinefield": K.PRECOMBINE_FIELD.key, "type": K.TABLE_TYPE.key,
                    "payloadclass": K.PAYLOAD_CLASS.key, "recordmergemode": "hoodie.record.merge.mode",
                    "recordmergestrategyid": "hoodie.record.merge.strategy.id"}
_SQL_TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ", "copy_on_write": "COPY_ON_WRITE",
                    "merge_on_read": "MERGE_ON_READ"}
_DECLARED = {k: o for o in K.WRITE_OPTIONS for k in o.all_keys}


def _canonical(key: str) -> str:
    """The one key of an option Hudi spells several ways (a write key, its table-config key, older names)."""
    declared = _DECLARED.get(key)
    if declared is not None:
        return declared.key
    refusal = hudi_keys.REFUSED_BY_KEY.get(key)
    return refusal.key if refusal is not None else key


def _same_value(key: str, a: str, b: str) -> bool:
    declared = _DECLARED.get(key)
    try:
        return bool(declared.parse(a) == declared.parse(b)) if declared is not None else \
            a.strip().lower() == b.strip().lower()
    except ConfigError:
        return False


def _one_per_option(given: list[tuple[str, str, str]], target: str) -> dict[str, str]:
    """(how the user wrote it, key, value) as options, one key per option: two spellings of one option with
    different values (`type='cow'` and `hoodie.table.type='MERGE_ON_READ'`) are refused naming both."""
    out: dict[str, str] = {}
    first: dict[str, tuple[str, str]] = {}
    for shown, key, value in given:
        canonical = _canonical(key)
        if canonical in first:
            shown_before, value_before = first[canonical]
            if not _same_value(canonical, value_before, value):
                raise ConfigError(f"{target}: {shown_before} and {shown} contradict each other (both set "
                                  f"{canonical}); set one of them")
            continue
        first[canonical] = (shown, value)
        out[canonical if key in _DECLARED else key] = value  # a refused key keeps its spelling for the refusal
    return out


def _sql_option(key: str, value: str, target: str) -> tuple[str, str] | None:
    """A TBLPROPERTIES or OPTIONS entry as a write option: Hudi's keys as given, a short name as the key it stands
    for; None for what is not Hudi's (catalog properties such as `comment`)."""
    short = _SQL_SHORT_NAMES.get(key.lower())
    if short == K.TABLE_TYPE.key:
        if value.strip().lower() not in _SQL_TABLE_TYPES:
            raise ConfigError(f"{target}: TBLPROPERTIES {key}={value!r} is not cow or mor")
        return short, _SQL_TABLE_TYPES[value.strip().lower()]
    if short is not None:
        return short, value
    return (key, value) if key.startswith("hoodie.") else None


def sql_write_options(options: Mapping[str, str], exists: bool, target: str) -> tuple[dict[str, str], str]:
    """The write options and save mode of a SQL statement on a catalog table (what `jvm/SqlTable.scala` hands over:
    the session's `hoodie.*` settings, the table's OPTIONS, its TBLPROPERTIES under `TABLE_PROPERTIES`, PARTITIONED
    BY, its name, the statement). TBLPROPERTIES win over OPTIONS and the session (Hudi's ProvidesHoodieConfig)."""
    plain: list[tuple[str, str, str]] = []
    props: list[tuple[str, str, str]] = []
    for k, v in options.items():
        if k.startswith(TABLE_PROPERTIES):
            name = k[len(TABLE_PROPERTIES):]
            found = _sql_option(name, v, target)
            if found is not None:
                props.append((f"TBLPROPERTIES {name}={v!r}", *found))
        elif not k.startswith("hudi_engine.sql."):
            found = _sql_option(k, v, target) if k.lower() in _SQL_SHORT_NAMES else (k, v)
            plain.append((f"{k}={v!r}", *found))  # type: ignore[misc]
    table_level = _one_per_option(props, target)
    overridden = {_canonical(k) for k in table_level}
    out = {k: v for k, v in _one_per_option(plain, target).items() if _canonical(k) not in overridden}
    out.update(table_level)
    statement = options.get(STATEMENT, "")
    if not exists:
        # A table Hudi's Spark SQL creates: named after the catalog entry, Hive-style partition folders.
        out.setdefault(K.TABLE_NAME.key, options.get(SQL_TABLE_NAME, ""))
        out.setdefault(K.DATABASE_NAME.key, options.get(SQL_DATABASE, ""))
        out.setdefault(K.HIVE_STYLE_PARTITIONING.key, "true")
        if options.get(PARTITION_COLUMNS):
            out.setdefault(K.PARTITION_FIELDS.key, options[PARTITION_COLUMNS])
    if statement == "create_table_as_select":
        out.setdefault(K.OPERATION.key, "bulk_insert")
        return out, "errorifexists"
    if statement == "replace_table_as_select":
        # `mode("overwrite").saveAsTable(t)` of an existing table: Spark dropped the (external) catalog entry first;
        # the Hudi table at its location keeps its timeline and gets its rows replaced, as INSERT OVERWRITE does.
        if exists:
            out.setdefault(K.OPERATION.key, "insert_overwrite_table")
            return out, "overwrite"
        out.setdefault(K.OPERATION.key, "bulk_insert")
        return out, "errorifexists"
    if statement == "insert_into":
        # Hudi's ProvidesHoodieConfig: a configured operation wins, else hoodie.spark.sql.insert.into.operation.
        into = out.pop(INSERT_INTO_OPERATION, "")
        out[K.OPERATION.key] = out.get(K.OPERATION.key) or into or "insert"
        return out, "append"
    if statement == "insert_overwrite":
        out[K.OPERATION.key] = "insert_overwrite_table"
        return out, "overwrite"
    if statement == "insert_overwrite_partition":
        out[K.OPERATION.key] = "insert_overwrite"
        return out, "overwrite"
    if statement == "alter_add_columns":
        out[K.OPERATION.key] = "insert"  # of no rows: the commit records the widened schema (WriteConfig.alter_schema)
        return out, "append"
    if statement in ("update", "delete", "merge", "merge_delete"):
        out[K.OPERATION.key] = "upsert" if statement in ("update", "merge") else "delete"
        return out, "append"
    return out, ""  # save_as_table: the DataFrame writer's own mode


def check_assignments(config: TableConfig, assigned: str, statement: str, target: str) -> None:
    """Hudi's Spark SQL refuses to change a record's key or partition: an UPDATE (or MERGE's update) may not set
    the record key fields or the partition fields of the table's hoodie.properties (`config`)."""
    columns = [c for c in assigned.split(",") if c]
    if not columns:
        return
    fixed = {f.lower(): (f, K.RECORD_KEY_FIELDS.key) for f in config.record_key_fields}
    fixed |= {f.lower(): (f, K.PARTITION_FIELDS.key) for f in config.partition_fields}
    for c in columns:
        if c.lower() in fixed:
            field, key = fixed[c.lower()]
            what = "record key" if key == K.RECORD_KEY_FIELDS.key else "partition"
            raise ConfigError(f"{target}: {statement.split('_')[0].upper()} ... SET {c}: {field} is the table's {what} field "
                              f"({key} in hoodie.properties), which Hudi does not change for a stored record; "
                              "delete the rows and insert them with the new value instead")


def check_merge_keys(config: TableConfig, keys: str, target: str) -> None:
    """Hudi's MERGE INTO finds a source row's stored record by its record key: the ON clause's equalities must name
    exactly the table's record key fields (`config`: its hoodie.properties)."""
    record_key = list(config.record_key_fields)
    if not record_key:  # keyless: the join matched the stored rows, whose keys the write keeps (docs/keyless.md)
        return
    on = [k for k in keys.split(",") if k]
    if sorted(k.lower() for k in on) != sorted(k.lower() for k in record_key):
        raise ConfigError(f"{target}: MERGE INTO ... ON: the ON clause equates {', '.join(on) or 'no column'}, but Hudi "
                          f"matches rows by the table's record key ({K.RECORD_KEY_FIELDS.key}="
                          f"{','.join(record_key) or '(none: a keyless table)'}); write ON as target.<key> = "
                          "source.<column> for each record key field")


def create_table(schema: pa.Schema, path: str, options: Mapping[str, str], exists: bool, target: str) -> None:
    """`CREATE TABLE t (columns) USING hudi ...` without AS SELECT, as Hudi's CreateHoodieTableCommand: a new empty
    table (hoodie.properties, the columns as its create schema, no instant); at a location that holds a Hudi table,
    nothing is written, and columns, PARTITIONED BY or TBLPROPERTIES that contradict its hoodie.properties are
    refused."""
    opts, _ = sql_write_options(options, exists, target)
    location = TableLocation.of(path)
    if exists:
        _check_existing(TableConfig.load(location), schema, opts, options, target, path)
        return
    if not schema.names:
        raise ConfigError(f"{target}: CREATE TABLE without columns needs a Hudi table at its location, and {path} "
                          "holds none; list the columns, or CREATE TABLE ... AS SELECT")
    config = WriteConfig.from_options(opts, path)
    missing = [f"{what} {f}" for what, fields in (("record key field", config.keys.record_key_fields),
                                                  ("partition field", config.keys.partition_field_names),
                                                  ("preCombineField", [config.merge.precombine_field] if
                                                   config.merge.precombine_field else []))
               for f in fields if f not in schema.names]
    if missing:
        raise ConfigError(f"{target}: CREATE TABLE: {', '.join(missing)} is not among the columns "
                          f"({', '.join(schema.names)})")
    avro = arrow_to_avro_schema(schema, config.table_name, with_meta=False)
    table_config = config.new_table_config(path)
    table_config = table_config.with_props({CREATE_SCHEMA: schema_to_json(to_create_schema(avro))})
    try:
        create_empty_table(location, table_config)
    except HudiError as e:
        raise ConfigError(f"{target}: CREATE TABLE: {e}") from None


def _added_before_partition_columns(df: DataFrame, table: HudiTable) -> DataFrame:
    """ALTER TABLE ADD COLUMNS's schema as Hudi's AlterHoodieTableAddColumnsCommand orders it: the new columns go
    before the partition columns that end the table's columns (Spark SQL's tables keep those last, and INSERT maps
    its values by that order); at the end where the partition columns are elsewhere (a DataFrame write's table)."""
    current = [n for n in table.schema().names if n not in META_COLUMNS]
    partition = {f.split(":")[0] for f in table.config.partition_fields}
    existing = [c for c in df.columns if c in current]
    added = [c for c in df.columns if c not in current]
    tail = 0
    while tail < len(existing) and existing[len(existing) - 1 - tail] in partition:
        tail += 1
    cut = len(existing) - tail
    return df.select(*existing[:cut], *added, *existing[cut:])


def _check_existing(config: TableConfig, schema: pa.Schema, opts: Mapping[str, str], options: Mapping[str, str],
                    target: str, path: str) -> None:
    """The CREATE TABLE's columns and settings against the table's hoodie.properties: any contradiction refused."""
    problems = []
    stated = [(K.RECORD_KEY_FIELDS.key, "primaryKey", ",".join(config.record_key_fields)),
              (K.PRECOMBINE_FIELD.key, "preCombineField", config.precombine_field or ""),
              (K.TABLE_TYPE.key, "type", config.table_type)]
    props = {k[len(TABLE_PROPERTIES):].lower(): v for k, v in options.items() if k.startswith(TABLE_PROPERTIES)}
    for key, prop, have in stated:
        given = opts.get(key)
        if given is not None and given.replace(" ", "").lower() != have.lower():
            problems.append(f"TBLPROPERTIES {prop}={props.get(prop.lower(), given)!r}, the table's is {have!r} "
                            f"({key} in hoodie.properties)")
    problems += [str(c) for c in WriteConfig.from_options(opts, path).contradictions(config)
                 if c.key not in {key for key, _, _ in stated}]
    partitions = options.get(PARTITION_COLUMNS, "")
    if partitions and partitions.split(",") != list(config.partition_fields):
        problems.append(f"PARTITIONED BY ({partitions}), the table's partition fields are "
                        f"({', '.join(config.partition_fields) or 'none'})")
    if schema.names:
        table = HudiTable.load(path).schema()
        data = pa.schema([f for f in table if f.name not in META_COLUMNS])
        if [_column(f) for f in schema] != [_column(f) for f in data]:
            problems.append(f"the columns ({', '.join(f'{f.name} {f.type}' for f in schema)}) are not the table's "
                            f"({', '.join(f'{f.name} {f.type}' for f in data)})")
    if problems:
        raise ConfigError(f"{target}: CREATE TABLE at {path}, which holds a Hudi table: " + "; ".join(problems) +
                          "; leave out the columns and TBLPROPERTIES to take the table as it is")


def _column(field: pa.Field) -> tuple[str, pa.DataType]:
    """A column as CREATE TABLE compares it: the name in any case; a timestamp's zone left aside (Spark's session
    zone or UTC: the same instants)."""
    t = field.type
    if pa.types.is_timestamp(t) and t.tz is not None:
        t = pa.timestamp(t.unit, "UTC")
    return field.name.lower(), t


def save(df: DataFrame, path: str, options: Mapping[str, str], mode: str, target: str) -> WriteResult | None:
    """One save through Spark's writer API or SQL: the save mode (and statement) resolved to an operation, then
    exactly `hudi_engine.spark.write`."""
    from hudi_engine.spark.writer import write

    path = local_path(path)
    exists = table_exists(path)
    opts: dict[str, Any] = dict(options)
    if options.get(STATEMENT) == "create_table":
        zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
        create_table(to_arrow_schema(df.schema, timezone=zone), path, options, exists, target)
        return None
    if options.get(STATEMENT) == "truncate":
        HudiTable.load(path).truncate()
        return None
    # The table at `path`, loaded once for the statement's checks and its write.
    table = _readable(path) if exists else None
    if STATEMENT in options:
        opts, sql_mode = sql_write_options(options, exists, target)
        mode = sql_mode or mode
        if table is not None:  # a table this engine does not read is refused by its write, below
            check_assignments(table.config, options.get(ASSIGNED_COLUMNS, ""), options[STATEMENT], target)
            if MERGE_KEYS in options:
                check_merge_keys(table.config, options[MERGE_KEYS], target)
    operation = save_operation(mode, exists, opts, target, path)
    if operation is None:
        return None
    for alias in K.OPERATION.aliases:
        opts.pop(alias, None)
    opts[K.OPERATION.key] = operation
    if options.get(STATEMENT) == "alter_add_columns":
        config = dataclasses.replace(WriteConfig.from_options(opts, path), alter_schema=True)
        loaded = table if table is not None else HudiTable.load(path)
        positions = [(c, a) for c, a in json.loads(options.get(ADD_POSITIONS) or "[]")]
        if positions:
            return _add_placed_columns(df, path, loaded, config, positions, target)
        if config.schema_on_read:  # Hudi's AlterTableCommand: the new columns get ids, a history starts
            config = dataclasses.replace(config, schema_change=added_columns_change(loaded))
        return write(_added_before_partition_columns(df, loaded), path, config, table=table)
    if options.get(STATEMENT) == "alter_columns":
        return alter_columns(table if table is not None else HudiTable.load(path), json.loads(options[ALTER_CHANGE]),
                             opts)
    marker = options.get(DELETE_MARKER) == "true"
    keyless = table is not None and not table.config.record_key_fields
    if options.get(STATEMENT) in ("update", "delete") or (keyless and options.get(STATEMENT) in ("merge", "merge_delete")):
        # Rows read from the table: recorded as prepped; a keyless table's rows keep their stored keys.
        config = dataclasses.replace(WriteConfig.from_options(opts, path), prepped=True)
        return write(df, path, config, table=table, delete_marker=marker)
    return write(df, path, opts, table=table, delete_marker=marker)


def alter_columns(table: HudiTable, spec: Mapping[str, Any], options: Mapping[str, Any]) -> WriteResult:
    """The change `jvm/AlterColumns.scala` hands over (`kind`: rename, drop, type, position or add; `columns` (a
    struct member by its full name, `s.a`); `new_name` (a rename's new name, a position's AFTER column, "" for
    FIRST); `new_type`, Spark's JSON of a data type; an add's `new_types` and `afters`, column by column) made by
    the table (`hudi_engine.column_change` checks it)."""
    kind, columns = spec["kind"], list(spec["columns"])
    if kind == "position":
        return table.move_column(columns[0], spec["new_name"] or None, options=options)
    if kind == "add":  # struct members, with other columns (ADD COLUMNS (s.c int [AFTER b], ...)): one change
        types = [arrow_target(StructType([StructField("c", _parse_datatype_json_string(t))])).field(0).type
                 for t in spec["new_types"]]
        return table.add_columns([(c, t, a or None) for c, t, a in zip(columns, types, spec["afters"], strict=True)],
                                 options=options)
    if kind == "rename":
        return table.rename_column(columns[0], spec["new_name"], options=options)
    if kind == "drop":
        return table.drop_columns(columns, options=options)
    spark_type = _parse_datatype_json_string(spec["new_type"])
    arrow = arrow_target(StructType([StructField(columns[0], spark_type)])).field(0).type
    return table.alter_column_type(columns[0], arrow, options=options)


def _add_placed_columns(df: DataFrame, path: str, table: HudiTable, config: WriteConfig,
                        positions: list[tuple[str, str | None]], target: str) -> WriteResult:
    """ADD COLUMNS with FIRST / AFTER (Hudi's AlterTableCommand with a ColumnPositionChange, schema evolution on read
    only): the new columns numbered in the statement's order, then placed; the commit's schema in that order."""
    from hudi_engine.spark.writer import write

    where = f"{target}: ALTER TABLE ADD COLUMNS"
    if not config.schema_on_read:
        raise ConfigError(f"{where}: a column's position (FIRST / AFTER) needs Hudi's schema evolution on read; set "
                          f"{K.SCHEMA_ON_READ.key}=true (SET, or the table's TBLPROPERTIES), or leave the position out. "
                          "Nothing was written")
    names = placed(_added_before_partition_columns(df, table).columns, positions, where)
    zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
    writer = arrow_to_avro_schema(to_arrow_schema(df.schema, timezone=zone), table.config.name, with_meta=False)
    config = dataclasses.replace(config, schema_change=added_columns_change(table, writer, names))
    return write(df.select(*names), path, config, table=table)


def _readable(path: str) -> HudiTable | None:
    """The table at `path` as this engine reads it; None for one it does not read (a base file format other than
    parquet): its write refuses it then (`WriteClient.open`), naming why, as a write by path does."""
    try:
        return HudiTable.load(path)
    except HudiError:
        return None


class PythonWriter:
    """The py4j callback behind `hudiengine.spark.PythonWriter`: the JVM's writes, run by this driver. Errors come
    back as their message (the JVM raises it), so that Spark's plumbing adds no Python stack trace."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def write(self, jdf: Any, path: str, joptions: Any, mode: str, target: str) -> str:
        def saved() -> dict:
            jsession = jdf.sparkSession()
            session = self.spark if jsession.equals(self.spark._jsparkSession) else \
                SparkSession(self.spark.sparkContext, jsession)
            result = save(DataFrame(jdf, session), path, {str(k): str(v) for k, v in dict(joptions).items()}, mode,
                          target)
            return {"result": dataclasses.asdict(result) if result is not None else None}

        def refusal(e: Exception) -> str | None:
            if isinstance(e, HudiError):
                text = str(e)
                return text if target in text or path in text else f"{target}: {text}"
            if isinstance(e, PySparkException):  # Spark's own error in the rows' query (already says where)
                return f"{target}: {e}"
            return None

        return json_answer(saved, target, refusal)

    class Java:
        implements: ClassVar[list[str]] = ["hudiengine.spark.PythonWriter"]


def json_answer(work: Callable[[], Any], where: str, refusal: Callable[[Exception], str | None]) -> str:
    """A py4j callback's answer to the JVM: `work()` as JSON, or `{"error": ...}`, the message `refusal` makes of
    an expected error (the JVM raises it without a Python stack trace), else the error with where it happened here."""
    try:
        return json.dumps(work())
    except Exception as e:  # noqa: BLE001 - every error goes back to the JVM, which raises it
        error = refusal(e)
        if error is None:
            error = f"{where}: {type(e).__name__}: {e}\n{traceback.format_exc()}"
    return json.dumps({"error": error})


def register_callback(spark: SparkSession, holder: str, callback: Callable[[SparkSession], Any]) -> None:
    """Register `callback(spark)` with the native component's JVM object `hudiengine.spark.<holder>` (its
    `register`), as pyspark's `foreachBatch` registers its function; once per JVM."""
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = spark.sparkContext._gateway
    assert gateway is not None
    ensure_callback_server_started(gateway)
    target = getattr(gateway.jvm.hudiengine.spark, holder)
    if not target.registered():
        target.register(callback(spark))


def register_writer(spark: SparkSession) -> None:
    """Let the native component hand this driver its writes (a session started with `native_conf`); once per JVM."""
    register_callback(spark, "Writes", PythonWriter)
