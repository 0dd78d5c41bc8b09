"""Which tests tests/run.sh runs in the session beside the rest (tests/conftest.py marks them `beside`).

The tests that mostly drive processes of their own (real Hudi's JVMs, dbt's driver processes) run in one session,
the rest in the other. Some of tests/dbt runs with the rest, to even the two sessions' lengths (measured:
docs/oracle.md): test_reads (two dbt projects, about 4 minutes), the dbt project on the standalone cluster (the
rest's cluster and executor venvs, made once for its cluster tests, serve it too) and the new user's install.
tests/run.sh names the same paths; tests/test_run_script.py checks it.
"""
from __future__ import annotations

BESIDE = ("java_hudi/", "dbt/")
WITH_THE_REST = ("dbt/test_reads.py", "dbt/test_standalone_cluster.py", "dbt/test_install.py")
# Tests that mostly wait (racing writer processes that sleep inside their writes, killed writers whose heartbeats must
# expire) run first in their session: last, they ran alone after the other session had ended, the machine a third
# busy for two minutes (/proc/stat); first, the other session's JVMs take the core they leave. Tests that assert a
# time bound (test_paused_writer, the lock expiries) stay where the machine is quieter.
FIRST = ("write/test_writer_race.py", "write/test_writer_kill_s3.py")
