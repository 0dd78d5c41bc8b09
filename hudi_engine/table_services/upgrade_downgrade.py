"""Hudi's UpgradeDowngrade between the table versions this engine writes: 6 (Hudi 0.14/0.15), 8 (1.0) and 9 (1.1+).

One run, in Hudi 1.2's order (`UpgradeDowngrade.run`):

1. Nothing to do when the table is at the target already (Hudi's procedure returns true).
2. The metadata table: Hudi upgrades or downgrades it with the table (or deletes it when it lags). This engine
   cannot convert one, so it disables it (`TableConfig.disable_metadata_table`, the one way); Java's next writer
   rebuilds it.
3. Every step 6<->8 and 8<->9 requires it (Hudi's handlers 7->8, 8->9, 9->8, 8->7): roll back the failed writes
   (every pending write: the EAGER policy) and, on MERGE_ON_READ, compact every file group with log files, at the
   current version.
4. Between 6 and 8/9 the timeline changes layout (`SevenToEightUpgradeHandler` / `EightToSevenDowngradeHandler`):
   every instant file moves between `.hoodie/` and `.hoodie/timeline/`; a completed one gains (or loses) its
   completion time in its name, on upgrade the file's modification time, as Hudi's v1 timeline reports it; commit
   metadata is rewritten between JSON and Avro; the archived timeline (`.hoodie/archived/`) is written into the LSM
   history (`timeline/history/`), and back. Hudi leaves the old archive folder where it is on upgrade; so does this
   engine. On downgrade Hudi also leaves `.hoodie/timeline/` with its history; this engine deletes them (the
   history before the save, the emptied folder after it), since a `.hoodie/timeline/` folder marks a layout-2
   table to readers that look for it (this engine's writers do), and `.hoodie/archived/` then holds every action
   the history held. A "downgrade" of a version-6 table that still has such a folder (Hudi's downgrade left it, or
   this engine's was interrupted after its save) deletes it.
5. `hoodie.properties`: each step's additions and removals, each computed from the properties as they were before
   the run (Hudi's handlers read the table config from storage, which is written once, at the end), then the
   version and timeline layout, saved last (through the backup, as every config update).

A crash between 4 and 5 leaves the instants in the new layout under the old `hoodie.properties`: the next run sees
instant files in the folder of the target layout and finishes the move before saving (Hudi's handlers are
idempotent the same way). Refused by name, before anything changes: a version this engine does not write, a pending
clustering, log compaction, indexing or restore (Hudi would carry them across; this engine cannot yet), a payload
whose merge properties this engine does not know, and what Hudi refuses (9->8 of a ComplexKeyGenerator table with
one record key field; 8->6 of a CUSTOM merge mode naming no payload class).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import TableServiceError, TimelineError, UnsupportedTableVersionError
from hudi_engine.location import TableLocation
from hudi_engine.payload import (
    DEFAULT_RECORD,
    EVENT_TIME,
    OVERWRITE_NON_DEFAULTS,
    OVERWRITE_WITH_LATEST,
    PARTIAL_UPDATE,
)
from hudi_engine.storage import Storage
from hudi_engine.table_config import (
    COMMIT_TIME_STRATEGY,
    DEFAULT_RECORD_MERGER_STRATEGY,
    KEY_GENERATOR_CLASS,
    KEY_GENERATOR_TYPE,
    LEGACY_PAYLOAD_CLASS,
    ORDERING_FIELDS,
    PARTIAL_UPDATE_MODE,
    PAYLOAD_BASED_STRATEGY,
    PAYLOAD_CLASS,
    PRECOMBINE_FIELD,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    RECORDKEY_FIELDS,
    TIMELINE_LAYOUT_VERSION,
    TIMELINE_PATH,
    VERSION,
    WRITABLE_TABLE_VERSIONS,
    TableConfig,
    key_generator_type,
)
from hudi_engine.table_services import service_lock
from hudi_engine.timeline.archived import (
    archive_files,
    archived_entries,
    commit_entry_record,
    encode_archive_file,
    write_archive_file,
)
from hudi_engine.timeline.avro_models import read_avro_metadata, write_avro_metadata
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.history import ArchivedInstant, TimelineHistory
from hudi_engine.timeline.instant import Action, Instant, State, datetime_to_instant
from hudi_engine.timeline.layout import LAYOUT_V1, TimelineLayout, TimelineLayoutV2, layout_for
from hudi_engine.timeline.timeline import Timeline

# HoodieTableVersion's names, as `upgrade_table(to_version => 'NINE')` takes them.
VERSION_NAMES = {"ZERO": 0, "ONE": 1, "TWO": 2, "THREE": 3, "FOUR": 4, "FIVE": 5, "SIX": 6, "SEVEN": 7,
                 "EIGHT": 8, "NINE": 9, "TEN": 10}
INITIAL_VERSION = "hoodie.table.initial.version"
BOOTSTRAP_INDEX_CLASS = "hoodie.bootstrap.index.class"
BOOTSTRAP_INDEX_TYPE = "hoodie.bootstrap.index.type"
LSM_BATCH = 10  # hoodie.commits.archival.batch: Hudi writes the converted archive in batches of this many actions

_PKG = "org.apache.hudi.common.model."
_OVERWRITE_WITH_LATEST = OVERWRITE_WITH_LATEST.class_name
_DEFAULT_PAYLOAD = DEFAULT_RECORD.class_name
_EVENT_TIME = EVENT_TIME.class_name
_OVERWRITE_NON_DEFAULTS = OVERWRITE_NON_DEFAULTS.class_name
_PARTIAL_UPDATE = PARTIAL_UPDATE.class_name
_AWS_DMS = _PKG + "AWSDmsAvroPayload"
_MYSQL_DEBEZIUM = _PKG + "debezium.MySqlDebeziumAvroPayload"
_POSTGRES_DEBEZIUM = _PKG + "debezium.PostgresDebeziumAvroPayload"
# HoodieRecordMerger's strategy ids.
_CUSTOM_STRATEGY = "1897ef5f-18bc-4557-939c-9d6a8afd1519"
_BUILTIN_STRATEGIES = {DEFAULT_RECORD_MERGER_STRATEGY, COMMIT_TIME_STRATEGY, PAYLOAD_BASED_STRATEGY,
                       _CUSTOM_STRATEGY}
# UpgradeDowngradeUtils.PAYLOAD_CLASSES_TO_HANDLE and EightToNineUpgradeHandler's mode sets (RFC-97).
_PAYLOADS_TO_HANDLE = {_AWS_DMS, _DEFAULT_PAYLOAD, _EVENT_TIME, _MYSQL_DEBEZIUM, _OVERWRITE_NON_DEFAULTS,
                       _OVERWRITE_WITH_LATEST, _PARTIAL_UPDATE, _POSTGRES_DEBEZIUM}
_TO_COMMIT_TIME = {_AWS_DMS, _OVERWRITE_NON_DEFAULTS}
_TO_EVENT_TIME = {_EVENT_TIME, _MYSQL_DEBEZIUM, _PARTIAL_UPDATE, _POSTGRES_DEBEZIUM}
# Payloads whose 8->9 step also writes merge properties (delete markers, Debezium's unavailable value).
_WITH_MERGE_PROPERTIES = {_AWS_DMS, _POSTGRES_DEBEZIUM, _MYSQL_DEBEZIUM}
_BOOTSTRAP_TYPES = {"org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex": "HFILE",
                    "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex": "HFILE",
                    "org.apache.hudi.common.bootstrap.index.NoOpBootstrapIndex": "NO_OP"}
_BOOTSTRAP_CLASSES = {"HFILE": "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex",
                      "NO_OP": "org.apache.hudi.common.bootstrap.index.NoOpBootstrapIndex"}
# Pending actions the layout change cannot carry across here (Hudi renames or rewrites their plans).
_NOT_CARRIED = (Action.CLUSTERING, Action.LOG_COMPACTION, Action.INDEXING, Action.RESTORE)


@dataclass(frozen=True)
class UpgradeDowngradeResult:
    """What one run changed: the versions, the failed writes rolled back, the compactions run first, and the
    active and archived instants moved between timeline layouts."""

    from_version: int
    to_version: int
    rolled_back: list[str] = field(default_factory=list)
    compacted: list[str] = field(default_factory=list)
    instant_files_moved: int = 0
    archived_instants_moved: int = 0

    @property
    def changed(self) -> bool:
        return self.from_version != self.to_version


def parse_version(value: object) -> int:
    """A target version as Hudi's procedure takes it (HoodieTableVersion's name: SIX, EIGHT, NINE) or a number."""
    text = str(value).strip()
    if text.upper() in VERSION_NAMES:
        return VERSION_NAMES[text.upper()]
    if text.isdigit():
        return int(text)
    raise TableServiceError(f"to_version {value!r}: expected one of {', '.join(VERSION_NAMES)} (Hudi's "
                            "HoodieTableVersion names) or a version number")


def upgrade_downgrade(location: TableLocation, to_version: int, config: WriteConfig | None = None) \
        -> UpgradeDowngradeResult:
    """Move the table at `location` to table version `to_version` (6, 8 or 9) as Hudi 1.2's UpgradeDowngrade does,
    under the table lock (module doc). `config`: the lock and compaction settings."""
    from hudi_engine.table_services.runner import compact_now
    from hudi_engine.write.rollback import rollback_failed

    config = config or WriteConfig()
    table = TableConfig.load(location)
    _check_versions(location, table, to_version)
    if table.version == to_version and not _leftover_timeline_folder(location, table):
        return UpgradeDowngradeResult(to_version, to_version)
    timeline = Timeline.load(location, layout_for(table))
    with service_lock(location, config.lock, table=table, timeline=timeline):
        table = TableConfig.load(location)
        from_version = table.version
        if from_version == to_version:
            _drop_leftover_timeline_folder(location, table)  # a downgrade interrupted after its save
            return UpgradeDowngradeResult(to_version, to_version)
        source, target = layout_for(table), _layout(table, to_version)
        v2 = target if isinstance(target, TimelineLayoutV2) else source
        resuming = source.version != target.version and _has_instant_files(location, target)
        timeline = Timeline.load(location, source)
        props = _changed_props(location, table, to_version)  # refusals first: nothing is changed yet
        if not resuming:
            _check_pending(location, table, timeline)
        table = table.disable_metadata_table(
            location, f"changing table version {from_version} to {to_version}, which this engine cannot do for the "
                      "metadata table")
        rolled: list[str] = []
        compacted: list[str] = []
        if not resuming:
            rolled = [r.rolled_back.timestamp for r in rollback_failed(timeline)]
            timeline = timeline.reload()
            if table.is_mor:
                done = compact_now(location, config, table=table, timeline=timeline)
                compacted = [c.instant_time for c in done]
        moved = archived = 0
        if source.version != target.version:
            assert isinstance(v2, TimelineLayoutV2)  # one of the two layouts is layout 2
            if v2 is target:
                moved = _timeline_to_v2(location, table, v2)
                archived = _archive_to_history(location, table, v2)
            else:
                moved = _timeline_to_v1(location, table, v2)
                archived = _history_to_archive(location, table, v2)
                # Hudi leaves the history; the archive holds all it did. The emptied timeline folder goes after the
                # save (until then the table is of layout 2, whose timeline is there).
                location.storage.delete_dir(TimelineHistory.of(location, v2.timeline_path, v2.history_path).folder)
        # Saved last: until then readers see the old version (and, after a crash, the next run finishes the move).
        saved = TableConfig.load(location).with_props(props)
        saved.save(location)
        _drop_leftover_timeline_folder(location, saved)
        return UpgradeDowngradeResult(from_version, to_version, rolled, compacted, moved, archived)


def _leftover_timeline_folder(location: TableLocation, table: TableConfig) -> bool:
    """A version-6 table with a `.hoodie/timeline/` folder holding no instant: what a downgrade leaves (Hudi's, with
    the history it copied into the archive; this engine's, interrupted after its save). Readers that look for the
    folder (this engine's writers do) would take the table for layout 2."""
    return table.version < 8 and location.storage.is_dir(location.meta(table.timeline_path)) and \
        not _has_instant_files(location, TimelineLayoutV2(table.timeline_path, table.timeline_history_path))


def _drop_leftover_timeline_folder(location: TableLocation, table: TableConfig) -> None:
    if _leftover_timeline_folder(location, table):
        location.storage.delete_dir(location.meta(table.timeline_path))


def _check_versions(location: TableLocation, table: TableConfig, to_version: int) -> None:
    where = f"table {table.name!r} ({location.base_path})"
    if table.version not in WRITABLE_TABLE_VERSIONS:
        raise UnsupportedTableVersionError(
            f"{where} is of table version {table.version}; this engine upgrades and downgrades between versions "
            f"{', '.join(map(str, WRITABLE_TABLE_VERSIONS))}: use Java Hudi's CALL upgrade_table")
    if to_version not in WRITABLE_TABLE_VERSIONS:
        raise UnsupportedTableVersionError(
            f"{where}: cannot move to table version {to_version}; this engine writes versions "
            f"{', '.join(map(str, WRITABLE_TABLE_VERSIONS))} (SIX, EIGHT, NINE): use Java Hudi's CALL upgrade_table / "
            "downgrade_table for others")


def _layout(table: TableConfig, version: int) -> TimelineLayout:
    if version < 8:
        return LAYOUT_V1
    return TimelineLayoutV2(table.timeline_path, table.timeline_history_path, table.local_instant_times)


def _has_instant_files(location: TableLocation, layout: TimelineLayout) -> bool:
    """Instant files in the folder of `layout`: a run that crashed after moving some of them."""
    folder = location.join(layout.active_folder)
    if not location.storage.exists(folder):
        return False
    for e in location.storage.list_dir(folder):
        if e.is_dir:
            continue
        try:
            if layout.parse_file_name(e.name) is not None:
                return True
        except TimelineError:
            continue
    return False


def _check_pending(location: TableLocation, table: TableConfig, timeline: Timeline) -> None:
    """Pending instants this engine cannot carry to another layout: refused by name, before anything changes."""
    stuck = [i for i in timeline.pending() if i.action in _NOT_CARRIED or is_clustering(timeline, i)]
    if stuck:
        names = ", ".join(f"{i.timestamp} ({i.action.value}, {i.state.name})" for i in stuck)
        raise TableServiceError(
            f"table {table.name!r} ({location.base_path}): cannot change its table version while these instants are "
            f"pending: {names}. Finish them first (CALL run_clustering(op => 'execute'), restore again), or roll them "
            "back (CALL run_rollback_inflight_tableservice), then run the upgrade or downgrade again")


# --------------------------------------------------------------------------------------------- properties


def _changed_props(location: TableLocation, table: TableConfig, to_version: int) -> dict[str, str | None]:
    """Every step's additions, then its removals (None), each computed from `table` as read before the run (Hudi's
    handlers read the stored config, written once at the end), then the version and layout."""
    steps = {(6, 8): _six_to_eight, (8, 9): _eight_to_nine, (9, 8): _nine_to_eight, (8, 6): _eight_to_six}
    path = [6, 8, 9] if to_version > table.version else [9, 8, 6]
    versions = path[path.index(table.version):path.index(to_version) + 1]
    added: dict[str, str] = {}
    removed: list[str] = []
    for step in zip(versions, versions[1:], strict=False):
        adds, removes = steps[step](location, table)
        added.update(adds)
        removed += removes
    out: dict[str, str | None] = dict(added)
    out.update(dict.fromkeys(removed))
    out[VERSION] = str(to_version)
    out[TIMELINE_LAYOUT_VERSION] = "2" if to_version >= 8 else "1"
    return out


Change = tuple[dict[str, str], list[str]]


def _get(table: TableConfig, key: str) -> str:
    return (table.get(key) or "").strip()


def _six_to_eight(location: TableLocation, table: TableConfig) -> Change:
    """SevenToEightUpgradeHandler: the timeline path, the merge mode from the payload, the initial version, the key
    generator's and bootstrap index's types."""
    adds = {TIMELINE_PATH: "timeline", INITIAL_VERSION: str(table.version)}
    payload = _get(table, PAYLOAD_CLASS)
    if payload and payload not in (_DEFAULT_PAYLOAD, _EVENT_TIME, _OVERWRITE_WITH_LATEST):
        adds.update({PAYLOAD_CLASS: payload, RECORD_MERGE_MODE: "CUSTOM", RECORD_MERGE_STRATEGY_ID: PAYLOAD_BASED_STRATEGY})
    elif (table.is_mor and _get(table, PRECOMBINE_FIELD)) or payload == _DEFAULT_PAYLOAD:
        adds.update(_event_time())
    else:
        adds.update({PAYLOAD_CLASS: _OVERWRITE_WITH_LATEST, RECORD_MERGE_MODE: "COMMIT_TIME_ORDERING",
                     RECORD_MERGE_STRATEGY_ID: COMMIT_TIME_STRATEGY})
    keygen = _get(table, KEY_GENERATOR_CLASS)
    if keygen:
        adds[KEY_GENERATOR_CLASS] = keygen
        adds[KEY_GENERATOR_TYPE] = key_generator_type(keygen)
    bootstrap = _bootstrap_class(table)
    if bootstrap:
        adds[BOOTSTRAP_INDEX_CLASS] = bootstrap
        adds[BOOTSTRAP_INDEX_TYPE] = _BOOTSTRAP_TYPES.get(bootstrap, "HFILE")
    return adds, []


def _event_time() -> dict[str, str]:
    return {PAYLOAD_CLASS: _DEFAULT_PAYLOAD, RECORD_MERGE_MODE: "EVENT_TIME_ORDERING",
            RECORD_MERGE_STRATEGY_ID: DEFAULT_RECORD_MERGER_STRATEGY}


def _bootstrap_class(table: TableConfig) -> str:
    named = _get(table, BOOTSTRAP_INDEX_CLASS)
    return named or _BOOTSTRAP_CLASSES.get(_get(table, BOOTSTRAP_INDEX_TYPE).upper(), "")


def _eight_to_nine(location: TableLocation, table: TableConfig) -> Change:
    """EightToNineUpgradeHandler: a built-in payload (with a built-in strategy id) becomes the legacy payload class
    with its merge mode and, for the field-level ones, its partial-update mode (RFC-97); the precombine field
    becomes the ordering fields."""
    adds: dict[str, str] = {}
    removes: list[str] = []
    ordering = _get(table, ORDERING_FIELDS) or _get(table, PRECOMBINE_FIELD)
    if ordering:
        adds[ORDERING_FIELDS] = ordering
        removes.append(PRECOMBINE_FIELD)
    payload = _get(table, PAYLOAD_CLASS)
    if _get(table, RECORD_MERGE_STRATEGY_ID) not in _BUILTIN_STRATEGIES or not payload:
        return adds, removes
    if payload in _WITH_MERGE_PROPERTIES:
        raise TableServiceError(
            f"table {table.name!r} ({location.base_path}): its payload {payload} becomes merge properties in table "
            "version 9, which this engine does not write; upgrade it with Java Hudi's CALL upgrade_table")
    if payload in _TO_COMMIT_TIME:
        adds.update({RECORD_MERGE_MODE: "COMMIT_TIME_ORDERING", RECORD_MERGE_STRATEGY_ID: COMMIT_TIME_STRATEGY})
    elif payload in _TO_EVENT_TIME:
        adds.update({RECORD_MERGE_MODE: "EVENT_TIME_ORDERING",
                     RECORD_MERGE_STRATEGY_ID: DEFAULT_RECORD_MERGER_STRATEGY})
    if payload in (_OVERWRITE_NON_DEFAULTS, _PARTIAL_UPDATE):
        adds[PARTIAL_UPDATE_MODE] = "IGNORE_DEFAULTS"
    if payload in _PAYLOADS_TO_HANDLE:
        adds[LEGACY_PAYLOAD_CLASS] = payload
        removes.append(PAYLOAD_CLASS)
    return adds, removes


def _nine_to_eight(location: TableLocation, table: TableConfig) -> Change:
    """NineToEightDowngradeHandler: no partial-update mode; the legacy payload class back as the payload class (a
    field-level one as CUSTOM merge mode); the ordering fields back as the precombine field."""
    if key_generator_type(table.key_generator_class or "") in ("COMPLEX", "COMPLEX_AVRO") \
            and len(table.record_key_fields) == 1:
        raise TableServiceError(
            f"table {table.name!r} ({location.base_path}): Hudi refuses to downgrade a table whose ComplexKeyGenerator "
            f"has a single record key field ({RECORDKEY_FIELDS}={','.join(table.record_key_fields)}): its record keys "
            "are encoded differently before version 9. Keep the table at version 9")
    adds: dict[str, str] = {}
    removes = [PARTIAL_UPDATE_MODE]
    legacy = _get(table, LEGACY_PAYLOAD_CLASS)
    if legacy in _PAYLOADS_TO_HANDLE:
        if legacy in _WITH_MERGE_PROPERTIES:
            raise TableServiceError(
                f"table {table.name!r} ({location.base_path}): its payload {legacy} keeps merge properties this "
                "engine does not write; downgrade it with Java Hudi's CALL downgrade_table")
        removes.append(LEGACY_PAYLOAD_CLASS)
        adds[PAYLOAD_CLASS] = legacy
        if legacy not in (_OVERWRITE_WITH_LATEST, _DEFAULT_PAYLOAD, _EVENT_TIME):
            adds.update({RECORD_MERGE_STRATEGY_ID: PAYLOAD_BASED_STRATEGY, RECORD_MERGE_MODE: "CUSTOM"})
    ordering = _get(table, ORDERING_FIELDS) or _get(table, PRECOMBINE_FIELD)
    if ordering:
        adds[PRECOMBINE_FIELD] = ordering
        removes.append(ORDERING_FIELDS)
    return adds, removes


def _eight_to_six(location: TableLocation, table: TableConfig) -> Change:
    """EightToSevenDowngradeHandler (7->6 changes no property): no initial version, merge mode or strategy id; a
    payload class from the merge mode where none is named; the key generator's and bootstrap index's classes only."""
    adds: dict[str, str] = {}
    removes = [INITIAL_VERSION, RECORD_MERGE_MODE, RECORD_MERGE_STRATEGY_ID, KEY_GENERATOR_TYPE, BOOTSTRAP_INDEX_TYPE]
    if not _get(table, PAYLOAD_CLASS):
        mode = table.record_merge_mode or "EVENT_TIME_ORDERING"  # RECORD_MERGE_MODE's default
        if mode == "EVENT_TIME_ORDERING":
            adds[PAYLOAD_CLASS] = _DEFAULT_PAYLOAD
        elif mode == "COMMIT_TIME_ORDERING":
            adds[PAYLOAD_CLASS] = _OVERWRITE_WITH_LATEST
        else:
            raise TableServiceError(
                f"table {table.name!r} ({location.base_path}): Hudi refuses the downgrade: Custom payload class must "
                f"be available for downgrading custom merge mode ({RECORD_MERGE_MODE}={mode}, no {PAYLOAD_CLASS})")
    keygen = table.key_generator_class  # the class named, else the type's
    if keygen:
        adds[KEY_GENERATOR_CLASS] = keygen
    bootstrap = _bootstrap_class(table)
    if bootstrap:
        adds[BOOTSTRAP_INDEX_CLASS] = bootstrap
    return adds, removes


# --------------------------------------------------------------------------------------------- the active timeline


def _zone(table: TableConfig) -> tzinfo:
    local = datetime.now(UTC).astimezone().tzinfo
    return (local or UTC) if table.local_instant_times else UTC


def _instant_files(location: TableLocation, layout: TimelineLayout) -> list[tuple[Instant, str, int]]:
    """(instant in the state of the file, path, modification time ms) of every instant file in `layout`'s folder."""
    storage = location.storage
    out = []
    for e in storage.list_dir(location.join(layout.active_folder)):
        if e.is_dir:
            continue
        try:
            instant = layout.parse_file_name(e.name)
        except TimelineError:
            continue
        if instant is not None:
            out.append((instant, e.path, (storage.mtime_ms(e.path) or 0) if instant.is_completed else 0))
    return sorted(out, key=lambda t: t[0])


def _move(storage: Storage, source: str, target: str, data: bytes) -> None:
    storage.write_bytes(target, data)
    storage.delete(source)


def _timeline_to_v2(location: TableLocation, table: TableConfig, layout: TimelineLayoutV2) -> int:
    """Every instant file of `.hoodie/` into `.hoodie/timeline/`: a completed one named with its completion time
    (the file's modification time in the table's timeline zone, as Hudi's v1 timeline reports it), commit metadata
    rewritten as Avro (SevenToEightUpgradeHandler.upgradeActiveTimelineInstant)."""
    storage = location.storage
    storage.mkdirs(location.meta(layout.timeline_path, layout.history_path))
    zone = _zone(table)
    folder = location.join(layout.active_folder)
    moved = 0
    for instant, path, mtime in _instant_files(location, LAYOUT_V1):
        data = storage.read_bytes(path)
        if instant.is_completed:
            done = datetime_to_instant(datetime.fromtimestamp(mtime / 1000, UTC), zone)
            instant = Instant(instant.timestamp, instant.action, State.COMPLETED, max(done, instant.timestamp))
        if instant.action in (Action.COMMIT, Action.DELTA_COMMIT) or (
                instant.action is Action.REPLACE_COMMIT and instant.is_completed):
            data = CommitMetadata.from_json(data, file_name=path).to_avro(
                replace=instant.action is Action.REPLACE_COMMIT)
        _move(storage, path, Storage.join(folder, layout.file_name(instant)), data)
        moved += 1
    return moved


def _timeline_to_v1(location: TableLocation, table: TableConfig, layout: TimelineLayoutV2) -> int:
    """Every instant file of `.hoodie/timeline/` back into `.hoodie/`: completion times dropped from the names,
    commit metadata rewritten as JSON (EightToSevenDowngradeHandler.downgradeActiveTimelineInstant)."""
    storage = location.storage
    moved = 0
    for instant, path, _ in _instant_files(location, layout):
        data = storage.read_bytes(path)
        if instant.action in (Action.COMMIT, Action.DELTA_COMMIT) or (
                instant.action is Action.REPLACE_COMMIT and instant.is_completed):
            data = CommitMetadata.from_avro(data, file_name=path).to_json()
        plain = Instant(instant.timestamp, instant.action, instant.state)
        _move(storage, path, location.meta(plain.file_name), data)
        moved += 1
    return moved


# --------------------------------------------------------------------------------------------- the archived timeline


def _archive_to_history(location: TableLocation, table: TableConfig, layout: TimelineLayoutV2) -> int:
    """The archived timeline's actions into the LSM history, LSM_BATCH at a time, compacting after each as Hudi's
    upgradeToLSMTimeline does; actions the history holds already (a crashed run's) are not written again."""
    if not archive_files(location, table):
        return 0
    history = TimelineHistory.of(location, layout.timeline_path, layout.history_path)
    have = {(r.instant_time, r.action) for r in history.records(["instantTime", "action"])}
    records = [r for r in _lsm_records(archived_entries(location), table) if (r.instant_time, r.action) not in have]
    for start in range(0, len(records), LSM_BATCH):
        history.append(records[start:start + LSM_BATCH])
        history.compact_and_clean()
    return len(records)


def _lsm_records(entries: list[dict], table: TableConfig) -> list[ArchivedInstant]:
    """One HoodieLSMTimelineInstant per archived action (LegacyArchivedMetaEntryReader: the entries of one instant
    time together): its completed entry's metadata as Avro, a compaction's plan, the completion time Hudi 0.x
    recorded as the completed entry's stateTransitionTime (the instant time where it recorded none, or an earlier
    time)."""
    by_time: dict[str, list[dict]] = {}
    for e in entries:
        by_time.setdefault(str(e.get("commitTime")), []).append(e)
    out = []
    for ts in sorted(by_time):
        group = by_time[ts]
        for done in [e for e in group if e.get("actionState") == State.COMPLETED.name]:
            action = str(done.get("actionType"))
            plan = next((e.get("hoodieCompactionPlan") for e in group if e.get("hoodieCompactionPlan")), None) \
                if action in (Action.COMMIT.value, Action.DELTA_COMMIT.value) else None
            completion = max(str(done.get("stateTransitionTime") or ts), ts)  # an older archive may say earlier
            out.append(ArchivedInstant(ts, str(completion), action, _lsm_metadata(action, done),
                                       write_avro_metadata("HoodieCompactionPlan", plan, checked=False) if plan else None))
    unique: dict[tuple[str, str], ArchivedInstant] = {}
    for r in out:  # a crash can archive an action twice
        unique.setdefault((r.instant_time, r.action), r)
    return list(unique.values())


def _lsm_metadata(action: str, entry: dict) -> bytes | None:
    """The completed file's bytes in layout 2 from a legacy archived entry."""
    if action in (Action.COMMIT.value, Action.DELTA_COMMIT.value) and entry.get("hoodieCommitMetadata"):
        return CommitMetadata.from_dict(_no_nulls(entry["hoodieCommitMetadata"])).to_avro(replace=False)
    if action == Action.REPLACE_COMMIT.value and entry.get("hoodieReplaceCommitMetadata"):
        return CommitMetadata.from_dict(_no_nulls(entry["hoodieReplaceCommitMetadata"])).to_avro(replace=True)
    kinds = {Action.CLEAN.value: ("hoodieCleanMetadata", "HoodieCleanMetadata"),
             Action.ROLLBACK.value: ("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
             Action.SAVEPOINT.value: ("hoodieSavePointMetadata", "HoodieSavepointMetadata")}
    if action in kinds and entry.get(kinds[action][0]):
        return write_avro_metadata(kinds[action][1], entry[kinds[action][0]], checked=False)
    return None


def _no_nulls(record: Mapping) -> dict:
    return json.loads(json.dumps(record, default=str), object_hook=lambda d: {k: v for k, v in d.items()
                                                                               if v is not None})


def _history_to_archive(location: TableLocation, table: TableConfig, layout: TimelineLayoutV2) -> int:
    """The LSM history's actions into one archive log file of `.hoodie/archived/` (EightToSevenDowngradeHandler
    .downgradeFromLSMTimeline): one completed entry per action; actions the archive holds already are skipped."""
    history = TimelineHistory.of(location, layout.timeline_path, layout.history_path)
    if not location.storage.exists(history.folder) or history.is_empty():
        return 0
    location.storage.mkdirs(location.meta(table.archivelog_folder))
    have = {(str(e.get("commitTime")), str(e.get("actionType"))) for e in archived_entries(location)
            if e.get("actionState") == State.COMPLETED.name}
    entries = [_legacy_entry(r) for r in history.records() if (r.instant_time, r.action) not in have]
    if entries:
        write_archive_file(location, table, encode_archive_file(entries))
    return len(entries)


def _legacy_entry(record: ArchivedInstant) -> dict:
    """A HoodieArchivedMetaEntry of a completed action from its LSM record (MetadataConversionUtils
    .createMetaWrapper): the completion time as stateTransitionTime, the metadata in the entry's field."""
    entry: dict = {"commitTime": record.instant_time, "actionType": record.action, "actionState": "COMPLETED",
                   "version": 1, "stateTransitionTime": record.completion_time}
    data, action = record.metadata or b"", record.action
    if action in (Action.COMMIT.value, Action.DELTA_COMMIT.value):
        entry["hoodieCommitMetadata"] = commit_entry_record(CommitMetadata.from_avro(data).to_json(), replace=False)
        if record.plan:
            entry["hoodieCompactionPlan"] = read_avro_metadata(record.plan, "HoodieCompactionPlan")
    elif action == Action.REPLACE_COMMIT.value:
        entry["hoodieReplaceCommitMetadata"] = commit_entry_record(CommitMetadata.from_avro(data).to_json(),
                                                                   replace=True)
    elif data and action == Action.CLEAN.value:
        entry["hoodieCleanMetadata"] = read_avro_metadata(data, "HoodieCleanMetadata")
    elif data and action == Action.ROLLBACK.value:
        entry["hoodieRollbackMetadata"] = read_avro_metadata(data, "HoodieRollbackMetadata")
    elif data and action == Action.SAVEPOINT.value:
        entry["hoodieSavePointMetadata"] = read_avro_metadata(data, "HoodieSavepointMetadata")
    return entry
