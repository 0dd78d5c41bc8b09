"""A Hudi seed's cells as the text Spark casts (dbt/adapters/hudi/seed.py): the values dbt-spark binds for a seed."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from dbt.adapters.hudi.seed import cell_text


@pytest.mark.parametrize("value, text", [
    (None, None), (True, "true"), (False, "false"), (Decimal("12"), "12"), (Decimal("1E+2"), "100"),
    (Decimal("-0.50"), "-0.50"), (dt.date(2024, 2, 29), "2024-02-29"),
    (dt.datetime(2024, 2, 29, 13, 4, 5, 678901), "2024-02-29 13:04:05.678"), ("it's", "it's"),
])
def test_cells_keep_their_value_in_the_text_spark_casts(value, text):
    assert cell_text(value) == text
