"""The active timeline: instant files (`.hoodie/` in layout 1, `.hoodie/timeline/` in layout 2), their views and
their transitions.

Loading lists the active timeline's folder only (not `archived/`, `history/`, `.aux/`, `metadata/`, ...), parses
instant file names with the table's layout (`layout.py`) and applies the collapse: instants are grouped by (timestamp, comparable action) and only the highest state
is kept, so `<ts>.compaction.requested` + `<ts>.compaction.inflight` + `<ts>.commit` is one completed commit.

A `Timeline` is an immutable, sorted view. Filtering gives another view over the same storage; views keep the
whole loaded timeline so "where the timeline starts" can skip savepointed instants. Transitions write files
(each state's file is *created*, never renamed: creating the completed file is the atomic commit point) and
return the new instant; call `reload()` to see them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from operator import attrgetter
from typing import overload

from hudi_engine.errors import TableNotFoundError, TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline.avro_models import avro_kind_for, read_avro_metadata
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State, looks_like_instant_file
from hudi_engine.timeline.layout import LAYOUT_V1, META_FOLDER, TimelineLayout, layout_for

# Hudi 1.x's default `hoodie.timeline.path`: a `.hoodie` holding this folder has timeline layout 2 (writers refuse a
# table with another timeline path: `TableConfig.require_writable`).
LAYOUT2_FOLDER = "timeline"


def layout_at(location: TableLocation) -> TimelineLayout:
    """The timeline layout of the table at `location`, for a caller that holds neither its config nor a timeline:
    layout 1 unless `.hoodie/timeline/` exists, then the one `hoodie.properties` declares."""
    if not location.storage.is_dir(location.meta(LAYOUT2_FOLDER)):
        return LAYOUT_V1
    from hudi_engine.table_config import TableConfig

    return layout_for(TableConfig.load(location))


def collapse_layout1(instants: Iterable[Instant]) -> list[Instant]:
    """Keep the highest state per (timestamp, comparable action), sorted as Hudi orders instants."""
    best: dict[tuple[str, Action], Instant] = {}
    for instant in instants:
        key = (instant.timestamp, instant.comparable_action)
        held = best.get(key)
        # On a tie in state (two actions sharing a comparable action), the later one in sort order wins so
        # the result does not depend on listing order.
        if held is None or (instant.state, instant.action.value) > (held.state, held.action.value):
            best[key] = instant
    return sorted(best.values())


_sort_key = attrgetter("sort_key")


class Timeline:
    """A sorted, read-only view of instants; the instants of `.hoodie/` after `load`."""

    def __init__(
        self,
        location: TableLocation,
        instants: Iterable[Instant],
        *,
        active: tuple[Instant, ...] | None = None,
        layout: TimelineLayout = LAYOUT_V1,
        unknown_files: tuple[str, ...] = (),
        ordered: bool = False,
    ) -> None:
        self.location = location
        self.storage = location.storage
        self.base_path = location.base_path.rstrip("/") or "/"
        self.layout = layout
        # `ordered`: already in timeline order (a view of a timeline), not sorted again
        self._instants = tuple(instants) if ordered else tuple(sorted(instants, key=_sort_key))
        # The whole loaded timeline, which filtered views keep for savepoint lookups.
        self._active = self._instants if active is None else active
        # Paths of files `load` found named like an instant of an action or state the layout does not know: skipped
        # (as Hudi skips them), kept so writers refuse the table by name (table_features) without listing again.
        self.unknown_files = unknown_files

    # --- loading ----------------------------------------------------------------------------------------

    @staticmethod
    def load(location: TableLocation, layout: TimelineLayout | None = None) -> Timeline:
        """Instants of the active timeline's folder (`.hoodie` in layout 1), the highest state of each kept.
        Only that folder is listed. Without `layout`, `.hoodie` is listed: a `timeline/` folder there means layout 2
        (then `hoodie.properties` is read for it and that folder listed), else its instants are layout 1's."""
        storage = location.storage
        if not storage.exists(location.meta_path):
            raise TableNotFoundError(f"{location.base_path}: no {META_FOLDER} folder, not a Hudi table")
        entries = None
        if layout is None:
            entries = storage.list_dir(location.meta_path)
            if any(e.is_dir and e.name == LAYOUT2_FOLDER for e in entries):
                from hudi_engine.table_config import TableConfig

                layout, entries = layout_for(TableConfig.load(location)), None
            else:
                layout = LAYOUT_V1
        folder = location.join(layout.active_folder)
        if entries is None and folder != location.meta_path and not storage.exists(folder):  # layout 1's is checked
            raise TimelineError(f"{folder}: missing; a table with timeline layout {layout.version} keeps its "
                                "instants there")
        parsed, unknown = [], []
        for entry in entries if entries is not None else storage.list_dir(folder):
            if entry.is_dir:
                continue
            try:
                instant = layout.parse_file_name(entry.name)
            except TimelineError as e:
                raise TimelineError(f"{folder}: {e}") from None
            if instant is not None:
                parsed.append(instant)
            elif looks_like_instant_file(entry.name):
                unknown.append(Storage.join(folder, entry.name))
        return Timeline(location, collapse_layout1(parsed), layout=layout, unknown_files=tuple(sorted(unknown)))

    def reload(self) -> Timeline:
        return Timeline.load(self.location, self.layout)

    @property
    def meta_path(self) -> str:
        """The active timeline's folder."""
        return Storage.join(self.base_path, self.layout.active_folder)

    def path_of(self, instant: Instant) -> str:
        """Full path of the file of `instant` in its state."""
        return Storage.join(self.meta_path, self.layout.file_name(instant))

    # --- sequence protocol ------------------------------------------------------------------------------

    @property
    def instants(self) -> tuple[Instant, ...]:
        return self._instants

    def __iter__(self) -> Iterator[Instant]:
        return iter(self._instants)

    def __reversed__(self) -> Iterator[Instant]:
        return reversed(self._instants)

    def __len__(self) -> int:
        return len(self._instants)

    def __bool__(self) -> bool:
        return bool(self._instants)

    @overload
    def __getitem__(self, index: int) -> Instant: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Instant, ...]: ...

    def __getitem__(self, index: int | slice) -> Instant | tuple[Instant, ...]:
        return self._instants[index]

    def __contains__(self, item: object) -> bool:
        return item in self._instants

    def __repr__(self) -> str:
        return f"Timeline({self.base_path!r}, [{', '.join(str(i) for i in self._instants)}])"

    # --- views ------------------------------------------------------------------------------------------

    def filter(self, predicate: Callable[[Instant], bool]) -> Timeline:
        return Timeline(self.location, (i for i in self._instants if predicate(i)), active=self._active,
                        layout=self.layout, unknown_files=self.unknown_files, ordered=True)

    def filter_by(
        self, actions: Iterable[Action | str] | None = None, states: Iterable[State] | None = None
    ) -> Timeline:
        """Instants whose action (compare raw actions: a completed compaction is a commit) and state are listed."""
        try:
            action_set = None if actions is None else {Action(a) for a in actions}
            state_set = None if states is None else {State(s) for s in states}
        except ValueError as e:
            raise TimelineError(f"timeline filter: {e}") from None
        return self.filter(
            lambda i: (action_set is None or i.action in action_set) and (state_set is None or i.state in state_set)
        )

    def completed(self) -> Timeline:
        return self.filter(lambda i: i.is_completed)

    def pending(self) -> Timeline:
        """Requested or inflight instants."""
        return self.filter(lambda i: not i.is_completed)

    def commits_timeline(self) -> Timeline:
        """What readers use: commit, deltacommit, replacecommit and compaction instants that are completed, plus
        pending compactions (Hudi's `getCommitsAndCompactionTimeline().filterCompletedAndCompactionInstants()`)."""
        return self.filter(
            lambda i: i.action in COMMIT_ACTIONS and (i.is_completed or i.action is Action.COMPACTION)
        )

    def write_timeline(self) -> Timeline:
        """Every instant of a writing action in any state (commits, compactions, log compactions)."""
        return self.filter(lambda i: i.action in COMMIT_ACTIONS or i.action is Action.LOG_COMPACTION)

    def completed_commits(self) -> Timeline:
        """Completed commit, deltacommit and replacecommit instants (completed compactions are commits)."""
        return self.filter(lambda i: i.is_completed and i.action in COMMIT_ACTIONS)

    def completed_replace_commits(self) -> Timeline:
        return self.filter(lambda i: i.is_completed and i.action is Action.REPLACE_COMMIT)

    def pending_compactions(self) -> Timeline:
        return self.filter(lambda i: i.is_pending_compaction)

    # --- lookups ----------------------------------------------------------------------------------------

    def first(self) -> Instant | None:
        return self._instants[0] if self._instants else None

    def last(self) -> Instant | None:
        return self._instants[-1] if self._instants else None

    def last_completed(self) -> Instant | None:
        for instant in reversed(self._instants):
            if instant.is_completed:
                return instant
        return None

    def timestamps(self) -> list[str]:
        return [i.timestamp for i in self._instants]

    def latest_time(self) -> str | None:
        """The greatest requested or completion time of the loaded timeline: a new instant must come after it
        (in layout 2 a log file's slice is found by comparing its commit's completion time with base instants)."""
        times = [i.timestamp for i in self._active]
        times += [i.completion_time for i in self._active if i.completion_time is not None]
        return max(times, default=None)

    def instants_at(self, timestamp: str) -> list[Instant]:
        return [i for i in self._instants if i.timestamp == timestamp]

    def contains_instant_time(self, timestamp: str) -> bool:
        return any(i.timestamp == timestamp for i in self._instants)

    def completion_times(self) -> dict[str, str]:
        """Requested time -> completion time of every completed instant of the loaded timeline that records one
        (layout 2; empty in layout 1). Like Hudi's CompletionTimeQueryView: every action, not only commits. A
        savepoint shares its commit's requested time and completes later: the time keeps the first completion."""
        out: dict[str, str] = {}
        for i in self._active:
            if i.is_completed and i.completion_time is not None and i.completion_time < out.get(i.timestamp, "~"):
                out[i.timestamp] = i.completion_time
        return out

    def timeline_start(self) -> str | None:
        """Timestamp of the first instant of this view that is not a savepointed one (None when empty).

        Archival can leave savepointed instants before a gap; the active timeline starts after them.
        """
        savepointed = {i.timestamp for i in self._active if i.action is Action.SAVEPOINT}
        for instant in self._instants:
            if instant.timestamp not in savepointed:
                return instant.timestamp
        return None

    def is_before_timeline_starts(self, timestamp: str) -> bool:
        start = self.timeline_start()
        return start is not None and timestamp < start

    def contains_or_before_timeline_starts(self, timestamp: str) -> bool:
        """True if this view holds an instant at `timestamp`, or `timestamp` is older than its first instant
        (archived instants stay visible this way)."""
        return self.contains_instant_time(timestamp) or self.is_before_timeline_starts(timestamp)

    contains_or_before_start = contains_or_before_timeline_starts  # the name in the engine's interface list

    # --- contents ---------------------------------------------------------------------------------------

    def read_content(self, instant: Instant) -> bytes:
        """Bytes of the file of `instant` in its state."""
        path = self.path_of(instant)
        try:
            return self.storage.read_bytes(path)
        except FileNotFoundError:
            raise TimelineError(f"{path}: instant file of {instant} not found") from None

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Parsed commit JSON of a commit-like instant (completed, or the inflight workload profile)."""
        if instant.action not in (*COMMIT_ACTIONS, Action.LOG_COMPACTION) or avro_kind_for(
            instant.action, instant.state
        ):
            raise TimelineError(f"{instant.file_name}: {instant} holds no commit metadata JSON")
        return self.layout.parse_commit_metadata(self.read_content(instant), self.path_of(instant))

    def avro_metadata(self, instant: Instant) -> dict | None:
        """The plan/metadata record of a rollback, clean, compaction, replace-requested or savepoint file.

        None for a zero-length file (Hudi writes some requested files empty, e.g. for insert_overwrite).
        """
        kind = avro_kind_for(instant.action, instant.state)
        if kind is None:
            raise TimelineError(f"{instant.file_name}: {instant} is not an Avro timeline file")
        data = self.read_content(instant)
        if not data:
            return None
        return read_avro_metadata(data, kind, file_name=self.path_of(instant))

    def latest_schema(self) -> dict | None:
        """Writer schema (no meta fields) of the latest completed commit that has one, as Hudi resolves it."""
        for instant in reversed(self.completed_commits()):
            schema = self.commit_metadata(instant).schema
            if schema is not None:
                return schema
        return None

    # --- transitions (create the next state's file, never rename) -----------------------------------------

    def _require_writable(self) -> None:
        if not self.layout.writable:
            raise TimelineError(f"{self.meta_path}: timeline layout {self.layout.version} is read-only here")

    def _create(self, instant: Instant, content: bytes) -> None:
        self._require_writable()
        path = self.path_of(instant)
        if not self.storage.create_exclusive(path, bytes(content)):
            raise TimelineError(f"{path}: instant file already exists; {instant} was already created")

    def _require(self, instant: Instant, expected: State, verb: str) -> None:
        if instant.state is not expected:
            raise TimelineError(f"cannot {verb} {instant}: expected a {expected.name} instant")

    def _require_file(self, instant: Instant, next_state: State) -> None:
        path = self.path_of(instant)
        if not self.storage.exists(path):
            raise TimelineError(
                f"{path}: missing, so {instant.timestamp}.{instant.action.value} cannot move to {next_state.name}"
            )

    def create_requested(self, instant: Instant, content: bytes = b"") -> Instant:
        """Create `<ts>.<action>.requested` (empty for commits/deltacommits; a plan for table services)."""
        self._require(instant, State.REQUESTED, "create requested")
        self._create(instant, content)
        return instant

    def create_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        """Start a savepoint, the one action that begins inflight (it has no requested state)."""
        self._require(instant, State.INFLIGHT, "create inflight")
        if instant.action is not Action.SAVEPOINT:
            raise TimelineError(f"cannot create {instant} directly: a {instant.action.value} starts as requested")
        self._create(instant, content)
        return instant

    def transition_to_inflight(self, requested: Instant, content: bytes = b"") -> Instant:
        """Create the inflight file after checking the requested one exists."""
        self._require(requested, State.REQUESTED, "move to inflight")
        self._require_file(requested, State.INFLIGHT)
        inflight = Instant(requested.timestamp, requested.action, State.INFLIGHT)
        self._create(inflight, content)
        return inflight

    def complete(self, inflight: Instant, content: bytes | CommitMetadata = b"") -> Instant:
        """Create the completed file (the commit point) after checking the inflight file exists; commit metadata
        is encoded the layout's way. In layout 2 the file name carries the completion time, taken now.

        Returns the completed instant as a reload shows it: a compaction completes as a commit.
        """
        self._require(inflight, State.INFLIGHT, "complete")
        self._require_file(inflight, State.COMPLETED)
        completed = Instant(inflight.timestamp, inflight.action, State.COMPLETED,
                            self.layout.completion_time(inflight))
        if isinstance(content, CommitMetadata):
            content = self.layout.commit_bytes(content, completed)
        self._create(completed, content)
        return completed.completed()

    def commit_bytes(self, metadata: CommitMetadata, instant: Instant) -> bytes:
        """`metadata` as the file of `instant` holds it in this layout (JSON, or Avro in layout 2)."""
        return self.layout.commit_bytes(metadata, instant)

    def delete_instant_files(self, instant: Instant, states: Iterable[State] | None = None) -> list[str]:
        """Delete the files of `instant`'s action at its timestamp (all states unless `states` is given).

        The completed file goes first, so an interrupted delete leaves a pending instant (whose files readers
        ignore), never a completed one without its history. Used after a rollback has removed the data.
        Returns the paths actually deleted.
        """
        self._require_writable()
        wanted = set(State) if states is None else {State(s) for s in states}
        deleted = []
        for state in sorted(wanted, reverse=True):
            if instant.action is Action.SAVEPOINT and state is State.REQUESTED:
                continue
            for path in self._state_paths(instant, state):
                if self.storage.delete(path):
                    deleted.append(path)
        return deleted

    def _state_paths(self, instant: Instant, state: State) -> list[str]:
        """The file(s) of `instant`'s action in `state`. A layout-2 completed file is named with its completion
        time: when `instant` does not carry it, the folder is listed for `<ts>_<any>.<action>`."""
        at = Instant(instant.timestamp, instant.action, state,
                     instant.completion_time if state is State.COMPLETED else None)
        if state is not State.COMPLETED or at.completion_time is not None or self.layout.version == 1:
            return [self.path_of(at)]
        prefix, suffix = f"{instant.timestamp}_", f".{at.comparable_action.value}"
        return [Storage.join(self.meta_path, e.name) for e in self.storage.list_dir(self.meta_path)
                if not e.is_dir and e.name.startswith(prefix) and e.name.endswith(suffix)]
