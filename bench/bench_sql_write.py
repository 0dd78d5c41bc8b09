"""Spark's own write spellings (issue 29) beside the engine's write, on W1's upsert, in one run.

  engine    `hudi_engine.spark.write(batch, path, options)`: the engine's write, called from Python
  df.write  `batch.write.format("hudi").options(...).mode("append").save(path)`: the same upsert through Spark's
            writer API (planned by the JVM component, handed to the same write)
  merge     `MERGE INTO t USING batch s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`
            on the catalog table of the same table: the upsert of the batch through Spark SQL

The batch is W1's (100,000 updates in every partition + 10,000 inserts) into the 1,000,000-row W1 table, COW and
MOR; every run starts from an identical copy of the table (copied untimed) and the three spellings alternate their
order from round to round so that load drift hits them alike. Each figure: one untimed warm-up, then the median of
3 (BENCH_REPEATS) runs. The goal: df.write and MERGE INTO no slower than 1.1x the engine's write.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from common import DATA_DIR, Case, Measure

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
GOAL = 1.1


def counted(result, what: str) -> dict:
    """The write's counts, checked: every spelling must write the same upsert."""
    if result is None:
        raise RuntimeError(f"{what}: no write result")
    got = (result.records_updated, result.records_inserted)
    if got != (common.UPDATES, common.INSERTS):
        raise RuntimeError(f"{what}: updated/inserted {got}, expected {(common.UPDATES, common.INSERTS)}")
    return {"files_rewritten": result.files_rewritten, "files_appended": result.files_appended}


def run(types: list[str], repeats: int) -> dict:
    from hudi_engine.spark import create_catalog_table, last_write_result, write

    base = DATA_DIR / "sql_write"
    src, bdir = common.source_dir(common.W1_ROWS), common.batch_dir()
    spark = common.spark_session(native=True)
    df, batch = common.cached_df(spark, src), common.cached_df(spark, bdir)
    batch.createOrReplaceTempView("w1_batch")
    writes: dict[str, Measure] = {}
    for short in types:
        options = common.hudi_options(TYPES[short], "upsert")
        print(f"{short}: setting up the W1 table (untimed)", flush=True)
        pristine = common.fresh(base / f"pristine_{short}")
        write(df, str(pristine), common.hudi_options(TYPES[short], "bulk_insert"))
        work = base / f"work_{short}"
        common.copy_table(pristine, work)
        table = f"bench_sql_{short}"
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        create_catalog_table(spark, table, str(work))

        def engine(_tag: str, work: Path = work, options: dict = options) -> dict:
            return counted(write(batch, str(work), options), "engine write")

        def df_write(_tag: str, work: Path = work, options: dict = options) -> dict:
            batch.write.format("hudi").options(**options).mode("append").save(str(work))
            return counted(last_write_result(spark), "df.write")

        def merge(_tag: str, table: str = table) -> dict:
            spark.sql(f"MERGE INTO {table} t USING w1_batch s ON t.id = s.id "
                      "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
            return counted(last_write_result(spark), "MERGE INTO")

        def setup(_tag: str, pristine: Path = pristine, work: Path = work, table: str = table) -> None:
            common.copy_table(pristine, work)
            spark.catalog.refreshTable(table)

        print(f"{short}: W1 upsert, {common.UPDATES:,} updates + {common.INSERTS:,} inserts; each run on a fresh copy",
              flush=True)
        writes.update(common.interleaved([Case(f"{short}_engine", engine, setup),
                                          Case(f"{short}_df_write", df_write, setup),
                                          Case(f"{short}_merge", merge, setup)], repeats, alternate=True))
        spark.sql(f"DROP TABLE {table}")
    spark.stop()
    return {"writes": writes, "types": types}


def report(out: dict) -> str:
    lines = ["| W1 upsert | engine write | df.write.format(\"hudi\") | ratio | MERGE INTO | ratio |",
             "|---|---|---|---|---|---|"]
    for short in out["types"]:
        e, d, m = (out["writes"][f"{short}_{k}"].median for k in ("engine", "df_write", "merge"))
        lines.append(f"| {short} | {e:.2f} s | {d:.2f} s | {d / e:.2f}x | {m:.2f} s | {m / e:.2f}x |")
    lines.append(f"\ngoal: df.write and MERGE INTO at most {GOAL}x the engine's write")
    return "\n".join(lines)


def main() -> None:
    parser = common.arg_parser(__doc__)
    parser.add_argument("--types", default="cow,mor", help="table types to run: cow, mor or both (default)")
    args = parser.parse_args()
    common.bench_main("sql_write", lambda: run([t for t in args.types.split(",") if t], args.repeats), report)


if __name__ == "__main__":
    main()
