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
