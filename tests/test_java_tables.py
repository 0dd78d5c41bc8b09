"""The feature tables Java Hudi wrote (tests/java_tables.py, tests/data/java_tables): the engine reads exactly what
Java read from each (whole tables, every column with its type), and a table whose feature the engine does not honour
is refused by name before anything is written. No Java here: Java's answers were recorded beside each table by
tests/java_hudi/make_feature_tables.py; tests/java_hudi/test_feature_tables.py has Java read the engine's writes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from java_hudi.compare import KEY, assert_same_table
from java_tables import (
    CASES,
    DATA_DIR,
    FeatureTable,
    changes,
    engine_rows,
    java_answers,
    unzip_feature_table,
    write_options,
)

from hudi_engine import HudiTable
from hudi_engine.errors import (
    UnsupportedMergeError,
    UnsupportedReadError,
    UnsupportedTableFeatureError,
    WriteError,
)
from hudi_engine.internal_schema import LATEST_SCHEMA, SchemaHistory
from hudi_engine.timeline.instant import Action, State

DOCS = Path(__file__).resolve().parents[1] / "docs" / "table-features.md"


def engine_read(table: HudiTable, read: dict) -> pa.Table:
    kind = read["kind"]
    if kind == "snapshot":
        return table.read_snapshot()
    if kind == "read_optimized":
        return table.read_snapshot(read_optimized=True)
    if kind == "time_travel":
        return table.read_snapshot(as_of=read["instant"])
    if kind == "incremental":
        return table.read_incremental(read["begin"])
    if kind == "cdc":
        return table.read_changes(read["begin"])
    raise AssertionError(f"unknown read {kind}")


def without_lost_updates(ours: pa.Table, java: pa.Table, snapshot: pa.Table, what: str) -> pa.Table:
    """Java Hudi's MOR incremental query merges a file group's log records only with the records of the range (the
    base file's rows are filtered by commit time first: apache/hudi#8222, HUDI-6025), so a log record that lost the
    merge to an older stored version (EVENT_TIME_ORDERING) comes back as written; the engine merges as a snapshot
    does. Those rows (keys Java shows and the engine does not, each unlike the snapshot's row) are taken out."""
    extra = set(java.column(KEY).to_pylist()) - set(ours.column(KEY).to_pylist())
    if not extra:
        return java
    latest = {r[KEY]: r for r in snapshot.to_pylist()}
    for row in java.filter(pc.is_in(java.column(KEY), pa.array(sorted(extra)))).to_pylist():
        assert row != latest.get(row[KEY]), f"{what}: Java shows {row}, which the engine's incremental read lacks"
    return java.filter(pc.invert(pc.is_in(java.column(KEY), pa.array(sorted(extra)))))


def assert_reads_as_java(path: Path, reads: list[dict], what: str, refused: str | None = None) -> None:
    """The engine's answer to each query Java answered is Java's; with `refused` (words of the refusal), a query
    that merges log records may be refused instead, naming the table."""
    table = HudiTable.load(str(path))
    snapshot = next(r["rows"] for r in reads if r["kind"] == "snapshot")
    for read in (r for r in reads if "rows" in r):
        try:
            ours, theirs = engine_read(table, read), read["rows"]
        except UnsupportedReadError as e:  # merging reads refused (read-optimized ones are read), or every read
            if not refused or (read["kind"] == "read_optimized" and isinstance(e, UnsupportedMergeError)):
                raise
            assert re.search(refused, str(e)) and table.config.name in str(e), str(e)
            continue
        if read["kind"] == "incremental" and table.is_mor:
            theirs = without_lost_updates(ours, theirs, snapshot, what)
        label = f"{what} {read['kind']} {read.get('instant') or read.get('begin') or ''}".strip()
        if read["kind"] == "cdc":
            assert changes(ours) == changes(theirs), f"{label}:\nours {changes(ours)}\njava {changes(theirs)}"
        else:
            assert_same_table(ours, theirs, label)


def _files(path: Path) -> dict[str, int]:
    return {f.relative_to(path).as_posix(): f.stat().st_mtime_ns for f in path.rglob("*") if f.is_file()}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c.wrong_read))
                                  if c.wrong_read else c for c in CASES], ids=lambda c: c.name)
def test_the_engine_reads_what_java_read(case: FeatureTable, tmp_path: Path) -> None:
    path, reads = unzip_feature_table(case, tmp_path)
    assert any("rows" in r for r in reads), f"{case.name}: Java answered no query"
    assert_reads_as_java(path, reads, case.name, case.read_refused or case.reads_refused)


@pytest.mark.parametrize("case", [c for c in CASES if c.refused or c.update_refused], ids=lambda c: c.name)
def test_the_engine_refuses_by_name_before_writing(case: FeatureTable, tmp_path: Path) -> None:
    """A refused table (or an update a feature refuses) stops the write before any file is written, naming the
    table and the feature."""
    path, reads = unzip_feature_table(case, tmp_path)
    before = _files(path)
    table = HudiTable.load(str(path))
    with pytest.raises(UnsupportedTableFeatureError if case.refused else WriteError) as refused:
        table.write(engine_rows([1, 100]), write_options(case))
    message = str(refused.value)
    assert str(path) in message, message
    assert case.name in message, message  # by name: UnsupportedTableFeatureError's "table <name> at <path>"
    assert re.search(case.refused or case.update_refused or "", message), message
    if case.refused:
        assert _files(path) == before
    else:  # the write rolled its own instant back (a rollback on the timeline, as Java's writer leaves one)
        assert_reads_as_java(path, [r for r in reads if r["kind"] == "snapshot"], f"{case.name} after the refusal")


@pytest.mark.parametrize("case", [c for c in CASES if c.builder.startswith(("clean_", "rollback_"))],
                         ids=lambda c: c.name)
def test_a_service_java_left_pending_is_finished_on_this_copy(case: FeatureTable, tmp_path: Path) -> None:
    """Java's clean and rollback plans name files by the full path the table had when Java planned them
    (`file:/...` of the machine that made the zip): the engine's next write finishes the service on this copy (the
    files the plan names are gone here) and touches nothing where the paths point."""
    path, _ = unzip_feature_table(case, tmp_path)
    table = HudiTable.load(str(path))
    (pending,) = [i for i in table.timeline.pending() if i.action in (Action.CLEAN, Action.ROLLBACK)]
    plan = table.timeline.avro_metadata(pending.with_state(State.REQUESTED)) or {}
    named = ([f["filePath"] for fs in plan["filePathsToBeDeletedPerPartition"].values() for f in fs]
             if pending.action is Action.CLEAN else [p for r in plan["RollbackRequests"] for p in r["filesToBeDeleted"]])
    # Log files whose blocks a rollback neutralises (Hudi 0.x, MOR): named by file name alone, in their partition.
    blocks = [(r["partitionPath"], n) for r in plan.get("RollbackRequests") or [] for n in r["logBlocksToBeDeleted"]]
    here = {f.name for f in path.rglob("*")}
    assert named and {n.rsplit("/", 1)[-1] for n in named} <= here and not any(str(tmp_path) in n for n in named)
    table.write(engine_rows([100]), write_options(case))
    assert not {n.rsplit("/", 1)[-1] for n in named} & {f.name for f in path.rglob("*")}
    for partition, log in blocks:  # a rollback command block, in a new log file of the slice
        stem = log.rsplit(".", 1)[0]
        assert len(list((path / partition).glob(f"{stem}.*"))) == 2, (partition, log)
    done = HudiTable.load(str(path)).timeline
    assert not [i for i in done.pending() if i.action in (Action.CLEAN, Action.ROLLBACK)]
    assert pending.timestamp in {i.timestamp for i in done.filter_by([pending.action], [State.COMPLETED])}


@pytest.mark.parametrize("case", [c for c in CASES if c.builder.startswith("savepoint")], ids=lambda c: c.name)
def test_cleaning_keeps_the_files_of_a_completed_savepoint_only(case: FeatureTable, tmp_path: Path) -> None:
    """The first commit's base files, which two later commits replaced: the engine's clean (one commit retained)
    keeps exactly those Java's completed savepoint lists, and deletes them under a savepoint left inflight."""
    path, _ = unzip_feature_table(case, tmp_path)
    table = HudiTable.load(str(path))
    first = next(iter(table.timeline.completed_commits())).timestamp

    def first_files() -> set[str]:
        return {f.name for f in path.rglob(f"*_{first}.parquet")}
    before = first_files()
    assert before
    table.clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS", "hoodie.cleaner.commits.retained": "1"})
    (savepoint,) = table.timeline.filter_by([Action.SAVEPOINT])
    if case.builder == "savepoint":
        listed = table.timeline.avro_metadata(savepoint) or {}
        named = {n.rsplit("/", 1)[-1] for p in listed["partitionMetadata"].values() for n in p["savepointDataFile"]}
        assert before <= named and first_files() == before
    else:  # the same clean deletes them without the savepoint
        assert savepoint.state is State.INFLIGHT and not first_files()


@pytest.mark.parametrize("case", [c for c in CASES if c.java_next_write], ids=lambda c: c.name)
def test_javas_own_next_write_is_as_the_case_says(case: FeatureTable, tmp_path: Path) -> None:
    """Java's next write on the same table (its defaults, on a copy, recorded by the script): written, the pending
    instant left pending, or refused with these words; a pending restore Java refuses is finished by restoring to
    the savepoint again (the way out the engine's refusal names): Java then reads the savepointed commit's rows and
    its write goes through."""
    done = java_answers(case)["java_next_write"]
    new = [[1, "java-next-1"], [100, "java-next-100"]]
    if case.java_next_write == "written":
        assert "error" not in done and all(r in done["rows"] for r in new), done
        pending = [i for i in done["instants"] if ".indexing." in i]
        assert pending and not [i for i in done["instants"] if i.endswith(".indexing")], done
        return
    assert re.search(case.java_next_write, done["error"]), done
    if case.builder.startswith("restore"):
        _, reads = unzip_feature_table(case, tmp_path)
        savepointed = next(r["rows"] for r in reads if r["kind"] == "time_travel")  # to the first commit
        want = sorted(map(list, zip(savepointed.column("id").to_pylist(), savepointed.column("v").to_pylist(),
                                    strict=True)))
        assert [i for i in done["restored_again"]["instants"] if i.endswith(".restore")], done
        assert done["restored_again"]["rows"] == want, done
        assert all(r in done["then_written"]["rows"] for r in new), done


# ---- docs/table-features.md lists the cases -----------------------------------------------------------------------

def docs_table() -> str:
    """The docs table of the cases, as docs/table-features.md holds it between its markers."""
    lines = ["| table | feature | version | Java Hudi | outcome |", "|---|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.feature} | {c.version} | {c.hudi} | {c.outcome} |" for c in CASES]
    return "\n".join(lines) + "\n"


def test_the_docs_list_every_feature_table() -> None:
    text = DOCS.read_text()
    found = re.search(r"<!-- java-tables:begin -->\n(.*?)<!-- java-tables:end -->", text, re.S)
    assert found, "docs/table-features.md has no <!-- java-tables:begin --> ... <!-- java-tables:end --> table"
    assert found.group(1) == docs_table(), ("docs/table-features.md's feature tables differ from "
                                            "tests/java_tables.py; the table should read:\n" + docs_table())


def test_every_case_has_its_zip_and_the_set_is_small() -> None:
    missing = [c.name for c in CASES if not (DATA_DIR / f"{c.name}.zip").exists()]
    assert not missing, f"no zip for {missing}: run tests/java_hudi/make_feature_tables.py {' '.join(missing)}"
    names = {f"{c.name}.zip" for c in CASES}
    assert {p.name for p in DATA_DIR.glob("*.zip")} == names, "zips of no case in tests/data/java_tables"
    assert sum((DATA_DIR / n).stat().st_size for n in names) < 5_000_000


@pytest.mark.parametrize("case", [c for c in CASES if c.builder == "schema_evolution"], ids=lambda c: c.name)
def test_the_engine_keeps_javas_schema_history_going(case: FeatureTable, tmp_path: Path) -> None:
    """Java renamed, retyped and dropped columns with schema-on-read: the engine's write (without the option) records
    Java's newest internal schema and writes the history again under its instant, as Hudi's writers do; its own
    rename appends a version with every id kept; the rows read by id throughout."""
    path, reads = unzip_feature_table(case, tmp_path)
    table = HudiTable.load(str(path))
    java_latest = json.loads(table.commit_metadata(table.timeline.completed_commits()[-1]).extra_metadata[LATEST_SCHEMA])
    rows = pa.table({"id": pa.array([1, 100], pa.int64()), "name": ["engine-1", "engine-100"],
                     "ts": pa.array([9, 9], pa.int64()), "p": ["a", "b"]})
    table.write(rows, write_options(case))
    mine = table.timeline.completed_commits()[-1]
    assert json.loads(table.commit_metadata(mine).extra_metadata[LATEST_SCHEMA]) == java_latest
    history = SchemaHistory.load(table.location.storage, table.location.meta_path)
    assert history is not None and history.latest.to_json() == java_latest
    assert len(history.schemas) == 4  # Java's three changes and version 0, unchanged
    table.rename_column("name", "label", options={**write_options(case), "hoodie.schema.on.read.enable": "true"})
    history = SchemaHistory.load(table.location.storage, table.location.meta_path)
    assert history is not None and len(history.schemas) == 5
    assert [(f.id, f.name) for f in history.latest.fields][5:] == [(5, "id"), (6, "label"), (7, "ts"), (9, "p")]
    got = HudiTable.load(str(path)).read_snapshot()
    java = next(r["rows"] for r in reads if r["kind"] == "snapshot")
    want = {i: n for i, n in zip(java.column("id").to_pylist(), java.column("name").to_pylist(), strict=True)}
    want |= {1: "engine-1", 100: "engine-100"}
    assert dict(zip(got.column("id").to_pylist(), got.column("label").to_pylist(), strict=True)) == want
