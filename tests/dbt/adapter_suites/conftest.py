"""Profile of dbt's adapter test framework (dbt-tests-adapter) for `type: hudi`, method session.

These suites run in their own pytest process (see ../test_adapter_suites.py): the framework runs dbt in-process,
and dbt's session must not share a JVM with the engine's test session of tests/spark.
"""
from __future__ import annotations

import pytest


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
