from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import KeyGeneratorError
from hudi_engine.java_properties import parse_properties
from hudi_engine.partition_path import (
    DEFAULT_PARTITION,
    escape_path_name,
    escape_path_names,
    format_partition_path,
    java_big_decimal_string,
    java_float_string,
    parse_partition_path,
    partition_paths,
    unescape_path_name,
    value_strings,
)

PARTITIONED_WITH_META = [
    "cow_v6_complexkeygen_hivestyle",
    "cow_v6_simplekeygen_nonhivestyle",
    "cow_v6_simplekeygen_nonhivestyle_overwritetable",
    "mor_avrolog_v6_trips_8i1u",
    "mor_parquetlog_v6_complexkeygen_hivestyle",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle",
    "mor_parquetlog_v6_simplekeygen_nonhivestyle_overwritetable",
]
PARTITIONED = PARTITIONED_WITH_META + [
    "cow_v6_simplekeygen_hivestyle_no_metafields",
    "mor_parquetlog_v6_simplekeygen_hivestyle_no_metafields",
]


def _config(base: Path) -> dict[str, str]:
    return parse_properties((base / ".hoodie" / "hoodie.properties").read_bytes())


def _style(props: dict[str, str]) -> dict[str, bool]:
    return {
        "hive_style": props["hoodie.datasource.write.hive_style_partitioning"] == "true",
        "url_encode": props["hoodie.datasource.write.partitionpath.urlencode"] == "true",
    }


# ------------------------------------------------------------------ escaping


@pytest.mark.parametrize(
    "raw,escaped",
    [
        ("plain-value_1.5 x", "plain-value_1.5 x"),
        ("a/b", "a%2Fb"),
        ('"#%\'*/:=?\\{[]^', "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E"),
        ("\x00\x1f\x7f", "%00%1F%7F"),
        ("2023-04-01 12:00:00", "2023-04-01 12%3A00%3A00"),
        ("são paulo ☃ <>|}", "são paulo ☃ <>|}"),
    ],
)
def test_escape_path_name(raw, escaped):
    assert escape_path_name(raw) == escaped
    assert unescape_path_name(escaped) == raw
    assert escape_path_names(pa.array([raw, None])).to_pylist() == [escaped, None]


@pytest.mark.parametrize("text", ["100%", "%zz", "%4", "a%2", "%%41"])
def test_unescape_leaves_malformed_sequences(text):
    assert unescape_path_name(text) == text.replace("%41", "A")


def test_vectorized_escape_matches_scalar():
    rng = random.Random(7)
    alphabet = "ab%/:=?\\{[]^\"#'*\x01\x7fé "
    values = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(300)]
    assert escape_path_names(pa.array(values)).to_pylist() == [escape_path_name(v) for v in values]


# ------------------------------------------------------------------ value strings


def test_value_strings_of_basic_types():
    assert value_strings(pa.array([1, None, -5], pa.int8())).to_pylist() == ["1", None, "-5"]
    assert value_strings(pa.array([True, False])).to_pylist() == ["true", "false"]
    assert value_strings(pa.array([dt.date(2024, 1, 2)])).to_pylist() == ["2024-01-02"]
    assert value_strings(pa.array(["x", ""]).dictionary_encode()).to_pylist() == ["x", ""]
    assert value_strings(pa.array([None, None])).to_pylist() == [None, None]


def test_value_strings_of_timestamps():
    ts = pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 120000), dt.datetime(1970, 1, 1), None], pa.timestamp("us", tz="UTC"))
    assert value_strings(ts).to_pylist() == ["1704164645120000", "0", None]  # Avro long: epoch micros
    assert value_strings(ts.cast(pa.timestamp("ms", tz="UTC"))).to_pylist() == ["1704164645120000", "0", None]
    consistent = value_strings(ts, consistent_logical_timestamp=True).to_pylist()
    assert consistent == ["2024-01-02 03:04:05.12", "1970-01-01 00:00:00.0", None]


@pytest.mark.parametrize(
    "value,scale,expected",
    [
        ("1.50000", 5, "1.50000"),
        ("0", 5, "0.00000"),
        ("-0.00001", 5, "-0.00001"),
        ("0.00000001", 8, "1E-8"),
        ("0", 8, "0E-8"),
        ("-0.00000012", 8, "-1.2E-7"),
        ("0.00000123", 8, "0.00000123"),
        ("123", 0, "123"),
    ],
)
def test_big_decimal_strings(value, scale, expected):
    assert java_big_decimal_string(Decimal(value), scale) == expected
    arr = pa.array([Decimal(value), None], pa.decimal128(18, scale))
    assert value_strings(arr).to_pylist() == [expected, None]


@pytest.mark.parametrize(
    "value,expected",
    [
        (1.0, "1.0"), (100.0, "100.0"), (0.1, "0.1"), (0.001, "0.001"), (0.0001, "1.0E-4"), (1e7, "1.0E7"),
        (9999999.0, "9999999.0"), (1.5e10, "1.5E10"), (123456789.0, "1.23456789E8"), (-2.5, "-2.5"),
        (0.0, "0.0"), (-0.0, "-0.0"), (float("nan"), "NaN"), (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"), (1e-5, "1.0E-5"), (4.9e-324, "4.9E-324"),
    ],
)
def test_java_double_strings(value, expected):
    assert java_float_string(value) == expected
    assert value_strings(pa.array([value, None], pa.float64())).to_pylist() == [expected, None]


def test_java_float_strings():
    arr = pa.array([1.1, 0.1, 3.4028235e38, 1e-5, 100.0], pa.float32())
    assert value_strings(arr).to_pylist() == ["1.1", "0.1", "3.4028235E38", "1.0E-5", "100.0"]


@pytest.mark.parametrize("arr", [pa.array([b"x"]), pa.array([[1]]), pa.array([{"a": 1}])])
def test_unsupported_value_types(arr):
    with pytest.raises(KeyGeneratorError, match="field 'col'"):
        value_strings(arr, field="col")


# ------------------------------------------------------------------ partition paths


def test_partition_paths_defaults_and_styles():
    table = pa.table({"a": [1, None, 3, 4], "s": ["x/y", "", None, "ok"]})
    assert partition_paths(table, ["a", "s"], hive_style=True, url_encode=True).to_pylist() == [
        "a=1/s=x%2Fy",
        f"a={DEFAULT_PARTITION}/s={DEFAULT_PARTITION}",
        f"a=3/s={DEFAULT_PARTITION}",
        "a=4/s=ok",
    ]
    assert partition_paths(table, ["s"], hive_style=False, url_encode=False).to_pylist() == [
        "x/y", DEFAULT_PARTITION, DEFAULT_PARTITION, "ok",
    ]
    assert partition_paths(table, [], hive_style=True, url_encode=False).to_pylist() == [""] * 4


def test_nested_partition_field():
    table = pa.table({"st": pa.array([{"inner": "v1"}, None, {"inner": None}])})
    assert partition_paths(table, ["st.inner"], hive_style=True, url_encode=False).to_pylist() == [
        "st.inner=v1", f"st.inner={DEFAULT_PARTITION}", f"st.inner={DEFAULT_PARTITION}",
    ]
    with pytest.raises(KeyGeneratorError, match="has no field 'nope'"):
        partition_paths(table, ["st.nope"], hive_style=True, url_encode=False)
    with pytest.raises(KeyGeneratorError, match="'missing' is not a column"):
        partition_paths(table, ["missing"], hive_style=True, url_encode=False)


def test_format_partition_path():
    assert format_partition_path([dt.date(2024, 1, 2), "a=b"], ["d", "s"], hive_style=False, url_encode=True) == "2024-01-02/a%3Db"
    assert format_partition_path([10, 300], ["byteField", "shortField"], hive_style=True, url_encode=False) == "byteField=10/shortField=300"
    assert format_partition_path([None], ["x"], hive_style=False, url_encode=False) == DEFAULT_PARTITION
    assert format_partition_path([], [], hive_style=True, url_encode=False) == ""
    with pytest.raises(KeyGeneratorError, match="2 partition values"):
        format_partition_path([1, 2], ["a"], hive_style=True, url_encode=False)


def test_parse_partition_path():
    fields = ["byteField", "shortField"]
    assert parse_partition_path("byteField=10/shortField=300", fields, hive_style=True, url_encode=False) == {
        "byteField": "10", "shortField": "300",
    }
    assert parse_partition_path(f"a={DEFAULT_PARTITION}/b=x%2Fy", ["a", "b"], hive_style=True, url_encode=True) == {
        "a": None, "b": "x/y",
    }
    assert parse_partition_path("x%2Fy", ["b"], hive_style=False, url_encode=False) == {"b": "x%2Fy"}
    assert parse_partition_path("2023/04/01/12", ["ts"], hive_style=False, url_encode=False) == {"ts": "2023/04/01/12"}
    assert parse_partition_path("", [], hive_style=False, url_encode=False) == {}
    with pytest.raises(KeyGeneratorError, match="has 1 segments; expected 2"):
        parse_partition_path("10", fields, hive_style=False, url_encode=False)
    with pytest.raises(KeyGeneratorError, match="should start with 'shortField='"):
        parse_partition_path("byteField=10/other=1", fields, hive_style=True, url_encode=False)
    with pytest.raises(KeyGeneratorError, match="non-partitioned"):
        parse_partition_path("x", [], hive_style=False, url_encode=False)


@pytest.mark.parametrize("name", PARTITIONED)
def test_real_partition_dirs_parse_and_format_back(unzip_table, name):
    base = unzip_table(name)
    props = _config(base)
    fields = props["hoodie.table.partition.fields"].split(",")
    dirs = sorted(p.parent.relative_to(base).as_posix() for p in base.rglob(".hoodie_partition_metadata"))
    assert dirs
    for d in dirs:
        values = parse_partition_path(d, fields, **_style(props))
        assert all(v is not None for v in values.values())
        assert format_partition_path([values[f] for f in fields], fields, **_style(props)) == d


@pytest.mark.parametrize("name", PARTITIONED_WITH_META)
def test_partition_paths_of_real_data(unzip_table, name):
    base = unzip_table(name)
    props = _config(base)
    fields = props["hoodie.table.partition.fields"].split(",")
    for f in base.rglob("*.parquet"):
        table = pq.read_table(f)
        expected = table.column("_hoodie_partition_path").combine_chunks()
        assert partition_paths(table, fields, **_style(props)).equals(expected), f
        assert f.parent.relative_to(base).as_posix() == expected[0].as_py()
