"""ALTER TABLE RENAME / DROP / ALTER COLUMN TYPE under schema-on-read (hudi_engine/column_change.py, through
HudiTable): round trips (write, alter, write, read: snapshot, time travel, incremental) on versions 6 and 9, COW and
MOR, the commits and history files as Hudi makes them, hudi-rs where it reads them, and every refusal by name with
nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError, SchemaError
from hudi_engine.internal_schema import LATEST_SCHEMA, SchemaHistory
from hudi_engine.write_pipeline import write_table

ON = {"hoodie.schema.on.read.enable": "true"}
DATA = ["id", "name", "ts", "p", "extra"]


def _options(version: int, table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.write.table.version": str(version), "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.operation": "upsert"}


def _first(path: str, opts: dict[str, str]) -> HudiTable:
    write_table(pa.table({"id": [1, 2], "v": ["a", "b"], "ts": pa.array([1, 1], pa.int32()), "amount": [1.5, 3.0],
                          "p": ["x", "y"]}), path, opts)
    return HudiTable.load(path)


def _rows(t: pa.Table, columns: list[str]) -> list[dict]:
    return t.select([c for c in columns if c in t.column_names]).sort_by("id").to_pylist()


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rename_retype_drop_then_write_reads_every_row_by_id(tmp_path: Path, version: int, table_type: str) -> None:
    path = str(tmp_path / "t")
    opts = _options(version, table_type)
    table = _first(path, opts)
    before = table.timeline.completed_commits()[-1]
    table.rename_column("v", "name", options={**opts, **ON})
    table.alter_column_type("ts", pa.int64(), options={**opts, **ON})
    table.drop_columns(["amount"], options={**opts, **ON})
    # The next write needs no schema-on-read option: the table's history is kept going whatever it says.
    write_table(pa.table({"id": [3, 1], "name": ["c", "a2"], "ts": pa.array([2, 2], pa.int64()), "p": ["x", "x"],
                          "extra": [7, 8]}), path, opts)
    table = HudiTable.load(path)
    want = [{"id": 1, "name": "a2", "ts": 2, "p": "x", "extra": 8}, {"id": 2, "name": "b", "ts": 1, "p": "y",
                                                                      "extra": None},
            {"id": 3, "name": "c", "ts": 2, "p": "x", "extra": 7}]
    snapshot = table.read_snapshot()
    assert snapshot.schema.field("ts").type == pa.int64() and "amount" not in snapshot.column_names
    assert _rows(snapshot, DATA) == want
    # Time travel to before the changes: that schema's names and types, as Java's schema-on-read readers give them.
    old = table.read_snapshot(as_of=before.timestamp)
    assert old.column_names[5:] == ["id", "v", "ts", "amount", "p"]
    assert _rows(old, ["id", "v", "amount"]) == [{"id": 1, "v": "a", "amount": 1.5}, {"id": 2, "v": "b", "amount": 3.0}]
    last = table.timeline.completed_commits()[-1]
    start = before.completion_time if table.timeline.layout.incremental_by_completion_time else before.timestamp
    assert _rows(table.read_incremental(str(start)), DATA) == [want[0], want[2]]
    assert last.timestamp > before.timestamp
    if table.is_mor:  # the log blocks written before and after the change, merged into one base file by id
        table.compact(options={**opts, "hoodie.compact.inline": "true"})
        assert _rows(HudiTable.load(path).read_snapshot(), DATA) == want


@pytest.mark.parametrize("version", [6, 9])
def test_each_change_is_a_commit_of_no_files_with_the_internal_schema_and_its_history(tmp_path: Path,
                                                                                       version: int) -> None:
    path = str(tmp_path / "t")
    opts = _options(version, "COPY_ON_WRITE")
    table = _first(path, opts)
    table.rename_column("v", "name", options={**opts, **ON})
    table.drop_columns(["amount"], options={**opts, **ON})
    first, rename, drop = table.timeline.completed_commits()
    assert LATEST_SCHEMA not in table.commit_metadata(first).extra_metadata  # no history until the first change
    for instant, names in ((rename, ["id", "name", "ts", "amount", "p"]), (drop, ["id", "name", "ts", "p"])):
        meta = table.commit_metadata(instant)
        assert meta.operation_type == "ALTER_SCHEMA" and not meta.write_stats() and instant.action.value == "commit"
        latest = json.loads(meta.extra_metadata[LATEST_SCHEMA])
        assert latest["version_id"] == int(instant.timestamp) and latest["max_column_id"] == 9
        assert [f["name"] for f in latest["fields"]][5:] == names
        assert [f["name"] for f in json.loads(meta.extra_metadata["schema"])["fields"]] == names
    files = sorted(p.name for p in (Path(path) / ".hoodie" / ".schema").iterdir())
    completed = [f for f in files if f.endswith(".schemacommit")]
    if version == 6:
        assert completed == [f"{rename.timestamp}.schemacommit", f"{drop.timestamp}.schemacommit"]
    else:  # <instant>_<completion>, completed before the commit is
        assert [f.split("_")[0] for f in completed] == [rename.timestamp, drop.timestamp]
        assert all(f.split("_")[1].split(".")[0] < str(i.completion_time) for f, i in zip(completed, (rename, drop)))
    assert {f"{rename.timestamp}.schemacommit.requested", f"{drop.timestamp}.schemacommit.inflight"} <= set(files)
    history = SchemaHistory.load(table.location.storage, table.location.meta_path)
    assert history is not None
    assert [s.version_id for s in history.schemas] == [int(drop.timestamp), int(rename.timestamp), 0]
    assert [f.id for f in history.latest.fields][5:] == [5, 6, 7, 9]


@pytest.mark.parametrize(("version", "table_type"), [(6, "COPY_ON_WRITE"), (9, "MERGE_ON_READ")])
def test_a_moved_column_is_read_in_the_new_order_by_every_reader(tmp_path: Path, version: int,
                                                                 table_type: str) -> None:
    """ALTER COLUMN ... AFTER (Hudi's ColumnPositionChange): ids kept, the commit's schema and the internal schema in
    the new order; snapshot (old and new files, merged on update), time travel (the old order), compaction and
    hudi-rs give the columns in the order of the schema they read."""
    path = str(tmp_path / "t")
    opts = _options(version, table_type)
    table = _first(path, opts)
    before = table.timeline.completed_commits()[-1].timestamp
    table.move_column("ts", "id", options={**opts, **ON})  # id, ts, v, amount, p
    table.move_column("amount", "_hoodie_file_name", options={**opts, **ON})  # amount first
    order = ["amount", "id", "ts", "v", "p"]
    latest = json.loads(table.commit_metadata(table.timeline.completed_commits()[-1]).extra_metadata[LATEST_SCHEMA])
    assert [(f["name"], f["id"]) for f in latest["fields"]][5:] == [("amount", 8), ("id", 5), ("ts", 7), ("v", 6),
                                                                     ("p", 9)]
    # A write in the old order keeps the table's, as Hudi's schema-on-read writer keeps it.
    write_table(pa.table({"id": [1, 3], "v": ["a2", "c"], "ts": pa.array([2, 2], pa.int32()), "amount": [9.0, 4.0],
                          "p": ["x", "x"]}), path, opts)
    table = HudiTable.load(path)
    want = [{"amount": 9.0, "id": 1, "ts": 2, "v": "a2", "p": "x"}, {"amount": 3.0, "id": 2, "ts": 1, "v": "b",
                                                                      "p": "y"},
            {"amount": 4.0, "id": 3, "ts": 2, "v": "c", "p": "x"}]
    snapshot = table.read_snapshot()
    assert snapshot.column_names[5:] == order
    assert _rows(snapshot, order) == want
    old = table.read_snapshot(as_of=before)
    assert old.column_names[5:] == ["id", "v", "ts", "amount", "p"]
    if table.is_mor:
        table.compact(options={**opts, "hoodie.compact.inline": "true"})
        compacted = HudiTable.load(path).read_snapshot()
        assert compacted.column_names[5:] == order and _rows(compacted, order) == want
    theirs = rs_snapshot(path)
    assert theirs.column_names[5:] == order and _rows(theirs, order) == want


def test_a_mor_change_is_a_deltacommit(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = _options(6, "MERGE_ON_READ")
    table = _first(path, opts)
    table.rename_column("v", "name", options={**opts, **ON})
    assert table.timeline.completed_commits()[-1].action.value == "deltacommit"


@pytest.mark.parametrize("version", [6, 9])
def test_hudi_rs_reads_a_dropped_and_a_retyped_column_as_we_do(tmp_path: Path, version: int) -> None:
    """hudi-rs has no schema-on-read: it finds columns by name, so it reads drops and widened types as Hudi does,
    and a renamed column as null in files written before the rename (as Java does without schema-on-read)."""
    path = str(tmp_path / "t")
    opts = _options(version, "COPY_ON_WRITE")
    table = _first(path, opts)
    table.drop_columns(["amount"], options={**opts, **ON})
    table.alter_column_type("ts", pa.int64(), options={**opts, **ON})
    write_table(pa.table({"id": [3], "v": ["c"], "ts": pa.array([2], pa.int64()), "p": ["x"]}), path, opts)
    ours = HudiTable.load(path).read_snapshot()
    theirs = rs_snapshot(path)
    assert theirs.column_names == ours.column_names
    assert _rows(ours, ["id", "v", "ts", "p"]) == _rows(theirs, ["id", "v", "ts", "p"])


def _files(path: str) -> list[str]:
    return sorted(str(p) for p in Path(path).rglob("*"))


@pytest.mark.parametrize(("change", "words"), [
    (lambda t, o: t.rename_column("v", "amount", options=o), "has a column 'amount' already"),
    (lambda t, o: t.rename_column("v", "AMOUNT", options=o), "has a column 'AMOUNT' already"),
    (lambda t, o: t.rename_column("id", "key", options=o), "id is the table's record key field"),
    (lambda t, o: t.drop_columns(["p"], options=o), "p is the table's partition field"),
    (lambda t, o: t.rename_column("ts", "t2", options=o), r"ts is the table's precombine \(ordering\) field"),
    (lambda t, o: t.drop_columns(["nope"], options=o), "the table has no column 'nope'"),
    (lambda t, o: t.alter_column_type("amount", pa.int32(), options=o), "does not allow changing amount from double"),
    (lambda t, o: t.alter_column_type("v", pa.int64(), options=o), "from string to long"),
    (lambda t, o: t.drop_columns(["_hoodie_record_key"], options=o), "is a Hudi meta column"),
    (lambda t, o: t.move_column("v", None, options=o), "Hudi does not move a top-level column FIRST"),
    (lambda t, o: t.move_column("v", "_hoodie_record_key", options=o), "_hoodie_record_key is a Hudi meta column"),
    (lambda t, o: t.move_column("v", "nope", options=o), "no column 'nope' to put v after"),
    (lambda t, o: t.move_column("v", "v", options=o), "v cannot go after itself"),
    (lambda t, o: t.move_column("nope", "id", options=o), "the table has no column 'nope'"),
])
def test_a_change_hudi_refuses_is_refused_by_name_with_nothing_written(tmp_path: Path, change, words: str) -> None:
    path = str(tmp_path / "t")
    opts = _options(6, "COPY_ON_WRITE")
    table = _first(path, opts)
    before = _files(path)
    with pytest.raises(SchemaError, match=words) as refused:
        change(table, {**opts, **ON})
    assert path in str(refused.value) and "ALTER TABLE" in str(refused.value)
    assert _files(path) == before


def test_without_schema_on_read_a_change_is_refused_with_the_setting_to_turn_on(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = _options(9, "COPY_ON_WRITE")
    table = _first(path, opts)
    before = _files(path)
    with pytest.raises(ConfigError, match="set hoodie.schema.on.read.enable=true"):
        table.rename_column("v", "name", options=opts)
    assert _files(path) == before


def test_a_partial_update_takes_the_kept_columns_of_older_files_by_id(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = _options(6, "MERGE_ON_READ")
    table = _first(path, opts)
    table.rename_column("v", "name", options={**opts, **ON})
    write_table(pa.table({"id": [2], "name": ["ignored"], "ts": pa.array([5], pa.int32()), "amount": [9.0],
                          "p": ["y"]}), path, {**opts, "hoodie.datasource.write.partial.update.columns": "ts,amount"})
    row = HudiTable.load(path).read_snapshot().filter(pc.field("id") == 2).to_pylist()[0]
    assert (row["name"], row["ts"], row["amount"]) == ("b", 5, 9.0)  # the renamed column kept from the base file


def test_a_cdc_query_after_a_rename_reads_the_older_commit_under_the_new_name(tmp_path: Path) -> None:
    """The CDC log records a commit wrote before a rename come out under the column's new name, by id
    (tests/test_cdc_query.py covers drops, widening, struct members, COW and MOR)."""
    path = str(tmp_path / "t")
    opts = {**_options(6, "COPY_ON_WRITE"), "hoodie.table.cdc.enabled": "true"}
    table = _first(path, opts)
    start = table.timeline.completed_commits()[-1].timestamp
    write_table(pa.table({"id": [1], "v": ["a2"], "ts": pa.array([2], pa.int32()), "amount": [1.0], "p": ["x"]}),
                path, opts)
    HudiTable.load(path).rename_column("v", "name", options={**opts, **ON})
    row = HudiTable.load(path).read_changes(start, images="struct").to_pylist()[0]
    assert (row["op"], row["before"]["name"], row["after"]["name"]) == ("u", "a", "a2")
    assert "v" not in row["after"]


_S = pa.struct([("a", pa.int32()), ("b", pa.string())])


@pytest.mark.parametrize(("version", "table_type"), [(6, "COPY_ON_WRITE"), (9, "MERGE_ON_READ")])
def test_struct_members_renamed_widened_dropped_added_and_moved_are_read_by_id(tmp_path: Path, version: int,
                                                                               table_type: str) -> None:
    """Hudi's TableChanges on struct members (`s.a`): every id kept, a new member the next id; a file written before
    gives its members by id (a dropped member not taken for a new one of its name) in the snapshot, the merge of an
    old base file on upsert, the MOR merge and compaction; time travel gives the old struct."""
    path = str(tmp_path / "t")
    opts = _options(version, table_type)
    write_table(pa.table({"id": [1, 2, 4], "s": pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 4, "b": "w"}],
                                                        _S), "ts": pa.array([1, 1, 1], pa.int32()),
                          "p": ["x", "y", "x"]}), path, opts)
    table = HudiTable.load(path)
    before = table.timeline.completed_commits()[-1].timestamp
    on = {**opts, **ON}
    table.rename_column("s.a", "n", options=on)
    table.alter_column_type("s.n", pa.int64(), options=on)
    table.drop_columns(["s.b"], options=on)
    table.add_column("s.b", pa.string(), options=on)  # a new member of a dropped one's name: null in older files
    table.add_column("s.c", pa.float64(), after="n", options=on)
    table.move_column("s.b", None, options=on)  # FIRST inside a struct, as Hudi allows
    altered = HudiTable.load(path)
    latest = json.loads(altered.commit_metadata(altered.timeline.completed_commits()[-1]).extra_metadata[LATEST_SCHEMA])
    s = next(f for f in latest["fields"] if f["name"] == "s")
    assert [(m["name"], m["id"]) for m in s["type"]["fields"]] == [("b", 11), ("n", 9), ("c", 12)]
    new = pa.struct([("b", pa.string()), ("n", pa.int64()), ("c", pa.float64())])
    write_table(pa.table({"id": [1, 3], "s": pa.array([{"b": "u", "n": 10, "c": 1.5}, {"b": "z", "n": 3, "c": None}],
                                                     new), "ts": pa.array([2, 2], pa.int32()), "p": ["x", "x"]}),
                path, opts)
    want = [{"id": 1, "s": {"b": "u", "n": 10, "c": 1.5}}, {"id": 2, "s": {"b": None, "n": 2, "c": None}},
            {"id": 3, "s": {"b": "z", "n": 3, "c": None}}, {"id": 4, "s": {"b": None, "n": 4, "c": None}}]
    table = HudiTable.load(path)
    snapshot = table.read_snapshot()
    assert snapshot.schema.field("s").type == new
    assert _rows(snapshot, ["id", "s"]) == want
    old = table.read_snapshot(as_of=before)
    assert old.schema.field("s").type == _S
    assert _rows(old, ["id", "s"]) == [{"id": 1, "s": {"a": 1, "b": "x"}}, {"id": 2, "s": {"a": 2, "b": "y"}},
                                       {"id": 4, "s": {"a": 4, "b": "w"}}]
    if table.is_mor:
        table.compact(options={**opts, "hoodie.compact.inline": "true"})
        assert _rows(HudiTable.load(path).read_snapshot(), ["id", "s"]) == want


@pytest.mark.parametrize(("change", "words"), [
    (lambda t, o: t.rename_column("s.a", "B", options=o), "has a member 'B' already"),
    (lambda t, o: t.rename_column("s.zz", "q", options=o), r"no column 's.zz'; the members of s are \['a', 'b'\]"),
    (lambda t, o: t.drop_columns(["s.a", "s.b"], options=o), "b is the only member of s; drop the struct column s"),
    (lambda t, o: t.add_columns([("s.c", pa.int32(), None), ("s.C", pa.string(), None)], options=o), "has s.C already"),
    (lambda t, o: t.alter_column_type("s.b", pa.int32(), options=o), "does not allow changing s.b from string to int"),
    (lambda t, o: t.add_column("s.a", pa.int32(), options=o), "has s.a already"),
    (lambda t, o: t.add_column("l.x", pa.int32(), options=o), "l is not a struct of the table"),
    (lambda t, o: t.add_column("l.element.x", pa.int32(), options=o), "l.element is not a struct of the table"),
    (lambda t, o: t.move_column("s.a", "ts", options=o), "s.ts is not another member of the struct s"),
])
def test_a_struct_member_change_hudi_refuses_is_refused_by_name(tmp_path: Path, change, words: str) -> None:
    path = str(tmp_path / "t")
    opts = _options(6, "COPY_ON_WRITE")
    write_table(pa.table({"id": [1], "s": pa.array([{"a": 1, "b": "x"}], _S), "l": [[1]],
                          "ts": pa.array([1], pa.int32()), "p": ["x"]}), path, opts)
    table = HudiTable.load(path)
    before = _files(path)
    with pytest.raises(SchemaError, match=words) as refused:
        change(table, {**opts, **ON})
    assert path in str(refused.value) and "Nothing was written" in str(refused.value).replace("nothing", "Nothing")
    assert _files(path) == before


def test_hudi_rs_reads_a_widened_and_an_added_struct_member_as_we_do(tmp_path: Path) -> None:
    """hudi-rs finds struct members by name: widened and added members read as ours (a renamed member would read as
    null in older files, and a dropped one's name added again would take the old values)."""
    path = str(tmp_path / "t")
    opts = _options(9, "COPY_ON_WRITE")
    write_table(pa.table({"id": [1, 2], "s": pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], _S),
                          "ts": pa.array([1, 1], pa.int32()), "p": ["x", "y"]}), path, opts)
    table = HudiTable.load(path)
    table.alter_column_type("s.a", pa.int64(), options={**opts, **ON})
    table.add_column("s.c", pa.float64(), after="a", options={**opts, **ON})
    new = pa.struct([("a", pa.int64()), ("c", pa.float64()), ("b", pa.string())])
    write_table(pa.table({"id": [3], "s": pa.array([{"a": 3, "c": 3.5, "b": "z"}], new),
                          "ts": pa.array([2], pa.int32()), "p": ["x"]}), path, opts)
    ours = HudiTable.load(path).read_snapshot()
    theirs = rs_snapshot(path)
    assert theirs.schema.field("s").type == ours.schema.field("s").type == new
    assert _rows(theirs, ["id", "s"]) == _rows(ours, ["id", "s"]) == [
        {"id": 1, "s": {"a": 1, "c": None, "b": "x"}}, {"id": 2, "s": {"a": 2, "c": None, "b": "y"}},
        {"id": 3, "s": {"a": 3, "c": 3.5, "b": "z"}}]


def test_add_column_places_a_new_top_level_column_with_the_next_id(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    opts = _options(6, "MERGE_ON_READ")
    table = _first(path, opts)
    table.add_column("extra", pa.int32(), after="id", options={**opts, **ON})
    table.add_column("first", pa.string(), after="_hoodie_file_name", options={**opts, **ON})
    table.add_column("last", pa.string(), options={**opts, **ON})
    snapshot = HudiTable.load(path).read_snapshot()
    assert snapshot.column_names[5:] == ["first", "id", "extra", "v", "ts", "amount", "p", "last"]
    assert _rows(snapshot, ["id", "first", "extra", "last"]) == [
        {"id": 1, "first": None, "extra": None, "last": None}, {"id": 2, "first": None, "extra": None, "last": None}]
    latest = json.loads(table.commit_metadata(table.timeline.completed_commits()[-1]).extra_metadata[LATEST_SCHEMA])
    assert [(f["name"], f["id"]) for f in latest["fields"]][5:] == [
        ("first", 11), ("id", 5), ("extra", 10), ("v", 6), ("ts", 7), ("amount", 8), ("p", 9), ("last", 12)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_members_of_an_arrays_structs_and_a_maps_struct_values_change_by_id(tmp_path: Path, table_type: str) -> None:
    """Hudi's full names down arrays and maps (`l.element.a`, `m.value.b`): renamed, dropped, widened and added
    members; older files read by id through the lists and map values, merged on update and compacted."""
    path = str(tmp_path / "t")
    opts = _options(9, table_type)
    lists, maps = pa.list_(_S), pa.map_(pa.string(), _S)
    write_table(pa.table({"id": [1, 2], "l": pa.array([[{"a": 1, "b": "x"}], None], lists),
                          "m": pa.array([[("k", {"a": 1, "b": "x"})], [("j", {"a": 2, "b": "y"})]], maps),
                          "ts": pa.array([1, 1], pa.int32()), "p": ["x", "x"]}), path, opts)
    table = HudiTable.load(path)
    on = {**opts, **ON}
    table.rename_column("l.element.a", "n", options=on)
    table.alter_column_type("l.element.n", pa.int64(), options=on)
    table.drop_columns(["m.value.b"], options=on)
    table.add_column("m.value.c", pa.string(), options=on)
    table.rename_column("m.value.a", "n", options=on)
    new_l = pa.list_(pa.struct([("n", pa.int64()), ("b", pa.string())]))
    new_m = pa.map_(pa.string(), pa.struct([("n", pa.int32()), ("c", pa.string())]))
    write_table(pa.table({"id": [2], "l": pa.array([[{"n": 20, "b": "z"}]], new_l),
                          "m": pa.array([[("j", {"n": 20, "c": "new"})]], new_m),
                          "ts": pa.array([2], pa.int32()), "p": ["x"]}), path, opts)
    want = [{"id": 1, "l": [{"n": 1, "b": "x"}], "m": [("k", {"n": 1, "c": None})]},
            {"id": 2, "l": [{"n": 20, "b": "z"}], "m": [("j", {"n": 20, "c": "new"})]}]
    table = HudiTable.load(path)
    snapshot = table.read_snapshot()
    assert snapshot.schema.field("l").type.value_type == new_l.value_type
    assert snapshot.schema.field("m").type.item_type == new_m.item_type
    assert _rows(snapshot, ["id", "l", "m"]) == want
    if table.is_mor:
        table.compact(options={**opts, "hoodie.compact.inline": "true"})
        assert _rows(HudiTable.load(path).read_snapshot(), ["id", "l", "m"]) == want


@pytest.mark.parametrize(("version", "table_type"), [(6, "COPY_ON_WRITE"), (9, "MERGE_ON_READ")])
def test_several_struct_members_added_or_dropped_in_one_statement(tmp_path: Path, version: int,
                                                                  table_type: str) -> None:
    """Hudi's AlterTableCommand gathers a statement's columns in one ColumnAddChange / ColumnDeleteChange: one commit,
    the new members numbered in the statement's order (an AFTER may name a member the statement adds before it),
    and a drop of several members (with a top-level column too) in one commit; rows read by id."""
    path = str(tmp_path / "t")
    opts = _options(version, table_type)
    write_table(pa.table({"id": [1], "s": pa.array([{"a": 1, "b": "x"}], _S), "extra": [5],
                          "ts": pa.array([1], pa.int32()), "p": ["x"]}), path, opts)
    table = HudiTable.load(path)
    on = {**opts, **ON}
    commits = len(table.timeline.completed_commits())
    table.add_columns([("s.c", pa.int32(), None), ("s.d", pa.string(), "a"), ("s.e", pa.float64(), "d")], options=on)
    table = HudiTable.load(path)
    assert len(table.timeline.completed_commits()) == commits + 1
    latest = json.loads(table.commit_metadata(table.timeline.completed_commits()[-1]).extra_metadata[LATEST_SCHEMA])
    s = next(f for f in latest["fields"] if f["name"] == "s")
    top = max(f["id"] for f in latest["fields"])
    assert [m["name"] for m in s["type"]["fields"]] == ["a", "d", "e", "b", "c"]
    ids = {m["name"]: m["id"] for m in s["type"]["fields"]}
    assert ids["c"] < ids["d"] < ids["e"] and ids["c"] > top  # the next ids, in the statement's order
    table.drop_columns(["s.a", "s.e", "extra"], options=on)
    table = HudiTable.load(path)
    assert len(table.timeline.completed_commits()) == commits + 2
    new = pa.struct([("d", pa.string()), ("b", pa.string()), ("c", pa.int32())])
    assert table.schema().field("s").type == new and "extra" not in table.schema().names
    write_table(pa.table({"id": [2], "s": pa.array([{"d": "dd", "b": "y", "c": 7}], new),
                          "ts": pa.array([2], pa.int32()), "p": ["x"]}), path, opts)
    assert _rows(HudiTable.load(path).read_snapshot(), ["id", "s"]) == [
        {"id": 1, "s": {"d": None, "b": "x", "c": None}}, {"id": 2, "s": {"d": "dd", "b": "y", "c": 7}}]
