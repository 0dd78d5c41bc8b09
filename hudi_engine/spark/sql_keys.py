"""Record keys and partition paths as Spark SQL expressions, for the key generators and column types where Spark's
own string cast spells a value exactly as Hudi does (`hudi_engine.partition_path.value_strings`): strings, integers,
booleans and dates, one record key field, fields that are top-level columns, no URL encoding.

A write then routes, samples and sorts its records by key in the JVM, and only its write tasks run the Python key
generator (`keygen.py`, `executor.keyed_batches`), once per record. Any other case returns None and the key generator
runs in the map tasks too; both give the same strings (tests/spark/test_sql_keys.py compares them).
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.keygen import (
    AUTO_KEY_COLUMN,
    AUTO_KEY_SEPARATOR,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    ComplexKeyGenerator,
    KeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
)
from hudi_engine.partition_path import DEFAULT_PARTITION, PATH_SEPARATOR
from hudi_engine.spark.sql_text import name, string

_EXACT_TYPES = (T.StringType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BooleanType, T.DateType)


def sql_keys(keygen: KeyGenerator, schema: T.StructType) -> tuple[Column, Column] | None:
    """(record key, partition path) of every row as Spark expressions, or None (see `sql_key_text`)."""
    text = sql_key_text(keygen, schema)
    return None if text is None else (F.expr(text[0]), F.expr(text[1]))


def sql_key_text(keygen: KeyGenerator, schema: T.StructType) -> tuple[str, str] | None:
    """(record key, partition path) of every row as Spark SQL text (`sql_text`), or None where only the Python key
    generator spells them right. Null or empty single keys are left to the write's row check
    (`row_check.check_rows`)."""
    cls = type(keygen)
    if cls not in (SimpleKeyGenerator, ComplexKeyGenerator, NonpartitionedKeyGenerator):
        return None  # the others (timestamp-based, custom, global delete) spell keys their own way
    types = {f.name: f.dataType for f in schema.fields}
    if keygen.auto_generated:  # a keyless table: the generated keys are a column already (`auto_key_column`)
        if AUTO_KEY_COLUMN not in types:
            return None
    elif len(keygen.record_key_fields) != 1:
        return None
    if keygen.url_encode:
        return None
    fields = (*keygen.record_key_fields, *keygen.partition_fields)
    if any(not isinstance(types.get(f), _EXACT_TYPES) for f in fields):
        return None
    key_field = keygen.record_key_fields[0] if keygen.record_key_fields else AUTO_KEY_COLUMN
    value = f"cast({name(key_field)} as string)"
    if cls is ComplexKeyGenerator and not keygen.auto_generated:  # `field:value`, Hudi's null/empty placeholders
        value = (f"concat({string(key_field + ':')}, CASE WHEN {value} IS NULL THEN {string(NULL_RECORDKEY_PLACEHOLDER)}"
                 f" WHEN {value} = '' THEN {string(EMPTY_RECORDKEY_PLACEHOLDER)} ELSE {value} END)")
    if not keygen.partition_fields or cls is NonpartitionedKeyGenerator:
        return value, "''"
    segments = []
    for field in keygen.partition_fields:
        s = f"cast({name(field)} as string)"
        s = f"CASE WHEN {s} IS NULL OR {s} = '' THEN {string(DEFAULT_PARTITION)} ELSE {s} END"
        segments.append(f"concat({string(field + '=')}, {s})" if keygen.hive_style else s)
    path = segments[0] if len(segments) == 1 else f"concat_ws({string(PATH_SEPARATOR)}, {', '.join(segments)})"
    return value, path


# monotonically_increasing_id(): the partition id in the upper 31 bits, the row's number within the partition in the
# lower 33 (Spark's documented layout).
_ROW_IN_PARTITION = (1 << 33) - 1


def auto_key_column(instant: str) -> Column:
    """Hudi's generated record key of every row, `<instant>_<partitionId>_<rowId>` (`keygen.auto_record_keys`, the
    one spelling; tests compare the two): the Spark partition id of the stage that evaluates it (put it on the input,
    before any shuffle, as Hudi keys its input's partitions) and the row's number within that partition, counted
    from 0 in the order the task reads its split. Spark SQL alone: a retried task re-reads its split and makes the
    same keys; no Python per row."""
    return F.expr(f"concat({string(instant + AUTO_KEY_SEPARATOR)}, cast(spark_partition_id() as string), "
                  f"{string(AUTO_KEY_SEPARATOR)}, cast(monotonically_increasing_id() & {_ROW_IN_PARTITION} as string))")
