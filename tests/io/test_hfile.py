"""HFile reading and writing (hudi_engine/io/hfile.py): the real HFiles of a Hudi 1.0 table's metadata table, round
trips across many blocks, key lookups that read only their blocks, and the errors of corrupt files and bad input."""
from __future__ import annotations

import io
import json
import random
import struct
import zlib
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hudi_engine.errors import HFileFormatError
from hudi_engine.io import hfile
from hudi_engine.io.bloom import parse_bloom_filter
from hudi_engine.io.hfile import (
    BLOOM_FILTER_BLOCK,
    CELL_COLUMNS,
    HEADER_SIZE,
    LAST_KEY,
    TRAILER_SIZE,
    HFileReader,
    write_hfile,
    write_hfile_arrays,
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


# ---- columnar writing and reading -----------------------------------------------------------------------------------

def _per_cell_hfile(cells: list[tuple[bytes, bytes]], compression: str, block_size: int) -> bytes:
    """The writer's layout built one cell at a time (the reference the columnar writer must match byte for byte)."""
    out = hfile._BlockWriter(compression)
    index: list[tuple[bytes, int, int]] = []
    block, first, accounted = bytearray(), None, 0
    for key, value in cells:
        cost = len(key) + len(value) + 9
        if first is not None and accounted + cost > block_size:
            index.append((first, *out.append(hfile.DATA_MAGIC, bytes(block))))
            block, first, accounted = bytearray(), None, 0
        full = hfile.hbase_key(key)
        first = first or full
        block += struct.pack(">iiH", len(full), len(value), len(key)) + full[2:] + value + b"\x00"
        accounted += cost
    if first is not None:
        index.append((first, *out.append(hfile.DATA_MAGIC, bytes(block))))
    return hfile._finish(out, index, len(cells), sum(len(k) + 12 for k, _ in cells), sum(len(v) for _, v in cells),
                         cells[-1][0] if cells else None, {"schema": b"s"}, {BLOOM_FILTER_BLOCK: b"b"}, 5, compression)


def _random_cells(n: int, seed: int) -> list[tuple[bytes, bytes]]:
    rng = random.Random(seed)
    keys: set[bytes] = set()
    while len(keys) < n:
        keys.add("".join(rng.choice("ab9-é日\U0001f600") for _ in range(rng.randint(1, 36))).encode())
    return [(k, rng.randbytes(rng.randint(0, 80))) for k in sorted(keys)]


@pytest.mark.parametrize(("n", "block_size"), [(0, 4096), (1, 1), (700, 1), (700, 2048), (3000, 4096),
                                               (3000, 1 << 20)])
@pytest.mark.parametrize("compression", ["NONE", "GZ"])
def test_columnar_writer_is_the_per_cell_layout(n: int, block_size: int, compression: str) -> None:
    cells = _random_cells(n, n + block_size)
    expected = _per_cell_hfile(cells, compression, block_size)
    keys = pa.array([k for k, _ in cells], pa.binary())
    values = pa.array([v for _, v in cells], pa.binary())
    options = {"compression": compression, "block_size": block_size, "file_info": {"schema": b"s"},
               "meta_blocks": {BLOOM_FILTER_BLOCK: b"b"}, "create_time_ms": 5}
    assert write_hfile_arrays(keys, values, **options) == expected
    # any binary or string array type, chunked or not, and the iterable writer: the same bytes
    as_text = pa.chunked_array([pa.array([k.decode() for k, _ in cells], pa.large_string())])
    assert write_hfile_arrays(as_text, values.cast(pa.large_binary()), **options) == expected
    assert write_hfile(cells, **options) == expected
    reader = HFileReader(expected, name="random.hfile")
    table = reader.read_table()
    assert table.column_names == list(CELL_COLUMNS)
    assert list(zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True)) == cells
    wanted = [k for k, _ in cells[::7]] + [b"\x00", b"zz", "日".encode()]
    hits = [(k, v) for k, v in cells if k in set(wanted)]
    found = reader.lookup(wanted)
    assert list(zip(found.column("key").to_pylist(), found.column("value").to_pylist(), strict=True)) == hits
    assert reader.get(wanted) == dict(hits)


def test_columnar_writer_refuses_bad_keys_naming_them() -> None:
    values = pa.array([b""] * 3)
    with pytest.raises(HFileFormatError, match="cols.hfile: keys must be strictly increasing: 'a' comes after 'b'"):
        write_hfile_arrays(pa.array(["a", "b", "a"]), values, name="cols.hfile")
    with pytest.raises(HFileFormatError, match="key '' is 0 bytes; keys are 1 to 32767 bytes"):
        write_hfile_arrays(pa.array(["a", "", "c"]), values)
    with pytest.raises(HFileFormatError, match="is 32768 bytes"):
        write_hfile_arrays(pa.array(["a", "b" * 32768, "c"]), values)
    with pytest.raises(HFileFormatError, match="keys hold 1 nulls"):
        write_hfile_arrays(pa.array(["a", None, "c"]), values)
    with pytest.raises(HFileFormatError, match="3 keys but 2 values"):
        write_hfile_arrays(pa.array(["a", "b", "c"]), values.slice(1))


def test_java_written_hfiles_read_as_tables(mdt_table: Path) -> None:
    for path in sorted((mdt_table / ".hoodie" / "metadata").rglob("*.hfile")):
        reader = HFileReader(path.read_bytes(), name=str(path))
        cells = list(reader.cells())
        table = reader.read_table()
        assert list(zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True)) == cells
        assert reader.lookup(pa.array([k for k, _ in cells[::2]] + [b"none"], pa.binary())).num_rows == \
            len(cells[::2])


def _cell(row: bytes, value: bytes, tail: bytes = b"") -> bytes:
    key = hfile.hbase_key(row)
    return struct.pack(">ii", len(key), len(value)) + key + value + tail


def test_cells_with_tags_and_long_mvcc_timestamps() -> None:
    """HBase can write tags (a length and bytes after the value) and MVCC timestamps of more than one byte; Hudi never
    does, and the exact loop reads them."""
    reader = HFileReader(write_hfile([]), name="variants.hfile")
    entry = hfile.BlockIndexEntry(b"", 0, 0)
    long_mvcc = hfile._write_vint(1 << 40)
    data = _cell(b"a", b"1", long_mvcc) + _cell(b"bb", b"", b"\x00") + _cell(b"c", b"xyz", long_mvcc)
    layout = [a.tolist() for a in reader._cell_layout(data, entry)]
    assert layout == [[10, 10 + len(_cell(b"a", b"1", long_mvcc)), 10 + len(data) - len(_cell(b"c", b"xyz",
                                                                                                long_mvcc))],
                      [1, 2, 1], [s + r + 10 for s, r in zip(layout[0], [1, 2, 1], strict=True)], [1, 0, 3]]
    reader._with_tags = True
    tagged = _cell(b"a", b"1", b"\x00\x03tag\x00") + _cell(b"b", b"22", b"\x00\x00\x00")
    starts, rows, value_starts, value_lens = reader._cell_layout(tagged, entry)
    assert rows.tolist() == [1, 1] and value_lens.tolist() == [1, 2]
    assert [tagged[s:s + n] for s, n in zip(value_starts, value_lens, strict=True)] == [b"1", b"22"]


def test_corrupt_later_cell_is_named() -> None:
    good = bytearray(write_hfile(_cells(20), compression="NONE"))
    cell = 8 + 12 + 10 + 40 + 1  # each cell: lengths, key, value, MVCC
    at = HEADER_SIZE + 5 * cell + 4
    good[at:at + 4] = struct.pack(">i", -3)  # the sixth cell's value length
    with pytest.raises(HFileFormatError, match=rf"at byte {HEADER_SIZE}: expected cells in the data block, found at "
                                               rf"position {5 * cell} of its uncompressed data: key length 22 for a "
                                               "10-byte row, value length -3"):
        _reader(_with_checksums(good)).read_table()


def test_runs_of_equal_size_cells_between_others() -> None:
    """Fixed-size cells are found a run at a time; runs broken by other sizes, ended by the block's end, or one cell
    short of the patience all read back exactly."""
    cells = [(f"a{i:05d}".encode(), b"v" * 10) for i in range(700)]
    cells += [(f"b{i:05d}".encode() + b"x" * (i % 3), b"w" * (i % 5)) for i in range(50)]
    cells += [(f"c{i:05d}".encode(), b"v" * 10) for i in range(7)]  # shorter than the patience
    cells += [(f"d{i:05d}".encode(), b"v" * 10) for i in range(5000)]
    cells += [(b"e", b"")]
    for block_size in (1 << 20, 5000):
        reader = HFileReader(write_hfile(cells, block_size=block_size), name="runs.hfile")
        table = reader.read_table()
        assert list(zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True)) == cells
