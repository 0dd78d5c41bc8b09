"""Every key of Spark SQL's TBLPROPERTIES and OPTIONS (and a DataFrame write's options) is honoured or refused by
name (spark/save.py, config/hudi_keys.py): Hudi's table-config keys, its write keys and the SQL short names of
HoodieOptionConfig. Most cases call `create_table` / `sql_write_options` with what the JVM hands over, without
Spark; a few statements run end to end on the shared session."""
from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_engine import HudiTable
from hudi_engine.config import hudi_keys
from hudi_engine.config.keys import WRITE_OPTIONS
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.location import TableLocation
from hudi_engine.spark.save import (
    PARTITION_COLUMNS,
    SQL_DATABASE,
    SQL_TABLE_NAME,
    STATEMENT,
    TABLE_PROPERTIES,
    create_table,
    sql_write_options,
)
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import PROPERTIES

SCHEMA = pa.schema([("id", pa.int32()), ("v", pa.string()), ("ts", pa.int64()), ("dt", pa.string())])
TARGET = "default.t"
DECLARED = {k for o in WRITE_OPTIONS for k in o.all_keys}
MOR = {"type": "mor"}

# HoodieTableConfig's keys of Hudi 1.2 (with 1.1's and 0.x's still read), as apache/hudi declares them; the engine's
# table_features.PROPERTIES must know each (the test below then checks what CREATE TABLE does with it).
HUDI_TABLE_CONFIG_KEYS = (
    "hoodie.database.name", "hoodie.table.name", "hoodie.table.type", "hoodie.table.version",
    "hoodie.table.initial.version", "hoodie.table.precombine.field", "hoodie.table.ordering.fields",
    "hoodie.table.partition.fields", "hoodie.table.recordkey.fields", "hoodie.table.cdc.enabled",
    "hoodie.table.cdc.supplemental.logging.mode", "hoodie.table.create.schema", "hoodie.table.base.file.format",
    "hoodie.table.ro.file.format", "hoodie.table.log.file.format", "hoodie.table.rt.file.format",
    "hoodie.timeline.layout.version", "hoodie.table.format", "hoodie.record.merge.mode",
    "hoodie.compaction.payload.class", "hoodie.compaction.payload.type", "hoodie.record.merge.strategy.id",
    "hoodie.compaction.record.merger.strategy", "hoodie.archivelog.folder", "hoodie.timeline.history.path",
    "hoodie.timeline.path", "hoodie.bootstrap.index.enable", "hoodie.bootstrap.index.class",
    "hoodie.bootstrap.index.type", "hoodie.bootstrap.base.path", "hoodie.populate.meta.fields",
    "hoodie.table.keygenerator.class", "hoodie.table.keygenerator.type", "hoodie.table.timeline.timezone",
    "hoodie.partition.metafile.use.base.format", "hoodie.datasource.write.drop.partition.columns",
    "hoodie.table.multiple.base.file.formats.enable", "hoodie.table.partial.update.mode",
    "hoodie.table.merge.properties", "hoodie.table.legacy.payload.class", "hoodie.table.checksum",
    "hoodie.table.metadata.partitions.inflight", "hoodie.table.metadata.partitions",
    "hoodie.table.secondary.indexes.metadata", "hoodie.table.index.defs.path",
    "hoodie.datasource.write.partitionpath.urlencode", "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.table.partition_extractor_class", "hoodie.keygen.timebased.timestamp.type",
    "hoodie.keygen.timebased.output.dateformat", "hoodie.keygen.datetime.parser.class",
    "hoodie.record.merge.property.hoodie.payload.delete.field",
)

# A value other than what a CREATE TABLE without the key makes, and the TBLPROPERTIES it needs beside it.
SAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "hoodie.table.name": ("orders", {}),
    "hoodie.database.name": ("sales", {}),
    "hoodie.table.type": ("MERGE_ON_READ", {}),
    "hoodie.table.version": ("8", {}),  # (new tables are 9)
    "hoodie.table.initial.version": ("8", {}),
    "hoodie.timeline.layout.version": ("1", {}),
    "hoodie.timeline.path": ("tl", {}),
    "hoodie.timeline.history.path": ("hist", {}),
    "hoodie.archivelog.folder": ("old", {}),
    "hoodie.table.precombine.field": ("ts", {}),
    "hoodie.table.ordering.fields": ("ts", {}),
    "hoodie.table.recordkey.fields": ("id", {}),
    "hoodie.table.partition.fields": ("dt", {}),
    "hoodie.table.keygenerator.class": ("org.apache.hudi.keygen.ComplexKeyGenerator", {}),
    "hoodie.table.keygenerator.type": ("COMPLEX", {}),
    "hoodie.keygen.timebased.timestamp.type": ("EPOCHMILLISECONDS", {}),
    "hoodie.deltastreamer.keygen.timebased.timestamp.type": ("EPOCHMILLISECONDS", {}),
    "hoodie.keygen.datetime.parser.class": ("com.example.Parser", {}),
    "hoodie.datasource.write.hive_style_partitioning": ("false", {}),
    "hoodie.datasource.write.partitionpath.urlencode": ("true", {}),
    "hoodie.table.partition_extractor_class": ("org.apache.hudi.hive.MultiPartKeysValueExtractor", {}),
    "hoodie.datasource.write.drop.partition.columns": ("true", {}),
    "hoodie.populate.meta.fields": ("false", {}),
    "hoodie.table.create.schema": ('{"type":"record","name":"t_record","fields":[]}', {}),
    "hoodie.table.checksum": ("12345", {}),
    "hoodie.compaction.payload.class": ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", MOR),
    "hoodie.compaction.payload.type": ("HOODIE_AVRO_DEFAULT", {}),
    "hoodie.record.merge.strategy.id": ("11111111-2222-3333-4444-555555555555", {}),
    "hoodie.compaction.record.merger.strategy": ("11111111-2222-3333-4444-555555555555", {}),
    "hoodie.record.merge.mode": ("EVENT_TIME_ORDERING", {"hoodie.write.table.version": "9"}),
    "hoodie.table.partial.update.mode": ("IGNORE_DEFAULTS", {}),
    "hoodie.table.legacy.payload.class": ("org.apache.hudi.common.model.PartialUpdateAvroPayload", {}),
    "hoodie.table.merge.properties": ("a=b", {}),
    "hoodie.record.merge.property.hoodie.payload.delete.field": ("Op", {}),
    "hoodie.table.base.file.format": ("ORC", {}),
    "hoodie.table.ro.file.format": ("ORC", {}),
    "hoodie.table.log.file.format": ("PARQUET", {}),
    "hoodie.table.rt.file.format": ("PARQUET", {}),
    "hoodie.table.format": ("iceberg", {}),
    "hoodie.table.multiple.base.file.formats.enable": ("true", {}),
    "hoodie.table.timeline.timezone": ("LOCAL", {}),
    "hoodie.partition.metafile.use.base.format": ("true", {}),
    "hoodie.table.metadata.partitions": ("files", {}),
    "hoodie.table.metadata.partitions.inflight": ("files", {}),
    "hoodie.table.secondary.indexes.metadata": ("{}", {}),
    "hoodie.table.index.defs.path": (".hoodie/.index_defs/index.json", {}),
    "hoodie.table.cdc.enabled": ("true", {}),
    "hoodie.table.cdc.supplemental.logging.mode": ("OP_KEY_ONLY", {"hoodie.table.cdc.enabled": "true"}),
    "hoodie.bootstrap.base.path": ("/data/source", {}),
    "hoodie.bootstrap.index.enable": ("true", {}),
    "hoodie.bootstrap.index.class": ("org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex", {}),
    "hoodie.bootstrap.index.type": ("HFILE", {}),
}

_dirs = itertools.count()


def engine_table_config_keys() -> set[str]:
    """Every key the engine's table_features declares for hoodie.properties (a prefix row as one key under it)."""
    keys = set()
    for row in PROPERTIES:
        for key in (row.key, *row.alternatives):
            keys.add(key.replace("*", "timestamp.type") if "keygen.timebased" in key else
                     key.replace("*", "hoodie.payload.delete.field"))
    return keys


def sql_options(props: dict[str, str], plain: dict[str, str] | None = None, statement: str = "create_table",
                partition: str = "") -> dict[str, str]:
    """What jvm/SqlTable.scala hands over: the session's and OPTIONS' keys plain, TBLPROPERTIES prefixed."""
    return {STATEMENT: statement, SQL_TABLE_NAME: "t", SQL_DATABASE: "default", PARTITION_COLUMNS: partition,
            **(plain or {}), **{TABLE_PROPERTIES + k: v for k, v in props.items()}}


def create(tmp_path: Path, props: dict[str, str], plain: dict[str, str] | None = None) -> dict[str, str]:
    """CREATE TABLE t (id int, v string, ts bigint, dt string) USING hudi TBLPROPERTIES (props): its hoodie.properties."""
    path = str(tmp_path / f"t{next(_dirs)}")
    create_table(SCHEMA, path, sql_options(props, plain), False, TARGET)
    return dict(TableConfig.load(TableLocation.of(path)).props)


def refusal(tmp_path: Path, props: dict[str, str], plain: dict[str, str] | None = None) -> str:
    before = set(tmp_path.iterdir()) if tmp_path.exists() else set()
    with pytest.raises(ConfigError) as e:
        create(tmp_path, props, plain)
    assert (set(tmp_path.iterdir()) if tmp_path.exists() else set()) == before, "a refused CREATE TABLE wrote files"
    return str(e.value)


def test_the_samples_cover_every_table_config_key():
    engine = engine_table_config_keys()
    unknown = [k for k in HUDI_TABLE_CONFIG_KEYS if not any(row.matches(k) for row in PROPERTIES)]
    assert not unknown, f"table_features.PROPERTIES lacks Hudi's {unknown}"
    assert engine <= set(SAMPLES), f"no sample for {sorted(engine - set(SAMPLES))}: add one"
    for key in engine:  # each is honoured (declared), refused for some values, or stated: never a no-op
        assert key in DECLARED or key in hudi_keys.REFUSED_BY_KEY or hudi_keys.stated(key) is not None, key
        assert key not in hudi_keys.NO_OP_KEYS, key


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_every_table_config_key_in_tblproperties_is_honoured_or_refused(tmp_path: Path, key: str) -> None:
    value, beside = SAMPLES[key]
    base = create(tmp_path, beside)
    try:
        got = create(tmp_path, {**beside, key: value})
    except ConfigError as e:
        assert f"{key}=" in str(e), f"refused without naming {key}: {e}"
        return
    assert got != base, f"TBLPROPERTIES {key}={value!r} was dropped: hoodie.properties is the same without it"
    assert any(value.lower() in v.lower() for v in got.values()), f"{key}={value!r} is not in {got}"


def test_the_issues_mor_table():
    """The issue's case: Hudi's full key made a copy-on-write table without a word."""
    options, _ = sql_write_options(sql_options({"hoodie.table.type": "MERGE_ON_READ", "primaryKey": "id"}), False,
                                   TARGET)
    config = WriteConfig.from_options(options)
    assert config.table_type == "MERGE_ON_READ" and config.keys.record_key_fields == ("id",)


@pytest.mark.parametrize("props, key, expected", [
    ({"PrimaryKey": "id"}, "hoodie.table.recordkey.fields", "id"),
    ({"TYPE": "MOR"}, "hoodie.table.type", "MERGE_ON_READ"),
    ({"orderingFields": "ts"}, "hoodie.table.ordering.fields", "ts"),
    ({"preCombineField": "ts"}, "hoodie.table.ordering.fields", "ts"),
    ({"preCombineField": "ts", "hoodie.write.table.version": "6"}, "hoodie.table.precombine.field", "ts"),
    ({"payloadClass": "org.apache.hudi.common.model.DefaultHoodieRecordPayload", **MOR},
     "hoodie.table.legacy.payload.class", "org.apache.hudi.common.model.DefaultHoodieRecordPayload"),
    ({"payloadClass": "org.apache.hudi.common.model.DefaultHoodieRecordPayload", "hoodie.write.table.version": "6",
      **MOR}, "hoodie.compaction.payload.class", "org.apache.hudi.common.model.DefaultHoodieRecordPayload"),
    ({"recordMergeMode": "EVENT_TIME_ORDERING", "orderingFields": "ts", "hoodie.write.table.version": "9"},
     "hoodie.record.merge.mode", "EVENT_TIME_ORDERING"),
], ids=lambda p: next(iter(p)) if isinstance(p, dict) else None)
def test_sql_short_names_in_any_case(tmp_path: Path, props: dict, key: str, expected: str) -> None:
    assert create(tmp_path, props)[key] == expected
    assert create(tmp_path, {}, plain=props)[key] == expected  # OPTIONS (...) take them too


@pytest.mark.parametrize("given, made", [(None, "UTC"), ("local", "LOCAL"), ("UTC", "UTC")])
def test_a_new_tables_timeline_timezone(tmp_path: Path, given: str | None, made: str) -> None:
    """Hudi creates LOCAL tables by default; this engine UTC ones, LOCAL when asked."""
    props = {} if given is None else {"hoodie.table.timeline.timezone": given}
    assert create(tmp_path, props)["hoodie.table.timeline.timezone"] == made


def test_a_new_tables_timeline_timezone_must_be_hudis(tmp_path: Path) -> None:
    message = refusal(tmp_path, {"hoodie.table.timeline.timezone": "Europe/Paris"})
    assert "hoodie.table.timeline.timezone='Europe/Paris': expected UTC or LOCAL" in message


def test_a_merge_strategy_id_by_short_name_is_refused(tmp_path: Path) -> None:
    assert "hoodie.record.merge.strategy.id='x' is not supported" in refusal(tmp_path, {"recordMergeStrategyId": "x"})


@pytest.mark.parametrize("props", [
    {"type": "cow", "hoodie.table.type": "MERGE_ON_READ"},
    {"primaryKey": "id", "hoodie.datasource.write.recordkey.field": "v"},
    {"preCombineField": "ts", "hoodie.table.ordering.fields": "v"},
    {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.table.type": "COPY_ON_WRITE"},
], ids=lambda p: "+".join(p))
def test_a_short_name_and_a_full_key_that_contradict_are_refused_naming_both(tmp_path: Path, props: dict) -> None:
    text = refusal(tmp_path, props)
    (a, va), (b, vb) = props.items()
    assert f"TBLPROPERTIES {a}={va!r} and TBLPROPERTIES {b}={vb!r} contradict each other" in text
    assert "set one of them" in text


def test_two_spellings_of_one_value_are_one_setting(tmp_path: Path) -> None:
    props = create(tmp_path, {"type": "mor", "hoodie.table.type": "MERGE_ON_READ",
                              "hoodie.datasource.write.table.type": "mor"})
    assert props["hoodie.table.type"] == "MERGE_ON_READ"


def test_tblproperties_win_over_options_and_the_session(tmp_path: Path) -> None:
    session = {"hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.datasource.write.recordkey.field": "v"}
    props = create(tmp_path, {"hoodie.table.type": "MERGE_ON_READ", "primaryKey": "id"}, plain=session)
    assert props["hoodie.table.type"] == "MERGE_ON_READ" and props["hoodie.table.recordkey.fields"] == "id"


# The write keys users put in TBLPROPERTIES most: each reaches the write's typed config, or is refused by name.
WRITE_KEYS = {
    "hoodie.datasource.write.operation": ("bulk_insert", lambda c: c.operation.value),
    "hoodie.index.type": ("BLOOM", lambda c: c.index.type.value),
    "hoodie.metadata.enable": ("false", None),
    "hoodie.cleaner.policy": ("KEEP_LATEST_FILE_VERSIONS", lambda c: c.clean.policy),
    "hoodie.cleaner.commits.retained": ("3", lambda c: str(c.clean.commits_retained)),
    "hoodie.cleaner.fileversions.retained": ("2", lambda c: str(c.clean.file_versions_retained)),
    "hoodie.compact.inline": ("true", lambda c: str(c.compaction.inline).lower()),
    "hoodie.compact.inline.max.delta.commits": ("2", lambda c: str(c.compaction.max_delta_commits)),
    "hoodie.parquet.compression.codec": ("gzip", lambda c: c.files.compression),
    "hoodie.parquet.max.file.size": ("209715200", lambda c: str(c.files.max_file_size)),
    "hoodie.parquet.small.file.limit": ("0", lambda c: str(c.files.small_file_limit)),
    "hoodie.parquet.block.size": ("1048576", lambda c: str(c.files.block_size)),
}


@pytest.mark.parametrize("key", sorted(WRITE_KEYS))
def test_write_keys_in_tblproperties_reach_the_write(key: str) -> None:
    value, typed = WRITE_KEYS[key]
    options, _ = sql_write_options(sql_options({"primaryKey": "id", key: value}, statement="insert_into"), True,
                                   TARGET)
    config = WriteConfig.from_options(options)
    assert config.given[key] == value
    if typed is not None:
        assert typed(config) == value


def test_refused_write_keys_in_tblproperties_are_refused_by_name() -> None:
    options, _ = sql_write_options(sql_options({"hoodie.metadata.index.expression.enable": "true",
                                                "hoodie.layout.optimize.curve.build.method": "SAMPLE"},
                                               statement="insert_into"),
                                   True, TARGET)
    with pytest.raises(ConfigError) as e:
        WriteConfig.from_options(options)
    assert "hoodie.metadata.index.expression.enable='true' is not supported" in str(e.value)
    assert "hoodie.layout.optimize.curve.build.method='SAMPLE' is not supported" in str(e.value)


def test_an_existing_tables_config_keys_must_be_its_own(tmp_path: Path) -> None:
    create(tmp_path, {"primaryKey": "id"})
    path = str(next(tmp_path.iterdir()))
    table = TableConfig.load(TableLocation.of(path))
    config = WriteConfig.from_options({"hoodie.table.timeline.timezone": "UTC", "hoodie.archivelog.folder": "archived",
                                       "hoodie.table.version": "9"})
    assert config.contradictions(table) == []
    problems = WriteConfig.from_options({"hoodie.table.timeline.timezone": "LOCAL", "hoodie.table.version": "6",
                                         "hoodie.table.format": "iceberg"}).contradictions(table)
    assert sorted(p.key for p in problems) == ["hoodie.table.format", "hoodie.table.timeline.timezone",
                                               "hoodie.write.table.version"]


def test_unknown_hoodie_keys_pass_through_as_hudi_does() -> None:
    options, _ = sql_write_options(sql_options({"hoodie.some.future.key": "x", "comment": "c"}), False, TARGET)
    assert options["hoodie.some.future.key"] == "x" and "comment" not in options


# ---- end to end on the shared session ------------------------------------------------------------------------

def test_sql_create_table_honours_hudis_full_keys(spark, tmp_path: Path) -> None:
    path = tmp_path / "mor"
    spark.sql(f"""CREATE TABLE props_mor (id int, v string, ts bigint) USING hudi LOCATION '{path}'
                  TBLPROPERTIES ('hoodie.table.type' = 'MERGE_ON_READ', 'hoodie.table.recordkey.fields' = 'id',
                                 'hoodie.table.precombine.field' = 'ts',
                                 'hoodie.parquet.compression.codec' = 'gzip',
                                 'hoodie.datasource.write.operation' = 'upsert')""")
    try:
        spark.sql("INSERT INTO props_mor VALUES (1, 'a', 1), (2, 'b', 1)")
        spark.sql("INSERT INTO props_mor VALUES (1, 'A', 2)")
        table = HudiTable.load(str(path))
        assert table.config.table_type == "MERGE_ON_READ" and table.config.record_key_fields == ["id"]
        commits = table.timeline.completed_commits()
        assert [table.timeline.commit_metadata(i).operation_type for i in commits] == ["UPSERT", "UPSERT"]
        assert {i.action.value for i in commits} == {"deltacommit"}
        base = next(p for p in path.rglob("*.parquet") if not p.name.startswith("."))
        assert pq.ParquetFile(base).metadata.row_group(0).column(0).compression == "GZIP"
        assert sorted(spark.sql("SELECT id, v FROM props_mor").collect()) == [(1, "A"), (2, "b")]
    finally:
        spark.sql("DROP TABLE props_mor")


def test_sql_contradiction_and_dataframe_full_keys(spark, tmp_path: Path) -> None:
    path = tmp_path / "bad"
    with pytest.raises(Exception) as e:
        spark.sql(f"""CREATE TABLE props_bad USING hudi LOCATION '{path}'
                      TBLPROPERTIES (type = 'cow', 'hoodie.table.type' = 'MERGE_ON_READ') AS SELECT 1 AS id""")
    text = str(e.value)  # Spark keeps TBLPROPERTIES in a map: either may be named first
    assert "TBLPROPERTIES type='cow'" in text and "TBLPROPERTIES hoodie.table.type='MERGE_ON_READ'" in text
    assert "contradict each other" in text
    assert not path.exists() or not (path / ".hoodie").exists()
    assert not spark.catalog.tableExists("props_bad")

    out = str(tmp_path / "df")
    (spark.createDataFrame([(1, "a", 1)], "id int, v string, ts long").write.format("hudi")
     .option("hoodie.table.name", "df").option("hoodie.table.type", "MERGE_ON_READ")
     .option("hoodie.table.recordkey.fields", "id").mode("append").save(out))
    config = HudiTable.load(out).config
    assert config.table_type == "MERGE_ON_READ" and config.record_key_fields == ["id"]


def test_create_table_at_an_existing_tables_location_checks_every_key(tmp_path: Path) -> None:
    create(tmp_path, {"primaryKey": "id"})
    path = str(next(tmp_path.iterdir()))
    same = {"hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.timeline.timezone": "UTC", "primaryKey": "id"}
    create_table(SCHEMA, path, sql_options(same), True, TARGET)  # nothing written, nothing refused
    with pytest.raises(ConfigError) as e:
        create_table(SCHEMA, path, sql_options({"hoodie.table.type": "MERGE_ON_READ",
                                                "hoodie.table.timeline.timezone": "LOCAL"}), True, TARGET)
    assert "the table's is 'COPY_ON_WRITE'" in str(e.value)
    assert "hoodie.table.timeline.timezone='LOCAL' contradicts the table's 'UTC'" in str(e.value)
