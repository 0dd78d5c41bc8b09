"""Listing a table on an object store: `FileSystemView.load` and the one-pass write's bounded driver listing
(`load_within`) one folder at a time against `LISTING_THREADS` folders at once, on moto's S3 server on localhost
(tests/s3_server.py). Moto answers one request at a time from one Python process, in ~2 ms: its LISTs cost CPU,
not a round trip, so listing at once gains little there. A cloud store's LIST takes tens of milliseconds of
waiting; the second half of the table models that by adding LATENCY_MS (20) of sleep to every LIST.

A table of N_PARTITIONS date partitions (W1's shape, more of them) is written once with the in-process writer; then
each variant lists it REPEATS times, interleaved, after one warm-up each; medians. LIST requests are counted by
wrapping the storage's `list_dir`.
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

from hudi_engine import fs_view
from hudi_engine.fs_view import FileSystemView
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write_pipeline import write_table

N_PARTITIONS = int(os.environ.get("BENCH_LIST_PARTITIONS", "60"))
REPEATS = max(5, common.REPEATS)
LATENCY_MS = float(os.environ.get("BENCH_LIST_LATENCY_MS", "20"))


def run() -> dict:
    os.environ.update(CREDENTIALS)
    server = start_server()
    try:
        uri = server.uri(server.new_bucket(), "listing")
        rows = N_PARTITIONS * 10
        table = pa.table({"id": [f"k{i}" for i in range(rows)], "ts": [1] * rows,
                          "dt": [f"2024-{1 + i % N_PARTITIONS // 28:02d}-{1 + i % N_PARTITIONS % 28:02d}"
                                 for i in range(rows)]})
        write_table(table, uri, {"hoodie.table.name": "listing", "hoodie.datasource.write.recordkey.field": "id",
                                 "hoodie.datasource.write.partitionpath.field": "dt",
                                 "hoodie.datasource.write.precombine.field": "ts",
                                 "hoodie.datasource.write.operation": "bulk_insert"})
        storage, base = Storage.for_uri(uri)
        calls = [0]
        latency = [0.0]
        list_dir = storage.list_dir

        def counted(path: str):
            calls[0] += 1
            time.sleep(latency[0])
            return list_dir(path)

        storage.list_dir = counted  # type: ignore[method-assign]

        def case(name: str, n: int, delay: float, load) -> common.Case:
            def setup(_: str) -> None:
                fs_view.LISTING_THREADS, latency[0], calls[0] = n, delay, 0

            def listing(_: str) -> dict:
                view = load()
                assert view is not None and len(view.partition_paths) == N_PARTITIONS
                return {"lists": calls[0]}

            return common.Case(name, listing, setup)

        cases = []
        for delay in (0.0, LATENCY_MS / 1000):
            extra = f" (+{delay * 1000:.0f} ms per LIST)" if delay else ""
            for n in (1, fs_view.LISTING_THREADS):
                at = "one at a time" if n == 1 else f"{n} at once"
                cases.append(case(f"load, {at}{extra}", n, delay,
                                  lambda: FileSystemView.load(TableLocation.at(storage, base))))
                cases.append(case(f"load_within(64 + partitions), {at}{extra}", n, delay, lambda: FileSystemView
                                  .load_within(TableLocation.at(storage, base), 64 + N_PARTITIONS)))
        threads = fs_view.LISTING_THREADS
        ms = common.interleaved(cases, REPEATS)
        fs_view.LISTING_THREADS = threads
    finally:
        server.stop()
    return {"results": ms, "lists": {k: m.extra[-1]["lists"] for k, m in ms.items()}}


def report(out: dict) -> str:
    lines = [f"{N_PARTITIONS} partitions on moto's S3 server (localhost), {REPEATS} runs each, medians:", "",
             "| listing | LIST calls | time |", "|---|---|---|"]
    for name, m in out["results"].items():
        lines.append(f"| {name} | {out['lists'][name]} | {m.median * 1000:.0f} ms |")
    return "\n".join(lines)


def main() -> None:
    common.bench_main("listing", run, report)


if __name__ == "__main__":
    main()
