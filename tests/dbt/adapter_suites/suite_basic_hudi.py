"""dbt-tests-adapter's basic suites (the set dbt-spark runs) with `+file_format: hudi`: models are Hudi tables, and so
are the seeds and snapshots where the suite changes them in SQL (the snapshot suites UPDATE their seed).

Where a suite compares a Hudi model with its seed (`check_relations_equal` takes the first relation's columns), the
seed stays parquet: a Hudi table's five `_hoodie_*` meta columns are not the model's columns. Collected only by
../test_adapter_suites.py (`-o python_files=suite_*.py`), in a process of its own.
"""
from __future__ import annotations

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp

HUDI_MODELS = {"models": {"+file_format": "hudi"}}
# Seeds and snapshots as Hudi tables, as dbt-spark's Delta classes set them: the suites' own UPDATE of the seed runs
# on a keyless Hudi table (its rows keep their generated keys, docs/keyless.md).
HUDI_SEEDS_AND_SNAPSHOTS = {"seeds": {"+file_format": "hudi"}, "snapshots": {"+file_format": "hudi"}}


class TestSingularTestsHudi(BaseSingularTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "singular_tests", **HUDI_MODELS}


class TestSingularTestsEphemeralHudi(BaseSingularTestsEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "singular_tests_ephemeral", **HUDI_MODELS}


class TestEmptyHudi(BaseEmpty):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "empty", **HUDI_MODELS}


class TestEphemeralHudi(BaseEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "ephemeral", **HUDI_MODELS}


class TestIncrementalHudiFileFormat(BaseIncremental):
    """dbt-spark's `incremental` (append) with file_format='hudi': a keyless Hudi table, later runs insert."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "incremental", **HUDI_MODELS}


class TestGenericTestsHudi(BaseGenericTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "generic_tests", **HUDI_MODELS}


class TestAdapterMethodHudi(BaseAdapterMethod):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "adapter_methods", **HUDI_MODELS}


class TestSnapshotCheckColsHudi(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_check_cols", **HUDI_SEEDS_AND_SNAPSHOTS}


class TestSnapshotTimestampHudi(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "snapshot_strategy_timestamp", **HUDI_SEEDS_AND_SNAPSHOTS}
