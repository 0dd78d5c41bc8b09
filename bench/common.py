"""Shared pieces of the benchmarks: the seeded workloads, a timer, peak memory, the Spark session, the machine.

Workloads (issues 2 and 3): 9 columns -- `id` int64 (the record key), `name`, `category`, `comment` strings,
`price` double, `qty` int32, `active` bool, `ts` timestamp (the precombine field), `dt` a date string with 10
values (the partition path). W1 has 1,000,000 rows, W2 10,000,000. Rows are generated in chunks of 1,000,000
ids, each chunk from its own seeded generator, so W1 is exactly the first chunk of W2 and a run on any machine
makes the same data. The partition of an id is a hash of the id, so an update finds its row's partition
without a lookup and any set of ids is spread over all partitions.

The upsert batch is the same for W1 and W2: 100,000 updates of ids drawn from the first 1,000,000 (present in
both tables, spread over every partition), same partition, newer `ts`, new values; plus 10,000 inserts of ids
that are in neither table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import spark_probe

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
DATA_DIR = Path(os.environ.get("BENCH_DATA", BENCH_DIR / "data"))

CHUNK = 1_000_000
SEED = 20240601
N_PARTITIONS = 10
UPDATES = 100_000
INSERTS = 10_000
INSERT_ID_BASE = 1_000_000_000  # ids of the batch's inserts: in neither W1 nor W2
W1_ROWS = 1_000_000
W2_ROWS = 10_000_000
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("name", pa.string()),
    pa.field("category", pa.string()),
    pa.field("comment", pa.string()),
    pa.field("price", pa.float64()),
    pa.field("qty", pa.int32()),
    pa.field("active", pa.bool_()),
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("dt", pa.string()),
])
DATES = [f"2024-01-{d:02d}" for d in range(1, N_PARTITIONS + 1)]
CATEGORIES = [f"category_{i:02d}" for i in range(20)]
_BASE_TS = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp() * 1_000_000)
_UPDATE_TS = int(datetime(2024, 3, 1, tzinfo=UTC).timestamp() * 1_000_000)
_MONTH_US = 28 * 24 * 3600 * 1_000_000


def _comment_pool(rng: np.random.Generator, n: int = 4096) -> pa.Array:
    """Free text of 10..60 characters: a pool sampled per row (enough variety that it is not one dictionary page)."""
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz     ", dtype=np.uint8)
    lengths = rng.integers(10, 61, n)
    chars = letters[rng.integers(0, len(letters), int(lengths.sum()))]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())])


def partition_of(ids: np.ndarray) -> pa.Array:
    """The `dt` of each id: a multiplicative hash, so partitions are even and any id set spreads over all."""
    h = (ids.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(1 << 32)
    return pa.array(np.asarray(DATES, dtype=object)[(h % np.uint64(N_PARTITIONS)).astype(np.int64)], pa.string())


def _rows(ids: np.ndarray, rng: np.random.Generator, ts_base: int) -> pa.Table:
    n = len(ids)
    names = pc.binary_join_element_wise("user_", pa.array(rng.integers(0, 5_000_000, n)).cast(pa.string()), "")
    cats = pa.array(np.asarray(CATEGORIES, dtype=object)[rng.integers(0, len(CATEGORIES), n)], pa.string())
    comments = _comment_pool(rng).take(pa.array(rng.integers(0, 4096, n)))
    ts = pa.array(ts_base + rng.integers(0, _MONTH_US, n), pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    return pa.Table.from_arrays([
        pa.array(ids, pa.int64()), names, cats, comments,
        pa.array(np.round(rng.uniform(0, 1000, n), 2)), pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
        pa.array(rng.random(n) < 0.5), ts, partition_of(ids),
    ], schema=SCHEMA)


def chunk(c: int) -> pa.Table:
    """Rows with ids [c * 1,000,000, (c + 1) * 1,000,000)."""
    rng = np.random.default_rng([SEED, c])
    return _rows(np.arange(c * CHUNK, (c + 1) * CHUNK, dtype=np.int64), rng, _BASE_TS)


def upsert_batch() -> pa.Table:
    """100,000 updates (ids from the first million, every partition) and 10,000 new ids; newer `ts` throughout."""
    rng = np.random.default_rng([SEED, 999_999])
    upd = np.sort(rng.choice(CHUNK, UPDATES, replace=False)).astype(np.int64)
    ins = np.arange(INSERT_ID_BASE, INSERT_ID_BASE + INSERTS, dtype=np.int64)
    return _rows(np.concatenate([upd, ins]), rng, _UPDATE_TS)


def source_dir(rows: int) -> Path:
    """Parquet files of the first `rows` rows (one file per million), made once and reused across runs."""
    d = DATA_DIR / "source" / f"rows_{rows}"
    done = d / "_DONE"
    if not done.exists():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for c in range(rows // CHUNK):
            pq.write_table(chunk(c), d / f"part-{c:04d}.parquet")
        done.write_text("ok\n")
    return d


def batch_dir() -> Path:
    d = DATA_DIR / "source" / "upsert_batch"
    if not (d / "_DONE").exists():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        pq.write_table(upsert_batch(), d / "part-0000.parquet")
        (d / "_DONE").write_text("ok\n")
    return d


def read_source(d: Path) -> pa.Table:
    return pq.read_table(sorted(str(p) for p in d.glob("*.parquet")), schema=SCHEMA)


# ---- options -------------------------------------------------------------------------------------------------

def hudi_options(table_type: str, operation: str) -> dict[str, str]:
    """Hudi's own keys; everything else (compression: snappy, index: SIMPLE, file sizes) left at the defaults."""
    return {
        "hoodie.table.name": "bench",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": operation,
    }


# ---- Spark ---------------------------------------------------------------------------------------------------

SPARK_CONF = {
    # Local mode: the driver JVM is also the executor. The test suite's 1 GB is tight for caching 10M rows.
    "spark.driver.memory": os.environ.get("BENCH_DRIVER_MEMORY", "4g"),
    "spark.sql.shuffle.partitions": os.environ.get("BENCH_SHUFFLE_PARTITIONS", "4"),
    "spark.default.parallelism": os.environ.get("BENCH_SHUFFLE_PARTITIONS", "4"),
}


def spark_session(native: bool = False):
    """The benchmarks' session; `native`: with the JVM `hudi` source (hudi_engine.spark.native)."""
    from hudi_engine.spark.session import local_spark_session

    warehouse = DATA_DIR / "spark-warehouse"
    return local_spark_session(app_name="hudi-bench", master=os.environ.get("BENCH_MASTER", "local[*]"),
                               warehouse_dir=warehouse, extra_conf=SPARK_CONF, native=native)


def cached_df(spark, d: Path):
    """A Spark DataFrame of the parquet files in `d`, cached and counted (so the write's timer starts from memory)."""
    df = spark.read.parquet(str(d)).cache()
    df.count()
    return df


# ---- timing and memory ---------------------------------------------------------------------------------------

@dataclass
class Measure:
    """Times of `REPEATS` runs of one thing, plus whatever each run reported, and its untimed warm-up's time."""

    name: str
    times: list[float] = field(default_factory=list)
    extra: list[dict] = field(default_factory=list)
    cold: float | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def runs(self, digits: int = 2) -> str:
        """`median s (run, run, ...)`: the figure and the runs it is the median of."""
        return f"{self.median:.{digits}f} s ({', '.join(f'{t:.{digits}f}' for t in self.times)})"

    def to_dict(self) -> dict:
        return {"name": self.name, "median_s": self.median, "times_s": self.times, "extra": self.extra}


@dataclass
class Case:
    """One thing to time: `setup(label)` runs untimed before each run (e.g. copying a table), `run(label)` is
    timed and may return a dict of details (timings per phase, file counts) kept with the time."""

    name: str
    run: Callable[[str], dict | None]
    setup: Callable[[str], object] | None = None


def interleaved(cases: list[Case], repeats: int = REPEATS, warmup: bool = True,
                alternate: bool = False) -> dict[str, Measure]:
    """One untimed warm-up of each case, then `repeats` rounds running every case once per round, so that load
    drift on a shared machine hits all of them alike; `alternate`: odd rounds (the warm-up is round 0) run the
    cases in reverse order, so that none always runs on another's warm caches. A run's label is
    `<case>-warm` or `<case>-<round>`."""
    ms = {c.name: Measure(c.name) for c in cases}
    rounds = ([("warm-up", True)] if warmup else []) + [(f"{i + 1}", False) for i in range(repeats)]
    for i, (label, is_warm) in enumerate(rounds):
        for c in reversed(cases) if alternate and i % 2 else cases:
            tag = f"{c.name}-{'warm' if is_warm else label}"
            if c.setup is not None:
                c.setup(tag)
            t0 = time.perf_counter()
            extra = c.run(tag) or {}
            elapsed = time.perf_counter() - t0
            if is_warm:
                ms[c.name].cold = elapsed
            else:
                ms[c.name].times.append(elapsed)
                ms[c.name].extra.append(extra)
            print(f"  {c.name} [{'warm-up, not counted' if is_warm else 'run ' + label}]: {elapsed:.3f} s "
                  f"{_short(extra)}", flush=True)
    for m in ms.values():
        print(f"  {m.name}: median {m.median:.3f} s of {len(m.times)}", flush=True)
    return ms


def warmups(ms: dict[str, Measure]) -> dict[str, float]:
    """The warm-up time of every measure that had one."""
    return {k: m.cold for k, m in ms.items() if m.cold is not None}


def _short(extra: dict) -> str:
    return json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in extra.items()}) if extra else ""


def rss_mb() -> float:
    """This process's resident set now (VmRSS), MB."""
    return spark_probe.vm_rss_mb("self")


def peak_rss_mb(pid: int | str = "self") -> float:
    """Peak resident set (VmHWM) of a process since it started, MB."""
    peak = spark_probe.status_mb(pid, "VmHWM")
    return float("nan") if peak is None else peak


def maxrss_mb() -> float:
    """`resource.getrusage(RUSAGE_SELF).ru_maxrss`: this Python process's peak RSS since it started, MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler:
    """Peak VmRSS while a block runs, sampled every 20 ms: this process, optionally another pid (the Spark JVM),
    and the Python workers under that pid (`pyspark.daemon` and the workers it forks): the largest one."""

    def __init__(self, other_pid: int | None = None) -> None:
        self.other_pid = other_pid
        self.peak = 0.0
        self.other_peak = 0.0
        self.worker_peak = 0.0
        self._stop = threading.Event()

    @staticmethod
    def _rss(pid) -> float:
        return spark_probe.vm_rss_mb(pid)

    def _workers(self) -> list[int]:
        """Python processes descending from the JVM."""
        stats = spark_probe.process_stats()
        out = []
        for pid in stats:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"pyspark" not in f.read():
                        continue
            except OSError:
                continue
            if pid != self.other_pid and spark_probe.descends_from(pid, self.other_pid, stats, max_hops=9):
                out.append(pid)
        return out

    def _loop(self) -> None:
        tick = 0
        workers: list[int] = []
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._rss("self"))
            if self.other_pid:
                self.other_peak = max(self.other_peak, self._rss(self.other_pid))
                if tick % 10 == 0:  # new workers appear rarely: look for them every 200 ms
                    workers = self._workers()
                for pid in workers:
                    self.worker_peak = max(self.worker_peak, self._rss(pid))
            tick += 1

    def __enter__(self) -> "RssSampler":
        self.peak = self._rss("self")
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self._rss("self"))


# ---- files ---------------------------------------------------------------------------------------------------

def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def copy_table(src: Path, dst: Path) -> Path:
    """A copy of a table directory (hidden files included), replacing `dst`."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


# ---- machine -------------------------------------------------------------------------------------------------

def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    versions = {}
    for mod in ("pyarrow", "pyspark", "deltalake", "hudi", "fastavro", "numpy"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - a missing optional module is reported as such
            versions[mod] = "n/a"
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except (OSError, IndexError):
        java = "n/a"
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "hudi_engine"],
                               capture_output=True, text=True).stdout.strip()
        git = commit + (" + uncommitted changes in hudi_engine/" if dirty else "")
    except OSError:
        git = "n/a"
    return {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "git": git, "nproc": os.cpu_count(),
            "ram": mem, "cpu": cpu, "python": platform.python_version(), "kernel": platform.release(),
            "java": java, **versions}


def save_results(name: str, payload: dict) -> Path:
    """`payload` with the machine and the command line, as `<name>.json` under the results folder; a `Measure`
    is written as its `to_dict()`."""
    out = DATA_DIR / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), "argv": sys.argv, **payload}, indent=2,
                               default=lambda o: o.to_dict() if isinstance(o, Measure) else str(o)))
    print(f"results: {path}", flush=True)
    return path


# ---- a benchmark's command line and ending -------------------------------------------------------------------

def arg_parser(doc: str | None) -> argparse.ArgumentParser:
    """The benchmark's command line: its docstring as the help, and `--repeats` (BENCH_REPEATS, 3)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=REPEATS, help="timed rounds after the warm-up")
    return ap


def bench_main(name: str, run: Callable[[], dict], report: Callable[[dict], str]) -> None:
    """The end of every benchmark's `main()`: the machine and the load average before and after `run()`, then
    `report(out)` (Markdown; `out` holds `load_before` and `load_after` by then), saved with `out` as
    `<name>.json` and printed."""
    print(json.dumps(machine()), flush=True)
    load_before = os.getloadavg()
    print(f"load average before: {load_before}", flush=True)
    out = run()
    out.update(load_before=load_before, load_after=os.getloadavg())
    print(f"load average after: {out['load_after']}", flush=True)
    text = report(out)
    save_results(name, {**out, "markdown": text})
    print("\n" + text)
