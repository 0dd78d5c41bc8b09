"""Spark SQL read benchmark (issue 12): Hudi tables read from Spark, beside Spark's own parquet reader on the same
base files, in one process and one run.

Tables (W1, 1,000,000 rows, 10 partitions), made first by a child process:
  cow     `bulk_insert` as COPY_ON_WRITE (13 base files).
  mor10   `bulk_insert` as MERGE_ON_READ with 1.25 MB files (about 40 file groups), then an upsert of the batch's
          updates whose ids fall in every 10th file group: 10% of the slices carry a log file.
  cow_inc `bulk_insert` as COPY_ON_WRITE, then an upsert of the batch's updates in one partition.

Queries (the issue's three; `amount` is W1's `price`):
  agg   groupBy(dt).agg(sum(price), max(qty))
  point filter(qty = 7).select(id, price)
  part  filter(dt = '2024-01-03').agg(sum(price))

Readers, each timed from building the DataFrame to the collected result:
  parquet      spark.read.parquet(<the latest base files>) (the peer; on mor10 it reads the base files without
               their logs, i.e. what the slices cost without merging)
  read_table   hudi_engine.spark.relation.read_table(spark, path): what dbt's ref() and {{ this }} read
  hudi_source  spark.read.format("hudi").load(path): what SQL on the catalog table reads (context)
  ro           read_table(..., read_optimized) on mor10: base files only (context)
Incremental (cow_inc): the pull of the upsert's commit, `read_table` with the incremental options, against a full
scan (the same rows from the `read_table` snapshot by a filter on `cast(_hoodie_commit_time as bigint)`, which
neither slice pruning nor row-group statistics apply to) and against the hudi source filtered on
`_hoodie_commit_time > begin` (its slices pruned by commit time); each counts the commit's rows; the files each
planned to read are reported.

Every reader's result is checked against the peer's (counts and sums; on mor10 the merged values differ from the
stale base files by design, so read_table is checked against hudi_source there). Medians of BENCH_REPEATS (3)
interleaved rounds after one warm-up.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import pyarrow.compute as pc
import pyarrow.parquet as pq
from common import DATA_DIR, Case

TABLES = {"cow": DATA_DIR / "spark_read" / "cow", "mor10": DATA_DIR / "spark_read" / "mor10",
          "cow_inc": DATA_DIR / "spark_read" / "cow_inc"}
SMALL_FILES = "1250000"
PARTITION = common.DATES[2]


def make_tables() -> None:
    """Child process: the three tables (see the module docstring)."""
    from hudi_engine import HudiTable
    from hudi_engine.spark import write

    spark = common.spark_session()
    df = spark.read.parquet(str(common.source_dir(common.W1_ROWS)))
    updates = spark.read.parquet(str(common.batch_dir())).where(f"id < {common.INSERT_ID_BASE}")
    cow = write(df, str(common.fresh(TABLES["cow"])), common.hudi_options("COPY_ON_WRITE", "bulk_insert"))
    print(f"  cow: {cow.files_created} files", flush=True)

    mor = str(common.fresh(TABLES["mor10"]))
    write(df, mor, {**common.hudi_options("MERGE_ON_READ", "bulk_insert"), "hoodie.parquet.max.file.size": SMALL_FILES,
                    "hoodie.parquet.small.file.limit": "0"})
    slices = sorted(HudiTable.load(mor).file_slices(), key=lambda s: (s.partition_path, s.file_id))
    chosen = slices[::10]
    ids = pc.unique(pq.read_table([s.base_file.path for s in chosen], columns=["id"]).column("id")).to_pylist()
    r = write(updates.where(updates.id.isin(ids)), mor, common.hudi_options("MERGE_ON_READ", "upsert"))
    logged = sum(1 for s in HudiTable.load(mor).file_slices() if s.log_files)
    if logged != len(chosen) or r.files_created:
        raise RuntimeError(f"mor10: {logged} slices with logs, {r.files_created} new files; expected {len(chosen)}, 0")
    print(f"  mor10: {len(slices)} file groups, {logged} with a log file ({r.records_updated} updates)", flush=True)

    inc = str(common.fresh(TABLES["cow_inc"]))
    write(df, inc, common.hudi_options("COPY_ON_WRITE", "bulk_insert"))
    r = write(updates.where(f"dt = '{PARTITION}'"), inc, common.hudi_options("COPY_ON_WRITE", "upsert"))
    print(f"  cow_inc: upsert of {r.records_updated} updates in {PARTITION}: {r.files_rewritten} files", flush=True)
    spark.stop()


QUERIES = {
    "agg": lambda d: d.groupBy("dt").agg({"price": "sum", "qty": "max"}).collect(),
    "point": lambda d: d.filter("qty = 7").select("id", "price").collect(),
    "part": lambda d: d.filter(f"dt = '{PARTITION}'").agg({"price": "sum"}).collect(),
}


def _digest(rows) -> tuple:
    """Order-free summary of a result, to check two readers agree."""
    values = sorted(tuple(round(v, 4) if isinstance(v, float) else v for v in r) for r in rows)
    return (len(values), tuple(values[:3]), tuple(values[-3:]))


def _readers(spark, name: str, path: str, files: list[str]) -> dict:
    from hudi_engine.spark.datasource import QUERY_TYPE
    from hudi_engine.spark.relation import read_table

    readers = {
        "parquet": lambda: spark.read.parquet(*files),
        "read_table": lambda: read_table(spark, path),
        "hudi_source": lambda: spark.read.format("hudi").load(path),
    }
    if name == "mor10":
        readers["ro"] = lambda: read_table(spark, path, {QUERY_TYPE: "read_optimized"})
    return readers


def _case(prefix: str, reader: str, make, query, seen: dict) -> Case:
    """Build the DataFrame and run the query; the result must be the same in every run."""
    def go(_: str) -> dict:
        digest = _digest(query(make()))
        if seen.setdefault(reader, digest) != digest:
            raise RuntimeError(f"{prefix} {reader}: results differ between runs")
        return {}
    return Case(f"{prefix}_{reader}", go)


def run(repeats: int) -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import register_data_source
    from hudi_engine.spark.datasource import BEGIN_INSTANT, END_INSTANT, QUERY_TYPE, ReadOptions
    from hudi_engine.spark.relation import plan_read, read_table

    spark = common.spark_session()
    register_data_source(spark)
    results: dict[str, common.Measure] = {}
    facts: dict[str, dict] = {}
    for name in ("cow", "mor10"):
        path = str(TABLES[name])
        files = sorted(s.base_file.path for s in HudiTable.load(path).file_slices() if s.base_file is not None)
        plan = plan_read(HudiTable.load(path), ReadOptions.parse({"path": path}))
        facts[name] = {"base_files": len(files), "native": len(plan.native_files), "merged": len(plan.merged_groups),
                       "split": len(plan.split_groups),
                       "logged_keys": 0 if plan.split_keys is None else plan.split_keys.num_rows}
        print(f"{name}: {facts[name]}", flush=True)
        readers = _readers(spark, name, path, files)
        for qname, query in QUERIES.items():
            seen: dict[str, tuple] = {}
            cases = [_case(f"{name}_{qname}", reader, make, query, seen) for reader, make in readers.items()]
            results.update(common.interleaved(cases, repeats))
            # Same results: on cow every reader; on mor10 the merged readers, and read-optimized with parquet.
            pairs = [("read_table", "parquet"), ("hudi_source", "parquet")] if name == "cow" else \
                [("read_table", "hudi_source"), ("ro", "parquet")]
            for a, b in pairs:
                if seen[a] != seen[b]:
                    raise RuntimeError(f"{name} {qname}: {a} read {seen[a]}, {b} read {seen[b]}")

    # Incremental pull of one commit's changes vs a full scan.
    path = str(TABLES["cow_inc"])
    table = HudiTable.load(path)
    first, second = [c.timestamp for c in table.timeline.completed_commits()]
    options = {QUERY_TYPE: "incremental", BEGIN_INSTANT: first, END_INSTANT: second}
    inc_plan = plan_read(table, ReadOptions.parse({"path": path, **options}))
    full_plan = plan_read(table, ReadOptions.parse({"path": path}))
    expected = sum(s.num_update_writes for s in table.commit_metadata(table.timeline.completed_commits()[-1])
                   .write_stats())
    facts["incremental"] = {"files": len(inc_plan.native_files) + len(inc_plan.merged_groups),
                            "full_scan_files": len(full_plan.native_files) + len(full_plan.merged_groups),
                            "rows_expected": expected}
    print(f"incremental: {facts['incremental']}", flush=True)

    def pull(_: str) -> dict:
        n = read_table(spark, path, options).count()
        if n != expected:
            raise RuntimeError(f"incremental pull read {n} rows, the commit wrote {expected}")
        return {"rows": n}

    def full(_: str) -> dict:
        # The same rows, by a filter no pruning applies to: every base file is scanned.
        n = read_table(spark, path).where(f"cast(_hoodie_commit_time as bigint) > {int(first)}").count()
        if n != expected:
            raise RuntimeError(f"full scan found {n} rows, the commit wrote {expected}")
        return {"rows": n}

    source = spark.read.format("hudi").load(path).where(f"_hoodie_commit_time > '{first}'")
    facts["incremental"]["hudi_source_files"] = source.rdd.getNumPartitions()

    def by_source(_: str) -> dict:
        n = spark.read.format("hudi").load(path).where(f"_hoodie_commit_time > '{first}'").count()
        if n != expected:
            raise RuntimeError(f"hudi source found {n} rows, the commit wrote {expected}")
        return {"rows": n}

    results.update(common.interleaved([Case("inc_pull", pull), Case("inc_full_scan", full),
                                       Case("inc_hudi_source", by_source)], repeats))
    spark.stop()
    return {"results": results, "cold": common.warmups(results), "facts": facts}


def report(out: dict) -> str:
    res, facts = out["results"], out["facts"]

    def med(key: str) -> float:
        return res[key].median

    def runs(key: str) -> str:
        return res[key].runs()

    mor = facts["mor10"]
    lines = [f"Tables: cow {facts['cow']['base_files']} base files; mor10 {mor['base_files']} file groups, "
             f"{mor['split'] + mor['merged']} with a log file: {mor['native']} base files read by Spark's parquet "
             f"reader, {mor['split']} split by key ({mor['logged_keys']} logged keys merged by the hudi source, the "
             f"rest of their base files read by Spark), {mor['merged']} merged whole.",
             "",
             "| table, query | parquet (peer) | read_table | read_table / parquet | goal | hudi source | "
             "hudi source / parquet |",
             "|---|---|---|---|---|---|---|"]
    for name, goal in (("cow", 1.3), ("mor10", 2.0)):
        for q in QUERIES:
            peer, ours, src = (f"{name}_{q}_{r}" for r in ("parquet", "read_table", "hudi_source"))
            ratio = med(ours) / med(peer)
            verdict = "**met**" if ratio <= goal else "**missed**"
            lines.append(f"| {name} {q} | {runs(peer)} | {runs(ours)} | {ratio:.2f}x | <= {goal}x: {verdict} | "
                         f"{runs(src)} | {med(src) / med(peer):.2f}x |")
    for q in QUERIES:
        ro, peer = f"mor10_{q}_ro", f"mor10_{q}_parquet"
        ratio = med(ro) / med(peer)
        lines.append(f"| mor10 {q}, read-optimized (base files only) | {runs(peer)} | {runs(ro)} | {ratio:.2f}x | "
                     f"<= 1.3x: {'**met**' if ratio <= 1.3 else '**missed**'} | | |")
    inc = facts["incremental"]
    lines += ["", "| cow_inc | files planned | rows | time |", "|---|---|---|---|",
              f"| incremental pull of the upsert's commit | {inc['files']} | {inc['rows_expected']} | "
              f"{runs('inc_pull')} |",
              f"| full scan: read_table snapshot, a filter no pruning applies to | {inc['full_scan_files']} | "
              f"{inc['rows_expected']} | {runs('inc_full_scan')} |",
              f"| hudi source, `where _hoodie_commit_time > begin` (slices pruned by commit time) | "
              f"{inc['hudi_source_files']} | {inc['rows_expected']} | {runs('inc_hudi_source')} |",
              f"| ratio pull / full scan | | | {med('inc_pull') / med('inc_full_scan'):.2f}x |"]
    if out.get("cold"):
        lines += ["", "Warm-up runs (not in the medians): "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in out["cold"].items())]
    return "\n".join(lines)


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--reuse", action="store_true", help="reuse the tables of an earlier run if present")
    ap.add_argument("--make-tables", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make_tables:
        make_tables()
        return

    def made_and_run() -> dict:
        if not (args.reuse and all((p / ".hoodie").exists() for p in TABLES.values())):
            print("making the tables (child process with Spark)", flush=True)
            t = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--make-tables"], check=True)
            print(f"  {time.perf_counter() - t:.0f} s", flush=True)
        return run(args.repeats)

    common.bench_main("spark_read", made_and_run, report)


if __name__ == "__main__":
    main()
