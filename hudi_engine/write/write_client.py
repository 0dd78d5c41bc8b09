"""The driver side of a write: table checks, the instant, the index's file list, the bucket plan, the commit.

Engine-neutral: the Spark layer (`hudi_engine.spark.writer`) moves records between tasks and calls these
pieces; nothing here sees a record. Config is translated once (`WriteConfig`) and checked against the table's
`hoodie.properties` here, before any data file is written.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_engine.errors import SchemaError, WriteError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.schema import META_COLUMNS, arrow_to_avro_schema, avro_to_arrow_schema, remove_meta_fields
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.timeline.instant import State
from hudi_engine.write import commit as commit_protocol
from hudi_engine.write.executor import WriteTask
from hudi_engine.write.lock import table_lock
from hudi_engine.write.rollback import rollback_failed_writes, rollback_instant
from hudi_engine.write.write_config import Operation, WriteConfig

# Hudi: an average record size is trusted only from a commit that wrote more than this share of the small limit.
_RECORD_SIZE_ESTIMATE_THRESHOLD = 0.5
_AVG_SIZE_LOOKBACK = 10


@dataclass
class WriteResult:
    """What one write did: the instant, the operation, record and file counts, bytes and time per phase.

    `timings` in seconds: `write` the wall time of the Spark job (index and handles run inside its tasks),
    `index` and `handles` the task time spent in each, summed over tasks, `commit`, `table_services`."""

    instant_time: str
    operation: str
    records_inserted: int = 0
    records_updated: int = 0
    records_deleted: int = 0
    files_created: int = 0
    files_rewritten: int = 0
    files_appended: int = 0
    bytes_written: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def from_stats(instant: str, operation: str, stats: list[WriteStat], timings: dict[str, float]) -> "WriteResult":
        r = WriteResult(instant, operation, timings=dict(timings))
        for s in stats:
            r.records_inserted += s.num_inserts
            r.records_updated += s.num_update_writes
            r.records_deleted += s.num_deletes
            r.bytes_written += s.total_write_bytes
            if s.is_delta:
                r.files_appended += 1
            elif s.prev_commit in (None, "null"):
                r.files_created += 1
            else:
                r.files_rewritten += 1
        return r


class WriteClient:
    def __init__(self, storage: Storage, base_path: str, storage_uri: str, config: WriteConfig,
                 table_config: TableConfig, data_schema: pa.Schema, exists: bool) -> None:
        self.storage = storage
        self.base_path = base_path
        self.storage_uri = storage_uri
        self.config = config
        self.table_config = table_config
        self.data_schema = data_schema
        self.exists = exists
        self.timeline = Timeline.load(storage, base_path) if exists else None

    @staticmethod
    def open(path: str, config: WriteConfig, data_schema: pa.Schema) -> "WriteClient":
        """Check the write against the table (or the new table's config) before anything is written."""
        storage, base_path = Storage.for_uri(str(path))
        uri = str(path) if "://" in str(path) else base_path
        exists = storage.exists(Storage.join(base_path, ".hoodie", "hoodie.properties"))
        if exists:
            table_config = TableConfig.load(storage, base_path)
            table_config.require_writable()
            config = _reconcile(config, table_config, base_path)
        else:
            table_config = _new_table_config(config, base_path)
        _check_columns(config, data_schema, base_path)
        client = WriteClient(storage, base_path, uri, config, table_config, data_schema, exists)
        client._check_schema_change()
        return client

    def _check_schema_change(self) -> None:
        """A write may add nullable columns and widen types; it may not drop or narrow (checked before writing)."""
        if self.timeline is None or self.config.operation in (Operation.DELETE, Operation.INSERT_OVERWRITE_TABLE):
            return  # a new table; a delete carries keys only; an overwrite of the whole table starts afresh
        avro = self.timeline.latest_schema() or self.table_config.create_schema
        if avro is not None:
            old = avro_to_arrow_schema(remove_meta_fields(avro))
            check_schema_change(old, self.data_schema, f"table {self.base_path}")

    def _disable_metadata_table(self) -> None:
        """This engine does not maintain Hudi's metadata table. Java readers list files from it when
        `hoodie.table.metadata.partitions` names `files`, so files we add would be invisible to them: disable it
        the way Hudi does (drop those keys, then delete `.hoodie/metadata`), before writing anything (spec §14)."""
        if not (self.table_config.metadata_partitions or self.table_config.metadata_partitions_inflight):
            return
        self.table_config = self.table_config.without_metadata_table()
        self.table_config.save(self.storage, self.base_path)
        self.storage.delete_dir(Storage.join(self.base_path, ".hoodie", "metadata"))

    # ---- specs shipped to tasks ------------------------------------------------------------------------------
    def keygen_spec(self) -> dict:
        c = self.config
        return {"class": c.key_generator_class, "record_key_fields": c.record_key_fields,
                "partition_fields": c.partition_fields, "props": dict(self.table_config.props) | c.options,
                "hive_style": c.hive_style_partitioning, "url_encode": c.url_encode_partitioning}

    @property
    def writer_avro_schema(self) -> dict:
        """The writer schema (no meta fields), in Spark's naming: what goes into the commit and log headers.

        A delete's DataFrame may hold only the key columns: its commit keeps the table's schema."""
        if self.config.operation is Operation.DELETE and self.timeline is not None:
            table_schema = self.timeline.latest_schema() or self.table_config.create_schema
            if table_schema is not None:
                return remove_meta_fields(table_schema)
        return arrow_to_avro_schema(self.data_schema, self.config.table_name, with_meta=False)

    # ---- index and planning ------------------------------------------------------------------------------------
    def _view(self, partitions: list[str] | None) -> tuple[FileSystemView, Visibility]:
        wanted = None if partitions is None else set(partitions)
        view = FileSystemView.load(self.storage, self.base_path, None if wanted is None else wanted.__contains__)
        return view, Visibility.of(self.timeline) if self.timeline is not None else None

    def index_files(self, partitions: list[str] | None) -> list[tuple[str, str, str]]:
        """(partition, file id, base file path) of the latest base files of `partitions` (None: all)."""
        if not self.exists:
            return []
        view, vis = self._view(partitions)
        return [(s.partition_path, s.file_id, s.base_file.path)
                for s in view.latest_file_slices(vis) if s.base_file is not None]

    def average_record_size(self) -> int:
        """Bytes per record of recent commits that wrote enough to trust, else the configured estimate."""
        if self.timeline is not None:
            threshold = _RECORD_SIZE_ESTIMATE_THRESHOLD * self.config.small_file_limit
            for instant in list(reversed(self.timeline.completed_commits()))[:_AVG_SIZE_LOOKBACK]:
                stats = self.timeline.commit_metadata(instant).write_stats()
                written = sum(s.total_write_bytes for s in stats if not s.is_delta)
                records = sum(s.num_writes for s in stats if not s.is_delta)
                if written > threshold and records > 0:
                    return math.ceil(written / records)
        return self.config.record_size_estimate

    def write_task(self, instant: str) -> WriteTask:
        """Everything a write task needs, picklable: the config, the instant and the timeline as planned here."""
        exists = self.exists and self.timeline is not None
        return WriteTask(
            storage_uri=self.storage_uri, base_path=self.base_path, table_props=dict(self.table_config.props),
            config=self.config, instant=instant, writer_avro_schema=self.writer_avro_schema,
            keygen_spec=self.keygen_spec(), visibility=Visibility.of(self.timeline) if exists else None,
            pending_compactions=self._pending_compaction_groups() if exists else {},
            avg_record_size=self.average_record_size(),
        )

    def _pending_compaction_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> instant of the pending compaction whose plan lists the file group."""
        out: dict[tuple[str, str], str] = {}
        for instant in self.timeline.pending_compactions() if self.timeline else ():
            plan = self.timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
            for op in plan.get("operations") or []:
                out[(op.get("partitionPath") or "", op["fileId"])] = instant.timestamp
        return out

    def replaced_file_ids(self, partitions: list[str]) -> dict[str, list[str]]:
        """File groups an insert_overwrite replaces: those of the written partitions, or all for _table."""
        if not self.exists:
            return {}
        scope = None if self.config.operation is Operation.INSERT_OVERWRITE_TABLE else partitions
        view, vis = self._view(scope)
        out: dict[str, list[str]] = {}
        for s in view.latest_file_slices(vis):
            out.setdefault(s.partition_path, []).append(s.file_id)
        return out

    # ---- the transaction ---------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator["Transaction"]:
        cfg = self.config
        with table_lock(self.storage, self.base_path, wait_timeout_ms=cfg.lock_wait_timeout_ms,
                        expiry_ms=cfg.lock_expiry_ms) if self.exists else _create_then_lock(self) as _:
            rollback_failed_writes(self.storage, self.base_path)
            self._disable_metadata_table()
            self.timeline = Timeline.load(self.storage, self.base_path)
            txn = Transaction(self)
            try:
                yield txn
            except BaseException:
                txn.abort()
                raise


@contextmanager
def _create_then_lock(client: WriteClient) -> Iterator[str]:
    """A first write creates the table, then locks it; if that write fails the empty table is removed again."""
    commit_protocol.create_table(client.storage, client.base_path, client.table_config)
    client.exists = True
    ok = False
    try:
        with table_lock(client.storage, client.base_path, wait_timeout_ms=client.config.lock_wait_timeout_ms,
                        expiry_ms=client.config.lock_expiry_ms) as owner:
            yield owner
        ok = True
    finally:
        if not ok and not Timeline.load(client.storage, client.base_path).completed_commits():
            client.storage.delete_dir(Storage.join(client.base_path, ".hoodie"))


class Transaction:
    """One instant: started on creation, then committed with the tasks' write stats, or rolled back."""

    def __init__(self, client: WriteClient) -> None:
        self.client = client
        self.timings: dict[str, float] = {}
        cfg = client.config
        self.inflight = commit_protocol.start_commit(client.storage, client.base_path, client.table_config,
                                                     cfg.operation.operation_type, cfg.commit_action)
        self.instant = self.inflight.timestamp
        self.done = False

    def commit(self, stats_json: list[str], partitions: list[str] | None = None) -> WriteResult:
        c = self.client
        t0 = time.monotonic()
        import json

        stats = [WriteStat.from_dict(json.loads(s), "task write stat") for s in stats_json]
        replaced = None
        if c.config.operation.is_overwrite:
            written = sorted({s.partition_path or "" for s in stats} | set(partitions or []))
            replaced = c.replaced_file_ids(written)
            new_ids = {s.file_id for s in stats}
            replaced = {p: [f for f in ids if f not in new_ids] for p, ids in replaced.items()}
        commit_protocol.complete_commit(
            c.storage, c.base_path, self.inflight, stats, operation_type=c.config.operation.operation_type,
            schema=c.writer_avro_schema, partition_to_replace_file_ids=replaced,
            extra_metadata=c.config.commit_extra_metadata,
        )
        self.done = True
        self.timings["commit"] = time.monotonic() - t0
        return WriteResult.from_stats(self.instant, c.config.operation.value, stats, self.timings)

    def abort(self) -> None:
        if not self.done:
            rollback_instant(self.client.storage, self.client.base_path, self.inflight)


# ---- checks ---------------------------------------------------------------------------------------------------
_CONTRADICTIONS = (
    ("hoodie.datasource.write.table.type", "table_type", "table_type"),
    ("hoodie.datasource.write.recordkey.field", "record_key_fields", "record_key_fields"),
    ("hoodie.datasource.write.partitionpath.field", "partition_fields", "partition_fields"),
    ("hoodie.datasource.write.keygenerator.class", "key_generator_class", "key_generator_class"),
    ("hoodie.datasource.write.hive_style_partitioning", "hive_style_partitioning", "hive_style_partitioning"),
    ("hoodie.datasource.write.partitionpath.urlencode", "url_encode_partitioning", "url_encode_partitioning"),
    ("hoodie.datasource.write.precombine.field", "precombine_field", "precombine_field"),
)


def partition_field_names(key_generator_class: str, fields: list[str]) -> list[str]:
    """The partition fields `hoodie.table.partition.fields` holds: a CustomKeyGenerator's `name:TYPE` entries
    without their type, as Hudi 0.14/0.15 store them for table version 6 (the type stays in the write option)."""
    if key_generator_class.rsplit(".", 1)[-1] in ("CustomKeyGenerator", "CustomAvroKeyGenerator"):
        return [f.split(":", 1)[0] for f in fields]
    return fields


def _reconcile(config: WriteConfig, table: TableConfig, base_path: str) -> WriteConfig:
    """Options the user left out come from `hoodie.properties`; options that contradict it are refused."""
    import dataclasses

    from hudi_engine.payload import payload_for

    given = config.options
    errors = []
    updates: dict = {}
    for key, attr, table_attr in _CONTRADICTIONS:
        table_value = getattr(table, table_attr)
        if key in given and given[key] != "":
            mine = getattr(config, attr)
            if attr == "key_generator_class" and table_value and mine.rsplit(".", 1)[-1] == table_value.rsplit(".", 1)[-1]:
                continue
            if attr == "partition_fields":
                mine = partition_field_names(config.key_generator_class, mine)
            if (mine or None) != (table_value or None) and not (mine == [] and table_value == []):
                errors.append(f"{key}={given[key]!r} contradicts the table's {table_value!r}")
        else:
            updates[attr] = table_value if table_value is not None else getattr(config, attr)
    table_payload = table.props.get("hoodie.compaction.payload.class")
    if table_payload:
        if "hoodie.datasource.write.payload.class" in given and payload_for(given[
                "hoodie.datasource.write.payload.class"]).class_name != payload_for(table_payload).class_name:
            errors.append(f"hoodie.datasource.write.payload.class={given['hoodie.datasource.write.payload.class']!r}"
                          f" contradicts the table's {table_payload!r}")
        updates["payload"] = payload_for(table_payload)
    if config.table_name and config.table_name != table.name:
        errors.append(f"hoodie.table.name={config.table_name!r} contradicts the table's {table.name!r}")
    updates["table_name"] = table.name
    if errors:
        raise WriteError(f"table {base_path} (hoodie.properties): " + "; ".join(errors)
                         + ". Change the options, or rewrite the table from scratch to change them.")
    return dataclasses.replace(config, **updates)


def _new_table_config(config: WriteConfig, base_path: str) -> TableConfig:
    errors = []
    if not config.table_name:
        errors.append("hoodie.table.name is required to create a table")
    if not config.record_key_fields:
        errors.append("hoodie.datasource.write.recordkey.field is required to create a table")
    if errors:
        raise WriteError(f"no Hudi table at {base_path} yet: " + "; ".join(errors))
    return TableConfig.create(
        config.table_name, config.table_type, config.record_key_fields,
        partition_field_names(config.key_generator_class, config.partition_fields),
        config.precombine_field, config.key_generator_class, config.payload.class_name,
        config.hive_style_partitioning, config.url_encode_partitioning, database=config.database_name,
    )


def _check_columns(config: WriteConfig, schema: pa.Schema, base_path: str) -> None:
    errors = []
    names = set(schema.names)
    for label, fields in (("record key", config.record_key_fields), ("partition path", config.partition_fields)):
        for f in fields:
            if f.split(":")[0].split(".")[0] not in names:  # CustomKeyGenerator: `name:TYPE`
                errors.append(f"{label} field {f!r} is not a column")
    if config.precombine_field and config.precombine_field not in names and config.operation is not Operation.DELETE:
        errors.append(f"precombine field {config.precombine_field!r} is not a column")
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
    if pa.types.is_string(old) and pa.types.is_large_string(new) or pa.types.is_large_string(old) and pa.types.is_string(new):
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
