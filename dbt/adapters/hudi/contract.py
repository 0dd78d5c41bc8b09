"""What an enforced model contract checks on a Hudi model's rows before they are written.

dbt checks the contract's columns and types itself (`get_assert_columns_equivalent`, before the model runs). A Hudi
table has no constraint of its own, so the `not_null` and `check` constraints are enforced here: one Spark
aggregation counts the rows that break each, and any count above zero stops the model before the first data file
is written (the table stays as it was). primary_key, unique and foreign_key are declared only, as on Spark.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.hudi.errors import HudiModelError

ENFORCED = ("not_null", "check")


@dataclass(frozen=True)
class Contract:
    not_null: tuple[str, ...] = ()  # columns
    checks: tuple[tuple[str, str], ...] = ()  # (label, SQL expression that must not be false)

    @staticmethod
    def from_model(columns: Mapping[str, Any] | None, constraints: Sequence[Any] | None) -> "Contract":
        """The enforceable constraints of a model node: column-level (`columns[*].constraints`) and model-level."""
        not_null: list[str] = []
        checks: list[tuple[str, str]] = []

        def add(kind: str, expression: str | None, on: Sequence[str], name: str | None) -> None:
            if kind == "not_null":
                not_null.extend(c for c in on if c not in not_null)
            elif kind == "check" and expression:
                checks.append((f"check {name or expression}", expression))

        for column in (columns or {}).values():
            for c in column.get("constraints") or []:
                add(c.get("type"), c.get("expression"), [column["name"]], c.get("name"))
        for c in constraints or []:
            add(c.get("type"), c.get("expression"), c.get("columns") or [], c.get("name"))
        return Contract(tuple(not_null), tuple(checks))

    def __bool__(self) -> bool:
        return bool(self.not_null or self.checks)

    def check_rows(self, model: str, df) -> None:
        """Raise one error naming every broken constraint and how many rows break it; nothing is written then."""
        from pyspark.sql import functions as F

        if not self:
            return
        labels = [f"not_null on column {c!r}" for c in self.not_null] + [label for label, _ in self.checks]
        conditions = [F.col(f"`{c}`").isNull() for c in self.not_null] + \
                     [F.expr(f"not ({expression})") for _, expression in self.checks]
        counts = df.agg(*[F.sum(F.when(cond, 1).otherwise(0)).alias(f"c{i}")
                          for i, cond in enumerate(conditions)]).collect()[0]
        broken = [f"{label}: {counts[i]} row(s) break it" for i, label in enumerate(labels) if counts[i]]
        if broken:
            raise HudiModelError(
                f"model {model}: the model's rows break its contract: {'; '.join(broken)}. Nothing was written "
                f"(the table is as it was). Fix the rows in the model, or the constraint in its yml.")
