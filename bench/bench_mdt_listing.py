"""Snapshot planning with and without the metadata table, on an object store (issue 37's bench item): a table of
about 2,000 files (N_PARTITIONS date partitions, N_WRITES bulk inserts each writing one file a partition) on moto's
S3 server on localhost (tests/s3_server.py), written twice: once with `hoodie.metadata.enable=true` (reads then list
files from its files partition), once without (reads list every partition). Each variant plans a snapshot read
(`HudiTable.load(...).plan_scan()`: the timeline, the listing, the slices) REPEATS times, interleaved, after one
warm-up each; medians. LIST requests are counted by wrapping the storage's `list_dir`; as in bench_listing.py, moto
answers a LIST in ~2 ms of CPU where a cloud store waits tens of milliseconds, so the second half adds LATENCY_MS
(20) of sleep to every LIST.

    bench/run.sh mdt-listing   (BENCH_MDT_PARTITIONS: 200, BENCH_MDT_WRITES: 10)
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import common
from s3_server import CREDENTIALS, start_server

from hudi_engine import HudiTable
from hudi_engine.storage import Storage
from hudi_engine.write_pipeline import write_table

N_PARTITIONS = int(os.environ.get("BENCH_MDT_PARTITIONS", "200"))
N_WRITES = int(os.environ.get("BENCH_MDT_WRITES", "10"))
REPEATS = max(5, common.REPEATS)
LATENCY_MS = float(os.environ.get("BENCH_LIST_LATENCY_MS", "20"))


def run() -> dict:
    os.environ.update(CREDENTIALS)
    server = start_server()
    calls, latency = [0], [0.0]
    original = Storage.list_dir

    def counted(self: Storage, path: str):
        calls[0] += 1
        time.sleep(latency[0])
        return original(self, path)

    try:
        bucket = server.new_bucket()
        uris = {"with the metadata table": server.uri(bucket, "with"), "without": server.uri(bucket, "without")}
        for name, uri in uris.items():
            options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                       "hoodie.datasource.write.partitionpath.field": "dt",
                       "hoodie.datasource.write.precombine.field": "ts",
                       "hoodie.datasource.write.operation": "bulk_insert",
                       **({"hoodie.metadata.enable": "true"} if name != "without" else {})}
            for w in range(N_WRITES):
                ids = [f"k{w}-{i}" for i in range(N_PARTITIONS)]
                write_table(pa.table({"id": ids, "ts": [1] * N_PARTITIONS,
                                      "dt": [f"d{i:04d}" for i in range(N_PARTITIONS)]}), uri, options)
        Storage.list_dir = counted  # type: ignore[method-assign]

        def case(name: str, uri: str, delay: float) -> common.Case:
            def setup(_: str) -> None:
                latency[0], calls[0] = delay, 0

            def plan(_: str) -> dict:
                slices = HudiTable.load(uri).plan_scan().slices
                assert len(slices) == N_PARTITIONS * N_WRITES, len(slices)
                return {"lists": calls[0]}
            return common.Case(name, plan, setup)

        cases = [case(f"{name}{f' (+{d * 1000:.0f} ms per LIST)' if d else ''}", uri, d)
                 for d in (0.0, LATENCY_MS / 1000) for name, uri in uris.items()]
        ms = common.interleaved(cases, REPEATS, alternate=True)
    finally:
        Storage.list_dir = original  # type: ignore[method-assign]
        server.stop()
    return {"results": ms, "lists": {k: m.extra[-1]["lists"] for k, m in ms.items()}}


def report(out: dict) -> str:
    lines = [f"{N_PARTITIONS * N_WRITES} files in {N_PARTITIONS} partitions on moto's S3 server (localhost), "
             f"{REPEATS} runs each, medians:", "", "| snapshot planning | LIST calls | time |", "|---|---|---|"]
    for name, m in out["results"].items():
        lines.append(f"| {name} | {out['lists'][name]} | {m.median * 1000:.0f} ms |")
    return "\n".join(lines)


def main() -> None:
    common.bench_main("mdt_listing", run, report)


if __name__ == "__main__":
    main()
