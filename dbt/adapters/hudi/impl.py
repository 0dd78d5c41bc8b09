"""`HudiAdapter`: dbt-spark's adapter plus what `materialized='hudi_incremental'` and the Hudi tests call.

Thin on purpose: the macros sequence a run, `model_config` validates and translates settings, `writer` decides
what to ask the engine, `hudi_engine.spark.write` does the table work.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.base import available
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.hudi import catalog, session
from dbt.adapters.hudi.connections import HudiConnectionManager
from dbt.adapters.hudi.model_config import HudiConfigError, HudiModelConfig
from dbt.adapters.hudi.relation import HudiRelation
from dbt.adapters.hudi.timeline import FUNCTION_NAME
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig

logger = AdapterLogger("Hudi")


@dataclass
class HudiConfig(SparkConfig):
    """Model settings of `hudi_incremental` (besides dbt's own unique_key, incremental_strategy, on_schema_change)."""

    precombine_field: str | None = None
    table_type: str | None = None
    payload_class: str | None = None
    index_type: str | None = None
    hudi_options: dict[str, Any] | None = None


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


class HudiAdapter(SparkAdapter):
    ConnectionManager = HudiConnectionManager  # type: ignore[assignment]
    Relation = HudiRelation  # type: ignore[assignment]
    AdapterSpecificConfigs = HudiConfig  # type: ignore[assignment]

    # ---- the session -------------------------------------------------------------------------------------
    @property
    def spark(self):
        return session.get_session(self.config.credentials.server_side_parameters)

    def _require_session(self, model: str) -> None:
        method = self.config.credentials.method
        if method != SparkConnectionMethod.SESSION:
            raise CompilationError(
                f"model {model}: materialized='hudi_incremental' writes Hudi tables through the SparkSession in "
                f"this dbt process, and target '{self.config.target_name}' uses method '{method}', which has no "
                f"session here (its SQL runs on a remote server that cannot run this adapter's Python engine). "
                f"Use `method: session` and point `spark.master` in server_side_parameters at your cluster "
                f"(spark://host:7077, yarn), or materialize this model as 'table' / 'incremental'.")

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
    def hudi_write(self, relation: BaseRelation, sql: str, settings: dict[str, Any], mode: str,
                   model: str) -> HudiAdapterResponse:
        """Run `sql` and write its rows into the model's Hudi table; register it in the catalog."""
        from dbt.adapters.hudi.writer import response_fields, write_model

        self._require_session(model)
        if mode not in ("create", "full_refresh", "incremental"):
            raise DbtRuntimeError(f"model {model}: unknown write mode {mode!r}")
        try:
            cfg = HudiModelConfig.from_dbt(settings, model)
        except HudiConfigError as e:
            raise CompilationError(str(e)) from None
        result, path, _ = write_model(
            self.spark, model=model, relation_name=self._catalog_name(relation), schema=relation.schema,
            identifier=relation.identifier, sql=sql, cfg=cfg, mode=mode,
            project_root=getattr(self.config, "project_root", None))
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
        return FUNCTION_NAME

    @available
    def hudi_table_changes_view(self, relation_or_path: BaseRelation | str, begin: str, end: str | None = None) -> str:
        """`{{ hudi_table_changes(...) }}`: a temporary view of the records the commits in (begin, end] wrote."""
        from hudi_engine.errors import HudiError

        if isinstance(relation_or_path, str):
            path, schema, identifier = relation_or_path, "path", relation_or_path.rstrip("/").rsplit("/", 1)[-1]
        else:
            path = self.hudi_table_location(relation_or_path)
            schema, identifier = relation_or_path.schema, relation_or_path.identifier
        begin = "000" if str(begin).strip().lower() == "earliest" else str(begin)
        try:
            return catalog.changes_view(self.spark, schema, identifier, path, begin, None if end is None else str(end))
        except HudiError as e:
            raise DbtRuntimeError(f"hudi_table_changes({relation_or_path}, {begin!r}, {end!r}): {e}") from e

    @staticmethod
    def _catalog_name(relation: BaseRelation) -> str:
        return f"`{relation.schema}`.`{relation.identifier}`"

    # ---- docs ------------------------------------------------------------------------------------------------
    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[dict[str, Any]]:
        columns = list(super()._get_columns_for_catalog(relation))
        information = getattr(relation, "information", None) or ""
        if "Provider: hudi" not in information:
            return columns
        path = catalog.location_from_information(information)
        try:
            stats = catalog.table_stats(path) if path else {}
        except Exception as e:  # noqa: BLE001 - docs should still build when one table cannot be read
            logger.warning(f"catalog stats of {relation} ({path}): {e}")
            stats = {}
        for column in columns:
            column.update(stats)
        return columns

