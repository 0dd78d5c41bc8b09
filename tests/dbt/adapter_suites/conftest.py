"""Profile of dbt's adapter test framework (dbt-tests-adapter) for `type: hudi`, method session.

These suites run in their own pytest process (see ../test_adapter_suites.py): the framework runs dbt in-process,
and dbt's session must not share a JVM with the engine's test session of tests/spark.
"""
from __future__ import annotations

import pytest

from hudi_engine import META_COLUMNS


@pytest.fixture(scope="class")
def dbt_profile_target(tmp_path_factory):
    # One warehouse and metastore for the whole process: the JVM's static settings are fixed by the first test.
    root = tmp_path_factory.getbasetemp() / "spark"
    root.mkdir(exist_ok=True)
    return {
        "type": "hudi",
        "method": "session",
        "host": "localhost",
        "threads": 2,
        "server_side_parameters": {
            "spark.master": "local[2]",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.warehouse.dir": str(root / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true",
        },
    }


@pytest.fixture(autouse=True)
def _relations_compared_on_data_columns():
    """The suites' `check_relations_equal` compares the first relation's columns; a Hudi table's five meta columns
    (commit time, file name, ...) differ between two tables of equal rows by construction, and a parquet table has
    none: the rows are compared on the data columns."""
    import dbt.tests.util as util

    original = util.check_relations_equal_with_relations

    def on_data_columns(adapter, relations, compare_snapshot_cols=False):
        columns_of = adapter.get_columns_in_relation
        with pytest.MonkeyPatch.context() as m:
            m.setattr(adapter, "get_columns_in_relation",
                      lambda relation: [c for c in columns_of(relation) if c.name not in META_COLUMNS])
            return original(adapter, relations, compare_snapshot_cols)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(util, "check_relations_equal_with_relations", on_data_columns)
        yield
