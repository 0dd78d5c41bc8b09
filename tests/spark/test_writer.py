"""hudi_engine.spark.write: every table written is read back with hudi-rs and compared with the expected rows."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, completed, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.spark import one_pass as one_pass_write
from hudi_engine.spark import write

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, amount double, dt string"
DATA_COLS = ["id", "name", "ts", "amount", "dt"]


def opts(table_type="COPY_ON_WRITE", operation="upsert", **extra) -> dict:
    o = {
        "hoodie.table.name": "trades",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }
    o.update(extra)
    return o


def rows_df(spark, rows):
    return spark.createDataFrame([tuple(r[c] for c in DATA_COLS) for r in rows], SCHEMA)


def rows_of(t: pa.Table) -> list[tuple]:
    return sorted(tuple(r[c] for c in DATA_COLS) for r in t.select(DATA_COLS).to_pylist())


def rows_from(dicts) -> list[tuple]:
    return sorted(tuple(r[c] for c in DATA_COLS) for r in dicts)


def commit_json(path: Path, instant: str) -> dict:
    """The commit metadata of `instant`: its JSON file (table version 6), else (Hudi 1.x: Avro in .hoodie/timeline)
    as the timeline parses it, under the same field names."""
    completed = {f"{instant}.{a}" for a in ("commit", "deltacommit", "replacecommit")}
    files = [p for p in (path / ".hoodie").iterdir() if p.name in completed]
    if files:
        return json.loads(files[0].read_text())
    timeline = HudiTable.load(str(path)).timeline
    (found,) = [i for i in timeline.completed_commits() if i.timestamp == instant]
    return timeline.commit_metadata(found).to_dict()


def totals(meta: dict) -> dict:
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    return {k: sum(s[k] for s in stats) for k in ("numInserts", "numUpdateWrites", "numDeletes")}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bulk_insert_then_upsert_then_delete(spark, tmp_path, table_type):
    path = tmp_path / "t"
    first = [{"id": i, "name": f"n{i}", "ts": 1, "amount": i * 1.5, "dt": f"2024-01-0{i % 3 + 1}"} for i in range(30)]
    r1 = write(rows_df(spark, first), str(path), opts(table_type, "bulk_insert"))
    assert r1.records_inserted == 30 and r1.files_created >= 3
    assert rows_of(rs_snapshot(path)) == rows_from(first)

    updates = [dict(r, name=r["name"] + "u", ts=2) for r in first[:10]]
    new = [{"id": 100 + i, "name": "new", "ts": 2, "amount": 0.0, "dt": "2024-01-04"} for i in range(5)]
    r2 = write(rows_df(spark, updates + new), str(path), opts(table_type))
    assert (r2.records_updated, r2.records_inserted) == (10, 5)
    expected = {r["id"]: r for r in first} | {r["id"]: r for r in updates + new}
    assert rows_of(rs_snapshot(path)) == rows_from(expected.values())
    ours = HudiTable.load(path)
    assert_same_rows(ours.read_snapshot(), rs_snapshot(path), "snapshot after upsert")
    assert totals(commit_json(path, r2.instant_time)) == {"numInserts": 5, "numUpdateWrites": 10, "numDeletes": 0}
    inc = rs_incremental(path, completed(path, r1.instant_time), completed(path, r2.instant_time))
    assert sorted(inc.column("id").to_pylist()) == sorted(r["id"] for r in updates + new)
    snap = ours.read_snapshot()
    ids = snap.column("id")
    untouched = snap.filter(pc.and_(pc.greater_equal(ids, 10), pc.less(ids, 30)))
    assert set(untouched.column("_hoodie_commit_time").to_pylist()) == {r1.instant_time}

    deletes = [first[20], first[21], {"id": 999, "name": "x", "ts": 3, "amount": 0.0, "dt": "2024-01-01"}]
    r3 = write(rows_df(spark, deletes), str(path), opts(table_type, "delete"))
    assert r3.records_deleted == 2
    for k in (20, 21):
        expected.pop(k)
    assert rows_of(rs_snapshot(path)) == rows_from(expected.values())
    assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), "snapshot after delete")
    assert rows_of(rs_snapshot(path, as_of=r1.instant_time)) == rows_from(first)
    if table_type == "MERGE_ON_READ":
        assert rows_of(rs_snapshot(path, read_optimized=True)) == rows_from(first + new)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_overwrite_partition_and_table(spark, tmp_path, table_type):
    path = tmp_path / "t"
    first = [{"id": i, "name": "a", "ts": 1, "amount": 1.0, "dt": f"p{i % 2}"} for i in range(10)]
    write(rows_df(spark, first), str(path), opts(table_type, "bulk_insert"))
    over = [{"id": 50, "name": "b", "ts": 2, "amount": 2.0, "dt": "p0"}]
    r = write(rows_df(spark, over), str(path), opts(table_type, "insert_overwrite"))
    meta = commit_json(path, r.instant_time)
    assert meta["operationType"] == "INSERT_OVERWRITE"
    assert list(meta["partitionToReplaceFileIds"]) == ["dt=p0"]
    assert rows_of(rs_snapshot(path)) == rows_from([x for x in first if x["dt"] == "p1"] + over)
    last = dict(over[0], id=60, dt="p9")
    write(rows_df(spark, [last]), str(path), opts(table_type, "insert_overwrite_table"))
    assert rows_of(rs_snapshot(path)) == rows_from([last])
    assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), "after insert_overwrite_table")


def test_global_index_moves_key_between_partitions(spark, tmp_path):
    path = tmp_path / "t"
    o = opts(**{"hoodie.index.type": "GLOBAL_SIMPLE"})
    write(rows_df(spark, [{"id": 1, "name": "a", "ts": 1, "amount": 1.0, "dt": "x"}]), str(path), o)
    write(rows_df(spark, [{"id": 1, "name": "b", "ts": 2, "amount": 1.0, "dt": "y"}]), str(path), o)
    assert rows_of(rs_snapshot(path)) == [(1, "b", 2, 1.0, "y")]


def _where(path) -> list[tuple]:
    """(id, name, partition) of every row of the table's snapshot, sorted."""
    got = HudiTable.load(str(path)).read_snapshot().select(["id", "name", "_hoodie_partition_path"]).to_pylist()
    return sorted((r["id"], r["name"], r["_hoodie_partition_path"]) for r in got)


def _df(spark, *rows: tuple):
    """A DataFrame of (id, name, ts, dt) rows, amount 1.0."""
    return rows_df(spark, [{"id": i, "name": n, "ts": ts, "amount": 1.0, "dt": dt} for i, n, ts, dt in rows])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_record_index_tags_in_spark_tasks(spark, tmp_path, table_type):
    """RECORD_INDEX on Spark: the batch's keys looked up in the record index by tasks; a key stays where it lives
    unless hoodie.record.index.update.partition.path moves it."""
    path = tmp_path / "t"
    o = opts(table_type, **{"hoodie.index.type": "RECORD_INDEX"})
    write(_df(spark, *((i, "a", 1, "x") for i in range(1, 4))), str(path), o)
    write(_df(spark, (1, "b", 2, "y"), (4, "b", 2, "y")), str(path), o)
    assert _where(path) == [
        (1, "b", "dt=x"), (2, "a", "dt=x"), (3, "a", "dt=x"), (4, "b", "dt=y")]
    write(_df(spark, (2, "c", 3, "y")), str(path),
          {**o, "hoodie.record.index.update.partition.path": "true"})
    assert _where(path) == [
        (1, "b", "dt=x"), (2, "c", "dt=y"), (3, "a", "dt=x"), (4, "b", "dt=y")]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_partitioned_record_index_tags_in_spark_tasks(spark, tmp_path, table_type):
    """RECORD_LEVEL_INDEX on Spark (Hudi 1.1's partitioned record index, built by the first write): tasks look each
    partition's keys up in that partition's file groups of the index; the same key in another partition is a new
    row there (a non-global index), and the index keeps every (partition, key)."""
    from metadata_tables import assert_partitioned_index_matches

    path = tmp_path / "t"
    o = opts(table_type, **{"hoodie.index.type": "RECORD_LEVEL_INDEX", "hoodie.write.table.version": "9"})
    write(_df(spark, *((i, "a", 1, "x") for i in range(1, 4))), str(path), o)
    write(_df(spark, (1, "b", 2, "y"), (2, "b", 2, "x")), str(path), o)
    assert _where(path) == [
        (1, "a", "dt=x"), (1, "b", "dt=y"), (2, "b", "dt=x"), (3, "a", "dt=x")]
    assert assert_partitioned_index_matches(path) == 4


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_record_keys_reported_by_spark_tasks(spark, tmp_path, monkeypatch, table_type):
    """The tasks' write stats carry the keys their files added and removed to the driver (`WriteStat.record_keys`);
    the record index's records made from them are those the diff of the files makes."""
    from metadata_tables import check_reported_keys

    reported, resolved = check_reported_keys(monkeypatch)
    test_record_index_tags_in_spark_tasks(spark, tmp_path, table_type)
    assert len(reported) == 3 and all(reported[1:]), reported  # every write after the one that built the index
    assert any(resolved) is (table_type == "MERGE_ON_READ"), resolved  # appends' keys checked by the tagging


def test_precombine_inside_a_batch_keeps_highest_ordering_value(spark, tmp_path):
    path = tmp_path / "t"
    rows = [{"id": 1, "name": f"v{ts}", "ts": ts, "amount": 0.0, "dt": "d"} for ts in (5, 9, 7)]
    write(rows_df(spark, rows), str(path), opts())
    assert [r[1] for r in rows_of(rs_snapshot(path))] == ["v9"]


def test_insert_keeps_duplicates_unless_combine_before_insert(spark, tmp_path):
    rows = [{"id": 1, "name": f"v{ts}", "ts": ts, "amount": 0.0, "dt": "d"} for ts in (5, 9)]
    write(rows_df(spark, rows), str(tmp_path / "a"), opts(operation="insert"))
    assert len(rs_snapshot(tmp_path / "a")) == 2
    write(rows_df(spark, rows), str(tmp_path / "b"), opts(operation="insert", **{"hoodie.combine.before.insert": "true"}))
    assert [r[1] for r in rows_of(rs_snapshot(tmp_path / "b"))] == ["v9"]


def test_bad_input_fails_before_anything_is_written(spark, tmp_path):
    path = tmp_path / "t"
    good = [{"id": 1, "name": "a", "ts": 1, "amount": 1.0, "dt": "d"}]
    write(rows_df(spark, good), str(path), opts())
    timeline_before = sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file())
    files_before = sorted(str(p) for p in path.rglob("*.parquet"))

    null_key = spark.createDataFrame([(None, "x", 1, 1.0, "d")], SCHEMA)
    # The message names the key field and shows the row.
    with pytest.raises(HudiError, match=r"record key field 'id' is null or empty in row \{.*\"name\":\"x\""):
        write(null_key, str(path), opts())
    empty_key = spark.createDataFrame([("", "x", 1, 1.0, "d")], "id string, name string, ts long, amount double, "
                                                                "dt string")
    with pytest.raises(HudiError, match="record key field 'id' is null or empty"):
        write(empty_key, str(tmp_path / "custom"), opts(**{"hoodie.datasource.write.keygenerator.class":
                                                "org.apache.hudi.keygen.CustomKeyGenerator",
                                                "hoodie.datasource.write.partitionpath.field": "dt:SIMPLE"}))
    with pytest.raises(HudiError, match="precombine"):
        write(rows_df(spark, good).drop("ts"), str(path), opts())
    with pytest.raises(HudiError, match="contradicts"):
        write(rows_df(spark, good), str(path), opts("MERGE_ON_READ"))
    with pytest.raises(HudiError, match="amount"):
        write(rows_df(spark, good).drop("amount"), str(path), opts())
    with pytest.raises(HudiError, match="operation"):
        write(rows_df(spark, good), str(path), opts(operation="merge"))
    # Only rollback instants may have been added (for the null key, which fails inside a task).
    after = [p.name for p in (path / ".hoodie").iterdir() if p.is_file()]
    assert sorted(n for n in after if ".rollback" not in n) == timeline_before
    assert sorted(str(p) for p in path.rglob("*.parquet")) == files_before
    assert rows_of(rs_snapshot(path)) == rows_from(good)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_null_ordering_value_is_refused_before_anything_is_written(spark, tmp_path, table_type):
    """Java Hudi refuses a null precombine value; accepting it lost the update on MOR (hudi-rs and this engine's
    reader disagreed, compaction dropped it). Refused with the column and the row, the table unchanged."""
    path = tmp_path / "t"
    write(rows_df(spark, [{"id": 1, "name": "a", "ts": 1, "amount": 1.0, "dt": "d"}]), str(path), opts(table_type))
    files_before = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and ".hoodie" not in p.parts)
    before = rs_snapshot(path)
    null_ts = spark.createDataFrame([(1, "b", None, 2.0, "d"), (2, "c", 5, 3.0, "d")], SCHEMA)
    with pytest.raises(HudiError, match=r"precombine field 'ts' .* is null in row \{\"id\":1,\"name\":\"b\""):
        write(null_ts, str(path), opts(table_type))
    assert sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if p.is_file() and ".hoodie" not in p.parts) == files_before
    assert_same_rows(rs_snapshot(path), before, "hudi-rs after the refused write")
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), before, "our reader after the refused write")
    # A delete needs no ordering value.
    r = write(spark.createDataFrame([(1, "b", None, 2.0, "d")], SCHEMA), str(path), opts(table_type, "delete"))
    assert r.records_deleted == 1


@pytest.mark.parametrize("bad", [
    {"hoodie.cleaner.policy": "BOGUS"}, {"hoodie.cleaner.commits.retained": "0"},
    {"hoodie.compact.inline": "maybe"}, {"hoodie.compact.inline.max.delta.commits": "x"},
    {"hoodie.write.lock.wait_time_ms": "-1"}, {"hoodie.write.lock.filesystem.expire": "soon"},
    {"hoodie.upsert.shuffle.parallelism": "-2"}, {"hoodie.parquet.max.file.size": "1000"},
], ids=lambda b: next(iter(b)))
def test_a_bad_service_option_fails_before_anything_is_written(spark, tmp_path, bad):
    """Options of services that run after the commit (cleaning, compaction) or around it (lock) are checked
    with the rest, before the instant starts: nothing is written and every reader sees the table unchanged."""
    path = tmp_path / "t"
    write(rows_df(spark, [{"id": 1, "name": "a", "ts": 1, "amount": 1.0, "dt": "d"}]), str(path), opts("MERGE_ON_READ"))
    files_before = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    before = rs_snapshot(path)
    (key, value), = bad.items()
    with pytest.raises(ConfigError, match=f"{key}='?{value}'?"):
        write(rows_df(spark, [{"id": 1, "name": "b", "ts": 2, "amount": 2.0, "dt": "d"}]), str(path),
              opts("MERGE_ON_READ", **bad))
    assert sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()) == files_before
    assert_same_rows(rs_snapshot(path), before, f"{key}: hudi-rs after the refused write")


# hoodie.clustering.updates.strategy for a write between a clustering's schedule and its execution
_STRATEGIES = {"reject": {},
               "allow": {"hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy"},
               "roll back": {"hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy",
                             "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"}}


def _clustering_options(rnd: random.Random) -> dict:
    """Sort columns and layout drawn at random (one column sorts linearly whatever the layout)."""
    return {"hoodie.clustering.plan.strategy.sort.columns": rnd.choice(["", "amount", "ts,id", "dt,amount"]),
            "hoodie.layout.optimize.strategy": rnd.choice(["linear", "z-order", "hilbert"])}


def _replacecommits(path: Path) -> int:
    return len(HudiTable.load(str(path)).timeline.completed_replace_commits())


@pytest.mark.slow
@pytest.mark.parametrize("table_type,partitioned,composite,one_pass,version", [
    ("COPY_ON_WRITE", True, False, True, 6), ("MERGE_ON_READ", True, True, False, 6),
    ("COPY_ON_WRITE", False, True, False, 6), ("MERGE_ON_READ", False, False, True, 6),
    # Table version 9 (Hudi 1.x: timeline layout 2, log files by delta commit, slices by completion time).
    ("MERGE_ON_READ", True, True, False, 9), ("COPY_ON_WRITE", True, False, True, 9),
])
def test_randomized_against_in_memory_model(spark, tmp_path, monkeypatch, table_type, partitioned, composite,
                                            one_pass, version):
    """Random insert / upsert / delete batches (duplicates inside a batch) vs a dict, after every commit; small
    batches take the one-pass write, or (`one_pass` false) the planned write with its counting pass. Clustering is
    drawn too, and the model does not change through it: scheduled and executed at once (in the driver or as Spark
    tasks), inline after a write, or scheduled, then a write, then executed, the write under each
    hoodie.clustering.updates.strategy: refused when its updates hit the plan's file groups (SparkRejectUpdateStrategy),
    or written and the clustering then refusing to complete (SparkAllowUpdateStrategy) or rolled back
    (rollback.pending.replacecommit.on.conflict)."""
    from hudi_engine.errors import ClusteringConflictError, ClusteringUpdateError
    from hudi_engine.spark import clustering_executor

    if not one_pass:
        monkeypatch.setattr(one_pass_write, "map_side_plan", lambda *args: None)
    rnd = random.Random(f"{table_type}{partitioned}{composite}{version}")
    strategies = list(_STRATEGIES)[rnd.randrange(3):] + list(_STRATEGIES)  # each in turn, from a drawn one
    path = tmp_path / "t"
    o = opts(table_type, **{"hoodie.combine.before.insert": "true",  # Hudi keeps in-batch duplicates otherwise
                            "hoodie.write.table.version": str(version)})
    if composite:
        o["hoodie.datasource.write.recordkey.field"] = "id,name"
    if not partitioned:
        o.pop("hoodie.datasource.write.partitionpath.field")
    key = (lambda r: (r["id"], r["name"])) if composite else (lambda r: r["id"])
    model: dict = {}
    # Keys the index finds: the ones in base files. On MOR a delete goes to a log block and the key stays in its
    # base file (until compaction or clustering rewrites it), so like Java's SIMPLE index a later upsert of it counts
    # as an update. Every clustering here replaces every file group (all are small): its base files hold the model.
    indexed: set = set()
    mor = table_type == "MERGE_ON_READ"
    prev_instant = None
    ts = 0
    drawn = []

    def check(what: str) -> None:
        assert rows_of(rs_snapshot(path)) == rows_from(model.values()), what
        assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), what)

    def clustered(what: str) -> None:
        nonlocal indexed
        if mor:
            indexed = set(model)
        check(f"{what}: the clustering changed no row")

    for step in range(9):
        kind = "upsert" if step == 0 else rnd.choice(["upsert", "upsert", "insert", "delete", "cluster", "scheduled"])
        drawn.append(kind)
        if kind == "cluster":
            executor = clustering_executor(spark) if rnd.random() < 0.5 else None
            done = HudiTable.load(path).cluster(options={**o, **_clustering_options(rnd)}, executor=executor)
            assert done is not None, f"step {step}: every file group is small"
            clustered(f"step {step} cluster")
            continue
        op = rnd.choice(["upsert", "upsert", "insert", "delete"]) if kind == "scheduled" else kind
        batch = []
        for i in rnd.sample(range(60), 12):
            for _ in range(rnd.choice([1, 1, 2])):  # duplicates, with distinct ordering values
                ts += 1
                batch.append({"id": i, "name": f"k{i % 3}" if composite else f"n{ts}", "ts": ts,
                              "amount": float(ts), "dt": f"d{i % 4}"})
        if op == "insert":  # insert does not look keys up: keys never written, so the model stays a dict
            batch = [r for r in batch if key(r) not in indexed]
            if not batch:
                continue
        latest: dict = {}
        for r in batch:
            if key(r) not in latest or r["ts"] > latest[key(r)]["ts"]:
                latest[key(r)] = r
        found = [k for k in latest if k in indexed]
        write_options = dict(o, **{"hoodie.datasource.write.operation": op})
        strategy = inline = None
        if kind == "scheduled":
            planned = HudiTable.load(path).cluster(options={**o, **_clustering_options(rnd)}, op="schedule")
            assert planned is not None, f"step {step}: every file group is small"
            strategy = strategies.pop(0)
            write_options.update(_STRATEGIES[strategy])
            drawn[-1] = f"scheduled, {op} ({strategy}{', hits' if found else ''}), executed"
            if strategy == "reject" and found:  # every stored key is in the plan's file groups
                with pytest.raises(ClusteringUpdateError, match=planned.instant_time):
                    write(rows_df(spark, batch), str(path), write_options)
                check(f"step {step}: the refused {op} changed nothing")
                HudiTable.load(path).cluster(options=o, op="execute", instant=planned.instant_time)
                clustered(f"step {step}: executed after the refused {op}")
                continue
        elif step > 0 and rnd.random() < 0.25:
            inline = _replacecommits(path)
            write_options.update({"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "1",
                                  **_clustering_options(rnd)})
            drawn[-1] = f"{op} + inline clustering"
        result = write(rows_df(spark, batch), str(path), write_options)
        if op == "delete":
            for k in found:
                model.pop(k, None)
                if not mor:
                    indexed.discard(k)
            expect = {"numInserts": 0, "numUpdateWrites": 0, "numDeletes": len(found)}
        else:
            expect = {"numInserts": len(latest) - len(found), "numUpdateWrites": len(found), "numDeletes": 0}
            model.update(latest)
            indexed.update(latest)
        check(f"step {step} {drawn[-1]}")
        assert totals(commit_json(path, result.instant_time)) == expect, f"step {step} {op}"
        if prev_instant is not None and op != "delete":
            # Clustering keeps the records' commit times: a range over one adds no rows.
            inc = rs_incremental(path, prev_instant, completed(path, result.instant_time))
            assert rows_of(inc) == rows_from(latest.values()), f"step {step}: incremental = keys written"
        prev_instant = completed(path, result.instant_time)
        if inline is not None:
            assert _replacecommits(path) == inline + 1, f"step {step}: clustered inline"
            clustered(f"step {step}: inline clustering")
        if kind == "scheduled":
            pending = planned.instant_time
            if strategy == "roll back" and found:  # rolled back once the write committed
                assert HudiTable.load(path).cluster(options=o, op="execute") is None
                check(f"step {step}: after the clustering was rolled back")
            elif strategy == "allow" and found:  # it would drop the updates: it refuses, nothing written
                with pytest.raises(ClusteringConflictError, match=pending):
                    HudiTable.load(path).cluster(options=o, op="execute", instant=pending)
                check(f"step {step}: the refused clustering changed nothing")
                HudiTable.load(path).rollback(pending)
            else:
                HudiTable.load(path).cluster(options=o, op="execute", instant=pending)
                clustered(f"step {step}: executed after the {op}")
    table = HudiTable.load(path)
    assert table.config.version == version
    assert_same_rows(table.read_snapshot(), rs_snapshot(path), f"final snapshot after {drawn}")


@pytest.mark.parametrize("index_type", ["BLOOM", "BUCKET"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bloom_and_bucket_index(spark, tmp_path, index_type, table_type):
    path = tmp_path / "t"
    o = opts(table_type, **{"hoodie.index.type": index_type, "hoodie.bucket.index.num.buckets": "4"})
    first = [{"id": i, "name": f"n{i}", "ts": 1, "amount": 1.0, "dt": f"d{i % 2}"} for i in range(40)]
    write(rows_df(spark, first), str(path), dict(o, **{"hoodie.datasource.write.operation": "insert"}))
    updates = [dict(r, name="u", ts=2) for r in first[::4]] + [{"id": 500, "name": "x", "ts": 2, "amount": 2.0,
                                                                   "dt": "d0"}]
    write(rows_df(spark, updates), str(path), o)
    write(rows_df(spark, first[1:3]), str(path), dict(o, **{"hoodie.datasource.write.operation": "delete"}))
    expected = {r["id"]: r for r in first} | {r["id"]: r for r in updates}
    for r in first[1:3]:
        expected.pop(r["id"])
    assert rows_of(rs_snapshot(path)) == rows_from(expected.values())
    assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), f"{index_type} {table_type}")
    if index_type == "BUCKET":
        from hudi_engine.write.index import bucket_ids

        snap = HudiTable.load(path).read_snapshot()
        numbers = bucket_ids(snap.column("_hoodie_record_key"), 4)
        file_numbers = [int(f[:8]) for f in snap.column("_hoodie_file_name").to_pylist()]
        assert list(numbers) == file_numbers  # every key lives in the file group its hash names
        groups = set(zip(snap.column("dt").to_pylist(), file_numbers))
        assert len(groups) <= 2 * 4


def test_user_python_payload_by_dotted_path(spark, tmp_path):
    """A Python payload named by its dotted path: the version with the larger `amount` wins, on COW at write."""
    path = tmp_path / "t"
    o = opts(**{"hoodie.datasource.write.payload.class": "test_payloads.KeepMaxAmount"})
    write(rows_df(spark, [{"id": 1, "name": "a", "ts": 1, "amount": 10.0, "dt": "d"},
                          {"id": 2, "name": "a", "ts": 1, "amount": 10.0, "dt": "d"}]), str(path), o)
    write(rows_df(spark, [{"id": 1, "name": "low", "ts": 2, "amount": 5.0, "dt": "d"},
                          {"id": 2, "name": "high", "ts": 2, "amount": 50.0, "dt": "d"}]), str(path), o)
    assert rows_of(rs_snapshot(path)) == [(1, "a", 1, 10.0, "d"), (2, "high", 2, 50.0, "d")]
    # Version 8+ keeps the merge in the table config whatever the table type (a custom payload: merge mode CUSTOM
    # with the payload-based strategy); 0.x's PropertyBuilder stores a payload class for MOR only.
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.compaction.payload.class=test_payloads.KeepMaxAmount" in props
    assert "hoodie.record.merge.mode=CUSTOM" in props


@pytest.mark.parametrize("url_encode", [False, True])
def test_awkward_partition_values_make_hudi_paths(spark, tmp_path, url_encode):
    path = tmp_path / "t"
    values = ["with space", "a=b", "x%y", "日本", None, "", "a/b"]
    rows = [{"id": i, "name": "n", "ts": 1, "amount": 1.0, "dt": v} for i, v in enumerate(values)]
    o = opts(**{"hoodie.datasource.write.partitionpath.urlencode": str(url_encode).lower(),
                "hoodie.datasource.write.hive_style_partitioning": "false"})
    write(rows_df(spark, rows), str(path), o)
    dirs = {str(p.parent.relative_to(path)) for p in path.rglob(".hoodie_partition_metadata")
            if ".hoodie" not in p.relative_to(path).parts}  # not the metadata table's own partition
    encoded = {"with space": "with space", "a=b": "a%3Db", "x%y": "x%25y", "日本": "日本", "a/b": "a%2Fb"}
    expected = {(encoded[v] if url_encode else v) for v in values if v}
    assert dirs == expected | {"__HIVE_DEFAULT_PARTITION__"}
    got = rs_snapshot(path)
    assert sorted(zip(got.column("id").to_pylist(), got.column("dt").to_pylist())) == list(enumerate(values))
    parts = dict(zip(got.column("id").to_pylist(), got.column("_hoodie_partition_path").to_pylist()))
    assert parts[4] == parts[5] == "__HIVE_DEFAULT_PARTITION__"
    # An upsert finds every key again in its partition (the index compares partition paths as written).
    write(rows_df(spark, [dict(r, name="u", ts=2) for r in rows]), str(path), o)
    assert set(rs_snapshot(path).column("name").to_pylist()) == {"u"}
    assert len(rs_snapshot(path)) == len(values)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_delete_with_only_key_columns_keeps_the_table_schema(spark, tmp_path, table_type):
    path = tmp_path / "t"
    rows = [{"id": i, "name": "n", "ts": 1, "amount": 1.0, "dt": "d"} for i in range(3)]
    write(rows_df(spark, rows), str(path), opts(table_type))
    keys = spark.createDataFrame([(1, "d")], "id bigint, dt string")
    r = write(keys, str(path), opts(table_type, "delete"))
    assert r.records_deleted == 1
    table = HudiTable.load(path)
    assert [f["name"] for f in table.avro_schema()["fields"]] == DATA_COLS
    assert rows_of(rs_snapshot(path)) == rows_from([rows[0], rows[2]])


@pytest.mark.parametrize("partitioned", [True, False])
def test_bulk_insert_writes_full_sorted_files(spark, tmp_path, partitioned):
    """GLOBAL_SORT, range-partitioned by (partition, key): every file a disjoint key range, the timings reported
    (file sizes by bytes: tests/write/test_executor.py and tests/spark/test_write_parallelism.py)."""
    from hudi_engine.io.base_file import read_footer
    from hudi_engine.storage import Storage

    path = tmp_path / "t"
    rows = [{"id": i, "name": f"n{i}", "ts": 1, "amount": float(i), "dt": f"d{i % 2}"} for i in range(400)]
    o = opts(operation="bulk_insert", **{"hoodie.parquet.max.file.size": "100000", "hoodie.parquet.small.file.limit": "0",
                                         "hoodie.copyonwrite.record.size.estimate": "1000",  # 100 rows a file
                                         "hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"})
    if not partitioned:
        o.pop("hoodie.datasource.write.partitionpath.field")
    r = write(rows_df(spark, rows).repartition(3), str(path), o)
    assert r.records_inserted == 400 and set(r.timings) >= {"write", "handles", "commit"}
    storage, _ = Storage.for_uri(str(path))
    by_partition: dict[str, list] = {}
    for s in HudiTable.load(str(path)).file_slices():
        by_partition.setdefault(s.partition_path, []).append(read_footer(storage, s.base_file.path))
    for footers in by_partition.values():
        footers.sort(key=lambda f: f.min_key)
        assert all(a.max_key < b.min_key for a, b in zip(footers, footers[1:]))
    assert rows_of(rs_snapshot(path)) == rows_from(rows)


def test_bulk_insert_without_a_sort_writes_each_input_split_in_its_own_task(spark, tmp_path):
    """`hoodie.bulkinsert.sort.mode` NONE (Hudi's default): no shuffle, a task per input split (as Spark's own parquet
    writer), its rows grouped by partition: a file per (split, partition) here; `hoodie.bulkinsert.shuffle.parallelism`
    set caps the tasks (the splits coalesced, still no shuffle)."""
    rows = [{"id": i, "name": f"n{i}", "ts": 1, "amount": float(i), "dt": f"d{i % 2}"} for i in range(400)]
    for parallelism, tasks in ((None, 3), ("2", 2)):
        path = tmp_path / f"t{tasks}"
        extra = {"hoodie.bulkinsert.sort.mode": "NONE"}
        if parallelism is not None:
            extra["hoodie.bulkinsert.shuffle.parallelism"] = parallelism
        r = write(rows_df(spark, rows).repartition(3), str(path), opts(operation="bulk_insert", **extra))
        assert r.records_inserted == 400 and r.tasks == tasks and r.files_created == 2 * tasks
        assert rows_of(rs_snapshot(path)) == rows_from(rows)


@pytest.mark.parametrize("bad,error", [((None, "x", 1, 0.0, "d1"), "record key field 'id' is null"),
                                       ((7, "x", None, 0.0, "d0"), "precombine field 'ts' .* is null")])
def test_bulk_insert_without_a_shuffle_refuses_a_bad_row_before_any_task_writes(spark, tmp_path, bad, error):
    """NONE has no map stage to check every row before a write task starts: a job of its own checks them first, so
    the tasks of the good splits never write (the failed instant had nothing to roll back)."""
    from hudi_engine.location import TableLocation
    from hudi_engine.timeline import Timeline
    from hudi_engine.timeline.avro_models import read_avro_metadata

    path = tmp_path / "t"
    write(spark.createDataFrame([(1000, "a", 1, 0.0, "d0")], SCHEMA), str(path), opts(operation="bulk_insert"))
    good = [(i, f"n{i}", 1, float(i), f"d{i % 2}") for i in range(300)]
    # The bad row in the last of 4 input splits: the first tasks would have written their files before its task ran.
    df = spark.createDataFrame(spark.sparkContext.parallelize([*good, bad], 4), SCHEMA)
    with pytest.raises(HudiError, match=error):
        write(df, str(path), opts(operation="bulk_insert", **{"hoodie.bulkinsert.sort.mode": "NONE"}))
    (rollback,) = [i for i in Timeline.load(TableLocation.of(str(path))) if i.action.value == "rollback"]
    meta = read_avro_metadata(Timeline.load(TableLocation.of(str(path))).read_content(rollback),
                              "HoodieRollbackMetadata")
    assert meta["totalFilesDeleted"] == 0, meta
    assert len(rs_snapshot(path)) == 1


def test_a_null_literal_key_fails_the_row_check(spark, tmp_path):
    """A key the optimizer knows is null (`cast(null as bigint)`, as a dbt model may select): the row check must not
    fold away with it, as a `CASE WHEN check THEN id END` guard did on the one-pass path."""
    o = {"hoodie.table.name": "n", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.operation": "upsert"}
    row = "'a' as part, 0 as val, timestamp'2024-01-03 00:00:00' as ts"
    write(spark.sql(f"select 1L as id, {row}"), str(tmp_path), o)
    bad = spark.sql(f"select cast(null as bigint) as id, {row} union all select 2L as id, {row}")
    with pytest.raises(HudiError, match=r"record key field 'id' is null or empty in row \{\"part\":\"a\""):
        write(bad, str(tmp_path), o)


@pytest.mark.parametrize("name", ["mor_avrolog_v8_trips_8i3u1d", "cow_v9_txns_simple_meta"])
def test_spark_upsert_and_delete_into_a_real_1x_table(spark, unzip_table, tmp_path, name):
    """hudi_engine.spark.write into a copy of a table Hudi 1.x wrote: it keeps its version, and hudi-rs reads what
    the engine reads (the pure-Python writes cover all 35 keyed 1.x tables: tests/write/test_write_1x_tables.py)."""
    import shutil

    path = tmp_path / name
    shutil.copytree(unzip_table(name, "v8_v9"), path)
    table = HudiTable.load(str(path))
    version, key = table.config.version, table.config.record_key_fields[0]
    data = table.read_snapshot()
    data = data.drop_columns([c for c in data.column_names if c.startswith("_hoodie_")]).slice(0, 2)
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(data.schema)  # the table's own types (decimals keep their precision)
    from hudi_engine.metadata.writer import KEPT_PARTITIONS

    options = {"hoodie.table.name": table.config.name}
    if any(p not in KEPT_PARTITIONS for p in table.config.metadata_partitions):  # Java's secondary indexes
        options["hoodie.metadata.enable"] = "false"  # the engine refuses to leave them stale: deleted first, as Hudi
    write(spark.createDataFrame(data.to_pandas(), schema), str(path), options)
    write(spark.createDataFrame(data.slice(1, 1).to_pandas(), schema), str(path),
          {**options, "hoodie.datasource.write.operation": "delete"})
    after = HudiTable.load(str(path))
    assert after.config.version == version and after.timeline.layout.version == 2
    assert_same_rows(after.read_snapshot(), rs_snapshot(path), f"{name} after Spark writes", "_hoodie_record_key")
    assert data.column(key)[1].as_py() not in after.read_snapshot().column(key).to_pylist()
