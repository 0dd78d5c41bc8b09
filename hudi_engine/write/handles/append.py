"""`AppendHandle`: MOR update/delete of one file group, one new log file `.<fileId>_<base>.log.<v>_<token>` holding
Avro data blocks and a delete block. A new file per commit, never an append to someone else's file (FORMAT.md, Log
file names)."""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import WriteError
from hudi_engine.file_naming import LogFileName, is_log_file_name
from hudi_engine.io.avro_codec import encode_records_framed_with_ends
from hudi_engine.io.log_block import (
    AVRO_DATA_BLOCK_VERSION,
    BlockType,
    LogBlock,
    build_avro_data_block,
    build_delete_block,
)
from hudi_engine.io.log_format import encode_log_file
from hudi_engine.location import TableLocation
from hudi_engine.schema import schema_to_json
from hudi_engine.timeline.commit_metadata import RecordKeys, RuntimeStats, WriteStat
from hudi_engine.timeline.instant import State
from hudi_engine.write.handles.base import HeldWriteHandle
from hudi_engine.write.handles.context import WriteContext, relative_path
from hudi_engine.write.handles.records import split_deleted
from hudi_engine.write.markers import IOType

LOG_BASE_VERSION = 1  # HoodieLogFile.LOGFILE_BASE_VERSION
_BLOCK_PREFIX = struct.Struct(">ii")  # content version, record count


def list_log_files(location: TableLocation, partition_path: str, file_id: str,
                   base_instant: str | None = None, *, since: str | None = None) -> list[LogFileName]:
    """Log files of one file group named by `base_instant` (a version-6 slice, or one 1.x delta commit's), or by any
    instant from `since` on (a 1.x slice), in Hudi's log order."""
    found = []
    for entry in location.storage.list_dir(location.join(partition_path)):
        if entry.is_dir or not is_log_file_name(entry.name):
            continue
        log = LogFileName.parse(entry.name)
        named = log.base_instant == base_instant if since is None else log.base_instant >= since
        if log.file_id == file_id and named and log.extension == "log":
            found.append(log)
    return sorted(found, key=lambda f: f.sort_key)


class AppendHandle(HeldWriteHandle):
    """MOR update/delete of one file group: a new log file in the slice at `base_instant`.

    `base_instant` is the slice's base instant: the latest base file's commit time, or the pending compaction
    instant when a compaction is scheduled on the group (see `log_base_instant`). The log version is one above
    the slice's highest. The file holds AVRO_DATA blocks (cut at `log_block_max_size` bytes of records) and then
    one DELETE block for the keys given to `delete` and records flagged `_hoodie_is_deleted`; every block's header
    carries INSTANT_TIME and the writer schema with meta fields. Deletes carry ordering value Integer 0 ("delete wins",
    the value Spark SQL writes and hudi-rs decodes: FORMAT.md, Delete blocks). `base_file_name` is the slice's base
    file, for the stat.

    Records and deletes are held until `close`, which encodes them into the one log file.
    """


    def __init__(self, ctx: WriteContext, partition_path: str, file_id: str, base_instant: str, *,
                 base_file_name: str | None = None, placed: pa.Array | None = None) -> None:
        """`placed`: the keys of this write that the record index places in this file group, as the write's tagging
        found them (RECORD_INDEX): the keys it reports are then resolved against the index (`RecordKeys.resolved`)."""
        super().__init__(ctx, partition_path, file_id)
        self.base_instant, self.base_file_name = base_instant, base_file_name
        self.placed = placed

    def close(self) -> list[WriteStat]:
        """Write the log file: its one write stat."""
        ctx, partition_path, file_id, base_instant = self.ctx, self.partition_path, self.file_id, self.base_instant
        base_file_name = self.base_file_name
        records = self._written()
        records, flagged = split_deleted(records)
        # Hudi 1.x names a log file by the delta commit writing it (its slice is found by completion time).
        name_instant = ctx.instant_time if ctx.config.log_files_named_by_delta_commit else base_instant
        # The slice's log files before this one, as Hudi's append handle lists them in the stat (Java's CDC reads the
        # slice from them): on 1.x, named by their delta commits, those from the slice's base instant on. One listing.
        in_slice = list_log_files(ctx.location, partition_path, file_id, since=base_instant)
        existing = [f for f in in_slice if f.base_instant == name_instant]
        version = max((f.version for f in existing), default=LOG_BASE_VERSION - 1) + 1

        rows = self._prepare(records, file_id) if records.num_rows else None
        delete_keys = self._delete_keys()
        if flagged.num_rows:
            delete_keys = pa.concat_arrays([delete_keys, ctx.key_of(self._prepare(flagged, file_id))])
        if rows is None and not len(delete_keys):
            raise WriteError(f"append_handle: nothing to write to file group {file_id} in partition {partition_path!r}")

        blocks = []
        if rows is not None:
            blocks += avro_data_blocks(rows, ctx.schema_with_meta, ctx.instant_time, ctx.log.block_max_size)
        if len(delete_keys):
            keys = [(k, partition_path, None) for k in delete_keys.to_pylist()]  # None: IntWrapper(0)
            blocks.append(build_delete_block(keys, ctx.instant_time, schema_to_json(ctx.schema_with_meta)))
        data = encode_log_file(blocks)
        # Hudi 1.x (table version 8+) marks a log file CREATE, as wholly the instant's; its rollback refuses APPEND
        # markers there ("V8+ should not have APPEND markers").
        io_type = IOType.CREATE if ctx.config.log_files_named_by_delta_commit else IOType.APPEND

        while True:  # a concurrent writer of this file group (optimistic concurrency) may take a version first
            name = str(LogFileName(file_id, name_instant, version, str(ctx.write_token)))
            ctx.inflight.create_marker(partition_path, name, io_type)
            path = ctx.full_path(partition_path, name)
            if ctx.location.storage.create_exclusive(path, data):
                break
            ctx.inflight.remove_marker(partition_path, name, io_type)
            version += 1
        ctx.inflight.confirm_written(partition_path, name)
        n = rows.num_rows if rows is not None else 0
        reported = None
        if ctx.reports_record_keys:  # the keys of its data blocks and of its delete block
            written = ctx.key_of(rows) if rows is not None else pa.array([], pa.string())
            if self.placed is None:
                reported = RecordKeys(written, delete_keys)
            else:  # new here: written keys the index did not place here; gone: deleted keys it placed here
                removed = delete_keys.filter(pc.and_(pc.is_in(delete_keys, value_set=self.placed),
                                                     pc.invert(pc.is_in(delete_keys, value_set=written))))
                reported = RecordKeys(written.filter(pc.invert(pc.is_in(written, value_set=self.placed))), removed,
                                      resolved=True)
        return [WriteStat(
            file_id=file_id,
            path=relative_path(partition_path, name),
            prev_commit=base_instant,  # Hudi's HoodieAppendHandle: the slice's base instant
            num_writes=n,
            num_deletes=len(delete_keys),
            num_update_writes=n,
            total_write_bytes=len(data),
            partition_path=partition_path,
            file_size_in_bytes=len(data),
            runtime_stats=RuntimeStats(total_upsert_time=self._elapsed_ms()),
            log_version=version,
            log_offset=0,
            base_file=base_file_name or "",
            log_files=[str(f) for f in in_slice if str(f) != name] + [name],
            record_keys=reported,
        )]


def append_handle(
    ctx: WriteContext,
    partition_path: str,
    file_id: str,
    base_instant: str,
    records: pa.Table | None,
    *,
    deletes: pa.Array | pa.Table | list | None = None,
    base_file_name: str | None = None,
) -> WriteStat:
    """`AppendHandle` in one call: `records` (None: only deletes) and `deletes` (record keys) as one log file."""
    handle = AppendHandle(ctx, partition_path, file_id, base_instant, base_file_name=base_file_name)
    if records is not None:
        handle.write(records)
    if deletes is not None:
        handle.delete(deletes)
    return handle.close()[0]


def avro_data_blocks(rows: pa.Table, avro_schema: dict, instant_time: str, max_size: int) -> list[LogBlock]:
    """AVRO_DATA blocks of `rows` in order, each holding at most `max_size` bytes of framed records (at least one
    record), as Hudi's append handle flushes a block once it is full. Every record is encoded once."""
    if rows.num_rows == 0:
        return []
    if max_size <= 0:
        raise WriteError(f"hoodie.logfile.data.block.max.size={max_size}: expected a positive number of bytes")
    # The header exactly as io.log_block builds it for a data block of this schema and instant.
    header = build_avro_data_block(rows.slice(0, 0), avro_schema, instant_time).header
    # One contiguous chunk per column: the encoder works column by column (records of a task arrive in batches).
    body, ends = encode_records_framed_with_ends(rows.combine_chunks(), avro_schema)
    blocks: list[LogBlock] = []
    first, start = 0, 0  # first record and byte offset of the next block
    while first < len(ends):
        # The most records whose framed bytes fit in max_size, at least one (Hudi flushes when a block is full).
        last = max(first + 1, int(np.searchsorted(ends, start + max_size, side="right")))
        content = _BLOCK_PREFIX.pack(AVRO_DATA_BLOCK_VERSION, last - first) + body[start:int(ends[last - 1])]
        blocks.append(LogBlock(BlockType.AVRO_DATA, dict(header), content))
        first, start = last, int(ends[last - 1])
    return blocks


def log_base_instant(timeline, partition_path: str, file_id: str, latest_base_instant: str) -> str:
    """The base instant a new log file of a file group takes: a pending compaction's instant if one is
    scheduled on the group (its plan lists the file id), else the latest base instant (FORMAT.md, Log file names)."""
    for instant in reversed(timeline.pending_compactions()):
        plan = timeline.avro_metadata(instant.with_state(State.REQUESTED)) or {}
        for op in plan.get("operations") or []:
            if op.get("fileId") == file_id and (op.get("partitionPath") or "") == partition_path:
                return instant.timestamp
    return latest_base_instant
