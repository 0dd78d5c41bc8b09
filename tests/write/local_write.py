"""In-process writes for tests: `hudi_engine.write.local_writer.write_table` with a path and small batches."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hudi_engine.write.local_writer import write_table
from hudi_engine.write.write_result import WriteResult


def write(path: Path, table: pa.Table, options: dict, *, parallelism: int = 2, chunk: int = 7) -> WriteResult:
    return write_table(table, str(path), options, parallelism=parallelism, batch_rows=chunk)
