"""W3b's 5M-row day beside its floors (issue 41), through Spark, in the same run:

  engine         `hudi_engine.spark.write` upsert of the new 5,000,000-row day + 100,000 updates of the last day
                 into the 30-day table (bench_w3's W3b), a fresh copy of the table each run
  delta-rs       delta-rs MERGE of the same batch into the same table as Delta (bench_w3's peer)
  pyarrow floor  the touched file groups' bytes with pyarrow alone, in the Spark tasks the rows arrive in: every
                 task writes its new-day rows as one parquet file (snappy), and the last day's base file is read
                 and written back with its updated rows replaced (Arrow `take`). No keys, no meta columns, no bloom
                 filter, no shuffle, no timeline
  arrow          the rows handed to Python tasks as Arrow batches and counted: what any Python write through Spark
                 pays before its first byte (Spark converts its rows to Arrow one row at a time)
  spark parquet  Spark's own `df.write.parquet` of the batch (no Python at all)

All start from the same cached, counted DataFrame of the batch. One untimed warm-up of each, then BENCH_REPEATS
(3) rounds, every other one in reverse order. Wall time and CPU time (this process and every process under it:
the Spark JVM, its Python daemon and workers) are reported, medians, with each one's ratio to the engine.

    bench/run.sh w3b-floor
"""
from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_w3
import common
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import spark_probe
from bench_mor_floor import cpu_timed
from common import DATA_DIR, Case, Measure


class FloorFn:
    """A Spark task of the pyarrow floor: its new-day rows streamed into one parquet file; its updates, if any,
    merged into a copy of the last day's base file (read whole, updated rows replaced, written back)."""

    def __init__(self, out_dir: str, base_file: str, new_day: str) -> None:
        self.out_dir, self.base_file, self.new_day = out_dir, base_file, new_day

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx else 0
        writer, updates, rows = None, [], 0
        for batch in batches:
            new = pc.equal(batch.column("dt"), self.new_day)
            fresh = batch.filter(new)
            if fresh.num_rows:
                if writer is None:
                    writer = pq.ParquetWriter(f"{self.out_dir}/new-{task}.parquet", fresh.schema, compression="snappy")
                writer.write_batch(fresh)
                rows += fresh.num_rows
            if fresh.num_rows < batch.num_rows:
                updates.append(batch.filter(pc.invert(new)))
        if writer is not None:
            writer.close()
        if updates:
            upd = pa.Table.from_batches(updates)
            stored = pq.read_table(self.base_file)
            keys = pc.cast(stored.column("_hoodie_record_key"), pa.int64())
            at = pc.index_in(keys, value_set=upd.column("id"))
            hit = pc.is_valid(at).to_numpy(zero_copy_only=False)
            merged = stored.select(upd.column_names)
            take = np.where(hit, pc.fill_null(at, 0).to_numpy(zero_copy_only=False) + len(merged),
                            np.arange(len(merged)))
            merged = pa.concat_tables([merged, upd.cast(merged.schema)]).take(pa.array(take))
            pq.write_table(merged, f"{self.out_dir}/merged-{task}.parquet", compression="snappy")
            rows += upd.num_rows
        yield pa.RecordBatch.from_arrays([pa.array([rows], pa.int64())], names=["rows"])


def count_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    n = 0
    for batch in batches:
        n += batch.num_rows
    yield pa.RecordBatch.from_arrays([pa.array([n], pa.int64())], names=["rows"])


def run(repeats: int) -> dict:
    from hudi_engine import HudiTable

    spark = common.spark_session()
    base = DATA_DIR / "w3"
    hudi0, delta0 = base / "pristine_hudi_w3b", base / "pristine_delta_w3b"
    if not (hudi0 / ".hoodie").exists() or not (delta0 / "_delta_log").exists():
        raise SystemExit("no W3b tables: run `bench/run.sh w3` (bench_w3.py --workloads w3b) once first")
    bdir = bench_w3.w3b_batch(5_000_000)
    bdf = common.cached_df(spark, bdir)
    batch = common.read_source(bdir)
    n = batch.num_rows
    expect = (5_000_000, bench_w3.W3B_UPDATES)
    last_day = bench_w3._day(bench_w3.DAYS - 1)
    (base_file,) = [s.base_file.path for s in HudiTable.load(str(hudi0)).file_slices() if s.partition_path == last_day]
    work_h, work_d, floor_dir, parquet_dir = base / "work_hudi_floor", base / "work_delta_floor", \
        base / "floor_files", base / "floor_spark_parquet"
    floor = FloorFn(str(floor_dir), base_file, bench_w3.NEW_DAY)  # the workers do not import bench/

    jvm = spark_probe.jvm_pid()

    def engine(tag: str) -> dict:
        return bench_w3.hudi_write(spark, bdf, work_h, True, "upsert", tag, expect, jvm)

    def pyarrow_floor(_tag: str) -> dict:
        done = sum(r["rows"] for r in bdf.mapInArrow(floor, "rows long").collect())
        if done != n:
            raise RuntimeError(f"pyarrow floor wrote {done} rows, expected {n}")
        return {"files": len(list(floor_dir.glob("*.parquet")))}

    def arrow(_tag: str) -> dict:
        done = sum(r["rows"] for r in bdf.mapInArrow(count_rows, "rows long").collect())
        if done != n:
            raise RuntimeError(f"arrow: {done} rows, expected {n}")
        return {}

    def spark_parquet(_tag: str) -> dict:
        bdf.write.parquet(str(parquet_dir))
        return {}

    cpu: dict[str, list[float]] = {}
    timed = partial(cpu_timed, cpu)

    def fresh_dir(d: Path):
        common.fresh(d)
        d.mkdir(parents=True)

    print("W3b 5M-row day: the engine beside delta-rs and the floors", flush=True)
    results = common.interleaved([
        Case("engine", timed("engine", engine), setup=lambda _: common.copy_table(hudi0, work_h)),
        Case("delta-rs", timed("delta-rs", lambda _: bench_w3.delta_merge(work_d, batch, expect)),
             setup=lambda _: common.copy_table(delta0, work_d)),
        Case("pyarrow floor", timed("pyarrow floor", pyarrow_floor), setup=lambda _: fresh_dir(floor_dir)),
        Case("arrow", timed("arrow", arrow)),
        Case("spark parquet", timed("spark parquet", spark_parquet), setup=lambda _: common.fresh(parquet_dir)),
    ], repeats, alternate=True)
    bdf.unpersist()
    spark.stop()
    return {"results": results, "cpu": cpu, "cold": common.warmups(results)}


def report(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    cpu = out["cpu"]
    e, ce = res["engine"].median, statistics.median(cpu["engine"])
    lines = [f"W3b: a new 5,000,000-row day + 100,000 updates into 30 days x 300,000 rows; load average before "
             f"{tuple(round(x, 2) for x in out['load_before'])}, after {tuple(round(x, 2) for x in out['load_after'])}",
             "", "| | wall: median (runs) | engine / it | CPU: median (runs) | engine / it |", "|---|---|---|---|---|"]
    for name, m in res.items():
        c = statistics.median(cpu[name])
        lines.append(f"| {name} | {m.runs()} | {e / m.median:.2f}x | {c:.2f} s ({', '.join(f'{x:.2f}' for x in cpu[name])}) "
                     f"| {ce / c:.2f}x |")
    warm = ", ".join(f"{k} {v:.2f} s" for k, v in out.get("cold", {}).items())
    return "\n".join([*lines, "", f"Warm-up runs (not in the medians): {warm}"] if warm else lines)


def main() -> None:
    repeats = common.arg_parser(__doc__).parse_args().repeats  # --help and bad arguments answer before any output
    common.bench_main("w3b_floor", lambda: run(repeats), report)


if __name__ == "__main__":
    main()
