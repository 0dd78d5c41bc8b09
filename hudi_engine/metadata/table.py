"""A data table's metadata table (`.hoodie/metadata`), read the way Hudi's `HoodieBackedTableMetadata` reads its
`files` partition (FORMAT.md, Metadata table).

The metadata table is a merge-on-read table of its own: its `hoodie.properties` (HFILE base files, table version as
the data table's), its timeline (delta commits at the data table's instants, plus its own initialization and
compaction instants), and one folder per partition. The `files` partition has one file group, `files-0000-0`: an
HFile base file and log files whose blocks are HFile data blocks (and the empty delete block Hudi writes when it
creates the group).

A log block counts when its instant is completed on the metadata table's timeline *and* valid for the data table
(`HoodieTableMetadataUtil.getValidInstantTimestamps`): the metadata table commits before the data table does, so a
block of a data commit that never completed is ignored. Valid are the data table's completed instants, the
instants its completed rollbacks and restores rolled back, the metadata table's own completed rollbacks and
restores, its delta commits whose time starts with 14 zeros (the initialization), and
* table version 6 (Hudi 0.14/0.15): its delta commits named with a 3-digit operation suffix (compaction 001 ..
  rollback 006, index initialization 010 and above);
* table versions 8 and 9 (Hudi 1.x): every completed delta commit whose time is not a pending data instant.
Blocks are then merged in log order onto the base file's records (`records.FilesRecord.combine`), rollback command
blocks drop their target's blocks, and a delete block removes its keys.
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import HudiError, MetadataTableError
from hudi_engine.file_group import FileSlice
from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.io.hfile import CELL_COLUMNS, HFileReader
from hudi_engine.io.log_block import BlockType, LogBlock, delete_block_keys
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import (
    BLOOM_FILTERS_PARTITION,
    COLUMN_STATS_PARTITION,
    PARTITION_STATS_PARTITION,
    PARTITION_STATS_TYPE,
    BloomFilterRecord,
    ColumnStats,
    ColumnStatsRecord,
    column_key_prefix,
)
from hudi_engine.metadata.record_index import (
    LOCATION_COLUMNS,
    RECORD_INDEX_PARTITION,
    RecordIndexRecord,
    cell_locations,
    data_partition_of,
    key_file_groups,
    no_locations,
)
from hudi_engine.metadata.records import (
    ALL_PARTITIONS_KEY,
    FILES_PARTITION,
    FilesRecord,
    MetadataRecord,
    RecordCodec,
    merge_records,
    partition_key,
    partition_of_key,
)
from hudi_engine.table_config import PROPERTIES_FILE, TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant
from hudi_engine.timeline.layout import TimelineLayoutV2, layout_for

METADATA_FOLDER = "metadata"  # .hoodie/metadata
SOLO_COMMIT_TIMESTAMP = "00000000000000"  # HoodieTimeline.INIT_INSTANT_TS's prefix: metadata-table initializations
SCHEMA_FILE_INFO = "schema"  # the writer schema in an HFile's file info (base files and data blocks)
# Hudi 0.x's metadata-table operation suffixes (HoodieTableMetadataUtil.OperationSuffix): 001 compaction, 002 clean,
# 003 restore, 004 indexer, 005 log compaction, 006 rollback; 010 and above: partition initializations.
_V6_SUFFIXES = frozenset(f"{n:03d}" for n in range(1, 7))
_INIT_SUFFIX = "010"
_MILLIS_INSTANT_LENGTH = 17


def metadata_location(data: TableLocation) -> TableLocation:
    """Where the metadata table of the table at `data` is."""
    return TableLocation.at(data.storage, data.meta(METADATA_FOLDER))


def writing_timeline(timeline: Timeline, data_config: TableConfig) -> Timeline:
    """A metadata table's `timeline`, writing completion times in the data table's zone (Hudi's instant generator is
    the data table's: a metadata delta commit completes before its data commit does)."""
    layout = timeline.layout
    if isinstance(layout, TimelineLayoutV2):
        layout = dataclasses.replace(layout, local_times=data_config.local_instant_times)
    return Timeline(timeline.location, list(timeline.instants), layout=layout)


@dataclass(frozen=True)
class FilesPartition:
    """The merged `files` partition: every record by key."""

    records: dict[str, FilesRecord]

    @property
    def partitions(self) -> list[str]:
        """Data-table partition paths the partition list holds alive, sorted."""
        listed = self.records.get(ALL_PARTITIONS_KEY)
        return sorted(partition_of_key(k) for k in (listed.live if listed else {}))

    def files(self, partition_path: str) -> dict[str, int]:
        """File name -> size of the files a data-table partition holds."""
        record = self.records.get(partition_key(partition_path))
        return record.live if record else {}

    def listing(self) -> dict[str, dict[str, int]]:
        """Partition path -> file name -> size, for every partition of the partition list."""
        return {p: self.files(p) for p in self.partitions}


class MetadataTable:
    """The metadata table of one data table, as listed once: its config, timeline and `files` file group."""

    def __init__(self, data: TableLocation, data_config: TableConfig, data_timeline: Timeline,
                 location: TableLocation, config: TableConfig, timeline: Timeline) -> None:
        self.data = data
        self.data_config = data_config
        self.data_timeline = data_timeline
        self.location = location
        self.config = config
        self.timeline = timeline
        self._index_groups: dict[str, list[FileSlice]] | None = None  # a partitioned record index's, by data partition

    @staticmethod
    def load(data: TableLocation, data_config: TableConfig, data_timeline: Timeline) -> MetadataTable:
        """The metadata table of the data table at `data` (`data_config` and `data_timeline`: the caller's). Refused
        naming the path when the data table lists no `files` partition or the folder holds no metadata table."""
        location = metadata_location(data)
        if not data_config.is_metadata_table_enabled:
            raise MetadataTableError(f"table {data.base_path}: hoodie.table.metadata.partitions does not list "
                                     f"'{FILES_PARTITION}'; Hudi lists its files from storage")
        if not data.storage.exists(location.meta(PROPERTIES_FILE)):
            raise MetadataTableError(
                f"table {data.base_path}: hoodie.properties lists metadata partitions "
                f"{data_config.metadata_partitions} but {location.meta(PROPERTIES_FILE)} is missing; let Java Hudi "
                "rebuild the metadata table (a write with hoodie.metadata.enable=true) or disable it")
        try:
            config = TableConfig.load(location)
            timeline = Timeline.load(location, layout_for(config))  # the layout its config, just read, declares
        except HudiError as e:
            raise MetadataTableError(f"metadata table of {data.base_path}: {e}") from e
        if config.base_file_format != "HFILE" or config.table_type != "MERGE_ON_READ":
            raise MetadataTableError(
                f"{location.base_path}: a metadata table is a MERGE_ON_READ table of HFILE base files, not "
                f"{config.table_type} of {config.base_file_format}")
        return MetadataTable(data, data_config, data_timeline, location, config, timeline)

    def in_sync(self) -> bool:
        """The metadata table holds the data table's latest completed action (a commit, delta commit, replace
        commit, clean, rollback or restore of the data table records itself there before it completes): a reader
        may list files from it. False when a writer that does not keep it wrote after it (or a rollback recorded
        nothing): read storage instead."""
        recorded = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.CLEAN, Action.ROLLBACK,
                    Action.RESTORE)
        done = [i for i in self.data_timeline.instants if i.is_completed and i.action in recorded]
        if not done:
            return True
        latest = max(done, key=lambda i: i.timestamp)
        if latest.action is Action.RESTORE:  # recorded by a delta commit after it (`MetadataWriter.record_restore`)
            return any(i.is_completed and i.action is Action.DELTA_COMMIT and i.timestamp[:_MILLIS_INSTANT_LENGTH]
                       >= latest.timestamp for i in self.timeline.instants)
        return any(i.is_completed for i in self.timeline.instants_at(latest.timestamp))

    # ---- which instants count ----------------------------------------------------------------------------------
    def valid_instants(self) -> frozenset[str]:
        """Instants whose log blocks a reader merges (`getValidInstantTimestamps`, module doc)."""
        data = self.data_timeline
        valid = {i.timestamp for i in data.instants if i.is_completed}
        pending = {i.timestamp for i in data.instants if not i.is_completed}
        version = self.data_config.version
        for i in self.timeline.instants:
            if not i.is_completed or i.action is not Action.DELTA_COMMIT:
                continue
            ts = i.timestamp
            if version >= 8:
                if ts not in pending:
                    valid.add(ts)
            elif len(ts) == _MILLIS_INSTANT_LENGTH + 3 and (ts[-3:] in _V6_SUFFIXES or ts[-3:] >= _INIT_SUFFIX):
                valid.add(ts)
        earliest = min(valid) if valid else SOLO_COMMIT_TIMESTAMP
        for i in data.instants:
            if i.is_completed and i.action in (Action.ROLLBACK, Action.RESTORE) and i.timestamp > earliest:
                valid.update(_rolled_back(data, i))
        valid.update(i.timestamp for i in self.timeline.instants
                     if i.is_completed and i.action in (Action.ROLLBACK, Action.RESTORE))
        valid.update(i.timestamp for i in self.timeline.instants if i.is_completed
                     and i.action is Action.DELTA_COMMIT and i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP))
        return frozenset(valid)

    # ---- the files partition -----------------------------------------------------------------------------------
    def files_slice(self) -> FileSlice:
        """The latest slice of the `files` partition's one file group."""
        view = FileSystemView.load(self.location, FILES_PARTITION.__eq__, slicing_for(self.timeline))
        slices = view.latest_file_slices(Visibility.of(self.timeline), FILES_PARTITION)
        if len(slices) != 1:
            found = ", ".join(sorted(s.file_id for s in slices)) or "none"
            raise MetadataTableError(
                f"{self.location.join(FILES_PARTITION)}: the files partition has {len(slices)} file groups "
                f"({found}); Hudi writes exactly one. Let Java Hudi rebuild the metadata table, or disable it")
        return slices[0]

    def record_schema(self, file_slice: FileSlice | None = None) -> str:
        """The HoodieMetadataRecord schema the metadata table's base file was written with (its `schema` file info):
        the schema of the Hudi release that made the table, which this engine's blocks use too."""
        file_slice = file_slice or self.files_slice()
        if file_slice.base_file is None:
            raise MetadataTableError(f"{self.location.join(FILES_PARTITION)}: the files file group "
                                     f"{file_slice.file_id} has no base file; Hudi writes one when it creates it")
        path = file_slice.base_file.path
        with self.location.storage.open_input_file(path) as f, HFileReader(f, name=path) as reader:
            schema = reader.file_info.get(SCHEMA_FILE_INFO)
        if not schema:
            raise MetadataTableError(f"{path}: no '{SCHEMA_FILE_INFO}' in its file info; not a metadata-table HFile")
        return schema.decode("utf-8")

    def read_files_partition(self) -> FilesPartition:
        """The `files` partition merged: the base file's records, then the valid log blocks' in log order."""
        return FilesPartition(self.read_slice(self.files_slice()))  # type: ignore[arg-type]

    # ---- any partition -------------------------------------------------------------------------------------------
    def partition_slices(self, partition: str) -> list[FileSlice]:
        """The latest slices of the file groups of metadata partition `partition`, in file-id order (the order Hudi
        numbers them in when it maps keys to file groups)."""
        view = FileSystemView.load(self.location, partition.__eq__, slicing_for(self.timeline))
        return sorted(view.latest_file_slices(Visibility.of(self.timeline), partition), key=lambda s: s.file_id)

    def read_slice(self, file_slice: FileSlice, prefixes: tuple[str, ...] | None = None,
                   keys: Collection[str] | None = None) -> dict[str, MetadataRecord]:
        """One file group's records merged as Hudi's reader merges them: the valid log blocks' records merged in log
        order (a delete block removing its keys), then merged onto the base file's records. Tombstones stay (the
        caller drops them). With `prefixes`, only keys that start with one of them; with `keys`, only those keys
        (looked up in the base file's block index, not scanned)."""
        partition = file_slice.partition_path
        exact = None if keys is None else {k.encode("utf-8") for k in keys}
        base: dict[str, MetadataRecord] = {}
        if file_slice.base_file is not None:
            path = file_slice.base_file.path
            with self.location.storage.open_input_file(path) as f, HFileReader(f, name=path) as reader:
                codec = _base_file_codec(reader, path)
                for k, v in _wanted_cells(reader, exact, prefixes):
                    record = _decode(partition, codec, k, v, path)
                    base[record.key] = record
        logged: dict[str, MetadataRecord] = {}
        deleted: set[str] = set()
        for block in self._valid_blocks(file_slice):
            if block.block_type == BlockType.DELETE:
                for key in delete_block_keys(block).column("record_key").to_pylist():
                    logged.pop(key, None)
                    deleted.add(key)
                continue
            for record in _block_records(partition, block, exact, prefixes):
                prev = logged.get(record.key)
                logged[record.key] = record if prev is None else prev.combine(record)
        return merge_records((r for k, r in base.items() if k not in deleted), logged.values())

    def read_slice_cells(self, file_slice: FileSlice, schema: str) -> pa.Table | None:
        """One file group's cells merged as `read_slice` merges a partition whose newer record of a key replaces the
        older (record_index; not `files`, whose records merge): the base file's cells, then the valid log blocks'
        in log order, newest wins, a delete block removing its keys (a key written again in a later block is back).
        A table of binary `key` and `value` (`hfile.CELL_COLUMNS`) in key order, built with arrow (concatenated with
        a sequence number, sorted by key then sequence, the last of each key kept). None when the base file or a
        data block was written with a schema other than `schema`: their values are not `schema`'s bytes."""
        key_col, value_col = CELL_COLUMNS
        base: pa.Table | None = None
        logged: list[pa.Table] = []

        def part(cells: pa.Table, deleted: bool) -> pa.Table:
            n = cells.num_rows
            return cells.append_column("seq", pa.array(np.full(n, len(logged), dtype=np.int32))) \
                .append_column("deleted", pa.array(np.full(n, deleted)))

        if file_slice.base_file is not None:
            path = file_slice.base_file.path
            with self.location.storage.open_input_file(path) as f, HFileReader(f, name=path) as reader:
                if reader.file_info.get(SCHEMA_FILE_INFO) != schema.encode("utf-8"):
                    return None
                base = reader.read_table()
        for block in self._valid_blocks(file_slice):
            if block.block_type == BlockType.DELETE:
                keys = delete_block_keys(block).column("record_key").drop_null().cast(pa.binary())
                logged.append(part(pa.table({key_col: keys, value_col: pa.nulls(len(keys), pa.binary())}), True))
                continue
            if block.schema_json != schema:
                return None
            where = f"{block.source}: HFILE_DATA block at offset {block.offset}"
            with HFileReader(block.content, name=where) as reader:
                logged.append(part(reader.read_table(), False))
        return newest_cells(base, logged)

    def read_keys(self, partition: str, keys: Collection[str]) -> dict[str, MetadataRecord]:
        """The records of `keys` in metadata partition `partition`, merged, tombstones dropped: only the file groups
        the keys map to are read, their base files by lookup. (The record index's: `record_locations`, as columns.)"""
        slices = self.partition_slices(partition)
        if not slices or not keys:
            return {}
        wanted = pa.array(list(keys), pa.string())
        groups = key_file_groups(wanted, len(slices))
        out: dict[str, MetadataRecord] = {}
        for index in np.unique(groups).tolist():
            mine = wanted.filter(pa.array(groups == index)).to_pylist()
            out.update({k: r for k, r in self.read_slice(slices[index], keys=mine).items() if not r.is_deleted})
        return out

    # ---- the record_index partition ---------------------------------------------------------------------------
    def record_locations(self, keys: pa.Array | pa.ChunkedArray, data_partition: str | None = None) -> pa.Table:
        """Where the record index places `keys`: one row of `record_index.LOCATION_COLUMNS` per key it holds (nulls
        and deleted keys dropped). Global, or with `data_partition` the partitioned index's file groups of that data
        partition (`lookupRecordsInDataTablePartition`; none when it has no group yet). Only the file groups the
        keys hash to are read, their base files by lookup, as arrow columns (`slice_locations`)."""
        if data_partition is None:
            slices = self.partition_slices(RECORD_INDEX_PARTITION)
        else:
            if self._index_groups is None:  # listed once per load: tagging asks once per data partition
                self._index_groups = {}
                for fs in self.partition_slices(RECORD_INDEX_PARTITION):
                    served = data_partition_of(fs.file_id)
                    if served is not None:
                        self._index_groups.setdefault(served, []).append(fs)
            slices = self._index_groups.get(data_partition, [])
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        wanted = pc.unique(pc.drop_null(keys.cast(pa.string())))
        if not slices or not len(wanted):
            return no_locations()
        groups = key_file_groups(wanted, len(slices))
        return pa.concat_tables([self.slice_locations(slices[i], wanted.filter(pa.array(groups == i)))
                                 for i in np.unique(groups).tolist()])

    def slice_locations(self, file_slice: FileSlice, keys: pa.StringArray) -> pa.Table:
        """`record_locations` in one file group of the record index, merged as `read_slice` merges it: the base
        file's cells of `keys` (looked up), then the valid log blocks' in log order, the newest of a key winning and
        a delete block removing its keys (a key written again later is back)."""
        wanted = keys.cast(pa.binary())
        parts: list[pa.Table] = []

        def add(located: pa.Table, deleted: bool) -> None:
            n = located.num_rows
            parts.append(located.append_column("seq", pa.array(np.full(n, len(parts), np.int32)))
                         .append_column("deleted", pa.array(np.full(n, deleted))))

        if file_slice.base_file is not None:
            path = file_slice.base_file.path
            with self.location.storage.open_input_file(path) as f, HFileReader(f, name=path) as reader:
                codec = _base_file_codec(reader, path)
                add(cell_locations(reader.lookup(wanted), functools.partial(codec.decode_datum, where=path), path),
                    False)
        for block in self._valid_blocks(file_slice):
            where = f"{block.source}: HFILE_DATA block at offset {block.offset}"
            if block.block_type == BlockType.DELETE:
                gone = pc.unique(delete_block_keys(block).column("record_key").drop_null().cast(pa.string()))
                gone = gone.filter(pc.is_in(gone, value_set=keys))
                add(pa.table([gone, pa.nulls(len(gone), pa.string()), pa.nulls(len(gone), pa.string())],
                             names=LOCATION_COLUMNS), True)
                continue
            codec = _block_codec(block, where)
            with HFileReader(block.content, name=where) as reader:
                add(cell_locations(reader.lookup(wanted), functools.partial(codec.decode_datum, where=where), where),
                    False)
        if not parts:
            return no_locations()
        merged = _newest_of_each_key(pa.concat_tables(parts), "key")
        return merged.filter(pc.invert(merged.column("deleted"))).select(list(LOCATION_COLUMNS))

    # ---- the column_stats partition ----------------------------------------------------------------------------
    def read_column_stats(self, columns: Iterable[str] | None = None) -> dict[str, ColumnStats]:
        """The `column_stats` partition merged, by record key, tombstones dropped as Hudi's reader drops deleted
        records. With `columns`, only the records of those columns (by key prefix, as Hudi looks them up)."""
        if COLUMN_STATS_PARTITION not in self.data_config.metadata_partitions:
            raise MetadataTableError(f"table {self.data.base_path}: hoodie.table.metadata.partitions does not list "
                                     f"'{COLUMN_STATS_PARTITION}'; write with "
                                     "hoodie.metadata.index.column.stats.enable=true from Java Hudi to build it")
        prefixes = tuple(column_key_prefix(c) for c in columns) if columns is not None else None
        out: dict[str, ColumnStats] = {}
        for file_slice in self.partition_slices(COLUMN_STATS_PARTITION):
            for key, record in self.read_slice(file_slice, prefixes).items():
                if not record.is_deleted:
                    out[key] = record.stats  # type: ignore[attr-defined]
        return out

    def _valid_blocks(self, file_slice: FileSlice) -> Iterator[LogBlock]:
        """HFile data and delete blocks of valid instants, in log order, rolled-back blocks dropped (FORMAT.md, Log
        scanning, with the metadata table's own timeline and the valid instants)."""
        vis = Visibility.of(self.timeline)
        # Where the scan stops: the metadata table's latest completed instant of any action, rollbacks included, as
        # HoodieBackedTableMetadata gives its log scanner (a Hudi 0.15 rollback at <R>006 is newer than the delta
        # commits that follow it in the log: a write that started before the rollback records itself after it).
        latest = max((i.timestamp for i in self.timeline.instants if i.is_completed), default=None)
        valid = self.valid_instants()
        queue: list[LogBlock] = []
        for log_file in file_slice.sorted_log_files():
            with self.location.storage.open_input_file(log_file.path) as f:
                blocks = read_log_blocks(f, file_name=log_file.path)
            for block in blocks:
                if block.block_type == BlockType.CORRUPT:
                    continue
                instant = block.instant_time
                if instant is None:
                    raise MetadataTableError(f"{log_file.path}: {block.block_type.name} block at offset "
                                             f"{block.offset} has no INSTANT_TIME header")
                if latest is None or instant > latest:
                    yield from queue  # Java stops the scan at the first block newer than the latest instant
                    return
                if block.block_type == BlockType.COMMAND:
                    if block.is_rollback:
                        target = block.target_instant_time
                        queue = [b for b in queue if b.instant_time != target]
                    continue
                if not vis.is_committed(instant) or instant not in valid:
                    continue
                if block.block_type not in (BlockType.HFILE_DATA, BlockType.DELETE):
                    raise MetadataTableError(
                        f"{log_file.path}: {block.block_type.name} block at offset {block.offset}; the metadata "
                        "table's log files hold HFile data blocks, delete blocks and command blocks")
                queue.append(block)
        yield from queue


def _base_file_codec(reader: HFileReader, path: str) -> RecordCodec:
    """The codec of an HFile base file's values: the writer schema in its file info."""
    schema = reader.file_info.get(SCHEMA_FILE_INFO)
    if not schema:
        raise MetadataTableError(f"{path}: no '{SCHEMA_FILE_INFO}' in its file info")
    return RecordCodec(schema.decode("utf-8"), path)


def _block_codec(block: LogBlock, where: str) -> RecordCodec:
    """The codec of an HFile data block's values: the writer schema in its SCHEMA header."""
    if not block.schema_json:
        raise MetadataTableError(f"{where}: no SCHEMA header")
    return RecordCodec(block.schema_json, where)


def _decode(partition: str, codec: RecordCodec, key: bytes, value: bytes, where: str) -> MetadataRecord:
    """The record of metadata partition `partition` a cell holds."""
    datum = codec.decode_datum(key, value, where)
    text = key.decode("utf-8", "replace")
    if partition == COLUMN_STATS_PARTITION:
        return ColumnStatsRecord.from_datum(text, datum, where)
    if partition == PARTITION_STATS_PARTITION:
        return ColumnStatsRecord.from_datum(text, datum, where, PARTITION_STATS_TYPE)
    if partition == BLOOM_FILTERS_PARTITION:
        return BloomFilterRecord.from_datum(text, datum, where)
    if partition == FILES_PARTITION:
        return FilesRecord.from_datum(text, datum, where)
    if partition == RECORD_INDEX_PARTITION:
        return RecordIndexRecord.from_datum(text, datum, where)
    raise MetadataTableError(f"{where}: records of metadata partition {partition!r} are not read by this engine")


def _wanted_cells(reader: HFileReader, exact: set[bytes] | None,
                  prefixes: tuple[str, ...] | None) -> list[tuple[bytes, bytes]]:
    """The cells of an HFile a read asks for, picked with arrow before any Python object is made for them: `exact`
    keys by lookup (only their blocks read), else the keys starting with one of `prefixes`, else every cell."""
    if exact is not None:
        cells = reader.lookup(exact)
    else:
        cells = reader.read_table()
        if prefixes is not None:
            keys = cells.column(CELL_COLUMNS[0])
            picked = pa.chunked_array([np.zeros(len(keys), dtype=np.bool_)])
            for prefix in prefixes:
                picked = pc.or_(picked, pc.starts_with(keys, pattern=prefix))
            cells = cells.filter(picked)
    return list(zip(cells.column(0).to_pylist(), cells.column(1).to_pylist(), strict=True))


def _block_records(partition: str, block: LogBlock, exact: set[bytes] | None,
                   prefixes: tuple[str, ...] | None) -> list[MetadataRecord]:
    """The wanted records of an HFile data block (`_wanted_cells`)."""
    where = f"{block.source}: HFILE_DATA block at offset {block.offset}"
    codec = _block_codec(block, where)
    with HFileReader(block.content, name=where) as reader:
        return [_decode(partition, codec, k, v, where) for k, v in _wanted_cells(reader, exact, prefixes)]


def _newest_of_each_key(table: pa.Table, key_col: str) -> pa.Table:
    """`table` (with a `seq` column: log order) sorted by `key_col` then `seq`, the last row of each key kept."""
    table = table.take(pc.sort_indices(table, sort_keys=[(key_col, "ascending"), ("seq", "ascending")]))
    keys = table.column(key_col).combine_chunks()
    last = np.ones(len(keys), dtype=np.bool_)
    if len(keys) > 1:
        last[:-1] = pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1)).to_numpy(zero_copy_only=False)
    return table.filter(pa.array(last))


def newest_cells(base: pa.Table | None, logged: list[pa.Table]) -> pa.Table:
    """`base` (cells `key`, `value` in key order, unique keys; chunks in key order, as `HFileReader.read_table` gives
    them by block) with `logged` merged on: tables of `key`, `value`, `seq` (log order) and `deleted` (a delete
    block's keys), the newest of a key winning and deleted keys dropped. The log's cells are merged among themselves
    by a sort (key, then seq; the last of each key kept); base cells they replace or delete go by a hash lookup; the
    live ones join the base chunk they fall in, and only those chunks are sorted again."""
    key_col, value_col = CELL_COLUMNS
    if base is None:
        base = pa.table({key_col: pa.array([], pa.binary()), value_col: pa.array([], pa.binary())})
    if not logged:
        return base
    log = _newest_of_each_key(pa.concat_tables(logged), key_col)
    if base.num_rows:
        base = base.filter(pc.invert(pc.is_in(base.column(key_col), value_set=log.column(key_col).combine_chunks())))
    live = log.filter(pc.invert(log.column("deleted"))).select(list(CELL_COLUMNS))
    chunks = [pa.Table.from_batches([b]) for b in base.to_batches() if b.num_rows]
    if not live.num_rows or not chunks:
        return base if not live.num_rows else live
    firsts = [c.column(key_col)[0].as_py() for c in chunks]
    into = np.array([max(bisect.bisect_right(firsts, k) - 1, 0) for k in live.column(key_col).to_pylist()])
    bounds = np.searchsorted(into, np.arange(len(chunks) + 1))  # live keys are sorted: each chunk's are a slice
    out = []
    for i, chunk in enumerate(chunks):
        start, end = int(bounds[i]), int(bounds[i + 1])
        if start == end:
            out.append(chunk)
            continue
        merged = pa.concat_tables([chunk, live.slice(start, end - start)]).combine_chunks()  # take on one chunk
        out.append(merged.take(pc.sort_indices(merged, sort_keys=[(key_col, "ascending")])))
    return pa.concat_tables(out)


def _rolled_back(timeline: Timeline, instant: Instant) -> list[str]:
    """The instants a completed rollback or restore of the data table rolled back."""
    meta = timeline.avro_metadata(instant) or {}
    if instant.action is Action.ROLLBACK:
        return [str(c) for c in meta.get("commitsRollback") or ()]
    return [str(c) for rms in (meta.get("hoodieRestoreMetadata") or {}).values()
            for rm in rms or () for c in rm.get("commitsRollback") or ()]
