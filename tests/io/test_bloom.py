from __future__ import annotations

import base64
import random
import struct
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import HudiError
from hudi_engine.io.bloom import (
    DYNAMIC_V0,
    SIMPLE,
    DynamicBloomFilter,
    SimpleBloomFilter,
    hadoop_murmur_hash,
    hash_positions,
    key_positions,
    new_bloom_filter,
    optimal_bit_size,
    optimal_num_hashes,
    parse_bloom_filter,
)

CONFORMANCE_V6 = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "v6"
ZIPS = sorted(p.stem for p in CONFORMANCE_V6.glob("*.zip"))
BLOOM_KEY = b"org.apache.hudi.bloomfilter"


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)


# ---------------------------------------------------------------------------------------------- murmur

# Values of the Hadoop hash. The ASCII ones are pinned by the real footers: each key's chained positions are
# exactly the bits set in the filters of the conformance files (test_conformance_filters_rebuild_byte_for_byte).
KNOWN = [
    (b"", 0, 0),
    (b"", -1, -1285986640),
    (b"1", 0, 1228156847),
    (b"1", 1228156847, 121740187),
    (b"id", 0, 2091562103),
    (b"abc", 0, 1775488903),
    (b"abcd", 0, 646393889),
    (b"abcd", 646393889, -524664927),
    (b"id:2,name:Bob", 0, -1183384649),
    (b"id:2,name:Bob", -1183384649, 581422176),
    (b"3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", 0, 1410745875),
    (b"3eeb61f7-c2b0-4636-99bd-5d7a5a1d2c04", 1410745875, -1275586038),
    # Non-ASCII tails exercise the sign-extended Java bytes (no real footer has such keys; regression values).
    ("é".encode(), 0, -384040333),
    ("a中".encode(), 0, 518180808),
    ("😀".encode(), 0, -842402043),
]


@pytest.mark.parametrize(("data", "seed", "expected"), KNOWN)
def test_murmur_known_values(data: bytes, seed: int, expected: int) -> None:
    assert hadoop_murmur_hash(data, seed) == expected


def _textbook_murmur2(data: bytes, seed: int) -> int:
    """MurmurHash2 with the reference tail order and unsigned bytes: what Hadoop is NOT."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    n = len(data)
    h = (seed ^ n) & mask
    i = 0
    while n - i >= 4:
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = ((h * m) & mask) ^ k
        i += 4
    left = n - i
    if left >= 3:
        h ^= data[i + 2] << 16
    if left >= 2:
        h ^= data[i + 1] << 8
    if left >= 1:
        h ^= data[i]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def test_murmur_tail_is_end_indexed_and_sign_extended() -> None:
    # ASCII keys: same as the textbook hash only when the tail has 0 or 1 bytes (Hadoop's takes the tail from the end).
    for key in [b"abcd", b"abcde", b"abcdefgh", b"x"]:
        assert hadoop_murmur_hash(key, 7) == _textbook_murmur2(key, 7)
    for key in [b"ab", b"abc", b"abcdef", b"abcdefg"]:
        assert hadoop_murmur_hash(key, 7) != _textbook_murmur2(key, 7)
    # A one-byte tail >= 0x80 differs only by sign extension.
    assert hadoop_murmur_hash(b"\xe9", 0) != _textbook_murmur2(b"\xe9", 0)
    assert all(-(1 << 31) <= hadoop_murmur_hash(bytes([b]) * 3, b) < (1 << 31) for b in range(256))


def test_hash_positions_java_abs_mod() -> None:
    h = hadoop_murmur_hash(b"id:2,name:Bob", 0)
    assert h < 0
    assert hash_positions(b"id:2,name:Bob", 1, 2587966) == [abs(h) % 2587966]
    # Chained: the i-th hash is seeded with the (i-1)-th.
    chained, seed = [], 0
    for _ in range(30):
        seed = hadoop_murmur_hash(b"1", seed)
        chained.append(abs(seed) % 2587966)
    assert hash_positions(b"1", 30, 2587966) == chained


def test_vectorized_positions_equal_scalar() -> None:
    rng = random.Random(7)
    alphabet = "abcXYZ019:,_-é中😀\u0080\uffff"
    keys = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 23))) for _ in range(3000)]
    seen = set()
    for idx, positions in key_positions(keys, 30, 2587966):
        assert positions.shape == (30, len(idx))
        for j, i in enumerate(idx):
            seen.add(int(i))
            assert positions[:, j].tolist() == hash_positions(keys[i].encode("utf-8"), 30, 2587966)
    assert seen == set(range(len(keys)))


# ---------------------------------------------------------------------------------------------- sizing / layout


def test_default_sizing() -> None:
    assert optimal_bit_size(60000, 1e-9) == 2587966
    assert optimal_num_hashes(60000, 2587966) == 30
    f = new_bloom_filter()
    assert isinstance(f, DynamicBloomFilter) and f.type_code == DYNAMIC_V0
    assert (f.num_hashes, f.vector_size, f.num_entries, f.max_entries) == (30, 2587966, 60000, 100000)


def test_simple_round_trip() -> None:
    f = new_bloom_filter(filter_type=SIMPLE)
    assert isinstance(f, SimpleBloomFilter) and f.type_code == SIMPLE
    keys = [f"key-{i}" for i in range(1000)]
    f.add_many(keys[:500])
    for k in keys[500:]:
        f.add(k)
    data = f.serialize()
    assert data[:13] == struct.pack(">iibi", -1, 30, 1, 2587966)
    assert len(data) == 13 + 323496
    parsed = parse_bloom_filter(data, None)  # no type code in the footer means SIMPLE
    assert isinstance(parsed, SimpleBloomFilter)
    assert parsed.serialize() == data and parsed == f
    assert parse_bloom_filter(f.to_base64(), SIMPLE).serialize() == data
    assert parse_bloom_filter(f.to_base64().encode(), SIMPLE).serialize() == data  # footer value bytes
    assert all(parsed.might_contain(k) for k in keys)
    assert parsed.might_contain_many(keys).all()
    assert not parsed.might_contain_many([f"other-{i}" for i in range(5000)]).any()
    assert 0 < parsed.bit_count() <= 30 * len(keys)


def test_dynamic_layout_header() -> None:
    f = new_bloom_filter()
    f.add_many(["1", "2", "3", "4"])
    data = f.serialize()
    # As in a real filter of 4 keys: outer header, nr, count, one row.
    assert data[:25].hex() == "ffffffff0000001e0100277d3e" + "0000ea60" + "00000004" + "00000001"
    assert data[25:38] == data[:13]
    assert len(data) == 323534 and len(f.to_base64()) == 431380
    assert f.bit_count() == 4 * 30


def test_dynamic_growth_with_defaults() -> None:
    keys = pa.array([f"k{i:07d}" for i in range(60001)])
    f = new_bloom_filter()
    f.add_many(keys.slice(0, 60000))
    assert (f.num_rows, f.current_count) == (1, 60000)
    f.add_many(keys.slice(60000))  # the 60001st key opens the second row
    assert (f.num_rows, f.current_count) == (2, 1)
    data = f.serialize()
    assert struct.unpack_from(">iii", data, 13) == (60000, 1, 2)
    assert len(data) == 25 + 2 * (13 + 323496)
    parsed = parse_bloom_filter(data, DYNAMIC_V0)
    assert parsed.serialize() == data
    assert parsed.might_contain_many(keys).all()
    # The second row holds exactly the last key.
    last = hash_positions(b"k0060000", 30, 2587966)
    row2 = np.unpackbits(np.frombuffer(data[-323496:], np.uint8), bitorder="little")
    assert set(np.flatnonzero(row2).tolist()) == set(last)


def test_dynamic_bounded_round_robin() -> None:
    # nr=10, maxNr=25: rows are added while rows*nr < maxNr, i.e. up to 3 rows; then keys go round-robin,
    # the first one to row 0 and then rows 0, 1, 2, 0, ... (Hadoop's curMatrixIndex++), and the count keeps growing.
    keys = [f"key{i}" for i in range(40)]
    one_by_one = new_bloom_filter(num_entries=10, fpp=0.01, max_entries=25)
    rows_seen = []
    for k in keys:
        one_by_one.add(k)
        rows_seen.append(one_by_one.num_rows)
    assert rows_seen[9] == 1 and rows_seen[10] == 2 and rows_seen[20] == 3 and rows_seen[-1] == 3
    assert one_by_one.current_count == 20
    batched = new_bloom_filter(num_entries=10, fpp=0.01, max_entries=25)
    for start in (0, 7, 19, 31):
        batched.add_many(keys[start : {0: 7, 7: 19, 19: 31, 31: 40}[start]])
    assert batched.serialize() == one_by_one.serialize()
    whole = new_bloom_filter(num_entries=10, fpp=0.01, max_entries=25)
    whole.add_many(keys)
    assert whole.serialize() == one_by_one.serialize()

    expected_rows = [0] * 10 + [1] * 10 + [2] * 10 + [0, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    rows = [SimpleBloomFilter(10, 0.01) for _ in range(3)]  # a matrix row is serialized as a SIMPLE filter
    for k, r in zip(keys, expected_rows):
        rows[r].add(k)
    data = whole.serialize()
    assert struct.unpack_from(">iii", data, 13) == (10, 20, 3)
    row_len = 13 + (whole.vector_size + 7) // 8
    for r in range(3):
        assert data[25 + r * row_len : 25 + (r + 1) * row_len] == rows[r].serialize()
    assert whole.might_contain_many(keys).all()


@pytest.mark.parametrize("n", [5, 30, 200])
def test_false_positive_rate_follows_the_fill(n: int) -> None:
    f = new_bloom_filter(num_entries=10, fpp=0.05, max_entries=25)
    f.add_many([f"key{i}" for i in range(n)])
    absent = f.might_contain_many([f"other{i}" for i in range(20000)]).mean()
    assert abs(f.false_positive_rate() - absent) < 0.02 + 0.2 * absent
    assert (f.false_positive_rate() > 0.9) == (n == 200)


def test_parse_errors() -> None:
    good = new_bloom_filter().serialize()
    with pytest.raises(HudiError, match="trailing"):
        parse_bloom_filter(good + b"\x00", DYNAMIC_V0)
    with pytest.raises(HudiError, match="needs 323496 bytes"):
        parse_bloom_filter(good[:-1], DYNAMIC_V0)
    with pytest.raises(HudiError, match="JENKINS"):
        parse_bloom_filter(struct.pack(">i", 5) + good[4:], DYNAMIC_V0)
    with pytest.raises(HudiError, match="hash type 0"):
        parse_bloom_filter(good[:8] + b"\x00" + good[9:], DYNAMIC_V0)
    with pytest.raises(HudiError, match="unknown bloom filter type code 'BOGUS'"):
        parse_bloom_filter(good, "BOGUS")
    with pytest.raises(HudiError, match="base64"):
        parse_bloom_filter("not base64!", DYNAMIC_V0)
    with pytest.raises(HudiError, match="null"):
        new_bloom_filter().add_many(pa.array(["a", None]))
    with pytest.raises(HudiError, match="fpp"):
        new_bloom_filter(fpp=1.5)
    with pytest.raises(HudiError, match="unknown bloom filter type"):
        new_bloom_filter(filter_type="DYNAMIC_V1")


def test_key_inputs_are_equivalent() -> None:
    keys = ["a", "bb", "ccc", "dddd", "é", "😀"]
    ref = new_bloom_filter()
    ref.add_many(keys)
    for variant in (
        pa.array(keys),
        pa.array(keys, pa.large_string()),
        pa.chunked_array([keys[:2], keys[2:]]),
        pa.array(["x"] + keys).slice(1),
        iter(keys),
        tuple(keys),
    ):
        f = new_bloom_filter()
        f.add_many(variant)
        assert f.serialize() == ref.serialize(), variant


def test_build_speed() -> None:
    keys = pa.array([str(uuid.UUID(int=random.getrandbits(128))) for _ in range(200_000)])
    f = new_bloom_filter()
    start = time.perf_counter()
    f.add_many(keys)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0, f"200k keys took {elapsed:.2f}s"
    # Bounded at 2 rows (2 * 60000 >= 100000); the count of the last row keeps growing past nr, as in Java.
    assert (f.num_rows, f.current_count) == (2, 200_000 - 60000)


# ---------------------------------------------------------------------------------------------- real footers


def test_conformance_inventory(conformance_dir: Path, unzip_table) -> None:
    zips = sorted(p.stem for p in (conformance_dir / "v6").glob("*.zip"))
    assert zips == ZIPS and len(zips) >= 13
    with_bloom = without = 0
    for name in zips:
        for path in data_files(unzip_table(name)):
            if BLOOM_KEY in pq.read_metadata(path).metadata:
                with_bloom += 1
            else:
                without += 1
    assert (with_bloom, without) == (30, 6)


@pytest.mark.parametrize("table_name", ZIPS)
def test_conformance_filters_rebuild_byte_for_byte(table_name: str, unzip_table) -> None:
    rng = random.Random(table_name)
    for path in data_files(unzip_table(table_name)):
        footer = pq.read_metadata(path).metadata
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0)
        if keys.null_count == len(keys):
            # hoodie.populate.meta.fields=false: no filter and no key range in the footer.
            assert not any(k.startswith(b"hoodie") or k == BLOOM_KEY for k in footer), path
            continue
        assert keys.null_count == 0, path
        type_code = footer.get(b"hoodie_bloom_filter_type_code", b"").decode() or None
        assert type_code == DYNAMIC_V0, path
        stored = base64.b64decode(footer[BLOOM_KEY])

        built = new_bloom_filter(filter_type=type_code)
        built.add_many(keys)
        assert built.serialize() == stored, path
        assert built.to_base64().encode() == footer[BLOOM_KEY], path
        one_by_one = new_bloom_filter(filter_type=type_code)
        for k in keys.to_pylist():
            one_by_one.add(k)
        assert one_by_one.serialize() == stored, path

        parsed = parse_bloom_filter(footer[BLOOM_KEY].decode(), type_code)
        assert parsed.serialize() == stored
        assert parsed.current_count == len(keys) and parsed.num_rows == 1
        assert parsed.bit_count() <= 30 * len(keys)
        assert all(parsed.might_contain(k) for k in keys.to_pylist())
        assert parsed.might_contain_many(keys).all()
        strangers = [f"{k}#{rng.random()}" for k in keys.to_pylist() for _ in range(500)]
        assert not parsed.might_contain_many(strangers).any(), path
