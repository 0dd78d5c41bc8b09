"""The metadata-table hand-over (issue 36, part 3): what the engine's commit does to a metadata table Java Hudi
built, and what the next Java writer pays to rebuild it.

The engine does not write Hudi's metadata table (`.hoodie/metadata`). Before it writes, every writer of ours disables
it the way Hudi does (WriteClient._disable_metadata_table: drops `hoodie.table.metadata.partitions(.inflight)` from
hoodie.properties, then deletes `.hoodie/metadata`). The next Java writer with the metadata table on (Hudi's default)
finds none and builds it again from a listing of the table (files partition) and, with the record index, from every
base file's keys.

Per case, on W1's 1,000,000 rows (10 partitions, bench/common.py), COW, with the release's table version:
  files     the metadata table with its files partition only (0.15's default; on 1.x column and partition stats
            turned off)
  rli       also the record index (`hoodie.metadata.record.index.enable=true`, `hoodie.index.type=RECORD_INDEX`)
  defaults  the release's defaults (1.2: files, column_stats and partition_stats partitions)
1. Java Hudi bulk_inserts the table with the case's settings (untimed): the pristine table.
2. The engine upserts 1,000 rows (updates of W1 ids) into a copy of it (`hudi_engine.spark.write`, its own Spark):
   `.hoodie/metadata` and hoodie.properties are listed before and after.
3. Timed, interleaved, each run on a fresh (untimed) copy: Java upserts another 1,000 rows with the case's settings
   into the table the engine committed to (`rebuild`: Java builds the metadata table again) and into the pristine
   table (`baseline`: the metadata table intact). One untimed round (the first upserts of Java's process are
   cold), then the median of BENCH_REPEATS (default 2) rounds, the order alternating; the ratio
   rebuild / baseline is of the medians of the same run. The time is Hudi's own, taken inside its process
   (bench/hudi_java_writer.py: from a cached, counted DataFrame to the completed commit). Bytes read: Hadoop's
   local file-system counters in Java's process (`bytes_read`; its `read_ops` stay 0 on the raw local file
   system). Files opened (`--opens`, a separate untimed pass on the tables a timed run left): one upsert of each
   kind under `strace -f -e openat` attached to Java's JVM, the distinct files of the table it opened.
After the runs the rebuilt table's metadata table is listed, and every table is read back with the engine: 1,000,000
rows, and the engine's and Java's updates visible.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "java_hudi"))

import common
import pyarrow.compute as pc
import pyarrow.parquet as pq
from bench_hudi_java import RELEASE_TABLE_VERSION, JavaWriter, table_version
from common import DATA_DIR, Case

BATCH = 1_000
# Hudi 1.x's defaults build the files, column_stats and partition_stats partitions (0.15: files only).
FILES_ONLY = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false",
              "hoodie.metadata.index.partition.stats.enable": "false"}
CASES: dict[str, dict[str, str]] = {
    "files": FILES_ONLY,
    "rli": {**FILES_ONLY, "hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"},
    "defaults": {},
}
METADATA_KEYS = ("hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight")


def batches() -> tuple[Path, Path]:
    """Two batches of 1,000 updates each (newer `ts`, new values), disjoint ids from W1, every partition: the
    engine's (the first 1,000 updates of the upsert batch) and Java's (the next 1,000)."""
    out = []
    batch = common.upsert_batch()
    for name, start in (("engine", 0), ("java", BATCH)):
        d = DATA_DIR / "source" / f"mdt_batch_{name}"
        if not (d / "_DONE").exists():
            d.mkdir(parents=True, exist_ok=True)
            pq.write_table(batch.slice(start, BATCH), d / "part-0000.parquet")
            (d / "_DONE").write_text("ok\n")
        out.append(d)
    return out[0], out[1]


def props(path: Path) -> dict[str, str]:
    lines = (path / ".hoodie" / "hoodie.properties").read_text().splitlines()
    return dict(x.split("=", 1) for x in lines if "=" in x and not x.startswith("#"))


def mdt_listing(path: Path) -> dict:
    """The metadata table's files: count and bytes, per partition of it (`files`, `record_index`, ...) and its own
    `.hoodie`."""
    root = path / ".hoodie" / "metadata"
    if not root.exists():
        return {"exists": False, "files": 0, "bytes": 0, "partitions": {}}
    parts: dict[str, dict[str, int]] = {}
    for f in root.rglob("*"):
        if f.is_file():
            top = f.relative_to(root).parts[0]
            p = parts.setdefault(top, {"files": 0, "bytes": 0})
            p["files"] += 1
            p["bytes"] += f.stat().st_size
    return {"exists": True, "files": sum(p["files"] for p in parts.values()),
            "bytes": sum(p["bytes"] for p in parts.values()), "partitions": dict(sorted(parts.items()))}


def state(path: Path) -> dict:
    p = props(path)
    return {"properties": {k: p.get(k) for k in METADATA_KEYS}, "metadata_table": mdt_listing(path)}


def diff_props(before: dict[str, str], after: dict[str, str]) -> dict:
    keys = sorted(set(before) | set(after))
    return {k: [before.get(k), after.get(k)] for k in keys if before.get(k) != after.get(k)}


def check(path: Path, updated_ids: list[int], ts_after: str) -> dict:
    """1,000,000 rows, and each id of `updated_ids` carries a `ts` from the batch (after `ts_after`)."""
    from hudi_engine import HudiTable

    t = HudiTable.load(str(path)).read_snapshot(columns=["id", "ts"])
    if t.num_rows != common.W1_ROWS or pc.count_distinct(t["id"]).as_py() != common.W1_ROWS:
        raise RuntimeError(f"{path}: {t.num_rows} rows, expected {common.W1_ROWS}")
    mask = pc.is_in(t["id"], value_set=pc.cast(updated_ids, t["id"].type))
    ts = t.filter(mask)["ts"]
    newer = pc.sum(pc.greater(pc.cast(ts, "int64"), int(ts_after))).as_py()
    if newer != len(updated_ids):
        raise RuntimeError(f"{path}: {newer} of {len(updated_ids)} updated ids show their update")
    return {"rows": t.num_rows, "updates_visible": newer}


def traced_opens(java: JavaWriter, path: Path, upsert: dict[str, str], tag: str) -> dict:
    """One untimed Java upsert into `path` under `strace -f -e openat` attached to every thread of Java's JVM: the
    distinct files of the table it opened, by kind (data base files, metadata-table files, the rest of .hoodie)."""
    tids = sorted((Path("/proc") / str(java.jvm_pid) / "task").iterdir())
    out = Path(java.workdir) / f"strace-{tag}.txt"
    cmd = ["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(out)]
    for t in tids:
        cmd += ["-p", t.name]
    tracer = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)  # attached to every thread
        java.write("batch", path, upsert, "append", tag)
    finally:
        tracer.terminate()
        tracer.wait(timeout=60)
    return parse_strace(out, path)


def parse_strace(out: Path, path: Path) -> dict:
    """What `strace -e openat` saw of the table at `path`: per region (`data`: the partitions; `mdt`:
    .hoodie/metadata; `hoodie`: the rest of .hoodie), the read opens of files (`opens`), the distinct files read
    (`files_read`), the files created (`files_written`) and the directories listed (`dirs_listed`, opens with
    O_DIRECTORY). Hadoop's `.crc` side files are left out (each read or written file has one). strace's output
    files stay in Java's work directory."""
    root = str(path) + "/"
    regions = {r: {"opens": 0, "files_read": set(), "files_written": set(), "dirs_listed": 0}
               for r in ("data", "mdt", "hoodie")}
    for line in out.read_text(errors="replace").splitlines():
        m = re.search(r'openat\([^,]+, "([^"]+)", ([A-Z_|]+)', line)
        if not m or not (m.group(1) + "/").startswith(root) or "ENOENT" in line:
            continue
        rel, flags = m.group(1)[len(root):], m.group(2)
        if rel.rsplit("/", 1)[-1].endswith(".crc"):
            continue
        region = "mdt" if rel.startswith(".hoodie/metadata") else "hoodie" if rel.startswith(".hoodie") else "data"
        r = regions[region]
        if "O_DIRECTORY" in flags:
            r["dirs_listed"] += 1
        elif "O_CREAT" in flags or "O_WRONLY" in flags:
            r["files_written"].add(rel)
        else:
            r["opens"] += 1
            r["files_read"].add(rel)
    counts = {region: {k: len(v) if isinstance(v, set) else v for k, v in r.items()} for region, r in regions.items()}
    # Of the data files read, the base files (not the partition metafiles `.hoodie_partition_metadata`), and of
    # those the ones this upsert itself wrote (read back after writing them).
    base = {f for f in regions["data"]["files_read"] if f.endswith(".parquet") and "/.hoodie_partition" not in f}
    counts["data"]["base_files_read"] = len(base)
    counts["data"]["own_new_base_files_read"] = len(base & regions["data"]["files_written"])
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--release", default="1.2.0", choices=sorted(RELEASE_TABLE_VERSION))
    ap.add_argument("--cases", default="files,rli,defaults")
    ap.add_argument("--repeats", type=int, default=int(os.environ.get("BENCH_REPEATS", "2")))
    ap.add_argument("--opens", action="store_true",
                    help="only count the files Java's upserts open (strace), on the tables a timed run left")
    ap.add_argument("--no-warmup", action="store_true", help="no untimed round before the timed ones")
    args = ap.parse_args()
    release, version = args.release, RELEASE_TABLE_VERSION[args.release]
    cases = args.cases.split(",")
    base = DATA_DIR / f"mdt_handover_{release}"

    src = common.source_dir(common.W1_ROWS)
    eng_dir, java_dir = batches()
    eng_ids = pq.read_table(eng_dir, columns=["id"])["id"].to_pylist()
    java_ids = pq.read_table(java_dir, columns=["id"])["id"].to_pylist()
    ts_after = pc.max(pc.cast(pq.read_table(src, columns=["ts"])["ts"], "int64")).as_py()

    java = JavaWriter(release)
    print(f"Hudi {release} process: Spark {java.spark_version}, JVM pid {java.jvm_pid}", flush=True)
    spark = common.spark_session()
    results: dict = {}
    record: dict = {"release": release, "table_version": version, "batch_rows": BATCH, "cases": {}}
    try:
        java.request(op="cache", name="w1", src=str(src))
        java.request(op="cache", name="batch", src=str(java_dir))
        eng_df = common.cached_df(spark, eng_dir)
        for case in cases:
            o = CASES[case]
            if args.opens:
                upsert = {**common.hudi_options("COPY_ON_WRITE", "upsert"), **o}
                rec = {}
                for kind, src_table in (("rebuild", base / f"engine_{case}"), ("baseline", base / f"pristine_{case}")):
                    work = common.copy_table(src_table, base / f"work_{case}_{kind}")
                    rec[kind] = traced_opens(java, work, upsert, f"{case}-{kind}")
                    print(f"  {case} {kind}: {rec[kind]}", flush=True)
                record["cases"][case] = rec
                common.save_results(f"mdt_handover_{release}_opens", record)
                continue
            print(f"case {case}: Java {release} bulk_inserts {common.W1_ROWS:,} rows with {o} (untimed)", flush=True)
            pristine = common.fresh(base / f"pristine_{case}")
            a = java.write("w1", pristine, {**common.hudi_options("COPY_ON_WRITE", "bulk_insert"), **o},
                           "overwrite", f"setup-{case}")
            if table_version(pristine) != version:
                raise RuntimeError(f"Hudi {release} wrote table version {table_version(pristine)}")
            rec: dict = {"options": o, "java_bulk_insert_s": round(a["seconds"], 1), "pristine": state(pristine)}
            print(f"  pristine: {rec['pristine']}", flush=True)

            # The engine's commit, once: what it does to the metadata table and hoodie.properties.
            engined = common.copy_table(pristine, base / f"engine_{case}")
            before = props(engined)
            from hudi_engine.spark import write
            r = write(eng_df, str(engined), {**common.hudi_options("COPY_ON_WRITE", "upsert"),
                                             "hoodie.write.table.version": str(version)})
            if (r.records_inserted, r.records_updated) != (0, BATCH):
                raise RuntimeError(f"engine: inserted/updated {(r.records_inserted, r.records_updated)}")
            rec["after_engine"] = state(engined)
            rec["engine_properties_changed"] = diff_props(before, props(engined))
            print(f"  after the engine's commit: {rec['after_engine']}", flush=True)
            print(f"  hoodie.properties changed: {rec['engine_properties_changed']}", flush=True)

            work_r, work_b = base / f"work_{case}_rebuild", base / f"work_{case}_baseline"
            upsert = {**common.hudi_options("COPY_ON_WRITE", "upsert"), **o}

            def java_run(path: Path, upsert: dict[str, str] = upsert):
                def run_(tag: str) -> dict:
                    a = java.write("batch", path, upsert, "append", tag)
                    return {"seconds": a["seconds"], "tasks": a["tasks"], "jobs": a["jobs"], **a["fs"],
                            "jvm_peak_rss_mb": round(a["jvm_peak_rss_mb"])}
                return run_

            cs = [Case(f"{case}_rebuild", java_run(work_r),
                       setup=lambda _, s=engined, d=work_r: common.copy_table(s, d)),
                  Case(f"{case}_baseline", java_run(work_b),
                       setup=lambda _, s=pristine, d=work_b: common.copy_table(s, d))]
            print(f"case {case}: Java upserts {BATCH:,} rows, after the engine's commit vs on the pristine table",
                  flush=True)
            ms = common.interleaved(cs, args.repeats, warmup=not args.no_warmup, alternate=True)
            for m in ms.values():
                m.times = [e["seconds"] for e in m.extra]  # Hudi's own timer
            results.update(ms)
            rb, bl = ms[f"{case}_rebuild"], ms[f"{case}_baseline"]
            rec["ratio_rebuild_baseline"] = round(rb.median / bl.median, 2)
            rec["per_round_ratios"] = [round(x / y, 2) for x, y in zip(rb.times, bl.times, strict=True)]
            rec["after_java_rebuild"] = state(work_r)
            rec["after_java_baseline"] = state(work_b)
            rec["check_rebuild"] = check(work_r, eng_ids + java_ids, ts_after)
            rec["check_baseline"] = check(work_b, java_ids, ts_after)
            for key in ("read_ops", "bytes_read", "large_read_ops", "write_ops"):
                rec[f"median_{key}"] = {"rebuild": statistics.median(e[key] for e in rb.extra),
                                        "baseline": statistics.median(e[key] for e in bl.extra)}
            print(f"  after Java's upsert (rebuild): {rec['after_java_rebuild']}", flush=True)
            print(f"  rebuild {rb.runs()} / baseline {bl.runs()} = {rec['ratio_rebuild_baseline']}; "
                  f"read ops {rec['median_read_ops']}, bytes read {rec['median_bytes_read']}", flush=True)
            record["cases"][case] = rec
            common.save_results(f"mdt_handover_{release}", {**record, "results": results})
    finally:
        spark.stop()
        java.stop()
    if args.opens:
        return

    print("\n| case | Java upsert after the engine's commit (rebuild) | Java upsert, metadata table intact | "
          "ratio (per round) | MB read rebuild / baseline | metadata table files after |")
    print("|---|---|---|---|---|---|")
    for case, rec in record["cases"].items():
        rb, bl = results[f"{case}_rebuild"], results[f"{case}_baseline"]
        by = rec["median_bytes_read"]
        print(f"| {case} | {rb.runs()} | {bl.runs()} | {rec['ratio_rebuild_baseline']} "
              f"({', '.join(map(str, rec['per_round_ratios']))}) | "
              f"{by['rebuild'] / 1e6:.1f} / {by['baseline'] / 1e6:.1f} | "
              f"{rec['after_java_rebuild']['metadata_table']['files']} (intact: "
              f"{rec['after_java_baseline']['metadata_table']['files']}) |")


if __name__ == "__main__":
    main()
