"""MOR compaction (FORMAT.md, Compaction): merge each file group's base file and log files into a new base file.

    schedule   `<C>.compaction.requested`: a HoodieCompactionPlan (Avro, version 2, bare file names), one
               operation per file group whose latest slice has log files. From here on new log files of those
               file groups take base instant C (`handles.log_base_instant`), and readers merge them into the
               previous slice until C completes.
    execute    `<C>.compaction.inflight` (empty), then per operation (one Spark task per file group, see
               `hudi_engine.spark.executor`): read the slice merged with the table's payload, exactly as a
               snapshot reader does, and write `<fileId>_<token>_<C>.parquet` (marker first). The rows keep their
               own meta columns (the commit time and sequence number of the record that won), except
               `_hoodie_file_name`, which names the new file.
    complete   `<C>.commit`: commit metadata with `compacted: true`, `operationType: COMPACT`, the writer schema
               and one write stat per new base file (`prevCommit` = the slice's base instant, log counters).

A compaction is not rolled back once scheduled (log files of later writes may already carry its instant); an
interrupted one is re-executed: `run_compaction` on an inflight compaction first deletes what the failed attempt
wrote and goes back to requested. Readers never see a half-done compaction: its base files belong to a pending
instant until the commit file exists.
"""
from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_engine.arrays import one_chunk
from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.write_config import BloomConfig, FileSizing, IndexType, LogConfig, WriteConfig
from hudi_engine.errors import WriteError
from hudi_engine.file_group import BaseFile, FileSlice, LogFile
from hudi_engine.file_naming import (
    CDC_SUFFIX,
    BaseFileName,
    LogFileName,
    WriteToken,
    is_base_file_name,
    is_log_file_name,
)
from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.io.base_file import read_base_file, read_footer
from hudi_engine.io.log_block import BlockType, delete_block_keys
from hudi_engine.io.log_format import encode_log_file, read_log_blocks
from hudi_engine.location import META_FOLDER, TableLocation
from hudi_engine.metadata.writer import MetadataWriter, keep_or_disable, refuse_unmaintained
from hudi_engine.schema import META_COLUMNS, add_meta_fields, avro_to_arrow_schema, remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services import service_lock_at
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.clustering import PendingClustering, is_clustering
from hudi_engine.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.cdc import ChangeLog, cdc_log_file_name, logging_mode_of
from hudi_engine.write.handles import write_base
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.markers import IOType, delete_marker_dir, list_markers

PLAN_KIND = "HoodieCompactionPlan"
PLAN_VERSION = 2  # bare file names (version 1 held full paths)
OPERATION_TYPE = "COMPACT"
COMMIT_TIME, SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_COLUMNS
_MB = 1024 * 1024
# Metric names Hudi's plan generator writes per operation.
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"


# --------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class CompactionOperation:
    """One HoodieCompactionOperation: the file slice of one file group to merge into a new base file."""

    partition_path: str
    file_id: str
    base_instant: str  # baseInstantTime: the slice's base instant
    data_file: str | None  # the slice's base file name; None for a slice of log files only
    delta_files: tuple[str, ...]  # log file names, in log order
    metrics: Mapping[str, float] = field(default_factory=dict)

    def to_avro(self) -> dict:
        return {
            "baseInstantTime": self.base_instant,
            "deltaFilePaths": list(self.delta_files),
            "dataFilePath": self.data_file,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": None,
        }

    @staticmethod
    def from_avro(record: Mapping, where: str = "compaction plan") -> "CompactionOperation":
        """Version 1 plans hold full paths, version 2 bare names: both become names."""
        file_id = record.get("fileId")
        if not file_id:
            raise WriteError(f"{where}: an operation has no fileId: {dict(record)}")
        data = record.get("dataFilePath")
        return CompactionOperation(
            partition_path=record.get("partitionPath") or "",
            file_id=file_id,
            base_instant=record.get("baseInstantTime") or "",
            data_file=data.rsplit("/", 1)[-1] if data else None,
            delta_files=tuple(p.rsplit("/", 1)[-1] for p in record.get("deltaFilePaths") or ()),
            metrics=dict(record.get("metrics") or {}),
        )

    @property
    def group(self) -> tuple[str, str]:
        return (self.partition_path, self.file_id)

    def to_json(self) -> str:
        return json.dumps(self.to_avro())

    @staticmethod
    def from_json(text: str) -> "CompactionOperation":
        return CompactionOperation.from_avro(json.loads(text))


@dataclass(frozen=True)
class CompactionPlan:
    """HoodieCompactionPlan: what `<C>.compaction.requested` holds."""

    operations: tuple[CompactionOperation, ...]
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    # The compactor keeps each record's commit time and sequence number (it writes what readers merged).
    preserve_hoodie_metadata: bool = True

    def to_bytes(self) -> bytes:
        return write_avro_metadata(PLAN_KIND, {
            "operations": [op.to_avro() for op in self.operations],
            "extraMetadata": dict(self.extra_metadata),
            "version": PLAN_VERSION,
            "strategy": None,
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
        })

    @staticmethod
    def from_bytes(data: bytes, *, file_name: str = "compaction plan") -> "CompactionPlan":
        record = read_avro_metadata(data, PLAN_KIND, file_name=file_name)
        ops = tuple(CompactionOperation.from_avro(r, file_name) for r in record.get("operations") or ())
        return CompactionPlan(ops, dict(record.get("extraMetadata") or {}),
                              bool(record.get("preserveHoodieMetadata")))

    @staticmethod
    def load(timeline: Timeline, instant_time: str) -> "CompactionPlan":
        requested = Instant(instant_time, Action.COMPACTION, State.REQUESTED)
        data = timeline.read_content(requested)
        if not data:
            raise WriteError(f"{timeline.path_of(requested)}: empty compaction plan; expected a {PLAN_KIND}")
        return CompactionPlan.from_bytes(data, file_name=timeline.path_of(requested))


def pending_compaction_groups(timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) -> instant of the pending compaction whose plan holds the file group."""
    out: dict[tuple[str, str], str] = {}
    for instant in timeline.pending_compactions():
        for op in CompactionPlan.load(timeline, instant.timestamp).operations:
            out[op.group] = instant.timestamp
    return out


# --------------------------------------------------------------------------------------------- scheduling


def deltacommits_since_last_compaction(timeline: Timeline) -> int:
    """Completed deltacommits after the latest compaction (completed, or scheduled and pending)."""
    last = ""
    for i in timeline:
        if (i.action is Action.COMPACTION) or (i.action is Action.COMMIT and i.is_completed):
            last = max(last, i.timestamp)  # in a MOR table only compactions complete as `commit`
    return sum(1 for i in timeline.filter_by([Action.DELTA_COMMIT], [State.COMPLETED]) if i.timestamp > last)


def compaction_due(timeline: Timeline, max_delta_commits: int) -> bool:
    """Hudi's NUM_COMMITS trigger (`hoodie.compact.inline.max.delta.commits`)."""
    if max_delta_commits < 1:
        raise WriteError(f"hoodie.compact.inline.max.delta.commits={max_delta_commits}: expected at least 1")
    return deltacommits_since_last_compaction(timeline) >= max_delta_commits


def build_compaction_plan(location: TableLocation, timeline: Timeline,
                          partitions: Sequence[str] | None = None) -> CompactionPlan | None:
    """One operation per visible file group (of `partitions`, all when None) whose latest slice has log files
    and that no pending compaction holds yet. None when there is nothing to compact."""
    wanted = None if partitions is None else set(partitions)
    view = FileSystemView.load(location, None if wanted is None else wanted.__contains__)
    pending = pending_compaction_groups(timeline)
    # File groups in pending clustering are not compacted either (Hudi's BaseHoodieCompactionPlanGenerator: the
    # clustering reads their slices and replaces them).
    clustering = PendingClustering.of(timeline)
    ops = []
    for s in sorted(view.latest_file_slices(Visibility.of(timeline)), key=lambda s: (s.partition_path, s.file_id)):
        key = (s.partition_path, s.file_id)
        if not s.log_files or key in pending or key in clustering:
            continue
        logs = s.sorted_log_files()
        log_bytes = sum(f.size for f in logs)
        base_bytes = s.base_file.size if s.base_file else 0
        metrics = {
            TOTAL_LOG_FILES: float(len(logs)),
            TOTAL_LOG_FILES_SIZE: float(log_bytes),
            TOTAL_IO_READ_MB: float(base_bytes // _MB),
            TOTAL_IO_WRITE_MB: float(base_bytes // _MB),
            TOTAL_IO_MB: float(2 * (base_bytes // _MB)),
        }
        ops.append(CompactionOperation(
            s.partition_path, s.file_id, s.base_instant,
            s.base_file.name.format() if s.base_file else None,
            tuple(f.name.format() for f in logs), metrics,
        ))
    return CompactionPlan(tuple(ops)) if ops else None


def _refuse_pending_writes(timeline: Timeline) -> None:
    """A compaction is not scheduled while a write instant is pending: its log files could not be told apart from
    the plan's (Hudi requires no pending write before a compaction instant). Pending compactions and clusterings do
    not count: a clustering writes new file groups only, and each plan leaves the other's file groups out. (A
    clustering is scheduled beside pending writes, as Hudi schedules it: `clustering.build_clustering_plan`.)"""
    pending = [i for i in timeline.write_timeline().pending()
               if i.action not in (Action.COMPACTION, Action.LOG_COMPACTION) and not is_clustering(timeline, i)]
    if pending:
        raise WriteError(f"cannot schedule a compaction on {timeline.base_path}: write instants "
                         f"{', '.join(map(str, pending))} are pending; roll them back or complete them first")


def service_instant_time(timeline: Timeline, config: TableConfig, instant_time: str | None, service: str) -> str:
    """The instant of a table service about to be scheduled (`instant_time`, or a new one): after every instant on
    the timeline."""
    base_path = timeline.base_path
    latest = timeline.latest_time()
    if instant_time is None:
        return new_instant_time(after=latest, local=config.local_instant_times)
    if latest is not None and instant_time <= latest:
        raise WriteError(f"{service} instant {instant_time} is not after the latest instant {latest} of {base_path}")
    return instant_time


def schedule_compaction(location: TableLocation, *, instant_time: str | None = None,
                        partitions: Sequence[str] | None = None,
                        lock: LockConfig | None = None) -> Instant | None:
    """Write `<C>.compaction.requested` for every file group with log files; None if there is nothing to compact.

    C is greater than every instant on the timeline. Refused while a write instant is pending: its log files
    could not be told apart from the plan's (Hudi requires no pending write before a compaction instant).
    """
    base_path = location.base_path
    with service_lock_at(location, lock):
        config = TableConfig.load(location)
        if config.table_type != "MERGE_ON_READ":
            raise WriteError(f"table {base_path} is {config.table_type}: only MERGE_ON_READ tables are compacted")
        refuse_unmaintained(location, config, "compaction")  # before the plan: its run would leave them stale
        timeline = Timeline.load(location)
        _refuse_pending_writes(timeline)
        instant_time = service_instant_time(timeline, config, instant_time, "compaction")
        plan = build_compaction_plan(location, timeline, partitions)
        if plan is None:
            return None
        # Nothing the metadata table lists changes: the compaction's run records its commit there.
        return timeline.create_requested(Instant(instant_time, Action.COMPACTION, State.REQUESTED), plan.to_bytes())


# --------------------------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class CompactionTask:
    """What every task of one compaction shares; picklable, shipped to Spark tasks."""

    storage_uri: str
    base_path: str
    table_props: dict
    instant_time: str
    schema: dict  # the writer schema without meta fields (the latest committed one)
    visibility: Visibility  # as of the compaction instant: the log blocks the plan's slices hold
    files: FileSizing = FileSizing()
    bloom: BloomConfig = BloomConfig()
    row_group_size: int | None = None
    # A CDC table written with the BUCKET index: its inserts went to log files, so the compaction logs the changes
    # (HoodieMergeHandleFactory: CDC enabled and `isYieldingPureLogForMor`); other index types put inserts in new
    # base files and the extractor reads updates from the log files, so the compaction writes no CDC file.
    change_log: bool = False
    log_block_max_size: int = LogConfig().block_max_size

    @staticmethod
    def create(location: TableLocation, instant_time: str, config: WriteConfig | None = None) -> "CompactionTask":
        base_path = location.base_path
        table = TableConfig.load(location)
        timeline = Timeline.load(location)
        schema = timeline.latest_schema() or table.create_schema
        if schema is None:
            raise WriteError(f"table {base_path}: no commit records a writer schema; nothing to compact with")
        if any(f["name"] in META_COLUMNS for f in schema.get("fields", [])):
            schema = remove_meta_fields(schema)
        config = config or WriteConfig()
        change_log = _logs_changes(table, config, base_path)
        return CompactionTask(
            storage_uri=location.uri, base_path=base_path, table_props=dict(table.props), instant_time=instant_time,
            schema=schema, visibility=Visibility.of(timeline, instant_time), files=config.files, bloom=config.bloom,
            change_log=change_log,
            log_block_max_size=config.log.block_max_size,
        )


def _logs_changes(table: TableConfig, config: WriteConfig, base_path: str) -> bool:
    """Whether the compaction writes CDC log files (see `CompactionTask.change_log`); refused when it would need
    to but cannot: without sequence numbers nothing tells a log record that won from a stored row that stayed."""
    change_log = table.cdc_enabled and config.index.type is IndexType.BUCKET
    if change_log and not table.populate_meta_fields:
        raise WriteError(f"table {base_path}: compacting a CDC table (hoodie.table.cdc.enabled=true) written with "
                         "hoodie.index.type=BUCKET needs meta fields, but hoodie.populate.meta.fields=false; "
                         "compact it with Hudi, or rewrite it with meta fields")
    return change_log


def execute_operation(task: CompactionTask, op: CompactionOperation,
                      token: tuple[int, int, int] = (0, 0, 0)) -> WriteStat:
    """Merge one file slice into `<fileId>_<token>_<C>.parquet`; the write stat of the new file."""
    t0 = time.monotonic()
    storage, _ = Storage.for_uri(task.storage_uri)
    config = TableConfig.from_properties(task.table_props)
    folder = Storage.join(task.base_path, op.partition_path)
    where = f"compaction {task.instant_time} of file group {op.file_id} in {op.partition_path!r}"
    try:
        base = None
        if op.data_file:
            path = Storage.join(folder, op.data_file)
            base = BaseFile(BaseFileName.parse(op.data_file), path, storage.size(path))
        logs = [LogFile(LogFileName.parse(n), Storage.join(folder, n), storage.size(Storage.join(folder, n)))
                for n in op.delta_files]
    except FileNotFoundError as e:
        raise WriteError(f"{where}: a file of the plan is gone ({e}); was it cleaned while the compaction was "
                         "pending?") from None
    file_slice = FileSlice(op.partition_path, op.file_id, op.base_instant, base, logs)
    schema = avro_to_arrow_schema(add_meta_fields(task.schema))
    # A schema-on-read table's older files name renamed or dropped columns otherwise: found by id.
    column_ids = ColumnIds.load(storage, Storage.join(task.base_path, META_FOLDER), task.visibility.completed)
    ctx = SliceReadContext.for_table(storage, config, schema, task.visibility, column_ids=column_ids)
    merged = read_file_slice(ctx, file_slice)
    t_read = time.monotonic()
    log_counts = _log_counts(storage, logs)

    # What happened to the base records: kept as is, updated from the logs, deleted.
    if base is not None:
        base_rows = read_base_file(storage, base.path, columns=_base_stat_columns(ctx, config, base.path, storage))
        base_keys = _strings(ctx.key_of(base_rows))
    else:
        base_rows, base_keys = None, pa.array([], pa.string())
    out_keys = _strings(ctx.key_of(merged))
    in_base = pc.is_in(out_keys, value_set=base_keys)
    kept = int(pc.sum(in_base).as_py() or 0)
    updated = 0
    if base_rows is not None and config.populate_meta_fields and kept:
        same_version = pc.is_in(_strings(merged.column(SEQNO)), value_set=_strings(base_rows.column(SEQNO)))
        updated = int(pc.sum(pc.and_(in_base, pc.invert(same_version))).as_py() or 0)
    inserted = merged.num_rows - kept
    if inserted:  # log-only records: keep the file sorted by key (min/max keys and row groups prune better)
        merged = merged.sort_by([(RECORD_KEY, "ascending")]) if RECORD_KEY in merged.column_names else merged

    name = str(BaseFileName(op.file_id, str(WriteToken(*token)), task.instant_time))
    if config.populate_meta_fields:
        merged = merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,
                                   pa.repeat(pa.scalar(name, pa.string()), merged.num_rows))
    owned = InflightInstant(TableLocation(storage, task.base_path, task.storage_uri), task.instant_time)
    owned.create_marker(op.partition_path, name, IOType.MERGE if base is not None else IOType.CREATE)
    result = write_base(storage, Storage.join(folder, name), merged, bloom=task.bloom, files=task.files,
                        populate_meta_fields=config.populate_meta_fields, row_group_size=task.row_group_size)
    owned.confirm_written(op.partition_path, name)
    cdc_stats = None
    if task.change_log and base is not None and kept:  # no stored row left, or no base file: inferred
        cdc_stats = _write_compaction_change_log(task, storage, config, ctx, op, base, merged, str(WriteToken(*token)))
    log_bytes = sum(f.size for f in logs)
    return WriteStat(
        file_id=op.file_id,
        path=f"{op.partition_path}/{name}" if op.partition_path else name,
        prev_commit=op.base_instant,
        num_writes=result.num_rows,
        num_deletes=len(base_keys) - kept,
        num_update_writes=updated,
        num_inserts=inserted,
        total_write_bytes=result.size,
        partition_path=op.partition_path,
        total_log_records=log_counts["records"],
        total_log_files_compacted=len(logs),
        total_log_size_compacted=log_bytes,
        total_updated_records_compacted=updated,
        total_log_blocks=log_counts["blocks"],
        total_corrupt_log_block=log_counts["corrupt"],
        total_rollback_blocks=log_counts["rollback"],
        file_size_in_bytes=result.size,
        runtime_stats=RuntimeStats(total_scan_time=int((t_read - t0) * 1000),
                                   total_upsert_time=int((time.monotonic() - t_read) * 1000)),
        cdc_stats=cdc_stats,
    )


def _write_compaction_change_log(task: CompactionTask, storage: Storage, config: TableConfig,
                                 ctx: SliceReadContext, op: CompactionOperation, base: BaseFile, merged: pa.Table,
                                 token: str) -> dict[str, int]:
    """The CDC log file of one compacted file group (`HoodieMergeHandleWithChangeLog`, compactor constructor): the
    stored rows against the merged slice. A merged row is an update when the log record won, i.e. its sequence
    number is not the stored row's (the compaction keeps each row's own commit time); `ts_ms` is the compaction
    instant."""
    mode = logging_mode_of(config, f"table {task.base_path}")
    assert mode is not None
    old = read_base_file(storage, base.path)
    old = old.select([c for c in merged.column_names if c in old.column_names])
    changes = ChangeLog(mode, task.instant_time, task.schema, ctx.key_of)
    pos = pc.index_in(_strings(ctx.key_of(merged)), value_set=_strings(ctx.key_of(old)))
    stored_seqno = _strings(old.column(SEQNO)).take(pos)
    rewritten = pc.fill_null(pc.not_equal(_strings(merged.column(SEQNO)), stored_seqno), True)
    changes.add_merge(old, merged, rewritten)
    name = cdc_log_file_name(op.file_id, task.instant_time, token)
    data = encode_log_file(changes.blocks(task.log_block_max_size))
    owned = InflightInstant(TableLocation(storage, task.base_path, task.storage_uri), task.instant_time)
    owned.create_marker(op.partition_path, name, IOType.CREATE)
    path = Storage.join(task.base_path, op.partition_path, name)
    if not storage.create_exclusive(path, data):
        raise WriteError(f"compaction {task.instant_time}: CDC log file {path} exists already; run the compaction again")
    owned.confirm_written(op.partition_path, name)
    return {f"{op.partition_path}/{name}" if op.partition_path else name: len(data)}


def _strings(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Keys and sequence numbers compared as strings, whatever string type a file stored them in."""
    col = one_chunk(col)
    return col if col.type == pa.string() else col.cast(pa.string())


def _base_stat_columns(ctx: SliceReadContext, config: TableConfig, path: str, storage: Storage) -> list[str]:
    cols = list(ctx.key_columns)
    if config.populate_meta_fields:
        cols.append(SEQNO)
    present = set(read_footer(storage, path).schema.names)
    return [c for c in dict.fromkeys(cols) if c in present]


def _log_counts(storage: Storage, logs: list[LogFile]) -> dict[str, int]:
    """Blocks, corrupt blocks, rollback blocks and records (data + deleted keys) of the slice's log files."""
    counts = {"blocks": 0, "corrupt": 0, "rollback": 0, "records": 0}
    for log in logs:
        with storage.open_input_file(log.path) as f:
            blocks = read_log_blocks(f, file_name=log.path)
        for b in blocks:
            counts["blocks"] += 1
            if b.block_type == BlockType.CORRUPT:
                counts["corrupt"] += 1
            elif b.block_type == BlockType.COMMAND:
                counts["rollback"] += int(b.is_rollback)
            elif b.block_type == BlockType.AVRO_DATA and len(b.content) >= 8:
                counts["records"] += struct.unpack_from(">i", b.content, 4)[0]
            elif b.block_type == BlockType.PARQUET_DATA:
                try:
                    counts["records"] += pq.ParquetFile(pa.BufferReader(b.content)).metadata.num_rows
                except (pa.ArrowException, OSError):
                    pass  # unreadable content is the reader's error to report
            elif b.block_type == BlockType.DELETE:
                counts["records"] += len(delete_block_keys(b))
    return counts


# --------------------------------------------------------------------------------------------- the instant

Executor = Callable[[CompactionTask, Sequence[CompactionOperation]], list[WriteStat]]


def run_serially(task: CompactionTask, ops: Sequence[CompactionOperation]) -> list[WriteStat]:
    """Execute the operations one after the other in this process (`hudi_engine.spark.spark_executor` runs one Spark task each)."""
    return [execute_operation(task, op, (i, 0, 0)) for i, op in enumerate(ops)]


@dataclass
class CompactionResult:
    instant_time: str
    stats: list[WriteStat]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def file_groups(self) -> int:
        return len(self.stats)

    @property
    def records_written(self) -> int:
        return sum(s.num_writes for s in self.stats)

    @property
    def log_files_compacted(self) -> int:
        return sum(s.total_log_files_compacted for s in self.stats)


def _pending_compaction(timeline: Timeline, instant_time: str) -> Instant:
    found = [i for i in timeline.instants_at(instant_time) if i.comparable_action is Action.COMMIT]
    if not found:
        raise WriteError(f"{timeline.base_path}: no compaction at {instant_time} on the timeline")
    instant = found[0]
    if instant.is_completed:
        raise WriteError(f"compaction {instant_time} of {timeline.base_path} is already completed")
    if instant.action is not Action.COMPACTION:
        raise WriteError(f"{instant} is not a compaction")
    return instant


def run_compaction(location: TableLocation, instant_time: str, *, storage_uri: str | None = None,
                   execute: Executor | None = None, config: WriteConfig | None = None) -> CompactionResult:
    """Execute and complete the pending compaction at `instant_time` (requested, or inflight from a failed run).

    `execute` runs the operations (default: serially in this process). If it fails, what it wrote is deleted and
    the compaction goes back to requested, so the next run (or the next writer) starts it afresh.
    """
    with service_lock_at(location, config.lock if config else None):
        t0 = time.monotonic()
        timeline = Timeline.load(location)
        instant = _pending_compaction(timeline, instant_time)
        plan = CompactionPlan.load(timeline, instant_time)
        _logs_changes(TableConfig.load(location), config or WriteConfig(), location.base_path)  # refused up front
        if instant.is_inflight:
            rollback_inflight_compaction(location, instant_time)
        # hoodie.properties read again: the rollback of an interrupted attempt may have disabled the metadata table.
        writer = keep_or_disable(location, TableConfig.load(location), timeline, f"compaction {instant_time}",
                                 retrying=(instant_time,), table_services=True,
                                 max_delta_commits=(config or WriteConfig()).metadata_compact_max_delta_commits)
        requested = Instant(instant_time, Action.COMPACTION, State.REQUESTED)
        inflight = timeline.transition_to_inflight(requested, b"")
        task_location = TableLocation(location.storage, location.base_path, storage_uri or location.base_path)
        task = CompactionTask.create(task_location, instant_time, config)
        t1 = time.monotonic()
        try:
            stats = (execute or run_serially)(task, plan.operations)
        except BaseException:
            rollback_inflight_compaction(location, instant_time)
            raise
        t2 = time.monotonic()
        complete_compaction(location, inflight, plan, stats, task.schema, metadata_writer=writer)
        return CompactionResult(instant_time, stats, {"prepare": t1 - t0, "execute": t2 - t1,
                                                      "commit": time.monotonic() - t2})


def complete_compaction(location: TableLocation, inflight: Instant, plan: CompactionPlan,
                        stats: Sequence[WriteStat], schema: dict, *,
                        metadata_writer: MetadataWriter | None = None) -> Instant:
    """`<C>.commit` (compacted, COMPACT) once every operation of the plan wrote its file.

    Files with a marker but no stat (a failed task attempt that was retried) are deleted first, as Hudi's
    finalizeWrite does; the metadata table (`metadata_writer`, when kept) records the commit's new base files before it
    completes; the marker folder goes after the commit.
    """
    stats = list(stats)
    wrote = {(s.partition_path or "", s.file_id) for s in stats}
    missing = [op for op in plan.operations if op.group not in wrote]
    if missing or len(stats) != len(plan.operations):
        raise WriteError(f"compaction {inflight.timestamp}: {len(stats)} files written for {len(plan.operations)} "
                         f"operations; no file for {[op.file_id for op in missing][:3]}")
    paths: set[str] = set()
    for s in stats:
        if s.path is None:
            raise WriteError(f"compaction {inflight.timestamp}: the write stat of file group {s.file_id} has no path")
        paths.add(s.path)
        paths.update(s.cdc_stats or {})
    absent = [p for p in sorted(paths) if not location.storage.exists(location.join(p))]
    if absent:
        raise WriteError(f"compaction {inflight.timestamp}: write stats name files that do not exist: {absent[:3]}")
    for marker in list_markers(location, inflight.timestamp):
        if marker.data_file_path not in paths:
            location.storage.delete(location.join(marker.data_file_path))
    by_partition: dict[str, list[WriteStat]] = {}
    for s in stats:
        by_partition.setdefault(s.partition_path or "", []).append(s)
    commit = CommitMetadata(by_partition, True, {CommitMetadata.SCHEMA_KEY: schema_to_json(schema)}, OPERATION_TYPE)
    if metadata_writer is not None:
        metadata_writer.record_commit(inflight.timestamp, commit)
    completed = Timeline(location, [], layout=layout_at(location)).complete(inflight, commit)
    delete_marker_dir(location, inflight.timestamp)
    return completed


def rollback_inflight_compaction(location: TableLocation, instant_time: str) -> list[str]:
    """Undo a failed attempt of compaction C: delete the base files it wrote (by marker, and any base file of C in
    the plan's file groups), its markers, and `<C>.compaction.inflight`; the plan stays requested.

    Only base files named with instant C go: log files with base instant C belong to later writes. The metadata
    table's delta commit at C, if the attempt left one, is rolled back first (`MetadataWriter.forget`): a retry
    that completes C would otherwise make it count.
    Returns the deleted paths.
    """
    storage = location.storage
    with service_lock_at(location):
        table = TableConfig.load(location)
        if table.metadata_partitions or table.metadata_partitions_inflight:
            writer = keep_or_disable(location, table, Timeline.load(location),
                                     f"the rollback of the interrupted compaction {instant_time}",
                                     retrying=(instant_time,))
            if writer is not None:
                writer.forget(instant_time)
        timeline = Timeline(location, [], layout=layout_at(location))
        plan = CompactionPlan.load(timeline, instant_time)
        deleted = []
        candidates = {location.join(m.data_file_path) for m in list_markers(location, instant_time)}
        groups = {op.group for op in plan.operations}
        for partition in sorted({op.partition_path for op in plan.operations}):
            for e in storage.list_dir(location.join(partition)):
                if not e.is_dir and is_base_file_name(e.name):
                    name = BaseFileName.parse(e.name)
                    if name.instant_time == instant_time and (partition, name.file_id) in groups:
                        candidates.add(e.path)
        for path in sorted(candidates):
            file_name = path.rsplit("/", 1)[-1]
            if (is_base_file_name(file_name) and BaseFileName.parse(file_name).instant_time == instant_time) \
                    or _is_cdc_log_of(file_name, instant_time):
                if storage.delete(path):
                    deleted.append(path)
        delete_marker_dir(location, instant_time)
        storage.delete(timeline.path_of(Instant(instant_time, Action.COMPACTION, State.INFLIGHT)))
        return deleted


def _is_cdc_log_of(file_name: str, instant_time: str) -> bool:
    """A CDC log file the compaction wrote (unlike other log files with base instant C, which later writes own)."""
    if not is_log_file_name(file_name):
        return False
    log = LogFileName.parse(file_name)
    return log.suffix == CDC_SUFFIX and log.base_instant == instant_time


def pending_compactions(location: TableLocation) -> list[str]:
    """Instant times of the scheduled or interrupted compactions, oldest first."""
    return [i.timestamp for i in Timeline.load(location).pending_compactions()]


__all__ = [
    "CompactionOperation", "CompactionPlan", "CompactionResult", "CompactionTask", "build_compaction_plan",
    "compaction_due", "complete_compaction", "deltacommits_since_last_compaction", "execute_operation",
    "pending_compaction_groups", "pending_compactions", "rollback_inflight_compaction", "run_compaction",
    "run_serially", "schedule_compaction", "service_instant_time",
]
