"""Run a list of dbt commands and SQL queries in ONE process (one JVM), and write what each did as JSON.

    python dbt_driver.py plan.json out.json

plan.json: {"project_dir": "...", "steps": [{"dbt": ["run", "--vars", "{day: 1}"]}, {"sql": "select ..."}]}
A `dbt` step records success, the exception and every node result (status, message, adapter_response,
failures; the rows of `dbt show`). A `sql` step runs on the adapter's SparkSession (the one dbt used) and records
the rows; a `python` step runs code with `spark` bound to that session (its `result` variable is recorded); an
`info` step records the session's master, executors, warehouse and what the executors' check found; an `env` step
sets environment variables for the steps after it. Tests run this as a subprocess: the pytest process keeps no JVM
of dbt's, and a second driver process is a "later dbt run in a new process".
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import sys
import traceback


def _plain(value):
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def run_dbt(args: list[str], project_dir: str) -> dict:
    from dbt.cli.main import dbtRunner

    full = [*args, "--project-dir", project_dir, "--profiles-dir", project_dir]
    res = dbtRunner().invoke(full)
    out = {"args": args, "success": res.success, "exception": None if res.exception is None else str(res.exception),
           "results": []}
    for r in getattr(res.result, "results", None) or []:
        node = getattr(r, "node", None)
        entry = {"unique_id": getattr(node, "unique_id", None), "name": getattr(node, "name", None),
                 "status": str(r.status), "message": r.message, "adapter_response": r.adapter_response,
                 "failures": r.failures}
        table = getattr(r, "agate_table", None)
        if table is not None:
            entry["rows"] = [{k: _plain(v) for k, v in zip(table.column_names, row)} for row in table.rows]
        out["results"].append(entry)
    return out


def _adapter_session():
    """The session the adapter's dbt runs started in this process."""
    from dbt.adapters.hudi.connections import HudiConnectionManager

    return HudiConnectionManager.environment.running_session()


def run_sql(sql: str) -> dict:
    spark = _adapter_session()
    try:
        rows = [{k: _plain(v) for k, v in r.asDict().items()} for r in spark.sql(sql).collect()]
        return {"sql": sql, "rows": rows, "error": None}
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"sql": sql, "rows": None, "error": f"{type(e).__name__}: {e}"}


def run_python(code: str) -> dict:
    """Run `code` with `spark` (the adapter's session) in scope: e.g. a commit through the engine's Python API."""
    scope = {"spark": _adapter_session()}
    try:
        exec(code, scope)  # the test plans are written by the tests
        return {"python": code, "result": scope.get("result"), "error": None}
    except Exception as e:  # noqa: BLE001 - reported to the test
        return {"python": code, "result": None, "error": f"{type(e).__name__}: {e}"}


def session_info() -> dict:
    from hudi_engine.spark.executor_env import checked_env

    spark = _adapter_session()
    sc = spark.sparkContext
    # Block managers: the driver's plus one per executor.
    executors = sc._jsc.sc().getExecutorMemoryStatus().size() - 1
    env = checked_env(spark)  # what the executors' check found
    return {"info": {"master": sc.master, "executors": executors,
                     "warehouse": spark.conf.get("spark.sql.warehouse.dir"),
                     "engine_shipped": None if env is None else env.shipped,
                     "executor_pythons": [] if env is None else sorted({r.executable for r in env.reports}),
                     "executor_engines": [] if env is None else sorted({str(r.engine) for r in env.reports})}}


def main(plan_path: str, out_path: str) -> int:
    with open(plan_path) as f:
        plan = json.load(f)
    project_dir = plan["project_dir"]  # the working directory stays elsewhere: dbt must not depend on it
    results = []
    for step in plan["steps"]:
        try:
            if "dbt" in step:
                results.append(run_dbt(step["dbt"], project_dir))
            elif "sql" in step:
                results.append(run_sql(step["sql"]))
            elif "env" in step:  # environment of the later steps (env_var() in models, read again by `dbt retry`)
                os.environ.update({k: str(v) for k, v in step["env"].items()})
                results.append({"env": step["env"]})
            elif "python" in step:
                results.append(run_python(step["python"]))
            else:
                results.append(session_info())
        except Exception:  # noqa: BLE001
            results.append({"step": step, "crash": traceback.format_exc()})
        with open(out_path, "w") as f:  # written after every step: a crash still leaves the earlier ones
            json.dump(results, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
