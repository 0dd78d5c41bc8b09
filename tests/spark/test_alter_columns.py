"""ALTER TABLE RENAME COLUMN / DROP COLUMN / ALTER COLUMN ... TYPE / ADD COLUMNS on a `USING hudi` table under
schema-on-read (jvm/AlterColumns.scala, hudi_engine/spark/save.py's alter_columns): each an ALTER_SCHEMA commit of no
files, the catalog entry following; reads by id, time travel with the old names; refusals by name, nothing written.
Schema-on-read from the session (`SET`) or the table's TBLPROPERTIES (`ALTER TABLE SET / UNSET TBLPROPERTIES`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from hudi_engine import HudiTable

ON = "hoodie.schema.on.read.enable"


def _operations(path: Path) -> list[str]:
    table = HudiTable.load(str(path))
    return [table.timeline.commit_metadata(i).operation_type or "" for i in table.timeline.completed_commits()]


def _files(path: Path) -> list[str]:
    return sorted(str(p) for p in path.rglob("*"))


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_alter_table_renames_retypes_drops_and_adds_columns_by_id(spark, tmp_path: Path, table_type: str) -> None:
    table, path = f"alter_{table_type}", tmp_path / "t"
    spark.sql(f"""CREATE TABLE {table} (id int, v string, ts int, amount double, p string) USING hudi
                  PARTITIONED BY (p) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')""")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1, 1.5, 'x'), (2, 'b', 1, 3.0, 'y')")
        first = HudiTable.load(str(path)).timeline.completed_commits()[-1].timestamp
        before = _files(path)
        with pytest.raises(Exception, match=f"set {ON}=true"):
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN v TO name")
        assert _files(path) == before
        if table_type == "cow":  # the table's TBLPROPERTIES (Hudi's SET TBLPROPERTIES: the catalog entry's only)
            spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('{ON}' = 'true')")
        else:  # the session's
            spark.conf.set(ON, "true")
        spark.sql(f"ALTER TABLE {table} RENAME COLUMN v TO name")
        spark.sql(f"ALTER TABLE {table} ALTER COLUMN ts TYPE bigint")
        spark.sql(f"ALTER TABLE {table} DROP COLUMN amount")
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS (extra int)")
        for statement, words in (("RENAME COLUMN name TO id", "has a column 'id' already"),
                                 ("DROP COLUMN id", "record key field"),
                                 ("ALTER COLUMN name TYPE int", "does not allow changing name from string to int")):
            before = _files(path)
            with pytest.raises(Exception, match=words):
                spark.sql(f"ALTER TABLE {table} {statement}")
            assert _files(path) == before, statement
        assert spark.table(table).columns[5:] == ["id", "name", "ts", "extra", "p"]
        spark.sql(f"INSERT INTO {table} VALUES (3, 'c', 2, 7, 'x')")
        spark.sql(f"UPDATE {table} SET name = 'a2', ts = 2, extra = 8 WHERE id = 1")
        got = sorted(tuple(r) for r in spark.sql(f"SELECT id, name, ts, extra, p FROM {table}").collect())
        assert got == [(1, "a2", 2, 8, "x"), (2, "b", 1, None, "y"), (3, "c", 2, 7, "x")]
        old = spark.sql(f"SELECT * FROM {table} TIMESTAMP AS OF '{first}'")
        assert old.columns[5:] == ["id", "v", "ts", "amount", "p"]
        assert sorted((r["id"], r["v"], r["amount"]) for r in old.collect()) == [(1, "a", 1.5), (2, "b", 3.0)]
        assert _operations(path)[1:] == ["ALTER_SCHEMA"] * 4 + ["INSERT", "UPSERT_PREPPED"]
        if table_type == "cow":  # UNSET: refused again, nothing written
            spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('{ON}')")
            before = _files(path)
            with pytest.raises(Exception, match=f"set {ON}=true"):
                spark.sql(f"ALTER TABLE {table} RENAME COLUMN name TO label")
            assert _files(path) == before
    finally:
        spark.conf.unset(ON)
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_column_positions_first_and_after_as_hudi_places_them(spark, tmp_path: Path) -> None:
    """ADD COLUMNS ... AFTER and ALTER COLUMN ... AFTER (Hudi's ColumnPositionChange, schema-on-read only): the table's
    schema, its internal schema (ids kept, new ids in the statement's order) and every read in the new order, the
    catalog entry's partition columns last; FIRST of a top-level column and a position without schema-on-read refused
    by name, nothing written (Spark itself drops an ADD COLUMNS position of a v1 table without a word)."""
    from hudi_engine.internal_schema import SchemaHistory

    table, path = "alter_positions", tmp_path / "t"
    spark.sql(f"""CREATE TABLE {table} (id int, v string, ts int, p string) USING hudi PARTITIONED BY (p)
                  LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')""")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
        for statement, words in (("ADD COLUMNS (c int AFTER id)", f"set {ON}=true"),
                                 ("ALTER COLUMN v AFTER ts", f"set {ON}=true")):
            before = _files(path)
            with pytest.raises(Exception, match=words):
                spark.sql(f"ALTER TABLE {table} {statement}")
            assert _files(path) == before, statement
        spark.conf.set(ON, "true")
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS (c int AFTER id, d string AFTER _hoodie_file_name)")
        spark.sql(f"ALTER TABLE {table} ALTER COLUMN v AFTER ts")
        for statement, words in (("ADD COLUMNS (e int FIRST)", "does not move a top-level column FIRST"),
                                 ("ALTER COLUMN v FIRST", "does not move a top-level column FIRST"),
                                 ("ALTER COLUMN v AFTER _hoodie_commit_seqno", "is a Hudi meta column"),
                                 ("ALTER COLUMN v AFTER nope", "no column 'nope' to put v after")):
            before = _files(path)
            with pytest.raises(Exception, match=words):
                spark.sql(f"ALTER TABLE {table} {statement}")
            assert _files(path) == before, statement
        order = ["d", "id", "c", "ts", "v", "p"]
        assert spark.table(table).columns[5:] == order
        loaded = HudiTable.load(str(path))
        history = SchemaHistory.load(loaded.location.storage, loaded.location.meta_path)
        assert history is not None
        assert [(f.name, f.id) for f in history.latest.fields][5:] == [("d", 10), ("id", 5), ("c", 9), ("ts", 7),
                                                                        ("v", 6), ("p", 8)]
        spark.sql(f"INSERT INTO {table} (id, c, d, ts, v, p) VALUES (3, 30, 'dd', 2, 'c', 'x')")
        spark.sql(f"UPDATE {table} SET c = 10, ts = 2 WHERE id = 1")
        want = [("", 1, 10, 2, "a", "x"), ("", 2, None, 1, "b", "y"), ("dd", 3, 30, 2, "c", "x")]
        got = sorted((r["d"] or "", *tuple(r)[6:]) for r in spark.sql(f"SELECT * FROM {table}").collect())
        assert got == want
        ours = HudiTable.load(str(path)).read_snapshot()
        assert ours.column_names[5:] == order
        assert _operations(path)[1:] == ["ALTER_SCHEMA"] * 2 + ["INSERT", "UPSERT_PREPPED"]
    finally:
        spark.conf.unset(ON)
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_struct_members_renamed_widened_dropped_added_and_moved_in_sql(spark, tmp_path: Path) -> None:
    """ALTER TABLE on struct members (`s.a`, Hudi's nested full names) under schema-on-read: each an ALTER_SCHEMA
    commit, the catalog entry's struct following; INSERT and UPDATE after them, every row's members read by id."""
    table, path = "alter_nested", tmp_path / "t"
    spark.sql(f"""CREATE TABLE {table} (id int, s struct<a: int, b: string>, ts int, p string) USING hudi
                  PARTITIONED BY (p) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')""")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, named_struct('a', 1, 'b', 'x'), 1, 'x'), "
                  f"(2, named_struct('a', 2, 'b', 'y'), 1, 'y')")
        before = _files(path)
        with pytest.raises(Exception, match=f"set {ON}=true"):
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN s.a TO n")
        assert _files(path) == before
        spark.conf.set(ON, "true")
        for statement in ("RENAME COLUMN s.a TO n", "ALTER COLUMN s.n TYPE bigint", "DROP COLUMN s.b",
                          "ADD COLUMNS (s.c double)", "ADD COLUMNS (s.b string AFTER n)", "ALTER COLUMN s.c FIRST",
                          "DROP COLUMN IF EXISTS s.nope"):
            spark.sql(f"ALTER TABLE {table} {statement}")
        before = _files(path)
        with pytest.raises(Exception, match="has a member 'c' already"):
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN s.n TO c")
        assert _files(path) == before
        assert spark.table(table).schema["s"].dataType.simpleString() == "struct<c:double,n:bigint,b:string>"
        spark.sql(f"INSERT INTO {table} VALUES (3, named_struct('c', 3.5, 'n', 3L, 'b', 'z'), 2, 'x')")
        spark.sql(f"UPDATE {table} SET s = named_struct('c', 1.5, 'n', 10L, 'b', 'u') WHERE id = 1")
        got = [(r["id"], r["s"].asDict()) for r in spark.sql(f"SELECT id, s FROM {table} ORDER BY id").collect()]
        assert got == [(1, {"c": 1.5, "n": 10, "b": "u"}), (2, {"c": None, "n": 2, "b": None}),
                       (3, {"c": 3.5, "n": 3, "b": "z"})]
        assert _operations(path)[1:] == ["ALTER_SCHEMA"] * 6 + ["INSERT", "UPSERT_PREPPED"]
    finally:
        spark.conf.unset(ON)
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_several_struct_members_in_one_statement(spark, tmp_path: Path) -> None:
    """`ADD COLUMNS (s.c int, s.d string AFTER a, x int)` and `DROP COLUMNS s.a, s.c, x`: each one ALTER_SCHEMA
    commit, as Hudi's AlterTableCommand gathers a statement's columns in one change (ids in the statement's order);
    the catalog entry follows; older rows read by id. A DEFAULT on a member is refused with nothing written."""
    table, path = "alter_several", tmp_path / "t"
    spark.sql(f"""CREATE TABLE {table} (id int, s struct<a: int, b: string>, ts int, p string) USING hudi
                  PARTITIONED BY (p) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', '{ON}' = 'true')""")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, named_struct('a', 1, 'b', 'x'), 1, 'x')")
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS (s.c int, s.d string AFTER a, x int)")
        assert spark.table(table).schema["s"].dataType.simpleString() == "struct<a:int,d:string,b:string,c:int>"
        assert spark.table(table).columns[-3:] == ["ts", "p", "x"]  # a new top-level column last, as Hudi adds it
        entry = {r["col_name"]: r["data_type"] for r in spark.sql(f"DESCRIBE TABLE {table}").collect()}
        assert entry["s"] == "struct<a:int,d:string,b:string,c:int>" and entry["x"] == "int"
        before = _files(path)
        for statement, words in (("ADD COLUMNS (s.e int DEFAULT 1, s.f int)", "has a DEFAULT"),
                                 ("ADD COLUMNS (s.e int, y int COMMENT 'why')", "y has a COMMENT or NOT NULL")):
            with pytest.raises(Exception, match=words):
                spark.sql(f"ALTER TABLE {table} {statement}")
            assert _files(path) == before
        spark.sql(f"ALTER TABLE {table} DROP COLUMNS s.a, s.c, x")
        assert spark.table(table).schema["s"].dataType.simpleString() == "struct<d:string,b:string>"
        assert "x" not in spark.table(table).columns
        entry = {r["col_name"]: r["data_type"] for r in spark.sql(f"DESCRIBE TABLE {table}").collect()}
        assert entry["s"] == "struct<d:string,b:string>" and "x" not in entry  # the catalog entry followed
        spark.sql(f"INSERT INTO {table} VALUES (2, named_struct('d', 'dd', 'b', 'y'), 2, 'x')")
        got = [(r["id"], r["s"].asDict()) for r in spark.sql(f"SELECT id, s FROM {table} ORDER BY id").collect()]
        assert got == [(1, {"d": None, "b": "x"}), (2, {"d": "dd", "b": "y"})]
        assert _operations(path)[1:] == ["ALTER_SCHEMA"] * 2 + ["INSERT"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_members_inside_arrays_and_maps_in_sql(spark, tmp_path: Path) -> None:
    """Hudi's full names down an array's structs and a map's struct values (`l.element.a`, `m.value.b`) in ALTER
    TABLE, DROP COLUMN IF EXISTS of one the table does not have doing nothing; older rows read by id."""
    table, path = "alter_in_arrays", tmp_path / "t"
    spark.sql(f"""CREATE TABLE {table} (id int, l array<struct<a: int, b: string>>,
                  m map<string, struct<a: int, b: string>>, ts int) USING hudi LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    try:
        spark.sql(f"INSERT INTO {table} VALUES (1, array(named_struct('a', 1, 'b', 'x')), "
                  f"map('k', named_struct('a', 1, 'b', 'x')), 1)")
        spark.conf.set(ON, "true")
        for statement in ("RENAME COLUMN l.element.a TO n", "ALTER COLUMN l.element.n TYPE bigint",
                          "DROP COLUMN m.value.b", "DROP COLUMN IF EXISTS m.value.nope", "ADD COLUMNS (m.value.c string)"):
            spark.sql(f"ALTER TABLE {table} {statement}")
        assert spark.table(table).schema["l"].dataType.simpleString() == "array<struct<n:bigint,b:string>>"
        assert spark.table(table).schema["m"].dataType.simpleString() == "map<string,struct<a:int,c:string>>"
        spark.sql(f"INSERT INTO {table} VALUES (2, array(named_struct('n', 2L, 'b', 'y')), "
                  f"map('j', named_struct('a', 2, 'c', 'new')), 2)")
        got = [(r["id"], [e.asDict() for e in r["l"]], {k: v.asDict() for k, v in r["m"].items()})
               for r in spark.sql(f"SELECT id, l, m FROM {table} ORDER BY id").collect()]
        assert got == [(1, [{"n": 1, "b": "x"}], {"k": {"a": 1, "c": None}}),
                       (2, [{"n": 2, "b": "y"}], {"j": {"a": 2, "c": "new"}})]
        assert _operations(path)[1:] == ["ALTER_SCHEMA"] * 4 + ["INSERT"]
    finally:
        spark.conf.unset(ON)
        spark.sql(f"DROP TABLE IF EXISTS {table}")
