"""The row check of every Spark write: a row whose record key is null or empty, or whose ordering (precombine) value
is null where the payload orders by it, fails the job that reads it, naming the field and showing the row."""
from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.spark.sql_text import name, string

_NEVER_EMPTY = (T.NumericType, T.BooleanType, T.DateType, T.TimestampType, T.TimestampNTZType)


def check_rows(df: DataFrame, config: WriteConfig) -> Column | None:
    """An expression that fails the job on a row whose record key is null or empty, or whose ordering (precombine)
    value is null where the payload orders by it, naming the field and showing the row (None: nothing to check).
    Java Hudi refuses a null ordering value too; a user payload decides for itself. Built as SQL text (`sql_text`):
    one call to the JVM."""
    checks = _checks(df, config)
    if not checks:
        return None
    # The prefix lets unwrap_task_error give back the engine's error; split in two so that a plan printed in some
    # other error does not read as this one.
    cases = " ".join(f"WHEN {bad} THEN raise_error(concat('hudi_engine.errors.', {string(what)}, "
                     f"to_json(struct(*)), {string(fix + chr(10) * 2)}))" for bad, what, fix in checks)
    return F.expr(f"CASE {cases} ELSE true END")


def bad_rows(df: DataFrame, config: WriteConfig) -> DataFrame | None:
    """The rows `check_rows` fails on, failing the job on the first (None: nothing to check). A plain predicate
    first, so that a scan skips what its statistics clear (a cached relation's batches, parquet row groups without
    nulls): much cheaper than the check over every row."""
    bad = bad_row(df, config)
    return None if bad is None else checked(df.filter(bad), config)


def bad_row(df: DataFrame, config: WriteConfig) -> Column | None:
    """A plain predicate true on the rows `check_rows` fails on, reading the checked columns only (None: nothing to
    check)."""
    checks = _checks(df, config)
    return F.expr(" OR ".join(f"({bad})" for bad, _, _ in checks)) if checks else None


def collected_rows_pass(rows: pa.Table, df: DataFrame, config: WriteConfig) -> bool:
    """Whether no row of `rows` (`df` collected as it is) can fail `check_rows`, decided in Python: then the
    collect needs no check in Spark. False where a check could fail, or for a key field of a type whose text Spark
    may spell empty (only an exact answer skips Spark's check, which fails naming the row)."""
    types = {f.name: f.dataType for f in df.schema.fields}
    fields, ordering = _checked_fields(types, config)
    if any(not isinstance(types[f], (*_NEVER_EMPTY, T.StringType, T.BinaryType)) for f in fields):
        return False
    if ordering is not None and rows.column(ordering).null_count:
        return False
    if not fields:
        return True
    missing = None
    for f in fields:
        values = rows.column(f)
        gone = pc.is_null(values)
        if not isinstance(types[f], _NEVER_EMPTY):
            gone = pc.or_kleene(gone, pc.equal(pc.binary_length(values), 0))
        missing = gone if missing is None else pc.and_kleene(missing, gone)
    return not pc.any(missing).as_py()


def _checked_fields(types: Mapping[str, T.DataType], config: WriteConfig) -> tuple[list[str], str | None]:
    """The record key fields every row needs (one of them non-empty), and the ordering field every row needs a value
    of (None: not checked)."""
    fields = [f for f in config.keys.record_key_fields if f in types]
    ordering = config.merge.precombine_field
    if ordering in types and config.operation is not Operation.DELETE and config.merge.payload.custom is None \
            and not config.keys.auto_generated:  # a keyless table never combines: its ordering value is unused
        return fields, ordering
    return fields, None


def _checks(df: DataFrame, config: WriteConfig) -> list[tuple[str, str, str]]:
    """(SQL condition of a bad row, error text before the row, error text after it), per check."""
    checks: list[tuple[str, str, str]] = []
    types = {f.name: f.dataType for f in df.schema.fields}
    fields, ordering = _checked_fields(types, config)
    if fields:
        # Only a string or binary value can spell an empty key: others skip a per-row cast to string.
        missing = [f"{name(f)} IS NULL" if isinstance(types[f], _NEVER_EMPTY) else
                   f"({name(f)} IS NULL OR cast({name(f)} as string) = '')" for f in fields]
        what = (f"record key field {fields[0]!r} is null or empty" if len(fields) == 1 else
                f"record key fields {list(fields)} are all null or empty")
        generator = config.keys.key_generator_class.rsplit(".", 1)[-1]
        checks.append((" AND ".join(missing), f"KeyGeneratorError: {what} in row ",
                       f"; {generator} needs a non-empty key in every row"))
    if ordering is not None:
        checks.append((f"{name(ordering)} IS NULL",
                       f"WriteError: precombine field {ordering!r} (hoodie.datasource.write.precombine.field) is null "
                       "in row ",
                       f"; {config.merge.payload.short_name} picks between versions of a key by it, so every row "
                       "needs a value (fill it in the query, or write without an ordering field)"))
    return checks


def checked(df: DataFrame, config: WriteConfig) -> DataFrame:
    """`df` failing on its first bad row (see `check_rows`), in whatever stage reads it. A filter, not a guard on a
    column: `CASE WHEN check THEN col END` folds to null, check and all, where the optimizer sees `col` is a null
    literal (`select cast(null as bigint) as id ...`)."""
    check = check_rows(df, config)
    return df if check is None else df.filter(check)


def check_first(rows: DataFrame | None, counted: Column) -> None:
    """One Spark job that checks every row first (`bad_rows`, or the key generator's UDF over every row where Spark
    SQL does not spell the keys), where no later stage checks them before any task writes (bulk_insert without a
    shuffle) or to show the row a cheaper pass found (the two-pass write's count by partition, `bad_row`): a bad row
    fails the write before any file exists. Bulk_insert's write tasks check again (an input that is not deterministic
    then fails mid-write, rolled back)."""
    if rows is not None:
        rows.agg(F.count(counted)).collect()  # `counted`: a column the check needs computed (the UDF's key)
