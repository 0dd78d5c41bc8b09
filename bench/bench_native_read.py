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


def run(repeats: int) -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import create_catalog_table
    from hudi_engine.spark.relation import read_table

    compile_s = compile_times()
    print(f"compile: {compile_s}", flush=True)
    spark = common.spark_session(native=True)
    results, cold = {}, {}
    for name in ("cow", "mor10"):
        path = str(sr.TABLES[name])
        catalog = f"bench_native_{name}"
        spark.sql(f"DROP TABLE IF EXISTS {catalog}")
        create_catalog_table(spark, catalog, path)
        files = sorted(s.base_file.path for s in HudiTable.load(path).file_slices() if s.base_file is not None)
        readers = {
            "parquet": lambda files=files: spark.read.parquet(*files),
            "catalog": lambda catalog=catalog: spark.table(catalog),
            "format": lambda path=path: spark.read.format("hudi").load(path),
            "read_table": lambda path=path: read_table(spark, path),
        }
        for qname, query in sr.QUERIES.items():
            seen: dict[str, tuple] = {}
            cases = [sr._case(f"{name}_{qname}", reader, make, query, seen) for reader, make in readers.items()]
            ms, c = common.interleaved(cases, repeats)
            results.update(ms)
            cold.update(c)
            peer = "parquet" if name == "cow" else "read_table"
            for reader in ("catalog", "format"):
                if seen[reader] != seen[peer]:
                    raise RuntimeError(f"{name} {qname}: {reader} read {seen[reader]}, {peer} read {seen[peer]}")
    spark.stop()
    return {"results": results, "cold": cold, "compile": compile_s}


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
    return "\n".join(lines)


def main() -> None:
    print(json.dumps(common.machine()), flush=True)
    print(f"load average before: {os.getloadavg()}", flush=True)
    if not all((p / ".hoodie").exists() for p in sr.TABLES.values()):
        print("making the tables (child process with Spark)", flush=True)
        subprocess.run([sys.executable, sr.__file__, "--make-tables"], check=True)
    out = run(common.REPEATS)
    print(f"load average after: {os.getloadavg()}", flush=True)
    text = report(out)
    out["results"] = {k: v.to_dict() for k, v in out["results"].items()}
    out["markdown"] = text
    common.save_results("native_read", out)
    print("\n" + text)


if __name__ == "__main__":
    main()
