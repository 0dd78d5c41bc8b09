"""The one write pipeline every writer goes through (`hudi_engine.spark.write`, the small-write path on the driver,
the dbt adapter through them, and the pure-Python `write_table`): table services a crash left pending, the
transaction (lock, instant, heartbeat, commit or rollback), then the post-commit table services, as delta-rs's
commit runs its post-commit hooks. Hudi's delete_partition (`delete_partitions`) is a write of no files through it.

The caller supplies only the data files: a function from the open client and its transaction to the write stats
(Spark runs it as jobs, `write_table` in this process), and an executor for compaction operations.
"""
from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa

from hudi_engine.column_change import ColumnChange
from hudi_engine.config import keys as K
from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.meta_client import MetaClient
from hudi_engine.schema import avro_to_arrow_schema, remove_meta_fields
from hudi_engine.table_services import runner
from hudi_engine.table_services.clustering import check_inline
from hudi_engine.table_services.compaction import Executor
from hudi_engine.timeline.clustering import PendingClustering
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write.local_writer import write_files
from hudi_engine.write.write_client import Transaction, WriteClient, table_for_write
from hudi_engine.write.write_result import WriteResult

WriteFiles = Callable[[WriteClient, Transaction], list[WriteStat]]


def run_write(client: WriteClient, write_files: WriteFiles, executor: Executor | None = None, *,
              partitions: list[str] | None = None) -> WriteResult:
    """One write of `client` (opened and checked, nothing written yet): pending compactions and cleans finished
    first (new log files of a group under a pending compaction are named after it, and readers see them only once
    that compaction is committed), `write_files` inside the transaction, the commit, then inline compaction,
    cleaning and archival (`runner.after_commit`; a failure there names the committed instant). `partitions`: those
    an overwrite or delete_partition replaces besides the ones it writes to."""
    check_inline(client.config, client.data_schema, lambda: _table_columns(client), client.location.base_path)
    if client.timeline is not None:  # an existing table (a new one has nothing pending)
        runner.finish_pending(client.location, client.config, executor, table=client.table_config,
                              timeline=client.timeline)
    with client.transaction() as txn:
        result = txn.commit(write_files(client, txn), partitions)
        # Still under the lock the commit was made under: the services plan from the timeline as the commit left
        # it (`Transaction.committed`), which no other writer or service can have changed, since every change to
        # the timeline is made under this lock. Taking the lock again instead would need a new listing: another
        # writer may commit in between.
        t0 = time.monotonic()
        assert txn.committed is not None  # `commit` returned
        runner.after_commit(client.location, client.config, result.instant_time, client.table_config, executor,
                            timeline=txn.committed, locked=True, metadata=txn.metadata_writer)
        result.timings["table_services"] = time.monotonic() - t0
    return result


def _table_columns(client: WriteClient) -> pa.Schema | None:
    """The existing table's columns, from its latest commit's schema (None for a new table)."""
    schema = client.timeline.latest_schema() if client.timeline is not None else None
    return avro_to_arrow_schema(schema) if schema else None


def write_table(table: pa.Table, path: str, options: Mapping[str, Any] | WriteConfig, *, parallelism: int = 1,
                batch_rows: int = 65536, loaded: MetaClient | None = None) -> WriteResult:
    """Write `table` to the Hudi table at `path` with Hudi's option keys, without Spark: `parallelism` tasks run one
    after the other in this process (`write.local_writer`); the table services around the commit run here too,
    catalog sync does not (it runs with the Spark writes). `loaded`: the caller's table at `path` (a `HudiTable`),
    not read again (`HudiTable.write`)."""
    config = options if isinstance(options, WriteConfig) else WriteConfig.from_options(options, path)
    refuse_prepped(config, path, "write_table")
    if config.sync.enabled:  # refused rather than ignored
        raise ConfigError(f"table {path}: catalog sync options ({', '.join(config.sync.tools)}) are honoured by "
                          "hudi_engine.spark.write / write_small; write_table does not sync. Remove them here, or "
                          "sync afterwards (hudi_engine.spark.catalog_sync.sync_catalogs)")
    # The door of a write by path: the table is loaded here, once, unless the caller holds it.
    return run_write(WriteClient.open(loaded if loaded is not None else table_for_write(path), config, table.schema),
                     lambda client, txn: write_files(client, txn, table, parallelism=parallelism,
                                                     batch_rows=batch_rows))


def refuse_prepped(config: WriteConfig, path: str, api: str) -> None:
    """hoodie.datasource.write.prepped is served by Spark's DataFrame writer only (`hudi_engine.spark.prepped`)."""
    if config.prepped:
        raise ConfigError(f"table {path}: {K.PREPPED.key}=true is served by Spark's DataFrame writer "
                          f"(df.write.format(\"hudi\"), hudi_engine.spark.write), not by {api}: write the rows read "
                          "from the table there, or leave the option out. Nothing was written")


def resolve_partitions(given: Iterable[str], existing: Iterable[str], where: str) -> list[str]:
    """The partition paths `given` names (as Hudi's `hoodie.datasource.write.partitions.to.delete`: paths such as
    `dt=2024-01-01` or `2024/01/01`, `*` matching within the path as Hudi's wildcards do), each of which must match a
    partition of the table that has file groups: a name that matches none is refused, listing the table's."""
    have = sorted(set(existing))
    out: set[str] = set()
    names = [p.strip().strip("/") for p in given if p.strip()]
    if not names:
        raise ConfigError(f"table {where}: no partition to delete; name partition paths, e.g. {have[:3]}")
    for name in names:
        if "*" in name:
            pattern = re.compile("^" + ".*".join(re.escape(part) for part in name.split("*")) + "$")
            hit = [p for p in have if pattern.match(p)]
        else:
            hit = [name] if name in have else []
        if not hit:
            raise ConfigError(f"table {where}: partition {name!r} does not exist (or holds no file group); its "
                              f"partitions are {have}. Nothing was deleted")
        out.update(hit)
    return sorted(out)


def delete_partitions(table: MetaClient, partitions: Iterable[str], config: WriteConfig) -> WriteResult:
    """Hudi's delete_partition (`drop_partition`, `ALTER TABLE ... DROP PARTITION`, HudiTable.delete_partitions): one
    `replacecommit` (operation DELETE_PARTITION) whose `partitionToReplaceFileIds` lists every file group of
    `partitions` and which writes no file (FORMAT.md, Replace commits), through this pipeline as an insert_overwrite;
    readers stop seeing the partitions, time travel before it still sees them, cleaning removes their files later.
    Replace every file group of `partitions` in one replacecommit (DELETE_PARTITION), through the write client
    opened on `table` (as loaded by the caller). Refused before anything is written: an unknown partition, a
    partition whose file groups a pending clustering holds (as Hudi's delete_partition executor refuses pending
    table services on them; pending compactions are finished first by the pipeline)."""
    where = f"{table.config.name!r} ({table.location.base_path})"
    latest = FileSystemView.load(table.location).latest_file_slices(Visibility.of(table.timeline))
    wanted = resolve_partitions(partitions, {s.partition_path for s in latest}, where)
    PendingClustering.of(table.timeline).refuse_overwrite(wanted, where)
    avro = table.timeline.latest_schema() or table.config.create_schema
    if avro is None:
        raise ConfigError(f"table {where}: it has no schema yet (no commit); there is no partition to delete")
    client = WriteClient.open(table, config.with_operation(Operation.DELETE_PARTITION),
                              avro_to_arrow_schema(remove_meta_fields(avro)))
    return run_write(client, lambda _client, _txn: [], partitions=wanted)


def alter_columns(table: MetaClient, change: ColumnChange, config: WriteConfig) -> WriteResult:
    """ALTER TABLE RENAME COLUMN / DROP COLUMN / ALTER COLUMN TYPE (`column_change`): checked, then one commit of no
    files (operation ALTER_SCHEMA, a commit on COPY_ON_WRITE and a deltacommit on MERGE_ON_READ, as Hudi's
    AlterTableCommand commits it) whose `schema` is the changed one and whose internal schema (`latest_schema`, and
    the history file under its instant) keeps every column's id. No data is rewritten."""
    columns, schema_change = change.plan(table, config.schema_on_read)
    altered = dataclasses.replace(config.with_operation(Operation.INSERT), alter_schema=True,
                                  schema_change=schema_change)
    return run_write(WriteClient.open(table, altered, columns), lambda _client, _txn: [])
