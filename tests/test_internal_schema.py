"""Schema-on-read (hudi_engine/internal_schema.py): a file's columns found by id, as Java Hudi's schema-on-read readers
find them, and the internal schema and its history as Java Hudi writes them (checked against the history Java left in
the schema_evolution feature tables: renames, a type change, a drop)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from java_tables import CASES, unzip_feature_table

from hudi_engine import HudiTable
from hudi_engine.internal_schema import ColumnIds, CommitSchema, InternalSchema, SchemaHistory, type_change_allowed

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


# ---- the internal schema and its history, as Hudi writes them --------------------------------------------------

def _java_history(tmp_path, version: int) -> tuple[HudiTable, SchemaHistory]:
    (case,) = [c for c in CASES if c.builder == "schema_evolution" and c.version == version]
    path, _ = unzip_feature_table(case, tmp_path)
    table = HudiTable.load(str(path))
    history = SchemaHistory.load(table.location.storage, table.location.meta_path,
                                 [i.timestamp for i in table.timeline.completed_commits()])
    assert history is not None
    return table, history


@pytest.mark.parametrize("version", [6, 9])
def test_the_schema_before_the_first_change_is_numbered_as_java_numbered_it(tmp_path, version: int) -> None:
    table, history = _java_history(tmp_path, version)
    assert table.config.create_schema is not None
    ours = InternalSchema.from_avro(table.config.create_schema)
    assert history.schemas[-1] == ours  # version 0: id, v, ts, amount, p after the meta columns, ids 0-9
    assert ours.text() == json.dumps(history.schemas[-1].to_json(), separators=(",", ":"))
    assert [f.name for f in history.latest.fields][5:] == ["id", "name", "ts", "p"]
    assert history.latest.field("ts").type == "long" and history.latest.max_column_id == 9


def test_nested_types_are_numbered_level_by_level_then_depth_first() -> None:
    avro = {"type": "record", "name": "r", "fields": [
        {"name": "s", "type": ["null", {"type": "record", "name": "s", "fields": [
            {"name": "a", "type": ["null", "int"]}, {"name": "b", "type": ["null", {"type": "array", "items": "long"}]}]}]},
        {"name": "m", "type": ["null", {"type": "map", "values": ["null", "string"]}]},
        {"name": "d", "type": ["null", {"type": "fixed", "name": "fixed", "size": 5, "logicalType": "decimal",
                                         "precision": 10, "scale": 2}]}]}
    schema = InternalSchema.from_avro(avro)
    s, m, d = schema.fields[5:]
    assert (s.id, m.id, d.id) == (5, 6, 7) and d.type == "decimal(10, 2)"
    assert [f["id"] for f in s.type["fields"]] == [8, 9]
    assert s.type["fields"][1]["type"] == {"type": "array", "element_id": 10, "element": "long",
                                           "element_optional": False}
    assert (m.type["key_id"], m.type["value_id"], m.type["value_optional"]) == (11, 12, True)
    assert schema.max_column_id == 12


@pytest.mark.parametrize(("old", "new", "allowed"), [
    ("int", "long", True), ("int", "double", True), ("int", "decimal(10, 0)", True), ("int", "string", True),
    ("long", "int", False), ("long", "float", True), ("float", "double", True), ("double", "float", False),
    ("double", "decimal(20, 4)", True), ("string", "date", True), ("date", "string", True), ("string", "int", False),
    ("decimal(10, 2)", "decimal(12, 2)", True), ("decimal(10, 2)", "decimal(10, 3)", False),
    ("decimal(10, 2)", "decimal(12, 3)", True), ("decimal(10, 2)", "string", True), ("boolean", "string", False),
])
def test_type_changes_are_hudis(old: str, new: str, allowed: bool) -> None:
    assert type_change_allowed(old, new) is allowed


def test_a_write_that_changes_nothing_keeps_the_version_and_the_history_text(tmp_path) -> None:
    table, history = _java_history(tmp_path, 6)
    writer = table.avro_schema()
    assert writer is not None
    same = CommitSchema.of(history, writer, "29990101000000000")
    assert same is not None and same.latest is history.latest and same.history == history.text


def test_a_write_with_a_new_column_gives_it_the_next_id_under_the_instant(tmp_path) -> None:
    table, history = _java_history(tmp_path, 6)
    writer = table.avro_schema()
    assert writer is not None
    writer = {**writer, "fields": [*writer["fields"], {"name": "amount", "type": ["null", "double"]}]}
    record = CommitSchema.of(history, writer, "29990101000000000")
    assert record is not None
    added = record.latest.field("amount")
    assert added is not None and added.id == 10 and record.latest.max_column_id == 10  # not the dropped amount's 8
    assert record.latest.version_id == 29990101000000000
    versions = [s["version_id"] for s in json.loads(record.history)["schemas"]]
    assert versions == [29990101000000000, *(s.version_id for s in history.schemas)]


def test_a_history_file_of_a_commit_that_never_completed_is_not_read(tmp_path) -> None:
    table, history = _java_history(tmp_path, 6)
    folder = Path(table.location.meta_path) / ".schema"
    (folder / "29990101000000000.schemacommit").write_text('{"schemas":[]}')
    completed = [i.timestamp for i in table.timeline.completed_commits()]
    again = SchemaHistory.load(table.location.storage, table.location.meta_path, completed)
    assert again == history


def test_struct_members_in_lists_and_map_values_are_found_by_id() -> None:
    """A member renamed (id 11 `b` -> `bb`) and one dropped (id 10) inside a list's structs and a map's struct values:
    the file's members renamed and left out by id, nulls and slices kept; the cast adds the member added later."""
    def record(*members: tuple[int, str, str]) -> dict:
        return {"type": "record", "fields": [{"id": i, "name": n, "optional": True, "type": t} for i, n, t in members]}

    old, new = record((10, "a", "int"), (11, "b", "string")), record((11, "bb", "string"), (12, "a", "long"))
    ids = ColumnIds(((0, ((5, "l", {"type": "array", "element_id": 9, "element": old}),
                          (6, "m", {"type": "map", "key_id": 7, "value_id": 8, "value": old}))),
                     (100, ((5, "l", {"type": "array", "element_id": 9, "element": new}),
                            (6, "m", {"type": "map", "key_id": 7, "value_id": 8, "value": new})))))
    names = ids.file_names(None, "050")
    assert names == {"l": "l", "m": "m"} and set(names.nested) == {"l", "m"}
    member = pa.struct([("a", pa.int32()), ("b", pa.string())])
    file = pa.table({"l": pa.array([[{"a": 0, "b": "skip"}], [{"a": 1, "b": "x"}], None], pa.list_(member)),
                     "m": pa.array([[("k0", {"a": 0, "b": "skip"})], [("k", {"a": 1, "b": "x"})], None],
                                   pa.map_(pa.string(), member))}).slice(1)
    got = ids.as_query_names(file, names)
    query = pa.struct([("bb", pa.string()), ("a", pa.int64())])
    assert got.column("l").cast(pa.list_(query)).to_pylist() == [[{"bb": "x", "a": None}], None]
    assert got.column("m").cast(pa.map_(pa.string(), query)).to_pylist() == [[("k", {"bb": "x", "a": None})], None]
