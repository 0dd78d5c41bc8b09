"""The same `CALL`s on Java Hudi 1.2 and on the engine over tables the engine wrote (version 9, merge-on-read, then
compacted, rolled back, cleaned and archived by the engine's procedures; then a version-6 table): equal column names
and types, equal rows where the values are deterministic (docs/procedures.md). One shared oracle: about half a
minute of Java."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
from procedure_tables import OPTIONS, rows

from hudi_engine import HudiTable
from hudi_engine.procedures import call
from hudi_engine.write_pipeline import write_table

# Columns whose values depend on the clock, or which Java and the engine fill from different places.
UNSTABLE = {"time_taken_in_millis", "time_cost"}
JSON_COLUMNS = {"header_metadata", "footer_metadata", "records"}


def _value(name: str, value: object) -> object:
    # JSON texts (log block headers, log records as Avro prints them) compare by what they hold, not their spacing
    return json.dumps(json.loads(value), sort_keys=True) if name in JSON_COLUMNS and isinstance(value, str) else value


def _comparable(t: pa.Table) -> list[tuple]:
    keep = [n for n in t.column_names if n not in UNSTABLE]
    return sorted(tuple(_value(n, r[n]) for n in keep) for r in t.to_pylist())


def assert_same_call(java, catalog_name: str, path: str, name: str, args: dict) -> None:
    """`CALL name(table => catalog_name, args)` on Java Hudi and `call(name, path, args)` on the engine agree."""
    text = ", ".join([f"table => '{catalog_name}'", *(f"{k} => {v!r}" for k, v in args.items())])
    theirs = java.sql(f"CALL {name}({text})")
    assert theirs is not None
    ours = call(name, path, **args)
    assert [(f.name, f.type) for f in ours.schema] == [(f.name, f.type) for f in theirs.schema], name
    assert _comparable(ours) == _comparable(theirs), \
        f"{name}: the engine and Java Hudi 1.2 differ:\n{_comparable(ours)}\n{_comparable(theirs)}"


def test_same_calls_on_java_and_the_engine(java_hudi, tmp_path: Path):
    java = java_hudi("1.2.0")
    path = str(tmp_path / "calls")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "9"}
    first = write_table(rows([1, 2, 3], 1, ["x", "x", "y"]), path, options).instant_time
    second = write_table(rows([1, 4], 2, ["x", "y"]), path, options).instant_time
    call("run_compaction", path, op="scheduleAndExecute")
    third = write_table(rows([2], 3, ["x"]), path, options).instant_time
    call("rollback_to_instant", path, instant_time=third)
    for ts in (4, 5):
        write_table(rows([1, 4], ts, ["x", "y"]), path, options)
    call("run_clean", path, retain_commits=1)
    (rollback,) = call("show_rollbacks", path).column("instant").to_pylist()
    java.sql(f"CREATE TABLE java_calls USING hudi LOCATION '{path}'")
    (gone, *_) = call("show_rollback_detail", path, instant_time=rollback).to_pylist()
    kept = call("show_fsview_latest", path).column("data_file")[0].as_py()
    statuses = [{"partition": gone["partition"], "file": gone["deleted_file"].rsplit("/", 1)[-1]},
                {"partition": kept.rsplit("/", 2)[-2], "file": kept.rsplit("/", 1)[-1]},
                {"partition": "x", "file": "nope.parquet"}]
    compared = []
    for name, args in [
        ("show_commits", {}), ("show_commits_metadata", {}),
        ("show_commit_files", {"instant_time": second}), ("show_commit_partitions", {"instant_time": second}),
        ("show_commit_write_stats", {"instant_time": first}), ("stats_wa", {}),
        ("show_compaction", {}), ("show_rollbacks", {}), ("show_rollback_detail", {"instant_time": rollback}),
        ("show_savepoints", {}), ("show_table_properties", {"limit": 100}), ("show_fsview_all", {}),
        ("show_fsview_latest", {}), ("stats_file_sizes", {"partition_path": "*"}),
        ("commits_compare", {"path": path}),
        ("show_logfile_metadata", {"log_file_path_pattern": f"{path}/*/.*.log.*"}),
        ("show_logfile_records", {"log_file_path_pattern": f"{path}/*/.*.log.*"}),
        ("show_cleans", {}), ("show_cleans_metadata", {}), ("show_clean_plans", {}), ("show_timeline", {"limit": 100}),
        ("show_commit_extra_metadata", {"limit": 100}), ("show_commit_extra_metadata", {"instant_time": first}),
        *(("show_file_status", status) for status in statuses),
    ]:
        assert_same_call(java, "java_calls", path, name, args)
        compared.append(name)
    assert len(compared) == 26
    # help(cmd => ...): Hudi's table of parameters and outputs, to the character, then the engine's status line
    for name in ("show_commits", "run_compaction", "show_fsview_latest", "create_savepoint"):
        (theirs,) = java.sql(f"CALL help(cmd => '{name}')").column("result").to_pylist()
        (ours,) = call("help", cmd=name).column("result").to_pylist()
        assert ours.rsplit("engine: ", 1)[0] == theirs, name
    # archived commits: the engine's archival (LSM history), read by both
    for ts in (6, 7):
        write_table(rows([1], ts, ["x"]), path, options)
    call("archive_commits", path, min_commits=2, max_commits=3, retain_commits=1)
    for name in ("show_archived_commits", "show_archived_commits_metadata"):
        theirs = java.sql(f"CALL {name}(table => 'java_calls', start_ts => '0', end_ts => '99991231235959999')")
        assert theirs is not None
        ours = call(name, path, start_ts="0", end_ts="99991231235959999")
        assert [(f.name, f.type) for f in ours.schema] == [(f.name, f.type) for f in theirs.schema], name
        assert ours.num_rows > 0 and _comparable(ours) == _comparable(theirs), name
    # the engine's drop_partition: Java reads the same rows (partition x gone), and lists the same commits
    before = write_table(rows([5], 8, ["x"]), path, options).instant_time
    assert call("drop_partition", path, partition="x").to_pylist() == [{"result": "Success"}]
    assert_same_call(java, "java_calls", path, "show_commits", {"limit": 3})
    data = ["id", "v", "ts", "dt"]
    for theirs, ours, has_x in [(java.snapshot(path), HudiTable.load(path).read_snapshot(), False),
                                (java.time_travel(path, before), HudiTable.load(path).read_snapshot(as_of=before),
                                 True)]:
        assert sorted(theirs.select(data).to_pylist(), key=str) == sorted(ours.select(data).to_pylist(), key=str)
        assert ("x" in theirs.column("dt").to_pylist()) is has_x and theirs.num_rows > 0


def test_same_calls_on_a_version_6_table(java_hudi, tmp_path: Path):
    """Version 6 (timeline layout 1: completion times are the instant files' times)."""
    java = java_hudi("1.2.0")
    path = str(tmp_path / "v6")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": "6"}
    write_table(rows([1, 2, 3], 1, ["x", "x", "y"]), path, options)
    second = write_table(rows([1, 4], 2, ["x", "y"]), path, options).instant_time
    call("run_compaction", path, op="scheduleAndExecute")
    third = write_table(rows([2], 3, ["x"]), path, options).instant_time
    call("rollback_to_instant", path, instant_time=third)
    java.sql(f"CREATE TABLE java_calls_v6 USING hudi LOCATION '{path}'")
    for name, args in [
        ("show_commits", {}), ("show_commits_metadata", {}), ("show_commit_files", {"instant_time": second}),
        ("show_compaction", {}), ("show_rollbacks", {}), ("show_fsview_all", {}), ("show_fsview_latest", {}),
        ("show_timeline", {"limit": 100}), ("show_table_properties", {"limit": 100}),
        ("stats_file_sizes", {"partition_path": "*"}),
        ("show_logfile_metadata", {"log_file_path_pattern": f"{path}/*/.*.log.*"}),
    ]:
        assert_same_call(java, "java_calls_v6", path, name, args)
    # files that are not Parquet files, among the table's: found alike
    (Path(path) / "x" / f"bad-0_0-0-0_{second}.parquet").write_bytes(b"PAR1 torn")
    (Path(path) / "y" / "short.parquet").write_bytes(b"PAR1")
    theirs = java.sql(f"CALL show_invalid_parquet(path => '{path}')")
    assert theirs is not None
    ours = call("show_invalid_parquet", path)
    assert ours.num_rows == 2 and _comparable(ours) == _comparable(theirs)
    # a torn clean plan a crash left: Java's repair and the engine's remove it alike
    torn = Path(path) / ".hoodie" / "20300101000000000.clean.requested"
    for repair in (lambda: java.sql("CALL repair_corrupted_clean_files(table => 'java_calls_v6')"),
                   lambda: call("repair_corrupted_clean_files", path)):
        torn.write_bytes(b"not avro")
        result = repair()
        assert result is not None and result.to_pylist() == [{"result": True}] and not torn.exists()


def test_same_column_stats_view_of_java_built_metadata_tables(java_hudi, unzip_table, tmp_path: Path):
    """`show_metadata_table_column_stats` over the column_stats partitions Hudi 1.0 (version 8, merge-on-read,
    non-partitioned) and 1.2 (version 9, partitioned, clustered) built: the engine reads the same stats Java's
    metadata reader returns, every type printed alike (decimals as bytes, floats and doubles as Java prints them)."""
    java = java_hudi("1.2.0")
    for i, (name, columns, partition) in enumerate([
        ("mor_avrolog_v8_nonpartitioned_mdt", "id,name,isActive,byteField,longField,floatField,doubleField,"
         "decimalField,dateField,timestampField,binaryField,_hoodie_commit_time", None),
        ("cow_v9_txns_simple_meta", "txn_id,txn_ts,txn_datetime,txn_date,amount,is_international,fee_amount,"
         "_hoodie_record_key", None),
        ("cow_v9_txns_simple_meta", "txn_id,amount", "region=us"),
    ]):
        path = tmp_path / f"cs{i}"
        shutil.copytree(unzip_table(name, "v8_v9"), path)  # registering a table rewrites its hoodie.properties
        args = {"targetColumns": columns, **({"partition": partition} if partition else {})}
        ours = call("show_metadata_table_column_stats", str(path), **args)
        assert ours.num_rows >= 4, name
        java.sql(f"CREATE TABLE java_cs{i} USING hudi LOCATION '{path}'")
        try:
            assert_same_call(java, f"java_cs{i}", str(path), "show_metadata_table_column_stats", args)
        finally:
            java.sql(f"DROP TABLE IF EXISTS java_cs{i}")
