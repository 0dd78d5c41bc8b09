"""Data skipping with a metadata table's `column_stats` (FORMAT.md, Metadata table), as Hudi's `ColumnStatsIndexSupport`
prunes the file slices of a query: a slice is left out when a filter on an indexed column cannot hold for any row of
any of its files (base and log files alike, from their min, max and null counts). It is kept whenever that is not
certain: a file without stats for the column, a filter this module does not read (expressions, `!=`, functions), a
value of another type than the column's, bytes.

A merged row of a slice takes each column's value from one of the slice's files (the base file's row, a log
record's, or a partial update's mix of them), so a slice none of whose files can match cannot give a matching row.
"""
from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudi_engine.file_group import FileSlice
from hudi_engine.metadata.column_stats import ColumnStats, StatValue

_COMPARISONS = ("=", "==", "<", "<=", ">", ">=", "in")
_EPOCH_DAY = dt.date(1970, 1, 1)


def _plain(value: StatValue, stats: ColumnStats, arrow_type: pa.DataType) -> Any:
    """A stats value comparable with a filter value on a column of `arrow_type`, None when it is not."""
    v = value.comparable(stats.value_type)
    if pa.types.is_decimal(arrow_type):
        return v if isinstance(v, decimal.Decimal) else None
    return None if isinstance(v, bytes) else v


def _filter_value(value: Any, arrow_type: pa.DataType) -> Any:
    """A filter's value in the stats' terms for a column of `arrow_type` (dates as epoch days, timestamps as
    microseconds), None when the two do not compare."""
    if isinstance(value, bool) or value is None:
        return value if pa.types.is_boolean(arrow_type) else None
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return value if isinstance(value, str) else None
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type):
        return value if isinstance(value, (int, float)) else None
    if pa.types.is_decimal(arrow_type):
        return decimal.Decimal(value) if isinstance(value, (int, decimal.Decimal)) else None
    if pa.types.is_date(arrow_type):
        if isinstance(value, dt.datetime):
            return None
        return (value - _EPOCH_DAY).days if isinstance(value, dt.date) else None
    if pa.types.is_timestamp(arrow_type) and isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)  # a naive timestamp is UTC wall time (schema.py)
        return (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    return None


def cannot_match(stats: ColumnStats, op: str, value: Any, arrow_type: pa.DataType) -> bool:
    """No row of the file `stats` describes satisfies `column <op> value`."""
    if stats.is_deleted or op not in _COMPARISONS:
        return False
    if stats.value_count == 0 or stats.null_count >= stats.value_count:
        return stats.value_count >= 0  # no row, or only nulls: a comparison holds for none
    if stats.min_value is None or stats.max_value is None:
        return False
    lo, hi = _plain(stats.min_value, stats, arrow_type), _plain(stats.max_value, stats, arrow_type)
    values = list(value) if op == "in" and isinstance(value, Iterable) and not isinstance(value, (str, bytes)) \
        else [value]
    wanted = [_filter_value(v, arrow_type) for v in values]
    if lo is None or hi is None or any(w is None for w in wanted):
        return False
    try:
        if op in ("=", "==", "in"):
            return all(w < lo or w > hi for w in wanted)
        w = wanted[0]
        return {"<": lo >= w, "<=": lo > w, ">": hi <= w, ">=": hi < w}[op]
    except TypeError:
        return False  # values of types that do not compare: keep the file


def skip(slices: Sequence[FileSlice], filters: Sequence[tuple[str, str, Any]], schema: pa.Schema,
         stats: Mapping[tuple[str, str], ColumnStats]) -> list[FileSlice]:
    """`slices` without those no row of which can satisfy every filter (module doc). `stats`: (file name, column)
    -> its column stats."""
    usable = [(c, op, v) for c, op, v in filters if c in schema.names and op in _COMPARISONS]
    if not usable:
        return list(slices)
    out = []
    for s in slices:
        names = [f.path.rsplit("/", 1)[-1] for f in ([s.base_file] if s.base_file else []) + s.log_files]
        skipped = False
        for column, op, value in usable:
            found = [stats.get((n, column)) for n in names]
            arrow_type = schema.field(column).type
            if names and all(f is not None and cannot_match(f, op, value, arrow_type) for f in found):
                skipped = True
                break
        if not skipped:
            out.append(s)
    return out
