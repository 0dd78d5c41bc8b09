"""Catalog sync: the table's entries in the Hive metastore and the AWS Glue Data Catalog, as Hudi 0.14/0.15's
HiveSyncTool and AwsGlueCatalogSyncTool write them (docs/catalog-sync.md).

`entry` computes what an entry holds, `tool` runs one sync over a catalog client (`glue.GlueClient`; the Hive
metastore's client is Spark's: `hudi_engine.spark.hive_metastore`), and `tool.sync_catalogs` runs the enabled tools
after a commit. Settings: `hudi_engine.config.sync_config.SyncConfig`.
"""
from hudi_engine.errors import SyncError
from hudi_engine.sync.entry import SyncedTable, TableEntry
from hudi_engine.sync.tool import CatalogClient, sync_catalogs, sync_table

__all__ = ["CatalogClient", "SyncError", "SyncedTable", "TableEntry", "sync_catalogs", "sync_table"]
