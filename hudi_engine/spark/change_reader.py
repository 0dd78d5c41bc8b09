"""The CDC query's reader (`hoodie.datasource.query.incremental.format=cdc`): planned on the driver by
`hudi_engine.cdc_query`, one Spark task per file group, rows `op`, `ts_ms`, `before`, `after`
(`hudi_engine.cdc.images`: json or struct).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hudi_engine.cdc_query import ChangePlan, ChangeSplit, plan_changes, read_changes
from hudi_engine.errors import SchemaError
from hudi_engine.read_options import ReadOptions
from hudi_engine.spark.spark_types import arrow_target, to_spark_arrow
from hudi_engine.table import HudiTable


def change_plan(table: HudiTable, opts: ReadOptions) -> ChangePlan:
    """The CDC query (`hoodie.datasource.query.incremental.format=cdc`) of `opts` on `table`."""
    return plan_changes(table, opts.begin_instant, opts.end, images=opts.cdc_images, table_uri=table.storage_uri)


class ChangePartition(InputPartition):
    """One Spark input partition of a CDC query: the splits of one file group, in commit order."""

    def __init__(self, splits: Sequence[ChangeSplit]) -> None:
        super().__init__(splits[0].file_group)
        self.splits = tuple(splits)


class ChangeReader(DataSourceReader):
    """A CDC query: planned on the driver (`hudi_engine.cdc_query.plan_changes`), one task per file group, each
    reading its splits with the plan alone (`read_changes`)."""

    def __init__(self, table: HudiTable, opts: ReadOptions, schema: StructType) -> None:
        self.plan = change_plan(table, opts)
        names = {n.lower(): n for n in self.plan.output_schema.names}
        missing = [f.name for f in schema.fields if f.name.lower() not in names]
        if missing:
            raise SchemaError(f"{table.location.base_path}: declared column(s) {missing} are not columns of the CDC "
                              f"query (columns: {self.plan.output_schema.names})")
        self.columns = [names[f.name.lower()] for f in schema.fields]
        self.target = arrow_target(schema)

    def __getstate__(self) -> dict[str, Any]:
        """The plan without its splits (each task gets its own in its partition)."""
        return {"plan": replace(self.plan, splits=()), "columns": self.columns, "target": self.target}

    def partitions(self) -> Sequence[InputPartition]:
        return [ChangePartition(group) for group in self.plan.file_groups()]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ChangePartition):
            return  # Spark's stand-in partition when a query has no splits
        rows = read_changes(self.plan, partition.splits)
        if rows.num_rows:
            yield from to_spark_arrow(rows.select(self.columns), self.target,
                                      f"CDC file group {partition.value}").to_batches()
