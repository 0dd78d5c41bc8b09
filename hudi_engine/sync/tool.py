"""One sync of a Hudi table into a catalog, as `HiveSyncTool.syncHoodieTable` runs it over a `HoodieSyncClient`
(the Hive metastore's, Glue's): database, table entry (created, or its schema, formats and parameters updated),
partitions (added, moved, dropped), then `last_commit_time_sync`.

Partitions are compared in full with the table's latest snapshot on every sync (Hudi compares the partitions written
since `last_commit_time_sync`): one listing of the catalog's partitions per sync buys the repair of any earlier sync
that failed half way, and drops partitions an insert_overwrite emptied.

`CatalogClient` is the catalog's side; `hudi_engine.spark.hive_metastore` implements it over the Spark session's
Hive metastore client, `glue.GlueClient` over boto3. `sync_catalogs` runs every enabled tool after a commit and
turns a failure into a `SyncError` that names the committed instant and the tool.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Protocol

from hudi_engine.config import keys as K
from hudi_engine.config.sync_config import GLUE, HIVE, SyncConfig
from hudi_engine.errors import SyncError
from hudi_engine.storage import Storage
from hudi_engine.sync.entry import (
    LAST_COMMIT_TIME_SYNC,
    SCHEMA_PREFIX,
    SyncedTable,
    TableEntry,
    describe,
)
from hudi_engine.table import HudiTable

Partitions = Mapping[tuple[str, ...], str]  # partition values -> location


class CatalogClient(Protocol):
    """A catalog's operations the sync needs (Hudi's `HoodieSyncClient` / `DDLExecutor`)."""

    name: str  # for errors: "the Hive metastore", "AWS Glue"

    def extra_params(self, cfg: SyncConfig) -> Mapping[str, str]: ...

    def location(self, location: str) -> str: ...

    def database_exists(self, database: str) -> bool: ...

    def create_database(self, database: str) -> None: ...

    def get_table(self, database: str, name: str) -> TableEntry | None: ...

    def create_table(self, entry: TableEntry) -> None: ...

    def alter_table(self, entry: TableEntry, *, columns_changed: bool = False) -> None: ...

    def drop_table(self, database: str, name: str) -> None: ...

    def partitions(self, entry: TableEntry) -> Partitions: ...

    def add_partitions(self, entry: TableEntry, partitions: Partitions) -> None: ...

    def alter_partitions(self, entry: TableEntry, partitions: Partitions) -> None: ...

    def drop_partitions(self, entry: TableEntry, values: Sequence[tuple[str, ...]]) -> None: ...


def sync_table(table: HudiTable, location: str, cfg: SyncConfig, client: CatalogClient, *, database: str,
               name: str, spark_version: str = "") -> SyncedTable:
    """Bring `client`'s entries of `table` up to its latest commit; returns what was synced."""
    synced = describe(table, client.location(location), cfg, database=database, name=name,
                      spark_version=spark_version, extra_params=client.extra_params(cfg))
    for entry in synced.entries:
        _sync_entry(entry, synced.partitions, cfg, client)
    return synced


def _sync_entry(entry: TableEntry, partitions: Partitions, cfg: SyncConfig, client: CatalogClient) -> None:
    if not client.database_exists(entry.database):
        if not cfg.auto_create_database:
            raise SyncError(f"{client.name}: database {entry.database!r} does not exist and "
                            f"{K.SYNC_AUTO_CREATE_DATABASE.key}=false")
        client.create_database(entry.database)
    current = client.get_table(entry.database, entry.name)
    without_commit = dataclasses.replace(
        entry, params={k: v for k, v in entry.params.items() if k != LAST_COMMIT_TIME_SYNC})
    if current is not None and _names(current.partition_keys) != _names(entry.partition_keys):
        # Partition keys cannot be altered (an entry Spark or dbt made, or another partitioning): the entry is made
        # again. The clients drop entries as external, so the table's files stay.
        client.drop_table(entry.database, entry.name)
        current = None
    if current is None:
        client.create_table(without_commit)
        existing: Partitions = {}
    else:
        merged = _merged_params(current.params, without_commit.params)
        wanted = dataclasses.replace(without_commit, params=merged)
        if _differs(current, wanted):
            client.alter_table(wanted, columns_changed=_columns(current) != _columns(wanted))
        existing = client.partitions(entry) if entry.partition_keys else {}
    if entry.partition_keys:
        add = {v: loc for v, loc in partitions.items() if v not in existing}
        move = {v: loc for v, loc in partitions.items() if v in existing and not _same_place(existing[v], loc)}
        drop = [v for v in existing if v not in partitions]
        if add:
            client.add_partitions(entry, add)
        if move:
            client.alter_partitions(entry, move)
        if drop:
            client.drop_partitions(entry, drop)
    # Last, as HiveSyncTool does: a sync that failed before this point is redone in full by the next one.
    final = client.get_table(entry.database, entry.name)
    assert final is not None
    client.alter_table(dataclasses.replace(final, params={**final.params,
                                                          LAST_COMMIT_TIME_SYNC: entry.params[LAST_COMMIT_TIME_SYNC]}))


def _names(columns: Sequence) -> list[str]:
    return [c.name.lower() for c in columns]


def _merged_params(current: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str]:
    """The entry's parameters over the catalog's (Hudi's `updateTableProperties` adds, never removes), except the
    Spark schema: parameters of an older schema (another number of parts, Spark's single `spark.sql.sources.schema`)
    would be read instead of the new one."""
    kept = {k: v for k, v in current.items() if not k.startswith(SCHEMA_PREFIX)}
    return {**kept, **wanted}


def _type(text: str) -> str:
    return text.replace(" ", "").replace("`", "").lower()


def _columns(e: TableEntry) -> list[tuple[str, str]]:
    return [(c.name.lower(), _type(c.type)) for c in e.columns]


def _differs(current: TableEntry, wanted: TableEntry) -> bool:
    return (_columns(current) != _columns(wanted) or current.input_format != wanted.input_format
            or current.output_format != wanted.output_format or current.serde != wanted.serde
            or any(current.serde_params.get(k) != v for k, v in wanted.serde_params.items())
            or not _same_place(current.location, wanted.location)
            or any(current.params.get(k) != v for k, v in wanted.params.items())
            or set(current.params) != set(wanted.params))


def _same_place(a: str, b: str) -> bool:
    """Whether two locations name one folder (a metastore qualifies `/x` as `file:/x`)."""
    def plain(loc: str) -> str:
        for prefix in ("file://", "file:"):
            if loc.startswith(prefix):
                loc = loc[len(prefix):]
                break
        return loc.rstrip("/")

    return plain(a) == plain(b)


# ---- after a commit ---------------------------------------------------------------------------------------------
TOOL_NAMES = {HIVE: "Hive metastore sync (HiveSyncTool)", GLUE: "AWS Glue sync (AwsGlueCatalogSyncTool)"}


def sync_catalogs(path: str, cfg: SyncConfig, clients: Mapping[str, CatalogClient], *, instant: str | None = None,
                  spark_version: str = "") -> list[SyncedTable]:
    """Run every sync tool `cfg` enables (`clients` holds a client per tool) for the Hudi table at `path`. With
    `instant` (a commit this write made) a failure raises `SyncError` saying the data committed at that instant and
    which sync failed (a warning with hoodie.datasource.hive_sync.ignore_exceptions); the next sync repairs it."""
    table = HudiTable.load(path)
    # A URI as given (its query string, e.g. a pyarrow endpoint override, is no part of the location); a local path
    # absolute.
    location = Storage.location(str(path)).split("?", 1)[0]
    name = cfg.table or table.config.name
    base_path = table.location.base_path
    problems = cfg.problems(tuple(table.config.partition_fields), base_path)  # a new table's, checked now
    if problems:
        raise SyncError(f"table {base_path}: catalog sync options contradict the table: " + "; ".join(problems)
                        + (f" (the write committed at instant {instant})" if instant else ""), instant=instant)
    done = []
    for tool in cfg.tools:
        client = clients[tool]
        database, table_name = cfg.database, name
        if tool == GLUE:
            database, table_name = cfg.glue_database or database, cfg.glue_table or table_name
        try:
            done.append(sync_table(table, location, cfg, client, database=database, name=table_name,
                                   spark_version=spark_version))
        except Exception as e:  # any failure of the catalog's client: the commit stands, the error says so
            what = TOOL_NAMES[tool]
            head = (f"table {base_path}: the write committed at instant {instant} (its data is in the table), "
                    f"then {what} of {database}.{table_name} failed" if instant else
                    f"table {base_path}: {what} of {database}.{table_name} failed")
            message = (f"{head}: {type(e).__name__}: {e}. The next write (or hudi_engine.spark.sync_catalogs / dbt "
                       "run-operation hudi_sync) syncs the entry again in full.")
            if cfg.ignore_exceptions:
                warnings.warn(message + f" ({K.SYNC_IGNORE_EXCEPTIONS.key}=true)", stacklevel=2)
                continue
            raise SyncError(message, instant=instant, tool=what) from e
    return done
