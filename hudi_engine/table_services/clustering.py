"""Clustering planned and executed by the engine (docs/clustering.md): small file slices of a partition rewritten
into fewer, larger file groups, sorted by the plan's sort columns, completed as a replacecommit.

    schedule   Hudi's SparkSizeBasedClusteringPlanStrategy over PartitionAwareClusteringPlanStrategy: per selected
               partition the latest slices whose base file is under `small.file.limit` (log-only slices count as
               0), outside pending compactions and clusterings, largest first, cut into groups of at most
               `max.bytes.per.group` (a slice without base file counts as `hoodie.parquet.max.file.size`), each
               planned as ceil(bytes / `target.file.max.bytes`) output file groups; at most `max.num.groups` groups.
               Written as Hudi writes it: a HoodieRequestedReplaceMetadata (operationType CLUSTER) holding a
               HoodieClusteringPlan in `<C>.replacecommit.requested` (layout 1) or `<C>.clustering.requested`
               (layout 2), the sort columns in the strategy params, so Java Hudi can execute it.
    execute    SparkSortAndSizeExecutionStrategy: `.inflight`, then per input group the planned slices read merged
               (MOR: base + the listed log files, as a snapshot reader merges them), sorted linearly by the sort
               columns, cut into files of about `target.file.max.bytes`; the records keep their commit time and
               sequence number (`hoodie.clustering.preserve.commit.metadata`, Hudi's default). Completed as a
               replacecommit (operationType CLUSTER) whose `partitionToReplaceFileIds` names the input file groups,
               so every reader hides them from then on; time travel before it still reads them until cleaning
               removes them. A Java-written plan of the same strategies is executed the same way.

A failed execution deletes what it wrote (by marker, and any base file of C in the plan's partitions) and goes back
to requested, as an interrupted compaction does; nothing is visible before the replacecommit completes.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from hudi_engine.config import keys as K
from hudi_engine.config.write_config import BloomConfig, ClusteringConfig, FileSizing, IndexType, WriteConfig
from hudi_engine.errors import ClusteringConflictError, ConfigError, WriteError
from hudi_engine.file_group import FileGroup, FileSlice, SliceByCompletionTime
from hudi_engine.file_naming import BaseFileName, WriteToken, is_base_file_name, new_file_id
from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.location import TableLocation
from hudi_engine.metadata.writer import keep_or_disable, refuse_unmaintained
from hudi_engine.schema import META_COLUMNS, add_meta_fields, avro_to_arrow_schema, remove_meta_fields
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import service_lock_at
from hudi_engine.table_services.compaction import pending_compaction_groups, service_instant_time
from hudi_engine.table_services.space_curve import LAYOUTS, LINEAR, check_curve_columns, curve_order, layout_of
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.clustering import (
    CLUSTER,
    ClusteringPlan,
    ClusteringSlice,
    PendingClustering,
    is_clustering,
    is_pending_replace,
)
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit
from hudi_engine.write.conflict import file_groups_of, shown_file_groups
from hudi_engine.write.handles.base import write_base
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.markers import IOType, delete_marker_dir, list_markers

SIZE_BASED_PLAN = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_AND_SIZE_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
FILE_NAME = META_COLUMNS[4]
_MB = 1024 * 1024


# --------------------------------------------------------------------------------------------- what is served


def _served(given: str, served: str, key: str, where: str) -> str:
    """`given` (full or short class name) when it is `served`; ConfigError naming the key and the served class."""
    text = (given or "").strip() or served
    if text in (served, served.rsplit(".", 1)[-1]):
        return served
    raise ConfigError(f"table {where}: {key}={text!r} is not served by this engine; it plans and executes with "
                      f"{served} only. Leave {key} out, or run that strategy with Hudi's own clustering job")


def check_strategies(config: ClusteringConfig, where: str) -> None:
    """The plan and execution strategy classes and the layout strategy are the ones this engine serves."""
    _served(config.plan_strategy, SIZE_BASED_PLAN, K.CLUSTERING_PLAN_STRATEGY_CLASS.key, where)
    _served(config.execution_strategy, SORT_AND_SIZE_EXECUTION, K.CLUSTERING_EXECUTION_STRATEGY_CLASS.key, where)
    check_layout(config.layout_strategy, where)


def check_index(config: WriteConfig, where: str) -> None:
    """Hudi refuses clustering with the simple bucket index ("Clustering is not supported for bucket index"): its file
    ids name the buckets, and the new file groups would not."""
    if config.index.type is IndexType.BUCKET:
        raise ConfigError(f"table {where}: Clustering is not supported for bucket index (hoodie.index.type=BUCKET): "
                          "the bucket index finds records by file ids the clustering would replace. Do not cluster "
                          "this table")


def check_layout(layout: str, where: str) -> str:
    """Hudi's name of the layout strategy (linear, z-order, hilbert); an unknown one refused by name."""
    key = K.LAYOUT_OPTIMIZE_STRATEGY.key
    known = layout_of(layout)
    if known is None:
        raise ConfigError(f"table {where}: {key}={layout!r} is unknown; Hudi's layout strategies are "
                          f"{', '.join(LAYOUTS)}. Set one of them or leave it out ({LINEAR})")
    return known


def check_sort_columns(schema: pa.Schema, columns: Sequence[str], where: str, layout: str = LINEAR) -> None:
    """Every sort column is a top-level data column of a type with an order (no struct, list or map); for a curve
    (two or more columns), of a type Hudi's curve maps."""
    key = K.CLUSTERING_SORT_COLUMNS.key
    names = [n for n in schema.names if n not in META_COLUMNS]
    missing = [c for c in columns if c not in names]
    if missing:
        raise ConfigError(f"table {where}: {key} names {missing}, not columns of the table; its columns are "
                          f"{names}. Name existing columns (comma-separated) or leave {key} out")
    unsortable = [f"{c} ({schema.field(c).type})" for c in columns if pa.types.is_nested(schema.field(c).type)]
    if unsortable:
        raise ConfigError(f"table {where}: {key} names {unsortable}: nested columns have no order to sort by. "
                          "Sort by top-level columns of primitive types")
    if layout != LINEAR and len(columns) > 1:
        check_curve_columns(schema, columns, where)


# --------------------------------------------------------------------------------------------- planning


def check_inline(config: WriteConfig, columns: pa.Schema, table_columns: Callable[[], pa.Schema | None],
                 where: str) -> None:
    """A write that clusters inline or schedules clustering (`hoodie.clustering.inline` / `schedule.inline`): its
    clustering options checked before it writes anything, as when clustering runs by itself, so a bad one is
    refused before the commit, not after it. `columns`: the write's; `table_columns`: the table's, if it has any
    (read only when the write clusters)."""
    clustering = config.clustering
    if not (clustering.inline or clustering.schedule_inline):
        return
    check_strategies(clustering, where)
    check_index(config, where)
    layout = check_layout(clustering.layout_strategy, where)
    known = list(columns) + [f for f in (table_columns() or []) if f.name not in columns.names]
    check_sort_columns(pa.schema(known), clustering.sort_columns, where, layout)


def select_partitions(partitions: Sequence[str], config: ClusteringConfig) -> list[str]:
    """PartitionAwareClusteringPlanStrategy's partition selection: `partition.selected` when given, else the
    filter mode (ClusteringPlanPartitionFilter), then `partition.regex.pattern`."""
    chosen = sorted(partitions)
    if config.partitions_selected:
        wanted = set(config.partitions_selected)
        return [p for p in chosen if p in wanted]
    if config.partition_filter_mode == "RECENT_DAYS":
        newest = sorted(chosen, reverse=True)[config.skip_latest_partitions:]
        chosen = sorted(newest[:config.lookback_partitions])
    elif config.partition_filter_mode == "SELECTED_PARTITIONS":
        chosen = [p for p in chosen if (not config.begin_partition or p >= config.begin_partition)
                  and (not config.end_partition or p <= config.end_partition)]
    if config.partition_regex:
        pattern = re.compile(config.partition_regex)
        chosen = [p for p in chosen if pattern.fullmatch(p)]
    return chosen


def _slice_size(s: FileSlice, max_file_size: int) -> int:
    # Hudi assumes a slice without base file will become a full file.
    return s.base_file.size if s.base_file else max_file_size


def _groups_of_partition(slices: list[FileSlice], config: ClusteringConfig,
                         max_file_size: int) -> list[tuple[list[FileSlice], int]]:
    """SparkSizeBasedClusteringPlanStrategy.buildClusteringGroupsForPartition: largest first, a new group when the
    next slice would pass max.bytes.per.group; each with ceil(bytes / target) output file groups."""
    ordered = sorted(slices, key=lambda s: (-_slice_size(s, max_file_size), s.file_id))
    groups: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    total = 0

    def close() -> None:
        outputs = max(1, math.ceil(total / config.target_file_max_bytes))
        # A lone slice written back as one file changes nothing unless it is sorted (Hudi's shouldClusteringSingleGroup).
        if len(current) > 1 or outputs > 1 or config.single_group or config.sort_columns:
            groups.append((current, outputs))

    for s in ordered:
        size = _slice_size(s, max_file_size)
        if current and total + size > config.max_bytes_per_group:
            close()
            current, total = [], 0
        current.append(s)
        total += size
    if current:
        close()
    return groups


def _slice_info(s: FileSlice) -> dict:
    """HoodieSliceInfo as Hudi's plan strategies write it: the base file's full path, log file names."""
    return {"dataFilePath": s.base_file.path if s.base_file else None,
            "deltaFilePaths": [f.name.format() for f in s.sorted_log_files()], "fileId": s.file_id,
            "partitionPath": s.partition_path, "bootstrapFilePath": None, "version": 1}


def _metrics(slices: list[FileSlice]) -> dict[str, float]:
    """ClusteringPlanStrategy.buildMetrics."""
    read = sum((s.base_file.size if s.base_file else 0) for s in slices) // _MB
    logs = [f for s in slices for f in s.sorted_log_files()]
    return {"TOTAL_IO_READ_MB": float(read), "TOTAL_IO_WRITE_MB": float(read), "TOTAL_IO_MB": float(2 * read),
            "TOTAL_LOG_FILE_SIZE": float(sum(f.size for f in logs)), "TOTAL_LOG_FILES": float(len(logs))}


def build_clustering_plan(location: TableLocation, timeline: Timeline, config: WriteConfig) -> dict | None:
    """The HoodieRequestedReplaceMetadata record of a new clustering plan; None when nothing is eligible."""
    cfg = config.clustering
    vis = Visibility.of(timeline)
    view = FileSystemView.load(location, slicing=vis.slicing)  # layout 2: log files join slices by completion time
    busy = set(pending_compaction_groups(timeline)) | set(PendingClustering.of(timeline).keys())
    by_partition: dict[str, list[FileSlice]] = {}
    for s in view.latest_file_slices(vis):
        if (s.partition_path, s.file_id) in busy:
            continue
        if isinstance(vis.slicing, SliceByCompletionTime):
            # Layout 2 names a log file by the delta commit writing it: a pending one's is left out of the plan (it
            # may be rolled back and deleted; if it commits, it changed a planned file group after the plan, and it
            # or the clustering loses: `check_no_later_changes`, `write.conflict`).
            s = replace(s, log_files=[f for f in s.log_files if vis.is_committed(f.base_instant)])
            if s.is_empty:
                continue
        if (s.base_file.size if s.base_file else 0) < cfg.small_file_limit:
            by_partition.setdefault(s.partition_path, []).append(s)
    groups = []
    for partition in select_partitions(list(by_partition), cfg):
        for slices, outputs in _groups_of_partition(by_partition[partition], cfg, config.files.max_file_size):
            groups.append({"slices": [_slice_info(s) for s in slices], "metrics": _metrics(slices),
                           "numOutputFileGroups": outputs, "extraMetadata": None, "version": 1})
    groups = groups[:cfg.max_num_groups]
    if not groups:
        return None
    params = {K.CLUSTERING_SORT_COLUMNS.key: ",".join(cfg.sort_columns)} if cfg.sort_columns else {}
    return {
        "operationType": CLUSTER,
        "clusteringPlan": {
            "inputGroups": groups,
            "strategy": {"strategyClassName": SORT_AND_SIZE_EXECUTION, "strategyParams": params, "version": 1},
            "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True,
        },
        "extraMetadata": {}, "version": 1,
    }


def _table_schema(location: TableLocation, timeline: Timeline, table: TableConfig) -> dict:
    schema = timeline.latest_schema() or table.create_schema
    if schema is None:
        raise WriteError(f"table {location.base_path}: no commit records a writer schema; nothing to cluster")
    return remove_meta_fields(schema) if any(f["name"] in META_COLUMNS for f in schema.get("fields", [])) else schema


def schedule_clustering(location: TableLocation, config: WriteConfig | None = None, *,
                        instant_time: str | None = None) -> Instant | None:
    """Write a clustering plan as a requested instant; None if no file slice is eligible. Sort columns and
    strategies are checked first. Scheduled beside pending writes, as Hudi schedules it: the plan names committed
    files only (`build_clustering_plan`); file groups of pending clusterings and compactions are left out, as Hudi
    leaves them out."""
    config = config or WriteConfig()
    where = location.base_path
    check_strategies(config.clustering, where)
    check_index(config, where)
    with service_lock_at(location, config.lock):
        table = TableConfig.load(location)
        refuse_unmaintained(location, table, "clustering")  # before the plan: its run would leave them stale
        timeline = Timeline.load(location)
        if timeline.latest_schema() is None and table.create_schema is None:
            return None  # no commit wrote rows (every write rolled back): nothing to cluster
        schema = _table_schema(location, timeline, table)
        check_sort_columns(avro_to_arrow_schema(schema), config.clustering.sort_columns, where,
                           check_layout(config.clustering.layout_strategy, where))
        instant_time = service_instant_time(timeline, table, instant_time, "clustering")
        record = build_clustering_plan(location, timeline, config)
        if record is None:
            return None
        # Nothing the metadata table lists changes: the clustering's run records its replacecommit there.
        action = Action.CLUSTERING if timeline.layout.version == 2 else Action.REPLACE_COMMIT
        return timeline.create_requested(Instant(instant_time, action, State.REQUESTED),
                                         write_avro_metadata("HoodieRequestedReplaceMetadata", record))


def clustering_due(timeline: Timeline, max_commits: int) -> bool:
    """Hudi's inline trigger (ClusteringPlanActionExecutor): at least `max_commits` completed commits (any action of
    the commits timeline) after the latest clustering instant."""
    last = max((i.timestamp for i in timeline if i.action in (Action.REPLACE_COMMIT, Action.CLUSTERING)
                and is_clustering(timeline, i)), default="")
    return sum(1 for i in timeline.commits_timeline() if i.is_completed and i.timestamp > last) >= max_commits


def pending_clusterings(location: TableLocation) -> list[str]:
    """Instant times of the requested or inflight clusterings (this engine's or another writer's), oldest first."""
    timeline = Timeline.load(location)
    return sorted({i.timestamp for i in timeline.filter(is_pending_replace) if is_clustering(timeline, i)})


# --------------------------------------------------------------------------------------------- execution


@dataclass
class ClusteringResult:
    """A completed clustering: its instant, the file groups it replaced and the ones it wrote, by partition."""

    instant_time: str
    replaced: dict[str, list[str]]
    new: dict[str, list[str]]
    stats: list[WriteStat] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def replaced_file_ids(self) -> list[str]:
        return [f for ids in self.replaced.values() for f in ids]

    @property
    def new_file_ids(self) -> list[str]:
        return [f for ids in self.new.values() for f in ids]


def _pending_clustering(timeline: Timeline, instant_time: str) -> tuple[Instant, ClusteringPlan]:
    found = [i for i in timeline.instants_at(instant_time) if i.action in (Action.REPLACE_COMMIT, Action.CLUSTERING)]
    where = timeline.base_path
    if not found:
        raise WriteError(f"{where}: no clustering at {instant_time} on the timeline")
    instant = found[0]
    if instant.is_completed:
        raise WriteError(f"clustering {instant_time} of {where} is already completed")
    plan = ClusteringPlan.load(timeline, instant)
    if plan is None:
        raise WriteError(f"{instant} of {where} is not a clustering (its requested file holds no clustering plan)")
    return instant, plan


def check_no_later_changes(timeline: Timeline, instant: Instant, plan: ClusteringPlan, where: str) -> None:
    """A clustering completes only if no commit changed its file groups after it was planned: it rewrites the slices
    the plan names, so a later update there (let in by SparkAllowUpdateStrategy, or written by a writer that ignored
    the plan) would be dropped. Hudi's conflict resolution at the clustering's commit fails it the same way
    (SimpleConcurrentFileWritesConflictResolutionStrategy: completed commits since, overlapping file groups, and a
    CLUSTER never resolves). "After it was planned": requested after the clustering's instant, or (layout 2) completed
    after it; a write that started earlier and committed later is failed by its own conflict check (`write.conflict`:
    the clustering is a pending replacecommit it did not see). Checked under the table lock, before anything changes:
    every engine commit takes that lock, so none lands between this check and the clustering's completion."""
    mine = set(plan.file_groups)
    ts = instant.timestamp
    for other in timeline.completed_commits():
        if other.timestamp == ts or not (other.timestamp > ts or (other.completion_time or "") > ts):
            continue
        shared = sorted(mine & file_groups_of(timeline, other))
        if shared:
            raise ClusteringConflictError(
                f"table {where}: clustering {ts} cannot complete: {other.timestamp} ({other.action.value}) changed "
                f"{len(shared)} of its file group(s) after it was planned ({shown_file_groups(shared)}), and the clustering would "
                f"replace them with the slices it planned, dropping those changes (updates let in by "
                f"{K.CLUSTERING_UPDATES_STRATEGY.key}=SparkAllowUpdateStrategy). Nothing was written; the table is "
                f"unchanged. Roll the clustering back (HudiTable.rollback('{ts}')) and schedule a new one, or set "
                f"{K.CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT.key}=true on the writes so they roll it back first",
                instant=ts, other=other.timestamp, file_groups=shared)


def _planned_slice(group: FileGroup | None, s: ClusteringSlice, where: str) -> FileSlice:
    """The slice of `group` a HoodieSliceInfo names: its base file and exactly the log files listed."""
    if group is not None:
        for candidate in group.slices.values():
            base = candidate.base_file.path if candidate.base_file else None
            if base is not None and s.base_file_path is not None and \
                    base.rsplit("/", 1)[-1] != s.base_file_path.rsplit("/", 1)[-1]:
                continue
            if (base is None) != (s.base_file_path is None):
                continue
            wanted = {n.rsplit("/", 1)[-1] for n in s.log_file_names}  # names; a writer may have put paths
            logs = [f for f in candidate.sorted_log_files() if f.name.format() in wanted]
            if len(logs) == len(wanted):
                return FileSlice(candidate.partition_path, candidate.file_id, candidate.base_instant,
                                 candidate.base_file, logs)
    raise WriteError(f"{where}: the files the plan names for file group {s.file_id} of partition "
                     f"{s.partition_path!r} are gone (cleaned while the clustering was pending?); roll the "
                     "clustering back with Hudi")


def _sorted(rows: pa.Table, columns: Sequence[str], layout: str = LINEAR, where: str = "") -> pa.Table:
    """Rows in the layout's order. Linear: Spark's ascending order puts nulls first, as the linear sort Hudi's
    RDDCustomColumnsSortPartitioner does; one column is linear whatever the layout (Hudi skips the curve then)."""
    if len(columns) > 1 and layout != LINEAR:
        return rows.take(pa.array(curve_order(rows, columns, layout, where)))
    return rows.sort_by([(c, "ascending", "at_start") for c in columns]) if columns else rows


@dataclass(frozen=True)
class ClusteringTask:
    """What every task of one clustering shares; picklable, shipped to Spark tasks."""

    storage_uri: str
    base_path: str
    table_props: dict
    instant_time: str
    schema: dict  # the writer schema without meta fields
    visibility: Visibility
    sort_columns: tuple[str, ...]
    target_file_max_bytes: int
    layout: str = LINEAR  # hoodie.layout.optimize.strategy of the executing writer, as Hudi takes it
    files: FileSizing = FileSizing()
    bloom: BloomConfig = BloomConfig()


@dataclass(frozen=True)
class ClusteringGroup:
    """One input group of the plan, resolved to the file slices it names, and its planned output file groups."""

    slices: tuple[FileSlice, ...]
    num_output_groups: int


ClusteringExecutor = Callable[[ClusteringTask, Sequence[ClusteringGroup]], list[WriteStat]]


def execute_group(task: ClusteringTask, group: ClusteringGroup, token: tuple[int, int, int] = (0, 0, 0)) -> list[WriteStat]:
    """One input group: its slices read merged, sorted, written as new file groups of about the target size (per
    partition: a Java plan may mix partitions in a group); their write stats."""
    storage, _ = Storage.for_uri(task.storage_uri)
    location = TableLocation(storage, task.base_path, task.storage_uri)
    table = TableConfig.from_properties(task.table_props)
    arrow = avro_to_arrow_schema(add_meta_fields(task.schema))
    ctx = SliceReadContext.for_table(storage, table, arrow, task.visibility, column_ids=ColumnIds.load(
        storage, location.meta_path, task.visibility.completed))  # a schema-on-read table's columns, by id
    owned = InflightInstant(location, task.instant_time)
    by_partition: dict[str, list[pa.Table]] = {}
    in_bytes: dict[str, int] = {}
    for s in group.slices:
        by_partition.setdefault(s.partition_path, []).append(read_file_slice(ctx, s))
        in_bytes[s.partition_path] = in_bytes.get(s.partition_path, 0) + \
            (s.base_file.size if s.base_file else 0) + sum(f.size for f in s.log_files)
    stats: list[WriteStat] = []
    for partition, tables in by_partition.items():
        rows = _sorted(pa.concat_tables(tables).select(arrow.names), task.sort_columns, task.layout, task.base_path)
        if not rows.num_rows:
            continue  # every record of the group was deleted: the group is replaced by nothing
        files = max(group.num_output_groups if len(by_partition) == 1 else 1,
                    math.ceil(in_bytes[partition] / task.target_file_max_bytes))
        bounds = sorted({rows.num_rows * i // files for i in range(files + 1)})  # `files` runs, fewer if rows are fewer
        for start, stop in zip(bounds, bounds[1:]):
            stats.append(_write_file(task, location, table, owned, partition, rows.slice(start, stop - start), token))
    return stats


def _write_file(task: ClusteringTask, location: TableLocation, table: TableConfig, owned: InflightInstant,
                partition: str, rows: pa.Table, token: tuple[int, int, int]) -> WriteStat:
    file_id = new_file_id(0)
    name = str(BaseFileName(file_id, str(WriteToken(*token)), task.instant_time))
    if table.populate_meta_fields:
        rows = rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME,
                               pa.repeat(pa.scalar(name, pa.string()), rows.num_rows))
    owned.create_marker(partition, name, IOType.CREATE)
    result = write_base(location.storage, Storage.join(location.base_path, partition, name), rows,
                        bloom=task.bloom, files=task.files, populate_meta_fields=table.populate_meta_fields)
    owned.confirm_written(partition, name)
    return WriteStat(file_id=file_id, path=f"{partition}/{name}" if partition else name, prev_commit=NULL_COMMIT,
                     num_writes=result.num_rows, num_inserts=result.num_rows, total_write_bytes=result.size,
                     partition_path=partition, file_size_in_bytes=result.size)


def run_groups_serially(task: ClusteringTask, groups: Sequence[ClusteringGroup]) -> list[WriteStat]:
    """Execute the groups one after the other in this process (`hudi_engine.spark.clustering_executor` runs one Spark
    task each)."""
    return [st for i, g in enumerate(groups) for st in execute_group(task, g, (i, 0, 0))]


def run_clustering(location: TableLocation, instant_time: str, config: WriteConfig | None = None, *,
                   execute: ClusteringExecutor | None = None) -> ClusteringResult:
    """Execute and complete the pending clustering at `instant_time` (this engine's plan or Java Hudi's; requested,
    or inflight from a failed run, which is undone first). `execute` runs the input groups (default: serially here)."""
    config = config or WriteConfig()
    where = location.base_path
    with service_lock_at(location, config.lock):
        t0 = time.monotonic()
        table = TableConfig.load(location)
        timeline = Timeline.load(location)
        instant, plan = _pending_clustering(timeline, instant_time)
        check_no_later_changes(timeline, instant, plan, where)  # before an interrupted attempt is even undone
        _served(plan.strategy_class or SORT_AND_SIZE_EXECUTION, SORT_AND_SIZE_EXECUTION,
                f"the strategyClassName of clustering plan {instant_time}", where)
        layout = check_layout(config.clustering.layout_strategy, where)
        check_index(config, where)
        schema = _table_schema(location, timeline, table)
        sort_columns = plan.sort_columns or config.clustering.sort_columns
        check_sort_columns(avro_to_arrow_schema(add_meta_fields(schema)), sort_columns, where, layout)
        if instant.is_inflight:
            undo_clustering_attempt(location, instant, plan)
            timeline = Timeline.load(location)
            instant = _pending_clustering(timeline, instant_time)[0]
        # hoodie.properties read again: undoing an interrupted attempt may have disabled the metadata table.
        writer = keep_or_disable(location, TableConfig.load(location), timeline, f"clustering {instant_time}",
                                 retrying=(instant_time,))
        inflight = timeline.transition_to_inflight(instant)
        vis = Visibility.of(timeline)
        view = FileSystemView.load(location, slicing=vis.slicing)
        file_groups = {(g.partition_path, g.file_id): g for g in view.file_groups()}
        what = f"clustering {instant_time} of {where}"
        groups = [ClusteringGroup(tuple(_planned_slice(file_groups.get((s.partition_path, s.file_id)), s, what)
                                        for s in group), outputs)
                  for group, outputs in zip(plan.input_groups, plan.num_output_groups)]
        replaced: dict[str, list[str]] = {}
        for partition, file_id in plan.file_groups:
            replaced.setdefault(partition, []).append(file_id)
        task = ClusteringTask(location.uri, where, dict(table.props), instant_time, schema, vis, tuple(sort_columns),
                              config.clustering.target_file_max_bytes, layout, config.files, config.bloom)
        t1 = time.monotonic()
        try:
            stats = (execute or run_groups_serially)(task, groups)
        except BaseException:
            undo_clustering_attempt(location, inflight, plan)
            raise
        t2 = time.monotonic()

        def record(commit: CommitMetadata) -> None:  # the metadata table's delta commit, before the replacecommit
            if writer is not None:
                writer.record_commit(instant_time, commit)

        complete_commit(location, inflight, stats, CLUSTER, schema, partition_to_replace_file_ids=replaced,
                        layout=layout_at(location), before_commit=record)
        new: dict[str, list[str]] = {}
        for st in stats:
            new.setdefault(st.partition_path or "", []).append(st.file_id or "")
        return ClusteringResult(instant_time, replaced, new, stats,
                                {"prepare": t1 - t0, "execute": t2 - t1, "commit": time.monotonic() - t2})


OPS = ("schedule", "execute", "scheduleAndExecute")


def cluster_now(location: TableLocation, config: WriteConfig | None = None, *, op: str = "scheduleAndExecute",
                instant: str | None = None, execute: ClusteringExecutor | None = None) -> ClusteringResult | None:
    """Hudi's run_clustering procedure: `schedule` writes a plan (the result lists the file groups it will replace,
    nothing new yet); `execute` runs the pending clustering `instant` (None: the oldest pending one);
    `scheduleAndExecute` schedules, then executes every pending clustering oldest first (another writer's too) and
    returns the newest. None when there is nothing to schedule or execute. `execute` runs each clustering's input
    groups (`hudi_engine.spark.clustering_executor(spark)`: one Spark task per group; default: in this process)."""
    config = config or WriteConfig()
    where = location.base_path
    if op not in OPS:
        raise ConfigError(f"table {where}: clustering op {op!r}: expected one of {', '.join(OPS)}")
    check_strategies(config.clustering, where)
    check_index(config, where)
    with service_lock_at(location, config.lock):
        if op == "execute":
            pending = [instant] if instant else pending_clusterings(location)[:1]
            return run_clustering(location, pending[0], config, execute=execute) if pending else None
        if instant is not None and op == "scheduleAndExecute":
            raise ConfigError(f"table {where}: op=scheduleAndExecute takes no instant (it plans a new one); use "
                              "op=execute to run a pending clustering")
        scheduled = schedule_clustering(location, config, instant_time=instant)
        if op == "schedule":
            if scheduled is None:
                return None
            plan = ClusteringPlan.load(Timeline.load(location), scheduled)
            assert plan is not None
            planned: dict[str, list[str]] = {}
            for part, file_id in plan.file_groups:
                planned.setdefault(part, []).append(file_id)
            return ClusteringResult(scheduled.timestamp, planned, {})
        done = None
        for ts in pending_clusterings(location):
            done = run_clustering(location, ts, config, execute=execute)
        return done


def undo_clustering_attempt(location: TableLocation, instant: Instant, plan: ClusteringPlan) -> list[str]:
    """Undo a failed execution of clustering C: delete the base files it wrote (by marker, and any base file of C in
    the plan's partitions: C names nothing else), its markers and its `.inflight` file; the plan stays requested. The
    metadata table's delta commit at C, if the attempt left one, is rolled back first (`MetadataWriter.forget`)."""
    storage = location.storage
    ts = instant.timestamp
    table = TableConfig.load(location)
    if table.metadata_partitions or table.metadata_partitions_inflight:  # a delta commit the attempt left there
        writer = keep_or_disable(location, table, Timeline.load(location),
                                 f"the rollback of the interrupted clustering {ts}", retrying=(ts,))
        if writer is not None:
            writer.forget(ts)
    candidates = {location.join(m.data_file_path) for m in list_markers(location, ts)}
    for partition in sorted({s.partition_path for s in plan.slices}):
        for e in storage.list_dir(location.join(partition)):
            if not e.is_dir and is_base_file_name(e.name) and BaseFileName.parse(e.name).instant_time == ts:
                candidates.add(e.path)
    deleted = [p for p in sorted(candidates) if is_base_file_name(p.rsplit("/", 1)[-1])
               and BaseFileName.parse(p.rsplit("/", 1)[-1]).instant_time == ts and storage.delete(p)]
    delete_marker_dir(location, ts)
    timeline = Timeline(location, [], layout=layout_at(location))
    inflight = timeline.path_of(instant.with_state(State.INFLIGHT))
    storage.delete(inflight)
    # Hadoop's local file system (a Java writer on file://) checks a file against a `.<name>.crc` beside it: a stale
    # one would fail Java's read of the `.inflight` this engine writes again.
    folder, _, name = inflight.rpartition("/")
    storage.delete(f"{folder}/.{name}.crc")
    return deleted


__all__ = [
    "LINEAR",
    "SIZE_BASED_PLAN",
    "SORT_AND_SIZE_EXECUTION",
    "ClusteringExecutor",
    "ClusteringGroup",
    "ClusteringResult",
    "ClusteringTask",
    "build_clustering_plan",
    "check_layout",
    "check_no_later_changes",
    "check_sort_columns",
    "check_strategies",
    "cluster_now",
    "execute_group",
    "pending_clusterings",
    "run_clustering",
    "run_groups_serially",
    "schedule_clustering",
    "select_partitions",
    "undo_clustering_attempt",
]
