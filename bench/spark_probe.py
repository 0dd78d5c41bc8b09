"""What the benchmarks measure around a Spark write, with the standard library alone: it is imported both by the
benchmarks (the project's Python) and by hudi_java_writer.py (a Hudi release's Python, without this project).

- `jvm_pid()`: the JVM pyspark started for this process;
- `vm_rss_mb(pid)` and `PeakRss`: a process's resident memory, and its peak while a block runs (sampled every 20 ms);
- `job_group_tasks(sc, group)`: the Spark jobs and tasks run under a job group;
- `process_stats()` and `descends_from(...)`: every process's /proc stat fields, and whether one runs under another.
"""
from __future__ import annotations

import os
import subprocess
import threading

SAMPLE_SECONDS = 0.02


def jvm_pid() -> int | None:
    """The driver JVM's pid: the child of this process that runs java (pyspark starts it through spark-submit)."""
    try:
        out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(os.getpid())], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in out.splitlines():
        pid, comm = line.split(None, 1)
        if "java" in comm:
            return int(pid)
    return None


def status_mb(pid: int | str, field: str) -> float | None:
    """A memory field of /proc/<pid>/status ("self": this process), e.g. VmRSS or VmHWM, in MB; None once gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def process_stats() -> dict[int, list[str]]:
    """Every live process's /proc/<pid>/stat fields after its command name (field 1: the parent pid; 11-14: user and
    system CPU ticks, its own and its reaped children's)."""
    out: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    out[int(entry)] = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
    return out


def descends_from(pid: int, ancestor: int, stats: dict[int, list[str]], max_hops: int = 16) -> bool:
    """Whether `pid` runs under `ancestor` (or is it), by the parent pids in `stats` (`process_stats()`)."""
    hops = 0
    while pid and pid != ancestor and hops < max_hops:
        pid, hops = int(stats[pid][1]) if pid in stats else 0, hops + 1
    return pid == ancestor


def vm_rss_mb(pid: int | str) -> float:
    """VmRSS of `pid` in MB; 0 once it is gone."""
    return status_mb(pid, "VmRSS") or 0.0


class PeakRss:
    """Peak VmRSS of one pid while a block runs (no pid: nothing is sampled and the peak stays 0)."""

    def __init__(self, pid: int | None) -> None:
        self.pid, self.peak = pid, 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, vm_rss_mb(self.pid or 0))

    def __enter__(self) -> "PeakRss":
        if self.pid:
            self.peak = vm_rss_mb(self.pid)
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()


def job_group_tasks(sc, group: str) -> tuple[int, int]:
    """(jobs, tasks) Spark ran under job group `group` (its status tracker)."""
    tracker = sc.statusTracker()
    jobs = tracker.getJobIdsForGroup(group)
    tasks = 0
    for j in jobs:
        info = tracker.getJobInfo(j)
        for s in info.stageIds if info else []:
            stage = tracker.getStageInfo(s)
            tasks += stage.numTasks if stage else 0
    return len(jobs), tasks
