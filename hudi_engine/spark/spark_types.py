"""Spark types of a Hudi table's columns, and the Arrow schema Spark takes a Python source's batches in.

Every reader of this package declares a table's rows with `spark_schema` and hands Spark Arrow batches cast by
`to_spark_arrow`, so rows never pass through Python objects.
"""
from __future__ import annotations

import pyarrow as pa
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

from hudi_engine.errors import SchemaError


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


def ddl_type(t: DataType) -> str:
    """Spark SQL DDL text of a type, nested field names quoted."""
    if isinstance(t, StructType):
        return "STRUCT<" + ", ".join(f"{quote(f.name)}: {ddl_type(f.dataType)}" for f in t.fields) + ">"
    if isinstance(t, ArrayType):
        return f"ARRAY<{ddl_type(t.elementType)}>"
    if isinstance(t, MapType):
        return f"MAP<{ddl_type(t.keyType)}, {ddl_type(t.valueType)}>"
    if isinstance(t, NullType):
        return "VOID"
    return t.simpleString().upper()


def quote(name: str) -> str:
    """A name as a Spark SQL identifier in backquotes."""
    return "`" + name.replace("`", "``") + "`"


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
