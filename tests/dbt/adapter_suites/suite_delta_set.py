"""The dbt-tests-adapter suites dbt-spark runs for its Delta tables, with `+file_format: hudi` (dbt-spark's
`incremental` with strategy merge writes a Hudi table keyed by `unique_key`).

Where a suite's expectation contradicts Hudi's semantics the test is overridden to assert what Hudi does, and
docs/dbt.md says so. Collected only by ../test_adapter_suites.py, in a process of its own.
"""
from __future__ import annotations

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import BaseIncrementalOnSchemaChange
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.adapter.persist_docs.test_persist_docs import BasePersistDocs
from dbt.tests.util import relation_from_name, run_dbt

HUDI_MERGE = {"models": {"+file_format": "hudi", "+incremental_strategy": "merge"}}
# The suite's file format on its seed too, which it INSERTs into in SQL (the suite's string literals into a DATE
# column): a Hudi seed casts them as Hudi's INSERT INTO does; a parquet seed refuses them by Spark's own ANSI store
# assignment (CANNOT_SAFELY_CAST), whatever the models' format (docs/dbt.md).
HUDI_SEEDS = {"seeds": {"+file_format": "hudi"}}


class TestIncrementalUniqueKeyHudi(BaseIncrementalUniqueKey):
    """dbt-spark's Delta class (models `merge`, the seed a Hudi table too) with dbt's own expectations: `merge`
    without a unique_key (none, `[]`, `''`) appends into a keyless Hudi table, as Delta's `on false` MERGE appends;
    `unique_key='state'` over a seed with two NY rows keeps both, as Delta's CREATE TABLE AS SELECT does.

    Hudi differs from Delta in one place, asserted instead: a unique_key column the model lacks fails the first run
    already (Delta ignores the key until it merges). The key is the Hudi table's record key from its creation, and
    Hudi's key generators refuse a record key field the rows do not have (`HoodieAvroUtils.getNestedFieldVal`:
    "... field not found in record")."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {**HUDI_MERGE, **HUDI_SEEDS}

    def _key_column_missing(self, model: str) -> None:
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        failed = run_dbt(["run", "--select", model, "--full-refresh"], expect_pass=False).results[0]
        assert failed.status == RunStatus.Error
        assert "unique_key: column 'thisisnotacolumn' is not in the model's result" in failed.message

    def test__bad_unique_key(self, project):
        self._key_column_missing("not_found_unique_key")

    def test__bad_unique_key_list(self, project):
        self._key_column_missing("not_found_unique_key_list")


class TestIncrementalOnSchemaChangeHudi(BaseIncrementalOnSchemaChange):
    """dbt's expectations unchanged: sync_all_columns drops the column the model no longer selects (ALTER TABLE DROP
    COLUMN with Hudi's schema evolution on read, docs/dbt.md)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return HUDI_MERGE


class TestPersistDocsHudi(BasePersistDocs):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"test": {"+persist_docs": {"relation": True, "columns": True}, "+file_format": "hudi"}},
                "seeds": {"+file_format": "hudi"}}


class TestIncrementalPredicatesHudi(BaseIncrementalPredicates):
    """The suite's predicate `id != 2` keeps the merge away from the stored row of key 2, so Delta (and the suite's
    expected table) end with key 2 twice. On a Hudi table that predicate is refused by name before anything is
    written (it reads a column that is not a partition column), and the table keeps its first build. dbt-spark's
    merge spelling is used (Hudi has no delete+insert strategy; both use the predicates the same way)."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "hudi", "+incremental_strategy": "merge", "+partition_by": "color",
                           "+incremental_predicates": ["id != 2"]}}

    def test__incremental_predicates(self, project):
        model = "delete_insert_incremental_predicates"
        assert len(run_dbt(["run", "--select", model, "--full-refresh"])) == 1
        failed = run_dbt(["run", "--select", model], expect_pass=False).results[0]
        assert failed.status == RunStatus.Error
        assert ("incremental_predicates[0] 'id != 2' reads column `id`, which is not a partition column "
                "(partition_by: color)") in failed.message
        assert "would write a second row for their keys" in failed.message and "Nothing was written" in failed.message
        relation = relation_from_name(project.adapter, model)
        assert project.run_sql(f"select id, msg, color from {relation} order by id", fetch="all") == [
            (1, "hello", "blue"), (2, "goodbye", "red")]
