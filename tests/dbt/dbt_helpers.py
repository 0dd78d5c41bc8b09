"""Helpers for the dbt tests (imported by name; pytest's own `conftest` modules clash between folders): run dbt
(and SQL on its SparkSession) in a separate process.

dbt's `method: session` starts a SparkSession with Hive support in the process that runs it. The pytest process
keeps none (tests/spark has its own session), so every dbt run goes through `dbt_driver.py` in a subprocess.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DRIVER = Path(__file__).resolve().parent / "dbt_driver.py"


def dbt_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    env.update({"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_VERSION_CHECK": "false",
                "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable})
    return env


def run_driver(project_dir: Path, steps: list[dict], workdir: Path, timeout: float = 900) -> list[dict]:
    """Run `steps` in one new process; returns one result dict per step (see dbt_driver.py)."""
    workdir.mkdir(parents=True, exist_ok=True)
    plan = workdir / "plan.json"
    out = workdir / "out.json"
    plan.write_text(json.dumps({"project_dir": str(project_dir), "steps": steps}))
    proc = subprocess.run([sys.executable, str(DRIVER), str(plan), str(out)], cwd=workdir, env=dbt_env(),
                          capture_output=True, text=True, timeout=timeout)
    results = json.loads(out.read_text()) if out.exists() else []
    crashed = [r for r in results if "crash" in r]
    if proc.returncode != 0 or len(results) != len(steps) or crashed:
        raise AssertionError(f"dbt driver failed (exit {proc.returncode}):\n{crashed}\n"
                             f"--- stdout\n{proc.stdout[-8000:]}\n--- stderr\n{proc.stderr[-8000:]}")
    (workdir / "stdout.txt").write_text(proc.stdout)
    (workdir / "stderr.txt").write_text(proc.stderr)
    return results


def node(result: dict, name: str) -> dict:
    """The result of node `name` in a dbt step's results."""
    for r in result["results"]:
        if r["name"] == name:
            return r
    raise AssertionError(f"no result for {name} in {[r['name'] for r in result['results']]}")


def write_small_project(root: Path, name: str, schema: str, models: dict[str, str], *, threads: int = 1) -> None:
    """A dbt project of `models` (file stem -> SQL) on a local[2] session, `vars: {day: 1}`."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: {name}\n"
                                          "vars: {day: 1}\n")
    (root / "profiles.yml").write_text(f"""
{name}:
  target: dev
  outputs:
    dev:
      type: hudi
      schema: {schema}
      threads: {threads}
      server_side_parameters:
        spark.master: "local[2]"
        spark.sql.shuffle.partitions: "2"
""")
    for stem, sql in models.items():
        (root / "models" / f"{stem}.sql").write_text(sql)
