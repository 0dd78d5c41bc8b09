"""The `record_index` partition of a metadata table (FORMAT.md, Metadata table): one record per live record key of
the data table, saying where it lives, as Hudi's global record index keeps it (`HoodieRecordIndexInfo`, type 5).

Records and keys:
* key = the data table's record key; file group = |Java `String.hashCode` of the key| mod the partition's file-group
  count (`record-index-000N-0`, `column_stats.file_group_index`), as `mapRecordKeyToFileGroupIndex` maps it;
* the location: the data partition (`partitionName`), the file id, stored as a UUID's two halves and the index
  after its last dash (`fileIdEncoding` 0, for ids `<uuid>-<n>` as Hudi makes them) or else as the raw string
  (`fileIdEncoding` 1), and `instantTime`: the epoch millis of the commit that put the key there, its instant time
  read in the table's timeline zone (`parseRecordIndexInstantTime`);
* a key that leaves the table is a delete: its key in a DELETE block of the log file (partition path
  `record_index`, ordering IntWrapper 0), never a data record. A newer record of a key replaces the older.

A commit's records (`records_for_commit`, Hudi 1.2's `convertMetadataToRecordIndexRecords` and
`getRecordIndexAdditionalUpserts`):
* a base file of a new file group (an insert, clustering): every key it holds, at its file group;
* a base file that rewrites a file group (a COW merge): the keys it holds and its previous base file did not (new
  there), and deletes for those its previous base file held and it does not (neither read when its write stat
  counts no insert and no delete: the same keys);
* a log file: the keys of its data blocks that the index does not already place in its file group (Hudi writes
  inserts to base files; a key revived or moved into the group), and deletes for the keys of its delete blocks that
  the index places there;
* insert_overwrite, insert_overwrite_table and delete_partition: deletes for the keys of the file groups they
  replace that the commit does not write again;
* a compaction: nothing (keys keep their file group);
* a key deleted in one place and written in another by the same commit (a global index's partition move) keeps
  the write.
Cleans record nothing; a rollback rolls the commit's delta commit back (`writer`).

Hudi 1.1's partitioned record index (`hoodie.metadata.record.level.index.enable`, index.json `isPartitioned=true`;
`partitioned_records_for_commit`): the same records, computed per data partition (a key may live in two partitions,
so a write and a delete of one key in two partitions both stand), kept in per-partition file groups
(`partitioned_file_id`: `record-index-<escaped partition>-000N-0`); a key's file group is its hash mod the count of
its partition's groups (`writer.MetadataWriter._partitioned_groups`).

Keys are handled as arrow columns (`IndexRecords`), never one Python object per key: a base file's keys are diffed
against its previous base file's by one dictionary encoding of both (`_diff`), and a file whose write stat carries
the keys its write handle added and removed (`WriteStat.record_keys`, reported on a table that keeps a record index)
is not read at all (Spark tasks send them beside their stats, up to `spark.write_udfs.REPORTED_KEYS_MAX` a file).
The file diff stays for stats without them (a user payload's merge, a Spark task's file of more keys, a table
service run on Spark). Lookups return arrow columns too (`cell_locations`, `MetadataTable.record_locations`): a
cell value is decoded once however many keys share it.
"""
from __future__ import annotations

import functools
import json
import math
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import MetadataTableError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_naming import is_log_file_name
from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.io.base_file import RECORD_KEY_COLUMN, read_record_keys
from hudi_engine.io.log_block import BlockType, data_block_records, delete_block_keys
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import file_group_indexes
from hudi_engine.partition_path import escape_path_name, unescape_path_name
from hudi_engine.payload import payload_for
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata
from hudi_engine.timeline.instant import instant_to_datetime

RECORD_INDEX_PARTITION = "record_index"  # MetadataPartitionType.RECORD_INDEX's partition of the metadata table
RECORD_INDEX_TYPE = 5  # HoodieMetadataPayload.METADATA_TYPE_RECORD_INDEX
FILE_ID_PREFIX = "record-index"  # its file groups: record-index-000N-0
_FIELD = "recordIndexMetadata"
UUID_ENCODING, RAW_ENCODING = 0, 1  # fileIdEncoding
_MISSING_FILE_INDEX = -1  # a UUID file id without a `-<n>` suffix
_UUID_FILE_ID = re.compile(r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?:-(\d+))?$")
# Hudi's record-index sizing (HoodieMetadataConfig, 1.2 names; the 0.x names are their alternatives)
AVERAGE_RECORD_SIZE = 48  # HoodieTableMetadataUtil.RECORD_INDEX_AVERAGE_RECORD_SIZE (bytes per entry)
# Operations whose replaced file groups lose their keys (Hudi's getRecordIndexAdditionalUpserts).
_REPLACING = ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE", "DELETE_PARTITION")
_NO_KEYS_MOVE = ("COMPACT", "LOG_COMPACT")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A partitioned record index's file groups: record-index-<escaped data partition>-000N-0 (N counted per partition)
_PARTITIONED_FILE_ID = re.compile(r"^record-index-(.*)-(\d{4,})-0$")


def partitioned_file_id(partition: str, index: int) -> str:
    """File group `index` of data partition `partition` in a partitioned record index: the partition escaped as
    Hudi escapes partition values (`=` is `%3D`, `/` is `%2F`), as Java 1.2 names them."""
    return f"{FILE_ID_PREFIX}-{escape_path_name(partition) if partition else ''}-{index:04d}-0"


def data_partition_of(file_id: str) -> str | None:
    """The data partition a partitioned record index's file group serves; None for a global one's
    (`record-index-000N-0`)."""
    match = _PARTITIONED_FILE_ID.match(file_id)
    return None if match is None else unescape_path_name(match.group(1))


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@functools.lru_cache(maxsize=4096)
def _file_id_fields(file_id: str) -> dict[str, Any]:
    """How a file id is stored: a `<uuid>-<n>` id as the UUID's halves and n (encoding 0), else raw (encoding 1);
    cached, as a commit's keys share a few file groups."""
    match = _UUID_FILE_ID.match(file_id)
    if match is None:
        return {"fileIdHighBits": None, "fileIdLowBits": None, "fileIndex": None, "fileId": file_id,
                "fileIdEncoding": RAW_ENCODING}
    value = uuid.UUID(match.group(1)).int
    return {"fileIdHighBits": _signed64(value >> 64), "fileIdLowBits": _signed64(value & (1 << 64) - 1),
            "fileIndex": int(match.group(2)) if match.group(2) is not None else _MISSING_FILE_INDEX,
            "fileId": "", "fileIdEncoding": UUID_ENCODING}


@dataclass(frozen=True, slots=True)
class RecordIndexRecord:
    """A record_index record: where record key `key` lives (`MetadataRecord`), or, `is_deleted`, that it is gone
    (written as a delete-block key)."""

    key: str
    partition: str
    file_id: str
    instant_millis: int
    is_deleted: bool = False

    def combine(self, newer: RecordIndexRecord) -> RecordIndexRecord:
        return newer

    @staticmethod
    def delete(key: str) -> RecordIndexRecord:
        return RecordIndexRecord(key, "", "", 0, True)

    def datum(self) -> dict[str, Any]:
        info = {**_file_id_fields(self.file_id), "partitionName": self.partition, "instantTime": self.instant_millis,
                "position": None}
        return {"type": RECORD_INDEX_TYPE, _FIELD: info}

    @staticmethod
    def fast_encoder(schema_json: str, encode: Callable[[Any], bytes]) -> Callable[[Any], bytes] | None:
        """Avro bytes of records like this one with `schema_json`, written directly (fastavro per record costs most
        of a large commit's time): the bytes before and after `recordIndexMetadata` are the same for every record,
        and its fields are nullable strings, longs and ints. None when the schema is not of that shape or the result
        differs from `encode`'s (fastavro's) on samples."""
        return _fast_encoder(schema_json, encode)

    @staticmethod
    def from_datum(key: str, datum: Mapping[str, Any], where: str) -> RecordIndexRecord:
        info = datum.get(_FIELD)
        if datum.get("type") != RECORD_INDEX_TYPE or not info:
            raise MetadataTableError(f"{where}: record {key!r} has type {datum.get('type')}; the {RECORD_INDEX_PARTITION} "
                                     f"partition holds type {RECORD_INDEX_TYPE} only")
        encoding = info.get("fileIdEncoding") or UUID_ENCODING
        if encoding == RAW_ENCODING:
            file_id = str(info.get("fileId") or "")
        elif encoding == UUID_ENCODING:
            high, low, index = info.get("fileIdHighBits"), info.get("fileIdLowBits"), info.get("fileIndex")
            if high is None or low is None:
                raise MetadataTableError(f"{where}: record {key!r}: fileIdEncoding 0 without fileIdHighBits/LowBits")
            text = str(uuid.UUID(int=((high & (1 << 64) - 1) << 64) | (low & (1 << 64) - 1)))
            file_id = text if index is None or index == _MISSING_FILE_INDEX else f"{text}-{index}"
        else:
            raise MetadataTableError(f"{where}: record {key!r} has fileIdEncoding {encoding}; Hudi writes 0 and 1")
        return RecordIndexRecord(key, str(info.get("partitionName") or ""), file_id, int(info.get("instantTime") or 0))


LOCATION_COLUMNS = ("key", "partition", "file_id")  # where the index places keys (`MetadataTable.record_locations`)


def no_locations() -> pa.Table:
    """An empty table of `LOCATION_COLUMNS`."""
    return pa.table({c: pa.array([], pa.string()) for c in LOCATION_COLUMNS})


def cell_locations(cells: pa.Table, decode: Callable[[bytes, bytes], Mapping[str, Any]], where: str) -> pa.Table:
    """The locations (`LOCATION_COLUMNS`) record_index cells (`hfile.CELL_COLUMNS`) hold, with `decode(key, value)`
    the value's datum. Each distinct value is decoded once: Hudi's HFile writers leave the key out of the value, so
    the records of one file group and commit share their bytes."""
    keys = cells.column(0).combine_chunks() if cells.num_rows else pa.array([], pa.binary())
    values = pc.dictionary_encode(cells.column(1).combine_chunks()) if cells.num_rows else None
    if values is None or not len(values.dictionary):
        return no_locations()
    codes = values.indices.to_numpy(zero_copy_only=False)
    _, first = np.unique(codes, return_index=True)  # a key of each distinct value, for errors
    found = [RecordIndexRecord.from_datum(k.decode("utf-8", "replace"), decode(k, v), where)
             for k, v in zip(keys.take(pa.array(first)).to_pylist(), values.dictionary.to_pylist(), strict=True)]
    return pa.table([keys.cast(pa.string()), pa.array([r.partition for r in found], pa.string()).take(values.indices),
                     pa.array([r.file_id for r in found], pa.string()).take(values.indices)], names=LOCATION_COLUMNS)


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _fast_encoder(schema_json: str, encode: Callable[[Any], bytes]) -> Callable[[Any], bytes] | None:
    schema = json.loads(schema_json)
    field = next((f for f in schema.get("fields", []) if f.get("name") == _FIELD), None)
    if field is None or not isinstance(field["type"], list) or field["type"][0] != "null" or len(field["type"]) != 2:
        return None
    writers: list[tuple[str, str, bool]] = []  # (field, avro type, nullable)
    for f in field["type"][1].get("fields", []):
        t = f["type"]
        nullable = isinstance(t, list)
        if nullable and (len(t) != 2 or t[0] != "null"):
            return None
        base = t[1] if nullable else t
        base = base.get("type") if isinstance(base, dict) else base
        if base not in ("string", "long", "int"):
            return None
        writers.append((f["name"], base, nullable))

    def info_bytes(info: Mapping[str, Any]) -> bytes:
        out = []
        for name, kind, nullable in writers:
            value = info.get(name)
            if value is None:
                if not nullable:
                    raise ValueError(name)
                out.append(b"\x00")
                continue
            if nullable:
                out.append(b"\x02")
            if kind == "string":
                raw = str(value).encode("utf-8")
                out.append(_zigzag(len(raw)) + raw)
            else:
                out.append(_zigzag(int(value)))
        return b"".join(out)

    samples = [RecordIndexRecord("k", "p=1", "25790a4d-0f6b-4a21-bb7e-4cd62f5cbe2f-0", 1772922289244),
               RecordIndexRecord("k", "", "not-a-uuid-file-id", -5)]
    try:
        none_bytes = encode(_NoIndexInfo())
        full = encode(samples[0])
        at = next(i for i, (a, b) in enumerate(zip(none_bytes, full, strict=False)) if a != b)
        prefix, suffix = none_bytes[:at], none_bytes[at + 1:]
        if none_bytes[at] != 0 or full[at] != 2:
            return None

        @functools.lru_cache(maxsize=65536)
        def value(partition: str, file_id: str, millis: int) -> bytes:
            # the key is not in the value: records of one file group and commit have the same bytes
            return prefix + b"\x02" + info_bytes(RecordIndexRecord("", partition, file_id, millis).datum()[_FIELD]) \
                + suffix

        def fast(record: Any) -> bytes:
            return value(record.partition, record.file_id, record.instant_millis)

        if any(fast(r) != encode(r) for r in samples):
            return None
    except (StopIteration, ValueError, TypeError, MetadataTableError):
        return None
    return fast


@dataclass(frozen=True, slots=True)
class _NoIndexInfo:
    """A record index record without its info (the bytes around it, for `_fast_encoder`)."""

    key: str = "k"
    is_deleted: bool = False

    def combine(self, newer: Any) -> Any:
        return newer

    def datum(self) -> dict[str, Any]:
        return {"type": RECORD_INDEX_TYPE, _FIELD: None}


def instant_millis(instant_time: str, local: bool) -> int:
    """The epoch millis Hudi stores for an instant (`parseRecordIndexInstantTime`): the instant read in the
    timeline's zone (this machine's for a LOCAL table, as the engine makes its instants, else UTC)."""
    naive = instant_to_datetime(instant_time).replace(tzinfo=None)  # the wall-clock digits
    zoned = naive.astimezone() if local else naive.replace(tzinfo=UTC)  # astimezone() on naive: this machine's zone
    return (zoned - _EPOCH) // timedelta(milliseconds=1)


def file_group_count(records: int, *, min_count: int, max_count: int, max_file_group_size: int,
                     growth_factor: float) -> int:
    """How many file groups Hudi gives a new record index of `records` entries (`estimateFileGroupCount`): the
    entries (grown by `growth_factor`) at 48 bytes each over the maximum file group size, within min and max."""
    wanted = math.ceil(records * growth_factor * AVERAGE_RECORD_SIZE / max_file_group_size) if records else 0
    return max(min_count, min(max_count, wanted))


# ---- a batch of records as columns ---------------------------------------------------------------------------------

_NO_KEYS = pa.array([], pa.string())


@dataclass(frozen=True)
class IndexRecords:
    """Record_index records as columns: `keys` (unique, in UTF-8 byte order, as HFile cells go) and per key the
    index into `locations` ((partition, file id, instant millis)) of where it lives, or -1: deleted. A record's value
    bytes do not hold its key, so the keys of one location share one encoding (`values`)."""

    keys: pa.StringArray
    location: np.ndarray  # int32, one per key
    locations: tuple[tuple[str, str, int], ...]

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[RecordIndexRecord]:
        for key, at in zip(self.keys.to_pylist(), self.location.tolist(), strict=True):
            yield RecordIndexRecord.delete(key) if at < 0 else RecordIndexRecord(key, *self.locations[at])

    @staticmethod
    def of(records: Iterable[RecordIndexRecord]) -> IndexRecords:
        """Records given one by one (a newer record of a key replaces the older)."""
        keys: list[str] = []
        at: list[int] = []
        index: dict[tuple[str, str, int], int] = {}
        for r in records:
            keys.append(r.key)
            at.append(-1 if r.is_deleted else index.setdefault((r.partition, r.file_id, r.instant_millis), len(index)))
        return _last_per_key(pa.array(keys, pa.string()), np.asarray(at, dtype=np.int32), tuple(index))

    def filter(self, mask: np.ndarray) -> IndexRecords:
        return IndexRecords(self.keys.filter(pa.array(mask)), self.location[mask], self.locations)

    @property
    def deleted(self) -> np.ndarray:
        return self.location < 0

    def values(self, encode: Callable[[RecordIndexRecord], bytes]) -> pa.BinaryArray:
        """The value bytes of the kept (not deleted) records, in key order: each location encoded once."""
        kept = self.location[self.location >= 0]
        encoded = pa.array([encode(RecordIndexRecord("", *loc)) for loc in self.locations], pa.binary())
        return encoded.take(pa.array(kept, pa.int32()))

    def file_groups(self, count: int) -> np.ndarray:
        """The record-index file group of each key (`key_file_groups`)."""
        return key_file_groups(self.keys, count)


def _strings(keys: pa.Array | pa.ChunkedArray) -> pa.StringArray:
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if keys.type != pa.string():
        keys = keys.cast(pa.string())
    return pc.drop_null(keys) if keys.null_count else keys


def _in_byte_order(keys: pa.StringArray, location: np.ndarray, locations: tuple[tuple[str, str, int], ...]
                   ) -> IndexRecords:
    order = pc.sort_indices(keys)  # Arrow orders strings by their bytes
    return IndexRecords(keys.take(order), location[order.to_numpy()], locations)


def _last_per_key(keys: pa.StringArray, location: np.ndarray, locations: tuple[tuple[str, str, int], ...]
                  ) -> IndexRecords:
    """One record per key, the last given of each, in key order."""
    if len(keys) and len(pc.unique(keys)) != len(keys):
        backwards = pa.array(np.arange(len(keys) - 1, -1, -1))
        reversed_keys = keys.take(backwards)
        first = pc.index_in(pc.unique(reversed_keys), value_set=reversed_keys).to_numpy()  # last, counted backwards
        picked = len(keys) - 1 - first
        keys, location = keys.take(pa.array(picked)), location[picked]
    return _in_byte_order(keys, location, locations)


def key_file_groups(keys: pa.StringArray, count: int) -> np.ndarray:
    """`column_stats.file_group_index` of each key (Java `String.hashCode` mod `count`): numpy over the UTF-8 bytes
    when every key is ASCII (a byte is then a UTF-16 unit), else `file_group_indexes` over the strings."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if keys.null_count or not pc.all(pc.string_is_ascii(keys)).as_py():
        return file_group_indexes(keys.to_pylist(), count)
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int32, count=n + 1, offset=keys.offset * 4)
    data = np.frombuffer(keys.buffers()[2], dtype=np.uint8) if keys.buffers()[2] is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
    h = np.zeros(n, dtype=np.uint64)
    live = np.arange(n)
    for j in range(int(lengths.max(initial=0))):
        live = live[lengths[live] > j]
        h[live] = (h[live] * np.uint64(31) + data[starts[live] + j].astype(np.uint64)) & np.uint64(0xFFFFFFFF)
    signed = h.astype(np.int64)
    signed = np.where(signed >= 1 << 31, signed - (1 << 32), signed)
    magnitude = np.where(signed == -(1 << 31), signed, np.abs(signed))  # Java's Math.abs(MIN_VALUE) stays negative
    return np.abs(np.fmod(magnitude, count))  # Java's % truncates toward zero


def _not_in(keys: pa.StringArray, others: pa.Array) -> pa.StringArray:
    return keys.filter(pc.invert(pc.is_in(keys, value_set=others)))


def _diff(keys: pa.StringArray, previous: pa.StringArray) -> tuple[pa.StringArray, pa.StringArray]:
    """The keys of `keys` not in `previous`, and those of `previous` not in `keys`: both arrays dictionary-encoded
    at once (one hash of each key, not two `is_in`), then compared by their codes."""
    if not len(previous) or not len(keys):
        return keys, previous
    codes = pc.dictionary_encode(pa.concat_arrays([keys, previous]))
    both = codes.indices.to_numpy()
    now, before = both[:len(keys)], both[len(keys):]
    held = np.zeros(len(codes.dictionary), dtype=bool)
    held[before] = True
    added = keys.filter(pa.array(~held[now]))
    held[:] = False
    held[now] = True
    return added, previous.filter(pa.array(~held[before]))


# ---- the keys a data file holds ------------------------------------------------------------------------------------


def base_file_keys(location: TableLocation, partition: str, file_name: str) -> pa.StringArray:
    """The record keys a base file holds (`_hoodie_record_key`), nulls dropped."""
    path = location.join(f"{partition}/{file_name}" if partition else file_name)
    return _strings(read_record_keys(location.storage, path))


def log_file_keys(location: TableLocation, partition: str, file_name: str) -> tuple[pa.StringArray, pa.StringArray]:
    """The keys a log file's data blocks write and those its delete blocks delete (each unique)."""
    path = location.join(f"{partition}/{file_name}" if partition else file_name)
    with location.storage.open_input_file(path) as f:
        blocks = read_log_blocks(f, file_name=path)
    written: list[pa.Array] = [_NO_KEYS]
    deleted: list[pa.Array] = [_NO_KEYS]
    for b in blocks:
        if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.HFILE_DATA):
            records = data_block_records(b)
            if RECORD_KEY_COLUMN not in records.column_names:
                raise MetadataTableError(f"{path}: a data block at offset {b.offset} without {RECORD_KEY_COLUMN}; "
                                         "the record index is kept for tables with meta fields only")
            written.append(_strings(records.column(RECORD_KEY_COLUMN)))
        elif b.block_type == BlockType.DELETE:
            deleted.append(_strings(delete_block_keys(b).column("record_key")))
    return (pc.unique(_strings(pa.concat_arrays(written))),
            pc.unique(_strings(pa.concat_arrays(deleted))))


# ---- a commit's records ----------------------------------------------------------------------------------------------


class _Batch:
    """A commit's written keys (in order: a later write of a key wins) and deleted keys, as arrow pieces."""

    def __init__(self) -> None:
        self.written: list[pa.Array] = []
        self.at: list[np.ndarray] = []
        self.deleted: list[pa.Array] = []
        self.locations: dict[tuple[str, str, int], int] = {}

    def write(self, keys: pa.Array, partition: str, file_id: str, millis: int) -> None:
        if len(keys):
            self.written.append(keys)
            self.at.append(np.full(len(keys), self.locations.setdefault((partition, file_id, millis),
                                                                        len(self.locations)), dtype=np.int32))

    def delete(self, keys: pa.Array) -> None:
        if len(keys):
            self.deleted.append(keys)

    def records(self) -> IndexRecords:
        written = _strings(pa.concat_arrays([_NO_KEYS, *self.written]))
        at = np.concatenate([np.zeros(0, np.int32), *self.at])
        deleted = _strings(pa.concat_arrays([_NO_KEYS, *self.deleted]))
        # a key deleted in one place and written in another keeps the write
        deleted = _not_in(pc.unique(deleted), written)
        keys = pa.concat_arrays([written, deleted])
        return _last_per_key(keys, np.concatenate([at, np.full(len(deleted), -1, np.int32)]),
                             tuple(self.locations))


def records_for_commit(location: TableLocation, commit: CommitMetadata, instant_time: str, local: bool,
                       listing: Callable[[str], Mapping[str, int]],
                       replaced_keys: Callable[[str, str], pa.Array | Iterable[str]],
                       read_index: Callable[[pa.StringArray], pa.Table]) -> IndexRecords:
    """The record_index records of a data commit at `instant_time` (module doc), by key. `listing(partition)`: the
    partition's files before the commit (to find a rewritten file group's previous base file); `replaced_keys(
    partition, file_id)`: the live keys of a file group the commit replaces; `read_index(keys)`: where the index
    places those keys now (`LOCATION_COLUMNS`). Keys are diffed as arrow columns (`pyarrow.compute.is_in`), never one by one."""
    batches = _commit_batches(location, commit, instant_time, local, listing, replaced_keys,
                              lambda _partition, keys: read_index(keys), partitioned=False)
    return batches.get("", _Batch()).records()


def partitioned_records_for_commit(location: TableLocation, commit: CommitMetadata, instant_time: str, local: bool,
                                   listing: Callable[[str], Mapping[str, int]],
                                   replaced_keys: Callable[[str, str], pa.Array | Iterable[str]],
                                   read_index: Callable[[str, pa.StringArray], pa.Table]
                                   ) -> dict[str, IndexRecords]:
    """`records_for_commit` for a partitioned record index (module doc), by data partition: a key is written and
    deleted within the data partition of the file that holds it (the same key may live in two partitions), and
    `read_index(partition, keys)` reads the index of one partition."""
    batches = _commit_batches(location, commit, instant_time, local, listing, replaced_keys, read_index,
                              partitioned=True)
    return {partition: batch.records() for partition, batch in sorted(batches.items())}


def _commit_batches(location: TableLocation, commit: CommitMetadata, instant_time: str, local: bool,
                    listing: Callable[[str], Mapping[str, int]],
                    replaced_keys: Callable[[str, str], pa.Array | Iterable[str]],
                    read_index: Callable[[str, pa.StringArray], pa.Table], *, partitioned: bool
                    ) -> dict[str, _Batch]:
    """A commit's keys as batches: one ("") for a global index, one per data partition for a partitioned one."""
    operation = commit.operation_type or ""
    batches: dict[str, _Batch] = {}

    def batch_of(partition: str) -> _Batch:
        return batches.setdefault(partition if partitioned else "", _Batch())

    if operation in _NO_KEYS_MOVE:
        return batches
    millis = instant_millis(instant_time, local)
    logged: list[tuple[str, str, pa.StringArray, pa.StringArray]] = []
    for partition, stats in commit.partition_to_write_stats.items():
        batch = batch_of(partition)
        for stat in stats:
            if stat.path is None or stat.file_id is None:
                continue
            name = stat.path.rsplit("/", 1)[-1]
            reported = stat.record_keys  # the keys as the handle that wrote the file knew them: nothing to read
            if is_log_file_name(name):
                if ".cdc" in name:
                    continue
                if reported is not None and reported.resolved:  # checked against the index as the write tagged
                    batch.write(_strings(reported.added), partition, stat.file_id, millis)
                    batch.delete(_strings(reported.removed))
                    continue
                data_keys, delete_keys = log_file_keys(location, partition, name) if reported is None else (
                    pc.unique(_strings(reported.added)), pc.unique(_strings(reported.removed)))
                logged.append((partition, stat.file_id, data_keys, delete_keys))
                continue
            rewrite = bool(stat.prev_commit and stat.prev_commit != NULL_COMMIT)
            if rewrite and stat.num_inserts == 0 and stat.num_deletes == 0:
                continue  # a merge that only updated: the same keys in the same file group, nothing to read
            if reported is not None:
                batch.write(_strings(reported.added), partition, stat.file_id, millis)
                batch.delete(_strings(reported.removed))
                continue
            keys = base_file_keys(location, partition, name)
            previous = _NO_KEYS
            if rewrite:
                assert stat.prev_commit is not None
                prev = _previous_base_file(listing(partition), stat.file_id, stat.prev_commit, name)
                if prev is not None:
                    previous = base_file_keys(location, partition, prev)
            added, removed = _diff(keys, previous)
            batch.write(added, partition, stat.file_id, millis)
            batch.delete(removed)
    # a global index is read once for all logged keys; a partitioned one once per data partition
    by_index: dict[str, list[tuple[str, str, pa.StringArray, pa.StringArray]]] = {}
    for entry in logged:
        by_index.setdefault(entry[0] if partitioned else "", []).append(entry)
    for scope, entries in sorted(by_index.items()):
        asked = pc.unique(pa.concat_arrays([k for _, _, d, x in entries for k in (d, x)]))
        known = read_index(scope, asked)
        for partition, file_id, data_keys, delete_keys in entries:
            here = known.filter(pc.and_(pc.equal(known.column("partition"), partition),
                                        pc.equal(known.column("file_id"), file_id))).column("key")
            batch = batch_of(partition)
            batch.write(_not_in(data_keys, here), partition, file_id, millis)
            gone = _not_in(delete_keys, data_keys)
            batch.delete(gone.filter(pc.is_in(gone, value_set=here)))
    if operation in _REPLACING:
        for partition, file_ids in (commit.partition_to_replace_file_ids or {}).items():
            for file_id in file_ids:
                replaced = replaced_keys(partition, file_id)
                batch_of(partition).delete(
                    replaced if isinstance(replaced, pa.Array) else pa.array(list(replaced), pa.string()))
    return batches


def _previous_base_file(files: Mapping[str, int], file_id: str, prev_commit: str, written: str) -> str | None:
    """The base file of `file_id` written at `prev_commit` (the slice a merge rewrote), from a partition listing."""
    suffix_ext = "." + written.rsplit(".", 1)[-1]
    for name in files:
        if name.startswith(file_id + "_") and name.endswith(f"_{prev_commit}{suffix_ext}") and name != written:
            return name
    return None


def initial_records(slice_keys: Iterable[tuple[str, str, str, pa.Array | Iterable[str]]], local: bool
                    ) -> IndexRecords:
    """The records of a new record index: per latest file slice (partition, file id, the instant that wrote it, its
    live keys) every key at that file group (`readRecordKeysFromFileSliceSnapshot`). Refused when a key is in two
    file groups."""
    batch = _Batch()
    for partition, file_id, instant, keys in slice_keys:
        keys = keys if isinstance(keys, pa.Array | pa.ChunkedArray) else pa.array(list(keys), pa.string())
        batch.write(_strings(keys), partition, file_id, instant_millis(instant, local))
    keys = _strings(pa.concat_arrays([_NO_KEYS, *batch.written]))
    at = np.concatenate([np.zeros(0, np.int32), *batch.at])
    if len(pc.unique(keys)) != len(keys):
        counts = pc.value_counts(keys)
        twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1))[0].as_py()
        places = list(batch.locations)
        (p1, f1, _), (p2, f2, _) = (places[i] for i in at[pc.equal(keys, twice).to_numpy(zero_copy_only=False)][:2])
        raise MetadataTableError(f"record key {twice!r} is in two file groups ({p1}/{f1} and {p2}/{f2}); a global "
                                 "record index needs keys unique across the table")
    return _in_byte_order(keys, at, tuple(batch.locations))


def keys_table(records: pa.StringArray | Iterable[RecordIndexRecord]) -> pa.Table:
    """Deleted keys (or records) as a delete block's rows (partition path `record_index`, no ordering value:
    IntWrapper 0)."""
    keys = records if isinstance(records, pa.Array) else pa.array([r.key for r in records], pa.string())
    return pa.table({"record_key": keys,
                     "partition_path": pa.array([RECORD_INDEX_PARTITION] * len(keys), pa.string())})


def _key_context(location: TableLocation, vis: Visibility) -> SliceReadContext:
    schema = pa.schema([(RECORD_KEY_COLUMN, pa.string())])
    return SliceReadContext(location.storage, schema, lambda t: t.column(RECORD_KEY_COLUMN), (RECORD_KEY_COLUMN,),
                            None, payload_for(None), vis)


def _live_keys(ctx: SliceReadContext, file_slice: FileSlice) -> pa.StringArray:
    return _strings(read_file_slice(ctx, file_slice, columns=[RECORD_KEY_COLUMN]).column(0))


def latest_slice_keys(location: TableLocation, data_timeline: Timeline
                      ) -> Iterator[tuple[str, str, str, pa.StringArray]]:
    """Per latest file slice of the data table at `location` (as `data_timeline` sees it): its partition, file id,
    the instant of its base file (or first log file) and its live keys, log blocks merged newest-wins as the
    engine's tagging merges them (a delete removes a key)."""
    vis = Visibility.of(data_timeline)
    view = FileSystemView.load(location, slicing=vis.slicing)
    ctx = _key_context(location, vis)
    for partition in view.partition_paths:
        for s in view.latest_file_slices(vis, partition):
            instant = s.base_file.name.instant_time if s.base_file is not None else s.base_instant
            yield partition, s.file_id, instant, _live_keys(ctx, s)


def slice_keys(location: TableLocation, data_timeline: Timeline, partition: str, file_id: str) -> pa.StringArray:
    """The live keys of one file group's latest slice (none when it has no slice)."""
    vis = Visibility.of(data_timeline)
    view = FileSystemView.for_partitions(location, [partition], vis.slicing)
    ctx = _key_context(location, vis)
    return pc.unique(pa.concat_arrays([_NO_KEYS, *(_live_keys(ctx, s) for s in view.latest_file_slices(vis, partition)
                                                   if s.file_id == file_id)]))
