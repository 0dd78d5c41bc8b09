"""Records of the metadata table's `column_stats` partition (FORMAT.md, Metadata table): Hudi's `HoodieMetadataRecord`
with `type` 3 and a `ColumnStatsMetadata` (`HoodieMetadataColumnStats`), one per (data file, column): the column's
min and max in that file, its value and null counts and its sizes.

Keys and file groups, as Hudi's `HoodieMetadataPayload.getColumnStatsIndexKey` and
`HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex` make them:
* key = base64(XXH64(column)) + base64(XXH64(partition)) + base64(MD5(file name)), the XXH64 seeded with
  `0xdabadaba` (sign-extended to 64 bits), big-endian; the partition of a non-partitioned table is "."; a key's
  first 12 characters are its column's prefix (Hudi's readers look columns up by prefix);
* file group = |Java `String.hashCode` of the key| mod the partition's file-group count (`col-stats-000N-0`).

Merging two records of one key (`HoodieMetadataPayload.mergeColumnStatsRecords`): a tombstone on either side, or a
tight bound on the newer, gives the newer; otherwise min of the mins, max of the maxes, counts and sizes summed.

Values are Avro wrappers (`LongWrapper`, `StringWrapper`, ...), each a record of one `value` field; `StatValue`
keeps the wrapper's name with the value so that it prints as Java prints it.
"""
from __future__ import annotations

import base64
import decimal
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hudi_engine.errors import MetadataTableError
from hudi_engine.metadata.records import partition_key
from hudi_engine.partition_path import java_float_string

COLUMN_STATS_PARTITION = "column_stats"  # MetadataPartitionType.COLUMN_STATS's partition of the metadata table
COLUMN_STATS_TYPE = 3  # HoodieMetadataPayload.METADATA_TYPE_COLUMN_STATS
PARTITION_STATS_PARTITION = "partition_stats"  # MetadataPartitionType.PARTITION_STATS (Hudi 1.x)
PARTITION_STATS_TYPE = 6  # its records: column stats of a whole partition, keyed without a file
BLOOM_FILTERS_PARTITION = "bloom_filters"  # MetadataPartitionType.BLOOM_FILTERS
BLOOM_FILTER_TYPE = 4  # HoodieMetadataPayload.METADATA_TYPE_BLOOM_FILTER
_FIELD = "ColumnStatsMetadata"
_NAMESPACE = "org.apache.hudi.avro.model."  # of the value wrappers
V1_DECIMAL_PRECISION, V1_DECIMAL_SCALE = 30, 15  # DecimalWrapper's decimal(30, 15): index version 1's decimals
# org.apache.hudi.stats.ValueType ordinals (Hudi 1.2), written in index version 2's `valueType`.
VALUE_TYPES = {"NULL": 1, "BOOLEAN": 2, "INT": 3, "LONG": 4, "FLOAT": 5, "DOUBLE": 6, "STRING": 7, "BYTES": 8,
               "FIXED": 9, "DECIMAL": 10, "UUID": 11, "DATE": 12, "TIME_MILLIS": 13, "TIME_MICROS": 14,
               "TIMESTAMP_MILLIS": 15, "TIMESTAMP_MICROS": 16, "TIMESTAMP_NANOS": 17, "LOCAL_TIMESTAMP_MILLIS": 18,
               "LOCAL_TIMESTAMP_MICROS": 19, "LOCAL_TIMESTAMP_NANOS": 20}
_SEED = 0xdabadaba | ~0xffffffff & 0xffffffffffffffff  # HashID.HASH_SEED, an int Java widens to a long


def _xxh64(text: str) -> bytes:
    # Imported here: keys are computed on the driver (metadata writes, lookups), and a Spark executor's Python, which
    # imports this module with the engine, needs no more than hudi_engine.spark.executor_env.REQUIREMENTS.
    import xxhash
    return xxhash.xxh64(text.encode("utf-8"), seed=_SEED).digest()  # big-endian, as HBase's Bytes.toBytes(long)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def column_key_prefix(column: str) -> str:
    """The key prefix of every record of `column` (`ColumnIndexID`)."""
    return _b64(_xxh64(column))


def column_stats_key(partition_path: str, file_name: str, column: str) -> str:
    """The record key of `column`'s stats in data file `file_name` of `partition_path` ("" when non-partitioned)."""
    return (column_key_prefix(column) + _b64(_xxh64(partition_key(partition_path)))
            + _b64(hashlib.md5(file_name.encode("utf-8")).digest()))


def partition_stats_key(partition_path: str, column: str) -> str:
    """The record key of `column`'s stats over partition `partition_path` (`getPartitionStatsIndexKey`)."""
    return column_key_prefix(column) + _b64(_xxh64(partition_key(partition_path)))


def bloom_filter_key(partition_path: str, file_name: str) -> str:
    """The record key of a base file's bloom filter in the `bloom_filters` partition (`getBloomFilterIndexKey`):
    base64(XXH64(partition)) + base64(MD5(file name))."""
    return _b64(_xxh64(partition_key(partition_path))) + _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def file_group_index(key: str, count: int) -> int:
    """The file group (0-based) of a `count`-group metadata partition that holds `key`, by Java's String.hashCode
    of the key (UTF-16 code units, 32-bit wrap), as `mapRecordKeyToFileGroupIndex` computes it."""
    h = 0
    for unit in _utf16_units(key):
        h = (31 * h + unit) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    magnitude = signed if signed == -(1 << 31) else abs(signed)  # Java's Math.abs(Integer.MIN_VALUE) stays negative
    return abs(int(math.fmod(magnitude, count)))  # Java's % truncates toward zero


def file_group_indexes(keys: Sequence[str], count: int) -> np.ndarray:
    """`file_group_index` of many keys at once (numpy over the keys' UTF-16 units, position by position)."""
    if not keys:
        return np.zeros(0, dtype=np.int64)
    raw = "".join(keys).encode("utf-16-be")
    lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
    if len(raw) // 2 != int(lengths.sum()):  # characters beyond the BMP (two units each): one by one
        return np.fromiter((file_group_index(k, count) for k in keys), dtype=np.int64, count=len(keys))
    units = np.frombuffer(raw, dtype=">u2").astype(np.uint64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    h = np.zeros(len(keys), dtype=np.uint64)
    for j in range(int(lengths.max())):
        live = lengths > j
        h[live] = (h[live] * np.uint64(31) + units[starts[live] + j]) & np.uint64(0xFFFFFFFF)
    signed = h.astype(np.int64)
    signed = np.where(signed >= 1 << 31, signed - (1 << 32), signed)
    magnitude = np.where(signed == -(1 << 31), signed, np.abs(signed))  # Java's Math.abs(MIN_VALUE) stays negative
    return np.abs(np.fmod(magnitude, count))  # Java's % truncates toward zero


def _utf16_units(text: str) -> Iterable[int]:
    raw = text.encode("utf-16-be")
    return (int.from_bytes(raw[i:i + 2], "big") for i in range(0, len(raw), 2))


# --------------------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class StatValue:
    """A min or max: its Avro wrapper's name (`LongWrapper`, ...) and the wrapped value as Avro decodes it (bytes for
    `BytesWrapper` and `DecimalWrapper`)."""

    wrapper: str
    value: Any

    def comparable(self, value_type: tuple[int, str | None] | None) -> Any:
        """The value as it orders: a decimal's bytes as a Decimal (DecimalWrapper: decimal(30, 15), index version 1;
        BytesWrapper with the DECIMAL value type and its "precision,scale", version 2), anything else as it is."""
        if self.wrapper == "DecimalWrapper":
            return decimal.Decimal(int.from_bytes(self.value, "big", signed=True)).scaleb(-V1_DECIMAL_SCALE)
        if value_type is not None and value_type[0] == VALUE_TYPES["DECIMAL"] and value_type[1]:
            scale = int(value_type[1].split(",")[1])
            return decimal.Decimal(int.from_bytes(self.value, "big", signed=True)).scaleb(-scale)
        return self.value

    def text(self) -> str:
        """The value as Hudi's `show_metadata_table_column_stats` prints it: `String.valueOf` of the value, bytes
        as `Arrays.toString` (signed)."""
        v = self.value
        if isinstance(v, bytes):
            return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return java_float_string(v, single=self.wrapper == "FloatWrapper")
        return str(v)


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """One `HoodieMetadataColumnStats`."""

    file_name: str
    column_name: str
    min_value: StatValue | None
    max_value: StatValue | None
    value_count: int
    null_count: int
    total_size: int
    total_uncompressed_size: int
    is_deleted: bool
    is_tight_bound: bool = False
    value_type: tuple[int, str | None] | None = None  # HoodieValueTypeInfo (index version 2): ordinal, extra info

    @staticmethod
    def from_avro(datum: Mapping[str, Any], where: str) -> ColumnStats:
        """The stats of a decoded `ColumnStatsMetadata` (its union branches named, fastavro's
        `return_record_name`); `where` names the record for errors."""
        try:
            return ColumnStats(
                str(datum["fileName"]), str(datum["columnName"]), _stat_value(datum.get("minValue")),
                _stat_value(datum.get("maxValue")), int(datum.get("valueCount") or 0),
                int(datum.get("nullCount") or 0), int(datum.get("totalSize") or 0),
                int(datum.get("totalUncompressedSize") or 0), bool(datum.get("isDeleted")),
                bool(datum.get("isTightBound")), _value_type(datum.get("valueType")))
        except (KeyError, TypeError, ValueError) as e:
            raise MetadataTableError(f"{where}: not a column-stats record: {e!r}") from None

    def combine(self, newer: ColumnStats) -> ColumnStats:
        """This record merged with a newer one of the same key (`mergeColumnStatsRecords`)."""
        if newer.is_deleted or self.is_deleted or newer.is_tight_bound:
            return newer
        return ColumnStats(
            newer.file_name, newer.column_name, extreme(min, self.min_value, newer.min_value, newer.value_type),
            extreme(max, self.max_value, newer.max_value, newer.value_type), self.value_count + newer.value_count,
            self.null_count + newer.null_count, self.total_size + newer.total_size,
            self.total_uncompressed_size + newer.total_uncompressed_size, False, newer.is_tight_bound,
            newer.value_type)

    def datum(self) -> dict[str, Any]:
        """The `HoodieMetadataColumnStats` fields (a schema without `isTightBound` or `valueType`, of an older
        release, ignores them)."""
        return {"fileName": self.file_name, "columnName": self.column_name,
                "minValue": _wrapped(self.min_value), "maxValue": _wrapped(self.max_value),
                "valueCount": self.value_count, "nullCount": self.null_count, "totalSize": self.total_size,
                "totalUncompressedSize": self.total_uncompressed_size, "isDeleted": self.is_deleted,
                "isTightBound": self.is_tight_bound,
                "valueType": None if self.value_type is None else {"typeOrdinal": self.value_type[0],
                                                                   "additionalInfo": self.value_type[1]}}

    def tombstone(self) -> ColumnStats:
        """The record that deletes this file's stats of this column (Hudi's `HoodieColumnRangeMetadata.stub`)."""
        return ColumnStats(self.file_name, self.column_name, None, None, 0, 0, 0, 0, True, False, self.value_type)


@dataclass(frozen=True, slots=True)
class ColumnStatsRecord:
    """A column_stats record (type 3: one file's column) or partition_stats record (type 6: one partition's column,
    its `file_name` the partition path): its key and stats (`hudi_engine.metadata.records.MetadataRecord`)."""

    key: str
    stats: ColumnStats
    type: int = COLUMN_STATS_TYPE

    @staticmethod
    def of(partition_path: str, stats: ColumnStats) -> ColumnStatsRecord:
        return ColumnStatsRecord(column_stats_key(partition_path, stats.file_name, stats.column_name), stats)

    @staticmethod
    def of_partition(partition_path: str, stats: ColumnStats) -> ColumnStatsRecord:
        return ColumnStatsRecord(partition_stats_key(partition_path, stats.column_name), stats, PARTITION_STATS_TYPE)

    @property
    def is_deleted(self) -> bool:
        return self.stats.is_deleted

    def combine(self, newer: ColumnStatsRecord) -> ColumnStatsRecord:
        return ColumnStatsRecord(self.key, self.stats.combine(newer.stats), self.type)

    def datum(self) -> dict[str, Any]:
        return {"type": self.type, _FIELD: self.stats.datum()}

    @staticmethod
    def from_datum(key: str, datum: Mapping[str, Any], where: str, kind: int = COLUMN_STATS_TYPE
                   ) -> ColumnStatsRecord:
        """The record of type `kind` (3 or 6) a decoded cell holds; refused naming `where` for another type."""
        if datum.get("type") != kind or not datum.get(_FIELD):
            raise MetadataTableError(f"{where}: record {key!r} has type {datum.get('type')}; expected type {kind} "
                                     "with column stats")
        return ColumnStatsRecord(key, ColumnStats.from_avro(datum[_FIELD], f"{where}: record {key!r}"), kind)


def _stat_value(branch: Any) -> StatValue | None:
    if branch is None:
        return None
    name, record = branch  # (the wrapper's full name, its record)
    return StatValue(str(name).rsplit(".", 1)[-1], record["value"])


def _wrapped(value: StatValue | None) -> tuple[str, dict[str, Any]] | None:
    return None if value is None else (_NAMESPACE + value.wrapper, {"value": value.value})


def _value_type(info: Any) -> tuple[int, str | None] | None:
    return None if info is None else (int(info["typeOrdinal"]), info.get("additionalInfo"))


def extreme(pick: Any, a: StatValue | None, b: StatValue | None,
            value_type: tuple[int, str | None] | None) -> StatValue | None:
    """`pick` (min or max) of two values by their order (`StatValue.comparable`); None for none."""
    present = [v for v in (a, b) if v is not None]
    return pick(present, key=lambda v: v.comparable(value_type)) if present else None


@dataclass(frozen=True, slots=True)
class BloomFilterRecord:
    """A `bloom_filters` record (type 4): a base file's bloom filter of record keys as its parquet footer holds it
    (`HoodieMetadataBloomFilter`: the filter's type code, the instant that wrote the record, the serialized filter),
    or a cleaned file's tombstone. A newer record of a key replaces the older (`MetadataRecord`)."""

    key: str
    type_code: str
    timestamp: str
    bloom_filter: bytes
    is_deleted: bool = False

    def combine(self, newer: BloomFilterRecord) -> BloomFilterRecord:
        return newer

    def datum(self) -> dict[str, Any]:
        return {"type": BLOOM_FILTER_TYPE, "BloomFilterMetadata": {
            "type": self.type_code, "timestamp": self.timestamp, "bloomFilter": self.bloom_filter,
            "isDeleted": self.is_deleted}}

    @staticmethod
    def from_datum(key: str, datum: Mapping[str, Any], where: str) -> BloomFilterRecord:
        bloom = datum.get("BloomFilterMetadata")
        if datum.get("type") != BLOOM_FILTER_TYPE or not bloom:
            raise MetadataTableError(f"{where}: record {key!r} has type {datum.get('type')}; the bloom_filters "
                                     f"partition holds type {BLOOM_FILTER_TYPE} only")
        return BloomFilterRecord(key, str(bloom.get("type") or ""), str(bloom.get("timestamp") or ""),
                                 bytes(bloom.get("bloomFilter") or b""), bool(bloom.get("isDeleted")))
