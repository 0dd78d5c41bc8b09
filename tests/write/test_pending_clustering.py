"""Another writer's pending clustering, honoured as Hudi 0.14/0.15 does (hudi_engine/timeline/clustering.py).

The proof the issue asks for: a copy of a real Hudi table, a real clustering plan (`<ts>.replacecommit.requested`)
over the file group an update hits; the update is refused before any file is written (SparkRejectUpdateStrategy),
an insert-only write succeeds and stays out of that group (UpsertPartitioner.filterSmallFilesInClustering); the
clustering then completes as Hudi runs it (tests/write/clustering_job.py), and hudi-rs reads every acknowledged row.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from clustering_job import execute_clustering, schedule_clustering
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ClusteringConflictError, ClusteringUpdateError, ConfigError
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.timeline import Action, Instant, State, Timeline, write_avro_metadata
from hudi_engine.timeline.clustering import NO_PENDING_CLUSTERING, PendingClustering, is_clustering
from hudi_engine.write.write_client import WriteClient, table_for_write

COW = "cow_v6_simplekeygen_nonhivestyle"  # partitions 10 (ids 1, 3), 20 (id 2), 30 (id 4); one file group each
MOR = "mor_parquetlog_v6_simplekeygen_nonhivestyle"


def copy_of(unzip_table, name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(unzip_table(name), target)
    return target


def data_files(path: Path) -> dict[str, int]:
    """Every file outside `.hoodie`, with its size: what a refused write must leave alone."""
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*")
            if p.is_file() and ".hoodie" not in p.relative_to(path).parts}


def group_of(path: Path, partition: str) -> str:
    (s,) = [s for s in HudiTable.load(str(path)).file_slices() if s.partition_path == partition]
    return s.file_id


def rows(path: Path, ids: list[int], **changes) -> pa.Table:
    """Records of `ids` as stored (data columns only), with `changes` applied; ids not stored are copied from id 1
    with that id."""
    snap = HudiTable.load(str(path)).read_snapshot()
    data = snap.drop_columns([c for c in META_COLUMNS if c in snap.column_names])
    out = []
    for i in ids:
        row = data.filter(pc.equal(data.column("id"), i))
        if row.num_rows == 0:
            row = data.filter(pc.equal(data.column("id"), 1)).set_column(0, "id", pa.array([i], pa.int32()))
        out.append(row)
    t = pa.concat_tables(out)
    for name, value in changes.items():
        t = t.set_column(t.schema.get_field_index(name), name, pa.array([value] * t.num_rows, t.schema.field(name).type))
    return t


def upsert(path: Path, table: pa.Table, operation: str = "upsert", **extra) -> None:
    write(path, table, {"hoodie.datasource.write.operation": operation, **extra})


def expected_rows(before: pa.Table, *writes: pa.Table) -> dict[int, tuple]:
    """id -> (name, longField, byteField) after `writes` were applied in order (each write's rows win)."""
    out = {r["id"]: (r["name"], r["longField"], r["byteField"]) for r in before.to_pylist()}
    for w in writes:
        out.update({r["id"]: (r["name"], r["longField"], r["byteField"]) for r in w.to_pylist()})
    return out


def oracle_rows(path: Path) -> dict[int, tuple]:
    return {r["id"]: (r["name"], r["longField"], r["byteField"]) for r in rs_snapshot(path).to_pylist()}


# --------------------------------------------------------------------------------------------- detection


def test_pending_clustering_is_read_from_the_plan_and_insert_overwrite_is_not_one(unzip_table, tmp_path):
    path = copy_of(unzip_table, COW, tmp_path)
    storage, base = Storage.for_uri(str(path))
    assert PendingClustering.of(Timeline.load(TableLocation.at(storage, base))) is NO_PENDING_CLUSTERING
    # An insert_overwrite's pending replacecommit: an all-null requested record (as Spark writes it) or zero bytes.
    timeline = Timeline.load(TableLocation.at(storage, base))
    null_plan = write_avro_metadata("HoodieRequestedReplaceMetadata", {
        "operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None})
    overwrite = timeline.create_requested(Instant("20300101000000000", Action.REPLACE_COMMIT, State.REQUESTED), null_plan)
    empty = timeline.create_requested(Instant("20300101000000001", Action.REPLACE_COMMIT, State.REQUESTED))
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert not is_clustering(timeline, overwrite) and not is_clustering(timeline, empty)
    assert not PendingClustering.of(timeline)
    for i in (overwrite, empty):
        timeline.delete_instant_files(i)
    g10, g20 = group_of(path, "10"), group_of(path, "20")
    ts = schedule_clustering(path, [("10", g10), ("20", g20)], inflight=True)
    pending = PendingClustering.of(Timeline.load(TableLocation.at(storage, base)))
    assert pending.file_groups == {("10", g10): ts, ("20", g20): ts}
    assert pending.instants == [ts]
    (plan,) = pending.plans
    assert [s.base_file_path for s in plan.slices] == [
        s.base_file.path for k in (("10", g10), ("20", g20))
        for s in HudiTable.load(str(path)).file_slices() if (s.partition_path, s.file_id) == k]
    execute_clustering(path, ts)  # completed: no longer pending, and still a clustering
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert not PendingClustering.of(timeline)
    assert is_clustering(timeline, timeline.completed_replace_commits().last())


# --------------------------------------------------------------------------------------------- the proof


@pytest.mark.parametrize("name", [COW, MOR])
def test_updates_refused_inserts_routed_elsewhere_then_clustering_loses_nothing(unzip_table, tmp_path, name):
    path = copy_of(unzip_table, name, tmp_path)
    before = HudiTable.load(str(path)).read_snapshot()
    g10 = group_of(path, "10")
    ts = schedule_clustering(path, [("10", g10)])

    # 1. An update of id 1 (stored in the clustering's file group): refused, Hudi's message, nothing written.
    files, snapshot = data_files(path), rs_snapshot(path)
    for operation in ("upsert", "delete"):
        with pytest.raises(ClusteringUpdateError) as e:
            upsert(path, rows(path, [1, 2], name="changed", longField=2**40), operation)
        msg = str(e.value)
        assert f"Not allowed to update the clustering file group HoodieFileGroupId{{partitionPath='10', " \
               f"fileId='{g10}'}}" in msg
        assert "For pending clustering operations, we are not going to support update for now" in msg
        assert str(path) in msg and f"{ts}.replacecommit" in msg and "hoodie.clustering.updates.strategy" in msg
        assert data_files(path) == files
        assert_same_rows(rs_snapshot(path), snapshot, f"after the refused {operation}")
    assert PendingClustering.of(Timeline.load(TableLocation.of(str(path)))).file_groups == {("10", g10): ts}

    # 2. New keys into partition 10, and an update elsewhere: accepted; nothing goes into the clustering's group.
    inserts = rows(path, [5, 6], name="new", longField=7)  # copies of id 1: partition 10
    upsert(path, inserts, "insert")
    update20 = rows(path, [2, 7], name="twenty", longField=2**41)  # id 2 stored in 20; id 7 new
    upsert(path, update20, "upsert")
    assert data_files(path).items() >= {k: v for k, v in files.items() if g10 in k}.items()
    assert not [k for k in data_files(path) if g10 in k and k not in files]  # the group got no new file
    t = HudiTable.load(str(path))
    held = {r["id"]: r["_hoodie_file_name"] for r in t.read_snapshot().to_pylist()}
    assert all(not held[i].startswith(g10) for i in (5, 6, 7))

    # 3. The clustering runs as Hudi would: every acknowledged row is still there, for hudi-rs too.
    replaced = execute_clustering(path, ts)
    assert replaced == {"10": [g10]}
    want = expected_rows(before, inserts, update20)
    assert oracle_rows(path) == want
    assert {r["id"]: (r["name"], r["longField"], r["byteField"]) for r in
            HudiTable.load(str(path)).read_snapshot().to_pylist()} == want
    # Once it completed, the update it had blocked goes through.
    again = rows(path, [1], name="after", longField=2**42)
    upsert(path, again, "upsert")
    assert oracle_rows(path) == expected_rows(before, inserts, update20, again)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_version_9_pending_clustering_is_honoured(tmp_path, table_type):
    """Hudi 1.x plans a clustering as `<ts>.clustering.requested`, an action of its own while pending that completes
    as a replacecommit: on a version 9 table the same rules hold (updates refused before any file, inserts kept out
    of its file group, nothing lost when it completes)."""
    path = tmp_path / "v9"
    options = {"hoodie.table.name": "c9", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "9"}
    write(path, pa.table({"id": ["a", "b", "c"], "p": ["x", "x", "y"], "ts": [1, 1, 1], "v": [1, 2, 3]}), options)
    gx = group_of(path, "x")
    ts = schedule_clustering(path, [("x", gx)])
    assert (path / ".hoodie" / "timeline" / f"{ts}.clustering.requested").is_file()
    assert PendingClustering.of(Timeline.load(TableLocation.of(str(path)))).file_groups == {("x", gx): ts}

    files = data_files(path)
    with pytest.raises(ClusteringUpdateError, match=f"fileId='{gx}'"):
        write(path, pa.table({"id": ["a"], "p": ["x"], "ts": [2], "v": [10]}), options)
    assert data_files(path) == files
    write(path, pa.table({"id": ["d", "c"], "p": ["x", "y"], "ts": [2, 2], "v": [4, 30]}), options)
    assert not [k for k in data_files(path) if gx in k and k not in files]  # the clustering's group got no file

    assert execute_clustering(path, ts) == {"x": [gx]}
    timeline = Timeline.load(TableLocation.of(str(path)))
    done = timeline.completed_replace_commits().last()
    assert done.timestamp == ts and is_clustering(timeline, done) and not PendingClustering.of(timeline)
    want = {"a": 1, "b": 2, "c": 30, "d": 4}
    assert {r["id"]: r["v"] for r in HudiTable.load(str(path)).read_snapshot().to_pylist()} == want
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == want
    write(path, pa.table({"id": ["a"], "p": ["x"], "ts": [3], "v": [10]}), options)  # no longer under clustering
    assert {r["id"]: r["v"] for r in HudiTable.load(str(path)).read_snapshot().to_pylist()} == {**want, "a": 10}
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == {**want, "a": 10}


def test_small_file_under_clustering_takes_no_inserts(unzip_table, tmp_path):
    """COW inserts fill small files first (every file of this table is small), except the clustering's."""
    path = copy_of(unzip_table, COW, tmp_path)
    g10 = group_of(path, "10")
    upsert(path, rows(path, [8], name="packed"), "insert")  # without a clustering: packed into partition 10's file
    assert len(HudiTable.load(str(path)).file_slices()) == 3
    schedule_clustering(path, [("10", g10)])
    upsert(path, rows(path, [9], name="elsewhere"), "insert")
    slices = HudiTable.load(str(path)).file_slices()
    assert len(slices) == 4 and len([s for s in slices if s.partition_path == "10"]) == 2


def test_two_pending_plans_over_one_file_group_are_refused(unzip_table, tmp_path):
    path = copy_of(unzip_table, COW, tmp_path)
    g10 = group_of(path, "10")
    schedule_clustering(path, [("10", g10)])
    schedule_clustering(path, [("10", g10)])
    with pytest.raises(Exception, match="two pending clustering plans"):
        PendingClustering.of(Timeline.load(TableLocation.of(str(path))))


# --------------------------------------------------------------------------------------------- the option


@pytest.mark.parametrize("value", ["SparkRejectUpdateStrategy",
                                   "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
                                   "SparkAllowUpdateStrategy",
                                   "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"])
def test_served_strategies_are_accepted_by_short_or_full_name(unzip_table, tmp_path, value):
    path = copy_of(unzip_table, COW, tmp_path)
    upsert(path, rows(path, [5]), "insert", **{"hoodie.clustering.updates.strategy": value})
    assert 5 in oracle_rows(path)


@pytest.mark.parametrize("value, why", [
    ("SparkConsistentBucketDuplicateUpdateStrategy", "consistent-hashing"),
    ("FlinkRejectUpdateStrategy", "Flink"),
    ("com.example.MyStrategy", "unknown update strategy"),
])
def test_other_strategies_are_refused_by_name_before_any_file(unzip_table, tmp_path, value, why):
    path = copy_of(unzip_table, COW, tmp_path)
    files, hoodie = data_files(path), sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(ConfigError) as e:
        upsert(path, rows(path, [5]), "insert", **{"hoodie.clustering.updates.strategy": value})
    assert f"hoodie.clustering.updates.strategy={value!r}" in str(e.value) and why in str(e.value)
    assert str(path) in str(e.value)
    assert data_files(path) == files and sorted(p.name for p in (path / ".hoodie").iterdir()) == hoodie


# --------------------------------------------------------------------------------------------- one-pass route


@pytest.mark.parametrize("name", [COW, MOR])
def test_one_pass_route_tags_and_refuses_the_clustering_group(unzip_table, tmp_path, name):
    """The one-pass Spark write (`MapSidePlan`): a partition whose only group is under clustering is not taken whole
    untagged, new keys do not go to it, and a record tagged into it fails the map task."""
    from hudi_engine.write.executor import KEY, key_and_tag, map_side_groups

    path = copy_of(unzip_table, name, tmp_path)
    g10 = group_of(path, "10")
    schedule_clustering(path, [("10", g10)])
    data = rows(path, [1, 2, 5])
    for operation in ("upsert", "insert"):
        client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(
            {"hoodie.datasource.write.operation": operation}), data.schema)
        plan = client.map_side_plan(2)
        assert plan.clustering == {("10", g10): client.pending_clustering.instant_of("10", g10)}
        listed = client.latest_slices(["10", "20"])
        assert plan.whole_group(listed["10"]) is None and plan.insert_group(listed["10"]) == ""
        assert plan.whole_group(listed["20"]) == (group_of(path, "20") if operation == "upsert" else None)
        untagged = client.untagged_groups(plan)
        if operation == "upsert":
            assert untagged is None  # partition 10 needs its keys looked up
        else:
            assert untagged is not None and untagged.routes["10"][0] == ""  # a new group, not the clustering's
        task = client.write_task("20300101000000000")
        tags = key_and_tag(task.keygen(), client.tag_spec("20300101000000000"), data)
        listing = client.listing_spec("20300101000000000")
        if operation == "upsert":
            with pytest.raises(ClusteringUpdateError, match=f"fileId='{g10}'"):
                map_side_groups(listing, plan, tags, False)
        else:  # an insert looks no key up: nothing is tagged, new keys go to new groups
            groups, _ = map_side_groups(listing, plan, tags, False)
            assert g10 not in groups.to_pylist() and tags.field(KEY).to_pylist() == ["1", "2", "5"]


def test_without_the_refusal_the_clustering_would_lose_the_update(unzip_table, tmp_path, monkeypatch):
    """Why updates are refused: let one in (the refusal switched off) and the completed clustering, which rewrites
    the slice it planned, drops it."""
    path = copy_of(unzip_table, COW, tmp_path)
    before = HudiTable.load(str(path)).read_snapshot()
    ts = schedule_clustering(path, [("10", group_of(path, "10"))])
    monkeypatch.setattr(PendingClustering, "refuse_updates", lambda self, groups, where: None)
    changed = rows(path, [1], name="lost", longField=2**40)
    upsert(path, changed, "upsert")
    assert oracle_rows(path)[1][0] == "lost"  # acknowledged and visible ...
    execute_clustering(path, ts)
    assert oracle_rows(path) == expected_rows(before)  # ... and gone once the clustering completed


def test_occ_a_clustering_planned_during_a_write_over_its_file_group_fails_that_write(tmp_path):
    """Optimistic concurrency: a clustering scheduled over a file group after this write tagged its updates there
    (Hudi's getCandidateInstants takes pending replacecommits after the write's instant) fails this write at its
    commit point, rolled back; the clustering then completes and the table holds what was acknowledged."""
    from test_concurrency import OCC, Writer, _rows, _table

    from hudi_engine.write.conflict import WriteConflictError

    path = _table(tmp_path, OCC)
    g_a = group_of(path, "a")
    late = Writer(path, _rows(["a1", "b1"], ["a", "b"], 5.0), OCC).start().write()
    ts = schedule_clustering(path, [("a", g_a)])
    with pytest.raises(WriteConflictError, match=f"scheduled a clustering of 1 of the same file group.*a/{g_a}"):
        late.commit()
    execute_clustering(path, ts)
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == {"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 0.0}
    # A write that touches none of the clustering's file groups commits beside it.
    other = Writer(path, _rows(["b2"], ["b"], 7.0), OCC).start().write()
    schedule_clustering(path, [("a", group_of(path, "a"))])
    other.commit()
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()}["b2"] == 7.0


@pytest.mark.parametrize("operation, refused", [("insert_overwrite", True), ("insert_overwrite_table", True),
                                                ("insert_overwrite", False)])
def test_an_overwrite_of_a_clustering_partition_is_refused_before_any_file(unzip_table, tmp_path, operation, refused):
    """The completed clustering would write back the rows an overwrite removed (Hudi refuses delete_partition over a
    pending clustering the same way); an insert_overwrite of other partitions goes ahead."""
    path = copy_of(unzip_table, COW, tmp_path)
    before = HudiTable.load(str(path)).read_snapshot()
    ts = schedule_clustering(path, [("10", group_of(path, "10"))])
    files, snapshot = data_files(path), rs_snapshot(path)
    new = rows(path, [2 if refused else 4], name="overwritten")  # id 2 lives in partition 20, id 4 in 30
    if refused:
        new = new.set_column(new.schema.get_field_index("byteField"), "byteField", pa.array([10], pa.int32()))
        with pytest.raises(ClusteringUpdateError, match=rf"Failed to overwrite partitions \['10'\].*{ts}"):
            upsert(path, new, operation)
        assert data_files(path) == files
        assert_same_rows(rs_snapshot(path), snapshot, "after the refused overwrite")
        execute_clustering(path, ts)
        assert oracle_rows(path) == expected_rows(before)
    else:
        upsert(path, new, operation)
        execute_clustering(path, ts)
        assert oracle_rows(path) == expected_rows(before, new)


def test_a_bloom_false_positive_into_a_clustering_group_is_not_refused(unzip_table, tmp_path, monkeypatch):
    """A new key inside the key range of a clustering's file group that the bloom filter lets through (every filter
    answers yes here) is checked against the file's keys before it could be refused as an update
    (`tagging._confirm`, the exact lookup of Hudi's HoodieKeyLookupHandle)."""
    from hudi_engine.io.bloom import DynamicBloomFilter, SimpleBloomFilter

    path = copy_of(unzip_table, COW, tmp_path)
    before = HudiTable.load(str(path)).read_snapshot()
    g10 = group_of(path, "10")  # holds keys "1" and "3"
    ts = schedule_clustering(path, [("10", g10)])
    for kind in (SimpleBloomFilter, DynamicBloomFilter):
        monkeypatch.setattr(kind, "might_contain_many", lambda self, keys: [True] * len(keys))
    new = rows(path, [2], name="in range")
    new = new.set_column(new.schema.get_field_index("byteField"), "byteField", pa.array([10], pa.int32()))
    upsert(path, new, "upsert")  # key "2" of partition 10 is new there (id 2 of partition 20 is another record)
    t = HudiTable.load(str(path)).read_snapshot()
    assert [r["_hoodie_file_name"][:len(g10)] != g10 for r in t.to_pylist() if r["_hoodie_partition_path"] == "10"
            and r["_hoodie_record_key"] == "2"] == [True]
    with pytest.raises(ClusteringUpdateError):  # a stored key of the group is still refused
        upsert(path, rows(path, [3], name="x"), "upsert")
    execute_clustering(path, ts)
    got = {(r["id"], r["byteField"]): r["name"] for r in rs_snapshot(path).to_pylist()}
    assert got[(2, 10)] == "in range" and len(got) == before.num_rows + 1


def test_bucket_index_records_of_a_clustering_bucket_are_refused(tmp_path):
    """BUCKET index: every key of a bucket whose file group exists is tagged with it (Hudi's HoodieBucketIndex
    tagLocation), new keys too, so SparkRejectUpdateStrategy refuses them all; other buckets take writes."""
    from hudi_engine.write.index import bucket_ids

    path = tmp_path / "bucketed"
    options = {"hoodie.table.name": "b", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    keys = [f"k{i}" for i in range(20)]
    numbers = list(bucket_ids(pa.array(keys), 2))
    write(path, pa.table({"id": keys[:4], "p": ["x"] * 4, "ts": [1] * 4}), options)
    (in_zero,) = [s.file_id for s in HudiTable.load(str(path)).file_slices() if s.file_id.startswith("00000000")]
    schedule_clustering(path, [("x", in_zero)])
    new_in_zero = next(k for k, n in zip(keys[4:], numbers[4:]) if n == 0)
    new_in_one = next(k for k, n in zip(keys[4:], numbers[4:]) if n == 1)
    with pytest.raises(ClusteringUpdateError, match=f"fileId='{in_zero}'"):
        write(path, pa.table({"id": [new_in_zero], "p": ["x"], "ts": [2]}), options)
    write(path, pa.table({"id": [new_in_one], "p": ["x"], "ts": [2]}), options)
    assert new_in_one in {r["id"] for r in rs_snapshot(path).to_pylist()}


# --------------------------------------------------------------------------------------------- SparkAllowUpdateStrategy

ALLOW = {"hoodie.clustering.updates.strategy": "SparkAllowUpdateStrategy"}
ROLL_BACK = {**ALLOW, "hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"}


def _allow_table(path: Path, table_type: str, version: int) -> tuple[dict[str, str], dict[str, int]]:
    """Three small file groups in partition a, one in b; the options and id -> v."""
    opts = {"hoodie.table.name": "allow", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0"}
    want = {}
    for b in range(3):
        ids = [f"a{b}{i}" for i in range(3)]
        write(path, pa.table({"id": ids, "p": ["a"] * 3, "ts": [b] * 3, "v": [b * 10 + i for i in range(3)]}), opts)
        want.update({k: b * 10 + i for i, k in enumerate(ids)})
    write(path, pa.table({"id": ["b0"], "p": ["b"], "ts": [0], "v": [-1]}), opts)
    return opts, {**want, "b0": -1}


def _by_every_reader(path: Path) -> dict[str, int]:
    ours = {r["id"]: r["v"] for r in HudiTable.load(str(path)).read_snapshot().to_pylist()}
    assert {r["id"]: r["v"] for r in rs_snapshot(path).to_pylist()} == ours
    return ours


def _pending(path: Path) -> dict[str, str]:
    """Pending clusterings: instant -> state."""
    timeline = Timeline.load(TableLocation.of(str(path)))
    return {p.instant.timestamp: p.instant.state.name for p in PendingClustering.of(timeline).plans}


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_allowed_updates_are_written_and_the_clustering_then_refuses_to_complete(tmp_path, table_type, version):
    """SparkAllowUpdateStrategy without rollback: the update and delete go into file groups of a pending clustering
    (Hudi's clusteringHandleUpdate returns early); executing the clustering afterwards would drop them, so it refuses
    (Hudi's conflict resolution at the clustering's commit), naming the table, its instant and the file groups,
    before writing anything. Every reader sees every update; rolled back and planned again, the clustering
    completes with them."""
    path = tmp_path / "t"
    opts, want = _allow_table(path, table_type, version)
    scheduled = HudiTable.load(str(path)).cluster(options=opts, op="schedule")
    ts = scheduled.instant_time
    assert len(scheduled.replaced["a"]) == 3
    write(path, pa.table({"id": ["a00", "a11"], "p": ["a", "a"], "ts": [5, 5], "v": [100, 111]}), {**opts, **ALLOW})
    write(path, pa.table({"id": ["a22"], "p": ["a"], "ts": [5], "v": [0]}),
          {**opts, **ALLOW, "hoodie.datasource.write.operation": "delete"})
    want = {**{k: v for k, v in want.items() if k != "a22"}, "a00": 100, "a11": 111}
    assert _by_every_reader(path) == want and _pending(path) == {ts: "REQUESTED"}

    files, listing = data_files(path), sorted(p.name for p in (path / ".hoodie").rglob("*") if p.is_file())
    with pytest.raises(ClusteringConflictError) as e:
        HudiTable.load(str(path)).cluster(options=opts, op="execute")
    msg = str(e.value)
    assert str(path) in msg and f"clustering {ts} cannot complete" in msg and "SparkAllowUpdateStrategy" in msg
    assert e.value.instant == ts and {f for _, f in e.value.file_groups} <= set(scheduled.replaced["a"])
    assert data_files(path) == files  # nothing written, not even the .inflight
    assert sorted(p.name for p in (path / ".hoodie").rglob("*") if p.is_file()) == listing
    assert _by_every_reader(path) == want and _pending(path) == {ts: "REQUESTED"}

    HudiTable.load(str(path)).rollback(ts)  # the way out the error names
    assert _pending(path) == {}
    done = HudiTable.load(str(path)).cluster(options=opts)
    assert done is not None and done.instant_time != ts
    assert _by_every_reader(path) == want


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_on_conflict_rolls_the_requested_clustering_back_before_the_write(tmp_path, table_type, version):
    """hoodie.clustering.rollback.pending.replacecommit.on.conflict: a write whose updates hit a requested
    clustering's file groups rolls it back (a rollback instant naming it), then writes; a write that touches none of
    its groups leaves it pending. The metadata table is kept through it (the rollback is recorded after the write's
    delta commit: the metadata table takes them in order)."""
    from metadata_tables import mdt_listing, storage_listing

    path = tmp_path / "t"
    opts, want = _allow_table(path, table_type, version)
    opts["hoodie.metadata.enable"] = "true"
    write(path, pa.table({"id": ["b0"], "p": ["b"], "ts": [0], "v": [-1]}), opts)  # creates the metadata table
    t = HudiTable.load(str(path))
    ts = t.cluster(options={**opts, "hoodie.clustering.plan.strategy.partition.selected": "a"}, op="schedule")\
        .instant_time
    write(path, pa.table({"id": ["b0", "new"], "p": ["b", "a"], "ts": [1, 1], "v": [-2, 7]}), {**opts, **ROLL_BACK})
    want = {**want, "b0": -2, "new": 7}
    assert _pending(path) == {ts: "REQUESTED"} and _by_every_reader(path) == want

    write(path, pa.table({"id": ["a12"], "p": ["a"], "ts": [6], "v": [112]}), {**opts, **ROLL_BACK})
    want["a12"] = 112
    assert _pending(path) == {}
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert not timeline.instants_at(ts)
    (rollback,) = [i for i in timeline if i.action is Action.ROLLBACK and i.is_completed
                   and timeline.avro_metadata(i)["commitsRollback"] == [ts]]
    assert _by_every_reader(path) == want
    assert HudiTable.load(str(path)).config.metadata_partitions == ["files"]
    assert mdt_listing(path) == storage_listing(path)
    assert HudiTable.load(str(path)).cluster(options=opts) is not None  # a new plan completes, nothing lost
    assert _by_every_reader(path) == want


def test_rollback_on_conflict_refuses_a_write_into_an_inflight_clustering(tmp_path):
    """An inflight clustering may be executing in another process: it is not rolled back under its executor; the
    write is refused before any file, and the clustering left as it was."""
    path = tmp_path / "t"
    opts, want = _allow_table(path, "COPY_ON_WRITE", 6)
    ts = HudiTable.load(str(path)).cluster(options=opts, op="schedule").instant_time
    timeline = Timeline.load(TableLocation.of(str(path)))
    timeline.transition_to_inflight(timeline.instants_at(ts)[0])
    files = data_files(path)
    with pytest.raises(ClusteringUpdateError, match=f"inflight clustering {ts}.*rollback.pending.replacecommit"):
        write(path, pa.table({"id": ["a00"], "p": ["a"], "ts": [6], "v": [1]}), {**opts, **ROLL_BACK})
    assert data_files(path) == files and _pending(path) == {ts: "INFLIGHT"} and _by_every_reader(path) == want


def test_occ_an_allowed_write_into_a_group_a_clustering_replaced_meanwhile_fails_at_commit(tmp_path):
    """Optimistic concurrency: the clustering was planned before the write started, the write lets its update in,
    and the clustering completes while the write's files are being written (no completed commit to conflict with
    yet); the write's own conflict check then fails it (the replacecommit replaced its file group), so the update is
    not acknowledged into a replaced group."""
    from test_concurrency import OCC, Writer, _rows, _table

    from hudi_engine.write.conflict import WriteConflictError

    path = _table(tmp_path, OCC)
    ts = HudiTable.load(str(path)).cluster(options=OCC, op="schedule").instant_time
    late = Writer(path, _rows(["a1"], ["a"], 5.0), {**OCC, **ALLOW}).start().write()
    HudiTable.load(str(path)).cluster(options=OCC, op="execute", instant=ts)
    with pytest.raises(WriteConflictError, match=f"conflicts with instant {ts}"):
        late.commit()
    assert _by_every_reader(path) == {"a1": 0.0, "a2": 0.0, "b1": 0.0, "b2": 0.0}


@pytest.mark.parametrize("name", [COW, MOR])
def test_one_pass_route_lets_allowed_updates_through_and_rollback_takes_the_driver_route(unzip_table, tmp_path, name):
    """The one-pass Spark write: with SparkAllowUpdateStrategy the map task tags the update into the clustering's
    group without failing; with rollback on conflict the driver must see the updates first (two-pass route)."""
    from hudi_engine.write.executor import key_and_tag, map_side_groups

    path = copy_of(unzip_table, name, tmp_path)
    g10 = group_of(path, "10")
    schedule_clustering(path, [("10", g10)])
    data = rows(path, [1, 2, 5])
    for extra, rolls_back in ((ALLOW, False), (ROLL_BACK, True)):
        client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(
            {"hoodie.datasource.write.operation": "upsert", **extra}), data.schema)
        assert client.rolls_back_clustering is rolls_back
        plan = client.map_side_plan(2)
        assert not plan.refuse_clustering_updates
        tags = key_and_tag(client.write_task("20300101000000000").keygen(), client.tag_spec("20300101000000000"),
                           data)
        groups, _ = map_side_groups(client.listing_spec("20300101000000000"), plan, tags, False)
        assert g10 in groups.to_pylist()
