"""Catalog sync around a Spark write: `CatalogSync.prepare` before it (the sync settings the session cannot honour
are refused before any file is written: no Hive metastore, no Glue region or credentials; the `hudi` read sources the
synced entries resolve to are registered if the session lacks them), `after_commit` after it
(every enabled tool, `hudi_engine.sync.tool.sync_catalogs`; a failure names the committed instant and the tool).
`sync_catalogs(spark, path, options)` syncs an existing table on request (dbt's `hudi_sync` operation).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import SparkSession

from hudi_engine.config.sync_config import GLUE, HIVE, SyncConfig
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.location import TableLocation
from hudi_engine.spark.hive_metastore import HiveMetastoreClient
from hudi_engine.spark.read_sources import read_sources_registered, register_read_sources
from hudi_engine.sync import tool
from hudi_engine.sync.glue import GlueClient, glue_client, glue_settings_problems
from hudi_engine.sync.tool import CatalogClient
from hudi_engine.table_config import TableConfig


class CatalogSync:
    """The catalog sync of one write (nothing when the options ask for none)."""

    def __init__(self, spark: SparkSession, path: str, cfg: SyncConfig, clients: Mapping[str, CatalogClient]) -> None:
        self.spark = spark
        self.path = path
        self.cfg = cfg
        self.clients = clients

    @staticmethod
    def prepare(spark: SparkSession, path: str, config: WriteConfig | SyncConfig) -> "CatalogSync":
        """The clients of the enabled tools; ConfigError naming the option when one cannot run."""
        cfg = config.sync if isinstance(config, WriteConfig) else config
        clients: dict[str, CatalogClient] = {}
        problems = []
        if cfg.enabled and isinstance(config, WriteConfig):  # the partition fields of the table, or of a new one
            location = TableLocation.of(path)
            fields = (TableConfig.load(location).partition_fields if TableConfig.exists(location)
                      else config.keys.partition_field_names)
            problems += cfg.problems(tuple(fields), path)
        if GLUE in cfg.tools:
            problems += glue_settings_problems(cfg)
        if HIVE in cfg.tools:
            try:
                clients[HIVE] = HiveMetastoreClient(spark)
            except ConfigError as e:
                problems.append(str(e))
        if problems:
            raise ConfigError(f"table {path}: catalog sync cannot run:\n  " + "\n  ".join(problems))
        if cfg.enabled and not read_sources_registered(spark):
            # The synced entry is a data source table of provider `hudi`, which Spark resolves when the sync
            # refreshes it (DATA_SOURCE_NOT_FOUND in a session where register_data_source was not called).
            register_read_sources(spark)
        if GLUE in cfg.tools:
            clients[GLUE] = GlueClient(glue_client(cfg), cfg.glue_skip_archive)
        return CatalogSync(spark, path, cfg, clients)

    def after_commit(self, instant: str) -> None:
        """Sync the entries to the commit at `instant`; SyncError (naming it) when a tool fails."""
        if not self.cfg.enabled:
            return
        done = tool.sync_catalogs(self.path, self.cfg, self.clients, instant=instant, spark_version=self.spark.version)
        for synced in done:
            for entry in synced.entries:
                self._refresh(entry.qualified)

    def _refresh(self, name: str) -> None:
        """Spark caches a catalog table's relation and schema: the synced entry is read afresh."""
        if self.spark.catalog.tableExists(name):
            self.spark.catalog.refreshTable(name)


def hive_entry_names(path: str, options: Mapping[str, Any] | WriteConfig) -> list[str]:
    """`database.table` of every Hive metastore entry a write with `options` syncs for the table at `path` (empty:
    no Hive sync)."""
    from hudi_engine.sync.entry import entry_names
    from hudi_engine.table import HudiTable

    cfg = (options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)).sync
    if HIVE not in cfg.tools:
        return []
    table = HudiTable.load(path)
    return [f"{cfg.database}.{n}" for n in entry_names(cfg.table or table.config.name, table.is_mor, cfg)]


def sync_catalogs(spark: SparkSession, path: str, options: Mapping[str, Any] | WriteConfig) -> list:
    """Sync the Hudi table at `path` into the catalogs `options` enable (Hudi's sync keys), as after a commit;
    returns what was synced (`hudi_engine.sync.SyncedTable`, one per tool)."""
    from hudi_engine.table import HudiTable

    config = options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)
    table = HudiTable.load(path)
    problems = config.sync.problems(tuple(table.config.partition_fields), path)
    if problems:
        raise ConfigError(f"table {path}: invalid catalog sync options:\n  " + "\n  ".join(problems))
    sync = CatalogSync.prepare(spark, path, config)
    done = tool.sync_catalogs(path, sync.cfg, sync.clients, spark_version=spark.version)
    for synced in done:
        for entry in synced.entries:
            sync._refresh(entry.qualified)
    return done
