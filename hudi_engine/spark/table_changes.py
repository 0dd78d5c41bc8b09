"""`hudi_table_changes`: Hudi's incremental query as a SQL table-valued function, as in Hudi's Spark SQL.

    SELECT * FROM hudi_table_changes('/data/trips', 'latest_state', '20240101120000000')          -- (begin, latest]
    SELECT * FROM hudi_table_changes('/data/trips', 'latest_state', 'earliest', '20240102000000000')

The records written by the commits in `(begin, end]` (end: the latest commit when left out), each in its state as
of `end` (deletes not shown): `HudiTable.read_incremental`, so only the file slices those commits wrote are read.
`begin` is an instant time, `'yyyy-MM-dd HH:mm:ss[.SSS]'`, `'yyyy-MM-dd'`, or `'earliest'`; on a Hudi 1.x table
begin and end are completion times (docs/python-api.md). The first argument is the table's path or URI, or, as in
Hudi, the name of a `USING hudi` catalog table (`'db.trips'`, any argument without a `/`): a Python table function
cannot look up the catalog, so the native component's parser and rule (`HudiByNameRule`) put the table's location
there first. Without the component, a name is not found (the path of a catalog table is the `hudi.path=` comment of
its `_hoodie_commit_time` column). In dbt, `{{ hudi_table_changes(ref('orders'), begin) }}` resolves it and reads
through Spark's own parquet reader, see `dbt/include/hudi/macros/reads.sql`.

    SELECT * FROM hudi_table_changes('/data/trips', 'cdc', '20240101120000000')

is Hudi's CDC query (a table created with `hoodie.table.cdc.enabled=true`): every change the range's commits made,
deletes included, as `op` (i, u, d), `ts_ms` (the commit), `before` and `after` (the row's data columns as JSON
text), `HudiTable.read_changes` (docs/cdc.md).

The function is a PySpark Python UDTF: its `analyze` checks the arguments and gives the schema of the range's end;
`eval` reads the slices in one Spark task and yields the rows, which Spark turns into Arrow batches (a UDTF
whose schema depends on its arguments cannot yield Arrow itself in Spark 4.3). For large ranges the `hudi` source's
incremental options, or `hudi_engine.spark.relation.read_table` with them, spread the read over tasks.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.udtf import AnalyzeArgument, AnalyzeResult, UserDefinedTableFunction

from hudi_engine.errors import HudiError

FUNCTION_NAME = "hudi_table_changes"
LATEST_STATE = "latest_state"
CDC = "cdc"
EARLIEST = "earliest"
BATCH_ROWS = 8192


def _literal(arg: AnalyzeArgument | None, what: str) -> str | None:
    if arg is None:
        return None
    if not arg.isConstantExpression:
        raise HudiError(f"{FUNCTION_NAME}: {what} must be a constant string, not a column or an expression of one")
    return None if arg.value is None else str(arg.value)


def _parse(table: str | None, query_type: str | None, begin: str | None, end: str | None):
    """(HudiTable, begin, end) from the function's arguments, every problem named with the value at fault."""
    from hudi_engine.read_options import normalize_instant
    from hudi_engine.table import HudiTable

    usage = f"{FUNCTION_NAME}('<table path>', '{LATEST_STATE}' | '{CDC}', '<begin instant>'[, '<end instant>'])"
    if not table:
        raise HudiError(f"{FUNCTION_NAME}: the table path is missing or null; usage: {usage}")
    if (query_type or "").strip().lower() not in (LATEST_STATE, CDC):
        raise HudiError(f"{FUNCTION_NAME}('{table}', {query_type!r}, ...): query type {query_type!r} is not supported; "
                        f"expected '{LATEST_STATE}' (the records the range's commits wrote, as of its end) or '{CDC}' "
                        "(every change, deletes included)")
    if begin is None:
        raise HudiError(f"{FUNCTION_NAME}('{table}', ...): the begin instant is missing or null; usage: {usage}")
    try:
        hudi = HudiTable.load(table)
    except (HudiError, FileNotFoundError, OSError) as e:
        raise HudiError(f"{FUNCTION_NAME}('{table}', ...): {e}. The first argument is the table's path or URI, or the "
                        "name of a USING hudi catalog table in a session with the native component (else: its path, "
                        "the 'hudi.path=' comment of its _hoodie_commit_time column)") from None
    where = f"table {hudi.config.name!r} ({hudi.location.base_path})"
    try:
        begin = "000" if begin.strip().lower() == EARLIEST else normalize_instant(begin, "begin")
        end = normalize_instant(end, "end") if end is not None else None
    except HudiError as e:
        raise HudiError(f"{FUNCTION_NAME}: {where}: {e}. Available: {hudi.query_instants.available()}") from None
    begin, end = hudi.query_instants.check_range(begin, end, archived_begin=not _is_cdc(query_type))
    return hudi, begin, end


class HudiTableChanges:
    """The UDTF behind `hudi_table_changes(table, query_type, begin[, end])`."""

    @staticmethod
    def analyze(table: AnalyzeArgument, query_type: AnalyzeArgument, begin: AnalyzeArgument,
                end: AnalyzeArgument | None = None) -> AnalyzeResult:
        from hudi_engine.spark.spark_types import spark_schema

        kind = _literal(query_type, "the query type")
        hudi, start, stop = _parse(_literal(table, "the table path"), kind, _literal(begin, "the begin instant"),
                                   _literal(end, "the end instant"))
        if _is_cdc(kind):
            return AnalyzeResult(spark_schema(hudi.plan_changes(start, stop).output_schema))
        return AnalyzeResult(spark_schema(hudi.schema(hudi.query_instants.incremental_end(start, stop))))

    def eval(self, table: str, query_type: str, begin: str, end: str | None = None) -> Iterator[tuple[Any, ...]]:
        hudi, start, stop = _parse(table, query_type, begin, end)
        rows = hudi.read_changes(start, stop) if _is_cdc(query_type) else hudi.read_incremental(start, stop)
        converters = [_python_values(f.type) for f in rows.schema]
        for batch in rows.to_batches(max_chunksize=BATCH_ROWS):
            columns = [column.to_pylist() if convert is None else [convert(v) for v in column.to_pylist()]
                       for column, convert in zip(batch.columns, converters, strict=True)]
            yield from zip(*columns, strict=True)


def _is_cdc(query_type: str | None) -> bool:
    return (query_type or "").strip().lower() == CDC


Convert = Callable[[Any], Any]


def _python_values(t: pa.DataType) -> Convert | None:
    """How a value of `t` from `to_pylist` becomes what Spark's row conversion takes (maps as dicts, where Arrow
    gives lists of pairs); None when it is taken as is."""
    if pa.types.is_map(t):
        key, item = _python_values(t.key_type) or _same, _python_values(t.item_type) or _same
        return lambda v: None if v is None else {key(k): item(x) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        element = _python_values(t.value_type)
        return None if element is None else (lambda v: None if v is None else [element(x) for x in v])
    if pa.types.is_struct(t):
        fields = [(f.name, _python_values(f.type)) for f in t]
        if all(c is None for _, c in fields):
            return None
        return lambda v: None if v is None else {n: (v[n] if c is None else c(v[n])) for n, c in fields}
    return None


def _same(v: Any) -> Any:
    return v


def register_table_changes(spark: SparkSession) -> None:
    """Make `hudi_table_changes(...)` callable from SQL in `spark` (idempotent)."""
    from pyspark.sql.functions import udtf

    # udtf's annotation is one Union for both call forms; given a class it returns the function itself.
    spark.udtf.register(FUNCTION_NAME, cast(UserDefinedTableFunction, udtf(HudiTableChanges, useArrow=True)))
