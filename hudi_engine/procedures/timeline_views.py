"""The procedures that read the other actions of the timeline: `show_rollbacks`, `show_rollback_detail`,
`show_savepoints`, `show_compaction`, `show_cleans`, `show_cleans_metadata`, `show_clean_plans`, `show_timeline` and
`show_file_status`, from the Avro files of those instants, as Hudi 1.2's procedures of those names read them."""
from __future__ import annotations

from datetime import datetime

from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row, completion_time
from hudi_engine.table import HudiTable
from hudi_engine.table_services.compaction import CompactionPlan
from hudi_engine.timeline import read_avro_metadata
from hudi_engine.timeline.archived import archived_entries
from hudi_engine.timeline.avro_models import avro_kind_for
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import Action, State
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
