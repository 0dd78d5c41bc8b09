"""A Hudi table's entry in Spark's catalog: the table's path in a column comment, and the `CREATE TABLE` text.

Spark 4.3 hands a Python data source neither the OPTIONS nor the LOCATION of a catalog table when it is read (a
`LOCATION` makes no difference, the table is recorded as MANAGED), but it does hand over the table's schema with its
column comments. So the table's path travels in a comment: when the `path` option is missing, the reader takes the
path from the comment `hudi.path=<uri>` on the first meta column `_hoodie_commit_time` (any column carrying such a
comment is accepted). Two ways to get there: `create_catalog_table(spark, name, path)` issues `CREATE TABLE name
(<columns, comment on the first>) USING hudi` from the table's current schema (`catalog_table_ddl`); and `CREATE
TABLE name USING hudi OPTIONS (path '<uri>')` works too, because Spark does pass OPTIONS when it infers the schema
at CREATE time and `HudiDataSource.schema()` puts the comment into that schema. Other OPTIONS (query type,
instants) are lost the same way and not supported on catalog tables. Every query of a catalog table reads the
snapshot current at that query.
"""
from __future__ import annotations

from pyspark.sql.types import StructField, StructType

from hudi_engine.errors import HudiError, SchemaError
from hudi_engine.scan_plan import COMMIT_TIME
from hudi_engine.schema import META_COLUMNS
from hudi_engine.spark.spark_types import ddl_type, quote, spark_schema
from hudi_engine.table import HudiTable

FORMAT = "hudi"  # the data source's short name: `format("hudi")`, `USING hudi`
PATH_COMMENT_PREFIX = "hudi.path="


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
    return str(path) if "://" in str(path) else table.location.base_path


def with_path_comment(schema: StructType, location: str) -> StructType:
    """`schema` with the comment `hudi.path=<location>` on `_hoodie_commit_time` (if the column is there)."""
    return StructType([
        StructField(f.name, f.dataType, f.nullable,
                    {**(f.metadata or {}), "comment": PATH_COMMENT_PREFIX + location})
        if f.name == COMMIT_TIME else f
        for f in schema.fields
    ])


def require_path(path: str | None, schema: StructType | None) -> str:
    """The table a read names: its `path` option, else the path comment of the catalog table's `schema`."""
    if path:
        return path
    found = catalog_path(schema) if schema is not None else None
    if found:
        return found
    raise HudiError(f"hudi source: no table path; use load(path), option('path', ...), or for a catalog table "
                    f"a comment '{PATH_COMMENT_PREFIX}<uri>' on column {COMMIT_TIME} (see create_catalog_table)")


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def catalog_table_ddl(name: str, path: str, *, if_not_exists: bool = False) -> str:
    """`CREATE TABLE` text for a catalog table over the Hudi table at `path` (path in a column comment)."""
    table = HudiTable.load(path)
    schema = spark_schema(table.schema())
    location = table_location(table, path)
    columns = []
    for f in schema.fields:
        column = f"{quote(f.name)} {ddl_type(f.dataType)}"
        if f.name == COMMIT_TIME:
            column += f" COMMENT {_sql_string(PATH_COMMENT_PREFIX + location)}"
        columns.append(column)
    if COMMIT_TIME not in schema.names:
        raise SchemaError(f"{path}: schema has no {COMMIT_TIME} column to carry the table path ({META_COLUMNS})")
    exists = " IF NOT EXISTS" if if_not_exists else ""
    return f"CREATE TABLE{exists} {name} (\n  " + ",\n  ".join(columns) + f"\n) USING {FORMAT}"
