"""Hudi's `CALL` procedures, run by the engine without Spark (docs/procedures.md).

    from hudi_engine.procedures import call
    call("show_commits", "/data/trips", limit=5)        # -> pyarrow.Table with Hudi's output columns

Every procedure of Hudi 1.2's list (`registry`) is either served here (`SERVED`: introspection in `commits`,
`timeline_views` and `file_views`, actions through the table services in `services`) or refused by name with the
reason and the way out (`REFUSED`); `help` says which. The Spark layer (`hudi_engine.spark.procedures`) runs
`CALL name(args)` statements through `run`, with a resolver from catalog names to table paths.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudi_engine.errors import ConfigError
from hudi_engine.procedures import (
    commits,
    copies,
    file_views,
    log_files,
    metadata_table,
    repairs,
    services,
    timeline_views,
)
from hudi_engine.procedures.arguments import Arguments, CatalogSession, TableResolver, bind
from hudi_engine.procedures.registry import PROCEDURES, ProcedureSpec, spec

Procedure = Callable[[Arguments], list[tuple]]

_ISSUE_37 = ("the engine does not compute column-stats overlaps (issue 37); use Java Hudi's CALL {name}")
_NO_BOOTSTRAP = "the engine does not bootstrap tables from existing files; use Java Hudi's CALL {name}"
_NO_AUDIT = ("the engine's table lock keeps no audit log (Hudi 1.2's storage-based lock audit); use Java Hudi's "
             "CALL {name}")

# name -> why it is refused, and the way out ({name}: the procedure).
REFUSED: dict[str, str] = {
    "show_metadata_column_stats_overlap": _ISSUE_37,
    **dict.fromkeys(["run_bootstrap", "show_bootstrap_mapping", "show_bootstrap_partitions",
                     "hdfs_parquet_import"], _NO_BOOTSTRAP),
    **dict.fromkeys(["cleanup_audit_lock", "set_audit_lock", "show_audit_lock_status", "validate_audit_lock"],
                    _NO_AUDIT),
    "partition_bucket_index_manager": "the engine writes the simple bucket index only, not Hudi 1.1's partition-level "
                                      "bucket index this manages; use Java Hudi's CALL {name}",
    "run_ttl": "the engine has no partition TTL; use Java Hudi's CALL {name}",
}


def help_text(args: Arguments) -> list[tuple]:
    """Hudi's `help`: every procedure (here marked served or refused), or one procedure's parameters and output."""
    cmd = args["cmd"]
    if not cmd:
        lines = ["synopsis", "\tcall [command]([key1]=>[value1],[key2]=>[value2])", "commands and description"]
        lines += [f"\t{name}\t{_status(name)}" for name in sorted(PROCEDURES)]
        lines.append("You can use 'call help(cmd=>[command])' to view the detailed parameters of the command")
        return [("\n".join(lines),)]
    p = spec(cmd)

    def row(*cells: object) -> str:
        return "\t" + "\t".join(f"{c:<30}" for c in cells)

    lines = ["parameters:", row("param", "type_name", "default_value", "required")]
    lines += [row(q.name, q.type, "null" if q.default is None else _java(q.default), _java(q.required))
              for q in p.parameters]
    lines += ["outputType:", row("name", "type_name", "nullable", "metadata")]
    lines += [row(c.name, c.type, _java(c.nullable), "{}") for c in p.output]
    lines.append(f"engine: {_status(p.name)}")
    return [("\n".join(lines) + "\n",)]


def _java(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _status(name: str) -> str:
    if name in SERVED:
        return "served"
    return "refused: " + REFUSED[name].format(name=name)


SERVED: dict[str, Procedure] = {
    "help": help_text,
    "show_commits": commits.show_commits,
    "show_commits_metadata": commits.show_commits_metadata,
    "show_commit_files": commits.show_commit_files,
    "show_commit_partitions": commits.show_commit_partitions,
    "show_commit_write_stats": commits.show_commit_write_stats,
    "show_commit_extra_metadata": commits.show_commit_extra_metadata,
    "commits_compare": commits.commits_compare,
    "stats_wa": commits.stats_wa,
    "show_archived_commits": commits.show_archived_commits,
    "show_archived_commits_metadata": commits.show_archived_commits_metadata,
    "show_rollbacks": timeline_views.show_rollbacks,
    "show_rollback_detail": timeline_views.show_rollback_detail,
    "show_savepoints": timeline_views.show_savepoints,
    "show_compaction": timeline_views.show_compaction,
    "show_cleans": timeline_views.show_cleans,
    "show_cleans_metadata": timeline_views.show_cleans_metadata,
    "show_clean_plans": timeline_views.show_clean_plans,
    "show_timeline": timeline_views.show_timeline,
    "export_instants": timeline_views.export_instants,
    "show_file_status": timeline_views.show_file_status,
    "show_table_properties": file_views.show_table_properties,
    "show_fsview_all": file_views.show_fsview_all,
    "show_fsview_latest": file_views.show_fsview_latest,
    "stats_file_sizes": file_views.stats_file_sizes,
    "show_invalid_parquet": file_views.show_invalid_parquet,
    "show_fs_path_detail": file_views.show_fs_path_detail,
    "show_logfile_metadata": log_files.show_logfile_metadata,
    "show_logfile_records": log_files.show_logfile_records,
    "run_clean": services.run_clean,
    "run_compaction": services.run_compaction,
    "archive_commits": services.archive_commits,
    "rollback_to_instant": services.rollback_to_instant,
    "run_rollback_inflight_tableservice": services.run_rollback_inflight_tableservice,
    "delete_marker": services.delete_marker,
    "truncate_table": services.truncate_table,
    "drop_partition": services.drop_partition,
    "hive_sync": services.hive_sync,
    "sync_validate": services.sync_validate,
    "copy_to_temp_view": copies.copy_to_temp_view,
    "copy_to_table": copies.copy_to_table,
    "repair_add_partition_meta": repairs.repair_add_partition_meta,
    "repair_migrate_partition_meta": repairs.repair_migrate_partition_meta,
    "repair_overwrite_hoodie_props": repairs.repair_overwrite_hoodie_props,
    "repair_deduplicate": repairs.repair_deduplicate,
    "repair_corrupted_clean_files": services.repair_corrupted_clean_files,
    "create_savepoint": services.create_savepoint,
    "delete_savepoint": services.delete_savepoint,
    "rollback_to_savepoint": services.rollback_to_savepoint,
    "run_clustering": services.run_clustering,
    "show_clustering": services.show_clustering,
    "upgrade_table": services.upgrade_or_downgrade,
    "create_metadata_table": metadata_table.create_metadata_table,
    "init_metadata_table": metadata_table.init_metadata_table,
    "delete_metadata_table": metadata_table.delete_metadata_table,
    "show_metadata_table_partitions": metadata_table.show_metadata_table_partitions,
    "show_metadata_table_files": metadata_table.show_metadata_table_files,
    "show_metadata_table_column_stats": metadata_table.show_metadata_table_column_stats,
    "show_metadata_table_stats": metadata_table.show_metadata_table_stats,
    "validate_metadata_table_files": metadata_table.validate_metadata_table_files,
    "downgrade_table": services.upgrade_or_downgrade,
}


def procedure(name: str) -> ProcedureSpec:
    """The procedure `name`: its signature when the engine serves it, else its refusal (reason and way out)."""
    found = spec(name)
    if found.name not in SERVED:
        raise ConfigError(f"CALL {found.name}: refused, {REFUSED[found.name].format(name=found.name)}")
    return found


# Hudi 1.2's `filter` argument: a Spark SQL predicate over the output columns, applied after the limit.
RowFilter = Callable[[pa.Table, str], pa.Table]


def run(name: str, positional: Sequence[Any] = (), named: Mapping[str, Any] | None = None,
        resolver: TableResolver | None = None, row_filter: RowFilter | None = None,
        session: CatalogSession | None = None) -> pa.Table:
    """Run procedure `name` with a CALL's arguments; its rows as a table of Hudi's output columns. `row_filter`
    applies a `filter` argument (Spark's: `hudi_engine.spark.procedures`); without one a filter is refused.
    `session`: the Spark session's catalog, for the procedures on catalog entries (`hive_sync`)."""
    found = procedure(name)
    args = bind(found, positional, named, resolver, session)
    predicate = args.values.get("filter")
    if predicate and row_filter is None:
        raise ConfigError(f"Argument: filter of {found.name} is a Spark SQL predicate, which needs Spark: run the "
                          "CALL in a Spark session, or filter the returned table")
    rows = SERVED[found.name](args)
    schema = found.schema()
    table = pa.Table.from_arrays([pa.array([r[i] for r in rows], f.type) for i, f in enumerate(schema)],
                                 schema=schema)
    return row_filter(table, predicate) if predicate and row_filter is not None else table


def call(name: str, table_path: str | None = None, **args: Any) -> pa.Table:
    """Run Hudi's procedure `name` on the table at `table_path` (its `table` argument, or `path` where the
    procedure has no `table`), with named arguments: `call("show_commits", "/data/t", limit=5)`."""
    named = dict(args)
    if table_path is not None:
        found = spec(name)
        names = {p.name for p in found.parameters}
        named["table" if "table" in names else "path"] = table_path
    return run(name, (), named)


__all__ = ["REFUSED", "SERVED", "CatalogSession", "RowFilter", "call", "procedure", "run"]
