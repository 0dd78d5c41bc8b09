"""W3 (issue 9): writes that must spread over file groups, beside delta-rs MERGE on the same data in the same run.

  w3a   an unpartitioned 10,000,000-row table (W2's rows) upserted with 2,000,000 updates + 200,000 inserts
  w3b   a 30-day partitioned table (300,000 rows a day, 9,000,000 rows) receiving one new day of 5,000,000 rows
        plus 100,000 updates of the last day; and the same with a 1,000,000-row new day (memory: flat?)

Reported per Hudi write: time (median of the timed runs; one untimed warm-up) and the ratio to delta-rs MERGE
(`t.id = s.id`, the same batch, a fresh copy of the same table each run), the Spark tasks that wrote files, the peak
RSS of the Python workers (sampled every 20 ms), the files written and their sizes. Defaults on both sides
(Hudi: SIMPLE index, 120 MB max file size, snappy).
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import spark_probe
from common import DATA_DIR, Case, Measure, RssSampler

DAY_ROWS = 300_000
DAYS = 30
W3A_UPDATES, W3A_INSERTS = 2_000_000, 200_000
W3B_UPDATES = 100_000
NEW_DAY = "2024-02-01"


def _day(i: int) -> str:
    return f"2024-01-{i + 1:02d}"


def _with_dt(t: pa.Table, dt: pa.Array) -> pa.Table:
    return t.set_column(t.schema.get_field_index("dt"), "dt", dt)


def scaled(n: int, scale: float) -> int:
    """`n` rows at `scale` (1: the workload as specified; 0.2: a fifth of every row count)."""
    return max(1, int(round(n * scale)))


def _suffix(scale: float) -> str:
    """Data folders of a scaled workload: their own names (scale 1 keeps the original ones)."""
    return "" if scale == 1 else f"_scale{scale:g}"


def w3b_source(scale: float = 1.0) -> Path:
    """30 days of 300,000 rows (at `scale`: 300,000 * scale): ids [k * day_rows, (k + 1) * day_rows) on day k."""
    day_rows = scaled(DAY_ROWS, scale)
    d = DATA_DIR / "source" / f"w3b_days{_suffix(scale)}"
    if not (d / "_DONE").exists():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for k in range(DAYS):
            rng = np.random.default_rng([common.SEED, 3000 + k])
            ids = np.arange(k * day_rows, (k + 1) * day_rows, dtype=np.int64)
            t = common._rows(ids, rng, common._BASE_TS)
            pq.write_table(_with_dt(t, pa.array([_day(k)] * day_rows)), d / f"day-{k:02d}.parquet")
        (d / "_DONE").write_text("ok\n")
    return d


def w3b_batch(new_rows: int, scale: float = 1.0) -> Path:
    """A new day of `new_rows` rows plus 100,000 updates of the last day's rows (newer ts); at `scale`, the
    updates and the days' rows scaled (`new_rows` is given scaled already)."""
    day_rows, n_updates = scaled(DAY_ROWS, scale), scaled(W3B_UPDATES, scale)
    d = DATA_DIR / "source" / f"w3b_batch_{new_rows}{_suffix(scale)}"
    if not (d / "_DONE").exists():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        rng = np.random.default_rng([common.SEED, 4000 + new_rows // 1_000_000])
        last = (DAYS - 1) * day_rows
        upd = np.sort(rng.choice(day_rows, n_updates, replace=False)).astype(np.int64) + last
        updates = _with_dt(common._rows(upd, rng, common._UPDATE_TS), pa.array([_day(DAYS - 1)] * n_updates))
        pq.write_table(updates, d / "updates.parquet")
        base = DAYS * day_rows
        for c in range(0, new_rows, 1_000_000):
            n = min(1_000_000, new_rows - c)
            ids = np.arange(base + c, base + c + n, dtype=np.int64)
            pq.write_table(_with_dt(common._rows(ids, rng, common._UPDATE_TS), pa.array([NEW_DAY] * n)),
                           d / f"new-{c // 1_000_000:02d}.parquet")
        (d / "_DONE").write_text("ok\n")
    return d


def w3a_batch(scale: float = 1.0) -> Path:
    """2,000,000 updates of ids of the 10M-row table and 200,000 new ids (at `scale`: every count scaled)."""
    d = DATA_DIR / "source" / f"w3a_batch{_suffix(scale)}"
    if not (d / "_DONE").exists():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        rng = np.random.default_rng([common.SEED, 5000])
        upd = np.sort(rng.choice(scaled(common.W2_ROWS, scale), scaled(W3A_UPDATES, scale), replace=False)) \
            .astype(np.int64)
        ins = np.arange(2 * common.INSERT_ID_BASE, 2 * common.INSERT_ID_BASE + scaled(W3A_INSERTS, scale),
                        dtype=np.int64)
        pq.write_table(common._rows(np.concatenate([upd, ins]), rng, common._UPDATE_TS), d / "part-0000.parquet")
        (d / "_DONE").write_text("ok\n")
    return d


def options(partitioned: bool, operation: str) -> dict[str, str]:
    o = common.hudi_options("COPY_ON_WRITE", operation)
    if not partitioned:
        o.pop("hoodie.datasource.write.partitionpath.field")
    return o


def hudi_write(spark, df, path: Path, partitioned: bool, operation: str, label: str, expect: tuple[int, int],
               jvm: int | None) -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import write

    spark.sparkContext.setJobDescription(label)
    try:
        with RssSampler(jvm) as rss:
            r = write(df, str(path), options(partitioned, operation))
    finally:
        spark.sparkContext.setJobDescription(None)
    if (r.records_inserted, r.records_updated) != expect:
        raise RuntimeError(f"{label}: inserted/updated {(r.records_inserted, r.records_updated)}, expected {expect}")
    table = HudiTable.load(str(path))
    commit = table.timeline.completed_commits().last()
    sizes = sorted(s.file_size_in_bytes for s in table.timeline.commit_metadata(commit).write_stats())
    return {**{k: round(v, 2) for k, v in r.timings.items()}, "tasks": r.tasks, "files": len(sizes),
            "file_mb_min": round(sizes[0] / 1e6, 1), "file_mb_median": round(sizes[len(sizes) // 2] / 1e6, 1),
            "file_mb_max": round(sizes[-1] / 1e6, 1), "worker_peak_rss_mb": round(rss.worker_peak),
            "jvm_peak_rss_mb": round(rss.other_peak), "driver_peak_rss_mb": round(rss.peak)}


def delta_write(path: Path, files: list[str], partitioned: bool) -> None:
    from deltalake import write_deltalake

    reader = ds.dataset(files, schema=common.SCHEMA).scanner().to_reader()
    write_deltalake(str(path), reader, partition_by=["dt"] if partitioned else None)


def delta_merge(path: Path, batch: pa.Table, expect: tuple[int, int]) -> dict:
    from deltalake import DeltaTable

    m = (DeltaTable(str(path)).merge(batch, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    got = (m["num_target_rows_inserted"], m["num_target_rows_updated"])
    if got != expect:
        raise RuntimeError(f"delta-rs merge into {path}: inserted/updated {got}, expected {expect}")
    return {"files_added": m.get("num_target_files_added")}


def run(workloads: list[str], repeats: int) -> dict:
    spark = common.spark_session()
    jvm = spark_probe.jvm_pid()
    base = DATA_DIR / "w3"
    results: dict[str, Measure] = {}
    setup: dict[str, float] = {}

    def prepare(name: str, src: Path, partitioned: bool, rows: int) -> tuple[Path, Path]:
        hudi0, delta0 = base / f"pristine_hudi_{name}", base / f"pristine_delta_{name}"
        files = sorted(str(p) for p in src.glob("*.parquet"))
        if not (hudi0 / ".hoodie").exists():
            t = time.perf_counter()
            hudi_write(spark, spark.read.parquet(*files), common.fresh(hudi0), partitioned, "bulk_insert",
                       f"setup-{name}", (rows, 0), jvm)
            setup[f"hudi_{name}"] = time.perf_counter() - t
            t = time.perf_counter()
            delta_write(common.fresh(delta0), files, partitioned)
            setup[f"delta_{name}"] = time.perf_counter() - t
            print(f"  setup {name}: {setup}", flush=True)
        return hudi0, delta0

    def upsert_cases(name: str, hudi0: Path, delta0: Path, bdir: Path, partitioned: bool, expect, rounds: int):
        bdf = common.cached_df(spark, bdir)
        batch = common.read_source(bdir)
        work_h, work_d = base / f"work_hudi_{name}", base / f"work_delta_{name}"
        results.update(common.interleaved([
            Case(f"hudi_{name}", lambda tag: hudi_write(spark, bdf, work_h, partitioned, "upsert", tag, expect, jvm),
                 setup=lambda _: common.copy_table(hudi0, work_h)),
            Case(f"delta_{name}", lambda _: delta_merge(work_d, batch, expect),
                 setup=lambda _: common.copy_table(delta0, work_d)),
        ], rounds))
        bdf.unpersist()

    if "w3a" in workloads:
        print("W3a: unpartitioned 10M rows, upsert 2M updates + 200k inserts", flush=True)
        h, d = prepare("w3a", common.source_dir(common.W2_ROWS), False, common.W2_ROWS)
        upsert_cases("w3a", h, d, w3a_batch(), False, (W3A_INSERTS, W3A_UPDATES), repeats)
    if "w3b" in workloads:
        print("W3b: 30 days x 300k rows; a new day of 5M rows + 100k updates of the last day", flush=True)
        h, d = prepare("w3b", w3b_source(), True, DAYS * DAY_ROWS)
        upsert_cases("w3b_5m", h, d, w3b_batch(5_000_000), True, (5_000_000, W3B_UPDATES), repeats)
        print("W3b with a 1M-row new day (memory growth 1M -> 5M)", flush=True)
        upsert_cases("w3b_1m", h, d, w3b_batch(1_000_000), True, (1_000_000, W3B_UPDATES), max(1, repeats - 2))
    spark.stop()
    return {"results": results, "cold": common.warmups(results), "setup_s": setup}


def report(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    lines = ["| W3 write | Hudi: median (runs) | delta-rs MERGE: median (runs) | Hudi/delta | tasks that wrote | "
             "Python worker peak RSS | files (MB min / median / max) |", "|---|---|---|---|---|---|---|"]
    labels = {"w3a": "W3a: unpartitioned 10M, 2M updates + 200k inserts",
              "w3b_5m": "W3b: 30 days, new day of 5M + 100k updates", "w3b_1m": "W3b: 30 days, new day of 1M + 100k updates"}
    for name, label in labels.items():
        h, d = res.get(f"hudi_{name}"), res.get(f"delta_{name}")
        if h is None or d is None:
            continue
        e = h.extra[-1]
        med = lambda k, m=h: float(np.median([x.get(k, 0) for x in m.extra]))  # noqa: E731
        lines.append(f"| {label} | {h.runs(1)} | {d.runs(1)} | {h.median / d.median:.2f}x | {e['tasks']} | "
                     f"{med('worker_peak_rss_mb'):.0f} MB | {e['files']} ({e['file_mb_min']} / {e['file_mb_median']} "
                     f"/ {e['file_mb_max']}) |")
    if out.get("cold"):
        lines.append("\nWarm-up runs (not in the medians): " + ", ".join(f"{k} {v:.1f} s" for k, v in out["cold"].items()))
    if out.get("setup_s"):
        lines.append("Setup (untimed): " + ", ".join(f"{k} {v:.0f} s" for k, v in out["setup_s"].items()))
    return "\n".join(lines)


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--workloads", default="w3a,w3b")
    args = ap.parse_args()
    common.bench_main("write_w3", lambda: run([w.strip() for w in args.workloads.split(",")], args.repeats), report)


if __name__ == "__main__":
    main()
