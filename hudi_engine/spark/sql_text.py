"""Spark SQL text for expressions the writer builds per write. One `F.expr` is one call to the JVM; the same
expression built from `pyspark.sql.functions` is a call per function, column and literal (about 100 for a row
check and a key), which a small write pays on the driver before its job starts."""
from __future__ import annotations

import json
import re
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

_PLAIN = re.compile(r'[\w .,:;="/()\[\]{}<>+*#@!?&|^~%-]*')  # no quote, backslash, newline or $


def name(column: str) -> str:
    """A column name, quoted. Spark substitutes `${var}` in SQL text, even here (`spark.sql.variable.substitute`): a
    name holding one would not resolve, and the write fails on it."""
    return "`" + column.replace("`", "``") + "`"


def string(value: str) -> str:
    """A string literal. Text with a quote, a backslash, a `$` or anything unusual is spelled as UTF-8 bytes, which
    reads the same whatever `spark.sql.parser.escapedStringLiterals` says and is never substituted as `${var}` (Spark
    folds the cast once)."""
    if _PLAIN.fullmatch(value):
        return f"'{value}'"
    return f"cast(X'{value.encode().hex()}' as string)"


def json_value(value: Any, spark_type: str) -> str:
    """A literal of `spark_type` (a map of many entries, say) passed as JSON: one expression whatever its size."""
    return f"from_json({string(json.dumps(value))}, {string(spark_type)})"


def literal(value: Any, spark_type: str) -> Column:
    """A literal of `spark_type` as a column (`json_value`; Spark folds it once)."""
    return F.expr(json_value(value, spark_type))
