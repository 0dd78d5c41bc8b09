"""A Hudi seed's rows: the CSV as dbt parsed it (agate), as a Spark DataFrame typed the way dbt-spark types a seed.

dbt-spark inserts a seed with `cast(<value> as <type>)` per cell; here the cells go to Spark as text and the same
casts run in one projection, so a Hudi seed and a parquet seed of one CSV hold the same values.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any


def cell_text(value: Any) -> str | None:
    """One CSV cell as the text Spark casts: None stays null, timestamps keep milliseconds as dbt-spark binds them."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    if isinstance(value, Decimal):
        return format(value, "f")  # never exponent notation, which a cast to an integral type refuses
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def seed_frame(spark, names: Sequence[str], types: Sequence[str], rows: Iterable[Sequence[Any]]):
    """The seed's rows as a DataFrame with columns `names` of Spark SQL types `types`."""
    from pyspark.sql.types import StringType, StructField, StructType

    text = StructType([StructField(f"c{i}", StringType()) for i in range(len(names))])
    df = spark.createDataFrame([[cell_text(v) for v in row] for row in rows], text)
    quoted = [n.replace("`", "``") for n in names]
    return df.selectExpr(*[f"cast(`c{i}` as {t}) as `{q}`" for i, (q, t) in enumerate(zip(quoted, types, strict=True))])
