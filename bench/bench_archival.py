"""Issue 13: the timeline over 1,000 small commits, with archival (Hudi's defaults: keep 20-30 commits active) and
without (`hoodie.archive.automatic=false`): per-write time and the number of files in `.hoodie/`.

Two COW tables of 400 keys in 4 partitions; each commit updates 20 of the keys (rotating, so the data stays the same
size and only the timeline grows). The commits go to the two tables in turn (interleaved, so the machine's load hits
both alike), through the engine's own write pieces in this process (`tests/write/local_write.py`: the driver and
task code Spark runs, without a JVM, so the figure is the write path and the timeline, not Spark's start-up), with
the table services a Spark write runs after its commit (cleaning, `KEEP_LATEST_COMMITS` 10; archival). A write is
timed from its options to the end of its table services. Figures: medians per window of 100 commits.

    python bench/bench_archival.py [--commits 1000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH.parent / "tests" / "write"), str(BENCH.parent / "tests"), str(BENCH)]

from common import DATA_DIR, bench_main, fresh  # noqa: E402
from local_write import write  # noqa: E402

OPTIONS = {"hoodie.table.name": "timeline", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts"}
KEYS, PER_COMMIT, WINDOW = 400, 20, 100


def _rows(ids: list[int], i: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{x % 4}" for x in ids],
                     "ts": pa.array([i] * len(ids), pa.int64()), "v": pa.array([float(i)] * len(ids))})


def _batch(i: int) -> pa.Table:
    start = (i * PER_COMMIT) % KEYS
    return _rows([(start + k) % KEYS for k in range(PER_COMMIT)], i + 1)


class Run:
    def __init__(self, archival: bool) -> None:
        self.archival = archival
        self.name = "archival" if archival else "no archival"
        self.path = fresh(DATA_DIR / "tables" / f"timeline-{'archival' if archival else 'no-archival'}")
        self.options = {**OPTIONS, "hoodie.archive.automatic": str(archival).lower()}
        write(self.path, _rows(list(range(KEYS)), 0), {**self.options, "hoodie.datasource.write.operation": "bulk_insert"})
        self.times: list[float] = []
        self.files: list[int] = []

    def commit(self, i: int) -> None:
        t0 = time.perf_counter()
        write(self.path, _batch(i), self.options, table_services=True)
        self.times.append(time.perf_counter() - t0)
        self.files.append(sum(1 for p in (self.path / ".hoodie").iterdir() if p.is_file()))

    def result(self, loads: list[float]) -> dict:
        n = len(self.times)
        archived = sorted(p.name for p in (self.path / ".hoodie" / "archived").iterdir())
        windows = [{"commits": f"{w + 1}-{w + WINDOW}",
                    "median_ms": round(statistics.median(self.times[w:w + WINDOW]) * 1000, 1),
                    "hoodie_files_max": max(self.files[w:w + WINDOW]), "load": loads[w // WINDOW]}
                   for w in range(0, n - n % WINDOW, WINDOW)]
        return {"archival": self.archival, "commits": n, "windows": windows, "archive_files": len(archived),
                "hoodie_files_end": self.files[-1], "times_ms": [round(t * 1000, 2) for t in self.times],
                "hoodie_files": self.files}


def run(commits: int) -> list[dict]:
    runs = [Run(True), Run(False)]
    loads = []
    for i in range(commits):
        for r in runs:
            r.commit(i)
        if (i + 1) % WINDOW == 0:
            loads.append(round(os.getloadavg()[0], 1))
            print(f"  {i + 1} commits (load {loads[-1]}): " + "; ".join(
                f"{r.name} {statistics.median(r.times[-WINDOW:]) * 1000:.0f} ms/write, .hoodie {r.files[-1]} files"
                for r in runs), flush=True)
    return [r.result(loads) for r in runs]


def report(out: dict) -> str:
    runs = out["runs"]
    lines = ["| commits | with archival: median ms/write | `.hoodie` files (max) | without: median ms/write | "
             "`.hoodie` files (max) | load (1 min) |", "|---|---|---|---|---|---|"]
    for a, n in zip(runs[0]["windows"], runs[1]["windows"]):
        lines.append(f"| {a['commits']} | {a['median_ms']:.0f} | {a['hoodie_files_max']} | {n['median_ms']:.0f} | "
                     f"{n['hoodie_files_max']} | {a['load']} |")
    return "\n".join(lines) + (f"\n\narchive files: {runs[0]['archive_files']}; load average "
                               f"{out['load_before'][0]:.1f} at the start, {out['load_after'][0]:.1f} at the end")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    bench_main("archival", lambda: {"runs": run(args.commits)}, report)


if __name__ == "__main__":
    main()
