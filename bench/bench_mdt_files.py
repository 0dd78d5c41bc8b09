"""The write overhead of keeping the metadata table's `files` partition (issue 37's bench item: at most 1.15x a
commit without it), and of keeping its column and partition stats too: the same upserts into three copies of one
COW table, one created with `hoodie.metadata.enable=true` (the engine keeps, cleans and compacts its metadata table:
`hoodie.metadata.compact.max.delta.commits` at Hudi's 10, so the rounds include its compactions), one also with
`hoodie.metadata.index.column.stats.enable=true` (Hudi 1.x's Spark default: column stats of every column, partition
stats), the third without, interleaved in one process (`common.interleaved`, alternating the order). The ratios are
of the medians.

    bench/run.sh mdt-files      (BENCH_MDT_ROWS: the table's rows, 1,000,000; BENCH_MDT_BATCH: the upsert's, 10,000)
"""
from __future__ import annotations

import os

import numpy as np
from common import DATA_DIR, REPEATS, Case, _rows, bench_main, fresh, hudi_options, interleaved, warmups

from hudi_engine import HudiTable
from hudi_engine.write_pipeline import write_table

ROWS = int(os.environ.get("BENCH_MDT_ROWS", "1000000"))
BATCH = int(os.environ.get("BENCH_MDT_BATCH", "10000"))
GOAL = 1.15
WITH, STATS, WITHOUT = ("upsert, metadata table kept", "upsert, metadata table with column stats kept",
                        "upsert, no metadata table")


def run() -> dict:
    root = fresh(DATA_DIR / "mdt_files")
    rng = np.random.default_rng(37)
    base = _rows(np.arange(ROWS, dtype=np.int64), rng, 0)
    paths = {WITH: str(root / "with"), STATS: str(root / "stats"), WITHOUT: str(root / "without")}
    for name, path in paths.items():
        on = {WITH: {"hoodie.metadata.enable": "true"}, STATS: {"hoodie.metadata.enable": "true",
              "hoodie.metadata.index.column.stats.enable": "true"}}.get(name, {})
        write_table(base, path, {**hudi_options("COPY_ON_WRITE", "bulk_insert"), **on})
    options = hudi_options("COPY_ON_WRITE", "upsert")
    batches: dict[str, object] = {}

    def batch(tag: str) -> None:
        label = tag.rsplit("-", 1)[1]
        if label not in batches:  # both tables get the same rows in a round
            ids = rng.choice(ROWS, BATCH, replace=False).astype(np.int64)
            batches[label] = _rows(ids, rng, 10 ** 15)

    def upsert(name: str):
        def go(tag: str) -> dict:
            HudiTable.load(paths[name]).write(batches[tag.rsplit("-", 1)[1]], options)
            return {}
        return go

    ms = interleaved([Case(WITH, upsert(WITH), batch), Case(STATS, upsert(STATS), batch),
                      Case(WITHOUT, upsert(WITHOUT), batch)], repeats=max(REPEATS, 12), alternate=True)
    return {"measures": list(ms.values()), "cold": warmups(ms), "goal": GOAL, "rows": ROWS,
            "batch": BATCH, "ratio": ms[WITH].median / ms[WITHOUT].median,
            "stats_ratio": ms[STATS].median / ms[WITHOUT].median}


def main() -> None:
    bench_main("mdt_files", run, lambda out: (
        f"{out['batch']:,}-row upsert into a {out['rows']:,}-row COW table: with the metadata table's files "
        f"partition kept / without: {out['ratio']:.2f}x (goal <= {GOAL}x); with column and partition stats kept "
        f"too / without: {out['stats_ratio']:.2f}x"))


if __name__ == "__main__":
    main()
