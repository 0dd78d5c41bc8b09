from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import fastavro
import pytest

from hudi_engine.errors import TimelineError
from hudi_engine.timeline.avro_models import (
    NAMESPACE,
    SCHEMAS,
    avro_kind_for,
    embedded_schema,
    read_avro_metadata,
    schema_text,
    write_avro_metadata,
)
from hudi_engine.timeline.instant import Action, State

# Timeline files that hold Avro in v6 (plans and table-service metadata) and, in 1.x layout 2, completed
# commits too (`<requested>_<completed>.<action>`).
_AVRO_NAME = re.compile(
    r"\d+(\.(rollback|clean|compaction|logcompaction|replacecommit|indexing|restore|savepoint)\.requested"
    r"|\.clean\.inflight|\.(rollback|clean|savepoint|restore|indexing)"
    r"|_\d+\.(commit|deltacommit|replacecommit|rollback|clean|indexing|savepoint|restore))$"
)


def _real_avro_files(conformance_dir: Path) -> list[tuple[str, str, bytes]]:
    out = []
    for z in sorted(conformance_dir.glob("*/*.zip")):
        with zipfile.ZipFile(z) as zf:
            for name in zf.namelist():
                if "__MACOSX" in name or "/.hoodie/" not in name or "/archived/" in name or "/history/" in name:
                    continue
                if _AVRO_NAME.search(name.rsplit("/", 1)[-1]):
                    data = zf.read(name)
                    if data:
                        out.append((z.name, name, data))
    return out


@pytest.fixture(scope="module")
def real_avro_files(conformance_dir: Path) -> list[tuple[str, str, bytes]]:
    files = _real_avro_files(conformance_dir)
    kinds = {embedded_schema(d)["name"].rsplit(".", 1)[-1] for _, _, d in files}
    # What the conformance data holds today; if it grows, this only asserts a lower bound.
    assert {"HoodieRequestedReplaceMetadata", "HoodieRollbackPlan", "HoodieRollbackMetadata",
            "HoodieCompactionPlan"} <= kinds
    return files


def test_every_real_avro_timeline_file_parses(real_avro_files) -> None:
    for zip_name, entry, data in real_avro_files:
        schema = embedded_schema(data, file_name=entry)
        assert schema["name"].startswith(NAMESPACE + "."), f"{zip_name}:{entry}"
        record = read_avro_metadata(data, file_name=entry)
        assert isinstance(record, dict) and record.keys() == {f["name"] for f in schema["fields"]}


def test_real_files_of_modelled_kinds_resolve_both_ways(real_avro_files) -> None:
    """A real file resolves against our schema, and our file resolves against the real (writer) schema, as a
    Java reader with that compiled class would read it."""
    checked = 0
    for zip_name, entry, data in real_avro_files:
        real_schema = embedded_schema(data)
        kind = real_schema["name"].rsplit(".", 1)[-1]
        if kind not in SCHEMAS:
            continue
        ours = read_avro_metadata(data, kind, file_name=entry)
        assert ours.keys() == {f["name"] for f in SCHEMAS[kind]["fields"]}, f"{zip_name}:{entry}"
        written = write_avro_metadata(kind, ours)
        assert read_avro_metadata(written) == ours
        back = next(fastavro.reader(io.BytesIO(written), reader_schema=real_schema))
        assert {k: back[k] for k in ours} == ours, f"{zip_name}:{entry}"
        checked += 1
    assert checked >= 8


def test_v6_replace_requested_is_reproduced_byte_for_byte(unzip_table) -> None:
    base = unzip_table("cow_v6_simplekeygen_nonhivestyle_overwritetable")
    data = (base / ".hoodie" / "20240707001303088.replacecommit.requested").read_bytes()
    record = read_avro_metadata(data, "HoodieRequestedReplaceMetadata")
    assert record == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    assert fastavro.reader(io.BytesIO(data)).metadata["avro.schema"] == schema_text("HoodieRequestedReplaceMetadata")
    # Only the random sync marker (the last 16 bytes, also after the header) differs between writers.
    assert write_avro_metadata("HoodieRequestedReplaceMetadata", record, sync_marker=data[-16:]) == data
    assert write_avro_metadata(f"{NAMESPACE}.HoodieRequestedReplaceMetadata", record, sync_marker=data[-16:]) == data


def test_real_rollback_plan_and_metadata(conformance_dir: Path) -> None:
    """The only real rollback files are from Hudi 1.x (layout 2); the records are the same as in 0.15."""
    with zipfile.ZipFile(conformance_dir / "v8_v9" / "mor_avrolog_v9_nonpartitioned_rollback.zip") as zf:
        names = [n for n in zf.namelist() if "/.hoodie/timeline/" in n and "metadata/" not in n]
        (plan_name,) = [n for n in names if n.endswith(".rollback.requested")]
        (meta_name,) = [n for n in names if n.endswith(".rollback")]
        plan = read_avro_metadata(zf.read(plan_name), "HoodieRollbackPlan", file_name=plan_name)
        meta = read_avro_metadata(zf.read(meta_name), "HoodieRollbackMetadata", file_name=meta_name)
    failed = plan["instantToRollback"]["commitTime"]
    assert plan["instantToRollback"]["action"] == "deltacommit" and plan["version"] == 1
    (request,) = plan["RollbackRequests"]
    assert request["partitionPath"] == "" and request["fileId"] == "" and request["latestBaseInstant"] == ""
    assert request["filesToBeDeleted"][0].endswith(f"_{failed}.parquet") and request["logBlocksToBeDeleted"] == {}
    assert meta["commitsRollback"] == [failed] and meta["totalFilesDeleted"] == 1 and meta["version"] == 1
    assert meta["instantsRollback"] == [{"commitTime": failed, "action": "deltacommit"}]
    partition = meta["partitionMetadata"][""]
    assert partition["successDeleteFiles"] == request["filesToBeDeleted"] and partition["failedDeleteFiles"] == []
    assert partition["logFilesFromFailedCommit"] == {} and partition["rollbackLogFiles"] == {}
    assert meta_name.rsplit("/", 1)[-1].startswith(meta["startRollbackTime"])


SAMPLES = {
    "HoodieRollbackPlan": {
        "instantToRollback": {"commitTime": "20240101000000000", "action": "deltacommit"},
        "RollbackRequests": [
            {"partitionPath": "p=1", "fileId": "", "latestBaseInstant": "",
             "filesToBeDeleted": ["/t/p=1/f-0_0-1-2_20240101000000000.parquet"], "logBlocksToBeDeleted": {}},
            {"partitionPath": "p=1", "fileId": "g-0", "latestBaseInstant": "20231231000000000",
             "filesToBeDeleted": [], "logBlocksToBeDeleted": {"/t/p=1/.g-0_20231231000000000.log.1_0-1-2": 11828}},
        ],
        "version": 1,
    },
    "HoodieRollbackMetadata": {
        "startRollbackTime": "20240101000000005", "timeTakenInMillis": 195, "totalFilesDeleted": 1,
        "commitsRollback": ["20240101000000000"],
        "partitionMetadata": {"p=1": {"partitionPath": "p=1", "successDeleteFiles": ["/t/p=1/f.parquet"],
                                      "failedDeleteFiles": [], "rollbackLogFiles": {"/t/p=1/.g.log.2_1-0-1": 105},
                                      "logFilesFromFailedCommit": {}}},
        "version": 1,
        "instantsRollback": [{"commitTime": "20240101000000000", "action": "deltacommit"}],
    },
    "HoodieCleanerPlan": {
        "earliestInstantToRetain": {"timestamp": "20240101000000000", "action": "commit", "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": "20240102000000000", "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": None, "version": 2,
        "filePathsToBeDeletedPerPartition": {"p=1": [{"filePath": "/t/p=1/f.parquet", "isBootstrapBaseFile": False}]},
        "partitionsToBeDeleted": [],
    },
    "HoodieCleanMetadata": {
        "startCleanTime": "20240103000000000", "timeTakenInMillis": 12, "totalFilesDeleted": 1,
        "earliestCommitToRetain": "", "lastCompletedCommitTimestamp": "20240102000000000",
        "partitionMetadata": {"p=1": {"partitionPath": "p=1", "policy": "KEEP_LATEST_COMMITS",
                                      "deletePathPatterns": ["f.parquet"], "successDeleteFiles": ["f.parquet"],
                                      "failedDeleteFiles": [], "isPartitionDeleted": False}},
        "version": 2, "bootstrapPartitionMetadata": None,
    },
    "HoodieCompactionPlan": {
        "operations": [{"baseInstantTime": "20240101000000000",
                        "deltaFilePaths": [".g-0_20240101000000000.log.1_0-1-2"],
                        "dataFilePath": "g-0_0-1-2_20240101000000000.parquet", "fileId": "g-0", "partitionPath": "p=1",
                        "metrics": {"TOTAL_LOG_FILES": 1.0}, "bootstrapFilePath": None}],
        "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": False,
    },
    "HoodieRequestedReplaceMetadata": {
        "operationType": "CLUSTER",
        "clusteringPlan": {
            "inputGroups": [{"slices": [{"dataFilePath": "/t/p/f.parquet", "deltaFilePaths": [], "fileId": "f-0",
                                         "partitionPath": "p", "bootstrapFilePath": None, "version": 1}],
                             "metrics": {"TOTAL_IO_MB": 1.5}, "numOutputFileGroups": 1, "extraMetadata": None,
                             "version": 1}],
            "strategy": {"strategyClassName": "S", "strategyParams": {}, "version": 1},
            "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True,
        },
        "extraMetadata": None, "version": 1,
    },
    "HoodieSavepointMetadata": {
        "savepointedBy": "me", "savepointedAt": 1704067200, "comments": "before the migration",
        "partitionMetadata": {"p=1": {"partitionPath": "p=1", "savepointDataFile": ["f.parquet"]}}, "version": 1,
    },
    "HoodieRestorePlan": {
        "instantsToRollback": [{"commitTime": "20240102000000000", "action": "deltacommit"}], "version": 2,
        "savepointToRestoreTimestamp": "20240101000000000",
    },
}
SAMPLES["HoodieRestoreMetadata"] = {
    "startRestoreTime": "20240103000000000", "timeTakenInMillis": 12, "instantsToRollback": ["20240102000000000"],
    "hoodieRestoreMetadata": {"20240102000000000": [{
        "startRollbackTime": "20240103000000000", "timeTakenInMillis": 3, "totalFilesDeleted": 1,
        "commitsRollback": ["20240102000000000"],
        "partitionMetadata": {"p=1": {"partitionPath": "p=1", "successDeleteFiles": ["p=1/f.parquet"],
                                      "failedDeleteFiles": [], "rollbackLogFiles": None,
                                      "logFilesFromFailedCommit": None}},
        "version": 1, "instantsRollback": [{"commitTime": "20240102000000000", "action": "deltacommit"}]}]},
    "version": 1, "restoreInstantInfo": [{"commitTime": "20240102000000000", "action": "deltacommit"}],
    "extraMetadata": None,
}
_WRITE_STAT = {
    "fileId": "g-0", "path": "p=1/.g-0_20240101000000000.log.1_0-1-2", "prevCommit": "20240101000000000",
    "numWrites": 2, "numDeletes": 1, "numUpdateWrites": 2, "totalWriteBytes": 900, "totalWriteErrors": 0,
    "partitionPath": "p=1", "totalLogRecords": 0, "totalLogFiles": None, "totalUpdatedRecordsCompacted": 0,
    "numInserts": 0, "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
    "fileSizeInBytes": 900, "logVersion": 1, "logOffset": 0, "baseFile": "", "logFiles": [".g-0_1.log.1_0-1-2"],
    "cdcStats": None, "prevBaseFile": None, "minEventTime": None, "maxEventTime": None,
    "runtimeStats": {"totalScanTime": 0, "totalCreateTime": 0, "totalUpsertTime": 12},
    "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0, "tempPath": None,
    "numUpdates": 0,
}
# Timeline layout 2 (Hudi 1.x) commit metadata.
SAMPLES["HoodieCommitMetadata"] = {
    "partitionToWriteStats": {"p=1": [_WRITE_STAT]}, "compacted": False, "extraMetadata": {"schema": "{}"},
    "version": None, "operationType": "UPSERT",
}
SAMPLES["HoodieReplaceCommitMetadata"] = {
    **SAMPLES["HoodieCommitMetadata"], "operationType": "INSERT_OVERWRITE", "partitionToReplaceFileIds": {"p=1": ["g-1"]},
}


def _strings_are_java_strings(schema: object) -> bool:
    """Every string type in the schema carries "avro.java.string":"String", as Hudi's generated classes write."""
    if schema == "string":
        return False
    if isinstance(schema, list):
        return all(_strings_are_java_strings(s) for s in schema)
    if isinstance(schema, dict):
        if schema.get("type") == "string" and schema.get("avro.java.string") != "String":
            return False
        if schema.get("type") == "map" and schema.get("avro.java.string") != "String":
            return False
        parts = [f["type"] for f in schema.get("fields", [])] + [schema[k] for k in ("items", "values") if k in schema]
        return all(_strings_are_java_strings(p) for p in parts)
    return True


def test_samples_cover_every_kind() -> None:
    assert SAMPLES.keys() == SCHEMAS.keys()


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_write_then_read_each_kind(kind: str) -> None:
    data = write_avro_metadata(kind, SAMPLES[kind])
    assert data.startswith(b"Obj\x01")
    avro = fastavro.reader(io.BytesIO(data))
    assert avro.codec == "null" and "avro.codec" not in avro.metadata
    assert avro.writer_schema["name"] == f"{NAMESPACE}.{kind}"
    assert json.loads(avro.metadata["avro.schema"]) == SCHEMAS[kind]
    assert _strings_are_java_strings(SCHEMAS[kind])
    assert len(list(avro)) == 1
    assert read_avro_metadata(data) == SAMPLES[kind]
    assert read_avro_metadata(data, kind) == SAMPLES[kind]


def test_missing_fields_with_defaults_are_filled() -> None:
    instant = {"commitTime": "1" * 17, "action": "commit"}
    data = write_avro_metadata("HoodieRollbackPlan", {"instantToRollback": instant})
    assert read_avro_metadata(data) == {
        "instantToRollback": instant, "RollbackRequests": None, "version": 1,
    }


def test_bad_records_and_kinds_raise() -> None:
    with pytest.raises(TimelineError, match="HoodieCleanMetadata record does not fit"):
        write_avro_metadata("HoodieCleanMetadata", {"startCleanTime": "1"})
    with pytest.raises(TimelineError, match="HoodieRollbackPlan record does not fit"):
        write_avro_metadata("HoodieRollbackPlan", {"version": "one"})
    with pytest.raises(TimelineError, match="unknown Avro timeline record 'HoodieCommitMetadataV3'"):
        write_avro_metadata("HoodieCommitMetadataV3", {})
    with pytest.raises(TimelineError, match="16 bytes"):
        write_avro_metadata("HoodieRollbackPlan", {}, sync_marker=b"x")


def test_bad_files_raise_naming_the_file() -> None:
    plan = write_avro_metadata("HoodieCompactionPlan", SAMPLES["HoodieCompactionPlan"])
    with pytest.raises(TimelineError, match=r"1\.clean\.requested: holds a \S+\.HoodieCompactionPlan"):
        read_avro_metadata(plan, "HoodieCleanerPlan", file_name="1.clean.requested")
    with pytest.raises(TimelineError, match="x.rollback: empty file"):
        read_avro_metadata(b"", file_name="x.rollback")
    with pytest.raises(TimelineError, match="x.rollback: not an Avro container"):
        read_avro_metadata(b'{"json": 1}', file_name="x.rollback")
    with pytest.raises(TimelineError, match="x.rollback: "):
        read_avro_metadata(plan[:-30], file_name="x.rollback")
    with pytest.raises(TimelineError, match="x.rollback: "):
        read_avro_metadata(plan[:40], file_name="x.rollback")


def test_avro_kind_for_instants() -> None:
    assert avro_kind_for(Action.ROLLBACK, State.REQUESTED) == "HoodieRollbackPlan"
    assert avro_kind_for("rollback", State.INFLIGHT) is None
    assert avro_kind_for(Action.ROLLBACK, State.COMPLETED) == "HoodieRollbackMetadata"
    assert avro_kind_for(Action.CLEAN, State.INFLIGHT) == "HoodieCleanerPlan"
    assert avro_kind_for(Action.CLEAN, State.COMPLETED) == "HoodieCleanMetadata"
    assert avro_kind_for(Action.COMPACTION, State.REQUESTED) == "HoodieCompactionPlan"
    assert avro_kind_for(Action.LOG_COMPACTION, State.REQUESTED) == "HoodieCompactionPlan"
    assert avro_kind_for(Action.COMPACTION, State.INFLIGHT) is None
    assert avro_kind_for(Action.REPLACE_COMMIT, State.REQUESTED) == "HoodieRequestedReplaceMetadata"
    assert avro_kind_for(Action.REPLACE_COMMIT, State.INFLIGHT) is None
    assert avro_kind_for(Action.SAVEPOINT, State.COMPLETED) == "HoodieSavepointMetadata"
    assert avro_kind_for(Action.RESTORE, State.REQUESTED) == "HoodieRestorePlan"
    assert avro_kind_for(Action.RESTORE, State.COMPLETED) == "HoodieRestoreMetadata"
    assert avro_kind_for(Action.COMMIT, State.COMPLETED) is None
