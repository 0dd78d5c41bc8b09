"""`hudi_cluster` (dbt/adapters/hudi/services.py) without dbt: the model's `clustering` setting spelled into options,
a plan made, executed later, reported."""
from __future__ import annotations

import pyarrow as pa
import pytest
from local_write import write

from dbt.adapters.hudi.errors import HudiServiceError
from dbt.adapters.hudi.services import check_arguments, run_service, service_options
from hudi_engine import HudiTable


def test_hudi_cluster_schedules_then_executes_with_the_models_clustering(tmp_path):
    path = tmp_path / "orders"
    base = {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "",
            "hoodie.parquet.small.file.limit": "0"}
    for b in range(3):
        write(path, pa.table({"id": [b * 10 + i for i in range(10)], "ts": [b] * 10,
                              "x": [(b * 10 + i) * 7 % 30 for i in range(10)]}), base)
    node = {"hudi_options": base, "clustering": {"cluster_by": ["x", "ts"], "layout": "hilbert"}}
    options = service_options("cluster", node, {"op": "schedule"})
    assert options["hoodie.layout.optimize.strategy"] == "hilbert"
    planned = run_service("cluster", str(path), options, op="schedule")
    assert planned.instant is not None and planned.files == 3 and "planned: 3 file groups" in planned.message
    assert run_service("cluster", str(path), options, op="schedule").instant is None  # the groups are planned
    done = run_service("cluster", str(path), options, op="execute")
    assert done.instant == planned.instant and done.rows == 30 and "3 file groups clustered into 1" in done.message
    assert len(HudiTable.load(str(path)).file_slices()) == 1
    assert "no pending clustering to execute" in run_service("cluster", str(path), options, op="execute").message
    with pytest.raises(HudiServiceError, match=r"unknown argument\(s\) \['order'\]"):
        check_arguments("cluster", {"model": "orders", "order": "x"})
