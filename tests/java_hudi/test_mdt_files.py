"""The engine keeps the metadata table of a table Java Hudi created with its `files` partition only
(hudi_engine/metadata/writer.py): after the engine's upsert, delete and insert_overwrite, Java reads every row with
the metadata table on (listing files from it), Hudi's own validator finds the metadata table equal to storage, and
Java's next write appends to that metadata table instead of rebuilding it (the engine's delta commits stay, no new
initialization instant, `hoodie.table.metadata.partitions` still `files`) and compacts it, merging the engine's
blocks (and the base files of the engine's own compactions of it), after which the listing still equals storage. The
same for a metadata table the engine created (`hoodie.metadata.enable=true`) and compacted. An engine write killed
between the metadata delta commit and the data commit is invisible to Java, and Java's next write rolls it back, in
the metadata table too. Before Java reads, the engine also compacts (MOR), cleans and rolls back (its latest commit,
and a write of its own that failed after its metadata delta commit), keeping the metadata table through them."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from metadata_tables import mdt_listing, storage_listing

from hudi_engine import HudiTable
from hudi_engine.java_properties import parse_properties
from hudi_engine.location import TableLocation
from hudi_engine.metadata import cleaning
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.metadata.writer import MetadataWriter
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table
from java_hudi.checks import java_validates_metadata_files

KEYS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts"}
# The files partition only: Hudi 1.x also builds column and partition stats by default.
FILES_ONLY = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false",
              "hoodie.metadata.index.partition.stats.enable": "false",
              # Java's datasource otherwise compacts a MOR table in the background after its write returns (from the
              # fifth delta commit); off, it compacts inline, within the write. `_settled` waits for anything left.
              "hoodie.datasource.compaction.async.enable": "false"}


def _rows(ids: list[int], value: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids), "ts": pa.array([ts] * len(ids),
                     pa.int64()), "p": [f"p{i % 3}" for i in ids]})


def _props(path: Path) -> dict[str, str]:
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text("latin-1"))


def _mdt_instants(path: Path) -> list[str]:
    return [i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(path)))).completed()]


def _settled(path: Path, timeout_s: float = 120.0) -> None:
    """Wait until neither timeline has a pending instant: Hudi 0.15.0's datasource may still be compacting a MOR
    table in the background after its write returned (then storage holds the compaction's uncommitted files)."""
    deadline = time.monotonic() + timeout_s
    location = TableLocation.of(str(path))
    while True:
        pending = [*Timeline.load(location).pending().instants,
                   *Timeline.load(metadata_location(location)).pending().instants]
        if not pending:
            return
        assert time.monotonic() < deadline, f"instants still pending after {timeout_s} s: {pending}"
        time.sleep(0.5)


def _failed_commit_logs(path: Path) -> set[str]:
    """Log files Java's rollbacks name as a failed commit's (`logFilesFromFailedCommit`): Hudi 0.15.0's marker-based
    rollback records them with size 1 (it does not read their length), and its metadata table lists that size."""
    timeline = Timeline.load(TableLocation.of(str(path)))
    return {name.rsplit("/", 1)[-1] for i in timeline.filter_by(["rollback"]).completed().instants
            for pm in ((timeline.avro_metadata(i) or {}).get("partitionMetadata") or {}).values()
            for name in pm.get("logFilesFromFailedCommit") or {}}


def _same_listing(path: Path) -> None:
    """The metadata table lists exactly the files in storage, with their sizes (once Java's work has settled; the
    sizes Java's rollbacks recorded for a failed commit's log files aside)."""
    _settled(path)
    # A partition deleted, then cleaned, holds no file: Hudi's merge may still list it (a file-less partition whose
    # folder stays), storage_listing names only partitions with files.
    mdt = {p: files for p, files in mdt_listing(path).items() if files}
    stored = storage_listing(path)
    placeholders = _failed_commit_logs(path)
    for listing in (mdt, stored):
        for files in listing.values():
            files.update({f: -1 for f in files.keys() & placeholders})
    flat = lambda listing: {(p, f, n) for p, files in listing.items() for f, n in files.items()}  # noqa: E731
    assert mdt == stored, (f"only in the metadata table: {sorted(flat(mdt) - flat(stored))}; only in storage: "
                           f"{sorted(flat(stored) - flat(mdt))}; data timeline: "
                           f"{[str(i) for i in Timeline.load(TableLocation.of(str(path))).instants]}")


def _java_rows(java, path: Path) -> dict[int, str]:
    got = java.snapshot(path, **{"hoodie.metadata.enable": "true"}).select(["id", "v"]).to_pydict()
    return dict(zip(got["id"], got["v"], strict=True))


@pytest.mark.parametrize(("hudi", "table_type"), [("0.15.0", "MERGE_ON_READ"), ("1.2.0", "COPY_ON_WRITE"),
                                                  ("1.2.0", "MERGE_ON_READ")])
def test_java_reads_and_writes_on_the_metadata_table_the_engine_kept(java_hudi, tmp_path: Path, hudi: str,
                                                                     table_type: str, monkeypatch) -> None:
    java = java_hudi(hudi)
    path = tmp_path / "t"
    opts = {**KEYS, "hoodie.datasource.write.table.type": table_type}
    java.write(path, _rows(list(range(10)), "java-1", 1), {**opts, **FILES_ONLY, "hoodie.datasource.write.operation":
                                                           "upsert"}, mode="overwrite")
    assert _props(path)["hoodie.table.metadata.partitions"] == "files"
    initialized = [t for t in _mdt_instants(path) if t.startswith(SOLO_COMMIT_TIMESTAMP)]
    model = {i: "java-1" for i in range(10)}

    table = HudiTable.load(str(path))
    engine_instants = []
    # The engine compacts the metadata table itself, every 2 delta commits (before its next write or service).
    opts = {**opts, "hoodie.metadata.compact.max.delta.commits": "2"}
    # An upsert reaching a new partition (p2 exists, p0/p1 updated: log files on MOR), a delete, an overwrite of p1.
    r = table.write(_rows(list(range(5, 15)), "engine-1", 2), {**opts, "hoodie.datasource.write.operation": "upsert"})
    engine_instants.append(r.instant_time)
    model.update({i: "engine-1" for i in range(5, 15)})
    r = HudiTable.load(str(path)).write(_rows([0, 3], "gone", 3), {**opts, "hoodie.datasource.write.operation":
                                                                  "delete"})
    engine_instants.append(r.instant_time)
    for i in (0, 3):
        del model[i]
    overwrite = [i for i in range(30, 36) if i % 3 == 1]
    r = HudiTable.load(str(path)).write(_rows(overwrite, "engine-ow", 4),
                                        {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    engine_instants.append(r.instant_time)
    model = {i: v for i, v in model.items() if i % 3 != 1} | {i: "engine-ow" for i in overwrite}

    # Its table services and rollbacks keep it too: a compaction (MOR), a clean, the rollback of its latest commit
    # and of a write of its own that failed after its metadata delta commit. Java's read, validator and next write
    # below see them.
    HudiTable.load(str(path)).write(_rows([4, 6], "engine-2", 5), {**opts, "hoodie.datasource.write.operation":
                                                                   "upsert"})  # log files on MOR
    model.update({4: "engine-2", 6: "engine-2"})
    if table_type == "MERGE_ON_READ":
        assert HudiTable.load(str(path)).compact() is not None
    cleaned = HudiTable.load(str(path)).clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                                       "hoodie.cleaner.fileversions.retained": "1"})
    assert cleaned is not None and cleaned.deleted
    undone = HudiTable.load(str(path)).write(_rows([1, 43], "undone", 6), {**opts, "hoodie.datasource.write.operation":
                                                                          "upsert"}).instant_time
    assert HudiTable.load(str(path)).rollback().rolled_back.timestamp == undone
    failed = _failed_after_the_metadata_commit(path, _rows([2, 44], "failed", 6), opts, monkeypatch)
    assert not {undone, failed} & set(_mdt_instants(path))  # their delta commits rolled back

    assert _props(path)["hoodie.table.metadata.partitions"] == "files"  # kept, not disabled
    assert set(engine_instants) <= set(_mdt_instants(path))
    compacted = Timeline.load(metadata_location(TableLocation.of(str(path)))).filter_by(["commit"]).completed()
    assert compacted.instants, "the engine did not compact the metadata table"
    _same_listing(path)
    assert _java_rows(java, path) == model
    assert java_validates_metadata_files(java, path, tmp_path)

    # Java's next write appends to the metadata table the engine kept: no rebuild. It also compacts the metadata
    # table (after every delta commit here), merging the engine's HFile blocks into a new base file.
    java.write(path, _rows([40, 41, 5], "java-2", 7), {**opts, **FILES_ONLY,
                                                       "hoodie.metadata.compact.max.delta.commits": "1",
                                                       "hoodie.datasource.write.operation": "upsert"})
    model.update({i: "java-2" for i in (40, 41, 5)})
    after = _mdt_instants(path)
    assert set(engine_instants) <= set(after), "Java rebuilt the metadata table"
    assert [t for t in after if t.startswith(SOLO_COMMIT_TIMESTAMP)] == initialized
    mdt = Timeline.load(metadata_location(TableLocation.of(str(path))))
    assert mdt.filter_by(["commit"]).completed().instants, "Java did not compact the metadata table"
    assert _props(path)["hoodie.table.metadata.partitions"] == "files"
    assert _java_rows(java, path) == model
    _same_listing(path)

    # An engine write killed between its metadata delta commit and its data commit (markers and inflight left):
    # Java skips the delta commit's block, and its next write rolls the instant back, in the metadata table too.
    crashed = _killed_after_the_metadata_commit(path, _rows([1, 2, 50], "crashed", 8),
                                                {**opts, "hoodie.datasource.write.operation": "upsert"}, tmp_path)
    assert crashed in _mdt_instants(path)
    assert _java_rows(java, path) == model
    java.write(path, _rows([42], "java-3", 9), {**opts, **FILES_ONLY, "hoodie.datasource.write.operation": "upsert"})
    model[42] = "java-3"
    assert crashed not in {i.timestamp for i in Timeline.load(TableLocation.of(str(path))).instants}
    assert _props(path)["hoodie.table.metadata.partitions"] == "files"
    assert _java_rows(java, path) == model
    _same_listing(path)


def _failed_after_the_metadata_commit(path: Path, rows: pa.Table, opts: dict[str, str], monkeypatch) -> str:
    """The instant of an engine write that failed right after its metadata delta commit (the writer rolled it back)."""
    original, seen = MetadataWriter.record_commit, []

    def failed(self, instant_time, commit):
        original(self, instant_time, commit)
        seen.append(instant_time)
        raise RuntimeError("failed after the metadata delta commit")

    with monkeypatch.context() as m:
        m.setattr(MetadataWriter, "record_commit", failed)
        with pytest.raises(RuntimeError, match="failed after"):
            HudiTable.load(str(path)).write(rows, {**opts, "hoodie.datasource.write.operation": "upsert"})
    return seen[0]


_KILLED = """
import json, os, sys
import pyarrow.parquet as pq
from hudi_engine import HudiTable
from hudi_engine.metadata.writer import MetadataWriter
original = MetadataWriter.record_commit
def killed(self, instant_time, commit):
    original(self, instant_time, commit)
    print(instant_time, flush=True)
    os._exit(17)
MetadataWriter.record_commit = killed
HudiTable.load(sys.argv[1]).write(pq.read_table(sys.argv[2]), json.loads(sys.argv[3]))
"""


def _killed_after_the_metadata_commit(path: Path, rows: pa.Table, options: dict[str, str], tmp_path: Path) -> str:
    """The instant of an engine write whose process died right after the metadata delta commit completed."""
    source = tmp_path / "killed-input.parquet"
    pq.write_table(rows, source)
    done = subprocess.run([sys.executable, "-c", _KILLED, str(path), str(source), json.dumps(options)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 17, done.stderr[-3000:]
    return done.stdout.split()[-1]


@pytest.mark.parametrize(("hudi", "version", "table_type"), [("0.15.0", 6, "MERGE_ON_READ"),
                                                             ("1.2.0", 9, "COPY_ON_WRITE")])
def test_java_reads_and_writes_on_a_metadata_table_the_engine_created(java_hudi, tmp_path: Path, hudi: str,
                                                                      version: int, table_type: str,
                                                                      monkeypatch) -> None:
    """A table the engine created with `hoodie.metadata.enable=true` (its metadata table initialised from a listing)
    and whose metadata table it compacted, cleaned and archived, through a delete_partition and a clean: Java reads
    it with the metadata table on, Hudi's validator passes, and Java's next write appends to it (no new
    initialization instant)."""
    monkeypatch.setattr(cleaning, "COMMITS_RETAINED", 3)  # Hudi's 20 would take 20 commits before a clean
    java = java_hudi(hudi)
    path = tmp_path / "t"
    opts = {**KEYS, "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.operation": "upsert"}
    engine = {**opts, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
              "hoodie.cleaner.commits.retained": "1"}
    model: dict[int, str] = {}
    for n, ids in enumerate([list(range(8)), [1, 2, 9], [3, 10], [4, 5, 11], [6, 13], [7, 14], [0, 15]]):
        HudiTable.load(str(path)).write(_rows(ids, f"e{n}", n), engine) if n else \
            write_table(_rows(ids, f"e{n}", n), str(path), engine)
        model.update({i: f"e{n}" for i in ids})
    # delete_partition keeps it (the partition marked deleted), and the clean then deletes the partition's files.
    HudiTable.load(str(path)).delete_partitions(["p2"])
    HudiTable.load(str(path)).clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                             "hoodie.cleaner.fileversions.retained": "1"})
    model = {i: v for i, v in model.items() if i % 3 != 2}
    assert _props(path)["hoodie.table.metadata.partitions"] == "files"
    mdt = Timeline.load(metadata_location(TableLocation.of(str(path))))
    assert mdt.filter_by(["commit"]).completed().instants, "the engine did not compact the metadata table"
    assert mdt.filter_by(["clean"]).completed().instants, "the engine did not clean the metadata table"
    initialized = [t for t in _mdt_instants(path) if t.startswith(SOLO_COMMIT_TIMESTAMP)]
    assert len(initialized) == 1
    # archival: the data table's old instants, then the metadata table's own (its initialization among them)
    before = len(Timeline.load(metadata_location(TableLocation.of(str(path)))).instants)
    HudiTable.load(str(path)).archive(options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                               "hoodie.cleaner.commits.retained": "1"})
    assert len(Timeline.load(metadata_location(TableLocation.of(str(path)))).instants) < before
    initialized = [t for t in _mdt_instants(path) if t.startswith(SOLO_COMMIT_TIMESTAMP)]
    _same_listing(path)
    assert _java_rows(java, path) == model
    assert java_validates_metadata_files(java, path, tmp_path)

    java.write(path, _rows([6, 12], "java", 9), {**opts, **FILES_ONLY})
    model.update({6: "java", 12: "java"})
    assert [t for t in _mdt_instants(path) if t.startswith(SOLO_COMMIT_TIMESTAMP)] == initialized
    assert _props(path)["hoodie.table.metadata.partitions"] == "files"
    assert _java_rows(java, path) == model
    _same_listing(path)
