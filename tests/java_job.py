"""The options of a typical Java / PySpark Hudi 0.14 job, carried over to this engine (tests of config/hudi_keys.py):
keys, precombine, operation, table type, parallelism, the metadata table off, cleaner and archival settings, inline
compaction, memory and timeline server tuning, catalog sync off."""
from __future__ import annotations


def java_job_options() -> dict[str, str]:
    """The options of a typical Java / PySpark Hudi 0.14 job writing a MOR table."""
    return {
        "hoodie.table.name": "trips", "hoodie.datasource.write.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "trip_id", "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.upsert.shuffle.parallelism": "4", "hoodie.insert.shuffle.parallelism": "4",
        "hoodie.bulkinsert.shuffle.parallelism": "4", "hoodie.delete.shuffle.parallelism": "4",
        "hoodie.metadata.enable": "false", "hoodie.index.type": "BLOOM", "hoodie.bloom.index.parallelism": "8",
        "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "4",
        "hoodie.clean.automatic": "true", "hoodie.clean.async": "false", "hoodie.cleaner.parallelism": "20",
        "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6",
        "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3",
        "hoodie.datasource.compaction.async.enable": "false",
        "hoodie.memory.merge.fraction": "0.75", "hoodie.memory.compaction.fraction": "0.6",
        "hoodie.memory.merge.max.size": str(512 * 1024 * 1024), "hoodie.memory.spillable.map.path": "/mnt/tmp",
        "hoodie.common.spillable.diskmap.type": "ROCKS_DB", "hoodie.embed.timeline.server": "false",
        "hoodie.write.markers.type": "DIRECT", "hoodie.write.buffer.limit.bytes": str(8 * 1024 * 1024),
        "hoodie.parquet.max.file.size": str(128 * 1024 * 1024), "hoodie.parquet.small.file.limit": "104857600",
        "hoodie.parquet.compression.codec": "snappy", "hoodie.datasource.write.reconcile.schema": "true",
        "hoodie.clustering.inline": "false", "hoodie.datasource.hive_sync.enable": "false",
        "hoodie.datasource.hive_sync.database": "lake", "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.write.concurrency.mode": "single_writer", "hoodie.fail.on.timeline.archiving": "true",
    }
