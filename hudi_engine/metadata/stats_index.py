"""The `column_stats`, `partition_stats` and `bloom_filters` partitions of a Hudi 1.x metadata table, kept with every
action of this engine as Hudi 1.2's metadata writer keeps them (FORMAT.md, Metadata table; `column_stats` has the
records, `column_ranges` the values).

What is indexed: the columns of the table's column_stats index definition (`index.json` `sourceFields`: the meta
columns `_hoodie_commit_time`, `_hoodie_partition_path`, `_hoodie_record_key`, then the first 32 top-level columns of
a supported type, unless a Java writer was configured with a column list), in the index's version (1 on table
version 8, 2 on 9). When a write adds columns and the definition is Hudi's default rule, the new columns are indexed
too and the definition's `sourceFields` rewritten, as Java's `updateColsToIndex` does after a commit that changes
the list. A column list the definition names stays as it is.

Per action (before it completes, in its metadata-table delta commit):
* a commit (writes, compaction, clustering, insert_overwrite): each written file's ranges, one record per indexed
  column (a file's stats are written once; the files it replaces keep theirs until cleaned); each written base
  file's bloom filter from its footer, at the commit's instant. With partition_stats
  (partitioned tables), each touched partition's ranges over the base and log files of its latest file slices
  after the commit, re-aggregated whole (`isTightBound` true): this commit's files' ranges and the column_stats
  records of the others;
* delete_partition: the partitions' partition_stats deleted (stubs, tight);
* a clean: a tombstone per deleted file and indexed column, and per deleted base file's bloom filter
  (partition_stats unchanged);
* a rollback: nothing here: the rolled-back instant's delta commit is rolled back on the metadata table (table
  versions 8 and 9).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_engine.errors import MetadataTableError
from hudi_engine.file_naming import is_base_file_name, is_log_file_name
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.io.base_file import BLOOM_FILTER_KEY, BLOOM_FILTER_TYPE_CODE_KEY
from hudi_engine.io.log_block import BlockType, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_ranges import base_file_ranges, kind_of_arrow, log_file_ranges, merge_ranges
from hudi_engine.metadata.column_stats import (
    BLOOM_FILTERS_PARTITION,
    COLUMN_STATS_PARTITION,
    PARTITION_STATS_PARTITION,
    V1_DECIMAL_PRECISION,
    V1_DECIMAL_SCALE,
    BloomFilterRecord,
    ColumnStats,
    ColumnStatsRecord,
    bloom_filter_key,
    column_stats_key,
)
from hudi_engine.metadata.index_definitions import (
    INDEX_DEFS_PATH,
    IndexDefinition,
    load_index_definitions,
    read_definitions,
    write_definitions,
)
from hudi_engine.metadata.records import MetadataRecord
from hudi_engine.schema import META_COLUMNS, OPERATION_COLUMN, avro_to_arrow_schema
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.commit_metadata import CommitMetadata

# HoodieTableMetadataUtil.META_COLS_TO_ALWAYS_INDEX, in its TreeMap's order
ALWAYS_INDEXED = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
MAX_COLUMNS = 32  # hoodie.metadata.index.column.stats.max.columns.to.index's default


def default_columns(avro_schema: Mapping[str, Any] | str, version: int, populate_meta_fields: bool = True, *,
                    column_list: Sequence[str] = (), max_columns: int = MAX_COLUMNS) -> tuple[str, ...]:
    """The columns Hudi indexes for a writer schema (`getColumnsToIndex`): the meta columns, then those of
    `column_list` (hoodie.metadata.index.column.stats.column.list) or else the first `max_columns` top-level
    columns, of a supported type (not a record, map, array or enum; on version 1 no decimal beyond decimal(30, 15)'s
    range); unknown and unsupported names are left out, as Hudi leaves them."""
    arrow = avro_to_arrow_schema(dict(avro_schema) if isinstance(avro_schema, Mapping) else avro_schema)
    if column_list:
        by_name = {f.name: f for f in arrow}
        arrow = pa.schema([by_name[c] for c in column_list if c in by_name])
        max_columns = len(column_list)
    picked = []
    for field in arrow:
        if field.name in META_COLUMNS or field.name == OPERATION_COLUMN:
            continue
        kind = kind_of_arrow(field.type)
        if kind is None:
            continue
        if version < 2 and kind.name == "DECIMAL" and (
                kind.scale > V1_DECIMAL_SCALE or kind.precision + (V1_DECIMAL_SCALE - kind.scale) > V1_DECIMAL_PRECISION):
            continue
        picked.append(field.name)
    return (ALWAYS_INDEXED if populate_meta_fields else ()) + tuple(picked[:max_columns])


@dataclass(frozen=True)
class StatsIndex:
    """What a table's column_stats index covers (no columns: the table has none), and whether partition_stats and
    bloom_filters are kept with it."""

    columns: tuple[str, ...]
    version: int
    partition_stats: bool
    definition: IndexDefinition | None  # the column_stats definition in index.json, if any
    bloom_filters: bool = False  # the table's bloom_filters partition is kept too

    @staticmethod
    def load(location: TableLocation, config: TableConfig) -> StatsIndex | None:
        """The table's stats index, None when `hoodie.table.metadata.partitions` lists no column_stats. Refused
        (MetadataTableError, naming why) where this engine cannot keep it: a table of version 6, or no column
        list to go by."""
        listed = config.metadata_partitions + config.metadata_partitions_inflight
        blooms = BLOOM_FILTERS_PARTITION in listed
        if COLUMN_STATS_PARTITION not in listed:
            if PARTITION_STATS_PARTITION in listed:
                raise MetadataTableError(f"{PARTITION_STATS_PARTITION} is listed without {COLUMN_STATS_PARTITION}")
            if not blooms:
                return None
        if config.version < 8:
            kept = [p for p in (COLUMN_STATS_PARTITION, BLOOM_FILTERS_PARTITION) if p in listed]
            raise MetadataTableError(f"{', '.join(kept)} on a table of version {config.version}: this engine keeps "
                                     "the column stats and bloom filters of Hudi 1.x tables (versions 8 and 9) only")
        if COLUMN_STATS_PARTITION not in listed:
            return StatsIndex((), 1 if config.version < 9 else 2, False, None, bloom_filters=True)
        defs = load_index_definitions(location, config)
        own = defs.get(COLUMN_STATS_PARTITION) or defs.get(PARTITION_STATS_PARTITION)
        version = own.version if own is not None else (1 if config.version < 9 else 2)
        if version not in (1, 2):
            raise MetadataTableError(f"the {COLUMN_STATS_PARTITION} index is of version V{version}; this engine "
                                     "writes V1 and V2")
        definition = defs.get(COLUMN_STATS_PARTITION)
        if definition is not None and definition.source_fields:
            columns = definition.source_fields
        elif config.create_schema is not None:
            columns = default_columns(config.create_schema, version, config.populate_meta_fields)
        else:
            raise MetadataTableError(f"the table has {COLUMN_STATS_PARTITION} but neither a column_stats index "
                                     f"definition ({INDEX_DEFS_PATH}) nor a create schema to tell its columns")
        return StatsIndex(tuple(columns), version, PARTITION_STATS_PARTITION in listed, definition,
                          bloom_filters=blooms)

    # ---- the columns a commit indexes -----------------------------------------------------------------------------
    def for_schema(self, avro_schema: str | None, populate_meta_fields: bool) -> StatsIndex:
        """The index as a commit of `avro_schema` (its writer schema, without meta fields) extends it: the default
        rule's new columns when the definition follows the default rule (`updateColsToIndex`), else unchanged."""
        if not avro_schema or not self.columns:
            return self
        wanted = default_columns(avro_schema, self.version, populate_meta_fields)
        if len(wanted) > len(self.columns) and wanted[:len(self.columns)] == self.columns:
            return dataclasses.replace(self, columns=wanted)
        return self

    # ---- records ---------------------------------------------------------------------------------------------------
    def ranges_of(self, location: TableLocation, partition: str, file_name: str) -> list[ColumnStats]:
        """The indexed columns' ranges of one data file of the table at `location` (footer or records)."""
        return self.file_records(location, partition, file_name, "")[0]

    def file_records(self, location: TableLocation, partition: str, file_name: str, instant_time: str
                     ) -> tuple[list[ColumnStats], BloomFilterRecord | None]:
        """One data file's ranges of the indexed columns, and (when bloom filters are kept) its bloom filter record
        at `instant_time` as Hudi writes it from a base file's footer (`convertMetadataToBloomFilterRecords`: none
        for a log file or a footer without a filter), reading the footer once."""
        path = location.join(f"{partition}/{file_name}" if partition else file_name)
        storage = location.storage
        if is_base_file_name(file_name):
            if not file_name.endswith(".parquet"):
                return [], None  # Hudi reads ranges from parquet footers only
            with storage.open_input_file(path) as f:
                footer = pq.ParquetFile(f).metadata
            ranges = base_file_ranges(footer, file_name, self.columns, self.version) if self.columns else []
            kv = footer.metadata or {}
            bloom = None
            if self.bloom_filters and BLOOM_FILTER_KEY.encode() in kv:
                bloom = BloomFilterRecord(bloom_filter_key(partition, file_name),
                                          kv.get(BLOOM_FILTER_TYPE_CODE_KEY.encode(), b"").decode("utf-8"),
                                          instant_time, kv[BLOOM_FILTER_KEY.encode()])
            return ranges, bloom
        if not self.columns:
            return [], None
        if is_log_file_name(file_name):
            with storage.open_input_file(path) as f:
                blocks = read_log_blocks(f, file_name=path)
            tables = [data_block_records(b) for b in blocks
                      if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
            records = pa.concat_tables(tables, promote_options="default") if tables else pa.table({})
            return log_file_ranges(records, file_name, self.columns, self.version), None
        return [], None

    def tombstones(self, partition: str, file_name: str) -> list[ColumnStatsRecord]:
        """The records that delete a cleaned file's stats (`HoodieColumnRangeMetadata.stub`: counts -1)."""
        null_type = (1, None) if self.version >= 2 else None
        return [ColumnStatsRecord.of(partition, ColumnStats(file_name, c, None, None, -1, -1, -1, -1, True, False,
                                                            null_type)) for c in self.columns]

    def records_for_clean(self, clean: Mapping[str, Any], instant_time: str) -> dict[str, list[MetadataRecord]]:
        """A clean's records: column stats tombstones of every deleted file, and bloom filter tombstones of every
        deleted base file (`createBloomFilterMetadataRecord(..., isDeleted=true)`)."""
        deleted = [(partition, str(p).rsplit("/", 1)[-1]) for partition, pm in sorted(
            (clean.get("partitionMetadata") or {}).items()) for p in pm.get("deletePathPatterns") or ()]
        out: dict[str, list[MetadataRecord]] = {}
        if self.columns:
            out[COLUMN_STATS_PARTITION] = [t for p, name in deleted for t in self.tombstones(p, name)]
        if self.bloom_filters:
            out[BLOOM_FILTERS_PARTITION] = [BloomFilterRecord(bloom_filter_key(p, name), "", instant_time, b"", True)
                                            for p, name in deleted if is_base_file_name(name)]
        return out

    def partition_stub(self, partition: str) -> list[ColumnStatsRecord]:
        """The partition_stats records that delete a dropped partition's stats (tight tombstones)."""
        null_type = (1, None) if self.version >= 2 else None
        return [ColumnStatsRecord.of_partition(partition, ColumnStats("", c, None, None, -1, -1, -1, -1, True, True,
                                                                      null_type)) for c in self.columns]


def partition_ranges(index: StatsIndex, partition: str, latest_files: Sequence[str],
                     known: Mapping[tuple[str, str], ColumnStats]) -> list[ColumnStatsRecord]:
    """A partition's partition_stats records: per indexed column the ranges of `latest_files` (the base and log files
    of its latest slices) merged, from `known` ((file, column) -> ranges), tight."""
    out = []
    for column in index.columns:
        merged: ColumnStats | None = None
        for name in latest_files:
            one = known.get((name, column))
            if one is not None:
                merged = one if merged is None else merge_ranges(merged, one)
        if merged is not None:
            out.append(ColumnStatsRecord.of_partition(partition, dataclasses.replace(
                merged, file_name=partition, is_tight_bound=True, is_deleted=False)))
    return out


def records_for_commit(index: StatsIndex, location: TableLocation, commit: CommitMetadata, instant_time: str,
                       listing: Mapping[str, Mapping[str, int]], visibility: Visibility,
                       read_known: Callable[[list[str]], Mapping[str, MetadataRecord]]
                       ) -> dict[str, list[MetadataRecord]]:
    """The column_stats (and partition_stats) records of a data commit at `instant_time` (module doc). `listing`:
    the touched partitions' files after the commit (the files partition with the commit's files added);
    `visibility`: the data timeline's, with this instant counted as completed; `read_known(keys)`: column_stats
    records of those keys already in the metadata table."""
    written: dict[tuple[str, str], ColumnStats] = {}
    column_records: list[MetadataRecord] = []
    blooms: list[MetadataRecord] = []
    for partition, stats in commit.partition_to_write_stats.items():
        for stat in stats:
            if stat.path is None:
                continue
            name = stat.path.rsplit("/", 1)[-1]
            file_ranges, bloom = index.file_records(location, partition, name, instant_time)
            for ranges in file_ranges:
                written[(name, ranges.column_name)] = ranges
                column_records.append(ColumnStatsRecord.of(partition, ranges))
            if bloom is not None:
                blooms.append(bloom)
    out: dict[str, list[MetadataRecord]] = {}
    if index.columns:
        out[COLUMN_STATS_PARTITION] = column_records
    if index.bloom_filters:
        out[BLOOM_FILTERS_PARTITION] = blooms
    if not index.partition_stats:
        return out
    partition_records: list[MetadataRecord] = []
    if commit.operation_type == "DELETE_PARTITION":
        for partition in commit.partition_to_replace_file_ids or {}:
            partition_records += index.partition_stub(partition)
    touched = [p for p, stats in commit.partition_to_write_stats.items() if any(s.path for s in stats)]
    view = FileSystemView.from_listing(location, {p: listing.get(p, {}) for p in touched}, visibility.slicing)
    for partition in touched:
        files = [f.path.rsplit("/", 1)[-1] for s in view.latest_file_slices(visibility, partition)
                 for f in ([s.base_file] if s.base_file else []) + s.log_files]
        missing = {column_stats_key(partition, f, c): (f, c) for f in files for c in index.columns
                   if (f, c) not in written}
        known = dict(written)
        for record in read_known(list(missing)).values():
            assert isinstance(record, ColumnStatsRecord)
            known[(record.stats.file_name, record.stats.column_name)] = record.stats
        partition_records += partition_ranges(index, partition, files, known)
    out[PARTITION_STATS_PARTITION] = partition_records
    return out


def with_instant(visibility: Visibility, instant_time: str, commit: CommitMetadata) -> Visibility:
    """`visibility` with the commit at `instant_time` counted as completed and the file groups it replaces hidden."""
    replaced = {(p, f) for p, ids in (commit.partition_to_replace_file_ids or {}).items() for f in ids}
    return dataclasses.replace(visibility, completed=visibility.completed | {instant_time},
                               pending_compactions=visibility.pending_compactions - {instant_time},
                               replaced=visibility.replaced | replaced)


def definition_json(index: StatsIndex) -> dict[str, Any]:
    """The column_stats index definition of `index`, as Hudi writes it in index.json."""
    d = index.definition
    return {"indexName": COLUMN_STATS_PARTITION, "indexType": COLUMN_STATS_PARTITION,
            "indexFunction": COLUMN_STATS_PARTITION, "sourceFields": list(index.columns),
            "indexOptions": dict(d.options) if d is not None else {}, "version": f"V{index.version}"}


def save_definition(location: TableLocation, config: TableConfig, index: StatsIndex, *, create: bool = False) -> None:
    """Rewrite the column_stats definition in the table's index.json with `index`'s columns (Jackson's layout);
    with `create`, write the file where the table names none (Hudi 1.x's default place)."""
    found = read_definitions(location, config, create=create)
    if found is None:
        return
    path, raw = found
    defs = raw.setdefault("indexDefinitions", {})
    old = defs.get(COLUMN_STATS_PARTITION) or {}
    entry = definition_json(index)
    if old and "version" not in old and index.version == 1:
        entry.pop("version")  # a Hudi 1.0 definition without a version stays one
    defs[COLUMN_STATS_PARTITION] = {**old, **entry}
    write_definitions(location, path, raw)
