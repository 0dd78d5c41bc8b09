"""The catalog entry of a Hudi table, as Hudi 0.14/0.15's sync tools write it (`HiveSyncTool.syncHoodieTable`,
`HMSDDLExecutor.createTable`, `SparkDataSourceTableUtils`, `AWSGlueCatalogSyncClient.createTable`): engine-neutral
values that `hive.py` and `glue.py` write into their catalogs.

COPY_ON_WRITE: one table read through `HoodieParquetInputFormat`. MERGE_ON_READ: `<name>_ro` (read-optimized, the
same input format; `<name>` with `skip_ro_suffix`) and `<name>_rt` (snapshot, `HoodieParquetRealtimeInputFormat`).
Every table: `ParquetHiveSerDe`, `MapredParquetOutputFormat`, the columns of the latest commit's schema (meta
columns first; partition columns as partition keys), `EXTERNAL=TRUE`, `last_commit_time_sync`, and the Spark data
source parameters (`spark.sql.sources.provider=hudi`, the Spark schema with the partition columns last), with the
SerDe parameters `path` and `hoodie.query.as.ro.table` that Spark reads the entry with.
Partitions: one per partition path that holds data in the latest snapshot, its values from the partition path
(Hudi's partition value extractors), its location the partition's folder.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_engine.config import keys as K
from hudi_engine.config.sync_config import SyncConfig
from hudi_engine.errors import SyncError
from hudi_engine.partition_path import unescape_path_name
from hudi_engine.schema import META_COLUMNS
from hudi_engine.table import HudiTable

INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"  # HoodieSyncClient.HOODIE_LAST_COMMIT_TIME_SYNC
PROVIDER = "spark.sql.sources.provider"
SCHEMA_PREFIX = "spark.sql.sources.schema"  # Spark's schema parameters: numParts, part.N, numPartCols, partCol.N
QUERY_AS_RO_TABLE = "hoodie.query.as.ro.table"  # ConfigUtils.IS_QUERY_AS_RO_TABLE
SERDE_PATH = "path"  # ConfigUtils.TABLE_SERDE_PATH


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Hive's type text, lower case (`bigint`, `struct<a:int,b:string>`)


@dataclass(frozen=True)
class TableEntry:
    """One table of the catalog (a MERGE_ON_READ table has two)."""

    database: str
    name: str
    location: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...]
    input_format: str
    serde_params: Mapping[str, str]
    params: Mapping[str, str]  # table parameters, `last_commit_time_sync` included
    output_format: str = OUTPUT_FORMAT
    serde: str = SERDE
    table_type: str = "EXTERNAL_TABLE"

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass(frozen=True)
class SyncedTable:
    """What a sync writes for one Hudi table: its entries and its partitions (values -> location)."""

    base_path: str
    last_commit: str
    entries: tuple[TableEntry, ...]
    partitions: Mapping[tuple[str, ...], str] = field(default_factory=dict)


def describe(table: HudiTable, location: str, cfg: SyncConfig, *, database: str, name: str,
             spark_version: str = "", extra_params: Mapping[str, str] | None = None) -> SyncedTable:
    """The entries and partitions for `table` as of its latest commit. `location` is where engines find the
    table (the URI, or the absolute local path); `name` the synced table's name (MERGE_ON_READ: the base of
    `_ro`/`_rt`); `extra_params` parameters a catalog adds (Glue's metadata-listing flag)."""
    commits = table.timeline.completed_commits()
    last = commits.last()
    if last is None:
        raise SyncError(f"table {table.location.base_path}: no completed commit to sync")
    schema = table.schema()
    if cfg.omit_metadata_fields:
        schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
    fields = list(cfg.partition_fields if cfg.partition_fields is not None else table.config.partition_fields)
    types = {f.name: hive_type(f.type, cfg.support_timestamp) for f in schema}
    lower = {f.lower() for f in fields}
    columns = tuple(Column(f.name, types[f.name]) for f in schema if f.name.lower() not in lower)
    keys = tuple(Column(p, types.get(p, "string")) for p in fields)
    params: dict[str, str] = {} if cfg.create_managed else {"EXTERNAL": "TRUE"}
    params.update(extra_params or {})
    params.update(cfg.table_properties)
    if cfg.as_datasource:
        params.update(spark_table_params(schema, fields, cfg.spark_version or spark_version, cfg.schema_length))
    params[LAST_COMMIT_TIME_SYNC] = last.timestamp
    entries = []
    for table_name, realtime, read_optimized in _tables(name, table.is_mor, cfg):
        serde_params = {**cfg.serde_properties, "serialization.format": "1"}
        if cfg.as_datasource:
            serde_params.update({SERDE_PATH: location, QUERY_AS_RO_TABLE: str(read_optimized).lower()})
        entries.append(TableEntry(database, table_name, location, columns, keys,
                                  REALTIME_INPUT_FORMAT if realtime else INPUT_FORMAT, serde_params, params,
                                  table_type="MANAGED_TABLE" if cfg.create_managed else "EXTERNAL_TABLE"))
    partitions: dict[tuple[str, ...], str] = {}
    if fields:
        decode = cfg.decode_partition if cfg.decode_partition is not None else table.config.url_encode_partitioning
        extract = _extractor(cfg, fields, table.config.hive_style_partitioning)
        for path in sorted({s.partition_path for s in table.file_slices()}):
            values = extract(path)
            if len(values) != len(fields):
                raise SyncError(f"table {table.location.base_path}: partition path {path!r} gives the values {values} "
                                f"for the partition fields {fields} ({K.SYNC_PARTITION_EXTRACTOR.key}="
                                f"{cfg.extractor or 'inferred'})")
            partitions[tuple(unescape_path_name(v) if decode else v for v in values)] = f"{location}/{path}"
    return SyncedTable(table.location.base_path, last.timestamp, tuple(entries), partitions)


def entry_names(name: str, mor: bool, cfg: SyncConfig) -> list[str]:
    """The names of the tables a sync of table `name` writes (COPY_ON_WRITE: `name`; MERGE_ON_READ: `_ro`, `_rt`)."""
    return [t for t, _, _ in _tables(name, mor, cfg)]


def _tables(name: str, mor: bool, cfg: SyncConfig) -> list[tuple[str, bool, bool]]:
    """(table name, realtime input format, read as optimized) of each synced table (`HiveSyncTool.doSync`)."""
    if not mor:
        return [(name, False, False)]
    if cfg.table_strategy == "RO":
        return [(name, False, True)]
    if cfg.table_strategy == "RT":
        return [(name, True, False)]
    return [(name if cfg.skip_ro_suffix else name + "_ro", False, True), (name + "_rt", True, False)]


def _extractor(cfg: SyncConfig, fields: list[str], hive_style: bool):
    """Hudi's partition value extractor (inferred as `HoodieSyncConfig` infers it: hive-style single field ->
    HiveStylePartitionValueExtractor, otherwise MultiPartKeysValueExtractor)."""
    short = cfg.extractor.rsplit(".", 1)[-1] if cfg.extractor else (
        "HiveStylePartitionValueExtractor" if hive_style and len(fields) == 1 else "MultiPartKeysValueExtractor")
    if short == "SinglePartPartitionValueExtractor":
        return lambda path: [path]
    if short == "HiveStylePartitionValueExtractor":
        return lambda path: [path.split("=", 1)[1]] if "=" in path and "/" not in path else [path, "?"]
    if short == "SlashEncodedDayPartitionValueExtractor":
        return lambda path: ["-".join(path.split("/"))] if path.count("/") == 2 else [path, "?"]
    return lambda path: [part.split("=")[1] if "=" in part else part for part in path.split("/")]


# ---- types ----------------------------------------------------------------------------------------------------
def hive_type(t: pa.DataType, support_timestamp: bool = False) -> str:
    """Hive's type of a column as this engine writes it to parquet (`HiveSchemaUtil.convertField`, HMS form:
    lower case, no spaces; timestamps are bigint unless `support_timestamp`)."""
    if pa.types.is_dictionary(t):
        return hive_type(t.value_type, support_timestamp)
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "bigint" if t.bit_width == 64 else "int"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_floating(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if support_timestamp else "bigint"
    if pa.types.is_time32(t):
        return "int"
    if pa.types.is_time64(t):
        return "bigint"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"array<{hive_type(t.value_type, support_timestamp)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type, support_timestamp)},{hive_type(t.item_type, support_timestamp)}>"
    if pa.types.is_struct(t):
        inner = ",".join(f"{f.name}:{hive_type(f.type, support_timestamp)}" for f in t)
        return f"struct<{inner}>".replace("-", "_")  # HiveSchemaUtil.createHiveStruct: Hive refuses '-' there
    raise SyncError(f"Arrow type {t} has no Hive type")


def spark_type_json(t: pa.DataType) -> object:
    """The Spark type of a column as Spark's `DataType.json` writes it (the types this engine's source reads)."""
    if pa.types.is_dictionary(t):
        return spark_type_json(t.value_type)
    simple = [(pa.types.is_boolean, "boolean"), (pa.types.is_int8, "byte"), (pa.types.is_int16, "short"),
              (pa.types.is_int32, "integer"), (pa.types.is_int64, "long"), (pa.types.is_float32, "float"),
              (pa.types.is_float64, "double"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
              (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"),
              (pa.types.is_fixed_size_binary, "binary"), (pa.types.is_date, "date"), (pa.types.is_time32, "integer"),
              (pa.types.is_time64, "long")]
    for test, name in simple:
        if test(t):
            return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return {"type": "array", "elementType": spark_type_json(t.value_type), "containsNull": True}
    if pa.types.is_map(t):
        return {"type": "map", "keyType": spark_type_json(t.key_type), "valueType": spark_type_json(t.item_type),
                "valueContainsNull": True}
    if pa.types.is_struct(t):
        return _struct_json(list(t))
    raise SyncError(f"Arrow type {t} has no Spark type")


def _struct_json(fields: list[pa.Field]) -> dict:
    return {"type": "struct", "fields": [{"name": f.name, "type": spark_type_json(f.type), "nullable": True,
                                          "metadata": {}} for f in fields]}


def spark_table_params(schema: pa.Schema, partition_fields: list[str], spark_version: str,
                       threshold: int) -> dict[str, str]:
    """`SparkDataSourceTableUtils.getSparkTableProperties`: the provider, the Spark version, the schema (partition
    columns last) cut into parts of at most `threshold` characters, and the partition columns."""
    lower = [p.lower() for p in partition_fields]
    ordered = [f for f in schema if f.name.lower() not in lower]
    ordered += [f for p in lower for f in schema if f.name.lower() == p]
    text = json.dumps(_struct_json(ordered), separators=(",", ":"))
    parts = [text[i:i + threshold] for i in range(0, len(text), threshold)] or [""]
    out = {PROVIDER: "hudi", f"{SCHEMA_PREFIX}.numParts": str(len(parts))}
    if spark_version:
        out["spark.sql.create.version"] = spark_version
    out.update({f"{SCHEMA_PREFIX}.part.{i}": p for i, p in enumerate(parts)})
    if partition_fields:
        out[f"{SCHEMA_PREFIX}.numPartCols"] = str(len(partition_fields))
        out.update({f"{SCHEMA_PREFIX}.partCol.{i}": p for i, p in enumerate(partition_fields)})
    return out
