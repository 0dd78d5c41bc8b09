"""Issue 13: the timeline over 1,000 small commits, with archival (Hudi's defaults: keep 20-30 commits active) and
without (`hoodie.archive.automatic=false`): per-write time and the number of files in `.hoodie/`.

Each write upserts 20 rows (10 updates of earlier keys, 10 new keys) into a COW table of 4 partitions, through the
engine's own write pieces in this process (`tests/write/local_write.py`: the same driver and task code Spark runs,
without a JVM, so the figure is the write path and the timeline, not Spark's start-up), with the table services a
Spark write runs after its commit (cleaning, `KEEP_LATEST_COMMITS` 10; archival). A write is timed from the
options to the end of its table services. Figures: medians per window of 100 commits.

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

from common import DATA_DIR, fresh, machine, save_results  # noqa: E402
from local_write import write  # noqa: E402

OPTIONS = {"hoodie.table.name": "timeline", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts"}
WINDOW = 100


def _batch(i: int) -> pa.Table:
    updates = [(i * 7 + k) % max(1, i * 10) for k in range(10)] if i else []
    ids = updates + [i * 10 + k for k in range(10)]
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{x % 4}" for x in ids],
                     "ts": pa.array([i] * len(ids), pa.int64()), "v": pa.array([float(i)] * len(ids))})


def run(archival: bool, commits: int) -> dict:
    path = fresh(DATA_DIR / "tables" / f"timeline-{'archival' if archival else 'no-archival'}")
    options = {**OPTIONS, "hoodie.archive.automatic": str(archival).lower()}
    times, files = [], []
    for i in range(commits):
        t0 = time.perf_counter()
        write(path, _batch(i), options, table_services=True)
        times.append(time.perf_counter() - t0)
        files.append(sum(1 for p in (path / ".hoodie").iterdir() if p.is_file()))
        if (i + 1) % WINDOW == 0:
            print(f"  {'archival' if archival else 'no archival'}: {i + 1} commits, last {WINDOW}: median "
                  f"{statistics.median(times[-WINDOW:]) * 1000:.0f} ms/write, .hoodie {files[-1]} files, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    archived = sorted(p.name for p in (path / ".hoodie" / "archived").iterdir())
    windows = [{"commits": f"{w + 1}-{w + WINDOW}", "median_ms": round(statistics.median(times[w:w + WINDOW]) * 1000, 1),
                "hoodie_files_max": max(files[w:w + WINDOW]), "hoodie_files_end": files[w + WINDOW - 1]}
               for w in range(0, commits - commits % WINDOW, WINDOW)]
    return {"archival": archival, "commits": commits, "windows": windows, "archive_files": len(archived),
            "hoodie_files_end": files[-1], "times_ms": [round(t * 1000, 2) for t in times], "hoodie_files": files}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    started = os.getloadavg()
    results = [run(True, args.commits), run(False, args.commits)]
    payload = {"machine": machine(), "load_start": started, "load_end": os.getloadavg(), "runs": results}
    save_results("archival", payload)
    print("\n| commits | with archival: median ms/write | `.hoodie` files (max) | without: median ms/write | "
          "`.hoodie` files (max) |")
    print("|---|---|---|---|---|")
    for a, n in zip(results[0]["windows"], results[1]["windows"]):
        print(f"| {a['commits']} | {a['median_ms']:.0f} | {a['hoodie_files_max']} | {n['median_ms']:.0f} | "
              f"{n['hoodie_files_max']} |")
    print(f"\narchive files: {results[0]['archive_files']}; load average {started[0]:.1f} at the start, "
          f"{payload['load_end'][0]:.1f} at the end")


if __name__ == "__main__":
    main()
