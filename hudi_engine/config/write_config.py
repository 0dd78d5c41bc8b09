"""`WriteConfig`: one write's options, parsed once from the declarations (`config.keys`) into immutable typed parts.

Every layer below the entry points takes these parts, never a raw options dict: the key generator gets `KeyConfig`,
handles get `BloomConfig` / `FileSizing` / `LogConfig`, cleaning gets `CleanConfig`, and so on. `for_table` is the
one check that a write's options agree with an existing table's `hoodie.properties` (the dbt adapter asks the same
function); options the user left out are taken from the table.
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_engine.config import hudi_keys
from hudi_engine.config import keys as K
from hudi_engine.config.option import Options
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.payload import Payload, payload_for

if TYPE_CHECKING:
    from hudi_engine.keygen import KeyGenerator
    from hudi_engine.table_config import TableConfig


class Operation(enum.Enum):
    INSERT = "insert"
    UPSERT = "upsert"
    BULK_INSERT = "bulk_insert"
    DELETE = "delete"
    INSERT_OVERWRITE = "insert_overwrite"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"

    @property
    def operation_type(self) -> str:
        """The `operationType` enum name in commit metadata."""
        return self.name

    @property
    def is_overwrite(self) -> bool:
        return self in (Operation.INSERT_OVERWRITE, Operation.INSERT_OVERWRITE_TABLE)

    @property
    def looks_up_keys(self) -> bool:
        """Whether the index is asked where the incoming keys live (insert and overwrites never ask)."""
        return self in (Operation.UPSERT, Operation.DELETE)


class IndexType(enum.Enum):
    SIMPLE = "SIMPLE"
    BLOOM = "BLOOM"
    BUCKET = "BUCKET"
    GLOBAL_SIMPLE = "GLOBAL_SIMPLE"


COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"


# ---- the typed parts ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyConfig:
    """Record keys and partition paths: which columns, which key generator, how paths are spelled."""

    record_key_fields: tuple[str, ...] = ()
    partition_fields: tuple[str, ...] = ()  # as given: a CustomKeyGenerator's entries keep their `:TYPE`
    key_generator_class: str = ""  # the full class name
    hive_style_partitioning: bool = False
    url_encode_partitioning: bool = False
    props: Mapping[str, str] = field(default_factory=dict)  # what the key generator reads (timebased options ...)

    @staticmethod
    def from_options(o: Options) -> "KeyConfig":
        from hudi_engine.keygen import infer_key_generator_class, resolve_key_generator_class

        record_keys, partitions = o[K.RECORD_KEY_FIELDS], o[K.PARTITION_FIELDS]
        name = o[K.KEY_GENERATOR_CLASS].strip() or o[K.KEY_GENERATOR_TYPE]
        try:
            keygen = resolve_key_generator_class(name) if name else infer_key_generator_class(record_keys, partitions)
        except HudiError as e:
            raise ConfigError(f"{K.KEY_GENERATOR_CLASS.key}={name!r}: {e}") from None
        props = {k: o.given[k] for k in _KEYGEN_KEYS if o.given.get(k)}
        return KeyConfig(record_keys, partitions, keygen, o[K.HIVE_STYLE_PARTITIONING], o[K.URL_ENCODE_PARTITIONING],
                         props)

    @property
    def partition_field_names(self) -> tuple[str, ...]:
        """The partition fields `hoodie.table.partition.fields` holds: a CustomKeyGenerator's `name:TYPE` entries
        without their type, as Hudi 0.14/0.15 store them for table version 6 (the type stays in the option)."""
        if self.key_generator_class.rsplit(".", 1)[-1] in ("CustomKeyGenerator", "CustomAvroKeyGenerator"):
            return tuple(f.split(":", 1)[0] for f in self.partition_fields)
        return self.partition_fields

    def key_generator(self) -> "KeyGenerator":
        from hudi_engine.keygen import key_generator_for

        props = dict(self.props)
        props.setdefault(K.PARTITION_FIELDS.key, ",".join(self.partition_fields))
        return key_generator_for(self.key_generator_class, self.record_key_fields, self.partition_fields, props,
                                 hive_style=self.hive_style_partitioning, url_encode=self.url_encode_partitioning)


# Options the key generator reads besides the fields: they travel in `KeyConfig.props`.
_KEYGEN_KEYS = tuple(o.key for o in (*K.TIMEBASED_OPTIONS, K.CONSISTENT_LOGICAL_TIMESTAMP, K.PARTITION_FIELDS))


@dataclass(frozen=True)
class MergeConfig:
    """How versions of one key are reduced: the ordering field, the payload, and when to pre-combine."""

    precombine_field: str | None = None
    payload: Payload = field(default_factory=lambda: payload_for(None))
    combine_before_insert: bool = False
    combine_before_upsert: bool = True
    combine_before_delete: bool = True
    update_columns: tuple[str, ...] = ()  # partial update: on a stored key only these columns change (empty: all)

    @staticmethod
    def from_options(o: Options) -> "MergeConfig":
        try:
            payload = payload_for(o[K.PAYLOAD_CLASS])
        except HudiError as e:
            raise ConfigError(f"{K.PAYLOAD_CLASS.key}: {e}") from None
        precombine = o[K.PRECOMBINE_FIELD].strip()
        if "," in precombine:
            raise ConfigError(f"{K.PRECOMBINE_FIELD.key}={precombine!r}: table version 6 orders records by one "
                              "column (Hudi 1.x's several ordering fields need table version 8); name one column")
        return MergeConfig(precombine or None, payload, o[K.COMBINE_BEFORE_INSERT],
                           o[K.COMBINE_BEFORE_UPSERT], o[K.COMBINE_BEFORE_DELETE], o[K.PARTIAL_UPDATE_COLUMNS])

    def combines(self, operation: Operation) -> bool:
        """Whether duplicate keys of a batch are pre-combined before the write."""
        if operation is Operation.UPSERT:
            return self.combine_before_upsert
        if operation is Operation.DELETE:
            return self.combine_before_delete
        return self.combine_before_insert


@dataclass(frozen=True)
class IndexConfig:
    type: IndexType = IndexType.SIMPLE
    bucket_num: int = 256
    update_partition_path: bool = True

    @staticmethod
    def from_options(o: Options) -> "IndexConfig":
        return IndexConfig(IndexType(o[K.INDEX_TYPE]), o[K.BUCKET_NUM], o[K.UPDATE_PARTITION_PATH])


@dataclass(frozen=True)
class BloomConfig:
    """The bloom filter written into every base file footer."""

    filter_type: str = "DYNAMIC_V0"
    num_entries: int = 60000
    fpp: float = 1e-9
    max_entries: int = 100000

    @staticmethod
    def from_options(o: Options) -> "BloomConfig":
        return BloomConfig(o[K.BLOOM_FILTER_TYPE], o[K.BLOOM_NUM_ENTRIES], o[K.BLOOM_FPP], o[K.BLOOM_MAX_ENTRIES])


@dataclass(frozen=True)
class FileSizing:
    """Base file sizes and parquet settings."""

    max_file_size: int = 120 * K.MB
    small_file_limit: int = 100 * K.MB
    block_size: int = 120 * K.MB
    compression: str = "snappy"
    record_size_estimate: int = 1024

    @staticmethod
    def from_options(o: Options) -> "FileSizing":
        sizing = FileSizing(o[K.MAX_FILE_SIZE], o[K.SMALL_FILE_LIMIT], o[K.BLOCK_SIZE], o[K.COMPRESSION],
                            o[K.RECORD_SIZE_ESTIMATE])
        if sizing.max_file_size < sizing.small_file_limit:
            raise ConfigError(
                f"{K.MAX_FILE_SIZE.key}={sizing.max_file_size} is below {K.SMALL_FILE_LIMIT.key}="
                f"{sizing.small_file_limit}: a file that small would count as small and take inserts beyond the max "
                f"size. Raise {K.MAX_FILE_SIZE.key} or lower {K.SMALL_FILE_LIMIT.key} (0 turns packing off).")
        return sizing


@dataclass(frozen=True)
class LogConfig:
    block_max_size: int = 256 * K.MB
    file_max_size: int = 1024 * K.MB

    @staticmethod
    def from_options(o: Options) -> "LogConfig":
        return LogConfig(o[K.LOG_BLOCK_MAX_SIZE], o[K.LOG_FILE_MAX_SIZE])


@dataclass(frozen=True)
class ParallelismConfig:
    """Spark tasks per operation (0: the session's default parallelism) and bulk_insert's sort mode."""

    upsert: int = 0
    insert: int = 0
    bulk_insert: int = 0
    delete: int = 0
    bulk_insert_sort_mode: str = "GLOBAL_SORT"

    @staticmethod
    def from_options(o: Options) -> "ParallelismConfig":
        return ParallelismConfig(o[K.UPSERT_PARALLELISM], o[K.INSERT_PARALLELISM], o[K.BULK_INSERT_PARALLELISM],
                                 o[K.DELETE_PARALLELISM], o[K.BULK_INSERT_SORT_MODE])

    def for_operation(self, operation: Operation, default: int) -> int:
        value = {Operation.UPSERT: self.upsert, Operation.DELETE: self.delete,
                 Operation.BULK_INSERT: self.bulk_insert}.get(operation, self.insert)
        return value if value > 0 else max(1, default)


@dataclass(frozen=True)
class CompactionConfig:
    inline: bool = False
    max_delta_commits: int = 5

    @staticmethod
    def from_options(o: Options) -> "CompactionConfig":
        return CompactionConfig(o[K.COMPACT_INLINE], o[K.COMPACT_MAX_DELTA_COMMITS])


KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS"


@dataclass(frozen=True)
class CleanConfig:
    automatic: bool = True
    policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = 10
    file_versions_retained: int = 3

    @staticmethod
    def from_options(o: Options) -> "CleanConfig":
        return CleanConfig(o[K.CLEAN_AUTOMATIC], o[K.CLEANER_POLICY], o[K.CLEANER_COMMITS_RETAINED],
                           o[K.CLEANER_FILE_VERSIONS_RETAINED])


FILE_SYSTEM_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
STORAGE_LOCK = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
DYNAMODB_LOCK = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
SUPPORTED_LOCK_PROVIDERS = (FILE_SYSTEM_LOCK, STORAGE_LOCK, DYNAMODB_LOCK)
# Hudi's other providers: known, refused with a reason.
_REFUSED_LOCK_PROVIDERS = {
    "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider": "this engine has no ZooKeeper client",
    "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider": "this engine has no Hive metastore client",
    "org.apache.hudi.client.transaction.lock.InProcessLockProvider":
        "it excludes only writers inside one process, never a second process",
}
SINGLE_WRITER, OPTIMISTIC = "SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL"
EAGER, LAZY, NEVER = "EAGER", "LAZY", "NEVER"


def resolve_lock_provider(name: str) -> str:
    """The full class name of a supported lock provider given by full or short name; ConfigError otherwise."""
    given = name.strip()
    short = given.rsplit(".", 1)[-1]
    for full in SUPPORTED_LOCK_PROVIDERS:
        if given in (full, full.rsplit(".", 1)[-1]):
            return full
    supported = ", ".join(p.rsplit(".", 1)[-1] for p in SUPPORTED_LOCK_PROVIDERS)
    for full, why in _REFUSED_LOCK_PROVIDERS.items():
        if short == full.rsplit(".", 1)[-1]:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}={given!r} is not supported: {why}. Use one of {supported} "
                              "(see the README for which suits the table's storage)")
    raise ConfigError(f"{K.LOCK_PROVIDER.key}={given!r}: unknown lock provider; expected one of {supported} "
                      "(Hudi's class names, full or short)")


@dataclass(frozen=True)
class DynamoDBLockSettings:
    """Where DynamoDBBasedLockProvider keeps its lock item (Hudi's `hoodie.write.lock.dynamodb.*`)."""

    table: str = ""
    partition_key: str = ""  # "" -> the Hudi table's name
    region: str = ""  # "" -> AWS_REGION, else us-east-1 (as Hudi infers it)
    endpoint_url: str = ""
    billing_mode: str = "PAY_PER_REQUEST"
    read_capacity: int = 20
    write_capacity: int = 10
    table_creation_timeout_ms: int = 600_000


@dataclass(frozen=True)
class LockConfig:
    """The table lock, heartbeats, and how concurrent writers are resolved."""

    wait_timeout_ms: int = 60_000
    expiry_ms: int = 600_000  # the file-system lock's expiry; 0: never
    provider: str = FILE_SYSTEM_LOCK
    concurrency_mode: str = SINGLE_WRITER
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2
    failed_writes_policy: str = EAGER
    dynamodb: DynamoDBLockSettings = field(default_factory=DynamoDBLockSettings)

    @staticmethod
    def from_options(o: Options) -> "LockConfig":
        provider = resolve_lock_provider(o[K.LOCK_PROVIDER])
        mode = o[K.CONCURRENCY_MODE]
        policy = o[K.FAILED_WRITES_POLICY]
        if mode == OPTIMISTIC:
            if o.is_set(K.FAILED_WRITES_POLICY) and policy == EAGER:
                raise ConfigError(
                    f"{K.CONCURRENCY_MODE.key}={mode} contradicts {K.FAILED_WRITES_POLICY.key}=EAGER: with several "
                    f"writers a pending instant may be another live writer's, so failed writes must be rolled back "
                    f"only once their heartbeat expired, by the cleaning (LAZY). Set {K.FAILED_WRITES_POLICY.key}="
                    "LAZY, or leave it out (optimistic concurrency implies LAZY)")
            policy = policy if o.is_set(K.FAILED_WRITES_POLICY) else LAZY
        interval, expiry = o[K.HEARTBEAT_INTERVAL_MS], round(o[K.LOCK_EXPIRE_MINUTES] * 60_000)
        if provider != DYNAMODB_LOCK and expiry and expiry < 2 * interval:
            raise ConfigError(
                f"{K.LOCK_EXPIRE_MINUTES.key}={o[K.LOCK_EXPIRE_MINUTES]:g} minutes ({expiry} ms) contradicts "
                f"{K.HEARTBEAT_INTERVAL_MS.key}={interval}: a live writer renews the lock file with every heartbeat, "
                "so an expiry under two intervals lets another writer take its lock after one late heartbeat. Raise "
                f"{K.LOCK_EXPIRE_MINUTES.key} to at least {2 * interval / 60_000:g} minutes or lower the interval")
        dynamo = DynamoDBLockSettings(
            o[K.DYNAMODB_TABLE].strip(), o[K.DYNAMODB_PARTITION_KEY].strip(), o.get(K.DYNAMODB_REGION, "").strip(),
            o[K.DYNAMODB_ENDPOINT_URL].strip(), o[K.DYNAMODB_BILLING_MODE], o[K.DYNAMODB_READ_CAPACITY],
            o[K.DYNAMODB_WRITE_CAPACITY], o[K.DYNAMODB_TABLE_CREATION_TIMEOUT])
        if provider == DYNAMODB_LOCK and not dynamo.table:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}=DynamoDBBasedLockProvider needs {K.DYNAMODB_TABLE.key}: the "
                              "DynamoDB table that holds the lock items")
        return LockConfig(o[K.LOCK_WAIT_MS], expiry, provider, mode, interval, o[K.HEARTBEAT_TOLERABLE_MISSES],
                          policy, dynamo)

    @property
    def optimistic(self) -> bool:
        return self.concurrency_mode == OPTIMISTIC

    @property
    def heartbeat_expiry_ms(self) -> int:
        """A heartbeat older than this belongs to a writer that died (interval x tolerable misses, as in Hudi)."""
        return self.heartbeat_interval_ms * self.heartbeat_tolerable_misses


@dataclass(frozen=True)
class ArchivalConfig:
    """Timeline archival: how many completed commits stay on the active timeline."""

    automatic: bool = True
    min_commits: int = 20
    max_commits: int = 30

    @staticmethod
    def from_options(o: Options) -> "ArchivalConfig":
        config = ArchivalConfig(o[K.ARCHIVE_AUTOMATIC], o[K.KEEP_MIN_COMMITS], o[K.KEEP_MAX_COMMITS])
        if config.max_commits <= config.min_commits:
            raise ConfigError(f"{K.KEEP_MAX_COMMITS.key}={config.max_commits} must be greater than "
                              f"{K.KEEP_MIN_COMMITS.key}={config.min_commits}: archival runs once more than the max "
                              "are active and archives down to the min. Raise the max or lower the min")
        return config

    def check_against(self, clean: "CleanConfig") -> None:
        """Hudi's rule: archival keeps more commits than cleaning retains, or an incremental read from a retained
        commit could need commits already archived."""
        if clean.policy == KEEP_LATEST_COMMITS and self.min_commits <= clean.commits_retained:
            raise ConfigError(
                f"{K.KEEP_MIN_COMMITS.key}={self.min_commits} must be greater than {K.CLEANER_COMMITS_RETAINED.key}="
                f"{clean.commits_retained}: archival would move commits off the active timeline whose files cleaning "
                f"still keeps readable. Raise {K.KEEP_MIN_COMMITS.key} (and {K.KEEP_MAX_COMMITS.key} above it) or "
                f"lower {K.CLEANER_COMMITS_RETAINED.key}")


@dataclass(frozen=True)
class Contradiction:
    """An option the user set that disagrees with the existing table's `hoodie.properties`."""

    key: str
    given: str
    table: Any

    def __str__(self) -> str:
        return f"{self.key}={self.given!r} contradicts the table's {self.table!r}"


# ---- the whole write ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WriteConfig:
    """One write's options, typed. Build it with `from_options`; `for_table` fits it to an existing table."""

    table_name: str = ""
    database_name: str = ""
    operation: Operation = Operation.UPSERT
    table_type: str = COPY_ON_WRITE
    populate_meta_fields: bool = True
    keys: KeyConfig = field(default_factory=KeyConfig)
    merge: MergeConfig = field(default_factory=MergeConfig)
    index: IndexConfig = field(default_factory=IndexConfig)
    bloom: BloomConfig = field(default_factory=BloomConfig)
    files: FileSizing = field(default_factory=FileSizing)
    log: LogConfig = field(default_factory=LogConfig)
    parallelism: ParallelismConfig = field(default_factory=ParallelismConfig)
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    clean: CleanConfig = field(default_factory=CleanConfig)
    lock: LockConfig = field(default_factory=LockConfig)
    archival: ArchivalConfig = field(default_factory=ArchivalConfig)
    commit_extra_metadata: Mapping[str, str] = field(default_factory=dict)
    given: Mapping[str, str] = field(default_factory=dict)  # every option the user set, under its canonical key

    @staticmethod
    def from_options(options: Mapping[str, Any] | None, where: str = "") -> "WriteConfig":
        """Validate and translate `options` (Hudi's keys); one ConfigError lists every bad value, each naming the
        key, the value and what is accepted, and every Hudi option that asks for what this engine does not do
        (`hudi_keys.refusals`). `where` (the table's path) heads the error when given."""
        o = Options(options, K.WRITE_OPTIONS, collect=True, known=hudi_keys.known_keys())
        errors: list[str] = o.errors + hudi_keys.refusals(o.given)

        def part(build: Any, default: Any) -> Any:
            try:
                return build(o)
            except ConfigError as e:
                errors.append(str(e))
                return default

        parts = dict(keys=part(KeyConfig.from_options, KeyConfig()),
                     merge=part(MergeConfig.from_options, MergeConfig()),
                     index=part(IndexConfig.from_options, IndexConfig()),
                     bloom=part(BloomConfig.from_options, BloomConfig()),
                     files=part(FileSizing.from_options, FileSizing()),
                     log=part(LogConfig.from_options, LogConfig()),
                     parallelism=part(ParallelismConfig.from_options, ParallelismConfig()),
                     compaction=part(CompactionConfig.from_options, CompactionConfig()),
                     clean=part(CleanConfig.from_options, CleanConfig()),
                     lock=part(LockConfig.from_options, LockConfig()),
                     archival=part(ArchivalConfig.from_options, ArchivalConfig()))
        if not errors:
            try:
                parts["archival"].check_against(parts["clean"])
            except ConfigError as e:
                errors.append(str(e))
        if errors:
            head = f"table {where}: invalid Hudi write options" if where else "invalid Hudi write options"
            raise ConfigError(head + ":\n  " + "\n  ".join(errors))
        prefix = o[K.COMMIT_META_PREFIX]
        extra = {k: v for k, v in o.given.items() if prefix and k.startswith(prefix)}
        return WriteConfig(o[K.TABLE_NAME], o[K.DATABASE_NAME], Operation(o[K.OPERATION]), o[K.TABLE_TYPE],
                           o[K.POPULATE_META_FIELDS], commit_extra_metadata=extra, given=dict(o.given), **parts)

    def with_operation(self, operation: Operation | str) -> "WriteConfig":
        return dataclasses.replace(self, operation=Operation(operation))

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def commit_action(self) -> str:
        if self.operation.is_overwrite:
            return "replacecommit"
        return "deltacommit" if self.is_mor else "commit"

    @property
    def combine_before_write(self) -> bool:
        return self.merge.combines(self.operation)

    def is_set(self, option: Any) -> bool:
        """Whether the user gave the option, even empty (an empty partition field list says "unpartitioned")."""
        return option.key in self.given

    # ---- against a table ---------------------------------------------------------------------------------------
    def contradictions(self, table: "TableConfig") -> list["Contradiction"]:
        """How the options the user set contradict an existing table's `hoodie.properties` (empty: they fit).
        Column names compare case-insensitively, as Spark resolves them."""
        from hudi_engine.keygen import resolve_key_generator_class

        out: list[Contradiction] = []

        def differ(option: Any, mine: Any, theirs: Any, shown: Any = None) -> None:
            if self.is_set(option) and mine != theirs:
                out.append(Contradiction(option.key, self.given[option.key], shown if shown is not None else theirs))

        def lower(fields: Any) -> list[str]:
            return [f.lower() for f in fields or ()]

        differ(K.TABLE_TYPE, self.table_type, table.table_type)
        differ(K.POPULATE_META_FIELDS, self.populate_meta_fields, table.populate_meta_fields,
               str(table.populate_meta_fields).lower())
        differ(K.RECORD_KEY_FIELDS, lower(self.keys.record_key_fields), lower(table.record_key_fields),
               table.record_key_fields)
        differ(K.PARTITION_FIELDS, lower(self.keys.partition_field_names), lower(table.partition_fields),
               table.partition_fields)
        named = [o for o in (K.KEY_GENERATOR_CLASS, K.KEY_GENERATOR_TYPE) if self.given.get(o.key)]
        if named:
            theirs = table.key_generator_class
            if theirs and resolve_key_generator_class(theirs) != self.keys.key_generator_class:
                out.append(Contradiction(named[0].key, self.given[named[0].key], theirs))
        differ(K.HIVE_STYLE_PARTITIONING, self.keys.hive_style_partitioning, table.hive_style_partitioning)
        differ(K.URL_ENCODE_PARTITIONING, self.keys.url_encode_partitioning, table.url_encode_partitioning)
        differ(K.PRECOMBINE_FIELD, (self.merge.precombine_field or "").lower(), (table.precombine_field or "").lower(),
               table.precombine_field)
        table_payload = table.props.get(K.PAYLOAD_CLASS.aliases[0])
        if table_payload and self.is_set(K.PAYLOAD_CLASS):
            differ(K.PAYLOAD_CLASS, self.merge.payload.class_name, payload_for(table_payload).class_name, table_payload)
        if self.table_name and self.table_name != table.name:
            out.append(Contradiction(K.TABLE_NAME.key, self.table_name, table.name))
        return out

    def for_table(self, table: "TableConfig", where: str) -> "WriteConfig":
        """This config fitted to an existing table: options left out come from `hoodie.properties`; options that
        contradict it are refused (ConfigError naming each)."""
        problems = self.contradictions(table)
        if problems:
            raise ConfigError(f"table {where} (hoodie.properties): " + "; ".join(map(str, problems))
                              + ". Change the options, or rewrite the table from scratch to change them.")
        keys = self.keys
        partitions = keys.partition_fields if self.is_set(K.PARTITION_FIELDS) else tuple(table.partition_fields)
        keygen_props = {k: v for k, v in table.props.items() if k in _KEYGEN_KEYS} | dict(keys.props)
        keys = KeyConfig(
            tuple(table.record_key_fields), partitions,
            keys.key_generator_class if not table.key_generator_class else
            _resolve(table.key_generator_class),
            table.hive_style_partitioning, table.url_encode_partitioning, keygen_props)
        table_payload = table.props.get(K.PAYLOAD_CLASS.aliases[0])
        merge = dataclasses.replace(self.merge, precombine_field=table.precombine_field or None,
                                    payload=payload_for(table_payload) if table_payload else self.merge.payload)
        return dataclasses.replace(self, table_name=table.name, table_type=table.table_type, keys=keys, merge=merge,
                                   populate_meta_fields=table.populate_meta_fields)

    def new_table_config(self, where: str) -> "TableConfig":
        """`hoodie.properties` of a table this write creates."""
        from hudi_engine.table_config import TableConfig

        errors = []
        if not self.table_name:
            errors.append(f"{K.TABLE_NAME.key} is required to create a table")
        if not self.keys.record_key_fields:
            errors.append(f"{K.RECORD_KEY_FIELDS.key} is required to create a table")
        if errors:
            raise ConfigError(f"no Hudi table at {where} yet: " + "; ".join(errors))
        k = self.keys
        return TableConfig.create(
            self.table_name, self.table_type, list(k.record_key_fields), list(k.partition_field_names),
            self.merge.precombine_field, k.key_generator_class, self.merge.payload.class_name,
            k.hive_style_partitioning, k.url_encode_partitioning, database=self.database_name or "default",
            populate_meta_fields=self.populate_meta_fields)


def _resolve(name: str) -> str:
    from hudi_engine.keygen import resolve_key_generator_class

    return resolve_key_generator_class(name)
