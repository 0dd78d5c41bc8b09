"""Compaction benchmark (issue 5): compacting a W1 MOR table that holds 100,000 updated rows in log files, against
a COW upsert of the same batch, and the MOR snapshot read before and after the compaction against a COW read.

Tables (made once per run, untimed, under BENCH_DATA/compaction):
  cow         W1 (1,000,000 rows) bulk_insert, COPY_ON_WRITE
  mor_logs    W1 bulk_insert, MERGE_ON_READ, then the upsert batch (100,000 updates into logs + 10,000 inserts)
  cow_upsert  `cow` after the same upsert (the COW table with the same rows as `mor_logs`)
  mor_compact `mor_logs` after one compaction

Timed, interleaved rounds (one untimed warm-up, then the median of BENCH_REPEATS=3), each on a fresh copy:
  cow_upsert_write   `hudi_engine.spark.write` of the batch into a copy of `cow` (what a COW table pays per batch)
  mor_compaction     `HudiTable.compact(executor=spark_executor(spark))` of a copy of `mor_logs` (schedule, Spark tasks, commit)
Reads (the same rounds, read-only): `HudiTable.read_snapshot()` of `mor_logs` (before), `mor_compact` (after)
and `cow_upsert` (COW), and hudi-rs on the same three tables as a reference.
Goals: compaction <= 1.5 x the COW upsert; MOR read after compaction ~ the COW read (ratio ~1).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import DATA_DIR, Case

UPSERT_EXPECT = {"records_inserted": common.INSERTS, "records_updated": common.UPDATES}


def hudi_write(df, path: Path, table_type: str, operation: str, expect: dict | None = None) -> dict:
    from hudi_engine.spark import write

    r = write(df, str(path), common.hudi_options(table_type, operation))
    got = {"records_inserted": r.records_inserted, "records_updated": r.records_updated}
    if expect and any(got[k] != v for k, v in expect.items()):
        raise RuntimeError(f"write into {path}: {got}, expected {expect}")
    return {k: round(v, 3) for k, v in r.timings.items()} | {"files_appended": r.files_appended,
                                                               "files_rewritten": r.files_rewritten}


def compaction(spark, path: Path) -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import spark_executor

    r = HudiTable.load(str(path)).compact(executor=spark_executor(spark))
    if r is None or r.records_written < common.W1_ROWS:
        raise RuntimeError(f"compaction of {path}: {r}")
    upd = sum(s.num_update_writes for s in r.stats)
    if upd != common.UPDATES:
        raise RuntimeError(f"compaction of {path}: {upd} updated records, expected {common.UPDATES}")
    return {k: round(v, 3) for k, v in r.timings.items()} | {"file_groups": r.file_groups,
                                                               "log_files": r.log_files_compacted}


def read_ours(path: Path) -> dict:
    from hudi_engine import HudiTable

    t = HudiTable.load(str(path)).read_snapshot()
    if t.num_rows != common.W1_ROWS + common.INSERTS:
        raise RuntimeError(f"{path}: {t.num_rows} rows")
    return {"rows": t.num_rows}


def read_rs(path: Path) -> dict:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    n = sum(b.num_rows for b in RsTable(str(path.resolve())).read(HudiReadOptions()))
    if n != common.W1_ROWS + common.INSERTS:
        raise RuntimeError(f"hudi-rs {path}: {n} rows")
    return {"rows": n}


def run(repeats: int) -> dict:
    base = DATA_DIR / "compaction"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    t0 = time.perf_counter()
    spark = common.spark_session()
    print(f"Spark session: {time.perf_counter() - t0:.1f} s (master {spark.sparkContext.master})", flush=True)
    df, bdf = common.cached_df(spark, src), common.cached_df(spark, bdir)
    cow, mor = base / "cow", base / "mor_logs"
    cow_up, mor_c = base / "cow_upsert", base / "mor_compact"
    print("setting up the tables (untimed)", flush=True)
    hudi_write(df, common.fresh(cow), "COPY_ON_WRITE", "bulk_insert")
    hudi_write(df, common.fresh(mor), "MERGE_ON_READ", "bulk_insert")
    print(f"  MOR upsert into logs: {hudi_write(bdf, mor, 'MERGE_ON_READ', 'upsert', UPSERT_EXPECT)}", flush=True)
    hudi_write(bdf, common.copy_table(cow, cow_up), "COPY_ON_WRITE", "upsert", UPSERT_EXPECT)
    print(f"  compaction of a copy: {compaction(spark, common.copy_table(mor, mor_c))}", flush=True)

    work_cow, work_mor = base / "work_cow", base / "work_mor"
    cases = [
        Case("cow_upsert_write", lambda _: hudi_write(bdf, work_cow, "COPY_ON_WRITE", "upsert", UPSERT_EXPECT),
             setup=lambda _: common.copy_table(cow, work_cow)),
        Case("mor_compaction", lambda _: compaction(spark, work_mor), setup=lambda _: common.copy_table(mor, work_mor)),
        Case("read_mor_before", lambda _: read_ours(mor)),
        Case("read_mor_after", lambda _: read_ours(mor_c)),
        Case("read_cow", lambda _: read_ours(cow_up)),
        Case("rs_read_mor_before", lambda _: read_rs(mor)),
        Case("rs_read_mor_after", lambda _: read_rs(mor_c)),
        Case("rs_read_cow", lambda _: read_rs(cow_up)),
    ]
    ms = common.interleaved(cases, repeats)
    spark.stop()
    med = {k: m.median for k, m in ms.items()}
    ratios = {
        "compaction / cow_upsert (goal <= 1.5)": med["mor_compaction"] / med["cow_upsert_write"],
        "read mor after / read cow (goal ~1)": med["read_mor_after"] / med["read_cow"],
        "read mor before / read mor after": med["read_mor_before"] / med["read_mor_after"],
        "hudi-rs: mor after / cow": med["rs_read_mor_after"] / med["rs_read_cow"],
        "hudi-rs: mor before / mor after": med["rs_read_mor_before"] / med["rs_read_mor_after"],
    }
    return {"results": ms, "cold": common.warmups(ms), "ratios": ratios}


def report(out: dict) -> str:
    return "\n".join(["| what | median s | runs s |", "|---|---|---|",
                      *(f"| {k} | {m.median:.2f} | {', '.join(f'{t:.2f}' for t in m.times)} |"
                        for k, m in out["results"].items()),
                      "", "| ratio | value |", "|---|---|", *(f"| {k} | {v:.2f} |" for k, v in out["ratios"].items())])


def main() -> None:
    args = common.arg_parser(__doc__).parse_args()
    common.bench_main("compaction", lambda: run(args.repeats), report)


if __name__ == "__main__":
    main()
