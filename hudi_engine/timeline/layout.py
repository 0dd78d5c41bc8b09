"""Timeline layouts: where a table's instants live, how their files are named and how commits are encoded.

| | layout 1 (table version 6) | layout 2 (table versions 8, 9: Hudi 1.x) |
|---|---|---|
| active timeline | `.hoodie/` | `.hoodie/timeline/` (`hoodie.timeline.path`) |
| completed instant file | `<ts>.<action>` | `<requested>_<completed>.<action>` |
| requested / inflight | `<ts>.<action>.requested`, `<ts>.<action>.inflight` (`<ts>.inflight` for a commit) | the same |
| commit metadata | JSON (Jackson) | Avro container file |
| archived timeline | `.hoodie/archived/` | LSM tree in `.hoodie/timeline/history/` (`timeline/history.py`) |
| log file names | `.<fileId>_<base instant>.log.<n>_<token>` | `.<fileId>_<delta commit instant>.log.<n>_<token>` |
| file slicing | a log file belongs to the slice its name names | by completion time (`FileSlicing`) |
| incremental (begin, end] | requested times | completion times (the commits that completed in the range) |
| new instant times | after every requested time | after every requested and completion time (one clock for both) |

A `Timeline` holds its layout; `layout_for(config)` picks the one a table's `hoodie.properties` declares. Both
layouts are written: the layout object says where an instant's file goes and how its commit metadata is encoded,
so the write protocol itself does not depend on the table version.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_engine.errors import TimelineError, UnsupportedTableVersionError
from hudi_engine.location import META_FOLDER
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time

if TYPE_CHECKING:
    from hudi_engine.table_config import TableConfig

# `<requested>_<completed>.<action>`: a completed instant of layout 2.
_COMPLETED_V2 = re.compile(r"^(\d+)_(\d+)\.([a-z]+)$")


@dataclass(frozen=True, slots=True)
class TimelineLayoutV1:
    """Table version 6: instants in `.hoodie/`, commits as JSON."""

    version: int = 1
    writable: bool = True
    slices_by_completion_time: bool = False
    incremental_by_completion_time: bool = False

    @property
    def active_folder(self) -> str:
        """The active timeline's folder, relative to the base path."""
        return META_FOLDER

    def parse_file_name(self, name: str) -> Instant | None:
        return Instant.parse_file_name(name)

    def file_name(self, instant: Instant) -> str:
        return instant.file_name

    def parse_commit_metadata(self, data: bytes, file_name: str) -> CommitMetadata:
        return CommitMetadata.from_json(data, file_name=file_name)

    def commit_bytes(self, metadata: CommitMetadata, instant: Instant) -> bytes:
        """The content of a commit-like instant's inflight (workload profile) or completed file."""
        return metadata.to_json()

    def completion_time(self, inflight: Instant) -> str | None:
        """Layout 1 records no completion time."""
        return None


@dataclass(frozen=True, slots=True)
class TimelineLayoutV2:
    """Hudi 1.x: instants in `.hoodie/<timeline_path>/`, completion times in completed file names, Avro commits."""

    timeline_path: str = "timeline"
    history_path: str = "history"
    local_times: bool = False  # completion times in this machine's zone (a LOCAL table), else UTC
    version: int = 2
    writable: bool = True
    slices_by_completion_time: bool = True
    incremental_by_completion_time: bool = True  # (begin, end] of an incremental query are completion times

    @property
    def active_folder(self) -> str:
        return f"{META_FOLDER}/{self.timeline_path}"

    def parse_file_name(self, name: str) -> Instant | None:
        """Like layout 1 for pending instants; a completed one carries its completion time in its name.

        A compaction completes as a commit, a log compaction as a deltacommit and a clustering as a replacecommit,
        so the completed file has the comparable action (as in layout 1)."""
        m = _COMPLETED_V2.match(name)
        if m is None:
            return Instant.parse_file_name(name)
        requested, completed, action_ext = m.groups()
        try:
            action = Action(action_ext)
        except ValueError:
            return None  # not an instant (as layout 1 ignores unknown actions)
        try:
            instant = Instant(requested, action, State.COMPLETED, completed)
        except TimelineError as e:
            raise TimelineError(f"timeline file {name!r}: {e}") from None
        if instant.comparable_action is not action:
            raise TimelineError(
                f"timeline file {name!r}: a completed {action.value} is written as "
                f"'{requested}_{completed}.{instant.comparable_action.value}'"
            )
        return instant

    def file_name(self, instant: Instant) -> str:
        if instant.is_completed and instant.completion_time is not None:
            return f"{instant.timestamp}_{instant.completion_time}.{instant.comparable_action.value}"
        return instant.file_name

    def parse_commit_metadata(self, data: bytes, file_name: str) -> CommitMetadata:
        return CommitMetadata.from_avro(data, file_name=file_name)

    def commit_bytes(self, metadata: CommitMetadata, instant: Instant) -> bytes:
        """Avro (`CommitMetadataSerDeV2`): a completed replacecommit holds a HoodieReplaceCommitMetadata, every
        other commit-like file (the inflight replacecommit too) a HoodieCommitMetadata."""
        # A clustering completes as a replacecommit (its comparable action).
        return metadata.to_avro(replace=instant.comparable_action is Action.REPLACE_COMMIT and instant.is_completed)

    def completion_time(self, inflight: Instant) -> str:
        """`ActiveTimelineV2.saveAsComplete`: the completion time is taken from the clock when the completed file is
        created (under the table lock), after the requested time and every time this process issued before."""
        return new_instant_time(after=inflight.timestamp, local=self.local_times)


TimelineLayout = TimelineLayoutV1 | TimelineLayoutV2
LAYOUT_V1 = TimelineLayoutV1()


def layout_for(config: "TableConfig") -> TimelineLayout:
    """The timeline layout `hoodie.properties` declares (the config has checked it matches the table version)."""
    version = config.timeline_layout_version
    if version == 1:
        return LAYOUT_V1
    if version == 2:
        return TimelineLayoutV2(config.timeline_path, config.timeline_history_path, config.local_instant_times)
    raise UnsupportedTableVersionError(f"{config.source}: timeline layout {version} is not supported; expected 1 or 2")
