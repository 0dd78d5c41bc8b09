"""The metadata table's own cleaning, as Hudi's `HoodieBackedTableMetadataWriter.cleanIfNecessary` runs it before its
compaction when a writer starts an action, with the cleaner settings `HoodieMetadataWriteUtils` gives the metadata
table (FORMAT.md, Metadata table).

When: not while fewer than 3 instants completed after the metadata table's latest compaction (Hudi leaves readers
that opened the old slice time to finish), else whenever there is something to delete. The policy is
KEEP_LATEST_COMMITS, retaining the larger of 20 (`DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`) and 1.2 times the data
table's `hoodie.cleaner.commits.retained`: the earliest commit to retain E is the N-th latest completed delta commit
or compaction of the metadata table (an older pending instant, if any); each file group keeps every slice from
E on and the newest slice before E, older slices (base file and log files) are deleted.

How: `<C>.clean.requested` (a HoodieCleanerPlan, version 2), `.clean.inflight` (the same plan), the files deleted,
`<C>.clean` (HoodieCleanMetadata, version 2), as the data table's cleaner writes them. C is the latest delta
commit's time + `002` on table version 6 (`createCleanTimestamp`), a new instant on versions 8 and 9. An
interrupted clean is run again first (deleting is idempotent).
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence

from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.metadata.records import FILES_PARTITION
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time

CLEAN_SUFFIX = "002"  # HoodieTableMetadataUtil.OperationSuffix.CLEAN (table version 6)
COMMITS_RETAINED = 20  # HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED
MIN_INSTANTS_AFTER_COMPACTION = 3  # cleanIfNecessary: no clean before this many instants after the compaction
POLICY = "KEEP_LATEST_COMMITS"
_PLAN, _METADATA, _VERSION = "HoodieCleanerPlan", "HoodieCleanMetadata", 2


def commits_retained(data_commits_retained: int) -> int:
    """How many commits the metadata table's cleaner retains for a data table retaining `data_commits_retained`."""
    return max(COMMITS_RETAINED, math.ceil(data_commits_retained * 1.2))


def plan(table: MetadataTable, retained: int) -> tuple[str, Instant, list[str]] | None:
    """(the clean's instant, the earliest instant to retain, the files to delete, relative to the metadata table)
    of the clean of `table` that is due now (module doc), or None."""
    timeline = table.timeline
    compacted = timeline.filter_by([Action.COMMIT], [State.COMPLETED]).last()
    if compacted is not None and sum(1 for i in timeline.instants if i.is_completed
                                     and i.timestamp > compacted.timestamp) < MIN_INSTANTS_AFTER_COMPACTION:
        return None
    commits = [i for i in timeline.instants if i.is_completed and i.action in (Action.DELTA_COMMIT, Action.COMMIT)]
    if len(commits) <= retained:
        return None
    earliest = commits[len(commits) - retained]
    pending = [i for i in timeline.instants if not i.is_completed and i.timestamp < earliest.timestamp]
    if pending:
        earliest = pending[0]
    vis = Visibility.of(timeline)
    partitions = set(table.data_config.metadata_partitions) | {FILES_PARTITION}
    view = FileSystemView.load(table.location, partitions.__contains__, slicing_for(timeline))
    doomed: list[str] = []
    for group in view.file_groups():
        committed = sorted((s for s in group.slices.values() if vis.is_committed(s.base_instant)),
                           key=lambda s: s.base_instant)
        older = [s for s in committed if s.base_instant < earliest.timestamp]
        for s in older[:-1]:  # the newest slice before E stays: a read as of E reads it
            files = ([s.base_file] if s.base_file else []) + s.log_files
            doomed += [f"{group.partition_path}/{f.path.rsplit('/', 1)[-1]}" for f in files]
    if not doomed:
        return None
    deltas = [i.timestamp for i in commits if i.action is Action.DELTA_COMMIT]
    if table.config.version >= 8:
        newest = max((i.timestamp[:17] for t in (timeline, table.data_timeline) for i in t.instants), default=None)
        instant_time = new_instant_time(after=newest, local=table.data_config.local_instant_times)
    else:
        instant_time = max(deltas) + CLEAN_SUFFIX
        if timeline.instants_at(instant_time):
            return None
    return instant_time, earliest, sorted(doomed)


def clean(table: MetadataTable, timeline: Timeline, instant_time: str, earliest: Instant,
          files: Sequence[str]) -> Instant:
    """Schedule and run the clean of `table` at `instant_time` deleting `files` (`plan`); `timeline`: the metadata
    table's, writing completion times the way its delta commits do. Returns the completed instant."""
    location = table.location
    last = table.timeline.filter(lambda i: i.is_completed).last()
    data = write_avro_metadata(_PLAN, {
        "earliestInstantToRetain": {"timestamp": earliest.timestamp, "action": earliest.action.value,
                                    "state": earliest.state.name},
        "lastCompletedCommitTimestamp": last.timestamp if last is not None else "", "policy": POLICY,
        "filesToBeDeletedPerPartition": None, "version": _VERSION,
        "filePathsToBeDeletedPerPartition": {
            partition: [{"filePath": location.join(f), "isBootstrapBaseFile": False} for f in files
                        if f.split("/", 1)[0] == partition]
            for partition in sorted({f.split("/", 1)[0] for f in files})},
        "partitionsToBeDeleted": []})
    requested = timeline.create_requested(Instant(instant_time, Action.CLEAN, State.REQUESTED), data)
    return _execute(table, timeline, timeline.transition_to_inflight(requested, data), data)


def resume(table: MetadataTable, timeline: Timeline) -> list[Instant]:
    """Run again every clean left pending on `table`; the completed instants."""
    done = []
    for pending in timeline.filter_by([Action.CLEAN]).pending().instants:
        requested = pending.with_state(State.REQUESTED)
        data = timeline.read_content(requested)
        inflight = pending if pending.is_inflight else timeline.transition_to_inflight(requested, data)
        done.append(_execute(table, timeline, inflight, data))
    return done


def _execute(table: MetadataTable, timeline: Timeline, inflight: Instant, plan_bytes: bytes) -> Instant:
    t0 = time.monotonic()
    planned = read_avro_metadata(plan_bytes, _PLAN, file_name=timeline.path_of(inflight))
    storage = table.location.storage
    partitions = {}
    for partition, entries in sorted((planned.get("filePathsToBeDeletedPerPartition") or {}).items()):
        paths = [i["filePath"] for i in entries]
        ok, failed = [], []
        for path in paths:
            try:
                storage.delete(path)  # False when already gone: a re-run
                ok.append(path.rsplit("/", 1)[-1])
            except OSError:
                failed.append(path.rsplit("/", 1)[-1])
        partitions[partition] = {
            "partitionPath": partition, "policy": POLICY, "deletePathPatterns": [p.rsplit("/", 1)[-1] for p in paths],
            "successDeleteFiles": ok, "failedDeleteFiles": failed, "isPartitionDeleted": False}
    earliest = planned.get("earliestInstantToRetain") or {}
    metadata = {
        "startCleanTime": inflight.timestamp, "timeTakenInMillis": int((time.monotonic() - t0) * 1000),
        "totalFilesDeleted": sum(len(p["successDeleteFiles"]) for p in partitions.values()),
        "earliestCommitToRetain": earliest.get("timestamp") or "",
        "lastCompletedCommitTimestamp": planned.get("lastCompletedCommitTimestamp") or "",
        "partitionMetadata": partitions,
        "version": _VERSION, "bootstrapPartitionMetadata": {},
    }
    return timeline.complete(inflight, write_avro_metadata(_METADATA, metadata))
