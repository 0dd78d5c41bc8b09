from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from conformance import V6_TABLES

from hudi_engine.java_properties import (
    PropertiesError,
    format_properties,
    java_date_string,
    java_instant_string,
    parse_properties,
)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("a=b", {"a": "b"}),
        ("a = b", {"a": "b"}),
        ("a:b", {"a": "b"}),
        ("a b", {"a": "b"}),
        ("a\tb", {"a": "b"}),
        ("a\f:\t b ", {"a": "b "}),
        ("   a=b", {"a": "b"}),
        ("a==b", {"a": "=b"}),
        ("a = = b", {"a": "= b"}),
        ("a b = c", {"a": "b = c"}),
        ("a=", {"a": ""}),
        ("a", {"a": ""}),
        ("a\\=b=c", {"a=b": "c"}),
        ("a\\:b:c", {"a:b": "c"}),
        ("key\\ with\\ space=v", {"key with space": "v"}),
        ("a=b\\\n   c", {"a": "bc"}),
        ("a=b\\\r\n\tc\\\n d", {"a": "bcd"}),
        ("a=b\\\\\nc=d", {"a": "b\\", "c": "d"}),
        ("#x\\\nb=c", {"b": "c"}),
        ("! bang comment\n  # hash comment\nb=c", {"b": "c"}),
        ("\\u0041=\\u00e9\\u00E9", {"A": "éé"}),
        ("e=\\uD83D\\uDE00", {"e": "😀"}),
        ("e=\\t\\n\\r\\f\\q\\\\", {"e": "\t\n\r\f" + "q\\"}),
        ("a=1\r\nb=2\rc=3\n\n\n", {"a": "1", "b": "2", "c": "3"}),
        ("a=b\\", {"a": "b"}),
        ("a=1\na=2", {"a": "2"}),
        ("a=b\\\n", {"a": "b"}),
        ("   \n\t\n", {}),
        ("k=v # not a comment", {"k": "v # not a comment"}),
    ],
)
def test_parse_java_semantics(text, expected):
    assert parse_properties(text) == expected


def test_parse_bytes_is_latin1():
    assert parse_properties(b"k=caf\xe9") == {"k": "café"}


@pytest.mark.parametrize("bad", ["a=\\u00g1", "a=\\u12"])
def test_malformed_unicode_escape(bad):
    with pytest.raises(PropertiesError, match="line 1"):
        parse_properties(bad)


@pytest.mark.parametrize(
    "props,line",
    [
        ({"k": "v:x=y#!"}, "k=v\\:x\\=y\\#\\!"),
        ({"k": " lead  inner"}, "k=\\ lead  inner"),
        ({"a b": "v"}, "a\\ b=v"),
        ({"#k": "v"}, "\\#k=v"),
        ({"k": "back\\slash"}, "k=back\\\\slash"),
        ({"k": "é"}, "k=\\u00E9"),
        ({"k": "😀"}, "k=\\uD83D\\uDE00"),
        ({"k": "tab\tnl\ncr\rff\f"}, "k=tab\\tnl\\ncr\\rff\\f"),
        ({"k": "\x01\x7f"}, "k=\\u0001\\u007F"),
        ({"k": ""}, "k="),
    ],
)
def test_format_java_escaping(props, line):
    text = format_properties(props)
    assert text == line + "\n"
    assert text.isascii()
    assert parse_properties(text) == props


def test_format_comments():
    text = format_properties({"a": "b"}, ["first", "two\nlines", "keep\n#hash", "uni ☃ é"])
    assert text == "#first\n#two\n#lines\n#keep\n#hash\n#uni \\u2603 é\na=b\n"
    assert parse_properties(text) == {"a": "b"}


def test_random_round_trip():
    rng = random.Random(1234)
    alphabet = "ab =:#!\\\t\n\r\f\u00e9\u2603\U0001f600xyz\x00\x7f "
    for _ in range(500):
        props = {
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))): "".join(
                rng.choice(alphabet) for _ in range(rng.randint(0, 12))
            )
            for _ in range(rng.randint(1, 4))
        }
        assert parse_properties(format_properties(props, ["c"])) == props


@pytest.mark.parametrize("name", V6_TABLES)
def test_real_hoodie_properties(unzip_table, name):
    path = unzip_table(name) / ".hoodie" / "hoodie.properties"
    raw = path.read_bytes()
    props = parse_properties(raw)
    assert props["hoodie.table.version"] == "6"
    assert props["hoodie.table.name"]
    if "hoodie.table.create.schema" in props:
        assert json.loads(props["hoodie.table.create.schema"])["type"] == "record"
    # Written by Java's Properties.store: our formatter reproduces the file byte for byte
    text = raw.decode("latin-1")
    comments = [line[1:] for line in text.splitlines() if line.startswith("#")]
    assert len(comments) == 2 and comments[0].startswith("Properties saved on ")
    assert format_properties(props, comments).encode("latin-1") == raw


def test_java_date_and_instant_strings():
    m = datetime(2025, 3, 31, 3, 6, 42, 363296, tzinfo=UTC)
    assert java_date_string(m) == "Mon Mar 31 03:06:42 UTC 2025"
    assert java_instant_string(m) == "2025-03-31T03:06:42.363296Z"
    assert java_instant_string(m.replace(microsecond=522000)) == "2024-04-18T22:32:13.522Z".replace(
        "2024-04-18T22:32:13", "2025-03-31T03:06:42"
    )
    assert java_instant_string(m.replace(microsecond=0)) == "2025-03-31T03:06:42Z"
    assert java_date_string(datetime(2024, 4, 5, 1, 2, 3, tzinfo=UTC)) == "Fri Apr 05 01:02:03 UTC 2024"
