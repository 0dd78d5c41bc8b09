"""The CDC query through Spark: `spark.read.format("hudi")` with `hoodie.datasource.query.type=incremental` and
`hoodie.datasource.query.incremental.format=cdc` (the native source hands it to the merge source, one task per
file group), `read_table`, and `hudi_table_changes(path, 'cdc', ...)` answer what `HudiTable.read_changes` does;
a table without CDC is refused, never answered as a plain incremental read."""
from __future__ import annotations

import pytest
from java_tables import CASES, unzip_feature_table

from hudi_engine import HudiTable
from hudi_engine.spark import read_table, write

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, p string, ts bigint, v string"
OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "OP_KEY_ONLY",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
CDC = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc"}


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def test_spark_reads_the_cdc_query_as_the_engine_does(spark, tmp_path):
    path = tmp_path / "t"
    first = write(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 1, "y"), (3, "b", 1, "z")], SCHEMA), str(path),
                  OPTIONS).instant_time
    write(spark.createDataFrame([(2, "a", 2, "Y"), (9, "b", 2, "n")], SCHEMA), str(path), OPTIONS)
    write(spark.createDataFrame([(1, "a", 3, "x")], SCHEMA), str(path),
          dict(OPTIONS, **{"hoodie.datasource.write.operation": "delete"}))
    first = HudiTable.load(str(path)).timeline.completion_times().get(first, first)  # v8+: ranges of completion times
    expected = sorted(tuple(r.values()) for r in HudiTable.load(str(path)).read_changes(first).to_pylist())
    assert sorted(op for op, _, _, _ in expected) == ["d", "i", "u"]  # the range after the first commit

    df = spark.read.format("hudi").options(**CDC, **{"hoodie.datasource.read.begin.instanttime": first}).load(str(path))
    assert df.columns == ["op", "ts_ms", "before", "after"]
    assert rows(df) == expected
    assert rows(df.where("op = 'd'").select("op")) == [("d",)]  # Spark's filters and projections above the source
    assert rows(read_table(spark, str(path), {**CDC, "hoodie.datasource.read.begin.instanttime": first})) == expected
    assert rows(spark.sql(f"select * from hudi_table_changes('{path}', 'cdc', '{first}')")) == expected

    typed = spark.read.format("hudi").options(**CDC, **{"hoodie.datasource.read.begin.instanttime": first,
                                                        "hudi_engine.cdc.images": "struct"}).load(str(path))
    assert typed.schema["after"].dataType.simpleString() == "struct<id:bigint,p:string,ts:bigint,v:string>"
    assert rows(typed.where("op = 'u'").selectExpr("before.v", "after.v")) == [("y", "Y")]


def test_a_table_without_cdc_is_refused_not_read_as_plain_incremental(spark, tmp_path):
    path = tmp_path / "plain"
    plain = {k: v for k, v in OPTIONS.items() if "cdc" not in k}
    first = write(spark.createDataFrame([(1, "a", 1, "x")], SCHEMA), str(path), plain).instant_time
    with pytest.raises(Exception, match="hoodie.table.cdc.enabled is not true"):
        spark.read.format("hudi").options(**CDC, **{"hoodie.datasource.read.begin.instanttime": "0"}).load(
            str(path)).collect()
    with pytest.raises(Exception, match="hoodie.table.cdc.enabled is not true"):
        spark.sql(f"select * from hudi_table_changes('{path}', 'cdc', '0')").collect()
    latest = spark.read.format("hudi").options(**{"hoodie.datasource.query.type": "incremental",
                                                  "hoodie.datasource.read.begin.instanttime": "0"}).load(str(path))
    assert [r["_hoodie_commit_time"] for r in latest.collect()] == [first]


def test_a_cdc_query_over_bootstrap_skeleton_files_is_refused_by_name(spark, tmp_path):
    """Java Hudi's CDC table over a METADATA_ONLY bootstrap: both Spark paths refuse by name, as HudiTable does
    (tests/test_cdc_query.py), rather than read the skeleton files' rows as nulls."""
    (case,) = [c for c in CASES if c.builder == "bootstrap_cdc" and c.version == 9]
    path, _ = unzip_feature_table(case, tmp_path)
    with pytest.raises(Exception, match=f"table {case.name} at .*skeleton base files"):
        spark.read.format("hudi").options(**CDC, **{"hoodie.datasource.read.begin.instanttime": "000"}).load(
            str(path)).collect()
    with pytest.raises(Exception, match=f"table {case.name} at .*skeleton base files"):
        spark.sql(f"select * from hudi_table_changes('{path}', 'cdc', '000')").collect()


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_reads_the_cdc_query_of_a_schema_evolved_table_by_column_id(spark, tmp_path, table_type):
    """After a rename (v -> name) and a widening under schema on read, the Spark sources answer the CDC query as
    `HudiTable.read_changes` does: every image under the new names, older commits' found by id."""
    path = str(tmp_path / "t")
    opts = dict(OPTIONS, **{"hoodie.datasource.write.table.type": table_type,
                            "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER"})
    first = write(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 1, "y")], SCHEMA), path, opts).instant_time
    write(spark.createDataFrame([(2, "a", 2, "Y"), (9, "a", 2, "n")], SCHEMA), path, opts)
    on = {**opts, "hoodie.schema.on.read.enable": "true"}
    HudiTable.load(path).rename_column("v", "name", options=on)
    write(spark.createDataFrame([(1, "a", 3, "X")], "id bigint, p string, ts bigint, name string"), path, opts)
    first = HudiTable.load(path).timeline.completion_times().get(first, first)
    expected = sorted(tuple(r.values()) for r in HudiTable.load(path).read_changes(first).to_pylist())
    assert len(expected) == 3 and all('"v"' not in (b or "") + (a or "") for _, _, b, a in expected)
    assert any('"name": "Y"' in (a or "") for _, _, _, a in expected)  # written before the rename, read by id
    begin = {**CDC, "hoodie.datasource.read.begin.instanttime": first}
    assert rows(spark.read.format("hudi").options(**begin).load(path)) == expected
    assert rows(spark.sql(f"select * from hudi_table_changes('{path}', 'cdc', '{first}')")) == expected
    typed = spark.read.format("hudi").options(**begin, **{"hudi_engine.cdc.images": "struct"}).load(path)
    assert rows(typed.where("op = 'u'").selectExpr("before.name", "after.name")) == [("x", "X"), ("y", "Y")]
