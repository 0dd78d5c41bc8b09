"""Clustering (issue 39's bench): a COW table built by N_UPSERTS small upserts (each a new file: the small files an
hourly dbt model leaves), then clustered by `customer_id, amount` linear and by z-order, beside delta-rs's
`optimize.compact` and `optimize.z_order` of the same rows built by the same appends, in one run:

* file count, and the latest snapshot's read time (the engine's reader; delta-rs's `to_pyarrow_table`) before and
  after;
* a selective query on the sort columns (`customer_id = C` and `amount < A`) through Spark's parquet reader over the
  table's latest files (it skips row groups by their min/max statistics): the rows its scan read, and time;
* clustering's time against a COW upsert that rewrites the same bytes (every row updated).

Medians of REPEATS runs for the reads; the writes (clustering, optimize, the upsert) once each on fresh copies.

    bench/run.sh clustering    (BENCH_CLUSTER_UPSERTS: 200, BENCH_CLUSTER_ROWS: 5,000 an upsert; files of 4 MB)
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from common import DATA_DIR, REPEATS, bench_main, copy_table, fresh, spark_session

from hudi_engine import HudiTable
from hudi_engine.write_pipeline import write_table

N_UPSERTS = int(os.environ.get("BENCH_CLUSTER_UPSERTS", "200"))
ROWS = int(os.environ.get("BENCH_CLUSTER_ROWS", "5000"))
TARGET = 4 * 1024 * 1024  # the file size both clusterings aim at, so that their output has several files to skip
SORT = ["customer_id", "amount"]
OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "",
           "hoodie.datasource.write.operation": "upsert", "hoodie.parquet.small.file.limit": "0"}


def _batch(i: int, rng: np.random.Generator) -> pa.Table:
    ids = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)
    return pa.table({"id": ids, "customer_id": rng.integers(0, 10_000, ROWS, dtype=np.int64),
                     "amount": rng.uniform(0, 1000, ROWS), "note": [f"n{x}" for x in ids],
                     "ts": np.full(ROWS, i, dtype=np.int64)})


def _latest_files(path: str) -> list[str]:
    table = HudiTable.load(path)
    return [s.base_file.path for s in table.plan_scan().slices if s.base_file is not None]


QUERY = "customer_id = 4242 and amount < 500"


def _selective(spark, files: list[str]) -> tuple[int, float]:
    """(rows Spark's parquet scan read, seconds) of the selective query through Spark's parquet reader, which skips
    row groups by their min/max statistics (the scan's `number of output rows`: the rows of the row groups it read,
    before the filter)."""
    started = time.perf_counter()
    df = spark.read.parquet(*files).where(QUERY)
    df.collect()
    seconds = time.perf_counter() - started
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    scans = [leaves.apply(i) for i in range(leaves.size())]
    return sum(int(n.metrics().get("numOutputRows").get().value()) for n in scans), seconds


def _median(f, n: int = REPEATS) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        f()
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def _measure(spark, name: str, files: list[str], read) -> dict:
    scans = [_selective(spark, files) for _ in range(REPEATS)]
    return {"variant": name, "files": len(files), "read_s": _median(read),
            "scanned_rows": scans[0][0], "selective_s": float(np.median([s for _, s in scans]))}


def run() -> dict:
    from deltalake import DeltaTable, write_deltalake

    root = fresh(DATA_DIR / "clustering")
    rng = np.random.default_rng(39)
    base, delta = str(root / "hudi"), str(root / "delta")
    for i in range(N_UPSERTS):
        batch = _batch(i, rng)
        write_table(batch, base, OPTIONS)
        write_deltalake(delta, batch, mode="append")
    total = N_UPSERTS * ROWS
    spark = spark_session()
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # a plain plan to read the scan's metric from
    rows: list[dict] = [_measure(spark, "engine, unclustered", _latest_files(base),
                                 lambda: HudiTable.load(base).read_snapshot())]
    timings: dict[str, float] = {}
    for layout in ("linear", "z-order"):
        path = str(copy_table(Path(base), root / f"hudi-{layout}"))
        started = time.perf_counter()
        HudiTable.load(path).cluster(options={**OPTIONS, "hoodie.clustering.plan.strategy.sort.columns":
                                              ",".join(SORT), "hoodie.layout.optimize.strategy": layout,
                                              "hoodie.clustering.plan.strategy.target.file.max.bytes": str(TARGET)})
        timings[f"engine clustering, {layout}"] = time.perf_counter() - started
        rows.append(_measure(spark, f"engine, clustered {layout}", _latest_files(path),
                             lambda p=path: HudiTable.load(p).read_snapshot()))  # type: ignore[misc]
    rewrite = str(copy_table(Path(base), root / "hudi-rewrite"))
    everything = HudiTable.load(rewrite).read_snapshot().select(["id", "customer_id", "amount", "note", "ts"])
    everything = everything.set_column(4, "ts", pa.array(np.full(total, N_UPSERTS, dtype=np.int64)))
    started = time.perf_counter()
    write_table(everything, rewrite, OPTIONS)
    timings["engine COW upsert of every row"] = time.perf_counter() - started

    def delta_files(path: str) -> list[str]:
        return [u.removeprefix("file://") for u in DeltaTable(path).file_uris()]

    rows.append(_measure(spark, "delta-rs, unoptimized", delta_files(delta), lambda: DeltaTable(delta).to_pyarrow_table()))
    for how in ("compact", "z_order"):
        path = str(copy_table(Path(delta), root / f"delta-{how}"))
        started = time.perf_counter()
        table = DeltaTable(path)
        if how == "compact":
            table.optimize.compact(target_size=TARGET)
        else:
            table.optimize.z_order(SORT, target_size=TARGET)
        timings[f"delta-rs optimize.{how}"] = time.perf_counter() - started
        rows.append(_measure(spark, f"delta-rs, optimize.{how}", delta_files(path),
                             lambda p=path: DeltaTable(p).to_pyarrow_table()))  # type: ignore[misc]
    return {"rows": rows, "timings": timings, "upserts": N_UPSERTS, "rows_per_upsert": ROWS, "total_rows": total}


def report(out: dict) -> str:
    lines = [f"{out['upserts']} upserts of {out['rows_per_upsert']} rows ({out['total_rows']:,} rows), "
             f"query {QUERY} through Spark's parquet reader, medians of {REPEATS}:", "",
             "| table | files | snapshot read | rows scanned by the selective query | its time |", "|---|---|---|---|---|"]
    for r in out["rows"]:
        lines.append(f"| {r['variant']} | {r['files']} | {r['read_s'] * 1000:.0f} ms | {r['scanned_rows']:,} | "
                     f"{r['selective_s'] * 1000:.0f} ms |")
    lines += ["", "| write | time |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} s |" for k, v in out["timings"].items()]
    return "\n".join(lines)


def main() -> None:
    bench_main("clustering", run, report)


if __name__ == "__main__":
    main()
