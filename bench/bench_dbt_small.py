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

from common import DATA_DIR, Case, bench_main, fresh, interleaved

RUNS = int(os.environ.get("BENCH_DBT_RUNS", "7"))
# Set to 0 to write the tiny model through Spark's tasks instead of on the driver (see hudi_engine.spark.small_write).
DRIVER_MAX_BYTES = os.environ.get("BENCH_DBT_DRIVER_MAX_BYTES", "")
# "false": the profile opts out of the native hudi source (`spark.hudi_engine.native`); unset: the adapter's default.
NATIVE = os.environ.get("BENCH_DBT_NATIVE", "")
RESULTS = os.environ.get("BENCH_DBT_RESULTS", "dbt_small")  # the results file's name (bench/data/results/*.json)
GOAL = 1.5
SQL = "select id, name, score, ts from {{ ref('tiny') }}"
MODELS = ("tiny_hudi", "tiny_table", "tiny_reader")


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


def run_all() -> dict:
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    from dbt.cli.main import dbtRunner

    root = fresh(DATA_DIR / "dbt_small")
    write_project(root)
    runner = dbtRunner()
    run(runner, root, ["seed"])

    def dbt_run(tag: str) -> dict:
        """One `dbt run` (the warm-up creates both tables): dbt's per-model times and the upsert's instant."""
        by_name = {r.node.name: r for r in run(runner, root, ["run"]).results}
        if tag.endswith("-warm"):
            return {}
        response = by_name["tiny_hudi"].adapter_response
        assert response["operation"] == "upsert" and response["rows_updated"] == 10, response
        return {**{name: by_name[name].execution_time for name in MODELS}, "instant": response["instant_time"]}

    m = interleaved([Case("dbt run", dbt_run)], RUNS)["dbt run"]
    times = {name: [e[name] for e in m.extra] for name in MODELS}
    hudi, table = statistics.median(times["tiny_hudi"]), statistics.median(times["tiny_table"])
    return {"runs": RUNS, "driver_max_bytes": DRIVER_MAX_BYTES or "default", "native": NATIVE or "default",
            "times": times, "wall_s": m.times, "median_hudi_s": hudi, "median_table_s": table,
            "median_reader_s": statistics.median(times["tiny_reader"]), "ratio": hudi / table,
            "instants": [e["instant"] for e in m.extra]}


def report(out: dict) -> str:
    times, ratio = out["times"], out["ratio"]
    return "\n".join([
        "| model (10 rows, same SQL, same dbt runs) | median per-model time | runs |", "|---|---|---|",
        f"| `hudi_incremental` upsert (10 updates) | {out['median_hudi_s']:.2f} s | "
        f"{', '.join(f'{t:.2f}' for t in times['tiny_hudi'])} |",
        f"| dbt-spark `table` (parquet, drop + create) | {out['median_table_s']:.2f} s | "
        f"{', '.join(f'{t:.2f}' for t in times['tiny_table'])} |",
        f"| `table` reading `ref('tiny_hudi')` | {out['median_reader_s']:.2f} s | "
        f"{', '.join(f'{t:.2f}' for t in times['tiny_reader'])} |",
        f"\nratio hudi / table: **{ratio:.2f}x** (goal <= {GOAL}x: {'met' if ratio <= GOAL else 'not met'})"])


def main() -> None:
    bench_main(RESULTS, run_all, report)


if __name__ == "__main__":
    main()
