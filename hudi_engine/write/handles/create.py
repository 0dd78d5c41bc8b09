"""`CreateHandle`: new file groups of one partition, `<fileId>_<token>_<instant>.parquet` (inserts; MOR inserts too,
since hudi-rs and Java's index only see keys that live in base files: FORMAT.md, Uncommitted files)."""
from __future__ import annotations

import time

import pyarrow as pa

from hudi_engine.errors import WriteError
from hudi_engine.file_naming import BaseFileName, new_file_id
from hudi_engine.io.base_file import BaseFileWriter
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, RecordKeys, RuntimeStats, WriteStat
from hudi_engine.write.handles.base import WriteHandle
from hudi_engine.write.handles.context import WriteContext, relative_path
from hudi_engine.write.handles.records import split_deleted
from hudi_engine.write.markers import IOType


class CreateHandle(WriteHandle):
    """New file groups of one partition, written a chunk at a time: rows go to row groups of about an eighth of the
    max file size, and a new file group starts when the next chunk would pass `hoodie.parquet.max.file.size`
    (Hudi's create handle rolls over the same way). Holds one file's bytes and one chunk, never the whole input.

    Records flagged `_hoodie_is_deleted` are dropped (an insert of a deleted record writes nothing).
    `file_id` names the first file group (a BUCKET index bucket: its only one, it never rolls over).
    """

    def __init__(self, ctx: WriteContext, partition_path: str, file_id: str | None = None, *,
                 roll_over: bool = True, record_size: int | None = None) -> None:
        super().__init__(ctx, partition_path, file_id)
        self.next_file_id = file_id
        self.roll_over = roll_over
        self.bytes_per_row = float(record_size or ctx.files.record_size_estimate)
        self.stats: list[WriteStat] = []
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._measured = False
        self._writer: BaseFileWriter | None = None
        self._file_id = self._name = ""
        self._keys: list[pa.Array] = []  # the open file's keys, when the record index wants them

    @property
    def chunk_rows(self) -> int:
        """Rows per row group: an eighth of the max file size (at most the parquet block size) at the measured
        bytes per row; until a chunk was written, an eighth of that (the estimate may be far off)."""
        rows = max(1, int(self.ctx.files.row_group_bytes / max(1.0, self.bytes_per_row)))
        return rows if self._measured else max(1, rows // 8)

    def write(self, records: pa.Table) -> None:
        """Buffer `records`; full chunks go to the file (so small batches still make row groups of a chunk)."""
        records, _ = split_deleted(records)
        if records.num_rows:
            self._buffer.append(records)
            self._buffered += records.num_rows
        while self._buffered >= self.chunk_rows:
            self._flush(self.chunk_rows)

    def _flush(self, rows: int) -> None:
        table = pa.concat_tables(self._buffer) if len(self._buffer) > 1 else self._buffer[0]
        chunk, rest = table.slice(0, rows), table.slice(rows)
        self._buffer, self._buffered = ([rest] if rest.num_rows else []), rest.num_rows
        if self._writer is not None and self.roll_over and \
                self._writer.size + chunk.num_rows * self.bytes_per_row > self.ctx.files.max_file_size:
            self._close_file()
        if self._writer is None:
            self._open_file()
        assert self._writer is not None
        prepared = self._prepare(chunk, self._name, self._writer.num_rows, schema=self.ctx.file_schema)
        if self.ctx.reports_record_keys:
            self._keys.append(self.ctx.key_of(prepared))
        self._writer.write(prepared)
        if self._writer.size:
            self.bytes_per_row = self._writer.size / self._writer.num_rows
            self._measured = True

    def _open_file(self) -> None:
        self._t0 = time.monotonic()
        self._file_id = self.next_file_id or new_file_id()
        self.next_file_id = None
        self._name = str(BaseFileName(self._file_id, str(self.ctx.write_token), self.ctx.instant_time))
        self.ctx.inflight.create_marker(self.partition_path, self._name, IOType.CREATE)
        self._writer = self._base_writer(self._name)

    def _close_file(self) -> None:
        assert self._writer is not None
        result = self._publish(self._writer, self._name)
        self._writer = None
        keys = None
        if self.ctx.reports_record_keys:  # a new file group: every key it holds is new there
            keys = RecordKeys(pa.concat_arrays(self._keys) if self._keys else pa.array([], pa.string()),
                              pa.array([], pa.string()))
            self._keys = []
        self.stats.append(WriteStat(
            file_id=self._file_id,
            path=relative_path(self.partition_path, self._name),
            prev_commit=NULL_COMMIT,
            num_writes=result.num_rows,
            num_inserts=result.num_rows,
            total_write_bytes=result.size,
            partition_path=self.partition_path,
            file_size_in_bytes=result.size,
            runtime_stats=RuntimeStats(total_create_time=self._elapsed_ms()),
            record_keys=keys,
        ))

    def close(self) -> list[WriteStat]:
        """Write the buffered rows and close the open file: the stats of every file group written."""
        while self._buffered:
            self._flush(min(self._buffered, self.chunk_rows))
        if self._writer is not None:
            self._close_file()
        return self.stats


def create_handle(
    ctx: WriteContext,
    partition_path: str,
    records: pa.Table,
    *,
    file_id: str | None = None,
) -> WriteStat:
    """Write `records` as the first base file of one new file group in `partition_path` (no roll-over)."""
    handle = CreateHandle(ctx, partition_path, file_id=file_id, roll_over=False)
    handle.write(records)
    stats = handle.close()
    if not stats:
        raise WriteError(f"create_handle: no records to write into partition {partition_path!r}")
    return stats[0]
