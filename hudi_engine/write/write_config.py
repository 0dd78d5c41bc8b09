"""Write options: Hudi's own `hoodie.*` keys translated, once, into a typed `WriteConfig`.

A user's existing Hudi options dict works unchanged. Keys this engine does not act on are kept (they go to the
commit's extra metadata where Hudi would keep them); unknown keys that look like typos of known ones get a warning.
"""
from __future__ import annotations

import difflib
import enum
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

from hudi_engine.errors import WriteError
from hudi_engine.payload import Payload, payload_for


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


TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
KEYGEN_PKG = "org.apache.hudi.keygen."

# key -> default ("" = no default). The one list of keys this engine understands.
KNOWN_KEYS: dict[str, Any] = {
    "hoodie.table.name": "",
    "hoodie.database.name": "default",
    "hoodie.datasource.write.table.name": "",
    "hoodie.datasource.write.operation": "upsert",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.recordkey.field": "",
    "hoodie.datasource.write.partitionpath.field": "",
    "hoodie.datasource.write.precombine.field": "",
    "hoodie.datasource.write.keygenerator.class": "",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
    "hoodie.datasource.write.payload.class": "",
    "hoodie.index.type": "SIMPLE",
    "hoodie.bucket.index.num.buckets": "256",
    "hoodie.simple.index.update.partition.path": "true",
    "hoodie.parquet.small.file.limit": str(100 * 1024 * 1024),
    "hoodie.parquet.max.file.size": str(120 * 1024 * 1024),
    "hoodie.parquet.compression.codec": "snappy",
    "hoodie.parquet.block.size": str(120 * 1024 * 1024),
    "hoodie.logfile.data.block.max.size": str(256 * 1024 * 1024),
    "hoodie.logfile.max.size": str(1024 * 1024 * 1024),
    "hoodie.combine.before.insert": "false",
    "hoodie.combine.before.upsert": "true",
    "hoodie.combine.before.delete": "true",
    "hoodie.copyonwrite.record.size.estimate": "1024",
    "hoodie.write.lock.wait.timeout.ms": "60000",
    "hoodie.write.lock.expiry.ms": "600000",
    "hoodie.bloom.index.filter.type": "DYNAMIC_V0",
    "hoodie.index.bloom.num_entries": "60000",
    "hoodie.index.bloom.fpp": "0.000000001",
    "hoodie.bloom.index.filter.dynamic.max.entries": "100000",
    "hoodie.compact.inline": "false",
    "hoodie.compact.inline.max.delta.commits": "5",
    "hoodie.clean.automatic": "true",
    "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
    "hoodie.cleaner.commits.retained": "10",
    "hoodie.cleaner.fileversions.retained": "3",
    "hoodie.metadata.enable": "false",
    "hoodie.datasource.write.commitmeta.key.prefix": "_",
}


def _bool(options: Mapping[str, str], key: str) -> bool:
    value = str(options.get(key, KNOWN_KEYS[key])).strip().lower()
    if value not in ("true", "false"):
        raise WriteError(f"option {key}={options[key]!r}: expected true or false")
    return value == "true"


def _int(options: Mapping[str, str], key: str) -> int:
    value = options.get(key, KNOWN_KEYS[key])
    try:
        return int(value)
    except (TypeError, ValueError):
        raise WriteError(f"option {key}={value!r}: expected a whole number") from None


def _fields(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in str(value).split(",") if v.strip()]


@dataclass(frozen=True)
class WriteConfig:
    table_name: str
    database_name: str
    operation: Operation
    table_type: str
    record_key_fields: list[str]
    partition_fields: list[str]
    precombine_field: str | None
    key_generator_class: str
    hive_style_partitioning: bool
    url_encode_partitioning: bool
    payload: Payload
    index_type: IndexType
    bucket_num: int
    update_partition_path: bool
    small_file_limit: int
    max_file_size: int
    compression: str
    log_block_max_size: int
    log_file_max_size: int
    combine_before_insert: bool
    combine_before_upsert: bool
    record_size_estimate: int
    lock_wait_timeout_ms: int
    lock_expiry_ms: int
    options: dict[str, str] = field(default_factory=dict)  # every option as given, for extra metadata

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def commit_extra_metadata(self) -> dict[str, str]:
        """Options Hudi copies into the commit metadata: keys starting with the commit-meta prefix."""
        prefix = self.options.get("hoodie.datasource.write.commitmeta.key.prefix", "_")
        return {k: v for k, v in self.options.items() if prefix and k.startswith(prefix)}

    @property
    def commit_action(self) -> str:
        if self.operation.is_overwrite:
            return "replacecommit"
        return "deltacommit" if self.is_mor else "commit"

    @property
    def combine_before_write(self) -> bool:
        if self.operation in (Operation.UPSERT, Operation.DELETE):
            return self.combine_before_upsert
        return self.combine_before_insert

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> "WriteConfig":
        """Validate and translate `options`; every error names the key, the value and what is accepted."""
        opts = {str(k): ("" if v is None else str(v) if not isinstance(v, (list, tuple)) else ",".join(map(str, v)))
                for k, v in options.items()}
        _warn_typos(opts)
        errors: list[str] = []

        def choice(key: str, accepted: list[str], upper: bool = False) -> str:
            raw = opts.get(key, KNOWN_KEYS[key]).strip()
            value = raw.upper() if upper else raw.lower()
            if value not in accepted:
                errors.append(f"{key}={raw!r}: expected one of {', '.join(accepted)}")
                return accepted[0]
            return value

        name = opts.get("hoodie.table.name") or opts.get("hoodie.datasource.write.table.name") or ""
        operation = Operation(choice("hoodie.datasource.write.operation", [o.value for o in Operation]))
        table_type = opts.get("hoodie.datasource.write.table.type", "COPY_ON_WRITE").strip().upper()
        table_type = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}.get(table_type, table_type)
        if table_type not in TABLE_TYPES:
            errors.append(f"hoodie.datasource.write.table.type={table_type!r}: expected COPY_ON_WRITE or MERGE_ON_READ")
        index_type = IndexType(choice("hoodie.index.type", [i.value for i in IndexType], upper=True))
        record_keys = _fields(opts.get("hoodie.datasource.write.recordkey.field"))
        partition_fields = _fields(opts.get("hoodie.datasource.write.partitionpath.field"))
        keygen = opts.get("hoodie.datasource.write.keygenerator.class", "").strip()
        if not keygen:
            if not partition_fields:
                keygen = KEYGEN_PKG + "NonpartitionedKeyGenerator"
            elif len(record_keys) > 1 or len(partition_fields) > 1:
                keygen = KEYGEN_PKG + "ComplexKeyGenerator"
            else:
                keygen = KEYGEN_PKG + "SimpleKeyGenerator"
        elif "." not in keygen:
            keygen = KEYGEN_PKG + keygen
        try:
            payload = payload_for(opts.get("hoodie.datasource.write.payload.class") or None)
        except Exception as e:  # noqa: BLE001 - collected and raised together below
            errors.append(f"hoodie.datasource.write.payload.class: {e}")
            payload = payload_for(None)
        ints = {}
        for key in ("hoodie.bucket.index.num.buckets", "hoodie.parquet.small.file.limit",
                    "hoodie.parquet.max.file.size", "hoodie.logfile.data.block.max.size",
                    "hoodie.logfile.max.size", "hoodie.copyonwrite.record.size.estimate",
                    "hoodie.write.lock.wait.timeout.ms", "hoodie.write.lock.expiry.ms"):
            try:
                ints[key] = _int(opts, key)
                if ints[key] < 0:
                    errors.append(f"{key}={ints[key]}: expected a positive number")
            except WriteError as e:
                errors.append(str(e))
                ints[key] = int(KNOWN_KEYS[key])
        bools = {}
        for key in ("hoodie.datasource.write.hive_style_partitioning", "hoodie.datasource.write.partitionpath.urlencode",
                    "hoodie.simple.index.update.partition.path", "hoodie.combine.before.insert",
                    "hoodie.combine.before.upsert"):
            try:
                bools[key] = _bool(opts, key)
            except WriteError as e:
                errors.append(str(e))
                bools[key] = KNOWN_KEYS[key] == "true"
        if errors:
            raise WriteError("invalid Hudi write options:\n  " + "\n  ".join(errors))
        return WriteConfig(
            table_name=name,
            database_name=opts.get("hoodie.database.name", "default"),
            operation=operation,
            table_type=table_type,
            record_key_fields=record_keys,
            partition_fields=partition_fields,
            precombine_field=opts.get("hoodie.datasource.write.precombine.field", "").strip() or None,
            key_generator_class=keygen,
            hive_style_partitioning=bools["hoodie.datasource.write.hive_style_partitioning"],
            url_encode_partitioning=bools["hoodie.datasource.write.partitionpath.urlencode"],
            payload=payload,
            index_type=index_type,
            bucket_num=ints["hoodie.bucket.index.num.buckets"],
            update_partition_path=bools["hoodie.simple.index.update.partition.path"],
            small_file_limit=ints["hoodie.parquet.small.file.limit"],
            max_file_size=ints["hoodie.parquet.max.file.size"],
            compression=opts.get("hoodie.parquet.compression.codec", KNOWN_KEYS["hoodie.parquet.compression.codec"]),
            log_block_max_size=ints["hoodie.logfile.data.block.max.size"],
            log_file_max_size=ints["hoodie.logfile.max.size"],
            combine_before_insert=bools["hoodie.combine.before.insert"],
            combine_before_upsert=bools["hoodie.combine.before.upsert"],
            record_size_estimate=ints["hoodie.copyonwrite.record.size.estimate"],
            lock_wait_timeout_ms=ints["hoodie.write.lock.wait.timeout.ms"],
            lock_expiry_ms=ints["hoodie.write.lock.expiry.ms"],
            options=opts,
        )


def _warn_typos(opts: Mapping[str, str]) -> None:
    for key in opts:
        if key in KNOWN_KEYS or not key.startswith("hoodie"):
            continue
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.85)
        if close:
            warnings.warn(f"Hudi option {key!r} is not known; did you mean {close[0]!r}?", stacklevel=3)
