"""`HudiRelation`: dbt-spark's relation, which renders a Hudi table by its catalog name, `schema.table` (as
dbt-spark quotes it), so compiled SQL, `manifest.json` and the console name the table and run in any Spark session
with the native `hudi` source (`hudi_engine.spark.native`, on by default in the adapter's session). That source
plans every query when it runs: base files on Spark's own parquet reader, as of the latest completed commit,
whoever made it.

A profile that opts out of the native source (`spark.hudi_engine.native: "false"`, see `session.py`) reads Hudi
tables through per-run temporary views instead (`catalog.read_view`, registered when dbt compiles the node: base
files on Spark's parquet reader, slices with log files on the `hudi` Python source). Only reading contexts render
as the view: ref() and source() (dbt passes them `limit` and `event_time_filter`), and `{{ this }}` while the
model's own SQL is compiled (the node is not compiled yet); dbt's own subquery forms (`--empty`, microbatch
event-time filters) wrap the view as they wrap a table name. In the materialization, hooks, grants and every other
DDL `{{ this }}` and `relation.render()` stay the catalog name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark.relation import SparkRelation


@dataclass(frozen=True, eq=False, repr=False)
class HudiRelation(SparkRelation):
    read_as: str | None = None  # opted out of the native source: the per-run view a query reads (SQL text)

    @classmethod
    def create_from(cls, quoting: Any, relation_config: Any, **kwargs: Any) -> "HudiRelation":
        relation = super().create_from(quoting, relation_config, **kwargs)
        reading = "limit" in kwargs or "event_time_filter" in kwargs or getattr(relation_config, "compiled", None) is False
        if not reading or relation.schema is None or relation.identifier is None:
            return relation
        from dbt.adapters.hudi import catalog

        view = catalog.read_view_of(quoting, relation_config, relation.schema, relation.identifier)
        return relation if view is None else relation.incorporate(read_as=view)

    def __str__(self) -> str:
        if self.read_as is None:
            return super().__str__()
        rendered = self.read_as
        if self.limit == 0:
            rendered = f"(select * from {rendered} where false limit 0){self._render_limited_alias()}"
        elif self.limit is not None:
            rendered = f"(select * from {rendered} limit {self.limit}){self._render_limited_alias()}"
        if self.event_time_filter:
            rendered = self.render_event_time_filtered(rendered)
        return rendered
