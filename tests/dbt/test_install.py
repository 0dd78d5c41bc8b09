"""A new user, from the README alone (issue 25, Proof): the steps of README's "Install into your own dbt project",
run as written, in a fresh folder of their own: a new venv, `pip install` of this checkout, JAVA_HOME, the three
files, `dbt run` twice (create, then upsert). hudi-rs then reads the table.

The README's blocks are taken from the README itself: its shell blocks run verbatim in one bash (only the
checkout's placeholder path replaced), and each file block is written under the name its first line gives.
Two things are prepared before the README's steps, so that the test runs offline in well under two minutes, and
neither installs the adapter: the new venv (made by the README's own first command, which is safe to repeat) gets a
`.pth` line naming the test venv's site-packages, so that `pip install` finds dbt-core, dbt-spark and pyspark
already satisfied instead of downloading them, and a `dbt` launcher in its bin, the console script pip would have
put there when it installed dbt-core into that venv. The adapter and the engine themselves are built from the
checkout into the new venv by the README's `pip install`, and the test asserts that dbt imports them from there.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from docs_blocks import ROOT, blocks
from oracle import rs_snapshot

from hudi_engine import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SECTION = "Install into your own dbt project"
CHECKOUT = "/path/to/dbt-hudi"
DBT_LAUNCHER = """#!{python}
import sys
from dbt.cli.main import cli
sys.exit(cli())
"""


def _steps() -> tuple[str, dict[str, str], list[str]]:
    """(the setup shell block, {file name: content}, the dbt commands), as the README's section has them."""
    section = [b for b in blocks(ROOT / "README.md") if b.section == SECTION]
    shells = [b.code for b in section if b.lang == "bash"]
    assert len(shells) == 2, f"README's install section should have a setup block and a run block: {shells}"
    files = {}
    for b in section:
        if b.lang in ("yaml", "sql"):
            name = re.match(r"(?:#|--) ([\w./]+)", b.code)
            assert name, f"{b.where}: a file block's first line names the file (e.g. '# profiles.yml')"
            files[name.group(1)] = b.code
    runs = [line.split(" #", 1)[0].strip() for line in shells[1].splitlines() if line.strip()]
    return shells[0].replace(CHECKOUT, str(ROOT)), files, runs


def _user_env() -> dict[str, str]:
    """This shell's environment minus what the test run set for itself: a user's shell has `python` on the PATH,
    Java (or not), and no dbt or Spark settings of ours."""
    drop = ("DBT_", "PYSPARK_", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # `python` is 3.11+
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    project = tmp_path_factory.mktemp("new-user") / "my_project"
    project.mkdir()
    setup, files, runs = _steps()
    for name, content in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(content)
    env = _user_env()
    subprocess.run(["python", "-m", "venv", ".venv"], cwd=project, env=env, check=True)
    venv_python = project / ".venv" / "bin" / "python"
    purelib = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_dependencies_from_the_test_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    launcher = project / ".venv" / "bin" / "dbt"
    launcher.write_text(DBT_LAUNCHER.format(python=venv_python))
    launcher.chmod(0o755)

    script = ["set -euo pipefail", setup, "echo step: installed $SECONDS s"]
    for i, command in enumerate(runs, 1):
        script += [command, f"cp target/run_results.json target/run_{i}.json", f"echo step: run {i} $SECONDS s"]
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=project, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"the README's steps failed:\n{proc.stdout[-8000:]}\n{proc.stderr[-5000:]}"
    print(*(line for line in proc.stdout.splitlines() if line.startswith("step: ")), sep="\n")
    return project, runs, proc.stdout


def test_the_adapter_comes_from_the_new_venv(installed):
    project, _, _ = installed
    out = subprocess.run([str(project / ".venv/bin/python"), "-c",
                          "import dbt.adapters.hudi, hudi_engine; print(dbt.adapters.hudi.__file__); "
                          "print(hudi_engine.__file__)"], cwd=project, env=_user_env(), capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        assert Path(line).is_relative_to(project / ".venv"), line


def test_two_runs_create_then_upsert(installed):
    project, runs, stdout = installed
    assert len(runs) == 2 and all(r.startswith("dbt run") for r in runs), runs
    assert stdout.count("Completed successfully") == 2, stdout[-3000:]
    first, second = (json.loads((project / "target" / f"run_{i}.json").read_text())["results"] for i in (1, 2))
    [created], [upserted] = first, second
    assert created["status"] == upserted["status"] == "success"
    assert (created["adapter_response"]["operation"], created["adapter_response"]["rows_inserted"]) == (
        "bulk_insert", 2)
    response = upserted["adapter_response"]
    assert (response["operation"], response["rows_inserted"], response["rows_updated"]) == ("upsert", 0, 1)


def test_hudi_rs_reads_the_upserted_table(installed):
    project, _, _ = installed
    path = project / "spark-warehouse" / "analytics.db" / "customers"  # where the README says it is
    rows = {r["customer_id"]: r for r in rs_snapshot(path).to_pylist()}
    assert {k: (r["name"], r["tier"]) for k, r in rows.items()} == {1: ("Ada", "gold"), 2: ("Grace", "gold")}
    assert len(HudiTable.load(str(path)).timeline.completed_commits()) == 2


def test_the_wheel_the_readme_builds(tmp_path):
    """README's other way in: `pip wheel` of the checkout makes the wheel file it names, holding the adapter, its
    macros and the native source's JVM source, and not dbt-core's own `dbt/__init__.py`."""
    readme = (ROOT / "README.md").read_text()
    build = re.search(r"`(pip wheel [^`]+)`", readme).group(1).replace(CHECKOUT, str(ROOT))
    wheel = re.search(r'`pip install "(dist/[^"\[]+)\[dbt\]"`', readme).group(1)
    subprocess.run([sys.executable, "-m", *build.split()], cwd=tmp_path, env=_user_env(), check=True,
                   capture_output=True, timeout=300)
    names = set(zipfile.ZipFile(tmp_path / wheel).namelist())
    assert {"dbt/adapters/hudi/__init__.py", "dbt/include/hudi/dbt_project.yml",
            "dbt/include/hudi/macros/materializations/hudi_incremental.sql", "hudi_engine/table.py",
            "hudi_engine/spark/jvm/HudiNative.scala"} <= names
    assert "dbt/__init__.py" not in names and "dbt/adapters/__init__.py" not in names
