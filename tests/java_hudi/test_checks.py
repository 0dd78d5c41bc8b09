"""The consistency checks (checks.py) pass on tables the engine writes and fail on a table Java Hudi finds broken."""
from __future__ import annotations

import pyarrow as pa
import pytest
from local_write import write

from java_hudi.checks import java_consistency_checks
from java_hudi.client import JavaHudiError

OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}


def _table(path, table_type: str, version: str) -> None:
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version}
    write(path, pa.table({"id": [1, 2, 3], "p": ["a", "b", "a"], "ts": [1, 1, 1]}), opts)
    write(path, pa.table({"id": [1, 4], "p": ["a", "b"], "ts": [2, 2]}), opts)


@pytest.mark.parametrize(("hudi", "version"), [("0.15.0", "6"), ("1.2.0", "6"), ("1.2.0", "9")])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_checks_pass_on_the_engines_tables(java_hudi, tmp_path, hudi, version, table_type):
    _table(tmp_path / "t", table_type, version)
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "t").rglob("*"))
    assert java_consistency_checks(java_hudi(hudi), tmp_path / "t", tmp_path) == 5
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "t").rglob("*")) == before  # the table untouched


def test_checks_fail_on_a_broken_table(java_hudi, tmp_path):
    _table(tmp_path / "t", "COPY_ON_WRITE", "6")
    victim = next((tmp_path / "t" / "a").glob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[:100])  # a truncated base file
    with pytest.raises((AssertionError, JavaHudiError)):
        java_consistency_checks(java_hudi("0.15.0"), tmp_path / "t", tmp_path)
