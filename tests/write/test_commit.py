"""The instant lifecycle on the driver: create_table, start_commit, complete_commit."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine.errors import InstantLostError, WriteError
from hudi_engine.location import TableLocation
from hudi_engine.partition_metadata import parse_partition_metadata
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import read_avro_metadata
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import (
    commit_action,
    complete_commit,
    create_table,
    file_groups_to_replace,
    request_commit,
    start_commit,
    workload_profile,
)
from hudi_engine.write.handles import WriteContext, create_handle
from hudi_engine.write.markers import list_markers, marker_dir

DATA = pa.table({"id": ["a", "b", "c"], "y": ["2024", "2024", "2025"], "m": ["01", "02", "01"],
                 "ts": pa.array([1, 2, 3], pa.int64())})


def _new_table(tmp_path: Path, table_type: str = "COPY_ON_WRITE", partitions=("y", "m")):
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig.create("events", table_type, ["id"], list(partitions), "ts")
    create_table(TableLocation.at(storage, base), config)
    return storage, base, config


def _write(storage, base, config, instant, partition, rows):
    ctx = WriteContext.create(TableLocation.at(storage, base), config, instant.timestamp, DATA.schema)
    return ctx, create_handle(ctx, partition, rows)


# --------------------------------------------------------------------------------------------- create_table


def test_create_table_lays_out_hoodie_and_loads_back(tmp_path):
    storage, base, config = _new_table(tmp_path)
    meta = tmp_path / "t" / ".hoodie"
    for sub in (".schema", "archived", ".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids"):
        assert (meta / sub).is_dir(), sub
    loaded = TableConfig.load(TableLocation.at(storage, base))
    assert (loaded.name, loaded.version, loaded.record_key_fields) == ("events", 6, ["id"])
    assert len(Timeline.load(TableLocation.at(storage, base))) == 0


def test_create_table_refuses_an_existing_table(tmp_path):
    storage, base, config = _new_table(tmp_path)
    with pytest.raises(WriteError, match="already exists"):
        create_table(TableLocation.at(storage, base), config)
    other = tmp_path / "o"
    (other / ".hoodie").mkdir(parents=True)
    (other / ".hoodie" / "20240101000000000.commit").write_bytes(b"")
    storage2, base2 = Storage.for_uri(str(other))
    with pytest.raises(WriteError, match="instant files"):
        create_table(TableLocation.at(storage2, base2), config)


# --------------------------------------------------------------------------------------------- start_commit


def test_start_commit_writes_requested_and_inflight_after_every_instant(tmp_path):
    storage, base, config = _new_table(tmp_path)
    future = "29991231235959000"
    (tmp_path / "t" / ".hoodie" / f"{future}.clean.requested").write_bytes(b"")
    inflight = start_commit(TableLocation.at(storage, base), config, "INSERT")
    assert inflight == Instant(inflight.timestamp, Action.COMMIT, State.INFLIGHT)
    assert inflight.timestamp > future and len(inflight.timestamp) == 17
    meta = tmp_path / "t" / ".hoodie"
    assert (meta / f"{inflight.timestamp}.commit.requested").read_bytes() == b""
    profile = CommitMetadata.from_json((meta / f"{inflight.timestamp}.inflight").read_bytes())
    assert profile.operation_type == "INSERT" and profile.partition_to_write_stats == {}
    with pytest.raises(WriteError, match="not after the latest instant"):
        start_commit(TableLocation.at(storage, base), config, "INSERT", instant_time=future)
    # That table's future does not lift another table's instants (the process-wide generator steps past a timeline
    # ahead of the clock for that timeline only)
    other_storage, other_base, other_config = _new_table(tmp_path / "other")
    other = start_commit(TableLocation.at(other_storage, other_base), other_config, "INSERT")
    assert other.timestamp < future


def test_commit_action_by_table_type_and_operation(tmp_path):
    _, _, cow = _new_table(tmp_path / "cow")
    _, _, mor = _new_table(tmp_path / "mor", "MERGE_ON_READ")
    assert commit_action(cow, "UPSERT") is Action.COMMIT
    assert commit_action(mor, "UPSERT") is Action.DELTA_COMMIT
    assert commit_action(mor, "INSERT_OVERWRITE") is Action.REPLACE_COMMIT
    assert commit_action(cow, "DELETE_PARTITION") is Action.REPLACE_COMMIT
    storage, base, config = _new_table(tmp_path / "x")
    with pytest.raises(WriteError, match="operation type 'upsert'"):
        request_commit(TableLocation.at(storage, base), config, "upsert")


def test_replacecommit_requested_is_the_all_null_avro_record_spark_writes(tmp_path, unzip_table):
    storage, base, config = _new_table(tmp_path)
    requested = request_commit(TableLocation.at(storage, base), config, "INSERT_OVERWRITE")
    assert requested.action is Action.REPLACE_COMMIT and requested.is_requested
    ours = (tmp_path / "t" / ".hoodie" / requested.file_name).read_bytes()
    real_table = unzip_table("cow_v6_simplekeygen_nonhivestyle_overwritetable")
    (real,) = (real_table / ".hoodie").glob("*.replacecommit.requested")
    expected = read_avro_metadata(real.read_bytes(), "HoodieRequestedReplaceMetadata")
    assert read_avro_metadata(ours, "HoodieRequestedReplaceMetadata") == expected
    assert expected == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}


def test_workload_profile_is_byte_identical_to_a_real_inflight_file(unzip_table):
    table = unzip_table("cow_v6_simplekeygen_nonhivestyle")
    real = (table / ".hoodie" / "20240418172804498.inflight").read_bytes()
    ours = workload_profile("UPSERT", {"30": 1, "10": 0},
                            {("10", "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0"): ("20240418172802262", 1)})
    assert ours.to_json() == real


# --------------------------------------------------------------------------------------------- complete_commit


def test_complete_commit_writes_partition_metadata_commit_json_and_drops_markers(tmp_path):
    storage, base, config = _new_table(tmp_path)
    inflight = start_commit(TableLocation.at(storage, base), config, "INSERT")
    ctx, s1 = _write(storage, base, config, inflight, "2024/01", DATA.slice(0, 1))
    _, s2 = _write(storage, base, config, inflight, "2025/01", DATA.slice(2, 1))
    completed = complete_commit(TableLocation.at(storage, base), inflight, [s1, s2], "INSERT", ctx.schema_with_meta,
                                extra_metadata={"k": "v"}, layout=layout_at(TableLocation.at(storage, base)))
    assert completed == Instant(inflight.timestamp, Action.COMMIT, State.COMPLETED)
    for part in ("2024/01", "2025/01"):
        md = parse_partition_metadata((tmp_path / "t" / part / ".hoodie_partition_metadata").read_bytes())
        assert (md["commitTime"], md["partitionDepth"]) == (inflight.timestamp, 2)
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert timeline.completed_commits().last() == completed
    meta = timeline.commit_metadata(completed)
    assert meta.operation_type == "INSERT" and not meta.compacted and meta.partition_to_replace_file_ids is None
    assert list(meta.partition_to_write_stats) == ["2024/01", "2025/01"]
    assert meta.write_stats()[0].path == s1.path and meta.write_stats()[0].prev_commit == "null"
    schema = json.loads(meta.extra_metadata["schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "y", "m", "ts"]  # no meta fields
    assert schema["name"] == "events_record" and meta.extra_metadata["k"] == "v"
    assert not storage.exists(marker_dir(TableLocation.at(storage, base), inflight.timestamp))
    with pytest.raises(WriteError, match="COMPLETED on the timeline"):
        complete_commit(TableLocation.at(storage, base), inflight, [s1], "INSERT", ctx.schema,
                        layout=layout_at(TableLocation.at(storage, base)))


def test_complete_commit_of_a_non_partitioned_table_writes_depth_zero(tmp_path):
    storage, base, config = _new_table(tmp_path, partitions=())
    inflight = start_commit(TableLocation.at(storage, base), config, "INSERT")
    ctx, stat = _write(storage, base, config, inflight, "", DATA)
    assert stat.path == stat.path.split("/")[-1]
    complete_commit(TableLocation.at(storage, base), inflight, [stat], "INSERT", ctx.schema,
                    layout=layout_at(TableLocation.at(storage, base)))
    md = parse_partition_metadata((tmp_path / "t" / ".hoodie_partition_metadata").read_bytes())
    assert md["partitionDepth"] == 0
    assert list(Timeline.load(TableLocation.at(storage, base)).commit_metadata(Timeline.load(TableLocation.at(storage, base)).last()).partition_to_write_stats) == [""]


def test_complete_commit_reconciles_against_markers(tmp_path):
    storage, base, config = _new_table(tmp_path)
    inflight = start_commit(TableLocation.at(storage, base), config, "INSERT")
    ctx, kept = _write(storage, base, config, inflight, "2024/01", DATA.slice(0, 1))
    # A failed task attempt: marker and file, but no stat reaches the driver.
    _, lost = _write(storage, base, config, inflight, "2024/02", DATA.slice(1, 1))
    assert (tmp_path / "t" / lost.path).exists()
    complete_commit(TableLocation.at(storage, base), inflight, [kept], "INSERT", ctx.schema,
                    layout=layout_at(TableLocation.at(storage, base)))
    assert not (tmp_path / "t" / lost.path).exists()
    assert (tmp_path / "t" / kept.path).exists()


def test_complete_commit_refuses_unmarked_or_missing_files_and_non_inflight_instants(tmp_path):
    storage, base, config = _new_table(tmp_path)
    inflight = start_commit(TableLocation.at(storage, base), config, "INSERT")
    ctx, stat = _write(storage, base, config, inflight, "2024/01", DATA.slice(0, 1))
    for m in list_markers(TableLocation.at(storage, base), inflight.timestamp):
        storage.delete(Storage.join(marker_dir(TableLocation.at(storage, base), inflight.timestamp), m.relative_path))
    with pytest.raises(WriteError, match="without a marker"):
        complete_commit(TableLocation.at(storage, base), inflight, [stat], "INSERT", ctx.schema,
                        layout=layout_at(TableLocation.at(storage, base)))
    with pytest.raises(InstantLostError, match="20000101000000000 is not on the timeline \\(no rollback"):
        complete_commit(TableLocation.at(storage, base), Instant("20000101000000000", Action.COMMIT, State.INFLIGHT), [], "INSERT",
                        ctx.schema, layout=layout_at(TableLocation.at(storage, base)))
    requested = request_commit(TableLocation.at(storage, base), config, "INSERT")
    with pytest.raises(WriteError, match="REQUESTED on the timeline"):
        complete_commit(TableLocation.at(storage, base), requested, [], "INSERT", ctx.schema,
                        layout=layout_at(TableLocation.at(storage, base)))


def test_replacecommit_carries_replaced_file_groups(tmp_path):
    storage, base, config = _new_table(tmp_path)
    first = start_commit(TableLocation.at(storage, base), config, "INSERT")
    ctx, a = _write(storage, base, config, first, "2024/01", DATA.slice(0, 1))
    _, b = _write(storage, base, config, first, "2025/01", DATA.slice(2, 1))
    complete_commit(TableLocation.at(storage, base), first, [a, b], "INSERT", ctx.schema,
                    layout=layout_at(TableLocation.at(storage, base)))
    assert file_groups_to_replace(TableLocation.at(storage, base)) == {"2024/01": [a.file_id], "2025/01": [b.file_id]}
    replaced = file_groups_to_replace(TableLocation.at(storage, base), ["2024/01"])
    assert replaced == {"2024/01": [a.file_id]}
    second = start_commit(TableLocation.at(storage, base), config, "INSERT_OVERWRITE")
    assert second.action is Action.REPLACE_COMMIT
    ctx2, c = _write(storage, base, config, second, "2024/01", DATA.slice(1, 1))
    done = complete_commit(TableLocation.at(storage, base), second, [c], "INSERT_OVERWRITE", ctx2.schema, replaced,
                           layout=layout_at(TableLocation.at(storage, base)))
    meta = Timeline.load(TableLocation.at(storage, base)).commit_metadata(done)
    assert meta.partition_to_replace_file_ids == {"2024/01": [a.file_id]}
    assert file_groups_to_replace(TableLocation.at(storage, base)) == {"2024/01": [c.file_id], "2025/01": [b.file_id]}
    with pytest.raises(WriteError, match="only a replacecommit"):
        third = start_commit(TableLocation.at(storage, base), config, "INSERT")
        complete_commit(TableLocation.at(storage, base), third, [], "INSERT", ctx.schema, {"2024/01": [c.file_id]},
                        layout=layout_at(TableLocation.at(storage, base)))
