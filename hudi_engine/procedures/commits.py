"""The procedures that read commits off the timeline: `show_commits`, `show_commits_metadata`,
`show_archived_commits(_metadata)`, `show_commit_files`, `show_commit_partitions`, `show_commit_write_stats`,
`show_commit_extra_metadata`, `commits_compare` and `stats_wa`. Each row is what Hudi 1.2's procedure of that name
computes from the same commit metadata (HoodieCommitMetadata's `fetchTotal*` sums)."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from hudi_engine.errors import ConfigError
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.table import HudiTable
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archived_entries
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State, datetime_to_instant
from hudi_engine.timeline.layout import TimelineLayoutV2

Row = tuple


def completion_time(timeline: Timeline, instant: Instant) -> str | None:
    """When `instant` completed: the time layout 2 records; in layout 1 its file's modification time, as Hudi 1.2
    reads a version-6 timeline."""
    if instant.completion_time is not None:
        return instant.completion_time
    mtime = timeline.storage.mtime_ms(timeline.path_of(instant))
    return None if mtime is None else datetime_to_instant(datetime.fromtimestamp(mtime / 1000, UTC))


def completed_commits_newest_first(timeline: Timeline) -> list[Instant]:
    """Hudi's `getCommitsTimeline().filterCompletedInstants()`, sorted by requested time, newest first."""
    return sorted((i for i in timeline if i.is_completed and (i.action in COMMIT_ACTIONS or
                                                              i.action is Action.LOG_COMPACTION)),
                  key=lambda i: i.timestamp, reverse=True)


def _stats(meta: CommitMetadata) -> list[WriteStat]:
    return [s for stats in meta.partition_to_write_stats.values() for s in stats]


def totals(meta: CommitMetadata) -> dict[str, int]:
    """HoodieCommitMetadata's fetchTotal* values."""
    stats = _stats(meta)
    return {
        "bytes": sum(s.total_write_bytes for s in stats),
        "files_inserted": sum(1 for s in stats if s.prev_commit is not None and s.prev_commit.lower() == NULL_COMMIT),
        "files_updated": sum(1 for s in stats if s.prev_commit is not None and s.prev_commit.lower() != NULL_COMMIT),
        "partitions": len(meta.partition_to_write_stats),
        "records": sum(s.num_writes for s in stats),
        "update_records": sum(s.num_update_writes for s in stats),
        "errors": sum(s.total_write_errors for s in stats),
    }


def _commit_row(time: str, completed: str | None, action: str | None, meta: CommitMetadata) -> Row:
    t = totals(meta)
    head = (time, completed) if action is None else (time, completed, action)
    return (*head, t["bytes"], t["files_inserted"], t["files_updated"], t["partitions"], t["records"],
            t["update_records"], t["errors"])


def _stat_rows(time: str, completed: str | None, action: str, meta: CommitMetadata) -> Iterable[Row]:
    for partition_stats in meta.partition_to_write_stats.values():
        for s in partition_stats:
            yield (time, completed, action, s.partition_path, s.file_id, s.prev_commit, s.num_writes, s.num_inserts,
                   s.num_deletes, s.num_update_writes, s.total_write_errors, s.total_log_blocks,
                   s.total_corrupt_log_block, s.total_rollback_blocks, s.total_log_records,
                   s.total_updated_records_compacted, s.total_write_bytes)


def show_commits(args: Arguments, *, metadata: bool = False) -> list[Row]:
    table = HudiTable.load(args.table_path())
    rows: list[Row] = []
    for instant in completed_commits_newest_first(table.timeline):
        meta = table.commit_metadata(instant)
        done = completion_time(table.timeline, instant)
        if metadata:
            rows += _stat_rows(instant.timestamp, done, instant.action.value, meta)
        else:
            rows.append(_commit_row(instant.timestamp, done, instant.action.value, meta))
        if len(rows) >= args["limit"]:
            break
    return rows[: max(args["limit"], 0)]


def show_commits_metadata(args: Arguments) -> list[Row]:
    return show_commits(args, metadata=True)


def archived_commits(table: HudiTable) -> list[tuple[Instant, str | None, CommitMetadata]]:
    """The completed commits archival moved off the active timeline, with their completion times and metadata:
    layout 1's archive log files (`.hoodie/archived`), layout 2's LSM history (`.hoodie/timeline/history`)."""
    layout = table.timeline.layout
    out = []
    if isinstance(layout, TimelineLayoutV2):
        history = TimelineHistory.of(table.location, layout.timeline_path, layout.history_path)
        for r in [] if history.is_empty() else history.records():
            instant = r.to_instant()
            if instant is not None and instant.action in COMMIT_ACTIONS:
                out.append((instant, r.completion_time,
                            CommitMetadata.from_avro(r.metadata or b"", file_name=f"{history.folder}: {r.instant_time}")))
        return out
    for entry in archived_entries(table.location):
        record = entry.get("hoodieCommitMetadata") or entry.get("hoodieReplaceCommitMetadata")
        if entry.get("actionState") != State.COMPLETED.name or record is None:
            continue
        instant = Instant(entry["commitTime"], Action(entry["actionType"]))
        out.append((instant, entry.get("stateTransitionTime"),
                    CommitMetadata.from_dict(record, file_name=f"archived {instant}")))
    return out


def show_archived_commits(args: Arguments, *, metadata: bool = False) -> list[Row]:
    """Archived completed commits with start_ts < instant <= end_ts, newest first (Hudi's defaults: 10 days ago to
    1 day ago, so a commit archived today shows only with a range given)."""
    table = HudiTable.load(args.table_path())
    now = datetime.now(UTC)
    start = args["start_ts"] or datetime_to_instant(now - timedelta(days=10))
    end = args["end_ts"] or datetime_to_instant(now - timedelta(days=1))
    rows: list[Row] = []
    for instant, done, meta in sorted(archived_commits(table), key=lambda c: c[0].timestamp, reverse=True):
        if not start < instant.timestamp <= end:
            continue
        if metadata:
            rows += _stat_rows(instant.timestamp, done, instant.action.value, meta)
        else:
            rows.append(_commit_row(instant.timestamp, done, None, meta))
    return rows[: max(args["limit"], 0)]


def show_archived_commits_metadata(args: Arguments) -> list[Row]:
    return show_archived_commits(args, metadata=True)


def find_commit(table: HudiTable, instant_time: str) -> Instant:
    """The completed commit at `instant_time`, or Hudi's error ("Commit X not found in Commits ...")."""
    for instant in completed_commits_newest_first(table.timeline):
        if instant.timestamp == instant_time:
            return instant
    known = ", ".join(i.timestamp for i in reversed(completed_commits_newest_first(table.timeline)))
    raise ConfigError(f"Commit {instant_time} not found in Commits of {table.base_path}: [{known}]")


def show_commit_files(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    instant = find_commit(table, args["instant_time"])
    rows = [(instant.action.value, s.partition_path, s.file_id, s.prev_commit, s.num_update_writes, s.num_writes,
             s.total_write_bytes, s.total_write_errors, s.file_size_in_bytes)
            for s in _stats(table.commit_metadata(instant))]
    return rows[: max(args["limit"], 0)]


def show_commit_partitions(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    instant = find_commit(table, args["instant_time"])
    rows = []
    for partition, stats in table.commit_metadata(instant).partition_to_write_stats.items():
        added = sum(1 for s in stats if s.prev_commit == NULL_COMMIT)
        rows.append((instant.action.value, partition, added, len(stats) - added,
                     sum(s.num_inserts for s in stats),
                     sum(s.num_update_writes for s in stats if s.prev_commit != NULL_COMMIT),
                     sum(s.total_write_bytes for s in stats), sum(s.total_write_errors for s in stats)))
    return rows[: max(args["limit"], 0)]


def show_commit_write_stats(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    instant = find_commit(table, args["instant_time"])
    t = totals(table.commit_metadata(instant))
    average = -(-t["bytes"] // t["records"]) if t["records"] else 0  # Hudi: Math.ceil of the quotient
    return [(instant.action.value, t["bytes"], t["records"], average)][: max(args["limit"], 0)]


def show_commit_extra_metadata(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    wanted = args["instant_time"]
    instant = find_commit(table, wanted) if wanted else next(iter(completed_commits_newest_first(table.timeline)),
                                                               None)
    if instant is None:
        return []
    extra = table.commit_metadata(instant).extra_metadata
    key = args["metadata_key"]
    rows = [(instant.timestamp, instant.action.value, k, v) for k, v in extra.items() if key is None or k == key]
    return rows[: max(args["limit"], 0)]


def commits_compare(args: Arguments) -> list[Row]:
    source = HudiTable.load(args.table_path())
    target = HudiTable.load(args["path"])

    def commits(t: HudiTable) -> list[str]:
        return [i.timestamp for i in reversed(completed_commits_newest_first(t.timeline))]

    mine, theirs = commits(source), commits(target)
    source_latest, target_latest = (mine[-1] if mine else "0"), (theirs[-1] if theirs else "0")
    if target_latest > source_latest:
        behind = [c for c in theirs if c > source_latest]
        text = f"is behind by {len(behind)} commits. Commits to catch up - [{', '.join(behind)}]"
    else:
        ahead = [c for c in mine if c > target_latest]
        text = f"is ahead by {len(ahead)} commits. Commits to catch up - [{', '.join(ahead)}]"
    return [(f"Source {source.config.name} {text}",)]


def _waf(written: int, upserted: int) -> str:
    # Java's DecimalFormat("#.00") of a float quotient: no leading zero below 1 (".50"), HALF_EVEN rounding.
    if upserted <= 0:
        return "0"
    text = f"{written / upserted:.2f}"
    return text[1:] if text.startswith("0.") else text


def stats_wa(args: Arguments) -> list[Row]:
    """Write amplification per completed commit and replace commit (Hudi: getCommitAndReplaceTimeline)."""
    table = HudiTable.load(args.table_path())
    rows: list[Row] = []
    upserted = written = 0
    for instant in table.timeline:
        if not instant.is_completed or instant.action not in (Action.COMMIT, Action.REPLACE_COMMIT):
            continue
        t = totals(table.commit_metadata(instant))
        rows.append((instant.timestamp, t["update_records"], t["records"], _waf(t["records"], t["update_records"])))
        upserted += t["update_records"]
        written += t["records"]
    rows.append(("Total", upserted, written, _waf(written, upserted)))
    return rows[: max(args["limit"], 0)]
