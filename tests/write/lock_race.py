"""Threads racing for one table's lock, for the lock tests: who got it."""
from __future__ import annotations

import threading
import time
from typing import Any

from hudi_engine.config import LockConfig
from hudi_engine.errors import WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write.lock import acquire


def race_winners(uri: str, config: LockConfig, threads: int = 4, **acquire_args: Any) -> list[str]:
    """`threads` threads start together and each try the lock once without waiting; the owners of those that got
    it (each holds it 0.3 s, so a second taker could not slip in after a release)."""
    winners: list[str] = []
    barrier = threading.Barrier(threads)

    def take() -> None:
        storage, base = Storage.for_uri(uri)
        barrier.wait()
        try:
            lock = acquire(TableLocation.at(storage, base), config, **acquire_args)
        except WriteError:
            return
        winners.append(lock.owner)
        time.sleep(0.3)
        lock.release()

    started = [threading.Thread(target=take) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join(60)
    return winners
