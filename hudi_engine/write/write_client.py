"""The driver side of a write: table checks, the instant, the index's file list, the bucket plan, the commit.

Engine-neutral: the Spark layer (`hudi_engine.spark.writer`) moves records between tasks and calls these
pieces; nothing here sees a record. Config is translated once (`WriteConfig`) and checked against the table's
`hoodie.properties` here, before any data file is written.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudi_engine.config import keys as K
from hudi_engine.config.lock_config import EAGER
from hudi_engine.config.option import ConfigOption
from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.errors import (
    ClusteringUpdateError,
    HudiError,
    MetadataTableError,
    SchemaError,
    TableServiceError,
    WriteError,
)
from hudi_engine.file_group import FileSlice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.internal_schema import LATEST_SCHEMA, ColumnIds, CommitSchema, SchemaHistory
from hudi_engine.location import TableLocation
from hudi_engine.meta_client import MetaClient
from hudi_engine.metadata.column_stats import COLUMN_STATS_PARTITION
from hudi_engine.metadata.index_definitions import is_partitioned_record_index
from hudi_engine.metadata.initialization import (
    drop_record_index,
    drop_stats,
    initialize,
    initialize_record_index,
    initialize_stats,
)
from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
from hudi_engine.metadata.writer import MetadataWriter, keep_or_disable, keep_through_rollback
from hudi_engine.schema import (
    META_COLUMNS,
    add_meta_fields,
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    remove_meta_fields,
)
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import check_writable
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.clustering import REJECT_UPDATES, PendingClustering, resolve_update_strategy
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Instant, State, new_instant_time
from hudi_engine.timeline.layout import layout_for
from hudi_engine.write import commit as commit_protocol
from hudi_engine.write.bucket_assigner import BucketPlan, Counts, MapSidePlan, SliceInfo, plan_buckets
from hudi_engine.write.conflict import TimelineAtStart, check_conflicts
from hudi_engine.write.executor import WriteTask
from hudi_engine.write.heartbeat import Heartbeat
from hudi_engine.write.inflight import InflightInstant
from hudi_engine.write.lock import TableLock, acquire
from hudi_engine.write.lock_providers import require_safe_provider
from hudi_engine.write.partial_update import StoredRows, missing_columns
from hudi_engine.write.rollback import finish_pending_rollbacks, rollback_failed, rollback_instant
from hudi_engine.write.tagging import TagSpec
from hudi_engine.write.write_result import WriteResult

# Hudi: an average record size is trusted only from a commit that wrote more than this share of the small limit.
_RECORD_SIZE_ESTIMATE_THRESHOLD = 0.5
_AVG_SIZE_LOOKBACK = 10
# Folders a one-pass write lists on the driver to route without tags (`untagged_groups`); a table with more is
# tagged in the map tasks, which list only the partitions the write touches.
MAX_LISTED_FOLDERS = 64


@dataclass(frozen=True)
class UntaggedGroups:
    """A one-pass write routed from the driver's listing (`WriteClient.untagged_groups`): each partition's file group
    and task, and the latest slices of every partition listed (an empty list: a folder without any), which the
    write tasks take instead of listing the partitions again (a LIST per partition and task on an object store)."""

    routes: Mapping[str, tuple[str, int]]
    slices: Mapping[str, list[SliceInfo]]


@dataclass
class LoadedTable:
    """A table as the door of a write by path loads it (`table_for_write`): a `MetaClient`."""

    location: TableLocation
    config: TableConfig
    timeline: Timeline


def table_for_write(path: str) -> MetaClient | TableLocation:
    """The door of a write by path (`write_table`, `hudi_engine.spark.write` without a loaded table): the table at
    `path` loaded once, `hoodie.properties` read (its version checked writable before the timeline is listed in the
    layout it declares) and the timeline listed; the `TableLocation` alone when no table is there (the write creates
    it). `WriteClient.open` takes either."""
    location = TableLocation.of(path)
    if not TableConfig.exists(location):
        return location
    config = TableConfig.load(location)
    config.require_writable()  # before the timeline is listed in the layout the config declares
    return LoadedTable(location, config, Timeline.load(location, layout_for(config)))


class WriteClient:
    """One write's driver side over one table: the location, `hoodie.properties` and the timeline, loaded once
    (the caller's `MetaClient`, or `open`) and passed down; the timeline is listed again once under the table lock
    (`transaction`)."""

    def __init__(self, location: TableLocation, config: WriteConfig, table_config: TableConfig,
                 data_schema: pa.Schema, timeline: Timeline | None) -> None:
        """`timeline`: the existing table's, None for a table this write creates."""
        self.location = location
        self.config = config
        self.table_config = table_config
        self.data_schema = data_schema
        self.exists = timeline is not None
        self.timeline = timeline
        self._avg_record_size: int | None = None
        self._pending_clustering: PendingClustering | None = None
        # hoodie.clustering.updates.strategy, resolved at the write's door (`open`)
        self.update_strategy = REJECT_UPDATES
        self.clusterings_to_roll_back: list[str] = []  # rolled back after the commit (`roll_back_clusterings`)

    @property
    def storage_uri(self) -> str:
        """Where tasks reopen the table: the URI for remote stores, the absolute path for local ones."""
        return self.location.uri

    @staticmethod
    def open(table: MetaClient | TableLocation, config: WriteConfig, data_schema: pa.Schema) -> "WriteClient":
        """Check the write against the table (or the new table's config) before anything is written. `table`: the
        existing table as the caller loaded it for this operation (a `HudiTable`, or `table_for_write` at a write's
        door), not read again; a `TableLocation`: where no table is yet, which this write creates."""
        if isinstance(table, TableLocation):
            location, timeline = table, None
            table_config = config.new_table_config(location.base_path)
        else:
            location = table.location
            table_config = table.config
            table_config.require_writable()
            timeline = table.timeline
            check_writable(location, table_config, timeline, action="write")
            config = config.for_table(table_config, location.base_path)
        base_path = location.base_path
        config = config.for_keyless(base_path, table_config.populate_meta_fields)  # keys generated: refusals first
        _check_columns(config, data_schema, base_path)
        strategy = resolve_update_strategy(config.given.get(K.CLUSTERING_UPDATES_STRATEGY.key, ""), base_path)
        client = WriteClient(location, config, table_config, data_schema, timeline)
        client.update_strategy = strategy
        client._check_schema_change()
        # Index partitions this engine does not keep are refused once, under the table lock before the instant
        # starts (`transaction`, through `keep_or_disable`), on the config read there: this one, read before the
        # lock, cannot be trusted after it.
        return client

    def _check_schema_change(self) -> None:
        """A write may add nullable columns and widen types; it may not drop or narrow (checked before writing)."""
        if self.timeline is None or self.config.schema_change is not None or self.config.operation in (
                Operation.DELETE, Operation.INSERT_OVERWRITE_TABLE, Operation.DELETE_PARTITION):
            return  # a new table; an ALTER TABLE (checked itself); a delete carries keys only (a delete_partition
            # none); an overwrite starts afresh
        avro = self.timeline.latest_schema() or self.table_config.create_schema
        if avro is not None:
            old = avro_to_arrow_schema(remove_meta_fields(avro))
            check_schema_change(old, self.data_schema, f"table {self.location.base_path}")

    def _metadata_table(self, timeline: Timeline, *, table_services: bool = False) -> MetadataWriter | None:
        writer = self._metadata_table_writer(timeline, table_services=table_services)
        if writer is not None and writer.partitioned_index:  # a data partition new to the index: the write's min
            writer.new_partition_file_groups = self._record_index_sizing(partitioned=True)["min_file_groups"]
        return writer

    def _metadata_table_writer(self, timeline: Timeline, *, table_services: bool) -> MetadataWriter | None:
        """Hudi's metadata table, under the table lock: the writer that records this write's commit in it when this
        engine can keep it (`hudi_engine.metadata.writer`: a `files` partition only), else None after disabling it
        the way Hudi does (drop the partitions from `hoodie.properties`, then delete `.hoodie/metadata`), before
        anything is written: Java readers list files from it, so files we add would be invisible to them (FORMAT.md,
        Metadata table). `hoodie.metadata.enable=false` given to the write disables it, as in Hudi; `true` (Hudi's
        Spark writers' default, so also when not given) creates one with its `files` partition when the table has
        none this engine keeps (`table_services`): a new table, or an existing one without, as Hudi's writer
        initialises it from a listing. `timeline`: the
        one listed under the lock. hoodie.properties is read again when it listed metadata partitions: a rollback or
        service may have disabled the metadata table since, and another writer changed it. `table_services`: run the
        metadata table's own (its compaction), as Hudi's write client does when a write starts."""
        enable = self.config.metadata_enabled
        stats = self.config.given_value(K.METADATA_COLUMN_STATS)
        record_index = self.config.given_value(K.METADATA_RECORD_INDEX)
        if self.config.index.type is IndexType.RECORD_INDEX:
            # Tagging reads the record index: built when missing, as Hudi's writer turns it on for this index.
            if record_index is False or not enable:
                raise MetadataTableError(
                    f"table {self.location.base_path}: hoodie.index.type=RECORD_INDEX tags with the metadata table's "
                    f"record index, but the write turns it off ({K.METADATA_RECORD_INDEX.key}=false or "
                    f"{K.METADATA_ENABLE.key}=false); remove that, or pick another index")
            record_index = True
        partitioned = self.config.given_value(K.METADATA_PARTITIONED_RECORD_INDEX)
        if self.config.index.type is IndexType.RECORD_LEVEL_INDEX:  # built when missing, as for RECORD_INDEX
            if partitioned is False or not enable:
                raise MetadataTableError(
                    f"table {self.location.base_path}: hoodie.index.type=RECORD_LEVEL_INDEX tags with the metadata "
                    f"table's partitioned record index, but the write turns it off "
                    f"({K.METADATA_PARTITIONED_RECORD_INDEX.key}=false or {K.METADATA_ENABLE.key}=false); remove "
                    "that, or pick another index")
            partitioned = True
        wanted = self._record_index_kind(record_index, partitioned)
        if wanted and table_services and not self.table_config.populate_meta_fields:
            raise MetadataTableError(f"table {self.location.base_path}: a record index needs the meta fields "
                                     f"(hoodie.populate.meta.fields=true); remove {K.METADATA_RECORD_INDEX.key}")
        # On (by default) and missing, or one this engine cannot keep: created when the write starts, as Hudi's
        # initTable does (hudi_engine.metadata.initialization). Column stats and the record index need one.
        create = enable and table_services
        if not (self.table_config.metadata_partitions or self.table_config.metadata_partitions_inflight or create):
            return None
        self.table_config = TableConfig.load(self.location)
        if not enable:
            self.table_config = self.table_config.disable_metadata_table(
                self.location, f"the write asks for it ({K.METADATA_ENABLE.key}=false)")
            return None
        max_delta_commits = self.config.metadata_compact_max_delta_commits
        action = f"the {self.config.operation.value} write"
        writer = None
        if self.table_config.metadata_partitions or self.table_config.metadata_partitions_inflight:
            writer = keep_or_disable(self.location, self.table_config, timeline, action, table_services=table_services,
                                     max_delta_commits=max_delta_commits,
                                     data_commits_retained=self.config.clean.commits_retained)
            if writer is None:
                self.table_config = TableConfig.load(self.location)
        if writer is None and create:
            self.table_config = initialize(self.location, self.table_config, timeline)
            writer = keep_or_disable(self.location, self.table_config, timeline, action)
        if writer is not None and table_services and stats is not None:
            has = COLUMN_STATS_PARTITION in self.table_config.metadata_partitions
            changed = True
            if stats and not has:  # built from the latest slices before the write, as Hudi's initTable does
                self.table_config = initialize_stats(
                    self.location, self.table_config, timeline, writer_schema=self.writer_avro_schema,
                    column_list=K.METADATA_COLUMN_STATS_COLUMNS.parse(
                        self.config.given.get(K.METADATA_COLUMN_STATS_COLUMNS.key, "")),
                    max_columns=K.METADATA_COLUMN_STATS_MAX_COLUMNS.parse(self.config.given.get(
                        K.METADATA_COLUMN_STATS_MAX_COLUMNS.key, K.METADATA_COLUMN_STATS_MAX_COLUMNS.default)))
            elif not stats and has:  # turned off: dropped, as Hudi 1.2 drops it
                self.table_config = drop_stats(self.location, self.table_config)
            else:
                changed = False
            if changed:
                writer = keep_or_disable(self.location, self.table_config, timeline, action)
        if writer is not None and table_services and wanted is not None:
            has = RECORD_INDEX_PARTITION in self.table_config.metadata_partitions
            if wanted and not has:  # built from the latest slices' keys before the write, as Hudi does
                self.table_config = initialize_record_index(
                    self.location, self.table_config, timeline,
                    **self._record_index_sizing(partitioned=wanted == "partitioned"))
            elif not wanted and has:  # turned off: dropped, as Hudi drops it
                self.table_config = drop_record_index(self.location, self.table_config)
            else:
                return writer
            writer = keep_or_disable(self.location, self.table_config, timeline, action)
        return writer

    def _record_index_sizing(self, *, partitioned: bool = False) -> dict[str, Any]:
        """A new record index's file-group sizing, from the write's options (Hudi's defaults); a partitioned one's
        min and max are per data partition."""
        def given(option: ConfigOption[Any]) -> Any:
            value = self.config.given_value(option)
            return option.default if value is None else value
        counts = (K.METADATA_PARTITIONED_RECORD_INDEX_MIN_FILE_GROUPS, K.METADATA_PARTITIONED_RECORD_INDEX_MAX_FILE_GROUPS) \
            if partitioned else (K.METADATA_RECORD_INDEX_MIN_FILE_GROUPS, K.METADATA_RECORD_INDEX_MAX_FILE_GROUPS)
        return {"min_file_groups": given(counts[0]), "max_file_groups": given(counts[1]),
                "max_file_group_size": given(K.METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE),
                "growth_factor": given(K.METADATA_RECORD_INDEX_GROWTH_FACTOR), "partitioned": partitioned}

    def commit_schema(self, timeline: Timeline, instant: str) -> CommitSchema | None:
        """The internal schema the commit of `instant` records (`internal_schema.CommitSchema`): where the table
        has a schema-on-read history (whatever the write's options say: Java's schema-on-read readers need every
        commit in it) or the write is an ALTER TABLE; else None."""
        completed = [i.timestamp for i in timeline.completed_commits()]
        history = SchemaHistory.load(self.location.storage, self.location.meta_path, completed)
        return CommitSchema.of(history, add_meta_fields(self.writer_avro_schema), instant, self.config.schema_change)

    # ---- specs shipped to tasks ------------------------------------------------------------------------------
    @property
    def writer_avro_schema(self) -> dict:
        """The writer schema (no meta fields), in Spark's naming: what goes into the commit and log headers.

        A delete's DataFrame may hold only the key columns: its commit keeps the table's schema."""
        if self.config.operation in (Operation.DELETE, Operation.DELETE_PARTITION) and self.timeline is not None:
            table_schema = self.timeline.latest_schema() or self.table_config.create_schema
            if table_schema is not None:
                return remove_meta_fields(table_schema)
        avro = arrow_to_avro_schema(self.data_schema, self.config.table_name, with_meta=False)
        return self._in_table_order(avro)

    def _in_table_order(self, avro: dict) -> dict:
        """`avro` with the table's columns in the table's order (new ones after them) where the table has a
        schema-on-read history: Hudi's schema-on-read writer reconciles the write's schema with the internal
        schema, so a write whose columns come in another order keeps the order ALTER TABLE gave them."""
        if self.timeline is None or self.config.schema_change is not None:
            return avro
        table_schema = self.timeline.latest_schema()
        if table_schema is None or not SchemaHistory.instants(self.location.storage, self.location.meta_path):
            return avro
        order = {f["name"]: i for i, f in enumerate(remove_meta_fields(table_schema)["fields"])}
        fields = sorted(avro["fields"], key=lambda f: order.get(f["name"], len(order)))  # stable: new ones last
        return avro if fields == avro["fields"] else {**avro, "fields": fields}

    # ---- index and planning ------------------------------------------------------------------------------------
    @property
    def pending_clustering(self) -> PendingClustering:
        """File groups under another writer's pending clustering, read once from the timeline the write plans with
        (reset when the transaction reloads it)."""
        if self._pending_clustering is None:
            self._pending_clustering = PendingClustering.of(self.timeline)
        return self._pending_clustering

    def _latest(self, partitions: list[str] | None) -> list[FileSlice]:
        """The latest committed slices of `partitions` (None: all); none for a new table."""
        if self.timeline is None:
            return []
        wanted = None if partitions is None else set(partitions)
        view = FileSystemView.load(self.location, None if wanted is None else wanted.__contains__)
        return view.latest_file_slices(Visibility.of(self.timeline))

    def index_files(self, partitions: list[str] | None) -> list[tuple[str, str, str]]:
        """(partition, file id, base file path) of the latest base files of `partitions` (None: all)."""
        return [(s.partition_path, s.file_id, s.base_file.path)
                for s in self._latest(partitions) if s.base_file is not None]

    def average_record_size(self) -> int:
        """Bytes per record of recent commits that wrote enough to trust, else the configured estimate."""
        if self._avg_record_size is None:
            self._avg_record_size = self._measure_record_size()
        return self._avg_record_size

    def _measure_record_size(self) -> int:
        if self.timeline is not None:
            threshold = _RECORD_SIZE_ESTIMATE_THRESHOLD * self.config.files.small_file_limit
            for instant in list(reversed(self.timeline.completed_commits()))[:_AVG_SIZE_LOOKBACK]:
                stats = self.timeline.commit_metadata(instant).write_stats()
                written = sum(s.total_write_bytes for s in stats if not s.is_delta)
                records = sum(s.num_writes for s in stats if not s.is_delta)
                if written > threshold and records > 0:
                    return math.ceil(written / records)
        return self.config.files.record_size_estimate

    def write_task(self, instant: str) -> WriteTask:
        """Everything a write task needs, picklable: the config, the instant, the schema, the record size."""
        return WriteTask(
            storage_uri=self.storage_uri, base_path=self.location.base_path, table_props=dict(self.table_config.props),
            config=self.config, instant=instant, writer_avro_schema=self.writer_avro_schema,
            avg_record_size=self.average_record_size(),
            stored=StoredRows.of(self.timeline, self.table_config)
            if self.config.merge.update_columns and self.timeline is not None else None,
            column_ids=self.column_ids(),
        )

    def column_ids(self) -> ColumnIds | None:
        """The schema-on-read history's column ids, which a merge reads a stored base file by (a renamed or dropped
        column); None where the table has none."""
        if self.timeline is None:
            return None
        return ColumnIds.load(self.location.storage, self.location.meta_path,
                              (i.timestamp for i in self.timeline.completed_commits()))

    def _record_index_kind(self, record_index: bool | None, partitioned: bool | None) -> bool | str | None:
        """What the write asks of the record index: True (the global one), "partitioned", False (none: drop the one
        the table has) or None (keep what the table has). Refused before anything is written when the write asks for
        both, or for one while the table has the other (`hoodie.table.metadata.partitions` holds one record_index:
        drop it first with the enable key of the one it is)."""
        config = self.table_config
        has = RECORD_INDEX_PARTITION in config.metadata_partitions
        has_partitioned = has and is_partitioned_record_index(self.location, config)
        if record_index and partitioned:
            raise MetadataTableError(
                f"table {self.location.base_path}: the write asks for the global record index "
                f"({K.METADATA_RECORD_INDEX.key}=true or hoodie.index.type=RECORD_INDEX) and the partitioned one "
                f"({K.METADATA_PARTITIONED_RECORD_INDEX.key}=true or hoodie.index.type=RECORD_LEVEL_INDEX); a table "
                "has one record index: pick one")
        if has and ((record_index and has_partitioned) or (partitioned and not has_partitioned)):
            now, other = ("partitioned", K.METADATA_PARTITIONED_RECORD_INDEX.key) if has_partitioned else \
                ("global", K.METADATA_RECORD_INDEX.key)
            raise MetadataTableError(
                f"table {self.location.base_path}: the write asks for the {'global' if record_index else 'partitioned'}"
                f" record index (its enable key or hoodie.index.type), but the table's record index is the {now} one"
                f"; write with that index type, or drop the index first ({other}=false)")
        if partitioned and config.version < 8:
            raise MetadataTableError(
                f"table {self.location.base_path}: the partitioned record index ({K.METADATA_PARTITIONED_RECORD_INDEX.key}"
                f" or hoodie.index.type=RECORD_LEVEL_INDEX) is Hudi 1.1's, on tables of versions 8 and 9, not "
                f"{config.version}; write with hoodie.write.table.version=9, or use the global record index")
        if has_partitioned:  # only its own key turns the partitioned index off
            return False if partitioned is False else None
        return "partitioned" if partitioned else record_index

    def tag_spec(self, instant: str) -> TagSpec | None:
        """What map tasks need to tag keys; None when no key is looked up (an overwrite, or a BUCKET index on a
        new table: every record is new)."""
        cfg = self.config
        bucket = cfg.index.type is IndexType.BUCKET
        looks_up = self.timeline is not None and not cfg.operation.is_overwrite and \
            (cfg.operation.looks_up_keys or bucket)
        if not looks_up and not bucket:
            return None
        return self._spec(instant, looks_up)

    def listing_spec(self, instant: str) -> TagSpec | None:
        """The table as map tasks list it, whether or not keys are looked up (a one-pass write's inserts look for
        small files there); None for a new table."""
        return self._spec(instant, True) if self.timeline is not None else None

    def _spec(self, instant: str, visible: bool) -> TagSpec:
        cfg = self.config
        return TagSpec(self.storage_uri, self.location.base_path, instant,
                       Visibility.of(self.timeline) if visible and self.timeline is not None else None,
                       cfg.keys, cfg.index.type, cfg.index.bucket_num, cfg.bloom.max_entries,
                       self.table_config.populate_meta_fields, self.pending_clustering.keys())

    def plan(self, counts: Counts, parallelism: int,
             listed: Mapping[str, list[SliceInfo]] | None = None) -> BucketPlan:
        """Buckets for what the tagging pass counted: the touched partitions are listed here, once (`listed`: the
        caller's listing of them, `latest_slices`)."""
        cfg = self.config
        # Updates and deletes of stored records into a file group a pending clustering will replace: after the keys
        # were tagged and before any file is written (BaseSparkCommitActionExecutor.clusteringHandleUpdate).
        self.handle_clustering_updates(counts.updates)
        if cfg.operation.is_overwrite:
            self.pending_clustering.refuse_overwrite(
                None if cfg.operation is Operation.INSERT_OVERWRITE_TABLE else counts.partitions,
                self.location.base_path)
        slices = {} if cfg.operation.is_overwrite else \
            listed if listed is not None else self.latest_slices(counts.partitions)
        return plan_buckets(
            counts, slices, avg_record_size=self.average_record_size(), max_file_size=cfg.files.max_file_size,
            small_file_limit=cfg.files.small_file_limit, pack_small_files=self._packs_small_files,
            parallelism=parallelism, where=self.location.base_path, clustering=self.pending_clustering)

    @property
    def rolls_back_clustering(self) -> bool:
        """SparkAllowUpdateStrategy with hoodie.clustering.rollback.pending.replacecommit.on.conflict, and a pending
        clustering a write's updates may hit: the driver must see the tagged updates before any file is written."""
        return self.update_strategy != REJECT_UPDATES and self.config.clustering.rollback_pending_on_conflict \
            and bool(self.pending_clustering)

    def handle_clustering_updates(self, updated: Iterable[tuple[str, str]]) -> None:
        """Hudi's clusteringHandleUpdate for the tagged file groups `updated`, before any file of the write exists.
        SparkRejectUpdateStrategy: groups under a pending clustering fail the write. SparkAllowUpdateStrategy: the
        updates are written; the clustering's own execution refuses to complete afterwards
        (`table_services.clustering`), unless hoodie.clustering.rollback.pending.replacecommit.on.conflict has each
        requested clustering holding one of them rolled back once this write commits (`roll_back_clusterings`). An
        inflight one (being executed, or a failed execution) is not rolled back under its executor: the write is
        refused."""
        pending = self.pending_clustering
        where = self.location.base_path
        if not pending:
            return
        if self.update_strategy == REJECT_UPDATES:
            pending.refuse_updates(updated, where)
            return
        if not self.config.clustering.rollback_pending_on_conflict:
            return
        hit = sorted({g for g in updated if g in pending})
        if not hit:
            return
        instants = {pending.file_groups[g] for g in hit}
        plans = [p for p in pending.plans if p.instant.timestamp in instants]
        running = [p.instant.timestamp for p in plans if not p.instant.is_requested]
        if running:
            raise ClusteringUpdateError(
                f"table {where}: the write updates file groups of the inflight clustering {', '.join(running)} "
                f"(first: partition {hit[0][0]!r}, file id {hit[0][1]}). With "
                f"{K.CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT.key}=true only a requested clustering is rolled back: an "
                "inflight one may be executing in another process right now. Nothing of this write is in the table. "
                "Let the clustering complete (or roll it back, HudiTable.rollback), then write again")
        self.clusterings_to_roll_back = sorted(instants)

    def roll_back_clusterings(self, committed: Timeline, instant: str) -> Timeline:
        """Roll back the requested clusterings this write's updates hit (`handle_clustering_updates`), under the
        commit's lock, right after the commit: Hudi rolls them back before writing, but a rollback instant is newer
        than the write's and the metadata table takes its delta commits in order, so it goes after. Meanwhile the
        clustering cannot drop the updates: its execution refuses once they are committed. One that is no longer
        requested is left to that refusal. The timeline after them."""
        to_roll_back = [i for ts in self.clusterings_to_roll_back for i in committed.instants_at(ts) if i.is_requested]
        self.clusterings_to_roll_back = []
        if not to_roll_back:
            return committed
        try:
            for clustering in to_roll_back:
                rollback_instant(self.location, clustering, metadata=keep_through_rollback(self.location))
        except HudiError as e:
            raise TableServiceError(
                f"table {self.location.base_path}: the write at {instant} committed, but rolling back the clustering "
                f"{', '.join(i.timestamp for i in to_roll_back)} its updates hit failed ({e}); that clustering now "
                "refuses to complete: roll it back (HudiTable.rollback)", instant=instant,
                service="rollback of a pending clustering") from e
        return committed.reload()

    def map_side_plan(self, parallelism: int) -> MapSidePlan:
        """Bucket choice for a write whose input holds less than one file of records (made in map tasks)."""
        cfg = self.config
        whole_groups = cfg.operation is Operation.UPSERT or (cfg.is_mor and cfg.operation is Operation.DELETE)
        return MapSidePlan(parallelism, self._packs_small_files, cfg.files.small_file_limit, cfg.files.max_file_size,
                           self.average_record_size(), self._pending_compaction_groups(), whole_groups=whole_groups,
                           clustering=dict(self.pending_clustering.file_groups),
                           refuse_clustering_updates=self.update_strategy == REJECT_UPDATES)

    def untagged_groups(self, plan: MapSidePlan) -> UntaggedGroups | None:
        """(file group, task) of every partition of the table when a one-pass write chooses each partition's group
        without looking a key up: the partition has one file group that takes its records whole
        (`MapSidePlan.whole_group`), or none, or the write looks no key up (its new keys' group). A partition left
        out is new to the table: NEW_GROUP, or nothing for a delete. None: a partition needs its keys tagged, or the
        table has more than MAX_LISTED_FOLDERS folders to list here."""
        cfg = self.config
        if self.timeline is None:
            return UntaggedGroups({}, {})
        view = FileSystemView.load_within(self.location, MAX_LISTED_FOLDERS)
        if view is None:
            return None
        routes: dict[str, tuple[str, int]] = {}
        listed = self._slice_infos(view, plan.compacting)
        for p, slices in listed.items():
            group = plan.whole_group(slices)
            if group is None:
                if cfg.operation.looks_up_keys and slices:
                    return None
                group = plan.new_keys_group(slices, cfg.operation is Operation.DELETE)
            if group is not None:  # None: a delete where nothing is stored
                routes[p] = (group, plan.tasks(p, [group], slices)[0])
        return UntaggedGroups(routes, listed)

    @property
    def _packs_small_files(self) -> bool:
        """Inserts fill small base files first: COW upserts and inserts (MOR and overwrites make new groups)."""
        return not self.config.is_mor and self.config.operation in (Operation.UPSERT, Operation.INSERT)

    def latest_slices(self, partitions: list[str]) -> dict[str, list[SliceInfo]]:
        """The latest committed slices of `partitions`; a new log file of a group under a pending compaction
        belongs to the compaction's slice."""
        if self.timeline is None or not partitions:
            return {}
        view = FileSystemView.for_partitions(self.location, partitions)
        return self._slice_infos(view, self._pending_compaction_groups())

    def _slice_infos(self, view: FileSystemView, compacting: Mapping[tuple[str, str], str]) -> dict[str, list[SliceInfo]]:
        """The latest committed slices of every partition of `view` (an empty list for one with none)."""
        assert self.timeline is not None
        out: dict[str, list[SliceInfo]] = {p: [] for p in view.partition_paths}
        for s in view.latest_file_slices(Visibility.of(self.timeline)):
            out.setdefault(s.partition_path, []).append(SliceInfo.of(s, compacting))
        return out

    def _pending_compaction_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> instant of the pending compaction whose plan lists the file group."""
        out: dict[tuple[str, str], str] = {}
        timeline = self.timeline
        if timeline is None:
            return out
        for instant in timeline.pending_compactions():
            plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
            for op in plan.get("operations") or []:
                out[(op.get("partitionPath") or "", op["fileId"])] = instant.timestamp
        return out

    def replaced_file_ids(self, partitions: list[str]) -> dict[str, list[str]]:
        """File groups an insert_overwrite replaces: those of the written partitions, or all for _table."""
        scope = None if self.config.operation is Operation.INSERT_OVERWRITE_TABLE else partitions
        out: dict[str, list[str]] = {}
        for s in self._latest(scope):
            out.setdefault(s.partition_path, []).append(s.file_id)
        return out

    # ---- the transaction ---------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator["Transaction"]:
        """One write's instant, between the table lock and the commit.

        SINGLE_WRITER: the lock is held (and renewed) from before the instant starts until after it commits.
        OPTIMISTIC_CONCURRENCY_CONTROL: the lock is held to start the instant, then released while the data is
        written, and taken again around the commit, where conflicts with writes that committed meanwhile are
        checked. Either way the commit's lock is kept until the `with` block ends, for the post-commit services
        (`Transaction.committed`), and the instant's heartbeat is renewed from start to commit point, and failed
        writes of dead writers (expired heartbeats) are rolled back first under the EAGER policy.
        """
        lock_cfg = self.config.lock
        require_safe_provider(self.location, lock_cfg)  # before a new table is even created
        # An existing table was checked writable when the write opened (its config and timeline): the lock does
        # not read them again; its state is checked again below, on the timeline listed under the lock.
        lock = self._lock_new_table() if not self.exists else acquire(
            self.location, lock_cfg, table_name=self.table_config.name, table=self.table_config,
            timeline=self.timeline)
        txn: Transaction | None = None
        try:
            # The one listing under the lock: the writability check, the failed writes to roll back, the new
            # instant's time, the base of the conflict check, and what the write plans with. Another writer may
            # have changed the timeline since the write opened (a new table has none yet: listed in its layout).
            timeline = self.timeline.reload() if self.timeline is not None else \
                Timeline.load(self.location, layout_for(self.table_config))
            check_writable(self.location, self.table_config, timeline,
                           action="write to it or run a table service on it")
            if lock_cfg.failed_writes_policy == EAGER:
                rolled_back = rollback_failed(timeline, lock_cfg, metadata=keep_through_rollback(self.location))
            else:  # LAZY leaves dead writers' instants to the cleaning, but a crash's half rollback is finished now
                rolled_back = finish_pending_rollbacks(self.location, timeline, keep_through_rollback(self.location))
            self.timeline = timeline.reload() if rolled_back else timeline  # the rollbacks changed it
            # kept, or disabled before anything is written
            metadata_writer = self._metadata_table(self.timeline, table_services=True)
            self._pending_clustering = None
            txn = Transaction(self, lock, metadata_writer)
            if lock_cfg.optimistic:
                txn.release_lock()
            yield txn
        except BaseException:
            if txn is not None:
                txn.abort()  # raises InstantLostError instead when another writer had taken the instant
            raise
        finally:
            if txn is not None:
                txn.close()
            lock.release()
            if self._created_here and (txn is None or not txn.done):
                self._remove_if_empty()

    _created_here = False

    def _lock_new_table(self) -> TableLock:
        """A first write creates the table, then locks it; if that write fails the empty table is removed again."""
        commit_protocol.create_table(self.location, self.table_config)
        self.exists = True
        self._created_here = True
        try:
            # The config is the one just written, the timeline empty: the state is checked under the lock.
            return acquire(self.location, self.config.lock, table_name=self.table_config.name,
                           table=self.table_config,
                           timeline=Timeline(self.location, [], layout=layout_for(self.table_config)))
        except BaseException:
            self._remove_if_empty()
            raise

    def _remove_if_empty(self) -> None:
        # Listed now: the failed first write may have left instants, and only a table without commits goes.
        if not Timeline.load(self.location, layout_for(self.table_config)).completed_commits():
            self.location.storage.delete_dir(self.location.meta_path)


class Transaction:
    """One instant: started on creation (under the table lock, heartbeat first), then committed with the tasks'
    write stats, or rolled back."""

    def __init__(self, client: WriteClient, lock: TableLock, metadata_writer: MetadataWriter | None = None) -> None:
        """`metadata_writer`: the metadata table as the start found it under `lock` (`WriteClient._metadata_table`),
        which the commit records in while that lock is held throughout (SINGLE_WRITER). After the commit: the one
        that recorded it, as its delta commit left it under the commit's lock (None: none, or no longer kept), which
        the services after the commit may take instead of deciding again (`runner.after_commit`)."""
        self.client = client
        self.lock: TableLock | None = lock
        self.metadata_writer = metadata_writer
        self.timings: dict[str, float] = {}
        cfg = client.config
        timeline = client.timeline
        assert timeline is not None, "the transaction listed the timeline under the lock"
        self.started = TimelineAtStart.of(timeline)
        self.layout = timeline.layout
        instant_time = new_instant_time(after=timeline.latest_time(), local=client.table_config.local_instant_times)
        self.owned = InflightInstant.start(client.location, instant_time, cfg.lock, lock.owner)
        try:
            self.inflight = commit_protocol.start_instant(timeline, client.table_config, cfg.operation_type,
                                                          cfg.commit_action, instant_time=instant_time)
        except BaseException:
            self.owned.stop_heartbeat()
            raise
        self.instant = self.inflight.timestamp
        self.done = False
        self.committed: Timeline | None = None  # after `commit`: the timeline under its lock, the commit included

    @property
    def heartbeat(self) -> Heartbeat:
        """The instant's heartbeat, renewed from the start to the commit point."""
        assert self.owned.heartbeat is not None  # `InflightInstant.start` made one
        return self.owned.heartbeat

    def release_lock(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _locked(self, doing: str) -> TableLock:
        """The table lock for the commit or the rollback: the one held since the start if it is still valid
        (SINGLE_WRITER), else taken now (OPTIMISTIC_CONCURRENCY_CONTROL, or a lock that expired)."""
        c = self.client
        if self.lock is not None:
            if self.lock.lost is None:
                return self.lock
            self.release_lock()
        # hoodie.properties is read again (another writer may have changed it meanwhile); the timeline state is
        # checked on the listing the commit takes under this lock.
        self.lock = acquire(c.location, c.config.lock, table_name=c.table_config.name,
                            table=TableConfig.load(c.location), timeline=c.timeline)
        return self.lock

    def commit(self, stats: list[WriteStat], partitions: list[str] | None = None) -> WriteResult:
        c = self.client
        t0 = time.monotonic()
        self.owned.check_heartbeat(f"committing instant {self.instant}")
        single_writer = not c.config.lock.optimistic
        if single_writer and self.lock is not None:
            self.lock.check(f"committing instant {self.instant}")  # a lost lock is not taken again for a commit
        held_since_start = self.lock is not None and self.lock.lost is None
        lock = self._locked(f"committing instant {self.instant}")
        replaced = None
        if c.config.operation.is_overwrite:
            written = sorted({s.partition_path or "" for s in stats} | set(partitions or []))
            replaced = c.replaced_file_ids(written)
            new_ids = {s.file_id for s in stats}
            replaced = {p: [f for f in ids if f not in new_ids] for p, ids in replaced.items()}
        # The timeline under the commit's lock: the one listed at the start when the lock was held since
        # (SINGLE_WRITER), else listed again now (OPTIMISTIC_CONCURRENCY_CONTROL: others may have committed while
        # the data was written).
        assert c.timeline is not None
        under_lock = c.timeline if held_since_start else c.timeline.reload()
        if not held_since_start:
            check_writable(c.location, c.table_config, under_lock, action="write to it or run a table service on it")
        if c.config.lock.optimistic:
            mine = {(s.partition_path or "", s.file_id or "") for s in stats}
            mine |= {(p, f) for p, ids in (replaced or {}).items() for f in ids}
            check_conflicts(under_lock, self.started, self.inflight, mine,
                            by_bucket=c.config.index.type is IndexType.BUCKET)
        self.owned.check_heartbeat(f"committing instant {self.instant}")
        lock.check(f"committing instant {self.instant}")
        # The heartbeat goes before the commit point: a straggling task of this write that looks for it afterwards
        # finds the instant completed and writes nothing. Under the lock nobody rolls the instant back meanwhile.
        self.owned.stop_heartbeat()
        # The metadata table as it is under the commit's lock: its delta commit completes before the data commit
        # does. Held since the start, the lock kept every other writer out: the metadata table is as the start left
        # it (no read of either hoodie.properties or the metadata timeline again); taken again, another writer may
        # have changed it meanwhile, so it is read again.
        metadata_writer = self.metadata_writer if held_since_start else c._metadata_table(under_lock)
        self.metadata_writer = metadata_writer

        internal = c.commit_schema(under_lock, self.instant)
        extra = dict(c.config.commit_extra_metadata)
        if internal is not None:
            extra[LATEST_SCHEMA] = internal.latest.text()

        def record_in_metadata_table(metadata: CommitMetadata) -> None:
            if internal is not None:  # the history file goes before the commit, as Hudi's saveInternalSchema
                internal.persist(c.location.storage, c.location.meta_path, self.instant,
                                 self.layout.completion_time(self.inflight),
                                 (i.timestamp for i in under_lock.completed_commits()))
            if metadata_writer is not None and metadata_writer.record_commit(self.instant, metadata) is None:
                self.metadata_writer = None  # disabled instead (`record_commit`)

        completed = commit_protocol.complete_commit(
            c.location, self.inflight, stats, operation_type=c.config.operation_type,
            schema=c.writer_avro_schema, partition_to_replace_file_ids=replaced,
            extra_metadata=extra,
            partition_metafile_base_format=c.table_config.partition_metafile_use_base_format, layout=self.layout,
            before_commit=record_in_metadata_table,
        )
        self.done = True
        # The lock is kept until the transaction closes: the post-commit services run under it and plan from
        # `committed` without listing the timeline again. That view is exact: every change to the timeline (an
        # instant started, committed, rolled back, a service) is made under this lock, and since the listing
        # above only this commit has changed it.
        self.committed = _with_completed(under_lock, completed)
        if c.clusterings_to_roll_back:  # hoodie.clustering.rollback.pending.replacecommit.on.conflict
            self.committed = c.roll_back_clusterings(self.committed, self.instant)
            self.metadata_writer = None  # the rollbacks changed the metadata table through writers of their own
        self.timings["commit"] = time.monotonic() - t0
        result = WriteResult.from_stats(self.instant, c.config.operation.value, stats, self.timings)
        result.timeline = self.committed
        return result

    def abort(self) -> None:
        """Roll the instant back (under the lock); if another writer rolled it back already, remove what we
        wrote. Without the lock (another writer holds it past the wait) the instant is left to the next writer:
        its heartbeat is deleted, so it counts as failed."""
        if self.done:
            return
        c = self.client
        self.owned.stop_heartbeat()  # before waiting for the lock: without it the instant counts as failed
        try:
            lock = self._locked(f"rolling back instant {self.instant}")
        except WriteError:
            return
        self.owned.abort(self.inflight, metadata=keep_through_rollback(c.location),
                         lock_expiry_ms=c.config.lock.expiry_ms, lock_where=lock.describe(),
                         lock_holder_text=f"this writer took the lock again ({lock.owner}) to remove what it wrote")

    def close(self) -> None:
        """Stop the heartbeat (deleting it) and give back a lock still held."""
        self.owned.stop_heartbeat()
        self.release_lock()


def _with_completed(timeline: Timeline, completed: Instant) -> Timeline:
    """`timeline` with `completed` in place of the pending states of its instant (collapsed as a listing is)."""
    key = (completed.timestamp, completed.comparable_action)
    rest = [i for i in timeline.instants if (i.timestamp, i.comparable_action) != key]
    return Timeline(timeline.location, [*rest, completed], layout=timeline.layout, unknown_files=timeline.unknown_files)


# ---- checks ---------------------------------------------------------------------------------------------------
def _check_columns(config: WriteConfig, schema: pa.Schema, base_path: str) -> None:
    errors = []
    names = set(schema.names)
    for label, fields in (("record key", config.keys.record_key_fields),
                          ("partition path", config.keys.partition_fields)):
        for f in fields:
            if f.split(":")[0].split(".")[0] not in names:  # CustomKeyGenerator: `name:TYPE`
                errors.append(f"{label} field {f!r} is not a column")
    ordering = config.merge.precombine_field
    if ordering and ordering not in names and config.operation is not Operation.DELETE:
        errors.append(f"precombine field {ordering!r} is not a column")
    errors += [f"partial update column {c!r} ({K.PARTIAL_UPDATE_COLUMNS.key}) is not a column"
               for c in missing_columns(config, names)]
    if errors:
        raise WriteError(f"write to {base_path}: " + "; ".join(errors) + f" (columns: {schema.names})")


_WIDER = {
    pa.int8(): 0, pa.int16(): 1, pa.int32(): 2, pa.int64(): 3, pa.float32(): 4, pa.float64(): 5,
}


_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}  # digits of the widest value of each integer width


def _widens(old: pa.DataType, new: pa.DataType) -> bool:
    if old == new:
        return True
    if old in _WIDER and new in _WIDER:
        # int -> long -> float -> double, never back (Hudi's Avro promotion rules)
        return _WIDER[new] >= _WIDER[old] or (old == pa.int32() and new in (pa.int8(), pa.int16()))
    if pa.types.is_timestamp(old) and pa.types.is_timestamp(new):
        return True
    if (pa.types.is_string(old) and pa.types.is_large_string(new)) or (pa.types.is_large_string(old) and pa.types.is_string(new)):
        return True
    if pa.types.is_decimal(new):  # every old value must fit: integer digits and scale never shrink
        if pa.types.is_integer(old):
            return new.precision - new.scale >= _INT_DIGITS[old.bit_width]
        if pa.types.is_decimal(old):
            return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    return False


def check_schema_change(old: pa.Schema, new: pa.Schema, where: str) -> None:
    """Refuse a write whose columns drop or narrow the table's: the old records could not be read back."""
    errors = []
    for f in old:
        if f.name in META_COLUMNS:
            continue
        if f.name not in new.names:
            errors.append(f"column {f.name!r} ({f.type}) is missing")
            continue
        nt = new.field(f.name).type
        if not _widens(f.type, nt):
            errors.append(f"column {f.name!r} changes type from {f.type} to {nt}")
    if errors:
        raise SchemaError(f"{where}: the write's schema is not compatible with the table's: " + "; ".join(errors)
                          + ". Only new nullable columns and widening types (int -> long -> float -> double; int/long "
                            "-> a decimal wide enough; decimal -> a wider decimal) are allowed; rewrite the table "
                            "(dbt: --full-refresh) to change it otherwise.")
