"""Archival of a table version 9 (timeline layout 2) into the LSM timeline history, over 200 commits: the active
timeline stays bounded, the history holds every archived instant with its completion time, its layers are
compacted as Hudi compacts them, hudi-rs still reads the table as this engine does, and reads before the active
timeline are refused.

Until this engine writes version-9 tables, the commits come from `V9Timeline`, which leaves the files a Hudi 1.x
writer leaves for a commit that changed nothing (requested, inflight, then `<requested>_<completed>.commit` holding
Avro commit metadata with the table's schema and no write stats), and for a clean (the engine's own clean plan, so
the replaced file groups really go). The table is a copy of a real Hudi 1.1 table with two replacecommits
(an insert_overwrite and a clustering), which archival may only pass once a clean removed what they replaced.
"""
from __future__ import annotations

import io
import shutil
from datetime import timedelta
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, rs_incremental, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config import ArchivalConfig
from hudi_engine.config.write_config import CleanConfig
from hudi_engine.errors import HudiError
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.archival import ArchivalResult, archive
from hudi_engine.table_services.clean import METADATA_KIND, CleanPlan, earliest_commit_to_retain, plan_clean
from hudi_engine.timeline import Timeline, datetime_to_instant, instant_to_datetime, write_avro_metadata
from hudi_engine.timeline.avro_models import embedded_schema, read_avro_metadata
from hudi_engine.timeline.history import TimelineHistory, lsm_file_name, parse_lsm_file_name
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State
from hudi_engine.timeline.layout import layout_for

TABLE = "cow_v9_txns_simple_nometa"  # no metadata table, 9 commits, an insert_overwrite and a clustering
KEY = "_hoodie_record_key"
CONFIG = ArchivalConfig(True, 5, 8, 10)
CLEAN = CleanConfig(commits_retained=3)


class V9Timeline:
    """Instants as a Hudi 1.x writer leaves them in `.hoodie/timeline/`; clocks move 200 ms per step."""

    def __init__(self, path: Path) -> None:
        self.location = TableLocation.of(str(path))
        self.folder = path / ".hoodie" / "timeline"
        timeline = self.timeline()
        last = timeline.completed_commits().last()
        data = timeline.read_content(last)
        self.schema = fastavro.parse_schema(embedded_schema(data, file_name=last.timestamp))
        record = next(iter(fastavro.reader(io.BytesIO(data))))
        self.extra = {"schema": record["extraMetadata"]["schema"]}  # what every Hudi commit records
        self.clock = instant_to_datetime(max(i.completion_time or i.timestamp for i in timeline))

    def timeline(self) -> Timeline:
        return Timeline.load(self.location, layout_for(TableConfig.load(self.location)))

    def _tick(self) -> str:
        self.clock += timedelta(milliseconds=200)
        return datetime_to_instant(self.clock)

    def _metadata(self, operation: str) -> bytes:
        out = io.BytesIO()
        fastavro.writer(out, self.schema, [{"partitionToWriteStats": {}, "extraMetadata": self.extra,
                                            "version": 1, "operationType": operation}])
        return out.getvalue()

    def commit(self, action: Action = Action.COMMIT) -> Instant:
        """A commit (or deltacommit) that wrote nothing."""
        requested = self._tick()
        (self.folder / f"{requested}.{action.value}.requested").write_bytes(b"")
        inflight = f"{requested}.inflight" if action is Action.COMMIT else f"{requested}.{action.value}.inflight"
        (self.folder / inflight).write_bytes(self._metadata("UPSERT"))
        completed = self._tick()
        (self.folder / f"{requested}_{completed}.{action.value}").write_bytes(self._metadata("UPSERT"))
        return Instant(requested, action, State.COMPLETED, completed)

    def clean(self) -> Instant | None:
        """A KEEP_LATEST_COMMITS clean planned by the engine (an empty one when nothing is due, as Hudi 1.x writes
        once the earliest commit to retain moved), its files deleted."""
        timeline = self.timeline()
        earliest = earliest_commit_to_retain(timeline, CLEAN.commits_retained)
        if earliest is None:
            return None
        plan = plan_clean(self.location, CLEAN, timeline) or CleanPlan(
            CLEAN.policy, earliest, timeline.completed_commits().last().timestamp, {})
        requested = self._tick()
        (self.folder / f"{requested}.clean.requested").write_bytes(plan.to_bytes())
        (self.folder / f"{requested}.clean.inflight").write_bytes(plan.to_bytes())
        for paths in plan.files.values():
            for p in paths:
                Path(p).unlink()
        metadata = write_avro_metadata(METADATA_KIND, {
            "startCleanTime": requested, "timeTakenInMillis": 1, "totalFilesDeleted": plan.total_files,
            "earliestCommitToRetain": earliest.timestamp, "lastCompletedCommitTimestamp": plan.last_completed_commit,
            "partitionMetadata": {p: {"partitionPath": p, "policy": plan.policy,
                                      "deletePathPatterns": [x.rsplit("/", 1)[-1] for x in paths],
                                      "successDeleteFiles": [x.rsplit("/", 1)[-1] for x in paths],
                                      "failedDeleteFiles": [], "isPartitionDeleted": False}
                                  for p, paths in plan.files.items()},
            "version": 2, "bootstrapPartitionMetadata": {}})
        completed = self._tick()
        (self.folder / f"{requested}_{completed}.clean").write_bytes(metadata)
        return Instant(requested, Action.CLEAN, State.COMPLETED, completed)


def _copy(unzip_table, tmp_path: Path) -> Path:
    path = tmp_path / "t"
    shutil.copytree(unzip_table(TABLE, "v8_v9"), path)
    return path


def archive_now(writer: V9Timeline, max_delta_commits: int = 5) -> ArchivalResult | None:
    """`archive` of the table as it is now (its config and timeline loaded here)."""
    return archive(writer.location, CONFIG, max_delta_commits=max_delta_commits,
                   table=TableConfig.load(writer.location), timeline=writer.timeline())


def _model_manifest(l0_files: list[str], batch: int) -> list[str]:
    """The manifest Hudi's LSMTimelineWriter leaves after these layer-0 files, each followed by compactAndClean."""
    files: list[str] = []
    for name in l0_files:
        files.append(name)
        layer = 0
        while len(of_layer := sorted(f for f in files if parse_lsm_file_name(f)[2] == layer)) >= batch:
            parts = [parse_lsm_file_name(f) for f in of_layer[:batch]]
            files = [f for f in files if f not in of_layer[:batch]] + [
                lsm_file_name(min(p[0] for p in parts), max(p[1] for p in parts), layer + 1)]
            layer += 1
    return files


@pytest.mark.slow
def test_200_commits_keep_the_timeline_bounded_and_the_history_complete(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    rows_before = HudiTable.load(str(path)).read_snapshot()
    writer = V9Timeline(path)
    original = list(writer.timeline())
    created: list[Instant] = []
    runs = []
    counts = []
    for n in range(200):
        created.append(writer.commit())
        if n % 5 == 4 and (clean := writer.clean()) is not None:
            created.append(clean)
        result = archive_now(writer)  # what the write pipeline runs after each commit
        if result is not None:
            runs.append(result)
        counts.append(len([p for p in writer.folder.iterdir() if p.is_file()]))

    timeline = writer.timeline()
    # Bounded: at most max commits and the cleans since the newest archived commit, 3 files a piece; never the
    # 600+ files 200 commits leave unarchived, and no growth (a saw tooth between min and max commits).
    assert len(timeline.completed_commits()) <= CONFIG.max_commits
    assert max(counts[20:]) <= 3 * CONFIG.max_commits + 3 * 3, counts
    assert max(counts[100:]) <= max(counts[20:100]) and min(counts[100:]) >= 3 * CONFIG.min_commits, counts
    # Every instant is in exactly one place, the history holding each archived one with its completion time.
    history = TimelineHistory.of(writer.location)
    archived = history.instants()
    everything = {(i.timestamp, i.comparable_action): i.completion_time for i in original + created}
    active = {(i.timestamp, i.comparable_action) for i in timeline}
    assert not active & {(i.timestamp, i.action) for i in archived}
    assert {(i.timestamp, i.action): i.completion_time for i in archived} == {
        k: v for k, v in everything.items() if k not in active}
    assert len(archived) > 180 and {i.action for i in archived} == {
        Action.COMMIT, Action.REPLACE_COMMIT, Action.CLEAN}
    assert sorted(i for r in runs for i in r.archived) == archived
    # A record holds the completed file's bytes and the plan: the clustering's plan, each clean's plan.
    records = {(r.instant_time, r.action): r for r in history.records()}
    clustering = next(i for i in original if i.timestamp == "20260307135709297")  # requested as clustering
    assert records[(clustering.timestamp, "replacecommit")].plan is not None
    first_clean = next(i for i in created if i.action is Action.CLEAN)
    plan = read_avro_metadata(records[(first_clean.timestamp, "clean")].plan, "HoodieCleanerPlan")
    assert plan["policy"] == "KEEP_LATEST_COMMITS" and plan["filePathsToBeDeletedPerPartition"]
    assert all(r.metadata for r in records.values())
    # The layers are what Hudi's compaction leaves after these runs (one layer-0 file each, batch 10).
    l0 = [Path(r.archive_file).name for r in runs]
    assert history.file_names() == _model_manifest(l0, CONFIG.timeline_compaction_batch_size)
    assert len(runs) >= 40 and {parse_lsm_file_name(n)[2] for n in history.file_names()} >= {1}
    assert sum(len(r.compacted) for r in runs) >= 4
    # hudi-rs reads the table as this engine does: the rows the table held (its commits changed nothing).
    table = HudiTable.load(str(path))
    ours = table.read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "snapshot after archival")
    assert sorted(ours.column(KEY).to_pylist()) == sorted(rows_before.column(KEY).to_pylist())


def test_a_merge_on_read_table_keeps_the_delta_commits_a_compaction_counts(unzip_table, tmp_path):
    # A real Hudi 1.1 MOR table: 8 inserts in base files, 4 updates in a log file named by its delta commit. Once
    # both delta commits are archived, the log file's commit is older than the active timeline: committed.
    path = tmp_path / "t"
    shutil.copytree(unzip_table("mor_avrolog_v9_mor_8i4u_commit_time", "v8_v9"), path)
    assert list(path.rglob(".*.log.*"))
    rows_before = HudiTable.load(str(path)).read_snapshot()
    writer = V9Timeline(path)
    original = list(writer.timeline())
    active = []
    for _ in range(60):
        writer.commit(Action.DELTA_COMMIT)
        archive_now(writer, max_delta_commits=7)
        active.append(len(writer.timeline().completed_commits()))
    # No compaction ran: the 7 delta commits the next one would count stay, above hoodie.keep.min.commits (5).
    assert min(active[10:]) == 7 and max(active) == CONFIG.max_commits, active
    archived = {i.timestamp for i in TimelineHistory.of(writer.location).instants()}
    assert {i.timestamp for i in original} <= archived and len(archived) + active[-1] == 62
    table = HudiTable.load(str(path))
    ours = table.read_snapshot()
    assert_same_rows(ours, rs_snapshot(path), "MOR snapshot after archival")
    assert_same_rows(ours, rows_before, "MOR rows before archival")


def test_time_travel_before_the_active_timeline_is_refused_and_a_range_from_there_reads_the_history(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    writer = V9Timeline(path)
    original = list(writer.timeline().completed_commits())
    for n in range(30):
        writer.commit()
        if n % 5 == 4:
            writer.clean()
        archive_now(writer)
    table = HudiTable.load(str(path))
    commits = table.timeline.completed_commits()
    first, last = commits.first(), commits.last()
    archived = [i for i in TimelineHistory.of(writer.location).instants() if i.action in COMMIT_ACTIONS]
    newest_completed = max(i.completion_time for i in archived)
    old = original[2].timestamp
    assert old in {i.timestamp for i in archived}
    with pytest.raises(HudiError, match=f"time travel instant {old} is before the active timeline, which starts at "
                                        f"{first.timestamp}; the instants before it were archived to the timeline "
                                        f"history .*timeline/history .*Read as of an instant from {first.timestamp} "
                                        f"to {last.timestamp}"):
        table.read_snapshot(as_of=old)
    # A range that begins among the archived completion times reads what every commit completed after its begin
    # wrote, the archived ones too (their requested times from the LSM history), as Hudi 1.x does.
    later = {i.timestamp for i in [*archived, *commits] if (i.completion_time or i.timestamp) > old}
    assert later - {c.timestamp for c in commits}, "the range holds archived commits"
    snapshot = table.read_snapshot()
    since = snapshot.filter(pc.is_in(snapshot["_hoodie_commit_time"], pa.array(sorted(later))))
    assert_same_rows(table.read_incremental(old), since, "incremental from an archived completion time")
    with pytest.raises(HudiError, match=f"incremental begin instant {old} is a completion time before the newest one "
                                        f"of the commits archived .*, {newest_completed}, so .* Begin at "
                                        f"{newest_completed} or later"):
        table.check_range(old, None)  # as a CDC read checks it: it needs the metadata of every commit it reads
    # From the newest archived completion on nothing is missed; the active commits are readable as of any of them.
    ours = table.read_incremental(newest_completed)
    assert_same_rows(ours, rs_incremental(path, newest_completed, last.completion_time), "incremental")
    # Time travel: from what the last clean retains on (before it refused, as Hudi refuses it).
    clean = read_avro_metadata(table.timeline.read_content(table.timeline.filter_by(["clean"]).completed().last()))
    retained = clean["earliestCommitToRetain"]
    assert first.timestamp <= retained
    assert_same_rows(table.read_snapshot(as_of=retained), rs_snapshot(path, as_of=retained),
                     "as of the earliest commit the last clean retains")


def test_a_crash_between_the_history_and_the_deletes_leaves_a_readable_table(unzip_table, tmp_path, monkeypatch):
    path = _copy(unzip_table, tmp_path)
    writer = V9Timeline(path)
    for _ in range(12):
        writer.commit()
    writer.clean()
    before = list(writer.timeline())
    from hudi_engine.storage import Storage

    real_delete = Storage.delete
    calls = []

    def crash_after_two(self, p):
        if "/timeline/" in p and "/history/" not in p:
            calls.append(p)
            if len(calls) > 2:
                raise OSError("killed")
        return real_delete(self, p)

    monkeypatch.setattr(Storage, "delete", crash_after_two)
    with pytest.raises(OSError, match="killed"):
        archive_now(writer)
    monkeypatch.setattr(Storage, "delete", real_delete)
    # The history holds the run's instants; the active timeline lost two pending files only: every instant is
    # still completed there, and both readers read the table.
    history = TimelineHistory.of(writer.location)
    assert history.instants() and list(writer.timeline()) == before
    assert all(not p.endswith((".commit", ".clean", ".replacecommit")) for p in calls[:2])
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "after the crash")
    # The next run archives them again; the history reads each once.
    result = archive_now(writer)
    assert result is not None
    instants = history.instants()
    assert len(instants) == len({(i.timestamp, i.action) for i in instants})
    assert not {(i.timestamp, i.comparable_action) for i in writer.timeline()} & {
        (i.timestamp, i.action) for i in instants}


def _timeline(layout_version: int, *specs: str) -> Timeline:
    """c: completed commit, k: completed clean, r: completed rollback, p: pending clustering (requested)."""
    from hudi_engine.timeline.layout import LAYOUT_V1, TimelineLayoutV2

    kinds = {"c": (Action.COMMIT, State.COMPLETED), "k": (Action.CLEAN, State.COMPLETED),
             "r": (Action.ROLLBACK, State.COMPLETED), "p": (Action.CLUSTERING, State.REQUESTED)}
    instants = []
    for n, spec in enumerate(specs):
        action, state = kinds[spec]
        ts = f"2025010100000{n:04d}"
        instants.append(Instant(ts, action, state, f"2025010100001{n:04d}" if state is State.COMPLETED else None))
    layout = TimelineLayoutV2() if layout_version == 2 else LAYOUT_V1
    return Timeline(TableLocation.at(None, "/t"), instants, layout=layout)  # type: ignore[arg-type]


def _chosen(timeline: Timeline) -> str:
    from hudi_engine.table_services.archival import instants_to_archive

    chosen = instants_to_archive(timeline, ArchivalConfig(True, 3, 5), merge_on_read=False, max_delta_commits=5)
    return "".join({Action.COMMIT: "c", Action.CLEAN: "k", Action.ROLLBACK: "r"}[i.action] + i.timestamp[-2:]
                   for i in chosen)


def test_cleans_and_rollbacks_go_with_the_commits_before_them_in_layout_2():
    # Seven commits, cleans and a rollback among them: commits down to 3 (c00 c02 c04 c05), and in layout 2 every
    # clean or rollback requested before the newest of those (k01 k03); Hudi 0.x counts cleans on their own.
    specs = "ckckccrckckc"
    assert _chosen(_timeline(2, *specs)) == "c00k01c02k03c04c05"
    assert _chosen(_timeline(1, *specs)) == "c00c02c04c05"
    # No commit to archive, no clean either in layout 2 (however many); layout 1 archives cleans past max.
    assert _chosen(_timeline(2, *"ckkkkkkkc")) == ""
    assert _chosen(_timeline(1, *"ckkkkkkkc")) == "k01k02k03k04"


def test_a_pending_clustering_stops_layout_2_archival_at_the_commit_before_it():
    # Eight commits and a clustering requested after the third: only the two commits before the one it follows go.
    assert _chosen(_timeline(2, *"cccpccccc")) == "c00c01"
    assert _chosen(_timeline(2, *"cccccccc")) == "c00c01c02c03c04"
