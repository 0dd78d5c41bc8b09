"""Records of the metadata table's `files` partition (FORMAT.md, Metadata table): Hudi's `HoodieMetadataRecord`
with `type` 1 (the partition list, key `__all_partitions__`) or 2 (one partition's files, keyed by the partition),
their Avro encoding, the merge `HoodieMetadataPayload` applies, and the records a data commit adds.

A record's `filesystemMetadata` maps a name (a file, or a partition in the partition list) to `{size, isDeleted}`.
Merging an older record with a newer one (`FilesRecord.combine`) unions the two maps: a name the newer record
deletes is dropped when the older one lists it alive (else the tombstone is kept, so a merge of logs before the base
file still deletes it there), a name both list alive keeps the larger size (file sizes only grow). A listing is the
names left alive.

In the HFiles (base files and HFile data blocks) a cell's key is the record key and its value the record's
schemaless Avro binary with the writer's schema (the block's SCHEMA header, the base file's `schema` file info). Hudi
writes the record's own `key` field empty (the cell key holds it) and its readers put the cell key back; so do we.
"""
from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import fastavro

from hudi_engine.errors import MetadataTableError
from hudi_engine.io.avro_codec import strip_logical_types
from hudi_engine.timeline.commit_metadata import CommitMetadata

FILES_PARTITION = "files"  # MetadataPartitionType.FILES's partition of the metadata table
PARTITION_LIST = 1  # HoodieMetadataPayload.METADATA_TYPE_PARTITION_LIST
FILE_LIST = 2  # HoodieMetadataPayload.METADATA_TYPE_FILE_LIST
ALL_PARTITIONS_KEY = "__all_partitions__"  # the key of the partition list
NON_PARTITIONED_NAME = "."  # the key of a non-partitioned table's one partition ("")
# Fields a files-partition record sets; every other field of the writer schema is left null.
_KEY, _TYPE, _FILES = "key", "type", "filesystemMetadata"


@dataclass(frozen=True, slots=True)
class FileInfo:
    """`HoodieMetadataFileInfo`: a file's size (0 for a partition in the partition list), or its deletion."""

    size: int
    is_deleted: bool = False


@dataclass(frozen=True, slots=True)
class FilesRecord:
    """One record of the `files` partition: the partition list or one partition's files."""

    key: str
    type: int
    files: Mapping[str, FileInfo] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.type not in (PARTITION_LIST, FILE_LIST):
            raise MetadataTableError(f"files-partition record {self.key!r}: type {self.type}; expected "
                                     f"{PARTITION_LIST} (partition list) or {FILE_LIST} (file list)")

    def combine(self, newer: FilesRecord) -> FilesRecord:
        """This record merged with a newer one of the same key (`HoodieMetadataPayload.preCombine`)."""
        if newer.key != self.key or newer.type != self.type:
            raise MetadataTableError(f"cannot merge files-partition record {self.key!r} (type {self.type}) with "
                                     f"{newer.key!r} (type {newer.type})")
        merged = dict(self.files)
        for name, info in newer.files.items():
            old = merged.get(name)
            if old is None:
                merged[name] = info
            elif info.is_deleted:
                if old.is_deleted:
                    merged[name] = info  # deleted twice: the tombstone stays
                else:
                    del merged[name]  # the older record listed it: both go
            else:
                merged[name] = FileInfo(max(old.size, info.size), False)
        return FilesRecord(self.key, self.type, merged)

    @property
    def live(self) -> dict[str, int]:
        """Names left alive, with their sizes."""
        return {name: info.size for name, info in self.files.items() if not info.is_deleted}

    @property
    def is_deleted(self) -> bool:
        """Never: a files-partition record is kept whole, its tombstones inside it."""
        return False

    def datum(self) -> dict[str, Any]:
        """The HoodieMetadataRecord fields this record sets (`RecordCodec.encode`)."""
        return {_TYPE: self.type, _FILES: {name: {"size": info.size, "isDeleted": info.is_deleted}
                                          for name, info in sorted(self.files.items())}}

    @staticmethod
    def from_datum(key: str, datum: Mapping[str, Any], where: str) -> FilesRecord:
        kind = datum.get(_TYPE)
        if kind not in (PARTITION_LIST, FILE_LIST):
            raise MetadataTableError(f"{where}: record {key!r} has type {kind}; the files partition holds types "
                                     f"{PARTITION_LIST} and {FILE_LIST} only")
        files = {str(name): FileInfo(int(info["size"]), bool(info["isDeleted"]))
                 for name, info in (datum.get(_FILES) or {}).items()}
        return FilesRecord(key, kind, files)


class MetadataRecord(Protocol):
    """A record of one metadata partition: its key, how a newer record of the key merges onto it, whether it is a
    tombstone (dropped by readers and compaction), and the HoodieMetadataRecord fields it sets."""

    @property
    def key(self) -> str: ...

    @property
    def is_deleted(self) -> bool: ...

    def combine(self, newer: Any) -> Any: ...

    def datum(self) -> dict[str, Any]: ...


def partition_key(partition_path: str) -> str:
    """The record key of a data-table partition (`HoodieTableMetadataUtil.getPartitionIdentifier`)."""
    return partition_path or NON_PARTITIONED_NAME


def partition_of_key(key: str) -> str:
    """The data-table partition path a record key or partition-list entry names."""
    return "" if key == NON_PARTITIONED_NAME else key


# --------------------------------------------------------------------------------------------- Avro


class RecordCodec:
    """Encodes and decodes files-partition records with one writer schema (`HoodieMetadataRecord` as the Hudi release
    that created the metadata table writes it). `source` names where the schema came from, for errors."""

    def __init__(self, schema: str | dict, source: str) -> None:
        self.source = source
        try:
            self.schema_json = schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))
            avro = json.loads(self.schema_json)
            self._parsed = fastavro.parse_schema(strip_logical_types(avro))
        except (ValueError, TypeError, fastavro.schema.SchemaParseException) as e:
            raise MetadataTableError(f"{source}: the metadata record schema does not parse: {e}") from None
        names = [f.get("name") for f in avro.get("fields", [])] if isinstance(avro, dict) else []
        missing = [n for n in (_KEY, _TYPE, _FILES) if n not in names]
        if avro.get("name") != "HoodieMetadataRecord" or missing:
            raise MetadataTableError(f"{source}: schema {avro.get('name')!r} is not Hudi's HoodieMetadataRecord "
                                     f"(missing fields {missing}); is this a metadata table?")
        # Fields we leave null must allow it: a union with null (every field but key and type is one in Hudi).
        for f in avro["fields"]:
            if f["name"] in (_KEY, _TYPE, _FILES):
                continue
            t = f["type"]
            if not (isinstance(t, list) and "null" in t):
                raise MetadataTableError(f"{source}: field {f['name']!r} of HoodieMetadataRecord is not nullable "
                                         "(a newer Hudi's record?); this engine writes only files-partition records")
        self._other = [f["name"] for f in avro["fields"] if f["name"] not in (_KEY, _TYPE, _FILES)]
        self._fast: dict[type, Callable[[Any], bytes] | None] = {}

    def encode(self, record: MetadataRecord) -> bytes:
        """The record's value bytes, its `key` field left empty as Hudi writes it (the cell key holds the key). A
        record type with a `fast_encoder(schema_json, encode)` (the record index's, written by the million) encodes
        itself, checked against this codec's own encoding when it is built."""
        kind = type(record)
        if kind not in self._fast:
            build = getattr(kind, "fast_encoder", None)
            self._fast[kind] = build(self.schema_json, self._encode) if build is not None else None
        fast = self._fast[kind]
        return fast(record) if fast is not None else self._encode(record)

    def _encode(self, record: MetadataRecord) -> bytes:
        """`encode` through fastavro.
        Union branches of several records are given as (full name, record) (fastavro's tuple notation)."""
        datum: dict[str, Any] = dict.fromkeys(self._other)
        datum.update(record.datum())
        datum[_KEY] = ""
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, self._parsed, datum)
        except (ValueError, TypeError, KeyError) as e:
            raise MetadataTableError(f"record {record.key!r} does not encode with the schema of {self.source}: "
                                     f"{e}") from None
        return out.getvalue()

    def decode_datum(self, key: bytes, value: bytes, where: str) -> dict[str, Any]:
        """The HoodieMetadataRecord a cell holds, union branches of several records as (full name, record)."""
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(value), self._parsed, None, return_record_name=True,
                                               return_record_name_override=True)
        except (EOFError, ValueError, TypeError, IndexError, KeyError) as e:
            raise MetadataTableError(f"{where}: record {key.decode('utf-8', 'replace')!r} does not decode with the "
                                     f"schema of {self.source}: {e}") from None
        assert isinstance(datum, dict)
        return datum

    def decode(self, key: bytes, value: bytes, where: str) -> FilesRecord:
        """The files-partition record a cell holds; `where` names the file (and block) for errors."""
        return FilesRecord.from_datum(key.decode("utf-8", "replace"), self.decode_datum(key, value, where), where)


# --------------------------------------------------------------------------------------------- a commit's records


def records_for_commit(metadata: CommitMetadata) -> list[FilesRecord]:
    """The records Hudi adds to the `files` partition for a data commit
    (`HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords`): the partition list naming every partition
    the commit wrote to (size 0), and per partition the files it wrote with their sizes (a file written twice keeps
    the larger size; CDC log files count too). Files a replacecommit replaces stay listed (they go when cleaned), as
    in Hudi. A DELETE_PARTITION commit marks the partitions it replaces deleted in the partition list (Hudi's
    `getPartitionsDeleted`); their files stay listed in their own records until cleaned. Sorted by key."""
    stats = metadata.partition_to_write_stats
    partitions: dict[str, FileInfo] = {partition_key(p): FileInfo(0) for p in stats}
    if metadata.operation_type == "DELETE_PARTITION":
        partitions.update({partition_key(p): FileInfo(0, True) for p in metadata.partition_to_replace_file_ids or {}})
    records = [FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, partitions)]
    for partition, partition_stats in stats.items():
        files: dict[str, FileInfo] = {}
        for stat in partition_stats:
            if stat.path is None:
                continue  # Hudi skips a stat without a path (an empty partition's)
            name = stat.path.rsplit("/", 1)[-1]
            size = max(stat.file_size_in_bytes, files[name].size if name in files else 0)
            files[name] = FileInfo(size)
            for cdc_path, cdc_size in (stat.cdc_stats or {}).items():
                files[cdc_path.rsplit("/", 1)[-1]] = FileInfo(int(cdc_size))
        records.append(FilesRecord(partition_key(partition), FILE_LIST, files))
    return sorted(records, key=lambda r: r.key.encode("utf-8"))


_R = TypeVar("_R", bound=MetadataRecord)


def merge_records(older: Iterable[_R], newer: Iterable[_R]) -> dict[str, _R]:
    """`older` (by key) with every record of `newer` merged on, in order."""
    out: dict[str, _R] = {}
    for record in (*older, *newer):
        prev = out.get(record.key)
        out[record.key] = record if prev is None else prev.combine(record)
    return out


def records_for_clean(clean: Mapping[str, Any]) -> list[FilesRecord]:
    """The records Hudi adds to the `files` partition for a clean (`HoodieCleanMetadata`,
    `HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords`): per partition, every file the plan deleted
    (`deletePathPatterns`, names) as a deletion. A clean that deletes a partition (`isPartitionDeleted`, which this
    engine's cleaner never sets) is refused. Sorted by key."""
    records = []
    for partition, pm in (clean.get("partitionMetadata") or {}).items():
        if pm.get("isPartitionDeleted"):
            raise MetadataTableError(f"a clean that deletes partition {partition!r}: its metadata-table records are "
                                     "not written by this engine")
        deleted = {str(p).rsplit("/", 1)[-1]: FileInfo(0, True) for p in pm.get("deletePathPatterns") or ()}
        records.append(FilesRecord(partition_key(partition), FILE_LIST, deleted))
    return sorted(records, key=lambda r: r.key.encode("utf-8"))


def records_for_rollback(rollback: Mapping[str, Any]) -> list[FilesRecord]:
    """The records Hudi 0.15 (table version 6) adds to the `files` partition for a rollback (`HoodieRollbackMetadata`,
    `HoodieTableMetadataUtil.convertMetadataToRollbackRecords`): per partition, the log files the rollback wrote its
    command blocks into (`rollbackLogFiles`, with their sizes). Files it deleted are not recorded: they were written
    by the rolled-back instant, whose own metadata delta commit is rolled back instead. Sorted by key."""
    records = []
    for partition, pm in (rollback.get("partitionMetadata") or {}).items():
        written = pm.get("rollbackLogFiles") or {}
        if written:
            files = {str(p).rsplit("/", 1)[-1]: FileInfo(int(size)) for p, size in written.items()}
            records.append(FilesRecord(partition_key(pm.get("partitionPath", partition)), FILE_LIST, files))
    return sorted(records, key=lambda r: r.key.encode("utf-8"))
