"""One `hudi_incremental` run: the model's SQL as a DataFrame, written by `hudi_engine.spark.write`.

The steps, each a small function: run the SQL -> check the setting columns -> pick the operation from the mode
and the table on disk -> reconcile the schema (`on_schema_change`) -> write -> register the catalog table. The
engine does the table work (and rolls its instant back on failure); this module only decides what to ask.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.hudi import catalog
from dbt.adapters.hudi.contract import Contract
from dbt.adapters.hudi.errors import HudiConfigError, HudiModelError, HudiSchemaChangeError
from dbt.adapters.hudi.model_config import HudiModelConfig

logger = AdapterLogger("Hudi")

# Commit metadata of a table built by `dbt run --empty` (the `_` prefix puts an option into the commit's extra
# metadata): the next normal run builds the table in full instead of running incrementally on no rows.
EMPTY_BUILD_KEY = "_dbt.empty_build"


@dataclass(frozen=True)
class WritePlan:
    path: str
    operation: str
    recreate: bool  # full refresh of a table whose layout changed: the old table is removed first
    reason: str


def table_location(spark, schema: str, identifier: str, cfg: HudiModelConfig, project_root: str | None) -> str:
    """`<location_root>/<alias>`, else `<schema's warehouse folder>/<alias>` (where Spark puts managed tables)."""
    if cfg.location_root:
        root = cfg.location_root
        if "://" not in root and not root.startswith("file:") and not os.path.isabs(root):
            root = str(Path(project_root or os.getcwd()) / root)  # relative to the project, like the warehouse
        return f"{catalog.local_path(root).rstrip('/')}/{identifier}"
    db_location = catalog.local_path(spark.catalog.getDatabase(schema).locationUri)
    return f"{db_location.rstrip('/')}/{identifier}"


def existing_table(path: str):
    """The Hudi table at `path` as this run sees it (a `HudiTable`: hoodie.properties read and the timeline listed
    once, passed to the schema reconciliation and the write), None if there is none."""
    from hudi_engine import HudiTable, TableNotFoundError

    try:
        return HudiTable.load(path)
    except TableNotFoundError:
        return None
    except FileNotFoundError:
        return None


def plan_write(model: str, cfg: HudiModelConfig, mode: str, path: str, table_config, catalog_path: str | None,
               table_name: str) -> WritePlan:
    """Which operation this run is, from the mode the materialization saw and the table on disk."""
    changes = cfg.layout_changes(table_config, table_name) if table_config is not None else []
    if mode == "incremental":
        if catalog_path is not None and catalog_path.rstrip("/") != path.rstrip("/"):
            changes.append(f"location {catalog_path} -> {path}")
        if table_config is None:
            raise HudiModelError(
                f"model {model}: the catalog table exists but there is no Hudi table at {path}; "
                f"run `dbt run --full-refresh --select {model}` to build it again")
        if changes:
            raise HudiModelError(
                f"model {model}: the config changes the existing Hudi table at {path} ({'; '.join(changes)}), "
                f"which an incremental run cannot do. Run `dbt run --full-refresh --select {model}` to rebuild "
                f"the table with the new layout, or restore the old settings.")
        return WritePlan(path, cfg.strategy, False, f"incremental {cfg.strategy}")
    if table_config is None:
        return WritePlan(path, "bulk_insert", False, "new table")
    if not changes:
        # A new version of the whole table: the old file groups stay readable by time travel until cleaned.
        return WritePlan(path, "insert_overwrite_table", False,
                         "full refresh" if mode == "full_refresh" else "catalog entry missing, table rewritten")
    if mode == "full_refresh":
        return WritePlan(path, "bulk_insert", True, f"full refresh with a new layout ({'; '.join(changes)})")
    raise HudiModelError(
        f"model {model}: a Hudi table with another layout already exists at {path} ({'; '.join(changes)}). "
        f"Run `dbt run --full-refresh --select {model}` to replace it, or set location_root to write elsewhere.")


def resolve_columns(model: str, cfg: HudiModelConfig, columns: list[str]) -> dict[str, str]:
    """Setting column -> the model's column (Spark matches names case-insensitively); all misses at once."""
    by_lower: dict[str, list[str]] = {}
    for c in columns:
        by_lower.setdefault(c.lower(), []).append(c)
    found: dict[str, str] = {}
    problems = []
    for setting, column in cfg.columns_used:
        if column in columns:
            found[column] = column
            continue
        matches = by_lower.get(column.lower(), [])
        if len(matches) == 1:
            found[column] = matches[0]
        else:
            problems.append(f"{setting}: column {column!r} is not in the model's result")
    if problems:
        raise HudiModelError(f"model {model}: " + "; ".join(problems) + f" (columns: {', '.join(columns)}). "
                             "Select the column in the model, or change the setting.")
    return found


DELETE_CHANGE_TYPES = ("d", "delete")  # the CDC query's op, and the word


def apply_change_types(df, column: str, mode: str):
    """A model of changes (`change_type_column`): a row whose change type is `d` (or `delete`) deletes its key. The
    column becomes Hudi's delete marker `_hoodie_is_deleted` (an upsert of a flagged record deletes the key); a
    first run or full refresh, which writes a new table version, leaves the deleted rows out."""
    from pyspark.sql import functions as F

    from hudi_engine import IS_DELETED_FIELD

    deleted = F.coalesce(F.lower(F.trim(F.col(f"`{column}`"))).isin(*DELETE_CHANGE_TYPES), F.lit(False))
    if mode != "incremental":
        df = df.where(~deleted)
    return df.withColumn(IS_DELETED_FIELD, deleted).drop(column)


def reconcile_schema(model: str, df, cfg: HudiModelConfig, table, operation: str,
                     assign_table_types: bool = False):
    """Apply `on_schema_change` to an incremental write: returns the DataFrame to write. `assign_table_types`
    (snapshots): a column the table has is written in the table's type, as SQL's MERGE assigns it (dbt's staging
    rows may type a column wider than the snapshot table, e.g. a timestamp for a date). `table`: the run's
    `HudiTable` of the model's table (`existing_table`)."""
    from pyspark.sql import functions as F

    from hudi_engine import META_COLUMNS
    from hudi_engine.spark import spark_type

    table_fields = [f for f in table.schema() if f.name not in META_COLUMNS]
    table_types = {f.name: spark_type(f.type, f.name) for f in table_fields}
    df_types = {f.name: f.dataType for f in df.schema.fields if f.name not in META_COLUMNS}
    if operation == "delete":
        return df  # a delete needs the keys only; its commit keeps the table's schema
    new = [c for c in df_types if c not in table_types]
    missing = [c for c in table_types if c not in df_types]
    changed = [f"{c} {table_types[c].simpleString()} -> {df_types[c].simpleString()}"
               for c in table_types if c in df_types and df_types[c].simpleString() != table_types[c].simpleString()]
    if assign_table_types and changed:
        df = df.select(*[F.col(f"`{c}`").cast(table_types[c]).alias(c) if c in table_types else F.col(f"`{c}`")
                         for c in df.columns])
        df_types = {f.name: f.dataType for f in df.schema.fields if f.name not in META_COLUMNS}
        changed = []
    mode = cfg.on_schema_change
    if mode == "fail" and (new or missing or changed):
        parts = ([f"new columns {new}"] if new else []) + ([f"missing columns {missing}"] if missing else []) + \
                ([f"changed types {changed}"] if changed else [])
        raise HudiSchemaChangeError(
            f"model {model}: the model's columns differ from the table's ({'; '.join(parts)}) and "
            f"on_schema_change='fail'. Set on_schema_change to append_new_columns or sync_all_columns, "
            f"or run with --full-refresh.")
    if mode == "ignore":
        if new:
            logger.info(f"model {model}: on_schema_change='ignore': new columns {new} are not written")
        keep = [c for c in table_types if c in df_types]
        if missing:
            raise HudiModelError(
                f"model {model}: columns {missing} of the table are missing from the model and "
                f"on_schema_change='ignore'. Select them again, set on_schema_change='append_new_columns' "
                f"(they are written as null), or run with --full-refresh.")
        return df.select(*keep)
    # append_new_columns / sync_all_columns: new columns are added. sync_all_columns also drops the columns the
    # model no longer has and widens the types it widens, as ALTER TABLE does with Hudi's schema evolution on read.
    if mode == "sync_all_columns" and (missing or changed):
        sync_columns(model, table, missing, {c: df_types[c] for c in table_types
                                             if c in df_types and df_types[c].simpleString() !=
                                             table_types[c].simpleString()})
        table_types = {f.name: spark_type(f.type, f.name) for f in table.schema() if f.name not in META_COLUMNS}
    # The table's columns in the table's order (missing ones as nulls of their type), new columns last.
    columns = [F.col(f"`{c}`") if c in df_types else F.lit(None).cast(t).alias(c) for c, t in table_types.items()]
    return df.select(*columns, *[F.col(f"`{c}`") for c in new])


SCHEMA_ON_READ = {"hoodie.schema.on.read.enable": "true"}  # Hudi's schema evolution on read, which ALTER TABLE needs


def sync_columns(model: str, table, missing: list[str], retyped: dict[str, Any]) -> None:
    """`on_schema_change='sync_all_columns'`: the columns the model no longer has are dropped from `table` (a
    `HudiTable`) and the types it changes are changed where Hudi allows it, each an ALTER TABLE commit of no files
    with schema evolution on read (Hudi's `hoodie.schema.on.read.enable=true`, which the table keeps from then on:
    its columns have ids). A type Hudi does not change this way (a narrowing) is left to the write, which refuses
    it by name; a key, partition or precombine column the model dropped is refused, naming it."""
    from pyspark.sql.pandas.types import to_arrow_type

    from hudi_engine import HudiError

    try:
        if missing:
            logger.info(f"model {model}: on_schema_change='sync_all_columns': dropping columns {missing}")
            table.drop_columns(missing, options=SCHEMA_ON_READ)
        for column, spark_type in retyped.items():
            try:
                table.alter_column_type(column, to_arrow_type(spark_type), options=SCHEMA_ON_READ)
                logger.info(f"model {model}: on_schema_change='sync_all_columns': {column} is now "
                            f"{spark_type.simpleString()}")
            except HudiError as e:
                if "does not allow changing" not in str(e):
                    raise
    except HudiError as e:
        raise HudiModelError(f"model {model}: on_schema_change='sync_all_columns': {e}") from e


@contextlib.contextmanager
def _replacing(model: str, path: str, plan: WritePlan) -> Iterator[None]:
    """For a full refresh that changes the table's layout: the old table is moved aside while the new one is
    written, put back if the write fails, and deleted once it succeeded."""
    if not plan.recreate:
        yield
        return
    from hudi_engine import Storage

    storage, base_path = Storage.for_uri(path)
    aside = f"{base_path}.replaced-{int(time.time() * 1000)}"
    logger.warning(f"model {model}: {plan.reason}: the old Hudi table at {path} is replaced")
    storage.rename(base_path, aside)
    try:
        yield
    except BaseException:
        storage.delete_dir(base_path)
        storage.rename(aside, base_path)
        raise
    storage.delete_dir(aside)


def model_frame(spark, model: str, code: str, language: str = "sql"):
    """The model's rows as a DataFrame: its SQL, or its Python `model(dbt, session)` run on this session."""
    from pyspark.errors import PySparkException

    if language == "python":
        from dbt.adapters.hudi.python_model import run_python_model

        return run_python_model(spark, model, code)
    try:
        return spark.sql(code)
    except PySparkException as e:
        raise HudiModelError(f"model {model}: the model's SQL failed: {e}") from e


def write_model(spark, *, model: str, relation_name: str, schema: str, identifier: str, df,
                cfg: HudiModelConfig, mode: str, project_root: str | None, contract: Contract | None = None,
                empty_build: bool = False, assign_table_types: bool = False, loaded=None):
    """Write the model's rows `df` into its Hudi table; returns (WriteResult, path, plan).

    Before anything is written: the setting columns are resolved, the enforced contract's not_null and check
    constraints are checked on the rows, and merge_update_columns / merge_exclude_columns are resolved against
    the model's columns. `empty_build` (dbt's --empty building the table) marks the commit, so the next normal
    run builds the table in full (`is_empty_build`). `loaded`: the `HudiTable` this model run loaded already
    (for `is_empty_build`), used when it is the table at the model's path (else the table is loaded here)."""
    from pyspark.errors import PySparkException

    from hudi_engine import HudiError, KeyGeneratorError, SyncError, TableServiceError
    from hudi_engine.spark import write_small

    colmap = resolve_columns(model, cfg, df.columns)
    if cfg.change_type_column:
        df = apply_change_types(df, colmap[cfg.change_type_column], mode)
    try:
        update_columns = cfg.update_columns(df.columns)
    except HudiConfigError as e:
        raise HudiModelError(str(e)) from None
    existing_catalog = catalog.table_path(spark, relation_name) if mode == "incremental" else None
    path = existing_catalog if (mode == "incremental" and existing_catalog and not cfg.location_root) else \
        table_location(spark, schema, identifier, cfg, project_root)
    table = loaded if loaded is not None and _same_location(loaded, path) else existing_table(path)
    plan = plan_write(model, cfg, mode, path, table.config if table is not None else None, existing_catalog,
                      identifier)
    if mode == "incremental":
        df = reconcile_schema(model, df, cfg, table, plan.operation, assign_table_types)
        if cfg.incremental_predicates:
            from dbt.adapters.hudi.predicates import check_merge_scope

            check_merge_scope(model, cfg.incremental_predicates, cfg.partition_by, colmap, df)
    if contract is not None:
        contract.check_rows(model, df)
    options = cfg.hoodie_options(identifier, schema, plan.operation, colmap, update_columns)
    if empty_build and mode != "incremental":
        options[EMPTY_BUILD_KEY] = "true"
    logger.debug(f"model {model}: {plan.reason}: {plan.operation} into {path} with {options}")
    try:
        with _replacing(model, path, plan):
            # A surely small model (Spark's estimate) is written on the driver after one job collects its rows.
            # The table as loaded above (a table moved aside for a new layout is not written to).
            result = write_small(df, path, options, table=None if plan.recreate else table)
    except (TableServiceError, SyncError) as e:
        # After the commit point: the data is in; only a service or a catalog sync failed. Never say "unchanged".
        raise HudiModelError(f"model {model}: {e}") from e
    except KeyGeneratorError as e:
        raise HudiModelError(
            f"model {model}: {e}. Every row needs a record key (unique_key {list(cfg.unique_key)}): filter out or "
            f"coalesce null keys in the model. The table is unchanged.") from e
    except HudiError as e:
        raise HudiModelError(f"model {model}: Hudi {plan.operation} into {path} failed: {e}. "
                             "The table is unchanged (the write's instant was rolled back).") from e
    except PySparkException as e:
        raise HudiModelError(f"model {model}: Hudi {plan.operation} into {path} failed in Spark: {e}. "
                             "The table is unchanged (the write's instant was rolled back).") from e
    # A Hive sync that wrote the model's own relation made it the one entry for every engine (Spark reads it as a
    # hudi data source table); dbt's own entry would replace it.
    if _synced_here(options, path, relation_name):
        action = "synced"
    else:
        # The entry's columns from the table as the commit left it (its config, and its timeline under the
        # commit's lock with the commit): nothing is read again. A new table (or one moved aside and written
        # anew) is loaded here, once.
        written = _written_table(table if not plan.recreate else None, path, result)
        action = catalog.register_table(spark, relation_name, path, written)
    logger.debug(f"model {model}: catalog table {relation_name} {action}")
    return result, path, plan


def _synced_here(options: dict[str, str], path: str, relation_name: str) -> bool:
    """Whether the write's Hive metastore sync wrote the entry `relation_name` (`schema.table`)."""
    from hudi_engine.spark import hive_entry_names

    names = {n.lower() for n in hive_entry_names(path, options)}
    return relation_name.replace("`", "").lower() in names


def response_fields(result: Any, path: str, table_type: str) -> dict[str, Any]:
    return {
        "instant_time": result.instant_time,
        "operation": result.operation,
        "rows_inserted": result.records_inserted,
        "rows_updated": result.records_updated,
        "rows_deleted": result.records_deleted,
        "files_created": result.files_created,
        "files_rewritten": result.files_rewritten,
        "files_appended": result.files_appended,
        "bytes_written": result.bytes_written,
        "table_path": path,
        "table_type": table_type,
    }


def _written_table(table, path: str, result):
    """The `HudiTable` at `path` as the write left it: the run's table with the committed timeline."""
    from hudi_engine import HudiTable

    if table is None or result.timeline is None:
        return HudiTable.load(path)
    table.timeline = result.timeline
    return table


def is_empty_build(table) -> bool:
    """Whether the latest commit of `table` (a `HudiTable`) is a `dbt run --empty` build (the table has the
    model's schema and no rows yet)."""
    timeline = table.timeline
    latest = timeline.completed_commits().last()
    return latest is not None and timeline.commit_metadata(latest).extra_metadata.get(EMPTY_BUILD_KEY) == "true"


def _same_location(table, path: str) -> bool:
    from hudi_engine import Storage

    return table.location.uri.rstrip("/") == Storage.location(path).rstrip("/")
