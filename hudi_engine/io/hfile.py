"""HFile version 3, as Hudi's metadata table writes and reads it (docs/format-notes.md, HFile).

Hudi 0.x and 1.0 write it with HBase's writer (shaded); Hudi 1.1+ with its own (`hudi-io`, `HFileWriterImpl`); both
read it with their own reader too. The layout, front to back:

    data blocks   DATABLK*   cells: key length i32, value length i32, key, value, MVCC timestamp (vlong, always 0)
    meta blocks   METABLKc   one value each, named in the meta index (Hudi: "bloomFilter")
    ---- load-on-open section (trailer.load_on_open_data_offset) ----
    root index    IDXROOT2   per data block: offset i64, on-disk size i32, first key (vint length + key)
    meta index    IDXROOT2   per meta block: offset i64, on-disk size i32, name (vint length + name)
    file info     FILEINF2   "PBUF" + a length-delimited protobuf InfoProto: (name, value) byte pairs
    trailer       4096 bytes "TRABLK\"$" + a length-delimited protobuf TrailerProto, zeros, version i32

Every block has a 33-byte header (magic, on-disk size without header, uncompressed size without header, offset of
the previous block of its type, checksum type, bytes per checksum, on-disk size of header + data); its data is
compressed with the file's codec (the trailer names it for every block); checksums follow the data, one i32 per
`bytes per checksum` chunk of header + data.

A cell's key is HBase's KeyValue key: row length i16, row (Hudi's record key, UTF-8), family length 0, timestamp
Long.MAX_VALUE, type 4 (Put). Only the row matters to Hudi: keys sort as the unsigned bytes of the row. Lengths in
index entries are Hadoop `WritableUtils` vints; lengths before protobuf messages are protobuf varints.

Cells are written and read as arrow arrays (`write_hfile_arrays`, `HFileReader.read_table` and `lookup`): a
metadata table's record index holds one cell per data-table record, millions of them, so no Python runs per cell
except the walk over the cell heads of a block that finding variable-length cells takes.
"""
from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import HFileFormatError

HEADER_SIZE: Final = 33
TRAILER_SIZE: Final = 4096
DATA_MAGIC: Final = b"DATABLK*"
META_MAGIC: Final = b"METABLKc"
ROOT_INDEX_MAGIC: Final = b"IDXROOT2"
FILE_INFO_MAGIC: Final = b"FILEINF2"
TRAILER_MAGIC: Final = b'TRABLK"$'
PB_MAGIC: Final = b"PBUF"
# Block types HBase can write but Hudi never does: named when met, never read.
_UNSUPPORTED_BLOCKS: Final = {
    b"DATABLKE": "ENCODED_DATA (data block encoding)", b"IDXLEAF2": "LEAF_INDEX (multi-level index)",
    b"IDXINTE2": "INTERMEDIATE_INDEX (multi-level index)", b"BLMFBLK2": "BLOOM_CHUNK",
    b"BLMFMET2": "GENERAL_BLOOM_META", b"DFBLMET2": "DELETE_FAMILY_BLOOM_META",
}

# The trailer's codec id is the ordinal of HBase's Compression.Algorithm, which Hudi's HFileCompressionCodec keeps.
CODECS: Final = ("LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD")
SUPPORTED_CODECS: Final = ("NONE", "GZ")
CHECKSUM_NULL, CHECKSUM_CRC32, CHECKSUM_CRC32C = 0, 1, 2
BYTES_PER_CHECKSUM: Final = 16 * 1024
MAJOR_VERSION: Final = 3
# Minor version 3 (HBase's current one): block headers carry the checksum fields (HBase reads them from minor 1).
MINOR_VERSION: Final = 3
COMPARATOR: Final = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
DEFAULT_BLOCK_SIZE: Final = 1024 * 1024  # hoodie.hfile.block.size
DEFAULT_COMPRESSION: Final = "GZ"  # hoodie.hfile.compression.algorithm

# File info names the HFile format itself owns; a writer's caller adds its own (Hudi: schema, min/max record key).
LAST_KEY: Final = "hfile.LASTKEY"
AVG_KEY_LEN: Final = "hfile.AVG_KEY_LEN"
AVG_VALUE_LEN: Final = "hfile.AVG_VALUE_LEN"
CREATE_TIME_TS: Final = "hfile.CREATE_TIME_TS"
MAX_TAGS_LEN: Final = "hfile.MAX_TAGS_LEN"
KEY_VALUE_VERSION: Final = "KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY: Final = "MAX_MEMSTORE_TS_KEY"
BLOOM_FILTER_BLOCK: Final = "bloomFilter"  # the meta block of Hudi's record-key bloom filter
BLOOM_FILTER_TYPE_CODE: Final = "bloomFilterTypeCode"
CELL_COLUMNS: Final = ("key", "value")  # the columns of `HFileReader.read_table` and `lookup`

_LATEST_TIMESTAMP: Final = (1 << 63) - 1
_PUT: Final = 4
# Row length i16 + family length + timestamp + type: an HBase key's bytes around its row.
_KEY_OVERHEAD: Final = 2 + 1 + 8 + 1
_ROWS, _VALUES = 0, 2  # a cell's elements in `_cell_ranges`
_HEADER = struct.Struct(">8siiqbii")
_CELL_HEAD = struct.Struct(">iiH")
_KEY_TAIL = struct.Struct(">Bqb")  # family length 0, timestamp, type
_INDEX_ENTRY = struct.Struct(">qi")
_I16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
# A gzip member as Java's GZIPOutputStream starts it (no name, mtime 0, OS 0), so our GZ blocks match Hudi's.
_GZIP_HEADER: Final = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"


@dataclass(frozen=True)
class Trailer:
    """The fixed-size trailer's fields (HBase's TrailerProto)."""

    file_info_offset: int
    load_on_open_data_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression: str
    major_version: int
    minor_version: int


@dataclass(frozen=True)
class BlockIndexEntry:
    """One entry of a root index: the block's first key (the row only, for a data block) and where it is."""

    first_key: bytes
    offset: int
    size: int


# --------------------------------------------------------------------------------------------- encodings


def _write_vint(n: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong`: -112..127 in one byte, else a length-marker byte and big-endian bytes."""
    if -112 <= n <= 127:
        return struct.pack(">b", n)
    marker = -112
    if n < 0:
        n = ~n
        marker = -120
    size = (n.bit_length() + 7) // 8
    return struct.pack(">b", marker - size) + n.to_bytes(size, "big")


def _read_vint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """(value, position after it) of a Hadoop vint/vlong; IndexError or struct.error when it runs past `buf`."""
    first = struct.unpack_from(">b", buf, pos)[0]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    body = bytes(buf[pos + 1:pos + size])
    if len(body) != size - 1:
        raise IndexError("vint past the end")
    value = int.from_bytes(body, "big")
    return (~value if negative else value), pos + size


def _write_varint(n: int) -> bytes:
    """Protobuf's base-128 varint (unsigned; a negative int64 as its two's complement, as protobuf does)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _pb_fields(buf: bytes) -> dict[int, list[int | bytes]]:
    """A protobuf message's fields by number (varint and length-delimited wire types, the only ones HFile uses)."""
    fields: dict[int, list[int | bytes]] = {}
    pos = 0
    while pos < len(buf):
        tag, pos = _read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, pos = _read_varint(buf, pos)
        elif wire == 2:
            length, pos = _read_varint(buf, pos)
            if pos + length > len(buf):
                raise ValueError(f"field {number} runs past the message")
            value, pos = buf[pos:pos + length], pos + length
        else:
            raise ValueError(f"field {number} has wire type {wire}, which HFile messages do not use")
        fields.setdefault(number, []).append(value)
    return fields


def _pb_varint(number: int, value: int) -> bytes:
    return _write_varint(number << 3) + _write_varint(value)


def _pb_bytes(number: int, value: bytes) -> bytes:
    return _write_varint(number << 3 | 2) + _write_varint(len(value)) + value


def _gzip(data: bytes) -> bytes:
    deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _gunzip(data: bytes) -> bytes:
    # wbits 47: gzip or zlib header, detected; concatenated gzip members are not written by Hadoop's GZ codec.
    return zlib.decompress(data, 47)


def hbase_key(row: bytes) -> bytes:
    """The HBase KeyValue key Hudi writes for a row: no family, no qualifier, latest timestamp, Put."""
    return _I16.pack(len(row)) + row + _KEY_TAIL.pack(0, _LATEST_TIMESTAMP, _PUT)


def _row_of(key: bytes) -> bytes:
    """The row of an HBase key (Hudi's native writer puts only row length + row in index keys: same answer)."""
    (length,) = _I16.unpack_from(key, 0)
    if 2 + length > len(key):
        raise ValueError(f"row length {length} runs past the {len(key)}-byte key")
    return key[2:2 + length]


def _as_key(key: bytes | str) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


def _be(buf: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The big-endian unsigned integers of `width` bytes at positions `at` of `buf`."""
    out = np.zeros(len(at), dtype=np.int64)
    for i in range(width):
        out = (out << 8) | buf[at + i]
    return out


def _cell_ranges(data: bytes, row_at: np.ndarray, row_len: np.ndarray, value_at: np.ndarray,
                 value_len: np.ndarray) -> pa.BinaryArray:
    """A block's bytes seen as one binary array of 4 elements per cell: row, gap, value, gap (offsets only, no
    copy); arrow's take of every 4th element (`_ROWS`, `_VALUES`) copies the rows or the values out."""
    n = len(row_at)
    offsets = np.empty(4 * n + 1, dtype=np.int32)
    offsets[0:4 * n:4] = row_at
    offsets[1:4 * n:4] = row_at + row_len
    offsets[2:4 * n:4] = value_at
    offsets[3:4 * n:4] = value_at + value_len
    offsets[4 * n] = len(data)
    return pa.BinaryArray.from_buffers(pa.binary(), 4 * n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _pick(ranges: pa.BinaryArray, which: int, cells: np.ndarray | None = None) -> pa.BinaryArray:
    """The rows (`which` _ROWS) or values (_VALUES) of `_cell_ranges`, of every cell or of the cell indexes `cells`."""
    at = np.arange(which, len(ranges), 4) if cells is None else cells * 4 + which
    return ranges.take(pa.array(at))


# --------------------------------------------------------------------------------------------- reading


class HFileReader:
    """An open HFile: trailer, root index, meta index and file info read at open; data blocks on demand.

    `source` is the whole file's bytes or a random-access file (`Storage.open_input_file`); `name` is used in
    errors. `blocks_read` counts the data and meta blocks read so far (the load-on-open section is not counted).
    """

    def __init__(self, source: bytes | bytearray | memoryview | pa.NativeFile, *, name: str = "<hfile>") -> None:
        self.name = name
        self._file = pa.BufferReader(pa.py_buffer(source)) if not isinstance(source, pa.NativeFile) else source
        self.size: int = self._file.size()
        self.blocks_read = 0
        self.trailer = self._read_trailer()
        if self.trailer.num_data_index_levels > 1:
            raise self._error(self.size - TRAILER_SIZE, "a single-level data index (Hudi writes one)",
                              f"{self.trailer.num_data_index_levels} index levels, which this reader does not read")
        self._read_load_on_open()
        version = self.file_info.get(KEY_VALUE_VERSION)
        # Cells carry an MVCC vlong when KEY_VALUE_VERSION is 1 (Hudi always writes it, as 0) and tags when the
        # file info records their maximum length (HBase only; Hudi never writes tags).
        self._with_mvcc = version is not None and len(version) == 4 and _I32.unpack(version)[0] == 1
        self._with_tags = MAX_TAGS_LEN in self.file_info
        self._first_rows = [e.first_key for e in self.data_index]
        last = self.file_info.get(LAST_KEY)
        self.last_key: bytes | None = _row_of(last) if last else None

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> HFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- errors and raw reads

    def _error(self, offset: int, expected: str, found: str) -> HFileFormatError:
        return HFileFormatError(f"{self.name}: at byte {offset}: expected {expected}, found {found}")

    def _read(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise self._error(offset, f"{what} of {length} bytes",
                              f"the end of the file (it has {self.size} bytes): truncated")
        return self._file.read_at(length, offset)

    # -- trailer and load-on-open section

    def _read_trailer(self) -> Trailer:
        if self.size < TRAILER_SIZE:
            raise self._error(0, f"an HFile of at least its {TRAILER_SIZE}-byte trailer",
                              f"{self.size} bytes: truncated or not an HFile")
        start = self.size - TRAILER_SIZE
        raw = self._read(start, TRAILER_SIZE, "the trailer")
        minor, major = raw[-4], int.from_bytes(raw[-3:], "big")
        if major != MAJOR_VERSION:
            raise self._error(self.size - 4, f"HFile major version {MAJOR_VERSION} in the trailer",
                              f"version {major}.{minor}")
        if raw[:8] != TRAILER_MAGIC:
            raise self._error(start, f"the trailer magic {TRAILER_MAGIC!r}", f"{raw[:8]!r}")
        try:
            length, pos = _read_varint(raw, 8)
            if pos + length > TRAILER_SIZE - 4:
                raise ValueError(f"a {length}-byte message that runs past the trailer")
            fields = _pb_fields(raw[pos:pos + length])
        except (ValueError, IndexError) as e:
            raise self._error(start + 8, "a protobuf TrailerProto", str(e)) from None

        def num(field: int, default: int = 0) -> int:
            value = fields.get(field, [default])[-1]
            return value if isinstance(value, int) else default

        comparator = fields.get(11, [b""])[-1]
        codec_id = num(12, CODECS.index("NONE"))
        codec = CODECS[codec_id] if codec_id < len(CODECS) else f"codec id {codec_id}"
        if codec not in SUPPORTED_CODECS:
            raise HFileFormatError(f"{self.name}: its blocks are compressed with {codec}; this reader reads "
                                   f"{' and '.join(SUPPORTED_CODECS)} only")
        return Trailer(
            file_info_offset=num(1), load_on_open_data_offset=num(2), uncompressed_data_index_size=num(3),
            total_uncompressed_bytes=num(4), data_index_count=num(5), meta_index_count=num(6), entry_count=num(7),
            num_data_index_levels=num(8, 1), first_data_block_offset=num(9), last_data_block_offset=num(10),
            comparator_class_name=bytes(comparator).decode("utf-8", "replace") if isinstance(comparator, bytes) else "",
            compression=codec, major_version=major, minor_version=minor)

    def _read_load_on_open(self) -> None:
        start = self.trailer.load_on_open_data_offset
        end = self.size - TRAILER_SIZE
        if not 0 <= start <= end:
            raise self._error(self.size - TRAILER_SIZE + 8, "a load-on-open offset inside the file",
                              f"offset {start} (the trailer starts at byte {end})")
        section = self._read(start, end - start, "the load-on-open section")
        data_index, pos = self._parse_block(section, 0, start, ROOT_INDEX_MAGIC)
        meta_index, pos = self._parse_block(section, pos, start, ROOT_INDEX_MAGIC)
        info, _ = self._parse_block(section, pos, start, FILE_INFO_MAGIC)
        self.data_index = self._parse_index(data_index, self.trailer.data_index_count, start, rows=True)
        self.meta_index = {e.first_key.decode("utf-8", "replace"): e
                           for e in self._parse_index(meta_index, self.trailer.meta_index_count, start, rows=False)}
        self.file_info = self._parse_file_info(info, start + pos)

    def _parse_index(self, payload: bytes, count: int, offset: int, *, rows: bool) -> list[BlockIndexEntry]:
        entries: list[BlockIndexEntry] = []
        pos = 0
        try:
            for _ in range(count):
                block_offset, size = _INDEX_ENTRY.unpack_from(payload, pos)
                length, pos = _read_vint(payload, pos + _INDEX_ENTRY.size)
                key = payload[pos:pos + length]
                if length < 0 or len(key) != length:
                    raise ValueError(f"a {length}-byte key past the end of the index")
                pos += length
                entries.append(BlockIndexEntry(_row_of(key) if rows else key, block_offset, size))
        except (ValueError, IndexError, struct.error) as e:
            raise self._error(offset, f"a root index of {count} entries", f"entry {len(entries)}: {e}") from None
        if rows and any(a.first_key > b.first_key for a, b in zip(entries, entries[1:], strict=False)):
            raise self._error(offset, "a root index in key order", "first keys out of order")
        return entries

    def _parse_file_info(self, payload: bytes, offset: int) -> dict[str, bytes]:
        if payload[:4] != PB_MAGIC:
            raise self._error(offset + HEADER_SIZE, f"the file info's protobuf magic {PB_MAGIC!r}", f"{payload[:4]!r}")
        try:
            length, pos = _read_varint(payload, 4)
            if pos + length > len(payload):
                raise ValueError(f"a {length}-byte message past the end of the block")
            info: dict[str, bytes] = {}
            for pair in _pb_fields(payload[pos:pos + length]).get(1, []):
                if not isinstance(pair, bytes):
                    raise ValueError("a file info entry that is not a message")
                entry = _pb_fields(pair)
                first, second = entry.get(1, [b""])[-1], entry.get(2, [b""])[-1]
                if not isinstance(first, bytes) or not isinstance(second, bytes):
                    raise ValueError("a file info name or value that is not bytes")
                info[first.decode("utf-8", "replace")] = bytes(second)
        except (ValueError, IndexError) as e:
            raise self._error(offset + HEADER_SIZE, "a protobuf InfoProto", str(e)) from None
        return info

    # -- blocks

    def _parse_block(self, buf: bytes, pos: int, base: int, magic: bytes) -> tuple[bytes, int]:
        """The uncompressed data of the block at `buf[pos:]` (file offset `base + pos`), and where the next starts."""
        at = base + pos
        if len(buf) - pos < HEADER_SIZE:
            raise self._error(at, f"a {magic.decode()} block header of {HEADER_SIZE} bytes",
                              f"{len(buf) - pos} bytes: truncated")
        found, on_disk, uncompressed, _prev, checksum_type, per_checksum, data_with_header = \
            _HEADER.unpack_from(buf, pos)
        if found != magic:
            what = _UNSUPPORTED_BLOCKS.get(found)
            raise self._error(at, f"a block with magic {magic!r}",
                              f"a {what} block, which Hudi does not write" if what else f"{found!r}")
        if not HEADER_SIZE <= data_with_header <= HEADER_SIZE + on_disk or uncompressed < 0:
            raise self._error(at, "consistent block sizes", f"on-disk size {on_disk} without header, "
                              f"{data_with_header} data with header, uncompressed {uncompressed}")
        end = pos + HEADER_SIZE + on_disk
        if end > len(buf):
            raise self._error(at, f"a {HEADER_SIZE + on_disk}-byte {magic.decode()} block",
                              f"{len(buf) - pos} bytes before the end of its section: truncated")
        block = buf[pos:end]
        if checksum_type == CHECKSUM_CRC32 and per_checksum > 0:
            sums = block[data_with_header:]
            for i, chunk_at in enumerate(range(0, data_with_header, per_checksum)):
                stored = sums[4 * i:4 * i + 4]
                actual = zlib.crc32(block[chunk_at:min(chunk_at + per_checksum, data_with_header)])
                if len(stored) != 4 or _U32.unpack(stored)[0] != actual:
                    raise self._error(at + chunk_at, f"bytes matching the block's CRC32 checksum {i}",
                                      "a mismatch: the block is corrupt")
        # CRC32C (HBase's default) is not verified: Python has no fast CRC32C; GZ's own CRC still guards GZ blocks.
        data = block[HEADER_SIZE:data_with_header]
        if self.trailer.compression == "GZ":
            try:
                data = _gunzip(data)
            except zlib.error as e:
                raise self._error(at + HEADER_SIZE, f"GZ data of the {magic.decode()} block", f"{e}") from None
        if len(data) != uncompressed:
            raise self._error(at + HEADER_SIZE, f"{uncompressed} bytes of {magic.decode()} block data",
                              f"{len(data)} bytes")
        return data, end

    def _read_block(self, entry: BlockIndexEntry, magic: bytes) -> bytes:
        raw = self._read(entry.offset, entry.size, f"the {magic.decode()} block its index points to")
        self.blocks_read += 1
        data, end = self._parse_block(raw, 0, entry.offset, magic)
        if end != entry.size:
            raise self._error(entry.offset, f"a block of the {entry.size} bytes its index entry says",
                              f"a block of {end} bytes")
        return data

    def _cell_layout(self, data: bytes, entry: BlockIndexEntry) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                          np.ndarray]:
        """(row starts, row lengths, value starts, value lengths) of a data block's cells in its uncompressed
        `data`. Cells are variable length, so finding them is sequential: a tight loop over the cell heads only
        (Hudi's layout: no tags, a one-byte MVCC vint; about 0.1 us a cell), then the lengths checked for all cells
        at once; anything else (tags, a longer MVCC, a corrupt cell) goes through the exact loop, which names the
        bad cell."""
        end = len(data)
        if not self._with_tags:
            heads = struct.Struct(">II").unpack_from  # unsigned: every step moves forward, the loop ends
            step = 8 + (1 if self._with_mvcc else 0)
            mvcc = step - 8
            starts: list[int] = []
            append = starts.append
            pos = 0
            buf = np.frombuffer(data, dtype=np.uint8)
            try:
                while pos < end:  # the hot loop: nothing per cell but the head and the step
                    append(pos)
                    key_len, value_len = heads(data, pos)
                    pos += step + key_len + value_len
            except struct.error:
                pos = -1
            if pos == end:
                at = np.array(starts, dtype=np.int64)
                key_len_a = _be(buf, at, 4)
                value_len_a = _be(buf, at + 4, 4)
                try:
                    row_len_a = _be(buf, at + 8, 2)
                    ok = bool(np.all((key_len_a >= _KEY_OVERHEAD + row_len_a) & (key_len_a < 1 << 31)
                                     & (value_len_a < 1 << 31)))
                except IndexError:  # a cell too short for its row length: the exact loop names it
                    ok = False
                if ok and mvcc:
                    last = buf[at + 8 + key_len_a + value_len_a]  # one-byte vints: -112..127 as a signed byte
                    ok = bool(np.all((last < 0x80) | (last >= 0x90)))
                if ok:
                    return at + 10, row_len_a, at + 8 + key_len_a, value_len_a
        return self._cell_layout_exact(data, entry)

    def _cell_layout_exact(self, data: bytes, entry: BlockIndexEntry) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                np.ndarray]:
        """`_cell_layout` one cell at a time, each checked: tags and any MVCC vint, and the error for a bad cell."""
        pos, end = 0, len(data)
        layout: list[tuple[int, int, int, int]] = []
        while pos < end:
            try:
                key_len, value_len, row_len = _CELL_HEAD.unpack_from(data, pos)
                if key_len < _KEY_OVERHEAD + row_len or value_len < 0:
                    raise ValueError(f"key length {key_len} for a {row_len}-byte row, value length {value_len}")
                row_at = pos + 10
                value_at = pos + 8 + key_len
                next_at = value_at + value_len
                if next_at > end:
                    raise ValueError(f"a {key_len}-byte key and {value_len}-byte value past the block's end")
                if self._with_tags:
                    (tags_len,) = _I16.unpack_from(data, next_at)
                    next_at += 2 + tags_len
                if self._with_mvcc:
                    if data[next_at] < 0x80 or data[next_at] >= 0x90:  # a one-byte vint (>= -112 signed): most
                        next_at += 1
                    else:
                        _, next_at = _read_vint(data, next_at)
                if next_at > end:
                    raise ValueError("cell past the block's end")
            except (ValueError, IndexError, struct.error) as e:
                raise self._error(entry.offset + HEADER_SIZE,
                                  "cells in the data block", f"at position {pos} of its uncompressed data: {e}"
                                  ) from None
            layout.append((row_at, row_len, value_at, value_len))
            pos = next_at
        cols = np.array(layout, dtype=np.int64).reshape(-1, 4)
        return cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3]

    def _block_arrays(self, entry: BlockIndexEntry) -> tuple[pa.BinaryArray, pa.BinaryArray]:
        """A data block's (rows, values) as arrow binary arrays, in key order."""
        ranges = self._block_ranges(entry)
        return _pick(ranges, _ROWS), _pick(ranges, _VALUES)

    def _block_ranges(self, entry: BlockIndexEntry) -> pa.BinaryArray:
        data = self._read_block(entry, DATA_MAGIC)
        return _cell_ranges(data, *self._cell_layout(data, entry))

    def _cells_of(self, entry: BlockIndexEntry) -> Iterator[tuple[bytes, bytes]]:
        keys, values = self._block_arrays(entry)
        return zip(keys.to_pylist(), values.to_pylist(), strict=True)

    # -- the public reads

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    def cells(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order; the key is the row (Hudi's key, UTF-8 bytes)."""
        for entry in self.data_index:
            yield from self._cells_of(entry)

    def keys(self) -> Iterator[bytes]:
        return (key for key, _ in self.cells())

    def read_table(self) -> pa.Table:
        """Every cell as a table of binary columns `key` (the row) and `value`, in key order, one chunk per block."""
        blocks = [self._block_arrays(entry) for entry in self.data_index]
        return pa.Table.from_arrays(
            [pa.chunked_array([k for k, _ in blocks], pa.binary()), pa.chunked_array([v for _, v in blocks],
                                                                                      pa.binary())],
            names=CELL_COLUMNS)

    def lookup(self, keys: Iterable[bytes | str] | pa.Array) -> pa.Table:
        """The cells of those of `keys` the file holds, as `read_table` gives them (key order). Only the data blocks
        the keys fall in (by the root index's first keys) are read, each once; a key past the file's last key reads
        nothing. Matching is arrow's hash lookup over the blocks read, not Python per cell."""
        if isinstance(keys, pa.Array):
            wanted_arr = pc.unique(keys.cast(pa.binary()) if not pa.types.is_binary(keys.type) else keys)
            wanted = sorted(k for k in wanted_arr.to_pylist() if k is not None)
        else:
            wanted = sorted({_as_key(k) for k in keys})
        blocks: set[int] = set()
        for key in wanted:
            i = bisect.bisect_right(self._first_rows, key) - 1
            if i < 0 or (self.last_key is not None and key > self.last_key):
                continue
            blocks.add(i)
        ranges = [self._block_ranges(self.data_index[i]) for i in sorted(blocks)]
        rows = [_pick(r, _ROWS) for r in ranges]
        # one hash table of the wanted keys, probed by every block's rows; values copied for the hits only
        hit = pc.is_in(pa.chunked_array(rows, pa.binary()), value_set=pa.array(wanted, pa.binary())).to_numpy() \
            if rows else np.zeros(0, np.bool_)
        bounds = np.cumsum([0] + [len(r) for r in rows])
        cells = [np.flatnonzero(hit[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
        return pa.Table.from_arrays(
            [pa.chunked_array([r.take(pa.array(c)) for r, c in zip(rows, cells, strict=True)], pa.binary()),
             pa.chunked_array([_pick(r, _VALUES, c) for r, c in zip(ranges, cells, strict=True)], pa.binary())],
            names=CELL_COLUMNS)

    def get(self, keys: Iterable[bytes | str]) -> dict[bytes, bytes]:
        """The values of those of `keys` the file holds (`lookup`, as a dict)."""
        found = self.lookup(keys)
        return dict(zip(found.column(0).to_pylist(), found.column(1).to_pylist(), strict=True))

    def meta_block(self, name: str) -> bytes | None:
        """The content of a meta block (Hudi: BLOOM_FILTER_BLOCK), None when the file has none of that name."""
        entry = self.meta_index.get(name)
        return None if entry is None else self._read_block(entry, META_MAGIC)


# --------------------------------------------------------------------------------------------- writing


class _BlockWriter:
    """Appends blocks to a file's bytes: header, compressed data, CRC32 checksums, and each type's previous offset."""

    def __init__(self, compression: str) -> None:
        self.compression = compression
        self.parts: list[bytes] = []
        self.offset = 0
        self.uncompressed_total = 0
        self._previous: dict[bytes, int] = {}

    def append(self, magic: bytes, data: bytes) -> tuple[int, int]:
        """(offset, on-disk size) of the block written."""
        body = _gzip(data) if self.compression == "GZ" else data
        data_with_header = HEADER_SIZE + len(body)
        chunks = -(-data_with_header // BYTES_PER_CHECKSUM)
        header = _HEADER.pack(magic, len(body) + 4 * chunks, len(data), self._previous.get(magic, -1),
                              CHECKSUM_CRC32, BYTES_PER_CHECKSUM, data_with_header)
        block = header + body
        sums = b"".join(_U32.pack(zlib.crc32(block[i:i + BYTES_PER_CHECKSUM]))
                        for i in range(0, data_with_header, BYTES_PER_CHECKSUM))
        offset = self.offset
        self.parts += (block, sums)
        self.offset += len(block) + len(sums)
        self.uncompressed_total += HEADER_SIZE + len(data)
        self._previous[magic] = offset
        return offset, self.offset - offset


def _check_writer_options(compression: str, block_size: int, file_info: Mapping[str, bytes] | None,
                          name: str) -> dict[str, bytes]:
    if compression not in SUPPORTED_CODECS:
        raise HFileFormatError(f"{name}: compression {compression!r} is not written; use one of {SUPPORTED_CODECS}")
    if block_size <= 0:
        raise HFileFormatError(f"{name}: block size must be positive, not {block_size}")
    extra = dict(file_info or {})
    reserved = {LAST_KEY, AVG_KEY_LEN, AVG_VALUE_LEN, CREATE_TIME_TS, MAX_TAGS_LEN, KEY_VALUE_VERSION,
                MAX_MEMSTORE_TS_KEY}
    clash = sorted(reserved & extra.keys())
    if clash:
        raise HFileFormatError(f"{name}: file info {clash} is written by the HFile writer itself")
    return extra


def _as_large_binary(values: pa.Array | pa.ChunkedArray, what: str, name: str) -> pa.Array:
    """One large_binary array of `values` (binary or string, any offset width); nulls are refused."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not (pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type)
            or pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise HFileFormatError(f"{name}: {what} must be an arrow binary or string array, not {values.type}")
    if values.null_count:
        raise HFileFormatError(f"{name}: {what} hold {values.null_count} nulls; every cell has a key and a value")
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.large_string()).view(pa.large_binary())
    return values.cast(pa.large_binary())


def _shown(key: bytes) -> str:
    return repr(key.decode("utf-8", "replace"))


def write_hfile(cells: Iterable[tuple[bytes | str, bytes]], **options: Any) -> bytes:
    """An HFile of `cells` ((key, value) in strictly increasing key order; str keys are UTF-8): `write_hfile_arrays`
    of their keys and values, with its keyword `options`."""
    keys: list[bytes] = []
    values: list[bytes] = []
    for key, value in cells:
        keys.append(_as_key(key))
        values.append(bytes(value))
    return write_hfile_arrays(pa.array(keys, pa.large_binary()), pa.array(values, pa.large_binary()), **options)


def write_hfile_arrays(
    keys: pa.Array | pa.ChunkedArray,
    values: pa.Array | pa.ChunkedArray,
    *,
    compression: str = DEFAULT_COMPRESSION,
    block_size: int = DEFAULT_BLOCK_SIZE,
    file_info: Mapping[str, bytes] | None = None,
    meta_blocks: Mapping[str, bytes] | None = None,
    create_time_ms: int = 0,
    name: str = "<hfile>",
) -> bytes:
    """An HFile of the cells `keys[i]` -> `values[i]` (arrow binary or string arrays; keys strictly increasing as
    unsigned bytes), laid out as Hudi lays it out: a data block is cut before a cell that would take it past
    `block_size` uncompressed bytes (key + value + 9 per cell, as Hudi counts), a single-level root index, one meta
    block per `meta_blocks` entry, the file info Hudi's and HBase's readers read plus `file_info`, and the trailer.

    Keys are full HBase keys in cells, index and LASTKEY (what HBase-written files hold; Hudi 1.x's reader reads
    the row out of either), and blocks carry CRC32 checksums, so both HBase's reader (Hudi 0.x) and Hudi's own
    read the file. Keys out of order, repeated, empty or over 32767 bytes are refused naming the key.

    The cells' bytes are built for all rows at once (arrow's element-wise join of head, row, key tail, value and
    MVCC byte) and blocks are slices of them: no Python per cell.
    """
    extra = _check_writer_options(compression, block_size, file_info, name)
    key_arr = _as_large_binary(keys, "keys", name)
    value_arr = _as_large_binary(values, "values", name)
    n = len(key_arr)
    if len(value_arr) != n:
        raise HFileFormatError(f"{name}: {n} keys but {len(value_arr)} values")
    key_lens = pc.binary_length(key_arr).to_numpy(zero_copy_only=False).astype(np.int64)
    value_lens = pc.binary_length(value_arr).to_numpy(zero_copy_only=False).astype(np.int64)
    bad = np.flatnonzero((key_lens == 0) | (key_lens > 0x7FFF))
    if len(bad):
        i = int(bad[0])
        raise HFileFormatError(f"{name}: key {_shown(key_arr[i].as_py())} is {key_lens[i]} bytes; keys are 1 to "
                               "32767 bytes")
    if n > 1:
        increasing = pc.greater(key_arr.slice(1), key_arr.slice(0, n - 1))
        if not pc.all(increasing).as_py():
            i = int(np.flatnonzero(~increasing.to_numpy(zero_copy_only=False))[0])
            raise HFileFormatError(f"{name}: keys must be strictly increasing: {_shown(key_arr[i + 1].as_py())} "
                                   f"comes after {_shown(key_arr[i].as_py())}")

    out = _BlockWriter(compression)
    index: list[tuple[bytes, int, int]] = []  # (first full key, offset, size)
    if n:
        head = np.empty(n, dtype=[("key", ">i4"), ("value", ">i4"), ("row", ">u2")])
        head["key"] = key_lens + _KEY_OVERHEAD
        head["value"] = value_lens
        head["row"] = key_lens
        heads = pa.FixedSizeBinaryArray.from_buffers(pa.binary(_CELL_HEAD.size), n,
                                                     [None, pa.py_buffer(head.tobytes())])
        tail = pa.scalar(_KEY_TAIL.pack(0, _LATEST_TIMESTAMP, _PUT), pa.large_binary())
        mvcc = pa.scalar(b"\x00", pa.large_binary())
        joined = pc.binary_join_element_wise(heads.cast(pa.large_binary()), key_arr, tail, value_arr, mvcc,
                                             pa.scalar(b"", pa.large_binary()))
        cell_bytes = joined.buffers()[2]
        starts = np.frombuffer(joined.buffers()[1], dtype=np.int64)[joined.offset:joined.offset + n + 1]
        # Hudi's cut: a block ends before the cell that would take it past block_size (key + value + 9 per cell)
        accounted = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(key_lens + value_lens + 9, out=accounted[1:])
        first = 0
        while first < n:
            end = int(np.searchsorted(accounted, accounted[first] + block_size, side="right")) - 1
            end = max(end, first + 1)
            block = cell_bytes.slice(int(starts[first]), int(starts[end] - starts[first]))
            offset, size = out.append(DATA_MAGIC, block.to_pybytes())
            index.append((hbase_key(key_arr[first].as_py()), offset, size))
            first = end
    last = key_arr[n - 1].as_py() if n else None
    key_bytes = int(key_lens.sum()) + _KEY_OVERHEAD * n
    value_bytes = int(value_lens.sum())
    return _finish(out, index, n, key_bytes, value_bytes, last, extra, meta_blocks, create_time_ms, compression)


def _finish(out: _BlockWriter, index: list[tuple[bytes, int, int]], entries: int, key_bytes: int,
            value_bytes: int, last: bytes | None, extra: dict[str, bytes], meta_blocks: Mapping[str, bytes] | None,
            create_time_ms: int, compression: str) -> bytes:
    """The file after its data blocks: meta blocks, root and meta indexes, file info, trailer."""
    meta_index: list[tuple[bytes, int, int]] = []
    for meta_name in sorted(meta_blocks or {}):  # HBase finds meta blocks by binary search over their names
        offset, size = out.append(META_MAGIC, bytes((meta_blocks or {})[meta_name]))
        meta_index.append((meta_name.encode("utf-8"), offset, size))

    def index_data(rows: list[tuple[bytes, int, int]]) -> bytes:
        return b"".join(_INDEX_ENTRY.pack(o, s) + _write_vint(len(k)) + k for k, o, s in rows)

    load_on_open = out.offset
    data_index = index_data(index)
    out.append(ROOT_INDEX_MAGIC, data_index)
    out.append(ROOT_INDEX_MAGIC, index_data(meta_index))
    info = {
        KEY_VALUE_VERSION: _I32.pack(1),  # cells carry an MVCC timestamp (always 0), as Hudi's readers expect
        MAX_MEMSTORE_TS_KEY: _I64.pack(0),
        AVG_KEY_LEN: _I32.pack(key_bytes // entries if entries else 0),
        AVG_VALUE_LEN: _I32.pack(value_bytes // entries if entries else 0),
        CREATE_TIME_TS: _I64.pack(create_time_ms),
        **extra,
    }
    if last is not None:
        info[LAST_KEY] = hbase_key(last)
    pairs = b"".join(_pb_bytes(1, _pb_bytes(1, k.encode("utf-8")) + _pb_bytes(2, v))
                     for k, v in sorted(info.items(), key=lambda kv: kv[0].encode("utf-8")))
    file_info_offset, _ = out.append(FILE_INFO_MAGIC, PB_MAGIC + _write_varint(len(pairs)) + pairs)

    trailer = b"".join([
        _pb_varint(1, file_info_offset), _pb_varint(2, load_on_open), _pb_varint(3, len(data_index)),
        _pb_varint(4, out.uncompressed_total), _pb_varint(5, len(index)), _pb_varint(6, len(meta_index)),
        _pb_varint(7, entries), _pb_varint(8, 1),
        *([_pb_varint(9, index[0][1]), _pb_varint(10, index[-1][1])] if index else []),
        _pb_bytes(11, COMPARATOR.encode("utf-8")), _pb_varint(12, CODECS.index(compression)),
    ])
    head = TRAILER_MAGIC + _write_varint(len(trailer)) + trailer
    version = bytes([MINOR_VERSION]) + MAJOR_VERSION.to_bytes(3, "big")
    out.parts.append(head + bytes(TRAILER_SIZE - len(head) - 4) + version)
    return b"".join(out.parts)
