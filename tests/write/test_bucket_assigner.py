"""Bucket planning from counts, and the assignment of every record to its bucket and task (no I/O)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hudi_engine.errors import WriteError
from hudi_engine.write.bucket_assigner import (
    NEW_GROUP,
    BucketType,
    BulkInsertRanges,
    Counts,
    MapSidePlan,
    SliceInfo,
    plan_buckets,
)


def slice_(partition: str, file_id: str, size: int) -> SliceInfo:
    return SliceInfo(partition, file_id, "001", f"/t/{partition}/{file_id}_0-1-0_001.parquet",
                     f"{file_id}_0-1-0_001.parquet", size)


def plan(counts: Counts, slices: dict, **kw):
    args = dict(avg_record_size=100, max_file_size=100_000, small_file_limit=0, pack_small_files=True,
                parallelism=4, where="/t")
    args.update(kw)
    return plan_buckets(counts, slices, **args)


def test_updates_get_one_bucket_per_file_group_and_tasks_follow_buckets():
    groups = {("", f"f{i}"): 10 * (i + 1) for i in range(6)}
    p = plan(Counts(updates=groups), {"": [slice_("", f"f{i}", 50_000) for i in range(6)]})
    assert [b.bucket_type for b in p.buckets] == [BucketType.UPDATE] * 6
    assert p.n_tasks == 4 and sorted(set(p.task_of_bucket)) == [0, 1, 2, 3]  # min(6 buckets, parallelism 4)
    one = plan(Counts(updates=dict(list(groups.items())[:2])), {"": [slice_("", "f0", 1), slice_("", "f1", 1)]})
    assert one.n_tasks == 2 and sorted(one.task_of_bucket) == [0, 1]


def test_inserts_fill_small_files_then_new_groups_of_the_max_size_cut_by_key_range():
    slices = {"d": [slice_("d", "small", 60_000), slice_("d", "big", 99_000)]}
    p = plan(Counts(inserts={"d": 2_500}), slices, small_file_limit=80_000)
    kinds = [(b.bucket_type, b.records) for b in p.buckets]
    assert kinds[0] == (BucketType.UPDATE, 400)  # (100,000 - 60,000) / 100 bytes
    assert [k for k in kinds[1:]] == [(BucketType.INSERT, 700)] * 3  # 2,100 left, 1,000 a file at most
    fractions = p.needs_sample()
    assert list(fractions) == ["d"] and fractions["d"] == pytest.approx(min(1.0, 100 * 4 / 2500))
    keys = [f"k{i:05d}" for i in range(2_500)]
    p = p.with_samples({"d": keys[::3]})
    ids = p.assign(pa.array(["d"] * 2500), pa.array(keys), pa.nulls(2500, pa.string()))
    counts = np.bincount(ids, minlength=4)
    assert list(counts) == pytest.approx([400, 700, 700, 700], abs=5)
    assert (np.diff(ids) >= 0).all()  # each bucket one contiguous key range


def test_assignment_of_tagged_keys_deletes_of_new_keys_and_bucket_numbers():
    p = plan(Counts(updates={("a/b", "f1"): 2}, inserts={"a": 1}, new_buckets={}),
             {"a/b": [slice_("a/b", "f1", 10)], "a": []})
    ids = p.assign(pa.array(["a/b", "a/b", "a", "x"]), pa.array(["k1", "k2", "k3", "k4"]),
                   pa.array(["f1", "f1", None, None], pa.string()))
    assert list(ids) == [0, 0, 1, -1]  # an untracked partition's new key (a delete) goes nowhere
    assert list(p.tasks(ids)) == [p.task_of_bucket[0], p.task_of_bucket[0], p.task_of_bucket[1], 0]
    bucketed = plan(Counts(new_buckets={("d", 3): 5, ("d", 7): 2}), {})
    assert [b.file_id[:8] for b in bucketed.buckets] == ["00000003", "00000007"]
    ids = bucketed.assign(pa.array(["d", "d", "d"]), pa.array(["x", "y", "z"]), pa.nulls(3, pa.string()),
                          pa.array([7, 3, 9], pa.int32()))
    assert list(ids) == [1, 0, -1]


def test_a_file_group_gone_from_the_listing_is_an_error():
    with pytest.raises(WriteError, match="file group f9 of partition 'd' is gone"):
        plan(Counts(updates={("d", "f9"): 1}), {"d": [slice_("d", "f1", 1)]})


# ---- bulk_insert ranges (GLOBAL_SORT) ------------------------------------------------------------------------------


def test_bulk_insert_keeps_partitions_below_a_tasks_share_whole_and_balances_them():
    counts = {f"d{i}": 100 for i in range(10)}
    assert BulkInsertRanges.cuts(counts, 4) == {}
    r = BulkInsertRanges.plan(counts, {}, 4)
    assert r.n_tasks == 4 and all(bounds == () and len(tasks) == 1 for bounds, tasks in r.ranges.values())
    loads = np.bincount([tasks[0] for _, tasks in r.ranges.values()], minlength=4)
    assert sorted(loads) == [2, 2, 3, 3]  # whole partitions, largest first onto the least loaded task


def test_bulk_insert_cuts_a_partition_above_a_tasks_share_at_sampled_keys_over_tasks():
    counts = {"big": 9000, "small": 1000}
    assert BulkInsertRanges.cuts(counts, 4) == {"big": 4}  # 9000 rows > 2500 a task: 4 ranges (the parallelism)
    keys = [f"k{i:04d}" for i in range(0, 9000, 10)]
    r = BulkInsertRanges.plan(counts, {"big": keys}, 4)
    bounds, tasks = r.ranges["big"]
    assert bounds == ("k2250", "k4500", "k6750") and len(set(tasks)) == 4
    assert r.ranges["small"][0] == () and len(r.ranges["small"][1]) == 1
    # Without a sample (nothing sampled) the partition stays one range rather than failing.
    assert BulkInsertRanges.plan(counts, {}, 4).ranges["big"][0] == ()


def map_side(**kw) -> MapSidePlan:
    args = dict(n_tasks=4, pack_small_files=True, small_file_limit=60_000, max_file_size=100_000, avg_record_size=100,
                compacting={})
    args.update(kw)
    return MapSidePlan(**args)  # type: ignore[arg-type]


def test_map_side_plan_sends_new_keys_to_the_smallest_small_file_or_a_new_group():
    slices = [slice_("d", "f1", 50_000), slice_("d", "f2", 20_000), slice_("d", "f3", 70_000)]
    assert map_side().insert_group(slices) == "f2"
    assert map_side().room(slices[1]) == 800  # (100,000 - 20,000) / 100
    assert map_side().insert_group([slices[2]]) == NEW_GROUP  # above the small-file limit
    assert map_side(pack_small_files=False).insert_group(slices) == NEW_GROUP  # MOR, overwrites
    assert map_side().insert_group([]) == NEW_GROUP


def test_map_side_plan_spreads_a_partitions_file_groups_over_the_tasks():
    slices = [slice_("", f"f{i}", 1) for i in range(6)]
    plan4 = map_side()
    tasks = plan4.tasks("", [s.file_id for s in slices], slices)
    assert sorted(set(tasks)) == [0, 1, 2, 3]  # min(6 groups, 4 tasks)
    assert plan4.tasks("", [NEW_GROUP], slices) == [(6 + plan4.tasks("", ["f0"], slices)[0]) % 4]
    assert set(map_side(n_tasks=2).tasks("", [s.file_id for s in slices[:2]], slices[:2])) == {0, 1}


def test_map_side_plan_logs_into_a_pending_compactions_slice():
    s = slice_("d", "f1", 1)
    assert map_side().slice_of(s) is s
    assert map_side(compacting={("d", "f1"): "002"}).slice_of(s).base_instant == "002"


def test_map_side_plan_takes_a_partition_of_one_file_group_whole():
    one = [slice_("d", "f1", 1)]
    mor = map_side(whole_groups=True, pack_small_files=False)
    assert mor.whole_group(one) == "f1"
    assert mor.whole_group([*one, slice_("d", "f2", 1)]) is None  # tagged: two groups
    assert mor.whole_group([SliceInfo("d", "f1", "001", None, None, 0)]) is None  # logs only
    assert mor.whole_group([slice_("d", "f1", 70_000)]) == "f1"  # MOR: new keys go to a new group in the task
    cow = map_side(whole_groups=True)
    assert cow.whole_group(one) == "f1"  # the small file its new keys fill
    assert cow.whole_group([slice_("d", "f1", 70_000)]) is None  # not small: new keys go to a new group
    assert map_side().whole_group(one) is None  # inserts, overwrites
