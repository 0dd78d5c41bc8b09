"""Avro timeline files: plans and metadata of rollback, clean, compaction, replace, savepoint and restore instants.

Each file is an Avro Object Container File holding one record, written by Hudi's generated classes: the
embedded schema has namespace `org.apache.hudi.avro.model`, `"avro.java.string":"String"` on strings, codec
null (Hudi leaves the `avro.codec` key out). Java readers resolve the embedded writer schema against their
compiled reader schema, so record full names must match and reader fields missing here need defaults there.

The schemas below are the table-version-6 (Hudi 0.14/0.15) ones: HoodieRequestedReplaceMetadata and the
rollback schemas as embedded in real files; the clean, compaction and savepoint ones from Hudi 0.14's `.avsc`
files (FORMAT.md: Rollback, Clean, Compaction, Savepoint). Schema text is written in Java's `Schema.toString()`
form (compact JSON, Java's key order), so a file written here differs from Hudi's only in the random sync marker.
"""
from __future__ import annotations

import io
import json
import os
from typing import TYPE_CHECKING, Any

import fastavro
from fastavro.validation import ValidationError, validate

from hudi_engine.errors import TimelineError
from hudi_engine.timeline.instant import Action, State

if TYPE_CHECKING:
    # The class behind `fastavro.reader`, which mypy sees as a variable (not a type).
    from fastavro._read import reader as AvroReader
    from fastavro.types import Schema

NAMESPACE = "org.apache.hudi.avro.model"

_NO_DEFAULT = object()
_STR = {"type": "string", "avro.java.string": "String"}


def _field(name: str, type_: Any, default: Any = _NO_DEFAULT, doc: str | None = None) -> dict:
    # Java writes a field as name, type, doc, default: keep that key order for byte-identical schema text.
    f: dict[str, Any] = {"name": name, "type": type_}
    if doc is not None:
        f["doc"] = doc
    if default is not _NO_DEFAULT:
        f["default"] = default
    return f


def _opt(type_: Any) -> list:
    return ["null", type_]


def _array(items: Any, **props: Any) -> dict:
    return {"type": "array", "items": items, **props}


def _map(values: Any) -> dict:
    return {"type": "map", "values": values, "avro.java.string": "String"}


def _record(name: str, fields: list[dict], namespace: str | None = None) -> dict:
    r: dict[str, Any] = {"type": "record", "name": name}
    if namespace:
        r["namespace"] = namespace
    r["fields"] = fields
    return r


_VERSION_1 = _field("version", ["int", "null"], 1)


def _instant_info() -> dict:
    return _record("HoodieInstantInfo", [_field("commitTime", _STR), _field("action", _STR)])


# --- rollback (FORMAT.md, Rollback; field lists as embedded in real rollback files) -----------------------------------

ROLLBACK_PLAN = _record(
    "HoodieRollbackPlan",
    [
        _field("instantToRollback", _opt(_instant_info()), None, doc="Hoodie instant that needs to be rolled back"),
        _field(
            "RollbackRequests",
            _opt(
                _array(
                    _record(
                        "HoodieRollbackRequest",
                        [
                            _field("partitionPath", _STR),
                            _field("fileId", _opt(_STR), None),
                            _field("latestBaseInstant", _opt(_STR), None),
                            # Hudi's schema carries a stray "default" inside the array type too; kept verbatim.
                            _field("filesToBeDeleted", _array(_STR, default=[]), []),
                            _field("logBlocksToBeDeleted", _opt(_map("long")), None),
                        ],
                    )
                )
            ),
            None,
        ),
        _VERSION_1,
    ],
    NAMESPACE,
)

ROLLBACK_METADATA = _record(
    "HoodieRollbackMetadata",
    [
        _field("startRollbackTime", _STR),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("commitsRollback", _array(_STR)),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieRollbackPartitionMetadata",
                    [
                        _field("partitionPath", _STR),
                        _field("successDeleteFiles", _array(_STR)),
                        _field("failedDeleteFiles", _array(_STR)),
                        _field("rollbackLogFiles", _opt(_map("long")), None),
                        _field("logFilesFromFailedCommit", _opt(_map("long")), None),
                    ],
                )
            ),
        ),
        _VERSION_1,
        _field("instantsRollback", _array(_instant_info(), default=[]), []),
    ],
    NAMESPACE,
)

# --- clean (FORMAT.md, Clean) -----------------------------------------------------------------------------------------

CLEANER_PLAN = _record(
    "HoodieCleanerPlan",
    [
        _field(
            "earliestInstantToRetain",
            _opt(
                _record(
                    "HoodieActionInstant",
                    [_field("timestamp", _STR), _field("action", _STR), _field("state", _STR)],
                )
            ),
            None,
        ),
        _field("lastCompletedCommitTimestamp", _STR, ""),
        _field("policy", _STR),
        _field("filesToBeDeletedPerPartition", _opt(_map(_array(_STR))), None),  # deprecated (plan version 1)
        _VERSION_1,
        _field(
            "filePathsToBeDeletedPerPartition",
            _opt(
                _map(
                    _array(
                        _record(
                            "HoodieCleanFileInfo",
                            [
                                _field("filePath", _opt(_STR), None),
                                _field("isBootstrapBaseFile", _opt("boolean"), None),
                            ],
                        )
                    )
                )
            ),
            None,
        ),
        _field("partitionsToBeDeleted", _opt(_array(_STR)), None),
    ],
    NAMESPACE,
)

CLEAN_METADATA = _record(
    "HoodieCleanMetadata",
    [
        _field("startCleanTime", _STR),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("earliestCommitToRetain", _STR),
        _field("lastCompletedCommitTimestamp", _STR, ""),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieCleanPartitionMetadata",
                    [
                        _field("partitionPath", _STR),
                        _field("policy", _STR),
                        _field("deletePathPatterns", _array(_STR)),
                        _field("successDeleteFiles", _array(_STR)),
                        _field("failedDeleteFiles", _array(_STR)),
                        _field("isPartitionDeleted", _opt("boolean"), None),
                    ],
                )
            ),
        ),
        _VERSION_1,
        _field("bootstrapPartitionMetadata", _opt(_map("HoodieCleanPartitionMetadata")), None),
    ],
    NAMESPACE,
)

# --- compaction (FORMAT.md, Compaction; same operation/strategy records as in real Hudi compaction plans) -------------

COMPACTION_PLAN = _record(
    "HoodieCompactionPlan",
    [
        _field(
            "operations",
            _opt(
                _array(
                    _record(
                        "HoodieCompactionOperation",
                        [
                            _field("baseInstantTime", _opt(_STR)),
                            _field("deltaFilePaths", _opt(_array(_STR)), None),
                            _field("dataFilePath", _opt(_STR), None),
                            _field("fileId", _opt(_STR)),
                            _field("partitionPath", _opt(_STR), None),
                            _field("metrics", _opt(_map("double")), None),
                            _field("bootstrapFilePath", _opt(_STR), None),
                        ],
                    )
                )
            ),
            None,
        ),
        _field("extraMetadata", _opt(_map(_STR)), None),
        _VERSION_1,
        _field(
            "strategy",
            _opt(
                _record(
                    "HoodieCompactionStrategy",
                    [
                        _field(
                            "compactorClassName",
                            _opt(_STR),
                            None,
                            doc="The class name that is provided here should extend CompactionExecutionStrategy "
                            "abstract class, idea is that the plan generator will also provide the execution "
                            "strategy to use.",
                        ),
                        _field(
                            "strategyParams",
                            _opt(_map(_STR)),
                            None,
                            doc="These parameters play a key role in determining which action type it is i.e. "
                            "compaction or logcompaction and it will also include configs that determine how "
                            "compaction needs to be executed.",
                        ),
                        _VERSION_1,
                    ],
                )
            ),
            None,
        ),
        _field("preserveHoodieMetadata", ["boolean", "null"], False),
    ],
    NAMESPACE,
)

# --- replace commit requested (FORMAT.md, Replace commits; exactly the schema embedded in real 0.14/0.15 files) -------

REQUESTED_REPLACE_METADATA = _record(
    "HoodieRequestedReplaceMetadata",
    [
        _field("operationType", _opt(_STR), None),
        _field(
            "clusteringPlan",
            _opt(
                _record(
                    "HoodieClusteringPlan",
                    [
                        _field(
                            "inputGroups",
                            _opt(
                                _array(
                                    _record(
                                        "HoodieClusteringGroup",
                                        [
                                            _field(
                                                "slices",
                                                _opt(
                                                    _array(
                                                        _record(
                                                            "HoodieSliceInfo",
                                                            [
                                                                _field("dataFilePath", _opt(_STR), None),
                                                                _field("deltaFilePaths", _opt(_array(_STR)), None),
                                                                _field("fileId", _opt(_STR)),
                                                                _field("partitionPath", _opt(_STR), None),
                                                                _field("bootstrapFilePath", _opt(_STR), None),
                                                                _VERSION_1,
                                                            ],
                                                        )
                                                    )
                                                ),
                                                None,
                                            ),
                                            _field("metrics", _opt(_map("double")), None),
                                            _field("numOutputFileGroups", ["int", "null"], 1),
                                            _field("extraMetadata", _opt(_map(_STR)), None),
                                            _VERSION_1,
                                        ],
                                    )
                                )
                            ),
                            None,
                        ),
                        _field(
                            "strategy",
                            _opt(
                                _record(
                                    "HoodieClusteringStrategy",
                                    [
                                        _field("strategyClassName", _opt(_STR), None),
                                        _field("strategyParams", _opt(_map(_STR)), None),
                                        _VERSION_1,
                                    ],
                                )
                            ),
                            None,
                        ),
                        _field("extraMetadata", _opt(_map(_STR)), None),
                        _VERSION_1,
                        _field("preserveHoodieMetadata", _opt("boolean"), None),
                    ],
                )
            ),
            None,
        ),
        _field("extraMetadata", _opt(_map(_STR)), None),
        _VERSION_1,
    ],
    NAMESPACE,
)

# --- savepoint (FORMAT.md, Savepoint) ---------------------------------------------------------------------------------

SAVEPOINT_METADATA = _record(
    "HoodieSavepointMetadata",
    [
        _field("savepointedBy", _STR),
        _field("savepointedAt", "long"),
        _field("comments", _STR),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieSavepointPartitionMetadata",
                    [_field("partitionPath", _STR), _field("savepointDataFile", _array(_STR))],
                )
            ),
        ),
        _VERSION_1,
    ],
    NAMESPACE,
)

# --- restore (FORMAT.md, Restore; HoodieRestorePlan.avsc and HoodieRestoreMetadata.avsc, named types inlined at
# their first use as Java's `Schema.toString()` does) -------------------------------------------------------------------

RESTORE_PLAN = _record(
    "HoodieRestorePlan",
    [
        _field("instantsToRollback", _array(_instant_info(), default=None), []),
        _field("version", ["int", "null"], 2),
        _field("savepointToRestoreTimestamp", [_STR, "null"], None),
    ],
    NAMESPACE,
)

RESTORE_METADATA = _record(
    "HoodieRestoreMetadata",
    [
        _field("startRestoreTime", _STR),
        _field("timeTakenInMillis", "long"),
        _field("instantsToRollback", _array(_STR)),
        _field("hoodieRestoreMetadata", _map(
            _array(["null", {k: v for k, v in ROLLBACK_METADATA.items() if k != "namespace"}], default=None,
                   name="hoodieRollbackMetadata"))),
        _VERSION_1,
        _field("restoreInstantInfo", _array("HoodieInstantInfo", default=None), []),
        _field("extraMetadata", _opt(_map(_STR)), None),
    ],
    NAMESPACE,
)

# --- commit metadata of timeline layout 2 (Hudi 1.x: HoodieCommitMetadata.avsc, as embedded in real files) -------------

def _write_stat() -> dict:
    def n(name: str, type_: Any) -> dict:
        return _field(name, _opt(type_), None)

    return _record("HoodieWriteStat", [
        n("fileId", _STR), n("path", _STR), n("prevCommit", _STR), n("numWrites", "long"), n("numDeletes", "long"),
        n("numUpdateWrites", "long"), n("totalWriteBytes", "long"), n("totalWriteErrors", "long"),
        n("partitionPath", _STR), n("totalLogRecords", "long"), n("totalLogFiles", "long"),
        n("totalUpdatedRecordsCompacted", "long"), n("numInserts", "long"), n("totalLogBlocks", "long"),
        n("totalCorruptLogBlock", "long"), n("totalRollbackBlocks", "long"), n("fileSizeInBytes", "long"),
        n("logVersion", "int"), n("logOffset", "long"), n("baseFile", _STR),
        n("logFiles", _array(_STR, default=None)),
        n("cdcStats", {"type": "map", "values": "long", "avro.java.string": "String", "default": None}),
        n("prevBaseFile", _STR), n("minEventTime", "long"), n("maxEventTime", "long"),
        n("runtimeStats", _record("HoodieRuntimeStats", [
            n("totalScanTime", "long"), n("totalCreateTime", "long"), n("totalUpsertTime", "long")])),
        n("totalLogFilesCompacted", "long"), n("totalLogReadTimeMs", "long"), n("totalLogSizeCompacted", "long"),
        n("tempPath", _STR), n("numUpdates", "long"),
    ])


def _commit_metadata(name: str, replace: bool) -> dict:
    extra_map = _map(_STR) if replace else {**_map(_STR), "default": None}
    fields = [
        _field("partitionToWriteStats", _opt(_map(_array(_write_stat()))), None),
        _field("compacted", _opt("boolean"), None),
        _field("extraMetadata", _opt(extra_map), None),
        _VERSION_1,
        _field("operationType", _opt(_STR), None),
    ]
    if replace:
        fields.append(_field("partitionToReplaceFileIds", _opt(_map(_array(_STR))), None))
    return _record(name, fields, NAMESPACE)


COMMIT_METADATA = _commit_metadata("HoodieCommitMetadata", replace=False)
REPLACE_COMMIT_METADATA = _commit_metadata("HoodieReplaceCommitMetadata", replace=True)

# Top-level records that are timeline files, by short name (the `kind` of read/write below).
SCHEMAS: dict[str, dict] = {
    s["name"]: s
    for s in (
        ROLLBACK_PLAN,
        ROLLBACK_METADATA,
        CLEANER_PLAN,
        CLEAN_METADATA,
        COMPACTION_PLAN,
        REQUESTED_REPLACE_METADATA,
        SAVEPOINT_METADATA,
        RESTORE_PLAN,
        RESTORE_METADATA,
        COMMIT_METADATA,
        REPLACE_COMMIT_METADATA,
    )
}

# Which record a timeline file holds, by (action, state); other files are JSON or empty.
_KIND_BY_INSTANT: dict[tuple[Action, State], str] = {
    (Action.ROLLBACK, State.REQUESTED): "HoodieRollbackPlan",
    (Action.ROLLBACK, State.COMPLETED): "HoodieRollbackMetadata",
    (Action.CLEAN, State.REQUESTED): "HoodieCleanerPlan",
    (Action.CLEAN, State.INFLIGHT): "HoodieCleanerPlan",
    (Action.CLEAN, State.COMPLETED): "HoodieCleanMetadata",
    (Action.COMPACTION, State.REQUESTED): "HoodieCompactionPlan",
    (Action.LOG_COMPACTION, State.REQUESTED): "HoodieCompactionPlan",
    (Action.REPLACE_COMMIT, State.REQUESTED): "HoodieRequestedReplaceMetadata",
    (Action.CLUSTERING, State.REQUESTED): "HoodieRequestedReplaceMetadata",  # layout 2's clustering plan
    (Action.SAVEPOINT, State.COMPLETED): "HoodieSavepointMetadata",
    (Action.RESTORE, State.REQUESTED): "HoodieRestorePlan",
    (Action.RESTORE, State.COMPLETED): "HoodieRestoreMetadata",
}

# Plan/metadata versions Hudi 0.14/0.15 write (plans with file names, not paths, are version 2).
CURRENT_VERSIONS = {
    "HoodieRollbackPlan": 1,
    "HoodieRollbackMetadata": 1,
    "HoodieCleanerPlan": 2,
    "HoodieCleanMetadata": 2,
    "HoodieCompactionPlan": 2,
    "HoodieSavepointMetadata": 1,
    "HoodieRestorePlan": 2,
    "HoodieRestoreMetadata": 1,
}


def avro_kind_for(action: Action | str, state: State) -> str | None:
    """The Avro record a timeline file of this action and state holds; None if it holds JSON or nothing."""
    return _KIND_BY_INSTANT.get((Action(action), State(state)))


def _kind_name(kind: str) -> str:
    short = kind.removeprefix(NAMESPACE + ".")
    if short not in SCHEMAS:
        raise TimelineError(f"unknown Avro timeline record {kind!r}; expected one of {', '.join(SCHEMAS)}")
    return short


_PARSED: dict[str, Schema] = {}


def _parsed(kind: str) -> Schema:
    if kind not in _PARSED:
        _PARSED[kind] = fastavro.parse_schema(SCHEMAS[kind], _write_hint=False)
    return _PARSED[kind]


def schema_text(kind: str) -> str:
    """The schema as Java's `Schema.toString()` prints it: what goes under `avro.schema`."""
    return json.dumps(SCHEMAS[_kind_name(kind)], separators=(",", ":"))


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _avro_bytes(b: bytes) -> bytes:
    return _zigzag(len(b)) + b


def write_avro_metadata(kind: str, record: dict, *, sync_marker: bytes | None = None, checked: bool = True) -> bytes:
    """One-record Avro container file of `kind` (e.g. "HoodieRollbackPlan"), laid out as Hudi writes it.

    Missing fields that have defaults take them; a record that does not fit the schema raises TimelineError.
    `checked=False` leaves out the field-by-field validation (whose error names the field) for records built from
    typed values, such as every commit's metadata: the encoder still refuses a value of the wrong type.
    """
    kind = _kind_name(kind)
    parsed = _parsed(kind)
    if checked:
        try:
            validate(record, parsed, raise_errors=True)
        except ValidationError as e:
            raise TimelineError(f"{kind} record does not fit its schema: {e}") from None
    body = io.BytesIO()
    try:
        fastavro.schemaless_writer(body, parsed, record)
    except (ValueError, TypeError, KeyError) as e:
        raise TimelineError(f"{kind} record does not fit its schema: {e}") from None
    sync = sync_marker if sync_marker is not None else os.urandom(16)
    if len(sync) != 16:
        raise TimelineError(f"Avro sync marker must be 16 bytes, got {len(sync)}")
    data = body.getvalue()
    # Header: magic, metadata map with only avro.schema (Hudi writes no avro.codec: null is the default), sync.
    meta = _zigzag(1) + _avro_bytes(b"avro.schema") + _avro_bytes(schema_text(kind).encode()) + _zigzag(0)
    header = b"Obj\x01" + meta
    return header + sync + _zigzag(1) + _zigzag(len(data)) + data + sync


def _open(data: bytes, file_name: str, reader_schema: Schema | None = None) -> AvroReader:
    if not data:
        raise TimelineError(f"{file_name}: empty file, expected an Avro container with one record")
    if data[:4] != b"Obj\x01":
        raise TimelineError(f"{file_name}: not an Avro container file (starts with {data[:4]!r}, expected b'Obj\\x01')")
    try:
        return fastavro.reader(io.BytesIO(data), reader_schema=reader_schema)
    except Exception as e:  # noqa: BLE001 - fastavro raises assorted errors for bad headers and schemas
        raise TimelineError(f"{file_name}: unreadable Avro header or schema ({type(e).__name__}: {e})") from None


def embedded_schema(data: bytes, *, file_name: str = "Avro metadata") -> dict:
    """The writer schema stored in an Avro timeline file (a record schema)."""
    schema = _open(data, file_name).writer_schema
    if not isinstance(schema, dict):
        raise TimelineError(f"{file_name}: embedded schema {schema!r} is not an Avro record schema")
    return schema


def read_avro_metadata(data: bytes, kind: str | None = None, *, file_name: str = "Avro metadata") -> dict:
    """The (first) record of an Avro timeline file.

    Without `kind` the file's own schema is used. With `kind`, the embedded record name must be that record, and
    the record is resolved against this module's schema (as Java resolves against its compiled classes): fields
    this schema lacks are dropped, fields the writer lacked take their defaults.
    """
    reader_schema = None
    if kind is not None:
        kind = _kind_name(kind)
        name = embedded_schema(data, file_name=file_name).get("name", "")
        if name != f"{NAMESPACE}.{kind}":
            raise TimelineError(f"{file_name}: holds a {name or 'nameless'} record, expected {NAMESPACE}.{kind}")
        reader_schema = _parsed(kind)
    avro = _open(data, file_name, reader_schema)
    try:
        record = next(iter(avro), None)
    except Exception as e:  # noqa: BLE001 - fastavro raises assorted errors for a malformed record
        raise TimelineError(f"{file_name}: cannot decode the Avro record ({type(e).__name__}: {e})") from None
    if record is None:
        raise TimelineError(f"{file_name}: Avro container holds no record, expected one")
    if not isinstance(record, dict):
        raise TimelineError(f"{file_name}: holds {record!r}, expected an Avro record")
    return record
