"""This engine's commits, cleans, compactions and rollbacks recorded in a data table's metadata table, as Hudi's
`HoodieBackedTableMetadataWriter` records them (FORMAT.md, Metadata table).

A metadata table is kept only when it is one this engine can keep whole: `hoodie.table.metadata.partitions` lists
`files`, and besides it at most `column_stats`, `partition_stats` and `bloom_filters` on a table of version 8 or 9
(their records: `stats_index`) and the `record_index` of a table with meta fields, global or (versions 8 and 9)
partitioned (its records: `record_index`; no secondary index, ... whose records we do not compute), nothing is
being built
(`...partitions.inflight` empty), the metadata table is of the data table's version, has no pending instant (but
those of the action being retried) and one `files` file group with its base file. Otherwise the action disables it
first (`keep_or_disable`, through `TableConfig.disable_metadata_table`, with the action's reason).

For a data action at instant T (a commit, a clean, a compaction's commit), before T completes (its metadata known,
its files written or deleted):

    1. `<T>.deltacommit.requested`, then `.inflight` (a workload of one update of `files-0000-0`) on the metadata
       table's timeline
    2. a marker, then a new log file in each file group the action's records fall in (the `files` file group, and
       the column and partition stats and record index file groups their keys map to): one HFile data block
       (INSTANT_TIME T, SCHEMA the record schema of the metadata table's `files` base file) holding those records
       (`records.records_for_*`, `stats_index.records_for_commit`, `record_index.records_for_commit`), then, for
       keys the record index loses, a delete block
    3. `<T>.deltacommit` (layout 2: `<T>_<completion>.deltacommit`) with the write stat of that log file
    4. the marker folder is deleted

Only then does the data action complete. A crash before that leaves a metadata-table delta commit at a data instant
that never completed: readers skip its block (`table.MetadataTable.valid_instants`). A retry of T (a pending clean
run again, a compaction re-run) first rolls that delta commit back on the metadata table, as Hudi's
`processAndCommit` does; a failed commit's rollback rolls it back (`record_rollback`).

A data rollback R of instant F, before R completes (`record_rollback`):
* table version 6 (Hudi 0.15): a delta commit at R with the log files R wrote command blocks into, then F's delta
  commit (if the metadata table has one, in any state) rolled back on the metadata table by a rollback at
  `R` + `006` (OperationSuffix.ROLLBACK);
* versions 8 and 9 (Hudi 1.x): F's delta commit rolled back by a rollback at R.
Hudi's readers count the instants a completed data rollback rolled back as valid, so F's delta commit must be gone
before R completes.

The log file is always new (version after the slice's last, token `0-1-0`; layout 2 names it by T), so no file Java
wrote is changed.

What else this engine does to a metadata table, and what it does not yet:
* its own cleaning and compaction (`cleaning`, `compaction`), run when a write, clean or compaction starts
  (`keep_or_disable` with `table_services`, `MetadataWriter.perform_table_services`), as Hudi's write client runs
  them; interrupted ones are run again first (a pending compaction or clean of its own are the pending instants a
  kept metadata table may have);
* its creation from a listing by a write (`hoodie.metadata.enable`, true by default; `initialization`);
* its own archival, after the data table's (`hudi_engine.table_services.archival.archive_metadata_table`: before its
  latest compaction and the data table's first active instant);
* delete_partition: recorded as a commit (`records.records_for_commit` marks the partitions deleted);
* a data restore to T (`hudi_engine.table_services.restore`), as Hudi's `update(HoodieRestoreMetadata)`: the metadata
  table restored to T on its own timeline, then `record_restore`'s delta commit re-syncs `files` with a listing.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from hudi_engine.config import keys as K
from hudi_engine.errors import HudiError, MetadataTableError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import LogFileName
from hudi_engine.fs_view import Visibility
from hudi_engine.io.hfile import write_hfile_arrays
from hudi_engine.io.log_block import BlockType, HeaderKey, LogBlock, build_delete_block
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.location import TableLocation
from hudi_engine.metadata import cleaning, compaction
from hudi_engine.metadata.column_stats import (
    BLOOM_FILTERS_PARTITION,
    COLUMN_STATS_PARTITION,
    PARTITION_STATS_PARTITION,
    file_group_indexes,
)
from hudi_engine.metadata.index_definitions import is_partitioned_record_index
from hudi_engine.metadata.record_index import (
    RECORD_INDEX_PARTITION,
    IndexRecords,
    data_partition_of,
    keys_table,
    partitioned_file_id,
    partitioned_records_for_commit,
    slice_keys,
)
from hudi_engine.metadata.record_index import records_for_commit as index_records_for_commit
from hudi_engine.metadata.records import (
    ALL_PARTITIONS_KEY,
    FILE_LIST,
    FILES_PARTITION,
    PARTITION_LIST,
    FileInfo,
    FilesRecord,
    MetadataRecord,
    RecordCodec,
    merge_records,
    partition_key,
    records_for_clean,
    records_for_commit,
    records_for_rollback,
)
from hudi_engine.metadata.stats_index import StatsIndex, save_definition, with_instant
from hudi_engine.metadata.stats_index import records_for_commit as stats_records_for_commit
from hudi_engine.metadata.table import SCHEMA_FILE_INFO, FilesPartition, MetadataTable, writing_timeline
from hudi_engine.schema import remove_meta_fields, schema_to_json
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State, new_instant_time
from hudi_engine.timeline.layout import TimelineLayoutV2
from hudi_engine.write.markers import IOType, create_marker, delete_marker_dir
from hudi_engine.write.rollback import MetadataUpdate, RollbackRecorder, finish_pending_rollbacks, rollback_at

# the metadata partitions this engine keeps up to date (column and partition stats on table versions 8 and 9)
KEPT_PARTITIONS = (FILES_PARTITION, COLUMN_STATS_PARTITION, PARTITION_STATS_PARTITION, BLOOM_FILTERS_PARTITION,
                   RECORD_INDEX_PARTITION)
OPERATION = "UPSERT_PREPPED"  # what Hudi's metadata writer commits its delta commits as
WRITE_TOKEN = "0-1-0"
ROLLBACK_SUFFIX = "006"  # HoodieTableMetadataUtil.OperationSuffix.ROLLBACK: a v6 metadata rollback's instant suffix
RESTORE_SUFFIX = "003"  # OperationSuffix.RESTORE: a v6 restore's files-partition sync (createRestoreTimestamp)
_MILLIS = 17  # a millisecond instant time's length (metadata instants may carry a 3-digit suffix)
# a metadata partition's records of one action (a partitioned record index's: by data partition)
Records = Sequence[MetadataRecord] | IndexRecords | dict[str, IndexRecords]
# File groups a partitioned record index gets for a data partition it has none for: Hudi's default
# hoodie.metadata.record.level.index.min.filegroup.count, which its writer gives every new partition (a write sets
# the count it is given: `MetadataWriter.new_partition_file_groups`).
NEW_PARTITION_FILE_GROUPS = 1


def _hfile_block(keys: pa.StringArray, values: pa.BinaryArray, schema: str, instant_time: str) -> bytes:
    """The HFile content of a delta commit's data block: `keys` (in byte order) and their `values`."""
    return write_hfile_arrays(keys, values, file_info={SCHEMA_FILE_INFO: schema.encode("utf-8")},
                              name=f"metadata block of {instant_time}")


def refuse_unmaintained(location: TableLocation, config: TableConfig, action: str) -> None:
    """Refuse `action` on a table whose metadata table has (or is building) index partitions this engine does not
    keep up to date (secondary and expression indexes, a partitioned record index, ...): writing would leave them
    stale, and disabling the metadata table would drop an index a Java writer built. Named before anything is
    written; `hoodie.metadata.enable=false` given to a write deletes the metadata table first, as Hudi does."""
    listed = (*config.metadata_partitions, *config.metadata_partitions_inflight)
    other = [p for p in listed if p not in KEPT_PARTITIONS]
    if config.version < 8:  # Hudi 0.15's column stats and bloom filters: kept on versions 8 and 9 only
        other += [p for p in listed if p in (COLUMN_STATS_PARTITION, BLOOM_FILTERS_PARTITION, PARTITION_STATS_PARTITION)]
    if RECORD_INDEX_PARTITION in listed and config.populate_meta_fields and record_index_refusal(location, config):
        other.append(f"{RECORD_INDEX_PARTITION} (partitioned)")  # Hudi 1.1's, on a table it cannot be on
    if other:
        raise MetadataTableError(
            f"table {location.base_path}: {action}: its metadata table has the index partitions {other}, which this "
            f"engine does not maintain on a table of version {config.version} (it keeps files; column_stats, "
            "partition_stats and bloom_filters on versions 8 and 9; the global record_index), so they would go "
            "stale. Drop those indexes with Java Hudi (DROP INDEX, or its write option turned off), or write with "
            f"{K.METADATA_ENABLE.key}=false to delete the metadata table (Java's next writer builds it again)")


@dataclasses.dataclass(frozen=True)
class Decision:
    """Whether a table's metadata table is kept by this engine's action: `writer` when it is, else `reason`."""

    writer: MetadataWriter | None
    reason: str


def keep_or_disable(location: TableLocation, config: TableConfig, timeline: Timeline, action: str, *,
                    retrying: Collection[str] = (), table_services: bool = False, recovery: bool = False,
                    max_delta_commits: int = K.METADATA_COMPACT_MAX_DELTA_COMMITS.default,
                    data_commits_retained: int = K.CLEANER_COMMITS_RETAINED.default) -> MetadataWriter | None:
    """The writer that records `action` (a data commit, clean, compaction, rollback, ...) in the table's metadata
    table when this engine can keep it, else None after disabling it (`TableConfig.disable_metadata_table`, with
    `action` and the reason in its warning). None without a metadata table. `config` and `timeline`: the table's,
    under the table lock. `retrying`: instants whose pending metadata-table instants the action rolls back. Index
    partitions this engine does not keep are refused by name (`refuse_unmaintained`), except in `recovery`. With
    `table_services` (a data write, clean or compaction, as Hudi's write client runs them when it starts one), the
    metadata table's own services run first (`MetadataWriter.perform_table_services`; `data_commits_retained`: the
    data table's `hoodie.cleaner.commits.retained`, which sizes the metadata table's)."""
    if not (config.metadata_partitions or config.metadata_partitions_inflight):
        return None
    if not recovery:  # a rollback or an interrupted clean finished still disables one it cannot keep
        refuse_unmaintained(location, config, action)
    decision = MetadataWriter.decide(location, config, timeline, retrying=retrying, table_services=table_services,
                                     refused=not recovery)
    if decision.writer is None:
        config.disable_metadata_table(location, f"{action}: {decision.reason}")
    elif table_services:
        decision.writer.perform_table_services(max_delta_commits, data_commits_retained)
    return decision.writer


def keep_through_rollback(location: TableLocation) -> MetadataUpdate:
    """What keeps the metadata table of the table at `location` through a rollback (`hudi_engine.write.rollback`'s
    `metadata`): asked before the rollback of F changes anything, it answers the recorder that records the rollback
    before it completes (`MetadataWriter.record_rollback`), or None after disabling the metadata table. Disabled too
    when a compaction of the metadata table already holds F's delta commit: rolling its log file back would leave F's
    files listed (Hudi refuses such a rollback: "Commit being rolled back ... is earlier than the latest
    compaction"; a restore undoes it)."""
    def prepare(target: Instant, rollback_time: str | None) -> RollbackRecorder | None:
        config = TableConfig.load(location)
        f = target.timestamp
        action = f"the rollback of {f}"
        retrying = (f, rollback_time, rollback_time + ROLLBACK_SUFFIX) if rollback_time else (f,)
        writer = keep_or_disable(location, config, Timeline.load(location), action, retrying=retrying, recovery=True)
        if writer is None:
            return None
        compaction = writer.compacted_over(f)
        if compaction is not None:
            config.disable_metadata_table(location, f"{action}: the metadata table's compaction {compaction} holds "
                                                    "its delta commit (Hudi refuses this rollback; restore instead)")
            return None

        def record(rollback: Instant, metadata: Mapping[str, Any]) -> None:
            writer.record_rollback(rollback.timestamp, f, metadata)
        return record
    return prepare


def record_index_refusal(data: TableLocation, data_config: TableConfig) -> str:
    """Why this engine cannot keep the table's record index, or "": a table without meta fields (the engine reads
    keys from `_hoodie_record_key`), or the partitioned variant (Hudi 1.1's `hoodie.metadata.record.level.index
    .enable`, index.json's `isPartitioned`) on a table below version 8 (Hudi 1.1 writes it on versions 8 and 9;
    its file groups are per data partition, `record_index.partitioned_file_id`)."""
    if not data_config.populate_meta_fields:
        return (f"{RECORD_INDEX_PARTITION} on a table without meta fields (hoodie.populate.meta.fields=false): this "
                "engine keeps the record index of tables with meta fields only")
    if data_config.version < 8 and is_partitioned_record_index(data, data_config):
        return (f"{RECORD_INDEX_PARTITION} is partitioned (hoodie.metadata.record.level.index.enable) on a table of "
                f"version {data_config.version}: Hudi 1.1 keeps it on versions 8 and 9 only")
    return ""


class MetadataWriter:
    """Appends this engine's actions to the partitions it keeps of a data table's metadata table."""

    def __init__(self, table: MetadataTable, schema: str, stats: StatsIndex | None = None) -> None:
        # Changed since listed: `table` by a service or rollback (`_reload`), the slices by a delta commit too
        # (`_committed`); listed again when next used (a write's own use of the metadata table ends at its commit).
        self._stale = False
        self._slices_stale = False
        self._table: MetadataTable = table
        self.schema = schema
        self.stats = stats
        self.codec = RecordCodec(schema, f"{table.location.base_path} (its files base file)")
        self.record_index = RECORD_INDEX_PARTITION in table.data_config.metadata_partitions
        self.partitioned_index = self.record_index and is_partitioned_record_index(table.data, table.data_config)
        self.new_partition_file_groups = NEW_PARTITION_FILE_GROUPS
        self._slices: dict[str, list[FileSlice]] = {}
        self._load_slices()

    @property
    def table(self) -> MetadataTable:
        """The metadata table as it is after this writer's last change to it."""
        if self._stale:
            self._stale, self._slices_stale = False, True
            self._table = MetadataTable.load(self._table.data, self._table.data_config, self._table.data_timeline)
        return self._table

    @table.setter
    def table(self, table: MetadataTable) -> None:
        self._table = table
        self._stale, self._slices_stale = False, True

    @property
    def slices(self) -> dict[str, list[FileSlice]]:
        """The latest slices of each kept partition's file groups, as `table` lists them."""
        if self._stale or self._slices_stale:
            self._load_slices()
        return self._slices

    def follow(self, data_timeline: Timeline) -> None:
        """Take `data_timeline`, the data table's as the caller holds it under the table lock now (after a commit: with
        it), as the one the metadata table's reads validate log blocks by and its services plan against."""
        t = self._table
        self._table = MetadataTable(t.data, t.data_config, data_timeline, t.location, t.config, t.timeline)

    @property
    def file_slice(self) -> FileSlice:
        """The latest slice of the `files` partition's one file group."""
        return self.slices[FILES_PARTITION][0]

    def _load_slices(self) -> None:
        table = self.table
        self._slices = {p: ([table.files_slice()] if p == FILES_PARTITION else table.partition_slices(p))
                        for p in table.data_config.metadata_partitions}
        self._slices_stale = False
        for partition, slices in self._slices.items():
            # a partitioned record index has file groups for the data partitions it has seen: none at first
            if not slices and not (partition == RECORD_INDEX_PARTITION and self.partitioned_index):
                raise MetadataTableError(f"{self.table.location.join(partition)}: metadata partition {partition!r} "
                                         "has no file group; let Java Hudi rebuild it, or disable the metadata table")

    @staticmethod
    def decide(data: TableLocation, data_config: TableConfig, data_timeline: Timeline, *,
               retrying: Collection[str] = (), table_services: bool = False, refused: bool = False) -> Decision:
        """Keep the metadata table of the table at `data`, or say why not (module doc). Nothing is written. With
        `table_services`, a pending compaction or clean of the metadata table is kept: the services run it first.
        `refused`: `refuse_unmaintained` passed on `data_config` just before, which judged a record index of a table
        with meta fields already (its index.json is not read again)."""
        partitions = data_config.metadata_partitions
        other = [p for p in partitions if p not in KEPT_PARTITIONS]
        if FILES_PARTITION not in partitions or other:
            return Decision(None, f"hoodie.table.metadata.partitions lists {partitions}; this engine keeps "
                                  f"{list(KEPT_PARTITIONS)} only, with {FILES_PARTITION}")
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
            pending = [str(i) for i in table.timeline.instants
                       if not i.is_completed and i.timestamp not in retrying
                       and not (table_services and i.action in (Action.COMPACTION, Action.CLEAN))]
            if pending:
                return Decision(None, f"the metadata table has pending instants {pending}")
            schema = table.record_schema(table.files_slice())
            stats = StatsIndex.load(data, data_config)
            if RECORD_INDEX_PARTITION in partitions and not (refused and data_config.populate_meta_fields):
                why = record_index_refusal(data, data_config)
                if why:
                    return Decision(None, why)
            return Decision(MetadataWriter(table, schema, stats), "")
        except HudiError as e:
            return Decision(None, str(e))

    # ---- what each data action records ---------------------------------------------------------------------------
    def record_commit(self, instant_time: str, commit: CommitMetadata) -> Instant | None:
        """A data commit or compaction commit at `instant_time` (its metadata `commit`), before it completes. None
        after disabling the metadata table when it already has a later delta commit (a clustering or compaction
        planned before another writer's commits and run after them; an OCC write that commits after a newer one):
        this engine appends a delta commit only as the newest (`_delta_commit`), so the action goes on without it
        and the next write builds it again (Hudi's writer appends such a delta commit out of order)."""
        later = self._later_than(self._timeline(), instant_time, same=False)
        if later:
            TableConfig.load(self.table.data).disable_metadata_table(
                self.table.data, f"the commit of {instant_time}: the metadata table has a later instant, {later[0]}")
            return None
        files = records_for_commit(commit)
        records: dict[str, Records] = {FILES_PARTITION: files}
        index = None
        data, data_config = self.table.data, self.table.data_config
        before = self.table.read_files_partition() if self.stats is not None or self.record_index else None
        if self.record_index:
            assert before is not None
            data_timeline = self.table.data_timeline
            replaced = lambda partition, file_id: slice_keys(data, data_timeline, partition, file_id)  # noqa: E731
            records[RECORD_INDEX_PARTITION] = partitioned_records_for_commit(
                data, commit, instant_time, data_config.local_instant_times, before.files, replaced,
                lambda partition, keys: self.table.record_locations(keys, partition)) if self.partitioned_index \
                else index_records_for_commit(data, commit, instant_time, data_config.local_instant_times,
                                              before.files, replaced, self.table.record_locations)
        if self.stats is not None:
            assert before is not None
            index = self.stats.for_schema(commit.extra_metadata.get(CommitMetadata.SCHEMA_KEY),
                                          data_config.populate_meta_fields)
            listing = FilesPartition(merge_records(before.records.values(), files))
            touched = {p: listing.files(p) for p in commit.partition_to_write_stats}
            visibility = with_instant(Visibility.of(self.table.data_timeline), instant_time, commit)
            records.update(stats_records_for_commit(
                index, data, commit, instant_time, touched, visibility,
                lambda keys: self.table.read_keys(COLUMN_STATS_PARTITION, keys)))
        done = self._delta_commit(instant_time, records)
        if index is not None and index.columns != self.stats.columns:  # type: ignore[union-attr]
            save_definition(self.table.data, self.table.data_config, index)  # as Java's updateColsToIndex
            self.stats = index
        return done

    def record_clean(self, instant_time: str, clean: Mapping[str, Any]) -> Instant:
        """A clean at `instant_time` (its HoodieCleanMetadata), before it completes."""
        records: dict[str, Records] = {FILES_PARTITION: records_for_clean(clean)}
        if self.stats is not None:
            records.update(self.stats.records_for_clean(clean, instant_time))
        return self._delta_commit(instant_time, records)

    def record_rollback(self, rollback_time: str, target_time: str, rollback: Mapping[str, Any]) -> None:
        """A data rollback at `rollback_time` of `target_time` (its HoodieRollbackMetadata), before it completes
        (module doc). Run again after a crash, it finishes what the first run left."""
        self._finish_pending_rollbacks()
        v6 = self.table.data_config.version < 8
        if v6 and not self._completed_at(rollback_time, Action.DELTA_COMMIT):
            self._delta_commit(rollback_time, {FILES_PARTITION: records_for_rollback(rollback)})
        if self._instants_at(target_time, Action.DELTA_COMMIT):
            self._rollback(target_time, rollback_time + ROLLBACK_SUFFIX if v6 else rollback_time)

    def record_restore(self, listing: Mapping[str, Mapping[str, int]], data_timeline: Timeline) -> Instant:
        """After the metadata table was restored with its data table (`table_services.restore`): the delta commit
        Hudi's `update(HoodieRestoreMetadata)` writes, at a new instant (table version 6: with the restore suffix
        003), that brings the `files` partition back to `listing` (the data files, partition -> name -> size, listed
        before the metadata table's restore): files it lists that storage does not (a data clean after the restored
        instant deleted them) deleted, files missing or of another size (a rollback's command block) added,
        partitions storage lacks deleted from the partition list (`fetchOutofSyncFilesRecordsFromMetadataTable`).
        Written even when nothing differs, as Hudi marks the restore done. Only `files`: Hudi leaves the other
        partitions as the restore left them. `data_timeline`: the data table's, listed after its rollbacks."""
        self.table = MetadataTable.load(self._table.data, self._table.data_config, data_timeline)
        self._load_slices()
        known = self.table.read_files_partition()
        records: list[MetadataRecord] = []
        gone = [p for p in known.partitions if p not in listing]
        if gone:
            records.append(FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST,
                                       {partition_key(p): FileInfo(0, True) for p in gone}))
        for partition in known.partitions:
            listed, stored = known.files(partition), listing.get(partition)
            if stored is None:
                continue
            changes = {n: FileInfo(size) for n, size in stored.items() if listed.get(n) != size}
            changes.update({n: FileInfo(0, True) for n in listed if n not in stored})
            if changes:
                records.append(FilesRecord(partition_key(partition), FILE_LIST, changes))
        instant_time = self._new_time()
        if self.table.data_config.version < 8:
            instant_time += RESTORE_SUFFIX
        return self._delta_commit(instant_time, {FILES_PARTITION: sorted(records, key=lambda r: r.key.encode())})

    def compacted_over(self, instant_time: str) -> str | None:
        """The metadata table's completed compaction that holds its delta commit at `instant_time` (one at or after
        the delta commit's completion: table version 6 names it by the time, `<T>001`), if any."""
        done = [i for i in self._instants_at(instant_time, Action.DELTA_COMMIT) if i.is_completed]
        if not done:
            return None
        since = done[0].completion_time or instant_time
        compactions = [c.timestamp for c in self.table.timeline.filter_by([Action.COMMIT], [State.COMPLETED])
                       if c.timestamp >= since]
        return compactions[-1] if compactions else None

    def forget(self, instant_time: str) -> None:
        """Roll back the metadata table's delta commit at `instant_time`, if it has one: the data instant's files are
        gone (an interrupted compaction's attempt undone) and its next attempt records them again."""
        self._finish_pending_rollbacks()
        if self._instants_at(instant_time, Action.DELTA_COMMIT):
            self._rollback(instant_time, self._new_time())

    # ---- the metadata table's own services ----------------------------------------------------------------------
    def perform_table_services(self, max_delta_commits: int,
                               data_commits_retained: int = K.CLEANER_COMMITS_RETAINED.default) -> Instant | None:
        """The metadata table's cleaning and compaction, each when due (`cleaning`, `compaction`), in Hudi's order,
        after finishing what interrupted ones left; the compaction run now, if any."""
        self._finish_pending_rollbacks()
        if compaction.resume(self.table, self._timeline()):
            self._reload()
        if cleaning.resume(self.table, self._timeline()):
            self._reload()
        due = cleaning.plan(self.table, cleaning.commits_retained(data_commits_retained))
        if due is not None:
            cleaning.clean(self.table, self._timeline(), *due)
            self._reload()
        timeline = self._timeline()
        instant_time = compaction.compaction_time(self.table, max_delta_commits)
        if instant_time is None:
            return None
        done = compaction.compact(self.table, timeline, instant_time)
        self._reload()
        return done

    # ---- the metadata table's own rollbacks ----------------------------------------------------------------------
    def _instants_at(self, instant_time: str, action: Action) -> list[Instant]:
        return [i for i in self.table.timeline.instants_at(instant_time) if i.action is action]

    def _completed_at(self, instant_time: str, action: Action) -> bool:
        return any(i.is_completed for i in self._instants_at(instant_time, action))

    def _new_time(self) -> str:
        latest = max((i.timestamp[:_MILLIS] for t in (self.table.timeline, self.table.data_timeline)
                      for i in t.instants), default=None)
        return new_instant_time(after=latest, local=self.table.data_config.local_instant_times)

    def _rollback(self, instant_time: str, rollback_time: str) -> None:
        """Roll back the metadata table's delta commit at `instant_time` with a rollback at `rollback_time`: Hudi
        0.15 writes a command block into a new log file (its APPEND marker), Hudi 1.x deletes the instant's own log
        file. A rollback at `rollback_time` that completed before a crash only has the instant's files left to
        delete."""
        timeline = self.table.timeline
        if any(i.action is Action.ROLLBACK and i.is_completed for i in timeline.instants_at(rollback_time)):
            for instant in self._instants_at(instant_time, Action.DELTA_COMMIT)[:1]:
                timeline.delete_instant_files(instant)
        else:
            rollback_at(self.table.location, instant_time, rollback_time,
                        use_command_blocks=timeline.layout.version == 1)
        self._reload()

    def _finish_pending_rollbacks(self) -> None:
        if self.table.timeline.filter_by([Action.ROLLBACK]).pending():
            finish_pending_rollbacks(self.table.location, self.table.timeline)
            self._reload()

    def _reload(self) -> None:
        """Mark the metadata table changed (its own service or rollback): it is listed again when next used."""
        self._stale = True

    # ---- the delta commit ---------------------------------------------------------------------------------------
    def _timeline(self) -> Timeline:
        return writing_timeline(self.table.timeline, self.table.data_config)

    @staticmethod
    def _later_than(timeline: Timeline, instant_time: str, *, same: bool = True) -> list[str]:
        """The metadata table's instants a delta commit at `instant_time` would not be the newest after (`same`: one
        at `instant_time` too). Layout 2 orders by completion time: a compaction that completed (run by this action's
        table services) before this delta commit completes holds none of it (compaction module doc)."""
        later = (Action.DELTA_COMMIT, Action.COMPACTION) if isinstance(timeline.layout, TimelineLayoutV2) else (
            Action.DELTA_COMMIT, Action.COMMIT, Action.COMPACTION)
        return [str(i) for i in timeline.instants if i.action in later
                and (i.timestamp >= instant_time if same else i.timestamp > instant_time)]

    def _log_file_name(self, fs: FileSlice, instant_time: str) -> LogFileName:
        # Layout 1: a new version in the slice of the base file; layout 2: a file named by the delta commit.
        base_instant = instant_time if self.table.timeline.layout.version == 2 else fs.base_instant
        versions = [f.name.version for f in fs.log_files if f.name.base_instant == base_instant]
        return LogFileName(fs.file_id, base_instant, max(versions, default=0) + 1, WRITE_TOKEN)

    def _delta_commit(self, instant_time: str, records: Mapping[str, Records]) -> Instant:
        """`records` (by metadata partition) as a completed delta commit at `instant_time` of the metadata table, one
        new log file per file group they fall in; returns it. A delta commit already there (an earlier attempt of the
        same data action) is rolled back first, as Hudi's `processAndCommit` does. Refused, before writing anything,
        when the metadata table has a commit after `instant_time`."""
        self._finish_pending_rollbacks()
        if self._instants_at(instant_time, Action.DELTA_COMMIT):
            self._rollback(instant_time, self._new_time())
        location = self.table.location
        timeline = self._timeline()
        newer = self._later_than(timeline, instant_time)
        if newer:
            raise MetadataTableError(f"{location.base_path}: {newer[0]} is at or after the data instant "
                                     f"{instant_time}; a metadata delta commit must be the newest")
        groups = self._by_file_group(records, instant_time)
        requested = timeline.create_requested(Instant(instant_time, Action.DELTA_COMMIT, State.REQUESTED))
        workload = CommitMetadata(operation_type=OPERATION)
        for partition, fs, group in groups:
            workload.add_write_stat(partition, WriteStat(file_id=fs.file_id, prev_commit=fs.base_instant,
                                                         num_update_writes=len(group)))
        if not groups:  # an action without records still updates the files file group, as Hudi's does
            fs = self.file_slice
            workload.add_write_stat(FILES_PARTITION, WriteStat(file_id=fs.file_id, prev_commit=fs.base_instant))
        inflight = timeline.transition_to_inflight(requested, timeline.commit_bytes(workload, requested))
        stats: dict[str, list[WriteStat]] = {}
        for partition, fs, group in groups:
            stats.setdefault(partition, []).append(self._write_log_file(instant_time, partition, fs, group))
        schema = schema_to_json(remove_meta_fields(json.loads(self.schema)))
        meta = CommitMetadata(stats, False, {CommitMetadata.SCHEMA_KEY: schema}, OPERATION)
        completed = timeline.complete(inflight, meta)
        delete_marker_dir(location, instant_time)
        self._committed(completed)
        return completed

    def _committed(self, completed: Instant) -> None:
        """After this writer's delta commit `completed`: its timeline with it, as a listing under the table lock
        would show it (no one else changes the metadata table under that lock, nor a delta commit its config), and
        its slices, which gained log files, listed again when next used."""
        table = self.table
        old = table.timeline
        key = (completed.timestamp, completed.comparable_action)
        timeline = Timeline(old.location, [*(i for i in old.instants if (i.timestamp, i.comparable_action) != key),
                                           completed], layout=old.layout, unknown_files=old.unknown_files)
        self.table = MetadataTable(table.data, table.data_config, table.data_timeline, table.location, table.config,
                                   timeline)

    def _by_file_group(self, records: Mapping[str, Records], instant_time: str
                       ) -> list[tuple[str, FileSlice, Records]]:
        """`records` by (partition, latest slice of the file group its key maps to), each sorted by key. The record
        index's (`IndexRecords`, in key order) are split as columns; a partitioned one's per data partition
        (`_partitioned_groups`)."""
        out: dict[tuple[str, str], tuple[FileSlice, Records]] = {}
        for partition, recs in records.items():
            slices = self.slices.get(partition)
            if slices is None:
                raise MetadataTableError(f"{self.table.location.base_path}: records for metadata partition "
                                         f"{partition!r}, which the table does not list")
            if partition == RECORD_INDEX_PARTITION and isinstance(recs, dict):
                self._partitioned_groups(recs, slices, instant_time, out)
                continue
            if partition == RECORD_INDEX_PARTITION:
                index = recs if isinstance(recs, IndexRecords) else IndexRecords.of(recs)  # type: ignore[arg-type]
                groups = index.file_groups(len(slices))
                for i in np.unique(groups).tolist():
                    out[(partition, slices[i].file_id)] = (slices[i], index.filter(groups == i))
                continue
            assert not isinstance(recs, dict | IndexRecords)  # an index's records are the record_index partition's
            by_group: dict[int, list[MetadataRecord]] = {}
            for r, i in zip(recs, file_group_indexes([r.key for r in recs], len(slices)).tolist(), strict=True):
                by_group.setdefault(i, []).append(r)
            for i, group in by_group.items():
                out[(partition, slices[i].file_id)] = (slices[i], sorted(group, key=lambda r: r.key.encode("utf-8")))
        return [(p, fs, v) for (p, _), (fs, v) in sorted(out.items())]

    def _partitioned_groups(self, records: Mapping[str, IndexRecords], slices: list[FileSlice], instant_time: str,
                            out: dict[tuple[str, str], tuple[FileSlice, Records]]) -> None:
        """A partitioned record index's records (by data partition) into `out` by file group: a key maps among its
        data partition's file groups (`getRecordTaggerPartitionedRLI`). A data partition without file groups (new
        in this commit) gets `new_partition_file_groups` new ones (the write's min count), starting at this delta commit (no base file; the
        log file names them), as Hudi's `initializeNewFileGroupsForPartitionedRLI` does."""
        by_partition: dict[str, list[FileSlice]] = {}
        for fs in slices:
            served = data_partition_of(fs.file_id)
            if served is None:
                raise MetadataTableError(f"{fs.file_id}: a global record index's file group in a partitioned record "
                                         "index; let Java Hudi rebuild the metadata table, or disable it")
            by_partition.setdefault(served, []).append(fs)
        for data_partition, index in records.items():
            if not len(index):
                continue
            known = by_partition.get(data_partition)
            group = known or [FileSlice(RECORD_INDEX_PARTITION, partitioned_file_id(data_partition, i), instant_time)
                              for i in range(self.new_partition_file_groups)]
            groups = index.file_groups(len(group))
            # every new file group gets its log file, those no key maps to too (an empty delete block, as Java's)
            for i in (range(len(group)) if known is None else np.unique(groups).tolist()):
                out[(RECORD_INDEX_PARTITION, group[i].file_id)] = (group[i], index.filter(groups == i))

    def _cells(self, records: Records) -> tuple[pa.StringArray, pa.BinaryArray, pa.StringArray]:
        """The data block's keys and values, and the delete block's keys (a record index's lost keys), as columns."""
        if isinstance(records, IndexRecords):
            deleted = records.deleted
            return (records.keys.filter(pa.array(~deleted)), records.values(self.codec.encode),
                    records.keys.filter(pa.array(deleted)))
        assert not isinstance(records, dict)  # split by file group before (`_by_file_group`)
        return (pa.array([r.key for r in records], pa.string()),
                pa.array([self.codec.encode(r) for r in records], pa.binary()), pa.array([], pa.string()))

    def _write_log_file(self, instant_time: str, partition: str, fs: FileSlice, records: Records) -> WriteStat:
        location = self.table.location
        # A record index's deleted keys go in a delete block, after the data block, as Hudi's log writer puts them.
        keys, values, deletes = self._cells(records)
        blocks = []
        if not len(keys) and not len(deletes) and isinstance(records, IndexRecords):  # a new, empty index file group
            blocks.append(build_delete_block(keys_table(deletes), instant_time, self.schema))
        elif len(keys) or not len(deletes):
            content = _hfile_block(keys, values, self.schema, instant_time)
            blocks.append(LogBlock(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: instant_time,
                                                         HeaderKey.SCHEMA: self.schema}, content))
        if len(deletes):
            blocks.append(build_delete_block(keys_table(deletes), instant_time, self.schema))
        data = encode_log_file(blocks)
        log_name = self._log_file_name(fs, instant_time)
        rel_path = f"{partition}/{log_name.format()}"
        base_name = fs.base_file.path.rsplit("/", 1)[-1] if fs.base_file is not None else ""
        # Version 8+ marks a log file CREATE (Hudi 1.x's rollback refuses APPEND markers there), 6 APPEND.
        io_type = IOType.CREATE if self.table.timeline.layout.version == 2 else IOType.APPEND
        create_marker(location, instant_time, partition, log_name.format(), io_type)
        path = Storage.join(location.base_path, rel_path)
        if not location.storage.create_exclusive(path, data):
            raise MetadataTableError(f"{path}: already exists; another writer wrote this metadata log file")
        return WriteStat(
            file_id=fs.file_id, path=rel_path, prev_commit=fs.base_instant, num_writes=len(records),
            num_update_writes=len(records), total_write_bytes=len(data), partition_path=partition,
            file_size_in_bytes=len(data), log_version=log_name.version, log_offset=0, base_file=base_name,
            log_files=[f.name.format() for f in fs.sorted_log_files()] + [log_name.format()])

    # ---- the data table's archival -------------------------------------------------------------------------------
    def archivable(self, instants: list[Instant]) -> list[Instant]:
        """The data-table instants of `instants` that archival may move off the active timeline: those requested (and,
        on layout 2, completed) before the metadata table's latest compaction, none before its first
        (`HoodieTimelineArchiver`: the metadata table's log blocks of an archived instant would no longer count)."""
        compacted = self.table.timeline.filter_by([Action.COMMIT], [State.COMPLETED]).last()
        if compacted is None:
            return []
        bound = compacted.timestamp
        return [i for i in instants
                if i.timestamp < bound and (i.completion_time is None or i.completion_time < bound)]
