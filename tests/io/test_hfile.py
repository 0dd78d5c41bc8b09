"""HFile reading and writing (hudi_engine/io/hfile.py): the real HFiles of a Hudi 1.0 table's metadata table, round
trips across many blocks, key lookups that read only their blocks, and the errors of corrupt files and bad input."""
from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hudi_engine.errors import HFileFormatError
from hudi_engine.io.bloom import parse_bloom_filter
from hudi_engine.io.hfile import (
    BLOOM_FILTER_BLOCK,
    HEADER_SIZE,
    LAST_KEY,
    TRAILER_SIZE,
    HFileReader,
    write_hfile,
)
from hudi_engine.io.log_block import BlockType
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.storage import Storage

MDT_TABLE = "mor_avrolog_v8_nonpartitioned_mdt"


@pytest.fixture(scope="module")
def mdt_table(unzip_table) -> Path:
    return unzip_table(MDT_TABLE, "v8_v9")


def _cells(n: int, value_size: int = 40) -> list[tuple[str, bytes]]:
    return [(f"key-{i:06d}", (f"value-{i}-".encode() * value_size)[:value_size]) for i in range(n)]


def test_real_metadata_table_hfiles(mdt_table: Path) -> None:
    hfiles = sorted((mdt_table / ".hoodie" / "metadata").rglob("*.hfile"))
    assert {p.parent.name for p in hfiles} >= {"files", "record_index", "column_stats", "secondary_index_name_idx"}
    for path in hfiles:
        reader = HFileReader(path.read_bytes(), name=str(path))
        cells = list(reader.cells())
        keys = [k for k, _ in cells]
        assert len(cells) == reader.entry_count and keys == sorted(set(keys))
        assert reader.trailer.compression == "GZ" and reader.trailer.comparator_class_name.endswith("KVComparator")
        assert reader.last_key == (keys[-1] if keys else None)
        # Every file of Hudi's metadata table carries its record-key bloom filter as a meta block.
        bloom = parse_bloom_filter(reader.meta_block(BLOOM_FILTER_BLOCK) or b"",
                                   reader.file_info["bloomFilterTypeCode"].decode(), what=str(path))
        assert all(bloom.might_contain(k.decode()) for k in keys)
        assert reader.get(keys + [b"no such key"]) == dict(cells)


def test_files_partition_lists_the_table(mdt_table: Path) -> None:
    """The latest `files` base file: its keys are the partition list and the (only) partition, and its values are
    HoodieMetadataRecord Avro naming the data files that exist on disk."""
    (path,) = sorted((mdt_table / ".hoodie" / "metadata" / "files").glob("*_2026*.hfile"))
    storage, _ = Storage.for_uri(str(mdt_table))
    reader = HFileReader(storage.open_input_file(str(path)), name=str(path))
    assert dict(reader.cells()).keys() == {b".", b"__all_partitions__"}
    schema = json.loads(reader.file_info["schema"])
    assert schema["name"] == "HoodieMetadataRecord"
    found = reader.get([".", "__all_partitions__"])
    # The engine's Arrow codec refuses HoodieMetadataRecord's multi-branch unions; fastavro reads the records.
    parsed = fastavro.parse_schema(schema)
    records = [fastavro.schemaless_reader(io.BytesIO(found[k]), parsed) for k in (b".", b"__all_partitions__")]
    # The HFile key is the record's key (Hudi leaves the payload's copy empty); type 1 is the partition list, 2 the
    # files of one partition.
    assert [r["type"] for r in records] == [2, 1]
    assert list(records[1]["filesystemMetadata"]) == ["."]
    listed = {name for name, meta in records[0]["filesystemMetadata"].items() if not meta["isDeleted"]}
    assert listed and all((mdt_table / name).is_file() for name in listed)
    assert reader.file_info["minRecordKey"] == b"." and reader.file_info["maxRecordKey"] == b"__all_partitions__"


def test_hfile_data_blocks_of_real_log_files(mdt_table: Path) -> None:
    """An HFILE_DATA log block's content is a whole HFile: every one in the metadata table's log files reads."""
    blocks = 0
    for path in sorted((mdt_table / ".hoodie" / "metadata").rglob(".*.log.*")):
        for block in read_log_blocks(path.read_bytes(), file_name=str(path)):
            if block.block_type == BlockType.HFILE_DATA:
                reader = HFileReader(block.content, name=f"{path}@{block.offset}")
                keys = list(reader.keys())
                assert len(keys) == reader.entry_count and keys == sorted(set(keys))
                if path.parent.name == "files":
                    assert b"__all_partitions__" in keys
                blocks += 1
    assert blocks > 20


@pytest.mark.parametrize("compression", ["NONE", "GZ"])
def test_round_trip_across_blocks(compression: str) -> None:
    cells = _cells(3000)
    data = write_hfile(cells, compression=compression, block_size=4096, file_info={"schema": b"{}"},
                       meta_blocks={BLOOM_FILTER_BLOCK: b"bloom bytes"}, create_time_ms=123)
    reader = HFileReader(data, name="round-trip.hfile")
    assert len(reader.data_index) > 20 and reader.trailer.compression == compression
    assert [(k.decode(), v) for k, v in reader.cells()] == cells
    assert reader.entry_count == 3000 and reader.file_info["schema"] == b"{}"
    assert reader.meta_block(BLOOM_FILTER_BLOCK) == b"bloom bytes" and reader.meta_block("other") is None
    assert reader.last_key == b"key-002999"
    # Blocks are cut as Hudi cuts them: before a cell that would take one past the block size (69 cells of 59).
    assert all(e.first_key == f"key-{i * 69:06d}".encode() for i, e in enumerate(reader.data_index))


def test_lookups_read_only_their_blocks() -> None:
    cells = _cells(2000)
    reader = HFileReader(write_hfile(cells, block_size=4096), name="lookups.hfile")
    blocks = len(reader.data_index)
    assert reader.get(["key-000005", "key-000006", "key-000007"]) == {
        k.encode(): v for k, v in cells[5:8]}
    assert reader.blocks_read == 1
    reader.blocks_read = 0
    hits = ["key-000000", "key-001000", "key-001999"]
    misses = ["key-0010005", "a", "zzz", "key-002000", ""]
    assert reader.get(hits + misses) == {k.encode(): dict(cells)[k] for k in hits}
    # "a" sorts before the first block and "zzz", "key-002000" after the last key: no block read for them.
    assert reader.blocks_read == 3 < blocks
    reader.blocks_read = 0
    assert reader.get([]) == {} and reader.get(["zzz"]) == {} and reader.blocks_read == 0


def test_empty_and_unicode_and_big_values() -> None:
    reader = HFileReader(write_hfile([]), name="empty.hfile")
    assert list(reader.cells()) == [] and reader.entry_count == 0 and reader.get(["a"]) == {}
    assert LAST_KEY not in reader.file_info
    big = b"x" * 300_000  # one cell larger than a block is a block of its own
    long_key = "c" + "k" * 20_000  # 20001 bytes: the index entry's length is a 3-byte Hadoop vint
    cells = [("a", b""), ("b", big), ("c", b"1"), (long_key, b"long"), ("é", b"2"), ("日本", b"3")]
    reader = HFileReader(write_hfile(cells, block_size=1024), name="mixed.hfile")
    assert [(k.decode(), v) for k, v in reader.cells()] == cells
    assert long_key.encode() in [e.first_key for e in reader.data_index]
    assert reader.get(["日本", "b"]) == {"日本".encode(): b"3", b"b": big}


def test_storage_reads(tmp_path: Path) -> None:
    storage, root = Storage.for_uri(str(tmp_path))
    path = f"{root}/one.hfile"
    storage.write_bytes(path, write_hfile(_cells(500), block_size=2048))
    with HFileReader(storage.open_input_file(path), name=path) as reader:
        assert len(list(reader.cells())) == 500


def test_writer_refuses_bad_keys() -> None:
    with pytest.raises(HFileFormatError, match="'key-1' comes after 'key-2'"):
        write_hfile([("key-2", b""), ("key-1", b"")], name="unsorted.hfile")
    with pytest.raises(HFileFormatError, match="unsorted.hfile: keys must be strictly increasing: 'b' comes after"):
        write_hfile([("a", b""), ("b", b""), ("b", b"")], name="unsorted.hfile")
    with pytest.raises(HFileFormatError, match="keys are 1 to 32767 bytes"):
        write_hfile([("", b"")])
    with pytest.raises(HFileFormatError, match="'SNAPPY' is not written"):
        write_hfile([], compression="SNAPPY")
    with pytest.raises(HFileFormatError, match="written by the HFile writer itself"):
        write_hfile([], file_info={LAST_KEY: b"x"})


def _reader(data: bytes) -> HFileReader:
    return HFileReader(data, name="bad.hfile")


def test_corrupt_and_truncated_files() -> None:
    good = write_hfile(_cells(200), block_size=2048, compression="NONE")
    size = len(good)
    with pytest.raises(HFileFormatError, match=rf"bad.hfile: at byte 0: expected an HFile of at least its "
                                               rf"{TRAILER_SIZE}-byte trailer, found 100 bytes"):
        _reader(good[:100])
    # Cut in the middle: the trailer is gone, the bytes before it are not one.
    with pytest.raises(HFileFormatError, match="bad.hfile: at byte .*: expected"):
        _reader(good[:size - 10])
    wrong_magic = bytearray(good)
    wrong_magic[size - TRAILER_SIZE] ^= 0xFF
    with pytest.raises(HFileFormatError, match=rf"at byte {size - TRAILER_SIZE}: expected the trailer magic"):
        _reader(bytes(wrong_magic))
    # A flipped byte inside a data block fails its CRC32 checksum, naming the block's offset.
    flipped = bytearray(good)
    flipped[HEADER_SIZE + 20] ^= 0x01
    reader = _reader(bytes(flipped))
    with pytest.raises(HFileFormatError, match="at byte 0: expected bytes matching the block's CRC32 checksum 0"):
        list(reader.cells())
    # An index entry pointing past the end of the file.
    reader = _reader(good)
    last = reader.data_index[-1]
    object.__setattr__(last, "offset", size)
    with pytest.raises(HFileFormatError, match=rf"at byte {size}: expected the DATABLK\* block .* truncated"):
        list(reader.cells())
    # A data block magic where the root index should start.
    reader = _reader(good)
    bad_index = bytearray(good)
    at = reader.trailer.load_on_open_data_offset
    bad_index[at:at + 8] = b"IDXLEAF2"
    with pytest.raises(HFileFormatError, match=rf"at byte {at}: expected a block with magic b'IDXROOT2', "
                                               "found a LEAF_INDEX"):
        _reader(bytes(bad_index))


def _with_checksums(data: bytearray) -> bytes:
    """The bytes with the first block's CRC32 checksum recomputed, as if it had been written that way."""
    with_header = struct.unpack_from(">i", data, 29)[0]
    data[with_header:with_header + 4] = struct.pack(">I", zlib.crc32(bytes(data[:with_header])))
    return bytes(data)


def test_corrupt_cells() -> None:
    good = bytearray(write_hfile(_cells(20), compression="NONE"))
    good[HEADER_SIZE:HEADER_SIZE + 4] = struct.pack(">i", 1 << 20)  # the first cell's key length
    with pytest.raises(HFileFormatError, match=rf"bad.hfile: at byte {HEADER_SIZE}: expected cells in the data "
                                               "block, found at position 0 of its uncompressed data: a 1048576-byte"):
        list(_reader(_with_checksums(good)).cells())


def test_unsupported_codec_and_bad_gzip() -> None:
    gz = write_hfile(_cells(50), compression="GZ")
    # The trailer's codec field (12) is the last varint of the message: LZ4 is id 4.
    at = gz.rindex(b"\x60\x01", len(gz) - TRAILER_SIZE)
    lz4 = gz[:at] + b"\x60\x04" + gz[at + 2:]
    with pytest.raises(HFileFormatError, match="compressed with LZ4; this reader reads NONE and GZ only"):
        _reader(lz4)
    broken = bytearray(gz)
    broken[HEADER_SIZE + 12] ^= 0xFF  # inside the deflate stream, after the gzip header
    with pytest.raises(HFileFormatError, match="at byte 33: expected GZ data of the DATABLK\\* block"):
        list(_reader(_with_checksums(broken)).cells())


def test_native_file_source(tmp_path: Path) -> None:
    path = tmp_path / "f.hfile"
    path.write_bytes(write_hfile(_cells(100)))
    with pa.OSFile(str(path)) as f:
        assert len(list(HFileReader(f, name=str(path)).cells())) == 100


@pytest.mark.parametrize("n", [0, 1, 127, 128, -1, -112, -113, 255, 256, 20001, 2**31 - 1, -2**31, 2**40])
def test_hadoop_vints(n: int) -> None:
    from hudi_engine.io.hfile import _read_vint, _write_vint

    encoded = _write_vint(n)
    assert _read_vint(encoded, 0) == (n, len(encoded))
    assert len(encoded) == (1 if -112 <= n <= 127 else 1 + (max(n, ~n).bit_length() + 7) // 8)
