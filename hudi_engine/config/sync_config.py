"""`SyncConfig`: the catalog sync after each commit (Hudi's HoodieSyncConfig / HiveSyncConfig / Glue keys).

It lives in `config`, not beside the sync in `hudi_engine.sync`: `WriteConfig` holds it, and the config layer sits
below the sync layer (tests/test_layers.py), so the sync imports its config, never the other way round.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hudi_engine.config import keys as K
from hudi_engine.config.option import Options
from hudi_engine.errors import ConfigError

_EXTRACTORS = {  # Hudi's partition value extractors this engine applies (hudi_engine.sync.entry)
    "MultiPartKeysValueExtractor": "org.apache.hudi.hive.MultiPartKeysValueExtractor",
    "HiveStylePartitionValueExtractor": "org.apache.hudi.hive.HiveStylePartitionValueExtractor",
    "SinglePartPartitionValueExtractor": "org.apache.hudi.hive.SinglePartPartitionValueExtractor",
    "SlashEncodedDayPartitionValueExtractor": "org.apache.hudi.hive.SlashEncodedDayPartitionValueExtractor",
    "NonPartitionedExtractor": "org.apache.hudi.hive.NonPartitionedExtractor",
}
_SYNC_TOOLS = {"HiveSyncTool": K.HIVE_SYNC_TOOL, "AwsGlueCatalogSyncTool": K.GLUE_SYNC_TOOL}
HIVE, GLUE = "hive", "glue"


def _properties(text: str) -> dict[str, str]:
    """Hudi's `ConfigUtils.toMap`: `key=value` entries, one a line (or comma-free lines), blanks skipped."""
    out: dict[str, str] = {}
    for line in text.replace("\\n", "\n").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            if k.strip():
                out[k.strip()] = v.strip()
    return out


@dataclass(frozen=True)
class SyncConfig:
    """Catalog sync after each commit (Hudi's HoodieSyncConfig / HiveSyncConfig / Glue keys): which tools run and
    what they write. `tools` is empty when no sync is asked for. Names left empty default from the table when the
    sync runs (`hudi_engine.sync.entry`)."""

    tools: tuple[str, ...] = ()  # HIVE and/or GLUE, in Hudi's order of hoodie.meta.sync.client.tool.class
    mode: str = "hms"
    database: str = "default"
    table: str = ""
    partition_fields: tuple[str, ...] | None = None  # None: the table's partition fields
    extractor: str = ""  # full class name; "" inferred
    support_timestamp: bool = False
    skip_ro_suffix: bool = False
    table_strategy: str = "ALL"
    as_datasource: bool = True
    schema_length: int = 4000
    create_managed: bool = False
    omit_metadata_fields: bool = False
    auto_create_database: bool = True
    ignore_exceptions: bool = False
    table_properties: Mapping[str, str] = field(default_factory=dict)
    serde_properties: Mapping[str, str] = field(default_factory=dict)
    decode_partition: bool | None = None  # None: as the table URL-encodes its paths
    spark_version: str = ""
    glue_region: str = ""
    glue_endpoint: str = ""
    glue_database: str = ""
    glue_table: str = ""
    glue_skip_archive: bool = True

    @staticmethod
    def from_options(o: Options) -> "SyncConfig":
        hive_sync = o[K.HIVE_SYNC_ENABLE]
        tools: list[str] = []
        if hive_sync or o[K.META_SYNC_ENABLE]:  # HoodieSparkSqlWriter.metaSync: hive_sync.enable adds HiveSyncTool
            for name in o[K.SYNC_TOOLS]:
                short = name.rsplit(".", 1)[-1]
                if short not in _SYNC_TOOLS or name not in (short, _SYNC_TOOLS[short]):
                    raise ConfigError(f"{K.SYNC_TOOLS.key}={name!r}: this engine runs HiveSyncTool and "
                                      f"AwsGlueCatalogSyncTool ({', '.join(_SYNC_TOOLS.values())})")
                tool = HIVE if short == "HiveSyncTool" else GLUE
                if tool not in tools:
                    tools.append(tool)
            if hive_sync and HIVE not in tools:
                tools.append(HIVE)
        extractor = o[K.SYNC_PARTITION_EXTRACTOR].strip()
        if extractor:
            short = extractor.rsplit(".", 1)[-1]
            if short not in _EXTRACTORS or extractor not in (short, _EXTRACTORS[short]):
                raise ConfigError(f"{K.SYNC_PARTITION_EXTRACTOR.key}={extractor!r}: expected one of "
                                  f"{', '.join(_EXTRACTORS)} (Hudi's classes, full or short names)")
            extractor = _EXTRACTORS[short]
        return SyncConfig(
            tuple(tools), o[K.SYNC_MODE], o[K.SYNC_DATABASE] or "default", o[K.SYNC_TABLE],
            o[K.SYNC_PARTITION_FIELDS] if o.is_set(K.SYNC_PARTITION_FIELDS) else None, extractor,
            o[K.SYNC_SUPPORT_TIMESTAMP], o[K.SYNC_SKIP_RO_SUFFIX], o[K.SYNC_TABLE_STRATEGY], o[K.SYNC_AS_DATASOURCE],
            o[K.SYNC_SCHEMA_LENGTH], o[K.SYNC_CREATE_MANAGED], o[K.SYNC_OMIT_METADATA_FIELDS],
            o[K.SYNC_AUTO_CREATE_DATABASE], o[K.SYNC_IGNORE_EXCEPTIONS], _properties(o[K.SYNC_TABLE_PROPERTIES]),
            _properties(o[K.SYNC_SERDE_PROPERTIES]),
            o[K.SYNC_DECODE_PARTITION] if o.is_set(K.SYNC_DECODE_PARTITION) else None, o[K.SYNC_SPARK_VERSION],
            o[K.GLUE_REGION], o[K.GLUE_ENDPOINT], o[K.GLUE_DATABASE], o[K.GLUE_TABLE], o[K.GLUE_SKIP_ARCHIVE])

    @property
    def enabled(self) -> bool:
        return bool(self.tools)

    def problems(self, table_partition_fields: tuple[str, ...] | list[str], where: str) -> list[str]:
        """How the sync settings contradict each other or the table's partition fields (empty: they fit)."""
        if not self.enabled:
            return []
        out = []
        table_fields = [f.lower() for f in table_partition_fields]
        fields = table_fields if self.partition_fields is None else [f.lower() for f in self.partition_fields]
        if fields != table_fields:
            out.append(f"{K.SYNC_PARTITION_FIELDS.key}={','.join(self.partition_fields or ())!r} are not the partition "
                       f"fields of table {where} ({','.join(table_partition_fields) or 'none: unpartitioned'}); remove "
                       "it (the table's are synced) or give exactly those")
        short = self.extractor.rsplit(".", 1)[-1]
        if short == "NonPartitionedExtractor" and fields:
            out.append(f"{K.SYNC_PARTITION_EXTRACTOR.key}=NonPartitionedExtractor contradicts the partition fields "
                       f"{','.join(fields)}; remove it")
        elif short and short != "NonPartitionedExtractor" and not fields:
            out.append(f"{K.SYNC_PARTITION_EXTRACTOR.key}={short} needs partition fields, but table {where} is not "
                       "partitioned; remove it")
        elif short in ("SinglePartPartitionValueExtractor", "SlashEncodedDayPartitionValueExtractor") \
                and len(fields) != 1:
            out.append(f"{K.SYNC_PARTITION_EXTRACTOR.key}={short} extracts one partition value, but the table has "
                       f"{len(fields)} partition fields ({','.join(fields)}); use MultiPartKeysValueExtractor")
        return out
