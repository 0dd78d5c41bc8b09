"""One incremental `hudi_incremental` model run reads the table's metadata a bounded number of times (issue 25):
counted in the dbt process (tests/io_counts.py installed by a `python` step of the driver) around the second run.
A model with a pre-hook loads its table again for the write: the hook's SQL may have written it. The models turn the
metadata table off: keeping it reads its own hoodie.properties and timeline (tests/write/test_write_counts.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import run_driver, write_small_project

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TESTS = Path(__file__).resolve().parents[1]
MODEL = """{{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts', partition_by='part',
                  metadata_table=false) }}
select cast(id as bigint) as id, {{ var('day') }} as ts, concat('p', cast(id % 2 as string)) as part
from range({{ var('day') }} * 3, {{ var('day') }} * 3 + 5)
{% if is_incremental() %} where {{ var('day') }} > 1 {% endif %}
"""
HOOKED = MODEL.replace("partition_by='part'", "partition_by='part', pre_hook='select 1'")


def write_project(root: Path) -> None:
    write_small_project(root, "counts", "cnt", {"events": MODEL, "hooked": HOOKED}, threads=1)


def test_one_incremental_model_run_reads_the_config_and_the_timeline_a_bounded_number_of_times(tmp_path: Path):
    project = tmp_path / "project"
    write_project(project)
    install = f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport io_counts\nCOUNTER = io_counts.install()[0]\n" \
              "import builtins\nbuiltins._hudi_counter = COUNTER\nresult = 'installed'"
    snapshot = "import builtins\nresult = builtins._hudi_counter.snapshot()\nbuiltins._hudi_counter.counts.clear()"
    results = run_driver(project, [
        {"dbt": ["run"]},
        {"python": install},
        {"dbt": ["run", "--vars", "{day: 2}", "--select", "events"]},
        {"python": snapshot},
        {"dbt": ["run", "--vars", "{day: 2}", "--select", "hooked"]},
        {"python": snapshot},
    ], tmp_path / "run", timeout=900)
    first, installed, second, counted, hooked_run, hooked = results
    assert first["success"] and second["success"] and hooked_run["success"], (first, second, hooked_run)
    assert installed["error"] is None, installed
    counts = counted["result"]
    # hoodie.properties once and the timeline listed twice: the run's HudiTable (loaded for the empty-build check
    # of is_incremental() when the model compiles, asked again by the materialization, then written with), and the write under its lock (the services after the commit share that lock and
    # listing; the catalog entry is made from the table as the commit left it).
    # Before issue 25: 10 reads of hoodie.properties, 16 Timeline.load, 19 listings of .hoodie.
    assert counts["properties_reads"] == 1, counts
    assert counts["timeline_loads"] == 2, counts
    # The pre-hook ran SQL between the empty-build check and the write: the write loads the table again.
    assert (hooked["result"]["properties_reads"], hooked["result"]["timeline_loads"]) == (2, 3), hooked["result"]
