"""Binding a CALL's arguments as Hudi binds them, and Hudi's argument errors naming the argument."""
from __future__ import annotations

import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.procedures.arguments import bind
from hudi_engine.procedures.registry import spec

COMMITS = spec("show_commit_files")  # table (required), limit (10), instant_time (required)


def test_positional_in_hudis_order_and_named_alike():
    a = bind(COMMITS, ["t", 3, "001"])
    b = bind(COMMITS, named={"instant_time": "001", "TABLE": "t", "limit": 3})
    assert a.values == b.values == {"table": "t", "limit": 3, "instant_time": "001"}


def test_defaults_and_null():
    assert bind(COMMITS, named={"table": "t", "instant_time": "1", "limit": None})["limit"] == 10


@pytest.mark.parametrize(("positional", "named", "message"), [
    ((), {"table": "t", "instant_time": "1", "bogus": 1}, "Argument: bogus is not a parameter of show_commit_files"),
    ((), {"instant_time": "1"}, "Argument: table is required"),
    ((), {"table": "t"}, "Argument: instant_time is required"),
    ((), {"table": "t", "instant_time": "1", "limit": "x"}, "Argument: limit of show_commit_files is of type integer"),
    ((), {"table": "t", "instant_time": "1", "limit": True}, r"got true \(boolean\)"),
    ((), {"table": "t", "instant_time": 20240101}, "Argument: instant_time .* string.*quote it"),
    ((), {"table": "t", "instant_time": "1", "limit": 2**31}, "out of its range"),
    (("t",), {"instant_time": "1"}, "named and positional arguments cannot be mixed"),
    (("t", 1, "1", 2), {}, "4 arguments given, it takes at most 3"),
])
def test_bad_arguments_are_refused_naming_the_argument(positional, named, message):
    with pytest.raises(ConfigError, match=message):
        bind(COMMITS, positional, named)


def test_numbers_fill_long_and_double_parameters():
    assert bind(spec("run_compaction"), named={"op": "run", "timestamp": 20240101}).values["timestamp"] == 20240101


def test_table_is_resolved_by_the_resolver_or_taken_as_a_path():
    show = spec("show_table_properties")  # table or path
    assert bind(show, named={"table": "db.t"}, resolver=lambda n: f"/wh/{n}").table_path() == "/wh/db.t"
    assert bind(show, named={"table": "/data/t"}).table_path() == "/data/t"
    assert bind(show, named={"path": "/data/t"}).table_path() == "/data/t"
    with pytest.raises(ConfigError, match="Table name or table path must be given one"):
        bind(show).table_path()
    with pytest.raises(ConfigError, match="is a catalog name, and this call has no catalog"):
        bind(show, named={"table": "t"}).table_path()
