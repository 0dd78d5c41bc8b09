"""Every `hoodie.properties` key and timeline/storage state another Hudi writer may leave, and what this engine does
about it: honoured by every writer and table service, refused before the first file, or of no effect on what we
write. One declared row each (`PROPERTIES`, `STATES`); `check_writable` applies them (docs/table-features.md).

Keys follow `HoodieTableConfig` of Hudi 0.14, 0.15 and 1.x (with `HoodieTableMetaClient` and `HoodieTableVersion`).
What this engine has no rule for is refused by name, never written over: a key this table does not declare (a newer
Hudi's), an unknown value of a declared key, an instant file of an unknown action or state. Reads are not checked.
Pure: storage only through `Storage`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from hudi_engine.errors import HudiError, UnsupportedTableFeatureError
from hudi_engine.keygen import resolve_key_generator_class
from hudi_engine.location import TableLocation
from hudi_engine.payload import payload_for
from hudi_engine.storage import Storage
from hudi_engine.table_config import (
    DEFAULT_RECORD_MERGER_STRATEGY,
    TableConfig,
)
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant


class Decision(Enum):
    HONOURED = "honoured"  # every writer and table service of ours does what Hudi does with it
    REFUSED = "refused"  # writers and table services stop before the first file (for the values said)
    NO_EFFECT = "no effect"  # nothing we write depends on it (Hudi 0.x ignores it, or it only concerns readers)
    OTHER_PART = "honoured: see"  # implemented by another part of the engine (its docs page in `see`)


# ---------------------------------------------------------------------------------------------------- value checks
# Each returns why a value is refused (None: accepted). A check sees the raw string as stored.
ValueCheck = Callable[[str, TableConfig], "str | None"]


def _any(_: str, __: TableConfig) -> str | None:
    return None


def _one_of(*allowed: str, refused: Mapping[str, str] | None = None) -> ValueCheck:
    """Accepted: `allowed` (case-insensitive, as Java's enum valueOf after toUpperCase); `refused` values get their
    reason; anything else is an unknown value."""
    def check(value: str, _: TableConfig) -> str | None:
        v = value.strip().upper()
        if refused and v in refused:
            return refused[v]
        if v in allowed:
            return None
        return f"is not a value this engine knows (expected one of {', '.join(allowed)})"
    return check


def _boolean(refuse_true: str | None = None) -> ValueCheck:
    """`true`/`false` (any case); with `refuse_true`, true is refused for that reason."""
    return _one_of("TRUE", "FALSE", refused={"TRUE": refuse_true} if refuse_true else None)


def _integer(value: str, _: TableConfig) -> str | None:
    return None if value.strip().isdigit() else "is not a non-negative integer"


def _refused_if_set(reason: str) -> ValueCheck:
    def check(value: str, _: TableConfig) -> str | None:
        return reason if value.strip() else None
    return check


def _payload_class(value: str, _: TableConfig) -> str | None:
    try:
        payload_for(value.strip())
    except HudiError as e:
        return f"names a payload this engine does not implement ({e})"
    return None


# RecordPayloadType (0.14+): the payload a table names by type when it names no class.
_PAYLOAD_TYPES = {
    "AWS_DMS_AVRO": "AWSDmsAvroPayload", "HOODIE_AVRO": "HoodieAvroPayload",
    "HOODIE_AVRO_DEFAULT": "DefaultHoodieRecordPayload", "EVENT_TIME_AVRO": "EventTimeAvroPayload",
    "OVERWRITE_NON_DEF_LATEST_AVRO": "OverwriteNonDefaultsWithLatestAvroPayload",
    "OVERWRITE_LATEST_AVRO": "OverwriteWithLatestAvroPayload", "PARTIAL_UPDATE_AVRO": "PartialUpdateAvroPayload",
    "MYSQL_DEBEZIUM_AVRO": "MySqlDebeziumAvroPayload", "POSTGRES_DEBEZIUM_AVRO": "PostgresDebeziumAvroPayload",
    "HOODIE_METADATA": "HoodieMetadataPayload", "VALIDATE_DUPLICATE_AVRO": "ValidateDuplicateKeyPayload",
    "EXPRESSION_AVRO": "ExpressionPayload", "CUSTOM": "",
}


def _payload_type(value: str, table: TableConfig) -> str | None:
    # RecordPayloadType.getPayloadClassName: a named class wins; else the type picks the class. Our writers and readers
    # take the class only (else OverwriteWithLatestAvroPayload), so a type alone is accepted when it names that.
    kind = value.strip()
    if kind not in _PAYLOAD_TYPES:
        return f"is not a RecordPayloadType (expected one of {', '.join(_PAYLOAD_TYPES)})"
    if (table.get("hoodie.compaction.payload.class") or "").strip() or kind == "OVERWRITE_LATEST_AVRO":
        return None
    return (f"picks {_PAYLOAD_TYPES[kind] or 'a custom payload'} without hoodie.compaction.payload.class, which "
            "this engine reads the payload from")


def _key_generator(value: str, _: TableConfig) -> str | None:
    try:
        resolve_key_generator_class(value)
    except HudiError as e:
        return f"is a key generator this engine does not implement ({e})"
    return None


# Hudi 1.x's built-in strategy ids (HoodieRecordMerger): commit-time ordering and payload based; event-time ordering is
# DEFAULT_RECORD_MERGER_STRATEGY, 0.x's default.
_BUILTIN_MERGE_STRATEGIES = frozenset({DEFAULT_RECORD_MERGER_STRATEGY, "ce9acb64-bde0-424c-9b91-f6ebba25356d",
                                       "00000000-0000-0000-0000-000000000000"})


def _merger_strategy(value: str, _: TableConfig) -> str | None:
    # 0.x: HoodieRecordMerger.DEFAULT_MERGER_STRATEGY_UUID is Hudi's own Avro merger (payload based); 1.x adds the
    # commit-time and payload-based ids of its merge modes. Another id is a custom HoodieRecordMerger, which only Java
    # can run.
    if value.strip() in ("", *_BUILTIN_MERGE_STRATEGIES):
        return None
    return "names a custom record merger (HoodieRecordMerger) that only Java Hudi runs"


def java_only_merger(table: TableConfig) -> str | None:
    """`key=value: why` when the table merges records with a custom HoodieRecordMerger (its strategy id, or the CUSTOM
    merge mode without a payload class) or a payload class this engine does not implement (a user's own
    HoodieRecordPayload, or Hudi's AWSDmsAvroPayload): readers that merge log records refuse it, since merging another
    way would answer other rows than Java Hudi (tests/java_tables.py: custom_merger_mor_v9, custom_payload_mor_v6 and
    _v9, dms_payload_mor_v6)."""
    payload = (table.get("hoodie.compaction.payload.class") or "").strip()
    why = _payload_class(payload, table) if payload else None
    if why:
        return f"hoodie.compaction.payload.class={payload} {why}"
    for key in ("hoodie.record.merge.strategy.id", "hoodie.compaction.record.merger.strategy"):
        value = (table.get(key) or "").strip()
        why = _merger_strategy(value, table)
        if why:
            return f"{key}={value} {why}"
    mode = (table.get("hoodie.record.merge.mode") or "").strip()
    why = _merge_mode(mode, table) if mode.upper() == "CUSTOM" else None
    return f"hoodie.record.merge.mode={mode} {why}" if why else None


def _merge_mode(value: str, table: TableConfig) -> str | None:
    mode = value.strip().upper()
    if mode in ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING"):
        return None
    if mode == "CUSTOM":
        # CUSTOM merges with the payload class (checked by its own row) or a custom merger (refused by its id).
        if (table.get("hoodie.compaction.payload.class") or "").strip():
            return None
        return "names no payload class (hoodie.compaction.payload.class): its custom merger runs only in Java Hudi"
    return "is not a value this engine knows (expected one of COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING, CUSTOM)"


def _partial_update_mode(value: str, table: TableConfig) -> str | None:
    mode = value.strip().upper()
    if mode in ("", "NONE"):
        return None
    if mode == "IGNORE_DEFAULTS" and table.record_merge_mode in ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING"):
        return None  # OverwriteNonDefaultsWithLatestAvroPayload / PartialUpdateAvroPayload (TableConfig.payload_class)
    if mode in ("KEEP_VALUES", "FILL_DEFAULTS", "IGNORE_DEFAULTS", "IGNORE_MARKERS", "FILL_UNAVAILABLE"):
        return _PARTIAL_MERGE
    return ("is not a value this engine knows (expected one of NONE, KEEP_VALUES, FILL_DEFAULTS, IGNORE_DEFAULTS, "
            "IGNORE_MARKERS, FILL_UNAVAILABLE)")


# ---------------------------------------------------------------------------------------------------- the rows

@dataclass(frozen=True)
class PropertyRow:
    key: str  # the hoodie.properties key (a prefix ends with '*')
    purpose: str  # what Hudi uses it for
    decision: Decision
    how: str  # how it is honoured or checked
    check: ValueCheck = _any
    alternatives: tuple[str, ...] = ()  # older names Hudi still reads (ConfigProperty.withAlternatives)
    see: str = ""  # the docs page of the part that implements an OTHER_PART row
    way_out: str = ""  # what a user does about a refusal (default: WAY_OUT)

    def matches(self, key: str) -> bool:
        if self.key.endswith("*"):
            return key.startswith(self.key[:-1])
        return key == self.key or key in self.alternatives


_V9_ONLY = "only table version 9 (Hudi 1.1) uses it"
_PARTIAL_MERGE = ("asks for Hudi 1.1's partial-update merging other than IGNORE_DEFAULTS under an ordering mode, which "
                  "this engine neither writes nor reads")
WAY_OUT = "turn the feature off with Hudi first, or let Java Hudi write this table"
# Rows we honour refuse only values we do not know: a typo, or a newer Hudi's value.
VALUE_WAY_OUT = "set a value Hudi and this engine both know (with Hudi), or let Java Hudi write this table"
_JAVA_CLASS = "let Java Hudi write this table: only Java runs that class"
UNDECLARED_KEY = ("is a key this engine has no rule for (a newer Hudi's feature, or a key nobody declared in "
                  "hudi_engine/table_features.py)")
UNDECLARED_WAY_OUT = ("write this table with the Hudi that set the key, or ask for the key to be declared (with its "
                      "decision) in hudi_engine/table_features.py")


def _rewrite(how: str = "without it") -> str:
    return f"let Java Hudi write this table, or rewrite it with this engine (dbt: --full-refresh) {how}".rstrip()


_REWRITE = _rewrite()

PROPERTIES: tuple[PropertyRow, ...] = (
    PropertyRow("hoodie.table.name", "table name (also the Avro record name)", Decision.HONOURED,
                "writes keep it; an option naming another table is refused (WriteConfig.for_table)"),
    PropertyRow("hoodie.database.name", "database part of the checksum; incremental-query scoping",
                Decision.HONOURED, "part of hoodie.table.checksum, kept on every config update"),
    PropertyRow("hoodie.table.type", "COPY_ON_WRITE or MERGE_ON_READ", Decision.HONOURED,
                "decides commit vs deltacommit, log files and compaction", _one_of("COPY_ON_WRITE", "MERGE_ON_READ")),
    PropertyRow("hoodie.table.version", "on-disk format version (HoodieTableVersion)", Decision.HONOURED,
                "6, 8 and 9 are written (8 and 9 with parquet base files only: require_writable); a table keeps its "
                "version; others are refused on load"),
    PropertyRow("hoodie.table.initial.version", "1.x: the version the table was created with", Decision.NO_EFFECT,
                "only upgrade/downgrade reads it; a new version 8/9 table gets it", _integer),
    PropertyRow("hoodie.timeline.layout.version", "timeline file layout", Decision.HONOURED,
                "layout 1 with version 6 (TableConfig.validate)", _one_of("0", "1", "2")),
    PropertyRow("hoodie.timeline.path", "1.x (layout 2): folder of the active timeline", Decision.HONOURED,
                "read and written in layout 2; writes need Hudi's default 'timeline' (require_writable)"),
    PropertyRow("hoodie.timeline.history.path", "1.x (layout 2): folder of the LSM history", Decision.HONOURED,
                "layout 2: archival writes the LSM history there, reads refuse instants archived into it"),
    PropertyRow("hoodie.archivelog.folder", "folder of the archived timeline under .hoodie", Decision.HONOURED,
                "archival writes and reads its archive files there"),
    PropertyRow("hoodie.table.precombine.field", "ordering field of two versions of a record", Decision.HONOURED,
                "the writers' and compaction's ordering field; a contradicting option is refused"),
    PropertyRow("hoodie.table.ordering.fields", "1.1 (version 9): ordering fields", Decision.HONOURED,
                "version 9's name of the precombine field: the writers' and compaction's ordering field"),
    PropertyRow("hoodie.table.recordkey.fields", "record key fields", Decision.OTHER_PART,
                "keys of every write; a table without them (auto-generated keys) is the keyless part's",
                see="keyless.md"),
    PropertyRow("hoodie.table.partition.fields", "partition fields (CustomKeyGenerator: name:TYPE)",
                Decision.HONOURED, "partition paths of every write (keygen.py)"),
    PropertyRow("hoodie.table.keygenerator.class", "key generator class", Decision.HONOURED,
                "keygen.py implements the built-in ones; any other class is refused", _key_generator, way_out=_JAVA_CLASS),
    PropertyRow("hoodie.table.keygenerator.type", "1.x: key generator type", Decision.HONOURED,
                "mapped to its class, as Hudi does; an unknown type is refused", _key_generator, way_out=_JAVA_CLASS),
    PropertyRow("hoodie.keygen.timebased.*", "TimestampBasedKeyGenerator settings persisted with the table "
                "(also hoodie.deltastreamer.keygen.timebased.*)", Decision.HONOURED,
                "keygen.py reads them; a bad value is refused when a key is built"),
    PropertyRow("hoodie.deltastreamer.keygen.timebased.*", "older name of hoodie.keygen.timebased.*",
                Decision.HONOURED, "keygen.py reads both prefixes"),
    PropertyRow("hoodie.keygen.datetime.parser.class", "TimestampBasedKeyGenerator's date parser",
                Decision.HONOURED, "only Hudi's default parser exists here",
                _one_of("ORG.APACHE.HUDI.KEYGEN.PARSER.HOODIEDATETIMEPARSER")),
    PropertyRow("hoodie.datasource.write.hive_style_partitioning", "partition folders as name=value",
                Decision.HONOURED, "partition paths of every write", _boolean()),
    PropertyRow("hoodie.datasource.write.partitionpath.urlencode", "URL-encoded partition values",
                Decision.HONOURED, "partition paths of every write", _boolean()),
    PropertyRow("hoodie.table.partition_extractor_class", "1.x: how catalog sync turns partition paths into values",
                Decision.NO_EFFECT, "nothing we write depends on it; our catalog sync takes "
                "hoodie.datasource.hive_sync.partition_extractor_class, or infers the extractor from the partitioning"),
    PropertyRow("hoodie.datasource.write.drop.partition.columns", "base files without the partition columns",
                Decision.REFUSED,
                "true is refused: our base files always carry the partition columns and our readers do not add "
                "them back from the path, so a Java reader would meet them twice",
                _boolean("is not supported: this engine writes the partition columns into every base file"),
                way_out=_REWRITE),
    PropertyRow("hoodie.populate.meta.fields", "write the _hoodie_* columns", Decision.HONOURED,
                "false writes null meta columns and keys from the key generator", _boolean()),
    PropertyRow("hoodie.table.create.schema", "the schema the table was created with", Decision.HONOURED,
                "schema-change checks fall back to it before the first commit"),
    PropertyRow("hoodie.table.checksum", "CRC32 of database.table guarding hoodie.properties", Decision.HONOURED,
                "validated on load, recomputed on every update"),
    PropertyRow("hoodie.compaction.payload.class", "payload class merging two versions of a record",
                Decision.HONOURED, "payload.py implements Hudi's built-in payloads; any other class is refused",
                _payload_class, way_out=_JAVA_CLASS),
    PropertyRow("hoodie.compaction.payload.type", "0.14+: payload by RecordPayloadType when no class is named",
                Decision.HONOURED, "the class wins, as in Hudi; a type alone is accepted only for "
                "OVERWRITE_LATEST_AVRO (what we use without a class)", _payload_type,
                way_out="name the payload in hoodie.compaction.payload.class with Hudi (ALTER TABLE ... SET "
                        "TBLPROPERTIES), or let Java Hudi write this table"),
    PropertyRow("hoodie.record.merge.strategy.id", "id of the HoodieRecordMerger", Decision.HONOURED,
                "Hudi's built-in mergers are ours (0.x's default; 1.x's event-time, commit-time and payload-based ids); "
                "another id is refused", _merger_strategy,
                alternatives=("hoodie.compaction.record.merger.strategy",), way_out=_JAVA_CLASS),
    PropertyRow("hoodie.record.merge.mode", "1.x: COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING or CUSTOM",
                Decision.HONOURED, "a table naming no payload class merges by its mode's payload "
                "(OverwriteWithLatestAvroPayload, DefaultHoodieRecordPayload); CUSTOM needs a payload class we have "
                "(hoodie.compaction.payload.class)", _merge_mode, way_out=_JAVA_CLASS),
    PropertyRow("hoodie.table.partial.update.mode", "1.1: partial-update merging", Decision.HONOURED,
                "IGNORE_DEFAULTS under COMMIT_TIME_ORDERING or EVENT_TIME_ORDERING is how version 9 records "
                "OverwriteNonDefaultsWithLatestAvroPayload and PartialUpdateAvroPayload, and merges as they do; the "
                "other modes are refused", _partial_update_mode),
    PropertyRow("hoodie.table.legacy.payload.class", "1.1: the payload a version-9 table's merge mode came from",
                Decision.HONOURED, "a built-in payload that merges as the table's modes say is the one merging; "
                "otherwise the modes decide, as in Hudi 1.1+"),
    PropertyRow("hoodie.table.merge.properties", "1.1: properties of the merge mode", Decision.NO_EFFECT, _V9_ONLY),
    PropertyRow("hoodie.record.merge.property.*", "1.1: a property of the merge mode, e.g. the delete marker a "
                "payload became (AWSDmsAvroPayload: hoodie.payload.delete.field=Op, hoodie.payload.delete.marker=D)",
                Decision.REFUSED, "any value is refused: Java's writers and readers take a record carrying the "
                "marker as a delete, ours would keep it as a row", _refused_if_set(
                    "makes records carrying a delete marker deletes, which this engine's writes would keep as rows")),
    PropertyRow("hoodie.table.base.file.format", "format of base files", Decision.HONOURED,
                "PARQUET is written; ORC, HFILE and LANCE are refused",
                _one_of("PARQUET", refused={f: "is not written by this engine (PARQUET only)"
                                            for f in ("ORC", "HFILE", "LANCE", "HOODIE_LOG")}),
                alternatives=("hoodie.table.ro.file.format",), way_out=_rewrite("as PARQUET")),
    PropertyRow("hoodie.table.log.file.format", "format of log files", Decision.HONOURED,
                "HOODIE_LOG is written; any other is refused",
                _one_of("HOODIE_LOG", refused={f: "is not written by this engine (HOODIE_LOG only)"
                                               for f in ("PARQUET", "ORC", "HFILE", "LANCE")}),
                alternatives=("hoodie.table.rt.file.format",), way_out=_rewrite("")),
    PropertyRow("hoodie.table.format", "1.1: the table format plugin (native = Hudi)", Decision.HONOURED,
                "only Hudi's native format is written", _one_of("NATIVE")),
    PropertyRow("hoodie.table.multiple.base.file.formats.enable", "1.x: base files of several formats",
                Decision.REFUSED, "true is refused (PARQUET only)",
                _boolean("is not supported: this engine writes and reads PARQUET base files only"), way_out=_REWRITE),
    PropertyRow("hoodie.table.timeline.timezone", "time zone of instant times (LOCAL or UTC)", Decision.HONOURED,
                "new instants in UTC, or for LOCAL (and no value: Java's default) in this machine's zone as a Java "
                "writer here makes them; always after the newest instant on the timeline. A new table is UTC unless the write "
                "or TBLPROPERTIES give LOCAL", _one_of("LOCAL", "UTC"),
                way_out="set it to LOCAL or UTC (what Hudi accepts) with Hudi"),
    PropertyRow("hoodie.partition.metafile.use.base.format", "partition metafiles as parquet/orc files",
                Decision.HONOURED,
                "partitions marked by any form are found; new partitions get .hoodie_partition_metadata.parquet "
                "(footer keys, as ParquetUtils.writeMetaFile)", _boolean()),
    PropertyRow("hoodie.table.metadata.partitions", "metadata table partitions built", Decision.HONOURED,
                "exactly `files`: each commit, clean, compaction and rollback appends its delta commit to the metadata "
                "table, archival stops at its latest compaction (hudi_engine/metadata/writer.py); any other list is "
                "disabled by every writer and table service first, as Hudi does (TableConfig.disable_metadata_table)"),
    PropertyRow("hoodie.table.metadata.partitions.inflight", "metadata table partitions being built",
                Decision.HONOURED, "a non-empty list is dropped with the metadata table by every writer and table "
                "service"),
    PropertyRow("hoodie.table.secondary.indexes.metadata", "0.13+: secondary index definitions",
                Decision.REFUSED, "any value is refused: the indexes would not see our writes",
                _refused_if_set("declares secondary indexes this engine does not maintain"),
                way_out="drop the indexes with Hudi first, or let Java Hudi write this table"),
    PropertyRow("hoodie.table.index.defs.path", "1.x: where index definitions (secondary/expression) live",
                Decision.HONOURED, "the indexes are partitions of the metadata table, which every writer disables "
                "first as Hudi does (hoodie.table.metadata.partitions emptied): readers then stop using them; the "
                "definitions stay for Hudi to rebuild the indexes when it enables the metadata table again"),
    PropertyRow("hoodie.table.cdc.enabled", "write CDC log files with every write", Decision.OTHER_PART,
                "every write produces Hudi's CDC logs", _boolean(), see="cdc.md"),
    PropertyRow("hoodie.table.cdc.supplemental.logging.mode", "what CDC logs hold", Decision.OTHER_PART,
                "the three modes are written; an unknown mode is refused",
                _one_of("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER", refused={
                    f"CDC_{old}": f"is a pre-0.13 name Hudi 0.14/0.15 cannot read either: it is {new} there"
                    for old, new in (("OP_KEY", "OP_KEY_ONLY"), ("DATA_BEFORE", "DATA_BEFORE"),
                                     ("DATA_BEFORE_AFTER", "DATA_BEFORE_AFTER"))}), see="cdc.md"),
    PropertyRow("hoodie.bootstrap.base.path", "source of a bootstrapped table (skeleton base files)",
                Decision.REFUSED, "any value is refused: skeleton files hold no data columns",
                _refused_if_set("makes this a bootstrapped table, whose skeleton base files this engine cannot "
                                "merge"), way_out=_REWRITE),
    PropertyRow("hoodie.bootstrap.index.enable", "whether a bootstrap index is kept", Decision.NO_EFFECT,
                "meaningful only with hoodie.bootstrap.base.path, which is refused", _boolean()),
    PropertyRow("hoodie.bootstrap.index.class", "bootstrap index implementation", Decision.NO_EFFECT,
                "meaningful only with hoodie.bootstrap.base.path, which is refused"),
    PropertyRow("hoodie.bootstrap.index.type", "1.x: bootstrap index type", Decision.NO_EFFECT,
                "meaningful only with hoodie.bootstrap.base.path, which is refused", _one_of("HFILE", "NO_OP")),
)


# ---------------------------------------------------------------------------------------------------- states

@dataclass(frozen=True)
class Found:
    state: str  # the row's name
    value: str  # what was found (instants, a path)


StateCheck = Callable[[Timeline], "list[Found]"]  # the timeline carries the table's storage and base path


@dataclass(frozen=True)
class StateRow:
    state: str
    purpose: str
    decision: Decision
    how: str
    find: StateCheck | None = None  # REFUSED rows: what makes the table refused
    see: str = ""
    way_out: str = ""  # what a user does about a refusal (default: WAY_OUT)


def _pending(action: Action, name: str) -> StateCheck:
    def find(timeline: Timeline) -> list[Found]:
        pending = [i for i in timeline.filter_by([action]).pending()]
        return [Found(name, ", ".join(_show(i) for i in pending))] if pending else []
    return find


def _show(i: Instant) -> str:
    return f"{i.timestamp}.{i.action.value}.{i.state.name.lower()}"


def _first_file(storage: Storage, folder: str, depth: int) -> str | None:
    """The path of a file under `folder` (searching `depth` levels), None if it holds none."""
    for entry in storage.list_dir(folder):
        if not entry.is_dir:
            return entry.path
        if depth > 1:
            found = _first_file(storage, entry.path, depth - 1)
            if found:
                return found
    return None


def _files_in(name: str, *relative: str, depth: int = 1) -> StateCheck:
    def find(timeline: Timeline) -> list[Found]:
        for rel in relative:
            path = _first_file(timeline.storage, timeline.location.meta(rel), depth)
            if path:
                return [Found(name, path)]
        return []
    return find


def _unknown_instant_files(timeline: Timeline) -> list[Found]:
    # Found by Timeline.load (instant-like names its layout does not parse, `looks_like_instant_file`): readers skip
    # them as Hudi does; a writer cannot know what they stand for (a newer Hudi's action in flight?).
    return [Found("timeline files of an action or state this engine does not know", ", ".join(timeline.unknown_files))
            ] if timeline.unknown_files else []


STATES: tuple[StateRow, ...] = (
    StateRow("pending clustering", "a replacecommit clustering plan not yet executed", Decision.OTHER_PART,
             "updates into its file groups are refused, inserts go elsewhere, table services leave it",
             see="clustering.md"),
    StateRow("pending compaction", "a compaction plan not yet executed (MOR)", Decision.HONOURED,
             "a write runs it first (runner.finish_pending) or routes log files to its slice; cleaning and "
             "archival keep what it reads"),
    StateRow("pending log compaction", "a logcompaction not completed (MOR): planned, or failed with its log blocks written", Decision.REFUSED,
             "refused: this engine neither runs nor rolls back log compaction",
             _pending(Action.LOG_COMPACTION, "pending log compaction (logcompaction)"),
             way_out="run or roll back the log compaction with Hudi first"),
    StateRow("savepoint", "completed savepoint: files kept for a restore", Decision.HONOURED,
             "cleaning keeps its files, archival stops before it, a savepointed commit is not rolled back; "
             "HudiTable.savepoint makes one, HudiTable.restore restores to it"),
    StateRow("pending savepoint", "a savepoint that never completed", Decision.NO_EFFECT,
             "Hudi's clean and archival, like ours, count completed savepoints only"),
    StateRow("pending restore", "a restore to a savepoint still running or crashed", Decision.REFUSED,
             "refused: the table is half restored (Java Hudi's writers refuse it too)",
             _pending(Action.RESTORE, "pending restore"),
             way_out="finish it: restore to the same instant again (HudiTable.restore, or Hudi's)"),
    StateRow("completed restore", "a restore that finished", Decision.NO_EFFECT,
             "the instants it removed are gone; new instants come after it"),
    StateRow("pending rollback", "a rollback of another writer not finished", Decision.HONOURED,
             "every writer finishes it first from its plan (rollback_failed_writes), on this table's files whatever "
             "base path the plan's full paths name"),
    StateRow("pending clean", "a clean planned (requested) or started (inflight) and not finished", Decision.HONOURED,
             "every writer finishes it first from its plan (runner.finish_pending), on this table's files whatever "
             "base path the plan's full paths name"),
    StateRow("pending indexing", "async metadata-table index build (indexing action)", Decision.REFUSED,
             "refused: once the indexer runs, a write of ours would disable the metadata table and delete the "
             "partition it builds; before (requested), Java's writer goes on, and the indexer is not checked "
             "after a commit of ours",
             _pending(Action.INDEXING, "pending metadata-table indexing (indexing)"),
             way_out="let Hudi's indexer finish (or drop that index with it) first"),
    StateRow("completed indexing", "a finished metadata-table index build", Decision.NO_EFFECT,
             "the index it built is a metadata partition besides files, so every writer disables the metadata "
             "table anyway"),
    StateRow("consistent hashing metadata", "bucket index with the consistent-hashing engine "
             "(.hoodie/.bucket_index/consistent_hashing_metadata)", Decision.REFUSED,
             "refused: records would land outside the buckets Java's index looks in",
             _files_in("consistent hashing bucket index metadata", ".bucket_index/consistent_hashing_metadata",
                       depth=8), way_out=_rewrite("with a simple bucket or bloom index")),
    StateRow("bootstrap index", "maps skeleton files to source files (.hoodie/.aux/.bootstrap)", Decision.REFUSED,
             "refused when it holds a file (empty folders are what every table creation makes)",
             _files_in("bootstrap index", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids"),
             way_out=_REWRITE),
    StateRow("schema history", "schema-on-read evolution history (.hoodie/.schema)", Decision.HONOURED,
             "reads find columns by the history's ids; every commit of ours records the internal schema "
             "(latest_schema) and writes the history under its instant, as Hudi's schema-on-read writers do "
             "(hudi_engine/internal_schema.py)"),
    StateRow("lock files", "Hudi 1.1 StorageBasedLockProvider (.hoodie/.locks)", Decision.OTHER_PART,
             "taken as ours", see="locks.md"),
    StateRow("unknown instant files", "a file of the active timeline named like an instant "
             "(<digits>.<action>[.<state>], <digits>_<digits>.<action>) of an action or state this engine does not "
             "know", Decision.REFUSED, "refused, naming the files: a newer Hudi's action we cannot honour or finish; "
             "reads skip them as Hudi skips extensions it does not know. Files not named like an instant are "
             "ignored, as Hudi ignores them", _unknown_instant_files,
             way_out="write this table with the Hudi that wrote those files (or delete them if no Hudi did), or ask "
                     "for the action to be declared in hudi_engine/table_features.py"),
)


# ---------------------------------------------------------------------------------------------------- the check

def property_row(key: str) -> PropertyRow | None:
    """The declared row of a `hoodie.properties` key (None: a key this engine does not know, refused by writers)."""
    return next((r for r in PROPERTIES if r.matches(key)), None)


def way_out(row: PropertyRow | StateRow) -> str:
    """What a user does about a refusal by this row."""
    return row.way_out or (WAY_OUT if row.decision is Decision.REFUSED else VALUE_WAY_OUT)


def property_problems(table: TableConfig) -> list[str]:
    """`key=value reason; way out: ...` of every property value that refuses the table."""
    out = []
    for key, value in sorted(table.props.items()):
        row = property_row(key)
        if row is None:
            # A newer Hudi's key may change what a write must do (as drop.partition.columns did): without a rule we
            # cannot know, so writers stop rather than write over a feature they do not see.
            out.append(f"{key}={value} {UNDECLARED_KEY}; way out: {UNDECLARED_WAY_OUT}")
            continue
        reason = row.check(value, table)
        if reason:
            out.append(f"{key}={value} {reason}; way out: {way_out(row)}")
    return out


def state_problems(timeline: Timeline) -> list[str]:
    """`state: what was found; way out: ...` of every timeline/storage state that refuses the table."""
    return [f"{f.state}: {f.value}; way out: {way_out(row)}" for row in STATES if row.find is not None
            for f in row.find(timeline)]


def check_writable(location: TableLocation, table: TableConfig, timeline: Timeline,
                   *, action: str = "write") -> None:
    """Refuse (UnsupportedTableFeatureError, before any file is written) a table one of whose properties or
    timeline/storage states this engine does not honour; `action` names what was refused ("write", "compact", ...).
    The table version is checked first (`TableConfig.require_writable`)."""
    base_path = location.base_path
    table.require_writable()
    problems = property_problems(table)
    problems += state_problems(timeline)
    if problems:
        raise UnsupportedTableFeatureError(
            f"table {table.name} at {base_path}: cannot {action}, this engine does not honour: " + " | ".join(problems)
            + " (docs/table-features.md)")
