"""dbt-tests-adapter base suites on `type: hudi` (method session): dbt-spark's materializations keep working, and
`hudi_incremental` passes the framework's incremental suite.

Collected only by ../test_adapter_suites.py (`-o python_files=suite_*.py`), in a process of its own.
"""
from __future__ import annotations

import pytest
from dbt.tests.adapter.basic import files
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_incremental import BaseIncremental


class TestSimpleMaterializationsHudi(BaseSimpleMaterializations):
    pass


class TestSimpleMaterializationsHudiFileFormat(BaseSimpleMaterializations):
    """The same suite with `+file_format: hudi`: its table models are Hudi tables (keyless: the suite has no key),
    rebuilt by each run (issue 29); views and the table <-> view swap as dbt-spark does them."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "base", "models": {"+file_format": "hudi"}}


class TestHudiIncremental(BaseIncremental):
    """The same suite with the model as a Hudi table (record key `id`)."""

    @pytest.fixture(scope="class")
    def models(self):
        sql = files.incremental_sql.replace('materialized="incremental"',
                                            'materialized="hudi_incremental", unique_key="id"')
        assert sql != files.incremental_sql
        return {"incremental.sql": sql, "schema.yml": files.schema_base_yml}
