"""The catalog name on the native `hudi` source (issue 24) beside Spark's parquet reader on the same base files,
one process, one run.

Tables: those of bench_spark_read.py (W1, 1,000,000 rows, 10 partitions; `cow`, and `mor10` with 10% of its slices
logged), made by its child process when missing. Queries: the issue's three (agg, point, part). Readers, each timed
from building the DataFrame to the collected result:
  parquet     spark.read.parquet(<the latest base files>) (the peer; on mor10 the base files without their logs)
  catalog     spark.table(<catalog name>) over the native source: base files on Spark's parquet scan, slices with
              log files merged by the Python source
  format      spark.read.format("hudi").load(path), the same source
  read_table  hudi_engine.spark.relation.read_table (what dbt's ref() reads today; context)
Every reader's result is checked against the peer's (on mor10: catalog and format against read_table, which merges).
Also: the component's compile time, cold (an empty cache) and cached.

Then the same three queries as SQL through Spark's Thrift server (tests/thrift_server.py: one server, started for
the bench after the in-process session stopped, with the same Spark settings), on each table's `USING hudi` catalog
entry and on a `USING parquet` catalog table over a folder of hard links to the same latest base files (the peer),
all timed in one beeline session by beeline's own per-statement elapsed time (statement sent to last row fetched):
two warm-up rounds, then BENCH_THRIFT_REPEATS (9) rounds, each running every query on both tables, the hudi table
first in odd rounds and the parquet peer first in even ones (so neither always runs on the other's warm caches).
Reported: the median of each, its spread (min-max), and the ratio of the medians. The Thrift results of the hudi
tables are checked against the catalog name's in-process results.

Planning (in process): the time Spark takes to plan each query on the catalog name and on the parquet peer,
`queryExecution.executedPlan.execute()` on a fresh DataFrame with adaptive execution off (so that building the RDDs
runs no job): the JVM source's planning (the plan cache, or a round trip to the Python planner) and, on mor10, the
merge half's. Medians of BENCH_THRIFT_REPEATS.
"""
from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # thrift_server.py
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_spark_read as sr
import common


def compile_times() -> dict[str, float]:
    """Seconds to get the component: compiled into an empty cache, then found in it."""
    from hudi_engine.spark import native

    with tempfile.TemporaryDirectory() as tmp:
        os.environ[native.CACHE_ENV] = tmp
        try:
            t = time.perf_counter()
            native.component_jar()
            cold = time.perf_counter() - t
            t = time.perf_counter()
            native.component_jar()
            cached = time.perf_counter() - t
        finally:
            del os.environ[native.CACHE_ENV]
    return {"cold": cold, "cached": cached}


THRIFT_REPEATS = int(os.environ.get("BENCH_THRIFT_REPEATS", "9"))


def planning_times(spark, tables: dict[str, tuple[str, list[str]]], repeats: int) -> dict[str, list[float]]:
    """Seconds to plan each query (up to its RDDs, no job) on the catalog name and on the parquet peer; interleaved.
    `tables`: name -> (catalog name, the peer's base files)."""
    previous = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # else execute() runs the query's stages
    out: dict[str, list[float]] = {}
    try:
        for name, (catalog, files) in tables.items():
            for q, query in PLAN_QUERIES.items():
                # Rounds alternate: the catalog name first in the warm-up round, the peer first in the next.
                ms = common.interleaved([_plan_case(f"{name}_{q}_catalog", lambda c=catalog: spark.table(c), query),
                                         _plan_case(f"{name}_{q}_parquet", lambda f=files: spark.read.parquet(*f),
                                                    query)], repeats, alternate=True)
                out.update({k: m.times for k, m in ms.items()})
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", previous)
    return out


def _plan_case(name: str, make, query) -> common.Case:
    """Timed: Spark plans `query(make())`; the DataFrame is built in the untimed setup."""
    frame: list = []

    def setup(_: str) -> None:
        frame[:] = [query(make())]

    def plan(_: str) -> None:
        frame[0]._jdf.queryExecution().executedPlan().execute()

    return common.Case(name, plan, setup)


# bench_spark_read.QUERIES without their collect(): the DataFrame each query plans.
PLAN_QUERIES = {
    "agg": lambda d: d.groupBy("dt").agg({"price": "sum", "qty": "max"}),
    "point": lambda d: d.filter("qty = 7").select("id", "price"),
    "part": lambda d: d.filter(f"dt = '{sr.PARTITION}'").agg({"price": "sum"}),
}


def run(repeats: int) -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import create_catalog_table
    from hudi_engine.spark.relation import read_table

    compile_s = compile_times()
    print(f"compile: {compile_s}", flush=True)
    spark = common.spark_session(native=True)
    results: dict[str, common.Measure] = {}
    peers: dict[str, tuple[str, list[str]]] = {}
    for name in ("cow", "mor10"):
        path = str(sr.TABLES[name])
        catalog = f"bench_native_{name}"
        spark.sql(f"DROP TABLE IF EXISTS {catalog}")
        create_catalog_table(spark, catalog, path)
        files = sorted(s.base_file.path for s in HudiTable.load(path).file_slices() if s.base_file is not None)
        peers[name] = (catalog, files)
        readers = {
            "parquet": lambda files=files: spark.read.parquet(*files),
            "catalog": lambda catalog=catalog: spark.table(catalog),
            "format": lambda path=path: spark.read.format("hudi").load(path),
            "read_table": lambda path=path: read_table(spark, path),
        }
        for qname, query in sr.QUERIES.items():
            seen: dict[str, tuple] = {}
            cases = [sr._case(f"{name}_{qname}", reader, make, query, seen) for reader, make in readers.items()]
            results.update(common.interleaved(cases, repeats))
            peer = "parquet" if name == "cow" else "read_table"
            for reader in ("catalog", "format"):
                if seen[reader] != seen[peer]:
                    raise RuntimeError(f"{name} {qname}: {reader} read {seen[reader]}, {peer} read {seen[peer]}")
    reference = {f"{name}_{q}": _values(spark.sql(sql.format(table=f"bench_native_{name}")).collect())
                 for name in ("cow", "mor10") for q, sql in SQL.items()}
    planning = planning_times(spark, peers, THRIFT_REPEATS)
    spark.stop()
    return {"results": results, "cold": common.warmups(results), "compile": compile_s, "reference": reference,
            "planning": planning}


# The three queries of bench_spark_read.QUERIES, as SQL.
SQL = {
    "agg": "SELECT dt, sum(price), max(qty) FROM {table} GROUP BY dt",
    "point": "SELECT id, price FROM {table} WHERE qty = 7",
    "part": f"SELECT sum(price) FROM {{table}} WHERE dt = '{sr.PARTITION}'",
}


def _values(rows) -> list[tuple]:
    """A result as sorted tuples of floats and strings, comparable across clients (beeline prints text)."""
    def value(v):
        try:
            return float(v)
        except (TypeError, ValueError):
            return str(v)
    return sorted(tuple(value(v) for v in r) for r in rows)


def _same(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(math.isclose(u, v, rel_tol=1e-9) if isinstance(u, float) and isinstance(v, float)
                                 else u == v for u, v in zip(x, y)) for x, y in zip(a, b))


def run_thrift(repeats: int, reference: dict[str, list[tuple]]) -> dict:
    """The three queries through one Thrift server: hudi catalog tables beside parquet tables over the same base
    files; medians of beeline's per-statement times."""
    from thrift_server import ThriftServer

    from hudi_engine import HudiTable
    from hudi_engine.spark.catalog_entry import catalog_table_ddl

    folder = Path(tempfile.mkdtemp(prefix="bench-thrift-"))
    try:
        ddl = []
        for name in ("cow", "mor10"):
            path = str(sr.TABLES[name])
            base = folder / f"base_{name}"  # the latest base files, hard-linked: the parquet peer's table
            base.mkdir()
            for s in HudiTable.load(path).file_slices():
                if s.base_file is not None:
                    os.link(s.base_file.path, base / Path(s.base_file.path).name)
            ddl += [catalog_table_ddl(f"hudi_{name}", path).replace("\n", " "),
                    f"CREATE TABLE parquet_{name} USING parquet LOCATION '{base}'"]
        conf = {k: v for k, v in common.SPARK_CONF.items() if k != "spark.driver.memory"}
        server = ThriftServer(folder, master=os.environ.get("BENCH_MASTER", "local[*]"),
                              driver_memory=common.SPARK_CONF["spark.driver.memory"], conf=conf)
        try:
            t = time.perf_counter()
            server.wait()
            print(f"thrift server up in {time.perf_counter() - t:.1f} s", flush=True)
            server.text("; ".join(ddl))
            for name in ("cow", "mor10"):
                for q, sql in SQL.items():
                    got = _values(tuple(r.values()) for r in server.query(sql.format(table=f"hudi_{name}")))
                    if not _same(got, reference[f"{name}_{q}"]):
                        raise RuntimeError(f"thrift {name} {q}: {len(got)} rows differ from the catalog name's")
            # Two warm-up rounds, then the timed ones; each round runs every query on both tables, the hudi table
            # first in odd rounds and the peer first in even ones.
            cases: list[tuple[str, str]] = []
            for i in range(WARMUP_ROUNDS + repeats):
                for name in ("cow", "mor10"):
                    for q, sql in SQL.items():
                        order = ("hudi", "parquet") if i % 2 else ("parquet", "hudi")
                        cases += [(f"{name}_{q}_{reader}", sql.format(table=f"{reader}_{name}")) for reader in order]
            seconds = server.timed([sql for _, sql in cases])
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    warm = len(cases) * WARMUP_ROUNDS // (WARMUP_ROUNDS + repeats)
    times: dict[str, list[float]] = {}
    for (key, _), s in zip(cases[warm:], seconds[warm:]):
        times.setdefault(key, []).append(s)
    for key, ts in sorted(times.items()):
        print(f"  thrift {key}: median {statistics.median(ts):.3f} s ({min(ts):.3f}-{max(ts):.3f}) of {len(ts)}: "
              f"{ts}", flush=True)
    return {"times": times, "warmup": [s for s in seconds[:warm]]}


WARMUP_ROUNDS = 2


def report(out: dict) -> str:
    res = out["results"]

    def med(key: str) -> float:
        return res[key].median

    lines = [f"Component compile: {out['compile']['cold']:.1f} s cold, {out['compile']['cached'] * 1000:.0f} ms "
             "cached.", "",
             "| table, query | parquet (peer) | catalog name | catalog / parquet | goal | format(\"hudi\") | "
             "format / parquet | read_table / parquet |",
             "|---|---|---|---|---|---|---|---|"]
    for name, goal in (("cow", 1.1), ("mor10", 2.0)):
        for q in sr.QUERIES:
            peer, cat, fmt, rt = (f"{name}_{q}_{r}" for r in ("parquet", "catalog", "format", "read_table"))
            ratio = med(cat) / med(peer)
            lines.append(f"| {name} {q} | {med(peer):.2f} s | {med(cat):.2f} s | {ratio:.2f}x | <= {goal}x: "
                         f"{'**met**' if ratio <= goal else '**missed**'} | {med(fmt):.2f} s | "
                         f"{med(fmt) / med(peer):.2f}x | {med(rt) / med(peer):.2f}x |")
    planning = out.get("planning")
    if planning:
        lines += ["", "Planning in process (`executedPlan.execute()`, no job; median, min-max):", "",
                  "| table, query | parquet (peer) | catalog name | catalog - parquet |", "|---|---|---|---|"]
        for name in ("cow", "mor10"):
            for q in PLAN_QUERIES:
                peer, cat = planning[f"{name}_{q}_parquet"], planning[f"{name}_{q}_catalog"]
                lines.append(f"| {name} {q} | {_spread(peer, 1000, 'ms')} | {_spread(cat, 1000, 'ms')} | "
                             f"{(statistics.median(cat) - statistics.median(peer)) * 1000:+.0f} ms |")
    thrift = out.get("thrift")
    if thrift:
        n = len(thrift["times"]["cow_agg_hudi"])
        lines += ["", f"Through the Thrift server (beeline, one session, its per-statement elapsed time; {n} "
                  "rounds, median, min-max):", "",
                  "| table, query | parquet table (peer) | hudi catalog table | hudi / parquet | goal |",
                  "|---|---|---|---|---|"]
        for name, goal in (("cow", 1.1), ("mor10", 2.0)):
            for q in SQL:
                peer, hudi = thrift["times"][f"{name}_{q}_parquet"], thrift["times"][f"{name}_{q}_hudi"]
                ratio = statistics.median(hudi) / statistics.median(peer)
                lines.append(f"| {name} {q} | {_spread(peer)} | {_spread(hudi)} | {ratio:.2f}x | <= {goal}x: "
                             f"{'**met**' if ratio <= goal else '**missed**'} |")
    return "\n".join(lines)


def _spread(times: list[float], scale: float = 1.0, unit: str = "s") -> str:
    """`median unit (min-max)`."""
    digits = 0 if unit == "ms" else 2
    return (f"{statistics.median(times) * scale:.{digits}f} {unit} ({min(times) * scale:.{digits}f}-"
            f"{max(times) * scale:.{digits}f})")


def run_all() -> dict:
    if not all((p / ".hoodie").exists() for p in sr.TABLES.values()):
        print("making the tables (child process with Spark)", flush=True)
        subprocess.run([sys.executable, sr.__file__, "--make-tables"], check=True)
    out = run(common.REPEATS)
    print(f"load average after the in-process part: {os.getloadavg()}", flush=True)
    out["thrift"] = run_thrift(THRIFT_REPEATS, out.pop("reference"))
    return out


def main() -> None:
    common.bench_main("native_read", run_all, report)


if __name__ == "__main__":
    main()
