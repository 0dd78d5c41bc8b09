"""Timeline archival of version-6 tables (timeline layout 1; layout 2's LSM history: test_archival_v9.py): `.hoodie`
stays bounded over many commits, archived instants are in Hudi's archived-timeline format, readers (ours and hudi-rs)
read what the model says, archival never passes a pending instant or a replacecommit whose replaced files are not
cleaned yet, and reads before the active timeline are refused clearly."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, rs_incremental, rs_snapshot
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.config import ArchivalConfig
from hudi_engine.errors import HudiError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_services.archival import instants_to_archive
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archive_files, archived_entries, newest_archived_commit, read_archive_file
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write.commit import start_commit

BASE = {"hoodie.table.name": "arch", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.cleaner.commits.retained": "3", "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "8",
        "hoodie.write.table.version": "6"}


def _batch(i: int) -> pa.Table:
    """Round i: updates key k{i%7} and k{(i+3)%7}, inserts n{i}; partitions x/y."""
    ids = [f"k{i % 7}", f"k{(i + 3) % 7}", f"n{i}"]
    return pa.table({"id": ids, "p": ["x" if int(k[1:]) % 2 else "y" for k in ids], "ts": pa.array([i] * 3, pa.int64()),
                     "v": pa.array([float(i)] * 3)})


def _meta_files(path: Path) -> list[str]:
    return [p.name for p in (path / ".hoodie").iterdir() if p.is_file()]


def _rows(path: Path) -> dict:
    ours = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot")
    return {r["id"]: r["v"] for r in ours.to_pylist()}


@pytest.mark.slow
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_many_commits_keep_hoodie_bounded_and_readers_read_the_model(tmp_path, table_type):
    path = tmp_path / "t"
    options = {**BASE, "hoodie.datasource.write.table.type": table_type, "hoodie.compact.inline": "true",
               "hoodie.compact.inline.max.delta.commits": "3"}
    model: dict[str, float] = {}
    counts = []
    for i in range(40):
        batch = _batch(i)
        write(path, batch, options, table_services=True)
        model.update(zip(batch.column("id").to_pylist(), batch.column("v").to_pylist()))
        counts.append(len(_meta_files(path)))
    # At most max commits (plus the commits a pending compaction or the retention rules keep) and max cleans, three
    # files each, and hoodie.properties: never the 40 x 6 files an unarchived timeline would hold by now.
    assert max(counts[20:]) <= 3 * (8 + 3) + 3 * 8 + 1, counts
    assert counts[-1] <= counts[19] + 6, counts  # flat, not growing
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert len(timeline.completed_commits()) <= 8 + 3
    entries = archived_entries(TableLocation.of(str(path)))
    archived = {(e["commitTime"], e["actionType"]) for e in entries}
    assert len(archived) >= 25 and not archived & {(i.timestamp, i.action.value) for i in timeline}
    assert _rows(path) == model


def test_archived_records_hold_each_state_file_in_hudis_form(tmp_path):
    path = tmp_path / "t"
    for i in range(12):
        write(path, _batch(i), {**BASE, "hoodie.archive.automatic": "false"}, table_services=True)
    storage, base = Storage.for_uri(str(path))
    before = Timeline.load(TableLocation.at(storage, base))
    files_before = {p.name: p.read_bytes() for p in (path / ".hoodie").iterdir() if p.is_file()}
    result = HudiTable.load(str(path)).archive(options=BASE)
    assert result is not None and Path(result.archive_file).name == ".commits_.archive.1_1-0-1"
    archived_times = {i.timestamp for i in result.archived}
    deleted = {Path(p).name for p in result.deleted_files}
    assert deleted == {n for n in files_before if n.split(".")[0] in archived_times}
    entries = read_archive_file(Path(result.archive_file).read_bytes())
    assert len(entries) == len(deleted)
    commits = [i for i in before.completed_commits() if i.timestamp in archived_times]
    assert len(commits) == 12 - 5  # down to hoodie.keep.min.commits
    for instant in commits:
        (done,) = [e for e in entries if e["commitTime"] == instant.timestamp and e["actionState"] == "COMPLETED"]
        original = json.loads(files_before[instant.file_name])
        meta = done["hoodieCommitMetadata"]
        assert done["actionType"] == "commit" and meta["operationType"] == original["operationType"]
        assert meta["extraMetadata"] == original["extraMetadata"]
        for partition, stats in original["partitionToWriteStats"].items():
            assert [s["path"] for s in meta["partitionToWriteStats"][partition]] == [s["path"] for s in stats]
            assert [s["numWrites"] for s in meta["partitionToWriteStats"][partition]] == [s["numWrites"] for s in stats]
        states = sorted(e["actionState"] for e in entries if e["commitTime"] == instant.timestamp)
        assert states == ["COMPLETED", "INFLIGHT", "REQUESTED"]
    cleans = [e for e in entries if e["actionType"] == "clean"]
    assert all(e["hoodieCleanMetadata"] if e["actionState"] == "COMPLETED" else e["hoodieCleanerPlan"] for e in cleans)
    # The blocks' header carries Hudi's HoodieArchivedMetaEntry schema (0.14/0.15 fields, Java's names).
    header_fields = [f["name"] for f in json.loads(_first_header(Path(result.archive_file)))["fields"]]
    assert header_fields == ["hoodieCommitMetadata", "hoodieCleanMetadata", "hoodieCompactionMetadata",
                             "hoodieRollbackMetadata", "hoodieSavePointMetadata", "commitTime", "actionType", "version",
                             "hoodieCompactionPlan", "hoodieCleanerPlan", "actionState", "hoodieReplaceCommitMetadata",
                             "hoodieRequestedReplaceMetadata", "HoodieInflightReplaceMetadata",
                             "hoodieIndexCommitMetadata", "stateTransitionTime"]
    # A second run has nothing to do; more commits later go into the next file version.
    assert HudiTable.load(str(path)).archive(options=BASE) is None
    for i in range(12, 16):
        write(path, _batch(i), {**BASE, "hoodie.archive.automatic": "false"}, table_services=True)
    assert Path(HudiTable.load(str(path)).archive(options=BASE).archive_file).name == ".commits_.archive.2_1-0-1"
    assert [v for v, _ in archive_files(TableLocation.at(storage, base))] == [1, 2]


def _first_header(path: Path) -> str:
    from hudi_engine.io.log_block import HeaderKey
    from hudi_engine.io.log_format import read_log_blocks

    return read_log_blocks(path.read_bytes(), file_name=str(path))[0].header[HeaderKey.SCHEMA]


def test_archival_stops_before_a_pending_write_and_keeps_the_commit_before_it(tmp_path):
    path = tmp_path / "t"
    never = {**BASE, "hoodie.cleaner.policy.failed.writes": "NEVER", "hoodie.archive.automatic": "false",
             "hoodie.metadata.compact.max.delta.commits": "1"}  # archival stops at the metadata table's compaction
    for i in range(4):
        write(path, _batch(i), never)
    storage, base = Storage.for_uri(str(path))
    table = HudiTable.load(str(path))
    pending = start_commit(TableLocation.at(storage, base), table.config, "UPSERT")
    for i in range(4, 16):
        write(path, _batch(i), never)
    result = HudiTable.load(str(path)).archive(options=never)
    commits_before = [i for i in table.timeline.completed_commits()]
    assert result is not None
    assert [i.timestamp for i in result.archived] == [c.timestamp for c in commits_before[:3]]  # not the 4th
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert timeline.completed_commits().first().timestamp == commits_before[3].timestamp
    assert any(i.timestamp == pending.timestamp and not i.is_completed for i in timeline)


def test_mor_keeps_the_delta_commits_a_compaction_will_count():
    def timeline(*specs: str) -> Timeline:
        instants = []
        for n, spec in enumerate(specs):
            action = {"d": Action.DELTA_COMMIT, "c": Action.COMMIT}[spec]
            instants.append(Instant(f"2025010100000{n:04d}", action, State.COMPLETED))
        return Timeline(TableLocation.at(None, "/t"), instants)  # type: ignore[arg-type]

    config = ArchivalConfig(True, 2, 4)
    # Seven delta commits, no compaction yet: the 5 the next compaction schedule counts stay.
    chosen = instants_to_archive(timeline(*"ddddddd"), config, merge_on_read=True, max_delta_commits=5)
    assert [i.timestamp[-4:] for i in chosen] == ["0000", "0001"]
    # A compaction (commit) then two delta commits: the compaction stays, so the count starts from it.
    chosen = instants_to_archive(timeline(*"dddddcdd"), config, merge_on_read=True, max_delta_commits=5)
    assert [i.timestamp[-4:] for i in chosen] == ["0000", "0001", "0002", "0003", "0004"]
    assert len(instants_to_archive(timeline(*"dddddcdd"), config, merge_on_read=False, max_delta_commits=5)) == 6


def test_a_replacecommit_stays_until_cleaning_removed_what_it_replaced(tmp_path):
    path = tmp_path / "t"
    options = {**BASE, "hoodie.archive.automatic": "false"}
    write(path, _batch(0), options, table_services=True)
    overwrite = write(path, _batch(1), {**options, "hoodie.datasource.write.operation": "insert_overwrite"},
                      table_services=True)
    storage, base = Storage.for_uri(str(path))
    for i in range(2, 14):
        write(path, _batch(i), options, table_services=True)
        timeline = Timeline.load(TableLocation.at(storage, base))
        chosen = instants_to_archive(timeline, ArchivalConfig(True, 5, 8), merge_on_read=False, max_delta_commits=5)
        last_clean = timeline.filter_by([Action.CLEAN], [State.COMPLETED]).last()
        plan = timeline.avro_metadata(last_clean.with_state(State.REQUESTED)) if last_clean else None
        retained_from = ((plan or {}).get("earliestInstantToRetain") or {}).get("timestamp") or ""
        if overwrite.instant_time in {c.timestamp for c in chosen}:
            assert retained_from > overwrite.instant_time  # its replaced file groups are cleaned by now
    result = HudiTable.load(str(path)).archive(options=options)
    assert overwrite.instant_time in {i.timestamp for i in result.archived}
    rows = _rows(path)  # no replaced file group resurfaces once the replacecommit is archived
    assert rows == {**{r["id"]: r["v"] for b in range(1, 14) for r in _batch(b).to_pylist()}}


def test_time_travel_before_the_active_timeline_is_refused_and_a_range_from_there_reads_every_later_write(tmp_path):
    path = tmp_path / "t"
    results = [write(path, _batch(i), BASE, table_services=True) for i in range(14)]
    table = HudiTable.load(str(path))
    first = table.timeline.completed_commits().first().timestamp
    newest_archived = newest_archived_commit(TableLocation.at(table.storage, table.base_path))
    assert newest_archived is not None and newest_archived < first
    old = results[1].instant_time
    with pytest.raises(HudiError, match=f"time travel instant {old} is before the active timeline, which starts at "
                                        f"{first}; the instants before it were archived to .*archived .*Read as of an "
                                        f"instant from {first} to {results[-1].instant_time}"):
        table.read_snapshot(as_of=old)
    with pytest.raises(HudiError, match=f"incremental end instant {results[2].instant_time} is before the active "
                                        "timeline"):
        table.read_incremental(old, results[2].instant_time)
    # A range that begins among the archived commits reads the rows every commit after its begin wrote, as Hudi
    # 1.x does (apache/hudi#12613): their metadata is archived, so every slice that can hold such rows is read.
    snapshot = table.read_snapshot()
    for begin in (old, "000"):
        since = snapshot.filter(pc.greater(snapshot["_hoodie_commit_time"], begin))
        assert 0 < since.num_rows <= snapshot.num_rows
        assert_same_rows(table.read_incremental(begin), since, f"incremental from the archived {begin}")
    # From the newest archived commit on, nothing is missed: the rows of the active commits, as hudi-rs reads them.
    ours = table.read_incremental(newest_archived)
    theirs = rs_incremental(path, newest_archived, results[-1].instant_time)
    assert_same_rows(ours, theirs, "incremental from the newest archived commit")
    assert table.read_snapshot(as_of=results[-1].instant_time).num_rows == table.read_snapshot().num_rows


def test_a_table_service_checks_the_handle_once_and_the_table_read_under_the_lock(tmp_path, monkeypatch):
    """HudiTable's services check the handle's config and timeline before the lock (the service's message); the lock
    does not check them again, and the config and timeline read again under it are checked once."""
    import hudi_engine.table_features as features
    import hudi_engine.write.lock as lock_module

    path = tmp_path / "t"
    for i in range(3):
        write(path, _batch(i), {**BASE, "hoodie.archive.automatic": "false"}, table_services=True)
    table = HudiTable.load(str(path))
    checked: list[str] = []
    real = features.check_writable
    monkeypatch.setattr(features, "check_writable", lambda *a, action, **kw: checked.append(action) or real(*a, action=action, **kw))
    monkeypatch.setattr(lock_module, "check_writable", features.check_writable)
    assert table.archive(options=BASE) is None
    assert table.clean(options=BASE) is None
    assert checked == ["archive", "write to it or run a table service on it",
                       "clean", "write to it or run a table service on it"]
