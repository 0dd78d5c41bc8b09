"""Hudi's Spark write surface on the native component (issue 29): `df.write.format("hudi")` by path and
`saveAsTable`, CREATE TABLE ... USING hudi AS SELECT, INSERT INTO / INSERT OVERWRITE. Every statement is checked
against hudi-rs and leaves one completed instant with the right operation; refusals leave the table as it was."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.spark import last_write_result
from hudi_engine.timeline.instant import State

_names = itertools.count()


def name(prefix: str) -> str:
    return f"{prefix}_{next(_names)}"


def operations(path: Path | str) -> list[str]:
    """The operation of each completed write instant, oldest first; pending instants fail the test."""
    table = HudiTable.load(str(path))
    pending = [str(i) for i in table.timeline.instants if i.state is not State.COMPLETED]
    assert not pending, f"pending instants: {pending}"
    return [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_commits()]


def rows(spark, path: Path | str):
    """Our rows (the native `format("hudi")` read) as an Arrow table, hudi-rs's column order."""
    theirs = rs_snapshot(path)
    ours = spark.read.format("hudi").load(str(path)).toArrow().select(theirs.column_names)
    return ours, theirs


def assert_rs(spark, path: Path | str, what: str, expected: set[tuple] | None = None) -> None:
    ours, theirs = rows(spark, path)
    assert_same_rows(ours, theirs, what)
    if expected is not None:
        data = [c for c in theirs.column_names if not c.startswith("_hoodie_")]
        got = {tuple(r[c] for c in data) for r in theirs.select(data).to_pylist()}
        assert got == expected, f"{what}: {sorted(got)} != {sorted(expected)}"


OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts"}


# The SQL layer's paths do not depend on the table type and the partitioning together (the writer's tests cross
# them): two cases a test, the pairs alternating over the file, so every type meets both partitionings here.
SHAPES_A = [("cow", False), ("mor", True)]
SHAPES_B = [("cow", True), ("mor", False)]

def frame(spark, data: list[tuple]):
    return spark.createDataFrame(data, "id int, v string, ts long, dt string")


@pytest.mark.parametrize(("table_type", "partitioned"), [("COPY_ON_WRITE", False), ("MERGE_ON_READ", True)])
def test_format_hudi_save_modes(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    path = str(tmp_path / "t")
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "dt"
    frame(spark, [(1, "a", 1, "x"), (2, "b", 1, "y")]).write.format("hudi").options(**opts).mode("append").save(path)
    assert operations(path) == ["UPSERT"]
    result = last_write_result()
    assert result is not None and result.records_inserted == 2
    assert result.instant_time == HudiTable.load(path).timeline.completed_commits().last().timestamp
    assert_rs(spark, path, "append", {(1, "a", 1, "x"), (2, "b", 1, "y")})

    frame(spark, [(2, "B", 2, "y"), (3, "c", 1, "x")]).write.format("hudi").options(**opts).mode("append").save(path)
    assert operations(path) == ["UPSERT", "UPSERT"]
    assert_rs(spark, path, "upsert", {(1, "a", 1, "x"), (2, "B", 2, "y"), (3, "c", 1, "x")})

    # ignore: an existing table is left alone
    frame(spark, [(9, "z", 1, "x")]).write.format("hudi").options(**opts).mode("ignore").save(path)
    assert operations(path) == ["UPSERT", "UPSERT"] and last_write_result() is None

    frame(spark, [(7, "g", 1, "y")]).write.format("hudi").options(**opts).mode("overwrite").save(path)
    assert operations(path) == ["UPSERT", "UPSERT", "INSERT_OVERWRITE_TABLE"]
    assert_rs(spark, path, "overwrite", {(7, "g", 1, "y")})


def assert_refused(spark, call, *words: str) -> str:
    """`call` fails with one error message (no Python stack trace) naming every word."""
    with pytest.raises(Exception) as info:
        call()
    text = str(info.value)
    assert "Traceback" not in text, text
    for w in words:
        assert w in text, f"{w!r} not in: {text}"
    return text


def test_format_hudi_refusals_leave_the_table(spark, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    frame(spark, [(1, "a", 1, "x")]).write.format("hudi").options(**OPTIONS).mode("append").save(path)
    before = operations(path)
    data = frame(spark, [(1, "b", 2, "x")])
    # Spark's default save mode on an existing table
    assert_refused(spark, lambda: data.write.format("hudi").options(**OPTIONS).save(path), path, "errorifexists")
    # a save mode that contradicts the operation
    assert_refused(spark, lambda: data.write.format("hudi").options(
        **OPTIONS, **{"hoodie.datasource.write.operation": "upsert"}).mode("overwrite").save(path),
        path, "hoodie.datasource.write.operation=upsert", "overwrite")
    # a record key column the rows lack
    assert_refused(spark, lambda: data.drop("id").write.format("hudi").options(**OPTIONS).mode("append").save(path),
                   path, "id")
    assert operations(path) == before
    assert_rs(spark, path, "after refusals", {(1, "a", 1, "x")})
    # a new table without a name: the engine's own error
    assert_refused(spark, lambda: data.write.format("hudi").option("hoodie.datasource.write.recordkey.field", "id")
                   .save(str(tmp_path / "u")), "hoodie.table.name")
    assert not (tmp_path / "u" / ".hoodie" / "hoodie.properties").exists()


def test_save_as_table(spark) -> None:
    table = name("saved")
    frame(spark, [(1, "a", 1, "x"), (2, "b", 1, "y")]).write.format("hudi").options(**OPTIONS) \
        .partitionBy("dt").saveAsTable(table)
    path = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").first()["data_type"]
    path = path.removeprefix("file:")
    # a new table is created as CTAS creates one (bulk_insert, unless an operation is configured)
    assert operations(path) == ["BULK_INSERT"]
    assert sorted(r["id"] for r in spark.table(table).collect()) == [1, 2]
    frame(spark, [(2, "B", 2, "y")]).write.format("hudi").mode("append").saveAsTable(table)
    assert operations(path) == ["BULK_INSERT", "UPSERT"]
    assert sorted((r["id"], r["v"]) for r in spark.table(table).collect()) == [(1, "a"), (2, "B")]
    assert_rs(spark, path, "saveAsTable", {(1, "a", 1, "x"), (2, "B", 2, "y")})
    # overwrite: Spark drops the entry first; the entry is external, so the table keeps its files and timeline and
    # its rows are replaced in one insert_overwrite_table (time travel to before it still works)
    before = HudiTable.load(path).timeline.completed_commits().last().timestamp
    frame(spark, [(5, "e", 1, "x")]).write.format("hudi").mode("overwrite").saveAsTable(table)
    assert operations(path) == ["BULK_INSERT", "UPSERT", "INSERT_OVERWRITE_TABLE"]
    assert sorted((r["id"], r["v"]) for r in spark.table(table).collect()) == [(5, "e")]
    assert_rs(spark, path, "saveAsTable overwrite", {(5, "e", 1, "x")})
    old = spark.read.format("hudi").option("as.of.instant", before).load(path)
    assert sorted(r["id"] for r in old.collect()) == [1, 2]


@pytest.mark.parametrize(("table_type", "partitioned"), SHAPES_A)
def test_ctas_and_insert(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    table, path = name("ctas"), str(tmp_path / "t")
    partition = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"""CREATE TABLE {table} USING hudi {partition} LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x'), (2, 'b', 1L, 'y') AS s(id, v, ts, dt)""")
    assert operations(path) == ["BULK_INSERT"]
    config = HudiTable.load(path).config
    assert list(config.record_key_fields) == ["id"] and config.precombine_field == "ts"
    assert config.table_type == ("MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE")
    assert list(config.partition_fields) == (["dt"] if partitioned else [])
    assert_rs(spark, path, "ctas", {(1, "a", 1, "x"), (2, "b", 1, "y")})
    assert sorted(r["id"] for r in spark.table(table).collect()) == [1, 2]

    spark.sql(f"INSERT INTO {table} VALUES (3, 'c', 1, 'x')")
    assert operations(path) == ["BULK_INSERT", "INSERT"]
    assert_rs(spark, path, "insert into", {(1, "a", 1, "x"), (2, "b", 1, "y"), (3, "c", 1, "x")})
    assert sorted(r["id"] for r in spark.table(table).collect()) == [1, 2, 3]

    spark.sql(f"INSERT INTO {table} (ts, id, dt, v) VALUES (5, 4, 'y', 'd')")
    assert operations(path)[-1] == "INSERT"
    assert_rs(spark, path, "insert by name", {(1, "a", 1, "x"), (2, "b", 1, "y"), (3, "c", 1, "x"), (4, "d", 5, "y")})

    if partitioned:
        spark.sql(f"INSERT OVERWRITE {table} PARTITION (dt = 'x') SELECT 5, 'e', 1")
        assert operations(path)[-1] == "INSERT_OVERWRITE"
        assert_rs(spark, path, "insert overwrite partition", {(2, "b", 1, "y"), (4, "d", 5, "y"), (5, "e", 1, "x")})

    spark.sql(f"INSERT OVERWRITE {table} SELECT 6, 'f', 1, 'y'")
    assert operations(path)[-1] == "INSERT_OVERWRITE_TABLE"
    assert_rs(spark, path, "insert overwrite", {(6, "f", 1, "y")})
    assert [r["id"] for r in spark.table(table).collect()] == [6]
    spark.sql(f"DROP TABLE {table}")


def test_sql_refusals_leave_the_table(spark, tmp_path: Path) -> None:
    table, path = name("refused"), str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {table} USING hudi LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id')
                  AS SELECT 1 AS id, 'a' AS v""")
    before = operations(path)
    assert_refused(spark, lambda: spark.sql(f"INSERT INTO {table} VALUES (2)"), table, "the query gives 1 columns")
    assert_refused(spark, lambda: spark.sql(f"INSERT INTO {table} SELECT NULL, 'b'"), table)
    assert_refused(spark, lambda: spark.sql(
        f"CREATE TABLE {table} USING hudi AS SELECT 1 AS id"), table, "already exists")
    assert operations(path) == before
    assert_rs(spark, path, "after refusals", {(1, "a")})
    # a location that already holds a Hudi table
    other = name("other")
    assert_refused(spark, lambda: spark.sql(
        f"CREATE TABLE {other} USING hudi LOCATION '{path}' AS SELECT 1 AS id, 'z' AS v"), path, "already exists")
    assert operations(path) == before
    assert not spark.catalog.tableExists(other)
    spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize(("table_type", "partitioned"), SHAPES_B)
def test_update_and_delete(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    table, path = name("dml"), str(tmp_path / "t")
    partition = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"""CREATE TABLE {table} USING hudi {partition} LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x'), (2, 'b', 1L, 'y'), (3, 'c', 1L, 'x') AS s(id, v, ts, dt)""")
    spark.sql(f"UPDATE {table} SET v = upper(v), ts = ts + 1 WHERE dt = 'x'")
    assert operations(path) == ["BULK_INSERT", "UPSERT_PREPPED"]  # as Hudi's SQL records it since 0.14
    assert last_write_result().records_updated == 2
    assert_rs(spark, path, "update", {(1, "A", 2, "x"), (2, "b", 1, "y"), (3, "C", 2, "x")})

    spark.sql(f"DELETE FROM {table} WHERE id = 2")
    assert operations(path) == ["BULK_INSERT", "UPSERT_PREPPED", "DELETE_PREPPED"]
    assert_rs(spark, path, "delete", {(1, "A", 2, "x"), (3, "C", 2, "x")})
    assert sorted(r["id"] for r in spark.table(table).collect()) == [1, 3]

    before = operations(path)
    assert_refused(spark, lambda: spark.sql(f"UPDATE {table} SET id = 9 WHERE id = 1"), table, "SET id",
                   "record key")
    if partitioned:
        assert_refused(spark, lambda: spark.sql(f"UPDATE {table} SET dt = 'q'"), table, "SET dt", "partition")
    assert operations(path) == before
    assert_rs(spark, path, "after refusals", {(1, "A", 2, "x"), (3, "C", 2, "x")})

    spark.sql(f"DELETE FROM {table}")
    assert operations(path)[-1] == "DELETE_PREPPED"
    assert_rs(spark, path, "delete all", set())
    spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize(("table_type", "partitioned"), SHAPES_A)
def test_merge_into(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    table, path = name("merge"), str(tmp_path / "t")
    partition = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"""CREATE TABLE {table} USING hudi {partition} LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x'), (2, 'b', 1L, 'y'), (3, 'c', 1L, 'x') AS s(id, v, ts, dt)""")
    source = name("src")
    spark.createDataFrame([(1, "A", 2, "x"), (2, "B", 2, "y"), (4, "d", 2, "y")], "id int, v string, ts long, dt string") \
        .createOrReplaceTempView(source)
    spark.sql(f"""MERGE INTO {table} t USING {source} s ON t.id = s.id
                  WHEN MATCHED AND s.id = 1 THEN UPDATE SET *
                  WHEN MATCHED THEN UPDATE SET v = concat(t.v, s.v), ts = s.ts
                  WHEN NOT MATCHED THEN INSERT *""")
    assert operations(path) == ["BULK_INSERT", "UPSERT"]
    result = last_write_result()
    assert (result.records_inserted, result.records_updated) == (1, 2)
    assert_rs(spark, path, "merge", {(1, "A", 2, "x"), (2, "bB", 2, "y"), (3, "c", 1, "x"), (4, "d", 2, "y")})

    spark.sql(f"MERGE INTO {table} t USING (SELECT 3 AS k) s ON t.id = s.k WHEN MATCHED THEN DELETE")
    assert operations(path) == ["BULK_INSERT", "UPSERT", "DELETE"]
    assert_rs(spark, path, "merge delete", {(1, "A", 2, "x"), (2, "bB", 2, "y"), (4, "d", 2, "y")})

    before = operations(path)
    assert_refused(spark, lambda: spark.sql(
        f"MERGE INTO {table} t USING {source} s ON t.v = s.v WHEN MATCHED THEN UPDATE SET ts = s.ts"),
        table, "ON", "record key")
    assert_refused(spark, lambda: spark.sql(
        f"MERGE INTO {table} t USING {source} s ON t.id = s.id AND t.ts < s.ts WHEN MATCHED THEN UPDATE SET *"),
        table, "ON", "record key")
    assert_refused(spark, lambda: spark.sql(
        f"MERGE INTO {table} t USING {source} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET id = s.id + 10"),
        table, "SET id", "record key")
    if partitioned:
        assert_refused(spark, lambda: spark.sql(
            f"MERGE INTO {table} t USING {source} s ON t.id = s.id WHEN MATCHED THEN UPDATE SET dt = 'q'"),
            table, "SET dt", "partition")
    assert_refused(spark, lambda: spark.sql(
        f"MERGE INTO {table} t USING {source} s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE"),
        table, "NOT MATCHED BY SOURCE")
    assert operations(path) == before
    assert_rs(spark, path, "after refusals", {(1, "A", 2, "x"), (2, "bB", 2, "y"), (4, "d", 2, "y")})
    spark.sql(f"DROP TABLE {table}")


def test_a_driver_without_python_refuses_writes(spark, tmp_path: Path) -> None:
    """As in the Thrift server, where no Python driver registered the writer: one clear error, nothing written."""
    from hudi_engine.spark.save import register_writer

    writes = spark.sparkContext._jvm.hudiengine.spark.Writes
    writes.register(None)
    try:
        assert_refused(spark, lambda: frame(spark, [(1, "a", 1, "x")]).write.format("hudi").options(**OPTIONS)
                       .save(str(tmp_path / "t")), "needs the Python engine in the Spark driver", "Thrift server")
    finally:
        register_writer(spark)
    assert not (tmp_path / "t").exists()
    frame(spark, [(1, "a", 1, "x")]).write.format("hudi").options(**OPTIONS).save(str(tmp_path / "t"))
    assert operations(tmp_path / "t") == ["UPSERT"]


def columns(path: Path | str) -> list[str]:
    """The table's columns as hudi-rs reads them (meta columns left out)."""
    return [c for c in rs_snapshot(path).column_names if not c.startswith("_hoodie_")]


@pytest.mark.parametrize(("table_type", "partitioned"), SHAPES_B)
def test_merge_with_delete_clauses(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    """Delete clauses beside update and insert clauses: one upsert in which the rows a delete clause chose delete
    their key (Hudi's ExpressionPayload); the clauses apply in order, the first whose condition holds."""
    table, path = name("merge_del"), str(tmp_path / "t")
    partition = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"""CREATE TABLE {table} USING hudi {partition} LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x'), (2, 'b', 1L, 'y'), (3, 'c', 1L, 'x'), (4, 'd', 1L, 'y')
                  AS s(id, v, ts, dt)""")
    source = name("src")
    spark.createDataFrame([(1, "A", 2, "x", "d"), (2, "B", 2, "y", "u"), (3, "C", 2, "x", "d"), (4, "D", 2, "y", "k"),
                           (5, "e", 2, "x", "d"), (6, "f", 2, "y", "i")],
                          "id int, v string, ts long, dt string, op string").createOrReplaceTempView(source)
    # 1: the first clause (a delete) wins over the update below it; 3: deleted by the second delete clause;
    # 2: updated; 4: matched by no clause, left as it is; 5: not matched and excluded; 6: inserted
    spark.sql(f"""MERGE INTO {table} t USING {source} s ON t.id = s.id
                  WHEN MATCHED AND s.op = 'd' AND s.id = 1 THEN DELETE
                  WHEN MATCHED AND s.op = 'u' THEN UPDATE SET v = s.v, ts = s.ts
                  WHEN MATCHED AND s.op = 'd' THEN DELETE
                  WHEN MATCHED AND s.id = 1 THEN UPDATE SET v = 'never'
                  WHEN NOT MATCHED AND s.op <> 'd' THEN INSERT *""")
    assert operations(path) == ["BULK_INSERT", "UPSERT"]
    result = last_write_result()
    assert (result.records_inserted, result.records_updated, result.records_deleted) == (1, 1, 2), result
    expected = {(2, "B", 2, "y"), (4, "d", 1, "y"), (6, "f", 2, "y")}
    assert_rs(spark, path, "merge with deletes", expected)
    assert columns(path) == ["id", "v", "ts", "dt"], "the delete flag is not a column of the table"
    assert sorted(r["id"] for r in spark.table(table).collect()) == [2, 4, 6]
    spark.sql(f"DROP TABLE {table}")


def test_dbt_spark_snapshot_merge(spark, tmp_path: Path) -> None:
    """dbt-spark 1.11's snapshot MERGE (`spark__snapshot_merge_sql`), as it renders, on a Hudi snapshot table keyed
    by dbt_scd_id: matched rows with a change get their dbt_valid_to set, new versions are inserted."""
    table, path = name("snap"), str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {table} USING hudi LOCATION '{path}' TBLPROPERTIES (primaryKey = 'dbt_scd_id')
                  AS SELECT * FROM VALUES
                    (1, 'a', 'h1', TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:00:00',
                     CAST(NULL AS TIMESTAMP)),
                    (2, 'b', 'h2', TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:00:00',
                     CAST(NULL AS TIMESTAMP))
                  AS s(id, v, dbt_scd_id, dbt_updated_at, dbt_valid_from, dbt_valid_to)""")
    staging = name("snap__dbt_tmp")
    spark.sql(f"""CREATE OR REPLACE TEMPORARY VIEW {staging} AS SELECT * FROM VALUES
                    (1, 'A', 'h3', TIMESTAMP '2024-02-01 00:00:00', TIMESTAMP '2024-02-01 00:00:00',
                     CAST(NULL AS TIMESTAMP), 'insert'),
                    (1, 'a', 'h1', TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-01 00:00:00',
                     TIMESTAMP '2024-02-01 00:00:00', 'update'),
                    (3, 'c', 'h4', TIMESTAMP '2024-02-01 00:00:00', TIMESTAMP '2024-02-01 00:00:00',
                     CAST(NULL AS TIMESTAMP), 'insert')
                  AS s(id, v, dbt_scd_id, dbt_updated_at, dbt_valid_from, dbt_valid_to, dbt_change_type)""")
    spark.sql(f"""
    merge into {table} as DBT_INTERNAL_DEST
      using {staging} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id
    when matched
       and DBT_INTERNAL_DEST.dbt_valid_to is null
     and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update
        set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to

    when not matched
     and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert *
    """)
    assert operations(path) == ["BULK_INSERT", "UPSERT"]
    got = {(r["id"], r["v"], r["dbt_scd_id"], r["dbt_valid_to"] is None) for r in spark.table(table).collect()}
    assert got == {(1, "a", "h1", False), (1, "A", "h3", True), (2, "b", "h2", True), (3, "c", "h4", True)}
    assert_rs(spark, path, "snapshot merge")
    spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize("table_type, partitioned", [("cow", False), ("mor", True)])
def test_create_table_then_dml(spark, tmp_path: Path, table_type: str, partitioned: bool) -> None:
    """CREATE TABLE without AS SELECT makes an empty Hudi table (hoodie.properties, no instant) and its catalog entry;
    INSERT, UPDATE and MERGE then work on it, each one instant; TRUNCATE leaves it empty, without instants."""
    table, path = name("created"), str(tmp_path / "t")
    partition = "PARTITIONED BY (dt)" if partitioned else ""
    spark.sql(f"""CREATE TABLE {table} (id int, v string, ts bigint, dt string) USING hudi {partition}
                  LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')""")
    config = HudiTable.load(path).config
    assert config.name == table and list(config.record_key_fields) == ["id"] and config.precombine_field == "ts"
    assert config.table_type == ("MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE")
    assert list(config.partition_fields) == (["dt"] if partitioned else [])
    assert operations(path) == []
    assert spark.table(table).columns[5:] == ["id", "v", "ts", "dt"]
    assert spark.table(table).count() == 0

    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
    assert operations(path) == ["INSERT"]
    spark.sql(f"UPDATE {table} SET v = 'B' WHERE id = 2")
    spark.sql(f"""MERGE INTO {table} t USING (SELECT 3 AS id, 'c' AS v, 1L AS ts, 'x' AS dt) s ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    assert operations(path) == ["INSERT", "UPSERT_PREPPED", "UPSERT"]
    assert_rs(spark, path, "created table", {(1, "a", 1, "x"), (2, "B", 1, "y"), (3, "c", 1, "x")})

    spark.sql(f"TRUNCATE TABLE {table}")
    assert operations(path) == []  # as Hudi's: the folder deleted, the table made again from hoodie.properties
    assert_rs(spark, path, "truncated", set())
    assert spark.table(table).count() == 0
    spark.sql(f"INSERT INTO {table} VALUES (4, 'd', 1, 'y')")
    assert_rs(spark, path, "after truncate", {(4, "d", 1, "y")})
    spark.sql(f"DROP TABLE {table}")


def test_create_table_refusals(spark, tmp_path: Path) -> None:
    """CREATE TABLE on a location that holds a Hudi table takes the table as it is (contradictions refused);
    ALTER TABLE ADD COLUMNS of a column it has and TRUNCATE / DROP of a partition it lacks are refused by name;
    nothing is written."""
    table, path = name("located"), str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {table} USING hudi PARTITIONED BY (dt) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x') AS s(id, v, ts, dt)""")
    before = operations(path)
    again = name("again")
    spark.sql(f"CREATE TABLE {again} USING hudi LOCATION '{path}'")  # the entry from the table's hoodie.properties
    assert spark.table(again).columns[5:] == ["id", "v", "ts", "dt"]
    assert [r["id"] for r in spark.table(again).collect()] == [1]
    spark.sql(f"DROP TABLE {again}")
    spark.sql(f"""CREATE TABLE {again} (id int, v string, ts bigint, dt string) USING hudi PARTITIONED BY (dt)
                  LOCATION '{path}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'cow')""")
    spark.sql(f"DROP TABLE {again}")
    for ddl, words in [
        (f"CREATE TABLE {again} USING hudi LOCATION '{path}' TBLPROPERTIES (primaryKey = 'v')",
         ["primaryKey='v'", "'id'"]),
        (f"CREATE TABLE {again} USING hudi LOCATION '{path}' TBLPROPERTIES (type = 'mor')", ["type='mor'"]),
        (f"CREATE TABLE {again} (id int, v string) USING hudi LOCATION '{path}'", ["columns"]),
        (f"CREATE TABLE {again} (id int, v string, ts bigint, dt string) USING hudi PARTITIONED BY (v) "
         f"LOCATION '{path}'", ["PARTITIONED BY (v)"]),
    ]:
        assert_refused(spark, lambda ddl=ddl: spark.sql(ddl), again, path, *words)
        assert not spark.catalog.tableExists(again)
    assert_refused(spark, lambda: spark.sql(f"CREATE TABLE {table} (id int) USING hudi"), table, "already exists")
    assert_refused(spark, lambda: spark.sql(f"ALTER TABLE {table} ADD COLUMNS (V string)"), table,
                   "ADD COLUMNS", "has v already")
    assert_refused(spark, lambda: spark.sql(f"TRUNCATE TABLE {table} PARTITION (dt = 'z')"),
                   "partition 'dt=z' does not exist", "'dt=x'")
    assert_refused(spark, lambda: spark.sql(f"ALTER TABLE {table} DROP PARTITION (v = 'a')"), table,
                   "v is not a partition field; the table's are dt")
    stamped = str(tmp_path / "s")
    spark.sql(f"CREATE TABLE {again} (id int, at timestamp) USING hudi LOCATION '{stamped}' "
              "TBLPROPERTIES (primaryKey = 'id')")
    spark.sql(f"DROP TABLE {again}")
    spark.sql(f"CREATE TABLE {again} (id int, at timestamp) USING hudi LOCATION '{stamped}'")  # the same columns
    spark.sql(f"INSERT INTO {again} VALUES (1, TIMESTAMP '2024-01-01 00:00:00')")
    assert [r["id"] for r in spark.table(again).collect()] == [1]
    spark.sql(f"DROP TABLE {again}")
    new = str(tmp_path / "u")
    assert_refused(spark, lambda: spark.sql(f"CREATE TABLE {again} (id int, v string) USING hudi LOCATION '{new}' "
                                            "TBLPROPERTIES (primaryKey = 'key')"), again, "record key field key")
    assert_refused(spark, lambda: spark.sql(f"CREATE TABLE {again} USING hudi LOCATION '{new}'"), again,
                   "without columns")
    assert not (tmp_path / "u" / ".hoodie").exists()
    assert operations(path) == before
    assert_rs(spark, path, "after refusals", {(1, "a", 1, "x")})
    spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_alter_table_add_columns(spark, tmp_path: Path, table_type: str) -> None:
    """ALTER TABLE ADD COLUMNS, as Hudi's command: one instant of no rows, operation ALTER_SCHEMA, whose schema has
    the new columns before the partition column (Spark SQL keeps those last; INSERT maps its values by that order,
    as Java Hudi's does: tests/java_hudi/test_same_sql.py); the rows before read them as null (ours and hudi-rs),
    later writes fill them."""
    table, path = name("altered"), str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {table} USING hudi PARTITIONED BY (dt) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
                  AS SELECT * FROM VALUES (1, 'a', 1L, 'x'), (2, 'b', 1L, 'y') AS s(id, v, ts, dt)""")
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (w string, n bigint)")
    assert operations(path) == ["BULK_INSERT", "ALTER_SCHEMA"]
    assert HudiTable.load(path).schema().names[-3:] == ["w", "n", "dt"]
    assert spark.table(table).columns[-3:] == ["w", "n", "dt"]
    assert_rs(spark, path, "altered", {(1, "a", 1, None, None, "x"), (2, "b", 1, None, None, "y")})
    spark.sql(f"INSERT INTO {table} VALUES (3, 'c', 1, 'z', 7, 'x')")
    spark.sql(f"UPDATE {table} SET w = 'q' WHERE id = 1")
    assert operations(path) == ["BULK_INSERT", "ALTER_SCHEMA", "INSERT", "UPSERT_PREPPED"]
    assert_rs(spark, path, "written after", {(1, "a", 1, "q", None, "x"), (2, "b", 1, None, None, "y"),
                                              (3, "c", 1, "z", 7, "x")})
    # A column list that leaves out nullable columns writes them NULL, as Spark (and Hudi's INSERT) fill them.
    spark.sql(f"INSERT INTO {table} (id, v, ts, dt) VALUES (4, 'd', 1, 'y')")
    assert_rs(spark, path, "a column list without the new columns", {
        (1, "a", 1, "q", None, "x"), (2, "b", 1, None, None, "y"), (3, "c", 1, "z", 7, "x"), (4, "d", 1, None, None, "y")})
    spark.sql(f"DROP TABLE {table}")
