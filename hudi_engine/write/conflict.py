"""Optimistic concurrency control: at its commit point (under the table lock) a write fails when another writer
committed a change to one of its file groups after it started (Hudi's SimpleConcurrentFileWritesConflictResolution
Strategy; with a BUCKET index, by bucket as BucketIndexConcurrentFileWritesConflictResolutionStrategy).

The candidates are the commit, deltacommit and replacecommit instants that completed after the write's instant was
started (it records the completed ones it saw then; the timeline's order of requested times does not tell), and
compactions and clusterings scheduled since (Hudi's getCandidateInstants takes the pending compactions and
replacecommits after the write's instant). Their file groups are those their write stats name, the ones a
replacecommit replaced, and those a compaction or clustering plan lists: a clustering planned over a file group
this write changed would replace it with the slice it read, without this write's records. A compaction that was
already scheduled when the write started is no conflict once it completes (Hudi's resolveConflict lets a COMPACT
through): the write's log files went into the compaction's new file slice.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudi_engine.errors import HudiError, WriteError
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.clustering import ClusteringPlan, is_pending_replace
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Instant, State

FileGroup = tuple[str, str]  # (partition path, file id)


class WriteConflictError(WriteError):
    """Another writer committed a change to a file group this write also changed, after this write started."""

    def __init__(self, message: str, *, instant: str, other: str, file_groups: list[FileGroup]) -> None:
        super().__init__(message)
        self.instant = instant
        self.other = other
        self.file_groups = file_groups


@dataclass(frozen=True)
class TimelineAtStart:
    """What a write saw when its instant started: the completed commit-like instants and pending compactions."""

    completed: frozenset[str]
    pending_compactions: frozenset[str]
    pending_replaces: frozenset[str] = frozenset()  # pending replacecommits (clusterings among them)

    @staticmethod
    def of(timeline: Timeline) -> TimelineAtStart:
        return TimelineAtStart(frozenset(i.timestamp for i in timeline.completed_commits()),
                               frozenset(i.timestamp for i in timeline.pending_compactions()),
                               frozenset(i.timestamp for i in _pending_replaces(timeline)))


def shown_file_groups(groups: list[FileGroup], first: int = 5) -> str:
    """The first `first` of `groups` as `<partition>/<file id>`, and how many more: for error messages."""
    shown = ", ".join(f"{p}/{f}" if p else f for p, f in groups[:first])
    return shown + (f" and {len(groups) - first} more" if len(groups) > first else "")


def _pending_replaces(timeline: Timeline) -> Timeline:
    return timeline.filter(is_pending_replace)


def _bucket_key(group: FileGroup) -> FileGroup:
    # Bucket index file ids start with the 8-digit bucket number: two new file groups of one bucket conflict too.
    return group[0], group[1][:8]


def file_groups_of(timeline: Timeline, instant: Instant) -> set[FileGroup]:
    """The file groups a completed commit wrote or replaced, or a pending compaction or clustering plans to
    rewrite."""
    if instant.is_pending_compaction:
        plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        return {(op.get("partitionPath") or "", op["fileId"]) for op in plan.get("operations") or []}
    if is_pending_replace(instant):
        clustering = ClusteringPlan.load(timeline, instant)
        return set(clustering.file_groups) if clustering is not None else set()
    meta = timeline.commit_metadata(instant)
    groups = {(s.partition_path or "", s.file_id) for s in meta.write_stats() if s.file_id}
    for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
        groups.update((partition or "", f) for f in ids)
    return groups


def concurrent_instants(timeline: Timeline, start: TimelineAtStart, own: str) -> list[Instant]:
    """Instants that completed (or compactions scheduled) after the write `own` started, oldest first."""
    out = [i for i in timeline.completed_commits() if i.timestamp not in start.completed and i.timestamp != own
           and i.timestamp not in start.pending_compactions]
    out += [i for i in timeline.pending_compactions() if i.timestamp not in start.pending_compactions]
    out += [i for i in _pending_replaces(timeline) if i.timestamp not in start.pending_replaces and i.timestamp != own]
    return sorted(out)


def check_conflicts(timeline: Timeline, start: TimelineAtStart, own: Instant, mine: Iterable[FileGroup], *,
                    by_bucket: bool = False) -> None:
    """Raise WriteConflictError naming the first concurrent instant that touched one of `mine`, and the groups."""
    key = _bucket_key if by_bucket else (lambda g: g)
    wanted = {key(g): g for g in mine}
    if not wanted:
        return
    for other in concurrent_instants(timeline, start, own.timestamp):
        try:
            theirs = {key(g) for g in file_groups_of(timeline, other)}
        except HudiError as e:
            raise WriteError(f"table {timeline.base_path}: cannot tell which file groups {other} changed, so the "
                             f"write at instant {own.timestamp} cannot be checked against it: {e}") from e
        shared = sorted(wanted[k] for k in wanted.keys() & theirs)
        if shared:
            what = "scheduled a compaction of" if other.is_pending_compaction else \
                "scheduled a clustering of" if not other.is_completed else "committed changes to"
            raise WriteConflictError(
                f"write to table {timeline.base_path} at instant {own.timestamp} conflicts with instant "
                f"{other.timestamp} ({other.action.value}), which {what} {len(shared)} of the same file group(s) after "
                f"this write started: {shown_file_groups(shared)}. Under optimistic concurrency control "
                f"(hoodie.write.concurrency.mode) the first commit wins; this write was rolled back and nothing of it "
                f"is in the table. Re-run it (it will see {other.timestamp}'s changes).",
                instant=own.timestamp, other=other.timestamp, file_groups=shared)


__all__ = ["COMMIT_ACTIONS", "TimelineAtStart", "WriteConflictError", "check_conflicts", "concurrent_instants",
           "file_groups_of"]
