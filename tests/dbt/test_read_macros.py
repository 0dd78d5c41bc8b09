"""The read macros and `HudiRelation`'s rendering, without dbt runs or Spark (tests/dbt/test_reads.py runs them)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_macros import FakeRelation, module, squash

from dbt.adapters.hudi.catalog import view_name
from dbt.adapters.hudi.relation import HudiRelation


class ChangesAdapter:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def hudi_table_changes_view(self, relation, begin, end, fmt="latest_state", images="struct"):
        self.calls.append((str(relation), begin, end) + (() if fmt == "latest_state" else (fmt, images)))
        return "`hudi__analytics__orders__changes__1__2`"

    def quote(self, name: str) -> str:
        return f"`{name}`"


def test_hudi_table_changes_renders_the_adapters_view():
    adapter = ChangesAdapter()
    m = module("reads.sql", adapter=adapter)
    assert squash(m.hudi_table_changes(FakeRelation(), "20240101000000000")) == \
        "`hudi__analytics__orders__changes__1__2`"
    assert m.hudi_table_changes("/data/orders", "earliest", "20240102000000000") is not None
    assert adapter.calls == [("analytics.orders", "20240101000000000", None),
                             ("/data/orders", "earliest", "20240102000000000")]
    # format='cdc': the CDC query's view (struct images unless images='json').
    m.hudi_table_changes(FakeRelation(), "1", format="cdc")
    m.hudi_table_changes(FakeRelation(), "1", None, "cdc", "json")
    assert adapter.calls[2:] == [("analytics.orders", "1", None, "cdc", "struct"),
                                 ("analytics.orders", "1", None, "cdc", "json")]
    del adapter.calls[2:]
    # While dbt parses (execute is false) nothing is read: the relation itself is rendered.
    parsing = module("reads.sql", adapter=adapter, execute=False)
    assert squash(parsing.hudi_table_changes(FakeRelation(), "1")) == "analytics.orders"
    assert len(adapter.calls) == 2


def test_hudi_max_value_runs_one_query_and_falls_back_to_the_default():
    queries: list[str] = []

    def run_query(sql: str):
        queries.append(sql)
        value = None if "empty" in sql else "20240101000000000"
        return SimpleNamespace(rows=[(value,)], columns=[SimpleNamespace(values=lambda: [value])])

    m = module("reads.sql", adapter=ChangesAdapter(), run_query=run_query)
    assert m.hudi_max_value(FakeRelation(), "source_commit_time", "earliest") == "20240101000000000"
    assert m.hudi_max_value(FakeRelation(name="empty"), "source_commit_time", "earliest") == "earliest"
    assert queries[0] == "select max(`source_commit_time`) from analytics.orders"
    assert module("reads.sql", execute=False).hudi_max_value(FakeRelation(), "c", "earliest") == "earliest"


def _relation(**extra) -> HudiRelation:
    return HudiRelation.create(schema="analytics", identifier="orders", **extra)


def test_a_read_relation_renders_its_view_and_dbts_subquery_forms_around_it():
    view = "`hudi__analytics__orders__20240101000000000`"
    read = _relation(read_as=view)
    assert str(read) == view
    assert read.render() == "analytics.orders"  # DDL and adapter methods keep the catalog name
    assert str(_relation()) == "analytics.orders"
    assert str(_relation(read_as=view, limit=0)) == f"(select * from {view} where false limit 0)"
    assert str(_relation(read_as=view, limit=5)) == f"(select * from {view} limit 5)"


class NodeConfig(dict):
    @property
    def materialized(self):
        return self["materialized"]


@pytest.mark.parametrize("node, kwargs", [
    (SimpleNamespace(config=NodeConfig(materialized="table"), compiled=False), {"limit": None}),  # not Hudi
    (SimpleNamespace(config=NodeConfig(materialized="hudi_incremental"), compiled=True), {}),  # DDL's this
])
def test_only_reads_of_hudi_tables_are_resolved(node, kwargs):
    """No Spark session is needed to decide: these never reach the catalog."""
    node.database, node.schema, node.identifier = None, "analytics", "orders"
    node.quoting_dict = {}
    quoting = SimpleNamespace(quoting={})
    relation = HudiRelation.create_from(quoting, node, **kwargs)
    assert relation.read_as is None and str(relation) == "analytics.orders"


@pytest.mark.parametrize("kwargs", [{"limit": None}, {"event_time_filter": None}])
def test_a_native_session_renders_reads_as_the_catalog_name_without_starting_spark(kwargs):
    """The adapter's default (the native hudi source): ref(), source() and a model's own {{ this }} render the
    catalog name; deciding needs the profile only, never a session."""
    from dbt.adapters.spark.connections import SparkConnectionMethod

    from dbt.adapters.hudi.connections import HudiConnectionManager

    node = SimpleNamespace(config=NodeConfig(materialized="hudi_incremental"), compiled=False, database=None,
                           schema="analytics", identifier="orders", quoting_dict={})
    for parameters in ({}, {"spark.hudi_engine.native": "true", "spark.master": "local[1]"}):
        credentials = SimpleNamespace(method=SparkConnectionMethod.SESSION, server_side_parameters=parameters)
        relation = HudiRelation.create_from(SimpleNamespace(quoting={}, credentials=credentials), node, **kwargs)
        assert relation.read_as is None and str(relation) == "analytics.orders"
    assert HudiConnectionManager.environment.running_session() is None


def test_view_names_are_one_quoted_identifier():
    assert view_name("analytics", "orders", "20240101000000000") == "`hudi__analytics__orders__20240101000000000`"
    assert view_name("my-schema", "odd name", "changes", "1", "2") == "`hudi__my_schema__odd_name__changes__1__2`"
