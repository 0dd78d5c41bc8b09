"""Tagging (Hudi's tagLocation): the existing file group each incoming record key lives in, computed batch by batch
in map tasks, before the records are shuffled to the tasks that write them.

SIMPLE and BLOOM (the same result; both read only what they must): a task reads the footers of the latest base
files of each partition its keys fall in, once per Python worker and write. A key goes to the one file whose
footer key range and bloom filter admit it; a key no file admits is new (bloom filters have no false negatives).
When two files admit one key (a bloom false positive beside the file that holds it, about 1e-9 per test, or files
without footer metadata), the candidates' key columns decide. The write task of a file group checks membership
again where it matters (MOR: a key must be in the base file to be logged as an update), so a false positive can
never turn an insert into an update.

BUCKET: the key's hash names its bucket; the partition's file group of that bucket number, if it exists.

RECORD_LEVEL_INDEX: the metadata table's partitioned record index (Hudi 1.1+): each partition's keys looked up in
that partition's file groups of the index (`MetadataTable.record_locations`); a key it does not hold is new.
"""
from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.config.write_config import IndexType, KeyConfig
from hudi_engine.errors import WriteError
from hudi_engine.file_group import FileSlice
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.io.base_file import read_base_file, read_footer, read_record_keys
from hudi_engine.io.bloom import BloomFilter
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write import index
from hudi_engine.write.bucket_assigner import SliceInfo

if TYPE_CHECKING:
    from hudi_engine.file_slice_reader import SliceReadContext
    from hudi_engine.metadata.table import MetadataTable


@dataclass(frozen=True)
class TagSpec:
    """What a map task needs to tag keys: the table, the timeline the driver planned with, and the index."""

    storage_uri: str
    base_path: str
    instant: str  # the write's instant: caches of one write never serve another
    visibility: Visibility | None  # None: a new table, every key is new
    keys: KeyConfig
    index_type: IndexType
    bucket_num: int
    bloom_max_entries: int
    populate_meta_fields: bool = True
    # File groups under a pending clustering: a key tagged there by its footer alone is checked against the file's
    # keys, so a bloom filter's false positive is not refused as an update (`PendingClustering.refuse_updates`).
    clustering: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class BaseFileIndex:
    """One latest base file of a partition as the index sees it."""

    file_id: str
    path: str
    min_key: str | None
    max_key: str | None
    bloom: BloomFilter | None


@dataclass(frozen=True)
class Tags:
    """Per key: the file id it lives in (null: new) and, for the BUCKET index, its bucket number."""

    file_ids: pa.Array
    bucket_numbers: pa.Array | None = None


class _Cache:
    """Per Python worker: partition listings and footers of the current write, bounded (least recently used go)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[tuple, object] = OrderedDict()

    def get(self, key: tuple, make):
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        value = make()
        self.entries[key] = value
        if len(self.entries) > self.capacity:
            self.entries.popitem(last=False)
        return value


_CACHE = _Cache()


def tag(spec: TagSpec, keys: pa.Array, partitions: pa.Array, skip: Callable[[str], bool] | None = None) -> Tags:
    """Tag `keys` (with their partition paths): where each lives in the table as the driver's timeline sees it.
    Keys of a partition `skip` names stay untagged (SIMPLE and BLOOM: their write task checks them itself)."""
    n = len(keys)
    file_ids = np.full(n, None, dtype=object)
    numbers = None
    if spec.visibility is None or n == 0:
        if spec.index_type is IndexType.BUCKET:
            numbers = index.bucket_ids(keys, spec.bucket_num, len(spec.keys.record_key_fields)).astype(np.int32)
        return Tags(pa.array(file_ids, pa.string()), None if numbers is None else pa.array(numbers))
    storage, _ = Storage.for_uri(spec.storage_uri)
    parts = pc.dictionary_encode(partitions)
    codes = parts.indices.to_numpy(zero_copy_only=False)
    if spec.index_type is IndexType.BUCKET:
        numbers = index.bucket_ids(keys, spec.bucket_num, len(spec.keys.record_key_fields))
        for code, partition in enumerate(parts.dictionary.to_pylist()):
            by_number = _bucket_files(spec, storage, partition)
            rows = np.flatnonzero(codes == code)
            if by_number:
                # bucket number -> file id through a lookup array (numbers are below bucket_num)
                lookup = np.full(max(spec.bucket_num, max(by_number) + 1), None, dtype=object)
                lookup[list(by_number)] = list(by_number.values())
                file_ids[rows] = lookup[numbers[rows]]
        return Tags(pa.array(file_ids, pa.string()), pa.array(numbers.astype(np.int32)))
    if spec.index_type is IndexType.RECORD_LEVEL_INDEX:  # each partition's keys in its file groups of the index
        mdt = _partitioned_index(spec, storage)
        for code, partition in enumerate(parts.dictionary.to_pylist()):
            if skip is not None and skip(partition):
                continue
            rows = np.flatnonzero(codes == code)
            wanted = keys.take(pa.array(rows))
            found = mdt.record_locations(wanted, partition)
            if found.num_rows:  # the found keys' file ids, placed by an arrow lookup of the wanted keys among them
                at = pc.index_in(wanted, value_set=found.column("key"))
                file_ids[rows] = found.column("file_id").take(at).to_numpy(zero_copy_only=False)
        return Tags(pa.array(file_ids, pa.string()))
    for code, partition in enumerate(parts.dictionary.to_pylist()):
        if skip is not None and skip(partition):
            continue
        files = _base_files(spec, storage, partition)
        if files:
            rows = np.flatnonzero(codes == code)
            file_ids[rows] = _locate(spec, storage, partition, keys.take(pa.array(rows)), files)
            for f in files:
                if (partition, f.file_id) in spec.clustering:
                    _confirm(spec, storage, keys, rows, file_ids, f)
        log_only = _log_only_keys(spec, storage, partition)
        if log_only:
            rows = np.flatnonzero(codes == code)
            wanted = keys.take(pa.array(rows))
            for file_id, stored in log_only:
                hit = rows[stored.held(wanted)]
                held = hit[~_untagged(file_ids[hit])]
                file_ids[hit[_untagged(file_ids[hit])]] = file_id
                for row in held:  # also in a base file: rare, see `_live_holder`
                    file_ids[row] = _live_holder(spec, storage, partition, keys[int(row)].as_py(),
                                                 [file_ids[row], file_id])
    return Tags(pa.array(file_ids, pa.string()))


def _untagged(file_ids: np.ndarray) -> np.ndarray:
    return np.fromiter((f is None for f in file_ids), dtype=bool, count=len(file_ids))


def _log_only_keys(spec: TagSpec, storage: Storage, partition: str) -> list[tuple[str, index.KeySet]]:
    """(file id, record keys) of the partition's file groups without a base file: Hudi 1.x writers with an index that
    sees log files (the record index, Flink's) put inserts into log files, and an update of such a key must go to its
    group. Their keys are read from the committed log blocks (meta-field tables: the key column)."""
    def load() -> list[tuple[str, index.KeySet]]:
        from hudi_engine.file_slice_reader import log_record_keys

        ctx = _key_context(spec, storage)
        return [(s.file_id, index.KeySet(log_record_keys(ctx, s))) for s in _latest_slices(spec, storage, partition)
                if s.base_file is None and s.log_files]

    if not spec.populate_meta_fields:
        # Without the key column the keys of log blocks would need the key generator: refuse rather than insert a
        # second copy of a key such a group holds.
        groups = [s.file_id for s in _latest_slices(spec, storage, partition) if s.base_file is None and s.log_files]
        if groups:
            raise WriteError(
                f"table {spec.base_path}: partition {partition!r} has file groups with log files and no base file "
                f"({', '.join(groups[:3])}) in a table without meta fields (hoodie.populate.meta.fields=false); this "
                "engine cannot find the record keys they hold, so an upsert could duplicate them. Compact the table "
                "with Hudi first (its compaction gives each group a base file), then write again.")
        return []
    return _CACHE.get(("log-only", spec.instant, spec.base_path, partition), load)


def _confirm(spec: TagSpec, storage: Storage, keys: pa.Array, rows: np.ndarray, file_ids: np.ndarray,
             f: BaseFileIndex) -> None:
    """Keys of `rows` tagged into `f` by its footer that `f` does not hold are new: untag them (the exact lookup
    Hudi's HoodieKeyLookupHandle makes, needed where a tag decides a refusal)."""
    mine = rows[file_ids[rows] == f.file_id]
    if len(mine) == 0:
        return
    held = _stored_keys(spec, storage, f.path).held(keys.take(pa.array(mine)))
    file_ids[mine[~held]] = None


def _locate(spec: TagSpec, storage: Storage, partition: str, keys: pa.Array, files: list[BaseFileIndex]) -> np.ndarray:
    """File id of each key among one partition's base files, None for a new key."""
    n = len(keys)
    order = pc.sort_indices(keys).to_numpy()
    sorted_keys = keys.take(pa.array(order))
    # Footer ranges are in Java's UTF-16 order, which is code point order for ASCII; other keys skip the range test.
    ascii_ = pc.equal(pc.utf8_length(sorted_keys), pc.binary_length(sorted_keys)).to_numpy(zero_copy_only=False)
    others = np.flatnonzero(~ascii_)
    view = _SortedView(sorted_keys)
    hits = np.zeros(n, dtype=np.int32)
    owner = np.full(n, -1, dtype=np.int64)
    for fi, f in enumerate(files):
        if f.min_key is None or f.max_key is None:
            window = np.arange(n)
        else:
            lo, hi = bisect.bisect_left(view, f.min_key), bisect.bisect_right(view, f.max_key)
            window = np.concatenate([np.arange(lo, hi), others[(others < lo) | (others >= hi)]])
        if len(window) and f.bloom is not None:
            window = window[np.asarray(f.bloom.might_contain_many(sorted_keys.take(pa.array(window))), dtype=bool)]
        hits[window] += 1
        owner[window] = fi
    result = np.full(n, None, dtype=object)
    single = np.flatnonzero(hits == 1)
    result[order[single]] = np.array([f.file_id for f in files], dtype=object)[owner[single]]
    ambiguous = np.flatnonzero(hits > 1)
    if len(ambiguous):
        result[order[ambiguous]] = _resolve(spec, storage, partition, sorted_keys.take(pa.array(ambiguous)), files)
    return result


def _resolve(spec: TagSpec, storage: Storage, partition: str, wanted: pa.Array,
             files: list[BaseFileIndex]) -> np.ndarray:
    """Keys several files admit: the key columns of the partition's files decide (rare, read once per worker)."""
    masks = []
    for f in files:
        masks.append(_stored_keys(spec, storage, f.path).held(wanted))
    found = np.full(len(wanted), None, dtype=object)
    for f, mask in reversed(list(zip(files, masks))):  # the first file holding a key wins
        found[mask] = f.file_id
    for row in np.flatnonzero(np.sum(masks, axis=0) > 1):  # a key held by two files: the live copy (`_live_holder`)
        held = [f.file_id for f, mask in zip(files, masks) if mask[row]]
        found[row] = _live_holder(spec, storage, partition, wanted[int(row)].as_py(), held)
    return found


def _live_holder(spec: TagSpec, storage: Storage, partition: str, key: str, candidates: list[str]) -> str:
    """The one of several file groups holding `key` whose latest slice still holds it live. On MOR a delete is a
    log block: the key stays in its base file, and a writer whose index knows it is gone (Java's record index)
    inserts it again into another group. Updating the dead copy would bring it back: the key twice. Several live
    copies (a table already broken) or none: the first candidate, as before."""
    if not spec.populate_meta_fields:
        return candidates[0]  # the key schema of a merged read needs the meta column; such tables keep the first
    by_id = {s.file_id: s for s in _latest_slices(spec, storage, partition)}
    for file_id in candidates:
        s = by_id.get(file_id)
        if s is not None and (not s.log_files or key in _live_keys(spec, storage, s)):
            return file_id
    return candidates[0]


def _live_keys(spec: TagSpec, storage: Storage, file_slice: FileSlice) -> frozenset[str]:
    """The keys a slice holds after merging its log blocks (read once per worker and write)."""
    def load() -> frozenset[str]:
        from hudi_engine.file_slice_reader import read_file_slice

        return frozenset(read_file_slice(_key_context(spec, storage), file_slice).column(0).to_pylist())

    return _CACHE.get(("live", spec.instant, spec.base_path, file_slice.partition_path, file_slice.file_id), load)


def _key_context(spec: TagSpec, storage: Storage) -> "SliceReadContext":
    """How tagging reads slices: the record key column alone, merged newest-wins (deletes remove a key)."""
    from hudi_engine.file_slice_reader import SliceReadContext
    from hudi_engine.payload import payload_for

    assert spec.visibility is not None
    schema = pa.schema([("_hoodie_record_key", pa.string())])
    return SliceReadContext(storage, schema, lambda t: t.column("_hoodie_record_key"), ("_hoodie_record_key",),
                            None, payload_for(None), spec.visibility)


def _stored_keys(spec: TagSpec, storage: Storage, path: str) -> index.KeySet:
    """The record keys of a base file (read once per worker and write: every map-side batch may probe them)."""
    return _CACHE.get(("keys", spec.instant, path), lambda: index.KeySet(_read_keys(spec, storage, path)))


def _read_keys(spec: TagSpec, storage: Storage, path: str) -> pa.Array:
    if spec.populate_meta_fields:
        return read_record_keys(storage, path)
    keygen = spec.keys.key_generator()
    return keygen.record_keys(read_base_file(storage, path, columns=list(spec.keys.record_key_fields)))


class _SortedView:
    """A sorted string array as a sequence of Python strings, for `bisect` (log n element reads)."""

    def __init__(self, values: pa.Array) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> str:
        return self.values[i].as_py()


def _latest_slices(spec: TagSpec, storage: Storage, partition: str) -> list[FileSlice]:
    def load() -> list[FileSlice]:
        assert spec.visibility is not None
        view = FileSystemView.for_partitions(TableLocation.at(storage, spec.base_path), [partition])
        return view.latest_file_slices(spec.visibility)

    return _CACHE.get(("listing", spec.instant, spec.base_path, partition), load)


def slices(spec: TagSpec, partition: str) -> list[SliceInfo]:
    """The latest slices of `partition` as the driver's timeline sees them (none for a new table), listed once per
    Python worker and write."""
    if spec.visibility is None:
        return []

    def load() -> list[SliceInfo]:
        storage, _ = Storage.for_uri(spec.storage_uri)
        return [SliceInfo.of(s, {}) for s in _latest_slices(spec, storage, partition)]

    return _CACHE.get(("slices", spec.instant, spec.base_path, partition), load)


# A bloom filter that passes more than this share of absent keys is not worth its test: hashing a key 30 times
# costs more than the key-column lookup the few keys it turns away would have cost.
_USELESS_BLOOM = 0.5


def _base_files(spec: TagSpec, storage: Storage, partition: str) -> list[BaseFileIndex]:
    def load() -> list[BaseFileIndex]:
        out = []
        for s in _latest_slices(spec, storage, partition):
            if s.base_file is None:
                continue
            footer = read_footer(storage, s.base_file.path, bloom_max_entries=spec.bloom_max_entries)
            bloom = footer.bloom_filter
            if bloom is not None and bloom.false_positive_rate() > _USELESS_BLOOM:
                bloom = None  # it passes nearly every key (a file far past the filter's max entries): not tested
            out.append(BaseFileIndex(s.file_id, s.base_file.path, footer.min_key, footer.max_key, bloom))
        return out

    return _CACHE.get(("files", spec.instant, spec.base_path, partition), load)


def _bucket_files(spec: TagSpec, storage: Storage, partition: str) -> dict[int, str]:
    def load() -> dict[int, str]:
        out = {}
        for s in _latest_slices(spec, storage, partition):
            number = index.bucket_of_file_id(s.file_id)
            if number is not None:
                out[number] = s.file_id
        return out

    return _CACHE.get(("buckets", spec.instant, spec.base_path, partition), load)


# ---- RECORD_INDEX: the metadata table's record index ----------------------------------------------------------------
def record_index_locations(storage_uri: str, base_path: str, instant: str, keys: pa.Array | pa.ChunkedArray
                           ) -> pa.Table:
    """Where the table's record index places those of `keys` it holds (`MetadataTable.record_locations`: key,
    partition, file id): only the index's file groups the keys hash to are read (their base files by key lookup),
    so the cost follows the batch (Hudi's
    `SparkMetadataTableRecordIndex`). The metadata table is listed once per Python worker and write."""
    from hudi_engine.metadata.index_definitions import is_partitioned_record_index
    from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
    from hudi_engine.metadata.table import MetadataTable
    from hudi_engine.table_config import TableConfig
    from hudi_engine.timeline import Timeline

    storage, _ = Storage.for_uri(storage_uri)
    location = TableLocation(storage, base_path, storage_uri)

    def load() -> MetadataTable:
        config = TableConfig.load(location)
        if RECORD_INDEX_PARTITION not in config.metadata_partitions:
            raise WriteError(f"table {base_path}: hoodie.index.type=RECORD_INDEX, but the table's metadata table has "
                             f"no {RECORD_INDEX_PARTITION} (hoodie.table.metadata.partitions: "
                             f"{config.metadata_partitions}); write with "
                             "hoodie.metadata.global.record.level.index.enable=true to build it")
        if is_partitioned_record_index(location, config):  # its keys are not spread over one set of file groups
            raise WriteError(f"table {base_path}: hoodie.index.type=RECORD_INDEX tags with a global record index, "
                             "but the table's record index is partitioned (hoodie.metadata.record.level.index.enable)"
                             "; write with hoodie.index.type=RECORD_LEVEL_INDEX, as Hudi does")
        return MetadataTable.load(location, config, Timeline.load(location))

    mdt = _CACHE.get(("record_index", instant, base_path), load)
    return mdt.record_locations(keys)


def _partitioned_index(spec: TagSpec, storage: Storage) -> "MetadataTable":
    """The metadata table whose partitioned record index RECORD_LEVEL_INDEX tags with, listed once per Python worker
    and write; refused naming the option when the table has no partitioned record index."""
    from hudi_engine.metadata.index_definitions import is_partitioned_record_index
    from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
    from hudi_engine.metadata.table import MetadataTable
    from hudi_engine.table_config import TableConfig
    from hudi_engine.timeline import Timeline

    location = TableLocation(storage, spec.base_path, spec.storage_uri)

    def load() -> MetadataTable:
        config = TableConfig.load(location)
        if RECORD_INDEX_PARTITION not in config.metadata_partitions or not is_partitioned_record_index(location, config):
            raise WriteError(f"table {spec.base_path}: hoodie.index.type=RECORD_LEVEL_INDEX tags with the metadata "
                             "table's partitioned record index, which the table does not have (hoodie.table.metadata."
                             f"partitions: {config.metadata_partitions}); write with "
                             "hoodie.metadata.record.level.index.enable=true to build it (this engine or Java Hudi), "
                             "or with another index type")
        return MetadataTable.load(location, config, Timeline.load(location))

    return _CACHE.get(("partitioned_record_index", spec.instant, spec.base_path), load)
