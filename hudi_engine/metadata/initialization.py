"""A data table's metadata table created by this engine, its `files` partition initialised from a listing, as Hudi's
`HoodieBackedTableMetadataWriter.initializeFromFilesystem` does when a writer asks for it
(`hoodie.metadata.enable`, true by default) and the table has none (FORMAT.md, Metadata table).

Under the table lock, before the data instant that asks for it starts:

    1. what a crash left of an earlier attempt (`.hoodie/metadata` while `hoodie.table.metadata.partitions` is empty)
       is deleted, as Hudi deletes a metadata table it re-initialises
    2. `.hoodie/metadata/.hoodie/hoodie.properties`: a MERGE_ON_READ table of HFILE base files named
       `<table>_metadata`, of the data table's version, with the properties Hudi gives it (`_PROPERTIES`)
    3. the init delta commit I: `<I>.deltacommit.requested`, `.inflight`; `files/.hoodie_partition_metadata`; the file
       group `files-0000-0` created as Hudi creates it (a log file `.files-0000-0_<I>.log.1_0-0-0` holding one empty
       delete block); a base file `files-0000-0_0-1-0_<I>.hfile` written as a bulk insert writes it (the records in
       key order, `compaction.write_base_file`); `<I>.deltacommit` (BULK_INSERT) with its write stat
    4. `hoodie.table.metadata.partitions=files` in the data table's `hoodie.properties`: from here on the metadata
       table exists for readers and writers (`writer.MetadataWriter` keeps it)

The records: the partition list naming every partition (a folder with partition metadata) and per partition the
files the listing holds: every base, log and CDC log file whose instant (in its name) is at or before the latest
completed data instant and not pending (Hudi's `DirectoryInfo`). The instant I (`HoodieTableMetadataUtil`):
* table version 6 (Hudi 0.15): the latest completed data instant (`00000000000000` on a table without one) + `010`
  (`createIndexInitTimestamp`, offset 0);
* versions 8 and 9 (Hudi 1.x): `00000000000000000` (`SOLO_COMMIT_TIMESTAMP` plus 0 ms).
The record schema is HoodieMetadataRecord as the Hudi release of the table's version writes it (`schemas/`: 0.15's
for version 6, 1.0's for 8, 1.2's for 9, as embedded in their metadata tables' files).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import pyarrow as pa

from hudi_engine.errors import MetadataTableError
from hudi_engine.file_naming import BaseFileName, LogFileName
from hudi_engine.fs_view import FileSystemView, Visibility, list_partitions
from hudi_engine.io.hfile import CELL_COLUMNS
from hudi_engine.io.log_block import build_delete_block
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import (
    COLUMN_STATS_PARTITION,
    PARTITION_STATS_PARTITION,
    ColumnStats,
    ColumnStatsRecord,
    file_group_indexes,
)
from hudi_engine.metadata.compaction import BASE_WRITE_TOKEN, write_base_file, write_base_file_cells
from hudi_engine.metadata.index_definitions import (
    DEFAULT_INDEX_DEFS_PATH,
    INDEX_DEFS_PATH,
    IS_PARTITIONED_OPTION,
    drop_definition,
    read_definitions,
    write_definitions,
)
from hudi_engine.metadata.record_index import (
    FILE_ID_PREFIX,
    RECORD_INDEX_PARTITION,
    IndexRecords,
    file_group_count,
    latest_slice_keys,
    partitioned_file_id,
)
from hudi_engine.metadata.record_index import (
    initial_records as initial_index_records,
)
from hudi_engine.metadata.records import (
    ALL_PARTITIONS_KEY,
    FILE_LIST,
    FILES_PARTITION,
    PARTITION_LIST,
    FileInfo,
    FilesRecord,
    MetadataRecord,
    RecordCodec,
    partition_key,
)
from hudi_engine.metadata.stats_index import (
    MAX_COLUMNS,
    StatsIndex,
    default_columns,
    partition_ranges,
    save_definition,
)
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location, writing_timeline
from hudi_engine.partition_metadata import PARTITION_METAFILE, format_partition_metadata
from hudi_engine.schema import remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.layout import layout_for
from hudi_engine.write.markers import IOType, create_marker, delete_marker_dir

INIT_SUFFIX = "010"  # table version 6: HoodieTableMetadataUtil's PARTITION_INITIALIZATION_TIME_SUFFIX, offset 0
INIT_OPERATION = "BULK_INSERT"
FILE_GROUP = "files-0000-0"  # the files partition's one file group (HoodieTableMetadataUtil.getFileIDForFileGroup)
CREATE_TOKEN = "0-0-0"  # the write token of the log file that creates the file group
_PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"
# hoodie.properties of a metadata table, beside name, type, version and base file format (Hudi's
# HoodieTableMetaClient for the metadata table, per release).
_PROPERTIES: dict[str, dict[str, str]] = {
    "v6": {"hoodie.compaction.payload.class": _PAYLOAD, "hoodie.archivelog.folder": "archived",
           "hoodie.timeline.layout.version": "1", "hoodie.datasource.write.drop.partition.columns": "false",
           "hoodie.table.recordkey.fields": "key", "hoodie.populate.meta.fields": "false",
           "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
           "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"},
    "v8+": {"hoodie.compaction.payload.class": _PAYLOAD, "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
            "hoodie.archivelog.folder": "history", "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.history.path": "history", "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
            "hoodie.table.recordkey.fields": "key", "hoodie.timeline.path": "timeline",
            "hoodie.populate.meta.fields": "false", "hoodie.record.merge.mode": "CUSTOM"},
}


def record_schema(version: int) -> str:
    """HoodieMetadataRecord's schema as the Hudi release of table version `version` writes it."""
    name = f"HoodieMetadataRecord.v{version}.avsc"
    try:
        return resources.files("hudi_engine.metadata").joinpath("schemas", name).read_text("utf-8").strip()
    except FileNotFoundError:
        raise MetadataTableError(f"no metadata record schema for table version {version}; this engine creates "
                                 "metadata tables of versions 6, 8 and 9") from None


def init_instant_time(data_config: TableConfig, data_timeline: Timeline) -> str:
    """The instant that initialises the `files` partition (module doc)."""
    if data_config.version >= 8:
        return SOLO_COMMIT_TIMESTAMP + "000"
    latest = data_timeline.filter(lambda i: i.is_completed).last()
    return (latest.timestamp if latest is not None else SOLO_COMMIT_TIMESTAMP) + INIT_SUFFIX


def files_listing(data: TableLocation, data_timeline: Timeline) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of the data table's files that count (module doc), every partition listed."""
    completed = [i.timestamp for i in data_timeline.instants if i.is_completed]
    latest = max(completed, default=None)
    pending = {i.timestamp for i in data_timeline.instants if not i.is_completed}
    listing: dict[str, dict[str, int]] = {p: {} for p in list_partitions(data)}
    for group in FileSystemView.load(data).file_groups():
        for s in group.slices.values():
            files: list[tuple[str, str, int]] = [(f.name.base_instant, f.path, f.size)
                                                 for f in s.log_files + s.cdc_log_files]
            if s.base_file is not None:
                files.append((s.base_file.name.instant_time, s.base_file.path, s.base_file.size))
            for instant, path, size in files:
                if latest is not None and instant <= latest and instant not in pending:
                    listing.setdefault(group.partition_path, {})[path.rsplit("/", 1)[-1]] = size
    return listing


def initial_records(listing: dict[str, dict[str, int]]) -> list[FilesRecord]:
    """The partition list and one file list per partition (`HoodieBackedTableMetadataWriter.initializeFilesPartition`)."""
    records = [FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, {partition_key(p): FileInfo(0) for p in listing})]
    records += [FilesRecord(partition_key(p), FILE_LIST, {n: FileInfo(size) for n, size in files.items()})
                for p, files in listing.items()]
    return records


def initialize(data: TableLocation, data_config: TableConfig, data_timeline: Timeline) -> TableConfig:
    """Create the metadata table of the table at `data` with its `files` partition (module doc); `data_config` and
    `data_timeline`: the table's, under the table lock. Answers the data table's config as saved."""
    version = data_config.version
    if version not in (6, 8, 9):
        raise MetadataTableError(f"table {data.base_path}: this engine creates metadata tables of table versions 6, "
                                 f"8 and 9, not {version}")
    schema = record_schema(version)
    storage = data.storage
    location = metadata_location(data)
    storage.delete_dir(location.base_path)  # an earlier attempt's leftovers (never listed in hoodie.properties)
    props = {"hoodie.table.name": f"{data_config.name}_metadata", "hoodie.table.type": "MERGE_ON_READ",
             "hoodie.table.version": str(version), "hoodie.table.base.file.format": "HFILE",
             **_PROPERTIES["v6" if version == 6 else "v8+"]}
    if version >= 8:
        props["hoodie.table.initial.version"] = str(version)
    config = TableConfig(props, location.meta("hoodie.properties"))
    config.initialize(location)
    timeline = writing_timeline(Timeline(location, [], layout=layout_for(config)), data_config)
    instant_time = init_instant_time(data_config, data_timeline)
    records = initial_records(files_listing(data, data_timeline))

    requested = timeline.create_requested(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
    workload = CommitMetadata(operation_type=INIT_OPERATION)
    inflight = timeline.transition_to_inflight(requested, timeline.commit_bytes(workload, requested))
    storage.write_bytes(location.join(f"{FILES_PARTITION}/{PARTITION_METAFILE}"),
                        format_partition_metadata(instant_time, 1))
    created = LogFileName(FILE_GROUP, instant_time, 1, CREATE_TOKEN)
    empty = build_delete_block([], instant_time, schema)
    storage.write_bytes(location.join(f"{FILES_PARTITION}/{created.format()}"), encode_log_file([empty]))
    name = BaseFileName(FILE_GROUP, BASE_WRITE_TOKEN, instant_time, ".hfile").format()
    content = write_base_file(records, RecordCodec(schema, name), schema, f"{location.base_path}: {name}")
    create_marker(location, instant_time, FILES_PARTITION, name, IOType.CREATE)
    rel_path = f"{FILES_PARTITION}/{name}"
    if not storage.create_exclusive(Storage.join(location.base_path, rel_path), content):
        raise MetadataTableError(f"{location.join(rel_path)}: already exists; another writer is creating this "
                                 "metadata table")
    stat = WriteStat(file_id=FILE_GROUP, path=rel_path, prev_commit=NULL_COMMIT, num_writes=len(records),
                     num_inserts=len(records), total_write_bytes=len(content), partition_path=FILES_PARTITION,
                     file_size_in_bytes=len(content))
    meta = CommitMetadata({FILES_PARTITION: [stat]}, False,
                          {CommitMetadata.SCHEMA_KEY: schema_to_json(remove_meta_fields(json.loads(schema)))},
                          INIT_OPERATION)
    timeline.complete(inflight, meta)
    delete_marker_dir(location, instant_time)
    saved = data_config.with_props({"hoodie.table.metadata.partitions": FILES_PARTITION,
                                    "hoodie.table.metadata.partitions.inflight": None})
    saved.save(data)
    return saved


# ---- column and partition stats added to a metadata table (Hudi 1.x) ----------------------------------------------
COLUMN_STATS_FILE_GROUPS = 2  # hoodie.metadata.index.column.stats.file.group.count's default
PARTITION_STATS_FILE_GROUPS = 1  # hoodie.metadata.index.partition.stats.file.group.count's default
_FILE_ID_PREFIX = {COLUMN_STATS_PARTITION: "col-stats", PARTITION_STATS_PARTITION: "partition-stats",
                   RECORD_INDEX_PARTITION: FILE_ID_PREFIX}


def stats_init_instants(timeline: Timeline, count: int) -> list[str]:
    """`count` initialization instants for new metadata partitions: the lowest `00000000000000` + 3 digits the
    metadata table's timeline does not hold (Hudi's `generateUniqueInstantTime` from SOLO_COMMIT_TIMESTAMP)."""
    taken = {i.timestamp for i in timeline.instants}
    out: list[str] = []
    for n in range(1000):
        t = f"{SOLO_COMMIT_TIMESTAMP}{n:03d}"
        if t not in taken:
            out.append(t)
            if len(out) == count:
                return out
    raise MetadataTableError(f"{timeline.location.base_path}: no initialization instant left")


def initialize_stats(data: TableLocation, data_config: TableConfig, data_timeline: Timeline, *,
                     writer_schema: Mapping[str, Any] | None = None, column_list: Sequence[str] = (),
                     max_columns: int = MAX_COLUMNS) -> TableConfig:
    """Add `column_stats` (and, on a partitioned table, `partition_stats`) to the table's metadata table, built from
    the latest file slices as Hudi's `initializeFromFilesystem` builds them: per partition a delta commit at a new
    initialization instant creating its file groups (a log file with an empty delete block each) and writing their
    HFile base files (BULK_INSERT); the column_stats index definition (`index.json`, the index version of the
    table's version); last, the partitions in `hoodie.table.metadata.partitions`. Leftovers of an interrupted attempt
    (folders of unlisted partitions, pending initialization instants) are removed first. The columns: the meta
    columns, then `column_list` or the first `max_columns` of a supported type, of `writer_schema` (the write's, as
    Java takes the commit's) or else the table's. Refused on version 6."""
    if data_config.version < 8:
        raise MetadataTableError(f"table {data.base_path}: column stats are built on tables of versions 8 and 9 "
                                 f"(Hudi 1.x), not {data_config.version}")
    location = metadata_location(data)
    storage = data.storage
    timeline = writing_timeline(Timeline.load(location), data_config)
    wanted = [COLUMN_STATS_PARTITION] + ([PARTITION_STATS_PARTITION] if data_config.is_partitioned else [])
    wanted = [p for p in wanted if p not in data_config.metadata_partitions]
    if not wanted:
        return data_config
    for pending in timeline.instants:
        if not pending.is_completed and pending.timestamp.startswith(SOLO_COMMIT_TIMESTAMP):
            timeline.delete_instant_files(pending)  # an interrupted initialization of ours
    for partition in wanted:
        storage.delete_dir(location.join(partition))
    timeline = writing_timeline(Timeline.load(location), data_config)
    schema = record_schema(data_config.version)
    avro = dict(writer_schema or data_timeline.latest_schema() or data_config.create_schema or {})
    if not avro:
        raise MetadataTableError(f"table {data.base_path}: no schema to tell the columns to index")
    version = 1 if data_config.version < 9 else 2
    index = StatsIndex(default_columns(remove_meta_fields(avro), version, data_config.populate_meta_fields,
                                       column_list=column_list, max_columns=max_columns),
                       version, PARTITION_STATS_PARTITION in wanted or PARTITION_STATS_PARTITION in
                       data_config.metadata_partitions, None)
    ranges = _latest_ranges(data, data_timeline, index)
    records: dict[str, list[ColumnStatsRecord]] = {COLUMN_STATS_PARTITION: [
        ColumnStatsRecord.of(p, r) for p, file_ranges in ranges.items() for r in file_ranges]}
    if PARTITION_STATS_PARTITION in wanted:
        records[PARTITION_STATS_PARTITION] = [
            r for p, file_ranges in ranges.items()
            for r in partition_ranges(index, p, sorted({r.file_name for r in file_ranges}),
                                      {(r.file_name, r.column_name): r for r in file_ranges})]
    counts = {COLUMN_STATS_PARTITION: COLUMN_STATS_FILE_GROUPS, PARTITION_STATS_PARTITION: PARTITION_STATS_FILE_GROUPS}
    for partition, instant_time in zip(wanted, stats_init_instants(timeline, len(wanted)), strict=True):
        _init_partition(location, timeline, schema, partition, instant_time, counts[partition], records[partition])
    save_definition(data, data_config, index, create=True)
    saved = data_config.with_props({"hoodie.table.metadata.partitions": ",".join(
        sorted(set(data_config.metadata_partitions) | set(wanted))),
        "hoodie.table.metadata.partitions.inflight": None, INDEX_DEFS_PATH: data_config.get(INDEX_DEFS_PATH)
        or DEFAULT_INDEX_DEFS_PATH})
    saved.save(data)
    return saved


def _latest_ranges(data: TableLocation, data_timeline: Timeline, index: StatsIndex) -> dict[str, list[ColumnStats]]:
    """Partition -> the ranges of every base and log file of its latest slices."""
    vis = Visibility.of(data_timeline)
    view = FileSystemView.load(data, slicing=vis.slicing)
    out: dict[str, list[ColumnStats]] = {}
    for partition in view.partition_paths:
        for s in view.latest_file_slices(vis, partition):
            files = [f.path for f in s.log_files if vis.is_committed(f.name.base_instant)]  # named by delta commit
            if s.base_file is not None and vis.is_committed(s.base_file.name.instant_time):
                files.append(s.base_file.path)
            for path in files:
                out.setdefault(partition, []).extend(index.ranges_of(data, partition, path.rsplit("/", 1)[-1]))
    return out


def _init_partition(location: TableLocation, timeline: Timeline, schema: str, partition: str, instant_time: str,
                    groups: int, records: Sequence[MetadataRecord] | IndexRecords) -> None:
    by_group: dict[int, Sequence[MetadataRecord] | IndexRecords]
    if isinstance(records, IndexRecords):  # split as columns
        at = records.file_groups(groups)
        by_group = {i: records.filter(at == i) for i in range(groups)}
    else:
        by_group = {i: [] for i in range(groups)}
        for r, i in zip(records, file_group_indexes([r.key for r in records], groups).tolist(), strict=True):
            by_group[i].append(r)  # type: ignore[union-attr]
    _init_file_groups(location, timeline, schema, partition, instant_time,
                      [(f"{_FILE_ID_PREFIX[partition]}-{i:04d}-0", group) for i, group in by_group.items()])


def _init_file_groups(location: TableLocation, timeline: Timeline, schema: str, partition: str, instant_time: str,
                      groups: Sequence[tuple[str, Sequence[MetadataRecord] | IndexRecords]]) -> None:
    """A delta commit at `instant_time` creating metadata partition `partition`'s file groups (file id, records): a
    log file with an empty delete block and an HFile base file each."""
    storage = location.storage
    requested = timeline.create_requested(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
    inflight = timeline.transition_to_inflight(requested, timeline.commit_bytes(
        CommitMetadata(operation_type=INIT_OPERATION), requested))
    storage.write_bytes(location.join(f"{partition}/{PARTITION_METAFILE}"), format_partition_metadata(instant_time, 1))
    stats = []
    codec = RecordCodec(schema, f"{location.base_path} ({partition})")
    for file_id, group in groups:
        created = LogFileName(file_id, instant_time, 1, CREATE_TOKEN)
        storage.write_bytes(location.join(f"{partition}/{created.format()}"),
                            encode_log_file([build_delete_block([], instant_time, schema)]))
        name = BaseFileName(file_id, BASE_WRITE_TOKEN, instant_time, ".hfile").format()
        where = f"{location.base_path}: {name}"
        content = write_index_base_file(group, codec, schema, where) if isinstance(group, IndexRecords) else \
            write_base_file(group, codec, schema, where)
        create_marker(location, instant_time, partition, name, IOType.CREATE)
        rel_path = f"{partition}/{name}"
        if not storage.create_exclusive(Storage.join(location.base_path, rel_path), content):
            raise MetadataTableError(f"{location.join(rel_path)}: already exists; another writer is building it")
        stats.append(WriteStat(file_id=file_id, path=rel_path, prev_commit=NULL_COMMIT, num_writes=len(group),
                               num_inserts=len(group), total_write_bytes=len(content), partition_path=partition,
                               file_size_in_bytes=len(content)))
    meta = CommitMetadata({partition: stats}, False,
                          {CommitMetadata.SCHEMA_KEY: schema_to_json(remove_meta_fields(json.loads(schema)))},
                          INIT_OPERATION)
    timeline.complete(inflight, meta)
    delete_marker_dir(location, instant_time)


def write_index_base_file(records: IndexRecords, codec: RecordCodec, schema: str, name: str) -> bytes:
    """`compaction.write_base_file` of record_index records given as columns (already in key order), each
    location's value encoded once: the same bytes, written by the columnar HFile writer."""
    kept = records.filter(~records.deleted)
    cells = pa.table({CELL_COLUMNS[0]: kept.keys.cast(pa.binary()), CELL_COLUMNS[1]: kept.values(codec.encode)})
    return write_base_file_cells(cells, schema, name)


def drop_stats(data: TableLocation, data_config: TableConfig) -> TableConfig:
    """Drop `column_stats` and `partition_stats` from the table's metadata table, as Hudi 1.2 drops an index a
    writer turns off (`deleteMetadataIndexIfNecessary`): out of `hoodie.table.metadata.partitions` first (readers
    stop using them), then their folders, then the column_stats index definition."""
    gone = (COLUMN_STATS_PARTITION, PARTITION_STATS_PARTITION)
    kept = [p for p in data_config.metadata_partitions if p not in gone]
    saved = data_config.with_props({"hoodie.table.metadata.partitions": ",".join(kept)})
    saved.save(data)
    location = metadata_location(data)
    for partition in gone:
        data.storage.delete_dir(location.join(partition))
    drop_definition(data, saved, COLUMN_STATS_PARTITION)
    return saved


# ---- the record index added to a metadata table ------------------------------------------------------------------
def _partition_init_instant(data_config: TableConfig, data_timeline: Timeline, timeline: Timeline) -> str:
    """The instant that initialises a new metadata partition: on version 6 (Hudi 0.15) the latest completed data
    instant (`00000000000000` without one) + the first free suffix from `010` (`createIndexInitTimestamp`); on 8 and
    9 `stats_init_instants`."""
    if data_config.version >= 8:
        return stats_init_instants(timeline, 1)[0]
    latest = data_timeline.filter(lambda i: i.is_completed).last()
    base = latest.timestamp if latest is not None else SOLO_COMMIT_TIMESTAMP
    taken = {i.timestamp for i in timeline.instants}
    for n in range(int(INIT_SUFFIX), 1000):
        if f"{base}{n:03d}" not in taken:
            return f"{base}{n:03d}"
    raise MetadataTableError(f"{timeline.location.base_path}: no initialization instant left")


def initialize_record_index(data: TableLocation, data_config: TableConfig, data_timeline: Timeline, *,
                            min_file_groups: int, max_file_groups: int, max_file_group_size: int,
                            growth_factor: float, partitioned: bool = False) -> TableConfig:
    """Add the global `record_index` to the table's metadata table, built from the latest file slices' keys as Hudi's
    `initializeRecordIndexPartition` builds it: a delta commit at a new initialization instant creating its file
    groups (as many as `file_group_count` sizes for the keys; a log file with an empty delete block each) and writing
    their HFile base files (BULK_INSERT); on versions 8 and 9 its index definition (`index.json`, not partitioned);
    last, the partition in `hoodie.table.metadata.partitions`. Leftovers of an interrupted attempt are removed first.
    Refused, before anything is written, on a table without meta fields or whose keys are not unique.

    `partitioned`: Hudi 1.1's partitioned record index instead (`initializeFilegroupsAndCommitToPartitioned
    RecordIndexPartition`, versions 8 and 9): per data partition its own file groups (`partitioned_file_id`, sized by
    that partition's keys within the min and max), keys unique within a partition, `isPartitioned=true`."""
    if partitioned and data_config.version < 8:
        raise MetadataTableError(f"table {data.base_path}: the partitioned record index is Hudi 1.1's, kept on tables "
                                 f"of versions 8 and 9, not {data_config.version}")
    if not data_config.populate_meta_fields:
        raise MetadataTableError(f"table {data.base_path}: a record index needs the meta fields "
                                 "(hoodie.populate.meta.fields=true); this engine reads keys from _hoodie_record_key")
    if RECORD_INDEX_PARTITION in data_config.metadata_partitions:
        return data_config
    location = metadata_location(data)

    def sized(records: IndexRecords) -> int:
        return file_group_count(len(records), min_count=min_file_groups, max_count=max_file_groups,
                                max_file_group_size=max_file_group_size, growth_factor=growth_factor)

    slices = list(latest_slice_keys(data, data_timeline))
    groups: list[tuple[str, IndexRecords]] = []
    if partitioned:  # one index per data partition, each sized for its own keys
        for partition in sorted({s[0] for s in slices}):
            records = initial_index_records([s for s in slices if s[0] == partition], data_config.local_instant_times)
            count = sized(records)
            at = records.file_groups(count)
            groups += [(partitioned_file_id(partition, i), records.filter(at == i)) for i in range(count)]
    else:
        records = initial_index_records(slices, data_config.local_instant_times)
        count = sized(records)
        at = records.file_groups(count)
        groups = [(f"{FILE_ID_PREFIX}-{i:04d}-0", records.filter(at == i)) for i in range(count)]
    timeline = writing_timeline(Timeline.load(location), data_config)
    for pending in timeline.instants:  # an interrupted initialization of ours
        if not pending.is_completed and pending.action is Action.DELTA_COMMIT and _is_init_instant(pending.timestamp):
            timeline.delete_instant_files(pending)
    data.storage.delete_dir(location.join(RECORD_INDEX_PARTITION))
    timeline = writing_timeline(Timeline.load(location), data_config)
    instant_time = _partition_init_instant(data_config, data_timeline, timeline)
    _init_file_groups(location, timeline, record_schema(data_config.version), RECORD_INDEX_PARTITION, instant_time,
                      groups)
    props: dict[str, str | None] = {"hoodie.table.metadata.partitions": ",".join(
        sorted({*data_config.metadata_partitions, RECORD_INDEX_PARTITION})),
        "hoodie.table.metadata.partitions.inflight": None}
    if data_config.version >= 8:
        found = read_definitions(data, data_config, create=True)
        if found is not None:
            path, raw = found
            raw.setdefault("indexDefinitions", {})[RECORD_INDEX_PARTITION] = {
                "indexName": RECORD_INDEX_PARTITION, "indexType": RECORD_INDEX_PARTITION, "indexFunction": "",
                "sourceFields": [], "indexOptions": {IS_PARTITIONED_OPTION: str(partitioned).lower()},
                "version": "V1"}
            write_definitions(data, path, raw)
        props[INDEX_DEFS_PATH] = data_config.get(INDEX_DEFS_PATH) or DEFAULT_INDEX_DEFS_PATH
    saved = data_config.with_props(props)
    saved.save(data)
    return saved


def _is_init_instant(timestamp: str) -> bool:
    """A partition initialization's instant: `00000000000000` + 3 digits, or (version 6) a time + a suffix >= 010."""
    return timestamp.startswith(SOLO_COMMIT_TIMESTAMP) or (len(timestamp) == 20 and timestamp[-3:] >= INIT_SUFFIX)


def drop_record_index(data: TableLocation, data_config: TableConfig) -> TableConfig:
    """Drop `record_index` from the table's metadata table, as Hudi drops an index a writer turns off: out of
    `hoodie.table.metadata.partitions` first (readers and writers stop using it), then its folder and definition."""
    kept = [p for p in data_config.metadata_partitions if p != RECORD_INDEX_PARTITION]
    saved = data_config.with_props({"hoodie.table.metadata.partitions": ",".join(kept)})
    saved.save(data)
    data.storage.delete_dir(metadata_location(data).join(RECORD_INDEX_PARTITION))
    drop_definition(data, saved, RECORD_INDEX_PARTITION)
    return saved
