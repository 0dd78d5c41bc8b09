"""SQL text (`spark.sql_text`) reads back as the names and strings it was given, whatever the parser's escaping."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from hudi_engine.spark.sql_text import name, string

VALUES = ["plain", "", "it's", "back\\slash", "two\nlines", "{\"json\": [1]}", "ünï ☃", "-- not a comment", "\\'", "${spark.app.name}"]


@pytest.mark.parametrize("escaped", ["false", "true"])
def test_strings_read_back_as_given(spark, escaped):
    before = spark.conf.get("spark.sql.parser.escapedStringLiterals")
    spark.conf.set("spark.sql.parser.escapedStringLiterals", escaped)
    try:
        got = spark.range(1).select(*[F.expr(string(v)).alias(f"c{i}") for i, v in enumerate(VALUES)]).first()
    finally:
        spark.conf.set("spark.sql.parser.escapedStringLiterals", before)
    assert list(got) == VALUES


def test_names_read_back_as_given(spark):
    columns = ["a", "it's", "back`tick", "two words", "ü"]
    df = spark.createDataFrame([tuple(range(len(columns)))], columns)
    assert list(df.select(*[F.expr(name(c)) for c in columns]).first()) == list(range(len(columns)))
