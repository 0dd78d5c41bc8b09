"""The adapter's macros rendered with plain Jinja and a faked `config` / `adapter` (no dbt, no Spark).

A native Jinja environment with `return` as the identity gives back what a macro returns (a dict, a bool), as
dbt's `return()` does, and SQL text otherwise; the macros keep their branches exclusive so this holds.
"""
from __future__ import annotations

import re
from itertools import chain, islice
from pathlib import Path

import jinja2
import pytest
from jinja2.nativetypes import NativeEnvironment

MACROS = Path(__file__).resolve().parents[2] / "dbt" / "include" / "hudi" / "macros"


class FakeConfig:
    def __init__(self, values: dict) -> None:
        self.values = values

    def get(self, key, default=None, validator=None):
        return self.values.get(key, default)


class FakeRelation:
    def __init__(self, is_hudi: bool = True, type: str = "table", name: str = "analytics.orders") -> None:
        self.is_hudi = is_hudi
        self.type = type
        self.name = name

    def __str__(self) -> str:
        return self.name


class FakeAdapter:
    def __init__(self, locations: dict[str, str] | None = None, relation=None, empty_build: bool = False) -> None:
        self.locations = locations or {}
        self.relation = relation
        self.empty_build = empty_build

    def hudi_is_empty_build(self, relation) -> bool:
        return self.empty_build

    def hudi_table_location(self, relation) -> str:
        return self.locations[str(relation)]

    def get_relation(self, database, schema, identifier):
        return self.relation


class CompilerError(Exception):
    pass


def raise_compiler_error(msg):
    raise CompilerError(msg)


def _concat(values):
    """A macro's output: the value itself when it is one node (what `return()` gave), else the text."""
    values = iter(values)
    head = list(islice(values, 2))
    if not head:
        return ""
    if len(head) == 1:
        return head[0]
    return "".join(str(v) for v in chain(head, values))


class ValueEnvironment(NativeEnvironment):
    concat = staticmethod(_concat)  # NativeEnvironment would also literal_eval SQL text like "'a', 'b'"


def module(path: str, **context):
    env = ValueEnvironment(loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"])
    ctx = {"return": lambda value: value, "execute": True,
           "exceptions": type("E", (), {"raise_compiler_error": staticmethod(raise_compiler_error)}),
           **context}
    return env.get_template(path, globals=ctx).module


def squash(sql: str) -> str:
    return re.sub(r"\s+", " ", str(sql)).strip()


# ---- hudi_incremental steps ---------------------------------------------------------------------------------


def test_settings_collects_every_hudi_key_from_config():
    config = FakeConfig({"unique_key": ["order_id", "line_no"], "table_type": "mor", "precombine_field": "ts",
                         "hudi_options": {"hoodie.parquet.max.file.size": "1024"}, "materialized": "x"})
    settings = module("materializations/hudi_helpers.sql", config=config).hudi_model_settings()
    assert settings == {
        "unique_key": ["order_id", "line_no"], "partition_by": None, "precombine_field": "ts", "table_type": "mor",
        "payload_class": None, "incremental_strategy": None, "index_type": None, "location_root": None,
        "hudi_options": {"hoodie.parquet.max.file.size": "1024"}, "on_schema_change": None,
        "merge_update_columns": None, "merge_exclude_columns": None, "compaction": None, "cleaning": None, "clustering": None,
        "hive_sync": None, "glue_sync": None, "cdc_enabled": None, "cdc_mode": None, "change_type_column": None,
        "table_version": None, "metadata_table": None, "column_stats": None, "record_index": None,
        "incremental_predicates": None,
        "predicates": None, "materialized": "x", "options": None, "tblproperties": None,
    }


@pytest.mark.parametrize("existing, full_refresh, mode", [
    (None, False, "create"),
    (None, True, "create"),
    (FakeRelation(), False, "incremental"),
    (FakeRelation(), True, "full_refresh"),
    (FakeRelation(is_hudi=False), False, "create"),  # a parquet table of an earlier materialization
    (FakeRelation(type="view"), False, "create"),
])
def test_write_mode(existing, full_refresh, mode):
    assert module("materializations/hudi_helpers.sql").hudi_write_mode(existing, full_refresh) == mode


def test_only_relations_of_another_kind_are_dropped():
    m = module("materializations/hudi_helpers.sql")
    assert m.hudi_must_drop(None) is False
    assert m.hudi_must_drop(FakeRelation()) is False
    assert m.hudi_must_drop(FakeRelation(is_hudi=False)) is True
    assert m.hudi_must_drop(FakeRelation(type="view")) is True


@pytest.mark.parametrize("materialized, file_format, relation, full_refresh, empty_build, expected", [
    ("hudi_incremental", None, FakeRelation(), False, False, True),
    ("hudi_incremental", None, FakeRelation(), True, False, False),
    ("hudi_incremental", None, None, False, False, False),
    ("hudi_incremental", None, FakeRelation(is_hudi=False), False, False, False),
    ("hudi_incremental", None, FakeRelation(), False, True, False),  # `dbt run --empty` built it: build in full
    ("incremental", "hudi", FakeRelation(), False, False, True),  # dbt-spark's spelling of a Hudi model
    ("incremental", "hudi", FakeRelation(is_hudi=False), False, False, False),
    ("incremental", None, FakeRelation(is_hudi=False), False, False, True),  # dbt's own rule unchanged
    ("incremental", None, FakeRelation(), True, False, False),
    ("table", None, FakeRelation(), False, False, False),
])
def test_is_incremental(materialized, file_format, relation, full_refresh, empty_build, expected):
    helpers = module("materializations/hudi_helpers.sql")
    m = module("is_incremental.sql", adapter=FakeAdapter(relation=relation, empty_build=empty_build),
               this=type("This", (), {"database": None, "schema": "s", "table": "t"}),
               model={"config": {"materialized": materialized, "file_format": file_format}},
               should_full_refresh=lambda: full_refresh, hudi_write_mode=helpers.hudi_write_mode,
               hudi_is_hudi_model=helpers.hudi_is_hudi_model)
    assert m.is_incremental() is expected


def test_is_incremental_is_false_while_parsing():
    m = module("is_incremental.sql", execute=False)
    assert m.is_incremental() is False


# ---- the timeline and the generic tests ---------------------------------------------------------------------


def timeline_module(**context):
    adapter = FakeAdapter({"analytics.orders": "/wh/analytics.db/orders", "analytics.o'q": "/wh/o'q"})
    return module("timeline.sql", adapter=adapter, **context)


def test_timeline_of_a_relation_reads_its_catalog_path():
    m = timeline_module()
    assert squash(m.hudi_timeline(FakeRelation())) == "hudi_timeline('/wh/analytics.db/orders')"
    assert squash(m.hudi_timeline("s3://bucket/t")) == "hudi_timeline('s3://bucket/t')"
    assert squash(m.hudi_timeline(FakeRelation(name="analytics.o'q"))) == r"hudi_timeline('/wh/o\'q')"


def test_timeline_while_parsing_needs_no_catalog():
    assert squash(timeline_module(execute=False).hudi_timeline(FakeRelation(name="nowhere"))) == "hudi_timeline('')"


def sql_module(name: str = "hudi_test_sql.sql", **context):
    t = timeline_module()
    return module(name, hudi_timeline=t.hudi_timeline, hudi_commit_actions=t.hudi_commit_actions, **context)


def test_no_pending_instants_selects_unfinished_instants():
    sql = squash(sql_module().hudi_no_pending_instants_sql(FakeRelation()))
    assert sql == ("select instant, action, state from hudi_timeline('/wh/analytics.db/orders') "
                   "where state <> 'COMPLETED'")


def test_unique_record_key_groups_by_the_key_across_partitions():
    sql = squash(sql_module().hudi_unique_record_key_sql(FakeRelation()))
    assert sql == ("select _hoodie_record_key, count(*) as n_records from analytics.orders "
                   "group by _hoodie_record_key having count(*) > 1")


def test_commit_count_bounds_and_actions():
    m = sql_module()
    sql = squash(m.hudi_commit_count_sql(FakeRelation(), 2, 3, None))
    assert "action in ('commit', 'deltacommit', 'replacecommit')" in sql
    assert sql.endswith("where n_commits < 2 or n_commits > 3")
    sql = squash(m.hudi_commit_count_sql(FakeRelation(), None, 1, "replacecommit"))
    assert "action in ('replacecommit')" in sql and sql.endswith("where n_commits > 1")
    sql = squash(m.hudi_commit_count_sql(FakeRelation(), 1, None, ["commit", "deltacommit"]))
    assert "action in ('commit', 'deltacommit')" in sql and sql.endswith("where n_commits < 1")
    with pytest.raises(CompilerError, match="set min_count, max_count or both"):
        m.hudi_commit_count_sql(FakeRelation(), None, None, None)


def test_latest_commit_conditions():
    sql = squash(sql_module().hudi_latest_commit_sql(FakeRelation(), "upsert", 1, None, 2, 2, None, 0))
    assert ("where not (upper(operation) = upper('upsert') and num_inserts >= 1 and num_updates >= 2 "
            "and num_updates <= 2 and num_deletes <= 0)") in sql
    assert "order by instant desc limit 1" in sql
    assert "'no completed commit'" in sql  # an empty timeline fails the test too
    assert "where not (true)" in squash(sql_module().hudi_latest_commit_sql(FakeRelation()))


def test_generic_tests_and_the_materialization_are_dbt_blocks():
    """What plain Jinja cannot render is checked as text: the blocks exist and call the macros tested above."""
    tests = (MACROS / "tests" / "hudi_tests.sql").read_text()
    for name in ("hudi_no_pending_instants", "hudi_unique_record_key", "hudi_commit_count", "hudi_latest_commit"):
        assert re.search(rf"{{% test {name}\(model", tests), name
        assert f"{name}_sql(model" in tests
    mat = (MACROS / "materializations" / "hudi_incremental.sql").read_text()
    assert "{% materialization hudi_incremental, adapter='hudi'" in mat
    order = [mat.index(step) for step in ("hudi_model_settings()", "adapter.hudi_validate_config(",
                                          "hudi_write_mode(", "adapter.hudi_write(", "store_result('main'")]
    assert order == sorted(order), "validate first, then decide the mode, write, and report"
