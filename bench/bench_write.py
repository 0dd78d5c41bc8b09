"""Write benchmark (issue 3): `hudi_engine.spark.write` beside delta-rs on the same data, in one run.

W1 (default):
  first   first write of 1,000,000 rows: our bulk_insert (COW) vs `deltalake.write_deltalake` (partitioned by dt),
          and Spark's own parquet writer on the same DataFrame (`df.write.partitionBy("dt").parquet`): Spark's floor
          (issue 41: bulk_insert <= 1.2x of it); `--sort-modes GLOBAL_SORT,...`: the first write again with each
          `hoodie.bulkinsert.sort.mode` given, in the same rounds
  cow     upsert of 100,000 updates (all partitions) + 10,000 inserts into the W1 COW table vs delta-rs MERGE
  mor     the same upsert into the W1 MOR table vs the same delta-rs MERGE
  --driver: the cow / mor upserts also through `write_small`, which the dbt materialization calls (on the driver
          for an input Spark estimates under 16 MB, as W1's batch)
Each figure: one untimed warm-up, then the median of 3 (BENCH_REPEATS) runs; runs of the engines interleave so
load drift on the machine hits both. Hudi is timed from a cached, counted Spark DataFrame to the completed
instant (the whole `write(...)` call); delta-rs from an Arrow table in memory to its commit. Every upsert starts
from an identical copy of the table (copied untimed). Defaults on both sides: Hudi snappy parquet, SIMPLE index,
120 MB max file size; delta-rs defaults (snappy).

W2 (`--workload w2`): the same upsert batch into a 10,000,000-row MOR table beside the same batch into the
1,000,000-row one (cost should follow the batch), with the peak memory of the Python driver; the delta-rs peer
(MERGE into 1M and 10M-row tables) runs afterwards in a child process so the driver's memory figure is Hudi's.

`--table-version N` (6, 8, 9): W1's Hudi tables are of table version N (Hudi 1.x's timeline layout 2 for 8 and 9).
`--versions 6,9` (bench/run.sh write-v9): W1's first write and COW / MOR upserts on tables of each version, runs
interleaved in one session, reported as the ratio of each version to the first (issue 26's goal: v9 <= 1.1x v6).

`--profile`: the task-side code (keys and tags, plan, the create / merge / append handles, commit) run in this
process without Spark on the W1 upsert and bulk_insert (`hudi_engine.write.local_writer`), under cProfile.

`--phases w1_first,w1_cow,w1_mor,w3a,w3b --scale S [--w1-scale 1]` (bench/run.sh phases, issue 41): each write
through `hudi_engine.spark.write` on Spark, unprofiled and profiled in `--repeats` rounds after a warm-up: Spark's
Python UDF profiler on the tasks, cProfile on the driver, folded into named phases (tagging, the input's shuffle,
the base-file read, the merge, meta columns, Avro and parquet encoding, bloom filters, file I/O; the driver's plan,
Spark jobs and commit), with Spark's stages from the event log. `--scale` builds smaller W3a / W3b (and W1).

Spark's own breakdown: the event log of the run is parsed into the wall time of each `collect` in the writer
(per source line) and the shuffle bytes, per timed write.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import linecache
import pstats
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import spark_probe
from common import DATA_DIR, Case, Measure, RssSampler

# ---- delta-rs -------------------------------------------------------------------------------------------------

def delta_write(path: Path, data) -> dict:
    from deltalake import write_deltalake

    write_deltalake(str(path), data, partition_by=["dt"])
    return {}


def delta_merge(path: Path, batch: pa.Table) -> dict:
    from deltalake import DeltaTable

    m = (DeltaTable(str(path)).merge(batch, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
    want = (common.UPDATES, common.INSERTS)
    got = (m["num_target_rows_updated"], m["num_target_rows_inserted"])
    if got != want:
        raise RuntimeError(f"delta-rs merge into {path}: updated/inserted {got}, expected {want}")
    return {"scan_ms": m.get("scan_time_ms"), "rewrite_ms": m.get("rewrite_time_ms"),
            "files_added": m.get("num_target_files_added")}


# ---- Hudi ---------------------------------------------------------------------------------------------------

TABLE_VERSION = 6  # --table-version: the version of W1's Hudi tables


@contextlib.contextmanager
def session_planned(on: bool = True) -> Iterator[None]:
    """The write's Spark jobs planned by the session itself, as before stop 69 (`--adaptive`): with adaptive
    execution on, every exchange ends a Spark job (`hudi_engine.spark.write_job` plans them without it)."""
    from hudi_engine.spark import write_job

    plain = write_job._plain_plan
    if on:
        write_job._plain_plan = lambda df, shuffle_partitions: None
    try:
        yield
    finally:
        write_job._plain_plan = plain


def hudi_write(spark, df, path: Path, table_type: str, operation: str, label: str, expect: dict,
               samples: list | None = None, jvm: int | None = None, version: int | None = None,
               extra: dict | None = None, small: bool = False, adaptive: bool = False) -> dict:
    """One write through `hudi_engine.spark.write`; `small`: through `write_small`, as the dbt materialization
    writes (on the driver when Spark estimates the input below spark.hudi.write.driverMaxBytes); `adaptive`: its
    jobs planned by the session (`session_planned`)."""
    from hudi_engine.spark import write, write_small

    spark.sparkContext.setJobDescription(label)  # the event log's jobs carry it: per-write Spark breakdown
    options = {**common.hudi_options(table_type, operation),
               "hoodie.write.table.version": str(version or TABLE_VERSION), **(extra or {})}
    try:
        with RssSampler(jvm) as rss, session_planned(adaptive):
            r = (write_small if small else write)(df, str(path), options)
    finally:
        spark.sparkContext.setJobDescription(None)
    got = {"records_inserted": r.records_inserted, "records_updated": r.records_updated}
    if any(got[k] != v for k, v in expect.items()):
        raise RuntimeError(f"{label}: {got}, expected {expect}")
    if samples is not None:
        samples.append({"driver_peak_rss_mb": rss.peak, "jvm_peak_rss_mb": rss.other_peak,
                        "worker_peak_rss_mb": rss.worker_peak})
    out = {k: round(v, 3) for k, v in r.timings.items()}
    out.update(label=label, files_created=r.files_created, files_rewritten=r.files_rewritten, files_appended=r.files_appended,
               bytes_written=r.bytes_written, tasks=r.tasks, driver_peak_rss_mb=round(rss.peak),
               jvm_peak_rss_mb=round(rss.other_peak), worker_peak_rss_mb=round(rss.worker_peak))
    return out


UPSERT_EXPECT = {"records_inserted": common.INSERTS, "records_updated": common.UPDATES}


def _bulk_expect(rows: int) -> dict:
    return {"records_inserted": rows, "records_updated": 0}


def _eventlog_conf(run_dir: Path) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    common.SPARK_CONF.update({"spark.eventLog.enabled": "true", "spark.eventLog.dir": run_dir.resolve().as_uri(),
                              "spark.eventLog.compress": "false"})


# ---- W1 -----------------------------------------------------------------------------------------------------

def run_w1(cases: list[str], repeats: int, eventlog: bool, sort_modes: list[str] | None = None,
           driver: bool = False, adaptive: bool = False) -> dict:
    base = DATA_DIR / "w1"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    data, batch = common.read_source(src), common.read_source(bdir)
    ev_dir = DATA_DIR / "eventlog" / ("w1-" + time.strftime("%Y%m%d-%H%M%S"))
    if eventlog:
        _eventlog_conf(ev_dir)
    snapshot_sources()
    t0 = time.perf_counter()
    spark = common.spark_session()
    jvm = spark_probe.jvm_pid()
    print(f"Spark session: {time.perf_counter() - t0:.1f} s (master {spark.sparkContext.master}, "
          f"JVM pid {jvm})", flush=True)
    df, bdf = common.cached_df(spark, src), common.cached_df(spark, bdir)
    results: dict[str, Measure] = {}
    rss: list[dict] = []
    cow0, mor0, delta0 = base / "pristine_hudi_cow", base / "pristine_hudi_mor", base / "pristine_delta"
    parquet0 = base / "spark_parquet"

    if "first" in cases:
        print("first write, 1,000,000 rows: bulk_insert (COW) vs write_deltalake", flush=True)
        results.update(common.interleaved([
            Case("first_hudi", lambda tag: hudi_write(spark, df, cow0, "COPY_ON_WRITE", "bulk_insert", tag,
                                                      _bulk_expect(common.W1_ROWS), rss, jvm),
                 setup=lambda _: common.fresh(cow0)),
            Case("first_delta", lambda _: delta_write(delta0, data), setup=lambda _: common.fresh(delta0)),
            # Spark's floor: its own parquet writer on the same cached DataFrame (no keys, no Python, no commit).
            Case("first_spark_parquet", lambda _: df.write.partitionBy("dt").mode("overwrite").parquet(str(parquet0)),
                 setup=lambda _: common.fresh(parquet0)),
            # --sort-modes: the same first write with each `hoodie.bulkinsert.sort.mode` given, beside the default.
            *[Case(f"first_hudi_{m.lower()}", lambda tag, m=m: hudi_write(
                spark, df, base / f"first_{m.lower()}", "COPY_ON_WRITE", "bulk_insert", tag,
                _bulk_expect(common.W1_ROWS), rss, jvm, extra={"hoodie.bulkinsert.sort.mode": m}),
                setup=lambda _, m=m: common.fresh(base / f"first_{m.lower()}")) for m in sort_modes or []],
            # --adaptive: the same first write with its jobs planned by the session (AQE: a job per exchange).
            *([Case("first_hudi_adaptive", lambda tag: hudi_write(
                spark, df, base / "first_adaptive", "COPY_ON_WRITE", "bulk_insert", tag,
                _bulk_expect(common.W1_ROWS), rss, jvm, adaptive=True),
                setup=lambda _: common.fresh(base / "first_adaptive"))] if adaptive else []),
        ], repeats))
    if "cow" in cases or "mor" in cases:
        print("setting up the W1 tables (untimed)", flush=True)
        if "first" not in cases:
            hudi_write(spark, df, common.fresh(cow0), "COPY_ON_WRITE", "bulk_insert", "setup",
                       _bulk_expect(common.W1_ROWS))
            delta_write(common.fresh(delta0), data)
        if "mor" in cases:
            hudi_write(spark, df, common.fresh(mor0), "MERGE_ON_READ", "bulk_insert", "setup",
                       _bulk_expect(common.W1_ROWS))
        print("upsert: 100,000 updates (all partitions) + 10,000 inserts; each run on a fresh copy", flush=True)
        work = {n: base / f"work_{n}" for n in ("cow", "mor", "delta")}
        upserts = []
        if "cow" in cases:
            upserts.append(Case("hudi_cow_upsert", lambda tag: hudi_write(
                spark, bdf, work["cow"], "COPY_ON_WRITE", "upsert", tag, UPSERT_EXPECT, rss, jvm),
                setup=lambda _: common.copy_table(cow0, work["cow"])))
        upserts.append(Case("delta_merge", lambda _: delta_merge(work["delta"], batch),
                            setup=lambda _: common.copy_table(delta0, work["delta"])))
        if "mor" in cases:
            upserts.append(Case("hudi_mor_upsert", lambda tag: hudi_write(
                spark, bdf, work["mor"], "MERGE_ON_READ", "upsert", tag, UPSERT_EXPECT, rss, jvm),
                setup=lambda _: common.copy_table(mor0, work["mor"])))
        # --driver: the same upserts through write_small, the dbt materialization's call (the batch's 12 MB estimate
        # is under its 16 MB bound: written on the driver)
        for case, table_type, pristine in (("cow", "COPY_ON_WRITE", cow0), ("mor", "MERGE_ON_READ", mor0)):
            if driver and case in cases:
                upserts.append(Case(f"hudi_{case}_upsert_driver", lambda tag, tt=table_type, c=case: hudi_write(
                    spark, bdf, work[c], tt, "upsert", tag, UPSERT_EXPECT, rss, jvm, small=True),
                    setup=lambda _, c=case, p=pristine: common.copy_table(p, work[c])))
        # --adaptive: the same upserts with their jobs planned by the session (AQE: a job per exchange)
        for case, table_type, pristine in (("cow", "COPY_ON_WRITE", cow0), ("mor", "MERGE_ON_READ", mor0)):
            if adaptive and case in cases:
                upserts.append(Case(f"hudi_{case}_upsert_adaptive", lambda tag, tt=table_type, c=case: hudi_write(
                    spark, bdf, work[c], tt, "upsert", tag, UPSERT_EXPECT, rss, jvm, adaptive=True),
                    setup=lambda _, c=case, p=pristine: common.copy_table(p, work[c])))
        results.update(common.interleaved(upserts, repeats))
    spark.stop()
    stages = parse_eventlog(ev_dir) if eventlog else {}
    return {"results": results, "cold": common.warmups(results), "stages": stages, "maxrss_mb": common.maxrss_mb(),
            "rss_samples": rss}


# ---- W1 by table version (issue 26) ---------------------------------------------------------------------------

def run_w1_versions(versions: list[int], repeats: int) -> dict:
    """W1's first write (bulk_insert, COW) and its COW / MOR upserts on tables of each version, interleaved."""
    base = DATA_DIR / "w1_versions"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    snapshot_sources()
    spark = common.spark_session()
    jvm = spark_probe.jvm_pid()
    df, bdf = common.cached_df(spark, src), common.cached_df(spark, bdir)
    rss: list[dict] = []
    pristine = {(tt, v): base / f"pristine_{tt.lower()}_v{v}" for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")
                for v in versions}
    first = [Case(f"hudi_first_v{v}", lambda tag, v=v: hudi_write(
        spark, df, base / f"first_v{v}", "COPY_ON_WRITE", "bulk_insert", tag, _bulk_expect(common.W1_ROWS), rss, jvm,
        version=v), setup=lambda _, v=v: common.fresh(base / f"first_v{v}")) for v in versions]
    print(f"first write, 1,000,000 rows, table versions {versions}", flush=True)
    results = common.interleaved(first, repeats)
    print("setting up the W1 tables of each version (untimed)", flush=True)
    for (tt, v), path in pristine.items():
        hudi_write(spark, df, common.fresh(path), tt, "bulk_insert", "setup", _bulk_expect(common.W1_ROWS), version=v)
    upserts = []
    for (tt, v), path in pristine.items():
        work = base / f"work_{tt.lower()}_v{v}"
        name = f"hudi_{'cow' if tt == 'COPY_ON_WRITE' else 'mor'}_upsert_v{v}"
        upserts.append(Case(name, lambda tag, tt=tt, v=v, work=work: hudi_write(
            spark, bdf, work, tt, "upsert", tag, UPSERT_EXPECT, rss, jvm, version=v),
            setup=lambda _, path=path, work=work: common.copy_table(path, work)))
    print("upsert: 100,000 updates + 10,000 inserts on each version; each run on a fresh copy", flush=True)
    results.update(common.interleaved(upserts, repeats))
    spark.stop()
    return {"results": results, "cold": common.warmups(results), "versions": versions, "maxrss_mb": common.maxrss_mb()}


def report_w1_versions(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    versions = out["versions"]
    ref = versions[0]
    lines = [f"| W1 (1,000,000 rows) | {' | '.join(f'v{v}: median (runs)' for v in versions)} | "
             f"{' | '.join(f'v{v} / v{ref}' for v in versions[1:])} | goal |",
             "|---|" + "---|" * (2 * len(versions))]
    for label, stem in (("first write: bulk_insert (COW)", "hudi_first"), ("COW upsert", "hudi_cow_upsert"),
                        ("MOR upsert", "hudi_mor_upsert")):
        ms = [res.get(f"{stem}_v{v}") for v in versions]
        if any(m is None for m in ms):
            continue
        cells = [m.runs() for m in ms]
        ratios = [m.median / ms[0].median for m in ms[1:]]
        verdict = ", ".join(f"v{v} <= 1.1x: **{'met' if r <= 1.1 else 'missed'}**" for v, r in zip(versions[1:], ratios))
        lines.append(f"| {label} | {' | '.join(cells)} | {' | '.join(f'{r:.2f}x' for r in ratios)} | {verdict} |")
    text = "\n".join(lines)
    if out.get("cold"):
        text += "\n\nWarm-up runs (untimed in the medians): " + ", ".join(
            f"{k} {v:.2f} s" for k, v in out["cold"].items())
    return text + "\n\n" + report_phases(res)


# ---- W2 -----------------------------------------------------------------------------------------------------

def run_w2(repeats: int, eventlog: bool) -> dict:
    base = DATA_DIR / "w2"
    src1, src2, bdir = common.source_dir(common.W1_ROWS), common.source_dir(common.W2_ROWS), common.batch_dir()
    ev_dir = DATA_DIR / "eventlog" / ("w2-" + time.strftime("%Y%m%d-%H%M%S"))
    if eventlog:
        _eventlog_conf(ev_dir)
    snapshot_sources()
    spark = common.spark_session()
    jvm = spark_probe.jvm_pid()
    bdf = common.cached_df(spark, bdir)
    tables = {"w1": base / "pristine_hudi_mor_w1", "w2": base / "pristine_hudi_mor_w2"}
    setup: dict[str, float] = {}
    for (n, path), (src, rows) in zip(tables.items(), ((src1, common.W1_ROWS), (src2, common.W2_ROWS))):
        print(f"setting up the {rows:,}-row MOR table (Spark bulk_insert from the parquet sources, untimed)",
              flush=True)
        t = time.perf_counter()
        r = hudi_write(spark, spark.read.parquet(str(src)), common.fresh(path), "MERGE_ON_READ", "bulk_insert",
                       "setup", _bulk_expect(rows))
        setup[n] = time.perf_counter() - t
        print(f"  {setup[n]:.1f} s {r}", flush=True)
    rss: list[dict] = []
    cases = [Case(f"hudi_mor_upsert_{n}",
                  lambda tag, n=n: hudi_write(spark, bdf, base / f"work_{n}", "MERGE_ON_READ", "upsert", tag,
                                              UPSERT_EXPECT, rss, jvm),
                  setup=lambda _, n=n, p=p: common.copy_table(p, base / f"work_{n}"))
             for n, p in tables.items()]
    results = common.interleaved(cases, repeats)
    spark.stop()
    maxrss = common.maxrss_mb()
    print(f"Python driver ru_maxrss (this process, Hudi only): {maxrss:.0f} MB", flush=True)
    stages = parse_eventlog(ev_dir) if eventlog else {}
    print("delta-rs peer (child process, after Spark stopped)", flush=True)
    out = subprocess.run([sys.executable, __file__, "--delta-w2", "--repeats", str(repeats)], check=True,
                         stdout=subprocess.PIPE, text=True)
    delta = json.loads(out.stdout.strip().splitlines()[-1])
    for name, d in delta["results"].items():
        results[name] = Measure(name, d["times"], d["extra"], d["cold"])
    return {"results": results, "cold": common.warmups(results), "stages": stages, "maxrss_mb": maxrss,
            "rss_samples": rss, "setup_s": setup, "delta_maxrss_mb": delta["maxrss_mb"],
            "table_mb": {f"hudi_{n}": common.dir_size_mb(p) for n, p in tables.items()}}


def delta_w2_child(repeats: int) -> None:
    """The delta-rs side of W2, printed as JSON: tables written streaming from the source files, then MERGE."""
    base = DATA_DIR / "w2"
    batch = common.read_source(common.batch_dir())
    cases = []
    for n, rows in (("w1", common.W1_ROWS), ("w2", common.W2_ROWS)):
        pristine, work = base / f"pristine_delta_{n}", base / f"work_delta_{n}"
        files = sorted(str(p) for p in common.source_dir(rows).glob("*.parquet"))
        delta_write(common.fresh(pristine), ds.dataset(files, schema=common.SCHEMA).scanner().to_reader())
        cases.append(Case(f"delta_merge_{n}", lambda _, w=work: delta_merge(w, batch),
                          setup=lambda _, p=pristine, w=work: common.copy_table(p, w)))
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # progress lines to stderr; stdout carries only the JSON
    try:
        ms = common.interleaved(cases, repeats)
    finally:
        sys.stdout = real_stdout
    print(json.dumps({"results": {k: {"times": m.times, "extra": m.extra, "cold": m.cold} for k, m in ms.items()},
                      "maxrss_mb": common.maxrss_mb()}))


# ---- Spark event log ------------------------------------------------------------------------------------------

def _events(run_dir: Path) -> Iterator[dict]:
    """The events of Spark's event logs under `run_dir` (one JSON object a line; a torn line is skipped)."""
    for f in sorted(run_dir.rglob("events_*")) + sorted(run_dir.rglob("local-*")):
        with open(f, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def parse_eventlog(run_dir: Path) -> dict:
    """Per job description (one timed write): wall time per `collect` call site of the writer, shuffle bytes.

    A call site is labelled with its source line, so the figure reads as "the collect that computes the plan's
    counts took X s" whatever the line number is today.
    """
    jobs: dict[int, dict] = {}
    stage_job: dict[int, int] = {}
    stage_metrics: dict[int, dict] = defaultdict(lambda: defaultdict(float))
    for e in _events(run_dir):
        ev = e.get("Event")
        if ev == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            jobs[e["Job ID"]] = {"start": e["Submission Time"], "desc": props.get("spark.job.description"),
                                 "site": props.get("callSite.short") or ""}
            for s in e["Stage IDs"]:
                stage_job.setdefault(s, e["Job ID"])
        elif ev == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
        elif ev == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            sm = stage_metrics[e["Stage ID"]]
            sm["task_run_ms"] += m.get("Executor Run Time", 0)
            sm["gc_ms"] += m.get("JVM GC Time", 0)
            sm["shuffle_write_mb"] += (m.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0) / 1e6
            sm["tasks"] += 1
    out: dict[str, dict] = {}
    for jid, j in sorted(jobs.items()):
        desc = j["desc"]
        if not desc or desc == "setup" or desc.endswith("-warm"):
            continue
        site = j["site"]
        label = _site_label(site)
        d = out.setdefault(desc, {"jobs": 0, "by_site": defaultdict(float), "task_run_s": 0.0, "shuffle_write_mb": 0.0})
        d["jobs"] += 1
        d["by_site"][label] += (j.get("end", j["start"]) - j["start"]) / 1000
        for s, jj in stage_job.items():
            if jj == jid:
                d["task_run_s"] += stage_metrics[s]["task_run_ms"] / 1000
                d["shuffle_write_mb"] += stage_metrics[s]["shuffle_write_mb"]
    for d in out.values():
        d["by_site"] = dict(d["by_site"])
    return out


_SOURCES: dict[str, list[str]] = {}


def snapshot_sources() -> None:
    """The Spark write's sources (`writer` and its strategies) as this run imported them: call sites are labelled
    with these lines even if a file is edited while the benchmark runs."""
    from hudi_engine.spark import bulk_insert, global_simple, key_sample, one_pass, two_pass, writer

    for module in (writer, bulk_insert, global_simple, one_pass, two_pass, key_sample):
        path = module.__file__
        _SOURCES[path] = Path(path).read_text().splitlines()


def _site_label(site: str) -> str:
    """`collect at /x/global_simple.py:84` -> `global_simple.py:84 rows = live.groupBy(...)...` (the source line)."""
    try:
        where = site.split(" at ", 1)[1]
        path, line = where.rsplit(":", 1)
        lines = _SOURCES.get(path)
        text = (lines[int(line) - 1] if lines and int(line) <= len(lines) else linecache.getline(path, int(line))).strip()
        return f"{Path(path).name}:{line} {text[:70]}"
    except (IndexError, ValueError):
        return site


# ---- in-process profile of the task side ------------------------------------------------------------------

def profile_tasks(table_type: str, pristine: Path | None, top: int) -> dict:
    """The W1 upsert (or with `pristine=None` the W1 bulk_insert into a new table) through the task-side code in
    this process, without Spark (`hudi_engine.write_pipeline.write_table`: keys and tags, counts, plan,
    buckets through their handles, commit), under cProfile. The result is a real commit on a copy of the table."""
    from hudi_engine.write_pipeline import write_table

    operation = "upsert" if pristine is not None else "bulk_insert"
    if pristine is not None:
        path = common.copy_table(pristine, DATA_DIR / "w1" / f"profile_{table_type}")
        batch = common.read_source(common.batch_dir())
    else:
        path = common.fresh(DATA_DIR / "w1" / f"profile_{table_type}_bulk_insert")
        batch = common.read_source(common.source_dir(common.W1_ROWS))
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    r = write_table(batch, str(path), common.hudi_options(table_type, operation))
    prof.disable()
    total = time.perf_counter() - t0
    print(f"\n== in-process task side, W1 {table_type} {operation} (one thread, no Spark): {total:.3f} s", flush=True)
    print(f"  result: {r}")
    hot = _hot_spots(prof, top)
    print("  hot spots (cProfile, own time; cumulative):")
    for row in hot:
        print(f"    {row['tottime']:7.3f} s own {row['cumtime']:7.3f} s cum  {row['calls']:>7} calls  {row['where']}")
    return {"total_s": total, "hot": hot}


def _hot_spots(prof: cProfile.Profile | pstats.Stats, top: int) -> list[dict]:
    st = prof if isinstance(prof, pstats.Stats) else pstats.Stats(prof, stream=io.StringIO())
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        rows.append({"where": f"{_short_path(file)}:{line}({func})", "tottime": tt, "cumtime": ct, "calls": nc})
    rows.sort(key=lambda r: -r["tottime"])
    return rows[:top]


def _short_path(file: str) -> str:
    for marker in ("hudi_engine/", "site-packages/"):
        if marker in file:
            return file[file.index(marker):].replace("site-packages/", "")
    return file


def run_profile(top: int) -> dict:
    base = DATA_DIR / "w1"
    pristine = {"COPY_ON_WRITE": base / "pristine_hudi_cow", "MERGE_ON_READ": base / "pristine_hudi_mor"}
    missing = [tt for tt, p in pristine.items() if not (p / ".hoodie").exists()]
    if missing:
        print(f"making the W1 tables first ({', '.join(missing)}) with Spark bulk_insert", flush=True)
        spark = common.spark_session()
        df = common.cached_df(spark, common.source_dir(common.W1_ROWS))
        for tt in missing:
            hudi_write(spark, df, common.fresh(pristine[tt]), tt, "bulk_insert", "setup", _bulk_expect(common.W1_ROWS))
        spark.stop()
    out = {f"{tt} upsert": profile_tasks(tt, p, top) for tt, p in pristine.items()}
    out["COPY_ON_WRITE bulk_insert"] = profile_tasks("COPY_ON_WRITE", None, top)
    return out


# ---- per-phase profile through Spark (issue 41) ---------------------------------------------------------------
# Each named write runs through `hudi_engine.spark.write` on Spark with Spark's Python UDF profiler on its tasks
# (`spark.sql.pyspark.udf.profiler=perf`: cProfile around every task's Arrow UDF, summed over tasks by Spark's
# accumulator, file names reduced to their base names) and cProfile on the driver. The stats are folded into named
# phases: a function named by a rule below takes its own time to its phase; any other function (pyarrow's and
# numpy's C calls, the standard library) takes the phase of its callers, in proportion to the time (callees
# included) each caller spent in it: one level of callers, as gprof, so a shared helper's time is split by averages.
# Some functions (a parquet file read) take their phase from their callers' too, remapped ("contextual").

T_INPUT_OPEN = "input: open Spark's Arrow stream (until its first batch)"
T_INPUT = "input: Spark's next Arrow batches (stream read)"
T_SHUFFLE = "Arrow chunks of the shuffle (pack, open)"
T_TAG = "keys, tagging, routing"
T_GROUP = "group by file group, pre-combine"
T_READ = "base-file read (parquet decode, keys, footer)"
T_MERGE = "merge"
T_META = "Hudi meta columns"
T_AVRO = "Avro log-block encode"
T_PARQUET = "parquet encode + write"
T_BLOOM = "bloom filter + key range"
T_IO = "markers, listing, file I/O"
T_OUT = "task output (write stats)"
T_SETUP = "task setup (context, schema)"
OTHER = "other"
TASK_PHASES = [T_INPUT_OPEN, T_INPUT, T_SHUFFLE, T_TAG, T_GROUP, T_READ, T_MERGE, T_META, T_AVRO, T_PARQUET, T_BLOOM, T_IO, T_OUT, T_SETUP,
               OTHER]

D_OPEN = "open, config, schema checks"
D_TXN = "pending services, lock, instant, heartbeat"
D_PLAN = "driver plan (listing, tag spec, buckets)"
D_SPARK = "Spark DataFrame plan + py4j calls"
D_JOBS = "Spark jobs: driver waits in collect / toArrow"
D_RESULTS = "task results decode"
D_COMMIT = "commit (timeline, markers, metadata table)"
D_AFTER = "post-commit services, catalog sync"
DRIVER_PHASES = [D_OPEN, D_TXN, D_PLAN, D_SPARK, D_JOBS, D_RESULTS, D_COMMIT, D_AFTER, OTHER]

# Whole files (base names: the task profiles carry only those) -> phase.
_FILE_PHASES = {
    "serializers.py": T_INPUT, "tagging.py": T_TAG, "keygen.py": T_TAG, "partition_path.py": T_TAG,
    "index.py": T_TAG, "bucket_assigner.py": T_TAG, "merge.py": T_MERGE, "payload.py": T_MERGE,
    "partial_update.py": T_MERGE, "avro_codec.py": T_AVRO, "avro_columnar.py": T_AVRO, "log_block.py": T_AVRO,
    "log_format.py": T_AVRO, "markers.py": T_IO, "inflight.py": T_IO, "storage.py": T_IO, "fs_view.py": T_IO,
    "file_naming.py": T_IO, "create.py": T_PARQUET, "arrow_shuffle.py": T_SHUFFLE,
}
# Functions ("module:qualname") -> phase; they override the file's phase.
_TASK_FUNCS = {
    T_TAG: ["hudi_engine.write.executor:key_and_tag", "hudi_engine.write.executor:keyed_batches",
            "hudi_engine.write.executor:KeyProfile.add", "hudi_engine.write.executor:KeyProfile._sample",
            "hudi_engine.write.executor:KeyProfile.to_table", "hudi_engine.write.executor:map_side_groups",
            "hudi_engine.write.executor:WholeGroups.__call__", "hudi_engine.spark.write_udfs:KeyTagFn.__call__",
            "hudi_engine.spark.write_udfs:RouteFn.__call__", "hudi_engine.spark.write_udfs:MapSideRouteFn.__call__",
            "hudi_engine.spark.write_udfs:MapSidePackFn.__call__",
            "hudi_engine.spark.write_udfs:ProfileFn.__call__", "hudi_engine.spark.write_udfs:struct_udf"],
    T_GROUP: ["hudi_engine.write.executor:write_buckets", "hudi_engine.write.executor:write_groups",
              "hudi_engine.write.executor:file_group_runs", "hudi_engine.write.executor:_by_key",
              "hudi_engine.write.executor:_runs", "hudi_engine.write.executor:_map_side_buckets",
              "hudi_engine.write.executor:_timed", "hudi_engine.write.executor:write_bucket",
              "hudi_engine.write.executor:pre_combine", "hudi_engine.write.executor:pre_combine_sorted",
              "hudi_engine.write.executor:bulk_insert_files", "hudi_engine.write.executor:_placed_by_index"],
    T_META: ["hudi_engine.write.handles.base:WriteHandle._prepare", "hudi_engine.write.handles.records:prepare_records",
             "hudi_engine.write.handles.records:constant"],
    T_AVRO: ["hudi_engine.write.handles.append:avro_data_blocks", "hudi_engine.write.handles.append:AppendHandle.close"],
    T_PARQUET: ["hudi_engine.io.base_file:BaseFileWriter.__init__", "hudi_engine.io.base_file:BaseFileWriter.write",
                "hudi_engine.io.base_file:BaseFileWriter.close",
                "hudi_engine.io.base_file:_prepare_table", "hudi_engine.io.base_file:_hudi_parquet_type",
                "hudi_engine.io.base_file:write_base_file", "hudi_engine.write.handles.base:WriteHandle._base_writer",
                "hudi_engine.write.handles.base:WriteHandle._publish", "hudi_engine.write.handles.base:base_writer",
                "hudi_engine.write.handles.merge:_RowGroups.write", "hudi_engine.write.handles.merge:_RowGroups.flush",
                "pyarrow.parquet.core:ParquetWriter.__init__", "pyarrow.parquet.core:ParquetWriter.write_table",
                "pyarrow.parquet.core:ParquetWriter.write", "pyarrow.parquet.core:ParquetWriter.write_batch",
                "pyarrow.parquet.core:ParquetWriter.close"],
    T_BLOOM: ["hudi_engine.io.base_file:BaseFileWriter._add_keys", "hudi_engine.io.base_file:record_key_range",
              "hudi_engine.io.base_file:_java_order_key_bytes"],
    T_IO: ["hudi_engine.write.handles.append:list_log_files"],
    # A task's input stream opens once Spark has its first batch: for a sorted input, once the sort is done.
    T_INPUT_OPEN: ["pyarrow.ipc:RecordBatchStreamReader.__init__"],
    # The merge handle's loop over the base file's batches: pyarrow's (Cython) batch iterator decodes the parquet
    # pages inside it, as this generator's own time (not a call cProfile sees).
    T_READ: ["hudi_engine.write.handles.merge:MergeHandle._merged_batches"],
    T_OUT: ["hudi_engine.spark.write_udfs:task_output", "hudi_engine.spark.write_udfs:_keys_json",
            "hudi_engine.timeline.commit_metadata:WriteStat.to_dict"],
    T_SETUP: ["hudi_engine.write.executor:WriteTask.context", "hudi_engine.write.executor:WriteTask.keygen",
              "hudi_engine.spark.write_udfs:task_token"],
    OTHER: ["hudi_engine.spark.write_udfs:WriteFn.__call__", "hudi_engine.spark.write_udfs:MapSideWriteFn.__call__",
            "hudi_engine.spark.write_udfs:BulkInsertFn.__call__"],
}
# Reads of a parquet file: the base file's in a handle (T_READ), the keys of stored files when tagging (T_TAG).
_TASK_READS = ["hudi_engine.io.base_file:record_keys_of", "hudi_engine.io.base_file:read_record_keys",
               "hudi_engine.io.base_file:footer_of", "hudi_engine.io.base_file:read_footer",
               "hudi_engine.io.base_file:_parquet_file", "hudi_engine.io.base_file:read_base_file",
               "hudi_engine.write.executor:WriteTask.read_keys", "pyarrow.parquet.core:ParquetFile.__init__",
               "pyarrow.parquet.core:ParquetFile.iter_batches", "pyarrow.parquet.core:ParquetFile.read",
               "pyarrow.parquet.core:ParquetFile.read_row_group", "pyarrow.parquet.core:ParquetFile.read_row_groups",
               "pyarrow.parquet.core:read_table", "pyarrow.parquet.core:ParquetDataset.read"]
_DRIVER_FUNCS = {
    D_OPEN: ["hudi_engine.spark.writer:write", "hudi_engine.write.write_client:table_for_write",
             "hudi_engine.write.write_client:WriteClient.open", "hudi_engine.write_pipeline:_table_columns"],
    D_TXN: ["hudi_engine.write_pipeline:run_write", "hudi_engine.write.write_client:WriteClient.transaction",
            "hudi_engine.table_services.runner:finish_pending"],
    D_PLAN: ["hudi_engine.write.write_client:WriteClient.tag_spec", "hudi_engine.write.write_client:WriteClient.listing_spec",
             "hudi_engine.write.write_client:WriteClient.plan", "hudi_engine.write.write_client:WriteClient.map_side_plan",
             "hudi_engine.write.write_client:WriteClient.write_task",
             "hudi_engine.write.write_client:WriteClient.average_record_size",
             "hudi_engine.write.write_client:WriteClient.latest_slices"],
    D_SPARK: ["hudi_engine.spark.writer:_files", "hudi_engine.spark.writer:_run"],
    D_JOBS: ["pyspark.sql.classic.dataframe:DataFrame.collect", "pyspark.sql.classic.dataframe:DataFrame.toArrow",
             "pyspark.sql.classic.dataframe:DataFrame.count", "pyspark.sql.pandas.conversion:PandasConversionMixin._collect_as_arrow",
             "pyspark.sql.pandas.conversion:PandasConversionMixin.toArrow"],
    D_RESULTS: ["hudi_engine.spark.write_udfs:write_stats"],
    D_COMMIT: ["hudi_engine.write.write_client:Transaction.commit"],
    D_AFTER: ["hudi_engine.table_services.runner:after_commit", "hudi_engine.spark.catalog_sync:CatalogSync.after_commit"],
}


def _code_key(ref: str) -> tuple[str, int, str] | None:
    """`module:qualname` -> the (file base name, first line, name) cProfile keys it by; None if it does not exist."""
    import importlib
    import inspect

    module, qualname = ref.split(":")
    try:
        obj: object = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    obj = inspect.unwrap(getattr(obj, "__func__", obj))  # type: ignore[arg-type]
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    return Path(code.co_filename).name, code.co_firstlineno, code.co_name


class PhaseRules:
    """Which phase a profiled function's own time belongs to (see the section's comment)."""

    def __init__(self, funcs: dict[str, list[str]], files: dict[str, str], reads: list[str] | None = None) -> None:
        self.funcs: dict[tuple[str, int, str], str] = {}
        for phase, refs in funcs.items():
            for ref in refs:
                key = _code_key(ref)
                if key is not None:
                    self.funcs[key] = phase
        self.files = files
        self.reads = {k for k in map(_code_key, reads or []) if k is not None}

    def own(self, key: tuple[str, int, str]) -> str | None:
        base = (Path(key[0]).name, key[1], key[2])
        if base in self.funcs:
            return self.funcs[base]
        return self.files.get(base[0]) if base[0] != "~" else None

    def contextual(self, key: tuple[str, int, str]) -> bool:
        return (Path(key[0]).name, key[1], key[2]) in self.reads


def fold_phases(stats: pstats.Stats, rules: PhaseRules, read_phase: str = T_READ,
                keep: tuple[str, ...] = (T_TAG,)) -> dict[str, float]:
    """Seconds per phase: every function's own time, by its rule or its callers' phases (see the section)."""
    raw = stats.stats  # type: ignore[attr-defined]
    memo: dict[tuple, dict[str, float]] = {}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

    def dist(key: tuple, visiting: set) -> dict[str, float]:
        if key in memo:
            return memo[key]
        own = rules.own(key)
        if own is not None:
            memo[key] = {own: 1.0}
            return memo[key]
        mix: dict[str, float] = defaultdict(float)
        total = 0.0
        visiting.add(key)
        callers = raw[key][4] if key in raw else {}
        # Each caller's share: the time spent in this function (its callees included) when that caller called it.
        weights = {c: e[3] for c, e in callers.items() if c != key and c not in visiting and c in raw}
        if weights and sum(weights.values()) <= 0:
            weights = {c: float(callers[c][1]) for c in weights}  # no time through any caller: by calls
        for c, w in weights.items():
            if w <= 0:
                continue
            for p, v in dist(c, visiting).items():
                mix[p] += w * v
            total += w
        visiting.discard(key)
        out = {p: v / total for p, v in mix.items()} if total > 0 else {OTHER: 1.0}
        if rules.contextual(key):
            remapped: dict[str, float] = defaultdict(float)
            for p, v in out.items():
                remapped[p if p in keep else read_phase] += v
            out = dict(remapped)
        memo[key] = out
        return out

    seconds: dict[str, float] = defaultdict(float)
    for key, (_cc, _nc, tt, _ct, _callers) in raw.items():
        for p, v in dist(key, set()).items():
            seconds[p] += tt * v
    return dict(seconds)


def _task_stats(spark, where: Path) -> pstats.Stats | None:
    """The tasks' profiles of every UDF since the last clear, as one `pstats.Stats` (dumped by Spark's API)."""
    shutil.rmtree(where, ignore_errors=True)
    spark.profile.dump(str(where), type="perf")
    files = sorted(str(p) for p in where.glob("*.pstats"))
    if not files:
        return None
    return pstats.Stats(*files, stream=io.StringIO())


def rows_source(rows: int) -> Path:
    """The first `rows` rows of W1 / W2 (`common.source_dir`, which makes whole millions; else the first million's
    first `rows`)."""
    if rows % common.CHUNK == 0:
        return common.source_dir(rows)
    src = DATA_DIR / "source" / f"rows_{rows}"
    if not (src / "_DONE").exists():
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        pq.write_table(common.chunk(0).slice(0, rows), src / "part-0000.parquet")
        (src / "_DONE").write_text("ok\n")
    return src


def _scaled_w1(scale: float) -> tuple[Path, Path, dict]:
    """W1's source and upsert batch at `scale` (1: the 1,000,000-row W1 itself) and the upsert's expected counts."""
    if scale == 1:
        return common.source_dir(common.W1_ROWS), common.batch_dir(), UPSERT_EXPECT
    rows = max(1, int(round(common.W1_ROWS * scale)))
    src = rows_source(rows)
    bdir = DATA_DIR / "source" / f"upsert_batch_{rows}"
    batch = common.read_source(common.batch_dir())
    ids = batch.column("id").to_numpy()
    keep = (ids < rows) | (ids >= common.INSERT_ID_BASE)
    if not (bdir / "_DONE").exists():
        shutil.rmtree(bdir, ignore_errors=True)
        bdir.mkdir(parents=True)
        pq.write_table(batch.filter(pa.array(keep)), bdir / "part-0000.parquet")
        (bdir / "_DONE").write_text("ok\n")
    return src, bdir, {"records_inserted": common.INSERTS, "records_updated": int((ids < rows).sum())}


@dataclass
class PhaseWorkload:
    """One write to profile: the table it starts from (made by `setup`, untimed) and the write."""

    name: str
    label: str
    options: dict[str, str]
    source: Path       # the pristine table's rows (bulk_insert, untimed)
    setup_options: dict[str, str] | None
    batch: Path        # the profiled write's rows
    expect: dict


def phase_workloads(names: list[str], scale: float, w1_scale: float) -> list[PhaseWorkload]:
    import bench_w3 as w3

    out = []
    for name in names:
        if name in ("w1_first", "w1_cow", "w1_mor"):
            src, bdir, expect = _scaled_w1(w1_scale)
            rows = common.read_source(src).num_rows
            tt = "MERGE_ON_READ" if name == "w1_mor" else "COPY_ON_WRITE"
            if name == "w1_first":
                out.append(PhaseWorkload(name, f"W1 first write: bulk_insert (COW) of {rows:,} rows",
                                         common.hudi_options(tt, "bulk_insert"), src, None, src, _bulk_expect(rows)))
            else:
                out.append(PhaseWorkload(
                    name, f"W1 {'MOR' if tt == 'MERGE_ON_READ' else 'COW'} upsert: {sum(expect.values()):,} rows into "
                    f"{rows:,}", common.hudi_options(tt, "upsert"), src, common.hudi_options(tt, "bulk_insert"), bdir,
                    expect))
        elif name == "w3a":
            rows = w3.scaled(common.W2_ROWS, scale)
            ups, ins = w3.scaled(w3.W3A_UPDATES, scale), w3.scaled(w3.W3A_INSERTS, scale)
            out.append(PhaseWorkload(
                name, f"W3a: unpartitioned {rows:,} rows, {ups:,} updates + {ins:,} inserts (scale {scale:g})",
                w3.options(False, "upsert"), rows_source(rows), w3.options(False, "bulk_insert"),
                w3.w3a_batch(scale), {"records_inserted": ins, "records_updated": ups}))
        elif name == "w3b":
            new, ups = w3.scaled(5_000_000, scale), w3.scaled(w3.W3B_UPDATES, scale)
            out.append(PhaseWorkload(
                name, f"W3b: 30 days x {w3.scaled(w3.DAY_ROWS, scale):,} rows, a new day of {new:,} + {ups:,} updates "
                f"(scale {scale:g})", w3.options(True, "upsert"), w3.w3b_source(scale), w3.options(True, "bulk_insert"),
                w3.w3b_batch(new, scale), {"records_inserted": new, "records_updated": ups}))
        else:
            raise SystemExit(f"--phases: unknown workload {name!r} (w1_first, w1_cow, w1_mor, w3a, w3b)")
    return out


def run_phases(names: list[str], scale: float, w1_scale: float, top: int, repeats: int) -> dict:
    """Each workload: an untimed warm-up, then `repeats` rounds of an unprofiled and a profiled run (each on a fresh
    copy of its pristine table); medians of the walls and of each phase's seconds over the rounds."""
    from hudi_engine.spark import write

    base = DATA_DIR / "phases"
    workloads = phase_workloads(names, scale, w1_scale)
    ev_dir = DATA_DIR / "eventlog" / ("phases-" + time.strftime("%Y%m%d-%H%M%S"))
    _eventlog_conf(ev_dir)
    snapshot_sources()
    spark = common.spark_session()
    task_rules = PhaseRules(_TASK_FUNCS, _FILE_PHASES, _TASK_READS)
    driver_rules = PhaseRules(_DRIVER_FUNCS, {})
    out: dict[str, dict] = {}
    for w in workloads:
        print(f"\n== {w.label}", flush=True)
        pristine, work = base / f"pristine_{w.name}", base / f"work_{w.name}"
        if w.setup_options is not None:
            t = time.perf_counter()
            write(spark.read.parquet(str(w.source)), str(common.fresh(pristine)), w.setup_options)
            print(f"  setup bulk_insert (untimed): {time.perf_counter() - t:.1f} s", flush=True)
        bdf = common.cached_df(spark, w.batch)

        def once(label: str, profile: bool, w: PhaseWorkload = w, pristine: Path = pristine, work: Path = work,
                 bdf=bdf) -> tuple[float, dict, cProfile.Profile | None]:
            if w.setup_options is not None:
                common.copy_table(pristine, work)
            else:
                common.fresh(work)
            spark.sparkContext.setJobDescription(f"{w.name}-{label}")
            prof = cProfile.Profile() if profile else None
            if profile:
                spark.conf.set("spark.sql.pyspark.udf.profiler", "perf")
                spark.profile.clear()
            t0 = time.perf_counter()
            try:
                if prof is not None:
                    prof.enable()
                r = write(bdf, str(work), w.options)
            finally:
                if prof is not None:
                    prof.disable()
                wall = time.perf_counter() - t0
                spark.sparkContext.setJobDescription(None)
                spark.conf.unset("spark.sql.pyspark.udf.profiler")
            got = {"records_inserted": r.records_inserted, "records_updated": r.records_updated}
            if any(got[k] != v for k, v in w.expect.items()):
                raise RuntimeError(f"{w.name}: {got}, expected {w.expect}")
            print(f"  {label}: {wall:.2f} s, {r.tasks} tasks, "
                  f"timings {json.dumps({k: round(v, 2) for k, v in r.timings.items()})}", flush=True)
            return wall, {"tasks": r.tasks, **{k: round(v, 3) for k, v in r.timings.items()}}, prof

        once("warm", False)  # lazy imports, Python workers, page cache: left out
        plain, profiled, runs = [], [], []
        for i in range(repeats):
            plain.append(once(f"plain{i}", False)[0])
            wall, info, prof = once(f"profiled{i}", True)
            assert prof is not None
            where = base / f"udf_profile_{w.name}_{i}"
            tstats = _task_stats(spark, where)
            dstats = pstats.Stats(prof, stream=io.StringIO())
            where.mkdir(parents=True, exist_ok=True)
            dstats.dump_stats(str(where / "driver.prof"))  # beside the tasks': fold again later
            profiled.append(wall)
            runs.append({"info": info, "tasks": fold_phases(tstats, task_rules) if tstats is not None else {},
                         "driver": fold_phases(dstats, driver_rules, read_phase=D_PLAN, keep=tuple(DRIVER_PHASES)),
                         "task_hot": _hot_spots(tstats, top) if tstats is not None else [],
                         "driver_hot": _hot_spots(dstats, top)})

        def med(side: str, runs: list = runs) -> dict[str, float]:
            phases = {p for r in runs for p in r[side]}
            return {p: float(np.median([r[side].get(p, 0.0) for r in runs])) for p in phases}

        out[w.name] = {"label": w.label, "wall_plain_s": plain, "wall_profiled_s": profiled, "info": runs[-1]["info"],
                       "tasks": med("tasks"), "driver": med("driver"), "runs": runs,
                       "plain_labels": [f"{w.name}-plain{i}" for i in range(repeats)]}
        print(report_phase_table(out[w.name]), flush=True)
        bdf.unpersist()
    spark.stop()
    stages = parse_stages(ev_dir)
    for v in out.values():
        v["spark_stages"] = [stages.get(label, []) for label in v["plain_labels"]]
    return {"workloads": out, "scale": scale, "w1_scale": w1_scale, "repeats": repeats}


def parse_stages(run_dir: Path) -> dict[str, list[dict]]:
    """Per job description: its stages in order, each with its tasks' summed run time (the JVM's executor run time,
    Python included), GC, shuffle read and written (MB)."""
    desc_of_stage: dict[int, str] = {}
    metrics: dict[int, dict] = {}
    for e in _events(run_dir):
        ev = e.get("Event")
        if ev == "SparkListenerJobStart":
            desc = (e.get("Properties") or {}).get("spark.job.description")
            for sid in e["Stage IDs"]:
                if desc:
                    desc_of_stage.setdefault(sid, desc)
        elif ev == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            sm = metrics.setdefault(e["Stage ID"], {"stage": e["Stage ID"], "tasks": 0, "run_s": 0.0,
                                                    "gc_s": 0.0, "shuffle_read_mb": 0.0,
                                                    "shuffle_write_mb": 0.0})
            sm["tasks"] += 1
            sm["run_s"] += m.get("Executor Run Time", 0) / 1000
            sm["gc_s"] += m.get("JVM GC Time", 0) / 1000
            r = m.get("Shuffle Read Metrics") or {}
            sm["shuffle_read_mb"] += (r.get("Remote Bytes Read", 0) + r.get("Local Bytes Read", 0)) / 1e6
            sm["shuffle_write_mb"] += (m.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0) / 1e6
    out: dict[str, list[dict]] = defaultdict(list)
    for sid in sorted(metrics):
        if sid in desc_of_stage:
            out[desc_of_stage[sid]].append(metrics[sid])
    return dict(out)


def report_phase_table(w: dict) -> str:
    tasks, driver = w["tasks"], w["driver"]
    t_total, d_total = sum(tasks.values()), sum(driver.values())
    plain, profiled = w["wall_plain_s"], w["wall_profiled_s"]
    runs = lambda xs: f"{np.median(xs):.2f} s ({', '.join(f'{x:.2f}' for x in xs)})"  # noqa: E731
    lines = [f"**{w['label']}**: wall {runs(plain)} unprofiled, {runs(profiled)} profiled; "
             f"{w['info'].get('tasks', 0)} write tasks. Medians over the profiled runs: Python task time "
             f"{t_total:.2f} s (summed over tasks), driver {d_total:.2f} s", "",
             "| phase | tasks: s (summed) | share of task time | driver: s |", "|---|---|---|---|"]
    for p in TASK_PHASES:
        if tasks.get(p, 0) >= 0.005:
            lines.append(f"| {p} | {tasks[p]:.2f} | {100 * tasks[p] / t_total:.0f}% | |")
    for p in DRIVER_PHASES:
        if driver.get(p, 0) >= 0.005:
            lines.append(f"| driver: {p} | | | {driver[p]:.2f} |")
    stages = [s for s in w.get("spark_stages", []) if s]
    if stages:
        n = min(len(s) for s in stages)
        parts = []
        for i in range(n):
            pick = lambda k, i=i: float(np.median([s[i][k] for s in stages]))  # noqa: E731
            shuffle = (f", shuffle read {pick('shuffle_read_mb'):.1f} MB" if pick("shuffle_read_mb") else "") + \
                (f", shuffle written {pick('shuffle_write_mb'):.1f} MB" if pick("shuffle_write_mb") else "")
            parts.append(f"stage {i + 1}: {stages[0][i]['tasks']} tasks, run time {pick('run_s'):.2f} s "
                         f"(GC {pick('gc_s'):.2f} s){shuffle}")
        lines += ["", "Spark's stages (event log, unprofiled runs, medians; run time summed over tasks, JVM and "
                  "Python): " + "; ".join(parts)]
    return "\n".join(lines)


def report_phases_spark(out: dict) -> str:
    parts = [f"Load average before {tuple(round(x, 2) for x in out['load_before'])}, after "
             f"{tuple(round(x, 2) for x in out['load_after'])}."]
    for w in out["workloads"].values():
        parts.append(report_phase_table(w))
    return "\n\n".join(parts)


# ---- report -----------------------------------------------------------------------------------------------

def report_w1(out: dict) -> str:
    res: dict[str, Measure] = out["results"]
    lines = ["| W1 (1,000,000 rows) | ours: median (runs) | peer: median (runs) | ratio ours/peer | goal |",
             "|---|---|---|---|---|"]

    def row(label: str, ours: str, peer: str, goal: float | None) -> None:
        if ours in res and peer in res:
            ratio = res[ours].median / res[peer].median
            verdict = "" if goal is None else (f"<= {goal:g}x: **met**" if ratio <= goal else f"<= {goal:g}x: **missed**")
            lines.append(f"| {label} | {res[ours].runs()} | {res[peer].runs()} | {ratio:.2f}x | "
                         f"{verdict or 'none set'} |")

    row("first write: bulk_insert (COW) vs write_deltalake", "first_hudi", "first_delta", 3.0)
    row("first write: Spark's own parquet writer (`partitionBy(\"dt\")`) vs write_deltalake", "first_spark_parquet",
        "first_delta", None)
    row("first write: bulk_insert (COW) vs Spark's own parquet writer", "first_hudi", "first_spark_parquet", 1.2)
    for name in (n for n in res if n.startswith("first_hudi_") and n != "first_hudi_adaptive"):
        row(f"first write: bulk_insert, sort mode {name.removeprefix('first_hudi_').upper()}, vs Spark's own parquet "
            "writer", name, "first_spark_parquet", 1.2)
    row("COW upsert vs delta-rs MERGE", "hudi_cow_upsert", "delta_merge", 1.5)
    row("MOR upsert vs delta-rs MERGE", "hudi_mor_upsert", "delta_merge", 1.0)
    row("COW upsert through `write_small` (dbt's call: on the driver) vs delta-rs MERGE", "hudi_cow_upsert_driver",
        "delta_merge", 1.5)
    row("MOR upsert through `write_small` (dbt's call: on the driver) vs delta-rs MERGE", "hudi_mor_upsert_driver",
        "delta_merge", 1.0)
    row("first write, jobs planned by the session (AQE), vs Spark's own parquet writer", "first_hudi_adaptive",
        "first_spark_parquet", 1.2)
    row("COW upsert, jobs planned by the session (AQE), vs delta-rs MERGE", "hudi_cow_upsert_adaptive", "delta_merge",
        1.5)
    row("MOR upsert, jobs planned by the session (AQE), vs delta-rs MERGE", "hudi_mor_upsert_adaptive", "delta_merge",
        1.0)
    for now, before in (("first_hudi", "first_hudi_adaptive"), ("hudi_cow_upsert", "hudi_cow_upsert_adaptive"),
                        ("hudi_mor_upsert", "hudi_mor_upsert_adaptive")):
        row(f"`{now}`: one job per write shuffle (`write_job`) vs the session's plan", now, before, None)
    text = "\n".join(lines)
    if out.get("cold"):
        text += "\n\nWarm-up runs (untimed in the medians): " + ", ".join(
            f"{k} {v:.2f} s" for k, v in out["cold"].items())
    text += "\n\n" + report_phases(res)
    if out.get("stages"):
        text += "\n\n" + report_stages(out["stages"], res)
    if out.get("rss_samples"):
        drv = max(s["driver_peak_rss_mb"] for s in out["rss_samples"])
        jvm = max(s["jvm_peak_rss_mb"] for s in out["rss_samples"])
        text += (f"\n\nPeak RSS during the timed Hudi writes: Python driver {drv:.0f} MB, Spark JVM (driver = executor "
                 f"in local mode) {jvm:.0f} MB. `ru_maxrss` of the whole benchmark process (data generation and "
                 f"delta-rs included): {out['maxrss_mb']:.0f} MB.")
    return text


def report_phases(res: dict[str, Measure]) -> str:
    lines = ["| Hudi write | total (median) | tag + count (wall) | plan (driver) | row check job (wall) | write job (wall) "
             "| commit | task time: handles | tasks that wrote | Python worker peak RSS | files |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, m in res.items():
        if not name.startswith("hudi") and not name.startswith("first_hudi"):
            continue
        med = lambda k, m=m: float(np.median([e.get(k, 0.0) for e in m.extra]))  # noqa: E731
        e = m.extra[-1]
        files = f"{e.get('files_created', 0)} created, {e.get('files_rewritten', 0)} rewritten, " \
                f"{e.get('files_appended', 0)} appended"
        write_only = med("write") - med("tag") - med("plan") - med("row_check")
        # A write on the driver (write_small) runs no write job: its collect job instead
        job = f"{write_only:.2f} s" if "write" in e else f"none (collect {med('collect'):.2f} s)"
        lines.append(f"| {name} | {m.median:.2f} s | {med('tag'):.2f} s | {med('plan'):.2f} s | "
                     f"{med('row_check'):.2f} s | {job} | "
                     f"{med('commit'):.3f} s | {med('handles'):.2f} s | {int(med('tasks'))} | "
                     f"{med('worker_peak_rss_mb'):.0f} MB | {files} |")
    return "\n".join(lines)


def report_stages(stages: dict, res: dict[str, Measure]) -> str:
    """Median over the timed runs of each case: wall time of the Spark jobs of each writer `collect`, and the
    rest of the write (driver-side Python and py4j calls outside any Spark job)."""
    lines = ["Spark jobs per timed write (event log; medians over the timed runs): wall time of the jobs each "
             "`collect` in the writer ran, and what is left of the write outside Spark jobs", "",
             "| write | collect (writer source line when the run started) | wall |", "|---|---|---|"]
    for name, m in res.items():
        runs = [(t, stages[e["label"]]) for t, e in zip(m.times, m.extra) if e.get("label") in stages]
        if not runs:
            continue
        sites = sorted({s for _, r in runs for s in r["by_site"]}, key=lambda s: int(s.split(":")[1].split()[0])
                       if s.split(":")[1].split()[0].isdigit() else 0)
        for s in sites:
            lines.append(f"| {name} | `{s}` | {np.median([r['by_site'].get(s, 0.0) for _, r in runs]):.2f} s |")
        outside = np.median([t - sum(r["by_site"].values()) for t, r in runs])
        lines.append(f"| {name} | outside Spark jobs (driver: open, lock, timeline, plan, commit, py4j) | "
                     f"{outside:.2f} s |")
        lines.append(f"| {name} | {int(np.median([r['jobs'] for _, r in runs]))} Spark jobs, task run time "
                     f"{np.median([r['task_run_s'] for _, r in runs]):.1f} s, shuffle written "
                     f"{np.median([r['shuffle_write_mb'] for _, r in runs]):.1f} MB | |")
    return "\n".join(lines)


def report_w2(out: dict) -> str:
    res = out["results"]
    m1, m2 = res["hudi_mor_upsert_w1"], res["hudi_mor_upsert_w2"]
    d1, d2 = res["delta_merge_w1"], res["delta_merge_w2"]
    lines = ["| same batch (100,000 updates + 10,000 inserts) into | Hudi MOR upsert | delta-rs MERGE | ours/peer |",
             "|---|---|---|---|",
             f"| W1, 1,000,000 rows | {m1.runs()} | {d1.runs()} | {m1.median / d1.median:.2f}x |",
             f"| W2, 10,000,000 rows | {m2.runs()} | {d2.runs()} | {m2.median / d2.median:.2f}x |",
             f"| W2 / W1 | {m2.median / m1.median:.2f}x | {d2.median / d1.median:.2f}x | |"]
    text = "\n".join(lines)
    text += "\n\n" + report_phases({k: v for k, v in res.items() if k.startswith("hudi")})
    if out.get("stages"):
        text += "\n\n" + report_stages(out["stages"], res)
    drv = max(s["driver_peak_rss_mb"] for s in out["rss_samples"])
    jvm = max(s["jvm_peak_rss_mb"] for s in out["rss_samples"])
    text += (f"\n\nMemory: the Python driver's `ru_maxrss` over the whole W2 process (Spark session, bulk_insert of "
             f"both tables, all upserts; no delta-rs, no data generation in it if the sources existed): "
             f"{out['maxrss_mb']:.0f} MB; peak VmRSS sampled during the timed upserts: driver {drv:.0f} MB, "
             f"Spark JVM {jvm:.0f} MB. delta-rs child process ru_maxrss: {out['delta_maxrss_mb']:.0f} MB. "
             f"Setup (untimed) bulk_insert: " + ", ".join(f"{k} {v:.0f} s" for k, v in out["setup_s"].items())
             + ". Table sizes: " + ", ".join(f"{k} {v:.0f} MB" for k, v in out["table_mb"].items()) + ".")
    return text


def main() -> None:
    ap = common.arg_parser(__doc__)
    ap.add_argument("--workload", choices=["w1", "w2"], default="w1")
    ap.add_argument("--cases", default="first,cow,mor", help="W1 cases: first,cow,mor")
    ap.add_argument("--no-eventlog", action="store_true", help="do not parse Spark's event log")
    ap.add_argument("--profile", action="store_true", help="in-process profile of the task side (no Spark timing)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--table-version", type=int, choices=[6, 8, 9], default=6,
                    help="table version of W1's Hudi tables (hoodie.write.table.version)")
    ap.add_argument("--versions", default="", help="e.g. 6,9: W1 on tables of each version in one run")
    ap.add_argument("--driver", action="store_true", help="W1 cow / mor: also through write_small (dbt's call)")
    ap.add_argument("--adaptive", action="store_true", help="W1: also each Hudi write with its jobs planned by the "
                    "session (adaptive execution: a Spark job per exchange), as before stop 69")
    ap.add_argument("--sort-modes", default="", help="W1 first write: also with each of these bulk_insert sort modes, "
                    "e.g. GLOBAL_SORT,PARTITION_SORT")
    ap.add_argument("--phases", default="", help="per-phase profile through Spark of these writes: w1_first, "
                    "w1_cow, w1_mor, w3a, w3b (issue 41)")
    ap.add_argument("--scale", type=float, default=1.0, help="--phases: row counts of W3a / W3b (and W1) times this")
    ap.add_argument("--w1-scale", type=float, default=None, help="--phases: W1's scale if not --scale (1: 1M rows)")
    ap.add_argument("--delta-w2", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.delta_w2:
        delta_w2_child(args.repeats)
        return
    if args.phases:
        names = [n.strip() for n in args.phases.split(",") if n.strip()]
        w1_scale = args.scale if args.w1_scale is None else args.w1_scale
        common.bench_main("write_phases", lambda: run_phases(names, args.scale, w1_scale, args.top, args.repeats),
                          report_phases_spark)
        return
    if args.profile:
        common.bench_main("write_profile", lambda: {"profile": run_profile(args.top)}, lambda _: "")
        return
    global TABLE_VERSION
    TABLE_VERSION = args.table_version
    if args.versions:
        common.bench_main("write_w1_versions", lambda: run_w1_versions([int(v) for v in args.versions.split(",")],
                                                                       args.repeats), report_w1_versions)
    elif args.workload == "w1":
        common.bench_main("write_w1", lambda: run_w1([c.strip() for c in args.cases.split(",") if c.strip()],
                                                     args.repeats, not args.no_eventlog,
                                                     [m.strip() for m in args.sort_modes.split(",") if m.strip()],
                                                     args.driver, args.adaptive),
                          report_w1)
    else:
        common.bench_main("write_w2", lambda: run_w2(args.repeats, not args.no_eventlog), report_w2)


if __name__ == "__main__":
    main()
