"""The `hudi` Python source's reader: a query planned on the driver with the engine's scan plan, every file slice
(or a few read for their logged keys only) one Spark input partition, read on executors with the plan alone.

Executors read their slice with `ScanPlan.read_slice` (base file, or base + log files merged by the table's
payload) and yield Arrow record batches cast to the declared Spark schema, so rows never pass through Python
objects.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from hudi_engine.file_group import FileSlice
from hudi_engine.read_options import ReadOptions
from hudi_engine.scan_plan import CommitTimeBound, file_group_id, fix_query, list_slices
from hudi_engine.spark.pushdown import pruning, skipping_filters
from hudi_engine.spark.spark_types import arrow_target, resolve_columns, to_spark_arrow
from hudi_engine.table import HudiTable

# Slices read for their logged keys only (the merge half of a key split) yield few rows each: a task reads up to
# this many of them, one after the other, rather than paying a Python task's fixed cost for each.
LOGGED_SLICES_PER_TASK = 4


def pack_slices(slices: Sequence[FileSlice], logged_keys_only: AbstractSet[str]) -> list[list[FileSlice]]:
    """The slices of a read as Spark tasks: a slice merged whole alone, those read for their logged keys only (their
    file groups in `logged_keys_only`) `LOGGED_SLICES_PER_TASK` to a task."""
    logged = [s for s in slices if file_group_id(s) in logged_keys_only]
    whole = [[s] for s in slices if file_group_id(s) not in logged_keys_only]
    return whole + [logged[i:i + LOGGED_SLICES_PER_TASK] for i in range(0, len(logged), LOGGED_SLICES_PER_TASK)]


class SlicePartition(InputPartition):
    """One Spark input partition: file slices (base file and log files, with their paths), read one after the other;
    one, unless they are read for their logged keys only."""

    def __init__(self, file_slices: Sequence[FileSlice]) -> None:
        super().__init__(",".join(f"{s.partition_path}/{s.file_id}@{s.base_instant}" for s in file_slices))
        self.file_slices = tuple(file_slices)


class HudiReader(DataSourceReader):
    """Plans on the driver with the engine's scan plan; `read` runs on executors.

    Spark pickles the reader for the executors after `pushFilters` but *before* it calls `partitions()`, so the
    query is fixed in `__init__` (`fix_query`: instant, visibility, window, schema: all a task needs) and the
    slices are listed in `partitions()` (`list_slices`, with the pushed filters' pruning).
    """

    def __init__(self, table: HudiTable, opts: ReadOptions, schema: StructType) -> None:
        self.table = table
        self.plan = fix_query(table, opts)
        self.columns = resolve_columns(schema, self.plan.schema, table.location.base_path)
        self.target = arrow_target(schema)
        self.partition_filter: pc.Expression | None = None
        self.commit_time_bound: CommitTimeBound | None = None
        self.skipping: list[tuple[str, str, Any]] = []  # filters data skipping reads (`pushFilters`)

    def __getstate__(self) -> dict[str, Any]:
        """What Spark ships to the tasks: the plan (instant, visibility, window, schema; no slice, each task gets
        its own), the columns and the Arrow target. The table (its timeline, commit metadata) stays with the planner,
        which calls `partitions()` on this object, not on a copy."""
        return {"plan": self.plan, "columns": self.columns, "target": self.target}

    # -- planning (driver) --
    def pushFilters(self, filters: list[Filter]) -> list[Filter]:
        """Keep filters on partition columns for pruning partitions, and lower bounds on `_hoodie_commit_time` for
        pruning file slices whose rows are all older; return all, so Spark still applies each to rows."""
        self.partition_filter, self.commit_time_bound = pruning(self.table, self.plan.schema, filters)
        self.skipping = skipping_filters(self.plan.schema, filters)
        return list(filters)

    def partitions(self) -> Sequence[InputPartition]:
        return [SlicePartition(group) for group in pack_slices(self.file_slices(), self.plan.query.logged_keys_only)]

    def file_slices(self) -> list[FileSlice]:
        """The slices this query reads, after pruning; for incremental, the file groups the range touched."""
        plan = list_slices(self.table, self.plan, filters=self.partition_filter,
                           commit_time_bound=self.commit_time_bound, skipping=self.skipping)
        return list(plan.slices)

    # -- reading (executors) --
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SlicePartition):
            return  # Spark's stand-in partition when a query has no slices
        names = [c for c, _ in self.columns]
        for file_slice in partition.file_slices:
            logged_keys_only = file_group_id(file_slice) in self.plan.query.logged_keys_only
            rows = self.plan.read_slice(file_slice, names, logged_keys_only=logged_keys_only)
            if rows.num_rows == 0:
                continue
            rows = to_spark_arrow(rows, self.target,
                                  f"file slice {file_slice.partition_path}/{file_slice.file_id}@{file_slice.base_instant}")
            yield from rows.to_batches()
