"""hudi_incremental config: validation (every problem at once) and the one translation to hoodie.* options."""
from __future__ import annotations

import types

import pytest
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.hudi.impl import HudiAdapter
from dbt.adapters.hudi.model_config import HudiConfigError, HudiModelConfig
from dbt.adapters.hudi.session import NATIVE_KEY, SessionSettings, wants_native
from dbt.adapters.hudi.writer import HudiModelError, plan_write, resolve_columns
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.table_config import TableConfig

PKG = "org.apache.hudi.common.model."


def cfg(**settings) -> HudiModelConfig:
    return HudiModelConfig.from_dbt({"unique_key": "id", **settings}, "m")


def test_defaults():
    c = cfg()
    assert (c.unique_key, c.partition_by, c.table_type, c.strategy, c.on_schema_change, c.payload_class) == (
        ("id",), (), "COPY_ON_WRITE", "upsert", "ignore", None)


def test_every_problem_is_reported_once_with_accepted_values():
    with pytest.raises(HudiConfigError) as e:
        HudiModelConfig.from_dbt({"table_type": "delta", "incremental_strategy": "merge", "payload_class": "Nope",
                                  "on_schema_change": "drop", "index_type": "HASH", "partition_by": 3,
                                  "hudi_options": {"parquet.size": 1}}, "orders")
    text = str(e.value)
    assert text.startswith("model orders: invalid hudi_incremental config")
    assert len(e.value.problems) == 7, e.value.problems
    for expected in ("table_type='delta': expected one of COPY_ON_WRITE, MERGE_ON_READ (or cow, mor)",
                     "incremental_strategy='merge': expected one of upsert, insert, bulk_insert, delete, "
                     "insert_overwrite, insert_overwrite_table",
                     "payload_class 'Nope': unknown payload class 'Nope': expected one of", "PartialUpdateAvroPayload",
                     "on_schema_change='drop': expected one of ignore, fail, append_new_columns, sync_all_columns",
                     "index_type='HASH': expected one of SIMPLE, BLOOM, BUCKET, GLOBAL_SIMPLE",
                     "partition_by=3", "hudi_options key 'parquet.size'"):
        assert expected in text, expected


@pytest.mark.parametrize("given, expected", [("cow", "COPY_ON_WRITE"), ("MOR", "MERGE_ON_READ"),
                                             ("copy_on_write", "COPY_ON_WRITE"), ("Merge_On_Read", "MERGE_ON_READ")])
def test_table_type_names(given, expected):
    assert cfg(table_type=given).table_type == expected


def test_payload_short_full_and_python_path():
    assert cfg(payload_class="PartialUpdateAvroPayload").payload_class == PKG + "PartialUpdateAvroPayload"
    assert cfg(payload_class=PKG + "DefaultHoodieRecordPayload").payload_class == PKG + "DefaultHoodieRecordPayload"
    # A Python dotted path to one of the engine's payload rules.
    assert cfg(payload_class="hudi_engine.payload.EVENT_TIME").payload_class == PKG + "EventTimeAvroPayload"
    with pytest.raises(HudiConfigError, match="cannot import and instantiate it as a Python class"):
        cfg(payload_class="my_company.payloads.Custom")
    with pytest.raises(HudiConfigError, match="cannot import and instantiate"):
        cfg(payload_class="hudi_engine.payload.payload_for")


def test_composite_keys_and_partitions():
    c = cfg(unique_key=["order_id", "line_no"], partition_by=["country", "day"])
    opts = c.hoodie_options("orders", "analytics", "upsert")
    assert opts["hoodie.datasource.write.recordkey.field"] == "order_id,line_no"
    assert opts["hoodie.datasource.write.partitionpath.field"] == "country,day"
    assert cfg(unique_key="a, b").unique_key == ("a", "b")


def test_hoodie_options_is_the_whole_translation():
    c = cfg(precombine_field="ts", table_type="mor", payload_class="PartialUpdateAvroPayload", index_type="bloom",
            hudi_options={"hoodie.parquet.max.file.size": 1024, "hoodie.parquet.small.file.limit": 0,
                          "hoodie.combine.before.upsert": True})
    opts = c.hoodie_options("customers", "analytics", "bulk_insert", columns={"id": "ID"})
    assert opts == {
        "hoodie.parquet.max.file.size": "1024",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.combine.before.upsert": "true",
        "hoodie.datasource.write.recordkey.field": "ID",  # the model's own spelling of the column
        "hoodie.datasource.write.partitionpath.field": "",  # unpartitioned, said explicitly
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.payload.class": PKG + "PartialUpdateAvroPayload",
        "hoodie.index.type": "BLOOM",
        "hoodie.table.name": "customers",
        "hoodie.database.name": "analytics",
        "hoodie.datasource.write.operation": "bulk_insert",
    }


def test_hudi_options_may_repeat_a_setting_but_not_contradict_it():
    assert cfg(hudi_options={"hoodie.datasource.write.recordkey.field": "id"}).unique_key == ("id",)
    assert cfg(table_type="mor", hudi_options={"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    with pytest.raises(HudiConfigError) as e:
        cfg(hudi_options={"hoodie.datasource.write.recordkey.field": "other",
                          "hoodie.datasource.write.operation": "insert"})
    assert "contradicts unique_key" in str(e.value)
    assert "set by the materialization (incremental_strategy)" in str(e.value)
    assert cfg(materialized="incremental", options={"orderingFields": "ts"}).precombine_field == "ts"
    # Hudi's table-config keys are the options they stand for (tblproperties of a dbt-spark model)
    assert cfg(table_type="mor", materialized="incremental",
               tblproperties={"hoodie.table.type": "MERGE_ON_READ"}).table_type == "MERGE_ON_READ"
    with pytest.raises(HudiConfigError) as e:
        cfg(materialized="incremental", tblproperties={"hoodie.table.type": "MERGE_ON_READ"})
    assert "hudi_options['hoodie.table.type']='MERGE_ON_READ' contradicts table_type ('COPY_ON_WRITE')" in str(e.value)


# ---- run-time checks ---------------------------------------------------------------------------------------


def test_setting_columns_resolve_case_insensitively_and_misses_are_listed():
    c = cfg(unique_key=["ID", "line"], precombine_field="ts", partition_by="day")
    assert resolve_columns("m", c, ["id", "line", "ts", "day"]) == {"ID": "id", "line": "line", "ts": "ts",
                                                                    "day": "day"}
    with pytest.raises(HudiModelError) as e:
        resolve_columns("orders", c, ["id", "amount"])
    text = str(e.value)
    assert "model orders" in text and "unique_key: column 'line'" in text and "precombine_field: column 'ts'" in text
    assert "partition_by: column 'day'" in text and "columns: id, amount" in text


def table_config(table_type="COPY_ON_WRITE", keys=("id",), partitions=(), precombine=None):
    return TableConfig.create("t", table_type, list(keys), list(partitions), precombine,
                              "org.apache.hudi.keygen.SimpleKeyGenerator", None, False, False)


def test_plan_first_run_full_refresh_and_incremental():
    c = cfg(incremental_strategy="insert")
    assert plan_write("m", c, "create", "/p", None, None, "t").operation == "bulk_insert"
    assert plan_write("m", c, "full_refresh", "/p", table_config(), None, "t").operation == "insert_overwrite_table"
    assert plan_write("m", c, "create", "/p", table_config(), None, "t").operation == "insert_overwrite_table"
    assert plan_write("m", c, "incremental", "/p", table_config(), "/p", "t").operation == "insert"


def test_layout_changes_need_a_full_refresh():
    c = cfg(table_type="mor", unique_key=["id", "k"], partition_by="day")
    with pytest.raises(HudiModelError) as e:
        plan_write("orders", c, "incremental", "/p", table_config(), "/p", "t")
    text = str(e.value)
    assert "table_type COPY_ON_WRITE -> MERGE_ON_READ" in text and "unique_key ['id'] -> id,k" in text
    assert "partition_by [] -> day" in text and "dbt run --full-refresh --select orders" in text
    plan = plan_write("orders", c, "full_refresh", "/p", table_config(), None, "t")
    assert (plan.operation, plan.recreate) == ("bulk_insert", True)
    with pytest.raises(HudiModelError, match="another layout already exists"):
        plan_write("orders", c, "create", "/p", table_config(), None, "t")


def test_incremental_run_without_the_table_or_at_another_location_is_refused():
    with pytest.raises(HudiModelError, match="no Hudi table at /p"):
        plan_write("m", cfg(), "incremental", "/p", None, "/p", "t")
    with pytest.raises(HudiModelError, match="location /old -> /p"):
        plan_write("m", cfg(), "incremental", "/p", table_config(), "/old", "t")


# ---- session and method --------------------------------------------------------------------------------------


def test_session_settings_pin_warehouse_and_metastore_in_the_project(tmp_path):
    s = SessionSettings.resolve({"spark.master": "local[1]"}, tmp_path)
    assert s.conf["spark.sql.warehouse.dir"] == str(tmp_path / "spark-warehouse")
    assert s.conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true")
    assert f"-Dderby.system.home={tmp_path}" in s.conf["spark.driver.extraJavaOptions"]
    assert s.conf["spark.master"] == "local[1]"
    import sys

    assert s.env["PYSPARK_PYTHON"] == sys.executable


def test_profile_settings_win(tmp_path):
    s = SessionSettings.resolve({"spark.master": "spark://h:7077", "spark.sql.warehouse.dir": "s3a://b/wh",
                                 "hive.metastore.uris": "thrift://h:9083",
                                 "spark.driver.extraJavaOptions": "-Dx=1"}, tmp_path)
    assert s.conf["spark.sql.warehouse.dir"] == "s3a://b/wh"
    assert "spark.hadoop.javax.jdo.option.ConnectionURL" not in s.conf
    assert s.conf["spark.driver.extraJavaOptions"] == "-Dx=1"
    assert s.conf["spark.master"] == "spark://h:7077"
    assert "spark.sql.shuffle.partitions" not in s.conf  # cluster sizing is the profile's business


def test_the_native_source_is_on_by_default_and_a_profile_opts_out(tmp_path):
    assert SessionSettings.resolve({}, tmp_path).native
    assert SessionSettings.resolve({NATIVE_KEY: "True"}, tmp_path).native
    off = SessionSettings.resolve({NATIVE_KEY: "false"}, tmp_path)
    assert not off.native and "spark.jars" not in off.conf  # no component: the jar is added only for native
    with pytest.raises(DbtRuntimeError, match=r"spark.hudi_engine.native is 'no'; expected true or false"):
        wants_native({NATIVE_KEY: "no"})
    with pytest.raises(DbtRuntimeError, match="names hudiengine.spark.HudiExtensions, the native hudi source"):
        wants_native({NATIVE_KEY: "false", "spark.sql.extensions": "a.B,hudiengine.spark.HudiExtensions"})


@pytest.mark.parametrize("method", ["thrift", "http", "odbc"])
def test_methods_without_a_session_stop_with_a_clear_error(method):
    fake = types.SimpleNamespace(config=types.SimpleNamespace(
        credentials=types.SimpleNamespace(method=SparkConnectionMethod(method)), target_name="prod"))
    with pytest.raises(CompilationError) as e:
        HudiAdapter._require_session(fake, "orders")
    text = str(e.value)
    assert f"uses method '{method}'" in text and "method: session" in text and "spark.master" in text


def test_a_failed_rebuild_puts_the_old_table_back(tmp_path):
    from dbt.adapters.hudi.writer import WritePlan, _replacing

    table = tmp_path / "t"
    (table / ".hoodie").mkdir(parents=True)
    (table / ".hoodie" / "hoodie.properties").write_text("old")
    plan = WritePlan(str(table), "bulk_insert", True, "full refresh with a new layout")
    with pytest.raises(RuntimeError), _replacing("m", str(table), plan):
        assert not table.exists()
        (table / ".hoodie").mkdir(parents=True)
        (table / ".hoodie" / "hoodie.properties").write_text("half written")
        raise RuntimeError("write failed")
    assert (table / ".hoodie" / "hoodie.properties").read_text() == "old"
    with _replacing("m", str(table), plan):
        (table / ".hoodie").mkdir(parents=True)
        (table / ".hoodie" / "hoodie.properties").write_text("new")
    assert (table / ".hoodie" / "hoodie.properties").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # the old table is gone once the new one is written


# ---- keyless models (no unique_key): a keyless Hudi table, append-only (docs/keyless.md) ------------------------
def test_no_unique_key_is_an_append_only_keyless_model():
    c = HudiModelConfig.from_dbt({"partition_by": "day"}, "events")
    assert (c.unique_key, c.strategy) == ((), "insert")  # later runs insert; the first run is a bulk_insert
    options = c.hoodie_options("events", "analytics", "bulk_insert")
    assert options["hoodie.datasource.write.recordkey.field"] == ""
    assert WriteConfig.from_options(options).keys.auto_generated
    assert HudiModelConfig.from_dbt({"incremental_strategy": "bulk_insert"}, "events").strategy == "bulk_insert"


@pytest.mark.parametrize("settings", [{"incremental_strategy": "upsert"}, {"incremental_strategy": "delete"}])
def test_keyed_strategy_without_unique_key_is_refused_naming_the_model(settings):
    with pytest.raises(HudiConfigError) as e:
        HudiModelConfig.from_dbt(settings, "events")
    text = str(e.value)
    assert text.startswith("model events: invalid") and "unique_key" in text
    assert repr(settings["incremental_strategy"]) in text


@pytest.mark.parametrize("key", [None, [], ""])
def test_spark_merge_without_unique_key_appends_into_a_keyless_table(key):
    # dbt-spark's MERGE without unique_key is `on false`: nothing matches, every row is appended (predicates too).
    c = HudiModelConfig.from_dbt({"materialized": "incremental", "file_format": "hudi", "incremental_strategy": "merge",
                                  "unique_key": key, "incremental_predicates": ["id != 2"]}, "events")
    assert (c.unique_key, c.strategy) == ((), "insert")
    assert WriteConfig.from_options(c.hoodie_options("events", "analytics", "insert")).keys.auto_generated


def test_keyless_model_refuses_dedup_options_at_compile_time():
    with pytest.raises(HudiConfigError, match="hoodie.combine.before.insert=true is refused"):
        HudiModelConfig.from_dbt({"hudi_options": {"hoodie.combine.before.insert": "true"}}, "events")


def test_hive_sync_and_glue_sync_settings_spell_hudis_sync_keys():
    plain = cfg().hoodie_options("orders", "analytics", "upsert")
    assert not any("sync" in k for k in plain)
    hive = cfg(hive_sync=True).hoodie_options("orders", "analytics", "upsert")
    # The synced entry is the model's own relation unless the model names another.
    assert {k: v for k, v in hive.items() if "sync" in k} == {
        "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.database": "analytics",
        "hoodie.datasource.hive_sync.table": "orders"}
    both = cfg(hive_sync={"table": "orders_hive", "skip_ro_suffix": True},
               glue_sync={"database": "lake", "region": "eu-west-1"}).hoodie_options("orders", "analytics", "upsert")
    assert {k: v for k, v in both.items() if "sync" in k or "glue" in k} == {
        "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.table": "orders_hive",
        "hoodie.datasource.hive_sync.skip_ro_suffix": "true", "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.meta.sync.client.tool.class": "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool",
        "hoodie.datasource.meta.sync.glue.database_name": "lake", "hoodie.aws.glue.region": "eu-west-1",
        "hoodie.datasource.hive_sync.database": "analytics"}
    assert WriteConfig.from_options(both).sync.tools == ("glue", "hive")
    assert cfg(hive_sync=False).hoodie_options("orders", "analytics", "upsert") == plain


def test_bad_sync_settings_are_refused_at_compile_time():
    with pytest.raises(HudiConfigError) as e:
        cfg(hive_sync={"db": "x"}, glue_sync="yes", partition_by="day",
            hudi_options={"hoodie.datasource.hive_sync.partition_fields": "region"})
    text = str(e.value)
    assert "hive_sync: unknown key 'db'; expected database, table, skip_ro_suffix, support_timestamp, mode" in text
    assert "glue_sync='yes': expected true, or a mapping with keys" in text
    assert "hoodie.datasource.hive_sync.partition_fields='region' are not the partition fields" in text


def test_cdc_settings_spell_the_table_properties_and_change_type_column_needs_upsert():
    c = cfg(cdc_enabled=True, cdc_mode="op_key_only", change_type_column="change_type")
    opts = c.hoodie_options("t", "db", "upsert")
    assert (opts["hoodie.table.cdc.enabled"], opts["hoodie.table.cdc.supplemental.logging.mode"]) == (
        "true", "OP_KEY_ONLY")
    assert ("change_type_column", "change_type") in c.columns_used
    assert "hoodie.table.cdc.enabled" not in cfg().hoodie_options("t", "db", "upsert")
    with pytest.raises(HudiConfigError) as e:
        cfg(cdc_enabled="maybe", cdc_mode="FULL", change_type_column="op", incremental_strategy="insert",
            hudi_options={"hoodie.table.cdc.enabled": "false"})
    problems = "\n".join(e.value.problems)
    assert "cdc_enabled='maybe'" in problems
    assert "cdc_mode='FULL': expected one of OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER" in problems
    assert "change_type_column applies to incremental_strategy upsert" in problems
    with pytest.raises(HudiConfigError, match="cdc_mode='DATA_BEFORE' needs cdc_enabled=true"):
        cfg(cdc_mode="data_before")
    with pytest.raises(HudiConfigError, match=r"hudi_options\['hoodie.table.cdc.enabled'\]='false' contradicts "
                                              r"cdc_enabled"):
        cfg(cdc_enabled=True, hudi_options={"hoodie.table.cdc.enabled": "false"})


def test_table_version_spells_hoodie_write_table_version_and_a_change_needs_a_full_refresh():
    assert cfg(table_version=9).hoodie_options("t", "db", "upsert")["hoodie.write.table.version"] == "9"
    assert "hoodie.write.table.version" not in cfg().hoodie_options("t", "db", "upsert")
    assert cfg(hudi_options={"hoodie.write.table.version": "8"}).hoodie_options(
        "t", "db", "upsert")["hoodie.write.table.version"] == "8"
    with pytest.raises(HudiConfigError, match=r"table_version='7': expected one of 6, 8, 9"):
        cfg(table_version=7)
    with pytest.raises(HudiModelError, match=r"table_version hoodie.table.version=6 -> 9"):
        plan_write("orders", cfg(table_version="9"), "incremental", "/p", table_config(), "/p", "t")


# ---- incremental_predicates (predicates.py checks the columns each reads when the model runs) --------------------
def spark_cfg(**settings) -> HudiModelConfig:
    return HudiModelConfig.from_dbt({"materialized": "incremental", "file_format": "hudi", "unique_key": "id",
                                     "incremental_strategy": "merge", **settings}, "m")


def test_incremental_predicates_on_a_partitioned_merge_are_kept_in_both_spellings():
    assert spark_cfg(partition_by="day", incremental_predicates=["DBT_INTERNAL_DEST.day >= '2024-01-02'"]) \
        .incremental_predicates == ("DBT_INTERNAL_DEST.day >= '2024-01-02'",)
    assert spark_cfg(partition_by="day", predicates="day = 1").incremental_predicates == ("day = 1",)
    assert cfg(partition_by="day", incremental_predicates=["day = 1"]).incremental_predicates == ("day = 1",)
    assert cfg(partition_by="day", incremental_strategy="delete",
               incremental_predicates=["day = 1"]).incremental_predicates == ("day = 1",)
    assert spark_cfg().incremental_predicates == ()


@pytest.mark.parametrize("settings, reason", [
    ({}, "incremental_predicates on a table without partition_by are refused: Hudi keeps one row per record key"),
    ({"partition_by": "day", "index_type": "GLOBAL_SIMPLE"},
     "incremental_predicates with index_type GLOBAL_SIMPLE are refused: that index finds a key in any partition"),
    ({"partition_by": "day", "hudi_options": {"hoodie.index.type": "GLOBAL_SIMPLE"}},
     "incremental_predicates with index_type GLOBAL_SIMPLE are refused"),
    ({"partition_by": "day", "incremental_strategy": "append", "unique_key": None},
     "incremental_predicates limit the stored rows a merge matches; this model's strategy 'append' matches none"),
    ({"partition_by": "day", "incremental_predicates": [1]}, "incremental_predicates=[1]: expected a list of SQL"),
])
def test_incremental_predicates_that_could_break_key_uniqueness_are_refused_at_compile_time(settings, reason):
    with pytest.raises(HudiConfigError) as e:
        spark_cfg(**{"incremental_predicates": ["id != 2"], **settings})
    assert reason in str(e.value)
    assert len(e.value.problems) == 1, e.value.problems


def test_a_table_model_has_no_incremental_settings():
    """A project-wide +incremental_strategy / +incremental_predicates reaches table models too; like dbt-spark's
    table materialization, a rebuilt table ignores them."""
    c = HudiModelConfig.from_dbt({"materialized": "table", "file_format": "hudi", "incremental_strategy": "merge",
                                  "incremental_predicates": ["id != 2"], "merge_exclude_columns": ["x"]}, "m")
    assert (c.unique_key, c.incremental_predicates, c.merge_exclude_columns) == ((), (), ())


def test_clustering_setting_spells_the_clustering_keys():
    def clustering(value) -> dict[str, str]:
        opts = cfg(clustering=value).hoodie_options("t", None, "upsert")
        return {k: v for k, v in opts.items() if "clustering" in k or "layout" in k}

    assert clustering({"cluster_by": ["customer_id", "ts"], "layout": "z-order", "commits": 3,
                       "small_file_limit": 1000, "target_file_size": 5000}) == {
        "hoodie.clustering.plan.strategy.sort.columns": "customer_id,ts",
        "hoodie.layout.optimize.strategy": "z-order",
        "hoodie.clustering.inline.max.commits": "3", "hoodie.clustering.async.max.commits": "3",
        "hoodie.clustering.inline": "true",  # a commit count asks for inline clustering
        "hoodie.clustering.plan.strategy.small.file.limit": "1000",
        "hoodie.clustering.plan.strategy.target.file.max.bytes": "5000"}
    scheduled = clustering({"cluster_by": "ts", "schedule_only": True, "commits": 2})
    assert scheduled["hoodie.clustering.schedule.inline"] == "true" and "hoodie.clustering.inline" not in scheduled
    assert clustering(False) == {"hoodie.clustering.inline": "false"}
    with pytest.raises(HudiConfigError) as e:
        cfg(clustering={"zorder_by": ["a"], "layout": "spiral"})
    assert "clustering: unknown key 'zorder_by'; expected cluster_by, layout" in str(e.value)
    assert "hoodie.layout.optimize.strategy='spiral'" in str(e.value) and "linear, z-order, hilbert" in str(e.value)
    with pytest.raises(HudiConfigError, match="Both can't be set to true at the same time"):
        cfg(clustering={"inline": True, "schedule_only": True})


def test_record_index_setting_spells_hudis_key():
    opts = cfg(record_index=True).hoodie_options("t", "db", "upsert", columns={"id": "id"})
    assert opts["hoodie.metadata.global.record.level.index.enable"] == "true"
    assert cfg(record_index=False).hoodie_options("t", "db", "upsert", columns={"id": "id"})[
        "hoodie.metadata.global.record.level.index.enable"] == "false"
    assert "hoodie.metadata.global.record.level.index.enable" not in cfg().hoodie_options(
        "t", "db", "upsert", columns={"id": "id"})
    with pytest.raises(HudiConfigError, match="record_index"):
        cfg(record_index="maybe")
