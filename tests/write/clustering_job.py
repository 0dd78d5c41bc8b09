"""A clustering job as a Java Hudi writer runs one, built from the engine's own pieces, for tests of how writes and
table services treat another writer's pending clustering.

`schedule_clustering` writes `<ts>.replacecommit.requested` (on a layout-2 table, Hudi 1.x's `<ts>.clustering.requested`)
holding a HoodieRequestedReplaceMetadata (operationType
CLUSTER) with a HoodieClusteringPlan over the latest slices of some file groups, as Hudi's
ClusteringPlanActionExecutor does (ClusteringUtils.createClusteringPlan: dataFilePath a full path, deltaFilePaths
log file names). `execute_clustering` runs it as SparkExecuteClusteringCommitActionExecutor does: requested ->
inflight (no content), the plan's slices read and merged, each input group written as one new file group
(numOutputFileGroups 1), and the replacecommit completed with operationType CLUSTER and the input file groups in
`partitionToReplaceFileIds`. Unlike Hudi (hoodie.clustering.preserve.commit.metadata), the new files take the
clustering's instant as `_hoodie_commit_time`: no reader here depends on it.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_engine import HudiTable
from hudi_engine.file_group import FileGroup, FileSlice
from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.location import TableLocation
from hudi_engine.metadata.writer import keep_or_disable
from hudi_engine.schema import META_COLUMNS, arrow_to_avro_schema
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Action, Instant, State, new_instant_time, write_avro_metadata
from hudi_engine.timeline.clustering import CLUSTER, ClusteringPlan, ClusteringSlice
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit
from hudi_engine.write.handles import WriteContext, create_handle

STRATEGY = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"


def schedule_clustering(path: Path | str, groups: list[tuple[str, str]], *, inflight: bool = False) -> str:
    """Plan one clustering group over the latest slices of `groups` ((partition, file id)); its instant time."""
    t = HudiTable.load(str(path))
    latest = {(s.partition_path, s.file_id): s for s in t.file_slices()}
    slices = []
    for g in groups:
        s = latest[g]
        slices.append({"dataFilePath": s.base_file.path if s.base_file else None,
                       "deltaFilePaths": [f.name.format() for f in s.sorted_log_files()], "fileId": s.file_id,
                       "partitionPath": s.partition_path, "bootstrapFilePath": None, "version": 1})
    record = {
        "operationType": CLUSTER,
        "clusteringPlan": {
            "inputGroups": [{"slices": slices, "metrics": {"TOTAL_LOG_FILES": 0.0}, "numOutputFileGroups": 1,
                             "extraMetadata": None, "version": 1}],
            "strategy": {"strategyClassName": STRATEGY, "strategyParams": {}, "version": 1},
            "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True,
        },
        "extraMetadata": {}, "version": 1,
    }
    ts = new_instant_time(after=max(t.timeline.timestamps()))
    action = Action.CLUSTERING if t.timeline.layout.version == 2 else Action.REPLACE_COMMIT
    requested = t.timeline.create_requested(Instant(ts, action, State.REQUESTED),
                                            write_avro_metadata("HoodieRequestedReplaceMetadata", record))
    if inflight:
        t.timeline.transition_to_inflight(requested)
    return ts


def execute_clustering(path: Path | str, instant_time: str) -> dict[str, list[str]]:
    """Run the pending clustering at `instant_time` to completion; the replaced file ids by partition."""
    t = HudiTable.load(str(path))
    pending = [i for i in t.timeline.instants_at(instant_time) if i.action in (Action.REPLACE_COMMIT, Action.CLUSTERING)]
    assert len(pending) == 1 and not pending[0].is_completed, pending
    plan = ClusteringPlan.load(t.timeline, pending[0])
    assert plan is not None
    inflight = pending[0] if pending[0].is_inflight else t.timeline.transition_to_inflight(pending[0])
    # The files the plan names, exactly (Hudi reads dataFilePath and deltaFilePaths): whatever was written to the
    # file group after the plan is not read, and is gone once the replacecommit hides the group.
    vis = Visibility.of(t.timeline)
    view = FileSystemView.load(t.location, slicing=vis.slicing)  # layout 2: log files join slices by completion time
    groups = {(g.partition_path, g.file_id): g for g in view.file_groups()}
    schema = t.schema()
    ctx = SliceReadContext.for_table(t.storage, t.config, schema, vis)
    data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
    avro = arrow_to_avro_schema(data_schema, t.config.name, with_meta=False)
    write_ctx = WriteContext.create(TableLocation.at(t.storage, t.base_path), t.config, instant_time, avro).for_task(0, 0, 0)
    stats, replaced = [], {}
    for group in plan.input_groups:
        by_partition: dict[str, list[pa.Table]] = {}
        for s in group:
            planned = _planned_slice(groups[(s.partition_path, s.file_id)], s)
            by_partition.setdefault(s.partition_path, []).append(read_file_slice(ctx, planned))
            replaced.setdefault(s.partition_path, []).append(s.file_id)
        for partition, tables in by_partition.items():
            rows = pa.concat_tables(tables)
            rows = rows.select(["_hoodie_record_key", *data_schema.names])
            stats.append(create_handle(write_ctx, partition, rows))
    location = TableLocation.at(t.storage, t.base_path)
    # The metadata table (on by default) kept as a writer keeps it, or disabled where it cannot be.
    writer = keep_or_disable(location, TableConfig.load(location), t.timeline, f"clustering {instant_time}",
                             retrying=(instant_time,))
    complete_commit(location, inflight, stats, CLUSTER, avro, partition_to_replace_file_ids=replaced,
                    layout=layout_at(location),
                    before_commit=lambda commit: writer and writer.record_commit(instant_time, commit))
    return replaced


def _planned_slice(group: FileGroup, s: ClusteringSlice) -> FileSlice:
    """The slice of `group` a HoodieSliceInfo names: its base file and the log files listed, nothing newer."""
    for candidate in group.slices.values():
        base = candidate.base_file.path if candidate.base_file else None
        logs = [f for f in candidate.sorted_log_files() if f.name.format() in s.log_file_names]
        if base == s.base_file_path and len(logs) == len(s.log_file_names):
            return FileSlice(candidate.partition_path, candidate.file_id, candidate.base_instant,
                             candidate.base_file, logs)
    raise AssertionError(f"the files of {s} are gone")
