"""Hudi's write-side keys (0.14 .. 1.2) that `keys.py` does not declare, each classified once: **refused** (the
values that ask for a behaviour this engine does not have: one line naming the key, the value, why, and the way out,
collected with the other option errors by `WriteConfig.from_options` before anything is written) or an **accepted
no-op** (it changes nothing a reader of the table could observe: tuning of a Java-only code path, or settings of a
feature that is off or refused by another key). Keys read from Hudi's config classes, listed by class; a key in
none of them keeps the behaviour of any undeclared key (kept, with a warning when it looks like a typo).

`docs/options.md` is generated from this module (`python -m hudi_engine.config --classification docs/options.md`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

_LOCKS = "org.apache.hudi.client.transaction."
_SIMPLE_BUCKET_PARTITIONER = "org.apache.hudi.table.action.commit.SparkBucketIndexPartitioner"
_AVRO_MERGE_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"  # HoodieRecordMerger.DEFAULT_MERGE_STRATEGY_UUID
_AVRO_MERGER = "org.apache.hudi.common.model.HoodieAvroRecordMerger"

Given = Mapping[str, str]  # every option the user set, as text (declared keys under their canonical key)


@dataclass(frozen=True)
class Refusal:
    """One Hudi key whose `refused` values this engine refuses. `values` are compared case-insensitively (a Java
    class also by its short name); with `test`, the value is refused when `test(value, given)` is true instead.
    An empty value is never refused (Hudi reads it as unset)."""

    key: str
    refused: str  # the refused values, for the docs
    reason: str
    way_out: str
    hudi_class: str
    aliases: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    test: Callable[[str, Given], bool] | None = None
    secret: bool = False  # a credential: the error does not repeat the value

    @property
    def all_keys(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def refuses(self, value: str, given: Given) -> bool:
        value = value.strip()
        if not value:
            return False
        if self.test is not None:
            return self.test(value, given)
        return _is_one_of(value, self.values)

    def message(self, key: str, value: str) -> str:
        shown = "(set)" if self.secret else repr(value)
        return f"{key}={shown} is not supported: {self.reason}. {self.way_out}"


@dataclass(frozen=True)
class NoOps:
    """Keys of one Hudi config class accepted with any value, changing nothing in the table, for `why`."""

    hudi_class: str
    why: str
    keys: tuple[str, ...]


def _is_one_of(value: str, values: tuple[str, ...]) -> bool:
    low = value.lower()
    return any(low in (v.lower(), v.rsplit(".", 1)[-1].lower()) for v in values)


def _on(key: str, reason: str, way_out: str, hudi_class: str, *aliases: str) -> Refusal:
    """A switch refused when true (false, its default, is accepted and changes nothing)."""
    return Refusal(key, "true", reason, way_out, hudi_class, aliases, ("true",))


def _off(key: str, reason: str, way_out: str, hudi_class: str) -> Refusal:
    """A switch refused when false (true, its default, is what this engine does)."""
    return Refusal(key, "false", reason, way_out, hudi_class, (), ("false",))


def _any(key: str, reason: str, way_out: str, hudi_class: str, *aliases: str) -> Refusal:
    """Refused with any non-empty value."""
    return Refusal(key, "any value", reason, way_out, hudi_class, aliases, test=lambda v, g: True)


def _credential(key: str) -> Refusal:
    return Refusal(key, "any value", "this engine's DynamoDB lock and Glue sync clients take AWS credentials from the "
                   "environment "
                   "(the default credential chain); credentials given here would be ignored and the lock could be "
                   "taken in another account than the Java writers'", "Remove it and give the credentials through "
                   "the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, a profile or an "
                   "instance role)", "HoodieAWSConfig", test=lambda v, g: True, secret=True)


def _unless(key: str, accepted: tuple[str, ...], reason: str, way_out: str, hudi_class: str,
            *aliases: str) -> Refusal:
    """Refused unless one of `accepted` (a Java class also by its short name)."""
    return Refusal(key, "anything but " + " / ".join(a.rsplit(".", 1)[-1] for a in accepted), reason, way_out,
                   hudi_class, aliases, test=lambda v, g: not _is_one_of(v, accepted))


# ---- predicates that look at other options --------------------------------------------------------------------
_PRECOMBINE = "hoodie.datasource.write.precombine.field"
_RECORD_KEY = "hoodie.datasource.write.recordkey.field"
_PAYLOAD = "hoodie.datasource.write.payload.class"
_INDEX_TYPE = "hoodie.index.type"
_TABLE_TYPE = "hoodie.datasource.write.table.type"
_COMPACT_INLINE = "hoodie.compact.inline"


def _fields(text: str) -> list[str]:
    return [f.strip().lower() for f in text.split(",") if f.strip()]


def _not_the_precombine_field(value: str, given: Given) -> bool:
    return _fields(value) != _fields(given.get(_PRECOMBINE, ""))


def _not_the_record_key(value: str, given: Given) -> bool:
    return set(_fields(value)) != set(_fields(given.get(_RECORD_KEY, "")))


def _bucket_index(test: Callable[[str, Given], bool]) -> Callable[[str, Given], bool]:
    """`test`, for an option that only the BUCKET index reads (Hudi ignores it with another index)."""
    return lambda v, g: g.get(_INDEX_TYPE, "").strip().upper() == "BUCKET" and test(v, g)


_RESOLUTION_STRATEGIES = (_LOCKS + "SimpleConcurrentFileWritesConflictResolutionStrategy",
                          _LOCKS + "BucketIndexConcurrentFileWritesConflictResolutionStrategy")


def _other_conflict_resolution(value: str, given: Given) -> bool:
    """Hudi resolves conflicts only under optimistic concurrency control."""
    optimistic = given.get("hoodie.write.concurrency.mode", "").strip().upper() == "OPTIMISTIC_CONCURRENCY_CONTROL"
    return optimistic and not _is_one_of(value, _RESOLUTION_STRATEGIES)


def _bucket_layout_without_bucket_index(value: str, given: Given) -> bool:
    if value.upper() == "DEFAULT":
        return False
    return value.upper() != "BUCKET" or given.get(_INDEX_TYPE, "").strip().upper() != "BUCKET"


def _inline_compaction_not_by_commits(value: str, given: Given) -> bool:
    return value.strip().upper() != "NUM_COMMITS" and given.get(_COMPACT_INLINE, "").strip().lower() == "true"


def _is_mor(given: Given) -> bool:
    return given.get(_TABLE_TYPE, "").strip().upper() in ("MERGE_ON_READ", "MOR")


def _not_this_engines_insert_packing(value: str, given: Given) -> bool:
    """Inserts routed into a small file: on COPY_ON_WRITE this engine merges them into the file by key (Hudi with
    false); on MERGE_ON_READ it writes them beside the stored records (Hudi with true)."""
    keeps_duplicates = value.strip().lower() == "true"
    return keeps_duplicates != _is_mor(given)


def _merge_mode_not_the_payloads(value: str, given: Given) -> bool:
    """Table version 6 merges by payload class: a merge mode is honoured when it names what the payload does
    (Hudi 1.x infers one from the other the same way: HoodieTableConfig.inferCorrectMergingBehavior)."""
    from hudi_engine.errors import HudiError
    from hudi_engine.payload import Combine, payload_for

    mode = value.strip().upper()
    if not given.get(_PAYLOAD) and mode in ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING"):
        return False  # the mode picks its payload (write_config.MergeConfig)
    try:
        combine = payload_for(given.get(_PAYLOAD) or None).combine
    except HudiError:
        return False  # the payload class itself is reported
    if mode == "COMMIT_TIME_ORDERING":
        return combine is not Combine.OVERWRITE
    if mode == "EVENT_TIME_ORDERING":
        return combine is not Combine.ORDERED
    return mode != "CUSTOM" or combine in (Combine.OVERWRITE, Combine.ORDERED)


_MERGE_MODE_WAY_OUT = ("This engine merges by hoodie.datasource.write.payload.class: remove one of the two, or set "
                       "the payload that does the same (COMMIT_TIME_ORDERING: OverwriteWithLatestAvroPayload, "
                       "EVENT_TIME_ORDERING: DefaultHoodieRecordPayload)")

# ---- refused ----------------------------------------------------------------------------------------------------
W, IDX, STO, CMP, CLU, MD, LCK, DS, SYNC, COM = (
    "HoodieWriteConfig", "HoodieIndexConfig", "HoodieStorageConfig", "HoodieCompactionConfig",
    "HoodieClusteringConfig", "HoodieMetadataConfig", "HoodieLockConfig", "DataSourceWriteOptions",
    "HoodieSyncConfig / HiveSyncConfig", "HoodieCommonConfig")
_NO_MDT = "this engine writes only the files partition of Hudi's metadata table"
_NO_MDT_OUT = "Set it false or remove it"
_NO_CLASS = "this engine runs no Java classes"
_REMOVE = "Remove the option"

REFUSALS: tuple[Refusal, ...] = (
    # HoodieWriteConfig
    _unless("hoodie.timeline.layout.version", ("1", "2"), "table version 6 uses timeline layout 1, versions 8 and 9 "
            "layout 2 (hoodie.write.table.version picks it)", "Set it 1 or 2, or remove it", W),
    _unless("hoodie.base.file.format", ("PARQUET",), "this engine writes parquet base files",
            "Set it PARQUET or remove it", W, "hoodie.table.base.file.format", "hoodie.table.ro.file.format"),
    _unless("hoodie.write.record.merge.strategy.id", (_AVRO_MERGE_STRATEGY,),
            "this engine merges by payload class (Hudi's default Avro merge strategy only)", _REMOVE, W,
            "hoodie.datasource.write.record.merger.strategy", "hoodie.compaction.record.merger.strategy",
            "hoodie.record.merge.strategy.id"),
    _unless("hoodie.write.record.merge.custom.implementation.classes", (_AVRO_MERGER,),
            "this engine merges by payload class (HoodieRecordMerger implementations are Java code)", _REMOVE, W,
            "hoodie.datasource.write.record.merger.impls"),
    Refusal("hoodie.write.record.merge.mode", "a mode that is not the payload's",
            "the merge mode must be the one the payload class implements", _MERGE_MODE_WAY_OUT, W,
            ("hoodie.record.merge.mode",), test=_merge_mode_not_the_payloads),
    _any("hoodie.avro.schema", "this engine writes the schema of the data it is given",
         "Remove it; cast the data to the schema instead", W, "hoodie.write.schema"),
    _any("hoodie.internal.schema", "this engine keeps the internal schema itself (hoodie.schema.on.read.enable)",
         _REMOVE, W),
    _on("hoodie.avro.schema.external.transformation",
        "this engine does not rewrite stored records into a newer schema during merges", _REMOVE, W,
        "hoodie.avro.schema.externalTransformation"),
    _on("hoodie.datasource.write.schema.allow.auto.evolution.column.drop",
        "this engine refuses a write that drops table columns", "Set it false; keep every table column in the data",
        W),
    _any("hoodie.bulkinsert.user.defined.partitioner.class", "bulk_insert partitioners are Java code",
         "Remove it; hoodie.bulkinsert.sort.mode picks this engine's bulk_insert layout", W),
    _unless("hoodie.writestatus.class", ("org.apache.hudi.client.WriteStatus",), _NO_CLASS, _REMOVE, W),
    _unless("hoodie.fileid.prefix.provider.class", ("org.apache.hudi.table.RandomFileIdPrefixProvider",),
            _NO_CLASS + " (file ids are random UUIDs)", _REMOVE, W),
    _any("hoodie.client.init.callback.classes", _NO_CLASS, _REMOVE, W),
    _unless("hoodie.write.merge.handle.class", ("org.apache.hudi.io.FileGroupReaderBasedMergeHandle",
                                                "org.apache.hudi.io.HoodieWriteMergeHandle"), _NO_CLASS, _REMOVE, W),
    _unless("hoodie.write.concat.handle.class", ("org.apache.hudi.io.HoodieConcatHandle",), _NO_CLASS, _REMOVE, W),
    _unless("hoodie.compact.merge.handle.class", ("org.apache.hudi.io.FileGroupReaderBasedMergeHandle",
                                                  "org.apache.hudi.io.HoodieWriteMergeHandle"), _NO_CLASS, _REMOVE, W),
    _unless("hoodie.write.num.retries.on.conflict.failures", ("0",),
            "this engine fails a write that conflicts with another writer's commit; it does not retry it",
            "Set it 0 and retry the write yourself", W),
    _on("_.hoodie.allow.multi.write.on.same.instant", "every write of this engine is its own instant", _REMOVE, W),
    _on("hoodie.allow.operation.metadata.field", "this engine does not write the _hoodie_operation column",
        "Set it false or remove it", W),
    _off("hoodie.allow.empty.commit", "this engine commits a write even when it wrote no records",
         "Remove it, or skip empty writes yourself", W),
    Refusal("hoodie.merge.allow.duplicate.on.inserts", "true on COPY_ON_WRITE, false on MERGE_ON_READ",
            "inserts this engine routes into a small COPY_ON_WRITE base file replace its records of the same key "
            "(Hudi's false); on MERGE_ON_READ they are written beside the stored records (Hudi's true)",
            "Remove it (bulk_insert never merges inserts into stored files)", W, test=_not_this_engines_insert_packing),
    _off("hoodie.table.services.enabled", "this engine runs cleaning and archival after writes (and compaction when "
         "hoodie.compact.inline is true)", "Set hoodie.clean.automatic=false and hoodie.archive.automatic=false "
         "instead", W),
    _on("hoodie.rollback.instant.backup.enabled", "this engine does not back up rolled-back instants", _REMOVE, W),
    _on("hoodie.write.track.event.time.watermark", "this engine writes no event-time watermark into commit metadata",
        _REMOVE, W),
    _on("hoodie.write.set.null.for.missing.columns", "this engine refuses a write that lacks table columns",
        "Set it false; add the missing columns as nulls to the data", DS),
    # HoodieCommonConfig / HoodieTableConfig keys given as write options
    _on("hoodie.datasource.write.drop.partition.columns", "this engine keeps partition columns in the data files",
        "Set it false or remove it", "HoodieTableConfig"),
    Refusal("hoodie.payload.ordering.field", "fields other than the precombine field",
            "records are ordered by hoodie.datasource.write.precombine.field",
            "Remove it, or set it to the precombine field", "HoodiePayloadConfig", test=_not_the_precombine_field),
    # HoodieIndexConfig
    _any("hoodie.index.class", "index classes are Java code", "Remove it; hoodie.index.type picks the index", IDX),
    Refusal("hoodie.index.bucket.engine", "anything but SIMPLE with hoodie.index.type=BUCKET",
            "this engine's BUCKET index has a fixed number of buckets (no consistent hashing)",
            "Set it SIMPLE or remove it", IDX, test=_bucket_index(lambda v, g: v.upper() != "SIMPLE")),
    Refusal("hoodie.bucket.index.hash.field", "fields other than the record key with hoodie.index.type=BUCKET",
            "this engine's BUCKET index hashes the record key", "Remove it, or set it to the record key fields", IDX,
            test=_bucket_index(_not_the_record_key)),
    Refusal("hoodie.bucket.index.partition.expressions", "any value with hoodie.index.type=BUCKET",
            "this engine's BUCKET index has one number of buckets for every partition",
            "Remove it; set hoodie.bucket.index.num.buckets", IDX, test=_bucket_index(lambda v, g: True)),
    # HoodieStorageConfig
    _unless("hoodie.logfile.data.block.format", ("avro",), "this engine writes Avro data blocks into log files",
            "Set it avro or remove it", STO),
    _unless("hoodie.parquet.outputtimestamptype", ("TIMESTAMP_MICROS",),
            "this engine writes timestamps as parquet TIMESTAMP_MICROS", "Set it TIMESTAMP_MICROS or remove it", STO),
    _off("hoodie.parquet.write.utc-timezone.enabled", "this engine converts timestamps in UTC",
         "Set it true or remove it", STO),
    _unless("hoodie.avro.write.support.class", ("org.apache.hudi.avro.HoodieAvroWriteSupport",), _NO_CLASS, _REMOVE,
            STO),
    _unless("hoodie.parquet.spark.row.write.support.class",
            ("org.apache.hudi.io.storage.row.HoodieRowParquetWriteSupport",), _NO_CLASS, _REMOVE, STO),
    # HoodieLayoutConfig
    Refusal("hoodie.storage.layout.type", "BUCKET without hoodie.index.type=BUCKET, or any other layout",
            "the bucket layout comes with the BUCKET index", "Set hoodie.index.type=BUCKET, or remove it",
            "HoodieLayoutConfig", test=_bucket_layout_without_bucket_index),
    _unless("hoodie.storage.layout.partitioner.class", (_SIMPLE_BUCKET_PARTITIONER,), _NO_CLASS, _REMOVE,
            "HoodieLayoutConfig"),
    # HoodieCompactionConfig
    _on("hoodie.compact.schedule.inline", "this engine does not schedule a compaction without running it",
        "Set hoodie.compact.inline=true to compact after writes, or remove it", CMP),
    _on("hoodie.log.compaction.enable", "this engine does not run log compaction", "Set it false or remove it", CMP),
    _on("hoodie.log.compaction.inline", "this engine does not run log compaction", "Set it false or remove it", CMP),
    Refusal("hoodie.compact.inline.trigger.strategy", "anything but NUM_COMMITS with hoodie.compact.inline=true",
            "this engine triggers inline compaction by the number of delta commits only",
            "Set it NUM_COMMITS (with hoodie.compact.inline.max.delta.commits) or remove it", CMP,
            test=_inline_compaction_not_by_commits),
    # HoodieClusteringConfig
    _unless("hoodie.layout.optimize.curve.build.method", ("DIRECT",), "this engine builds z-order and Hilbert "
            "curves from the values themselves (DIRECT); SAMPLE's range sampling is not served",
            "Set it DIRECT or remove it", CLU),
    # HoodieMetadataConfig
    _on("hoodie.metadata.index.bloom.filter.enable", _NO_MDT + " (it keeps the bloom filters a Java writer built)",
        _NO_MDT_OUT, MD),
    _on("hoodie.metadata.index.expression.enable", _NO_MDT, _NO_MDT_OUT, MD),
    _on("hoodie.metadata.index.secondary.enable", _NO_MDT, _NO_MDT_OUT, MD),
    _on("hoodie.metadata.index.async", _NO_MDT, _NO_MDT_OUT, MD),
    _on("hoodie.metadata.log.compaction.enable", _NO_MDT, _NO_MDT_OUT, MD),
    _any("hoodie.metadata.index.drop", _NO_MDT + ", so it has no index to drop", _REMOVE, MD),
    # HoodieLockConfig
    _any("hoodie.write.lock.filesystem.path",
         "the lock file of this engine and of Java writers is .hoodie/lock; a lock elsewhere would not exclude them",
         "Remove it on every writer of the table", LCK),
    Refusal("hoodie.write.lock.conflict.resolution.strategy",
            "anything but SimpleConcurrentFileWritesConflictResolutionStrategy / "
            "BucketIndexConcurrentFileWritesConflictResolutionStrategy with optimistic concurrency control",
            "this engine resolves conflicts by file group (Hudi's simple strategy)", _REMOVE, LCK,
            test=_other_conflict_resolution),
    # DataSourceWriteOptions
    _on("hoodie.datasource.write.insert.drop.duplicates",
        "this engine does not drop incoming records whose keys the table holds",
        "Set it false; use upsert to keep keys unique", DS),
    _unless("hoodie.datasource.insert.dup.policy", ("none",),
            "this engine does not drop or fail on incoming records whose keys the table holds",
            "Set it none; use upsert to keep keys unique", DS),
    Refusal("hoodie.sql.insert.mode", "strict", "this engine does not check inserts against the keys the table holds",
            "Remove it; use upsert to keep keys unique", DS, values=("strict",)),
    _any("hoodie.datasource.write.partitions.to.delete", "this engine has no delete_partition operation",
         "Delete the partition's records with the delete operation, or use insert_overwrite", DS),
    # Catalog sync (hudi_engine.sync honours the rest)
    _on("hoodie.datasource.hive_sync.use_pre_apache_input_format", "this engine syncs Apache Hudi's input formats "
        "(org.apache.hudi.hadoop.*)", "Set it false or remove it", SYNC),
    _on("hoodie.datasource.hive_sync.bucket_sync", "this engine does not sync Hive bucket specs",
        "Set it false or remove it", SYNC),
    _unless("hoodie.datasource.hive_sync.base_file_format", ("PARQUET",), "this engine writes parquet base files",
            "Set it PARQUET or remove it", SYNC),
    Refusal("hoodie.datasource.hive_sync.mode", "jdbc", "this engine syncs through the Spark session's own Hive "
            "metastore client; it has no HiveServer2 (JDBC) client", "Set it hms (or remove it) and give the Spark "
            "session the metastore (spark.sql.catalogImplementation=hive, hive.metastore.uris)", SYNC,
            values=("jdbc",)),
    # Callbacks, validators, error table
    _on("hoodie.write.commit.callback.on", "this engine runs no commit callbacks",
        "Set it false; act on the write's result instead", "HoodieWriteCommitCallbackConfig"),
    _any("hoodie.precommit.validators", "pre-commit validators are Java / Spark SQL code",
         "Remove it; validate the data before the write", "HoodiePreCommitValidatorConfig"),
    _on("hoodie.errortable.enable", "this engine writes no error table", "Set it false or remove it",
        "HoodieErrorTableConfig"),
    _on("hoodie.archive.beyond.savepoint", "this engine's archival stops at the earliest savepoint",
        "Set it false or remove it", "HoodieArchivalConfig"),
    _on("hoodie.metrics.on", "this engine publishes no Hudi metrics (the write's result carries its counts)",
        "Set it false or remove it", "HoodieMetricsConfig"),
    _unless("hoodie.keygen.datetime.parser.class", ("org.apache.hudi.keygen.parser.HoodieDateTimeParser",),
            _NO_CLASS + " (the timestamp key generator parses dates itself)", _REMOVE, "TimestampKeyGeneratorConfig",
            "hoodie.deltastreamer.keygen.datetime.parser.class"),
    _on("hoodie.write.complex.keygen.new.encoding",
        "this engine writes a ComplexKeyGenerator key of one field as `field:value` (Hudi 0.14.0 and earlier, and "
        "later releases with this option false), so that keys match the ones already in the table",
        "Set it false or remove it", W),
    _on("hoodie.merge.prefer.old.record", "of two records with equal ordering values this engine keeps the incoming "
        "one (Hudi's default)", "Set it false or remove it", "HoodieReaderConfig"),
    _any("hoodie.prewrite.validators", "pre-write validators are Java code",
         "Remove it; validate the data before the write", "HoodiePreWriteValidatorConfig"),
    _on("hoodie.partition.ttl.inline", "this engine does not delete expired partitions after a write",
        "Set it false; delete old partitions with a delete or insert_overwrite write", "HoodieTTLConfig"),
    _on("hoodie.table.service.manager.enabled", "this engine runs its table services itself, not through Hudi's "
        "table service manager", "Set it false or remove it", "HoodieTableServiceManagerConfig"),
    _on("hoodie.metaserver.enabled", "this engine keeps the timeline in the table's .hoodie folder, not in a Hudi "
        "metaserver", "Set it false or remove it", "HoodieMetaserverConfig"),
    _credential("hoodie.aws.access.key"),
    _credential("hoodie.aws.secret.key"),
    _credential("hoodie.aws.session.token"),
    _credential("hoodie.aws.role.arn"),
)

# ---- accepted, no effect ----------------------------------------------------------------------------------------
_JAVA = "tuning of Java / Spark internals; this engine has its own and the written table is the same"
_CLUSTERING_SETTINGS = ("settings of inline, async or Spark-parallel clustering, which this engine does not run "
                        "(turning it on is refused; HudiTable.cluster plans and executes on request)")
_MDT_SETTINGS = ("settings of the metadata table that change nothing in the one this engine creates "
                 "(hoodie.metadata.enable, true by default: files only) or keeps up to date and compacts (files, and the column "
                 "and partition stats Java built)")
_SYNC_SETTINGS = ("settings of Hudi's sync tools that change nothing in the synced entry here (connections "
                  "this engine does not open: it syncs through the Spark session's metastore client and boto3; "
                  "batching and parallelism of Java's client; comments)")

NO_OPS: tuple[NoOps, ...] = (
    NoOps(W, _JAVA, (
        "hoodie.write.auto.upgrade", "hoodie.write.tagged.record.storage.level", "hoodie.record.size.estimator.class",
        "_hoodie.record.size.estimator.max.commits", "hoodie.record.size.estimator.average.metadata.size",
        "hoodie.write.executor.type", "hoodie.rollback.using.markers", "hoodie.fail.job.on.duplicate.data.file.detection",
        "hoodie.write.concurrency.schema.conflict.resolution.enable", "hoodie.avro.schema.validate",
        "hoodie.bulkinsert.user.defined.partitioner.sort.columns", "hoodie.bulkinsert.sort.suffix.record_key",
        "hoodie.rollback.parallelism", "hoodie.write.buffer.limit.bytes", "hoodie.write.buffer.record.sampling.rate",
        "hoodie.write.buffer.record.cache.limit", "hoodie.write.executor.disruptor.buffer.limit.bytes",
        "hoodie.write.executor.disruptor.wait.strategy", "hoodie.write.status.storage.level",
        "hoodie.finalize.write.parallelism", "hoodie.write.markers.type",
        "hoodie.markers.timeline_server_based.batch.num_threads",
        "hoodie.markers.timeline_server_based.batch.interval_ms", "hoodie.markers.delete.parallelism",
        "hoodie.embed.timeline.server", "hoodie.embed.timeline.server.reuse.enabled",
        "hoodie.embed.timeline.server.port", "hoodie.embed.timeline.server.threads",
        "hoodie.embed.timeline.server.gzip", "hoodie.embed.timeline.server.async", "hoodie.fail.on.timeline.archiving",
        "hoodie.fail.writes.on.inline.table.service.exception", "hoodie.consistency.check.initial_interval_ms",
        "hoodie.consistency.check.max_interval_ms", "hoodie.consistency.check.max_checks",
        "hoodie.merge.data.validation.enabled", "hoodie.merge.small.file.group.candidates.limit",
        "hoodie.cdc.file.group.iterator.memory.spill.bytes", "hoodie.release.resource.on.completion.enable",
        "hoodie.auto.adjust.lock.configs", "hoodie.skip.default.partition.validation",
        "hoodie.write.concurrency.early.conflict.detection.strategy",
        "hoodie.write.concurrency.early.conflict.detection.enable",
        "hoodie.write.concurrency.async.conflict.detector.initial_delay_ms",
        "hoodie.write.concurrency.async.conflict.detector.period_ms",
        "hoodie.write.concurrency.early.conflict.check.commit.conflict", "hoodie.sensitive.config.keys",
        "hoodie.rollback.instant.backup.dir", "hoodie.write.record.positions", "hoodie.schema.cache.enable",
        "hoodie.table.services.incremental.enabled", "hoodie.write.merge.handle.fallback", "hoodie.auto.commit",
        "hoodie.write.complex.keygen.validation.enable",
    )),
    NoOps(IDX, "lookup tuning of Java's index implementations, or settings of index types that are refused", (
        "hoodie.bloom.index.parallelism", "hoodie.bloom.index.prune.by.ranges", "hoodie.bloom.index.use.caching",
        "hoodie.bloom.index.use.treebased.filter", "hoodie.bloom.index.bucketized.checking",
        "hoodie.bloom.index.keys.per.bucket", "hoodie.bloom.index.input.storage.level",
        "hoodie.bloom.index.update.partition.path", "hoodie.simple.index.use.caching",
        "hoodie.simple.index.parallelism", "hoodie.global.simple.index.parallelism",
        "hoodie.simple.index.input.storage.level", "hoodie.record.index.use.caching",
        "hoodie.record.index.input.storage.level",
        "hoodie.global.index.reconcile.parallelism", "hoodie.bucket.index.remote.partitioner.enable",
        "hoodie.bucket.index.partition.rule.type", "hoodie.bucket.index.max.num.buckets",
        "hoodie.bucket.index.min.num.buckets", "hoodie.bucket.index.split.threshold",
        "hoodie.bucket.index.merge.threshold", "hoodie.bucket.index.query.pruning",
        "hoodie.bloom.index.use.metadata",  # Hudi reads footers too when the metadata table has no bloom filters
    )),
    NoOps("HoodieHBaseIndexConfig", "settings of the HBASE index (hoodie.index.type=HBASE is refused)", (
        "hoodie.index.hbase.zkquorum", "hoodie.index.hbase.zkport", "hoodie.index.hbase.table",
        "hoodie.index.hbase.get.batch.size", "hoodie.index.hbase.zknode.path", "hoodie.index.hbase.put.batch.size",
        "hoodie.index.hbase.qps.allocator.class", "hoodie.index.hbase.put.batch.size.autocompute",
        "hoodie.index.hbase.qps.fraction", "hoodie.index.hbase.max.qps.per.region.server",
        "hoodie.index.hbase.dynamic_qps", "hoodie.index.hbase.min.qps.fraction",
        "hoodie.index.hbase.max.qps.fraction", "hoodie.index.hbase.desired_puts_time_in_secs",
        "hoodie.index.hbase.sleep.ms.for.put.batch", "hoodie.index.hbase.sleep.ms.for.get.batch",
        "hoodie.index.hbase.zk.session_timeout_ms", "hoodie.index.hbase.zk.connection_timeout_ms",
        "hoodie.index.hbase.zkpath.qps_root", "hoodie.hbase.index.update.partition.path",
        "hoodie.index.hbase.rollback.sync", "hoodie.index.hbase.security.authentication",
        "hoodie.index.hbase.kerberos.user.keytab", "hoodie.index.hbase.kerberos.user.principal",
        "hoodie.index.hbase.regionserver.kerberos.principal", "hoodie.index.hbase.master.kerberos.principal",
    )),
    NoOps(STO, "file-format details readers do not see, or settings of ORC / HFile base files (refused by "
          "hoodie.base.file.format)", (
        "hoodie.parquet.page.size", "hoodie.parquet.compression.ratio", "hoodie.parquet.dictionary.enabled",
        "hoodie.parquet.writelegacyformat.enabled", "hoodie.parquet.field_id.write.enabled",
        "hoodie.parquet.bloom.filter.enabled", "hoodie.logfile.to.parquet.compression.ratio",
        "hoodie.orc.max.file.size", "hoodie.orc.stripe.size", "hoodie.orc.block.size", "hoodie.orc.compression.codec",
        "hoodie.hfile.max.file.size", "hoodie.hfile.block.size", "hoodie.hfile.compression.algorithm",
        "hoodie.parquet.flink.rowdata.write.support.class", "hoodie.storage.class", "hoodie.io.factory.class",
    )),
    NoOps(COM, _JAVA, (
        "hoodie.base.path", "hoodie.datasource.write.new.columns.nullable", "hoodie.common.spillable.diskmap.type",
        "hoodie.common.diskmap.compression.enabled", "hoodie.read.timeline.holes.resolution.policy",
        "hoodie.fs.atomic_creation.support", "hoodie.memory.compaction.max.size", "hoodie.memory.dfs.buffer.max.size",
    )),
    NoOps(COM, "this engine keeps the table's schema and refuses a write that lacks table columns, with or without "
          "it (Hudi's reconciliation would keep the schema too)", ("hoodie.datasource.write.reconcile.schema",)),
    NoOps("HoodieMemoryConfig", _JAVA + " (spillable maps, merge memory)", (
        "hoodie.memory.merge.fraction", "hoodie.memory.compaction.fraction", "hoodie.memory.merge.max.size",
        "hoodie.memory.spillable.map.path", "hoodie.memory.externalsorter.path",
        "hoodie.memory.writestatus.failure.fraction",
    )),
    NoOps(CMP, "compaction planning tuning: which file groups a compaction picks and how it runs; every reader "
          "sees the same records", (
        "hoodie.compact.inline.max.delta.seconds", "hoodie.record.size.estimation.threshold",
        "hoodie.compaction.target.io", "hoodie.compaction.logfile.size.threshold",
        "hoodie.compaction.logfile.num.threshold", "hoodie.compaction.strategy",
        "hoodie.compaction.daybased.target.partitions", "hoodie.compaction.partition.path.regex",
        "hoodie.copyonwrite.insert.split.size", "hoodie.copyonwrite.insert.auto.split",
        "hoodie.log.compaction.blocks.threshold", "hoodie.compaction.sort.merge",
        "hoodie.compaction.external.sorter.type", "hoodie.compaction.progress.log.internal.num",
        "hoodie.compaction.magnification.ratio.base.file", "hoodie.compaction.magnification.ratio.log.file",
        "hoodie.compaction.lazy.block.read", "hoodie.compaction.reverse.log.read",
        "hoodie.datasource.compaction.async.enable",
    )),
    NoOps("HoodieCleanConfig", "cleaning runs after every commit here; the retention options (declared) decide what "
          "stays readable", (
        "hoodie.clean.async", "hoodie.cleaner.hours.retained", "hoodie.clean.trigger.strategy",
        "hoodie.clean.max.commits", "hoodie.cleaner.incremental.mode", "hoodie.cleaner.parallelism",
        "hoodie.clean.allow.multiple", "hoodie.cleaner.delete.bootstrap.base.file",
    )),
    NoOps("HoodieArchivalConfig", "archival runs after the cleaning here; hoodie.keep.min/max.commits (declared) "
          "decide what stays on the active timeline", (
        "hoodie.archive.async", "hoodie.archive.delete.parallelism", "hoodie.commits.archival.batch",
        "hoodie.archive.merge.files.batch.size", "hoodie.archive.merge.small.file.limit.bytes",
        "hoodie.archive.merge.enable",
    )),
    NoOps(CLU, _CLUSTERING_SETTINGS, (
        "hoodie.clustering.max.parallelism",
        "hoodie.clustering.group.read.parallelism", "hoodie.layout.optimize.enable",
        "hoodie.layout.optimize.build.curve.sample.size", "hoodie.layout.optimize.data.skipping.enable",
        "hoodie.file.stitching.binary.copy.schema.evolution.enable",
    )),
    NoOps(MD, _MDT_SETTINGS, (
        "hoodie.metadata.metrics.enable",
        "hoodie.metadata.log.compaction.blocks.threshold", "hoodie.metadata.dir.filter.regex",
        "hoodie.file.listing.parallelism", "hoodie.metadata.index.bloom.filter.file.group.count",
        "hoodie.metadata.index.bloom.filter.parallelism", "hoodie.metadata.index.bloom.filter.column.list",
        "hoodie.metadata.index.column.stats.file.group.count", "hoodie.metadata.index.column.stats.parallelism",
        "hoodie.metadata.index.column.stats.processing.mode.override",
        "hoodie.metadata.index.column.stats.inMemory.projection.threshold",
        "hoodie.metadata.index.check.timeout.seconds", "_hoodie.metadata.ignore.spurious.deletes",
        "hoodie.metadata.optimized.log.blocks.scan.enable", "hoodie.metadata.max.deltacommits.when_pending",
        "hoodie.metadata.max.init.parallelism", "hoodie.metadata.max.reader.memory",
        "hoodie.metadata.max.reader.buffer.size", "hoodie.metadata.spillable.map.path",
        "hoodie.metadata.max.logfile.size", "hoodie.metadata.auto.initialize",
        "hoodie.metadata.index.expression.file.group.count", "hoodie.metadata.index.expression.parallelism",
        "hoodie.metadata.index.expression.column", "hoodie.metadata.index.expression.options",
        "hoodie.metadata.index.partition.stats.file.group.count", "hoodie.metadata.index.partition.stats.parallelism",
        "hoodie.metadata.index.secondary.parallelism", "hoodie.metadata.index.secondary.column",
        "hoodie.metadata.insert.parallelism", "hoodie.metadata.clean.async", "hoodie.metadata.keep.min.commits",
        "hoodie.metadata.keep.max.commits", "hoodie.metadata.cleaner.commits.retained",
        "hoodie.metadata.enable.full.scan.log.files", "hoodie.metadata.populate.meta.fields",
    )),
    NoOps(MD, "deprecated in Hudi 1.2: partition stats follow hoodie.metadata.index.column.stats.enable (a "
              "partitioned table gets them with column stats)", ("hoodie.metadata.index.partition.stats.enable",)),
    NoOps(MD, "a listing shortcut for tables written by Hudi before 0.3.1; this engine lists partitions from storage",
          ("hoodie.assume.date.partitioning",)),
    NoOps(LCK, "lock retry tuning (this engine waits up to hoodie.write.lock.wait_time_ms), or settings of "
          "ZooKeeper / Hive metastore locks (those providers are refused)", (
        "hoodie.write.lock.wait_time_ms_between_retry", "hoodie.write.lock.max_wait_time_ms_between_retry",
        "hoodie.write.lock.client.wait_time_ms_between_retry", "hoodie.write.lock.num_retries",
        "hoodie.write.lock.client.num_retries", "hoodie.write.lock.heartbeat_interval_ms",
        "hoodie.write.lock.hivemetastore.database", "hoodie.write.lock.hivemetastore.table",
        "hoodie.write.lock.hivemetastore.uris", "hoodie.write.lock.zookeeper.base_path",
        "hoodie.write.lock.zookeeper.session_timeout_ms", "hoodie.write.lock.zookeeper.connection_timeout_ms",
        "hoodie.write.lock.zookeeper.url", "hoodie.write.lock.zookeeper.port", "hoodie.write.lock.zookeeper.lock_key",
    )),
    NoOps("HoodieBootstrapConfig", "settings of the bootstrap operation (refused by hoodie.datasource.write.operation)",
          ("hoodie.bootstrap.mode.selector.regex.mode", "hoodie.bootstrap.mode.selector",
           "hoodie.bootstrap.data.queries.only", "hoodie.bootstrap.full.input.provider",
           "hoodie.bootstrap.partitionpath.translator.class", "hoodie.bootstrap.parallelism",
           "hoodie.bootstrap.mode.selector.regex")),
    NoOps("HoodiePayloadConfig", "used by Hudi for commit statistics only", ("hoodie.payload.event.time.field",)),
    NoOps(DS, "options of Spark SQL statements (the operation of a write here is hoodie.datasource.write.operation), "
          "Spark streaming or the Spark row writer; a dataframe write of this engine writes the same table without "
          "them", (
        "hoodie.datasource.write.row.writer.enable", "hoodie.sql.bulk.insert.enable",
        "hoodie.spark.sql.insert.into.operation", "hoodie.spark.sql.optimized.writes.enable",
        "hoodie.datasource.overwrite.mode", "hoodie.datasource.write.streaming.retry.count",
        "hoodie.datasource.write.streaming.retry.interval.ms", "hoodie.datasource.write.streaming.ignore.failed.batch",
        "hoodie.datasource.write.streaming.checkpoint.identifier",
        "hoodie.datasource.write.streaming.disable.compaction", "hoodie.streamer.source.kafka.value.deserializer.class",
        "hoodie.deltastreamer.source.kafka.value.deserializer.class",
    )),
    NoOps(SYNC, _SYNC_SETTINGS, (
        "hoodie.datasource.meta.sync.base.path", "hoodie.datasource.hive_sync.assume_date_partitioning",
        "hoodie.meta.sync.metadata_file_listing", "hoodie.datasource.meta_sync.condition.sync",
        "hoodie.datasource.hive_sync.username", "hoodie.datasource.hive_sync.password",
        "hoodie.datasource.hive_sync.jdbcurl", "hoodie.datasource.hive_sync.use_jdbc",
        "hoodie.datasource.hive_sync.metastore.uris", "hoodie.datasource.hive_sync.batch_num",
        "hoodie.datasource.hive_sync.batching.enabled", "hoodie.datasource.hive_sync.batching.threads",
        "hoodie.datasource.hive_sync.bucket_sync_spec", "hoodie.datasource.hive_sync.sync_comment",
        "hoodie.datasource.hive_sync.use_spark_catalog",
    )),
    NoOps("FileSystemViewStorageConfig / ConsistencyGuardConfig / HoodieTimeGeneratorConfig",
          _JAVA + " (the file system view and timeline server, eventual-consistency waits, instant time generation; "
          "this engine lists storage and takes instant times under the table lock)", (
        "hoodie.filesystem.view.type", "hoodie.filesystem.view.incr.timeline.sync.enable",
        "hoodie.filesystem.view.secondary.type", "hoodie.filesystem.view.remote.host",
        "hoodie.filesystem.view.remote.port", "hoodie.filesystem.view.spillable.dir",
        "hoodie.filesystem.view.spillable.mem", "hoodie.filesystem.view.spillable.compaction.mem.fraction",
        "hoodie.filesystem.view.spillable.bootstrap.base.file.mem.fraction",
        "hoodie.filesystem.view.spillable.replaced.mem.fraction",
        "hoodie.filesystem.view.spillable.clustering.mem.fraction", "hoodie.filesystem.view.rocksdb.base.path",
        "hoodie.filesystem.view.remote.timeout.secs", "hoodie.filesystem.view.remote.retry.enable",
        "hoodie.filesystem.view.remote.retry.max_numbers", "hoodie.filesystem.view.remote.retry.initial_interval_ms",
        "hoodie.filesystem.view.remote.retry.max_interval_ms", "hoodie.filesystem.view.remote.retry.exceptions",
        "hoodie.filesystem.remote.backup.view.enable", "hoodie.consistency.check.enabled",
        "_hoodie.optimistic.consistency.guard.enable", "hoodie.optimistic.consistency.guard.sleep_time_ms",
        "hoodie.time.generator.type", "hoodie.time.generator.max_expected_clock_skew_ms",
    )),
    NoOps("HoodieReaderConfig", "how Java reads log files while merging or querying; the records are the same", (
        "hoodie.file.group.reader.enabled", "hoodie.merge.use.record.positions", "_hoodie.hfile.use.native.reader",
        "hoodie.optimized.log.blocks.scan.enable", "hoodie.datasource.merge.type",
    )),
    NoOps("HoodieTTLConfig / HoodieTableServiceManagerConfig / HoodieMetaserverConfig",
          "settings of partition TTL, the table service manager and the metaserver (turning them on is refused)", (
        "hoodie.partition.ttl.strategy.class", "hoodie.partition.ttl.management.strategy.type",
        "hoodie.partition.ttl.strategy.days.retain", "hoodie.partition.ttl.strategy.partition.selected",
        "hoodie.partition.ttl.strategy.max.delete.partitions", "hoodie.partition.ttl.strategy.event.time.format",
        "hoodie.partition.ttl.strategy.event.time.segment.start.index",
        "hoodie.partition.ttl.strategy.event.time.delete.hive.default.partition",
        "hoodie.table.service.manager.uris", "hoodie.table.service.manager.actions",
        "hoodie.table.service.manager.deploy.username", "hoodie.table.service.manager.deploy.queue",
        "hoodie.table.service.manager.deploy.resources", "hoodie.table.service.manager.deploy.parallelism",
        "hoodie.table.service.manager.execution.engine", "hoodie.table.service.manager.deploy.extra.params",
        "hoodie.table.service.manager.connection.timeout.sec", "hoodie.table.service.manager.connection.retries",
        "hoodie.table.service.manager.connection.retry.delay.sec", "hoodie.metaserver.uris",
        "hoodie.metaserver.connect.retries", "hoodie.metaserver.connect.retry.delay",
    )),
    NoOps("HoodieMetricsConfig", "settings of Hudi metrics reporting (turning it on is refused)", (
        "hoodie.metrics.reporter.type", "hoodie.metrics.reporter.class", "hoodie.metrics.reporter.metricsname.prefix",
        "hoodie.metrics.executor.enable", "hoodie.metrics.lock.enable", "hoodie.metrics.configs.properties",
    )),
    NoOps("HoodieAWSConfig", "settings of AWS role assumption (refused with hoodie.aws.role.arn)", (
        "hoodie.aws.role.session.name", "hoodie.aws.role.external.id", "hoodie.aws.sts.endpoint",
        "hoodie.aws.sts.region",
    )),
    NoOps("GlueCatalogSyncClientConfig", _SYNC_SETTINGS, (
        "hoodie.datasource.meta.sync.glue.all_partitions_read_parallelism",
        "hoodie.datasource.meta.sync.glue.changed_partitions_read_parallelism",
        "hoodie.datasource.meta.sync.glue.partition_change_parallelism",
        "hoodie.datasource.meta.sync.glue.metadata_file_listing",
        "hoodie.datasource.meta.sync.glue.partition_index_fields.enable",
        "hoodie.datasource.meta.sync.glue.partition_index_fields",
        "hoodie.datasource.meta.sync.glue.recreate_table_on_error",
    )),
    NoOps("HoodieIndexingConfig", "definitions of metadata-table indexes (Spark SQL CREATE INDEX), which this engine "
          "does not write (turning them on is refused)", (
        "hoodie.index.name", "hoodie.expression.index.type", "hoodie.expression.index.function",
        "hoodie.expression.index.range.metadata.storage.level",
    )),
    NoOps("HoodieWriteCommitCallbackConfig", "settings of commit callbacks (turning them on is refused)", (
        "hoodie.write.commit.callback.class", "hoodie.write.commit.callback.http.url",
        "hoodie.write.commit.callback.http.api.key", "hoodie.write.commit.callback.http.timeout.seconds",
    )),
    NoOps("HoodiePreCommitValidatorConfig", "inputs of pre-commit validators (naming validators is refused)", (
        "hoodie.precommit.validators.equality.sql.queries", "hoodie.precommit.validators.single.value.sql.queries",
        "hoodie.precommit.validators.inequality.sql.queries",
        "hoodie.precommit.validators.streaming.offset.tolerance.percentage", "hoodie.precommit.validators.warn.only",
    )),
    NoOps("HoodieErrorTableConfig", "settings of the error table (turning it on is refused)", (
        "hoodie.errortable.base.path", "hoodie.errortable.target.table.name",
        "hoodie.errortable.upsert.shuffle.parallelism", "hoodie.errortable.insert.shuffle.parallelism",
        "hoodie.errortable.write.class", "hoodie.errortable.validate.targetschema.enable",
        "hoodie.errortable.validate.recordcreation.enable", "hoodie.errortable.write.failure.strategy",
    )),
)

# ---- table-config keys that state what a table is -------------------------------------------------------------
@dataclass(frozen=True)
class Stated:
    """A `hoodie.properties` key (HoodieTableConfig) that this engine sets itself: given as an option (Spark SQL's
    TBLPROPERTIES, a DataFrame write's options), it must state what the table has, or for a new table what this
    engine writes into its hoodie.properties (`absent`: the value a table without the key has). Another value is
    refused by name (`WriteConfig.contradictions`, `WriteConfig.new_table_config`), since nothing else would make it
    true. A key ending in `*` is a prefix."""

    key: str
    absent: str
    why: str

    def matches(self, key: str) -> bool:
        return key.startswith(self.key[:-1]) if self.key.endswith("*") else key == self.key

    def value_of(self, props: Mapping[str, str], key: str) -> str:
        return (props.get(key) or "").strip() or self.absent

    def differs(self, given: str, props: Mapping[str, str], key: str) -> bool:
        return (given.strip() or self.absent).lower() != self.value_of(props, key).lower()


def _unset(why: str, *keys: str) -> tuple[Stated, ...]:
    """Keys a table this engine creates does not have."""
    return tuple(Stated(k, "", why) for k in keys)


_SET_BY_VERSION = "follows the table version (hoodie.write.table.version)"
_METADATA = "this engine creates no metadata table, index or secondary index"
_BOOTSTRAP = "this engine does not bootstrap tables from existing files"
_MERGE_BY = "a table's merging is set by the payload class / merge mode options (payloadClass, recordMergeMode)"
STATED: tuple[Stated, ...] = (
    Stated("hoodie.table.initial.version", "", _SET_BY_VERSION),
    Stated("hoodie.timeline.layout.version", "", _SET_BY_VERSION + ": 1 for version 6, 2 for versions 8 and 9"),
    Stated("hoodie.timeline.path", "", "Hudi's default folder `timeline` of a version 8 or 9 table"),
    Stated("hoodie.timeline.history.path", "", "Hudi's default folder `history` of a version 8 or 9 table"),
    Stated("hoodie.archivelog.folder", "", "Hudi's default folder `archived`"),
    Stated("hoodie.table.create.schema", "", "a new table's schema is its columns (CREATE TABLE) or its first rows"),
    Stated("hoodie.table.checksum", "", "computed from the database and table names"),
    Stated("hoodie.table.timeline.timezone", "LOCAL",
           "a new table's instant times are UTC unless LOCAL is given (Hudi's default: the writing machine's zone)"),
    Stated("hoodie.table.log.file.format", "HOODIE_LOG", "this engine writes Hudi's log files"),
    Stated("hoodie.table.rt.file.format", "HOODIE_LOG", "this engine writes Hudi's log files"),
    Stated("hoodie.table.format", "NATIVE", "this engine writes Hudi's own table format"),
    Stated("hoodie.table.multiple.base.file.formats.enable", "false", "this engine writes parquet base files only"),
    Stated("hoodie.partition.metafile.use.base.format", "false",
           "a new table's partition metafiles are Hudi's default text files"),
    *_unset(_METADATA, "hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight",
            "hoodie.table.secondary.indexes.metadata", "hoodie.table.index.defs.path"),
    Stated("hoodie.table.partial.update.mode", "NONE", _MERGE_BY),
    *_unset(_MERGE_BY, "hoodie.table.legacy.payload.class", "hoodie.table.merge.properties",
            "hoodie.record.merge.property.*", "hoodie.compaction.payload.type"),
    Stated("hoodie.table.partition_extractor_class", "",
           "catalog sync takes hoodie.datasource.hive_sync.partition_extractor_class"),
    *_unset(_BOOTSTRAP, "hoodie.bootstrap.base.path", "hoodie.bootstrap.index.enable", "hoodie.bootstrap.index.class",
            "hoodie.bootstrap.index.type"),
)


def stated(key: str) -> Stated | None:
    """The declaration of a table-config key this engine sets itself (None: not one)."""
    return next((s for s in STATED if s.matches(key)), None)


def stated_problems(given: Given, props: Mapping[str, str], what: str) -> list[str]:
    """One line per stated key of `given` whose value is not the one in `props` (a table's hoodie.properties, or
    the one this engine writes for a new table: `what` says which)."""
    out = []
    for key, value in given.items():
        s = stated(key)
        if s is not None and s.differs(value, props, key):
            out.append(f"{key}={value!r} is not {what} ({s.value_of(props, key) or 'unset'}): {s.why}; remove it")
    return out


def _by_key() -> dict[str, Refusal]:
    return {k: r for r in REFUSALS for k in r.all_keys}


REFUSED_BY_KEY = _by_key()
NO_OP_KEYS: frozenset[str] = frozenset(k for group in NO_OPS for k in group.keys)


def refusals(given: Given) -> list[str]:
    """One line per option that asks for something this engine does not do (empty: none)."""
    return [REFUSED_BY_KEY[key].message(key, value) for key, value in given.items()
            if key in REFUSED_BY_KEY and REFUSED_BY_KEY[key].refuses(value, given)]


_KNOWN_KEYS = frozenset(REFUSED_BY_KEY) | NO_OP_KEYS | frozenset(s.key for s in STATED)


def known_keys() -> frozenset[str]:
    """Every key classified here (refused for some values, stated, or a no-op): not a typo of a declared key."""
    return _KNOWN_KEYS


def classification_markdown() -> str:
    """`docs/options.md`: every write option classified (honoured, refused, accepted no-op), from the declarations
    and this module."""
    from hudi_engine.config.keys import WRITE_OPTIONS

    def keys_of(key: str, aliases: tuple[str, ...]) -> str:
        return " / ".join(f"`{k}`" for k in (key, *aliases))

    lines = [
        "# Hudi write options: honoured, refused, or accepted without effect",
        "",
        "<!-- Generated by `python -m hudi_engine.config --classification docs/options.md` from hudi_engine/config/keys.py "
        "and hudi_engine/config/hudi_keys.py; tests/config/test_hudi_keys.py keeps it equal. -->",
        "",
        "An options dict written for Hudi's Java writer (Spark datasource, Hudi Streamer, a dbt model's "
        "`hudi_options`) is checked key by key before anything is written. Every write-side key of Hudi 0.14 .. 1.2's "
        "config classes is in one of these lists:",
        "",
        "* **honoured**: declared in `hudi_engine/config/keys.py`, typed by `WriteConfig`, documented in "
        "[configuration.md](configuration.md);",
        "* **refused**: the listed values ask for a behaviour this engine does not have. The write fails before its "
        "first file with one error naming the table, every such key, its value, why, and what to do instead. The "
        "key's other values (usually the default, e.g. `false` for a feature switch) are accepted and change nothing;",
        "* **accepted, no effect**: any value is accepted and the written table is what it would be without the key "
        "(tuning of Java-only code paths, or settings of a feature that is off or refused by another key); one "
        "warning per write names the keys of this kind it was given.",
        "",
        "A key in none of the lists is kept as given (a key starting with the commit metadata prefix `_` goes into "
        "the commit's extra metadata) and warned about when it looks like a typo of a declared key.",
        "",
        "The check is `WriteConfig.from_options`: every writer (`hudi_engine.spark.write` / `write_small`, the local "
        "writer) and the dbt adapter (a model's `hudi_options`, checked when the model is compiled, and the "
        "table-service operations, `dbt run-operation hudi_compact` and its siblings) go through it, so one error lists every refused "
        "key together with every bad value. A value is refused only when the option asks for something this engine "
        "does not do; where that depends on other options (the precombine field, the record key, the index or table "
        "type, the payload), the options of the same write decide. `hoodie.merge.allow.duplicate.on.inserts` reads "
        "the table type from the options: on a MERGE_ON_READ table give `hoodie.datasource.write.table.type` too.",
        "",
        "`hoodie.metadata.enable`: false is accepted and disables a table's metadata table the way Hudi does; true "
        "(the default, as in Hudi's Spark writers) creates one with the `files` partition (from a listing) when the "
        "table has none this engine keeps. A metadata table this engine keeps (`files`, with column and partition "
        "stats and the global record index) is kept up to date with this engine's commits, compactions, cleans and "
        "rollbacks (and compacted, after `hoodie.metadata.compact.max.delta.commits` delta commits), and any other "
        "is disabled before this engine's first write or table service, so that Java readers list the files this "
        "engine adds or deletes.",
        "",
        f"## Honoured ({len(WRITE_OPTIONS)} options)",
        "",
        "| key | what it does |",
        "|---|---|",
    ]
    lines += [f"| {keys_of(o.key, o.aliases)} | {o.doc} |" for o in WRITE_OPTIONS]
    lines += ["", f"## Refused ({len(REFUSALS)} keys)", "", "| key | refused values | why | instead | Hudi class |",
              "|---|---|---|---|---|"]
    lines += [f"| {keys_of(r.key, r.aliases)} | {r.refused} | {r.reason} | {r.way_out} | {r.hudi_class} |"
              for r in sorted(REFUSALS, key=lambda r: (r.hudi_class, r.key))]
    lines += ["", f"## Table config keys this engine sets itself ({len(STATED)} keys)", "",
              "Keys of `hoodie.properties` (HoodieTableConfig) given as options, e.g. in Spark SQL's TBLPROPERTIES: "
              "the value must be the table's (an existing table) or the one this engine writes into a new table's "
              "`hoodie.properties`; any other is refused by name before anything is written.", "",
              "| key | a table without it has | why |", "|---|---|---|"]
    lines += [f"| `{s.key}` | {s.absent or '(unset)'} | {s.why} |" for s in STATED]
    lines += ["", f"## Accepted, no effect ({len(NO_OP_KEYS)} keys)", ""]
    for group in NO_OPS:
        lines += [f"**{group.hudi_class}**: {group.why}.", "", ", ".join(f"`{k}`" for k in group.keys), ""]
    return "\n".join(lines) + "\n"

