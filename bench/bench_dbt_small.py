"""Small models stay quick (issue 11): the per-model time of a tiny `hudi_incremental` upsert beside a dbt-spark
`table` model of the same SQL, in the same dbt runs.

A dbt project with one 10-row seed and two models selecting the same columns from it: `tiny_hudi`
(materialized='hudi_incremental', unique_key id, precombine ts: every run after the first upserts the 10 rows,
all updates) and `tiny_table` (materialized='table': dbt-spark drops and creates a parquet table). One process,
one SparkSession, `threads: 1` so the two models never overlap: the first `dbt run` creates both (untimed
warm-up), then `BENCH_DBT_RUNS` (default 7) runs are timed. Per-model time is dbt's own `execution_time` of the
node in run_results (compile, materialization, catalog). The figure is the median over the runs and the ratio is
hudi / table of those medians; every run's times are listed. The tiny model is written on the driver
(`hudi_engine.spark.small_write`); BENCH_DBT_DRIVER_MAX_BYTES=0 writes it through Spark's tasks instead. A third
model, `tiny_reader` (materialized='table'), reads `tiny_hudi` through `ref()`: the catalog name on the native
`hudi` source (the adapter's default), or with BENCH_DBT_NATIVE=false (the profile opts out) a per-run view.
`bench_dbt_native.py` runs this script with and without the opt-out, alternating.

    bench/run.sh dbt
"""
from __future__ import annotations

import os
import statistics
import sys
import time

from common import DATA_DIR, fresh, save_results

RUNS = int(os.environ.get("BENCH_DBT_RUNS", "7"))
# Set to 0 to write the tiny model through Spark's tasks instead of on the driver (see hudi_engine.spark.small_write).
DRIVER_MAX_BYTES = os.environ.get("BENCH_DBT_DRIVER_MAX_BYTES", "")
# "false": the profile opts out of the native hudi source (`spark.hudi_engine.native`); unset: the adapter's default.
NATIVE = os.environ.get("BENCH_DBT_NATIVE", "")
RESULTS = os.environ.get("BENCH_DBT_RESULTS", "dbt_small")  # the results file's name (bench/data/results/*.json)
GOAL = 1.5
SQL = "select id, name, score, ts from {{ ref('tiny') }}"


def write_project(root) -> None:
    (root / "models").mkdir(parents=True)
    (root / "seeds").mkdir()
    (root / "dbt_project.yml").write_text(
        "name: small\nversion: '1.0'\nconfig-version: 2\nprofile: small\n"
        "seeds:\n  small:\n    tiny:\n      +column_types: {id: bigint, name: string, score: int, ts: timestamp}\n")
    master = os.environ.get("BENCH_MASTER", "local[*]")
    (root / "profiles.yml").write_text(
        f"small:\n  target: dev\n  outputs:\n    dev:\n      type: hudi\n      schema: small\n      threads: 1\n"
        f"      server_side_parameters:\n        spark.master: '{master}'\n"
        f"        spark.driver.memory: '{os.environ.get('BENCH_DRIVER_MEMORY', '4g')}'\n"
        + (f"        spark.hudi.write.driverMaxBytes: '{DRIVER_MAX_BYTES}'\n" if DRIVER_MAX_BYTES else "")
        + (f"        spark.hudi_engine.native: '{NATIVE}'\n" if NATIVE else ""))
    rows = "\n".join(f"{i},name{i},{i * 10},2024-01-01 00:00:0{i % 10}" for i in range(1, 11))
    (root / "seeds" / "tiny.csv").write_text(f"id,name,score,ts\n{rows}\n")
    (root / "models" / "tiny_hudi.sql").write_text(
        "{{ config(materialized='hudi_incremental', unique_key='id', precombine_field='ts') }}\n" + SQL + "\n")
    (root / "models" / "tiny_table.sql").write_text("{{ config(materialized='table') }}\n" + SQL + "\n")
    (root / "models" / "tiny_reader.sql").write_text(
        "{{ config(materialized='table') }}\nselect id, name, score from {{ ref('tiny_hudi') }}\n")


def run(runner, root, args: list[str]):
    res = runner.invoke([*args, "--project-dir", str(root), "--profiles-dir", str(root)])
    if not res.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {res.exception or res.result}")
    return res.result


def main() -> int:
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    from dbt.cli.main import dbtRunner

    root = fresh(DATA_DIR / "dbt_small")
    write_project(root)
    runner = dbtRunner()
    load0 = os.getloadavg()
    run(runner, root, ["seed"])
    run(runner, root, ["run"])  # warm-up: creates both tables
    times: dict[str, list[float]] = {"tiny_hudi": [], "tiny_table": [], "tiny_reader": []}
    wall: list[float] = []
    responses = []
    for i in range(RUNS):
        t0 = time.monotonic()
        result = run(runner, root, ["run"])
        by_name = {r.node.name: r for r in result.results}
        for name in times:
            times[name].append(by_name[name].execution_time)
        response = by_name["tiny_hudi"].adapter_response
        assert response["operation"] == "upsert" and response["rows_updated"] == 10, response
        responses.append(response["instant_time"])
        wall.append(time.monotonic() - t0)
        print(f"run {i + 1}/{RUNS}: hudi {times['tiny_hudi'][-1]:.2f} s, table {times['tiny_table'][-1]:.2f} s, "
              f"reader {times['tiny_reader'][-1]:.2f} s (dbt run {wall[-1]:.1f} s)", flush=True)
    load1 = os.getloadavg()
    hudi, table = statistics.median(times["tiny_hudi"]), statistics.median(times["tiny_table"])
    ratio = hudi / table
    print(f"\nload average {load0[0]:.2f} -> {load1[0]:.2f}\n")
    print("| model (10 rows, same SQL, same dbt runs) | median per-model time | runs |")
    print("|---|---|---|")
    print(f"| `hudi_incremental` upsert (10 updates) | {hudi:.2f} s | "
          f"{', '.join(f'{t:.2f}' for t in times['tiny_hudi'])} |")
    print(f"| dbt-spark `table` (parquet, drop + create) | {table:.2f} s | "
          f"{', '.join(f'{t:.2f}' for t in times['tiny_table'])} |")
    print(f"| `table` reading `ref('tiny_hudi')` | {statistics.median(times['tiny_reader']):.2f} s | "
          f"{', '.join(f'{t:.2f}' for t in times['tiny_reader'])} |")
    print(f"\nratio hudi / table: **{ratio:.2f}x** (goal <= {GOAL}x: {'met' if ratio <= GOAL else 'not met'})")
    save_results(RESULTS, {"runs": RUNS, "driver_max_bytes": DRIVER_MAX_BYTES or "default",
                           "native": NATIVE or "default", "times": times, "wall_s": wall, "median_hudi_s": hudi,
                           "median_table_s": table, "median_reader_s": statistics.median(times["tiny_reader"]),
                           "ratio": ratio, "instants": responses, "load": [load0, load1]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
