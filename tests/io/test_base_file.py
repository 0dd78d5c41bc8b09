from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import HudiError, WriteError
from hudi_engine.io import base_file
from hudi_engine.io.base_file import (
    BLOOM_FILTER_KEY,
    BLOOM_FILTER_TYPE_CODE_KEY,
    MAX_RECORD_KEY,
    MIN_RECORD_KEY,
    read_base_file,
    read_footer,
    read_record_keys,
    record_key_range,
    write_base_file,
)
from hudi_engine.io.bloom import DYNAMIC_V0, SIMPLE, DynamicBloomFilter, SimpleBloomFilter, new_bloom_filter
from hudi_engine.storage import Storage

CONFORMANCE_V6 = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "v6"
ZIPS = sorted(p.stem for p in CONFORMANCE_V6.glob("*.zip"))

# Python orders these by code point; Java's String.compareTo by UTF-16 unit, where U+FF21 > U+D83D (high
# surrogate of U+1F600), so the non-BMP key is NOT the max for Hudi.
KEYS = ["b", "a", "é", "中文", "😀x", "\uff21", "z"]
JAVA_MIN, JAVA_MAX = "a", "\uff21"


def make_table(keys: list) -> pa.Table:
    n = len(keys)
    return pa.table(
        {
            "_hoodie_commit_time": ["20240101000000000"] * n,
            "_hoodie_commit_seqno": [f"20240101000000000_0_{i}" for i in range(n)],
            "_hoodie_record_key": pa.array(keys, pa.string()),
            "_hoodie_partition_path": ["p=1"] * n,
            "_hoodie_file_name": ["f-0_0-1-1_20240101000000000.parquet"] * n,
            "id": pa.array(range(n), pa.int32()),
            "ts": pa.array([dt.datetime(2024, 1, 1, 12, 0, i) for i in range(n)], pa.timestamp("ns")),
            "price": pa.array([Decimal(f"{i}.25") for i in range(n)], pa.decimal128(10, 2)),
            "nested": pa.array(
                [{"at": dt.datetime(2024, 1, 2)}] * n, pa.struct([("at", pa.timestamp("ms"))])
            ),
            "events": pa.array([[dt.datetime(2024, 1, 3)]] * n, pa.list_(pa.timestamp("ns"))),
            "tags": pa.array([[("k", dt.datetime(2024, 1, 4))]] * n, pa.map_(pa.string(), pa.timestamp("s"))),
        }
    )


@pytest.fixture()
def storage_root(tmp_path: Path) -> tuple[Storage, str]:
    return Storage.for_uri(str(tmp_path))


def test_java_key_order() -> None:
    assert max(KEYS) == "😀x" and min(KEYS) == "a"  # Python (code point) order
    java_sorted = sorted(KEYS, key=lambda s: s.encode("utf-16-be"))
    assert (java_sorted[0], java_sorted[-1]) == (JAVA_MIN, JAVA_MAX)
    assert record_key_range(pa.array(KEYS)) == (JAVA_MIN, JAVA_MAX)
    assert record_key_range(pa.chunked_array([KEYS[:3], KEYS[3:]])) == (JAVA_MIN, JAVA_MAX)
    assert record_key_range(pa.array(["\ue000", "\U0010ffff", "\ud7ff"])) == ("\ud7ff", "\ue000")
    assert record_key_range(pa.array(["zz"] + KEYS).slice(1, 4)) == ("a", "中文")
    assert record_key_range(pa.array([], pa.string())) == (None, None)


def test_write_read_round_trip(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/p=1/f-0_0-1-1_20240101000000000.parquet"
    table = make_table(KEYS)
    result = write_base_file(storage, path, table)
    assert (result.path, result.num_rows, result.min_key, result.max_key) == (path, 7, JAVA_MIN, JAVA_MAX)
    assert result.size == storage.size(path)

    footer = read_footer(storage, path)
    assert (footer.min_key, footer.max_key, footer.num_rows) == (JAVA_MIN, JAVA_MAX, 7)
    assert footer.metadata[BLOOM_FILTER_TYPE_CODE_KEY] == DYNAMIC_V0
    assert isinstance(footer.bloom_filter, DynamicBloomFilter)
    expected = new_bloom_filter()
    expected.add_many(KEYS)
    assert footer.bloom_filter.serialize() == expected.serialize()
    assert all(footer.bloom_filter.might_contain(k) for k in KEYS)
    assert not footer.bloom_filter.might_contain("absent")
    assert footer.schema.names == table.column_names
    assert BLOOM_FILTER_KEY not in (footer.schema.metadata or {})

    # Raw footer as parquet-mr readers see it: the Hudi keys, base64 filter, no copy inside ARROW:schema.
    raw = pq.read_metadata(path).metadata
    assert raw[MIN_RECORD_KEY.encode()] == JAVA_MIN.encode() and raw[MAX_RECORD_KEY.encode()] == JAVA_MAX.encode()
    assert base64.b64decode(raw[BLOOM_FILTER_KEY.encode()]) == expected.serialize()
    assert len(raw.get(b"ARROW:schema", b"")) < 10_000

    back = read_base_file(storage, path)
    assert back.column_names == table.column_names
    assert back.column("_hoodie_record_key").to_pylist() == KEYS
    assert back.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert back.column("ts").to_pylist() == [
        dt.datetime(2024, 1, 1, 12, 0, i, tzinfo=dt.UTC) for i in range(7)
    ]
    assert back.schema.field("nested").type == pa.struct([("at", pa.timestamp("us", tz="UTC"))])
    assert back.schema.field("events").type == pa.list_(pa.timestamp("us", tz="UTC"))
    assert back.schema.field("tags").type == pa.map_(pa.string(), pa.timestamp("us", tz="UTC"))
    assert back.column("tags")[0].as_py() == [("k", dt.datetime(2024, 1, 4, tzinfo=dt.UTC))]
    assert back.column("price").to_pylist() == [Decimal(f"{i}.25") for i in range(7)]

    projected = read_base_file(storage, path, ["_hoodie_record_key", "id"], pc.field("price") > Decimal("3.50"))
    assert projected.column_names == ["_hoodie_record_key", "id"]
    assert projected.column("id").to_pylist() == [4, 5, 6]
    dnf = read_base_file(storage, path, ["id"], [("_hoodie_record_key", "in", ["a", "z"])])
    assert dnf.column("id").to_pylist() == [1, 6]
    assert read_record_keys(storage, path).to_pylist() == KEYS


def test_record_keys_of_a_file_without_the_key_column_are_refused_by_name(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/no_meta.parquet"
    pq.write_table(pa.table({"id": [1, 2]}), path)
    with pytest.raises(HudiError, match="no_meta.parquet has no _hoodie_record_key column"):
        read_record_keys(storage, path)


def test_parquet_physical_layout(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/f.parquet"
    write_base_file(storage, path, make_table(KEYS), row_group_size=3)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups == 3
    schema = pf.schema
    leaves = {schema.column(i).path: schema.column(i) for i in range(len(schema))}
    assert leaves["price"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert leaves["nested.at"].logical_type.to_json() == leaves["ts"].logical_type.to_json()
    ts = leaves["ts"]
    assert ts.physical_type == "INT64"
    logical = json.loads(ts.logical_type.to_json())
    assert (logical["Type"], logical["isAdjustedToUTC"], logical["timeUnit"]) == ("Timestamp", True, "microseconds")
    chunk = pf.metadata.row_group(0).column(2)
    assert chunk.compression == "GZIP" and chunk.statistics.has_min_max
    assert all(schema.column(i).max_definition_level >= 1 for i in range(len(schema)))  # all optional

    write_base_file(storage, path, make_table(KEYS), compression="zstd")
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_few_valued_meta_columns_go_to_the_writer_as_dictionaries_and_change_no_byte(
        storage_root: tuple[Storage, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The partition path, file name and commit times are handed to parquet as dictionary arrays (constant ones
    built without hashing); the file is byte for byte the one the plain strings write, and reads back as strings."""
    storage, root = storage_root
    first, second = make_table(KEYS[:4]), make_table(KEYS[4:])
    mixed = pa.array(["20240101000000000", None, "20230101000000000"], pa.string())  # a merge's kept and new rows
    second = second.set_column(0, "_hoodie_commit_time", mixed)

    def write(path: str) -> bytes:
        writer = base_file.BaseFileWriter(storage, path)
        writer.write(first)
        writer.write(second)
        writer.close()
        return Path(path).read_bytes()

    encoded = write(f"{root}/dictionary.parquet")
    monkeypatch.setattr(base_file, "_for_writer", lambda table: table)
    assert write(f"{root}/plain.parquet") == encoded
    back = pq.read_table(f"{root}/dictionary.parquet")
    assert back.schema.field("_hoodie_file_name").type == pa.string()
    assert back.column("_hoodie_commit_time").to_pylist() == first.column(0).to_pylist() + mixed.to_pylist()
    chunks = [pq.read_metadata(f"{root}/dictionary.parquet").row_group(g).column(4) for g in range(2)]
    assert all("RLE_DICTIONARY" in c.encodings for c in chunks)


def test_few_valued_meta_columns_given_as_dictionaries_read_back_as_strings_with_the_used_values_stats(
        storage_root: tuple[Storage, str]) -> None:
    """Dictionary arrays of differing dictionaries (a merge's batches: the old file's instants and the new one),
    some values unused, go to the file as one dictionary per column chunk: it reads back as the plain strings
    (`ARROW:schema` names them), and its statistics are the values used."""
    storage, root = storage_root
    plain = make_table(KEYS)
    n = plain.num_rows
    old, new = "20240101000000000", "20240202000000000"
    first = pa.DictionaryArray.from_arrays(pa.array([1] * 3, pa.int32()), pa.array([old, new]))  # `old` unused
    second = pa.DictionaryArray.from_arrays(pa.array([0] * (n - 3), pa.int32()), pa.array([new]))
    times = pa.chunked_array([first, second])
    given = plain.set_column(0, pa.field("_hoodie_commit_time", times.type), times)
    given = given.set_column(4, pa.field("_hoodie_file_name", base_file.DICTIONARY_STRING),
                             plain.column(4).dictionary_encode())
    assert base_file.file_schema(plain.schema).field("_hoodie_commit_time").type == base_file.DICTIONARY_STRING
    path = f"{root}/given.parquet"
    write_base_file(storage, path, given)
    back = pq.read_table(path)
    assert back.schema.field("_hoodie_commit_time").type == pa.string()
    assert back.column("_hoodie_commit_time").to_pylist() == [new] * n
    assert back.column("_hoodie_file_name").to_pylist() == plain.column(4).to_pylist()
    chunk = pq.read_metadata(path).row_group(0).column(0)
    assert "RLE_DICTIONARY" in chunk.encodings
    assert (chunk.statistics.min, chunk.statistics.max) == (new, new)


def test_simple_filter_has_no_type_code(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/f.parquet"
    write_base_file(storage, path, make_table(KEYS), bloom_filter_type=SIMPLE)
    footer = read_footer(storage, path)
    assert BLOOM_FILTER_TYPE_CODE_KEY not in footer.metadata
    assert isinstance(footer.bloom_filter, SimpleBloomFilter)
    assert footer.bloom_filter.might_contain_many(KEYS).all()


def test_stale_metadata_is_replaced(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/f.parquet"
    stale = make_table(KEYS).replace_schema_metadata({MIN_RECORD_KEY: "stale", "parquet.avro.schema": "{}"})
    write_base_file(storage, path, stale, extra_metadata={"writer.model.name": "avro"})
    meta = read_footer(storage, path).metadata
    assert meta[MIN_RECORD_KEY] == JAVA_MIN
    assert "parquet.avro.schema" not in meta and meta["writer.model.name"] == "avro"


def test_no_meta_fields_and_bad_input(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    path = f"{root}/f.parquet"
    unpopulated = make_table([None, None])
    with pytest.raises(WriteError, match=r"_hoodie_record_key is null at row 0.*bloom_filter_type=None"):
        write_base_file(storage, path, unpopulated)
    assert not storage.exists(path)
    result = write_base_file(storage, path, unpopulated, bloom_filter_type=None)
    assert (result.min_key, result.max_key) == (None, None)
    footer = read_footer(storage, path)
    assert footer.bloom_filter is None and footer.min_key is None and footer.max_key is None
    assert not any(k.startswith("hoodie") or "bloomfilter" in k for k in footer.metadata)

    with pytest.raises(WriteError, match="first columns must be the Hudi meta columns"):
        write_base_file(storage, path, make_table(KEYS).drop_columns(["_hoodie_commit_seqno"]))
    sub_micro = make_table(["a"]).set_column(6, "ts", pa.array([1], pa.timestamp("ns")))
    with pytest.raises(WriteError, match="microseconds"):
        write_base_file(storage, path, sub_micro)

    empty = write_base_file(storage, f"{root}/empty.parquet", make_table([]))
    assert (empty.num_rows, empty.min_key) == (0, None)
    footer = read_footer(storage, empty.path)
    assert footer.bloom_filter is not None and footer.min_key is None


def test_read_errors(storage_root: tuple[Storage, str]) -> None:
    storage, root = storage_root
    storage.write_bytes(f"{root}/junk.parquet", b"not parquet at all")
    with pytest.raises(HudiError, match="junk.parquet"):
        read_footer(storage, f"{root}/junk.parquet")
    path = f"{root}/f.parquet"
    write_base_file(storage, path, make_table(KEYS))
    with pytest.raises(HudiError, match="f.parquet"):
        read_base_file(storage, path, ["no_such_column"])


@pytest.mark.parametrize("table_name", ZIPS)
def test_conformance_footers(table_name: str, unzip_table, tmp_path: Path) -> None:
    root = unzip_table(table_name)
    storage, _ = Storage.for_uri(str(root))
    files = sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)
    for file in files:
        path = str(file)
        footer = read_footer(storage, path)
        keys = read_record_keys(storage, path)
        assert footer.num_rows == len(keys) == pq.read_metadata(path).num_rows
        if keys.null_count == len(keys):  # hoodie.populate.meta.fields=false
            assert footer.bloom_filter is None and footer.min_key is None and footer.max_key is None
            continue
        plain = keys.to_pylist()  # ASCII keys: Python order is Java order
        assert (footer.min_key, footer.max_key) == record_key_range(keys) == (min(plain), max(plain))
        assert footer.bloom_filter.might_contain_many(keys).all()
        assert footer.bloom_filter.serialize() == base64.b64decode(footer.metadata[BLOOM_FILTER_KEY])

        # Filtered read of a real file, and our rewrite of it carries the same Hudi footer.
        one = keys[0].as_py()
        hit = read_base_file(storage, path, ["_hoodie_record_key"], pc.field("_hoodie_record_key") == one)
        assert hit.column(0).to_pylist() == [one]
        rewritten = str(tmp_path / file.name)
        original = read_base_file(storage, path)
        write_base_file(storage, rewritten, original)
        again = read_footer(storage, rewritten)
        for key in (BLOOM_FILTER_KEY, BLOOM_FILTER_TYPE_CODE_KEY, MIN_RECORD_KEY, MAX_RECORD_KEY):
            assert again.metadata[key] == footer.metadata[key], (path, key)
        assert read_base_file(storage, rewritten).equals(original)


def _parquet_mr_columns(conformance_dir: Path, unzip_table):
    """(file, column name, the column, whether parquet-mr kept its dictionary) for every top-level column of every
    base file of the conformance tables (written by Hudi's parquet-mr) stored as the engine stores that type: not
    INT96 timestamps, not booleans (never dictionary-encoded by either writer)."""
    for z in sorted(conformance_dir.glob("v*/*.zip")):
        for path in sorted(unzip_table(z.stem, z.parent.name).rglob("*.parquet")):
            if ".hoodie" in path.parts:
                continue
            md = pq.read_metadata(path)
            kept = base_file.dictionary_choices(md)
            if not kept:
                continue
            types = {md.schema.column(j).path: md.schema.column(j).physical_type for j in range(md.num_columns)}
            table = pq.read_table(path)
            for name in table.column_names:
                if name.startswith("_hoodie") or name not in kept or types[name] in ("INT96", "BOOLEAN"):
                    continue
                yield path, name, table.column(name), kept[name]


def test_the_dictionary_choice_is_parquet_mrs_on_every_conformance_file(conformance_dir: Path, unzip_table) -> None:
    """parquet-mr writes a column plain when its first page's dictionary and indices are no smaller than the plain
    values (and FIXED_LEN_BYTE_ARRAY decimals always plain); the writer makes the same choice, column by column."""
    checked = 0
    for path, name, column, dictionary in _parquet_mr_columns(conformance_dir, unzip_table):
        assert base_file._dictionary_pays(column) == dictionary, f"{path.name}: column {name}"
        checked += 1
    assert checked > 1000


def test_near_unique_columns_are_written_plain_and_read_back(storage_root: tuple[Storage, str]) -> None:
    """Ids, timestamps and amounts that hardly repeat are written plain (no dictionary built to be dropped, and a
    smaller file); few-valued columns keep their dictionary; the rows read back as written."""
    storage, root = storage_root
    n = 30_000
    keys = [f"k{i:06d}" for i in range(n)]
    meta = make_table(["x"]).select(list(base_file.META_COLUMNS))
    table = pa.table({c: pa.repeat(meta.column(c)[0], n) for c in meta.column_names})
    table = table.set_column(2, "_hoodie_record_key", pa.array(keys)).set_column(
        1, "_hoodie_commit_seqno", pa.array([f"s_{i}" for i in range(n)]))
    table = table.append_column("id", pa.array(range(n), pa.int64())) \
        .append_column("name", pa.array([f"user_{i * 7919 % 1000003}" for i in range(n)])) \
        .append_column("category", pa.array(["a", "b", "c"] * (n // 3))) \
        .append_column("qty", pa.array([i % 50 for i in range(n)], pa.int32())) \
        .append_column("note", pa.nulls(n, pa.string()))
    path = f"{root}/f.parquet"
    write_base_file(storage, path, table)
    plain = {c for c, kept in base_file.dictionary_choices(pq.read_metadata(path)).items() if not kept}
    assert plain == {"_hoodie_commit_seqno", "_hoodie_record_key", "id", "name", "note"}
    assert pq.read_table(path).equals(table)
