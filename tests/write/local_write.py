"""Writes without Spark for tests: the task-side steps in this process (`hudi_engine.write.local_writer`)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_engine.config.write_config import WriteConfig
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.write import local_writer
from hudi_engine.write.write_client import Transaction, WriteClient, table_for_write
from hudi_engine.write.write_result import WriteResult
from hudi_engine.write_pipeline import run_write


def write(path: Path | str, table: pa.Table, options: dict, *, parallelism: int = 2, chunk: int = 7,
          table_services: bool = False, threads: int = 1) -> WriteResult:
    """One write; with `table_services`, also what runs around a commit (pending services before, inline
    compaction, the LAZY rollback of failed writes, cleaning and archival after), as `spark.writer.write` does."""
    client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(options, str(path)), table.schema)
    if table_services:
        return run_write(client, lambda c, txn: write_files(c, txn, table, parallelism=parallelism, chunk=chunk,
                                                            threads=threads))
    with client.transaction() as txn:
        return txn.commit(write_files(client, txn, table, parallelism=parallelism, chunk=chunk, threads=threads))


def write_files(client: WriteClient, txn: Transaction, table: pa.Table, *, parallelism: int = 2,
                chunk: int = 7, threads: int = 1) -> list[WriteStat]:
    """The data files of one write's instant (what the Spark job does between start and commit); their stats."""
    return local_writer.write_files(client, txn, table, parallelism=parallelism, batch_rows=chunk, threads=threads)
