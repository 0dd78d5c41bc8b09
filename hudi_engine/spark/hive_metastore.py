"""The Hive metastore side of a sync (Hudi's `HMSDDLExecutor` / `HoodieHiveSyncClient` in mode `hms`), over the
Spark session's own metastore client: Hive's `IMetaStoreClient` of the session's Hive client, reached through py4j,
so the entries land in the metastore Spark itself uses (embedded Derby, or `hive.metastore.uris`).

The metastore's Thrift objects (Table, StorageDescriptor, SerDeInfo, FieldSchema, Partition) are made with the
class loader of that client, whatever Spark's Hive client isolation.
"""
from __future__ import annotations

import getpass
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from hudi_engine.config import keys as K
from hudi_engine.config.sync_config import SyncConfig
from hudi_engine.errors import ConfigError
from hudi_engine.sync.entry import Column, TableEntry

_API = "org.apache.hadoop.hive.metastore.api."
ADD_PARTITIONS_BATCH = 1000  # hoodie.datasource.hive_sync.batch_num's default: partitions per add_partitions call


def hive_catalog_problem(spark: SparkSession) -> str | None:
    """Why the session has no Hive metastore to sync into (None: it has one)."""
    impl = spark.conf.get("spark.sql.catalogImplementation", "in-memory")
    if impl != "hive":
        return (f"{K.HIVE_SYNC_ENABLE.key} / HiveSyncTool syncs into the Spark session's Hive metastore, but this "
                f"session's catalog is {impl!r}: start it with Hive support (enableHiveSupport(), or "
                "spark.sql.catalogImplementation=hive), or turn the sync off")
    return None


class HiveMetastoreClient:
    """`hudi_engine.sync.tool.CatalogClient` over the session's Hive metastore."""

    name = "the Hive metastore"

    def __init__(self, spark: SparkSession) -> None:
        problem = hive_catalog_problem(spark)
        if problem:
            raise ConfigError(problem)
        self.spark = spark
        self.jvm: Any = spark._jvm
        self.gateway: Any = spark.sparkContext._gateway
        client = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client()
        self.hive = client.getHive(client.conf())
        self.msc = self.hive.getMSC()
        self._loader = self.msc.getClass().getClassLoader()

    # ---- Thrift objects --------------------------------------------------------------------------------------
    def _new(self, name: str) -> Any:
        cls = self.jvm.java.lang.Class.forName(_API + name, True, self._loader)
        return cls.getDeclaredConstructor(self.gateway.new_array(self.jvm.java.lang.Class, 0)).newInstance(
            self.gateway.new_array(self.jvm.java.lang.Object, 0))

    def _map(self, values: Mapping[str, str]) -> Any:
        out = self.jvm.java.util.HashMap()
        for k, v in values.items():
            out.put(k, v)
        return out

    def _list(self, values: Sequence[Any]) -> Any:
        out = self.jvm.java.util.ArrayList()
        for v in values:
            out.add(v)
        return out

    def _fields(self, columns: Sequence[Column]) -> Any:
        fields = []
        for c in columns:
            f = self._new("FieldSchema")
            f.setName(c.name)
            f.setType(c.type)
            f.setComment("")
            fields.append(f)
        return self._list(fields)

    def _sd(self, entry: TableEntry, location: str) -> Any:
        sd = self._new("StorageDescriptor")
        sd.setCols(self._fields(entry.columns))
        sd.setInputFormat(entry.input_format)
        sd.setOutputFormat(entry.output_format)
        sd.setLocation(location)
        serde = self._new("SerDeInfo")
        serde.setSerializationLib(entry.serde)
        serde.setParameters(self._map(entry.serde_params))
        sd.setSerdeInfo(serde)
        return sd

    # ---- CatalogClient ---------------------------------------------------------------------------------------
    def extra_params(self, cfg: SyncConfig) -> Mapping[str, str]:
        return {}

    def location(self, location: str) -> str:
        return location

    def database_exists(self, database: str) -> bool:
        return bool(self.hive.databaseExists(database))

    def create_database(self, database: str) -> None:
        db = self._new("Database")
        db.setName(database)
        db.setDescription("automatically created by hoodie")  # HMSDDLExecutor.createDatabase
        self.msc.createDatabase(db)

    def get_table(self, database: str, name: str) -> TableEntry | None:
        if not self.msc.tableExists(database, name):
            return None
        t = self.msc.getTable(database, name)
        sd = t.getSd()
        serde = sd.getSerdeInfo()

        def columns(fields: Any) -> tuple[Column, ...]:
            return tuple(Column(f.getName(), f.getType()) for f in (fields or []))

        return TableEntry(database, name, sd.getLocation() or "", columns(sd.getCols()), columns(t.getPartitionKeys()),
                          sd.getInputFormat() or "", dict(serde.getParameters() or {}),
                          dict(t.getParameters() or {}), output_format=sd.getOutputFormat() or "",
                          serde=serde.getSerializationLib() or "", table_type=t.getTableType() or "")

    def create_table(self, entry: TableEntry) -> None:
        t = self._new("Table")
        t.setDbName(entry.database)
        t.setTableName(entry.name)
        t.setOwner(getpass.getuser())
        t.setCreateTime(int(time.time()))
        t.setSd(self._sd(entry, entry.location))
        t.setPartitionKeys(self._fields(entry.partition_keys))
        t.setParameters(self._map(entry.params))
        t.setTableType(entry.table_type)
        self.msc.createTable(t)

    def alter_table(self, entry: TableEntry, *, columns_changed: bool = False) -> None:
        t = self.msc.getTable(entry.database, entry.name)
        t.setSd(self._sd(entry, entry.location))
        t.setParameters(self._map(entry.params))
        t.setTableType(entry.table_type)
        context = self._new("EnvironmentContext")
        if entry.partition_keys and columns_changed:  # HMSDDLExecutor.updateTableDefinition: partitions too
            context.putToProperties("CASCADE", "true")
        self.msc.alter_table_with_environmentContext(entry.database, entry.name, t, context)

    def drop_table(self, database: str, name: str) -> None:
        t = self.msc.getTable(database, name)
        t.putToParameters("EXTERNAL", "TRUE")  # an entry dropped to be made again keeps its files
        t.setTableType("EXTERNAL_TABLE")
        self.msc.alter_table(database, name, t)
        self.msc.dropTable(database, name, False, True)

    def partitions(self, entry: TableEntry) -> Mapping[tuple[str, ...], str]:
        table = self.hive.getTable(entry.database, entry.name)
        return {tuple(p.getValues()): p.getTPartition().getSd().getLocation() or ""
                for p in self.hive.getPartitions(table)}

    def _partition(self, entry: TableEntry, values: tuple[str, ...], location: str) -> Any:
        p = self._new("Partition")
        p.setValues(self._list(list(values)))
        p.setDbName(entry.database)
        p.setTableName(entry.name)
        p.setSd(self._sd(entry, location))
        return p

    def add_partitions(self, entry: TableEntry, partitions: Mapping[tuple[str, ...], str]) -> None:
        items = list(partitions.items())
        for i in range(0, len(items), ADD_PARTITIONS_BATCH):
            batch = [self._partition(entry, v, loc) for v, loc in items[i:i + ADD_PARTITIONS_BATCH]]
            self.msc.add_partitions(self._list(batch), True, False)

    def alter_partitions(self, entry: TableEntry, partitions: Mapping[tuple[str, ...], str]) -> None:
        self.msc.alter_partitions(entry.database, entry.name,
                                  self._list([self._partition(entry, v, loc) for v, loc in partitions.items()]))

    def drop_partitions(self, entry: TableEntry, values: Sequence[tuple[str, ...]]) -> None:
        for v in values:
            self.msc.dropPartition(entry.database, entry.name, self._list(list(v)), False)
