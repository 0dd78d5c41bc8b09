from __future__ import annotations

import re
from pathlib import Path

import pytest
from conformance import V6_TABLES

from hudi_engine.errors import TableNotFoundError, TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import Timeline, collapse_layout1

# The README's history of each table: number of write commits, and whether an insert_overwrite_table followed.
HISTORY = {
    "cow_v6_empty": 0, "mor_parquetlog_v6_empty": 0,
    "cow_v6_simplekeygen_hivestyle_no_metafields": 1, "mor_parquetlog_v6_simplekeygen_hivestyle_no_metafields": 1,
}


def _load(base: Path) -> Timeline:
    storage, path = Storage.for_uri(str(base))
    return Timeline.load(TableLocation.at(storage, path))


def test_all_v6_tables_are_listed(conformance_dir: Path) -> None:
    assert sorted(p.stem for p in (conformance_dir / "v6").glob("*.zip")) == V6_TABLES


@pytest.mark.parametrize("name", V6_TABLES)
def test_load_real_v6_timeline(name: str, unzip_table) -> None:
    base = unzip_table(name)
    timeline = _load(base)
    files = sorted(p.name for p in (base / ".hoodie").iterdir() if p.is_file())
    write_action = Action.COMMIT if name.startswith("cow") else Action.DELTA_COMMIT
    writes = HISTORY.get(name, 2)
    expected = sorted(
        Instant(m.group(1), m.group(2))
        for f in files
        if (m := re.fullmatch(r"(\d{17})\.(commit|deltacommit|replacecommit)", f))
    )
    # Every instant completed: requested and inflight files collapse into their completed instant.
    assert list(timeline) == expected and all(i.is_completed for i in timeline)
    assert [i.action for i in timeline] == [write_action] * writes + (
        [Action.REPLACE_COMMIT] if name.endswith("overwritetable") else []
    )
    assert list(timeline.completed()) == list(timeline.commits_timeline()) == list(timeline.completed_commits())
    assert timeline.timestamps() == sorted(timeline.timestamps()) and len(set(timeline.timestamps())) == len(timeline)
    assert not timeline.pending()
    assert timeline.last_completed() == timeline.last()

    commits = timeline.commits_timeline()
    if not timeline:
        assert timeline.latest_schema() is None and commits.timeline_start() is None
        assert not commits.contains_or_before_timeline_starts("20240101000000000")
        return
    first = timeline.first().timestamp
    assert commits.timeline_start() == first
    assert commits.contains_or_before_timeline_starts(first)
    assert commits.contains_or_before_timeline_starts("20000101000000000")  # archived: before the start
    assert not commits.contains_or_before_timeline_starts(str(int(timeline.last().timestamp) + 1))
    assert not commits.contains_or_before_timeline_starts(str(int(first) + 1))  # a hole inside the timeline
    assert timeline.latest_schema()["name"].endswith("_record")

    for instant in timeline:
        meta = timeline.commit_metadata(instant)
        assert meta.write_stats() and meta.schema is not None
        assert meta.is_replace == (instant.action is Action.REPLACE_COMMIT)
        requested = instant.with_state(State.REQUESTED)
        if instant.action is Action.REPLACE_COMMIT:
            assert timeline.avro_metadata(requested)["operationType"] is None
            assert meta.replaced_file_ids() and meta.operation_type == "INSERT_OVERWRITE_TABLE"
        else:
            assert timeline.read_content(requested) == b""  # commit/deltacommit requested files are empty
        inflight = timeline.commit_metadata(instant.with_state(State.INFLIGHT))
        assert inflight.write_stats() and inflight.extra_metadata == {}
    assert [i.action for i in timeline.completed_replace_commits()] == (
        [Action.REPLACE_COMMIT] if name.endswith("overwritetable") else []
    )


def test_cow_inflight_file_is_read_through_the_legacy_name(unzip_table) -> None:
    timeline = _load(unzip_table("cow_v6_nonpartitioned"))
    inflight = Instant("20240418173550988", Action.COMMIT, State.INFLIGHT)
    assert timeline.path_of(inflight).endswith("/.hoodie/20240418173550988.inflight")
    assert timeline.commit_metadata(inflight).operation_type == "UPSERT"


# --- a synthetic timeline -------------------------------------------------------------------------------


@pytest.fixture
def table(tmp_path: Path) -> tuple[Storage, str]:
    (tmp_path / ".hoodie").mkdir()
    return Storage.for_uri(str(tmp_path))


def _touch(base: str, *names: str, content: bytes = b"") -> None:
    for n in names:
        Path(base, ".hoodie", n).write_bytes(content)


def test_layout1_collapse_and_views(table) -> None:
    storage, base = table
    _touch(base, "hoodie.properties", "20240101000000001.commit.4242.tmp")
    _touch(base, "20240101000000001.commit.requested", "20240101000000001.inflight", "20240101000000001.commit")
    _touch(base, "20240101000000002.compaction.requested", "20240101000000002.compaction.inflight",
           "20240101000000002.commit")
    _touch(base, "20240101000000003.compaction.requested", "20240101000000003.compaction.inflight")
    _touch(base, "20240101000000004.deltacommit.requested")
    _touch(base, "20240101000000005.clean.requested", "20240101000000005.clean.inflight", "20240101000000005.clean")
    _touch(base, "20240101000000006.savepoint.inflight")
    _touch(base, "20240101000000007.logcompaction.requested", "20240101000000007.logcompaction.inflight",
           "20240101000000007.deltacommit")
    _touch(base, "20240101000000008.replacecommit.requested")
    # Subfolders are not the active timeline.
    for folder in ("archived", "metadata/.hoodie", ".aux"):
        Path(base, ".hoodie", folder).mkdir(parents=True)
        Path(base, ".hoodie", folder, "20230101000000000.commit").write_bytes(b"")

    timeline = Timeline.load(TableLocation.at(storage, base))
    assert [str(i) for i in timeline] == [
        "[20240101000000001__commit__COMPLETED]",
        "[20240101000000002__commit__COMPLETED]",
        "[20240101000000003__compaction__INFLIGHT]",
        "[20240101000000004__deltacommit__REQUESTED]",
        "[20240101000000005__clean__COMPLETED]",
        "[20240101000000006__savepoint__INFLIGHT]",
        "[20240101000000007__deltacommit__COMPLETED]",
        "[20240101000000008__replacecommit__REQUESTED]",
    ]
    assert timeline.commits_timeline().timestamps() == [
        "20240101000000001", "20240101000000002", "20240101000000003", "20240101000000007"
    ]
    assert timeline.pending().timestamps() == [
        "20240101000000003", "20240101000000004", "20240101000000006", "20240101000000008"
    ]
    assert timeline.pending_compactions().timestamps() == ["20240101000000003"]
    assert timeline.write_timeline().timestamps() == [
        "20240101000000001", "20240101000000002", "20240101000000003", "20240101000000004", "20240101000000007",
        "20240101000000008",
    ]
    assert timeline.filter_by(actions=["clean"]).timestamps() == ["20240101000000005"]
    with pytest.raises(TimelineError, match="'merge' is not a valid Action"):
        timeline.filter_by(actions=["merge"])
    assert timeline.filter_by(states=[State.REQUESTED]).timestamps() == ["20240101000000004", "20240101000000008"]
    assert timeline.last_completed() == Instant("20240101000000007", Action.DELTA_COMMIT)
    assert timeline.completed_commits().last() == Instant("20240101000000007", Action.DELTA_COMMIT)
    assert timeline[0] == timeline.first() and len(timeline[1:3]) == 2 and len(timeline) == 8
    assert Instant("20240101000000005", Action.CLEAN) in timeline
    assert timeline.instants_at("20240101000000002") == [Instant("20240101000000002", Action.COMMIT)]
    # Empty requested replace files are accepted (no plan).
    assert timeline.avro_metadata(Instant("20240101000000008", Action.REPLACE_COMMIT, State.REQUESTED)) is None
    with pytest.raises(TimelineError, match="holds no commit metadata JSON"):
        timeline.commit_metadata(Instant("20240101000000005", Action.CLEAN))
    with pytest.raises(TimelineError, match="is not an Avro timeline file"):
        timeline.avro_metadata(Instant("20240101000000001", Action.COMMIT))
    with pytest.raises(TimelineError, match="20240101000000009.commit: instant file .* not found"):
        timeline.read_content(Instant("20240101000000009", Action.COMMIT))


def test_collapse_prefers_the_highest_state() -> None:
    ts = "20240101000000000"
    collapsed = collapse_layout1([
        Instant(ts, Action.COMMIT, State.COMPLETED),
        Instant(ts, Action.COMPACTION, State.INFLIGHT),
        Instant(ts, Action.COMPACTION, State.REQUESTED),
        Instant(ts, Action.CLEAN, State.REQUESTED),
    ])
    assert collapsed == [Instant(ts, Action.CLEAN, State.REQUESTED), Instant(ts, Action.COMMIT)]


def test_savepointed_instants_do_not_start_the_timeline(table) -> None:
    storage, base = table
    # Archival kept the savepointed commit 1 and removed 2..4; the active timeline starts at 5.
    _touch(base, "20240101000000001.commit", "20240101000000001.savepoint", "20240101000000005.commit")
    commits = Timeline.load(TableLocation.at(storage, base)).commits_timeline()
    assert commits.timestamps() == ["20240101000000001", "20240101000000005"]
    assert commits.timeline_start() == "20240101000000005"
    assert commits.contains_or_before_timeline_starts("20240101000000003")  # archived: visible
    assert commits.contains_or_before_timeline_starts("20240101000000001")
    assert commits.contains_or_before_start("20240101000000002")
    assert not commits.contains_or_before_timeline_starts("20240101000000006")


def test_load_without_meta_folder(tmp_path: Path) -> None:
    storage, base = Storage.for_uri(str(tmp_path / "nothing"))
    with pytest.raises(TableNotFoundError, match="nothing: no .hoodie folder"):
        Timeline.load(TableLocation.at(storage, base))


def test_a_layout_1_load_checks_the_folder_once(table, monkeypatch) -> None:
    from hudi_engine.timeline.layout import LAYOUT_V1

    storage, base = table
    _touch(base, "20240101000000001.commit")
    checked: list[str] = []
    original = type(storage).exists
    monkeypatch.setattr(type(storage), "exists", lambda self, p: checked.append(p) or original(self, p))
    timeline = Timeline.load(TableLocation.at(storage, base), LAYOUT_V1)
    assert [i.timestamp for i in timeline.instants] == ["20240101000000001"] and len(checked) == 1


def test_malformed_instant_file_fails_the_load(table) -> None:
    storage, base = table
    _touch(base, "20240101000000001.commit.inflight")
    with pytest.raises(TimelineError, match=r"\.hoodie: timeline file '20240101000000001\.commit\.inflight'"):
        Timeline.load(TableLocation.at(storage, base))


# --- transitions ----------------------------------------------------------------------------------------


def test_cow_commit_transitions(table) -> None:
    storage, base = table
    timeline = Timeline.load(TableLocation.at(storage, base))
    ts = "20240101000000000"
    requested = timeline.create_requested(Instant(ts, Action.COMMIT, State.REQUESTED))
    profile = CommitMetadata(operation_type="UPSERT")
    profile.add_write_stat("p", WriteStat(file_id="", prev_commit="null", num_inserts=3))
    inflight = timeline.transition_to_inflight(requested, profile.to_json())
    assert inflight == Instant(ts, Action.COMMIT, State.INFLIGHT)
    assert sorted(p.name for p in Path(base, ".hoodie").iterdir()) == [f"{ts}.commit.requested", f"{ts}.inflight"]
    assert list(timeline.reload()) == [inflight]

    done = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": '{"type":"record","name":"t_record"}'})
    done.add_write_stat("p", WriteStat(file_id="f-0", path="p/f-0_0-1-2_20240101000000000.parquet", num_writes=3))
    completed = timeline.complete(inflight, done.to_json())
    assert completed == Instant(ts, Action.COMMIT, State.COMPLETED)
    assert Path(base, ".hoodie", f"{ts}.commit").read_bytes() == done.to_json()
    assert Path(base, ".hoodie", f"{ts}.commit.requested").read_bytes() == b""
    reloaded = timeline.reload()
    assert list(reloaded) == [completed]
    assert reloaded.commit_metadata(completed).to_json() == done.to_json()
    assert reloaded.commit_metadata(inflight).write_stats()[0].num_inserts == 3
    assert reloaded.latest_schema() == {"type": "record", "name": "t_record"}

    with pytest.raises(TimelineError, match=f"{ts}.commit: instant file already exists"):
        timeline.complete(inflight, b"{}")
    with pytest.raises(TimelineError, match="already exists"):
        timeline.create_requested(requested)
    assert Path(base, ".hoodie", f"{ts}.commit").read_bytes() == done.to_json()  # untouched


def test_transitions_check_the_previous_state_file(table) -> None:
    storage, base = table
    timeline = Timeline.load(TableLocation.at(storage, base))
    ts = "20240101000000000"
    with pytest.raises(TimelineError, match=f"{ts}.deltacommit.requested: missing"):
        timeline.transition_to_inflight(Instant(ts, Action.DELTA_COMMIT, State.REQUESTED))
    with pytest.raises(TimelineError, match=f"{ts}.deltacommit.inflight: missing"):
        timeline.complete(Instant(ts, Action.DELTA_COMMIT, State.INFLIGHT))
    with pytest.raises(TimelineError, match=f"{ts}.inflight: missing"):
        timeline.complete(Instant(ts, Action.COMMIT, State.INFLIGHT))
    with pytest.raises(TimelineError, match="expected a REQUESTED instant"):
        timeline.create_requested(Instant(ts, Action.COMMIT, State.INFLIGHT))
    with pytest.raises(TimelineError, match="expected a INFLIGHT instant"):
        timeline.complete(Instant(ts, Action.COMMIT, State.REQUESTED))
    assert list(Path(base, ".hoodie").iterdir()) == []


def test_compaction_completes_as_a_commit(table) -> None:
    storage, base = table
    timeline = Timeline.load(TableLocation.at(storage, base))
    ts = "20240101000000009"
    plan = {"operations": [{"baseInstantTime": "20240101000000000",
                            "deltaFilePaths": [".f-0_20240101000000000.log.1_0-1-2"],
                            "dataFilePath": "f-0_0-1-2_20240101000000000.parquet", "fileId": "f-0", "partitionPath": "",
                            "metrics": None, "bootstrapFilePath": None}],
            "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": False}
    requested = timeline.create_requested(Instant(ts, Action.COMPACTION, State.REQUESTED),
                                          write_avro_metadata("HoodieCompactionPlan", plan))
    inflight = timeline.transition_to_inflight(requested)
    pending = timeline.reload()
    assert list(pending) == [inflight] and list(pending.commits_timeline()) == [inflight]
    assert pending.avro_metadata(requested) == plan
    assert read_avro_metadata(pending.read_content(requested), "HoodieCompactionPlan") == plan
    assert pending.commit_metadata(inflight) == CommitMetadata()  # the inflight file is empty

    result = CommitMetadata(compacted=True, operation_type="COMPACT")
    completed = timeline.complete(inflight, result.to_json())
    assert completed == Instant(ts, Action.COMMIT, State.COMPLETED)
    assert sorted(p.name for p in Path(base, ".hoodie").iterdir()) == [
        f"{ts}.commit", f"{ts}.compaction.inflight", f"{ts}.compaction.requested"
    ]
    done = timeline.reload()
    assert list(done) == [completed] and not done.pending_compactions()
    assert done.commit_metadata(completed).compacted


def test_savepoint_starts_inflight_and_rollback_records(table) -> None:
    storage, base = table
    timeline = Timeline.load(TableLocation.at(storage, base))
    sp = timeline.create_inflight(Instant("20240101000000001", Action.SAVEPOINT, State.INFLIGHT))
    with pytest.raises(TimelineError, match="a commit starts as requested"):
        timeline.create_inflight(Instant("20240101000000001", Action.COMMIT, State.INFLIGHT))
    meta = {"savepointedBy": "me", "savepointedAt": 1, "comments": "", "partitionMetadata": {}, "version": 1}
    done = timeline.complete(sp, write_avro_metadata("HoodieSavepointMetadata", meta))
    assert timeline.reload().avro_metadata(done) == meta

    rb = Instant("20240101000000002", Action.ROLLBACK, State.REQUESTED)
    plan = {"instantToRollback": {"commitTime": "20240101000000000", "action": "commit"},
            "RollbackRequests": [], "version": 1}
    timeline.create_requested(rb, write_avro_metadata("HoodieRollbackPlan", plan))
    completed = timeline.complete(timeline.transition_to_inflight(rb), write_avro_metadata(
        "HoodieRollbackMetadata",
        {"startRollbackTime": rb.timestamp, "timeTakenInMillis": 1, "totalFilesDeleted": 0,
         "commitsRollback": ["20240101000000000"], "partitionMetadata": {}, "version": 1,
         "instantsRollback": [{"commitTime": "20240101000000000", "action": "commit"}]},
    ))
    reloaded = timeline.reload()
    assert reloaded.avro_metadata(rb) == plan
    assert reloaded.avro_metadata(completed)["commitsRollback"] == ["20240101000000000"]
    assert reloaded.read_content(completed.with_state(State.INFLIGHT)) == b""


def test_delete_instant_files_after_a_rollback(table) -> None:
    storage, base = table
    timeline = Timeline.load(TableLocation.at(storage, base))
    failed = timeline.transition_to_inflight(
        timeline.create_requested(Instant("20240101000000000", Action.DELTA_COMMIT, State.REQUESTED)), b"{}"
    )
    kept = timeline.create_requested(Instant("20240101000000001", Action.COMMIT, State.REQUESTED))
    deleted = timeline.delete_instant_files(failed)
    assert [Path(p).name for p in deleted] == ["20240101000000000.deltacommit.inflight",
                                               "20240101000000000.deltacommit.requested"]
    assert list(timeline.reload()) == [kept]
    assert timeline.delete_instant_files(failed) == []

    # A completed instant loses its completed file first; asking for some states deletes only those.
    inflight = timeline.transition_to_inflight(kept)
    timeline.complete(inflight, b"")
    deleted = timeline.delete_instant_files(kept, states=[State.COMPLETED])
    assert [Path(p).name for p in deleted] == ["20240101000000001.commit"]
    assert list(timeline.reload()) == [inflight]
