"""Which tests tests/run.sh runs in the session beside the rest (tests/conftest.py marks them `beside`).

The tests that mostly drive processes of their own (real Hudi's JVMs, dbt's driver processes, the linters, a Spark
on a JDK from PyPI) run in one session, the rest in the other. test_reads (two dbt projects, about 4 minutes) runs
with the rest, and so does the dbt project on the standalone cluster (the rest's cluster and executor venvs, made
once for its cluster tests, serve it too); the linters and the no-Java start (2 minutes) beside: that evens the two
sessions' lengths (measured: docs/oracle.md). tests/run.sh names the same paths; tests/test_run_script.py checks it.
"""
from __future__ import annotations

BESIDE = ("java_hudi/", "dbt/", "test_lint.py", "test_no_system_java.py")
WITH_THE_REST = ("dbt/test_reads.py", "dbt/test_standalone_cluster.py")
# Tests that mostly wait (racing writer processes that sleep inside their writes, killed writers whose heartbeats must
# expire) run first in their session: last, they ran alone after the other session had ended, the machine a third
# busy for two minutes (/proc/stat); first, the other session's JVMs take the core they leave. Tests that assert a
# time bound (test_paused_writer, the lock expiries) stay where the machine is quieter.
FIRST = ("write/test_writer_race.py", "write/test_writer_kill_s3.py")
