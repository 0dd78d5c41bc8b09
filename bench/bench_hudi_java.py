"""Writes beside real Apache Hudi (issue 40, item 4): the engine's Spark write and Hudi's own Spark writer
(`df.write.format("hudi")`, the release's bundle on the pyspark it was built for), same source parquet, same run.

This is what a dbt-spark user with the Hudi jar gets today. Real Hudi runs in its own process
(bench/hudi_java_writer.py under the release's Python, prepared by tests/java_hudi/env.py: pinned bundle, pyspark,
Java 17), with the same Spark settings as the engine's session (master, driver memory, shuffle partitions).

W1 (1,000,000 rows, 10 partitions; bench/common.py):
  first_bulk    first write, `bulk_insert` (COW)
  first_upsert  first write with Hudi's default operation, `upsert` (COW)
  cow           upsert of W1's batch (100,000 updates + 10,000 inserts) into the W1 COW table
  mor           the same upsert into the W1 MOR table
W3a (`--workloads w3a`, scaled by `--w3-scale`, default 0.2): an unpartitioned table of 10M x scale rows upserted
with 2M x scale updates + 200k x scale inserts (bench_w3.py's W3a at a smaller size).
W3b (`--workloads w3b`, the same scale): bench_w3.py's 30 days of 300k x scale rows (partitioned by `dt`) taking a
new day of 5M x scale rows and 100k x scale updates of the last day.

Real Hudi runs with two settings profiles (PROFILES): Hudi's defaults, and the settings Hudi's docs recommend for a
small machine. The engine runs its defaults. Each upsert starts from a copy (untimed) of a table written by the same
writer (the engine's or Java Hudi's own, per profile). Timing on both sides: from a cached, counted DataFrame of the
same parquet files to the completed commit (the engine: `hudi_engine.spark.write(...)`; Hudi:
`df.write.format("hudi")...save(path)`, timed inside its process). One untimed warm-up, then the median of
BENCH_REPEATS (3) runs, interleaved. After the runs every table is read back with the engine and its row count and
sums compared with the engine's table of the same case, so no figure times a wrong write.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "java_hudi"))

import common
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import spark_probe
from common import DATA_DIR, Case, Measure, RssSampler
from spark_probe import job_group_tasks

# Hudi's docs for a small machine. Tuning guide (https://hudi.apache.org/docs/tuning-guide): shuffle parallelism
# `hoodie.[insert|upsert|bulkinsert].shuffle.parallelism` "at least input_data_size/500MB" -- the inputs here are
# well under 500 MB, so one task per core. Write configs (https://hudi.apache.org/docs/configurations,
# `hoodie.bulkinsert.sort.mode`): NONE is "Fastest and matches `spark.write.parquet()` in terms of number of files,
# overheads". The metadata table (https://hudi.apache.org/docs/metadata) exists to avoid file listings on large
# tables and cloud storage; a 10-partition local table lists in milliseconds, and the engine writes none, so the
# profile turns it off; the embedded timeline server serves file-system views to executors of a cluster, which a
# single local JVM does not have. SIMPLE index and the row writer for bulk_insert are Hudi's defaults on Spark already.
PROFILES: dict[str, dict[str, str]] = {
    "defaults": {},
    "small": {
        "hoodie.metadata.enable": "false",
        "hoodie.embed.timeline.server": "false",
        "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.bulkinsert.sort.mode": "NONE",
        "hoodie.index.type": "SIMPLE",
        "hoodie.datasource.write.row.writer.enable": "true",
    },
}
# The table version each release writes by default: the engine writes the same one.
RELEASE_TABLE_VERSION = {"1.2.0": 9, "0.15.0": 6}


# ---- real Hudi's process --------------------------------------------------------------------------------------

class JavaWriter:
    """bench/hudi_java_writer.py under the release's Python: one Spark session with the release's bundle."""

    def __init__(self, release: str) -> None:
        from env import prepare  # tests/java_hudi/env.py: cached jar, pyspark venv, Java 17

        (r,) = prepare([release])
        self.release = r
        self.workdir = tempfile.mkdtemp(prefix="hudi-bench-java-")
        config = {"hudi": r.hudi, "jar": r.jar, "workdir": self.workdir,
                  "master": os.environ.get("BENCH_MASTER", "local[*]"), "conf": dict(common.SPARK_CONF)}
        env = {**os.environ, "JAVA_HOME": r.java_home, "PYSPARK_PYTHON": r.python,
               "PYSPARK_DRIVER_PYTHON": r.python, "PATH": f"{r.java_home}/bin:{os.environ.get('PATH', '')}"}
        env.pop("PYTHONPATH", None)
        env.pop("SPARK_HOME", None)
        self.log = open(Path(self.workdir) / "java.log", "w")  # noqa: SIM115 - open while the process runs
        self.proc = subprocess.Popen([r.python, str(Path(__file__).with_name("hudi_java_writer.py")),
                                      json.dumps(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env, cwd=self.workdir)
        hello = self._answer()
        self.spark_version, self.jvm_pid = hello["spark"], hello["jvm_pid"]

    def _answer(self) -> dict:
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise RuntimeError(f"Hudi {self.release.hudi} process ended; its log: {self.log.name}")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"Hudi {self.release.hudi}: {answer.get('error')}\n{answer.get('trace', '')}")
        return answer

    def request(self, **req) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def write(self, name: str, path: Path, options: dict[str, str], mode: str, label: str) -> dict:
        return self.request(op="write", name=name, path=str(path), options=options, mode=mode, label=label)

    def stop(self) -> None:
        try:
            self.request(op="stop")
        except (RuntimeError, OSError, ValueError):
            pass
        self.proc.wait(timeout=120)
        self.log.close()


# ---- the engine's side --------------------------------------------------------------------------------------

def engine_write(spark, df, path: Path, options: dict[str, str], label: str, jvm: int | None,
                 expect: tuple[int, int]) -> dict:
    from hudi_engine.spark import write

    sc = spark.sparkContext
    sc.setJobGroup(label, label)
    try:
        with RssSampler(jvm) as rss:
            r = write(df, str(path), options)
    finally:
        sc._jsc.clearJobGroup()
    if (r.records_inserted, r.records_updated) != expect:
        raise RuntimeError(f"{label}: inserted/updated {(r.records_inserted, r.records_updated)}, expected {expect}")
    jobs, tasks = job_group_tasks(sc, label)
    return {"jobs": jobs, "tasks": tasks, "tasks_that_wrote": r.tasks, "worker_peak_rss_mb": round(rss.worker_peak),
            "jvm_peak_rss_mb": round(rss.other_peak), "driver_peak_rss_mb": round(rss.peak)}


# ---- checks ---------------------------------------------------------------------------------------------------

def table_version(path: Path) -> int:
    props = (path / ".hoodie" / "hoodie.properties").read_text().splitlines()
    return int(next(p.split("=", 1)[1] for p in props if p.startswith("hoodie.table.version=")))


def summary(path: Path) -> dict:
    """Row count and exact sums of the table's latest snapshot, read with the engine."""
    from hudi_engine import HudiTable

    t = HudiTable.load(str(path)).read_snapshot()
    cents = pc.cast(pc.round(pc.multiply(t["price"], 100)), pa.int64())
    return {"rows": t.num_rows, "distinct_ids": pc.count_distinct(t["id"]).as_py(),
            "sum_price_cents": pc.sum(cents).as_py(), "sum_qty": pc.sum(pc.cast(t["qty"], pa.int64())).as_py(),
            "max_ts": str(pc.max(t["ts"]).as_py()), "partitions": pc.count_distinct(t["dt"]).as_py()}


def check_same(ours: Path, java: dict[str, Path], what: str) -> dict:
    want = summary(ours)
    for name, path in java.items():
        got = summary(path)
        if got != want:
            raise RuntimeError(f"{what}: the table Java Hudi ({name}) wrote reads {got}, the engine's {want}")
    print(f"  check {what}: every table reads {want}", flush=True)
    return want


# ---- workloads ----------------------------------------------------------------------------------------------

def w3a_sources(scale: float) -> tuple[Path, Path, int, int, int]:
    """bench_w3.py's W3a at `scale`: the first 10M x scale rows of W2, unpartitioned; 2M x scale updates of its ids
    and 200k x scale new ids."""
    rows = int(common.W2_ROWS * scale) // common.CHUNK * common.CHUNK
    updates, inserts = int(2_000_000 * scale), int(200_000 * scale)
    src = common.source_dir(rows)
    d = DATA_DIR / "source" / f"w3a_batch_{rows}"
    if not (d / "_DONE").exists():
        d.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng([common.SEED, 5000, rows])
        upd = np.sort(rng.choice(rows, updates, replace=False)).astype(np.int64)
        ins = np.arange(2 * common.INSERT_ID_BASE, 2 * common.INSERT_ID_BASE + inserts, dtype=np.int64)
        pq.write_table(common._rows(np.concatenate([upd, ins]), rng, common._UPDATE_TS), d / "part-0000.parquet")
        (d / "_DONE").write_text("ok\n")
    return src, d, rows, updates, inserts


def run(release: str, profiles: list[str], cases: list[str], workloads: list[str], scale: float,
        repeats: int, upsert_warmup: bool) -> dict:
    version = RELEASE_TABLE_VERSION[release]
    base = DATA_DIR / "hudi_java"
    results: dict[str, Measure] = {}
    checks: dict[str, dict] = {}
    setup_s: dict[str, float] = {}
    java = JavaWriter(release)
    print(f"Hudi {release} process: Spark {java.spark_version}, JVM pid {java.jvm_pid}", flush=True)
    spark = common.spark_session()
    jvm = spark_probe.jvm_pid()
    print(f"engine's Spark session: JVM pid {jvm}", flush=True)

    def opts(table_type: str, operation: str, profile: str | None, partitioned: bool = True) -> dict[str, str]:
        o = common.hudi_options(table_type, operation)
        if not partitioned:
            o.pop("hoodie.datasource.write.partitionpath.field")
            o["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        if profile is None:  # the engine
            o["hoodie.write.table.version"] = str(version)
            o.pop("hoodie.datasource.write.keygenerator.class", None)
        else:
            o.update(PROFILES[profile])
        return o

    def java_case(name: str, frame: str, path: Path, o: dict[str, str], mode: str, setup) -> Case:
        def run_(tag: str) -> dict:
            a = java.write(frame, path, o, mode, tag)
            if table_version(path) != version:
                raise RuntimeError(f"{tag}: Hudi {release} wrote table version {table_version(path)}, "
                                   f"expected {version}")
            # The timer that counts is the one inside Hudi's process (no request round trip).
            return {"seconds": a["seconds"], "jobs": a["jobs"], "tasks": a["tasks"],
                    "jvm_peak_rss_mb": round(a["jvm_peak_rss_mb"])}
        return Case(name, run_, setup=setup)

    def timed(cs: list[Case], what: str, warmup: bool) -> None:
        """`warmup`: one untimed round first; the upserts skip it unless `upsert_warmup` (the untimed setup
        bulk_inserts have warmed both JVMs and the Python workers by then)."""
        print(what, flush=True)
        ms = common.interleaved(cs, repeats, warmup=warmup or upsert_warmup)
        for m in ms.values():  # Hudi's process timed its own write: use that figure, not the round trip's
            if m.extra and "seconds" in m.extra[0]:
                m.times = [e["seconds"] for e in m.extra]
        results.update(ms)
        # A partial record after every phase: a later failure on a shared machine keeps what was measured.
        common.save_results(f"hudi_java_{release}_partial", {
            "release": release, "profiles": {p: PROFILES[p] for p in profiles}, "cold": common.warmups(results),
            "results": results, "checks": checks, "setup_s": setup_s})

    def setup_table(key: str, fn) -> None:
        t = time.perf_counter()
        fn()
        setup_s[key] = round(time.perf_counter() - t, 1)

    def upsert(name: str, tt: str, partitioned: bool, df, frame: str, bdf, batch_frame: str,
               rows: tuple[int, int], expect: tuple[int, int], what: str) -> None:
        """Each writer bulk_inserts its own table (untimed), then upserts the batch into a fresh copy of it."""
        print(f"{what}: setting up the tables, each writer its own (untimed)", flush=True)
        p_ours = common.fresh(base / f"pristine_{name}_engine")
        setup_table(f"{name}_engine", lambda: engine_write(spark, df, p_ours, opts(tt, "bulk_insert", None, partitioned),
                                                           "setup", jvm, rows))
        pristine = {p: common.fresh(base / f"pristine_{name}_java_{p}") for p in profiles}
        for p in profiles:
            setup_table(f"{name}_java_{p}", lambda p=p: java.write(
                frame, pristine[p], opts(tt, "bulk_insert", p, partitioned), "overwrite", "setup"))
        work_ours = base / f"work_{name}_engine"
        work = {p: base / f"work_{name}_java_{p}" for p in profiles}
        cs = [Case(f"{name}_upsert_engine", lambda tag: engine_write(
            spark, bdf, work_ours, opts(tt, "upsert", None, partitioned), tag, jvm, expect),
            setup=lambda _: common.copy_table(p_ours, work_ours))]
        cs += [java_case(f"{name}_upsert_java_{p}", batch_frame, work[p], opts(tt, "upsert", p, partitioned),
                         "append", lambda _, p=p: common.copy_table(pristine[p], work[p]))
               for p in profiles]
        timed(cs, f"{what}, each run on a fresh copy", warmup=False)
        checks[f"{name}_upsert"] = check_same(work_ours, work, what)

    if "w1" in workloads:
        src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
        df, bdf = common.cached_df(spark, src), common.cached_df(spark, bdir)
        java.request(op="cache", name="w1", src=str(src))
        java.request(op="cache", name="w1_batch", src=str(bdir))
        w1_rows = (common.W1_ROWS, 0)
        for kind, op in (("bulk", "bulk_insert"), ("upsert", "upsert")):
            if f"first_{kind}" not in cases:
                continue
            ours = base / f"first_{kind}_engine"
            cs = [Case(f"first_{kind}_engine", lambda tag, ours=ours, op=op: engine_write(
                spark, df, ours, opts("COPY_ON_WRITE", op, None), tag, jvm, w1_rows),
                setup=lambda _, ours=ours: common.fresh(ours))]
            paths = {}
            for p in profiles:
                paths[p] = base / f"first_{kind}_java_{p}"
                cs.append(java_case(f"first_{kind}_java_{p}", "w1", paths[p], opts("COPY_ON_WRITE", op, p),
                                    "overwrite", lambda _, path=paths[p]: common.fresh(path)))
            timed(cs, f"W1 first write, {common.W1_ROWS:,} rows, {op} (COW)", warmup=True)
            checks[f"first_{kind}"] = check_same(ours, paths, f"first write ({op})")
        for tt, short in (("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")):
            if short in cases:
                upsert(short, tt, True, df, "w1", bdf, "w1_batch", w1_rows, (common.INSERTS, common.UPDATES),
                       f"W1 {short.upper()} upsert: {common.UPDATES:,} updates + {common.INSERTS:,} inserts")
        df.unpersist()
        bdf.unpersist()

    def w3_upsert(name: str, what: str, partitioned: bool, src: Path, bdir: Path, rows: int, inserts: int,
                  updates: int) -> None:
        """A W3 upsert: each writer's copy of the table at `src` takes the batch at `bdir`."""
        df = spark.read.parquet(str(src))
        bdf = common.cached_df(spark, bdir)
        java.request(op="cache", name=f"{name}_batch", src=str(bdir))
        java.request(op="cache", name=name, src=str(src))
        upsert(name, "COPY_ON_WRITE", partitioned, df, name, bdf, f"{name}_batch", (rows, 0), (inserts, updates),
               what)
        bdf.unpersist()

    if "w3a" in workloads:
        src, bdir, rows, updates, inserts = w3a_sources(scale)
        print(f"W3a at scale {scale}: unpartitioned {rows:,} rows, upsert {updates:,} updates + {inserts:,} inserts",
              flush=True)
        w3_upsert("w3a", "W3a upsert", False, src, bdir, rows, inserts, updates)
    if "w3b" in workloads:
        import bench_w3
        rows = bench_w3.DAYS * bench_w3.scaled(bench_w3.DAY_ROWS, scale)
        inserts, updates = bench_w3.scaled(5_000_000, scale), bench_w3.scaled(bench_w3.W3B_UPDATES, scale)
        print(f"W3b at scale {scale}: {bench_w3.DAYS} days, {rows:,} rows; a new day of {inserts:,} rows + "
              f"{updates:,} updates of the last day", flush=True)
        w3_upsert("w3b", "W3b upsert", True, bench_w3.w3b_source(scale), bench_w3.w3b_batch(inserts, scale), rows,
                  inserts, updates)
    spark.stop()
    java.stop()
    return {"release": release, "table_version": version, "profiles": {p: PROFILES[p] for p in profiles},
            "results": results, "cold": common.warmups(results), "checks": checks, "setup_s": setup_s, "scale": scale,
            "maxrss_mb": common.maxrss_mb()}


# ---- report ------------------------------------------------------------------------------------------------

LABELS = {"first_bulk": "W1 first write, bulk_insert (COW)", "first_upsert": "W1 first write, upsert (COW)",
          "cow_upsert": "W1 COW upsert", "mor_upsert": "W1 MOR upsert", "w3a_upsert": "W3a upsert (scaled)",
          "w3b_upsert": "W3b upsert (scaled)"}


def report(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    profiles = list(out["profiles"])
    med = lambda m, k: float(np.median([e.get(k, 0) for e in m.extra]))  # noqa: E731
    head = " | ".join(f"Hudi {out['release']} {p} | ours/{p}" for p in profiles)
    lines = [f"| write | engine: median (runs) | {head} |", "|---|---|" + "---|---|" * len(profiles)]
    for stem, label in LABELS.items():
        ours = res.get(f"{stem}_engine")
        if ours is None:
            continue
        cells = []
        for p in profiles:
            j = res[f"{stem}_java_{p}"]
            per_round = sorted(o / t for o, t in zip(ours.times, j.times))  # the rounds ran side by side
            cells.append(f"{j.runs()} | **{ours.median / j.median:.2f}x** "
                         f"(rounds {per_round[0]:.2f}-{per_round[-1]:.2f}x)")
        lines.append(f"| {label} | {ours.runs()} | {' | '.join(cells)} |")
    lines += ["", "| write | Spark jobs / tasks | tasks that wrote | Spark JVM peak RSS | Python worker peak RSS |",
              "|---|---|---|---|---|"]
    for name, m in res.items():
        engine = name.endswith("_engine")
        wrote = f"{med(m, 'tasks_that_wrote'):.0f}" if engine else "n/a"
        workers = f"{med(m, 'worker_peak_rss_mb'):.0f} MB" if engine else "none (JVM only)"
        lines.append(f"| {name} | {med(m, 'jobs'):.0f} / {med(m, 'tasks'):.0f} | {wrote} | "
                     f"{med(m, 'jvm_peak_rss_mb'):.0f} MB | {workers} |")
    text = "\n".join(lines)
    text += "\n\nWarm-up runs (untimed; Hudi's: the request's round trip): " + ", ".join(
        f"{k} {v:.1f} s" for k, v in out["cold"].items())
    text += "\n\nSetup bulk_insert of the upserts' tables (untimed): " + ", ".join(
        f"{k} {v:.0f} s" for k, v in out["setup_s"].items())
    text += "\n\nChecks (every writer's table read back with the engine): " + "; ".join(
        f"{k}: {v['rows']:,} rows, sum(price) {v['sum_price_cents'] / 100:,.2f}" for k, v in out["checks"].items())
    return text


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--release", default="1.2.0", choices=sorted(RELEASE_TABLE_VERSION))
    ap.add_argument("--profiles", default="defaults,small")
    ap.add_argument("--cases", default="first_bulk,cow,mor", help="W1 cases: first_bulk,first_upsert,cow,mor")
    ap.add_argument("--workloads", default="w1")
    ap.add_argument("--w3-scale", type=float, default=0.2)
    ap.add_argument("--upsert-warmup", action="store_true", help="an untimed warm-up round before the upserts too")
    ap.add_argument("--report", type=Path, help="print the tables of a results JSON (a partial one too) and stop")
    args = ap.parse_args()
    split = lambda s: [x.strip() for x in s.split(",") if x.strip()]  # noqa: E731
    if args.report:
        saved = json.loads(args.report.read_text())
        saved["results"] = {k: Measure(k, v["times_s"], v["extra"]) for k, v in saved["results"].items()}
        saved.setdefault("release", args.release)
        saved.setdefault("cold", {})
        saved.setdefault("profiles", {p: PROFILES[p] for p in split(args.profiles)})
        print(report(saved))
        return

    def with_load(out: dict) -> str:
        return report(out) + f"\n\nLoad average (1, 5, 15 min): before {out['load_before']}, after {out['load_after']}."

    common.bench_main(f"hudi_java_{args.release}", lambda: run(
        args.release, split(args.profiles), split(args.cases), split(args.workloads), args.w3_scale, args.repeats,
        args.upsert_warmup), with_load)


if __name__ == "__main__":
    main()
