"""One writer at a time: the table lock waits, names its holder, and is taken over from a dead writer."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from hudi_engine.errors import WriteError
from hudi_engine.storage import Storage
from hudi_engine.write.lock import table_lock


def _lock_path(tmp_path):
    return tmp_path / ".hoodie" / "lock"


def _hold(tmp_path, owner: str, expires_in_ms: int) -> None:
    _lock_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    _lock_path(tmp_path).write_text(json.dumps({"owner": owner, "acquired_ms": now, "expires_ms": now + expires_in_ms}))


def test_lock_is_taken_and_released(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    with table_lock(storage, base, wait_timeout_ms=1000, expiry_ms=60000) as owner:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == owner
    assert not _lock_path(tmp_path).exists()


def test_second_writer_waits_then_fails_naming_the_holder(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    holder = f"otherhost:{os.getpid()}:abcd"
    _hold(tmp_path, holder, 60000)
    t0 = time.monotonic()
    with pytest.raises(WriteError, match="otherhost") as e:
        with table_lock(storage, base, wait_timeout_ms=600, expiry_ms=60000, poll_ms=50):
            pass
    assert time.monotonic() - t0 >= 0.5
    assert "lock" in str(e.value) and str(tmp_path) in str(e.value)
    assert json.loads(_lock_path(tmp_path).read_text())["owner"] == holder  # not stolen


def test_waiting_writer_gets_the_lock_when_released(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _hold(tmp_path, "otherhost:1:x", 60000)
    child = subprocess.Popen([sys.executable, "-c", f"import time,os; time.sleep(0.5); os.remove({str(_lock_path(tmp_path))!r})"])
    with table_lock(storage, base, wait_timeout_ms=10000, expiry_ms=60000, poll_ms=50) as owner:
        assert owner.startswith(socket.gethostname())
    child.wait()


def test_expired_lock_is_taken_over(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _hold(tmp_path, "otherhost:1:x", -1)
    with table_lock(storage, base, wait_timeout_ms=100, expiry_ms=60000) as owner:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == owner


def test_lock_of_a_dead_process_on_this_host_is_taken_over(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _hold(tmp_path, f"{socket.gethostname()}:{dead.pid}:x", 600000)
    with table_lock(storage, base, wait_timeout_ms=100, expiry_ms=60000) as owner:
        assert json.loads(_lock_path(tmp_path).read_text())["owner"] == owner
