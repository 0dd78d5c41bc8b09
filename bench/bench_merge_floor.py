"""The COW merge of one file group against its floor (issue 41): an unpartitioned table of one 1,250,000-row file
group (W3a's file-group size) takes 250,000 updates and 25,000 inserts through the engine's write pipeline in this
process (`write_pipeline.write_table`: keys, tags, the merge handle, the commit; no Spark), against pyarrow alone
reading the same base file and writing it back (snappy), interleaved. Each upsert runs in a child process (timed
inside it, around `write_table`, after a warm-up upsert of a copy) whose engine is the checkout it runs in: with
`--against <checkout>` the engine of another checkout (a git worktree of an older commit) runs too, so that both
write paths are timed in the same run. Wall time and CPU time (every thread of the process: what a loaded, shared
machine distorts least) are both reported.

    bench/run.sh merge-floor [--against ../wt-before]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from common import _BASE_TS, _UPDATE_TS, DATA_DIR, Case, _rows, bench_main, hudi_options, interleaved

ROWS = 1_250_000
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
OPTIONS = {**hudi_options("COPY_ON_WRITE", "upsert"), "hoodie.datasource.write.partitionpath.field": "",
           "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"}


def _data(root: Path) -> tuple[Path, Path]:
    """The base rows and the batch (parquet files under `root`): ids 0..ROWS; a fifth of them updated (newer ts, new
    values), and ROWS / 50 new ids."""
    base, batch = root / "base.parquet", root / "batch.parquet"
    if not batch.exists():
        rng = np.random.default_rng(41)
        pq.write_table(_rows(np.arange(ROWS, dtype=np.int64), rng, _BASE_TS).drop_columns(["dt"]), base)
        updates = np.sort(rng.choice(ROWS, ROWS // 5, replace=False)).astype(np.int64)
        inserts = np.arange(10 ** 9, 10 ** 9 + ROWS // 50, dtype=np.int64)
        pq.write_table(pa.concat_tables([_rows(updates, rng, _UPDATE_TS), _rows(inserts, rng, _UPDATE_TS)])
                       .drop_columns(["dt"]), batch)
    return base, batch


# The timed upsert, in a child process whose engine is the checkout it runs in (its cwd and PYTHONPATH), after an
# untimed one on a copy.
_UPSERT = r'''
import json, shutil, sys, time
import pyarrow.parquet as pq
from hudi_engine.write_pipeline import write_table
path, batch, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
rows = pq.read_table(batch)
shutil.copytree(path, path + "-warm")  # a warm-up upsert first: the lazy imports and first calls left out
write_table(rows, path + "-warm", options)
shutil.rmtree(path + "-warm")
t0, c0 = time.perf_counter(), time.process_time()
r = write_table(rows, path, options)
print(json.dumps({"s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "bytes_written": r.bytes_written}))
'''


def _child(checkout: Path, table: Path, batch: Path, options: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", _UPSERT, str(table), str(batch), json.dumps(options)], cwd=checkout,
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(against: Path | None) -> dict:
    root = DATA_DIR / "merge_floor"
    root.mkdir(parents=True, exist_ok=True)
    base_rows, batch = _data(root)
    here = Path(__file__).resolve().parents[1]
    pristine = {}
    for name, checkout in [("ours", here)] + ([("against", against)] if against else []):
        pristine[name] = root / f"pristine_{name}"
        shutil.rmtree(pristine[name], ignore_errors=True)
        # Each checkout writes its own first version (bulk_insert): its base file is what its merge reads.
        script = ("import sys, json, pyarrow.parquet as pq\nfrom hudi_engine.write_pipeline import write_table\n"
                  "write_table(pq.read_table(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]))")
        subprocess.run([sys.executable, "-c", script, str(base_rows), str(pristine[name]),
                        json.dumps({**OPTIONS, "hoodie.datasource.write.operation": "bulk_insert",
                                    "hoodie.bulkinsert.shuffle.parallelism": "1"})],
                       cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, check=True)
    [base_file] = list(pristine["ours"].glob("*.parquet"))
    work = root / "work"
    floor_out = root / "floor.parquet"

    def fresh_copy(name: str) -> None:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(pristine[name], work)

    def floor(_: str) -> dict:
        c0 = time.process_time()
        pq.write_table(pq.read_table(base_file), floor_out, compression="snappy")
        return {"bytes_written": floor_out.stat().st_size, "cpu_s": time.process_time() - c0}

    cases = [Case("engine_merge", lambda _: _child(here, work, batch, OPTIONS), setup=lambda _: fresh_copy("ours")),
             Case("pyarrow_floor", floor)]
    if against is not None:
        cases.append(Case("engine_merge_against", lambda _: _child(against, work, batch, OPTIONS),
                          setup=lambda _: fresh_copy("against")))
    results = interleaved(cases, REPEATS, alternate=True)
    # An engine's time is the upsert's inside its child process (the process start and imports left out).
    times = {k: [e["s"] for e in m.extra] if k.startswith("engine") else m.times for k, m in results.items()}
    # CPU time (every thread of the process): what a shared, loaded machine distorts least.
    cpu = {k: [e.get("cpu_s") for e in m.extra] for k, m in results.items()}
    return {"rows": ROWS, "against": str(against) if against else None,
            "base_file_mb": round(base_file.stat().st_size / 2 ** 20, 1),
            "results": {k: {"median": statistics.median(times[k]), "times": times[k], "extra": m.extra,
                            "cpu_median": statistics.median(cpu[k]) if None not in cpu[k] else None}
                        for k, m in results.items()}}


def report(out: dict) -> str:
    res = out["results"]
    floor = res["pyarrow_floor"]["median"]
    floor_cpu = res["pyarrow_floor"].get("cpu_median")
    lines = [f"COW merge of one file group ({out['rows']:,} rows, base file {out['base_file_mb']} MB; 20% updated, "
             "2% inserted) against pyarrow reading and writing the base file (medians, interleaved)", "",
             "| write | median | runs | / floor | CPU median | / floor CPU | bytes written |",
             "|---|---|---|---|---|---|---|"]
    for name, r in res.items():
        mb = r["extra"][-1].get("bytes_written", 0) / 2 ** 20 if r["extra"] else 0
        label = name if name != "engine_merge_against" else f"engine merge, {out['against']}"
        cpu = r.get("cpu_median")
        cpu_cells = f"{cpu:.3f} s | {cpu / floor_cpu:.2f}x" if cpu is not None and floor_cpu else "- | -"
        lines.append(f"| {label} | {r['median']:.3f} s | {', '.join(f'{t:.2f}' for t in r['times'])} | "
                     f"{r['median'] / floor:.2f}x | {cpu_cells} | {mb:.1f} MB |")
    lines.append(f"\nload average before / after: {out['load_before'][0]:.2f} / {out['load_after'][0]:.2f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, help="another checkout of the project (e.g. a worktree of an older commit)")
    args = ap.parse_args()
    bench_main("merge_floor", lambda: run(args.against.resolve() if args.against else None), report)


if __name__ == "__main__":
    main()
