"""`WriteResult`: what one write did, returned by `hudi_engine.spark.write`."""
from __future__ import annotations

from dataclasses import dataclass, field

from hudi_engine.timeline.commit_metadata import WriteStat


@dataclass
class WriteResult:
    """What one write did: the instant, the operation, record and file counts, bytes and time per phase.

    `timings` in seconds: `write` the wall time of the Spark job (index and handles run inside its tasks),
    `index` and `handles` the task time spent in each, summed over tasks, `commit`, `table_services`."""

    instant_time: str
    operation: str
    records_inserted: int = 0
    records_updated: int = 0
    records_deleted: int = 0
    files_created: int = 0
    files_rewritten: int = 0
    files_appended: int = 0
    bytes_written: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def from_stats(instant: str, operation: str, stats: list[WriteStat], timings: dict[str, float]) -> "WriteResult":
        r = WriteResult(instant, operation, timings=dict(timings))
        for s in stats:
            r.records_inserted += s.num_inserts
            r.records_updated += s.num_update_writes
            r.records_deleted += s.num_deletes
            r.bytes_written += s.total_write_bytes
            if s.is_delta:
                r.files_appended += 1
            elif s.prev_commit in (None, "null"):
                r.files_created += 1
            else:
                r.files_rewritten += 1
        return r
