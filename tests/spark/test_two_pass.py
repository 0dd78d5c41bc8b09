"""The two-pass write's first pass: where Spark SQL spells the partition path and a SIMPLE or BLOOM index looks keys
up in their own partition, Spark SQL counts the records per partition and samples a new partition's keys; the Python
pass over the keys runs over the records of partitions that store records only. The plan, the files and the rows
are those of the Python pass over every record."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import HudiError
from hudi_engine.spark import two_pass, write
from hudi_engine.write.write_client import WriteClient

pytestmark = pytest.mark.spark

SCHEMA = "id string, ts bigint, pad string, dt string"
# ~120 bytes a record and files of 120 kB: a batch of thousands of records takes the two-pass route, and a new
# partition's 6,000 records new file groups, cut at sampled keys.
OPTS = {"hoodie.table.name": "tp", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.parquet.max.file.size": "120000", "hoodie.parquet.small.file.limit": "0",
        "hoodie.index.bloom.num_entries": "500", "hoodie.copyonwrite.record.size.estimate": "120"}


def rows(spark, ids, ts: int, dt, pad: str = "p"):
    return spark.createDataFrame([(None if i is None else f"k{i:06d}", ts, pad * 40,
                                   dt(i) if callable(dt) else dt) for i in ids], SCHEMA)


def stored_day(i: int) -> str:
    return "d1" if i < 2000 else "d2"


@pytest.fixture
def table(spark, tmp_path):
    path = tmp_path / "t"
    write(rows(spark, range(4000), 1, stored_day), str(path), {**OPTS, "hoodie.datasource.write.operation":
                                                                    "bulk_insert"})
    return path


@pytest.fixture
def spied(monkeypatch):
    """Records the Python pass's input (record count and partitions) and the counts the plan was given."""
    seen: dict = {"profiled": [], "counts": [], "sampled": []}
    profiled, sampled, plan = two_pass._profiled, two_pass.sample_keys, WriteClient.plan

    def profiled_spy(rows, *a, **k):
        seen["profiled"].append((rows.count(), sorted(r[0] for r in rows.select("dt").distinct().collect())))
        return profiled(rows, *a, **k)

    def sampled_spy(keyed, shares):
        seen["sampled"].append(sorted(shares))
        return sampled(keyed, shares)

    def plan_spy(self, counts, *a, **k):
        seen["counts"].append(counts)
        return plan(self, counts, *a, **k)

    monkeypatch.setattr(two_pass, "_profiled", profiled_spy)
    monkeypatch.setattr(two_pass, "sample_keys", sampled_spy)
    monkeypatch.setattr(WriteClient, "plan", plan_spy)
    return seen


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("route", ["sql", "python"])
def test_a_new_partition_is_counted_and_sampled_by_spark_sql(spark, table, spied, monkeypatch, route, table_type):
    path = table
    if table_type == "MERGE_ON_READ":  # the same table as MOR: the fixture's bulk_insert again
        path = table.parent / "mor"
        write(rows(spark, range(4000), 1, stored_day), str(path),
              {**OPTS, "hoodie.datasource.write.operation": "bulk_insert",
               "hoodie.datasource.write.table.type": table_type})
    if route == "python":
        monkeypatch.setattr(two_pass, "sql_key_text", lambda *a: None)
    updated, new_d1, new_day = list(range(0, 4000, 7)), list(range(4000, 4100)), list(range(5000, 11000))
    batch = rows(spark, updated, 2, stored_day, "u").union(rows(spark, new_d1, 2, "d1", "n")) \
        .union(rows(spark, new_day, 2, "d3", "n"))
    r = write(batch, str(path), {**OPTS, "hoodie.datasource.write.operation": "upsert",
                                 "hoodie.datasource.write.table.type": table_type})
    assert (r.records_updated, r.records_inserted) == (len(updated), len(new_d1) + len(new_day))

    # The Python pass saw the stored partitions' records only (every record without Spark SQL's count).
    stored_records = len(updated) + len(new_d1)
    want_profiled = (stored_records, ["d1", "d2"]) if route == "sql" else (stored_records + len(new_day),
                                                                           ["d1", "d2", "d3"])
    assert spied["profiled"] == [want_profiled]
    (counts,) = spied["counts"]
    assert dict(counts.inserts) == {"d1": len(new_d1), "d3": len(new_day)}
    assert sum(counts.updates.values()) == len(updated) and {p for p, _ in counts.updates} == {"d1", "d2"}

    # The new day: several file groups in disjoint key ranges (cut at sampled keys), every key once.
    slices = [s for s in HudiTable.load(str(path)).file_slices() if s.partition_path == "d3"]
    assert len(slices) >= 2 and spied["sampled"] == ([["d3"]] if route == "sql" else [])
    ranges = sorted((min(k), max(k)) for k in (pq.read_table(s.base_file.path, columns=["id"])["id"].to_pylist()
                                              for s in slices))
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
    got = rs_snapshot(path).select(["id", "ts", "pad", "dt"]).to_pylist()
    want = {f"k{i:06d}": (1, "p" * 40, stored_day(i)) for i in range(4000)}
    want |= {f"k{i:06d}": (2, "u" * 40, stored_day(i)) for i in updated}
    want |= {f"k{i:06d}": (2, "n" * 40, "d1") for i in new_d1} | {f"k{i:06d}": (2, "n" * 40, "d3") for i in new_day}
    assert {x["id"]: (x["ts"], x["pad"], x["dt"]) for x in got} == want


def test_a_delete_of_keys_in_a_partition_that_stores_nothing_counts_nowhere(spark, table, spied):
    deleted = list(range(0, 4000, 3))
    batch = rows(spark, deleted, 2, stored_day).union(rows(spark, range(5000, 11000), 2, "d9"))
    r = write(batch, str(table), {**OPTS, "hoodie.datasource.write.operation": "delete"})
    assert r.records_deleted == len(deleted)
    assert spied["profiled"] == [(len(deleted), ["d1", "d2"])]
    (counts,) = spied["counts"]
    assert not counts.inserts and sum(counts.updates.values()) == len(deleted)
    assert not (table / "d9").exists()
    assert sorted(x["id"] for x in rs_snapshot(table).select(["id"]).to_pylist()) == \
        [f"k{i:06d}" for i in range(4000) if i % 3]


def test_a_null_key_in_a_new_partition_fails_the_first_pass_before_any_file(spark, table, spied):
    files_before = sorted(str(p) for p in table.rglob("*.parquet"))
    batch = rows(spark, [*range(5000, 11000), None], 2, "d3")
    with pytest.raises(HudiError, match=r"record key field 'id' is null or empty in row \{.*\"dt\":\"d3\""):
        write(batch, str(table), {**OPTS, "hoodie.datasource.write.operation": "upsert"})
    assert spied["profiled"] == [] and spied["counts"] == []  # failed in the row check, before the plan
    assert sorted(str(p) for p in table.rglob("*.parquet")) == files_before
    assert not (table / "d3").exists()
