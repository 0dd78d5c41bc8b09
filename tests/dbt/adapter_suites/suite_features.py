"""dbt-tests-adapter suites for what a dbt user reaches for, run on Hudi tables (`type: hudi`, method session): unit
testing, contracts (constraints), --empty, snapshots, microbatch and merge_exclude_columns.

Models are Hudi tables either way: `materialized='hudi_incremental'`, or dbt-spark's `materialized='incremental'`
with `file_format='hudi'` (the suites' own models, given the file format in the project config). Snapshots are Hudi
tables by default on this adapter. Collected only by ../test_adapter_suites.py, in a process of its own.
"""
from __future__ import annotations

import shutil

import pytest
from dbt.tests.adapter.constraints import fixtures as constraint_fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
)
from dbt.tests.adapter.empty.test_empty import BaseTestEmpty, BaseTestEmptyInlineSourceRef
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes
from dbt.tests.util import get_manifest, relation_from_name, run_dbt, write_file

HUDI_FILE_FORMAT = {"models": {"+file_format": "hudi"}}

# ---- unit testing: the tested model is a Hudi table -------------------------------------------------------------
UNIT_CONFIG = {"models": {"+materialized": "hudi_incremental", "+unique_key": "tested_column",
                          "test": {"my_upstream_model": {"+materialized": "view"}}}}


class TestUnitTestingTypesHudi(BaseUnitTestingTypes):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return UNIT_CONFIG

    @pytest.fixture
    def data_types(self):
        return [["1", "1"], ["2.0", "2.0"], ["'12345'", "12345"], ["'string'", "string"], ["true", "true"],
                ["date '2011-11-11'", "2011-11-11"], ["timestamp '2013-11-03 00:00:00-0'", "2013-11-03 00:00:00-0"]]


class TestUnitTestCaseInsensitivityHudi(BaseUnitTestCaseInsensivity):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return UNIT_CONFIG


class TestUnitTestInvalidInputHudi(BaseUnitTestInvalidInput):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return UNIT_CONFIG


# ---- contracts ---------------------------------------------------------------------------------------------------
SCHEMA_YML = constraint_fixtures.model_schema_yml.replace("data_type: text", "data_type: string")  # Spark's name


class TestIncrementalConstraintsColumnsEqualHudi(BaseIncrementalConstraintsColumnsEqual):
    """dbt's preflight contract checks on dbt-spark's spelling with file_format='hudi'."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "hudi", "+unique_key": "id"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model_wrong_order.sql": constraint_fixtures.my_model_incremental_wrong_order_sql,
                "my_model_wrong_name.sql": constraint_fixtures.my_model_incremental_wrong_name_sql,
                "constraints_schema.yml": SCHEMA_YML}

    # dbt prints the types as Spark names them (lower case); the suite looks for these words in its log.
    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self, int_type, string_type):
        # sql value, contract type, the type dbt reports for the value (each value is the record key)
        return [["1", "int", int_type], ["'1'", "string", string_type], ["true", "boolean", "boolean"],
                ["cast('2019-01-01' as date)", "date", "date"],
                ["cast(1.5 as decimal(10, 2))", "decimal(10,2)", "decimal(10,2)"]]

    @pytest.fixture(autouse=True)
    def _data_type_model_is_hudi(self, monkeypatch):
        """The data type tests write `my_model_data_type` (a `table` model, rebuilt with each type) afresh: as a
        Hudi model here, keyed by its one column, rebuilt by each run (full_refresh)."""
        monkeypatch.setattr(constraint_fixtures, "my_model_data_type_sql", constraint_fixtures.my_model_data_type_sql
                            .replace('materialized = "table"', 'materialized = "hudi_incremental", '
                                     'unique_key = "wrong_data_type_column_name", full_refresh = true'))


class TestHudiIncrementalConstraintsColumnsEqual(TestIncrementalConstraintsColumnsEqualHudi):
    """The same with materialized='hudi_incremental'."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": hudi_incremental(constraint_fixtures.my_model_incremental_wrong_order_sql),
            "my_model_wrong_name.sql": hudi_incremental(constraint_fixtures.my_model_incremental_wrong_name_sql),
            "constraints_schema.yml": SCHEMA_YML,
        }


def hudi_incremental(sql: str) -> str:
    out = sql.replace('materialized = "incremental"', 'materialized = "hudi_incremental"')
    assert out != sql
    return out


class TestIncrementalConstraintsRollbackHudi(BaseIncrementalConstraintsRollback):
    """A not_null constraint broken by the model's rows: the run fails before writing, the table keeps its rows."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "hudi", "+unique_key": "color"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": constraint_fixtures.my_incremental_model_sql, "constraints_schema.yml": SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return ["model my_model: the model's rows break its contract: not_null on column 'id': 1 row(s) break it",
                "Nothing was written (the table is as it was)"]

    def test__constraints_enforcement_rollback(self, project, expected_color, expected_error_messages,
                                               null_model_sql):
        """The suite's steps; the old row is read by column name (`select *` of a Hudi table starts with its five
        meta columns, so the suite's `row[1]` is not `color` here)."""
        assert len(run_dbt(["run", "-s", "my_model"])) == 1
        write_file(null_model_sql, "models", "my_model.sql")
        failing = run_dbt(["run", "-s", "my_model"], expect_pass=False)
        assert len(failing) == 1
        relation = relation_from_name(project.adapter, "my_model")
        assert project.run_sql(f"select color from {relation}", fetch="all") == [(expected_color,)]
        assert get_manifest(project.project_root).nodes["model.test.my_model"].config.contract.enforced is True
        self.assert_expected_error_messages(failing[0].message, expected_error_messages)


# ---- --empty -----------------------------------------------------------------------------------------------------
EMPTY_CONFIG = {"models": {"test": {"model": {"+materialized": "hudi_incremental", "+unique_key": "id"}}}}


class TestEmptyInlineSourceRefHudi(BaseTestEmptyInlineSourceRef):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return EMPTY_CONFIG


class TestEmptyHudi(BaseTestEmpty):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return EMPTY_CONFIG

    def test_run_with_empty(self, project):
        """The suite's `run` then `run --empty` expects a rebuilt, empty table; an incremental Hudi model keeps its
        table on an --empty run (no rows to upsert). What --empty does for it: the first build is empty, with the
        model's schema, and the next normal run builds it in full."""
        run_dbt(["seed"])
        run_dbt(["run", "--empty"])
        self.assert_row_count(project, "model", 0)
        run_dbt(["run"])
        self.assert_row_count(project, "model", 3)
        run_dbt(["run", "--empty"])
        self.assert_row_count(project, "model", 3)


# ---- snapshots (Hudi tables by default) --------------------------------------------------------------------------
class _HudiFact:
    """`fact`, the table the suites change, is a Hudi table keyed by `id` (the suite's CREATE TABLE AS SELECT with
    Hudi's USING clause), so the suites' own UPDATE, DELETE, INSERT and ALTER TABLE ADD COLUMN statements run on it.
    A Hudi table made by SQL keeps its files when dropped: they are removed with it between tests, and so are the
    snapshot's."""

    def _drop_with_files(self, name: str) -> None:
        adapter = self.project.adapter
        relation = relation_from_name(adapter, name)
        with adapter.connection_named("__test"):
            try:
                path = adapter.hudi_table_location(relation)
            except Exception:  # noqa: BLE001 - no such table, or not a Hudi table: nothing to remove
                path = None
        self.project.run_sql(f"drop table if exists {relation}")
        if path:
            shutil.rmtree(path, ignore_errors=True)

    def _create_hudi(self, name: str, select_sql: str) -> None:
        relation = relation_from_name(self.project.adapter, name)
        self._drop_with_files(name)
        self.project.run_sql(f"create table {relation} using hudi tblproperties (primaryKey = 'id') as {select_sql}")

    def create_fact_from_seed(self, where=None):
        seed = relation_from_name(self.project.adapter, "seed")
        self._create_hudi("fact", f"select * from {seed} where {where or '1 = 1'}")

    def delete_snapshot_records(self):
        self._drop_with_files("snapshot")


class TestSnapshotHudi(_HudiFact, BaseSimpleSnapshot):
    pass


class TestSnapshotCheckHudi(_HudiFact, BaseSnapshotCheck):
    pass


# ---- microbatch and merge_exclude_columns (dbt-spark's spelling, file_format='hudi') ------------------------------
class TestMicrobatchHudi(BaseMicrobatch):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"test": {"microbatch_model": {"+file_format": "hudi"}}}}


class TestMergeExcludeColumnsHudi(BaseMergeExcludeColumns):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return HUDI_FILE_FORMAT
