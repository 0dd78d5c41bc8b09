"""Every `hoodie.*` option this engine knows, declared once: key, type, default, accepted values, doc, Hudi aliases
(and, apart from them, the internal `hudi_engine.read.*` keys its read paths hand one another).

Defaults are Hudi 0.14/0.15's (`hudi_default`) unless `default_note` says why this engine differs. The option
tables of docs/configuration.md are generated from this list (`python -m hudi_engine.config docs/configuration.md`),
and a test keeps the two equal.
Typed views of these options (`WriteConfig` and its parts) are built in `hudi_engine.config.write_config`.
"""
from __future__ import annotations

from hudi_engine.config.option import ConfigOption, Kind

MB = 1024 * 1024
_PAYLOADS = "org.apache.hudi.common.model."
_KEYGENS = "org.apache.hudi.keygen."

# ---- table and keys ---------------------------------------------------------------------------------------------
TABLE_NAME: ConfigOption[str] = ConfigOption(
    "hoodie.table.name", Kind.STRING, "", "Table name; required to create a table, must match an existing one.",
    "table", aliases=("hoodie.datasource.write.table.name",))
DATABASE_NAME: ConfigOption[str] = ConfigOption(
    "hoodie.database.name", Kind.STRING, "", "Database name stored in hoodie.properties of a new table "
    "('default' when unset).", "table")
OPERATION: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.operation", Kind.CHOICE, "upsert", "What the write does with the records.", "table",
    hudi_default="upsert",
    choices=("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"))
TABLE_TYPE: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.table.type", Kind.CHOICE, "COPY_ON_WRITE",
    "COPY_ON_WRITE rewrites base files on update; MERGE_ON_READ appends log files. Fixed when the table is created.",
    "table", hudi_default="COPY_ON_WRITE", choices=("COPY_ON_WRITE", "MERGE_ON_READ"),
    aliases=("hoodie.datasource.write.storage.type", "hoodie.table.type"), value_aliases={"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"})
RECORD_KEY_FIELDS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "hoodie.datasource.write.recordkey.field", Kind.FIELDS, (),
    "Column(s) of the record key; none: a keyless table, keys generated (insert, bulk_insert; docs/keyless.md).",
    "keys", aliases=("hoodie.table.recordkey.fields",))
PARTITION_FIELDS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "hoodie.datasource.write.partitionpath.field", Kind.FIELDS, (),
    "Partition column(s); none for an unpartitioned table. CustomKeyGenerator takes `name:SIMPLE|TIMESTAMP`.", "keys",
    aliases=("hoodie.table.partition.fields",))
PRECOMBINE_FIELD: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.precombine.field", Kind.STRING, "",
    "Ordering column: of two records with one key the larger value wins (one column: table version 6 has one "
    "precombine field; Hudi 1.x's `hoodie.table.ordering.fields` names the same).", "keys", hudi_default="ts",
    aliases=("hoodie.table.precombine.field", "hoodie.table.ordering.fields"),
    default_note="used only when set: Hudi's default `ts` is not stored in a new table's config either")
KEY_GENERATOR_CLASS: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.keygenerator.class", Kind.STRING, "",
    "Key generator (short or full class name); inferred from the key and partition fields when unset: "
    "Nonpartitioned, Simple (one key, one partition field) or Complex.", "keys",
    aliases=("hoodie.table.keygenerator.class",))
KEY_GENERATOR_TYPE: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.keygenerator.type", Kind.CHOICE, "",
    "Key generator by type name, when the class is not given.", "keys", aliases=("hoodie.table.keygenerator.type",),
    choices=("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE"))
HIVE_STYLE_PARTITIONING: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.write.hive_style_partitioning", Kind.BOOL, False,
    "Partition folders named `field=value`.", "keys", hudi_default="false")
URL_ENCODE_PARTITIONING: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.write.partitionpath.urlencode", Kind.BOOL, False,
    "URL-encode partition values in paths.", "keys", hudi_default="false")
CONSISTENT_LOGICAL_TIMESTAMP: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", Kind.BOOL, False,
    "Keys and paths from timestamp columns use the logical value (as Spark SQL) instead of epoch micros.", "keys",
    hudi_default="false")
COMMIT_META_PREFIX: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.commitmeta.key.prefix", Kind.STRING, "_",
    "Options whose key starts with this prefix are copied into the commit's extra metadata.", "table",
    hudi_default="_")
METADATA_ENABLE: ConfigOption[bool] = ConfigOption(
    "hoodie.metadata.enable", Kind.BOOL, True,
    "Hudi's metadata table (on by default, as in Hudi's Spark writers). true: a write creates one with the files "
    "partition (from a listing of the table) when the table has none this engine keeps, a new table's first write "
    "and an existing table's next write alike, as Hudi's writer does. A metadata table is kept up to date with each "
    "commit, compaction, clean, rollback, restore and archival when it holds files and, besides it, only "
    "column_stats, partition_stats and bloom_filters (versions 8 and 9) and the record_index (global, or on versions "
    "8 and 9 the partitioned one); one with any other index partition (secondary or expression indexes) is refused "
    "by name before "
    "a write or table service changes a file. false: a write disables (deletes) the table's metadata table as Hudi "
    "does, whatever it holds, and creates none.",
    "table", hudi_default="true")
METADATA_COLUMN_STATS: ConfigOption[bool] = ConfigOption(
    "hoodie.metadata.index.column.stats.enable", Kind.BOOL, False,
    "Column stats in the metadata table (tables of versions 8 and 9). true: a write builds the column_stats "
    "partition, and partition_stats on a partitioned table, from the latest file slices when the metadata table has "
    "none (with hoodie.metadata.enable=true, which creates the metadata table too); false: a write drops them, as "
    "Hudi 1.2 does. Either way, column and partition stats the table has (a Java writer's) are kept up to date with "
    "every commit, clean and compaction. (Hudi 1.x's Spark writers default to true.)",
    "table", hudi_default="false")
METADATA_COLUMN_STATS_COLUMNS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "hoodie.metadata.index.column.stats.column.list", Kind.FIELDS, (),
    "The columns column stats are built for (besides the meta columns), when a write builds them; empty: the first "
    "hoodie.metadata.index.column.stats.max.columns.to.index columns of a supported type.", "table")
METADATA_COLUMN_STATS_MAX_COLUMNS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.index.column.stats.max.columns.to.index", Kind.INT, 32,
    "How many columns column stats are built for (besides the meta columns) when no column list is given.", "table",
    hudi_default="32", minimum=1)
METADATA_RECORD_INDEX: ConfigOption[bool] = ConfigOption(
    "hoodie.metadata.global.record.level.index.enable", Kind.BOOL, False,
    "The global record index in the metadata table (a record key's partition and file group; tables with meta "
    "fields). true: a write builds the record_index partition from the latest file slices' keys when the metadata "
    "table has none (with hoodie.metadata.enable=true, which creates the metadata table too); false: a write drops "
    "it, as Hudi does. Either way, a record index the table has (a Java writer's) is kept up to date with every "
    "commit. hoodie.index.type=RECORD_INDEX tags with it (and builds it when the table has none).",
    "table", hudi_default="false", aliases=("hoodie.metadata.record.index.enable",))
METADATA_RECORD_INDEX_MIN_FILE_GROUPS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.global.record.level.index.min.filegroup.count", Kind.INT, 10,
    "The fewest file groups a new record index gets.", "table", hudi_default="10", minimum=1,
    aliases=("hoodie.metadata.record.index.min.filegroup.count",))
METADATA_RECORD_INDEX_MAX_FILE_GROUPS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.global.record.level.index.max.filegroup.count", Kind.INT, 10000,
    "The most file groups a new record index gets.", "table", hudi_default="10000", minimum=1,
    aliases=("hoodie.metadata.record.index.max.filegroup.count",))
METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.record.index.max.filegroup.size", Kind.INT, 1 << 30,
    "A new record index's file groups are sized for at most this many bytes (48 bytes an entry).", "table",
    hudi_default=str(1 << 30), minimum=1)
METADATA_RECORD_INDEX_GROWTH_FACTOR: ConfigOption[float] = ConfigOption(
    "hoodie.metadata.record.index.growth.factor", Kind.FLOAT, 2.0,
    "A new record index's entries are multiplied by this when sizing its file groups (room to grow).", "table",
    hudi_default="2.0", minimum=1)
METADATA_PARTITIONED_RECORD_INDEX: ConfigOption[bool] = ConfigOption(
    "hoodie.metadata.record.level.index.enable", Kind.BOOL, False,
    "The partitioned (partition-level) record index in the metadata table (Hudi 1.1+; tables of versions 8 and 9 "
    "with meta fields): per data partition its own file groups, a (partition, key) pair unique. true: a write builds "
    "the record_index partition from the latest file slices' keys when the metadata table has none (with "
    "hoodie.metadata.enable=true); false: a write drops a partitioned one. Either way, one the table has (a Java "
    "writer's) is kept up to date with every commit, a new data partition given its own file groups. "
    "hoodie.index.type=RECORD_LEVEL_INDEX tags with it.", "table", hudi_default="false")
METADATA_PARTITIONED_RECORD_INDEX_MIN_FILE_GROUPS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.record.level.index.min.filegroup.count", Kind.INT, 1,
    "The fewest file groups a partitioned record index gives a data partition when it is built.", "table",
    hudi_default="1", minimum=1, aliases=("hoodie.metadata.partitioned.record.index.min.filegroup.count",))
METADATA_PARTITIONED_RECORD_INDEX_MAX_FILE_GROUPS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.record.level.index.max.filegroup.count", Kind.INT, 10,
    "The most file groups a partitioned record index gives a data partition when it is built.", "table",
    hudi_default="10", minimum=1, aliases=("hoodie.metadata.partitioned.record.index.max.filegroup.count",))
METADATA_COMPACT_MAX_DELTA_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.metadata.compact.max.delta.commits", Kind.INT, 10,
    "Delta commits on the metadata table's files partition since its last compaction that trigger its compaction "
    "(run before a write, clean or compaction records itself there).", "table", hudi_default="10", minimum=1)
SCHEMA_ON_READ: ConfigOption[bool] = ConfigOption(
    "hoodie.schema.on.read.enable", Kind.BOOL, False,
    "Hudi's schema evolution on read: columns carry ids (the internal schema, `latest_schema` in each commit, and "
    "its history in `.hoodie/.schema`), so ALTER TABLE may rename, drop and retype columns without rewriting data "
    "(docs/table-features.md, Schema evolution on read). A write to a table that has a history keeps it going "
    "whatever this says; true is needed to start one (ALTER TABLE RENAME / DROP / ALTER COLUMN TYPE).", "table",
    hudi_default="false")
PREPPED: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.write.prepped", Kind.BOOL, False,
    "A DataFrame upsert or delete of rows read from the table with their meta columns: each row is the stored row "
    "its `_hoodie_record_key` and `_hoodie_partition_path` name, as in Hudi's prepped writes (a keyed table's key and "
    "partition fields must still give them, else it is refused), and the commit records UPSERT_PREPPED / "
    "DELETE_PREPPED. A keyless table's DataFrame upsert or "
    "delete whose rows carry `_hoodie_record_key` is prepped without it, as Hudi's canDoPreppedWrites decides "
    "(docs/keyless.md). Spark's DataFrame writer only.", "table",
    aliases=("_hoodie.datasource.write.prepped", "_hoodie.spark.sql.writes.prepped"))
# CDC: stored in a new table's hoodie.properties (an existing table keeps its own; docs/cdc.md).
CDC_ENABLED: ConfigOption[bool] = ConfigOption(
    "hoodie.table.cdc.enabled", Kind.BOOL, False,
    "Create the table with change data capture on: every merge into an existing file group also writes a CDC log "
    "file (`.cdc`) of its inserts, updates and deletes.", "table", hudi_default="false")
CDC_LOGGING_MODE: ConfigOption[str] = ConfigOption(
    "hoodie.table.cdc.supplemental.logging.mode", Kind.CHOICE, "DATA_BEFORE_AFTER",
    "What a new CDC table's change records hold: the operation and record key (OP_KEY_ONLY), also the record "
    "before the change (DATA_BEFORE), or the commit time and the records before and after (DATA_BEFORE_AFTER).",
    "table", hudi_default="DATA_BEFORE_AFTER", choices=("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"))
TABLE_VERSION: ConfigOption[str] = ConfigOption(
    "hoodie.write.table.version", Kind.CHOICE, "9",
    "Table version of a new table: 6 (Hudi 0.14/0.15, timeline layout 1: read by every Hudi engine), 8 (Hudi 1.0) "
    "or 9 (Hudi 1.1; both timeline layout 2). An existing table keeps its version, which this option must match "
    "(docs/table-features.md, Table versions).", "table", choices=("6", "8", "9"), aliases=("hoodie.table.version",),
    default_note="as Hudi 1.1+ creates; 6 for tables that readers or writers on Hudi 0.x (older Trino, Presto, "
                 "Athena and EMR releases) share")

POPULATE_META_FIELDS: ConfigOption[bool] = ConfigOption(
    "hoodie.populate.meta.fields", Kind.BOOL, True,
    "Write Hudi's meta columns (_hoodie_record_key, ...). false creates a table without them (virtual keys: the key "
    "is computed from the record key fields); an existing table keeps its own setting, which this option must match.",
    "table", hudi_default="true")

_TIMEBASED = "hoodie.keygen.timebased."
_DELTASTREAMER = "hoodie.deltastreamer.keygen.timebased."


def _timebased(suffix: str, doc: str, default: str = "", kind: Kind = Kind.STRING,
               choices: tuple[str, ...] = (), hudi_default: str | None = None) -> ConfigOption[str]:
    return ConfigOption(_TIMEBASED + suffix, kind, default, doc, "keys", choices=choices,
                        aliases=(_DELTASTREAMER + suffix,), hudi_default=hudi_default)


TIMESTAMP_TYPE = _timebased(
    "timestamp.type", "TimestampBasedKeyGenerator: how the partition column holds time.", kind=Kind.CHOICE,
    choices=("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR"))
TIMESTAMP_SCALAR_UNIT = _timebased("timestamp.scalar.time.unit", "Unit of a SCALAR timestamp.", "SECONDS",
                                   kind=Kind.CHOICE, hudi_default="SECONDS",
                                   choices=("NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES",
                                            "HOURS", "DAYS"))
TIMESTAMP_INPUT_FORMAT = _timebased("input.dateformat", "Input date format(s) of DATE_STRING / MIXED values.")
TIMESTAMP_INPUT_FORMAT_DELIMITER = _timebased("input.dateformat.list.delimiter.regex",
                                              "Separator of several input formats.", ",", hudi_default=",")
TIMESTAMP_INPUT_TIMEZONE = _timebased("input.timezone", "Time zone of input date strings.")
TIMESTAMP_OUTPUT_FORMAT = _timebased("output.dateformat", "Partition path format (Joda letters).")
TIMESTAMP_OUTPUT_TIMEZONE = _timebased("output.timezone", "Time zone of the partition path.")
TIMESTAMP_TIMEZONE = _timebased("timezone", "Time zone of both input and output.", "UTC", hudi_default="UTC")
TIMEBASED_OPTIONS = (TIMESTAMP_TYPE, TIMESTAMP_SCALAR_UNIT, TIMESTAMP_INPUT_FORMAT, TIMESTAMP_INPUT_FORMAT_DELIMITER,
                     TIMESTAMP_INPUT_TIMEZONE, TIMESTAMP_OUTPUT_FORMAT, TIMESTAMP_OUTPUT_TIMEZONE, TIMESTAMP_TIMEZONE)

# ---- payload and merging ----------------------------------------------------------------------------------------
PAYLOAD_CLASS: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.write.payload.class", Kind.STRING, _PAYLOADS + "OverwriteWithLatestAvroPayload",
    "How two versions of a record merge: a Hudi payload (short or full name) or a Python class's dotted path.",
    "merge", hudi_default=_PAYLOADS + "OverwriteWithLatestAvroPayload", aliases=("hoodie.compaction.payload.class",))
COMBINE_BEFORE_INSERT: ConfigOption[bool] = ConfigOption(
    "hoodie.combine.before.insert", Kind.BOOL, False, "Pre-combine duplicate keys of an insert / bulk_insert batch.",
    "merge", hudi_default="false")
COMBINE_BEFORE_UPSERT: ConfigOption[bool] = ConfigOption(
    "hoodie.combine.before.upsert", Kind.BOOL, True, "Pre-combine duplicate keys of an upsert batch.", "merge",
    hudi_default="true")
COMBINE_BEFORE_DELETE: ConfigOption[bool] = ConfigOption(
    "hoodie.combine.before.delete", Kind.BOOL, True, "Pre-combine duplicate keys of a delete batch.", "merge",
    hudi_default="true")
PARTIAL_UPDATE_COLUMNS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "hoodie.datasource.write.partial.update.columns", Kind.FIELDS, (),
    "Upsert: on a record whose key the table holds, only these columns take the incoming values; the others keep "
    "the stored ones (COW and MOR; the records written are whole, so every reader merges them as usual). This "
    "engine's own option (dbt's merge_update_columns); empty: every column is updated.", "merge")

# ---- index -----------------------------------------------------------------------------------------------------
INDEX_TYPE: ConfigOption[str] = ConfigOption(
    "hoodie.index.type", Kind.CHOICE, "SIMPLE", "How incoming keys find their file group. RECORD_INDEX: the "
    "metadata table's global record index; RECORD_LEVEL_INDEX: its partitioned one (Hudi 1.1+, "
    "hoodie.metadata.record.level.index.enable), a key looked up in its partition's file groups of the index.",
    "index", hudi_default="SIMPLE",
    choices=("SIMPLE", "BLOOM", "BUCKET", "GLOBAL_SIMPLE", "RECORD_INDEX", "RECORD_LEVEL_INDEX"),
    value_aliases={"GLOBAL_RECORD_LEVEL_INDEX": "RECORD_INDEX"})
BUCKET_NUM: ConfigOption[int] = ConfigOption(
    "hoodie.bucket.index.num.buckets", Kind.INT, 256, "BUCKET index: buckets (file groups) per partition.", "index",
    hudi_default="256", minimum=1)
UPDATE_PARTITION_PATH: ConfigOption[bool] = ConfigOption(
    "hoodie.simple.index.update.partition.path", Kind.BOOL, True,
    "GLOBAL_SIMPLE: a key written with a new partition moves there (deleted from the old one).", "index",
    hudi_default="true")
RECORD_INDEX_UPDATE_PARTITION_PATH: ConfigOption[bool] = ConfigOption(
    "hoodie.record.index.update.partition.path", Kind.BOOL, False,
    "RECORD_INDEX: a key written with a new partition moves there (deleted from the old one); false: the record is "
    "written where the key lives.", "index", hudi_default="false")

# ---- bloom filters (footers of base files) ----------------------------------------------------------------------
BLOOM_FILTER_TYPE: ConfigOption[str] = ConfigOption(
    "hoodie.bloom.index.filter.type", Kind.CHOICE, "DYNAMIC_V0", "Bloom filter written in base file footers.",
    "bloom", hudi_default="DYNAMIC_V0", choices=("DYNAMIC_V0", "SIMPLE"))
BLOOM_NUM_ENTRIES: ConfigOption[int] = ConfigOption(
    "hoodie.index.bloom.num_entries", Kind.INT, 60000, "Keys a bloom filter is sized for.", "bloom",
    hudi_default="60000", minimum=1)
BLOOM_FPP: ConfigOption[float] = ConfigOption(
    "hoodie.index.bloom.fpp", Kind.FLOAT, 0.000000001, "Bloom filter false positive rate.", "bloom",
    hudi_default="0.000000001", minimum=1e-300)
BLOOM_MAX_ENTRIES: ConfigOption[int] = ConfigOption(
    "hoodie.bloom.index.filter.dynamic.max.entries", Kind.INT, 100000, "DYNAMIC_V0: the most keys a filter grows to.",
    "bloom", hudi_default="100000", minimum=1)

# ---- file sizing and parquet ------------------------------------------------------------------------------------
MAX_FILE_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.parquet.max.file.size", Kind.INT, 120 * MB, "Target size of a base file in bytes; files are cut there.",
    "storage", hudi_default=str(120 * MB), minimum=1)
SMALL_FILE_LIMIT: ConfigOption[int] = ConfigOption(
    "hoodie.parquet.small.file.limit", Kind.INT, 100 * MB,
    "COW: base files below this size take new inserts (0 turns packing off).", "storage",
    hudi_default=str(100 * MB), minimum=0)
BLOCK_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.parquet.block.size", Kind.INT, 120 * MB, "Parquet row group size in bytes.", "storage",
    hudi_default=str(120 * MB), minimum=1)
COMPRESSION: ConfigOption[str] = ConfigOption(
    "hoodie.parquet.compression.codec", Kind.CHOICE, "snappy", "Parquet compression of base files.", "storage",
    hudi_default="gzip", choices=("snappy", "gzip", "zstd", "lz4", "brotli", "uncompressed"),
    default_note="snappy writes several times faster than gzip; every Hudi reader reads both")
RECORD_SIZE_ESTIMATE: ConfigOption[int] = ConfigOption(
    "hoodie.copyonwrite.record.size.estimate", Kind.INT, 1024,
    "Bytes per record assumed until a commit has written enough to measure it.", "storage", hudi_default="1024",
    minimum=1)
LOG_BLOCK_MAX_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.logfile.data.block.max.size", Kind.INT, 256 * MB, "MOR: largest data block in a log file, in bytes.",
    "log", hudi_default=str(256 * MB), minimum=1)
LOG_FILE_MAX_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.logfile.max.size", Kind.INT, 1024 * MB, "MOR: log file size at which a new log file is started.", "log",
    hudi_default=str(1024 * MB), minimum=1)

# ---- parallelism and bulk insert --------------------------------------------------------------------------------
_PARALLELISM_DOC = ("Spark tasks for {op}: at most this many file groups are written at once (0: Spark's default "
                    "parallelism).")


def _parallelism(op: str, key: str) -> ConfigOption[int]:
    return ConfigOption(key, Kind.INT, 0, _PARALLELISM_DOC.format(op=op), "parallelism", hudi_default="0",
                        minimum=0)


UPSERT_PARALLELISM = _parallelism("upsert", "hoodie.upsert.shuffle.parallelism")
INSERT_PARALLELISM = _parallelism("insert and insert_overwrite", "hoodie.insert.shuffle.parallelism")
BULK_INSERT_PARALLELISM = _parallelism("bulk_insert", "hoodie.bulkinsert.shuffle.parallelism")
DELETE_PARALLELISM = _parallelism("delete", "hoodie.delete.shuffle.parallelism")
BULK_INSERT_SORT_MODE: ConfigOption[str] = ConfigOption(
    "hoodie.bulkinsert.sort.mode", Kind.CHOICE, "GLOBAL_SORT",
    "bulk_insert: GLOBAL_SORT range-partitions by (partition, key), so a large partition spreads over tasks and files "
    "hold disjoint key ranges; PARTITION_SORT sorts by key within each input split; NONE writes each input split as "
    "it comes (grouped by partition, no shuffle: as Spark's own parquet writer; splits coalesced to "
    "hoodie.bulkinsert.shuffle.parallelism tasks when it is set).",
    "parallelism", hudi_default="NONE", choices=("GLOBAL_SORT", "PARTITION_SORT", "NONE"),
    default_note="sorted files with disjoint key ranges let later upserts skip files by their footers: an upsert "
    "into a 10M-row table written with NONE takes 1.23x the time (2.2M rows: 27.2 s against 22.0 s; 10k rows: 10.6 s "
    "against 8.6 s), while NONE writes the table 2.2x faster (21 s against 46 s)")

# ---- table services -------------------------------------------------------------------------------------------
COMPACT_INLINE: ConfigOption[bool] = ConfigOption(
    "hoodie.compact.inline", Kind.BOOL, False, "MOR: compact after a write when enough delta commits piled up.",
    "compaction", hudi_default="false")
COMPACT_MAX_DELTA_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.compact.inline.max.delta.commits", Kind.INT, 5, "Delta commits since the last compaction that trigger one.",
    "compaction", hudi_default="5", minimum=1)
CLEAN_AUTOMATIC: ConfigOption[bool] = ConfigOption(
    "hoodie.clean.automatic", Kind.BOOL, True, "Clean after every write.", "clean", hudi_default="true")
CLEANER_POLICY: ConfigOption[str] = ConfigOption(
    "hoodie.cleaner.policy", Kind.CHOICE, "KEEP_LATEST_COMMITS", "Which old file slices cleaning deletes.", "clean",
    hudi_default="KEEP_LATEST_COMMITS", choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"))
CLEANER_COMMITS_RETAINED: ConfigOption[int] = ConfigOption(
    "hoodie.cleaner.commits.retained", Kind.INT, 10, "KEEP_LATEST_COMMITS: commits whose files stay readable.",
    "clean", hudi_default="10", minimum=1)
CLEANER_FILE_VERSIONS_RETAINED: ConfigOption[int] = ConfigOption(
    "hoodie.cleaner.fileversions.retained", Kind.INT, 3, "KEEP_LATEST_FILE_VERSIONS: versions kept per file group.",
    "clean", hudi_default="3", minimum=1)
LOCK_WAIT_MS: ConfigOption[int] = ConfigOption(
    "hoodie.write.lock.wait_time_ms", Kind.INT, 60000, "How long a writer waits for the table lock, in ms.", "lock",
    hudi_default="60000", minimum=0)
LOCK_EXPIRE_MINUTES: ConfigOption[float] = ConfigOption(
    "hoodie.write.lock.filesystem.expire", Kind.FLOAT, 10.0,
    "Minutes after which a lock file its holder stopped renewing (it died or stalled; a live writer renews it every "
    "heartbeat interval) is taken over (0: never, but a dead process of this host's is; fractions allowed).", "lock",
    hudi_default="0", minimum=0,
    default_note="a lock of a crashed writer would otherwise block the table until removed by hand")
_LOCKS = "org.apache.hudi.client.transaction.lock."
LOCK_PROVIDER: ConfigOption[str] = ConfigOption(
    "hoodie.write.lock.provider", Kind.STRING, _LOCKS + "FileSystemBasedLockProvider",
    "Lock provider class (Hudi's names, short or full): FileSystemBasedLockProvider (the lock file `.hoodie/lock`: "
    "local disks, and S3 through conditional writes), StorageBasedLockProvider (Hudi 1.1's lock object "
    "`.hoodie/.locks/table_lock.json`, taken and renewed by conditional writes: on S3 with Java writers too, on local "
    "disks among this engine's writers) or "
    "DynamoDBBasedLockProvider (a DynamoDB table, Hudi's lock item layout). Others are refused.", "lock",
    hudi_default=_LOCKS + "ZookeeperBasedLockProvider",
    default_note="this engine has no ZooKeeper client; the lock file needs no service")
CONCURRENCY_MODE: ConfigOption[str] = ConfigOption(
    "hoodie.write.concurrency.mode", Kind.CHOICE, "SINGLE_WRITER",
    "SINGLE_WRITER holds the table lock for the whole write; OPTIMISTIC_CONCURRENCY_CONTROL holds it only to start "
    "the instant and around the commit, where a write that touched a file group another writer committed meanwhile "
    "fails.", "lock", hudi_default="SINGLE_WRITER", choices=("SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL"))
HEARTBEAT_INTERVAL_MS: ConfigOption[int] = ConfigOption(
    "hoodie.client.heartbeat.interval_in_ms", Kind.INT, 60000,
    "A writer renews its heartbeat `.hoodie/.heartbeat/<instant>` (and its lock) this often, in ms (Hudi refuses "
    "below 1000; this engine takes 10 and up, for tests).", "lock", hudi_default="60000", minimum=10)
HEARTBEAT_TOLERABLE_MISSES: ConfigOption[int] = ConfigOption(
    "hoodie.client.heartbeat.tolerable.misses", Kind.INT, 2,
    "A pending instant whose heartbeat is older than this many intervals belongs to a writer that died: another "
    "writer may roll it back; a writer that missed this many stops before its commit point.", "lock",
    hudi_default="2", minimum=1)
FAILED_WRITES_POLICY: ConfigOption[str] = ConfigOption(
    "hoodie.cleaner.policy.failed.writes", Kind.CHOICE, "EAGER",
    "When failed writes (pending instants whose heartbeat expired) are rolled back: EAGER before every write, LAZY "
    "by the cleaning after a commit (needed with several writers), NEVER.", "lock", hudi_default="EAGER",
    choices=("EAGER", "LAZY", "NEVER"))
_DYNAMO = "hoodie.write.lock.dynamodb."
DYNAMODB_TABLE: ConfigOption[str] = ConfigOption(
    _DYNAMO + "table", Kind.STRING, "", "DynamoDBBasedLockProvider: the DynamoDB table holding lock items "
    "(created with partition key `key` if absent).", "lock")
DYNAMODB_PARTITION_KEY: ConfigOption[str] = ConfigOption(
    _DYNAMO + "partition_key", Kind.STRING, "", "DynamoDBBasedLockProvider: the lock item's key; every writer of "
    "one table must use the same (default: the table name).", "lock")
DYNAMODB_REGION: ConfigOption[str] = ConfigOption(
    _DYNAMO + "region", Kind.STRING, "us-east-1", "DynamoDBBasedLockProvider: the AWS region (AWS_REGION when set).",
    "lock", hudi_default="us-east-1")
DYNAMODB_ENDPOINT_URL: ConfigOption[str] = ConfigOption(
    _DYNAMO + "endpoint_url", Kind.STRING, "", "DynamoDBBasedLockProvider: the service endpoint (default: the "
    "region's).", "lock")
DYNAMODB_BILLING_MODE: ConfigOption[str] = ConfigOption(
    _DYNAMO + "billing_mode", Kind.CHOICE, "PAY_PER_REQUEST", "DynamoDBBasedLockProvider: billing mode of a lock "
    "table it creates.", "lock", hudi_default="PAY_PER_REQUEST", choices=("PAY_PER_REQUEST", "PROVISIONED"))
DYNAMODB_READ_CAPACITY: ConfigOption[int] = ConfigOption(
    _DYNAMO + "read_capacity", Kind.INT, 20, "DynamoDBBasedLockProvider: read capacity of a PROVISIONED lock table "
    "it creates.", "lock", hudi_default="20", minimum=1)
DYNAMODB_WRITE_CAPACITY: ConfigOption[int] = ConfigOption(
    _DYNAMO + "write_capacity", Kind.INT, 10, "DynamoDBBasedLockProvider: write capacity of a PROVISIONED lock "
    "table it creates.", "lock", hudi_default="10", minimum=1)
DYNAMODB_TABLE_CREATION_TIMEOUT: ConfigOption[int] = ConfigOption(
    _DYNAMO + "table_creation_timeout", Kind.INT, 600000, "DynamoDBBasedLockProvider: how long to wait for a lock "
    "table it creates to become active, in ms.", "lock", hudi_default="600000", minimum=0)
_STORAGE_LOCK = "hoodie.write.lock.storage."  # Hudi 1.1's org.apache.hudi.config.StorageBasedLockConfig
STORAGE_LOCK_VALIDITY_SECS: ConfigOption[int] = ConfigOption(
    _STORAGE_LOCK + "validity.timeout.secs", Kind.INT, 300, "StorageBasedLockProvider: seconds a lock (and each "
    "renewal) stays valid (its `validUntil`); a holder that stops renewing is taken over 500 ms after it. At least 10 "
    "and 10 times the renew interval (Hudi's rule); Hudi 1.1's default.", "lock", minimum=10)
STORAGE_LOCK_RENEW_SECS: ConfigOption[int] = ConfigOption(
    _STORAGE_LOCK + "renew.interval.secs", Kind.INT, 30, "StorageBasedLockProvider: seconds between renewals of a "
    "held lock; Hudi 1.1's default.", "lock", minimum=1, aliases=(_STORAGE_LOCK + "heartbeat.poll.secs",))
LOCK_OPTIONS = (LOCK_WAIT_MS, LOCK_EXPIRE_MINUTES, LOCK_PROVIDER, CONCURRENCY_MODE, HEARTBEAT_INTERVAL_MS,
                HEARTBEAT_TOLERABLE_MISSES, FAILED_WRITES_POLICY, DYNAMODB_TABLE, DYNAMODB_PARTITION_KEY,
                DYNAMODB_REGION, DYNAMODB_ENDPOINT_URL, DYNAMODB_BILLING_MODE, DYNAMODB_READ_CAPACITY,
                DYNAMODB_WRITE_CAPACITY, DYNAMODB_TABLE_CREATION_TIMEOUT, STORAGE_LOCK_VALIDITY_SECS,
                STORAGE_LOCK_RENEW_SECS)
ARCHIVE_AUTOMATIC: ConfigOption[bool] = ConfigOption(
    "hoodie.archive.automatic", Kind.BOOL, True, "Archive old instants after the cleaning that follows a write.",
    "archival", hudi_default="true")
KEEP_MIN_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.keep.min.commits", Kind.INT, 20, "Archival keeps at least this many completed commits active (more "
    "than hoodie.cleaner.commits.retained).", "archival", hudi_default="20", minimum=1)
KEEP_MAX_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.keep.max.commits", Kind.INT, 30, "Archival starts once more than this many completed commits (or cleans, "
    "or rollbacks) are active, and moves the oldest to `.hoodie/archived/` (table version 6) or the timeline history "
    "`.hoodie/timeline/history/` (versions 8 and 9) down to hoodie.keep.min.commits.",
    "archival", hudi_default="30", minimum=1)
TIMELINE_COMPACTION_BATCH_SIZE: ConfigOption[int] = ConfigOption(
    "hoodie.timeline.compaction.batch.size", Kind.INT, 10, "Tables of version 8 and 9 (Hudi 1.x): once a layer of "
    "the LSM timeline history holds this many files, archival merges them into one file of the next layer.",
    "archival", hudi_default="10", minimum=2)
ARCHIVAL_OPTIONS = (ARCHIVE_AUTOMATIC, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, TIMELINE_COMPACTION_BATCH_SIZE)
CLUSTERING_UPDATES_STRATEGY: ConfigOption[str] = ConfigOption(
    "hoodie.clustering.updates.strategy", Kind.STRING,
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    "Updates and deletes of records in file groups under a pending clustering: refused before any file is written "
    "(SparkRejectUpdateStrategy, full or short name), or written (SparkAllowUpdateStrategy: the clustering then "
    "refuses to complete, or is rolled back first with hoodie.clustering.rollback.pending.replacecommit.on.conflict). "
    "Inserts go to other file groups either way. Hudi's other strategies are refused by name (docs/clustering.md).",
    "clustering", hudi_default="org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy")
CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT: ConfigOption[bool] = ConfigOption(
    "hoodie.clustering.rollback.pending.replacecommit.on.conflict", Kind.BOOL, False,
    "With SparkAllowUpdateStrategy: a write whose updates or deletes hit file groups of a requested clustering rolls "
    "that clustering back before it writes (an inflight one refuses the write instead); without it the clustering "
    "refuses to complete once it would drop those updates.", "clustering", hudi_default="false")
_CLU_PLAN = "hoodie.clustering.plan.strategy."
CLUSTERING_INLINE: ConfigOption[bool] = ConfigOption(
    "hoodie.clustering.inline", Kind.BOOL, False, "Cluster after a write (in the writing process) once "
    "hoodie.clustering.inline.max.commits commits completed since the last clustering.", "clustering",
    hudi_default="false", aliases=("hoodie.datasource.clustering.inline.enable",))
CLUSTERING_INLINE_MAX_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.clustering.inline.max.commits", Kind.INT, 4, "Completed commits since the last clustering that trigger "
    "an inline one.", "clustering", hudi_default="4", minimum=1)
CLUSTERING_SCHEDULE_INLINE: ConfigOption[bool] = ConfigOption(
    "hoodie.clustering.schedule.inline", Kind.BOOL, False, "Plan a clustering after a write (in the writing "
    "process) once hoodie.clustering.async.max.commits commits completed since the last clustering, without "
    "executing it: HudiTable.cluster(op='execute'), CALL run_clustering or Hudi's clustering job executes it. Not "
    "with hoodie.clustering.inline=true (Hudi refuses both).", "clustering", hudi_default="false")
CLUSTERING_ASYNC_ENABLED: ConfigOption[bool] = ConfigOption(
    "hoodie.clustering.async.enabled", Kind.BOOL, False, "Clustering is left to another process (a non-streaming "
    "writer runs no async service, as Hudi's batch Spark writer runs none): the writes never cluster; a plan made "
    "by hoodie.clustering.schedule.inline or by HudiTable.cluster / CALL run_clustering is executed there.",
    "clustering", hudi_default="false", aliases=("hoodie.datasource.clustering.async.enable",))
CLUSTERING_ASYNC_MAX_COMMITS: ConfigOption[int] = ConfigOption(
    "hoodie.clustering.async.max.commits", Kind.INT, 4, "Completed commits since the last clustering after which "
    "hoodie.clustering.schedule.inline plans one (Hudi 1.x's trigger).", "clustering", hudi_default="4", minimum=1)
CLUSTERING_PLAN_STRATEGY_CLASS: ConfigOption[str] = ConfigOption(
    "hoodie.clustering.plan.strategy.class", Kind.STRING,
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "How HudiTable.cluster plans: the size-based strategy (full or short name) is the only one served.", "clustering",
    hudi_default="org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy")
CLUSTERING_EXECUTION_STRATEGY_CLASS: ConfigOption[str] = ConfigOption(
    "hoodie.clustering.execution.strategy.class", Kind.STRING,
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
    "How a clustering plan is executed (recorded in the plan): sort and size (full or short name) is the only one "
    "served.", "clustering",
    hudi_default="org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy")
CLUSTERING_SMALL_FILE_LIMIT: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "small.file.limit", Kind.INT, 314572800, "Clustering plans file slices whose base file is smaller "
    "than this (bytes; slices of log files only count as 0).", "clustering", hudi_default="314572800", minimum=0)
CLUSTERING_MAX_BYTES_PER_GROUP: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "max.bytes.per.group", Kind.INT, 2147483648, "A clustering group takes slices (largest first) until "
    "their base files add up to this many bytes.", "clustering", hudi_default="2147483648", minimum=1)
CLUSTERING_MAX_NUM_GROUPS: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "max.num.groups", Kind.INT, 30, "At most this many clustering groups in one plan.", "clustering",
    hudi_default="30", minimum=1)
CLUSTERING_TARGET_FILE_MAX_BYTES: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "target.file.max.bytes", Kind.INT, 1073741824, "Size of the files clustering writes: a group of N "
    "bytes is planned as ceil(N / this) output file groups, each written up to this size.", "clustering",
    hudi_default="1073741824", minimum=1)
CLUSTERING_SORT_COLUMNS: ConfigOption[tuple[str, ...]] = ConfigOption(
    _CLU_PLAN + "sort.columns", Kind.FIELDS, (), "Columns clustering sorts each group's rows by (recorded in the "
    "plan's strategy params); none: rows keep the order they were read in.", "clustering")
CLUSTERING_SINGLE_GROUP: ConfigOption[bool] = ConfigOption(
    _CLU_PLAN + "single.group.clustering.enabled", Kind.BOOL, True, "Plan a group of one file slice that would be "
    "written as one file (always when sort columns are set).", "clustering", hudi_default="true")
CLUSTERING_PARTITION_FILTER_MODE: ConfigOption[str] = ConfigOption(
    "hoodie.clustering.plan.partition.filter.mode", Kind.CHOICE, "NONE", "Which partitions clustering plans: all "
    "(NONE), the latest by name (RECENT_DAYS, with the daybased keys) or those between the begin and end partitions "
    "(SELECTED_PARTITIONS).", "clustering", hudi_default="NONE",
    choices=("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS"))
CLUSTERING_LOOKBACK_PARTITIONS: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "daybased.lookback.partitions", Kind.INT, 2, "RECENT_DAYS: how many partitions (the latest by name) "
    "are planned.", "clustering", hudi_default="2", minimum=0)
CLUSTERING_SKIP_LATEST_PARTITIONS: ConfigOption[int] = ConfigOption(
    _CLU_PLAN + "daybased.skipfromlatest.partitions", Kind.INT, 0, "RECENT_DAYS: how many of the latest partitions "
    "are skipped first.", "clustering", hudi_default="0", minimum=0)
CLUSTERING_BEGIN_PARTITION: ConfigOption[str] = ConfigOption(
    _CLU_PLAN + "cluster.begin.partition", Kind.STRING, "", "SELECTED_PARTITIONS: the first partition planned "
    "(by name, inclusive).", "clustering")
CLUSTERING_END_PARTITION: ConfigOption[str] = ConfigOption(
    _CLU_PLAN + "cluster.end.partition", Kind.STRING, "", "SELECTED_PARTITIONS: the last partition planned "
    "(by name, inclusive).", "clustering")
CLUSTERING_PARTITION_REGEX: ConfigOption[str] = ConfigOption(
    _CLU_PLAN + "partition.regex.pattern", Kind.STRING, "", "Only partitions whose path matches this regex are "
    "planned.", "clustering")
CLUSTERING_PARTITION_SELECTED: ConfigOption[str] = ConfigOption(
    _CLU_PLAN + "partition.selected", Kind.STRING, "", "Only these partitions (comma-separated paths) are planned; "
    "the filter mode and regex are then not applied.", "clustering")
LAYOUT_OPTIMIZE_STRATEGY: ConfigOption[str] = ConfigOption(
    "hoodie.layout.optimize.strategy", Kind.CHOICE, "linear", "How clustering orders rows by the sort columns "
    "(the executing writer's setting, as Hudi takes it): linear (lexicographic), z-order or hilbert (space-filling "
    "curves over two or more columns, mapped as Hudi's DIRECT build method maps them).", "clustering",
    hudi_default="linear", choices=("linear", "z-order", "hilbert"), value_aliases={"ZORDER": "z-order"})
CLUSTERING_OPTIONS = (CLUSTERING_INLINE, CLUSTERING_INLINE_MAX_COMMITS, CLUSTERING_SCHEDULE_INLINE,
                      CLUSTERING_ASYNC_ENABLED, CLUSTERING_ASYNC_MAX_COMMITS, CLUSTERING_PLAN_STRATEGY_CLASS, CLUSTERING_EXECUTION_STRATEGY_CLASS, CLUSTERING_SMALL_FILE_LIMIT,
                      CLUSTERING_MAX_BYTES_PER_GROUP, CLUSTERING_MAX_NUM_GROUPS, CLUSTERING_TARGET_FILE_MAX_BYTES,
                      CLUSTERING_SORT_COLUMNS, CLUSTERING_SINGLE_GROUP, CLUSTERING_PARTITION_FILTER_MODE,
                      CLUSTERING_LOOKBACK_PARTITIONS, CLUSTERING_SKIP_LATEST_PARTITIONS, CLUSTERING_BEGIN_PARTITION,
                      CLUSTERING_END_PARTITION, CLUSTERING_PARTITION_REGEX, CLUSTERING_PARTITION_SELECTED,
                      LAYOUT_OPTIMIZE_STRATEGY)

# ---- catalog sync (Hudi's HiveSyncTool / AwsGlueCatalogSyncTool keys; hudi_engine.sync) ----------------------------
_HIVE_SYNC = "hoodie.datasource.hive_sync."
HIVE_SYNC_TOOL = "org.apache.hudi.hive.HiveSyncTool"
GLUE_SYNC_TOOL = "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"
HIVE_SYNC_ENABLE: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "enable", Kind.BOOL, False, "After every commit, create or update the table's Hive metastore entry "
    "(Spark's own metastore, as HiveSyncTool writes it: docs/catalog-sync.md).", "sync", hudi_default="false")
META_SYNC_ENABLE: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.meta.sync.enable", Kind.BOOL, False, "After every commit, run the sync tools of "
    "hoodie.meta.sync.client.tool.class.", "sync", hudi_default="false")
SYNC_TOOLS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "hoodie.meta.sync.client.tool.class", Kind.FIELDS, (HIVE_SYNC_TOOL,), "Sync tools (comma-separated): "
    "HiveSyncTool (the Hive metastore) and AwsGlueCatalogSyncTool (the AWS Glue Data Catalog), full or short "
    "names; others are refused.", "sync", hudi_default=HIVE_SYNC_TOOL)
SYNC_MODE: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "mode", Kind.CHOICE, "hms", "How the Hive metastore is reached: hms and hiveql both go through the "
    "Spark session's own metastore client (HiveQL DDL run by Spark's Hive client); jdbc (a HiveServer2 "
    "connection) is refused.", "sync", choices=("hms", "hiveql", "jdbc"),
    default_note="Hudi without a mode uses JDBC (hoodie.datasource.hive_sync.use_jdbc); this engine talks to the "
    "metastore of the Spark session that writes")
SYNC_DATABASE: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "database", Kind.STRING, "default", "Database of the synced tables.", "sync",
    hudi_default="default")
SYNC_TABLE: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "table", Kind.STRING, "", "Name of the synced table (MERGE_ON_READ: the base of the _ro / _rt "
    "names); default the Hudi table's name.", "sync", hudi_default="unknown",
    default_note="the table's hoodie.table.name, as Hudi's Spark writer infers it")
SYNC_PARTITION_FIELDS: ConfigOption[tuple[str, ...]] = ConfigOption(
    _HIVE_SYNC + "partition_fields", Kind.FIELDS, (), "Partition columns of the synced table; default the Hudi "
    "table's partition fields, and only those are accepted.", "sync")
SYNC_PARTITION_EXTRACTOR: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "partition_extractor_class", Kind.STRING, "", "How partition paths become partition values: "
    "MultiPartKeysValueExtractor, HiveStylePartitionValueExtractor, SinglePartPartitionValueExtractor, "
    "SlashEncodedDayPartitionValueExtractor or NonPartitionedExtractor (full or short names); default inferred as "
    "Hudi infers it.", "sync")
SYNC_SUPPORT_TIMESTAMP: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "support_timestamp", Kind.BOOL, False, "Timestamp columns are synced as Hive timestamp (default: "
    "bigint, as Hudi does).", "sync", hudi_default="false")
SYNC_SKIP_RO_SUFFIX: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "skip_ro_suffix", Kind.BOOL, False, "MERGE_ON_READ: name the read-optimized table without the _ro "
    "suffix.", "sync", hudi_default="false")
SYNC_TABLE_STRATEGY: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "table.strategy", Kind.CHOICE, "ALL", "MERGE_ON_READ: sync the _ro and _rt tables (ALL), or only "
    "one of them under the plain name (RO, RT).", "sync", hudi_default="ALL", choices=("ALL", "RO", "RT"))
SYNC_AS_DATASOURCE: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "sync_as_datasource", Kind.BOOL, True, "Add the Spark data source parameters "
    "(spark.sql.sources.provider=hudi, the schema), so that Spark reads the entry through the hudi source.", "sync",
    hudi_default="true")
SYNC_SCHEMA_LENGTH: ConfigOption[int] = ConfigOption(
    _HIVE_SYNC + "schema_string_length_thresh", Kind.INT, 4000, "Longest part of the Spark schema parameter "
    "(spark.sql.sources.schema.part.N).", "sync", hudi_default="4000", minimum=1)
SYNC_CREATE_MANAGED: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "create_managed_table", Kind.BOOL, False, "Create the entry without EXTERNAL=TRUE.", "sync",
    hudi_default="false")
SYNC_OMIT_METADATA_FIELDS: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "omit_metadata_fields", Kind.BOOL, False, "Leave the _hoodie_* meta columns out of the synced "
    "columns.", "sync", hudi_default="false")
SYNC_AUTO_CREATE_DATABASE: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "auto_create_database", Kind.BOOL, True, "Create the database when it does not exist (false: "
    "the sync fails).", "sync", hudi_default="true")
SYNC_IGNORE_EXCEPTIONS: ConfigOption[bool] = ConfigOption(
    _HIVE_SYNC + "ignore_exceptions", Kind.BOOL, False, "A failed sync is a warning instead of an error (the data "
    "is committed either way).", "sync", hudi_default="false")
SYNC_TABLE_PROPERTIES: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "table_properties", Kind.STRING, "", "Extra table parameters, `key=value` lines.", "sync")
SYNC_SERDE_PROPERTIES: ConfigOption[str] = ConfigOption(
    _HIVE_SYNC + "serde_properties", Kind.STRING, "", "Extra SerDe parameters, `key=value` lines.", "sync")
SYNC_DECODE_PARTITION: ConfigOption[bool] = ConfigOption(
    "hoodie.meta.sync.decode_partition", Kind.BOOL, False, "URL-decode partition values (default: true when the "
    "table URL-encodes its partition paths, as Hudi infers it).", "sync", hudi_default="false")
SYNC_SPARK_VERSION: ConfigOption[str] = ConfigOption(
    "hoodie.meta_sync.spark.version", Kind.STRING, "", "spark.sql.create.version of the synced entry (default: "
    "the writing Spark session's version).", "sync")
GLUE_REGION: ConfigOption[str] = ConfigOption(
    "hoodie.aws.glue.region", Kind.STRING, "", "AwsGlueCatalogSyncTool: the AWS region (default AWS_REGION / "
    "AWS_DEFAULT_REGION / the profile's).", "sync")
GLUE_ENDPOINT: ConfigOption[str] = ConfigOption(
    "hoodie.aws.glue.endpoint", Kind.STRING, "", "AwsGlueCatalogSyncTool: the Glue endpoint (default the "
    "region's).", "sync")
GLUE_DATABASE: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.meta.sync.glue.database_name", Kind.STRING, "", "AwsGlueCatalogSyncTool: the database "
    "(default hoodie.datasource.hive_sync.database).", "sync")
GLUE_TABLE: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.meta.sync.glue.table_name", Kind.STRING, "", "AwsGlueCatalogSyncTool: the table name "
    "(default hoodie.datasource.hive_sync.table).", "sync")
GLUE_SKIP_ARCHIVE: ConfigOption[bool] = ConfigOption(
    "hoodie.datasource.meta.sync.glue.skip_table_archive", Kind.BOOL, True, "AwsGlueCatalogSyncTool: table "
    "updates keep no archived table version in Glue.", "sync", hudi_default="true")
SYNC_OPTIONS = (HIVE_SYNC_ENABLE, META_SYNC_ENABLE, SYNC_TOOLS, SYNC_MODE, SYNC_DATABASE, SYNC_TABLE,
                SYNC_PARTITION_FIELDS, SYNC_PARTITION_EXTRACTOR, SYNC_SUPPORT_TIMESTAMP, SYNC_SKIP_RO_SUFFIX,
                SYNC_TABLE_STRATEGY, SYNC_AS_DATASOURCE, SYNC_SCHEMA_LENGTH, SYNC_CREATE_MANAGED,
                SYNC_OMIT_METADATA_FIELDS, SYNC_AUTO_CREATE_DATABASE, SYNC_IGNORE_EXCEPTIONS, SYNC_TABLE_PROPERTIES,
                SYNC_SERDE_PROPERTIES, SYNC_DECODE_PARTITION, SYNC_SPARK_VERSION, GLUE_REGION, GLUE_ENDPOINT,
                GLUE_DATABASE, GLUE_TABLE, GLUE_SKIP_ARCHIVE)

# ---- read options (the Spark data source) -----------------------------------------------------------------------
QUERY_TYPE: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.query.type", Kind.CHOICE, "snapshot",
    "snapshot (merged), read_optimized (base files only) or incremental (records written in a range of commits).",
    "read", hudi_default="snapshot", choices=("snapshot", "read_optimized", "incremental"))
QUERY_AS_RO_TABLE: ConfigOption[bool] = ConfigOption(
    "hoodie.query.as.ro.table", Kind.BOOL, False, "A catalog entry's SerDe parameter (Hudi's sync writes it): true "
    "reads the entry as read_optimized unless the query type is given.", "read")
AS_OF_INSTANT: ConfigOption[str] = ConfigOption(
    "as.of.instant", Kind.STRING, "", "Time travel: read the table as of this instant (or date / timestamp).", "read",
    aliases=("as_of_instant",))
BEGIN_INSTANT: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.read.begin.instanttime", Kind.STRING, "",
    "Incremental query: records of commits after this instant (exclusive).", "read")
END_INSTANT: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.read.end.instanttime", Kind.STRING, "",
    "Incremental query: up to this instant (inclusive; default the latest).", "read")
INCREMENTAL_FORMAT: ConfigOption[str] = ConfigOption(
    "hoodie.datasource.query.incremental.format", Kind.CHOICE, "latest_state",
    "Incremental query: latest_state (the records the range's commits wrote, as of its end; deletes not shown) or "
    "cdc (every change, deletes included: op, ts_ms, before, after; tables created with hoodie.table.cdc.enabled).",
    "read", hudi_default="latest_state", choices=("latest_state", "cdc"))
CDC_IMAGES: ConfigOption[str] = ConfigOption(
    "hudi_engine.cdc.images", Kind.CHOICE, "json",
    "CDC query: the before and after images as JSON text (json, Hudi's layout) or as structs of the data columns "
    "(struct). This engine's own option.", "read", choices=("json", "struct"))

# ---- internal read options: not Hudi's, not for users ------------------------------------------------------------
# What this engine's read paths hand one another: the native relation and the JVM source hand the merge source the
# file groups it reads, the JVM source hands the planner the query's filters. Declared beside Hudi's read options so
# that every read key has one declaration; not in ALL_OPTIONS (the README documents what users set).
FILE_GROUPS: ConfigOption[str] = ConfigOption(
    "hudi_engine.read.file_groups", Kind.STRING, "",
    "JSON list of file groups (`<partition path>/<file id>`) a read is limited to.", "internal")
LOGGED_KEYS_ONLY: ConfigOption[str] = ConfigOption(
    "hudi_engine.read.logged_keys_only", Kind.STRING, "",
    "JSON list of file groups (same form) of which only the rows of the keys their log blocks write or delete are "
    "read; Spark's parquet reader reads the rest of their base files.", "internal")
FILTERS: ConfigOption[str] = ConfigOption(
    "hudi_engine.read.filters", Kind.STRING, "",
    "The query's filters as JSON (`[op, column, value]` triples, `Not` wrapping one), for pruning partitions and "
    "file slices.", "internal")
SPARK_OPENS_FILES: ConfigOption[bool] = ConfigOption(
    "hudi_engine.read.spark_opens_files", Kind.BOOL, True,
    "false when Spark's Hadoop file systems cannot open the table's location: every slice goes to the merge source.",
    "internal")
CATALOG_TABLE: ConfigOption[str] = ConfigOption(
    "hudi_engine.read.table_name", Kind.STRING, "",
    "The catalog name of the table the query reads (the JVM strategy knows it), for errors.", "internal")
INTERNAL_READ_OPTIONS: tuple[ConfigOption, ...] = (FILE_GROUPS, LOGGED_KEYS_ONLY, FILTERS, SPARK_OPENS_FILES,
                                                   CATALOG_TABLE)

WRITE_OPTIONS: tuple[ConfigOption, ...] = (
    TABLE_NAME, DATABASE_NAME, OPERATION, TABLE_TYPE, RECORD_KEY_FIELDS, PARTITION_FIELDS, PRECOMBINE_FIELD,
    KEY_GENERATOR_CLASS, KEY_GENERATOR_TYPE, HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING,
    CONSISTENT_LOGICAL_TIMESTAMP, COMMIT_META_PREFIX, METADATA_ENABLE, METADATA_COMPACT_MAX_DELTA_COMMITS,
    METADATA_COLUMN_STATS, METADATA_COLUMN_STATS_COLUMNS, METADATA_COLUMN_STATS_MAX_COLUMNS,
    METADATA_RECORD_INDEX, METADATA_RECORD_INDEX_MIN_FILE_GROUPS, METADATA_RECORD_INDEX_MAX_FILE_GROUPS,
    METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE, METADATA_RECORD_INDEX_GROWTH_FACTOR,
    METADATA_PARTITIONED_RECORD_INDEX, METADATA_PARTITIONED_RECORD_INDEX_MIN_FILE_GROUPS,
    METADATA_PARTITIONED_RECORD_INDEX_MAX_FILE_GROUPS, TABLE_VERSION, POPULATE_META_FIELDS,
    CDC_ENABLED,
    CDC_LOGGING_MODE, SCHEMA_ON_READ, PREPPED, *TIMEBASED_OPTIONS,
    PAYLOAD_CLASS, COMBINE_BEFORE_INSERT, COMBINE_BEFORE_UPSERT, COMBINE_BEFORE_DELETE, PARTIAL_UPDATE_COLUMNS,
    INDEX_TYPE, BUCKET_NUM, UPDATE_PARTITION_PATH, RECORD_INDEX_UPDATE_PARTITION_PATH,
    BLOOM_FILTER_TYPE, BLOOM_NUM_ENTRIES, BLOOM_FPP, BLOOM_MAX_ENTRIES,
    MAX_FILE_SIZE, SMALL_FILE_LIMIT, BLOCK_SIZE, COMPRESSION, RECORD_SIZE_ESTIMATE, LOG_BLOCK_MAX_SIZE, LOG_FILE_MAX_SIZE,
    UPSERT_PARALLELISM, INSERT_PARALLELISM, BULK_INSERT_PARALLELISM, DELETE_PARALLELISM, BULK_INSERT_SORT_MODE,
    COMPACT_INLINE, COMPACT_MAX_DELTA_COMMITS, CLEAN_AUTOMATIC, CLEANER_POLICY, CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED, *LOCK_OPTIONS, *ARCHIVAL_OPTIONS,
    CLUSTERING_UPDATES_STRATEGY, CLUSTERING_ROLLBACK_PENDING_ON_CONFLICT, *CLUSTERING_OPTIONS, *SYNC_OPTIONS,
)
READ_OPTIONS: tuple[ConfigOption, ...] = (QUERY_TYPE, QUERY_AS_RO_TABLE, AS_OF_INSTANT, BEGIN_INSTANT, END_INSTANT,
                                          INCREMENTAL_FORMAT, CDC_IMAGES)
ALL_OPTIONS: tuple[ConfigOption, ...] = WRITE_OPTIONS + READ_OPTIONS
GROUPS = {"table": "Table", "keys": "Record keys and partitioning", "merge": "Payload and pre-combine",
          "index": "Index", "bloom": "Bloom filters", "storage": "Base files", "log": "Log files (MOR)",
          "parallelism": "Parallelism", "compaction": "Compaction (MOR)", "clean": "Cleaning",
          "lock": "Lock, heartbeats and concurrent writers", "archival": "Archival", "clustering": "Clustering",
          "sync": "Catalog sync (Hive metastore, AWS Glue)",
          "read": "Reads (the Spark data source)"}
