"""This engine's commits recorded in a data table's metadata table, as Hudi's `HoodieBackedTableMetadataWriter` records
them (FORMAT.md, Metadata table).

A metadata table is kept only when it is one this engine can keep whole: `hoodie.table.metadata.partitions` lists
exactly `files` (no column stats, bloom filters, record index, ... whose records we do not compute), nothing is
being built (`...partitions.inflight` empty), the metadata table is of the data table's version, has no pending
instant and one `files` file group with its base file. Otherwise the writer disables it as before
(`TableConfig.disable_metadata_table`).

For a data commit at instant T, before T completes (the data commit's metadata is known, its files are written):

    1. `<T>.deltacommit.requested`, then `.inflight` (a workload of one update of `files-0000-0`) on the metadata
       table's timeline
    2. a marker, then a new log file of the `files` file group: one HFile data block (INSTANT_TIME T, SCHEMA the
       record schema of the metadata table's base file) holding `records.records_for_commit`
    3. `<T>.deltacommit` (layout 2: `<T>_<completion>.deltacommit`) with the write stat of that log file
    4. the marker folder is deleted

Only then does the data commit complete. A crash before that leaves a metadata-table delta commit at a data instant
that never completed: readers skip its block (`table.MetadataTable.valid_instants`), and the rollback of T (ours
disables the metadata table; Java's rolls the delta commit back too) removes it. The log file is always new
(version after the slice's last, token `0-1-0`; layout 2 names it by T), so no file Java wrote is changed.
"""
from __future__ import annotations

import dataclasses
import json

from hudi_engine.errors import HudiError, MetadataTableError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import LogFileName
from hudi_engine.io.hfile import write_hfile
from hudi_engine.io.log_block import BlockType, HeaderKey, LogBlock
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.location import TableLocation
from hudi_engine.metadata.records import FILES_PARTITION, RecordCodec, records_for_commit
from hudi_engine.metadata.table import SCHEMA_FILE_INFO, MetadataTable
from hudi_engine.schema import remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.layout import TimelineLayoutV2
from hudi_engine.write.markers import IOType, create_marker, delete_marker_dir

KEPT_PARTITIONS = (FILES_PARTITION,)  # the metadata partitions this engine keeps up to date
OPERATION = "UPSERT_PREPPED"  # what Hudi's metadata writer commits its delta commits as
WRITE_TOKEN = "0-1-0"


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether a table's metadata table is kept by this engine's commit: `writer` when it is, else `reason`."""

    writer: MetadataWriter | None
    reason: str


class MetadataWriter:
    """Appends this engine's commits to the `files` partition of a data table's metadata table."""

    def __init__(self, table: MetadataTable, file_slice: FileSlice, schema: str) -> None:
        self.table = table
        self.file_slice = file_slice
        self.schema = schema
        self.codec = RecordCodec(schema, f"{table.location.base_path} (its files base file)")

    @staticmethod
    def decide(data: TableLocation, data_config: TableConfig, data_timeline: Timeline) -> Decision:
        """Keep the metadata table of the table at `data`, or say why not (module doc). Nothing is written."""
        partitions = data_config.metadata_partitions
        if sorted(partitions) != sorted(KEPT_PARTITIONS):
            return Decision(None, f"hoodie.table.metadata.partitions lists {partitions}; this engine keeps "
                                  f"{list(KEPT_PARTITIONS)} only")
        if data_config.metadata_partitions_inflight:
            return Decision(None, "metadata partitions are being built "
                                  f"({data_config.metadata_partitions_inflight})")
        try:
            table = MetadataTable.load(data, data_config, data_timeline)
            if table.config.version != data_config.version:
                return Decision(None, f"the metadata table is of version {table.config.version}, the table of "
                                      f"{data_config.version}")
            if not table.timeline.layout.writable:
                return Decision(None, f"the metadata table's timeline layout {table.timeline.layout.version} is "
                                      "read-only here")
            pending = [str(i) for i in table.timeline.instants if not i.is_completed]
            if pending:
                return Decision(None, f"the metadata table has pending instants {pending}")
            file_slice = table.files_slice()
            schema = table.record_schema(file_slice)
            return Decision(MetadataWriter(table, file_slice, schema), "")
        except HudiError as e:
            return Decision(None, str(e))

    # ---- the delta commit ---------------------------------------------------------------------------------------
    def _timeline(self) -> Timeline:
        """The metadata table's timeline, writing completion times in the data table's zone (Hudi's instant
        generator is the data table's: a metadata delta commit completes before its data commit does)."""
        timeline = self.table.timeline
        layout = timeline.layout
        if isinstance(layout, TimelineLayoutV2):
            layout = dataclasses.replace(layout, local_times=self.table.data_config.local_instant_times)
        return Timeline(timeline.location, list(timeline.instants), layout=layout)

    def _log_file_name(self, instant_time: str) -> LogFileName:
        fs = self.file_slice
        # Layout 1: a new version in the slice of the base file; layout 2: a file named by the delta commit.
        base_instant = instant_time if self.table.timeline.layout.version == 2 else fs.base_instant
        versions = [f.name.version for f in fs.log_files if f.name.base_instant == base_instant]
        return LogFileName(fs.file_id, base_instant, max(versions, default=0) + 1, WRITE_TOKEN)

    def write_delta_commit(self, instant_time: str, commit: CommitMetadata) -> Instant:
        """Record the data commit at `instant_time` (its metadata `commit`) as a completed delta commit of the
        metadata table; returns it. Refused, before writing anything, when the metadata table already has an
        instant at or after `instant_time`."""
        location = self.table.location
        timeline = self._timeline()
        latest = timeline.latest_time()
        if latest is not None and latest >= instant_time:
            raise MetadataTableError(f"{location.base_path}: instant {latest} is at or after the data commit "
                                     f"{instant_time}; a metadata delta commit must be the newest")
        records = records_for_commit(commit)
        cells = [(r.key, self.codec.encode(r)) for r in records]
        content = write_hfile(cells, file_info={SCHEMA_FILE_INFO: self.schema.encode("utf-8")},
                              name=f"metadata block of {instant_time}")
        block = LogBlock(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: self.schema},
                         content)
        data = encode_log_file([block])
        fs = self.file_slice
        log_name = self._log_file_name(instant_time)
        rel_path = f"{FILES_PARTITION}/{log_name.format()}"
        base_name = fs.base_file.path.rsplit("/", 1)[-1] if fs.base_file is not None else ""

        requested = timeline.create_requested(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
        workload = CommitMetadata(operation_type=OPERATION)
        workload.add_write_stat(FILES_PARTITION, WriteStat(file_id=fs.file_id, prev_commit=fs.base_instant,
                                                           num_update_writes=len(records)))
        inflight = timeline.transition_to_inflight(requested, timeline.commit_bytes(workload, requested))
        # Version 8+ marks a log file CREATE (Hudi 1.x's rollback refuses APPEND markers there), 6 APPEND.
        io_type = IOType.CREATE if self.table.timeline.layout.version == 2 else IOType.APPEND
        create_marker(location, instant_time, FILES_PARTITION, log_name.format(), io_type)
        path = Storage.join(location.base_path, rel_path)
        if not location.storage.create_exclusive(path, data):
            raise MetadataTableError(f"{path}: already exists; another writer wrote this metadata log file")
        stat = WriteStat(
            file_id=fs.file_id, path=rel_path, prev_commit=fs.base_instant, num_writes=len(records),
            num_update_writes=len(records), total_write_bytes=len(data), partition_path=FILES_PARTITION,
            file_size_in_bytes=len(data), log_version=log_name.version, log_offset=0, base_file=base_name,
            log_files=[f.name.format() for f in fs.sorted_log_files()] + [log_name.format()])
        schema = schema_to_json(remove_meta_fields(json.loads(self.schema)))
        meta = CommitMetadata({FILES_PARTITION: [stat]}, False, {CommitMetadata.SCHEMA_KEY: schema}, OPERATION)
        completed = timeline.complete(inflight, meta)
        delete_marker_dir(location, instant_time)
        return completed
