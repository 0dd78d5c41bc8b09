"""`HudiTable`: the public read API over one Hudi table (snapshot, time travel, incremental, read-optimized)."""
from __future__ import annotations

import contextlib
import functools
import json
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hudi_engine.column_change import ColumnChange
from hudi_engine.errors import HudiError, SchemaError, TableServiceError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import BaseFileName, is_base_file_name
from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.io.base_file import read_footer
from hudi_engine.location import TableLocation
from hudi_engine.metadata import data_skipping
from hudi_engine.metadata.column_stats import COLUMN_STATS_PARTITION, column_stats_key
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.partition_path import parse_partition_path
from hudi_engine.read_options import InstantOptionError, ReadOptions, plain_path
from hudi_engine.scan_plan import Filter, Filters, ScanPlan, plan_scan
from hudi_engine.schema import META_COLUMNS, add_meta_fields, avro_to_arrow_schema
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import CommitMetadata, Timeline, read_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.layout import layout_for
from hudi_engine.timeline.query_instants import QueryInstants

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from hudi_engine.cdc_query import ChangePlan
    from hudi_engine.config.lock_config import LockConfig
    from hudi_engine.config.write_config import WriteConfig
    from hudi_engine.table_services.archival import ArchivalResult
    from hudi_engine.table_services.clean import CleanResult
    from hudi_engine.table_services.clustering import ClusteringExecutor, ClusteringResult
    from hudi_engine.table_services.compaction import CompactionResult, Executor
    from hudi_engine.table_services.restore import RestoreResult
    from hudi_engine.table_services.savepoint import Savepoint
    from hudi_engine.table_services.upgrade_downgrade import UpgradeDowngradeResult
    from hudi_engine.write.rollback import RollbackResult
    from hudi_engine.write.write_result import WriteResult

# Key generators whose partition path is not the partition column's value (formatted dates, custom layouts).
UNPRUNABLE_KEYGENS = ("TimestampBased", "Custom")
READ_AHEAD = 4  # slices read at once by `scan` (4 threads matched pyarrow's own parallel read on 2 cores)

_OPS = {"=": "__eq__", "==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}


class HudiTable:
    """A Hudi table at a path or URI: table version 6, or 8 and 9 (Hudi 1.x). Loading reads
    `hoodie.properties` and the active timeline only, once: the table's one handle, which the writes and table
    services it runs take as it is (`hudi_engine.meta_client.MetaClient`)."""

    def __init__(self, location: TableLocation, config: TableConfig, timeline: Timeline) -> None:
        self.location = location
        self.config = config
        self._metadata: dict[Instant, CommitMetadata] = {}  # completed instants' files never change
        self.timeline = timeline

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    @timeline.setter
    def timeline(self, timeline: Timeline) -> None:
        """A newer listing (`reload_timeline`, or the one a commit left, `WriteResult.timeline`): what was read from
        the old one is forgotten, but completed instants' metadata (their files never change)."""
        self._timeline = timeline
        self._slicing = slicing_for(timeline)
        self._metadata_table_read: MetadataTable | bool | None = None  # not loaded yet (None), none to use (False)
        self.query_instants = QueryInstants(self.config, timeline)  # its history commits read once
        self.__dict__.pop("_cleaned_base_files", None)  # the cached property, of the old listing's cleans

    @staticmethod
    def load(table: "str | TableLocation") -> "HudiTable":
        """The table at a path, a URI or a `TableLocation`: `hoodie.properties` read once, the active timeline
        listed once (in the layout the config declares)."""
        location = table if isinstance(table, TableLocation) else TableLocation.of(str(table))
        config = TableConfig.load(location)
        if config.base_file_format != "PARQUET":
            raise HudiError(
                f"table {config.name!r} ({location.base_path}): base file format {config.base_file_format} "
                f"(hoodie.table.base.file.format) is not supported; this engine reads PARQUET base files only. "
                f"Read it with Hudi or hudi-rs, or rewrite it as a PARQUET table."
            )
        return HudiTable(location, config, Timeline.load(location, layout_for(config)))

    @staticmethod
    def parse_read_options(options: "Mapping[str, str]", fallback_path: str | None = None) -> ReadOptions:
        """`ReadOptions.parse`, with an instant that does not parse reported against the table (the `path` option's,
        else `fallback_path`): its name, path and instants, read only then."""
        try:
            return ReadOptions.parse(options)
        except InstantOptionError as e:
            path = plain_path({str(k).lower(): v for k, v in options.items()}.get("path")) or fallback_path
            if path is None:
                raise
            table = HudiTable.load(path)
            raise HudiError(f"table {table.config.name!r} ({table.location.base_path}): {e}. "
                            f"Available: {table.query_instants.available()}") from None

    def reload(self) -> "HudiTable":
        """The table as it is now: `hoodie.properties` read and the timeline listed again."""
        return HudiTable.load(self.location)

    def reload_timeline(self) -> Timeline:
        """List the active timeline again (after this process or another writer changed it)."""
        self.timeline = self.timeline.reload()
        return self.timeline

    # The parts of `location`, read-only, for callers of the public API (docs/python-api.md); the engine's own
    # code names `location`.
    @property
    def storage(self) -> Storage:
        return self.location.storage

    @property
    def base_path(self) -> str:
        return self.location.base_path

    @property
    def is_mor(self) -> bool:
        return self.config.table_type == "MERGE_ON_READ"

    @property
    def storage_uri(self) -> str:
        """Where tasks reopen the table: the URI for remote stores, the path for local ones."""
        return self.location.uri

    # ---- maintenance --------------------------------------------------------------------------------------
    def compact(self, *, options: "Mapping[str, Any] | WriteConfig | None" = None,
                executor: "Executor | None" = None) -> "CompactionResult | None":
        """Compact this MOR table now: finish pending compactions, then compact every file group with log files.
        `executor` runs the plan's operations (`hudi_engine.spark.spark_executor(spark)` spreads them over Spark
        tasks, one per file group; default: in this process). Returns the last compaction, None if none ran."""
        from hudi_engine.table_services.runner import compact_now

        self._check_writable("compact")
        config = _config(options)
        _metadata_off(self.location, config, "compaction")
        with self._service_lock(config.lock) as (table, timeline):
            done = compact_now(self.location, config, executor, table=table, timeline=timeline)
        return done[-1] if done else None

    def cluster(self, *, options: "Mapping[str, Any] | WriteConfig | None" = None, op: str = "scheduleAndExecute",
                instant: str | None = None, executor: "ClusteringExecutor | None" = None) -> "ClusteringResult | None":
        """Cluster this table now (docs/clustering.md): `op` 'schedule' plans small file slices into groups
        (`hoodie.clustering.plan.strategy.*`), 'execute' runs the pending clustering `instant` (default: the oldest),
        'scheduleAndExecute' both. `executor` runs the input groups (`hudi_engine.spark.clustering_executor(spark)`:
        one Spark task per group; default: in this process). The result names the instant and the replaced and new
        file ids; None when there was nothing to do."""
        from hudi_engine.table_services.clustering import cluster_now

        self._check_writable("cluster")
        config = _config(options)
        _metadata_off(self.location, config, "clustering")
        with self._service_lock(config.lock):
            return cluster_now(self.location, config, op=op, instant=instant, execute=executor)

    def clean(self, *, options: "Mapping[str, Any] | WriteConfig | None" = None) -> "CleanResult | None":
        """Delete file slices no retained instant reads (`hoodie.cleaner.*`); None when nothing was deleted."""
        from hudi_engine.table_services.clean import clean

        self._check_writable("clean")
        config = _config(options)
        _metadata_off(self.location, config, "clean")
        with self._service_lock(config.lock) as (table, timeline):
            return clean(self.location, config.clean, config.lock, table=table, timeline=timeline,
                         metadata_max_delta_commits=config.metadata_compact_max_delta_commits)

    def archive(self, *, options: "Mapping[str, Any] | WriteConfig | None" = None) -> "ArchivalResult | None":
        """Move old instants off the active timeline into `.hoodie/archived/` (table version 6) or the LSM timeline
        history `.hoodie/timeline/history/` (versions 8 and 9) (`hoodie.keep.min.commits` /
        `hoodie.keep.max.commits`), as Hudi's archiver does; None when nothing is due."""
        from hudi_engine.table_services.archival import archive

        self._check_writable("archive")
        config = _config(options)
        _metadata_off(self.location, config, "archival")
        with self._service_lock(config.lock) as (table, timeline):
            return archive(self.location, config.archival, max_delta_commits=config.compaction.max_delta_commits,
                           lock=config.lock, table=table, timeline=timeline)

    def rollback(self, instant: str | None = None, *, use_command_blocks: bool = False,
                 options: "Mapping[str, Any] | WriteConfig | None" = None) -> "RollbackResult":
        """Roll back a write: `instant` None is the latest completed commit (as Hudi's CLI `commit rollback`);
        a pending instant is rolled back as a failed write; any other completed one is refused (newer data may
        depend on it). Data files are deleted or neutralised by command blocks, and a rollback instant recorded."""
        from hudi_engine.metadata.writer import keep_through_rollback
        from hudi_engine.table_services.clean import check_rollback_keeps_previous_versions
        from hudi_engine.write.rollback import rollback_completed, rollback_instant

        self._check_writable("roll back")
        with self._service_lock(_config(options).lock) as (_, timeline):
            pending = [i for i in timeline.instants_at(instant) if not i.is_completed] if instant else []
            metadata = keep_through_rollback(self.location)
            if pending:
                return rollback_instant(self.location, pending[0], use_command_blocks=use_command_blocks,
                                        metadata=metadata)
            check_rollback_keeps_previous_versions(self.location)
            return rollback_completed(self.location, instant, use_command_blocks=use_command_blocks,
                                      metadata=metadata)

    def truncate(self) -> None:
        """Empty the table as Hudi's TRUNCATE TABLE and `truncate_table` do: its folder deleted, data and timeline,
        and the table made again from its hoodie.properties (no instant; the history is gone). Its create schema
        becomes the table's latest schema: truncating removes rows, not the columns ALTER TABLE added (Hudi re-creates
        the table with the old create schema and so loses those columns). Afterwards this handle is the empty table."""
        from hudi_engine.schema import schema_to_json, to_create_schema
        from hudi_engine.table_config import CREATE_SCHEMA
        from hudi_engine.write.commit import create_table

        current = HudiTable.load(self.location)  # as it is now: this handle may predate a rollback or a commit
        # The metadata table goes with the folder: the new table must not list its partitions (Java would look for it).
        config, latest = current.config.without_metadata_table(), current.timeline.latest_schema()
        if latest is not None:
            config = config.with_props({CREATE_SCHEMA: schema_to_json(to_create_schema(latest))})
        self.storage.delete_dir(self.base_path)
        create_table(self.location, config)
        fresh = HudiTable.load(self.location)
        self.config, self.timeline = fresh.config, fresh.timeline

    def savepoint(self, instant: str | None = None, *, user: str = "", comment: str = "",
                  options: "Mapping[str, Any] | WriteConfig | None" = None) -> "Savepoint":
        """Savepoint a completed commit (default: the latest), as Hudi's `savepoint` action: its files are kept by
        cleaning and archival stops before it, so the table can be restored to it (`restore`). Refused for an
        instant that is not a completed commit, one cleaning may have removed files of, one already savepointed,
        and on MERGE_ON_READ while a compaction is pending."""
        from hudi_engine.table_services.savepoint import create_savepoint

        self._check_writable("savepoint")
        with self._service_lock(_config(options).lock, changes_files=False) as (config, timeline):
            done = create_savepoint(HudiTable(self.location, config, timeline), instant, user=user, comment=comment)
        self.timeline = self.timeline.reload()
        return done

    def delete_savepoint(self, instant: str, *, options: "Mapping[str, Any] | WriteConfig | None" = None) -> None:
        """Delete the savepoint of `instant`: cleaning and archival may then remove what it kept."""
        from hudi_engine.table_services.savepoint import delete_savepoint

        self._check_writable("delete a savepoint of")
        with self._service_lock(_config(options).lock, changes_files=False) as (config, timeline):
            delete_savepoint(HudiTable(self.location, config, timeline), str(instant))
        self.timeline = self.timeline.reload()

    def savepoints(self) -> "list[Savepoint]":
        """The completed savepoints, oldest first (the instants a restore can always go back to)."""
        from hudi_engine.table_services.savepoint import savepoints

        return savepoints(self.timeline)

    def restore(self, instant: str, *, options: "Mapping[str, Any] | WriteConfig | None" = None) -> "RestoreResult":
        """Restore the table to `instant` (a savepoint, or a completed commit cleaning kept whole), as Hudi's restore:
        one `restore` instant that rolls back every instant after it, newest first, completed and pending, data and
        table services. A restore a crash left pending is finished by restoring to the same instant again.
        Afterwards this object is the table as restored."""
        from hudi_engine.table_services.restore import check_restorable, pending_restore, restore, restore_message

        instant = str(instant)
        self._check_writable("restore", restoring=True)
        with self._service_lock(_config(options).lock, restoring=True) as (config, timeline):
            table = HudiTable(self.location, config, timeline)
            if pending_restore(timeline) is None:
                check_restorable(table, instant)
                try:  # the lookup window aside, a clean may have deleted a version the instant reads
                    table.latest_file_slices(Visibility.of(timeline, instant))
                except HudiError as e:
                    raise TableServiceError(f"table {config.name!r} ({self.location.base_path}): cannot restore to "
                                            f"{instant}: {e}. Can be restored: {restore_message(timeline)}") from None
            done = restore(table, instant)
        self.timeline = self.timeline.reload()
        return done

    def upgrade(self, to_version: int | str, *,
                options: "Mapping[str, Any] | WriteConfig | None" = None) -> "UpgradeDowngradeResult":
        """Upgrade this table to table version `to_version` (8 or 9; or Hudi's names EIGHT, NINE) as Hudi 1.2's
        UpgradeDowngrade does (docs/table-features.md, Changing a table's version): failed writes rolled back, a
        MERGE_ON_READ table compacted, the timeline and archived timeline moved to layout 2, `hoodie.properties`
        saved last. A table at `to_version` already is left as it is. Afterwards this object is the table upgraded."""
        return self._change_version(to_version, options, upgrade=True)

    def downgrade(self, to_version: int | str, *,
                  options: "Mapping[str, Any] | WriteConfig | None" = None) -> "UpgradeDowngradeResult":
        """Downgrade this table to table version `to_version` (6 or 8; or SIX, EIGHT) as Hudi 1.2 does: the reverse
        of `upgrade`. Afterwards this object is the table downgraded."""
        return self._change_version(to_version, options, upgrade=False)

    def _change_version(self, to_version: int | str, options: "Mapping[str, Any] | WriteConfig | None", *,
                        upgrade: bool) -> "UpgradeDowngradeResult":
        from hudi_engine.table_services.upgrade_downgrade import parse_version, upgrade_downgrade

        target = parse_version(to_version)
        current = TableConfig.load(self.location).version
        if (target < current) if upgrade else (target > current):
            verb, other = ("upgrade", "downgrade") if upgrade else ("downgrade", "upgrade")
            raise TableServiceError(f"table {self.config.name!r} ({self.base_path}) is of version {current}: cannot "
                                    f"{verb} it to {target}; use {other}({target})")
        self._check_writable("change the table version of")
        done = upgrade_downgrade(self.location, target, _config(options))
        fresh = HudiTable.load(self.location)
        self.config, self.timeline = fresh.config, fresh.timeline
        return done

    # ---- writes -------------------------------------------------------------------------------------------
    def write(self, data: pa.Table, options: "Mapping[str, Any] | WriteConfig", *,
              parallelism: int = 1) -> "WriteResult":
        """Write `data` (Arrow) into this table with Hudi's option keys, without Spark (`write_table`, through the one
        write pipeline: its checks, transaction and table services); this table's config and timeline are the ones
        the write checks against, not read again. Afterwards this object is the table as the commit left it (its
        timeline), so a next write or read needs no reload. Spark DataFrames: `hudi_engine.spark.write(df, path,
        options, table=this)`."""
        from hudi_engine.write_pipeline import write_table

        result = write_table(data, self.storage_uri, options, parallelism=parallelism, loaded=self)
        self.timeline = result.timeline if result.timeline is not None else self.timeline.reload()
        return result

    def delete_partitions(self, partitions: "Iterable[str]", *,
                          options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """Hudi's delete_partition: one replacecommit (operation DELETE_PARTITION) replacing every file group of
        `partitions` (partition paths, `*` wildcards as Hudi's), writing no file; readers stop seeing them, time
        travel before it still does. A files-only metadata table is kept: the partitions are marked deleted in its
        partition list, as Hudi does.
        Afterwards this object is the table as the commit left it."""
        from hudi_engine.write_pipeline import delete_partitions

        result = delete_partitions(self, partitions, _config(options))
        self.timeline = result.timeline if result.timeline is not None else self.timeline.reload()
        return result

    def rename_column(self, column: str, new_name: str, *,
                      options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE RENAME COLUMN under Hudi's schema evolution on read (`options` must set
        hoodie.schema.on.read.enable=true): one ALTER_SCHEMA commit, no data rewritten (`column_change`). A struct
        member is named by its full name (`s.a`), as Hudi names it, here and in the other changes."""
        return self._alter(ColumnChange.rename(column, new_name), options)

    def drop_columns(self, columns: "Iterable[str]", *,
                     options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE DROP COLUMN under Hudi's schema evolution on read, as `rename_column`."""
        return self._alter(ColumnChange.drop(list(columns)), options)

    def alter_column_type(self, column: str, new_type: pa.DataType, *,
                          options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE ALTER COLUMN ... TYPE (Hudi's allowed type changes) under Hudi's schema evolution on read, as
        `rename_column`."""
        return self._alter(ColumnChange.retype(column, new_type), options)

    def move_column(self, column: str, after: str | None, *,
                    options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE ALTER COLUMN `column` AFTER `after` under Hudi's schema evolution on read, as `rename_column`:
        the commit's schema and internal schema (every id kept) take the new order, which every reader returns.
        `after="_hoodie_file_name"` makes it the first data column; None (FIRST) is refused, as Hudi refuses it for a
        top-level column."""
        return self._alter(ColumnChange.move(column, after), options)

    def add_column(self, column: str, data_type: pa.DataType, *, after: str | None = None,
                   options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE ADD COLUMNS (`column` `data_type` [AFTER `after`]) under Hudi's schema evolution on read, as
        `rename_column`: a new optional column, or a new member of a struct column (`column="s.c"`, `after` a
        sibling), with the next id; no data rewritten (rows written before read it as null)."""
        return self._alter(ColumnChange.add(column, data_type, after), options)

    def add_columns(self, columns: "Sequence[tuple[str, pa.DataType, str | None]]", *,
                    options: "Mapping[str, Any] | WriteConfig | None" = None) -> "WriteResult":
        """ALTER TABLE ADD COLUMNS (`c1` `t1` [AFTER `a1`], ...): several columns or struct members (`s.c`) of
        (name, type, AFTER column or None) in one commit, as `add_column` adds one; ids in the statement's order."""
        return self._alter(ColumnChange.add_all(list(columns)), options)

    def _alter(self, change: ColumnChange, options: "Mapping[str, Any] | WriteConfig | None") -> "WriteResult":
        from hudi_engine.write_pipeline import alter_columns

        result = alter_columns(self, change, _config(options))
        self.timeline = result.timeline if result.timeline is not None else self.timeline.reload()
        return result

    @contextlib.contextmanager
    def _service_lock(self, lock: "LockConfig", *, restoring: bool = False,
                      changes_files: bool = True) -> Iterator[tuple[TableConfig, Timeline]]:
        """The table lock for a service this table runs, taken after `_check_writable` checked this handle's config
        and timeline (so the lock does not check them again); yields the config and timeline read again under it,
        checked, which the service plans from: another writer may have changed the table since this handle loaded it
        (a commit, or a Java writer's upgrade to a newer table version and timeline layout). `changes_files` False
        (a savepoint, which Hudi's metadata table does not record) keeps the metadata table, which every service that
        changes files disables (`table_services.service_lock`)."""
        from hudi_engine.table_features import check_writable
        from hudi_engine.table_services import held_by_caller, service_lock
        from hudi_engine.write.lock import table_lock

        taken = service_lock(self.location, lock, table=self.config, timeline=self.timeline, checked=True) \
            if changes_files else _both(table_lock(self.location, lock, table_name=self.config.name),
                                         held_by_caller(self.location))
        with taken:
            table = TableConfig.load(self.location)
            timeline = Timeline.load(self.location, layout_for(table))
            check_writable(self.location, table, _unless_restoring(timeline, restoring),
                           action="write to it or run a table service on it")
            yield table, timeline

    def _check_writable(self, action: str, *, restoring: bool = False) -> None:
        """Refuse a table property or state this engine does not honour (table_features), before the service takes
        the lock; under the lock only the table as read again is checked (`_service_lock`). `restoring`: a pending
        restore is not refused (the restore finishes it)."""
        from hudi_engine.table_features import check_writable

        check_writable(self.location, self.config, _unless_restoring(self.timeline, restoring), action=action)

    # ---- schema -------------------------------------------------------------------------------------------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """The commit metadata of a completed commit-like instant, read once per `HudiTable`."""
        meta = self._metadata.get(instant)
        if meta is None:
            meta = self._metadata[instant] = self.timeline.commit_metadata(instant)
        return meta

    def avro_schema(self, as_of: str | None = None) -> dict | None:
        """The writer schema (no meta fields) of the latest commit up to `as_of` that recorded one."""
        for instant in reversed(self.timeline.completed_commits()):
            if as_of is not None and instant.timestamp > as_of:
                continue
            schema = self.commit_metadata(instant).extra_metadata.get("schema")
            if schema:
                return json.loads(schema)
        return self.config.create_schema

    def schema(self, as_of: str | None = None) -> pa.Schema:
        """The Arrow schema of the table's rows, the five meta columns first.

        A table written with `hoodie.populate.meta.fields=false` holds only nulls there: its rows have no meta
        columns (as hudi-rs reads it); record keys then come from the key generator.
        """
        schema = self._schema_with_meta(as_of)
        if not self.config.populate_meta_fields:
            schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        return schema

    def _schema_with_meta(self, as_of: str | None) -> pa.Schema:
        avro = self.avro_schema(as_of)
        if avro is not None:
            return avro_to_arrow_schema(add_meta_fields(avro))
        for s in self.latest_file_slices(Visibility.of(self.timeline, as_of)):
            if s.base_file is not None:
                return read_footer(self.location.storage, s.base_file.path).schema
        return pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])

    # ---- file slices --------------------------------------------------------------------------------------
    def file_slices(self, as_of: str | None = None, filters: Filters = None) -> list[FileSlice]:
        """The latest visible file slice of every file group as of `as_of`, after partition pruning (and pruning
        by a lower bound on `_hoodie_commit_time` in `filters`)."""
        return list(self.plan_scan(ReadOptions(as_of=as_of), filters=filters).slices)

    def plan_scan(self, query: ReadOptions | None = None, *, filters: Filters = None) -> ScanPlan:
        """What `query` (default: the latest snapshot) reads: `hudi_engine.scan_plan.plan_scan`."""
        return plan_scan(self, query, filters=filters)

    # ---- instants a query names ---------------------------------------------------------------------------
    # Checked by `query_instants` (hudi_engine.timeline.query_instants), made once per timeline listing; these keep
    # the names callers of HudiTable use.
    def available(self) -> str:
        """What instants a query can name, for error messages (`QueryInstants.available`)."""
        return self.query_instants.available()

    def check_instant(self, value: str | None, what: str, *, range_end: bool = False) -> str | None:
        """`value` as an instant time a read may name (`QueryInstants.check_instant`)."""
        return self.query_instants.check_instant(value, what, range_end=range_end)

    def check_range(self, start: str, end: str | None, *, archived_begin: bool = False) -> tuple[str, str | None]:
        """(start, end] of an incremental read, checked (`QueryInstants.check_range`)."""
        return self.query_instants.check_range(start, end, archived_begin=archived_begin)

    def check_time_travel(self, as_of: str) -> None:
        """Refuse time travel as Hudi does (`QueryInstants.check_time_travel`)."""
        self.query_instants.check_time_travel(as_of)

    def incremental_commits(self, start_instant: str, end_instant: str | None = None) -> list[Instant]:
        """Completed commit-like instants in (start, end] (`QueryInstants.incremental_commits`)."""
        return self.query_instants.incremental_commits(start_instant, end_instant)

    def history_commits(self) -> list[Instant]:
        """Timeline layout 2: the commits archival moved to the LSM history (`QueryInstants.history_commits`)."""
        return self.query_instants.history_commits()

    def incremental_end(self, start_instant: str, end_instant: str | None = None) -> str | None:
        """The instant an incremental read's slices are taken as of (`QueryInstants.incremental_end`)."""
        return self.query_instants.incremental_end(start_instant, end_instant)

    @functools.cached_property
    def _cleaned_base_files(self) -> dict[tuple[str, str], list[str]]:
        """(partition, file id) -> instants of the base files the active timeline's cleans deleted."""
        out: dict[tuple[str, str], list[str]] = {}
        for clean in self.timeline.filter_by([Action.CLEAN], [State.COMPLETED]):
            data = self.timeline.read_content(clean)
            if not data:
                continue
            meta = read_avro_metadata(data, file_name=self.timeline.path_of(clean))
            for partition, stats in (meta.get("partitionMetadata") or {}).items():
                for deleted in stats.get("successDeleteFiles") or []:
                    name = deleted.rsplit("/", 1)[-1]  # clean metadata version 1 holds paths, version 2 names
                    if is_base_file_name(name):
                        base = BaseFileName.parse(name)
                        out.setdefault((partition, base.file_id), []).append(base.instant_time)
        return out

    def _check_not_cleaned(self, view: FileSystemView, as_of: str) -> None:
        """Refuse a query as of an instant whose file versions cleaning deleted: a file group whose version at D
        is gone reads wrong as of any instant from D up to its next version still there."""
        cleaned = self._cleaned_base_files
        if not cleaned:
            return
        earliest_readable, broken = None, None
        for group in view.file_groups():
            deleted = cleaned.get((group.partition_path, group.file_id))
            if not deleted:
                continue
            kept = sorted(b for b, s in group.slices.items() if s.base_file is not None)
            for d in deleted:
                following = next((k for k in kept if k > d), None)
                if following is None:
                    continue
                earliest_readable = max(earliest_readable or following, following)
                if d <= as_of < following:
                    broken = broken or (group, d)
        if broken is not None:
            group, d = broken
            latest = self.timeline.completed_commits().last()
            raise HudiError(
                f"table {self.config.name!r} ({self.location.base_path}): instant {as_of} was cleaned: the version of "
                f"file group {group.partition_path + '/' if group.partition_path else ''}{group.file_id} written at "
                f"{d}, which a read as of {as_of} needs, was deleted. Available: instants from {earliest_readable} "
                f"to {latest.timestamp if latest else earliest_readable}"
            )

    def latest_file_slices(self, vis: Visibility, filters: Filters = None,
                           schema: pa.Schema | None = None) -> list[FileSlice]:
        """The latest slice `vis` sees of every file group, listed from storage: only the partitions `filters`
        may match (`schema`: the types of the partition columns), refused when cleaning deleted a version
        a read as of `vis.as_of` needs. The building block of `hudi_engine.scan_plan`."""
        prune = self._partition_pruner(filters, schema) if filters is not None else None
        # A read as of an earlier instant lists storage: the metadata table's partition list drops a partition
        # delete_partition replaced, whose files such a read still needs (they stay until cleaned).
        metadata = self._metadata_table() if vis.as_of is None else None
        view = None
        if metadata is not None:  # Hudi's readers list files from the metadata table: no LIST call on storage
            try:
                listing = metadata.read_files_partition().listing()
                view = FileSystemView.from_listing(
                    self.location, {p: f for p, f in listing.items() if prune is None or prune(p)}, self._slicing)
            except HudiError:
                view = None  # one this engine cannot read: list storage
        if view is None:
            view = FileSystemView.load(self.location, prune, self._slicing)
        if vis.as_of is not None:
            self._check_not_cleaned(view, vis.as_of)
        return view.latest_file_slices(vis)

    def _metadata_table(self) -> MetadataTable | None:
        """The table's metadata table when readers may list files from it (it lists `files` and holds the latest
        completed action: `MetadataTable.in_sync`), else None; loaded once per HudiTable (one timeline)."""
        if not self.config.is_metadata_table_enabled:
            return None
        if self._metadata_table_read is None:
            try:
                table = MetadataTable.load(self.location, self.config, self.timeline)
                self._metadata_table_read = table if table.in_sync() else False
            except HudiError:
                self._metadata_table_read = False
        return self._metadata_table_read if isinstance(self._metadata_table_read, MetadataTable) else None

    def skip_by_column_stats(self, slices: list[FileSlice], filters: Sequence[Filter],
                             schema: pa.Schema) -> list[FileSlice]:
        """`slices` without those the (column, op, value) `filters` rule out by the metadata table's column stats
        (`hudi_engine.metadata.data_skipping`); all of them without column stats."""
        if not filters or COLUMN_STATS_PARTITION not in self.config.metadata_partitions:
            return slices
        metadata = self._metadata_table()
        wanted = [f for f in filters if len(f) == 3 and f[0] in schema.names]
        if metadata is None or not wanted:
            return slices
        columns = sorted({f[0] for f in wanted})
        keys = {column_stats_key(s.partition_path, f.path.rsplit("/", 1)[-1], c): None
                for s in slices for f in ([s.base_file] if s.base_file else []) + s.log_files for c in columns}
        try:
            found = metadata.read_keys(COLUMN_STATS_PARTITION, list(keys))
        except HudiError:
            return slices
        stats = {(r.stats.file_name, r.stats.column_name): r.stats for r in found.values()}  # type: ignore[attr-defined]
        return data_skipping.skip(slices, wanted, schema, stats)

    def _partition_pruner(self, filters: Filters, schema: pa.Schema | None):
        fields = self.config.partition_fields
        keygen = self.config.key_generator_class or ""
        if not fields or any(k in keygen for k in UNPRUNABLE_KEYGENS):
            return None  # no partitions, or paths that are not the columns' values: never prune
        if not isinstance(filters, pc.Expression):  # (column, op, value) filters: those on partition columns
            filters = [f for f in filters or () if len(f) == 3 and f[0] in fields]
            if not filters:
                return None
        expr = _to_expression(filters)
        schema = schema or self.schema()
        types = {f: (schema.field(f).type if f in schema.names else pa.string()) for f in fields}

        def keep(partition: str) -> bool:
            values = parse_partition_path(partition, fields, hive_style=self.config.hive_style_partitioning,
                                          url_encode=self.config.url_encode_partitioning)
            try:
                row = pa.table({f: pa.array([values.get(f)], pa.string()).cast(types[f]) for f in fields})
                return ds.dataset(row).to_table(filter=expr).num_rows > 0
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, KeyError):
                return True  # the filter names other columns, or the value does not parse: keep the partition
        return keep

    # ---- reads ---------------------------------------------------------------------------------------------
    def read_snapshot(self, as_of: str | None = None, columns: list[str] | None = None,
                      filters: Filters = None, read_optimized: bool = False) -> pa.Table:
        """The table's rows as of `as_of` (default: latest). `read_optimized` reads MOR base files only."""
        plan = self.plan_scan(_snapshot(as_of, read_optimized), filters=filters)
        return _concat(list(_read(plan, columns, filters)), _project(plan.schema, columns))

    def scan(self, as_of: str | None = None, columns: list[str] | None = None, filters: Filters = None,
             read_optimized: bool = False) -> Iterator[pa.Table]:
        """The rows one file slice at a time, in order. Up to `READ_AHEAD` slices are read at once on threads
        (pyarrow and the merge release the GIL), so memory is bounded by that many of the largest slices."""
        return _read(self.plan_scan(_snapshot(as_of, read_optimized), filters=filters), columns, filters)

    def read_incremental(self, start_instant: str, end_instant: str | None = None,
                         columns: list[str] | None = None, filters: Filters = None) -> pa.Table:
        """Records written by commits in (start_instant, end_instant], as of end_instant (deletes not shown). The
        bounds are requested times in timeline layout 1 and completion times in layout 2 (Hudi 1.x)."""
        query = ReadOptions(query_type="incremental", begin=str(start_instant),
                            end=None if end_instant is None else str(end_instant))
        plan = self.plan_scan(query, filters=filters)
        return _concat(list(_read(plan, columns, filters)), _project(plan.schema, columns))

    def plan_changes(self, start_instant: str, end_instant: str | None = None, *,
                     images: str = "json") -> "ChangePlan":
        """What the CDC query of (start_instant, end_instant] reads (`hudi_engine.cdc_query.plan_changes`): its
        range fixed (end: the latest commit) and one split per file group and commit; refusals raised here."""
        from hudi_engine.cdc_query import plan_changes

        return plan_changes(self, str(start_instant), None if end_instant is None else str(end_instant),
                            images=images, table_uri=self.storage_uri)

    def read_changes(self, start_instant: str, end_instant: str | None = None, *,
                     images: str = "json") -> pa.Table:
        """Every change the commits in (start_instant, end_instant] made, deletes included: Hudi's CDC query
        (`hudi_engine.cdc_query`) on a table created with `hoodie.table.cdc.enabled=true`. Rows `op` (i, u, d),
        `ts_ms` (the commit), `before` and `after` (the data columns, as JSON text or, `images="struct"`, structs)."""
        from hudi_engine.cdc_query import read_changes

        return read_changes(self.plan_changes(start_instant, end_instant, images=images))

    def __repr__(self) -> str:
        return f"HudiTable({self.config.name!r}, {self.config.table_type}, {self.location.base_path!r})"


@contextlib.contextmanager
def _both(first: contextlib.AbstractContextManager, second: contextlib.AbstractContextManager) -> Iterator[None]:
    with first, second:
        yield


def _unless_restoring(timeline: Timeline, restoring: bool) -> Timeline:
    """The timeline a restore checks: its pending restore is the one it finishes."""
    return timeline.filter(lambda i: i.action is not Action.RESTORE) if restoring else timeline


def _snapshot(as_of: str | None, read_optimized: bool) -> ReadOptions:
    return ReadOptions(query_type="read_optimized" if read_optimized else "snapshot",
                       as_of=None if as_of is None else str(as_of))


def _read(plan: ScanPlan, columns: list[str] | None, filters: Filters) -> Iterator[pa.Table]:
    """The rows of the plan's slices the query keeps and `filters` match, one slice at a time, in order; up to
    `READ_AHEAD` slices read at once on threads."""
    schema = plan.schema
    if columns is not None:
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise SchemaError(f"table {plan.config.name}: no column {missing} (columns: {schema.names})")
    expr = _to_expression(filters) if filters is not None else None
    read_cols = columns
    if expr is not None and columns is not None:
        read_cols = list(dict.fromkeys([*columns, *_expression_fields(filters, schema)]))
    ctx = plan.read_context()

    def read(s: FileSlice) -> pa.Table:
        t = plan.read_slice(s, read_cols, context=ctx)
        if expr is not None:
            t = t.filter(expr)
        return t.select(columns) if columns is not None else t

    todo = iter(plan.slices)
    with ThreadPoolExecutor(max_workers=READ_AHEAD) as pool:
        pending = deque(pool.submit(read, s) for s in islice(todo, READ_AHEAD))
        while pending:
            t = pending.popleft().result()
            for s in islice(todo, 1):
                pending.append(pool.submit(read, s))
            yield t


def _project(schema: pa.Schema, columns: list[str] | None) -> pa.Schema:
    return schema if columns is None else pa.schema([schema.field(c) for c in columns])


def _concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _to_expression(filters: Filters) -> pc.Expression:
    if isinstance(filters, pc.Expression):
        return filters
    expr = None
    for f in filters or ():
        if len(f) != 3:
            raise HudiError(f"filter {f!r}: expected (column, op, value)")
        col, op, value = f
        field = pc.field(col)
        op = op.lower() if isinstance(op, str) else op
        if op in _OPS:
            e = getattr(field, _OPS[op])(value)
        elif op == "in":
            e = field.isin(list(value))
        elif op == "not in":
            e = ~field.isin(list(value))
        else:
            raise HudiError(f"filter {f!r}: unknown operator {op!r}; expected one of {sorted(_OPS)} or in / not in")
        expr = e if expr is None else expr & e
    return expr if expr is not None else pc.scalar(True)


def _expression_fields(filters: Filters, schema: pa.Schema) -> list[str]:
    if filters is None:
        return []
    if isinstance(filters, pc.Expression):
        text = str(filters)
        return [n for n in schema.names if n in text]
    return [f[0] for f in filters]


def _metadata_off(location: TableLocation, config: "WriteConfig", action: str) -> None:
    """`hoodie.metadata.enable=false` given to a table service deletes the table's metadata table first, as Hudi's
    write client does when it starts with the metadata table off (a write does the same: `WriteClient`)."""
    from hudi_engine.config import keys as K

    if config.metadata_enabled:
        return
    table = TableConfig.load(location)
    if table.metadata_partitions or table.metadata_partitions_inflight:
        table.disable_metadata_table(location, f"the {action} asks for it ({K.METADATA_ENABLE.key}=false)")


def _config(options: "Mapping[str, Any] | WriteConfig | None") -> "WriteConfig":
    from hudi_engine.config.write_config import WriteConfig

    return options if isinstance(options, WriteConfig) else WriteConfig.from_options(options)
