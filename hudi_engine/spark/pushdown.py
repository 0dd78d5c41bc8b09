"""Filter pushdown: what a query's Spark filters let the engine's scan plan prune.

PySpark 4.3 offers filter pushdown (`DataSourceReader.pushFilters`, enabled by
`spark.sql.python.filterPushdown.enabled`, which `register_data_source` turns on) but no column pruning.
Filters on partition columns (=, <=>, <, <=, >, >=, IN, IS [NOT] NULL, NOT, LIKE prefix/suffix/infix) prune
partitions before file slices are listed; every filter is still handed back to Spark, which evaluates it on
the rows, so pruning only has to be conservative, never exact. Key generators whose partition path is not the
column's value (timestamp-based, custom) are not pruned. Lower bounds on `_hoodie_commit_time` (>, >=, =, IN)
prune file slices whose rows are all older (`scan_plan.newest_commit_times`): `where _hoodie_commit_time > X`
reads only the slices commits after X wrote. Comparisons and IN on any column skip file slices by the metadata
table's column stats, where the table has them (`skipping_filters`). The `hudi` source, `read_table` and the native
source's planner all prune with `pruning` and `skipping_filters`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from hudi_engine.scan_plan import COMMIT_TIME, CommitTimeBound
from hudi_engine.table import UNPRUNABLE_KEYGENS, HudiTable


def pruning(table: HudiTable, table_schema: pa.Schema,
            filters: Sequence[Filter]) -> tuple[pc.Expression | None, CommitTimeBound | None]:
    """What a query's Spark filters let the scan plan prune: partitions (`partition_filter`) and file slices
    (the tightest lower bound on `_hoodie_commit_time`)."""
    return (partition_filter(table, table_schema, filters),
            CommitTimeBound.tightest(map(commit_time_lower_bound, filters)))


def partition_filter(table: HudiTable, table_schema: pa.Schema, filters: Sequence[Filter]) -> pc.Expression | None:
    """The filters on partition columns as one Arrow expression over partition values, for pruning partitions
    (conservative: every filter is still applied to the rows); None when none of them prunes."""
    columns = _prunable_columns(table, table_schema)
    exprs = [e for e in (filter_expression(f, columns) for f in filters) if e is not None]
    if not exprs:
        return None
    expr = exprs[0]
    for e in exprs[1:]:
        expr = expr & e
    # Null and empty values both land in the default partition, whose path cannot tell them apart: keep it
    # whatever the filter says.
    for name in set(columns.values()):
        expr = expr | pc.field(name).is_null()
    return expr


def _prunable_columns(table: HudiTable, table_schema: pa.Schema) -> dict[str, str]:
    """Partition columns present in the rows, by lower-case name (Spark resolves names case-insensitively)."""
    cfg = table.config
    if any(k in (cfg.key_generator_class or "") for k in UNPRUNABLE_KEYGENS):
        return {}
    return {f.lower(): f for f in cfg.partition_fields if f in table_schema.names}


_COMPARISONS = {EqualTo: "__eq__", GreaterThan: "__gt__", GreaterThanOrEqual: "__ge__", LessThan: "__lt__",
                LessThanOrEqual: "__le__"}


def filter_expression(f: Filter, columns: Mapping[str, str]) -> pc.Expression | None:
    """A Spark filter on the given columns (lower-case name -> name) as an Arrow expression; None otherwise."""
    if isinstance(f, Not):
        child = filter_expression(f.child, columns)
        return None if child is None else ~child
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0].lower() not in columns:
        return None
    field = pc.field(columns[attribute[0].lower()])
    value: Any = getattr(f, "value", None)
    if type(f) in _COMPARISONS:
        return None if value is None else getattr(field, _COMPARISONS[type(f)])(value)
    if isinstance(f, EqualNullSafe):
        return field.is_null() if value is None else field == value
    if isinstance(f, In):
        values = [v for v in value if v is not None]
        return field.isin(values) if values else None
    if isinstance(f, IsNull):
        return field.is_null()
    if isinstance(f, IsNotNull):
        return field.is_valid()
    if isinstance(f, StringStartsWith):
        return pc.starts_with(field, pattern=value)
    if isinstance(f, StringEndsWith):
        return pc.ends_with(field, pattern=value)
    if isinstance(f, StringContains):
        return pc.match_substring(field, pattern=value)
    return None


_STATS_OPS = {EqualTo: "=", EqualNullSafe: "=", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<",
              LessThanOrEqual: "<="}


def skipping_filters(table_schema: pa.Schema, filters: Sequence[Filter]) -> list[tuple[str, str, Any]]:
    """The Spark filters data skipping reads (`hudi_engine.metadata.data_skipping`): comparisons and IN of one
    column with non-null values, as (column, op, value) with the column's name as the table spells it."""
    names = {n.lower(): n for n in table_schema.names}
    out: list[tuple[str, str, Any]] = []
    for f in filters:
        attribute = getattr(f, "attribute", None)
        if attribute is None or len(attribute) != 1 or attribute[0].lower() not in names:
            continue
        column, value = names[attribute[0].lower()], getattr(f, "value", None)
        if type(f) in _STATS_OPS and value is not None:
            out.append((column, _STATS_OPS[type(f)], value))
        elif isinstance(f, In) and value and all(v is not None for v in value):
            out.append((column, "in", list(value)))
    return out


_BOUND_FILTERS = {GreaterThan: False, GreaterThanOrEqual: True, EqualTo: True, EqualNullSafe: True}


def commit_time_lower_bound(f: Filter) -> CommitTimeBound | None:
    """A Spark filter `_hoodie_commit_time > | >= | = | IN ...` as a lower bound on commit times; None otherwise."""
    attribute = getattr(f, "attribute", None)
    if attribute is None or len(attribute) != 1 or attribute[0].lower() != COMMIT_TIME:
        return None
    value: Any = getattr(f, "value", None)
    if type(f) in _BOUND_FILTERS:
        return None if value is None else CommitTimeBound(str(value), _BOUND_FILTERS[type(f)])
    if isinstance(f, In):
        values = [str(v) for v in value if v is not None]
        return CommitTimeBound(min(values), True) if values else None
    return None
