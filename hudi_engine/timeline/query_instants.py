"""`QueryInstants`: the instants a read names (a time travel instant, an incremental range), checked against one
listing of a table's timeline, and the commits of a range. Refused as Hudi refuses them: an instant that is not
digits, a range whose begin is after its end, an instant older than the active timeline once instants were archived
(`.hoodie/archived/` in layout 1, the LSM history in layout 2), time travel at or after a pending write or before
what the latest clean retains. Every error names the table and what is available.

`HudiTable` makes one per timeline listing; the read planners (`hudi_engine.scan_plan`, `hudi_engine.cdc_query`)
check their queries with it. Whether cleaning removed a file version a read needs is checked where the file groups
are listed (`HudiTable.latest_file_slices`), not here.
"""
from __future__ import annotations

from collections.abc import Callable

from hudi_engine.errors import HudiError
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.archived import archive_files, archive_folder, newest_archived_commit
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State
from hudi_engine.timeline.layout import TimelineLayoutV2
from hudi_engine.timeline.timeline import Timeline


class QueryInstants:
    """The checks of a query's instants against `timeline`, the table's active timeline as listed (its location for
    the archived timeline and the LSM history), and `config` for the archive folder and the messages."""

    def __init__(self, config: TableConfig, timeline: Timeline) -> None:
        self.config = config
        self.timeline = timeline
        self._history_commits: list[Instant] | None = None  # layout 2: the LSM history's commits, read once

    @property
    def location(self) -> TableLocation:
        return self.timeline.location

    @property
    def _where(self) -> str:
        return f"table {self.config.name!r} ({self.location.base_path})"

    def available(self) -> str:
        """What instants a query can name, for error messages."""
        commits = self.timeline.completed_commits()
        if not commits:
            return "the table has no completed commits"
        if self.timeline.layout.incremental_by_completion_time:  # ranges are of completion times there
            return (f"{len(commits)} completed commits, requested from {commits[0].timestamp} to "
                    f"{commits[-1].timestamp}, completed from {commits[0].completion_time} to "
                    f"{commits[-1].completion_time}")
        return f"completed commits from {commits[0].timestamp} to {commits[-1].timestamp} ({len(commits)})"

    def check_time_travel(self, as_of: str) -> None:
        """Refuse time travel as Hudi does (`TimelineUtils.validateTimestampAsOf`): at or after the first pending
        write (a commit, deltacommit or replacecommit not completed, clustering aside), which the read would
        silently miss once it completes; before what the latest clean retains: its earliest commit to retain
        (KEEP_LATEST_COMMITS), or, when it names none (KEEP_LATEST_FILE_VERSIONS), the first completed write of the
        active timeline. Files may still be there, but the instant is outside the window every reader agrees on."""
        where = self._where
        pending = self.timeline.filter(
            lambda i: not i.is_completed and i.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
            and not (i.action is Action.REPLACE_COMMIT and is_clustering(self.timeline, i))).first()
        if pending is not None and as_of >= pending.timestamp:
            raise HudiError(
                f"{where}: time travel instant {as_of} is at or after the first pending write, {pending.action} "
                f"{pending.timestamp} ({pending.state.name.lower()}): the read would miss what it writes if it "
                f"completes. Read as of an instant before {pending.timestamp}, or roll the failed write back "
                f"(HudiTable.rollback). Available: {self.available()}")
        clean = self.timeline.filter_by([Action.CLEAN], [State.COMPLETED]).last()
        if clean is None:
            return
        data = self.timeline.read_content(clean)
        meta = read_avro_metadata(data, file_name=self.timeline.path_of(clean)) if data else {}
        retained = meta.get("earliestCommitToRetain") or None
        policy = "hoodie.cleaner.commits.retained"
        if retained is None:
            first = self.timeline.write_timeline().filter(lambda i: i.is_completed).first()
            retained, policy = (first.timestamp if first else None), "hoodie.cleaner.fileversions.retained"
        if retained is not None and as_of < retained:
            raise HudiError(
                f"{where}: instant {as_of} was cleaned: the last clean "
                f"({clean.timestamp}) retains instants from {retained} on ({policy}). Available: instants "
                f"from {retained} to {self.timeline.completed_commits().last().timestamp}"  # type: ignore[union-attr]
            )

    def check_instant(self, value: str | None, what: str, *, range_end: bool = False) -> str | None:
        """`value` as an instant time: digits, not before the active timeline when older instants were archived.
        (Whether cleaning removed what a read as of it needs is checked once its file groups are listed.) An instant
        before the first commit of a table that archived nothing reads an empty table, as in Hudi. `range_end`: the
        end of an incremental range (a completion time in timeline layout 2)."""
        value = _instant(value, f"{self._where}: {what}", self.available)
        if value is not None:
            self._check_not_archived(value, what, range_end=range_end)
        return value

    def check_range(self, start: str, end: str | None, *, archived_begin: bool = False) -> tuple[str, str | None]:
        """(start, end] of an incremental read: digits, start not after end, an end on the active timeline.
        `archived_begin`: the range may reach archived commits (a read of the latest state of what the range wrote
        does not need their metadata, as in Hudi 1.x); otherwise (a CDC read, which does) no archived commit may be
        in the range."""
        start = _digits(start, f"{self._where}: incremental begin instant", self.available)
        if not archived_begin:
            self._check_not_archived(start, "incremental begin instant", begin=True)
        end = self.check_instant(end, "incremental end instant", range_end=True)
        if end is not None and start > end:
            raise HudiError(
                f"{self._where}: incremental begin instant {start} is after the end "
                f"instant {end}; the range is (begin, end]. Available: {self.available()}"
            )
        return start, end

    def incremental_commits(self, start_instant: str, end_instant: str | None = None) -> list[Instant]:
        """Completed commit-like instants in (start, end]: by requested time in timeline layout 1, by completion
        time in layout 2 (Hudi 1.x, whose incremental queries and hudi-rs read ranges of completion time)."""
        if not self.timeline.layout.incremental_by_completion_time:
            return [i for i in self.timeline.completed_commits()
                    if i.timestamp > start_instant and (end_instant is None or i.timestamp <= end_instant)]
        commits = [i for i in self.timeline.completed_commits() if i.completion_time is not None]
        first = min((i.completion_time for i in commits if i.completion_time is not None), default=None)
        if first is None or start_instant < first:
            # The range may reach commits archival moved to the LSM history: Hudi 1.x reads them from there too.
            active = {i.timestamp for i in commits}
            commits = [*(i for i in self.history_commits() if i.timestamp not in active), *commits]
        return [i for i in commits if (c := i.completion_time or i.timestamp) > start_instant
                and (end_instant is None or c <= end_instant)]

    def history_commits(self) -> list[Instant]:
        """Timeline layout 2: the completed commits archival moved to the LSM history, with their completion
        times (read once for this listing; none in layout 1)."""
        if self._history_commits is None:
            layout = self.timeline.layout
            self._history_commits = []
            if isinstance(layout, TimelineLayoutV2):
                history = TimelineHistory.of(self.location, layout.timeline_path, layout.history_path)
                if not history.is_empty():
                    self._history_commits = [i for i in history.instants() if i.action in COMMIT_ACTIONS]
        return self._history_commits

    def latest_range_end(self) -> str | None:
        """The newest commit an open-ended range reaches: its instant (layout 1) or completion time (layout 2)."""
        commits = self.timeline.completed_commits()
        latest = commits.last()
        if latest is None:
            return None
        if self.timeline.layout.incremental_by_completion_time:
            return max(c.completion_time or c.timestamp for c in commits)
        return latest.timestamp

    def incremental_end(self, start_instant: str, end_instant: str | None = None) -> str | None:
        """The instant an incremental read's slices are taken as of: the range's end in layout 1, the last
        requested time of the range's commits in layout 2; None when the range holds no commit."""
        commits = self.incremental_commits(start_instant, end_instant)
        if not commits:
            return None
        if self.timeline.layout.incremental_by_completion_time:
            return max(c.timestamp for c in commits)
        return end_instant or commits[-1].timestamp

    # ---- archived instants ----------------------------------------------------------------------------------

    def _check_not_archived(self, instant: str, what: str, *, begin: bool = False, range_end: bool = False) -> None:
        """Refuse a read named by an instant older than the active timeline once instants were archived: a time
        travel or range end there would read file versions cleaning may have deleted, through commits no reader
        sees; an incremental begin there would miss the archived commits after it (a begin at or after the newest
        archived commit misses nothing). In layout 2 an incremental range's bounds are completion times: `begin` is
        checked against the newest completion time in the LSM history, and a `range_end` (never before its begin)
        needs no check of its own."""
        location, table, timeline = self.location, self.config, self.timeline
        if isinstance(timeline.layout, TimelineLayoutV2):
            if not range_end:
                self._check_not_in_history(timeline.layout, instant, what, by_completion=begin)
            return
        commits = timeline.completed_commits()
        first, last = commits.first(), commits.last()
        if first is None or last is None or instant >= first.timestamp:
            return
        if not archive_files(location, table):
            return  # nothing archived: an instant before the first commit reads an empty table, as in Hudi
        where = self._where
        archived = (f"the instants before it were archived to {archive_folder(location, table)} "
                    "(hoodie.keep.min.commits / hoodie.keep.max.commits)")
        if begin:
            newest = newest_archived_commit(location, table)
            if newest is None or instant >= newest:
                return
            raise HudiError(
                f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; "
                f"{archived}, up to {newest}, so an incremental read from {instant} would miss them. Begin at {newest} "
                f"or later (commits from {first.timestamp} to {last.timestamp} are readable), or read a snapshot.")
        raise HudiError(
            f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; {archived} "
            f"and their file versions may be cleaned. Read as of an instant from {first.timestamp} to "
            f"{last.timestamp}.")

    def _check_not_in_history(self, layout: TimelineLayoutV2, instant: str, what: str, *,
                              by_completion: bool) -> None:
        """Layout 2: a time travel instant (a requested time, as readers take it) before the first active commit,
        or an incremental bound (a completion time) before the newest completion time archived, once the LSM
        history holds commits. The history is read only when the instant could be before it."""
        commits = self.timeline.completed_commits()
        first, last = commits.first(), commits.last()
        if first is None or last is None:
            return
        if not by_completion and instant >= first.timestamp:
            return
        history = TimelineHistory.of(self.location, layout.timeline_path, layout.history_path)
        if history.is_empty():
            return  # nothing archived: an instant before the first commit reads an empty table, as in Hudi
        archived = [i for i in history.instants() if i.action in COMMIT_ACTIONS]
        if not archived:
            return
        where = self._where
        place = (f"archived to the timeline history {history.folder} (hoodie.keep.min.commits / "
                 "hoodie.keep.max.commits)")
        if by_completion:
            newest = max(i.completion_time or i.timestamp for i in archived)
            if instant >= newest:
                return
            completed = [c.completion_time or c.timestamp for c in commits]
            raise HudiError(
                f"{where}: {what} {instant} is a completion time before the newest one of the commits {place}, "
                f"{newest}, so an incremental read from {instant} would miss them. Begin at {newest} or later (commits "
                f"completed from {min(completed)} to {max(completed)} are on the active timeline), or read a "
                "snapshot.")
        raise HudiError(
            f"{where}: {what} {instant} is before the active timeline, which starts at {first.timestamp}; the instants "
            f"before it were {place}, {len(archived)} commits up to {archived[-1].timestamp}, and their file versions "
            f"may be cleaned. Read as of an instant from {first.timestamp} to {last.timestamp}.")


def _instant(value: str | None, what: str = "instant time", available: Callable[[], str] | None = None) -> str | None:
    """Accept an instant time string, or anything whose str() is one (e.g. an int), or None."""
    return None if value is None else _digits(value, what, available)


def _digits(value: str, what: str = "instant time", available: Callable[[], str] | None = None) -> str:
    """Accept an instant time string, or anything whose str() is one (e.g. an int)."""
    value = str(value)
    if not value.isdigit():
        tail = f". Available: {available()}" if available is not None else ""
        raise HudiError(f"{what} {value!r}: expected digits, yyyyMMddHHmmssSSS{tail}")
    return value
