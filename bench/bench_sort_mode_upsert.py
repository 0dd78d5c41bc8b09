"""W3a's upsert into the same rows written by bulk_insert with each sort mode (issue 41): how much a table written
with `hoodie.bulkinsert.sort.mode=NONE` (Hudi's default; every file spans the whole key range) costs its later
upserts, beside one written with GLOBAL_SORT (this engine's default; disjoint key ranges), interleaved.

    bench/run.sh sort-mode-upsert            # 10M rows, 2M updates + 200k inserts (about 10-15 minutes)
    bench/bench_sort_mode_upsert.py --scale 0.2
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_w3
import common
from common import DATA_DIR, Case, Measure

MODES = ("GLOBAL_SORT", "NONE")


def run(scale: float, repeats: int) -> dict:
    from hudi_engine.spark import write

    rows = bench_w3.scaled(common.W2_ROWS, scale)
    if rows % common.CHUNK:
        raise SystemExit(f"--scale {scale}: {rows:,} rows; the source is made of {common.CHUNK:,}-row files, so the "
                         "scale must give a whole number of them (0.1, 0.2, ...)")
    expect = (bench_w3.scaled(bench_w3.W3A_INSERTS, scale), bench_w3.scaled(bench_w3.W3A_UPDATES, scale))
    spark = common.spark_session()
    base = DATA_DIR / f"sort_mode_upsert{bench_w3._suffix(scale)}"
    setup: dict[str, float] = {}

    def options(operation: str, mode: str) -> dict[str, str]:
        return {**bench_w3.options(False, operation), "hoodie.bulkinsert.sort.mode": mode}

    for mode in MODES:
        pristine = base / f"pristine_{mode}"
        if not (pristine / ".hoodie").exists():
            t = time.perf_counter()
            write(spark.read.parquet(str(common.source_dir(rows))), str(common.fresh(pristine)),
                  options("bulk_insert", mode))
            setup[mode] = time.perf_counter() - t
    batch = common.cached_df(spark, bench_w3.w3a_batch(scale))

    def case(mode: str) -> Case:
        work = base / f"work_{mode}"

        def upsert(_: str) -> dict:
            r = write(batch, str(work), options("upsert", mode))
            if (r.records_inserted, r.records_updated) != expect:
                raise RuntimeError(f"{mode}: inserted/updated {(r.records_inserted, r.records_updated)}, "
                                   f"expected {expect}")
            return {k: round(v, 2) for k, v in r.timings.items()} | {"tasks": r.tasks}

        return Case(f"upsert into a {mode} table", upsert, setup=lambda _: common.copy_table(base / f"pristine_{mode}", work))

    results = common.interleaved([case(m) for m in MODES], repeats, alternate=True)
    spark.stop()
    return {"rows": rows, "results": results, "cold": common.warmups(results), "setup_s": setup}


def report(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    sort, none = (res[f"upsert into a {m} table"] for m in MODES)
    lines = [f"W3a's upsert into {out['rows']:,} rows written by bulk_insert with each sort mode",
             "", "| table written with | upsert: median (runs) | task time: handles (median) | / GLOBAL_SORT |",
             "|---|---|---|---|"]
    for m in (sort, none):
        handles = sorted(x.get("handles", 0) for x in m.extra)[len(m.extra) // 2]
        lines.append(f"| {m.name.rsplit(' ', 2)[1]} | {m.runs(1)} | {handles:.1f} s | {m.median / sort.median:.2f}x |")
    if out.get("setup_s"):
        lines.append("\nSetup (untimed bulk_insert): " + ", ".join(f"{k} {v:.0f} s" for k, v in out["setup_s"].items()))
    return "\n".join(lines)


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--scale", type=float, default=1.0, help="row counts times this (1: 10M rows, 2.2M upserted)")
    args = ap.parse_args()
    common.bench_main("sort_mode_upsert", lambda: run(args.scale, args.repeats), report)


if __name__ == "__main__":
    main()
