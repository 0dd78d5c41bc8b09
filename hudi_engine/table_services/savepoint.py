"""Savepoints (FORMAT.md, Savepoint): the `savepoint` action on a completed commit, which pins its files.

A savepoint of commit C is `<C>.savepoint.inflight` (empty), then `<C>.savepoint` (`HoodieSavepointMetadata`: who,
when, a comment, and per partition the names of the latest files as of C: base files and log files, as Hudi's
SavepointActionExecutor lists them). Cleaning keeps those files and archival stops before the earliest savepoint
(`clean`, `archival`), so the table can be restored to C (`restore`) however far the timeline has moved on.

Refused, as Hudi refuses them: an instant that is not a completed commit on the active timeline, a commit older than
the last clean's earliest retained commit (its files may already be gone: Hudi's "lookup window"), a commit already
savepointed, and on MERGE_ON_READ while a compaction is pending.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_engine.errors import TableServiceError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.meta_client import MetaClient
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State

SAVEPOINT_METADATA = "HoodieSavepointMetadata"


@dataclass(frozen=True)
class Savepoint:
    """A completed savepoint: the commit it pins and its metadata."""

    instant_time: str
    savepointed_by: str
    savepointed_at: int  # seconds since the epoch, as Hudi records it
    comments: str
    files: dict[str, list[str]]  # partition -> file names kept for a restore


def savepoints(timeline: Timeline) -> list[Savepoint]:
    """The completed savepoints of the active timeline, oldest first."""
    out = []
    for instant in timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]):
        meta = timeline.avro_metadata(instant) or {}
        out.append(Savepoint(instant.timestamp, meta.get("savepointedBy") or "", int(meta.get("savepointedAt") or 0),
                             meta.get("comments") or "",
                             {p: list(pm.get("savepointDataFile") or ())
                              for p, pm in (meta.get("partitionMetadata") or {}).items()}))
    return out


def lookup_window_start(timeline: Timeline) -> str | None:
    """The oldest commit whose files cleaning has kept: the last clean's earliest retained commit (a pending clean's
    plan counts too), else the first completed commit. Hudi savepoints nothing older (SavepointActionExecutor)."""
    cleans = timeline.filter_by([Action.CLEAN])
    last = cleans.last()
    if last is not None:
        if last.is_completed:
            meta = read_avro_metadata(timeline.read_content(last), file_name=timeline.path_of(last))
            retained = meta.get("earliestCommitToRetain")
        else:
            plan = timeline.avro_metadata(last.with_state(State.REQUESTED)) or {}
            retained = (plan.get("earliestInstantToRetain") or {}).get("timestamp")
        if retained:
            return str(retained)
    first = timeline.completed_commits().first()
    return first.timestamp if first is not None else None


def create_savepoint(table: MetaClient, instant_time: str | None = None, *, user: str = "",
                     comment: str = "") -> Savepoint:
    """Savepoint the completed commit `instant_time` (default: the latest) of `table` as its timeline lists it
    (under the table lock). Refusals name the table and the way out, before anything is written."""
    timeline, where = table.timeline, f"table {table.config.name!r} ({table.location.base_path})"
    commits = timeline.completed_commits()
    if instant_time is None:
        latest = commits.last()
        if latest is None:
            raise TableServiceError(f"{where}: no completed commit to savepoint; write to the table first")
        instant_time = latest.timestamp
    instant_time = str(instant_time)
    if instant_time not in commits.timestamps():
        raise TableServiceError(
            f"{where}: cannot savepoint {instant_time}: not a completed commit on the active timeline. Completed "
            f"commits: {listed(commits.timestamps())}")
    if any(s.instant_time == instant_time for s in savepoints(timeline)):
        raise TableServiceError(f"{where}: {instant_time} is already savepointed; delete that savepoint first "
                                "(HudiTable.delete_savepoint) to make it again")
    window = lookup_window_start(timeline)
    if window is not None and instant_time < window:
        raise TableServiceError(
            f"{where}: cannot savepoint {instant_time}: cleaning may have removed its files (the last clean retains "
            f"commits from {window} on). Savepoint a commit from {window} on: {listed(c for c in commits.timestamps() if c >= window)}")
    if table.config.table_type == "MERGE_ON_READ" and timeline.pending_compactions():
        pending = ", ".join(i.timestamp for i in timeline.pending_compactions())
        raise TableServiceError(f"{where}: cannot savepoint while a compaction is pending ({pending}), as Hudi "
                                "refuses it on MERGE_ON_READ; finish it first (HudiTable.compact)")
    files = _latest_files(table, instant_time)
    at = int(time.time())
    record = {"savepointedBy": user, "savepointedAt": at, "comments": comment,
              "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()},
              "version": 1}
    inflight = timeline.create_inflight(Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT))
    timeline.complete(inflight, write_avro_metadata(SAVEPOINT_METADATA, record))
    return Savepoint(instant_time, user, at, comment, files)


def delete_savepoint(table: MetaClient, instant_time: str) -> None:
    """Delete the completed savepoint of `instant_time` (its completed file first, then the inflight one, as Hudi
    does): cleaning and archival may then remove what it pinned."""
    timeline = table.timeline
    found = [i for i in timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]) if i.timestamp == str(instant_time)]
    if not found:
        raise TableServiceError(
            f"table {table.config.name!r} ({table.location.base_path}): no savepoint {instant_time} to delete. "
            f"Savepoints: {listed(s.instant_time for s in savepoints(timeline))}")
    timeline.delete_instant_files(found[0])


def _latest_files(table: MetaClient, instant_time: str) -> dict[str, list[str]]:
    """Partition -> names of the base and log files of every file group's latest slice as of `instant_time`."""
    vis = Visibility.of(table.timeline, instant_time)
    out: dict[str, list[str]] = {}
    for s in FileSystemView.load(table.location, slicing=vis.slicing).latest_file_slices(vis):
        names = out.setdefault(s.partition_path, [])
        if s.base_file is not None:
            names.append(s.base_file.path.rsplit("/", 1)[-1])
        names.extend(f.path.rsplit("/", 1)[-1] for f in s.sorted_log_files())
    return out


def listed(values: Iterable[str]) -> str:
    """Instant times for a message: comma-separated, or "none"."""
    names = list(values)
    return ", ".join(names) if names else "none"
