"""Spark SQL text for expressions the writer builds per write. One `F.expr` is one call to the JVM; the same
expression built from `pyspark.sql.functions` is a call per function, column and literal (about 100 for a row
check and a key), which a small write pays on the driver before its job starts."""
from __future__ import annotations

import re

_PLAIN = re.compile(r'[\w .,:;="/()\[\]{}<>+*#@!?&|^~%$-]*')  # no quote, backslash or newline


def name(column: str) -> str:
    """A column name, quoted."""
    return "`" + column.replace("`", "``") + "`"


def string(value: str) -> str:
    """A string literal. Text with a quote, a backslash or anything unusual is spelled as UTF-8 bytes, which reads
    the same whatever `spark.sql.parser.escapedStringLiterals` says (Spark folds the cast once)."""
    if _PLAIN.fullmatch(value):
        return f"'{value}'"
    return f"cast(X'{value.encode().hex()}' as string)"
