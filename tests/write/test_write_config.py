from __future__ import annotations

import warnings

import pytest

from hudi_engine.errors import WriteError
from hudi_engine.write.write_config import IndexType, Operation, WriteConfig


def test_defaults_follow_hudi():
    c = WriteConfig.from_options({"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"})
    assert c.operation is Operation.UPSERT and c.table_type == "COPY_ON_WRITE" and c.index_type is IndexType.SIMPLE
    assert c.key_generator_class.endswith("NonpartitionedKeyGenerator")
    assert c.small_file_limit == 100 * 1024 * 1024 and c.max_file_size == 120 * 1024 * 1024
    assert c.combine_before_upsert and not c.combine_before_insert
    assert c.commit_action == "commit"


def test_key_generator_inferred_like_hudi():
    simple = WriteConfig.from_options({"hoodie.datasource.write.recordkey.field": "id",
                                       "hoodie.datasource.write.partitionpath.field": "dt"})
    complex_ = WriteConfig.from_options({"hoodie.datasource.write.recordkey.field": "id,name",
                                         "hoodie.datasource.write.partitionpath.field": "dt"})
    short = WriteConfig.from_options({"hoodie.datasource.write.keygenerator.class": "ComplexKeyGenerator"})
    assert simple.key_generator_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert complex_.key_generator_class == "org.apache.hudi.keygen.ComplexKeyGenerator"
    assert short.key_generator_class == "org.apache.hudi.keygen.ComplexKeyGenerator"


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
