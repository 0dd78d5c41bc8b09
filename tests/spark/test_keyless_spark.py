"""Keyless tables through Spark (docs/keyless.md): every row's key is `<instant>_<input partition>_<row>`, made by
Spark SQL from the input's own partitions before any shuffle (`sql_keys.auto_key_column`), spelled as
`keygen.auto_record_keys` spells it; the same keys when a partition is computed again (a retried task); the tables
are read by hudi-rs; an upsert is refused before any file."""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.keygen import auto_record_keys
from hudi_engine.spark import two_pass, write
from hudi_engine.spark.sql_keys import auto_key_column

pytestmark = pytest.mark.spark

INSTANT = "20240101120000123"
SPLITS, PER_SPLIT = 10, 37


def events(spark, first: int = 0):
    """SPLITS input partitions of PER_SPLIT rows, split p holding ids first + p*PER_SPLIT ... (deterministic)."""
    return (spark.range(first, first + SPLITS * PER_SPLIT, numPartitions=SPLITS)
            .selectExpr("id", "concat('d', cast(id % 3 as string)) AS day", "cast(id * 2 AS string) AS payload"))


def expected_key(instant: str, first: int, i: int) -> str:
    split, row = divmod(i - first, PER_SPLIT)
    return f"{instant}_{split}_{row}"


def test_sql_keys_spell_auto_record_keys_and_repeat_on_recompute(spark) -> None:
    df = events(spark).withColumn("k", auto_key_column(INSTANT))
    once = df.select("id", "k").toArrow()
    again = df.select("id", "k").toArrow()  # every partition computed again, as a retried task computes it
    assert once.sort_by("id").equals(again.sort_by("id"))
    by_id = dict(zip(once.column("id").to_pylist(), once.column("k").to_pylist()))
    want = [auto_record_keys(INSTANT, p, 0, PER_SPLIT) for p in range(SPLITS)]
    assert [by_id[i] for i in range(SPLITS * PER_SPLIT)] == pa.concat_arrays(want).to_pylist()


# Small files: the insert takes the planned two-pass route (a first pass counting keys, then the routed write)
# instead of the one-pass map-side route a small input takes.
TWO_PASS = {"hoodie.parquet.max.file.size": "6000", "hoodie.parquet.small.file.limit": "0"}


@pytest.mark.parametrize("table_type,extra", [("COPY_ON_WRITE", {}), ("MERGE_ON_READ", {}),
                                              ("COPY_ON_WRITE", TWO_PASS)])
def test_keyless_table_over_10_input_partitions(spark, tmp_path: Path, table_type: str, extra: dict,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    planned: list[bool] = []
    plan = two_pass.bucket_plan
    monkeypatch.setattr(two_pass, "bucket_plan", lambda *a, **k: planned.append(True) or plan(*a, **k))
    path = str(tmp_path / "events")
    opts = {"hoodie.table.name": "events", "hoodie.datasource.write.partitionpath.field": "day",
            "hoodie.datasource.write.table.type": table_type, **extra}
    first = write(events(spark), path, opts)  # no operation given: bulk_insert
    n = SPLITS * PER_SPLIT
    second = write(events(spark, n), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    rows = rs_snapshot(path)
    assert rows.num_rows == 2 * n
    assert bool(planned) == (extra is TWO_PASS)  # the insert's route: two passes or one
    got = dict(zip(rows.column("id").to_pylist(), rows.column("_hoodie_record_key").to_pylist()))
    want = {i: expected_key(first.instant_time, 0, i) for i in range(n)}
    want |= {i: expected_key(second.instant_time, n, i) for i in range(n, 2 * n)}
    assert got == want  # unique, and each the input partition's and row's own
    assert set(rows.column("_hoodie_partition_path").to_pylist()) == {"d0", "d1", "d2"}
    assert "_hw_auto_key" not in rows.column_names

    files = sorted(p.relative_to(path) for p in Path(path).rglob("*") if p.is_file())
    with pytest.raises(ConfigError, match="upsert is refused"):
        write(events(spark), path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    assert sorted(p.relative_to(path) for p in Path(path).rglob("*") if p.is_file()) == files


def test_ordering_field_of_a_keyless_table_is_unused(spark, tmp_path: Path) -> None:
    """Hudi ignores a precombine field with generated keys (nothing is combined), so null values are no error."""
    path = str(tmp_path / "events")
    df = events(spark).selectExpr("*", "CASE WHEN id % 2 = 0 THEN id END AS ts")
    opts = {"hoodie.table.name": "events", "hoodie.datasource.write.precombine.field": "ts"}
    write(df, path, opts)
    write(df, path, {**opts, "hoodie.datasource.write.operation": "insert"})
    rows = rs_snapshot(path)
    assert rows.num_rows == 2 * SPLITS * PER_SPLIT and rows.column("ts").null_count == SPLITS * PER_SPLIT
    assert len(set(rows.column("_hoodie_record_key").to_pylist())) == rows.num_rows


def test_retried_input_tasks_make_the_same_keys(tmp_path: Path) -> None:
    """A real Spark retry: in a session that retries tasks (`local[2,4]`, its own process), the first attempt of
    input partitions 3 and 7 fails in every job that reads the input; the table still holds exactly the keys of
    each row's input partition and position, once."""
    path = tmp_path / "events"
    job = Path(__file__).with_name("keyless_retry_job.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(job.parents[1]), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(job), str(path), str(tmp_path / "warehouse")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert "injected failure of partition 3, attempt 0" in proc.stderr
    assert "injected failure of partition 7, attempt 0" in proc.stderr
    instant = json.loads(proc.stdout.strip().splitlines()[-1])["instant"]
    rows = rs_snapshot(path)
    got = dict(zip(rows.column("id").to_pylist(), rows.column("_hoodie_record_key").to_pylist()))
    assert got == {i: expected_key(instant, 0, i) for i in range(SPLITS * PER_SPLIT)}


# ---- Spark SQL's UPDATE, DELETE and MERGE INTO on a keyless table (Hudi 0.14+): rows matched by their stored key ----
def _keyed_rows(path: str) -> dict[int, tuple[str, str]]:
    t = rs_snapshot(path)
    keys = t.column("_hoodie_record_key").to_pylist()
    assert len(set(keys)) == len(keys), f"a key twice: {sorted(keys)}"
    return {i: (k, v) for i, k, v in zip(t.column("id").to_pylist(), keys, t.column("v").to_pylist(), strict=True)}


def _operations(path: str) -> list[str]:
    table = HudiTable.load(path)
    return [table.timeline.commit_metadata(i).operation_type for i in table.timeline.completed_commits()]


def keyless_dml(spark, path: str, table_type: str, version: int) -> dict[int, tuple[str, str]]:
    """Keyless table through SQL: INSERT, then UPDATE, DELETE, MERGE (equality ON; then any ON, a delete clause).
    Returns id -> (key, v) as hudi-rs reads it at the end, after checking each stored row kept its key."""
    table = f"keyless_{table_type}_v{version}"
    spark.sql(f"""CREATE TABLE {table} (id int, v string, on_day date, day string) USING hudi PARTITIONED BY (day)
                  LOCATION '{path}' TBLPROPERTIES (type = '{table_type}', 'hoodie.write.table.version' = '{version}')""")
    try:
        # String literals into a DATE column, as Hudi's INSERT INTO casts them (Spark's store assignment refuses them
        # on a parquet table: CANNOT_SAFELY_CAST).
        spark.sql(f"INSERT INTO {table} (id, v, on_day, day) VALUES (1, 'a', '2022-02-01', 'd1'), "
                  f"(2, 'b', '2022-02-02', 'd1'), (3, 'c', '2022-02-03', 'd2'), (5, 'e', '2022-02-05', 'd2')")
        days = sorted(rs_snapshot(path).column("on_day").to_pylist())
        assert days == [datetime.date(2022, 2, i) for i in (1, 2, 3, 5)]
        first = _keyed_rows(path)
        spark.sql(f"UPDATE {table} SET v = 'B' WHERE id = 2")
        spark.sql(f"DELETE FROM {table} WHERE id = 1")
        spark.sql(f"""MERGE INTO {table} t USING (SELECT 3 AS id, 'C' AS v, DATE'2022-03-03' AS on_day, 'd2' AS day
                                                UNION ALL SELECT 4, 'd', DATE'2022-03-04', 'd1') s
                      ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
        spark.sql(f"""MERGE INTO {table} t USING (SELECT 'e' AS n) s ON t.v = s.n AND t.id > 1
                      WHEN MATCHED THEN DELETE""")
        got = _keyed_rows(path)
        assert {i: v for i, (_, v) in got.items()} == {2: "B", 3: "C", 4: "d"}
        assert got[2][0] == first[2][0] and got[3][0] == first[3][0]  # stored rows keep their keys
        assert got[4][0] not in {k for k, _ in first.values()}
        assert _operations(path) == ["INSERT", "UPSERT_PREPPED", "DELETE_PREPPED", "UPSERT_PREPPED",
                                     "DELETE_PREPPED"]
        return got
    finally:
        spark.sql(f"DROP TABLE {table}")


@pytest.mark.parametrize("table_type,version", [("cow", 9), ("mor", 6)])  # MOR 9 and COW 6: the Java test below
def test_sql_update_delete_merge_on_a_keyless_table_keep_the_stored_keys(spark, tmp_path: Path, table_type: str,
                                                                         version: int) -> None:
    keyless_dml(spark, str(tmp_path / "t"), table_type, version)


def test_java_reads_keyless_dml_with_unique_keys(spark, java_hudi, tmp_path: Path) -> None:
    """Java Hudi 1.2 reads keyless tables (COW v6, MOR v9) after UPDATE / DELETE / MERGE: our rows, our keys."""
    java = java_hudi("1.2.0")
    for table_type, version in (("cow", 6), ("mor", 9)):
        path = str(tmp_path / f"{table_type}{version}")
        ours = keyless_dml(spark, path, table_type, version)
        theirs = java.snapshot(path)
        keys = theirs.column("_hoodie_record_key").to_pylist()
        assert len(set(keys)) == len(keys) == 3
        assert dict(zip(theirs.column("id").to_pylist(), zip(keys, theirs.column("v").to_pylist(), strict=True),
                        strict=True)) == ours
