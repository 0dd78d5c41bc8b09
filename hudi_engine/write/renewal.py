"""A background renewal: something a writer must keep fresh while it works (its lock, its instant's heartbeat).

A daemon thread calls `renew()` every period. A renewal that comes later than `tolerance_ms` after the last good one
is never made: from then on others may consider the writer dead (its lock expired, its heartbeat too old), so the
writer must consider itself so too. `lost` then says why, and `check()` raises before a commit point. A renewal
that `renew()` refuses (the file changed hands) is lost the same way. Errors (a store that did not answer) are retried
on the next tick until the tolerance runs out.

`check()` also measures the time since the last good renewal itself, so a thread that never ran (a process paused,
or, in tests, a frozen `tick`) is caught too.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hudi_engine.errors import InstantLostError


class Renewal:
    def __init__(self, what: str, period_ms: int, tolerance_ms: int, renew: Callable[[], bool]) -> None:
        self.what = what
        self.period_ms = max(1, period_ms)
        self.tolerance_ms = tolerance_ms  # 0: never expires
        self._renew = renew
        self.last_ok = time.monotonic()
        self.renewals = 0
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hudi-renew {what}", daemon=True)

    def start(self) -> Renewal:
        self.last_ok = time.monotonic()
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period_ms / 1000):
            self.tick()
            if self.lost is not None:
                return

    def since_last_ok_ms(self) -> float:
        return (time.monotonic() - self.last_ok) * 1000

    def _late(self) -> bool:
        return bool(self.tolerance_ms) and self.since_last_ok_ms() > self.tolerance_ms

    def tick(self) -> None:
        """One renewal (the thread's work; a test freezes it to stand for a paused process)."""
        if self.lost is not None or self._stop.is_set():
            return
        if self.expired():
            return
        started = time.monotonic()
        try:
            ok = self._renew()
        except Exception as e:  # noqa: BLE001 - a store that did not answer: retried until the tolerance runs out
            if self._late():
                self.lost = f"{self.what} could not be renewed ({type(e).__name__}: {e})"
            return
        if not ok:
            self.lost = f"{self.what} was taken over or removed by another writer"
            return
        self.last_ok = started
        self.renewals += 1

    def expired(self) -> bool:
        """Whether the renewal is lost, counting a last good renewal older than the tolerance (a thread that did
        not run) as lost too."""
        if self.lost is None and self._late():
            self.lost = (f"{self.what} was not renewed for {self.since_last_ok_ms():.0f} ms, more than its "
                         f"{self.tolerance_ms} ms")
        return self.lost is not None

    def why_lost(self) -> str | None:
        """Why the renewal is lost (see `expired`), None while it holds."""
        return self.lost if self.expired() else None

    def check(self, doing: str, *, margin: float = 1.0) -> None:
        """Raise InstantLostError when the renewal is lost, or when the last good one is older than `margin` times
        the tolerance (a commit wants some validity left)."""
        if self.expired():
            raise InstantLostError(f"{self.lost}, so this writer is not {doing}")
        if self.tolerance_ms and self.since_last_ok_ms() > self.tolerance_ms * margin:
            raise InstantLostError(
                f"{self.what} was last renewed {self.since_last_ok_ms():.0f} ms ago, too close to its "
                f"{self.tolerance_ms} ms expiry for {doing}; this process was paused or the store is slow")

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=max(5.0, self.period_ms / 1000 * 2))
