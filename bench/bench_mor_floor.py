"""The MOR upsert beside its floor (issue 41): writing the batch's log blocks, through Spark, in the same run.

  engine  W1's MOR upsert (100,000 updates + 10,000 inserts into the 1,000,000-row MOR table) through
          `hudi_engine.spark.write`, on a fresh copy of the table each run
  floor   the same batch, already split by file group (each update to the file group holding its key, each
          partition's inserts to one new file group: the routing is computed untimed, beforehand), shuffled to the
          same number of Spark tasks as the engine's write used, each task turning each of its file groups' rows
          into Hudi's log records (the engine's meta columns, `records.prepare_records`) encoded as Avro data blocks
          by the engine's own log-block writer (`handles.append.avro_data_blocks`, `io.log_format.encode_log_file`)
          and written as one log file per file group. No tagging, no listing, no markers, no timeline, no commit

Both start from the same cached, counted DataFrame of the batch's rows (the floor's carries three routing columns).
One untimed warm-up of each, then BENCH_REPEATS (3) interleaved rounds. Wall time and CPU time (user + system of
this process and every process under it: the Spark JVM, its Python daemon and workers) are both reported, medians,
and the ratio engine / floor of each.

    bench/run.sh mor-floor
"""
from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import spark_probe
from common import DATA_DIR, Case, Measure

_FG, _PART, _TASK, _KEY = "_floor_file_id", "_floor_partition", "_floor_task", "_floor_key"
INSTANT = "20260101000000000"


# ---- CPU time of this process and everything under it -----------------------------------------------------------

def _tree_cpu_s() -> float:
    """utime + stime (and those of reaped children) of this process and all its descendants, seconds."""
    stats, tick, me = spark_probe.process_stats(), os.sysconf("SC_CLK_TCK"), os.getpid()
    return sum(sum(int(x) for x in fields[11:15]) / tick for pid, fields in stats.items()
               if spark_probe.descends_from(pid, me, stats))


def cpu_timed(cpu: dict[str, list[float]], name: str, f: Callable[[str], dict | None]) -> Callable[[str], dict]:
    """`f` as a case's run that also records its CPU time (`_tree_cpu_s`) under `cpu[name]`, warm-ups left out."""
    def run_case(tag: str) -> dict:
        c0 = _tree_cpu_s()
        extra = f(tag) or {}
        c = _tree_cpu_s() - c0
        if not tag.endswith("-warm"):
            cpu.setdefault(name, []).append(c)
        return {**extra, "cpu_s": round(c, 3)}
    return run_case


# ---- routing (untimed) --------------------------------------------------------------------------------------------

def route(table_dir: Path, batch: pa.Table, n_tasks: int) -> pa.Table:
    """`batch` with its file group, partition path, record key and task: an update goes to the file group whose base
    file holds its key, a partition's inserts to one new file group; file groups dealt to tasks largest first."""
    from hudi_engine.file_naming import BaseFileName

    held: list[pa.Table] = []
    for f in sorted(table_dir.rglob("*.parquet")):
        if ".hoodie" in f.parts:
            continue
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0)
        n = len(keys)
        held.append(pa.table({_KEY: keys, _FG: pa.repeat(pa.scalar(BaseFileName.parse(f.name).file_id), n),
                              _PART: pa.repeat(pa.scalar(str(f.parent.relative_to(table_dir))), n)}))
    stored = pa.concat_tables(held).combine_chunks()
    keys = pc.cast(batch.column("id"), pa.string())
    at = pc.index_in(keys, value_set=stored.column(_KEY))
    found = pc.is_valid(at).to_numpy(zero_copy_only=False)
    fg = np.asarray(stored.column(_FG).take(pc.fill_null(at, 0)).to_pylist(), dtype=object)
    part = np.asarray(batch.column("dt").to_pylist(), dtype=object)  # W1: partition path = dt
    new_groups = {p: f"{i:08x}-0000-4000-8000-{41:012x}" for i, p in enumerate(sorted(set(part[~found])))}
    fg[~found] = [new_groups[p] for p in part[~found]]
    sizes: dict[str, int] = {}
    for g in fg:
        sizes[g] = sizes.get(g, 0) + 1
    load = [0] * n_tasks
    task_of: dict[str, int] = {}
    for g, n in sorted(sizes.items(), key=lambda kv: -kv[1]):
        t = int(np.argmin(load))
        task_of[g] = t
        load[t] += n
    return batch.append_column(_FG, pa.array(fg.tolist(), pa.string())) \
        .append_column(_PART, pa.array(part.tolist(), pa.string())) \
        .append_column(_KEY, keys) \
        .append_column(_TASK, pa.array([task_of[g] for g in fg], pa.int32()))


# ---- the floor's task ----------------------------------------------------------------------------------------------

class FloorFn:
    """A Spark task of the floor: its rows arrive sorted by file group; each group's become one log file of Avro data
    blocks (the engine's meta columns and log-block writer), written under `out_dir`."""

    def __init__(self, out_dir: str, table_name: str) -> None:
        self.out_dir, self.table_name = out_dir, table_name

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from hudi_engine.config.write_config import LogConfig
        from hudi_engine.file_naming import LogFileName
        from hudi_engine.io.log_format import encode_log_file
        from hudi_engine.schema import add_meta_fields, arrow_to_avro_schema, avro_to_arrow_schema
        from hudi_engine.write.handles.append import avro_data_blocks
        from hudi_engine.write.handles.records import conform, prepare_records

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx else 0
        table = pa.Table.from_batches(list(batches))
        paths, sizes = [], []
        if table.num_rows:
            data_schema = table.select([c for c in table.column_names if not c.startswith("_floor_")]).schema
            avro = add_meta_fields(arrow_to_avro_schema(data_schema, self.table_name, with_meta=False))
            arrow = avro_to_arrow_schema(avro)
            block_max = LogConfig().block_max_size
            fg = table.column(_FG)
            cuts = np.flatnonzero(pc.not_equal(fg.slice(1), fg.slice(0, len(fg) - 1)).to_numpy(zero_copy_only=False))
            for start, end in zip(np.r_[0, cuts + 1], np.r_[cuts + 1, table.num_rows]):
                rows = table.slice(int(start), int(end - start))
                file_id, partition = rows.column(_FG)[0].as_py(), rows.column(_PART)[0].as_py()
                records = rows.rename_columns([("_hoodie_record_key" if c == _KEY else c) for c in rows.column_names])
                prepared = conform(prepare_records(records.drop_columns([_FG, _PART, _TASK]), instant=INSTANT,
                                                   partition_path=partition, file_name=file_id,
                                                   task_partition_id=task), arrow, "floor records")
                data = encode_log_file(avro_data_blocks(prepared, avro, INSTANT, block_max))
                name = str(LogFileName(file_id, INSTANT, 1, f"{task}-0-0"))
                d = Path(self.out_dir) / partition
                d.mkdir(parents=True, exist_ok=True)
                with open(d / name, "wb") as f:
                    f.write(data)
                paths.append(f"{partition}/{name}")
                sizes.append(len(data))
        yield pa.RecordBatch.from_arrays([pa.array(paths, pa.string()), pa.array(sizes, pa.int64())],
                                         names=["path", "bytes"])


# ---- run ----------------------------------------------------------------------------------------------------------

def run(repeats: int) -> dict:
    from pyspark.sql import functions as F

    from hudi_engine.spark import write

    base = DATA_DIR / "mor_floor"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    spark = common.spark_session()
    pristine, work, floor_dir = base / "pristine_hudi_mor", base / "work_mor", base / "floor_logs"
    print("setting up the W1 MOR table (Spark bulk_insert, untimed)", flush=True)
    write(spark.read.parquet(str(src)), str(common.fresh(pristine)), common.hudi_options("MERGE_ON_READ", "bulk_insert"))
    bdf = common.cached_df(spark, bdir)
    expect = (common.INSERTS, common.UPDATES)
    tasks: list[int] = []

    def engine(_tag: str) -> dict:
        r = write(bdf, str(work), common.hudi_options("MERGE_ON_READ", "upsert"))
        if (r.records_inserted, r.records_updated) != expect:
            raise RuntimeError(f"engine MOR upsert: inserted/updated {(r.records_inserted, r.records_updated)}, "
                               f"expected {expect}")
        tasks.append(r.tasks)
        return {"tasks": r.tasks, "files_appended": r.files_appended, "files_created": r.files_created,
                "bytes_written": r.bytes_written}

    # The engine's write once (untimed) for the number of write tasks the floor uses.
    common.copy_table(pristine, work)
    engine("probe")
    n_tasks = max(1, tasks[-1])
    routed = route(pristine, common.read_source(bdir), n_tasks)
    routed_dir = common.fresh(base / "routed_batch")
    routed_dir.mkdir(parents=True)
    pq.write_table(routed, routed_dir / "part-0000.parquet")
    fdf = common.cached_df(spark, routed_dir)
    fn = FloorFn(str(floor_dir), "bench")

    def floor(_tag: str) -> dict:
        out = (fdf.repartitionById(n_tasks, F.col(_TASK)).sortWithinPartitions(_FG)
               .mapInArrow(fn, "path string, bytes long").collect())
        return {"tasks": n_tasks, "files": len(out), "bytes_written": sum(r["bytes"] for r in out)}

    cpu: dict[str, list[float]] = {}
    timed = partial(cpu_timed, cpu)

    print(f"engine MOR upsert vs its floor (log blocks of the routed batch), {n_tasks} Spark tasks each", flush=True)
    results = common.interleaved([
        Case("engine", timed("engine", engine), setup=lambda _: common.copy_table(pristine, work)),
        Case("floor", timed("floor", floor), setup=lambda _: common.fresh(floor_dir)),
    ], repeats, alternate=True)
    spark.stop()
    return {"results": results, "cpu": cpu, "n_tasks": n_tasks, "cold": common.warmups(results)}


def report(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    e, f = res["engine"], res["floor"]
    ce, cf = out["cpu"]["engine"], out["cpu"]["floor"]
    me, mf = statistics.median(ce), statistics.median(cf)
    ee, ef = e.extra[-1], f.extra[-1]
    lines = [f"W1 MOR upsert (100,000 updates + 10,000 inserts into 1,000,000 rows) beside its floor, "
             f"{out['n_tasks']} Spark tasks each; load average before {tuple(round(x, 2) for x in out['load_before'])}, "
             f"after {tuple(round(x, 2) for x in out['load_after'])}", "",
             "| | wall: median (runs) | CPU: median (runs) | files, bytes |", "|---|---|---|---|",
             f"| engine: `hudi_engine.spark.write` MOR upsert | {e.runs()} | {me:.2f} s "
             f"({', '.join(f'{c:.2f}' for c in ce)}) | {ee.get('files_appended', 0)} log files appended, "
             f"{ee.get('files_created', 0)} base files created, {ee.get('bytes_written', 0) / 1e6:.1f} MB |",
             f"| floor: the batch's log blocks, routed beforehand | {f.runs()} | {mf:.2f} s "
             f"({', '.join(f'{c:.2f}' for c in cf)}) | {ef.get('files', 0)} log files, "
             f"{ef.get('bytes_written', 0) / 1e6:.1f} MB |",
             f"| **engine / floor** | **{e.median / f.median:.2f}x** | **{me / mf:.2f}x** | |"]
    if out.get("cold"):
        lines.append("\nWarm-up runs (not in the medians): " + ", ".join(f"{k} {v:.2f} s" for k, v in out["cold"].items()))
    return "\n".join(lines)


def main() -> None:
    ap = common.arg_parser(__doc__)
    args = ap.parse_args()
    common.bench_main("mor_floor", lambda: run(args.repeats), report)


if __name__ == "__main__":
    main()
