"""`CALL` statements in the native session: parsed by the component, run by the Python driver (docs/procedures.md)."""
from __future__ import annotations

import itertools

import pytest
from pyspark.errors import IllegalArgumentException

from hudi_engine import HudiTable
from hudi_engine.procedures import call

_names = itertools.count()


def two_commits(spark, tmp_path) -> str:
    """A catalog table of two inserts: ids 1 and 2, then 3."""
    t = f"calls_{next(_names)}"
    spark.sql(f"CREATE TABLE {t} (id int, v string, ts bigint) USING hudi LOCATION '{tmp_path / t}' "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 1)")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'c', 1)")
    return t


def test_call_by_catalog_name_positional_and_named(spark, tmp_path):
    t = two_commits(spark, tmp_path)
    named = spark.sql(f"CALL show_commits(table => '{t}')")
    assert named.schema.simpleString() == (
        "struct<commit_time:string,state_transition_time:string,action:string,total_bytes_written:bigint,"
        "total_files_added:bigint,total_files_updated:bigint,total_partitions_written:bigint,"
        "total_records_written:bigint,total_update_records_written:bigint,total_errors:bigint>")
    assert [tuple(r) for r in named.collect()] == [tuple(r.values()) for r in
                                                   call("show_commits", str(tmp_path / t)).to_pylist()]
    latest = named.collect()[0].commit_time
    assert spark.sql(f"call default.show_commits('default.{t}', 1);").collect() == named.collect()[:1]
    assert spark.sql(f"-- the latest commit\n/* by position */ CALL show_commits(\n  '{t}',\n  1\n)").collect() == \
        named.collect()[:1]
    files = spark.sql(f"CALL show_commit_files(table => '{t}', instant_time => '{latest}')").collect()
    assert [(f.previous_commit, f.total_records_written) for f in files] == [(named.collect()[1].commit_time, 3)]
    assert spark.sql(f"CALL rollback_to_instant(table => '{t}', instant_time => \"{latest}\")").collect()[0][0]
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 2
    assert spark.sql(f"CALL show_rollbacks(table => '{t}')").collect()[0].rollback_instant == latest


def test_savepoint_then_rollback_to_it_in_sql(spark, tmp_path):
    t = f"calls_{next(_names)}"
    spark.sql(f"CREATE TABLE {t} (id int, v string, ts bigint) USING hudi LOCATION '{tmp_path / t}' "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 1)")
    assert spark.sql(f"CALL create_savepoint(table => '{t}', comments => 'before the backfill')").collect()[0][0]
    (savepoint,) = [r.savepoint_time for r in spark.sql(f"CALL show_savepoints(table => '{t}')").collect()]
    spark.sql(f"UPDATE {t} SET v = 'bad' WHERE id = 1")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'c', 1)")
    assert spark.sql(f"SELECT count(*) FROM {t} WHERE v = 'bad'").collect()[0][0] == 1
    assert spark.sql(f"CALL rollback_to_savepoint('{t}', '{savepoint}')").collect()[0][0]
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, v FROM {t}").collect()) == [(1, "a"), (2, "b")]
    assert spark.sql(f"CALL delete_savepoint(table => '{t}')").collect()[0][0]
    assert spark.sql(f"CALL show_savepoints(table => '{t}')").count() == 0


def test_upgrade_table_then_insert_and_downgrade_table_in_sql(spark, tmp_path):
    t = two_commits(spark, tmp_path)
    assert spark.sql(f"CALL upgrade_table(table => '{t}', to_version => 'NINE')").collect()[0].result is True
    assert HudiTable.load(str(tmp_path / t)).config.version == 9
    spark.sql(f"INSERT INTO {t} VALUES (4, 'd', 1)")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 2, 3, 4]
    assert spark.sql(f"CALL downgrade_table('{t}', 'SIX')").collect()[0].result is True
    assert HudiTable.load(str(tmp_path / t)).config.version == 6
    spark.sql(f"INSERT INTO {t} VALUES (5, 'e', 1)")
    assert sorted(r.id for r in spark.sql(f"SELECT id FROM {t}").collect()) == [1, 2, 3, 4, 5]


def test_drop_partition_by_call_alter_table_and_truncate(spark, tmp_path):
    t = f"calls_{next(_names)}"
    spark.sql(f"CREATE TABLE {t} USING hudi PARTITIONED BY (dt) LOCATION '{tmp_path / t}' "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') "
              "AS SELECT * FROM VALUES (1, 'a', 1L, 'a'), (2, 'b', 1L, 'b'), (3, 'c', 1L, 'c'), (4, 'd', 1L, 'd') "
              "AS s(id, v, ts, dt)")
    created = spark.sql(f"CALL show_commits(table => '{t}')").collect()[0].commit_time
    assert spark.sql(f"CALL drop_partition(table => '{t}', partition => 'dt=a')").collect()[0].result == "Success"
    spark.sql(f"ALTER TABLE {t} DROP PARTITION (dt = 'b')")
    spark.sql(f"ALTER TABLE {t} DROP IF EXISTS PARTITION (dt = 'zz')")  # nothing to do
    spark.sql(f"TRUNCATE TABLE {t} PARTITION (dt = 'c')")
    assert [r.id for r in spark.sql(f"SELECT id FROM {t}").collect()] == [4]
    commits = spark.sql(f"CALL show_commits(table => '{t}')").collect()
    assert [c.action for c in commits] == ["replacecommit"] * 3 + ["commit"]
    assert sorted(r.id for r in spark.read.format("hudi").option("as.of.instant", created)
                  .load(str(tmp_path / t)).collect()) == [1, 2, 3, 4]


def test_copy_to_temp_view_and_table_with_hudis_query_types(spark, tmp_path):
    t = two_commits(spark, tmp_path)
    commits = sorted(spark.sql(f"CALL show_commits(table => '{t}')").collect())
    first, second = (c.commit_time for c in commits)
    done_first, done_second = (c.state_transition_time for c in commits)  # v8+: ranges of completion times
    assert spark.sql(f"CALL copy_to_temp_view(table => '{t}', view_name => '{t}_now')").collect()[0].status == 0
    assert sorted(r.id for r in spark.table(f"{t}_now").collect()) == [1, 2, 3]
    spark.sql(f"CALL copy_to_temp_view(table => '{t}', view_name => '{t}_then', as_of_instant => '{first}')")
    assert sorted(r.id for r in spark.table(f"{t}_then").collect()) == [1, 2]
    spark.sql(f"CALL copy_to_temp_view(table => '{t}', view_name => '{t}_inc', query_type => 'incremental', "
              f"begin_instance_time => '{done_first}', end_instance_time => '{done_second}', global => true)")
    assert [r.id for r in spark.table(f"global_temp.{t}_inc").collect()] == [3]
    with pytest.raises(Exception, match="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS|already exists"):
        spark.sql(f"CALL copy_to_temp_view(table => '{t}', view_name => '{t}_now')").collect()
    assert spark.sql(f"CALL copy_to_table(table => '{t}', new_table => '{t}_copy', columns => 'id,v')"
                     ).collect()[0].status == 0
    assert sorted(tuple(r) for r in spark.table(f"{t}_copy").collect()) == [(1, "a"), (2, "b"), (3, "c")]
    spark.sql(f"CALL copy_to_table(table => '{t}', new_table => '{t}_copy', save_mode => 'append', "
              f"as_of_instant => '{first}')")
    assert sorted(r.id for r in spark.table(f"{t}_copy").collect()) == [1, 1, 2, 2, 3]
    spark.sql(f"DROP TABLE {t}_copy")


@pytest.mark.parametrize(("statement", "message"), [
    ("CALL show_commits(table => 'calls_0', bogus => 1)", "Argument: bogus is not a parameter of show_commits"),
    ("CALL show_commits(limit => 1)", "Argument: table is required"),
    ("CALL show_commits(table => 'calls_0', limit => 'x')", "Argument: limit of show_commits is of type integer"),
    ("CALL run_clustering(table => 'calls_0', predicate => 'p = 1')", "Argument: predicate of run_clustering is not"),
    ("CALL rollback_to_savepoint(table => 'calls_0', instant_time => '1')", "rollback_to_savepoint: there are no completed savepoints"),
    ("CALL show_commits(table => 'no_such_table')", "table => 'no_such_table': the table or view .* cannot be found"),
    ("CALL show_commits(table => 'calls_0'", "CALL: expected '\\)'"),
    ("CALL nope()", "There is no procedure named nope"),
])
def test_bad_calls_are_refused_by_name(spark, statement, message):
    with pytest.raises(IllegalArgumentException, match=message):
        spark.sql(statement)


def test_filter_is_a_spark_predicate_after_the_limit(spark, tmp_path):
    path = tmp_path / "filtered"
    spark.createDataFrame([(1, "a", 1)], "id int, v string, ts bigint").write.format("hudi").options(**{
        "hoodie.table.name": "filtered", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts"}).mode("append").save(str(path))
    rows = spark.sql(f"CALL show_table_properties(path => '{path}', limit => 100, "
                     "filter => \"key = 'hoodie.table.name' or value = 'filtered-not'\")").collect()
    assert [tuple(r) for r in rows] == [("hoodie.table.name", "filtered")]
    assert spark.sql(f"CALL show_table_properties(path => '{path}', limit => 1, filter => \"key like 'hoodie.%'\")"
                     ).count() == 1
    with pytest.raises(IllegalArgumentException, match="Argument: filter of show_table_properties: .*no_such"):
        spark.sql(f"CALL show_table_properties(path => '{path}', filter => 'no_such = 1')")
    with pytest.raises(Exception, match="Argument: filter of show_table_properties is a Spark SQL predicate"):
        call("show_table_properties", str(path), filter="key = 'x'")  # without Spark: refused
