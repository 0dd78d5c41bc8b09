"""`HudiAdapter`: dbt-spark's adapter plus what `materialized='hudi_incremental'` and the Hudi tests call.

Thin on purpose: the macros sequence a run, `model_config` validates and translates settings, `writer` decides
what to ask the engine, `hudi_engine.spark.write` does the table work.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.base import available
from dbt.adapters.base.impl import ConstraintSupport
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.hudi import catalog, session
from dbt.adapters.hudi.connections import HudiConnectionManager
from dbt.adapters.hudi.errors import HudiConfigError, HudiServiceError
from dbt.adapters.hudi.model_config import HudiModelConfig
from dbt.adapters.hudi.relation import HudiRelation
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from hudi_engine.spark import TIMELINE_FUNCTION

logger = AdapterLogger("Hudi")


@dataclass
class HudiConfig(SparkConfig):
    """Model settings of `hudi_incremental` (besides dbt's own unique_key, incremental_strategy, on_schema_change)."""

    precombine_field: str | None = None
    table_type: str | None = None
    payload_class: str | None = None
    index_type: str | None = None
    hudi_options: dict[str, Any] | None = None
    # dbt takes a list here; dbt-spark annotates its field as one string
    merge_update_columns: list[str] | None = None  # type: ignore[assignment]
    merge_exclude_columns: list[str] | None = None
    compaction: dict[str, Any] | None = None
    cleaning: dict[str, Any] | None = None
    clustering: dict[str, Any] | None = None


@dataclass
class HudiAdapterResponse(AdapterResponse):
    """`adapter_response` of a hudi_incremental model in run_results.json: what the commit did."""

    instant_time: str | None = None
    operation: str | None = None
    rows_inserted: int | None = None
    rows_updated: int | None = None
    rows_deleted: int | None = None
    files_created: int | None = None
    files_rewritten: int | None = None
    files_appended: int | None = None
    bytes_written: int | None = None
    table_path: str | None = None
    table_type: str | None = None


def _is_hudi_node(config: dict[str, Any]) -> bool:
    materialized = config.get("materialized")
    return (materialized in ("hudi_incremental", "snapshot") and (config.get("file_format") or "hudi") == "hudi") or \
        (materialized in ("incremental", "table") and config.get("file_format") == "hudi")


class HudiAdapter(SparkAdapter):
    ConnectionManager = HudiConnectionManager
    Relation = HudiRelation
    AdapterSpecificConfigs = HudiConfig  # type: ignore[assignment]
    # A Hudi model's not_null and check constraints are enforced on its rows before the write (contract.py);
    # the others are declared only, as on Spark.
    CONSTRAINT_SUPPORT = {  # noqa: RUF012 - dbt's own class attribute, a dict in every adapter
        ConstraintType.check: ConstraintSupport.ENFORCED,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
        ConstraintType.unique: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.primary_key: ConstraintSupport.NOT_ENFORCED,
        ConstraintType.foreign_key: ConstraintSupport.NOT_ENFORCED,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A model's Hudi table as its run loaded it for the empty-build check (`HudiTable`, by catalog name),
        # taken by the model's write so the table is read once per model run. Dropped when any SQL statement runs
        # (a hook may write the table) and used at most once.
        self._loaded_tables: dict[str, Any] = {}

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._loaded_tables.clear()
        return super().execute(*args, **kwargs)

    # ---- the session -------------------------------------------------------------------------------------
    @property
    def spark(self):
        return HudiConnectionManager.environment.session(self.config.credentials.server_side_parameters)

    def _require_session(self, model: str) -> None:
        method = self.config.credentials.method
        if method != SparkConnectionMethod.SESSION:
            raise CompilationError(
                f"model {model}: this adapter writes Hudi tables (materialized='hudi_incremental', and 'table', "
                f"'incremental', seeds and snapshots with file_format='hudi') through the SparkSession in this dbt "
                f"process, and target '{self.config.target_name}' uses method '{method}', which has no session here "
                f"(its SQL runs on a remote server that cannot run this adapter's Python engine). Use `method: "
                f"session` and point `spark.master` in server_side_parameters at your cluster (spark://host:7077, "
                f"yarn), or give this model another file_format (e.g. 'parquet', 'delta').")

    def debug_query(self) -> None:
        """`dbt debug`'s connection test; with a session it also reports the versions that matter."""
        super().debug_query()
        if self.config.credentials.method == SparkConnectionMethod.SESSION:
            spark = self.spark
            jvm = spark.sparkContext._jvm
            java = jvm.java.lang.System.getProperty("java.version") if jvm is not None else "?"
            logger.info(f"Spark {spark.version} (master {spark.sparkContext.master}), Java {java}, "
                        f"hudi_engine {session.engine_version()}, warehouse {spark.conf.get(session.WAREHOUSE_KEY)}")

    # ---- hudi_incremental --------------------------------------------------------------------------------
    @available
    def hudi_validate_config(self, settings: dict[str, Any], model: str) -> dict[str, Any]:
        """Check a model's settings before anything runs; one error lists every problem."""
        self._require_session(model)
        try:
            cfg = HudiModelConfig.from_dbt(settings, model)
        except HudiConfigError as e:
            raise CompilationError(str(e)) from None
        return {"strategy": cfg.strategy, "table_type": cfg.table_type, "unique_key": list(cfg.unique_key),
                "partition_by": list(cfg.partition_by)}

    @available
    def hudi_write(self, relation: BaseRelation, code: str, settings: dict[str, Any], mode: str, model: str,
                   language: str = "sql", contract: dict[str, Any] | None = None,
                   empty: bool = False, snapshot: bool = False) -> HudiAdapterResponse:
        """Run the model (`code`: SQL, or Python `def model(dbt, session)`) and write its rows into the model's
        Hudi table; register it in the catalog. `contract`: the enforced contract's columns and constraints;
        `empty`: dbt's --empty (the table is built with the model's schema and no rows); `snapshot`: dbt's
        staging rows of a snapshot (columns the table has are written in its types, as dbt's MERGE would)."""
        from dbt.adapters.hudi.contract import Contract
        from dbt.adapters.hudi.writer import model_frame

        self._require_session(model)
        if mode not in ("create", "full_refresh", "incremental"):
            raise DbtRuntimeError(f"model {model}: unknown write mode {mode!r}")
        try:
            cfg = HudiModelConfig.from_dbt(settings, model)
        except HudiConfigError as e:
            raise CompilationError(str(e)) from None
        checks = Contract.from_model(contract.get("columns"), contract.get("constraints")) if contract else None
        df = model_frame(self.spark, model, code, language)
        return self._write_rows(relation, df, cfg, mode, model, checks, bool(empty), bool(snapshot))

    @available
    def hudi_write_seed(self, relation: BaseRelation, agate_table: Any, column_types: dict[str, str],
                        settings: dict[str, Any], mode: str, model: str) -> HudiAdapterResponse:
        """`dbt seed` with file_format='hudi': the CSV's rows, typed as dbt-spark types a seed (`column_types`
        win), written into the seed's Hudi table in one instant."""
        from dbt.adapters.hudi.seed import seed_frame

        self._require_session(model)
        if mode not in ("create", "full_refresh"):
            raise DbtRuntimeError(f"seed {model}: a seed is rebuilt by every run (mode {mode!r})")
        try:
            cfg = HudiModelConfig.from_dbt(settings, model)
        except HudiConfigError as e:
            raise CompilationError(str(e)) from None
        names = [str(c) for c in agate_table.column_names]
        types = [column_types.get(name) or self.convert_type(agate_table, i) for i, name in enumerate(names)]
        df = seed_frame(self.spark, names, types, agate_table.rows)
        return self._write_rows(relation, df, cfg, mode, model)

    def _write_rows(self, relation: BaseRelation, df: Any, cfg: HudiModelConfig, mode: str, model: str,
                    checks: Any = None, empty: bool = False, snapshot: bool = False) -> HudiAdapterResponse:
        from dbt.adapters.hudi.writer import response_fields, write_model

        if relation.schema is None or relation.identifier is None:
            raise DbtRuntimeError(f"model {model}: its relation {relation} has no schema or no table name")
        name = self._catalog_name(relation)
        result, path, _ = write_model(
            self.spark, model=model, relation_name=name, schema=relation.schema,
            identifier=relation.identifier, df=df, cfg=cfg, mode=mode,
            project_root=getattr(self.config, "project_root", None), contract=checks, empty_build=empty,
            assign_table_types=snapshot, loaded=self._loaded_tables.pop(name, None))
        fields = response_fields(result, path, cfg.table_type)
        message = (f"{result.operation} {result.instant_time}: +{result.records_inserted} "
                   f"~{result.records_updated} -{result.records_deleted}")
        return HudiAdapterResponse(_message=message, code=result.operation.upper(),
                                   rows_affected=result.records_inserted + result.records_updated
                                   + result.records_deleted, **fields)

    @available
    def hudi_table_location(self, relation: BaseRelation) -> str:
        """Where the Hudi table behind `relation` lives (from its catalog entry)."""
        path = catalog.table_path(self.spark, self._catalog_name(relation))
        if path is None:
            raise DbtRuntimeError(f"{relation} is not a Hudi table of this adapter (no catalog entry carrying a "
                                  f"hudi.path comment); is it built by a hudi_incremental model?")
        return path

    @available
    def hudi_timeline_function(self) -> str:
        return TIMELINE_FUNCTION

    @available
    def hudi_is_empty_build(self, relation: BaseRelation) -> bool:
        """Whether the model's Hudi table was built by `dbt run --empty` (its next normal run builds it in full)."""
        from dbt.adapters.hudi.writer import existing_table, is_empty_build

        name = self._catalog_name(relation)
        table = self._loaded_tables.get(name)  # loaded when the model compiled (is_incremental), no SQL since
        if table is None:
            path = catalog.table_path(self.spark, name)
            table = existing_table(path) if path is not None else None
            if table is None:
                return False  # no table behind the entry: the write says so (--full-refresh builds it again)
            self._loaded_tables[name] = table
        return is_empty_build(table)

    @available
    def hudi_persist_docs(self, relation: BaseRelation, table_comment: str | None,
                          column_comments: dict[str, str]) -> None:
        """persist_docs of a Hudi model: comments on its catalog entry (the path comment stays)."""
        skipped = catalog.set_comments(self.spark, self._catalog_name(relation), table_comment, column_comments)
        for column in skipped:
            logger.warning(f"persist_docs on {relation}: column {column!r} keeps its comment (it carries the Hudi "
                           f"table path the catalog entry reads); its description is shown in dbt's docs only")

    # ---- table services (run-operations) -------------------------------------------------------------------
    @available
    def hudi_check_service_args(self, service: str, args: dict[str, Any]) -> None:
        from dbt.adapters.hudi.services import SERVICE_ARGS, check_arguments

        if service not in SERVICE_ARGS:
            raise DbtRuntimeError(f"unknown Hudi table service {service!r}; expected one of {', '.join(SERVICE_ARGS)}")
        check_arguments(service, args)

    @available
    def hudi_table_service(self, service: str, args: dict[str, Any], relation: Any,
                           node_config: dict[str, Any] | None, target: str) -> dict[str, Any]:
        """Run `hudi_<service>` on a model's table (its settings apply), a relation or a path; returns the report
        (instant, files, rows, message)."""
        from dbt.adapters.hudi.services import run_service, service_options

        self.hudi_check_service_args(service, args)
        if node_config is not None and not _is_hudi_node(node_config):
            raise HudiServiceError(
                f"hudi_{service}: {target} is materialized as {node_config.get('materialized')!r}, which is not a "
                f"Hudi table. Table services run on models materialized='hudi_incremental' (or 'incremental' with "
                f"file_format='hudi') and on snapshots; or give path: <Hudi table path>.")
        path = args.get("path")
        if not path:
            name = relation if isinstance(relation, str) else self._catalog_name(relation)
            path = catalog.table_path(self.spark, name)
            if path is None:
                raise HudiServiceError(
                    f"hudi_{service}: {target} has no Hudi table in the catalog ({name} is missing or is not a Hudi "
                    f"table of this adapter). Build it first (dbt run --select ...), or give path: <Hudi table path>.")
        options = service_options(service, node_config or {}, args)
        if service == "sync" and relation is not None:  # the synced entry is the relation's own, unless named
            schema, _, identifier = (relation if isinstance(relation, str) else
                                     f"{relation.schema}.{relation.identifier}").replace("`", "").rpartition(".")
            options.setdefault("hoodie.datasource.hive_sync.database", schema or "default")
            options.setdefault("hoodie.datasource.hive_sync.table", identifier)
        report = run_service(service, str(path), options, instant=args.get("instant"), comment=args.get("comment"),
                             op=args.get("op"), spark=self.spark)
        return report.as_dict()

    @available
    def hudi_table_changes_view(self, relation_or_path: BaseRelation | str, begin: str, end: str | None = None,
                                format: str = "latest_state", images: str = "struct") -> str:
        """`{{ hudi_table_changes(...) }}`: a temporary view of the records the commits in (begin, end] wrote; with
        `format='cdc'` of every change they made, deletes included (op, ts_ms, before, after)."""
        from hudi_engine import HudiError

        if isinstance(relation_or_path, str):
            path, schema, identifier = relation_or_path, "path", relation_or_path.rstrip("/").rsplit("/", 1)[-1]
        else:
            path = self.hudi_table_location(relation_or_path)
            schema, identifier = str(relation_or_path.schema), str(relation_or_path.identifier)
        begin = "000" if str(begin).strip().lower() == "earliest" else str(begin)
        try:
            fmt = str(format).strip().lower()
            if fmt not in ("latest_state", "cdc"):
                raise HudiError(f"format {format!r}: expected 'latest_state' (the records written, as of the end) or "
                                "'cdc' (every change, deletes included)")
            return catalog.changes_view(self.spark, schema, identifier, path, begin, None if end is None else str(end),
                                        fmt, str(images).strip().lower())
        except HudiError as e:
            raise DbtRuntimeError(f"hudi_table_changes({relation_or_path}, {begin!r}, {end!r}, format={format!r}): "
                                  f"{e}") from e

    @staticmethod
    def _catalog_name(relation: BaseRelation) -> str:
        return f"`{relation.schema}`.`{relation.identifier}`"

    # ---- docs ------------------------------------------------------------------------------------------------
    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[dict[str, Any]]:
        columns = list(super()._get_columns_for_catalog(relation))
        information = getattr(relation, "information", None) or ""
        if "Provider: hudi" not in information:
            # dbt-spark's catalog carries no comments; persist_docs put them on the catalog entry (views too)
            comments = catalog.column_comments(self.spark, self._catalog_name(relation))
            table_comment = catalog.table_comment_from_information(information)
            for column in columns:
                column["table_comment"] = table_comment
                column["column_comment"] = comments.get(str(column.get("column_name")))
            return columns
        path = catalog.location_from_information(information)
        try:
            stats = catalog.table_stats(path) if path else {}
            comments = catalog.column_comments(self.spark, self._catalog_name(relation))
        except Exception as e:  # noqa: BLE001 - docs should still build when one table cannot be read
            logger.warning(f"catalog stats of {relation} ({path}): {e}")
            stats, comments = {}, {}
        table_comment = catalog.table_comment_from_information(information)
        for column in columns:
            column.update(stats)
            # persist_docs: dbt-spark's catalog carries no comments; a Hudi table's are on its catalog entry.
            column["table_comment"] = table_comment
            column["column_comment"] = comments.get(str(column.get("column_name")))
        return columns

