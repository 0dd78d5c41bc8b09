"""`call`, `help` and the refusals by name (hudi_engine.procedures)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.procedures import REFUSED, SERVED, call, run


def test_help_marks_every_procedure_served_or_refused():
    (text,) = run("help").column("result").to_pylist()
    lines = [line.split("\t") for line in text.splitlines() if line.startswith("\t") and "=>" not in line]
    assert {name for _, name, _ in lines} == set(SERVED) | set(REFUSED)
    assert all(status == "served" if name in SERVED else status.startswith("refused: ") for _, name, status in lines)


def test_help_of_one_procedure_is_hudis_table_and_its_status():
    (text,) = run("help", named={"cmd": "create_savepoint"}).column("result").to_pylist()
    assert text.startswith("parameters:\n\tparam                         \ttype_name")
    assert "\tcommit_time                   \tstring                        \t                              \tfalse" in text
    assert text.rstrip().endswith("engine: served")


@pytest.mark.parametrize(("name", "reason"), [
    ("partition_bucket_index_manager", "partition-level bucket index"),
    ("show_metadata_column_stats_overlap", "column-stats overlaps"), ("run_ttl", "no partition TTL"),
])
def test_refused_by_name_with_the_way_out(cow, name, reason):
    with pytest.raises(ConfigError, match=f"CALL {name}: refused, .*{reason}"):
        call(name, cow[0])


def test_call_puts_the_path_where_the_procedure_takes_it(cow):
    path, _, second = cow
    assert call("show_commits", path, limit=1).column("commit_time").to_pylist() == [second]  # `table`
    assert call("show_savepoints", path).num_rows == 0  # `table` and `path`: `table`, a path taken as one


def test_the_docs_table_says_what_is_served():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "procedures.md").read_text()
    listed = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (yes|refused) \|", doc, re.M)}
    assert listed == {n: "yes" if n in SERVED else "refused" for n in set(SERVED) | set(REFUSED)}
