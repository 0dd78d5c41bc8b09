"""tests/run.sh runs the tests marked `beside` (tests/suite_split.py's BESIDE) in a session of their own, over the paths
it names: a marked test outside them would run in neither session, silently."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from suite_split import BESIDE

TESTS = Path(__file__).resolve().parent


def test_the_beside_session_names_every_path_marked_beside() -> None:
    script = (TESTS / "run.sh").read_text()
    (command,) = re.findall(r"pytest [^;]*-m beside ([^;}]*)", script)
    paths = [p.removeprefix("tests/") for p in shlex.split(command)]
    for marked in BESIDE:
        assert any(marked == p or marked.startswith(p.rstrip("/") + "/") for p in paths), \
            f"tests/run.sh's beside session does not run tests/{marked}: add it there"
