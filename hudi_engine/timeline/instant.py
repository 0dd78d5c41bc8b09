"""Instants of the active timeline (table version 6, layout 1): `<timestamp>.<action>[.<state>]` in `.hoodie/`.

An instant is (timestamp, action, state). Layout 1 never renames: every transition creates the next state's
file, and a few names are irregular (FORMAT.md, Instant files):

| action        | requested                   | inflight                      | completed          |
|---------------|-----------------------------|-------------------------------|--------------------|
| commit        | `<ts>.commit.requested`     | `<ts>.inflight` (legacy name) | `<ts>.commit`      |
| compaction    | `<ts>.compaction.requested` | `<ts>.compaction.inflight`    | `<ts>.commit`      |
| logcompaction | `<ts>.logcompaction.requested` | `<ts>.logcompaction.inflight` | `<ts>.deltacommit` |
| savepoint     | (none)                      | `<ts>.savepoint.inflight`     | `<ts>.savepoint`   |
| others        | `<ts>.<a>.requested`        | `<ts>.<a>.inflight`           | `<ts>.<a>`         |

Instant times are `yyyyMMddHHmmssSSS` strings compared as plain strings; 14-digit (second granularity) and
longer metadata-table instants (`<ts>001`) exist too. This engine generates them in UTC.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from enum import IntEnum, StrEnum

from hudi_engine.errors import TimelineError


class State(IntEnum):
    """Instant states, in the order the layout-1 collapse and the timeline ordering use."""

    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


class Action(StrEnum):
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"
    CLUSTERING = "clustering"  # layout 2 only: a pending clustering; it completes as a replacecommit


COMMIT = Action.COMMIT
DELTA_COMMIT = Action.DELTA_COMMIT
REPLACE_COMMIT = Action.REPLACE_COMMIT
COMPACTION = Action.COMPACTION
LOG_COMPACTION = Action.LOG_COMPACTION
CLEAN = Action.CLEAN
ROLLBACK = Action.ROLLBACK
SAVEPOINT = Action.SAVEPOINT
RESTORE = Action.RESTORE
INDEXING = Action.INDEXING
CLUSTERING = Action.CLUSTERING

# A (log) compaction completes as a commit (deltacommit): grouping, ordering and the completed file use these.
_COMPARABLE_ACTION = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT,
                      Action.CLUSTERING: Action.REPLACE_COMMIT}

# Actions whose completed file carries HoodieCommitMetadata JSON (the "commits timeline" of readers).
COMMIT_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION})

_NAME_RE = re.compile(r"^(\d+)(\.\w+)(\.\D+)?$")
# What an instant file of any Hudi looks like: `<digits>.<action>[.<state>]`, layout 2's `<digits>_<digits>.<action>`.
# Hudi keeps only the extensions it knows (VALID_EXTENSIONS_IN_ACTIVE_TIMELINE), so an instant-like name no layout
# parses (a newer Hudi's action or state) is skipped by readers and refused by writers (table_features). Names of
# another shape are never instants: `hoodie.properties*`, dot files (macOS `._<ts>.commit`, Hadoop's `.crc`), Hudi's
# `<name>.<uuid>` temp files (a third suffix, or one with a digit or '-').
_INSTANT_LIKE_RE = re.compile(r"^\d+(?:_\d+)?\.[A-Za-z]\w*(?:\.[A-Za-z]\w*)?$")


def looks_like_instant_file(name: str) -> bool:
    """Whether a file of the timeline folder is named like an instant file (of any action or state)."""
    return _INSTANT_LIKE_RE.match(name) is not None

_STATE_SUFFIX = {".requested": State.REQUESTED, ".inflight": State.INFLIGHT, "": State.COMPLETED}
# The legacy spelling of a COW commit in flight: `<ts>.inflight` (never `<ts>.commit.inflight`).
_LEGACY_INFLIGHT = "inflight"

INSTANT_TIME_FORMAT_LENGTH = 17  # yyyyMMddHHmmssSSS
_SECONDS_FORMAT_LENGTH = 14  # yyyyMMddHHmmss, parsed as if the milliseconds were 999


def _valid_timestamp(ts: str) -> bool:
    # 14 digits (second granularity, or the reserved 0000000000000x instants), 17 digits, or longer for the
    # metadata table's suffixed instants. 15/16 or fewer than 14 digits are never written by Hudi.
    n = len(ts)
    return ts.isdigit() and ts.isascii() and (n == _SECONDS_FORMAT_LENGTH or n >= INSTANT_TIME_FORMAT_LENGTH)


@dataclass(frozen=True, slots=True, eq=True, order=False)
class Instant:
    """One action at one instant time in one state; ordered by (timestamp, comparable action, state).

    `timestamp` is the requested time, which names the instant. Layout 2 (Hudi 1.x) also records when a completed
    instant completed (`completion_time`); it takes no part in equality or ordering.
    """

    timestamp: str
    action: Action
    state: State = State.COMPLETED
    completion_time: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.timestamp, str) or not _valid_timestamp(self.timestamp):
            raise TimelineError(
                f"instant time {self.timestamp!r}: expected 14 or at least 17 digits (yyyyMMddHHmmss[SSS])"
            )
        try:
            object.__setattr__(self, "action", Action(self.action))
        except ValueError:
            raise TimelineError(
                f"instant {self.timestamp}: unknown action {self.action!r}; expected one of "
                f"{', '.join(a.value for a in Action)}"
            ) from None
        try:
            object.__setattr__(self, "state", State(self.state))
        except ValueError:
            raise TimelineError(f"instant {self.timestamp}.{self.action}: unknown state {self.state!r}") from None
        if self.action is Action.SAVEPOINT and self.state is State.REQUESTED:
            raise TimelineError(f"instant {self.timestamp}.savepoint: savepoints have no requested state")
        if self.completion_time is not None and (
            self.state is not State.COMPLETED or not _valid_timestamp(self.completion_time)
        ):
            raise TimelineError(
                f"instant {self.timestamp}.{self.action.value}: completion time {self.completion_time!r} needs a "
                "completed instant and 14 or at least 17 digits"
            )

    # --- file names -------------------------------------------------------------------------------------

    @staticmethod
    def parse_file_name(name: str) -> Instant | None:
        """The instant a `.hoodie/` file name stands for; None for files that are not instants.

        Like Hudi, names that do not look like `<digits>.<action>[.<state>]` with a known action and state are not
        instants (`hoodie.properties`, layout-2 `<ts>_<ts>.commit`, temp files, `<ts>.commit.<unknown>`) and are
        ignored (writers refuse the instant-like ones: table_features). A name with a known action and state but an
        impossible spelling or timestamp (`<ts>.commit.inflight`, `<ts>.compaction`, `<ts>.savepoint.requested`,
        `123.commit`) raises TimelineError, since only a foreign writer makes them.
        """
        m = _NAME_RE.match(name)
        if m is None:
            return None
        ts, action_ext, state_ext = m.group(1), m.group(2)[1:], m.group(3) or ""
        if action_ext == _LEGACY_INFLIGHT and not state_ext:
            instant = Instant._from_name_parts(name, ts, Action.COMMIT, State.INFLIGHT)
        else:
            try:
                action = Action(action_ext)
            except ValueError:
                return None
            state = _STATE_SUFFIX.get(state_ext)
            if state is None:
                # Hudi keeps only the extensions it knows: `<ts>.commit.<other>` is no instant to it either. Writers
                # refuse such a file by name (table_features: unknown instant files).
                return None
            instant = Instant._from_name_parts(name, ts, action, state)
        if instant.file_name != name:
            raise TimelineError(
                f"timeline file {name!r}: not a layout-1 instant file name; {instant.action.value} "
                f"{instant.state.name} is spelt {instant.file_name!r}"
            )
        return instant

    @staticmethod
    def _from_name_parts(name: str, ts: str, action: Action, state: State) -> Instant:
        try:
            return Instant(ts, action, state)
        except TimelineError as e:
            raise TimelineError(f"timeline file {name!r}: {e}") from None

    @property
    def file_name(self) -> str:
        """The layout-1 file name of this instant in this state."""
        ts, action = self.timestamp, self.action
        if self.state is State.COMPLETED:
            return f"{ts}.{_COMPARABLE_ACTION.get(action, action).value}"
        if self.state is State.INFLIGHT:
            return f"{ts}.inflight" if action is Action.COMMIT else f"{ts}.{action.value}.inflight"
        return f"{ts}.{action.value}.requested"

    def state_file_names(self) -> list[str]:
        """The file names of every state this instant's action passes through, requested first."""
        states = [s for s in State if not (self.action is Action.SAVEPOINT and s is State.REQUESTED)]
        return [Instant(self.timestamp, self.action, s).file_name for s in states]

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action.value}__{self.state.name}]"

    # --- state helpers ----------------------------------------------------------------------------------

    @property
    def is_requested(self) -> bool:
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state is State.INFLIGHT

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_pending_compaction(self) -> bool:
        """A scheduled or running compaction (its completed form is a commit)."""
        return self.action is Action.COMPACTION and self.state is not State.COMPLETED

    @property
    def comparable_action(self) -> Action:
        """compaction -> commit, logcompaction -> deltacommit; other actions unchanged."""
        return _COMPARABLE_ACTION.get(self.action, self.action)

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state)

    def completed(self) -> Instant:
        """The completed instant as the timeline shows it (a compaction completes as a commit); a completed one keeps
        its completion time."""
        return Instant(self.timestamp, self.comparable_action, State.COMPLETED,
                       self.completion_time if self.is_completed else None)

    # --- ordering ---------------------------------------------------------------------------------------

    @property
    def sort_key(self) -> tuple[str, str, int]:
        return (self.timestamp, self.comparable_action.value, int(self.state))

    def __lt__(self, other: Instant) -> bool:
        return self.sort_key < other.sort_key

    def __le__(self, other: Instant) -> bool:
        return self.sort_key <= other.sort_key

    def __gt__(self, other: Instant) -> bool:
        return self.sort_key > other.sort_key

    def __ge__(self, other: Instant) -> bool:
        return self.sort_key >= other.sort_key


# --- instant time <-> datetime ---------------------------------------------------------------------------


def instant_to_datetime(timestamp: str, tz: tzinfo = UTC) -> datetime:
    """The moment an instant time stands for, as an aware datetime in `tz` (the table's timeline timezone).

    14-digit instants get 999 ms, as Hudi parses them; digits past the 17th (metadata-table suffixes) are ignored.
    """
    if not _valid_timestamp(timestamp):
        raise TimelineError(f"instant time {timestamp!r}: expected 14 or at least 17 digits (yyyyMMddHHmmss[SSS])")
    text = timestamp + "999" if len(timestamp) == _SECONDS_FORMAT_LENGTH else timestamp[:INSTANT_TIME_FORMAT_LENGTH]
    try:
        naive = datetime.strptime(text[:14], "%Y%m%d%H%M%S")
    except ValueError:
        raise TimelineError(
            f"instant time {timestamp!r} is not a date (reserved instants such as 00000000000000 have no time)"
        ) from None
    return naive.replace(microsecond=int(text[14:17]) * 1000, tzinfo=tz)


def datetime_to_instant(moment: datetime, tz: tzinfo = UTC) -> str:
    """`yyyyMMddHHmmssSSS` of `moment` in `tz`; a naive datetime is taken as already in `tz`."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(tz)
    if not 1 <= moment.year <= 9999:
        raise TimelineError(f"datetime {moment!r} has no 4-digit year for an instant time")
    return (
        f"{moment.year:04d}{moment.month:02d}{moment.day:02d}{moment.hour:02d}{moment.minute:02d}"
        f"{moment.second:02d}{moment.microsecond // 1000:03d}"
    )


class InstantTimeGenerator:
    """Issues instant times from the clock that strictly increase within this generator (as Hudi's does per JVM), in
    UTC or, for a table whose `hoodie.table.timeline.timezone` is LOCAL, in this machine's zone
    (`HoodieInstantTimeGenerator` with `HoodieTimelineTimeZone.LOCAL`: the JVM's default zone).

    A caller's `after` (its table's latest instant) steps a time past a timeline that is ahead of the clock. Such a
    stepped time is not the floor of later calls: one table with instants in the future (a skewed writer) must not
    lift the instants of every other table this process writes, as Hudi's clock-only generator would not. Stepped
    times are remembered only so that two calls stepping past the same timeline never get the same time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # by `local`: a UTC table's instants do not push a LOCAL table's
        self._last = {False: "", True: ""}  # the latest time taken from the clock
        self._stepped: dict[bool, set[str]] = {False: set(), True: set()}  # times issued ahead of the clock

    def new_instant_time(self, after: str | None = None, *, now: datetime | None = None, local: bool = False) -> str:
        """An instant time from the clock, past every clock time issued before, and bumped by 1 ms past `after`."""
        with self._lock:
            moment = now or datetime.now(UTC)
            zone = moment.astimezone().tzinfo if local else UTC  # astimezone(): this machine's zone at that moment
            candidate = datetime_to_instant(moment, zone or UTC)
            if candidate <= self._last[local]:  # two calls within one millisecond, or the clock stepped back
                candidate = _next_millisecond(self._last[local])
            self._last[local] = candidate
            stepped = self._stepped[local]
            if after and candidate <= after:
                # The timeline is ahead of the clock (skew, or a future instant): step just past it.
                candidate = _next_millisecond(after)
                while candidate in stepped:
                    candidate = _next_millisecond(candidate)
                stepped.add(candidate)
            stepped.difference_update([t for t in stepped if t <= self._last[local]])  # the clock caught up
            return candidate


def _next_millisecond(instant_time: str) -> str:
    return datetime_to_instant(instant_to_datetime(instant_time) + timedelta(milliseconds=1))


_GENERATOR = InstantTimeGenerator()


def new_instant_time(after: str | None = None, *, local: bool = False) -> str:
    """A new `yyyyMMddHHmmssSSS` (UTC; with `local`, this machine's zone), strictly greater than `after` and than any
    instant this process took from the clock (`InstantTimeGenerator`)."""
    return _GENERATOR.new_instant_time(after, local=local)
