"""Read benchmark (issue 2): `HudiTable.read_snapshot` beside pyarrow and hudi-rs on the same tables, in one run.

  cow   W1 (1,000,000 rows, 10 partitions) as a COW table written by this engine (Spark bulk_insert):
        `HudiTable.load(path).read_snapshot()` vs `pyarrow.parquet.read_table(<the same base files>)`
        (goal: within 1.2x), and hudi-rs `HudiTable(path).read()` for context.
  mor   W1 as a MOR table plus one upsert of the 100,000 updates (Avro data blocks in one log file per file
        group): `read_snapshot()` vs hudi-rs on the same table (goal: no slower than hudi-rs).

The tables are made first by a child process running Spark (so no JVM competes during the timings), then each
reader runs once untimed (page cache and imports warm), then 3 rounds (BENCH_REPEATS) in which every reader
runs once; the figure is the median. Our reader's time includes `HudiTable.load` (properties, timeline, file
listing); pyarrow is handed the list of files. Every read is checked: row count and the sum of `price` agree
with the other readers'.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from common import DATA_DIR, Case

COW = DATA_DIR / "read" / "hudi_cow"
MOR = DATA_DIR / "read" / "hudi_mor"


def make_tables() -> None:
    """Child process: the COW table (bulk_insert of W1) and the MOR table (bulk_insert, then the 100,000 updates)."""
    from hudi_engine.spark import write

    spark = common.spark_session()
    src = common.source_dir(common.W1_ROWS)
    df = spark.read.parquet(str(src))
    for path, table_type in ((COW, "COPY_ON_WRITE"), (MOR, "MERGE_ON_READ")):
        t = time.perf_counter()
        r = write(df, str(common.fresh(path)), common.hudi_options(table_type, "bulk_insert"))
        print(f"  {table_type} bulk_insert: {time.perf_counter() - t:.1f} s, {r.files_created} files", flush=True)
    updates = spark.read.parquet(str(common.batch_dir())).where(f"id < {common.INSERT_ID_BASE}")
    t = time.perf_counter()
    r = write(updates, str(MOR), common.hudi_options("MERGE_ON_READ", "upsert"))
    if (r.records_updated, r.records_inserted, r.files_created) != (common.UPDATES, 0, 0):
        raise RuntimeError(f"MOR upsert of the updates: {r}; expected {common.UPDATES} updates in log files only")
    print(f"  MERGE_ON_READ upsert of {r.records_updated} updates: {time.perf_counter() - t:.1f} s, "
          f"{r.files_appended} log files", flush=True)
    spark.stop()


def ours(path: Path, read_optimized: bool = False) -> pa.Table:
    from hudi_engine import HudiTable

    return HudiTable.load(str(path)).read_snapshot(read_optimized=read_optimized)


def hudi_rs(path: Path) -> pa.Table:
    from hudi import HudiTable as RsTable

    return pa.Table.from_batches(RsTable(str(path)).read())


def base_files(path: Path) -> list[str]:
    """The latest base file of every file group (what a COW snapshot reads), from this engine's file-system view."""
    from hudi_engine import HudiTable

    return sorted(s.base_file.path for s in HudiTable.load(str(path)).file_slices() if s.base_file is not None)


def log_files(path: Path) -> list[str]:
    from hudi_engine import HudiTable

    return sorted(f.path for s in HudiTable.load(str(path)).file_slices() for f in s.log_files)


def _check(name: str, t: pa.Table, expect: dict) -> dict:
    got = {"rows": t.num_rows, "price_sum": round(pc.sum(t.column("price")).as_py(), 2)}
    if expect and got != expect:
        raise RuntimeError(f"{name}: read {got}, the other readers read {expect}")
    expect.update(got)
    return {"rows": t.num_rows}


def run(cases: list[str], repeats: int, reuse: bool) -> dict:
    if not (reuse and (COW / ".hoodie").exists() and (MOR / ".hoodie").exists()):
        print("making the tables (child process with Spark)", flush=True)
        subprocess.run([sys.executable, __file__, "--make-tables"], check=True)
    results: dict[str, common.Measure] = {}
    if "cow" in cases:
        files = base_files(COW)
        print(f"COW snapshot: {len(files)} base files, {common.dir_size_mb(COW):.0f} MB", flush=True)
        expect: dict = {}
        results.update(common.interleaved([
            Case("ours_cow", lambda _: _check("ours", ours(COW), expect)),
            Case("pyarrow_cow", lambda _: _check("pyarrow", pq.read_table(files), expect)),
            Case("hudi_rs_cow", lambda _: _check("hudi-rs", hudi_rs(COW), expect)),
        ], repeats))
    if "mor" in cases:
        logs = log_files(MOR)
        print(f"MOR snapshot: {len(base_files(MOR))} base files + {len(logs)} log files "
              f"({sum(os.path.getsize(f) for f in logs) / 1e6:.1f} MB of Avro blocks)", flush=True)
        expect = {}
        results.update(common.interleaved([
            Case("ours_mor", lambda _: _check("ours", ours(MOR), expect)),
            Case("hudi_rs_mor", lambda _: _check("hudi-rs", hudi_rs(MOR), expect)),
            Case("ours_mor_read_optimized", lambda _: {"rows": ours(MOR, read_optimized=True).num_rows}),
        ], repeats))
    return {"results": results, "cold": common.warmups(results), "maxrss_mb": common.maxrss_mb()}


def report(out: dict) -> str:
    res = out["results"]
    lines = ["| W1 snapshot read (1,000,000 rows) | ours: median (runs) | peer: median (runs) | ratio ours/peer | goal |",
             "|---|---|---|---|---|"]

    def row(label: str, a: str, b: str, goal: float | None, goal_text: str) -> None:
        if a in res and b in res:
            ratio = res[a].median / res[b].median
            verdict = "context" if goal is None else ("**met**" if ratio <= goal else "**missed**")
            lines.append(f"| {label} | {res[a].runs(3)} | {res[b].runs(3)} | {ratio:.2f}x | {goal_text}: {verdict} |")

    row("COW: read_snapshot vs pyarrow.parquet (same base files)", "ours_cow", "pyarrow_cow", 1.2, "<= 1.2x")
    row("COW: read_snapshot vs hudi-rs", "ours_cow", "hudi_rs_cow", None, "none")
    row("MOR (100,000 updates in Avro log blocks): read_snapshot vs hudi-rs", "ours_mor", "hudi_rs_mor", 1.0,
        "<= 1.0x")
    row("MOR: read_optimized (base files only) vs hudi-rs snapshot", "ours_mor_read_optimized", "hudi_rs_mor", None,
        "none")
    text = "\n".join(lines)
    if out.get("cold"):
        text += "\n\nWarm-up runs (not in the medians): " + ", ".join(f"{k} {v:.3f} s" for k, v in out["cold"].items())
    text += f"\n\n`ru_maxrss` of the read benchmark process (all readers): {out['maxrss_mb']:.0f} MB."
    return text


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--cases", default="cow,mor")
    ap.add_argument("--reuse", action="store_true", help="reuse the tables of an earlier run if present")
    ap.add_argument("--make-tables", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make_tables:
        make_tables()
        return
    common.bench_main("read", lambda: run([c.strip() for c in args.cases.split(",") if c.strip()], args.repeats,
                                          args.reuse), report)


if __name__ == "__main__":
    main()
