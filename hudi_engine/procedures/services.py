"""The procedures that act on a table, through the engine's table services and instant protocol (never a write
path of their own): `run_clean`, `run_compaction`, `archive_commits`, `rollback_to_instant`,
`run_rollback_inflight_tableservice`, `delete_marker`, `truncate_table`, `drop_partition`, `hive_sync`, `repair_corrupted_clean_files`,
`upgrade_table` / `downgrade_table` (HudiTable.upgrade / downgrade), `sync_validate`, and the
savepoint procedures `create_savepoint`, `delete_savepoint` and `rollback_to_savepoint` (HudiTable.savepoint /
delete_savepoint / restore), and `run_clustering` / `show_clustering` (HudiTable.cluster). Every
one takes the table lock as `HudiTable`'s services do, and refuses what it cannot do before it changes anything."""
from __future__ import annotations

import datetime
import time
import warnings
from typing import Any

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row, find_commit
from hudi_engine.table import HudiTable
from hudi_engine.table_features import check_writable
from hudi_engine.table_services import compaction, service_lock_at
from hudi_engine.table_services.clustering import pending_clusterings
from hudi_engine.table_services.compaction import CompactionPlan, rollback_inflight_compaction
from hudi_engine.table_services.upgrade_downgrade import parse_version, upgrade_downgrade
from hudi_engine.timeline.clustering import ClusteringPlan, is_clustering
from hudi_engine.timeline.instant import COMMIT_ACTIONS, Action, State
from hudi_engine.write.markers import delete_marker_dir

# run_clean's arguments -> the engine's cleaning keys (hudi_engine.config.keys).
_CLEAN_KEYS = {"clean_policy": "hoodie.cleaner.policy", "retain_commits": "hoodie.cleaner.commits.retained",
               "file_versions_retained": "hoodie.cleaner.fileversions.retained"}
_CLEAN_NOT_SERVED = ("hours_retained", "trigger_strategy", "trigger_max_commits")


def parse_options(procedure: str, text: str | None) -> dict[str, str]:
    """Hudi's `options => 'k1=v1,k2=v2'`."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"Argument: options of {procedure}: {item.strip()!r} is not key=value; give "
                              "options => 'hoodie.key1=value1,hoodie.key2=value2'")
        out[key.strip()] = value.strip()
    return out


def run_clean(args: Arguments) -> list[Row]:
    for name in _CLEAN_NOT_SERVED:
        if args[name] is not None:
            raise ConfigError(f"Argument: {name} of run_clean is not served (the engine cleans by "
                              "KEEP_LATEST_COMMITS / KEEP_LATEST_FILE_VERSIONS, triggered on each call); leave it out")
    if not args["schedule_in_line"]:
        raise ConfigError("Argument: schedule_in_line => false of run_clean is not served (the engine schedules and "
                          "runs a clean in one call; pending cleans finish first); leave it out")
    options: dict[str, Any] = parse_options("run_clean", args["options"])
    options.update({key: args[name] for name, key in _CLEAN_KEYS.items() if args[name] is not None})
    table = HudiTable.load(args.table_path())
    result = table.clean(options=options)
    if result is None:
        return []
    table = table.reload()
    done = [i for i in table.timeline.instants_at(result.instant_time) if i.action is Action.CLEAN]
    meta = (table.timeline.avro_metadata(done[0]) or {}) if done else {}
    return [(meta.get("startCleanTime", result.instant_time), meta.get("timeTakenInMillis"),
             meta.get("totalFilesDeleted", len(result.deleted)),
             meta.get("earliestCommitToRetain", result.earliest_commit_to_retain),
             "{" + ", ".join(f"{k}={v}" for k, v in (meta.get("bootstrapPartitionMetadata") or {}).items()) + "}",
             meta.get("version"))]


def archive_commits(args: Arguments) -> list[Row]:
    """Archive as `hoodie.keep.min.commits` / `max` say (min_commits, max_commits; retain_commits is the cleaner's
    `hoodie.cleaner.commits.retained`, which archival stays behind). Returns 0, as Hudi's procedure does."""
    table = HudiTable.load(args.table_path())
    table.archive(options={"hoodie.keep.min.commits": args["min_commits"],
                           "hoodie.keep.max.commits": args["max_commits"],
                           "hoodie.cleaner.commits.retained": args["retain_commits"]})
    return [(0,)]


def rollback_to_instant(args: Arguments) -> list[Row]:
    """Roll back the commit at `instant_time`, which must be the latest (Hudi refuses older ones too: later
    commits may depend on it); a pending one is rolled back as a failed write."""
    table = HudiTable.load(args.table_path())
    wanted = args["instant_time"]
    if not any(not i.is_completed for i in table.timeline.instants_at(wanted)):
        find_commit(table, wanted)  # Hudi's "Commit X not found in Commits" for an unknown instant
    table.rollback(wanted)
    return [(True,)]


def delete_marker(args: Arguments) -> list[Row]:
    """Delete the marker folder of `instant_time` (true also when there was none, as Hudi)."""
    table = HudiTable.load(args.table_path())
    with service_lock_at(table.location):
        delete_marker_dir(table.location, args["instant_time"])
    return [(True,)]


def _compaction_rows(table: HudiTable, instants: list[str]) -> list[Row]:
    timeline = table.reload().timeline
    rows: list[Row] = []
    for ts in instants:
        found = [i for i in timeline.instants_at(ts) if i.comparable_action is Action.COMMIT]
        state = found[0].state.name if found else State.REQUESTED.name
        rows.append((ts, len(CompactionPlan.load(timeline, ts).operations), state))
    return rows


def run_compaction(args: Arguments) -> list[Row]:
    """op `schedule` (a compaction plan over the file groups with log files; `timestamp` its instant), `run`
    (execute pending compactions: `timestamp` one, `instants` a comma list, else all of them, `limit` at most that
    many, oldest first) or `scheduleAndExecute`. Rows: each compaction handled, (instant, operations, state)."""
    op = args["op"]
    kinds = {"schedule": "schedule", "run": "run", "execute": "run", "scheduleandexecute": "both"}
    kind = kinds.get(op.lower())
    if kind is None:
        raise ConfigError(f"Argument: op of run_compaction is {op!r}; expected schedule, run (or execute) or "
                          "scheduleAndExecute")
    options = parse_options("run_compaction", args["options"])
    table = HudiTable.load(args.table_path())
    if not table.is_mor:
        raise ConfigError(f"run_compaction: Compaction is not supported on a CopyOnWrite table ({table.base_path})")
    check_writable(table.location, table.config, table.timeline, action="compact")
    handled: list[str] = []
    if kind in ("schedule", "both"):
        at = args["timestamp"]
        scheduled = compaction.schedule_compaction(table.location, instant_time=None if at is None else str(at))
        if scheduled is not None:
            handled.append(scheduled.timestamp)
        if kind == "schedule":
            return _compaction_rows(table, handled)
        pending = handled
    else:
        pending = [i.timestamp for i in table.timeline.pending_compactions()]
        wanted = [str(args["timestamp"])] if args["timestamp"] is not None else \
            [s.strip() for s in (args["instants"] or "").split(",") if s.strip()]
        if wanted:
            missing = [w for w in wanted if w not in pending]
            if missing:
                raise ConfigError(f"run_compaction: no pending compaction at {', '.join(missing)} on "
                                  f"{table.base_path}; pending: [{', '.join(pending)}]")
            pending = wanted
        if args["limit"] is not None:
            pending = pending[: max(args["limit"], 0)]
    config = WriteConfig.from_options(options)
    for ts in pending:
        compaction.run_compaction(table.location, ts, storage_uri=table.location.uri, config=config)
    return _compaction_rows(table, pending)


def run_rollback_inflight_tableservice(args: Arguments) -> list[Row]:
    """Roll back a pending compaction (back to requested; `delete_request_instant_file => true` removes the plan
    as well). A pending clustering belongs to issue 39 and is refused."""
    start = time.monotonic()
    table = HudiTable.load(args.table_path())
    wanted = args["pending_instant"]
    found = [i for i in table.timeline.instants_at(wanted) if not i.is_completed]
    if not found:
        raise ConfigError(f"run_rollback_inflight_tableservice: no pending table service at {wanted} on "
                          f"{table.base_path}")
    instant = found[0]
    if instant.action is Action.COMPACTION:
        check_writable(table.location, table.config, table.timeline, action="roll back")
        rollback_inflight_compaction(table.location, wanted)
        if args["delete_request_instant_file"]:
            with service_lock_at(table.location):
                table.timeline.reload().delete_instant_files(instant, [State.REQUESTED])
    elif is_clustering(table.timeline, instant):
        raise ConfigError(f"run_rollback_inflight_tableservice: {instant} is a clustering, which goes with issue 39; "
                          "use Java Hudi's CALL run_rollback_inflight_tableservice for it")
    else:
        raise ConfigError(f"run_rollback_inflight_tableservice: {instant} is not a table service (a write: use "
                          "rollback_to_instant)")
    return [(wanted, str(int((time.monotonic() - start) * 1000)))]


def truncate_table(args: Arguments) -> list[Row]:
    """Empty the table (`HudiTable.truncate`, as TRUNCATE TABLE), or with `partitions` (comma-separated partition
    paths) delete those as `drop_partition` does; no rows, as Hudi's procedure returns none."""
    table = HudiTable.load(args.table_path())
    if args["partitions"]:
        table.delete_partitions(args["partitions"].split(","))
    else:
        table.truncate()
    return []


def drop_partition(args: Arguments) -> list[Row]:
    """Hudi's delete_partition of `partition` (comma-separated partition paths, `*` wildcards):
    `HudiTable.delete_partitions`, one replacecommit; `Success`, as Hudi's procedure answers."""
    HudiTable.load(args.table_path()).delete_partitions(args["partition"].split(","))
    return [("Success",)]


# hive_sync's arguments -> Hudi's sync keys (hudi_engine.config), as HiveSyncProcedure sets them.
_HIVE_SYNC_KEYS = {"mode": "hoodie.datasource.hive_sync.mode",
                   "partition_fields": "hoodie.datasource.hive_sync.partition_fields",
                   "partition_extractor_class": "hoodie.datasource.hive_sync.partition_extractor_class",
                   "strategy": "hoodie.datasource.hive_sync.table.strategy"}


def hive_sync(args: Arguments) -> list[Row]:
    """Sync the catalog table `table` into the session's Hive metastore as a write with
    `hoodie.datasource.hive_sync.enable` does (docs/catalog-sync.md), the entry named as the catalog names it.
    `sync_incremental` is taken and has no effect (every sync compares all partitions); another metastore or a JDBC
    connection (`metastore_uri`, `username`, `password`, `use_jdbc`) is refused: the sync goes through the session's
    own metastore client."""
    for name in ("metastore_uri", "username", "password", "use_jdbc"):
        if args[name]:
            raise ConfigError(f"Argument: {name} of hive_sync is not served: the engine syncs through the Spark "
                              "session's own Hive metastore (spark.sql.catalogImplementation=hive, its "
                              "hive.metastore.uris); leave it out")
    table = args["table"]
    if "/" in table or ":" in table:
        raise ConfigError(f"hive_sync: table => '{table}' is a path; name the catalog table to sync ([db.]table)")
    options = {"hoodie.datasource.hive_sync.enable": "true",
               **{key: args[name] for name, key in _HIVE_SYNC_KEYS.items() if args[name]}}
    args.catalog_session().sync_hive(table, options)
    return [("hive sync success.",)]


def repair_corrupted_clean_files(args: Arguments) -> list[Row]:
    """Delete the files of pending cleans whose plan is not an Avro file (an empty or torn requested file a crash
    left), so that the next clean plans afresh; completed cleans are not touched. Hudi deletes the pending file one
    state at a time; this deletes the clean's pending files together."""
    table = HudiTable.load(args.table_path())
    with service_lock_at(table.location):
        timeline = table.timeline.reload()
        for instant in timeline.filter_by([Action.CLEAN]).pending():
            try:
                plan = timeline.avro_metadata(instant.with_state(State.REQUESTED))
            except HudiError:
                plan = None
            if plan is None:
                timeline.delete_instant_files(instant, [State.REQUESTED, State.INFLIGHT])
    return [(True,)]


# Hudi's savepoint procedures answer false where its write client raised HoodieSavepointException (and log why);
# these raise the engine's refusal instead, which names the reason and the way out.

def create_savepoint(args: Arguments) -> list[Row]:
    """Savepoint `commit_time` (default: the latest completed commit), as Hudi's procedure."""
    table = HudiTable.load(args.table_path())
    commit = args["commit_time"] or None
    if commit is not None:
        find_commit(table, commit)  # Hudi's "Commit X not found in Commits ..."
    table.savepoint(commit, user=args["user"] or "", comment=args["comments"] or "")
    return [(True,)]


def _savepoints_named(table: HudiTable, text: str | None, procedure: str) -> list[str]:
    """`instant_time`: one savepoint, a comma-separated list (delete_savepoint), or empty for the latest."""
    kept = [s.instant_time for s in table.savepoints()]
    if not kept:
        raise ConfigError(f"{procedure}: there are no completed savepoints in {table.base_path}")
    wanted = [t.strip() for t in (text or "").split(",") if t.strip()] or [kept[-1]]
    for instant in wanted:
        if instant not in kept:
            raise ConfigError(f"{procedure}: savepoint {instant} not found in {table.base_path}; its savepoints: "
                              f"[{', '.join(kept)}]")
    return wanted


def delete_savepoint(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    for instant in _savepoints_named(table, args["instant_time"], "delete_savepoint"):
        table.delete_savepoint(instant)
    return [(True,)]


def rollback_to_savepoint(args: Arguments) -> list[Row]:
    """Restore the table to a savepoint (default: the latest), as one `restore` instant."""
    table = HudiTable.load(args.table_path())
    wanted = _savepoints_named(table, args["instant_time"], "rollback_to_savepoint")
    if len(wanted) > 1:  # Hudi takes one savepoint here (delete_savepoint takes a list)
        raise ConfigError(f"Argument: instant_time of rollback_to_savepoint names one savepoint, not "
                          f"{', '.join(wanted)}")
    table.restore(wanted[0])
    return [(True,)]


# run_clustering's arguments -> the engine's clustering keys (hudi_engine.config.keys).
_CLUSTERING_KEYS = {"order": "hoodie.clustering.plan.strategy.sort.columns",
                    "order_strategy": "hoodie.layout.optimize.strategy",
                    "selected_partitions": "hoodie.clustering.plan.strategy.partition.selected",
                    "partition_regex_pattern": "hoodie.clustering.plan.strategy.partition.regex.pattern"}


def _clustering_rows(table: HudiTable, instants: set[str] | None, show_partitions: bool,
                     limit: int | None) -> list[Row]:
    """Hudi's rows of clustering instants, newest first: instant, input groups, state, partitions ('*' unless
    asked). `instants` None: every clustering on the active timeline."""
    timeline = table.timeline
    rows: list[Row] = []
    for instant in sorted(timeline.instants, key=lambda i: i.timestamp, reverse=True):
        if (instants is not None and instant.timestamp not in instants) or not is_clustering(timeline, instant):
            continue
        plan = ClusteringPlan.load(timeline, instant)
        if plan is None:
            continue
        parts = ",".join(dict.fromkeys(s.partition_path for s in plan.slices)) if show_partitions else "*"
        rows.append((instant.timestamp, len(plan.input_groups), instant.state.name, parts))
    return rows if limit is None else rows[: max(limit, 0)]


def run_clustering(args: Arguments) -> list[Row]:
    """Hudi's run_clustering: `op` schedule / execute / scheduleAndExecute (default: execute when `instants` are
    given, else scheduleAndExecute), sort columns `order`, `order_strategy`, `selected_partitions`, `options`."""
    if args["predicate"] is not None:
        raise ConfigError("Argument: predicate of run_clustering is not served (it needs Spark's resolver); give "
                          "selected_partitions => 'p1,p2' or partition_regex_pattern")
    options: dict[str, Any] = parse_options("run_clustering", args["options"])
    options.update({key: args[name] for name, key in _CLUSTERING_KEYS.items() if args[name] is not None})
    if args["selected_partitions"] is not None:
        options["hoodie.clustering.plan.partition.filter.mode"] = "SELECTED_PARTITIONS"
    wanted = [t.strip() for t in (args["instants"] or "").split(",") if t.strip()]
    op = args["op"] or ("execute" if wanted else "scheduleAndExecute")
    table = HudiTable.load(args.table_path())
    pending = pending_clusterings(table.location)
    unknown = [t for t in wanted if t not in pending]
    if unknown:
        raise ConfigError(f"Argument: instants of run_clustering: {', '.join(unknown)} not pending clusterings of "
                          f"{table.base_path}; pending: [{', '.join(pending)}]")
    involved = set(wanted or (pending if op != "schedule" else []))
    if op == "execute":
        for ts in wanted or pending:
            table.cluster(options=options, op="execute", instant=ts)
    else:
        done = table.cluster(options=options, op=op)
        if done is not None:
            involved.add(done.instant_time)
    table = table.reload()
    return _clustering_rows(table, involved, bool(args["show_involved_partition"]), args["limit"])


def show_clustering(args: Arguments) -> list[Row]:
    table = HudiTable.load(args.table_path())
    return _clustering_rows(table, None, bool(args["show_involved_partition"]), args["limit"])


def upgrade_or_downgrade(args: Arguments) -> list[Row]:
    """Hudi's UpgradeOrDowngradeProcedure, under both names and in either direction: move the table to `to_version`
    (HoodieTableVersion's name: SIX, EIGHT, NINE). As Hudi's, a failure answers false, its reason given as a
    warning (Hudi logs it); the table is then unchanged, or, after a crash, finished by the next call."""
    try:
        table = HudiTable.load(args.table_path())
        upgrade_downgrade(table.location, parse_version(args["to_version"]), WriteConfig())
    except HudiError as e:
        warnings.warn(f"{args.procedure.name}: could not change the table version: {e}", stacklevel=2)
        return [(False,)]
    return [(True,)]


def sync_validate(args: Arguments) -> list[Row]:
    """Hudi's sync_validate: the row counts of two tables (`src_table`, `dst_table`: a replica and its source) and,
    when one is ahead, how many new records its commits after the other's latest hold. Java asks HiveServer2 for
    `count(_hoodie_commit_time)` of the synced tables; here each table's own snapshot is counted (what its synced
    entry returns), so `hive_server_url`, `hive_user` and `hive_pass` are taken and not used (nor are `src_db` and
    `target_db`). `mode` is `complete` or `latestPartitions` (rows whose `datestr` is within the last
    `partition_cnt` days, as Java's query filters them)."""
    mode = args["mode"]
    if mode not in ("complete", "latestPartitions"):
        raise ConfigError(f"Argument: mode of sync_validate is {mode!r}; Hudi's modes are complete and "
                          "latestPartitions")
    src = HudiTable.load(_table_named(args, "src_table"))
    dst = HudiTable.load(_table_named(args, "dst_table"))
    src_count, dst_count = _count(src, mode, args["partition_cnt"]), _count(dst, mode, args["partition_cnt"])
    src_latest, dst_latest = _latest_write(src), _latest_write(dst)
    if dst_latest > src_latest:  # the destination is ahead: its commits since the source's latest
        return [(_count_difference(dst, src, dst_count, src_count, src_latest),)]
    return [(_count_difference(src, dst, src_count, dst_count, dst_latest),)]


def _table_named(args: Arguments, parameter: str) -> str:
    return Arguments(args.procedure, {"table": args[parameter]}, args.resolver, args.session).table_path()


def _latest_write(table: HudiTable) -> str:
    """The newest commit-like instant, pending ones too (Java's getCommitsTimeline().lastInstant()); "0" if none."""
    times = [i.timestamp for i in table.timeline.instants if i.action in COMMIT_ACTIONS]
    return max(times, default="0")


def _count(table: HudiTable, mode: str, days: int) -> int:
    if mode == "complete":
        return table.read_snapshot(columns=["_hoodie_commit_time"]).num_rows
    if "datestr" not in table.schema().names:
        raise ConfigError(f"sync_validate: mode latestPartitions counts rows by their datestr column (as Hudi's "
                          f"query does), which table {table.config.name!r} ({table.base_path}) lacks; use mode "
                          "complete")
    today = datetime.date.today()
    start, end = (today - datetime.timedelta(days=days)).isoformat(), today.isoformat()
    return table.read_snapshot(columns=["datestr"], filters=[("datestr", ">", start), ("datestr", "<=", end)]
                               ).num_rows


def _count_difference(ahead: HudiTable, behind: HudiTable, ahead_count: int, behind_count: int,
                      behind_latest: str) -> str:
    """Java's answer: the count difference, and the new records (written minus updated) of `ahead`'s completed
    commits after `behind_latest`, when there are such commits."""
    text = (f"Count difference now is count({ahead.config.name}) - count({behind.config.name}) == "
            f"{ahead_count - behind_count}")
    catch_up = [i for i in ahead.timeline.instants
                if i.action in COMMIT_ACTIONS and i.is_completed and i.timestamp > behind_latest]
    if not catch_up:
        return text
    new = 0
    for instant in catch_up:
        meta = ahead.timeline.commit_metadata(instant)
        new += meta.total_records_written - sum(s.num_update_writes for s in meta.write_stats())
    return f"{text}. Catach up count is {new}"  # Java's spelling
