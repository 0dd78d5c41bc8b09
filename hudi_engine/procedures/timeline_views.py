"""The procedures that read the other actions of the timeline: `show_rollbacks`, `show_rollback_detail`,
`show_savepoints`, `show_compaction`, `show_cleans`, `show_cleans_metadata`, `show_clean_plans`, `show_timeline` and
`show_file_status`, from the Avro files of those instants, as Hudi 1.2's procedures of those names read them; and
`export_instants`, which writes them out as JSON."""
from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row, completion_time
from hudi_engine.storage import Storage
from hudi_engine.table import HudiTable
from hudi_engine.table_services.compaction import CompactionPlan
from hudi_engine.timeline import Timeline, read_avro_metadata
from hudi_engine.timeline.archived import archived_entries
from hudi_engine.timeline.avro_models import avro_kind_for
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, Instant, State
from hudi_engine.timeline.layout import TimelineLayoutV2


def _limit(rows: list[Row], args: Arguments) -> list[Row]:
    return rows[: max(args["limit"], 0)]


def _java_list(items: list[str]) -> str:
    return f"[{', '.join(items)}]"


def show_rollbacks(args: Arguments) -> list[Row]:
    """One row per commit each completed rollback undid: (its rollback instant, the commit, ...)."""
    table = HudiTable.load(args.table_path())
    rows: list[Row] = []
    for instant in table.timeline.filter_by([Action.ROLLBACK], [State.COMPLETED]):
        meta = table.timeline.avro_metadata(instant) or {}
        for commit in meta.get("commitsRollback") or ():
            rows.append((meta.get("startRollbackTime") or instant.timestamp, commit, meta.get("totalFilesDeleted"),
                         meta.get("timeTakenInMillis"), len(meta.get("partitionMetadata") or {})))
    return _limit(rows, args)


def show_rollback_detail(args: Arguments) -> list[Row]:
    """The files one rollback (by its own instant time) deleted, and the ones it failed to delete."""
    table = HudiTable.load(args.table_path())
    wanted = args["instant_time"]
    found = [i for i in table.timeline.filter_by([Action.ROLLBACK], [State.COMPLETED]) if i.timestamp == wanted]
    if not found:
        rollbacks = ", ".join(i.timestamp for i in table.timeline.filter_by([Action.ROLLBACK], [State.COMPLETED]))
        raise ConfigError(f"show_rollback_detail: no completed rollback at {wanted} on {table.base_path}; its "
                          f"rollbacks are [{rollbacks}] (show_rollbacks' instant column)")
    meta = table.timeline.avro_metadata(found[0]) or {}
    undone = _java_list(list(meta.get("commitsRollback") or ()))
    start = meta.get("startRollbackTime") or wanted
    rows: list[Row] = []
    for partition, pm in (meta.get("partitionMetadata") or {}).items():
        rows += [(start, undone, partition, f, True) for f in pm.get("successDeleteFiles") or ()]
        rows += [(start, undone, partition, f, False) for f in pm.get("failedDeleteFiles") or ()]
    return _limit(rows, args)


def show_savepoints(args: Arguments) -> list[Row]:
    """Completed savepoints, newest first: the engine's (HudiTable.savepoint) and Java's alike."""
    table = HudiTable.load(args.table_path())
    return [(i.timestamp,) for i in reversed(table.timeline.filter_by([Action.SAVEPOINT], [State.COMPLETED]))]


def show_compaction(args: Arguments) -> list[Row]:
    """Compactions, pending and completed, newest first: (instant, operations in the plan, state)."""
    table = HudiTable.load(args.table_path())
    if not table.is_mor:
        raise ConfigError(f"show_compaction: Cannot show compaction on a Non Merge On Read table ({table.base_path} "
                          f"is {table.config.table_type})")
    rows: list[Row] = []
    for instant in reversed(table.timeline):
        if instant.action is Action.COMPACTION or (instant.is_completed and instant.action is Action.COMMIT):
            plan = CompactionPlan.load(table.timeline, instant.timestamp)
            rows.append((instant.timestamp, len(plan.operations), instant.state.name))
    return _limit(rows, args)


def _cleans(args: Arguments) -> tuple[HudiTable, list]:
    if args["showArchived"]:
        raise ConfigError("show_cleans: showArchived => true is not served (the engine reads archived commits "
                          "only); call it without showArchived")
    table = HudiTable.load(args.table_path())
    found = []
    for instant in reversed(table.timeline.filter_by([Action.CLEAN], [State.COMPLETED])):
        found.append((instant, table.timeline.avro_metadata(instant) or {}))
    return table, found


def show_cleans(args: Arguments) -> list[Row]:
    table, cleans = _cleans(args)
    rows: list[Row] = [
        (i.timestamp, completion_time(table.timeline, i), i.action.value, m.get("startCleanTime"),
         m.get("timeTakenInMillis"), m.get("totalFilesDeleted"), m.get("earliestCommitToRetain"),
         m.get("lastCompletedCommitTimestamp"), m.get("version"))
        for i, m in cleans]
    return _limit(rows, args)


def show_cleans_metadata(args: Arguments) -> list[Row]:
    table, cleans = _cleans(args)
    rows: list[Row] = []
    for i, m in cleans:
        done = completion_time(table.timeline, i)
        for partition, pm in (m.get("partitionMetadata") or {}).items():
            rows.append((i.timestamp, done, i.action.value, m.get("startCleanTime"), partition, pm.get("policy"),
                         len(pm.get("deletePathPatterns") or ()), len(pm.get("successDeleteFiles") or ()),
                         len(pm.get("failedDeleteFiles") or ()), pm.get("isPartitionDeleted"),
                         m.get("timeTakenInMillis"), m.get("totalFilesDeleted")))
    return _limit(rows, args)


def show_clean_plans(args: Arguments) -> list[Row]:
    """Every clean's plan (its requested file), newest first, with the instant's state now."""
    if args["showArchived"]:
        raise ConfigError("show_clean_plans: showArchived => true is not served (the engine reads archived commits "
                          "only); call it without showArchived")
    table = HudiTable.load(args.table_path())
    rows: list[Row] = []
    for instant in reversed(table.timeline.filter_by([Action.CLEAN])):
        plan = table.timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        earliest = plan.get("earliestInstantToRetain") or {}
        extra = plan.get("extraMetadata") or {}
        rows.append((instant.timestamp, instant.state.name, instant.action.value, earliest.get("timestamp"),
                     plan.get("lastCompletedCommitTimestamp"), plan.get("policy"), plan.get("version"),
                     len(plan.get("filePathsToBeDeletedPerPartition") or {}),
                     len(plan.get("partitionsToBeDeleted") or ()),
                     "{" + ", ".join(f"{k}={v}" for k, v in extra.items()) + "}" if extra else None))
    return _limit(rows, args)


def _state_times(table: HudiTable) -> dict[tuple[str, State], str]:
    """(requested time, state) -> when that state's file was last modified, as `MM-dd HH:mm:ss` in this machine's
    time zone (Hudi formats it in the JVM's)."""
    timeline = table.timeline
    out = {}
    for entry in table.storage.list_dir(timeline.meta_path):
        instant = None if entry.is_dir else timeline.layout.parse_file_name(entry.name)
        mtime = None if instant is None else table.storage.mtime_ms(entry.path)
        if instant is not None and mtime is not None:
            out[(instant.timestamp, instant.state)] = datetime.fromtimestamp(mtime / 1000).strftime("%m-%d %H:%M:%S")
    return out


def _rollback_info(table: HudiTable) -> tuple[dict[str, str], dict[str, list[str]]]:
    """A rollback instant's own text ("Rolls back X" / "Rolled back: X, Y"), and each undone instant's rollbacks."""
    own: dict[str, str] = {}
    undone: dict[str, list[str]] = {}
    for instant in table.timeline.filter_by([Action.ROLLBACK]):
        try:
            if instant.is_completed:
                commits = list((table.timeline.avro_metadata(instant) or {}).get("commitsRollback") or ())
                own[instant.timestamp] = f"Rolled back: {', '.join(commits)}"
            else:
                plan = table.timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
                commits = [(plan.get("instantToRollback") or {}).get("commitTime")]
                own[instant.timestamp] = f"Rolls back {commits[0]}"
        except HudiError:  # an unreadable rollback file: no information, as Hudi
            continue
        for commit in commits:
            undone.setdefault(str(commit), []).append(instant.timestamp)
    return own, undone


def show_timeline(args: Arguments) -> list[Row]:
    """The active timeline, newest first: each instant in its latest state, when each state's file was written,
    and which rollbacks concern it. `startTime` / `endTime` bound the requested times (both given: no limit)."""
    if args["showArchived"]:
        raise ConfigError("show_timeline: showArchived => true is not served (show_archived_commits lists the "
                          "archived commits); call it without showArchived")
    table = HudiTable.load(args.table_path())
    start, end = args["startTime"].strip(), args["endTime"].strip()
    instants = [i for i in table.timeline if (not start or i.timestamp >= start) and (not end or i.timestamp <= end)]
    instants.sort(key=lambda i: i.timestamp, reverse=True)
    if not (start and end):
        instants = instants[: max(args["limit"], 0)]
    times = _state_times(table)
    own, undone = _rollback_info(table)
    rows: list[Row] = []
    for i in instants:
        info = own.get(i.timestamp) if i.action is Action.ROLLBACK else \
            (f"Rolled back by: {', '.join(undone[i.timestamp])}" if i.timestamp in undone else None)
        rows.append((i.timestamp, i.action.value, i.state.name, times.get((i.timestamp, State.REQUESTED)),
                     times.get((i.timestamp, State.INFLIGHT)), times.get((i.timestamp, State.COMPLETED)), "ACTIVE",
                     info))
    return rows


def _deleting_metadata(table: HudiTable, action: Action) -> list[tuple[str, str, dict]]:
    """(instant, "active" / "archived", metadata) of the completed cleans or rollbacks, each timeline newest first
    (the active one first), as Hudi's show_file_status looks them up."""
    active = [(i.timestamp, "active", table.timeline.avro_metadata(i) or {})
              for i in reversed(table.timeline.filter_by([action], [State.COMPLETED]))]
    archived = []
    layout = table.timeline.layout
    if isinstance(layout, TimelineLayoutV2):
        history = TimelineHistory.of(table.location, layout.timeline_path, layout.history_path)
        kind = avro_kind_for(action, State.COMPLETED)
        archived = [(r.instant_time, "archived", read_avro_metadata(r.metadata, kind, file_name=history.folder))
                    for r in ([] if history.is_empty() else history.records()) if r.action == action.value and r.metadata]
    else:
        key = "hoodieCleanMetadata" if action is Action.CLEAN else "hoodieRollbackMetadata"
        archived = [(e["commitTime"], "archived", e[key]) for e in archived_entries(table.location)
                    if e.get("actionType") == action.value and e.get(key)]
    return active + sorted(archived, key=lambda a: a[0], reverse=True)


def show_file_status(args: Arguments) -> list[Row]:
    """Whether a data file was deleted (by which clean, rollback or restore, on which timeline), still exists, or
    is unknown."""
    table = HudiTable.load(args.table_path())
    partition, name = args["partition"], args["file"]
    if not partition and table.config.partition_fields:
        raise ConfigError(f"show_file_status: table {table.base_path} is a partitioned table. Please specify the "
                          "partition name where the current file is located (partition => '<partition path>')")
    for action in (Action.CLEAN, Action.ROLLBACK):
        for at, where, meta in _deleting_metadata(table, action):
            if any(name in f for pm in (meta.get("partitionMetadata") or {}).values()
                   for f in pm.get("successDeleteFiles") or ()):
                return [("deleted", action.value, at, where, "")]
    for instant in reversed(table.timeline.filter_by([Action.RESTORE], [State.COMPLETED])):
        restored = (table.timeline.avro_metadata(instant) or {}).get("hoodieRestoreMetadata") or {}
        if any(name in f for rollbacks in restored.values() for rb in rollbacks
               for pm in (rb.get("partitionMetadata") or {}).values() for f in pm.get("successDeleteFiles") or ()):
            return [("deleted", Action.RESTORE.value, instant.timestamp, "active", "")]
    folder = table.location.join(partition or "")
    for entry in table.storage.list_dir(folder):
        if entry.name == name:
            return [("exist", "", "", "active", entry.path)]
    return [("unknown", "", "", "", "")]


# export_instants: an archived (layout 1) entry's metadata field per action.
_ARCHIVED_FIELDS = {"clean": "hoodieCleanMetadata", "commit": "hoodieCommitMetadata",
                    "deltacommit": "hoodieCommitMetadata", "replacecommit": "hoodieReplaceCommitMetadata",
                    "rollback": "hoodieRollbackMetadata", "savepoint": "hoodieSavePointMetadata",
                    "restore": "hoodieRestoreMetadata", "compaction": "hoodieCompactionMetadata"}


def export_instants(args: Arguments) -> list[Row]:
    """Hudi's export_instants: the completed instants of `actions`, each as JSON in a file of `local_folder` (an
    active instant under its timeline file name, an archived one as `<time>.<action>`): oldest first, archived before
    active; with `desc`, newest first, active before archived; at most `limit` (-1: all). Commit metadata is Hudi's
    commit JSON (a layout-2 table's Avro converted); the other actions' Avro records as JSON. Unlike Java's, which
    globs a legacy archive folder only, the archived timeline is read where the table keeps it (`archived/`, or the
    LSM history)."""
    table = HudiTable.load(args.table_path())
    storage, folder = Storage.for_uri(args["local_folder"])
    if not storage.is_dir(folder):
        raise ConfigError(f"{args['local_folder']} is not a valid local directory")
    actions = {a.strip() for a in str(args["actions"]).split(",") if a.strip()}
    limit = args["limit"] if args["limit"] is not None and args["limit"] >= 0 else None
    timeline = table.timeline
    active = [(timeline.layout.file_name(i), i) for i in timeline.instants
              if i.is_completed and i.action.value in actions]
    archived = [e for e in _archived_exports(table) if e[1] in actions]
    archived_items = [(f"{t}.{a}", read) for t, a, read in archived]
    active_items = [(name, _active_export(timeline, i)) for name, i in active]
    ordered = (active_items[::-1] + archived_items[::-1]) if args["desc"] else archived_items + active_items
    count = 0
    for name, content in ordered[:limit]:
        storage.write_bytes(Storage.join(folder, name), content())
        count += 1
    return [(f"Exported {count} Instants to {args['local_folder']}",)]


def _json(record: Any) -> bytes:
    return json.dumps(record, indent=2, default=str).encode()


def _commit_json(data: bytes, file_name: str) -> bytes:
    return CommitMetadata.from_avro(data, file_name=file_name).to_json()


def _avro_json(data: bytes, kind: str | None) -> bytes:
    return _json(read_avro_metadata(data, kind) if data else None)


def _active_export(timeline: Timeline, instant: Instant) -> Callable[[], bytes]:
    if instant.action in COMMIT_ACTIONS:
        return lambda: timeline.commit_metadata(instant).to_json()
    return lambda: _json(timeline.avro_metadata(instant))


def _archived_exports(table: HudiTable) -> list[tuple[str, str, Callable[[], bytes]]]:
    """(instant time, action, its JSON) of every completed archived instant, oldest first."""
    layout = table.timeline.layout
    out: list[tuple[str, str, Callable[[], bytes]]] = []
    if isinstance(layout, TimelineLayoutV2):
        history = TimelineHistory.of(table.location, layout.timeline_path, layout.history_path)
        for r in [] if history.is_empty() else history.records():
            data = r.metadata or b""
            if Action(r.action) in COMMIT_ACTIONS:
                out.append((r.instant_time, r.action, partial(_commit_json, data, f"archived {r.instant_time}")))
            else:
                out.append((r.instant_time, r.action,
                            partial(_avro_json, data, avro_kind_for(r.action, State.COMPLETED))))
        return sorted(out, key=lambda e: e[0])
    for entry in archived_entries(table.location):
        action = entry.get("actionType")
        record = entry.get(_ARCHIVED_FIELDS.get(str(action), ""))
        if entry.get("actionState") == State.COMPLETED.name and record is not None:
            out.append((entry["commitTime"], str(action), partial(_json, record)))
    return sorted(out, key=lambda e: e[0])
