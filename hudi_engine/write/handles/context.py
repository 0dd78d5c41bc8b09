"""`WriteContext`: what every write handle of one write shares (table, instant, writer schema, write token)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa

from hudi_engine.arrays import one_chunk
from hudi_engine.config.write_config import BloomConfig, FileSizing, LogConfig
from hudi_engine.file_naming import WriteToken
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.io.base_file import file_schema
from hudi_engine.keygen import key_generator_for
from hudi_engine.location import TableLocation
from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
from hudi_engine.payload import Payload, payload_for
from hudi_engine.schema import META_COLUMNS, add_meta_fields, arrow_to_avro_schema, avro_to_arrow_schema
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.layout import layout_for
from hudi_engine.write.cdc import ChangeLog, LoggingMode, logging_mode_of
from hudi_engine.write.inflight import InflightInstant

RECORD_KEY = META_COLUMNS[2]


@dataclass(frozen=True)
class WriteContext:
    """What every handle of one write shares; `for_task` gives each task attempt its own write token.

    `schema` is the writer Avro schema *without* meta fields (the commit's `extraMetadata.schema`). Records are
    conformed to it: columns matched by name and cast, missing columns null, other columns (helpers of the
    caller) dropped.
    """

    location: TableLocation
    config: TableConfig
    instant_time: str
    schema: dict
    write_token: WriteToken = WriteToken(0, 0, 0)
    files: FileSizing = FileSizing()
    bloom: BloomConfig = BloomConfig()
    log: LogConfig = LogConfig()
    row_group_size: int | None = None
    payload_class: str | None = None  # None: the table's hoodie.compaction.payload.class
    column_ids: ColumnIds | None = None  # the schema-on-read history: stored files' columns found by id

    def stored_columns(self, table: pa.Table, file_instant: str) -> pa.Table:
        """`table` (rows of a stored file written at `file_instant`) with the columns named as the table names them
        now: found by id where the table has a schema-on-read history, its dropped columns left out."""
        if self.column_ids is None:
            return table
        names = self.column_ids.file_names(None, file_instant)
        gone = self.column_ids.dropped_since(file_instant)
        return self.column_ids.as_query_names(table.select([c for c in table.column_names if c not in gone]), names)

    @staticmethod
    def create(location: TableLocation, config: TableConfig, instant_time: str,
               schema: pa.Schema | dict, **options) -> "WriteContext":
        """Context for `schema` given as Arrow data columns (named the Spark way: FORMAT.md, Avro schema naming) or
        as an Avro record."""
        if isinstance(schema, pa.Schema):
            schema = arrow_to_avro_schema(schema, config.name, with_meta=False)
        else:
            schema = {k: v for k, v in schema.items()}
            schema["fields"] = [f for f in schema["fields"] if f["name"] not in META_COLUMNS]
        return WriteContext(location, config, instant_time, schema, **options)

    def for_task(self, partition_id: int, stage_id: int = 0, attempt_id: int = 0) -> "WriteContext":
        return dataclasses.replace(self, write_token=WriteToken(partition_id, stage_id, attempt_id))

    @cached_property
    def inflight(self) -> InflightInstant:
        """The instant this context writes: its markers and the checks that it is still this writer's."""
        return InflightInstant(self.location, self.instant_time, layout=layout_for(self.config))

    @property
    def task_partition_id(self) -> int:
        return self.write_token.partition_id

    @cached_property
    def schema_with_meta(self) -> dict:
        return add_meta_fields(self.schema)

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        """Arrow schema of the rows written: the five meta columns, then the data columns."""
        return avro_to_arrow_schema(self.schema_with_meta)

    @cached_property
    def file_schema(self) -> pa.Schema:
        """`arrow_schema` as rows bound for a base file carry it: the few-valued meta columns as dictionaries
        (`base_file.file_schema`); as `arrow_schema` without meta fields (those columns are null)."""
        return file_schema(self.arrow_schema) if self.config.populate_meta_fields else self.arrow_schema

    @cached_property
    def cdc_mode(self) -> LoggingMode | None:
        """The table's CDC supplemental logging mode; None when `hoodie.table.cdc.enabled` is off."""
        return logging_mode_of(self.config, self.location.base_path)

    def change_log(self) -> ChangeLog | None:
        """A fresh change log of a merge into one file group, or None on a table without CDC."""
        mode = self.cdc_mode
        return None if mode is None else ChangeLog(mode, self.instant_time, self.schema, self.key_of)

    @cached_property
    def keygen(self):
        cfg = self.config
        return key_generator_for(cfg.key_generator_class, cfg.record_key_fields, cfg.partition_field_specs, cfg.props,
                                 hive_style=cfg.hive_style_partitioning, url_encode=cfg.url_encode_partitioning)

    @cached_property
    def payload(self) -> Payload:
        return payload_for(self.payload_class or self.config.payload_class)

    @cached_property
    def reports_record_keys(self) -> bool:
        """Whether handles report the keys their files add and remove (`WriteStat.record_keys`): on a table that
        keeps a record index (read from the meta column) only, so a write without one pays nothing."""
        return self.config.populate_meta_fields and RECORD_INDEX_PARTITION in self.config.metadata_partitions

    @property
    def ordering_field(self) -> str | None:
        field = self.config.precombine_field
        return field if field and field in self.arrow_schema.names else None

    def key_of(self, table: pa.Table) -> pa.Array:
        """Record keys of stored rows: the meta column, or the key generator when meta fields are off."""
        if self.config.populate_meta_fields:
            return one_chunk(table.column(RECORD_KEY))
        return one_chunk(self.keygen.record_keys(table))

    def full_path(self, partition_path: str, file_name: str) -> str:
        return self.location.join(partition_path, file_name)


def relative_path(partition_path: str, file_name: str) -> str:
    """A write stat's `path`: `<partition>/<file>`, or just `<file>` for a non-partitioned table."""
    return f"{partition_path}/{file_name}" if partition_path else file_name
