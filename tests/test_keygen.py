from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import KeyGeneratorError
from hudi_engine.io.log_block import BlockType, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.java_properties import parse_properties
from hudi_engine.keygen import (
    COMPLEX,
    NONPARTITIONED,
    SIMPLE,
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
    infer_key_generator_class,
    key_generator_for,
    key_generator_from_config,
)
from hudi_engine.location import TableLocation
from hudi_engine.partition_path import DEFAULT_PARTITION
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig

WITH_META = [
    "cow_v6_complexkeygen_hivestyle",
    "cow_v6_nonpartitioned",
    "cow_v6_simplekeygen_nonhivestyle",
    "cow_v6_simplekeygen_nonhivestyle_overwritetable",
    "mor_avrolog_v6_trips_8i1u",
    "mor_parquetlog_v6_complexkeygen_hivestyle",
    "mor_parquetlog_v6_nonpartitioned",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle_overwritetable",
]
NO_META = ["cow_v6_simplekeygen_hivestyle_no_metafields", "mor_parquetlog_v6_simplekeygen_hivestyle_no_metafields"]
TIMESTAMP_TABLES = [  # Hudi 1.x tables; the timestamp key generator semantics are the same as 0.14/0.15
    "cow_v8_timebasedkeygen_nonhivestyle",
    "cow_v9_timebasedkeygen_epochmillis",
    "cow_v9_timebasedkeygen_unixtimestamp",
    "cow_v9_timebasedkeygen_nonhivestyle",
    "mor_avrolog_v9_timebasedkeygen_nonhivestyle",
]


def _config(base: Path) -> TableConfig:
    storage, path = Storage.for_uri(str(base))
    return TableConfig.load(TableLocation.at(storage, path))


def _data_with_meta(base: Path) -> list[tuple[str, pa.Table]]:
    """(file, rows) of every base file and every data block of every log file."""
    out = [(str(f), pq.read_table(f)) for f in sorted(base.rglob("*.parquet"))]
    for f in sorted(base.rglob(".*.log.*")):
        for block in read_log_blocks(f.read_bytes(), file_name=f.name):
            if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                out.append((f"{f}@{block.offset}", data_block_records(block)))
    return out


@pytest.mark.parametrize("name", WITH_META)
def test_recompute_meta_columns_of_real_tables(unzip_table, name):
    base = unzip_table(name)
    keygen = key_generator_from_config(_config(base))
    checked = 0
    for source, table in _data_with_meta(base):
        expected_keys = table.column("_hoodie_record_key").combine_chunks()
        expected_paths = table.column("_hoodie_partition_path").combine_chunks()
        assert expected_keys.null_count == 0
        assert keygen.record_keys(table).equals(expected_keys), source
        assert keygen.partition_paths(table).equals(expected_paths), source
        for path in set(expected_paths.to_pylist()):
            assert set(keygen.parse_partition_path(path).values()) <= {str(v) for v in _partition_values(table, keygen)}
        checked += table.num_rows
    assert checked > 0


def _partition_values(table: pa.Table, keygen) -> set:
    return {v for f in keygen.partition_fields for v in table.column(f).to_pylist()}


@pytest.mark.parametrize("name", NO_META)
def test_tables_without_meta_fields(unzip_table, name):
    base = unzip_table(name)
    config = _config(base)
    keygen = key_generator_from_config(config)
    assert isinstance(keygen, SimpleKeyGenerator)
    keys = []
    for f in base.rglob("*.parquet"):
        table = pq.read_table(f)
        assert table.column("_hoodie_record_key").null_count == table.num_rows  # meta columns hold nulls
        paths = keygen.partition_paths(table).to_pylist()
        assert set(paths) == {f.parent.relative_to(base).as_posix()}
        keys += keygen.record_keys(table).to_pylist()
    assert len(keys) == len(set(keys)) == 4


@pytest.mark.parametrize("name", TIMESTAMP_TABLES)
def test_timestamp_keygen_on_real_tables(unzip_table, name):
    base = unzip_table(name, "v8_v9")
    props = parse_properties((base / ".hoodie" / "hoodie.properties").read_bytes())
    keygen = key_generator_for(
        props.get("hoodie.table.keygenerator.class") or props["hoodie.table.keygenerator.type"],
        props["hoodie.table.recordkey.fields"].split(","),
        props["hoodie.table.partition.fields"].split(","),
        props,
        hive_style=props["hoodie.datasource.write.hive_style_partitioning"] == "true",
        url_encode=props["hoodie.datasource.write.partitionpath.urlencode"] == "true",
    )
    assert isinstance(keygen, TimestampBasedKeyGenerator)
    checked = 0
    for source, table in _data_with_meta(base):
        if table.num_rows == 0:
            continue
        assert keygen.record_keys(table).equals(table.column("_hoodie_record_key").combine_chunks()), source
        paths = keygen.partition_paths(table)
        assert paths.equals(table.column("_hoodie_partition_path").combine_chunks()), source
        # read side: the partition value parses back to the start of its period
        start = keygen.partition_timestamp(paths[0].as_py())
        assert start.tzinfo is not None and start.minute == 0
        checked += table.num_rows
    assert checked > 0


# ------------------------------------------------------------------ record keys


def test_simple_key_errors_name_column_and_row():
    table = pa.table({"id": [1, None, 3], "other": ["a", "b", "c"]})
    with pytest.raises(KeyGeneratorError, match=r"record key field 'id' is null or empty in row 1: \{'id': None, 'other': 'b'\}"):
        SimpleKeyGenerator(["id"]).record_keys(table)
    with pytest.raises(KeyGeneratorError, match="'other' is null or empty in row 2"):
        SimpleKeyGenerator(["other"]).record_keys(pa.table({"other": ["a", "b", ""]}))


def test_complex_keys_placeholders_and_errors():
    table = pa.table({"id": [1, None, None, 4], "name": ["a", "", "c", None]})
    keygen = ComplexKeyGenerator(["id", "name"], ["id"])
    good = table.slice(2, 2)
    assert keygen.record_keys(good).to_pylist() == ["id:__null__,name:c", "id:4,name:__null__"]
    assert ComplexKeyGenerator(["id"]).record_keys(table.slice(0, 1)).to_pylist() == ["id:1"]
    with pytest.raises(KeyGeneratorError, match=r"\['id', 'name'\] are all null or empty in row 1: \{'id': None, 'name': ''\}"):
        keygen.record_keys(table)


def test_nonpartitioned_and_global_delete():
    table = pa.table({"a": [1, 2], "b": ["x", "y"]})
    assert NonpartitionedKeyGenerator(["a"], ["b"]).record_keys(table).to_pylist() == ["1", "2"]
    assert NonpartitionedKeyGenerator(["a", "b"]).record_keys(table).to_pylist() == ["a:1,b:x", "a:2,b:y"]
    assert NonpartitionedKeyGenerator(["a"], ["b"]).partition_paths(table).to_pylist() == ["", ""]
    assert GlobalDeleteKeyGenerator(["a"], ["b"]).record_keys(table).to_pylist() == ["a:1", "a:2"]
    assert GlobalDeleteKeyGenerator(["a"], ["b"]).partition_paths(table).to_pylist() == ["", ""]


def test_key_generator_for_and_inference():
    assert infer_key_generator_class(["id"], []) == NONPARTITIONED
    assert infer_key_generator_class(["id"], ["p"]) == SIMPLE
    assert infer_key_generator_class(["id", "x"], ["p"]) == COMPLEX
    assert infer_key_generator_class(["id"], ["p", "q"]) == COMPLEX
    # Keyless tables: by the partition fields alone (KeyGenUtils.inferKeyGeneratorTypeFromPartitionFields).
    assert infer_key_generator_class([], []) == NONPARTITIONED
    assert infer_key_generator_class([], ["p"]) == SIMPLE
    assert infer_key_generator_class([], ["p", "q"]) == COMPLEX
    assert isinstance(key_generator_for(None, ["id"], ["p"]), SimpleKeyGenerator)
    assert isinstance(key_generator_for("org.apache.hudi.keygen.ComplexAvroKeyGenerator", ["id"], []), ComplexKeyGenerator)
    assert isinstance(key_generator_for("NON_PARTITION", ["id"], []), NonpartitionedKeyGenerator)
    with pytest.raises(KeyGeneratorError, match="'com.acme.MyKeyGen' is not supported"):
        key_generator_for("com.acme.MyKeyGen", ["id"], [])
    with pytest.raises(KeyGeneratorError, match="takes one record key field"):
        key_generator_for(SIMPLE, ["a", "b"], ["p"])
    with pytest.raises(KeyGeneratorError, match="no record key fields"):
        key_generator_for(SIMPLE, [], ["p"]).record_keys(pa.table({"p": [1]}))
    with pytest.raises(KeyGeneratorError, match="'nope' is not a column"):
        key_generator_for(SIMPLE, ["nope"], []).record_keys(pa.table({"p": [1]}))


def test_keys_of_typed_and_nested_columns():
    table = pa.table(
        {
            "d": pa.array([dt.date(2024, 1, 2)]),
            "f": pa.array([1.5], pa.float64()),
            "b": pa.array([True]),
            "s": pa.array([{"inner": 7}]),
        }
    )
    keygen = ComplexKeyGenerator(["d", "f", "b", "s.inner"], ["b"], hive_style=True)
    assert keygen.record_keys(table).to_pylist() == ["d:2024-01-02,f:1.5,b:true,s.inner:7"]
    assert keygen.partition_paths(table).to_pylist() == ["b=true"]


def test_partition_paths_defaults_and_url_encoding():
    table = pa.table({"id": [1, 2, 3], "p": ["a/b", None, ""]})
    keygen = SimpleKeyGenerator(["id"], ["p"], hive_style=True, url_encode=True)
    assert keygen.partition_paths(table).to_pylist() == ["p=a%2Fb", f"p={DEFAULT_PARTITION}", f"p={DEFAULT_PARTITION}"]
    assert keygen.parse_partition_path("p=a%2Fb") == {"p": "a/b"}
    assert keygen.parse_partition_path(f"p={DEFAULT_PARTITION}") == {"p": None}


def test_vectorized_speed():
    n = 200_000
    table = pa.table({"id": pa.array(range(n)), "name": pa.array([f"n{i % 97}" for i in range(n)]), "p": pa.array([i % 7 for i in range(n)])})
    start = time.perf_counter()
    keys = ComplexKeyGenerator(["id", "name"], ["p", "name"], hive_style=True).record_keys(table)
    paths = ComplexKeyGenerator(["id", "name"], ["p", "name"], hive_style=True).partition_paths(table)
    assert time.perf_counter() - start < 2.0
    assert keys[5].as_py() == "id:5,name:n5" and paths[8].as_py() == "p=1/name=n8"


# ------------------------------------------------------------------ ambiguous composite keys


def _hudi_key(fields, values) -> str:
    """KeyGenerator.constructRecordKey, one row at a time: the reference the vectorized keys must equal."""
    return ",".join(f"{f}:{'__null__' if v is None else '__empty__' if v == '' else v}" for f, v in zip(fields, values))


def _keys(fields, rows):
    table = pa.table({f: pa.array([r[i] for r in rows], pa.string()) for i, f in enumerate(fields)})
    return ComplexKeyGenerator(fields).record_keys(table).to_pylist()


def test_separator_collisions_are_refused_naming_fields_values_and_both_readings():
    # The rows: two different value pairs, one key.
    for row in [("1,b:2", "3"), ("1", "2,b:3")]:
        with pytest.raises(KeyGeneratorError) as e:
            _keys(["a", "b"], [("x", "y"), row])
        message = str(e.value)
        assert "record key fields ['a', 'b'] (ComplexKeyGenerator)" in message
        assert "in row 1 make the key 'a:1,b:2,b:3'" in message
        assert "reads both as (a='1', b='2,b:3') and as (a='1,b:2', b='3')" in message
        assert f"Row: {{'a': {row[0]!r}, 'b': {row[1]!r}}}" in message


@pytest.mark.parametrize("row,what", [(("p", "__null__"), "a null 'b'"), (("p", "__empty__"), "an empty 'b'"),
                                      (("__null__", "q"), "a null 'a'")])
def test_placeholder_literals_are_refused(row, what):
    assert _keys(["a", "b"], [("p", None)]) == [_hudi_key("ab", ("p", None))] == ["a:p,b:__null__"]
    with pytest.raises(KeyGeneratorError, match=f"has the value {row[1] if row[0] == 'p' else row[0]!r} in row 0, "
                                                f"which is how Hudi writes {what}"):
        _keys(["a", "b"], [row])


def test_unambiguous_keys_are_hudis_keys_byte_for_byte():
    cases = {
        ("a", "b"): [("x,y", "12:30"), ("1", ",b:"), (",b:", "1"), ("a:1", "b"), ("1,", ":2"), ("é,ü", "x,b"),
                     ("1", None), ("", "2"), ("x\n,b", "y"), ("x,bb:1", "y"), ("x,B:1", "y")],
        ("a", "b", "c"): [("1", "2", "x,b:y"), ("1,c", ":2", "3"), ("1", "2", ",a:x")],
    }
    for fields, rows in cases.items():
        assert _keys(list(fields), rows) == [_hudi_key(fields, r) for r in rows]


def test_every_refused_key_has_another_reading_and_accepted_keys_never_collide():
    """Exhaustive over tricky values: a refused row's key is also the key of the other tuple the message names (so
    refusing it is needed), and no two accepted rows share a key (so refusing the others is enough)."""
    import ast
    import itertools
    import re as regex

    values = [None, "", "a", "b", ",", ":", "__null__", "__empty__", ",b:", "1,b:2", ",c:", "x,c:y", "b:", ",b"]
    refused = {"placeholder": 0, "separator": 0}
    for fields in (["a", "b"], ["a", "b", "c"]):
        accepted: dict[str, tuple] = {}
        for row in itertools.product(values, repeat=len(fields)):
            if all(v in (None, "") for v in row):
                continue  # all null or empty: refused for another reason
            try:
                (key,) = _keys(fields, [row])
            except KeyGeneratorError as e:
                message = str(e)
                readings = regex.findall(r"\((" + "=.*?, ".join(fields) + r"=.*?)\)", message)
                if "which is how Hudi writes" in message:
                    field = regex.search(r"field '(\w)' has the value", message).group(1)
                    other = tuple(None if f == field and v == "__null__" else "" if f == field else v
                                  for f, v in zip(fields, row))
                    assert other != row and _hudi_key(fields, other) == _hudi_key(fields, row), (row, message)
                    refused["placeholder"] += 1
                else:
                    assert len(readings) == 2, message
                    for text in readings:
                        parsed = tuple(ast.literal_eval(v) for v in regex.findall(r"=('(?:[^'\\]|\\.)*')", text))
                        assert _hudi_key(fields, parsed) == _hudi_key(fields, row), (row, parsed)
                    assert readings[0] != readings[1]
                    refused["separator"] += 1
                continue
            assert key == _hudi_key(fields, row)
            assert key not in accepted, f"{row} and {accepted.get(key)} share the key {key!r}"
            accepted[key] = row
    assert min(refused.values()) > 100, refused


def test_other_key_generators_with_several_key_fields_refuse_too_and_stored_keys_are_never_refused():
    table = pa.table({"a": ["1,b:2"], "b": ["3"], "p": ["x"]})
    for keygen in (NonpartitionedKeyGenerator(["a", "b"]), GlobalDeleteKeyGenerator(["a", "b"]),
                   CustomKeyGenerator(["a", "b"], ["p:SIMPLE"])):
        with pytest.raises(KeyGeneratorError, match=f"\\({type(keygen).__name__}\\)"):
            keygen.record_keys(table)
        assert keygen.stored_record_keys(table).to_pylist() == ["a:1,b:2,b:3"]
    assert CustomKeyGenerator(["a"], ["p:SIMPLE"]).record_keys(table).to_pylist() == ["1,b:2"]  # one field: the value


def test_the_ambiguity_check_is_vectorized():
    n = 200_000
    names = pa.array([f"n{i % 97},x:{i}" for i in range(n)])  # commas and colons everywhere, never ambiguous
    table = pa.table({"id": pa.array(range(n)), "name": names})
    keygen = ComplexKeyGenerator(["id", "name"])
    start = time.perf_counter()
    keys = keygen.record_keys(table)
    checked = time.perf_counter() - start
    start = time.perf_counter()
    keygen.stored_record_keys(table)
    unchecked = time.perf_counter() - start
    assert keys[5].as_py() == "id:5,name:n5,x:5"
    assert checked < 2.0 and checked < 3 * unchecked + 0.2, (checked, unchecked)
    tricky = table.set_column(1, "name", pa.array([f"v,name:{i}" for i in range(n)]))  # every row: the exact test
    start = time.perf_counter()
    with pytest.raises(KeyGeneratorError, match=r"\(200000 row\(s\) affected\)"):
        keygen.record_keys(tricky)
    assert time.perf_counter() - start < 3.0


# ------------------------------------------------------------------ timestamp based


def _ts(props: dict, **kw) -> TimestampBasedKeyGenerator:
    return TimestampBasedKeyGenerator(["id"], ["t"], props, **kw)


def test_timestamp_epoch_units():
    base_props = {"hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH"}
    instant = dt.datetime(2023, 4, 1, 12, 30, tzinfo=dt.UTC)
    seconds = int(instant.timestamp())
    cases = [
        ("UNIX_TIMESTAMP", {}, seconds),
        ("EPOCHMILLISECONDS", {}, seconds * 1000),
        ("EPOCHMICROSECONDS", {}, seconds * 1_000_000),
        ("SCALAR", {"hoodie.keygen.timebased.timestamp.scalar.time.unit": "DAYS"}, seconds // 86400),
    ]
    for kind, extra, value in cases:
        props = {**base_props, "hoodie.keygen.timebased.timestamp.type": kind, **extra}
        table = pa.table({"id": [1, 2], "t": pa.array([value, None], pa.int64())})
        expected = ["2023/04/01/00", "1970/01/02/00"] if kind == "SCALAR" else ["2023/04/01/12", "1970/01/01/00"]
        # a null partition value stands for epoch + 1 unit (1 day for SCALAR DAYS), like getDefaultPartitionVal
        assert _ts(props).partition_paths(table).to_pylist() == expected, kind
    # old deltastreamer key names work too
    old = {"hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
           "hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyyMMdd"}
    assert _ts(old).partition_paths(pa.table({"id": [1], "t": [0]})).to_pylist() == ["19700101"]


def test_timestamp_columns_dates_and_zones():
    props = {
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMICROSECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd HH:mm",
        "hoodie.keygen.timebased.output.timezone": "Asia/Kolkata",
    }
    ts = pa.array([dt.datetime(2023, 4, 1, 20, 0)], pa.timestamp("us", tz="UTC"))
    table = pa.table({"id": [1], "t": ts})
    assert _ts(props).partition_paths(table).to_pylist() == ["2023-04-02 01:30"]
    assert _ts(props, hive_style=True, url_encode=True).partition_paths(table).to_pylist() == ["t=2023-04-02 01%3A30"]
    days = {"hoodie.keygen.timebased.timestamp.type": "SCALAR",
            "hoodie.keygen.timebased.timestamp.scalar.time.unit": "DAYS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"}
    assert _ts(days).partition_paths(pa.table({"id": [1], "t": [dt.date(2024, 2, 29)]})).to_pylist() == ["2024/02/29"]


def test_timestamp_date_strings():
    props = {
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ,yyyy-MM-dd HH,dd/MMM/yy",
        "hoodie.keygen.timebased.input.timezone": "America/New_York",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH 'h' EEE",
    }
    table = pa.table({"id": [1, 2, 3, 4], "t": ["2023-04-01T12:01:00.123+05:30", "2023-04-01 12", "05/Jan/21", None]})
    assert _ts(props).partition_paths(table).to_pylist() == [
        "2023/04/01/06 h Sat", "2023/04/01/16 h Sat", "2021/01/05/05 h Tue", "1970/01/01/00 h Thu",
    ]
    with pytest.raises(KeyGeneratorError, match=r"value 'garbage' in row 0 does not match"):
        _ts(props).partition_paths(pa.table({"id": [1], "t": ["garbage"]}))


def test_timestamp_config_errors():
    with pytest.raises(KeyGeneratorError, match="output.dateformat is not set"):
        _ts({"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS"})
    no_type = _ts({"hoodie.keygen.timebased.output.dateformat": "yyyy"})
    with pytest.raises(KeyGeneratorError, match="timestamp.type is not set .*pass it with the write options"):
        no_type.partition_paths(pa.table({"id": [1], "t": [0]}))
    assert no_type.parse_partition_path("2023") == {"t": "2023"}  # the read side needs no type
    with pytest.raises(KeyGeneratorError, match="MIXED"):
        _ts({"hoodie.keygen.timebased.timestamp.type": "MIXED", "hoodie.keygen.timebased.output.dateformat": "yyyy"})
    with pytest.raises(KeyGeneratorError, match="pattern letter 'Q'"):
        _ts({"hoodie.keygen.timebased.output.dateformat": "yyyyQ"})
    with pytest.raises(KeyGeneratorError, match="not a known time zone"):
        _ts({"hoodie.keygen.timebased.output.dateformat": "yyyy", "hoodie.keygen.timebased.timezone": "Mars/Base"})
    with pytest.raises(KeyGeneratorError, match="exactly one partition field"):
        TimestampBasedKeyGenerator(["id"], [], {"hoodie.keygen.timebased.output.dateformat": "yyyy"})
    numbers = _ts({"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                   "hoodie.keygen.timebased.output.dateformat": "yyyy"})
    with pytest.raises(KeyGeneratorError, match="'x1' in row 0 is not a number"):
        numbers.partition_paths(pa.table({"id": [1], "t": ["x1"]}))


def test_timestamp_read_side():
    keygen = _ts({"hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
                  "hoodie.keygen.timebased.output.timezone": "Asia/Kolkata"}, hive_style=True)
    assert keygen.parse_partition_path("t=2023/04/01/12") == {"t": "2023/04/01/12"}
    assert keygen.partition_timestamp("t=2023/04/01/12") == dt.datetime(2023, 4, 1, 6, 30, tzinfo=dt.UTC)
    with pytest.raises(KeyGeneratorError, match="does not match"):
        keygen.partition_timestamp("t=2023-04-01")


def test_custom_key_generator():
    props = {
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd",
        "hoodie.datasource.write.partitionpath.field": "region:simple,t:timestamp",
    }
    table = pa.table({"id": [1], "region": ["eu"], "t": [86_400_000]})
    typed = CustomKeyGenerator(["id"], ["region:SIMPLE", "t:TIMESTAMP"], props, hive_style=True)
    assert typed.partition_paths(table).to_pylist() == ["region=eu/t=19700102"]
    assert typed.record_keys(table).to_pylist() == ["1"]
    from_props = key_generator_for("org.apache.hudi.keygen.CustomKeyGenerator", ["id", "region"], ["region", "t"], props)
    assert from_props.partition_paths(table).to_pylist() == ["eu/19700102"]
    assert from_props.record_keys(table).to_pylist() == ["id:1,region:eu"]
    with pytest.raises(KeyGeneratorError, match="SIMPLE or TIMESTAMP"):
        CustomKeyGenerator(["id"], ["region:fancy"], props)
