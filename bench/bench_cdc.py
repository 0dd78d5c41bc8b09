"""CDC benchmark (issue 28): what change data costs a write, and a CDC read beside the incremental read.

  upsert  W1's upsert (100,000 updates in every partition + 10,000 inserts) into the 1,000,000-row W1 table, COW and
          MOR, with and without `hoodie.table.cdc.enabled=true` (DATA_BEFORE_AFTER), in one run, interleaved, each
          run on a fresh copy of its table (`hudi_engine.spark.write`, as bench_write.py's W1)
  read    after that upsert, in this process: the CDC query of its one commit (`HudiTable.read_changes`, JSON
          images, and struct images) vs the incremental query of the same commit (`HudiTable.read_incremental`),
          COW (the CDC log files) and MOR (the log files against the slices before them)

Each figure: one untimed warm-up, then the median of 3 (BENCH_REPEATS) runs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import DATA_DIR, Case

CDC = {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER"}
TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def options(table_type: str, operation: str, cdc: bool) -> dict[str, str]:
    return common.hudi_options(table_type, operation) | (CDC if cdc else {})


def run() -> dict:
    from hudi_engine import HudiTable
    from hudi_engine.spark import write

    base = DATA_DIR / "cdc"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    spark = common.spark_session()
    df, bdf = common.cached_df(spark, src), common.cached_df(spark, bdir)
    pristine = {}
    print("setting up the W1 tables, with and without CDC (untimed)", flush=True)
    for short, table_type in TYPES.items():
        for cdc in (False, True):
            path = common.fresh(base / f"pristine_{short}{'_cdc' if cdc else ''}")
            write(df, str(path), options(table_type, "bulk_insert", cdc))
            pristine[(short, cdc)] = path

    print("upsert: 100,000 updates + 10,000 inserts, with and without CDC; each run on a fresh copy", flush=True)
    cases = []
    for (short, cdc), src_path in pristine.items():
        work = base / f"work_{short}{'_cdc' if cdc else ''}"
        name = f"{short}_upsert{'_cdc' if cdc else ''}"

        def upsert(_tag: str, work: Path = work, short: str = short, cdc: bool = cdc) -> dict:
            r = write(bdf, str(work), options(TYPES[short], "upsert", cdc))
            return {"files_rewritten": r.files_rewritten, "files_appended": r.files_appended,
                    "bytes_written": r.bytes_written}

        cases.append(Case(name, upsert, setup=lambda _t, s=src_path, w=work: common.copy_table(s, w)))
    writes = common.interleaved(cases, common.REPEATS)
    spark.stop()

    print("read of the upsert's one commit: CDC query vs incremental query (in process)", flush=True)
    reads = []
    for short in TYPES:
        path = base / f"work_{short}_cdc"  # the last timed upsert's table
        table = HudiTable.load(str(path))
        commits = table.timeline.completed_commits()
        before = commits[len(commits) - 2].timestamp
        rows = {"cdc": table.read_changes(before).num_rows, "incremental": table.read_incremental(before).num_rows}
        print(f"  {short}: {rows['cdc']} changes, {rows['incremental']} incremental rows", flush=True)
        reads += [Case(f"{short}_cdc_read_json", lambda _t, t=table, b=before: {"rows": t.read_changes(b).num_rows}),
                  Case(f"{short}_cdc_read_struct",
                       lambda _t, t=table, b=before: {"rows": t.read_changes(b, images="struct").num_rows}),
                  Case(f"{short}_incremental_read", lambda _t, t=table, b=before: {"rows": t.read_incremental(b).num_rows})]
    return {"writes": writes, "reads": common.interleaved(reads, common.REPEATS)}


def report(out: dict) -> str:
    writes, read_times = out["writes"], out["reads"]
    lines = ["| W1 upsert | without CDC | with CDC | ratio |", "|---|---|---|---|"]
    for short in TYPES:
        plain, cdc = writes[f"{short}_upsert"].median, writes[f"{short}_upsert_cdc"].median
        lines.append(f"| {short} | {plain:.2f} s | {cdc:.2f} s | {cdc / plain:.2f}x |")
    lines += ["", "| one commit read | CDC (JSON) | CDC (struct) | incremental |", "|---|---|---|---|"]
    for short in TYPES:
        lines.append(f"| {short} | {read_times[f'{short}_cdc_read_json'].median:.2f} s | "
                     f"{read_times[f'{short}_cdc_read_struct'].median:.2f} s | "
                     f"{read_times[f'{short}_incremental_read'].median:.2f} s |")
    return "\n".join(lines)


def main() -> None:
    common.bench_main("cdc", run, report)


if __name__ == "__main__":
    main()
