"""Hudi's write-side keys that keys.py does not declare (config/hudi_keys.py): each refused value fails
`WriteConfig.from_options` by name with the other option errors, every other value and every no-op key is accepted
and changes nothing, and docs/options.md is the registry's rendering. Keys read from Hudi's config classes
(HoodieWriteConfig, HoodieIndexConfig, HoodieStorageConfig, HoodieCompactionConfig, HoodieClusteringConfig,
HoodieMetadataConfig, HoodieLockConfig, HoodieSyncConfig / HiveSyncConfigHolder, ... of apache/hudi)."""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest
from java_job import java_job_options

from dbt.adapters.hudi.model_config import HudiConfigError, HudiModelConfig
from hudi_engine.config import hudi_keys as H
from hudi_engine.config.keys import WRITE_OPTIONS
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "options.md"
BASE = {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts"}
DECLARED = {k for o in WRITE_OPTIONS for k in o.all_keys}


def refused_sample(r: H.Refusal) -> str:
    """A value the refusal refuses: its first listed value, else a column / class / number it does not accept."""
    return r.values[0] if r.values else {"hoodie.merge.allow.duplicate.on.inserts": "true"}.get(r.key, "other_col")


def needed_with(r: H.Refusal) -> dict[str, str]:
    """Other options under which the refusal's sample value is refused."""
    bucket = {"hoodie.index.type": "BUCKET"}
    return {"hoodie.compact.inline.trigger.strategy": {"hoodie.compact.inline": "true"},
            "hoodie.index.bucket.engine": bucket, "hoodie.bucket.index.hash.field": bucket,
            "hoodie.bucket.index.partition.expressions": bucket,
            "hoodie.write.lock.conflict.resolution.strategy": {
                "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"}}.get(r.key, {})


def error_of(options: dict, where: str = "") -> str:
    with pytest.raises(ConfigError) as e:
        WriteConfig.from_options({**BASE, **options}, where)
    return str(e.value)


def test_docs_are_the_registry():
    assert DOCS.read_text() == H.classification_markdown(), \
        "docs/options.md is stale: run `python -m hudi_engine.config --classification docs/options.md`"


def test_registry_is_consistent():
    refused = set(H.REFUSED_BY_KEY)
    assert len(refused) == sum(len(r.all_keys) for r in H.REFUSALS), "a key is refused twice"
    assert sum(len(g.keys) for g in H.NO_OPS) == len(H.NO_OP_KEYS), "a no-op key is listed twice"
    assert not refused & H.NO_OP_KEYS
    # Declared keys are honoured by keys.py; the declared key with a refused value is the Hive sync mode (jdbc: a
    # HiveServer2 connection, which this engine does not open).
    assert refused & DECLARED == {"hoodie.datasource.hive_sync.mode"}
    assert not H.NO_OP_KEYS & DECLARED
    assert all(k.startswith(("hoodie.", "_hoodie.", "_.hoodie.")) for k in H.known_keys())


@pytest.mark.parametrize("refusal", H.REFUSALS, ids=lambda r: r.key)
def test_each_refused_value_is_refused_by_name(refusal):
    value = refused_sample(refusal)
    for key in refusal.all_keys:
        text = error_of({**needed_with(refusal), key: value}, "/data/orders")
        assert text.startswith("table /data/orders: invalid Hudi write options:\n  ")
        shown = "(set)" if refusal.secret else repr(value)
        assert f"{key}={shown} is not supported: {refusal.reason}. {refusal.way_out}" in text
        assert not refusal.secret or value not in text


def accepted_sample(r: H.Refusal) -> str:
    """A value of the key that this engine honours or that changes nothing."""
    if r.values and r.values[0] in ("true", "false"):
        return {"true": "false", "false": "true"}[r.values[0]]
    if r.refused.startswith("anything but "):
        return r.refused.removeprefix("anything but ").split(" with ")[0].split(" / ")[0]
    return {"hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.payload.ordering.field": "ts",
            "hoodie.bucket.index.hash.field": "id", "hoodie.storage.layout.type": "DEFAULT",
            "hoodie.merge.allow.duplicate.on.inserts": "false",
            "hoodie.sql.insert.mode": "upsert", "hoodie.datasource.hive_sync.mode": "hms"}.get(r.key, "")  # refused with any value: only unset passes


@pytest.mark.parametrize("refusal", H.REFUSALS, ids=lambda r: r.key)
def test_other_values_of_refused_keys_are_accepted(refusal):
    empty = () if refusal.key in DECLARED else ("",)  # a declared key parses its value (an empty bool is bad)
    for value in {accepted_sample(refusal), *empty}:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            WriteConfig.from_options({**BASE, **needed_with(refusal), refusal.key: value})


def test_values_that_depend_on_other_options():
    assert WriteConfig.from_options({**BASE, "hoodie.index.type": "BUCKET", "hoodie.storage.layout.type": "BUCKET",
                                     "hoodie.bucket.index.hash.field": "ID"}).index.type.value == "BUCKET"
    assert "hoodie.storage.layout.type='BUCKET'" in error_of({"hoodie.storage.layout.type": "BUCKET"})
    assert "hoodie.bucket.index.hash.field='ts'" in error_of({"hoodie.index.type": "BUCKET",
                                                              "hoodie.bucket.index.hash.field": "ts"})
    # A merge mode is honoured when the payload does that merge (table version 6 merges by payload class).
    WriteConfig.from_options({**BASE, "hoodie.write.record.merge.mode": "EVENT_TIME_ORDERING",
                              "hoodie.datasource.write.payload.class": "DefaultHoodieRecordPayload"})
    WriteConfig.from_options({**BASE, "hoodie.record.merge.mode": "CUSTOM",
                              "hoodie.datasource.write.payload.class": "PartialUpdateAvroPayload"})
    assert "hoodie.write.record.merge.mode='EVENT_TIME_ORDERING' is not supported" in error_of(
        {"hoodie.write.record.merge.mode": "EVENT_TIME_ORDERING",
         "hoodie.datasource.write.payload.class": "OverwriteWithLatestAvroPayload"})
    # Without a payload class, the mode picks the payload that merges that way (Hudi 1.x's
    # inferCorrectMergingBehavior): Java Hudi 1.2 writes such tables with hoodie.record.merge.mode alone.
    for mode, payload in (("EVENT_TIME_ORDERING", "DefaultHoodieRecordPayload"),
                          ("COMMIT_TIME_ORDERING", "OverwriteWithLatestAvroPayload")):
        for key in ("hoodie.write.record.merge.mode", "hoodie.record.merge.mode"):
            assert WriteConfig.from_options({**BASE, key: mode}).merge.payload.short_name == payload
    # Hudi 1.x's ordering fields name the precombine field (one column on table version 6).
    ordering = {k: v for k, v in BASE.items() if k != "hoodie.datasource.write.precombine.field"}
    assert WriteConfig.from_options({**ordering, "hoodie.table.ordering.fields": "seq"}).merge.precombine_field == "seq"
    with pytest.raises(ConfigError, match=r"hoodie.datasource.write.precombine.field='ts,seq': table version 6 orders"):
        WriteConfig.from_options({**ordering, "hoodie.table.ordering.fields": "ts,seq"})
    assert "set the same option hoodie.datasource.write.precombine.field to different values" in error_of(
        {"hoodie.table.ordering.fields": "seq"})
    # Options Hudi reads only with inline compaction, the BUCKET index or optimistic concurrency.
    WriteConfig.from_options({**BASE, "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED",
                              "hoodie.index.bucket.engine": "CONSISTENT_HASHING", "hoodie.bucket.index.hash.field": "ts",
                              "hoodie.write.lock.conflict.resolution.strategy": "PreferWriterConflictResolutionStrategy"})
    # Inserts packed into a small file: merged by key on COW (Hudi's false), kept beside on MOR (Hudi's true).
    mor = {"hoodie.datasource.write.table.type": "MOR"}
    WriteConfig.from_options({**BASE, **mor, "hoodie.merge.allow.duplicate.on.inserts": "true"})
    assert "hoodie.merge.allow.duplicate.on.inserts='false'" in error_of(
        {**mor, "hoodie.merge.allow.duplicate.on.inserts": "false"})


def test_the_silently_dropped_keys_are_refused_together_with_bad_values():
    text = error_of({"hoodie.layout.optimize.curve.build.method": "SAMPLE",
                     "hoodie.metadata.index.bloom.filter.enable": "TRUE",
                     "hoodie.datasource.hive_sync.mode": "jdbc",
                     "hoodie.index.type": "HBASE"}, "s3://lake/orders")
    lines = text.splitlines()
    assert lines[0] == "table s3://lake/orders: invalid Hudi write options:"
    assert len(lines) == 5, lines
    assert ("  hoodie.index.type='HBASE': expected one of SIMPLE, BLOOM, BUCKET, GLOBAL_SIMPLE, "
            "RECORD_INDEX, RECORD_LEVEL_INDEX") in lines
    assert ("  hoodie.layout.optimize.curve.build.method='SAMPLE' is not supported: this engine builds z-order "
            "and Hilbert curves from the values themselves (DIRECT); SAMPLE's range sampling is not served. Set it "
            "DIRECT or remove it") in lines
    assert ("  hoodie.metadata.index.bloom.filter.enable='TRUE' is not supported: this engine writes only the files "
            "partition of Hudi's metadata table (it keeps the bloom filters a Java writer built). Set it false or "
            "remove it") in lines
    assert any(line.startswith("  hoodie.datasource.hive_sync.mode='jdbc' is not supported: this engine syncs "
                               "through the Spark session's own Hive metastore client") for line in lines)
    # Their alternative keys too.
    assert "hoodie.table.base.file.format='ORC' is not supported" in error_of({"hoodie.table.base.file.format": "ORC"})


def test_no_op_keys_are_accepted_with_one_warning_and_change_nothing():
    plain = WriteConfig.from_options(BASE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        noisy = WriteConfig.from_options({**BASE, **{k: "17" for k in H.NO_OP_KEYS}}, "/data/t")
    # One warning naming every no-op key given (no typo warning for Hudi's own keys).
    (warning,) = [str(w.message) for w in caught]
    assert warning.startswith("table /data/t: Hudi options accepted without effect in this engine")
    assert all(k in warning for k in H.NO_OP_KEYS) and "docs/options.md" in warning
    assert set(H.NO_OP_KEYS) <= set(noisy.given)
    same = dataclasses.replace(noisy, given=plain.given, commit_extra_metadata=plain.commit_extra_metadata)
    assert same == plain
    # A key nobody knows still warns when it looks like a typo of a declared one.
    with pytest.warns(UserWarning, match="hoodie.datasource.write.precombine.field"):
        WriteConfig.from_options({**BASE, "hoodie.datasource.write.precombin.field": "ts"})


def test_a_java_jobs_options_are_accepted():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = WriteConfig.from_options(java_job_options(), "/data/trips")
    # Its Java-only tuning is named once as having no effect; nothing else is warned about.
    no_ops = sorted(k for k in java_job_options() if k in H.NO_OP_KEYS)
    assert no_ops and [str(w.message) for w in caught] == [
        "table /data/trips: Hudi options accepted without effect in this engine (Java-only tuning, or settings of a "
        f"feature that is off): {', '.join(no_ops)} (docs/options.md)"]
    assert (c.table_name, c.table_type, c.keys.record_key_fields, c.merge.precombine_field) == (
        "trips", "MERGE_ON_READ", ("trip_id",), "ts")
    assert (c.parallelism.upsert, c.clean.commits_retained, c.archival.min_commits, c.compaction.inline,
            c.compaction.max_delta_commits, c.index.type.value) == (4, 4, 5, True, 3, "BLOOM")


def test_dbt_hudi_options_go_through_the_same_check():
    with pytest.raises(HudiConfigError) as e:
        HudiModelConfig.from_dbt({"unique_key": "id", "hudi_options": {
            "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.embed.timeline.server": "false"}}, "orders")
    assert e.value.problems == [
        "hoodie.metadata.index.bloom.filter.enable='true' is not supported: this engine writes only the files "
        "partition of Hudi's metadata table (it keeps the bloom filters a Java writer built). Set it false or remove "
        "it"]
    HudiModelConfig.from_dbt({"unique_key": "id", "hudi_options": {"hoodie.metadata.enable": "false",
                                                                   "hoodie.embed.timeline.server": "false"}}, "orders")
