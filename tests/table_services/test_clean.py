"""Cleaning and rollback on request: what goes, what stays, what every retained instant still reads."""
from __future__ import annotations

import copy
import os
import shutil
from collections import Counter

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot
from test_compaction import SCHEMA, Table, model_rows, row, rows_of

from hudi_engine import HudiTable, WriteConfig
from hudi_engine.config import CleanConfig
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.file_naming import BaseFileName, LogFileName, is_base_file_name, is_log_file_name
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.clean import CleanPlan, plan_clean
from hudi_engine.table_services.clean import clean as clean_table
from hudi_engine.table_services.compaction import CompactionPlan, run_compaction, schedule_compaction
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import embedded_schema, read_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, start_commit
from hudi_engine.write.handles import WriteContext, create_handle

COMMITS = {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS"}
VERSIONS = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}


def _clean_config(options: dict) -> CleanConfig:
    return WriteConfig.from_options(options).clean


def clean(storage, base, options: dict) -> str | None:
    """Clean with Hudi's option keys; the clean instant or None."""
    location = TableLocation.at(storage, base)
    result = clean_table(location, _clean_config(options), table=TableConfig.load(location),
                         timeline=Timeline.load(location))
    return result.instant_time if result is not None else None


def versions_per_group(t: Table) -> Counter:
    """Base files per file group (all partitions)."""
    out: Counter = Counter()
    for p in ("p0", "p1", "p2"):
        for n in t.data_files(p):
            if is_base_file_name(n):
                out[BaseFileName.parse(n).file_id] += 1
    return out


def all_data_files(t: Table) -> set[str]:
    return {f"{p}/{n}" for p in ("p0", "p1", "p2") if (t.path / p).exists() for n in t.data_files(p)}


def cow_with_history(tmp_path, commits: int = 7) -> tuple[Table, list[str]]:
    t = Table(tmp_path, "COPY_ON_WRITE")
    instants = [t.write([row(i, 1) for i in range(9)])]
    for ts in range(2, commits + 1):
        instants.append(t.write([row(i, ts) for i in (ts % 3, 3 + ts % 3, 4)]))  # every partition, every time
    return t, instants


# --------------------------------------------------------------------------------------------- policies


def test_keep_latest_commits_keeps_what_retained_instants_read(tmp_path):
    t, instants = cow_with_history(tmp_path)
    before = all_data_files(t)
    config = _clean_config({**COMMITS, "hoodie.cleaner.commits.retained": "3"})
    plan = plan_clean(TableLocation.at(t.storage, t.base), config, Timeline.load(TableLocation.at(t.storage, t.base)))
    earliest = instants[4]  # the 3rd latest of 7 commits
    assert plan.earliest_instant_to_retain == Instant(earliest, Action.COMMIT) and plan.last_completed_commit == instants[-1]
    ts = clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "3"})
    assert ts > instants[-1]

    # Timeline files: plan twice (requested, inflight), then the metadata, all Avro as Hudi writes them.
    meta_dir = t.path / ".hoodie"
    requested, inflight = (meta_dir / f"{ts}.clean.requested").read_bytes(), (meta_dir / f"{ts}.clean.inflight").read_bytes()
    assert embedded_schema(requested)["name"] == "org.apache.hudi.avro.model.HoodieCleanerPlan"
    assert CleanPlan.from_bytes(requested) == CleanPlan.from_bytes(inflight) == plan
    raw_plan = read_avro_metadata(requested)
    assert raw_plan["version"] == 2 and raw_plan["policy"] == "KEEP_LATEST_COMMITS"
    assert raw_plan["earliestInstantToRetain"] == {"timestamp": earliest, "action": "commit", "state": "COMPLETED"}
    assert raw_plan["filesToBeDeletedPerPartition"] is None and raw_plan["partitionsToBeDeleted"] == []
    planned = {f["filePath"] for fs in raw_plan["filePathsToBeDeletedPerPartition"].values() for f in fs}
    done = read_avro_metadata((meta_dir / f"{ts}.clean").read_bytes())
    assert embedded_schema((meta_dir / f"{ts}.clean").read_bytes())["name"] == "org.apache.hudi.avro.model.HoodieCleanMetadata"
    assert (done["version"], done["earliestCommitToRetain"], done["startCleanTime"]) == (2, earliest, ts)
    assert done["lastCompletedCommitTimestamp"] == instants[-1] and done["totalFilesDeleted"] == len(planned)
    for _partition, pm in done["partitionMetadata"].items():
        assert pm["policy"] == "KEEP_LATEST_COMMITS" and pm["failedDeleteFiles"] == []
        assert sorted(pm["successDeleteFiles"]) == sorted(pm["deletePathPatterns"])
        assert all("/" not in n for n in pm["successDeleteFiles"])  # names in metadata version 2

    # What went: exactly the base files of commits before the newest slice older than E.
    gone = before - all_data_files(t)
    assert {str(t.path / g) for g in gone} == planned
    assert {BaseFileName.parse(g.split("/")[1]).instant_time for g in gone} == set(instants[:3])
    t.check("after clean", since=earliest)  # every retained instant still reads
    # The slice before E is kept (a query running as of then still finds it), but time travel to an instant before
    # E is refused, as Hudi refuses it (TimelineUtils.validateTimestampAsOf): every reader agrees on what is readable.
    with pytest.raises(HudiError, match=rf"instant {instants[3]} was cleaned: the last clean \({ts}\) "
                                        rf"retains instants from {earliest} on \(hoodie.cleaner.commits.retained\). "
                                        rf"Available: instants from {earliest} to {instants[-1]}"):
        HudiTable.load(str(t.path)).read_snapshot(as_of=instants[3])
    assert clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "3"}) is None


def test_base_files_per_file_group_stay_bounded(tmp_path):
    t, instants = cow_with_history(tmp_path, commits=3)
    opts = {**COMMITS, "hoodie.cleaner.commits.retained": "2"}
    for ts in range(4, 12):
        instants.append(t.write([row(i, ts) for i in range(9)]))
        clean(t.storage, t.base, opts)
        assert max(versions_per_group(t).values()) <= 3  # 2 retained + the one the earliest retained reads
    t.check("bounded", since=instants[-2])


def test_keep_latest_file_versions(tmp_path):
    t, instants = cow_with_history(tmp_path, commits=5)
    clean(t.storage, t.base, {**VERSIONS, "hoodie.cleaner.fileversions.retained": "2"})
    assert set(versions_per_group(t).values()) == {2}
    t.check("file versions", since=instants[-1])
    plan = read_avro_metadata(next((t.path / ".hoodie").glob("*.clean.requested")).read_bytes())
    assert plan["policy"] == "KEEP_LATEST_FILE_VERSIONS" and plan["earliestInstantToRetain"] is None


def test_nothing_to_clean_writes_no_instant(tmp_path):
    t, _ = cow_with_history(tmp_path, commits=3)
    assert clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "3"}) is None
    assert clean(t.storage, t.base, {**VERSIONS, "hoodie.cleaner.fileversions.retained": "5"}) is None
    assert not [n for n in t.hoodie_files() if ".clean" in n]
    with pytest.raises(WriteError, match="hoodie.cleaner.policy='KEEP_NOTHING'"):
        _clean_config({"hoodie.cleaner.policy": "KEEP_NOTHING"})
    with pytest.raises(WriteError, match="hoodie.cleaner.commits.retained='0'"):
        _clean_config({"hoodie.cleaner.commits.retained": "0"})


# --------------------------------------------------------------------------------------------- MOR


def test_mor_clean_removes_compacted_slices_outside_retention(tmp_path):
    t = Table(tmp_path)
    instants = [t.write([row(i, 1) for i in range(9)]), t.write([row(i, 2) for i in (0, 1, 2)]),
                t.write([row(i, 3) for i in (3, 4)])]
    old_slices = {k: s for k, s in t.slices().items()}
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    instants += [c, t.write([row(i, 4) for i in (0, 5)]), t.write([row(6, 5)])]
    # Retaining 3 commits: E = the compaction commit. Like Hudi, the newest slice *before* E stays too.
    clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "3"})
    old_files = {f"{s.partition_path}/{f.name.format()}" for s in old_slices.values() for f in [s.base_file, *s.log_files]}
    assert old_files <= all_data_files(t)
    t.check("retain 3", since=c)
    # Retaining 2: E is after the compaction, so the pre-compaction slices (base and logs) go.
    clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "2"})
    files = all_data_files(t)
    assert not old_files & files
    # Every group keeps one slice, its logs with it.
    left = [LogFileName.parse(n.split("/")[1]) for n in files if is_log_file_name(n.split("/")[1])]
    assert left and all(n.base_instant == c for n in left)
    t.check("after clean", since=instants[4])  # E: time travel before it is refused, as Hudi refuses it


def test_slices_a_pending_compaction_reads_are_never_cleaned(tmp_path):
    t = Table(tmp_path)
    t.write([row(i, 1) for i in range(6)])
    for ts in (2, 3):
        t.write([row(0, ts), row(1, ts)])
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    plan = CompactionPlan.load(Timeline.load(TableLocation.at(t.storage, t.base)), c)
    needed = {f"{op.partition_path}/{n}" for op in plan.operations for n in (op.data_file, *op.delta_files)}
    later = t.write([row(0, 4)])  # a log file on the pending compaction's slice
    for opts in ({**COMMITS, "hoodie.cleaner.commits.retained": "1"}, {**VERSIONS, "hoodie.cleaner.fileversions.retained": "1"}):
        clean(t.storage, t.base, opts)
        assert needed <= all_data_files(t)
    run_compaction(TableLocation.at(t.storage, t.base), c)
    t.compacted(c)
    clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "1"})
    assert not needed & all_data_files(t)
    t.check("compacted, then cleaned", since=later)


# --------------------------------------------------------------------------------------------- replaced groups


def overwrite(t: Table, partition: str, rows: list[dict]) -> str:
    """insert_overwrite of one partition: a replacecommit with a new file group, the old ones replaced."""
    replaced = [fid for (p, fid) in t.slices() if p == partition]
    inflight = start_commit(TableLocation.at(t.storage, t.base), t.config, "INSERT_OVERWRITE")
    ctx = WriteContext.create(TableLocation.at(t.storage, t.base), t.config, inflight.timestamp, SCHEMA)
    stat = create_handle(ctx, partition, pa.Table.from_pylist(rows, SCHEMA))
    complete_commit(TableLocation.at(t.storage, t.base), inflight, [stat], "INSERT_OVERWRITE", ctx.schema,
                    partition_to_replace_file_ids={partition: replaced},
                    layout=layout_at(TableLocation.at(t.storage, t.base)))
    for k in [k for k, r in t.model.items() if r["part"] == partition]:
        del t.model[k]
    t.model.update({r["id"]: r for r in rows})
    t.history[inflight.timestamp] = copy.deepcopy(t.model)
    return inflight.timestamp


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_replaced_file_groups_go_once_the_replace_is_outside_retention(tmp_path, table_type):
    t = Table(tmp_path, table_type)
    instants = [t.write([row(i, 1) for i in range(6)])]
    old_p0 = {fid for (p, fid) in t.slices() if p == "p0"}
    instants.append(overwrite(t, "p0", [row(30, 2, part="p0")]))
    instants.append(t.write([row(1, 3)]))
    opts = {**COMMITS, "hoodie.cleaner.commits.retained": "2"}
    clean(t.storage, t.base, opts)  # E = the replacecommit: time travel to it must still work, no files go
    assert {BaseFileName.parse(n).file_id for n in t.data_files("p0")} >= old_p0
    t.check("replace retained", since=instants[1])
    instants.append(t.write([row(2, 4)]))
    clean(t.storage, t.base, opts)  # E is past the replacecommit now: the replaced group goes whole
    assert not {BaseFileName.parse(n).file_id for n in t.data_files("p0") if is_base_file_name(n)} & old_p0
    assert not [n for n in t.data_files("p0") if is_log_file_name(n)]
    t.check("replaced group cleaned", since=instants[2])


# --------------------------------------------------------------------------------------------- crash


def test_an_interrupted_clean_is_finished_by_the_next_one(tmp_path):
    t, instants = cow_with_history(tmp_path, commits=5)
    config = CleanConfig(commits_retained=2)
    plan = plan_clean(TableLocation.at(t.storage, t.base), config, Timeline.load(TableLocation.at(t.storage, t.base)))
    paths = [p for ps in plan.files.values() for p in ps]
    timeline = Timeline.load(TableLocation.at(t.storage, t.base))
    ts = "20991231000000000"
    data = plan.to_bytes()
    inflight = timeline.transition_to_inflight(timeline.create_requested(Instant(ts, Action.CLEAN, State.REQUESTED), data), data)
    for p in paths[: len(paths) // 2]:  # the crash: half the files deleted, no .clean file
        t.storage.delete(p)
    assert inflight.is_inflight
    t.check("mid-clean", since=instants[-2])  # readers see the same rows
    location = TableLocation.at(t.storage, t.base)
    result = clean_table(location, _clean_config({"hoodie.cleaner.commits.retained": "2"}),
                         table=TableConfig.load(location), timeline=Timeline.load(location))
    assert result is None  # the interrupted clean was finished; nothing else to clean
    done = read_avro_metadata((t.path / ".hoodie" / f"{ts}.clean").read_bytes())
    assert done["totalFilesDeleted"] == len(paths)  # files already gone count as deleted
    assert not any(t.storage.exists(p) for p in paths)
    t.check("after the resumed clean", since=instants[-2])


def test_a_copied_tables_interrupted_clean_deletes_in_the_copy_only(tmp_path):
    """A plan names files by the full path the table had (Java: with its scheme, `file:/...`): resumed in a copy
    of the table, the clean deletes the copy's files and leaves the original's."""
    t, _ = cow_with_history(tmp_path / "original", commits=5)
    location = TableLocation.at(t.storage, t.base)
    plan = plan_clean(location, CleanConfig(commits_retained=2), Timeline.load(location))
    plan = CleanPlan(plan.policy, plan.earliest_instant_to_retain, plan.last_completed_commit,
                     {p: tuple(f"file:{f}" for f in fs) for p, fs in plan.files.items()})
    timeline = Timeline.load(location)
    ts = "20991231000000000"
    timeline.transition_to_inflight(timeline.create_requested(Instant(ts, Action.CLEAN, State.REQUESTED),
                                                              plan.to_bytes()), plan.to_bytes())
    copy_path = tmp_path / "copy"
    shutil.copytree(t.path, copy_path)
    copied = TableLocation.of(str(copy_path))
    clean_table(copied, CleanConfig(commits_retained=2), table=TableConfig.load(copied),
                timeline=Timeline.load(copied))
    named = [f.removeprefix("file:") for fs in plan.files.values() for f in fs]
    assert named and all(os.path.exists(f) for f in named)  # the original's files are left
    assert not any((copy_path / os.path.relpath(f, t.path)).exists() for f in named)
    assert (copy_path / ".hoodie" / f"{ts}.clean").exists()


# --------------------------------------------------------------------------------------------- rollback


def test_rollback_last_commit_restores_the_previous_state(tmp_path):
    t, instants = cow_with_history(tmp_path, commits=4)
    clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "2"})
    previous = t.history[instants[-2]]
    result = HudiTable.load(str(t.path)).rollback()
    assert result.rolled_back.timestamp == instants[-1]
    assert rows_of(rs_snapshot(t.path)) == model_rows(previous)
    assert f"{result.rollback_instant}.rollback" in t.hoodie_files()


def test_rollback_is_refused_when_cleaning_removed_the_replaced_versions(tmp_path):
    t, instants = cow_with_history(tmp_path, commits=3)
    clean(t.storage, t.base, {**VERSIONS, "hoodie.cleaner.fileversions.retained": "1"})
    with pytest.raises(WriteError, match="file versions it replaced are gone"):
        HudiTable.load(str(t.path)).rollback()
    assert_same_rows(rs_snapshot(t.path), rs_snapshot(t.path, as_of=instants[-1]), "nothing changed")


def test_rollback_of_a_deltacommit_and_refusal_for_a_compaction(tmp_path):
    t = Table(tmp_path)
    first = t.write([row(i, 1) for i in range(6)])
    second = t.write([row(0, 2)])
    c = schedule_compaction(TableLocation.at(t.storage, t.base)).timestamp
    with pytest.raises(WriteError, match="newer write instants"):
        HudiTable.load(str(t.path)).rollback()  # the pending compaction reads its log file
    run_compaction(TableLocation.at(t.storage, t.base), c)
    with pytest.raises(WriteError, match="not the latest completed commit|compaction"):
        HudiTable.load(str(t.path)).rollback()
    third = t.write([row(1, 3)])
    HudiTable.load(str(t.path)).rollback(use_command_blocks=True)
    assert rows_of(rs_snapshot(t.path)) == model_rows(t.history[second])
    assert third not in {i.timestamp for i in Timeline.load(TableLocation.at(t.storage, t.base)).completed_commits()}
    assert first


# --------------------------------------------------------------------------------------------- reads after a clean


def test_reads_as_of_a_cleaned_instant_are_refused(tmp_path):
    """Time travel (and an incremental range ending) where cleaning deleted a version the read needs: one error
    naming the table, the instant and the instants still readable, instead of silently missing rows."""
    from hudi_engine import HudiTable
    from hudi_engine.errors import HudiError

    t, instants = cow_with_history(tmp_path)
    clean(t.storage, t.base, {**COMMITS, "hoodie.cleaner.commits.retained": "3"})
    table = HudiTable.load(str(t.path))
    for cleaned in instants[:3]:
        with pytest.raises(HudiError, match=rf"table '\w+' \(.*\): instant {cleaned} was cleaned: the "
                                            rf"last clean \(\d+\) retains instants from {instants[4]} on"):
            table.read_snapshot(as_of=cleaned)
        # An incremental range (not checked against the retention, as in Hudi) ending there finds the gap itself.
        with pytest.raises(HudiError, match=rf"table '\w+' \(.*\): instant {cleaned} was cleaned: the version of "
                                            rf"file group p\d/\S+ written at \d+, which a read as of {cleaned} needs, "
                                            rf"was deleted. Available: instants from {instants[3]} to {instants[-1]}"):
            table.read_incremental("0", cleaned)
    for kept in instants[4:]:  # what the cleaner retained still reads, as hudi-rs reads it
        assert_same_rows(table.read_snapshot(as_of=kept), rs_snapshot(t.path, as_of=kept), f"as of {kept}")
    # Before the table: empty without a clean, as in Hudi; here a clean retains from instants[4] on.
    with pytest.raises(HudiError, match="was cleaned"):
        table.read_snapshot(as_of="20000101000000000")
