"""Hive metastore sync in a Spark session of its own with Hive support (the tests' shared session has Spark's
in-memory catalog, and a JVM takes one catalog for its life): writes with Hudi's hive_sync keys, then reads the
entries back through the metastore client and Spark SQL. Run by tests/spark/test_hive_sync.py:
`python hive_sync_job.py <folder>`; the last line printed is the JSON of what it saw."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from hudi_engine import HudiTable, SyncError
from hudi_engine.spark import create_catalog_table, local_spark_session, sync_catalogs, write
from hudi_engine.spark.hive_metastore import HiveMetastoreClient

root = Path(sys.argv[1])
spark = local_spark_session(
    app_name="hive-sync", master="local[1]", warehouse_dir=root / "warehouse", native=True,
    extra_conf={"spark.sql.catalogImplementation": "hive",
                "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root}/metastore_db;create=true",
                "spark.driver.extraJavaOptions": f"-Dderby.system.home={root}"})
metastore = HiveMetastoreClient(spark)
out: dict = {}

SYNC = {"hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.database": "lake"}


def opts(name: str, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", **SYNC, **extra}


def entry(name: str) -> dict:
    e = metastore.get_table("lake", name)
    assert e is not None, name
    return {"location": e.location, "columns": [[c.name, c.type] for c in e.columns],
            "partition_keys": [[c.name, c.type] for c in e.partition_keys], "input_format": e.input_format,
            "output_format": e.output_format, "serde": e.serde, "serde_params": dict(e.serde_params),
            # the metastore's own bookkeeping (it adds it to any table, HiveSyncTool's too) left out
            "params": {k: v for k, v in e.params.items() if k not in ("transient_lastDdlTime", "numFiles", "totalSize")},
            "table_type": e.table_type,
            "partitions": {"/".join(v): loc for v, loc in metastore.partitions(e).items()} if e.partition_keys else {},
            # Hive's own names of the partitions (what SHOW PARTITIONS prints in Hive)
            "partition_names": sorted(metastore.msc.listPartitionNames("lake", name, -1)) if e.partition_keys else []}


def rows(sql: str) -> list:
    return [list(r) for r in spark.sql(sql).collect()]


# COPY_ON_WRITE, partitioned: created, then a column added, then a partition emptied by insert_overwrite_table.
orders = str(root / "orders")
part = {"hoodie.datasource.write.partitionpath.field": "day"}
first = write(spark.createDataFrame([(1, 1, "a", "2024-01-01"), (2, 1, "b", "2024-01-02")],
                                    "id long, ts long, name string, day string"), orders, opts("orders", **part))
out["orders_1"] = {"instant": first.instant_time, "entry": entry("orders"),
                   "read": rows("SELECT id, name, day FROM lake.orders ORDER BY id")}
second = write(spark.createDataFrame([(3, 1, "c", "2024-01-03", 2.5)],
                                     "id long, ts long, name string, day string, amount double"),
               orders, opts("orders", **part))
out["orders_2"] = {"instant": second.instant_time, "entry": entry("orders"),
                   "read": rows("SELECT id, amount FROM lake.orders ORDER BY id")}
third = write(spark.createDataFrame([(9, 1, "z", "2024-01-02", 1.0)],
                                    "id long, ts long, name string, day string, amount double"),
              orders, opts("orders", **part, **{"hoodie.datasource.write.operation": "insert_overwrite_table"}))
out["orders_3"] = {"instant": third.instant_time, "entry": entry("orders"),
                   "read": rows("SELECT id FROM lake.orders ORDER BY id"),
                   "plan": spark.sql("SELECT * FROM lake.orders")._jdf.queryExecution().executedPlan().toString()}

# MERGE_ON_READ, unpartitioned: _ro and _rt; an update in a log file is seen by _rt only.
events = str(root / "events")
mor = opts("events", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
write(spark.createDataFrame([(1, 1, "old")], "id long, ts long, name string"), events, mor)
update = write(spark.createDataFrame([(1, 2, "new")], "id long, ts long, name string"), events, mor)
out["events"] = {"instant": update.instant_time, "ro": entry("events_ro"), "rt": entry("events_rt"),
                 "read_ro": rows("SELECT name FROM lake.events_ro"), "read_rt": rows("SELECT name FROM lake.events_rt"),
                 "tables": sorted(r[1] for r in rows("SHOW TABLES IN lake"))}

# The entry dbt makes (a Spark data source table) and the synced one are the same entry.
made = str(root / "made")
write(spark.createDataFrame([(1, 1, "a", "x")], "id long, ts long, name string, p string"), made,
      {k: v for k, v in opts("made", **{"hoodie.datasource.write.partitionpath.field": "p"}).items()
       if "sync" not in k})
create_catalog_table(spark, "lake.made", made)
before = rows("SELECT id FROM lake.made")
synced = sync_catalogs(spark, made, opts("made", **{"hoodie.datasource.write.partitionpath.field": "p"}))
out["made"] = {"before": before, "entry": entry("made"), "read": rows("SELECT id, p FROM lake.made"),
               "synced": [[e.name for e in s.entries] for s in synced]}
# A sync that fails after the commit (the database is missing and may not be created): the data is committed, the
# error names the instant; the next write syncs the entry.
broken = str(root / "broken")
no_db = opts("broken", **{"hoodie.datasource.hive_sync.database": "nodb",
                          "hoodie.datasource.hive_sync.auto_create_database": "false"})
try:
    write(spark.createDataFrame([(1, 1)], "id long, ts long"), broken, no_db)
    failure = None
except SyncError as e:
    failure = {"message": str(e), "instant": e.instant}
committed = HudiTable.load(broken).timeline.completed_commits().last().timestamp
repaired = write(spark.createDataFrame([(2, 1)], "id long, ts long"), broken,
                 opts("broken", **{"hoodie.datasource.hive_sync.database": "nodb"}))
e = metastore.get_table("nodb", "broken")
out["broken"] = {"failure": failure, "committed": committed, "repaired": repaired.instant_time,
                 "synced": None if e is None else e.params.get("last_commit_time_sync"),
                 "read": rows("SELECT id FROM nodb.broken ORDER BY id")}
# CALL hive_sync on a catalog table written without sync; after a drop_partition, a second one drops its entry.
called = str(root / "called")
write(spark.createDataFrame([(1, 1, "a", "x"), (2, 1, "b", "y")], "id long, ts long, name string, p string"), called,
      {k: v for k, v in opts("called", **{"hoodie.datasource.write.partitionpath.field": "p"}).items()
       if "sync" not in k})
create_catalog_table(spark, "lake.called", called)
result = rows("CALL hive_sync(table => 'lake.called')")
out["called_1"] = {"result": result, "entry": entry("called"),
                   "instant": HudiTable.load(called).timeline.completed_commits().last().timestamp}
dropped = rows("CALL drop_partition(table => 'lake.called', partition => 'x')")
rows("CALL hive_sync('lake.called', '', '', '', '', 'hms')")
out["called_2"] = {"dropped": dropped, "entry": entry("called"), "read": rows("SELECT id FROM lake.called"),
                   "instant": HudiTable.load(called).timeline.completed_commits().last().timestamp}
spark.stop()
print(json.dumps(out))
