"""Hudi table services from dbt: `dbt run-operation hudi_compact | hudi_clean | hudi_rollback | hudi_archive |
hudi_savepoint | hudi_savepoints | hudi_delete_savepoint | hudi_restore --args '{model: m}'`.

The macros (`table_services.sql`) resolve the target (a model name, a relation or a path) and its service options
(the model's `compaction` / `cleaning` settings, then the operation's own arguments); this module runs the service
on the table through `HudiTable` and reports what it did. A service never runs while a write is in flight: a
pending write instant whose writer still holds the table's lock stops it with a message naming both.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.hudi.errors import HudiServiceError

# Each service's arguments besides the target (model, relation or path): what an unknown argument is checked against.
SERVICE_ARGS: dict[str, tuple[str, ...]] = {
    "compact": ("options",),
    "clean": ("policy", "retained", "options"),
    "rollback": ("instant",),
    "archive": ("min_commits", "max_commits", "options"),
    "sync": ("options",),
    "savepoint": ("instant", "comment"),
    "savepoints": (),
    "delete_savepoint": ("instant",),
    "restore": ("instant",),
    "cluster": ("op", "instant", "options"),
}
TARGET_ARGS = ("model", "relation", "path")
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


@dataclass(frozen=True)
class ServiceReport:
    service: str
    table: str
    instant: str | None  # the instant the service wrote (None: nothing to do)
    files: int
    rows: int
    detail: str

    @property
    def message(self) -> str:
        if self.instant is None:
            return f"hudi_{self.service} {self.table}: {self.detail}"
        return f"hudi_{self.service} {self.table}: instant {self.instant}, {self.files} files, {self.rows} rows ({self.detail})"

    def as_dict(self) -> dict[str, Any]:
        return {"service": self.service, "table": self.table, "instant": self.instant, "files": self.files,
                "rows": self.rows, "detail": self.detail, "message": self.message}


def check_arguments(service: str, given: Mapping[str, Any]) -> None:
    """One error naming every unknown argument of `hudi_<service>` and the accepted ones."""
    accepted = TARGET_ARGS + SERVICE_ARGS[service]
    unknown = sorted(k for k in given if k not in accepted)
    targets = [k for k in TARGET_ARGS if given.get(k) not in (None, "")]
    problems = [f"unknown argument(s) {unknown}" for _ in [1] if unknown]
    if len(targets) != 1:
        problems.append(f"name the table with exactly one of {', '.join(TARGET_ARGS)} (got {targets or 'none'})")
    if problems:
        raise HudiServiceError(
            f"hudi_{service}: {'; '.join(problems)}. Accepted arguments: {', '.join(accepted)}; e.g. "
            f"dbt run-operation hudi_{service} --args '{{model: orders}}'")


def refuse_if_write_in_flight(table, path: str, service: str, instant: str | None = None) -> None:
    """A pending write instant whose writer holds the lock: the service would have to wait for it (or undo it).
    `table`: the service's `HudiTable` of `path`."""
    from hudi_engine import lock_holder

    pending = [i for i in table.timeline.pending() if str(i.action) in WRITE_ACTIONS and i.timestamp != instant]
    if not pending:
        return
    holder = lock_holder(table.location)
    if holder is not None:
        raise HudiServiceError(
            f"hudi_{service} {path}: a write is in flight (instant {pending[-1].timestamp} "
            f"{pending[-1].action} {pending[-1].state.name}, lock held by {holder.get('owner', '?')}). Run the "
            f"service again once that write has finished.")


def run_service(service: str, path: str, options: Mapping[str, str], *, instant: str | None = None,
                comment: str | None = None, op: str | None = None, spark=None) -> ServiceReport:
    """Run `service` on the Hudi table at `path` with the engine options `options` (`comment`: a savepoint's; `op`:
    a clustering's schedule | execute | scheduleAndExecute)."""
    from hudi_engine import HudiError, HudiTable

    try:
        table = HudiTable.load(path)
    except (HudiError, FileNotFoundError) as e:
        raise HudiServiceError(f"hudi_{service}: no Hudi table at {path}: {e}") from e
    refuse_if_write_in_flight(table, path, service, instant)
    try:
        if service == "compact":
            return _compact(table, path, options, spark)
        if service == "clean":
            return _clean(table, path, options)
        if service == "rollback":
            return _rollback(table, path, options, instant)
        if service == "archive":
            return _archive(table, path, options)
        if service == "sync":
            return _sync(table, path, options, spark)
        if service in ("savepoint", "savepoints", "delete_savepoint", "restore"):
            return _savepoints(service, table, path, options, instant, comment)
        if service == "cluster":
            return _cluster(table, path, options, instant, op, spark)
    except HudiError as e:
        raise HudiServiceError(f"hudi_{service} {path}: {e}") from e
    raise HudiServiceError(f"unknown table service {service!r}; expected one of {', '.join(SERVICE_ARGS)}")


def _compact(table, path: str, options: Mapping[str, str], spark) -> ServiceReport:
    if not table.is_mor:
        raise HudiServiceError(
            f"hudi_compact {path}: the table is {table.config.table_type}; compaction merges the log files of "
            f"MERGE_ON_READ tables (table_type='mor'). Nothing to do on this table.")
    executor = None
    if spark is not None:
        from hudi_engine.spark import spark_executor

        executor = spark_executor(spark)
    result = table.compact(options=dict(options), executor=executor)
    if result is None:
        return ServiceReport("compact", path, None, 0, 0, "no log files to compact")
    return ServiceReport("compact", path, result.instant_time, result.file_groups, result.records_written,
                         f"{result.log_files_compacted} log files compacted into {result.file_groups} base files")


def _clean(table, path: str, options: Mapping[str, str]) -> ServiceReport:
    result = table.clean(options=dict(options))
    if result is None:
        return ServiceReport("clean", path, None, 0, 0, "nothing to clean (every file version is retained)")
    return ServiceReport("clean", path, result.instant_time, len(result.deleted), 0,
                         f"deleted {len(result.deleted)} files older than instant "
                         f"{result.earliest_commit_to_retain or '-'}")


def _rollback(table, path: str, options: Mapping[str, str], instant: str | None) -> ServiceReport:
    timeline = table.timeline
    if instant is not None:
        instant = str(instant)
        found = timeline.instants_at(instant)
        if not found:
            commits = timeline.completed_commits()
            raise HudiServiceError(
                f"hudi_rollback {path}: no instant {instant} on the timeline (completed commits: "
                f"{', '.join(i.timestamp for i in commits[-5:]) or 'none'}). Leave instant out to roll back the "
                f"latest completed commit.")
        target = found[-1]
    else:
        target = timeline.completed_commits().last()
        if target is None:
            raise HudiServiceError(f"hudi_rollback {path}: the table has no completed commit to roll back")
    rows = 0
    if target.is_completed and str(target.action) in WRITE_ACTIONS:
        stats = timeline.commit_metadata(target).write_stats()
        rows = sum(s.num_inserts + s.num_update_writes + s.num_deletes for s in stats)
    result = table.rollback(instant, options=dict(options))
    return ServiceReport("rollback", path, result.rollback_instant,
                         len(result.deleted_files) + len(result.rollback_log_files), rows,
                         f"rolled back {result.rolled_back.action} {result.rolled_back.timestamp}")


def _archive(table, path: str, options: Mapping[str, str]) -> ServiceReport:
    result = table.archive(options=dict(options))
    if result is None:
        return ServiceReport("archive", path, None, 0, 0,
                             f"nothing to archive ({len(table.timeline.completed_commits())} completed commits on the "
                             f"active timeline; archival starts above hoodie.keep.max.commits)")
    archived = result.archived
    return ServiceReport("archive", path, None, len(result.deleted_files), 0,
                         f"archived {len(archived)} instants ({archived[0].timestamp} to {archived[-1].timestamp}) "
                         f"into {result.archive_file}, {len(result.deleted_files)} timeline files removed")


def _sync(table, path: str, options: Mapping[str, str], spark) -> ServiceReport:
    from hudi_engine.spark import sync_catalogs

    if not any(str(options.get(k, "")).lower() == "true" for k in (
            "hoodie.datasource.hive_sync.enable", "hoodie.datasource.meta.sync.enable")):
        raise HudiServiceError(
            f"hudi_sync {path}: no catalog sync is configured: give the model hive_sync / glue_sync (or "
            "hoodie.datasource.hive_sync.enable / hoodie.datasource.meta.sync.enable in hudi_options), or "
            "options: {hoodie.datasource.hive_sync.enable: true}")
    done = sync_catalogs(spark, path, options)
    last = done[0].last_commit if done else None
    names = ", ".join(f"{e.qualified}" for s in done for e in s.entries)
    return ServiceReport("sync", path, None, 0, 0, f"synced {names} to commit {last}")


def _cluster(table, path: str, options: Mapping[str, str], instant: str | None, op: str | None,
             spark) -> ServiceReport:
    """Hudi's run_clustering: plan small file groups (`op: schedule`), execute a pending plan (`op: execute`, the
    oldest unless `instant`; one a `schedule_only` model's writes made), or both (the default)."""
    executor = None
    if spark is not None:
        from hudi_engine.spark import clustering_executor

        executor = clustering_executor(spark)
    op = op or "scheduleAndExecute"
    result = table.cluster(options=dict(options), op=op, instant=None if instant is None else str(instant),
                           executor=executor)
    if result is None:
        what = "no pending clustering to execute" if op == "execute" else "no small file groups to cluster"
        return ServiceReport("cluster", path, None, 0, 0, what)
    replaced = len(result.replaced_file_ids)
    if op == "schedule":
        return ServiceReport("cluster", path, result.instant_time, replaced, 0,
                             f"planned: {replaced} file groups to rewrite; run op: execute to execute it")
    rows = sum(s.num_writes for s in result.stats)
    return ServiceReport("cluster", path, result.instant_time, len(result.new_file_ids), rows,
                         f"{replaced} file groups clustered into {len(result.new_file_ids)}")


def _savepoints(service: str, table, path: str, options: Mapping[str, str], instant: str | None,
                comment: str | None) -> ServiceReport:
    """Savepoint a commit (default: the latest), list the savepoints, delete one, or restore the table to one
    (`instant`: a savepoint, or a commit cleaning kept whole)."""
    if service == "savepoint":
        done = table.savepoint(None if instant is None else str(instant), user="dbt",
                               comment=comment or "", options=dict(options))
        files = sum(len(v) for v in done.files.values())
        return ServiceReport(service, path, done.instant_time, files, 0,
                             f"savepointed commit {done.instant_time}: {files} files kept for a restore")
    if service == "savepoints":
        listed = [f"{s.instant_time} ({s.comments or 'no comment'})" for s in table.savepoints()]
        return ServiceReport(service, path, None, 0, 0, "savepoints: " + (", ".join(listed) or "none"))
    if instant is None and service == "restore":  # the latest savepoint: "savepoint before, restore after"
        latest = table.savepoints()[-1:]
        instant = latest[0].instant_time if latest else None
    if instant is None:
        raise HudiServiceError(f"hudi_{service} {path}: the table has no savepoint; give instant: "
                               f"'<yyyyMMddHHmmssSSS>', or savepoint the table first (dbt run-operation hudi_savepoint)")
    if service == "delete_savepoint":
        table.delete_savepoint(str(instant), options=dict(options))
        return ServiceReport(service, path, None, 0, 0, f"savepoint {instant} deleted")
    result = table.restore(str(instant), options=dict(options))
    undone = ", ".join(f"{i.action} {i.timestamp}" for i in result.rolled_back) or "nothing"
    return ServiceReport(service, path, result.restore_instant, len(result.rolled_back), 0,
                         f"restored to {instant}; rolled back {undone}")


def service_options(service: str, node_config: Mapping[str, Any], args: Mapping[str, Any]) -> dict[str, str]:
    """The engine options of a service run: the model's `hudi_options`, `compaction`, `cleaning` (as its writes
    use them), then the operation's `policy` / `retained` (hudi_clean), `min_commits` / `max_commits` (hudi_archive)
    and `options`. Checked by the engine's
    declarations before the service runs."""
    from dbt.adapters.hudi.model_config import (
        _cleaning_options,
        _clustering_options,
        _compaction_options,
        _glue_sync_options,
        _hive_sync_options,
        _option_text,
    )
    from hudi_engine import ConfigError, WriteConfig

    problems: list[str] = []
    options: dict[str, str] = {str(k): _option_text(v) for k, v in (node_config.get("hudi_options") or {}).items()}
    if node_config.get("compaction") is not None:
        options.update(_compaction_options(node_config["compaction"], problems))
    if node_config.get("cleaning") is not None:
        options.update(_cleaning_options(node_config["cleaning"], problems))
    if node_config.get("clustering") is not None:
        options.update(_clustering_options(node_config["clustering"], problems))
    for setting, translate in (("hive_sync", _hive_sync_options), ("glue_sync", _glue_sync_options)):
        if node_config.get(setting) is not None:
            options.update(translate(node_config[setting], problems))
    for arg, key in (("min_commits", "hoodie.keep.min.commits"), ("max_commits", "hoodie.keep.max.commits")):
        if args.get(arg) is not None:  # hudi_archive
            options[key] = _option_text(args[arg])
    cleaning = {k: args[k] for k in ("policy", "retained") if args.get(k) is not None}
    if cleaning:
        if "retained" in cleaning and "policy" not in cleaning:
            cleaning["policy"] = options.get("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS")
        options.update(_cleaning_options(cleaning, problems))
    extra = args.get("options") or {}
    if not isinstance(extra, Mapping):
        problems.append(f"options={extra!r}: expected a mapping of hoodie.* keys to values")
        extra = {}
    for key, value in extra.items():
        if not str(key).startswith("hoodie."):
            problems.append(f"options key {key!r}: expected a Hudi option name starting with 'hoodie.'")
        options[str(key)] = _option_text(value)
    if not problems:
        try:
            WriteConfig.from_options(options)
        except ConfigError as e:
            problems += [line.strip() for line in str(e).splitlines()[1:]] or [str(e)]
    if problems:
        raise HudiServiceError(f"hudi_{service}: invalid options:\n  - " + "\n  - ".join(problems))
    return options
