"""The one-pass write: an input Spark's statistics put below one file of the max file size is keyed, tagged and
given its file group in the map tasks (`MapSidePlan`), so the write is one Spark job; it writes what the planned
(counting) path writes."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from oracle import rs_snapshot
from spark_jobs import jobs_of

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.spark import one_pass, write
from hudi_engine.write.write_client import WriteClient, table_for_write

pytestmark = pytest.mark.spark

SCHEMA = "id string, ts bigint, pad string, dt string"


def opts(table_type: str, operation: str, **extra) -> dict:
    o = {"hoodie.table.name": "one", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation}
    o.update(extra)
    return o


def frame(spark, ids, ts: int, seed: int = 0, days: int = 3):
    rnd = random.Random(seed)
    return spark.createDataFrame([(f"k{i:06d}", ts, rnd.randbytes(20).hex(), f"d{i % days}") for i in ids], SCHEMA)


def actions_of(spark, fn):
    """`fn()` and the number of Spark actions it ran: distinct call sites of its jobs' stages."""
    out, _, sites = jobs_of(spark, fn)
    return out, len(sites)


def snapshot(path: Path) -> list[tuple]:
    return sorted((r["id"], r["ts"], r["dt"]) for r in rs_snapshot(path).select(["id", "ts", "dt"]).to_pylist())


# Whether each step's map side routes in Spark SQL (every partition's group chosen from the driver's listing): COW
# partitions keep one small file each, except that a delete must find its keys; MOR upserts of new keys add a file
# group per partition, whose keys must then be tagged.
SQL_ROUTED = {"COPY_ON_WRITE": [True, True, False, True], "MERGE_ON_READ": [True, True, False, False]}


@pytest.mark.parametrize("route", ["sql", "python"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_small_write_is_one_spark_action_and_writes_what_the_planned_write_writes(spark, tmp_path, monkeypatch,
                                                                                  table_type, route):
    routed: list[bool] = []
    sql_routed = one_pass.sql_routed

    def spy(*args):
        out = sql_routed(*args) if route == "sql" else None
        routed.append(out is not None)
        return out

    monkeypatch.setattr(one_pass, "sql_routed", spy)
    one, planned = tmp_path / "one", tmp_path / "planned"
    for p in (one, planned):
        write(frame(spark, range(3000), 1), str(p),
              opts(table_type, "bulk_insert", **{"hoodie.bulkinsert.shuffle.parallelism": "1"}))
    assert len(HudiTable.load(str(one)).file_slices()) == 3  # a file group per partition: MOR takes them whole
    steps = [("upsert", frame(spark, [*range(0, 3000, 7), *range(3000, 3200)], 2, seed=1)),
             ("insert", frame(spark, range(3200, 3300), 3, seed=2)),
             ("delete", frame(spark, [*range(1, 3000, 11), *range(9000, 9010)], 4, seed=3)),
             ("upsert", frame(spark, range(5, 3300, 13), 5, seed=4))]
    for operation, df in steps:
        df = df.cache()
        df.count()  # exact statistics: the estimate is rows x record size
        a, actions = actions_of(spark, lambda df=df, op=operation: write(df, str(one), opts(table_type, op)))
        assert actions == 1, operation
        with monkeypatch.context() as m:
            m.setattr(one_pass, "map_side_plan", lambda *args: None)
            b, planned_actions = actions_of(spark, lambda df=df, op=operation: write(df, str(planned), opts(table_type, op)))
        # Spark SQL's count per partition (an insert looks no key up: no more), the key pass over the partitions
        # that store records (all three here), then the write.
        assert planned_actions == (2 if operation == "insert" else 3), operation
        assert (a.records_inserted, a.records_updated, a.records_deleted) == \
               (b.records_inserted, b.records_updated, b.records_deleted), operation
        assert snapshot(one) == snapshot(planned), operation
        # A partition of one file group went untagged (MOR; COW upserts, its file being small): the same files anyway.
        assert (a.files_created, a.files_rewritten, a.files_appended) == \
               (b.files_created, b.files_rewritten, b.files_appended), operation
        df.unpersist()
    assert len(snapshot(one)) == len(set(range(3300)) - set(range(1, 3000, 11)) | set(range(5, 3300, 13)))
    assert routed == (SQL_ROUTED[table_type] if route == "sql" else [False] * 4)


def test_an_input_estimated_above_one_file_takes_the_planned_write(spark, tmp_path):
    path = tmp_path / "t"
    write(frame(spark, range(300), 1), str(path), opts("COPY_ON_WRITE", "bulk_insert"))
    small = {"hoodie.parquet.max.file.size": "20000", "hoodie.parquet.small.file.limit": "0",
             "hoodie.copyonwrite.record.size.estimate": "100"}
    df = frame(spark, range(250, 600), 2).cache()
    df.count()  # 350 rows x 100 bytes > 20,000 bytes
    r, actions = actions_of(spark, lambda: write(df, str(path), opts("COPY_ON_WRITE", "upsert", **small)))
    # Spark SQL's count per partition, the key pass over the partitions that store records, the write.
    assert actions == 3 and r.records_updated == 50 and r.records_inserted == 300 and r.files_created >= 2


def test_new_keys_fill_the_smallest_small_file_and_go_on_to_a_new_file_group_past_its_room(spark, tmp_path):
    """The partition has one file group, a small file: its merge takes the batch untagged, and counts as new only
    the keys the file does not hold (updates take no room)."""
    path = tmp_path / "t"
    sizing = {"hoodie.parquet.max.file.size": "100000", "hoodie.parquet.small.file.limit": "99000",
              "hoodie.copyonwrite.record.size.estimate": "100", "hoodie.index.bloom.num_entries": "500"}
    write(frame(spark, range(200), 1, days=1), str(path),
          opts("COPY_ON_WRITE", "bulk_insert", **sizing, **{"hoodie.bulkinsert.shuffle.parallelism": "1"}))  # one file
    (base,) = [s.base_file for s in HudiTable.load(str(path)).file_slices()]
    client = WriteClient.open(table_for_write(str(path)),
                              WriteConfig.from_options(opts("COPY_ON_WRITE", "upsert", **sizing)),
                              frame(spark, [0], 1).toArrow().schema)
    room = (100000 - base.size) // client.average_record_size()
    inserts = room + 40
    assert room > 0 and (inserts + 30) * client.average_record_size() <= 100000  # one pass: the input fits one file
    df = frame(spark, [*range(30), *range(1000, 1000 + inserts)], 2, days=1).cache()
    df.count()
    r, actions = actions_of(spark, lambda: write(df, str(path), opts("COPY_ON_WRITE", "upsert", **sizing)))
    assert actions == 1 and r.records_inserted == inserts and r.records_updated == 30
    assert r.files_rewritten == 1 and r.files_created == 1
    slices = {s.file_id: s for s in HudiTable.load(str(path)).file_slices()}
    grown = pq.read_metadata(slices[base.name.file_id].base_file.path).num_rows
    (new,) = [s for f, s in slices.items() if f != base.name.file_id]
    assert grown == 200 + room and pq.read_metadata(new.base_file.path).num_rows == 40
    assert len(snapshot(path)) == 200 + inserts


def test_a_first_upsert_routes_in_spark_sql_to_a_new_file_group_per_partition(spark, tmp_path, monkeypatch):
    routed = []
    sql_routed = one_pass.sql_routed
    monkeypatch.setattr(one_pass, "sql_routed", lambda *args: routed.append(sql_routed(*args)) or routed[-1])
    df = frame(spark, range(100), 1).cache()
    df.count()  # exact statistics: one pass
    r = write(df, str(tmp_path / "t"), opts("MERGE_ON_READ", "upsert"))
    assert routed[0] is not None and r.records_inserted == 100 and r.files_created == 3
    assert len(snapshot(tmp_path / "t")) == 100
