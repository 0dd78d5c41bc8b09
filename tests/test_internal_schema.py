"""Schema-on-read column ids (hudi_engine/internal_schema.py): a file's columns found by id, as Java Hudi's
schema-on-read readers find them. The real tables (renames, a type change, a drop) are tests/test_java_tables.py's
schema_evolution feature tables; this covers what they do not: a name dropped and added again, a column added."""
from __future__ import annotations

import pyarrow as pa

from hudi_engine.internal_schema import ColumnIds

# version 0: id 5 "a", id 6 "b"; at 100 "b" was dropped and a new "b" (id 7) added; at 200 "a" renamed "c".
IDS = ColumnIds(((0, ((5, "a"), (6, "b"))), (100, ((5, "a"), (7, "b"))), (200, ((5, "c"), (7, "b")))))


def test_a_file_before_the_changes_gives_the_renamed_column_and_not_the_dropped_one() -> None:
    names = IDS.file_names("300", "050")
    assert names == {"c": "a", "b": None}
    old = pa.table({"a": [1], "b": ["dropped"]})
    assert IDS.as_query_names(old, names).to_pydict() == {"c": [1]}


def test_a_file_after_the_add_and_a_query_before_the_rename() -> None:
    assert IDS.file_names("300", "150") == {"c": "a", "b": "b"}
    assert IDS.file_names("150", "150") == {"a": "a", "b": "b"}
    assert IDS.file_names("150", "050") == {"a": "a", "b": None}
