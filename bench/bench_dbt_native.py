"""dbt gives nothing back with the native `hudi` source (issue 24): the adapter's default (the native source, dbt
renders catalog names) beside a profile that opts out (`spark.hudi_engine.native: "false"`: per-run views), in
the same run, alternating.

1. The small-model benchmark (`bench_dbt_small.py`, one dbt process per round and mode, `BENCH_DBT_RUNS` timed
   runs each, default 5): per-model times of the `hudi_incremental` upsert, the dbt-spark `table` model and a
   `table` model reading the Hudi model through `ref()`, and the wall time of a whole `dbt run`; medians over
   every timed run of a mode.
2. The example project (`integration_project/`, copied): `dbt build` of day 1 and of day 2 (one dbt process
   each, as `integration_project/run.sh` runs them), wall time including the process start; medians over rounds.

Rounds (BENCH_REPEATS, default 3) alternate the order (native first, then views first, ...), so drift in the
machine's load falls on both. Ratios are native / opt-out: below 1 the default is faster.

    bench/run.sh dbt-native
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import DATA_DIR, Case, bench_main, fresh, interleaved

ROUNDS = int(os.environ.get("BENCH_REPEATS", "3"))
MODES = {"native": "", "views": "false"}  # the value of spark.hudi_engine.native ("": the profile leaves it out)
BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent / "integration_project"
VENV_BIN = Path(sys.executable).parent


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    out.update({"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_VERSION_CHECK": "false"})
    return out


def small_models(mode: str) -> dict:
    name = f"dbt_native_small_{mode}"
    e = {**env(), "BENCH_DBT_NATIVE": MODES[mode], "BENCH_DBT_RESULTS": name,
         "BENCH_DBT_RUNS": os.environ.get("BENCH_DBT_RUNS", "5")}
    done = subprocess.run([sys.executable, str(BENCH / "bench_dbt_small.py")], env=e, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_dbt_small.py ({mode}) failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return json.loads((DATA_DIR / "results" / f"{name}.json").read_text())


def example_project(mode: str) -> list[float]:
    """Seconds of `dbt build` for day 1 and day 2 of a fresh copy of the example project."""
    root = fresh(DATA_DIR / "dbt_native" / mode)
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(
        "spark-warehouse", "metastore_db", "derby.log", "target", "logs", "dbt_packages"))
    if MODES[mode]:
        profile = root / "profiles.yml"
        profile.write_text(profile.read_text().rstrip("\n")
                           + f'\n        spark.hudi_engine.native: "{MODES[mode]}"\n')
    seconds = []
    for day in (1, 2):
        args = [str(VENV_BIN / "dbt"), "build", "--vars", f"{{day: {day}}}", "--event-time-start", "2024-03-01",
                "--event-time-end", f"2024-03-0{day + 1}", "--project-dir", str(root), "--profiles-dir", str(root)]
        t0 = time.monotonic()
        done = subprocess.run(args, cwd=root, env=env(), capture_output=True, text=True)
        seconds.append(time.monotonic() - t0)
        if done.returncode != 0 or "ERROR=0" not in done.stdout:
            raise SystemExit(f"example project ({mode}) day {day} failed:\n{done.stdout[-6000:]}")
    return seconds


def run() -> dict:
    small: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
    builds: dict[str, list[list[float]]] = {m: [] for m in MODES}

    def both(mode: str) -> Case:
        """The small models (their medians as the run's details), then the example project's two builds."""
        def go(_: str) -> dict:
            result = small_models(mode)
            figures = {**result["times"], "dbt run": result["wall_s"]}
            for key, values in figures.items():
                small[mode].setdefault(key, []).extend(values)
            day1, day2 = example_project(mode)
            builds[mode].append([day1, day2])
            return {**{k: statistics.median(v) for k, v in figures.items()}, "build day 1": day1, "build day 2": day2}
        return Case(mode, go)

    interleaved([both(mode) for mode in MODES], ROUNDS, warmup=False, alternate=True)
    rows = {f"small: {key}": (statistics.median(small["native"][key]), statistics.median(small["views"][key]))
            for key in small["native"]}
    for day in (0, 1):
        rows[f"example project: dbt build day {day + 1}"] = (statistics.median(b[day] for b in builds["native"]),
                                                            statistics.median(b[day] for b in builds["views"]))
    return {"rounds": ROUNDS, "small": small, "builds": builds,
            "medians": {k: {"native_s": n, "views_s": v, "ratio": n / v} for k, (n, v) in rows.items()}}


def report(out: dict) -> str:
    return "\n".join(["| what | native (catalog names) | opt-out (per-run views) | native / opt-out |",
                      "|---|---|---|---|",
                      *(f"| {what} | {m['native_s']:.2f} s | {m['views_s']:.2f} s | {m['ratio']:.2f}x |"
                        for what, m in out["medians"].items())])


def main() -> None:
    bench_main("dbt_native", run, report)


if __name__ == "__main__":
    main()
