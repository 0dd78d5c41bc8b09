"""Partial updates by column list (`hoodie.datasource.write.partial.update.columns`): on a stored key only the listed
columns change, on COW and MOR alike (MOR: the stored values come from base and log files merged), new keys are
written whole; hudi-rs reads the tables as the engine does."""
from __future__ import annotations

import pyarrow as pa
import pytest
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config import keys as K
from hudi_engine.errors import WriteError
from hudi_engine.write.partial_update import fill_stored_values, kept_columns

COLUMNS = K.PARTIAL_UPDATE_COLUMNS.key


def rows(ids, parts, names, scores, ts) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "part": parts, "name": names,
                     "score": pa.array(scores, pa.int64()), "ts": pa.array(ts, pa.int64())})


def options(table_type: str, operation: str, **extra) -> dict:
    return {"hoodie.table.name": "people", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.clean.automatic": "false", **extra}


def snapshot(path) -> dict:
    t = HudiTable.load(str(path)).read_snapshot()
    return {r["id"]: (r["part"], r["name"], r["score"], r["ts"]) for r in t.to_pylist()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_only_update_columns_change_on_stored_keys(tmp_path, table_type):
    path = tmp_path / "people"
    write(path, rows([1, 2, 3], ["a", "a", "b"], ["ann", "bob", "cy"], [10, 20, 30], [1, 1, 1]),
          options(table_type, "bulk_insert"))
    # A full update of key 2 first: on MOR its values now live in a log file, which the partial update must see.
    write(path, rows([2], ["a"], ["bobby"], [21], [2]), options(table_type, "upsert"))
    # Partial update of `score`: keys 1 and 2 keep their stored name and ts; key 4 is new and written whole.
    r = write(path, rows([1, 2, 4], ["a", "a", "b"], ["X", "Y", "dan"], [11, 22, 40], [9, 9, 9]),
              options(table_type, "upsert", **{COLUMNS: "score"}))
    assert (r.records_inserted, r.records_updated) == (1, 2)
    want = {1: ("a", "ann", 11, 1), 2: ("a", "bobby", 22, 2), 3: ("b", "cy", 30, 1), 4: ("b", "dan", 40, 9)}
    assert snapshot(path) == want
    ours = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), f"partial update {table_type}")
    if table_type == "MERGE_ON_READ":
        assert any(s.log_files for s in HudiTable.load(str(path)).file_slices())


def test_several_update_columns_and_a_second_run(tmp_path):
    path = tmp_path / "people"
    write(path, rows([1, 2], ["a", "a"], ["ann", "bob"], [10, 20], [1, 1]), options("MERGE_ON_READ", "bulk_insert"))
    for run in (1, 2):  # the second run reads the log records the first wrote
        write(path, rows([1], ["a"], [f"ann{run}"], [None], [5 + run]),
              options("MERGE_ON_READ", "upsert", **{COLUMNS: "name,ts"}))
        assert snapshot(path)[1] == ("a", f"ann{run}", 10, 5 + run)
    assert snapshot(path)[2] == ("a", "bob", 20, 1)
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "two partial updates")


def test_update_column_not_in_the_records_is_refused_before_writing(tmp_path):
    path = tmp_path / "people"
    write(path, rows([1], ["a"], ["ann"], [10], [1]), options("COPY_ON_WRITE", "bulk_insert"))
    with pytest.raises(WriteError, match=r"partial update column 'nope' \(hoodie.datasource.write.partial"):
        write(path, rows([1], ["a"], ["X"], [1], [2]), options("COPY_ON_WRITE", "upsert", **{COLUMNS: "score,nope"}))
    assert len(HudiTable.load(str(path)).timeline.completed_commits()) == 1
    assert not HudiTable.load(str(path)).timeline.pending()


def test_fill_stored_values_is_by_key():
    records = pa.table({"_hoodie_record_key": ["k2", "k9", "k1"], "a": [1, 2, 3], "b": ["x", "y", "z"]})
    stored = pa.table({"_hoodie_record_key": ["k1", "k2"], "a": pa.array([100, 200], pa.int32()), "b": ["p", "q"]})
    out = fill_stored_values(records, stored, stored.column(0).combine_chunks(), ["b", "a"])
    assert out.to_pydict() == {"_hoodie_record_key": ["k2", "k9", "k1"], "a": [200, 2, 100], "b": ["q", "y", "p"]}
    assert out.schema == records.schema  # stored values are cast to the incoming types


def test_kept_columns_leave_out_keys_partitions_meta_and_update_columns():
    from hudi_engine.config.write_config import WriteConfig

    cfg = WriteConfig.from_options(options("COPY_ON_WRITE", "upsert", **{COLUMNS: "score"}))
    assert kept_columns(cfg, ["_hoodie_record_key", "id", "part", "name", "score", "ts", "_hw_bucket"]) == ["name", "ts"]
