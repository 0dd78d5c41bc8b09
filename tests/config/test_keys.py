"""The declarations: every key parses, defaults are Hudi 0.14/0.15's (or say why not), bad values name the key."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hudi_engine.config import ALL_OPTIONS, Options, options_markdown
from hudi_engine.config.option import Kind
from hudi_engine.errors import ConfigError

# Hudi 0.14 / 0.15 defaults, read from Hudi's config classes (HoodieWriteConfig, HoodieIndexConfig,
# HoodieStorageConfig, HoodieCompactionConfig, HoodieCleanConfig, HoodieLockConfig, DynamoDbBasedLockConfig,
# HoodieArchivalConfig, DataSourceWriteOptions,
# DataSourceReadOptions, KeyGeneratorOptions, TimestampKeyGeneratorConfig). Keys with no default there are absent.
HUDI_DEFAULTS = {
    "hoodie.datasource.write.operation": "upsert",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "false",
    "hoodie.datasource.write.commitmeta.key.prefix": "_",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "10",  # HoodieMetadataConfig.COMPACT_NUM_DELTA_COMMITS
    # HoodieMetadataConfig.ENABLE_METADATA_INDEX_COLUMN_STATS (Hudi 1.x's Spark writers turn it on in the builder)
    "hoodie.metadata.index.column.stats.enable": "false",
    "hoodie.metadata.global.record.level.index.enable": "false",
    "hoodie.metadata.global.record.level.index.min.filegroup.count": "10",
    "hoodie.metadata.global.record.level.index.max.filegroup.count": "10000",
    "hoodie.metadata.record.level.index.enable": "false",  # HoodieMetadataConfig.RECORD_LEVEL_INDEX_ENABLE_PROP
    "hoodie.metadata.record.level.index.min.filegroup.count": "1",
    "hoodie.metadata.record.level.index.max.filegroup.count": "10",
    "hoodie.metadata.record.index.max.filegroup.size": str(1 << 30),
    "hoodie.metadata.record.index.growth.factor": "2.0",
    "hoodie.record.index.update.partition.path": "false",
    "hoodie.metadata.index.column.stats.max.columns.to.index": "32",  # COLUMN_STATS_INDEX_MAX_COLUMNS
    "hoodie.populate.meta.fields": "true",  # HoodieTableConfig.POPULATE_META_FIELDS
    "hoodie.keygen.timebased.timestamp.scalar.time.unit": "SECONDS",
    "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex": ",",
    "hoodie.keygen.timebased.timezone": "UTC",
    "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "hoodie.combine.before.insert": "false",
    "hoodie.combine.before.upsert": "true",
    "hoodie.combine.before.delete": "true",
    "hoodie.index.type": "SIMPLE",
    "hoodie.bucket.index.num.buckets": "256",
    "hoodie.simple.index.update.partition.path": "true",
    "hoodie.bloom.index.filter.type": "DYNAMIC_V0",
    "hoodie.index.bloom.num_entries": "60000",
    "hoodie.index.bloom.fpp": "0.000000001",
    "hoodie.bloom.index.filter.dynamic.max.entries": "100000",
    "hoodie.parquet.max.file.size": "125829120",
    "hoodie.parquet.small.file.limit": "104857600",
    "hoodie.parquet.block.size": "125829120",
    "hoodie.parquet.compression.codec": "gzip",
    "hoodie.copyonwrite.record.size.estimate": "1024",
    "hoodie.logfile.data.block.max.size": "268435456",
    "hoodie.logfile.max.size": "1073741824",
    "hoodie.upsert.shuffle.parallelism": "0",
    "hoodie.insert.shuffle.parallelism": "0",
    "hoodie.bulkinsert.shuffle.parallelism": "0",
    "hoodie.delete.shuffle.parallelism": "0",
    "hoodie.bulkinsert.sort.mode": "NONE",
    "hoodie.compact.inline": "false",
    "hoodie.compact.inline.max.delta.commits": "5",
    "hoodie.clean.automatic": "true",
    "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
    "hoodie.cleaner.commits.retained": "10",
    "hoodie.cleaner.fileversions.retained": "3",
    "hoodie.write.lock.wait_time_ms": "60000",
    "hoodie.write.lock.filesystem.expire": "0",
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
    "hoodie.write.concurrency.mode": "SINGLE_WRITER",
    "hoodie.client.heartbeat.interval_in_ms": "60000",
    "hoodie.client.heartbeat.tolerable.misses": "2",
    "hoodie.cleaner.policy.failed.writes": "EAGER",
    "hoodie.write.lock.dynamodb.region": "us-east-1",
    "hoodie.write.lock.dynamodb.billing_mode": "PAY_PER_REQUEST",
    "hoodie.write.lock.dynamodb.read_capacity": "20",
    "hoodie.write.lock.dynamodb.write_capacity": "10",
    "hoodie.write.lock.dynamodb.table_creation_timeout": "600000",
    "hoodie.archive.automatic": "true",
    "hoodie.keep.min.commits": "20",
    "hoodie.keep.max.commits": "30",
    "hoodie.timeline.compaction.batch.size": "10",
    "hoodie.clustering.updates.strategy": "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "false",  # HoodieClusteringConfig
    # HoodieClusteringConfig (0.15 and 1.2 agree)
    "hoodie.clustering.inline": "false",
    "hoodie.clustering.inline.max.commits": "4",
    "hoodie.clustering.schedule.inline": "false",
    "hoodie.clustering.async.enabled": "false",
    "hoodie.clustering.async.max.commits": "4",
    "hoodie.clustering.plan.strategy.class":
        "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "hoodie.clustering.execution.strategy.class":
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
    "hoodie.clustering.plan.strategy.small.file.limit": "314572800",
    "hoodie.clustering.plan.strategy.max.bytes.per.group": "2147483648",
    "hoodie.clustering.plan.strategy.max.num.groups": "30",
    "hoodie.clustering.plan.strategy.target.file.max.bytes": "1073741824",
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled": "true",
    "hoodie.clustering.plan.partition.filter.mode": "NONE",
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions": "2",
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": "0",
    "hoodie.layout.optimize.strategy": "linear",
    "hoodie.datasource.query.type": "snapshot",
    # DataSourceReadOptions.INCREMENTAL_FORMAT
    "hoodie.datasource.query.incremental.format": "latest_state",
    # HoodieTableConfig.CDC_ENABLED / CDC_SUPPLEMENTAL_LOGGING_MODE
    "hoodie.table.cdc.enabled": "false",
    "hoodie.schema.on.read.enable": "false",  # HoodieCommonConfig.SCHEMA_EVOLUTION_ENABLE
    "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER",
    # HiveSyncConfigHolder / HoodieSyncConfig / GlueCatalogSyncClientConfig (0.14/0.15)
    "hoodie.datasource.hive_sync.enable": "false",
    "hoodie.datasource.meta.sync.enable": "false",
    "hoodie.meta.sync.client.tool.class": "org.apache.hudi.hive.HiveSyncTool",
    "hoodie.datasource.hive_sync.database": "default",
    "hoodie.datasource.hive_sync.table": "unknown",
    "hoodie.datasource.hive_sync.support_timestamp": "false",
    "hoodie.datasource.hive_sync.skip_ro_suffix": "false",
    "hoodie.datasource.hive_sync.table.strategy": "ALL",
    "hoodie.datasource.hive_sync.sync_as_datasource": "true",
    "hoodie.datasource.hive_sync.schema_string_length_thresh": "4000",
    "hoodie.datasource.hive_sync.create_managed_table": "false",
    "hoodie.datasource.hive_sync.omit_metadata_fields": "false",
    "hoodie.datasource.hive_sync.auto_create_database": "true",
    "hoodie.datasource.hive_sync.ignore_exceptions": "false",
    "hoodie.meta.sync.decode_partition": "false",
    "hoodie.datasource.meta.sync.glue.skip_table_archive": "true",
}


def test_keys_are_declared_once():
    keys = [k for o in ALL_OPTIONS for k in o.all_keys]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


@pytest.mark.parametrize("option", ALL_OPTIONS, ids=lambda o: o.key)
def test_every_option_parses_its_default_and_hudis(option):
    if option.default not in (None, "", ()):
        assert option.parse(option.describe_default()) == option.default
    assert option.hudi_default == HUDI_DEFAULTS.get(option.key)
    if option.hudi_default is not None:
        parsed = option.parse(option.hudi_default)
        if parsed != option.default:
            assert option.default_note, f"{option.key}: default differs from Hudi's without a reason"
    assert option.doc and option.group


@pytest.mark.parametrize("option", [o for o in ALL_OPTIONS if o.kind not in (Kind.STRING, Kind.FIELDS)],
                         ids=lambda o: o.key)
def test_a_bad_value_names_the_key_the_value_and_what_is_accepted(option):
    with pytest.raises(ConfigError) as e:
        option.parse("bogus!")
    assert str(e.value).startswith(f"{option.key}='bogus!': expected ")
    if option.choices:
        assert ", ".join(option.choices) in str(e.value)


def test_options_collect_every_error_and_map_aliases():
    with pytest.raises(ConfigError) as e:
        Options({"hoodie.cleaner.policy": "BOGUS", "hoodie.write.lock.wait_time_ms": "-5",
                 "hoodie.deltastreamer.keygen.timebased.timestamp.type": "NOPE"}, ALL_OPTIONS)
    lines = str(e.value).splitlines()[1:]
    assert len(lines) == 3
    assert "hoodie.cleaner.policy='BOGUS': expected one of KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS" in lines[0]
    assert "hoodie.write.lock.wait_time_ms='-5': expected a whole number >= 0" in lines[1]
    assert "hoodie.keygen.timebased.timestamp.type='NOPE'" in lines[2]  # the alias is reported under its key


def test_configuration_reference_is_generated_from_the_declarations():
    reference = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    section = re.search(r"<!-- options:begin -->\n(.*?)<!-- options:end -->", reference, re.S)
    assert section, "docs/configuration.md has no generated options section"
    assert section.group(1) == options_markdown(), \
        "docs/configuration.md's options are stale: run python -m hudi_engine.config docs/configuration.md"
