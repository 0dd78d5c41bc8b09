"""Keys as Spark expressions (`spark.sql_keys`) spell every record key and partition path exactly as the Python key
generator does, where they are used at all; elsewhere they decline."""
from __future__ import annotations

import datetime

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.spark.sql_keys import sql_keys

ROWS = pa.table({
    "s": ["a", "b/c", "", None, "ü x"],
    "i": pa.array([1, -2, 0, 3_000_000_000, None], pa.int64()),
    "n": pa.array([7, 8, 9, 10, 11], pa.int32()),
    "b": [True, False, None, True, False],
    "d": pa.array([datetime.date(2024, 1, 2), datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31),
                   datetime.date(1970, 1, 1)], pa.date32()),
    "f": [1.5, 2.0, 1e20, None, -0.0],
    "k": ["k1", "k2", "k3", "k4", "k5"],
    "it's `q`": ["o'clock", "back\\slash", "new\nline", "`tick`", "plain"],  # quoted in SQL text (`sql_text`)
})


def _keygen(**options):
    base = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k"}
    return WriteConfig.from_options({**base, **options}).keys.key_generator()


@pytest.mark.parametrize("options", [
    {"hoodie.datasource.write.partitionpath.field": "s"},
    {"hoodie.datasource.write.partitionpath.field": "s", "hoodie.datasource.write.hive_style_partitioning": "true"},
    {"hoodie.datasource.write.partitionpath.field": "d"},
    {"hoodie.datasource.write.partitionpath.field": "b"},
    {"hoodie.datasource.write.recordkey.field": "n", "hoodie.datasource.write.partitionpath.field": "i"},
    {"hoodie.datasource.write.partitionpath.field": "s,i,d",
     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
    {"hoodie.datasource.write.recordkey.field": "s", "hoodie.datasource.write.partitionpath.field": "n",
     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
    {"hoodie.datasource.write.partitionpath.field": "",
     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"},
    {"hoodie.datasource.write.recordkey.field": "it's `q`", "hoodie.datasource.write.partitionpath.field": "it's `q`",
     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
     "hoodie.datasource.write.hive_style_partitioning": "true"},
])
def test_sql_keys_equal_the_key_generator(spark, options):
    keygen = _keygen(**options)
    key = ROWS.column(keygen.record_key_fields[0]).cast(pa.string())
    rows = ROWS.filter(pc.and_(pc.is_valid(key), pc.not_equal(key, "")))  # the row check refuses the others
    df = spark.createDataFrame(rows)
    exprs = sql_keys(keygen, df.schema)
    assert exprs is not None, "this key generator and these column types are spelled in SQL"
    got = df.select(exprs[0].alias("key"), exprs[1].alias("partition")).toArrow()
    assert got.column("key").to_pylist() == keygen.record_keys(rows).to_pylist()
    assert got.column("partition").to_pylist() == keygen.partition_paths(rows).to_pylist()


@pytest.mark.parametrize("options", [
    {"hoodie.datasource.write.partitionpath.field": "f"},  # Java's float spelling
    {"hoodie.datasource.write.recordkey.field": "f", "hoodie.datasource.write.partitionpath.field": "s"},
    {"hoodie.datasource.write.recordkey.field": "k,n", "hoodie.datasource.write.partitionpath.field": "s"},
    {"hoodie.datasource.write.partitionpath.field": "s", "hoodie.datasource.write.partitionpath.urlencode": "true"},
    {"hoodie.datasource.write.partitionpath.field": "i",
     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
     "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
     "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"},
])
def test_sql_keys_decline_what_only_the_key_generator_spells(spark, options):
    df = spark.createDataFrame(ROWS)
    assert sql_keys(_keygen(**options), df.schema) is None
