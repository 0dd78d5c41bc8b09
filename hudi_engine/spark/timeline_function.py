"""A Hudi table's timeline as rows: the `hudi_timeline(path)` table function of every adapter session.

    select * from hudi_timeline('/warehouse/orders')       -- or {{ hudi_timeline(ref('orders')) }}

One row per instant (every action and state, oldest first): what it did, as its commit metadata says. The
generic tests `hudi_no_pending_instants`, `hudi_commit_count` and `hudi_latest_commit` are SQL over it.

The function is a PySpark Python UDTF: it reads the timeline where it runs (an executor on a cluster), so
it sees the table as it is when the query runs, in any session it is registered in. It lives in the engine so that
it reaches executors with it (`executor_env`); the dbt adapter registers it in its sessions.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import astuple, dataclass, fields

from hudi_engine.location import TableLocation

FUNCTION_NAME = "hudi_timeline"


@dataclass(frozen=True)
class TimelineRow:
    instant: str
    action: str
    state: str  # REQUESTED, INFLIGHT, COMPLETED
    operation: str | None  # the commit's operationType (UPSERT, BULK_INSERT, DELETE, INSERT_OVERWRITE, ...)
    num_inserts: int | None
    num_updates: int | None
    num_deletes: int | None
    num_writes: int | None
    files_written: int | None
    log_files_written: int | None
    partitions_written: int | None
    file_groups_replaced: int | None
    bytes_written: int | None


_SQL_TYPES = {"str": "string", "str | None": "string", "int | None": "bigint"}
SCHEMA_DDL = ", ".join(f"{f.name} {_SQL_TYPES[str(f.type)]}" for f in fields(TimelineRow))
COLUMNS = [f.name for f in fields(TimelineRow)]


def timeline_rows(path: str) -> list[TimelineRow]:
    """Every instant of the table at `path`, oldest first, with its commit counts where it has commit metadata."""
    from hudi_engine.timeline import Timeline
    from hudi_engine.timeline.instant import COMMIT_ACTIONS

    timeline = Timeline.load(TableLocation.of(str(path)))
    rows = []
    for instant in timeline:
        counts: tuple = (None,) * (len(COLUMNS) - 4)
        operation = None
        if instant.is_completed and instant.action in COMMIT_ACTIONS:
            meta = timeline.commit_metadata(instant)
            stats = meta.write_stats()
            operation = meta.operation_type
            replaced = sum(len(ids) for ids in meta.replaced_file_ids().values())
            counts = (
                sum(s.num_inserts for s in stats), sum(s.num_update_writes for s in stats),
                sum(s.num_deletes for s in stats), sum(s.num_writes for s in stats),
                sum(1 for s in stats if s.path), sum(1 for s in stats if s.path and s.is_delta),
                len({s.partition_path for s in stats}), replaced, sum(s.total_write_bytes for s in stats),
            )
        rows.append(TimelineRow(instant.timestamp, str(instant.action), instant.state.name, operation, *counts))
    return rows


class HudiTimelineFunction:
    """The UDTF: `hudi_timeline(path)` -> one row per instant."""

    def eval(self, path: str) -> Iterator[tuple]:
        if path is None:
            raise ValueError("hudi_timeline(path): the table path is null")
        for row in timeline_rows(path):
            yield astuple(row)


def register_timeline_function(spark) -> None:
    """Make `hudi_timeline(path)` callable from SQL in `spark` (idempotent)."""
    from pyspark.sql.functions import udtf

    from hudi_engine.spark.executor_env import ensure_executor_env

    ensure_executor_env(spark)  # before the function captures the session's Python files
    spark.udtf.register(FUNCTION_NAME, udtf(HudiTimelineFunction, returnType=SCHEMA_DDL))
