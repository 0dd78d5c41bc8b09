"""The metadata table's own compaction, as Hudi's `HoodieBackedTableMetadataWriter` schedules and runs it before a
data action records itself (`performTableServices`, `compactIfNecessary`; FORMAT.md, Metadata table).

When to compact (`compaction_time`): once the `files` file group holds `hoodie.metadata.compact.max.delta.commits`
completed delta commits since the latest compaction (after its time; on table versions 8 and 9 completed after it,
Hudi 1.x counting by completion time), and no data instant at or before the latest delta commit is pending (its
block would be merged into the base file before the data instant settles: Hudi's
`validateTimelineBeforeSchedulingCompaction`). The compaction's instant:
* table version 6 (Hudi 0.15): the latest delta commit's time + `001` (`createCompactionTimestamp`), skipped when a
  completed compaction already has it;
* versions 8 and 9 (Hudi 1.x): a new instant time (`createNewInstantTime`). It may come after the data instant being
  written: that instant's delta commit then completes after the compaction and belongs to the new file slice
  (Hudi 1.x slices log files by completion time), as it does in Hudi.

How (`compact`): `<C>.compaction.requested` (a HoodieCompactionPlan of one operation: the `files` file group's
latest slice), `.inflight`, a marker, then the base file `files-0000-0_0-1-0_<C>.hfile`: every record of the slice
merged as readers merge it (`MetadataTable.read_files_partition`; tombstones of names the base file does not hold
stay, as Hudi's payload keeps them), in key order, laid out as Hudi's HFile base writer writes it (`write_base_file`),
then `<C>.commit` (compacted, COMPACT) and the markers go. A `record_index` file group (newest record of a key wins,
no merging) is compacted as HFile cells, not records: `MetadataTable.read_slice_cells` merges the base file's and
the log blocks' cells with arrow and their value bytes are written as they are (`write_base_file_cells`, the same
bytes as `write_base_file`), when every one of them is in the base file's schema; else through records. An
interrupted compaction (pending on the metadata timeline) is run again from its plan first (`resume`), as Hudi's
`runAnyPendingCompactions` does.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import pyarrow as pa

from hudi_engine.errors import MetadataTableError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import BaseFileName
from hudi_engine.io.bloom import new_bloom_filter
from hudi_engine.io.hfile import CELL_COLUMNS, write_hfile, write_hfile_arrays
from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
from hudi_engine.metadata.records import FILES_PARTITION, MetadataRecord, RecordCodec
from hudi_engine.metadata.table import SCHEMA_FILE_INFO, MetadataTable
from hudi_engine.schema import remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.write.markers import IOType, create_marker, delete_marker_dir, list_markers

COMPACTION_SUFFIX = "001"  # HoodieTableMetadataUtil.OperationSuffix.COMPACTION (table version 6)
BASE_WRITE_TOKEN = "0-1-0"
OPERATION_TYPE = "COMPACT"
# What Hudi's HFile base writer (HoodieAvroHFileWriter) adds: the record keys' bloom filter (base64 of the filter,
# Hudi's default sizing) in a meta block, its type and the min and max keys in the file info.
BLOOM_META_BLOCK = "bloomFilter"
BLOOM_TYPE_FILE_INFO = "bloomFilterTypeCode"
MIN_KEY_FILE_INFO, MAX_KEY_FILE_INFO = "minRecordKey", "maxRecordKey"
_PLAN_KIND, _PLAN_VERSION = "HoodieCompactionPlan", 2


def compaction_time(table: MetadataTable, max_delta_commits: int) -> str | None:
    """The instant of the compaction of `table`'s `files` file group that is due now (module doc), or None."""
    if max_delta_commits < 1:
        raise MetadataTableError(f"hoodie.metadata.compact.max.delta.commits={max_delta_commits}: expected at least 1")
    timeline = table.timeline
    deltas = timeline.filter_by([Action.DELTA_COMMIT], [State.COMPLETED]).instants
    if not deltas or timeline.pending_compactions().instants:
        return None
    latest = max(i.timestamp for i in deltas)
    if any(not i.is_completed and i.timestamp <= latest for i in table.data_timeline.instants):
        return None
    by_completion = table.config.version >= 8
    compacted = timeline.filter_by([Action.COMMIT], [State.COMPLETED]).last()
    since = compacted.timestamp if compacted is not None else ""
    count = sum(1 for i in deltas if ((i.completion_time or i.timestamp) if by_completion else i.timestamp) > since)
    if count < max_delta_commits:
        return None
    if by_completion:
        newest = max((i.timestamp[:17] for t in (timeline, table.data_timeline) for i in t.instants), default=None)
        return new_instant_time(after=newest, local=table.data_config.local_instant_times)
    instant_time = latest + COMPACTION_SUFFIX
    return None if timeline.instants_at(instant_time) else instant_time


def write_base_file(records: Iterable[MetadataRecord], codec: RecordCodec, schema: str, name: str) -> bytes:
    """An HFile base file of `records` (sorted by key here) as Hudi's HFile base writer lays it out."""
    ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
    keys = [r.key for r in ordered]
    bloom = new_bloom_filter()
    bloom.add_many(keys)
    info = {SCHEMA_FILE_INFO: schema.encode("utf-8"), BLOOM_TYPE_FILE_INFO: b"DYNAMIC_V0",
            MIN_KEY_FILE_INFO: (keys[0] if keys else "").encode("utf-8"),
            MAX_KEY_FILE_INFO: (keys[-1] if keys else "").encode("utf-8")}
    return write_hfile(((r.key, codec.encode(r)) for r in ordered), file_info=info,
                       meta_blocks={BLOOM_META_BLOCK: bloom.to_base64().encode("ascii")}, name=name)


def write_base_file_cells(cells: pa.Table, schema: str, name: str) -> bytes:
    """`write_base_file` of cells already encoded with `schema` (binary `key` and `value` in key order, unique keys,
    as `MetadataTable.read_slice_cells` gives them): the same bytes, built with arrow."""
    keys, values = (cells.column(c) for c in CELL_COLUMNS)
    bloom = new_bloom_filter()
    bloom.add_many(keys)
    n = cells.num_rows
    info = {SCHEMA_FILE_INFO: schema.encode("utf-8"), BLOOM_TYPE_FILE_INFO: b"DYNAMIC_V0",
            MIN_KEY_FILE_INFO: keys[0].as_py() if n else b"", MAX_KEY_FILE_INFO: keys[n - 1].as_py() if n else b""}
    return write_hfile_arrays(keys, values, file_info=info,
                              meta_blocks={BLOOM_META_BLOCK: bloom.to_base64().encode("ascii")}, name=name)


def _slices(table: MetadataTable) -> list[FileSlice]:
    """The file groups a compaction of `table` compacts: the `files` file group, and every other file group of a
    metadata partition the data table lists that has log files."""
    out = [table.files_slice()]
    for partition in table.data_config.metadata_partitions:
        if partition != FILES_PARTITION:
            out += [s for s in table.partition_slices(partition) if s.log_files]
    return out


def _plan(table: MetadataTable) -> bytes:
    operations = []
    for fs in _slices(table):
        logs = fs.sorted_log_files()
        operations.append({
            "baseInstantTime": fs.base_instant, "deltaFilePaths": [f.name.format() for f in logs],
            "dataFilePath": fs.base_file.name.format() if fs.base_file is not None else None, "fileId": fs.file_id,
            "partitionPath": fs.partition_path, "bootstrapFilePath": None,
            "metrics": {"TOTAL_LOG_FILES": float(len(logs)), "TOTAL_LOG_FILES_SIZE": float(sum(f.size for f in logs))},
        })
    return write_avro_metadata(_PLAN_KIND, {"operations": operations, "extraMetadata": {}, "version": _PLAN_VERSION,
                                            "strategy": None, "preserveHoodieMetadata": False})


def compact(table: MetadataTable, timeline: Timeline, instant_time: str) -> Instant:
    """Schedule and run the compaction of `table`'s file groups at `instant_time` (module doc); `timeline`: the
    metadata table's, writing completion times the way its delta commits do. Returns the completed instant."""
    requested = timeline.create_requested(Instant(instant_time, Action.COMPACTION, State.REQUESTED), _plan(table))
    return _execute(table, timeline, timeline.transition_to_inflight(requested))


def resume(table: MetadataTable, timeline: Timeline) -> list[Instant]:
    """Run again every compaction left pending on `table` (an interrupted attempt's files and markers deleted first);
    the completed instants."""
    done = []
    location = table.location
    for pending in timeline.pending_compactions().instants:
        t = pending.timestamp
        for marker in list_markers(location, t):
            path = location.join(marker.data_file_path)
            if location.storage.exists(path):
                location.storage.delete(path)
        delete_marker_dir(location, t)
        inflight = pending if pending.is_inflight else timeline.transition_to_inflight(pending)
        done.append(_execute(table, timeline, inflight))
    return done


def _execute(table: MetadataTable, timeline: Timeline, inflight: Instant) -> Instant:
    instant_time = inflight.timestamp
    location = table.location
    planned = read_avro_metadata(timeline.read_content(inflight.with_state(State.REQUESTED)), _PLAN_KIND,
                                 file_name=timeline.path_of(inflight.with_state(State.REQUESTED)))
    wanted = {(op["partitionPath"], op["fileId"]) for op in planned.get("operations") or ()}
    schema = table.record_schema(table.files_slice())
    codec = RecordCodec(schema, f"{location.base_path} (its files base file)")
    stats: dict[str, list[WriteStat]] = {}
    for fs in _slices(table):
        if (fs.partition_path, fs.file_id) not in wanted:
            continue
        name = BaseFileName(fs.file_id, BASE_WRITE_TOKEN, instant_time, ".hfile").format()
        where = f"{location.base_path}: compaction {instant_time}"
        # record_index: newest wins, so its cells merge as bytes (when every value is in the base file's schema)
        cells = table.read_slice_cells(fs, schema) if fs.partition_path == RECORD_INDEX_PARTITION else None
        if cells is not None:
            written = cells.num_rows
            data = write_base_file_cells(cells, schema, where)
        else:
            # the files partition keeps its tombstones inside its records; other partitions drop deleted records
            records = [r for r in table.read_slice(fs).values() if not r.is_deleted]
            written = len(records)
            data = write_base_file(records, codec, schema, where)
        create_marker(location, instant_time, fs.partition_path, name, IOType.CREATE)
        rel_path = f"{fs.partition_path}/{name}"
        path = Storage.join(location.base_path, rel_path)
        if not location.storage.create_exclusive(path, data):
            raise MetadataTableError(f"{path}: already exists; another writer compacted this metadata table")
        logs = fs.sorted_log_files()
        stats.setdefault(fs.partition_path, []).append(WriteStat(
            file_id=fs.file_id, path=rel_path, prev_commit=fs.base_instant, num_writes=written,
            num_update_writes=written, total_write_bytes=len(data), partition_path=fs.partition_path,
            total_log_files_compacted=len(logs), total_log_size_compacted=sum(f.size for f in logs),
            file_size_in_bytes=len(data)))
    commit = CommitMetadata(stats, True,
                            {CommitMetadata.SCHEMA_KEY: schema_to_json(remove_meta_fields(json.loads(schema)))},
                            OPERATION_TYPE)
    completed = timeline.complete(inflight, commit)
    delete_marker_dir(location, instant_time)
    return completed
