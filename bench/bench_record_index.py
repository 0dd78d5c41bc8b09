"""Upsert cost against table size with the record index (issue 37's bench item: with RECORD_INDEX, 10x the table
costs at most 1.3x the time): the same 10,000-row upsert (1% of the smaller table; half stored keys, half new) into
MERGE_ON_READ tables of 1,000,000 and 10,000,000 rows, each tagged three ways, interleaved in one process
(`common.interleaved`, alternating the order): `hoodie.index.type=RECORD_INDEX` (the table's metadata table with
its record index, built by the bulk insert: only the index's file groups the batch's keys hash to are read),
`SIMPLE` (the keys of every latest base file of the touched partitions), `BLOOM` (their footers, then keys). Each
index writes its own copy of the table (the upserts change it). The ratios are of the medians, of the whole upsert
and of its tagging alone (`timings["tag"]`).

MERGE_ON_READ by default: its updates are log appends, so the write itself follows the batch and what grows with
the table is the tagging. A COW upsert of random keys rewrites every file group they touch (all of them), so every
index grows with the table there (BENCH_RLI_TABLE_TYPE=COPY_ON_WRITE shows it).

    bench/run.sh record-index   (BENCH_RLI_SIZES: table rows, "1000000,10000000"; BENCH_RLI_BATCH: 10,000;
                                 BENCH_RLI_TABLE_TYPE: MERGE_ON_READ; BENCH_RLI_REUSE=1: the tables an
                                 earlier run built, when there, instead of building them again)
"""
from __future__ import annotations

import os

import numpy as np
from common import DATA_DIR, REPEATS, Case, _rows, bench_main, fresh, hudi_options, interleaved, warmups

from hudi_engine import HudiTable
from hudi_engine.write_pipeline import write_table

SIZES = [int(s) for s in os.environ.get("BENCH_RLI_SIZES", "1000000,10000000").split(",")]
BATCH = int(os.environ.get("BENCH_RLI_BATCH", "10000"))
TABLE_TYPE = os.environ.get("BENCH_RLI_TABLE_TYPE", "MERGE_ON_READ")
REUSE = os.environ.get("BENCH_RLI_REUSE") == "1"  # the tables of an earlier run, as its upserts left them
GOAL = 1.3
INDEXES = {"RECORD_INDEX": {"hoodie.index.type": "RECORD_INDEX"}, "SIMPLE": {"hoodie.index.type": "SIMPLE"},
           "BLOOM": {"hoodie.index.type": "BLOOM"}}
CHUNK = 1_000_000  # rows per bulk insert (the base table is written in chunks to bound memory)


def _build(path: str, rows: int, rng: np.random.Generator, extra: dict[str, str]) -> None:
    for start in range(0, rows, CHUNK):
        ids = np.arange(start, min(rows, start + CHUNK), dtype=np.int64)
        write_table(_rows(ids, rng, 0), path, {**hudi_options(TABLE_TYPE, "bulk_insert" if start == 0 else
                                                              "insert"), **extra})


def run() -> dict:
    root = DATA_DIR / "record_index" if REUSE else fresh(DATA_DIR / "record_index")
    rng = np.random.default_rng(3737)
    paths = {(n, index): str(root / f"{index.lower()}_{n}") for n in SIZES for index in INDEXES}
    for (n, index), path in paths.items():
        if REUSE and (root / f"{index.lower()}_{n}" / ".hoodie").is_dir():
            continue
        # RECORD_INDEX's table carries the index from its first write (the metadata table with it)
        _build(path, n, np.random.default_rng(n), {"hoodie.metadata.record.index.enable": "true"}
               if index == "RECORD_INDEX" else {})
    batches: dict[tuple[int, str], object] = {}

    def batch(tag: str) -> None:
        label = tag.rsplit("-", 1)[1]
        for n in SIZES:  # every case of a round writes the same rows into its table of that size
            if (n, label) not in batches:
                stored = rng.choice(n, BATCH // 2, replace=False)
                new = n + 10 * BATCH * (len(batches) + 1) + np.arange(BATCH - BATCH // 2)
                batches[(n, label)] = _rows(np.concatenate([stored, new]).astype(np.int64), rng, 10 ** 15)

    def upsert(n: int, index: str):
        options = {**hudi_options(TABLE_TYPE, "upsert"), **INDEXES[index]}

        def go(tag: str) -> dict:
            result = HudiTable.load(paths[(n, index)]).write(batches[(n, tag.rsplit("-", 1)[1])], options)
            return {"timings": {k: round(v, 3) for k, v in result.timings.items()}}
        return go

    cases = [Case(f"{index} upsert into {n:,} rows", upsert(n, index), batch) for n in SIZES for index in INDEXES]
    ms = interleaved(cases, repeats=max(REPEATS, 5), alternate=True)
    small, big = SIZES[0], SIZES[-1]
    ratios = {index: ms[f"{index} upsert into {big:,} rows"].median / ms[f"{index} upsert into {small:,} rows"].median
              for index in INDEXES}

    def tag_median(index: str, n: int) -> float:
        extras = ms[f"{index} upsert into {n:,} rows"].extra
        return float(np.median([e["timings"].get("tag", 0.0) for e in extras]))
    tags = {index: {n: tag_median(index, n) for n in SIZES} for index in INDEXES}
    return {"measures": list(ms.values()), "cold": warmups(ms), "goal": GOAL, "sizes": SIZES, "batch": BATCH,
            "table_type": TABLE_TYPE, "growth": ratios, "tag_s": tags,
            "tag_growth": {index: t[big] / t[small] if t[small] else None for index, t in tags.items()}}


def main() -> None:
    bench_main("record_index", run, lambda out: (
        f"{out['batch']:,}-row upsert ({out['table_type']}), {out['sizes'][-1]:,}-row table / {out['sizes'][0]:,}-row "
        "table: " + ", ".join(f"{k} {v:.2f}x (tagging {out['tag_growth'][k] or 0:.2f}x)"
                              for k, v in out["growth"].items()) + f" (goal RECORD_INDEX <= {GOAL}x)"))


if __name__ == "__main__":
    main()
