"""Hudi 1.2's procedures as its `CALL help(cmd => '<name>')` describes them: every name, its parameters (name, type,
required, default) in Hudi's order, so that positional and named (`=>`) arguments bind as on Java Hudi, and its
output columns (names, Spark types, nullability). Which of them the engine serves is `procedures.served`'s business;
this module only knows the signatures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudi_engine.errors import ConfigError

# Spark's type names, as Hudi's help prints them.
STRING, INT, LONG, BOOLEAN, DOUBLE = "string", "integer", "long", "boolean", "double"
ARROW_TYPES: dict[str, pa.DataType] = {
    STRING: pa.string(),
    INT: pa.int32(),
    LONG: pa.int64(),
    BOOLEAN: pa.bool_(),
    DOUBLE: pa.float64(),
}
SPARK_DDL_TYPES = {STRING: "STRING", INT: "INT", LONG: "BIGINT", BOOLEAN: "BOOLEAN", DOUBLE: "DOUBLE"}


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str
    required: bool
    default: Any = None  # None: Hudi's null / None / no default


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True


@dataclass(frozen=True)
class ProcedureSpec:
    """One procedure's signature."""

    name: str
    parameters: tuple[Parameter, ...]
    output: tuple[Column, ...]

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, ARROW_TYPES[c.type], c.nullable) for c in self.output])

    def spark_ddl(self) -> str:
        """The output as a Spark DDL schema (names quoted: Hudi has `storage_size(unit)`, `50% overlap`)."""
        return ", ".join(
            f"`{c.name}` {SPARK_DDL_TYPES[c.type]}{'' if c.nullable else ' NOT NULL'}" for c in self.output
        )


def _procedure(name: str, parameters: list[tuple], output: list[tuple]) -> ProcedureSpec:
    return ProcedureSpec(
        name,
        tuple(Parameter(n, t, d is REQUIRED, None if d is REQUIRED else d) for n, t, d in parameters),
        tuple(Column(*c) for c in output),
    )


# Runs of parameters and columns several procedures share.
_TABLE_OR_PATH = [("table", STRING, None), ("path", STRING, None)]
_COMMIT_TOTALS = [("total_bytes_written", LONG), ("total_files_added", LONG), ("total_files_updated", LONG),
    ("total_partitions_written", LONG), ("total_records_written", LONG), ("total_update_records_written", LONG),
    ("total_errors", LONG)]
_WRITE_STAT_COLUMNS = [("partition", STRING), ("file_id", STRING), ("previous_commit", STRING),
    ("num_writes", LONG), ("num_inserts", LONG), ("num_deletes", LONG), ("num_update_writes", LONG),
    ("total_errors", LONG), ("total_log_blocks", LONG), ("total_corrupt_log_blocks", LONG),
    ("total_rollback_blocks", LONG), ("total_log_records", LONG), ("total_updated_records_compacted", LONG),
    ("total_bytes_written", LONG)]
_FSVIEW_PARAMETERS = [("max_instant", STRING, ""), ("include_max", BOOLEAN, False),
    ("include_in_flight", BOOLEAN, False), ("exclude_compaction", BOOLEAN, False), ("limit", INT, 10),
    ("path_regex", STRING, "ALL_PARTITIONS"), ("filter", STRING, "")]
_FSVIEW_SLICE = [("partition", STRING), ("file_id", STRING), ("base_instant", STRING), ("data_file", STRING),
    ("data_file_size", LONG), ("num_delta_files", LONG), ("total_delta_file_size", LONG)]
_CLEANS_PARAMETERS = [("table", STRING, REQUIRED), ("limit", INT, 10), ("showArchived", BOOLEAN, False),
    ("filter", STRING, "")]
_CLEAN_HEAD = [("clean_time", STRING), ("state_transition_time", STRING), ("action", STRING),
    ("start_clean_time", STRING)]
_COLUMN_STATS_PARAMETERS = [("partition", STRING, None), ("targetColumns", STRING, None), ("filter", STRING, "")]
_ARCHIVED_PARAMETERS = [("table", STRING, REQUIRED), ("limit", INT, 10), ("start_ts", STRING, ""),
    ("end_ts", STRING, "")]
_COPY_PARAMETERS = [("begin_instance_time", STRING, ""), ("end_instance_time", STRING, ""),
    ("as_of_instant", STRING, "")]


_ALL = (
    _procedure("archive_commits",
               [*_TABLE_OR_PATH, ("min_commits", INT, 20), ("max_commits", INT, 30), ("retain_commits", INT, 10),
                ("enable_metadata", BOOLEAN, True)],
               [("result", INT)]),
    _procedure("cleanup_audit_lock",
               [*_TABLE_OR_PATH, ("dry_run", BOOLEAN, False), ("age_days", INT, 7)],
               [("table", STRING, False), ("files_cleaned", INT, False), ("dry_run", BOOLEAN, False),
                ("age_days", INT, False), ("message", STRING, False)]),
    _procedure("commits_compare",
               [("table", STRING, REQUIRED), ("path", STRING, REQUIRED)],
               [("compare_detail", STRING)]),
    _procedure("copy_to_table",
               [("table", STRING, REQUIRED), ("query_type", STRING, "snapshot"), ("new_table", STRING, REQUIRED),
                *_COPY_PARAMETERS, ("save_mode", STRING, "overwrite"), ("columns", STRING, "")],
               [("status", INT)]),
    _procedure("copy_to_temp_view",
               [("table", STRING, REQUIRED), ("query_type", STRING, "snapshot"), ("view_name", STRING, REQUIRED),
                *_COPY_PARAMETERS, ("replace", BOOLEAN, False), ("global", BOOLEAN, False)],
               [("status", INT)]),
    _procedure("create_metadata_table",
               [("table", STRING, REQUIRED)],
               [("result", STRING)]),
    _procedure("create_savepoint",
               [("table", STRING, None), ("commit_time", STRING, ""), ("user", STRING, ""),
                ("comments", STRING, ""), ("path", STRING, None)],
               [("create_savepoint_result", BOOLEAN)]),
    _procedure("delete_marker",
               [("table", STRING, REQUIRED), ("instant_time", STRING, REQUIRED)],
               [("delete_marker_result", BOOLEAN)]),
    _procedure("delete_metadata_table",
               [("table", STRING, REQUIRED)],
               [("result", STRING)]),
    _procedure("delete_savepoint",
               [("table", STRING, None), ("instant_time", STRING, ""), ("path", STRING, None)],
               [("delete_savepoint_result", BOOLEAN)]),
    _procedure("downgrade_table",
               [("table", STRING, REQUIRED), ("to_version", STRING, REQUIRED)],
               [("result", BOOLEAN)]),
    _procedure("drop_partition",
               [("table", STRING, REQUIRED), ("partition", STRING, REQUIRED)],
               [("result", STRING)]),
    _procedure("export_instants",
               [("table", STRING, REQUIRED), ("local_folder", STRING, REQUIRED), ("limit", INT, -1),
                ("actions", STRING, "clean,commit,deltacommit,rollback,savepoint,restore"),
                ("desc", BOOLEAN, False)],
               [("export_detail", STRING)]),
    _procedure("hdfs_parquet_import",
               [("table", STRING, REQUIRED), ("table_type", STRING, REQUIRED), ("src_path", STRING, REQUIRED),
                ("target_path", STRING, REQUIRED), ("row_key", STRING, REQUIRED),
                ("partition_key", STRING, REQUIRED), ("schema_file_path", STRING, REQUIRED),
                ("command", STRING, "insert"), ("retry", INT, 0), ("parallelism", INT, 2),
                ("props_file_path", STRING, "")],
               [("import_result", INT)]),
    _procedure("help",
               [("cmd", STRING, None)],
               [("result", STRING)]),
    _procedure("hive_sync",
               [("table", STRING, REQUIRED), ("metastore_uri", STRING, ""), ("username", STRING, ""),
                ("password", STRING, ""), ("use_jdbc", STRING, ""), ("mode", STRING, ""),
                ("partition_fields", STRING, ""), ("partition_extractor_class", STRING, ""),
                ("strategy", STRING, ""), ("sync_incremental", STRING, "")],
               [("result", STRING)]),
    _procedure("init_metadata_table",
               [("table", STRING, REQUIRED), ("read_only", BOOLEAN, False)],
               [("result", STRING)]),
    _procedure("partition_bucket_index_manager",
               [("table", STRING, REQUIRED), ("overwrite", STRING, None), ("bucket_number", INT, -1),
                ("add", STRING, None), ("dry_run", BOOLEAN, True), ("rollback", STRING, None),
                ("show_config", BOOLEAN, False), ("rule", STRING, "regex"), ("options", STRING, None)],
               [("result", STRING), ("operation", STRING), ("details", STRING)]),
    _procedure("repair_add_partition_meta",
               [("table", STRING, REQUIRED), ("dry_run", BOOLEAN, True)],
               [("partition_path", STRING), ("metadata_is_present", STRING), ("action", STRING)]),
    _procedure("repair_corrupted_clean_files",
               [("table", STRING, REQUIRED)],
               [("result", BOOLEAN)]),
    _procedure("repair_deduplicate",
               [("table", STRING, REQUIRED), ("duplicated_partition_path", STRING, REQUIRED),
                ("repaired_output_path", STRING, REQUIRED), ("dry_run", BOOLEAN, True),
                ("dedupe_type", STRING, "insert_type")],
               [("result", STRING)]),
    _procedure("repair_migrate_partition_meta",
               [("table", STRING, REQUIRED), ("dry_run", BOOLEAN, True)],
               [("partition_path", STRING), ("text_metafile_present", STRING), ("base_metafile_present", STRING),
                ("action", STRING)]),
    _procedure("repair_overwrite_hoodie_props",
               [("table", STRING, REQUIRED), ("new_props_file_path", STRING, REQUIRED)],
               [("property", STRING), ("old_value", STRING), ("new_value", STRING)]),
    _procedure("rollback_to_instant",
               [("table", STRING, REQUIRED), ("instant_time", STRING, REQUIRED)],
               [("rollback_result", BOOLEAN)]),
    _procedure("rollback_to_savepoint",
               [("table", STRING, None), ("instant_time", STRING, ""), ("path", STRING, None)],
               [("rollback_savepoint_result", BOOLEAN)]),
    _procedure("run_bootstrap",
               [("table", STRING, REQUIRED), ("table_type", STRING, REQUIRED),
                ("bootstrap_path", STRING, REQUIRED), ("base_path", STRING, REQUIRED),
                ("rowKey_field", STRING, REQUIRED), ("base_file_format", STRING, "PARQUET"),
                ("partition_path_field", STRING, ""),
                ("bootstrap_index_class", STRING, "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex"),
                ("selector_class", STRING, "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector"),
                ("key_generator_class", STRING, "org.apache.hudi.keygen.SimpleKeyGenerator"),
                ("full_bootstrap_input_provider", STRING, "org.apache.hudi.bootstrap.SparkParquetBootstrapDataProvider"),
                ("schema_provider_class", STRING, ""),
                ("payload_class", STRING, "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"),
                ("parallelism", INT, 1500), ("enable_hive_sync", BOOLEAN, False), ("props_file_path", STRING, ""),
                ("bootstrap_overwrite", BOOLEAN, False), ("options", STRING, None)],
               [("status", INT)]),
    _procedure("run_clean",
               [("table", STRING, REQUIRED), ("schedule_in_line", BOOLEAN, True), ("clean_policy", STRING, None),
                ("retain_commits", INT, None), ("hours_retained", INT, None),
                ("file_versions_retained", INT, None), ("trigger_strategy", STRING, None),
                ("trigger_max_commits", INT, None), ("options", STRING, None)],
               [("start_clean_time", STRING), ("time_taken_in_millis", LONG), ("total_files_deleted", INT),
                ("earliest_commit_to_retain", STRING), ("bootstrap_part_metadata", STRING), ("version", INT)]),
    _procedure("run_clustering",
               [*_TABLE_OR_PATH, ("predicate", STRING, None), ("order", STRING, None),
                ("show_involved_partition", BOOLEAN, False), ("op", STRING, None),
                ("order_strategy", STRING, None), ("options", STRING, None), ("instants", STRING, None),
                ("selected_partitions", STRING, None), ("partition_regex_pattern", STRING, None),
                ("limit", INT, None)],
               [("timestamp", STRING), ("input_group_size", INT), ("state", STRING),
                ("involved_partitions", STRING)]),
    _procedure("run_compaction",
               [("op", STRING, REQUIRED), *_TABLE_OR_PATH, ("timestamp", LONG, None), ("options", STRING, None),
                ("instants", STRING, None), ("limit", INT, None)],
               [("timestamp", STRING), ("operation_size", INT), ("state", STRING)]),
    _procedure("run_rollback_inflight_tableservice",
               [*_TABLE_OR_PATH, ("pending_instant", STRING, REQUIRED),
                ("delete_request_instant_file", BOOLEAN, False)],
               [("instant", STRING), ("time_cost", STRING)]),
    _procedure("run_ttl",
               [("table", STRING, REQUIRED), ("ttl_policy", STRING, None), ("retain_days", INT, None),
                ("options", STRING, None)],
               [("deleted_partitions", STRING)]),
    _procedure("set_audit_lock",
               [*_TABLE_OR_PATH, ("state", STRING, REQUIRED)],
               [("table", STRING, False), ("audit_state", STRING, False), ("message", STRING, False)]),
    _procedure("show_archived_commits",
               [*_ARCHIVED_PARAMETERS],
               [("commit_time", STRING), ("state_transition_time", STRING), *_COMMIT_TOTALS]),
    _procedure("show_archived_commits_metadata",
               [*_ARCHIVED_PARAMETERS],
               [("commit_time", STRING), ("state_transition_time", STRING), ("action", STRING),
                *_WRITE_STAT_COLUMNS]),
    _procedure("show_audit_lock_status",
               [*_TABLE_OR_PATH],
               [("table", STRING, False), ("audit_enabled", BOOLEAN, False), ("config_path", STRING, False),
                ("audit_folder_path", STRING, False)]),
    _procedure("show_bootstrap_mapping",
               [*_TABLE_OR_PATH, ("partition_path", STRING, ""), ("file_ids", STRING, ""), ("limit", INT, 10),
                ("sort_by", STRING, "partition"), ("desc", BOOLEAN, False), ("filter", STRING, "")],
               [("partition", STRING), ("file_id", STRING), ("source_base_path", STRING),
                ("source_partition", STRING), ("source_file", STRING)]),
    _procedure("show_bootstrap_partitions",
               [*_TABLE_OR_PATH, ("filter", STRING, "")],
               [("indexed_partitions", STRING)]),
    _procedure("show_clean_plans",
               [*_CLEANS_PARAMETERS],
               [("plan_time", STRING), ("state", STRING), ("action", STRING),
                ("earliest_instant_to_retain", STRING), ("last_completed_commit_timestamp", STRING),
                ("policy", STRING), ("version", INT), ("total_partitions_to_clean", INT),
                ("total_partitions_to_delete", INT), ("extra_metadata", STRING)]),
    _procedure("show_cleans",
               [*_CLEANS_PARAMETERS],
               [*_CLEAN_HEAD, ("time_taken_in_millis", LONG), ("total_files_deleted", INT),
                ("earliest_commit_to_retain", STRING), ("last_completed_commit_timestamp", STRING),
                ("version", INT)]),
    _procedure("show_cleans_metadata",
               [*_CLEANS_PARAMETERS],
               [*_CLEAN_HEAD, ("partition_path", STRING), ("policy", STRING), ("delete_path_patterns", INT),
                ("success_delete_files", INT), ("failed_delete_files", INT), ("is_partition_deleted", BOOLEAN),
                ("time_taken_in_millis", LONG), ("total_files_deleted", INT)]),
    _procedure("show_clustering",
               [*_TABLE_OR_PATH, ("limit", INT, 20), ("show_involved_partition", BOOLEAN, False)],
               [("timestamp", STRING), ("input_group_size", INT), ("state", STRING),
                ("involved_partitions", STRING)]),
    _procedure("show_commit_extra_metadata",
               [("table", STRING, REQUIRED), ("limit", INT, 100), ("instant_time", STRING, None),
                ("metadata_key", STRING, None)],
               [("instant_time", STRING), ("action", STRING), ("metadata_key", STRING), ("metadata_value", STRING)]),
    _procedure("show_commit_files",
               [("table", STRING, REQUIRED), ("limit", INT, 10), ("instant_time", STRING, REQUIRED)],
               [("action", STRING), ("partition_path", STRING), ("file_id", STRING), ("previous_commit", STRING),
                ("total_records_updated", LONG), ("total_records_written", LONG), ("total_bytes_written", LONG),
                ("total_errors", LONG), ("file_size", LONG)]),
    _procedure("show_commit_partitions",
               [("table", STRING, REQUIRED), ("limit", INT, 10), ("instant_time", STRING, REQUIRED)],
               [("action", STRING), ("partition_path", STRING), ("total_files_added", LONG),
                ("total_files_updated", LONG), ("total_records_inserted", LONG), ("total_records_updated", LONG),
                ("total_bytes_written", LONG), ("total_errors", LONG)]),
    _procedure("show_commit_write_stats",
               [("table", STRING, REQUIRED), ("limit", INT, 10), ("instant_time", STRING, REQUIRED)],
               [("action", STRING), ("total_bytes_written", LONG), ("total_records_written", LONG),
                ("avg_record_size", LONG)]),
    _procedure("show_commits",
               [("table", STRING, REQUIRED), ("limit", INT, 10)],
               [("commit_time", STRING), ("state_transition_time", STRING), ("action", STRING), *_COMMIT_TOTALS]),
    _procedure("show_commits_metadata",
               [("table", STRING, REQUIRED), ("limit", INT, 10)],
               [("commit_time", STRING), ("state_transition_time", STRING), ("action", STRING),
                *_WRITE_STAT_COLUMNS]),
    _procedure("show_compaction",
               [*_TABLE_OR_PATH, ("limit", INT, 20)],
               [("timestamp", STRING), ("operation_size", INT), ("state", STRING)]),
    _procedure("show_file_status",
               [*_TABLE_OR_PATH, ("partition", STRING, None), ("file", STRING, REQUIRED), ("filter", STRING, "")],
               [("status", STRING, False), ("action", STRING), ("instant", STRING), ("timeline", STRING),
                ("full_path", STRING)]),
    _procedure("show_fs_path_detail",
               [("path", STRING, REQUIRED), ("is_sub", BOOLEAN, False), ("sort", BOOLEAN, True),
                ("limit", INT, 100), ("filter", STRING, "")],
               [("path_num", LONG), ("file_num", LONG), ("storage_size", LONG), ("storage_size(unit)", STRING),
                ("storage_path", STRING), ("space_consumed", LONG), ("quota", LONG), ("space_quota", LONG)]),
    _procedure("show_fsview_all",
               [*_TABLE_OR_PATH, *_FSVIEW_PARAMETERS],
               [*_FSVIEW_SLICE, ("delta_files", STRING)]),
    _procedure("show_fsview_latest",
               [*_TABLE_OR_PATH, *_FSVIEW_PARAMETERS, ("partition_path", STRING, "ALL_PARTITIONS"),
                ("merge", BOOLEAN, True)],
               [*_FSVIEW_SLICE, ("delta_size_compaction_scheduled", LONG),
                ("delta_size_compaction_unscheduled", LONG), ("delta_to_base_radio_compaction_scheduled", DOUBLE),
                ("delta_to_base_radio_compaction_unscheduled", DOUBLE),
                ("delta_files_compaction_scheduled", STRING), ("delta_files_compaction_unscheduled", STRING)]),
    _procedure("show_invalid_parquet",
               [("path", STRING, REQUIRED), ("parallelism", INT, 100), ("limit", INT, 100),
                ("needDelete", BOOLEAN, False), ("partitions", STRING, ""), ("instants", STRING, ""),
                ("filter", STRING, "")],
               [("path", STRING)]),
    _procedure("show_logfile_metadata",
               [*_TABLE_OR_PATH, ("log_file_path_pattern", STRING, REQUIRED), ("limit", INT, 10),
                ("filter", STRING, "")],
               [("instant_time", STRING), ("record_count", INT), ("block_type", STRING),
                ("header_metadata", STRING), ("footer_metadata", STRING)]),
    _procedure("show_logfile_records",
               [*_TABLE_OR_PATH, ("log_file_path_pattern", STRING, REQUIRED), ("merge", BOOLEAN, False),
                ("limit", INT, 10), ("filter", STRING, "")],
               [("records", STRING)]),
    _procedure("show_metadata_column_stats_overlap",
               [*_TABLE_OR_PATH, *_COLUMN_STATS_PARAMETERS],
               [("Partition path", STRING), ("Field name", STRING), ("Average overlap", DOUBLE),
                ("Maximum file overlap", INT), ("Total file number", INT), ("50% overlap", INT),
                ("75% overlap", INT), ("95% overlap", INT), ("99% overlap", INT), ("Total value number", INT)]),
    _procedure("show_metadata_table_column_stats",
               [*_TABLE_OR_PATH, *_COLUMN_STATS_PARAMETERS],
               [("file_name", STRING), ("column_name", STRING), ("min_value", STRING), ("max_value", STRING),
                ("null_number", LONG)]),
    _procedure("show_metadata_table_files",
               [*_TABLE_OR_PATH, ("partition", STRING, ""), ("limit", INT, 100), ("filter", STRING, "")],
               [("file_path", STRING)]),
    _procedure("show_metadata_table_partitions",
               [*_TABLE_OR_PATH, ("filter", STRING, "")],
               [("partition", STRING)]),
    _procedure("show_metadata_table_stats",
               [*_TABLE_OR_PATH, ("filter", STRING, "")],
               [("stat_key", STRING), ("stat_value", STRING)]),
    _procedure("show_rollback_detail",
               [("table", STRING, REQUIRED), ("limit", INT, 10), ("instant_time", STRING, REQUIRED)],
               [("instant", STRING), ("rollback_instant", STRING), ("partition", STRING), ("deleted_file", STRING),
                ("succeeded", BOOLEAN)]),
    _procedure("show_rollbacks",
               [("table", STRING, REQUIRED), ("limit", INT, 10)],
               [("instant", STRING), ("rollback_instant", STRING), ("total_files_deleted", INT),
                ("time_taken_in_millis", LONG), ("total_partitions", INT)]),
    _procedure("show_savepoints",
               [*_TABLE_OR_PATH],
               [("savepoint_time", STRING)]),
    _procedure("show_table_properties",
               [*_TABLE_OR_PATH, ("limit", INT, 10), ("filter", STRING, "")],
               [("key", STRING), ("value", STRING)]),
    _procedure("show_timeline",
               [*_TABLE_OR_PATH, ("limit", INT, 20), ("showArchived", BOOLEAN, False), ("filter", STRING, ""),
                ("startTime", STRING, ""), ("endTime", STRING, "")],
               [("instant_time", STRING), ("action", STRING), ("state", STRING), ("requested_time", STRING),
                ("inflight_time", STRING), ("completed_time", STRING), ("timeline_type", STRING),
                ("rollback_info", STRING)]),
    _procedure("stats_file_sizes",
               [("table", STRING, REQUIRED), ("partition_path", STRING, ""), ("limit", INT, 10)],
               [("commit_time", STRING), ("min", LONG), ("10th", DOUBLE), ("50th", DOUBLE), ("avg", DOUBLE),
                ("95th", DOUBLE), ("max", LONG), ("num_files", INT), ("std_dev", DOUBLE)]),
    _procedure("stats_wa",
               [("table", STRING, REQUIRED), ("limit", INT, 10)],
               [("commit_time", STRING), ("total_upserted", LONG), ("total_written", LONG),
                ("write_amplification_factor", STRING)]),
    _procedure("sync_validate",
               [("src_table", STRING, REQUIRED), ("dst_table", STRING, REQUIRED), ("mode", STRING, REQUIRED),
                ("hive_server_url", STRING, REQUIRED), ("hive_pass", STRING, REQUIRED),
                ("src_db", STRING, "rawdata"), ("target_db", STRING, "dwh_hoodie"), ("partition_cnt", INT, 5),
                ("hive_user", STRING, "")],
               [("result", STRING)]),
    _procedure("truncate_table",
               [("table", STRING, REQUIRED), ("partitions", STRING, None)],
               [("result", STRING), ("time_cost", LONG)]),
    _procedure("upgrade_table",
               [("table", STRING, REQUIRED), ("to_version", STRING, REQUIRED)],
               [("result", BOOLEAN)]),
    _procedure("validate_audit_lock",
               [*_TABLE_OR_PATH],
               [("table", STRING, False), ("validation_result", STRING, False),
                ("transactions_validated", INT, False), ("issues_found", INT, False), ("details", STRING, False)]),
    _procedure("validate_metadata_table_files",
               [("table", STRING, REQUIRED), ("verbose", BOOLEAN, False)],
               [("partition", STRING), ("file_name", STRING), ("is_present_in_fs", BOOLEAN),
                ("is_present_in_metadata", BOOLEAN), ("fs_size", LONG), ("metadata_size", LONG)]),
)

PROCEDURES: dict[str, ProcedureSpec] = {p.name: p for p in _ALL}


def spec(name: str) -> ProcedureSpec:
    """The procedure `name` (case-insensitive, as Hudi looks it up), or an error naming Hudi's procedures."""
    found = PROCEDURES.get(name.lower())
    if found is None:
        raise ConfigError(
            f"There is no procedure named {name}: Hudi 1.2's procedures are "
            f"{', '.join(sorted(PROCEDURES))} (CALL help() lists them)"
        )
    return found
