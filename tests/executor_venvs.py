"""Virtual environments for executors that never had this project installed, built once per test session.

`full` has what the engine needs on an executor (pyarrow, fastavro, numpy, and pandas, which PySpark's Arrow code
imports) but not this project; `no_fastavro` lacks fastavro. Neither installs pyspark: executors import PySpark
from the Spark distribution (`$SPARK_HOME/python/lib/pyspark.zip`, which Spark puts first on its Python workers'
path), as they do on YARN or Kubernetes. The packages are pinned to the versions of this venv so that pip takes them
from its cache; `full` shares `no_fastavro`'s packages through a `.pth` file and adds fastavro. `archive` is `full`
packed as a `.tar.gz` for `spark.archives` (it runs on this machine only: the venv's interpreter and the `.pth` are
absolute paths here; venv-pack or conda-pack make one for a real cluster).
"""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

SHARED = ["pyarrow", "numpy", "pandas", "python-dateutil", "six", "pytz", "tzdata"]


@dataclass(frozen=True)
class ExecutorPythons:
    full: str  # the Python of a venv with the engine's dependencies
    no_fastavro: str  # the Python of a venv without fastavro
    archive: str  # the venv of `full` as a .tar.gz, for spark.archives (its Python: bin/python inside)


def _pins(names: list[str]) -> list[str]:
    return [f"{n}=={importlib.metadata.version(n)}" for n in names]


def _venv(path: Path, packages: list[str]) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--disable-pip-version-check", *packages], check=True, capture_output=True, text=True)
    return python


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def build_executor_pythons(root: Path) -> ExecutorPythons:
    no_fastavro = _venv(root / "executors-no-fastavro", _pins(SHARED))
    full = _venv(root / "executors", _pins(["fastavro"]))
    (_site_packages(full) / "shared.pth").write_text(f"{_site_packages(no_fastavro)}\n")
    for python, has_fastavro in ((full, True), (no_fastavro, False)):
        check = subprocess.run([str(python), "-c", "import pyarrow, numpy, pandas; import importlib.util as u; "
                                "print(u.find_spec('fastavro') is not None, u.find_spec('hudi_engine') is not None)"],
                               capture_output=True, text=True, cwd=root)
        assert check.stdout.split() == [str(has_fastavro), "False"], (python, check.stdout, check.stderr)
    archive = root / "executors.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root / "executors", arcname=".")
    return ExecutorPythons(str(full), str(no_fastavro), str(archive))
