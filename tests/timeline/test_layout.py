"""Timeline layout 2 (Hudi 1.x): instant file names with completion times, Avro commit metadata, and the
timeline of a real v8 table read through it."""
from __future__ import annotations

import shutil

import pytest

from hudi_engine.errors import TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.layout import LAYOUT_V1, TimelineLayoutV2, layout_for

V2 = TimelineLayoutV2()


@pytest.mark.parametrize("name,expected", [
    ("20251220210108078_20251220210109593.deltacommit",
     Instant("20251220210108078", Action.DELTA_COMMIT, State.COMPLETED, "20251220210109593")),
    ("20251220210108078.deltacommit.requested", Instant("20251220210108078", Action.DELTA_COMMIT, State.REQUESTED)),
    ("20260403183955124.inflight", Instant("20260403183955124", Action.COMMIT, State.INFLIGHT)),
    ("20260307162520620.clustering.requested", Instant("20260307162520620", Action.CLUSTERING, State.REQUESTED)),
    ("hoodie.properties", None),
    ("20251220210108078_20251220210109593.unknownaction", None),
])
def test_parse_layout2_names(name, expected):
    got = V2.parse_file_name(name)
    assert got == expected
    if got is not None:
        assert got.completion_time == expected.completion_time
        assert V2.file_name(got) == name


def test_completed_compaction_is_a_commit_file():
    with pytest.raises(TimelineError, match=r"a completed compaction is written as '20250101000000000_20250101000001000\.commit'"):
        V2.parse_file_name("20250101000000000_20250101000001000.compaction")
    c = Instant("20250101000000000", Action.COMPACTION, State.COMPLETED, "20250101000001000")
    assert V2.file_name(c) == "20250101000000000_20250101000001000.commit"


def test_completion_time_takes_no_part_in_equality():
    a = Instant("20250101000000000", Action.COMMIT, State.COMPLETED, "20250101000001000")
    assert a == Instant("20250101000000000", Action.COMMIT) and a in {Instant("20250101000000000", Action.COMMIT)}
    with pytest.raises(TimelineError, match="needs a completed instant"):
        Instant("20250101000000000", Action.COMMIT, State.INFLIGHT, "20250101000001000")


def test_real_v8_timeline(unzip_table):
    path = unzip_table("mor_avrolog_v8_trips_8i3u1d", "v8_v9")
    storage, base = Storage.for_uri(str(path))
    config = TableConfig.load(TableLocation.at(storage, base))
    layout = layout_for(config)
    assert layout == TimelineLayoutV2("timeline", "history", local_times=True) and layout_for(TableConfig.create("t", "COPY_ON_WRITE", ["id"])) is LAYOUT_V1
    timeline = Timeline.load(TableLocation.at(storage, base), layout)
    # 6 deltacommits, an indexing and a compaction (completed as a commit); requested/inflight files collapsed
    assert [(i.timestamp[-6:], i.action.value, i.completion_time[-6:]) for i in timeline] == [
        ("108078", "deltacommit", "109593"), ("117766", "indexing", "118628"), ("123755", "deltacommit", "124336"),
        ("125441", "deltacommit", "126002"), ("127080", "deltacommit", "127601"),
        ("128625", "deltacommit", "129197"), ("129235", "commit", "129883"), ("130911", "deltacommit", "131755")]
    assert timeline.completion_times()["20251220210129235"] == "20251220210129883"
    compaction = timeline.instants_at("20251220210129235")[0]
    meta = timeline.commit_metadata(compaction)  # Avro HoodieCommitMetadata
    assert meta.operation_type == "COMPACT" and meta.compacted
    assert sorted(s.partition_path for s in meta.write_stats()) == ["city=chennai", "city=san_francisco",
                                                                     "city=sao_paulo"]
    delta = timeline.commit_metadata(timeline.instants_at("20251220210130911")[0])
    (stat,) = delta.write_stats()
    assert stat.is_delta and stat.log_files == [".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316"]
    assert delta.schema["name"] == "v8_trips_8i3u1d_record"


def test_layout2_transitions_write_completion_times_and_avro(unzip_table, tmp_path):
    """Hudi 1.x's files (ActiveTimelineV2): `<ts>.deltacommit.requested` (empty), `.inflight` (Avro workload), then
    `<ts>_<completion>.deltacommit` (Avro HoodieCommitMetadata) with the completion time taken at completion."""
    path = tmp_path / "t"
    shutil.copytree(unzip_table("mor_avrolog_v8_trips_8i3u1d", "v8_v9"), path)
    location = TableLocation.of(str(path))
    timeline = Timeline.load(location)  # the layout found from storage
    assert timeline.layout.version == 2
    ts = "20300101000000000"
    requested = timeline.create_requested(Instant(ts, Action.DELTA_COMMIT, State.REQUESTED))
    inflight = timeline.transition_to_inflight(requested, timeline.commit_bytes(CommitMetadata(), requested))
    done = timeline.complete(inflight, CommitMetadata(extra_metadata={"k": "v"}, operation_type="UPSERT"))
    assert done.completion_time is not None and done.completion_time > ts
    folder = path / ".hoodie" / "timeline"
    assert (folder / f"{ts}.deltacommit.requested").read_bytes() == b""
    assert (folder / f"{ts}.deltacommit.inflight").read_bytes().startswith(b"Obj\x01")
    assert (folder / f"{ts}_{done.completion_time}.deltacommit").exists()
    reloaded = timeline.reload()
    assert reloaded.last() == done and reloaded.last().completion_time == done.completion_time
    assert reloaded.commit_metadata(reloaded.last()).extra_metadata == {"k": "v"}
    assert reloaded.latest_time() == done.completion_time
    assert reloaded.delete_instant_files(Instant(ts, Action.DELTA_COMMIT)) == [
        str(folder / f"{ts}_{done.completion_time}.deltacommit"), str(folder / f"{ts}.deltacommit.inflight"),
        str(folder / f"{ts}.deltacommit.requested")]
