"""The instant lifecycle of a write, run on the driver (FORMAT.md, Write sequence).

    create_table          hoodie.properties + the `.hoodie` folders
    start_commit          <T>.<action>.requested, then the inflight file with the workload profile
    (tasks run handles)   markers, then data files
    complete_commit       reconcile files against markers, .hoodie_partition_metadata in new partitions,
                          <T>.<action> (created if absent: THE commit point), delete .hoodie/.temp/<T>

Until the completed file exists, readers ignore every file of the instant (Java hides uncommitted instants; hudi-rs
only reads up to the latest completed instant). A failure before it is undone by `rollback`.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from hudi_engine.errors import HudiError, InstantLostError, TimelineError, WriteError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.location import TableLocation
from hudi_engine.partition_metadata import (
    PARQUET_PARTITION_METAFILE,
    PARTITION_METAFILE,
    PARTITION_METAFILES,
    format_partition_metadata,
    format_partition_metadata_parquet,
    partition_depth,
)
from hudi_engine.schema import META_COLUMNS, remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import PROPERTIES_FILE, TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.timeline.layout import TimelineLayout, TimelineLayoutV2
from hudi_engine.timeline.timeline import LAYOUT2_FOLDER
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.markers import delete_marker_dir, list_markers

LAYOUT_V2 = TimelineLayoutV2()
WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
# Operations that replace file groups: they commit as replacecommit, on COW and MOR alike.
REPLACE_OPERATIONS = frozenset({"INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE", "DELETE_PARTITION", "CLUSTER"})
OPERATION_TYPES = frozenset({
    "INSERT", "INSERT_PREPPED", "UPSERT", "UPSERT_PREPPED", "BULK_INSERT", "BULK_INSERT_PREPPED", "DELETE",
    "DELETE_PREPPED", "BOOTSTRAP", "INSERT_OVERWRITE", "CLUSTER", "DELETE_PARTITION", "INSERT_OVERWRITE_TABLE",
    "COMPACT", "INDEX", "ALTER_SCHEMA", "LOG_COMPACT", "UNKNOWN",
})


# --------------------------------------------------------------------------------------------- table


def create_table(location: TableLocation, config: TableConfig) -> None:
    """Create an empty table: `.hoodie` with its sub-folders and `hoodie.properties` (FORMAT.md, Table layout).

    Refused when `base_path` already holds a table (a `hoodie.properties`, or instant files left by one).
    """
    storage = location.storage
    meta = location.meta_path
    if TableConfig.exists(location):
        raise WriteError(f"cannot create table {config.name!r}: a Hudi table already exists at {location.base_path} "
                         f"({meta}/{PROPERTIES_FILE} is there)")
    leftovers = [e.name for e in storage.list_dir(meta) if not e.is_dir and Instant.parse_file_name(e.name)]
    layout2 = location.meta(LAYOUT2_FOLDER)  # a Hudi 1.x table's instants
    if storage.is_dir(layout2):
        leftovers += [e.name for e in storage.list_dir(layout2) if not e.is_dir and LAYOUT_V2.parse_file_name(e.name)]
    if leftovers:
        raise WriteError(f"cannot create table {config.name!r} at {location.base_path}: {meta} holds instant files "
                         f"of another table ({', '.join(sorted(leftovers)[:3])}) but no {PROPERTIES_FILE}")
    try:
        config.initialize(location)
    except HudiError as e:
        raise WriteError(f"cannot create table {config.name!r} at {location.base_path}: {e}") from e


# --------------------------------------------------------------------------------------------- start


def commit_action(config: TableConfig, operation_type: str) -> Action:
    """replacecommit for overwrite/delete-partition/cluster, else commit (COW) or deltacommit (MOR)."""
    if operation_type in REPLACE_OPERATIONS:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if config.table_type == "MERGE_ON_READ" else Action.COMMIT


def workload_profile(
    operation_type: str,
    inserts: Mapping[str, int] | None = None,
    updates: Mapping[tuple[str, str], tuple[str, int]] | None = None,
) -> CommitMetadata:
    """The inflight file's content as Spark writes it (FORMAT.md, Timeline file contents): per partition one stat for
    inserts (`fileId ""`, `prevCommit "null"`, `numInserts`) and one per updated file group (`fileId`, `prevCommit` =
    its base instant, `numUpdateWrites`). `updates` maps (partition, fileId) -> (base instant, update count)."""
    meta = CommitMetadata(operation_type=_check_operation(operation_type))
    for partition, n in (inserts or {}).items():
        meta.add_write_stat(partition, WriteStat(file_id="", prev_commit=NULL_COMMIT, num_inserts=n))
    for (partition, file_id), (prev, n) in (updates or {}).items():
        meta.add_write_stat(partition, WriteStat(file_id=file_id, prev_commit=prev, num_update_writes=n))
    return meta


def _check_operation(operation_type: str) -> str:
    if operation_type not in OPERATION_TYPES:
        raise WriteError(f"operation type {operation_type!r}: expected one of {', '.join(sorted(OPERATION_TYPES))}")
    return operation_type


def request_commit(
    location: TableLocation,
    config: TableConfig,
    operation_type: str = "UPSERT",
    action: Action | str | None = None,
    *,
    instant_time: str | None = None,
) -> Instant:
    """Create `<T>.<action>.requested` for a new instant T greater than every instant on the timeline, listed here
    (`request_instant` takes the caller's listing under the table lock).

    The file is empty for commit/deltacommit; for a replacecommit it is a HoodieRequestedReplaceMetadata with
    every field null, as Spark's insert_overwrite writes it.
    """
    return request_instant(Timeline.load(location), config, operation_type, action, instant_time=instant_time)


def request_instant(timeline: Timeline, config: TableConfig, operation_type: str = "UPSERT",
                    action: Action | str | None = None, *, instant_time: str | None = None) -> Instant:
    """`request_commit` on `timeline`, the caller's listing under the table lock."""
    _check_operation(operation_type)
    action = Action(action) if action is not None else commit_action(config, operation_type)
    if action not in WRITE_ACTIONS:
        raise WriteError(f"start_commit: action {action.value!r}; expected one of {[a.value for a in WRITE_ACTIONS]}")
    latest = timeline.latest_time()
    if instant_time is None:
        instant_time = new_instant_time(after=latest, local=config.local_instant_times)
    elif latest is not None and instant_time <= latest:
        raise WriteError(f"instant time {instant_time} is not after the latest instant on the timeline ({latest})")
    requested = Instant(instant_time, action, State.REQUESTED)
    content = b""
    if action is Action.REPLACE_COMMIT:
        content = write_avro_metadata("HoodieRequestedReplaceMetadata", {
            "operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None})
    try:
        return timeline.create_requested(requested, content)
    except TimelineError as e:
        raise WriteError(f"cannot start instant {instant_time}: {e}") from e


def mark_inflight(location: TableLocation, requested: Instant,
                  workload: CommitMetadata | None = None, operation_type: str = "UPSERT", *,
                  layout: TimelineLayout) -> Instant:
    """Create the inflight file (the workload profile, JSON or Avro by the table's timeline `layout`; an empty
    profile if None) after the requested one."""
    workload = workload if workload is not None else CommitMetadata(operation_type=_check_operation(operation_type))
    timeline = Timeline(location, [], layout=layout)
    try:
        return timeline.transition_to_inflight(requested, timeline.commit_bytes(workload, requested))
    except TimelineError as e:
        raise WriteError(f"cannot move {requested} to inflight: {e}") from e


def start_commit(
    location: TableLocation,
    config: TableConfig,
    operation_type: str = "UPSERT",
    action: Action | str | None = None,
    *,
    workload: CommitMetadata | None = None,
    instant_time: str | None = None,
) -> Instant:
    """`request_commit` then `mark_inflight`: returns the INFLIGHT instant whose `timestamp` the handles write. The
    timeline is listed here (`start_instant` takes the caller's listing under the table lock)."""
    return start_instant(Timeline.load(location), config, operation_type, action, workload=workload,
                         instant_time=instant_time)


def start_instant(timeline: Timeline, config: TableConfig, operation_type: str = "UPSERT",
                  action: Action | str | None = None, *, workload: CommitMetadata | None = None,
                  instant_time: str | None = None) -> Instant:
    """`start_commit` on `timeline`, the caller's listing under the table lock."""
    requested = request_instant(timeline, config, operation_type, action, instant_time=instant_time)
    return mark_inflight(timeline.location, requested, workload, operation_type, layout=timeline.layout)


# --------------------------------------------------------------------------------------------- complete


def complete_commit(
    location: TableLocation,
    instant: Instant,
    write_stats: Iterable[WriteStat],
    operation_type: str,
    schema: dict | str,
    partition_to_replace_file_ids: Mapping[str, Iterable[str]] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
    *,
    reconcile: bool = True,
    partition_metafile_base_format: bool = False,
    layout: TimelineLayout,
    before_commit: Callable[[CommitMetadata], None] | None = None,
) -> Instant:
    """Commit `instant` (inflight) with the stats of the files its handles wrote. Returns the completed instant.

    1. Reconcile against the markers (`reconcile=True`): every stat's file must have a marker and exist; a file
       with a marker but no stat (a failed or speculative task attempt) is deleted, as Hudi's finalizeWrite does.
    2. `.hoodie_partition_metadata` (commitTime = this instant) in every written partition that lacks one (its
       parquet form with `partition_metafile_base_format`).
    3. `<T>.<action>` holding the commit metadata JSON (`extraMetadata.schema` = `schema` without meta fields),
       created only if absent: the atomic commit point.
    4. The marker folder is deleted.
    Before 1 and after 3 the instant must still be ours (`inflight`): InstantLostError if another writer
    rolled it back or is rolling it back.
    A replacecommit carries `partition_to_replace_file_ids` (empty map if None). `layout`: the table's timeline
    layout (the caller's: its config or timeline says it), which names the completed file and encodes the metadata.
    `before_commit` is called with the commit metadata between 2 and 3 (the metadata table's delta commit, which
    completes before the data commit does).
    """
    _check_operation(operation_type)
    inflight = Instant(instant.timestamp, instant.action, State.INFLIGHT)
    owned = InflightInstant(location, instant.timestamp, layout=layout)
    # One listing of the timeline says both: the instant is still ours, and it is inflight (not only requested).
    own = owned.check_inflight(f"committing {inflight}")
    current = max((i for i in own if i.action == instant.action), default=None, key=lambda i: i.state)
    if current is None or current.state is not State.INFLIGHT:
        state = current.state.name if current else "absent"
        raise WriteError(f"cannot complete {inflight}: the instant is {state} on the timeline, expected INFLIGHT")
    timeline = Timeline(location, [], layout=layout)  # completing needs the paths only

    stats = list(write_stats)
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        if stat.path is None or stat.partition_path is None or not stat.file_id:
            raise WriteError(f"write stat {stat.file_id!r} of {inflight}: path, partitionPath and fileId are required")
        by_partition.setdefault(stat.partition_path, []).append(stat)
    if reconcile:
        _reconcile_against_markers(location, instant.timestamp, stats)

    for partition in by_partition:
        write_partition_metadata(location, partition, instant.timestamp,
                                 base_format=partition_metafile_base_format)

    avro = json.loads(schema) if isinstance(schema, str) else schema
    if any(f["name"] in META_COLUMNS for f in avro.get("fields", [])):
        avro = remove_meta_fields(avro)
    extra = {CommitMetadata.SCHEMA_KEY: schema_to_json(avro)}
    extra.update(extra_metadata or {})
    replace = None
    if instant.comparable_action is Action.REPLACE_COMMIT:  # a layout-2 clustering completes as a replacecommit
        replace = {p: list(ids) for p, ids in (partition_to_replace_file_ids or {}).items()}
    elif partition_to_replace_file_ids:
        raise WriteError(f"{inflight}: only a replacecommit can replace file groups, not a {instant.action.value}")
    metadata = CommitMetadata(by_partition, False, extra, operation_type, replace)
    if before_commit is not None:
        before_commit(metadata)
    try:
        completed = timeline.complete(inflight, metadata)
    except TimelineError as e:
        raise WriteError(f"cannot complete {inflight}: {e}") from e
    # A rollback planned just before the completed file appeared would still delete the instant's files.
    rollback = owned.wait_for_rollback_decision()
    if rollback is not None:
        raise InstantLostError(
            f"table {location.base_path}: {inflight} was completed, but rollback {rollback.timestamp} of another "
            "writer (which took the table lock after it expired) targets it and may undo it; check the timeline")
    delete_marker_dir(location, instant.timestamp)
    return completed


def _reconcile_against_markers(location: TableLocation, instant_time: str, stats: list[WriteStat]) -> None:
    marked = {m.data_file_path for m in list_markers(location, instant_time)}
    written = {s.path for s in stats if s.path is not None}  # complete_commit checked that every stat has one
    # A merge's CDC log file is part of the commit too (HoodieTable.reconcileAgainstMarkers keeps `cdcStats` paths).
    written |= {p for s in stats for p in (s.cdc_stats or {})}
    unmarked = sorted(written - marked)
    if unmarked:
        raise WriteError(
            f"instant {instant_time}: write stats name files without a marker ({', '.join(unmarked[:3])}); every "
            "data file must be marked before it is written so a failed commit can be rolled back"
        )
    missing = [p for p in sorted(written) if not location.storage.exists(location.join(p))]
    if missing:
        raise WriteError(f"instant {instant_time}: write stats name files that do not exist: {', '.join(missing[:3])}")
    for rel in sorted(marked - written):  # leftovers of failed task attempts: never part of the commit
        location.storage.delete(location.join(rel))


def write_partition_metadata(location: TableLocation, partition_path: str, instant_time: str, *,
                             base_format: bool = False) -> bool:
    """Create `<partition>/.hoodie_partition_metadata` if the partition has no metafile of any form (depth = number of
    path segments, 0 for ""); with `base_format` (`hoodie.partition.metafile.use.base.format`) in its parquet form.
    True if this call created it."""
    storage = location.storage
    folder = location.join(partition_path)
    if any(storage.exists(Storage.join(folder, name)) for name in PARTITION_METAFILES):
        return False
    depth = partition_depth(partition_path)
    if base_format:
        return storage.create_exclusive(Storage.join(folder, PARQUET_PARTITION_METAFILE),
                                        format_partition_metadata_parquet(instant_time, depth))
    return storage.create_exclusive(Storage.join(folder, PARTITION_METAFILE), format_partition_metadata(instant_time, depth))


# --------------------------------------------------------------------------------------------- replace helpers


def file_groups_to_replace(location: TableLocation, partitions: Iterable[str] | None = None) -> dict[str, list[str]]:
    """File ids of the visible file groups in `partitions` (all partitions when None), for the
    `partitionToReplaceFileIds` of an insert_overwrite(_table) / delete_partition (FORMAT.md, Replace commits)."""
    timeline = Timeline.load(location)
    wanted = None if partitions is None else set(partitions)
    view = FileSystemView.load(location, None if wanted is None else wanted.__contains__)
    out: dict[str, list[str]] = {}
    for s in view.latest_file_slices(Visibility.of(timeline)):
        out.setdefault(s.partition_path, []).append(s.file_id)
    return {p: sorted(ids) for p, ids in sorted(out.items())}
