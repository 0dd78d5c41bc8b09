"""Hudi's record-key bloom filters (SIMPLE and DYNAMIC_V0), bit-exact with Hudi 0.14/0.15 (FORMAT.md, Bloom filters).

A filter is Hadoop's `BloomFilter` over the UTF-8 bytes of each key: `numHashes` chained Hadoop MurmurHash
values pick the bits. DYNAMIC_V0 is a bounded matrix of such filters that grows a row every `num_entries`
keys until `max_entries` is covered. Both serialize in Hadoop's big-endian `Writable` layout; the parquet
footer holds that as base64.

Hashing is vectorized with numpy: keys are grouped by byte length, so every murmur step is one array
operation over all keys of that length. `hadoop_murmur_hash` is the scalar reference of the same function.
"""
from __future__ import annotations

import base64
import binascii
import copy
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import HudiError

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"
TYPE_CODES = (SIMPLE, DYNAMIC_V0)

DEFAULT_NUM_ENTRIES = 60000
DEFAULT_FPP = 1e-9
DEFAULT_MAX_ENTRIES = 100000

MURMUR_HASH = 1  # Hadoop `Hash.MURMUR_HASH`; 0 is JENKINS_HASH, which 0.14/0.15 never write
_VERSION = -1  # Hadoop `Filter.VERSION`: a negative first int marks the versioned layout
_HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize
_DYNAMIC_HEADER = struct.Struct(">iii")  # nr, currentNbRecord, matrix length

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_M_U32 = np.uint32(_M)
# Keys hashed per numpy pass: small enough that the working arrays stay in cache.
_CHUNK = 1 << 15

Keys: TypeAlias = Iterable[str] | pa.Array | pa.ChunkedArray


def _sbyte(b: int) -> int:
    """A Java `byte` (sign-extended) as a 32-bit two's complement pattern."""
    return (b | 0xFFFFFF00) if b & 0x80 else b


def hadoop_murmur_hash(data: bytes, seed: int) -> int:
    """Hadoop's `MurmurHash.hash(data, seed)` as a signed int32.

    MurmurHash2 body over little-endian 4-byte blocks, but the 1-3 byte tail is read from the END of
    the array (`data[len-3] << 16 ^ data[len-2] << 8 ^ data[len-1]`) and its bytes are sign-extended:
    that is where Hadoop differs from the textbook hash.
    """
    length = len(data)
    h = (seed ^ length) & _MASK
    n_blocks = length >> 2
    for k in struct.unpack_from(f"<{n_blocks}I", data):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    left = length - (n_blocks << 2)
    if left:
        if left >= 3:
            h ^= (_sbyte(data[length - 3]) << 16) & _MASK
        if left >= 2:
            h ^= (_sbyte(data[length - 2]) << 8) & _MASK
        h ^= _sbyte(data[length - 1])
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def hash_positions(key: bytes, num_hashes: int, vector_size: int) -> list[int]:
    """Bit positions of one key (Hadoop `HashFunction.hash`): chained murmur, `abs(h % vectorSize)` in Java ints."""
    out = []
    h = 0
    for _ in range(num_hashes):
        h = hadoop_murmur_hash(key, h)
        out.append(abs(h) % vector_size)  # == Java Math.abs(h % v): truncating % keeps the sign of h
    return out


def _murmur_rows(blocks: np.ndarray | None, tail: np.ndarray | None, length: int, seeds: np.ndarray) -> np.ndarray:
    """Vectorized `hadoop_murmur_hash` of many keys of the same byte length.

    blocks: (n, length // 4) uint32, already mixed (`k*m; k^=k>>>24; k*=m` does not depend on the seed);
    tail: (n,) uint32 xor of the sign-extended tail bytes, or None when length % 4 == 0; seeds: (n,) uint32.
    """
    h = seeds ^ np.uint32(length & _MASK)
    if blocks is not None:
        for j in range(blocks.shape[1]):
            np.multiply(h, _M_U32, out=h)
            np.bitwise_xor(h, blocks[:, j], out=h)
    if tail is not None:
        np.bitwise_xor(h, tail, out=h)
        np.multiply(h, _M_U32, out=h)
    np.bitwise_xor(h, h >> np.uint32(13), out=h)
    np.multiply(h, _M_U32, out=h)
    np.bitwise_xor(h, h >> np.uint32(15), out=h)
    return h


def _positions_same_length(rows: np.ndarray, num_hashes: int, vector_size: int) -> np.ndarray:
    """Bit positions, shape (num_hashes, n) uint32, of n keys given as an (n, length) uint8 matrix."""
    n, length = rows.shape
    n_blocks = length >> 2
    blocks = tail = None
    if n_blocks:
        blocks = np.ascontiguousarray(rows[:, : n_blocks * 4]).view("<u4").astype(np.uint32)
        np.multiply(blocks, _M_U32, out=blocks)
        np.bitwise_xor(blocks, blocks >> np.uint32(24), out=blocks)
        np.multiply(blocks, _M_U32, out=blocks)
        blocks = np.ascontiguousarray(blocks.T).T  # column j contiguous: one cache-friendly pass per block
    left = length - n_blocks * 4
    if left:
        signed = rows[:, length - left :].view(np.int8).astype(np.int32)  # Java bytes are signed
        t = signed[:, -1].copy()
        if left >= 2:
            t ^= signed[:, -2] << 8
        if left >= 3:
            t ^= signed[:, -3] << 16
        tail = t.view(np.uint32)
    out = np.empty((num_hashes, n), dtype=np.uint32)
    size = np.uint32(vector_size)
    h = np.zeros(n, dtype=np.uint32)
    quotient = np.empty(n, dtype=np.uint32)
    for i in range(num_hashes):
        h = _murmur_rows(blocks, tail, length, h)
        # Java Math.abs(h % v) == |h| mod v; |INT_MIN| wraps to INT_MIN, whose uint32 view is the true 2^31.
        magnitude = np.abs(h.view(np.int32)).view(np.uint32)
        # |h| - (|h| // v) * v: numpy divides by a scalar with libdivide, but `remainder` divides every element.
        np.floor_divide(magnitude, size, out=quotient)
        np.multiply(quotient, size, out=quotient)
        np.subtract(magnitude, quotient, out=out[i])
    return out


def _as_binary(keys: Keys) -> pa.Array:
    """Keys as one Arrow binary array of their UTF-8 bytes; nulls are refused (a record key is never null)."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    elif not isinstance(keys, pa.Array):
        keys = pa.array(keys if isinstance(keys, (list, tuple)) else list(keys), type=pa.string())
    if pa.types.is_large_string(keys.type) or pa.types.is_large_binary(keys.type):
        keys = keys.cast(pa.large_binary())
    elif pa.types.is_string(keys.type) or pa.types.is_binary(keys.type):
        keys = keys.cast(pa.binary())
    elif pa.types.is_string_view(keys.type) or pa.types.is_dictionary(keys.type):
        keys = keys.cast(pa.string()).cast(pa.binary())
    else:
        raise HudiError(f"bloom filter keys must be strings, got Arrow type {keys.type}")
    if keys.null_count:
        row = pc.index(pc.is_null(keys), True).as_py()
        raise HudiError(f"bloom filter key at position {row} is null: record keys are never null")
    return keys


def _offsets(arr: pa.Array) -> np.ndarray:
    offset_type = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=offset_type, count=arr.offset + len(arr) + 1)[arr.offset :]


def key_positions(keys: Keys, num_hashes: int, vector_size: int) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """Bit positions of many keys, in chunks: yields (key indices into `keys`, positions (num_hashes, n) uint32)."""
    arr = _as_binary(keys)
    if len(arr) == 0:
        return
    lengths = np.diff(_offsets(arr))
    order = np.argsort(lengths, kind="stable")
    bounds = np.flatnonzero(np.diff(lengths[order])) + 1
    for group in np.split(order, bounds):
        length = int(lengths[group[0]])
        for start in range(0, len(group), _CHUNK):
            idx = group[start : start + _CHUNK]
            if length == 0:
                rows = np.empty((len(idx), 0), np.uint8)
            else:
                # Arrow's take copies the equal-length keys back to back: the data buffer is the (n, length) matrix.
                taken = arr.take(pa.array(idx))
                first = int(_offsets(taken)[0])
                data = np.frombuffer(taken.buffers()[2], dtype=np.uint8, count=first + len(idx) * length, offset=0)
                rows = data[first:].reshape(len(idx), length)
            yield idx, _positions_same_length(rows, num_hashes, vector_size)


def optimal_bit_size(num_entries: int, fpp: float) -> int:
    """Hudi's `ceil(n * (-ln p / (ln 2)^2))`: 2587966 for the defaults."""
    return int(math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2)))))


def optimal_num_hashes(num_entries: int, bit_size: int) -> int:
    """Hudi's `ceil(ln 2 * bitSize / n)`: 30 for the defaults."""
    return int(math.ceil(math.log(2) * bit_size / num_entries))


class _BitVector:
    """One Hadoop `BloomFilter`: `vector_size` bits kept packed LSB-first, exactly as they are serialized."""

    __slots__ = ("num_hashes", "packed", "vector_size")

    def __init__(self, num_hashes: int, vector_size: int, packed: np.ndarray | None = None) -> None:
        self.num_hashes = num_hashes
        self.vector_size = vector_size
        self.packed = np.zeros((vector_size + 7) >> 3, dtype=np.uint8) if packed is None else packed

    def set(self, positions: np.ndarray) -> None:
        self.set_many([positions])

    def set_many(self, chunks: Iterable[np.ndarray]) -> None:
        """Set the bits of each chunk of positions. Past a few keys the vector is unpacked to a bool per bit once,
        set, and repacked once: that beats a scattered read-modify-write of packed bytes."""
        bits = None
        for positions in chunks:
            positions = positions.ravel()
            if bits is None and len(positions) <= self.vector_size >> 6:
                np.bitwise_or.at(self.packed, positions >> 3, (1 << (positions & 7)).astype(np.uint8))
                continue
            if bits is None:
                bits = np.unpackbits(self.packed, bitorder="little", count=self.vector_size).view(bool)
            bits[positions] = True
        if bits is not None:
            self.packed = np.packbits(bits, bitorder="little")

    def test(self, positions: np.ndarray) -> np.ndarray:
        """positions (num_hashes, n) -> (n,) bool: all of a key's bits are set."""
        bits = (self.packed[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1
        return bits.all(axis=0)

    def write(self) -> bytes:
        return _HEADER.pack(_VERSION, self.num_hashes, MURMUR_HASH, self.vector_size) + self.packed.tobytes()

    @staticmethod
    def read(data: memoryview, offset: int, what: str) -> tuple["_BitVector", int]:
        num_hashes, vector_size, offset = _read_header(data, offset, what)
        n_bytes = (vector_size + 7) >> 3
        if offset + n_bytes > len(data):
            raise HudiError(
                f"{what}: bit vector of {vector_size} bits needs {n_bytes} bytes at offset {offset}, "
                f"only {len(data) - offset} left"
            )
        packed = np.frombuffer(data, dtype=np.uint8, count=n_bytes, offset=offset).copy()
        return _BitVector(num_hashes, vector_size, packed), offset + n_bytes

    def bit_count(self) -> int:
        return int(np.bitwise_count(self.packed).sum())

    def false_positive_rate(self) -> float:
        """The chance an absent key passes: every one of its `num_hashes` bits set, at this vector's fill."""
        return float((self.bit_count() / self.vector_size) ** self.num_hashes)


def _read_header(data: memoryview, offset: int, what: str) -> tuple[int, int, int]:
    if offset + _HEADER.size > len(data):
        raise HudiError(f"{what}: truncated filter header at offset {offset} (size {len(data)})")
    version, num_hashes, hash_type, vector_size = _HEADER.unpack_from(data, offset)
    if version >= 0:
        raise HudiError(
            f"{what}: first int {version} at offset {offset} marks the pre-versioned Hadoop layout with JENKINS "
            "hashing, which Hudi 0.14/0.15 never write; expected -1"
        )
    if version != _VERSION:
        raise HudiError(f"{what}: unsupported filter version {version} at offset {offset}, expected -1")
    if hash_type != MURMUR_HASH:
        raise HudiError(f"{what}: hash type {hash_type} at offset {offset + 8}, expected {MURMUR_HASH} (MURMUR_HASH)")
    if num_hashes <= 0 or vector_size <= 0:
        raise HudiError(f"{what}: bad nbHash {num_hashes} / vectorSize {vector_size} at offset {offset}")
    return num_hashes, vector_size, offset + _HEADER.size


class _BloomFilterBase(ABC):
    type_code: str
    num_hashes: int
    vector_size: int

    def _key_positions(self, key: str) -> np.ndarray:
        """One key's positions as a (num_hashes, 1) column; the scalar hash is cheaper than numpy for one key."""
        if not isinstance(key, str):
            raise HudiError(f"bloom filter key must be a str, got {type(key).__name__}: {key!r}")
        positions = hash_positions(key.encode("utf-8"), self.num_hashes, self.vector_size)
        return np.array(positions, dtype=np.uint32).reshape(-1, 1)

    @abstractmethod
    def add(self, key: str) -> None: ...

    @abstractmethod
    def might_contain(self, key: str) -> bool: ...

    @abstractmethod
    def add_many(self, keys: Keys) -> None: ...

    @abstractmethod
    def might_contain_many(self, keys: Keys) -> np.ndarray: ...

    @abstractmethod
    def serialize(self) -> bytes:
        """Hadoop `Writable` bytes (big-endian), as Hudi's `serializeToString` base64-encodes them."""

    @abstractmethod
    def false_positive_rate(self) -> float:
        """The chance an absent key passes, from the bits set: near 1 for a filter that holds far more keys than it
        was sized for (a dynamic filter past its max entries), which then tells no key apart."""

    def to_base64(self) -> str:
        """What the parquet footer's `org.apache.hudi.bloomfilter` holds."""
        return base64.b64encode(self.serialize()).decode("ascii")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.serialize() == self.serialize()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable


class SimpleBloomFilter(_BloomFilterBase):
    """Hudi `SimpleBloomFilter`: a single Hadoop bloom filter with MURMUR hashing."""

    type_code = SIMPLE

    def __init__(self, num_entries: int = DEFAULT_NUM_ENTRIES, fpp: float = DEFAULT_FPP) -> None:
        _check_sizing(num_entries, fpp)
        bit_size = optimal_bit_size(num_entries, fpp)
        self._bits = _BitVector(optimal_num_hashes(num_entries, bit_size), bit_size)

    @property
    def num_hashes(self) -> int:  # type: ignore[override]
        return self._bits.num_hashes

    @property
    def vector_size(self) -> int:  # type: ignore[override]
        return self._bits.vector_size

    def add(self, key: str) -> None:
        self._bits.set(self._key_positions(key))

    def might_contain(self, key: str) -> bool:
        return bool(self._bits.test(self._key_positions(key))[0])

    def add_many(self, keys: Keys) -> None:
        self._bits.set_many(positions for _, positions in key_positions(keys, self.num_hashes, self.vector_size))

    def might_contain_many(self, keys: Keys) -> np.ndarray:
        """One bool per key, in input order (vectorized membership test)."""
        arr = _as_binary(keys)
        out = np.zeros(len(arr), dtype=bool)
        for idx, positions in key_positions(arr, self.num_hashes, self.vector_size):
            out[idx] = self._bits.test(positions)
        return out

    def serialize(self) -> bytes:
        return self._bits.write()

    def false_positive_rate(self) -> float:
        return self._bits.false_positive_rate()

    def bit_count(self) -> int:
        return self._bits.bit_count()

    @classmethod
    def _from_bits(cls, bits: _BitVector) -> "SimpleBloomFilter":
        f = cls.__new__(cls)
        f._bits = bits
        return f

    def __repr__(self) -> str:
        return f"SimpleBloomFilter(num_hashes={self.num_hashes}, vector_size={self.vector_size})"


class DynamicBloomFilter(_BloomFilterBase):
    """Hudi `HoodieDynamicBoundedBloomFilter` (DYNAMIC_V0): rows of `num_entries` keys, bounded by `max_entries`.

    Keys go to the last row until it holds `num_entries`; then a row is added while
    `rows * num_entries < max_entries`. Past that bound the filter stops growing and spreads keys over
    the existing rows round-robin (first to row 0, then rows 0, 1, ... as Hadoop's `curMatrixIndex++`);
    `current_count` keeps counting, as in Java. `max_entries` is not serialized, so a parsed filter
    takes it from the caller (the table's `hoodie.bloom.index.filter.dynamic.max.entries`).
    """

    type_code = DYNAMIC_V0

    def __init__(
        self,
        num_entries: int = DEFAULT_NUM_ENTRIES,
        fpp: float = DEFAULT_FPP,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        _check_sizing(num_entries, fpp)
        bit_size = optimal_bit_size(num_entries, fpp)
        self.num_hashes = optimal_num_hashes(num_entries, bit_size)
        self.vector_size = bit_size
        self.num_entries = num_entries  # Hadoop `nr`
        self.max_entries = max_entries  # Hadoop `maxNr`
        self.current_count = 0  # Hadoop `currentNbRecord`
        self._rows = [_BitVector(self.num_hashes, self.vector_size)]
        self._reached_max = False
        self._round_robin = 0  # Hadoop `curMatrixIndex`

    @property
    def num_rows(self) -> int:
        return len(self._rows)

    def _assign_rows(self, n: int) -> np.ndarray:
        """The matrix row each of the next `n` keys goes to, advancing the growth state as `add` would."""
        out = np.empty(n, dtype=np.int64)
        self._advance(n, out)
        return out

    def _advance(self, n: int, out: np.ndarray | None = None) -> None:
        """Advance the growth state by `n` keys as `add` would, writing each key's matrix row into `out` if given."""
        i = 0
        while i < n:
            if self._reached_max:
                if out is not None:
                    out[i:] = (self._round_robin + np.arange(n - i)) % len(self._rows)
                self._round_robin += n - i
                self.current_count += n - i
                break
            if self.current_count >= self.num_entries:
                if len(self._rows) * self.num_entries < self.max_entries:
                    self._rows.append(_BitVector(self.num_hashes, self.vector_size))
                    self.current_count = 0
                    continue
                self._reached_max = True  # this key goes to row 0; round-robin starts with the next one
                if out is not None:
                    out[i] = 0
                self.current_count += 1
                i += 1
                continue
            take = min(n - i, self.num_entries - self.current_count)
            if out is not None:
                out[i : i + take] = len(self._rows) - 1
            self.current_count += take
            i += take

    def add(self, key: str) -> None:
        positions = self._key_positions(key)
        self._rows[int(self._assign_rows(1)[0])].set(positions)

    def might_contain(self, key: str) -> bool:
        positions = self._key_positions(key)
        return any(bool(row.test(positions)[0]) for row in self._rows)

    def add_many(self, keys: Keys) -> None:
        arr = _as_binary(keys)
        rows = self._assign_rows(len(arr))
        # Keys fill rows in runs (round-robin only past max entries): each row's keys are hashed and set at once.
        targets = np.unique(rows).tolist()
        for r in targets:
            mine = arr if len(targets) == 1 else arr.filter(pa.array(rows == r))
            self._rows[r].set_many(p for _, p in key_positions(mine, self.num_hashes, self.vector_size))

    def might_contain_many(self, keys: Keys) -> np.ndarray:
        """One bool per key, in input order: true if any row may hold it."""
        arr = _as_binary(keys)
        out = np.zeros(len(arr), dtype=bool)
        for idx, positions in key_positions(arr, self.num_hashes, self.vector_size):
            hit = np.zeros(len(idx), dtype=bool)
            for row in self._rows:
                hit |= row.test(positions)
            out[idx] = hit
        return out

    def serialize(self) -> bytes:
        head = _HEADER.pack(_VERSION, self.num_hashes, MURMUR_HASH, self.vector_size)
        counts = _DYNAMIC_HEADER.pack(self.num_entries, self.current_count, len(self._rows))
        return head + counts + b"".join(row.write() for row in self._rows)

    def bit_count(self) -> int:
        return sum(row.bit_count() for row in self._rows)

    def false_positive_rate(self) -> float:
        """A key passes if any row passes it."""
        return 1.0 - float(np.prod([1.0 - row.false_positive_rate() for row in self._rows]))

    def __repr__(self) -> str:
        return (
            f"DynamicBloomFilter(num_hashes={self.num_hashes}, vector_size={self.vector_size}, "
            f"num_entries={self.num_entries}, max_entries={self.max_entries}, rows={len(self._rows)}, "
            f"current_count={self.current_count})"
        )


BloomFilter = SimpleBloomFilter | DynamicBloomFilter


def _check_sizing(num_entries: int, fpp: float) -> None:
    if num_entries <= 0:
        raise HudiError(f"bloom filter num_entries must be positive, got {num_entries}")
    if not 0.0 < fpp < 1.0:
        raise HudiError(f"bloom filter fpp must be in (0, 1), got {fpp}")


def new_bloom_filter(
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    filter_type: str = DYNAMIC_V0,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> BloomFilter:
    """Hudi `BloomFilterFactory.createBloomFilter` for `hoodie.bloom.index.filter.type`."""
    if filter_type == SIMPLE:
        return SimpleBloomFilter(num_entries, fpp)
    if filter_type == DYNAMIC_V0:
        return DynamicBloomFilter(num_entries, fpp, max_entries)
    raise HudiError(f"unknown bloom filter type {filter_type!r}, expected one of {TYPE_CODES}")


def continuation(parsed: BloomFilter, fresh: BloomFilter, n_keys: int) -> BloomFilter | None:
    """`parsed` (read from a file of `n_keys` rows), ready to take more keys, if it is exactly what `fresh` becomes
    after adding those keys in file order, so that adding more keys to it equals building anew; else None. It must
    have the same type and sizing, and for a dynamic filter the row count and fill that `n_keys` keys give. Past
    max entries, the round-robin position (Hadoop's `curMatrixIndex`, not serialized) is the one `n_keys` keys
    leave, as a rebuild would have it (a Java reader restarts it at row 0; no reader depends on it)."""
    if type(parsed) is not type(fresh) or (parsed.num_hashes, parsed.vector_size) != (fresh.num_hashes,
                                                                                       fresh.vector_size):
        return None
    if isinstance(parsed, DynamicBloomFilter):
        assert isinstance(fresh, DynamicBloomFilter)
        if parsed.num_entries != fresh.num_entries:
            return None
        probe = copy.copy(fresh)  # `fresh` stays untouched: the probe gets its own list of rows
        probe._rows = list(fresh._rows)
        probe._advance(n_keys)  # the growth state n_keys adds leave
        if (probe.num_rows, probe.current_count) != (parsed.num_rows, parsed.current_count):
            return None
        parsed.max_entries = fresh.max_entries
        parsed._reached_max, parsed._round_robin = probe._reached_max, probe._round_robin
    return parsed


def parse_bloom_filter(
    data: bytes | bytearray | memoryview | str,
    type_code: str | None = None,
    *,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    what: str = "bloom filter",
) -> BloomFilter:
    """Parse a serialized filter: raw bytes, or its base64 text (`str`, or the footer's value bytes).

    `type_code` is the footer's `hoodie_bloom_filter_type_code`; absent (None) means SIMPLE, as in Hudi.
    `what` names the source (file path) in error messages.
    """
    if isinstance(data, (bytes, bytearray)) and data[:4] == b"////":
        data = data.decode("ascii")  # footer value bytes: base64 of a versioned filter (0xFFFFFFFF...)
    if isinstance(data, str):
        try:
            data = base64.b64decode(data, validate=True)
        except binascii.Error as e:
            raise HudiError(f"{what}: bloom filter is not valid base64: {e}") from e
    view = memoryview(data).cast("B")
    code = SIMPLE if type_code is None else type_code
    if code == SIMPLE:
        bits, end = _BitVector.read(view, 0, what)
        f: BloomFilter = SimpleBloomFilter._from_bits(bits)
    elif code == DYNAMIC_V0:
        num_hashes, vector_size, offset = _read_header(view, 0, what)
        if offset + _DYNAMIC_HEADER.size > len(view):
            raise HudiError(f"{what}: truncated DYNAMIC_V0 header at offset {offset} (size {len(view)})")
        nr, current, n_rows = _DYNAMIC_HEADER.unpack_from(view, offset)
        if nr <= 0 or current < 0 or n_rows <= 0:
            raise HudiError(
                f"{what}: bad DYNAMIC_V0 counts at offset {offset}: nr={nr}, currentNbRecord={current}, rows={n_rows}"
            )
        end = offset + _DYNAMIC_HEADER.size
        rows: list[_BitVector] = []
        for _ in range(n_rows):
            row, end = _BitVector.read(view, end, what)
            if (row.num_hashes, row.vector_size) != (num_hashes, vector_size):
                raise HudiError(
                    f"{what}: matrix row {len(rows)} has nbHash={row.num_hashes}, vectorSize={row.vector_size}; "
                    f"expected the outer {num_hashes}, {vector_size}"
                )
            rows.append(row)
        d = DynamicBloomFilter.__new__(DynamicBloomFilter)
        d.num_hashes, d.vector_size, d.num_entries, d.max_entries = num_hashes, vector_size, nr, max_entries
        d.current_count, d._rows, d._reached_max, d._round_robin = current, rows, False, 0
        f = d
    else:
        raise HudiError(f"{what}: unknown bloom filter type code {type_code!r}, expected one of {TYPE_CODES}")
    if end != len(view):
        raise HudiError(f"{what}: {len(view) - end} trailing bytes after the {code} filter at offset {end}")
    return f
