from __future__ import annotations

import warnings

import pytest

from hudi_engine.config.write_config import IndexType, Operation, WriteConfig
from hudi_engine.errors import ConfigError, WriteError
from hudi_engine.table_config import TableConfig


def test_defaults_follow_hudi():
    c = WriteConfig.from_options({"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"})
    assert c.operation is Operation.UPSERT and c.table_type == "COPY_ON_WRITE" and c.index.type is IndexType.SIMPLE
    assert c.keys.key_generator_class.endswith("NonpartitionedKeyGenerator")
    assert c.files.small_file_limit == 100 * 1024 * 1024 and c.files.max_file_size == 120 * 1024 * 1024
    assert c.merge.combine_before_upsert and not c.merge.combine_before_insert and c.merge.combine_before_delete
    assert c.files.compression == "snappy" and c.bloom.num_entries == 60000 and c.clean.commits_retained == 10
    assert c.lock.wait_timeout_ms == 60000 and c.parallelism.for_operation(Operation.UPSERT, 7) == 7
    assert c.commit_action == "commit"


def test_key_generator_inferred_like_hudi():
    simple = WriteConfig.from_options({"hoodie.datasource.write.recordkey.field": "id",
                                       "hoodie.datasource.write.partitionpath.field": "dt"})
    complex_ = WriteConfig.from_options({"hoodie.datasource.write.recordkey.field": "id,name",
                                         "hoodie.datasource.write.partitionpath.field": "dt"})
    short = WriteConfig.from_options({"hoodie.datasource.write.keygenerator.class": "ComplexKeyGenerator"})
    by_type = WriteConfig.from_options({"hoodie.datasource.write.keygenerator.type": "custom"})
    assert simple.keys.key_generator_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert complex_.keys.key_generator_class == "org.apache.hudi.keygen.ComplexKeyGenerator"
    assert short.keys.key_generator_class == "org.apache.hudi.keygen.ComplexKeyGenerator"
    assert by_type.keys.key_generator_class == "org.apache.hudi.keygen.CustomKeyGenerator"
    with pytest.raises(ConfigError, match="hoodie.datasource.write.keygenerator.class='Foo'.*supported: "):
        WriteConfig.from_options({"hoodie.datasource.write.keygenerator.class": "Foo"})


def test_mor_and_overwrite_actions():
    mor = WriteConfig.from_options({"hoodie.datasource.write.table.type": "MOR"})
    assert mor.table_type == "MERGE_ON_READ" and mor.commit_action == "deltacommit"
    over = WriteConfig.from_options({"hoodie.datasource.write.table.type": "MERGE_ON_READ",
                                     "hoodie.datasource.write.operation": "insert_overwrite"})
    assert over.commit_action == "replacecommit" and over.operation.operation_type == "INSERT_OVERWRITE"


def test_every_bad_option_is_reported_at_once():
    with pytest.raises(WriteError) as e:
        WriteConfig.from_options({"hoodie.datasource.write.operation": "merge", "hoodie.index.type": "HBASE",
                                  "hoodie.parquet.max.file.size": "big", "hoodie.combine.before.upsert": "yes",
                                  "hoodie.datasource.write.payload.class": "Nope"})
    msg = str(e.value)
    for expected in ("hoodie.datasource.write.operation='merge'", "upsert", "hoodie.index.type='HBASE'",
                     "BUCKET", "hoodie.parquet.max.file.size='big'", "hoodie.combine.before.upsert",
                     "PartialUpdateAvroPayload"):
        assert expected in msg


def test_typo_of_a_known_key_warns():
    with pytest.warns(UserWarning, match="hoodie.datasource.write.precombine.field"):
        WriteConfig.from_options({"hoodie.datasource.write.precombin.field": "ts"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        WriteConfig.from_options({"hoodie.some.other.key": "1", "spark.x": "y"})  # unrelated keys: silent


def test_commit_metadata_options_follow_hudis_prefix():
    c = WriteConfig.from_options({"_job": "nightly", "hoodie.index.type": "BLOOM"})
    assert c.commit_extra_metadata == {"_job": "nightly"}
    c = WriteConfig.from_options({"hoodie.datasource.write.commitmeta.key.prefix": "meta.", "meta.run": "7"})
    assert c.commit_extra_metadata == {"meta.run": "7"}


def test_cross_option_checks_name_both_keys():
    with pytest.raises(ConfigError, match="hoodie.parquet.max.file.size=1000 is below hoodie.parquet.small.file.limit="):
        WriteConfig.from_options({"hoodie.parquet.max.file.size": "1000"})
    assert WriteConfig.from_options({"hoodie.parquet.max.file.size": "1000",
                                     "hoodie.parquet.small.file.limit": "0"}).files.max_file_size == 1000


@pytest.mark.parametrize("key", ["hoodie.upsert.shuffle.parallelism", "hoodie.insert.shuffle.parallelism",
                                 "hoodie.bulkinsert.shuffle.parallelism", "hoodie.delete.shuffle.parallelism"])
@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_parallelism_must_be_a_whole_number(key, value):
    with pytest.raises(ConfigError, match=f"{key}='{value}': expected a"):
        WriteConfig.from_options({key: value})


def test_parallelism_per_operation_and_spark_default():
    c = WriteConfig.from_options({"hoodie.upsert.shuffle.parallelism": "12", "hoodie.bulkinsert.shuffle.parallelism": "3"})
    p = c.parallelism
    assert p.for_operation(Operation.UPSERT, 4) == 12 and p.for_operation(Operation.BULK_INSERT, 4) == 3
    assert p.for_operation(Operation.INSERT, 4) == 4 and p.for_operation(Operation.DELETE, 0) == 1


def test_an_alias_and_its_key_must_agree():
    assert WriteConfig.from_options({"hoodie.datasource.write.table.name": "t"}).table_name == "t"
    with pytest.raises(ConfigError, match="set the same option hoodie.table.name to different values"):
        WriteConfig.from_options({"hoodie.table.name": "a", "hoodie.datasource.write.table.name": "b"})


def test_table_agreement_is_one_check_and_ignores_column_case():
    table = TableConfig.create("t", "MERGE_ON_READ", ["id"], ["dt"], "ts")
    mine = WriteConfig.from_options({"hoodie.datasource.write.recordkey.field": "ID",
                                     "hoodie.datasource.write.partitionpath.field": "DT"})
    fitted = mine.for_table(table, "/t")
    assert fitted.table_type == "MERGE_ON_READ" and fitted.keys.record_key_fields == ("id",)
    assert fitted.merge.precombine_field == "ts" and fitted.table_name == "t"
    bad = WriteConfig.from_options({"hoodie.datasource.write.table.type": "COW",
                                    "hoodie.datasource.write.partitionpath.field": "",
                                    "hoodie.datasource.write.precombine.field": "other"})
    problems = bad.contradictions(table)
    assert len(problems) == 3 and str(problems[0]).startswith("hoodie.datasource.write.table.type='COW' contradicts")
    with pytest.raises(ConfigError, match="table /t .*rewrite the table"):
        bad.for_table(table, "/t")


def test_a_new_table_keeps_the_timestamp_key_generators_options():
    """Hudi's writer keeps hoodie.keygen.timebased.* in a new table's hoodie.properties; Hudi 1.2 cannot read a
    hive-style timestamp-partitioned version-8 table without them (tests/java_hudi/test_java_reads.py)."""
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "event_ms",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
               "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
               "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd", "hoodie.keygen.timebased.timezone": "UTC"}
    props = WriteConfig.from_options(options).new_table_config("/t").props
    assert {k: v for k, v in props.items() if k.startswith("hoodie.keygen.")} == {
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd", "hoodie.keygen.timebased.timezone": "UTC"}
    simple = {**options, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"}
    assert not any(k.startswith("hoodie.keygen.") for k in WriteConfig.from_options(
        {k: v for k, v in simple.items() if not k.startswith("hoodie.keygen.")}).new_table_config("/t").props)


def test_inline_clustering_with_the_bucket_index_is_refused_before_the_write():
    with pytest.raises(ConfigError, match="Clustering is not supported for bucket index"):
        WriteConfig.from_options({"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                                  "hoodie.clustering.inline": "true", "hoodie.index.type": "BUCKET"})
    assert WriteConfig.from_options({"hoodie.table.name": "t", "hoodie.clustering.inline": "true"}).clustering.inline
