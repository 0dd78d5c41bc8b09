"""Schema evolution on read between the engine and Java Hudi (0.15.0 on a version-6 COW table, 1.2.0 on a version-9
MOR table): Java reads the engine's renamed, retyped and dropped columns with `hoodie.schema.on.read.enable=true` as
the engine reads them (snapshot, and time travel to before the changes); Java then writes after the engine's ALTER
and the engine reads Java's commit by id. The write-only cases are tests/test_column_change.py (no Java)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable, write_table
from hudi_engine.internal_schema import SchemaHistory
from java_hudi.compare import assert_same_table

ON = {"hoodie.schema.on.read.enable": "true"}
CASES = [("0.15.0", 6, "COPY_ON_WRITE"), ("1.2.0", 9, "MERGE_ON_READ")]


def _options(table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": "upsert"}


@pytest.mark.parametrize(("hudi", "version", "table_type"), CASES, ids=[f"{h}-v{v}" for h, v, _ in CASES])
def test_java_reads_our_evolved_table_and_we_read_javas_next_write(java_hudi, tmp_path: Path, hudi: str,
                                                                    version: int, table_type: str) -> None:
    java = java_hudi(hudi)
    path = str(tmp_path / "t")
    opts = _options(table_type)
    write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"], "ts": pa.array([1, 1], pa.int32()),
                          "amount": [1.5, 3.0], "p": ["x", "y"]}),
                path, {**opts, "hoodie.write.table.version": str(version)})
    table = HudiTable.load(path)
    first = table.timeline.completed_commits()[-1].timestamp
    table.rename_column("v", "name", options={**opts, **ON})
    table.alter_column_type("ts", pa.int64(), options={**opts, **ON})
    table.drop_columns(["amount"], options={**opts, **ON})
    write_table(pa.table({"id": pa.array([3, 1], pa.int64()), "name": ["c", "a2"], "ts": pa.array([2, 2], pa.int64()),
                          "p": ["x", "x"], "extra": pa.array([7, 8], pa.int32())}), path, opts)
    table = HudiTable.load(path)
    assert_same_table(table.read_snapshot(), java.snapshot(path, **ON), f"Java {hudi} reads our evolved table")
    assert_same_table(table.read_snapshot(as_of=first), java.time_travel(path, first, **ON),
                      f"Java {hudi} time travel to before our changes")
    # Java's write after our ALTER: its columns by the names the table has now, the history kept going.
    java.write(path, pa.table({"id": pa.array([2, 4], pa.int64()), "name": ["b-java", "d-java"],
                               "ts": pa.array([3, 3], pa.int64()), "p": ["y", "y"],
                               "extra": pa.array([9, 10], pa.int32())}),
               {**opts, **ON, "hoodie.metadata.enable": "false"})
    table = HudiTable.load(path)
    ours = table.read_snapshot()
    assert_same_table(ours, java.snapshot(path, **ON), f"we read Java {hudi}'s write after our ALTER")
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("name").to_pylist(), strict=True)) == \
        [(1, "a2"), (2, "b-java"), (3, "c"), (4, "d-java")]
    history = SchemaHistory.load(table.location.storage, table.location.meta_path,
                                 [i.timestamp for i in table.timeline.completed_commits()])
    assert history is not None and [f.id for f in history.latest.fields][5:] == [5, 6, 7, 9, 10]


def test_column_positions_both_ways_with_java_1_2(java_hudi, tmp_path: Path) -> None:
    """Column positions (Hudi's ColumnPositionChange): Java 1.2 reads our moved column in our order; we read a table
    Java evolved with ADD COLUMNS ... AFTER and ALTER COLUMN ... AFTER in Java's order, every row by id."""
    java = java_hudi("1.2.0")
    ours_path = str(tmp_path / "ours")
    opts = {**_options("COPY_ON_WRITE"), "hoodie.write.table.version": "9"}
    write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"], "ts": pa.array([1, 1], pa.int64()),
                          "amount": [1.5, 3.0], "p": ["x", "y"]}), ours_path, opts)
    HudiTable.load(ours_path).move_column("amount", "id", options={**opts, **ON})
    # A write in the old order keeps the table's (Hudi's schema-on-read writer reconciles it with the internal schema).
    write_table(pa.table({"id": pa.array([3], pa.int64()), "v": ["c"], "ts": pa.array([2], pa.int64()),
                          "amount": [4.5], "p": ["x"]}), ours_path, opts)
    ours = HudiTable.load(ours_path).read_snapshot()
    theirs = java.snapshot(ours_path, **ON)
    assert_same_table(ours, theirs, "Java 1.2 reads our moved column")
    data = [c for c in theirs.column_names if not c.startswith("_hoodie")]
    assert data == ["id", "amount", "v", "ts", "p"] == ours.column_names[5:]

    java_path = tmp_path / "java"
    java.sql("SET hoodie.schema.on.read.enable=true")
    java.sql(f"""CREATE TABLE positions_java (id bigint, v string, ts bigint, p string) USING hudi PARTITIONED BY (p)
                 LOCATION '{java_path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor',
                 'hoodie.schema.on.read.enable' = 'true')""")
    java.sql("INSERT INTO positions_java VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
    java.sql("ALTER TABLE positions_java ADD COLUMNS (c int AFTER id)")
    java.sql("ALTER TABLE positions_java ALTER COLUMN v AFTER ts")
    java.sql("INSERT INTO positions_java (id, c, ts, v, p) VALUES (3, 30, 2, 'c', 'x')")
    theirs = java.snapshot(java_path, **ON)
    ours = HudiTable.load(str(java_path)).read_snapshot()
    assert_same_table(ours, theirs, "we read Java 1.2's positions")
    assert ours.column_names[5:] == ["id", "c", "ts", "v", "p"]
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("v").to_pylist(), strict=True)) == \
        [(1, "a"), (2, "b"), (3, "c")]


def test_struct_member_changes_both_ways_with_java_1_2(java_hudi, tmp_path: Path) -> None:
    """Struct members renamed, widened, dropped and added (Hudi's TableChanges on `s.a`): Java 1.2 reads our table
    with our members, rows written before found by id; we read a table Java changed the same way."""
    java = java_hudi("1.2.0")
    # Spark's vectorized parquet reader refuses a struct whose members changed type; Hudi says to turn it off.
    java.sql("SET spark.sql.parquet.enableVectorizedReader=false")
    try:
        _struct_members_both_ways(java, tmp_path)
    finally:
        java.sql("SET spark.sql.parquet.enableVectorizedReader=true")


def _struct_members_both_ways(java, tmp_path: Path) -> None:
    ours_path = str(tmp_path / "ours")
    opts = {**_options("MERGE_ON_READ"), "hoodie.write.table.version": "9"}
    member = pa.struct([("a", pa.int32()), ("b", pa.string())])
    write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}],
                                                                           member),
                          "ts": pa.array([1, 1], pa.int64()), "p": ["x", "y"]}), ours_path, opts)
    table = HudiTable.load(ours_path)
    table.rename_column("s.a", "n", options={**opts, **ON})
    table.alter_column_type("s.n", pa.int64(), options={**opts, **ON})
    table.drop_columns(["s.b"], options={**opts, **ON})
    table.add_column("s.c", pa.float64(), options={**opts, **ON})
    now = pa.struct([("n", pa.int64()), ("c", pa.float64())])
    write_table(pa.table({"id": pa.array([3, 1], pa.int64()), "s": pa.array([{"n": 3, "c": 3.5}, {"n": 10, "c": 1.5}],
                                                                           now),
                          "ts": pa.array([2, 2], pa.int64()), "p": ["x", "x"]}), ours_path, opts)
    ours = HudiTable.load(ours_path).read_snapshot()
    assert_same_table(ours, java.snapshot(ours_path, **ON), "Java 1.2 reads our struct member changes")
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("s").to_pylist(), strict=True)) == \
        [(1, {"n": 10, "c": 1.5}), (2, {"n": 2, "c": None}), (3, {"n": 3, "c": 3.5})]

    java_path = tmp_path / "java"
    java.sql("SET hoodie.schema.on.read.enable=true")
    java.sql(f"""CREATE TABLE nested_java (id bigint, s struct<a: int, b: string>, ts bigint, p string) USING hudi
                 PARTITIONED BY (p) LOCATION '{java_path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
                 type = 'cow', 'hoodie.schema.on.read.enable' = 'true')""")
    java.sql("INSERT INTO nested_java VALUES (1, named_struct('a', 1, 'b', 'x'), 1, 'x'), "
             "(2, named_struct('a', 2, 'b', 'y'), 1, 'y')")
    for statement in ("RENAME COLUMN s.a TO n", "ALTER COLUMN s.n TYPE bigint", "DROP COLUMN s.b",
                      "ADD COLUMNS (s.c double)"):
        java.sql(f"ALTER TABLE nested_java {statement}")
    java.sql("INSERT INTO nested_java VALUES (3, named_struct('n', 3L, 'c', 3.5D), 2, 'x')")
    theirs = java.snapshot(java_path, **ON)
    ours = HudiTable.load(str(java_path)).read_snapshot()
    assert_same_table(ours, theirs, "we read Java 1.2's struct member changes")
    assert sorted(zip(ours.column("id").to_pylist(), ours.column("s").to_pylist(), strict=True)) == \
        [(1, {"n": 1, "c": None}), (2, {"n": 2, "c": None}), (3, {"n": 3, "c": 3.5})]


def test_struct_members_in_arrays_and_map_values_both_ways_with_java_1_2(java_hudi, tmp_path: Path) -> None:
    """Members of an array's structs and a map's struct values (`l.element.a`, `m.value.a`) renamed, dropped, widened
    and added: Java 1.2 reads ours, and we read Java's, older files' members found by id down lists and map
    values."""
    java = java_hudi("1.2.0")
    path = tmp_path / "java"
    java.sql("SET hoodie.schema.on.read.enable=true")
    java.sql("SET spark.sql.parquet.enableVectorizedReader=false")  # Spark's own reader refuses changed nested types
    try:
        java.sql(f"""CREATE TABLE nested_in_java (id bigint, l array<struct<a: int, b: string>>,
                     m map<string, struct<a: int, b: string>>, ts bigint) USING hudi LOCATION '{path}'
                     TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor',
                     'hoodie.schema.on.read.enable' = 'true')""")
        java.sql("INSERT INTO nested_in_java VALUES (1, array(named_struct('a', 1, 'b', 'x')), "
                 "map('k', named_struct('a', 1, 'b', 'x')), 1)")
        for statement in ("RENAME COLUMN l.element.a TO n", "DROP COLUMN l.element.b", "RENAME COLUMN m.value.a TO n",
                          "ALTER COLUMN m.value.n TYPE bigint"):
            java.sql(f"ALTER TABLE nested_in_java {statement}")
        java.sql("INSERT INTO nested_in_java VALUES (2, array(named_struct('n', 2)), "
                 "map('j', named_struct('n', 2L, 'b', 'y')), 2)")
        theirs = java.snapshot(path, **ON)
        ours_path = str(tmp_path / "ours")
        opts = {**_options("MERGE_ON_READ"), "hoodie.write.table.version": "9",
                "hoodie.datasource.write.partitionpath.field": ""}
        member = pa.struct([("a", pa.int32()), ("b", pa.string())])
        write_table(pa.table({"id": pa.array([1], pa.int64()), "l": pa.array([[{"a": 1, "b": "x"}]], pa.list_(member)),
                              "m": pa.array([[("k", {"a": 1, "b": "x"})]], pa.map_(pa.string(), member)),
                              "ts": pa.array([1], pa.int64())}), ours_path, opts)
        table = HudiTable.load(ours_path)
        table.rename_column("l.element.a", "n", options={**opts, **ON})
        table.drop_columns(["m.value.b"], options={**opts, **ON})
        table.add_column("m.value.c", pa.string(), options={**opts, **ON})
        write_table(pa.table({"id": pa.array([2], pa.int64()),
                              "l": pa.array([[{"n": 2, "b": "y"}]], pa.list_(pa.struct([("n", pa.int32()),
                                                                                         ("b", pa.string())]))),
                              "m": pa.array([[("j", {"a": 2, "c": "new"})]],
                                            pa.map_(pa.string(), pa.struct([("a", pa.int32()), ("c", pa.string())]))),
                              "ts": pa.array([2], pa.int64())}), ours_path, opts)
        assert_same_table(HudiTable.load(ours_path).read_snapshot(), java.snapshot(ours_path, **ON),
                          "Java 1.2 reads our changes inside arrays and maps")
    finally:
        java.sql("SET spark.sql.parquet.enableVectorizedReader=true")
    ours = HudiTable.load(str(path)).read_snapshot()
    assert_same_table(ours, theirs, "we read Java 1.2's changes inside arrays and maps")
    assert ours.select(["id", "l", "m"]).sort_by("id").to_pylist() == [
        {"id": 1, "l": [{"n": 1}], "m": [("k", {"n": 1, "b": "x"})]},
        {"id": 2, "l": [{"n": 2}], "m": [("j", {"n": 2, "b": "y"})]}]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_java_1_2_cdc_query_of_our_evolved_table(java_hudi, tmp_path: Path, table_type: str) -> None:
    """The CDC query of a version-9 table across a rename (v -> name), a widening and a drop: Java 1.2 (schema on
    read) gives the same changes, except that it finds the renamed column by name, so as null, in what a commit
    before the rename wrote to a CDC log file (COW: both images of the merge's changes) or a MOR log block (the
    after image of an update): its CDC log reader and its LOG_FILE reader are given no internal schema. We find it
    by id, as a snapshot does (docs/cdc.md)."""
    from java_hudi.test_java_reads import cdc_changes

    java = java_hudi("1.2.0")
    path = str(tmp_path / "t")
    opts = {**_options(table_type), "hoodie.write.table.version": "9", "hoodie.table.cdc.enabled": "true"}
    write_table(pa.table({"id": pa.array([1, 2, 4], pa.int64()), "v": ["a", "b", "d"],
                          "ts": pa.array([1, 1, 1], pa.int32()), "amount": [1.5, 3.0, 4.0], "p": ["x", "x", "x"]}),
                path, opts)
    write_table(pa.table({"id": pa.array([1, 5], pa.int64()), "v": ["a2", "e"], "ts": pa.array([2, 2], pa.int32()),
                          "amount": [1.0, 5.0], "p": ["x", "x"]}), path, opts)
    second = HudiTable.load(path).timeline.completed_commits()[-1].timestamp
    table = HudiTable.load(path)
    table.rename_column("v", "name", options={**opts, **ON})
    table.alter_column_type("ts", pa.int64(), options={**opts, **ON})
    table.drop_columns(["amount"], options={**opts, **ON})
    write_table(pa.table({"id": pa.array([2, 3], pa.int64()), "name": ["b3", "c"], "ts": pa.array([3, 3], pa.int64()),
                          "p": ["x", "x"]}), path, opts)
    table = HudiTable.load(path)
    schema = pa.schema([f for f in table.schema() if not f.name.startswith("_hoodie")])
    ours = cdc_changes(table.read_changes("000"), schema)
    assert ("u", second, {"id": 1, "name": "a", "ts": 1, "p": "x"}, {"id": 1, "name": "a2", "ts": 2, "p": "x"}) in ours

    def by_name(change: tuple) -> tuple:
        """The change as Java prints it: the renamed column null where Java reads a pre-rename record by name."""
        op, ts, before, after = change
        if ts != second:
            return change
        if table_type == "COPY_ON_WRITE":  # the merge's CDC log file
            return op, ts, before and {**before, "name": None}, after and {**after, "name": None}
        return (op, ts, before, {**after, "name": None}) if op == "u" else change  # the log block's update

    assert cdc_changes(java.cdc(path, "000", **ON), schema) == sorted(
        map(by_name, ours), key=lambda r: (r[0], r[1], repr(sorted((r[2] or r[3] or {}).items(), key=str))))


def test_several_struct_members_in_one_statement_as_java_1_2_numbers_them(java_hudi, tmp_path: Path) -> None:
    """`ADD COLUMNS (s.c int, s.d string AFTER a, x int)` then `DROP COLUMNS s.a, s.c` in Java 1.2's SQL and the same
    two statements here (`add_columns`, `drop_columns`): one commit each, the same internal schema (names, ids,
    order); Java reads our table as we do."""
    java = java_hudi("1.2.0")
    java_path = tmp_path / "java"
    java.sql("SET hoodie.schema.on.read.enable=true")
    java.sql(f"""CREATE TABLE several_java (id bigint, s struct<a: int, b: string>, ts bigint, p string) USING hudi
                 PARTITIONED BY (p) LOCATION '{java_path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
                 type = 'cow', 'hoodie.schema.on.read.enable' = 'true')""")
    java.sql("INSERT INTO several_java VALUES (1, named_struct('a', 1, 'b', 'x'), 1, 'x')")
    java.sql("ALTER TABLE several_java ADD COLUMNS (s.c int, s.d string AFTER a, x int)")
    java.sql("ALTER TABLE several_java DROP COLUMNS s.a, s.c")

    ours_path = str(tmp_path / "ours")
    opts = {**_options("COPY_ON_WRITE"), "hoodie.write.table.version": "9"}
    write_table(pa.table({"id": pa.array([1], pa.int64()), "s": pa.array([{"a": 1, "b": "x"}], pa.struct(
        [("a", pa.int32()), ("b", pa.string())])), "ts": pa.array([1], pa.int64()), "p": ["x"]}), ours_path, opts)
    table = HudiTable.load(ours_path)
    table.add_columns([("s.c", pa.int32(), None), ("s.d", pa.string(), "a"), ("x", pa.int32(), None)],
                      options={**opts, **ON})
    table.drop_columns(["s.a", "s.c"], options={**opts, **ON})

    def latest(path: str) -> list:
        t = HudiTable.load(path)
        history = SchemaHistory.load(t.location.storage, t.location.meta_path,
                                     [i.timestamp for i in t.timeline.completed_commits()])
        assert history is not None
        return [(f.name, f.id, f.type) for f in history.latest.fields]

    assert latest(ours_path) == latest(str(java_path))
    ours = HudiTable.load(ours_path)
    assert len(ours.timeline.completed_commits()) == 3
    assert_same_table(ours.read_snapshot(), java.snapshot(ours_path, **ON), "Java 1.2 reads our several members")


def test_java_1_2_cdc_query_after_a_struct_member_rename(java_hudi, tmp_path: Path) -> None:
    """A struct member renamed (s.a -> n) on a version-9 COW CDC table: Java 1.2's CDC query and ours agree, but for
    the member in the CDC log records written before the rename, which Java resolves by name (null) and we by id."""
    from java_hudi.test_java_reads import cdc_changes

    java = java_hudi("1.2.0")
    path = str(tmp_path / "t")
    opts = {**_options("COPY_ON_WRITE"), "hoodie.write.table.version": "9", "hoodie.table.cdc.enabled": "true"}
    old, new = (pa.struct([(a, pa.int32()), ("b", pa.string())]) for a in ("a", "n"))
    write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}],
                                                                           old),
                          "ts": pa.array([1, 1], pa.int64()), "p": ["x", "x"]}), path, opts)
    write_table(pa.table({"id": pa.array([1], pa.int64()), "s": pa.array([{"a": 10, "b": "x2"}], old),
                          "ts": pa.array([2], pa.int64()), "p": ["x"]}), path, opts)
    second = HudiTable.load(path).timeline.completed_commits()[-1].timestamp
    HudiTable.load(path).rename_column("s.a", "n", options={**opts, **ON})
    write_table(pa.table({"id": pa.array([2], pa.int64()), "s": pa.array([{"n": 20, "b": "y2"}], new),
                          "ts": pa.array([3], pa.int64()), "p": ["x"]}), path, opts)
    table = HudiTable.load(path)
    schema = pa.schema([f for f in table.schema() if not f.name.startswith("_hoodie")])
    ours = cdc_changes(table.read_changes("000"), schema)
    assert ("u", second, {"id": 1, "s": {"n": 1, "b": "x"}, "ts": 1, "p": "x"},
            {"id": 1, "s": {"n": 10, "b": "x2"}, "ts": 2, "p": "x"}) in ours

    def by_name(change: tuple) -> tuple:
        op, ts, before, after = change
        if ts != second:
            return change
        return op, ts, *({**i, "s": {**i["s"], "n": None}} if i else i for i in (before, after))

    assert cdc_changes(java.cdc(path, "000", **ON), schema) == [by_name(c) for c in ours]


def test_our_cdc_query_of_a_table_java_1_2_evolved(java_hudi, tmp_path: Path) -> None:
    """A CDC table Java 1.2 wrote (its CDC log files) and evolved (RENAME COLUMN, ALTER COLUMN TYPE) in SQL: our CDC
    query gives Java's changes, with the renamed column found by id in Java's pre-rename CDC log records, where
    Java's own query prints null."""
    from java_hudi.test_java_reads import cdc_changes

    java = java_hudi("1.2.0")
    path = tmp_path / "java"
    java.sql("SET hoodie.schema.on.read.enable=true")
    # Hudi 1.2 validates the renaming commit's schema against the table's unless dropped fields are allowed
    java.sql("SET hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true")
    java.sql(f"""CREATE TABLE cdc_evolved_java (id bigint, v string, ts int, p string) USING hudi PARTITIONED BY (p)
                 LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'cow',
                 'hoodie.table.cdc.enabled' = 'true', 'hoodie.schema.on.read.enable' = 'true')""")
    java.sql("INSERT INTO cdc_evolved_java VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x')")
    java.sql("UPDATE cdc_evolved_java SET v = 'a2', ts = 2 WHERE id = 1")
    java.sql("ALTER TABLE cdc_evolved_java RENAME COLUMN v TO name")
    java.sql("ALTER TABLE cdc_evolved_java ALTER COLUMN ts TYPE bigint")
    java.sql("UPDATE cdc_evolved_java SET name = 'b3', ts = 3 WHERE id = 2")
    java.sql("RESET hoodie.datasource.write.schema.allow.auto.evolution.column.drop")
    table = HudiTable.load(str(path))
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    update = commits[1]  # Java's first UPDATE: a merge that logged its changes with the old schema
    assert any(str(f).endswith(".cdc") for f in path.rglob(f"*{update}*"))
    schema = pa.schema([f for f in table.schema() if not f.name.startswith("_hoodie")])
    ours = cdc_changes(table.read_changes("000"), schema)
    assert ("u", update, {"id": 1, "name": "a", "ts": 1, "p": "x"}, {"id": 1, "name": "a2", "ts": 2, "p": "x"}) in ours
    assert sorted(ts for _, ts, _, _ in ours) == sorted([commits[0]] * 2 + [update, commits[-1]])

    def by_name(change: tuple) -> tuple:
        op, ts, before, after = change
        return change if ts != update else (op, ts, *({**i, "name": None} if i else i for i in (before, after)))

    assert cdc_changes(java.cdc(path, "000", **ON), schema) == [by_name(c) for c in ours]
