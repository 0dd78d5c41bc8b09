"""`WriteResult`: what one write did, returned by `hudi_engine.spark.write`."""
from __future__ import annotations

from dataclasses import dataclass, field

from hudi_engine.errors import HudiError
from hudi_engine.file_naming import BaseFileName, LogFileName, WriteToken, is_log_file_name
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import WriteStat


@dataclass
class WriteResult:
    """What one write did: the instant, the operation, record and file counts, bytes, how many tasks wrote files,
    and time per phase.

    `timings` in seconds: `tag` keying, tagging and counting the records (wall), `plan` listing and planning
    buckets, `write` the wall time from the start to the last file, `handles` the task time spent in handles
    (summed over tasks), `commit`, `table_services`. `tasks` counts the Spark tasks that wrote files (the
    partition ids in the files' write tokens)."""

    instant_time: str
    operation: str
    records_inserted: int = 0
    records_updated: int = 0
    records_deleted: int = 0
    files_created: int = 0
    files_rewritten: int = 0
    files_appended: int = 0
    bytes_written: int = 0
    tasks: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The timeline as the commit left it (set by `Transaction.commit`): the listing under the commit's lock with
        # this commit completed, its latest write commit; the caller's `HudiTable` takes it (`table.timeline = ...`).
        # The post-commit services may have added instants or archived old ones since: whoever reads file slices
        # lists the timeline again (`HudiTable.reload_timeline`). Not a field: the result stays plain data
        # (`dataclasses.asdict`, JSON).
        self.timeline: Timeline | None = None

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
        r.tasks = len({token.partition_id for token in map(write_token_of, stats) if token is not None})
        return r


def write_token_of(stat: WriteStat) -> WriteToken | None:
    """The write token in the name of the file a stat describes."""
    name = (stat.path or "").rsplit("/", 1)[-1]
    try:
        token = LogFileName.parse(name).write_token if is_log_file_name(name) else BaseFileName.parse(name).write_token
    except HudiError:
        return None
    return WriteToken.parse(token) if token else None
