"""`CALL <procedure>(...)` in a Spark session with the native component (docs/procedures.md): the JVM parses the
statement (`jvm/Procedures.scala`) and hands it to `PythonProcedures` here, a py4j callback that
`register_data_source` registers beside the writer (`save.PythonWriter`). It runs `hudi_engine.procedures.run`
with a resolver that finds a `table => '<catalog name>'` in the session's catalog, and hands the rows back as JSON.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import pyarrow as pa
from pyspark.errors import AnalysisException, IllegalArgumentException
from pyspark.sql import SparkSession

from hudi_engine.errors import HudiError
from hudi_engine.procedures import procedure, run
from hudi_engine.spark.save import json_answer, register_callback


class SessionCatalog:
    """The session's catalog for the procedures on catalog entries (`hudi_engine.procedures.CatalogSession`)."""

    def __init__(self, spark: SparkSession, resolve: Callable[[str], str]) -> None:
        self.spark = spark
        self.resolve = resolve

    def sync_hive(self, table: str, options: Mapping[str, str]) -> None:
        from hudi_engine.spark.catalog_sync import sync_catalogs

        path = self.resolve(table)  # refuses a name the catalog does not have, or a table that is not Hudi
        database, _, name = table.rpartition(".")
        sync_catalogs(self.spark, path, {**options, "hoodie.datasource.hive_sync.database": database.split(".")[-1]
                                         or self.spark.catalog.currentDatabase(),
                                         "hoodie.datasource.hive_sync.table": name})

    def copy_to_temp_view(self, path: str, read_options: Mapping[str, str], view: str, *, replace: bool,
                          global_view: bool) -> None:
        frame = self.spark.read.format("hudi").options(**read_options).load(path)
        if global_view:
            (frame.createOrReplaceGlobalTempView if replace else frame.createGlobalTempView)(view)
        else:
            (frame.createOrReplaceTempView if replace else frame.createTempView)(view)

    def copy_to_table(self, path: str, read_options: Mapping[str, str], table: str, *, save_mode: str,
                      columns: list[str]) -> None:
        frame = self.spark.read.format("hudi").options(**read_options).load(path)
        if self.spark.catalog.tableExists(table):
            columns = self.spark.read.table(table).columns
        frame.selectExpr(*(columns or frame.columns)).write.mode(save_mode).saveAsTable(table)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; Hudi's ratios are finite
    return value


class PythonProcedures:
    """The py4j callback behind `hudiengine.spark.PythonProcedures`. Errors go back as their message (the JVM
    raises it as one IllegalArgumentException), so that Spark's plumbing adds no Python stack trace."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def describe(self, name: str) -> str:
        return self._answer(name, lambda: {"schema": procedure(name).spark_ddl()})

    def call(self, jsession: Any, name: str, arguments: str) -> str:
        def rows() -> dict:
            pairs = json.loads(arguments)
            positional = [v for n, v in pairs if n is None]
            named = {n: v for n, v in pairs if n is not None}
            procedures = self.spark._jvm.hudiengine.spark.Procedures  # type: ignore[union-attr]

            def resolve(table: str) -> str:
                return str(procedures.tableLocation(jsession, table))

            def row_filter(rows: pa.Table, predicate: str) -> pa.Table:
                return self.spark.createDataFrame(rows).filter(predicate).toArrow().cast(rows.schema)

            table = run(name, positional, named, resolver=resolve, row_filter=row_filter,
                        session=SessionCatalog(self.spark, resolve))
            columns = [c.to_pylist() for c in table.columns]
            return {"rows": [[_json_value(v) for v in r] for r in zip(*columns, strict=True)]}

        return self._answer(name, rows)

    @staticmethod
    def _answer(name: str, work: Any) -> str:
        def refusal(e: Exception) -> str | None:
            if isinstance(e, (HudiError, IllegalArgumentException)):  # a refusal, or the catalog's (tableLocation)
                return str(e)
            if isinstance(e, AnalysisException):  # a `filter` Spark cannot take
                return f"Argument: filter of {name}: {e}"
            return None

        return json_answer(work, f"CALL {name}", refusal)

    class Java:
        implements: ClassVar[list[str]] = ["hudiengine.spark.PythonProcedures"]


def register_procedures(spark: SparkSession) -> None:
    """Let the native component run `CALL` statements in this driver (a session started with `native_conf`); once per
    JVM."""
    register_callback(spark, "Procedures", PythonProcedures)
