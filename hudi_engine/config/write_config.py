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

    @staticmethod
    def from_options(o: Options) -> "MergeConfig":
        try:
            payload = payload_for(o[K.PAYLOAD_CLASS])
        except HudiError as e:
            raise ConfigError(f"{K.PAYLOAD_CLASS.key}: {e}") from None
        return MergeConfig(o[K.PRECOMBINE_FIELD].strip() or None, payload, o[K.COMBINE_BEFORE_INSERT],
                           o[K.COMBINE_BEFORE_UPSERT], o[K.COMBINE_BEFORE_DELETE])

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


@dataclass(frozen=True)
class LockConfig:
    wait_timeout_ms: int = 60_000
    expiry_ms: int = 600_000  # 0: never

    @staticmethod
    def from_options(o: Options) -> "LockConfig":
        return LockConfig(o[K.LOCK_WAIT_MS], o[K.LOCK_EXPIRE_MINUTES] * 60_000)


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
    commit_extra_metadata: Mapping[str, str] = field(default_factory=dict)
    given: Mapping[str, str] = field(default_factory=dict)  # every option the user set, under its canonical key

    @staticmethod
    def from_options(options: Mapping[str, Any] | None) -> "WriteConfig":
        """Validate and translate `options` (Hudi's keys); one ConfigError lists every bad value, each naming the
        key, the value and what is accepted."""
        o = Options(options, K.WRITE_OPTIONS, collect=True)
        errors: list[str] = o.errors

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
                     lock=part(LockConfig.from_options, LockConfig()))
        if errors:
            raise ConfigError("invalid Hudi write options:\n  " + "\n  ".join(errors))
        prefix = o[K.COMMIT_META_PREFIX]
        extra = {k: v for k, v in o.given.items() if prefix and k.startswith(prefix)}
        return WriteConfig(o[K.TABLE_NAME], o[K.DATABASE_NAME], Operation(o[K.OPERATION]), o[K.TABLE_TYPE],
                           commit_extra_metadata=extra, given=dict(o.given), **parts)

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
        return dataclasses.replace(self, table_name=table.name, table_type=table.table_type, keys=keys, merge=merge)

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
            k.hive_style_partitioning, k.url_encode_partitioning, database=self.database_name or "default")


def _resolve(name: str) -> str:
    from hudi_engine.keygen import resolve_key_generator_class

    return resolve_key_generator_class(name)
