"""Write handles: one file group's Arrow records -> new data files -> their `WriteStat`s (FORMAT.md, Write sequence).

A handle is what a Spark task runs on the records of one bucket. The three share one shape, as Hudi's
`HoodieCreateHandle`, `HoodieMergeHandle` and `HoodieAppendHandle` share `HoodieWriteHandle` (`base.WriteHandle`):
constructed for one file group with a `WriteContext` (storage, base path, table config, instant, writer schema, the
task's write token), fed records by `write`, closed by `close`, which gives the write stats. No global state, never
more than one file group in memory. Each handle creates the instant's marker for its file *before* the file (so a
crash can be rolled back), and the stats are what the driver puts in the commit metadata.

* `CreateHandle` (create.py): new file groups, `<fileId>_<token>_<instant>.parquet` (inserts; MOR inserts too).
* `MergeHandle` (merge.py): COW update of a file group: its latest base file merged with the incoming records
  into a new base file version of the same file id.
* `AppendHandle` (append.py): MOR update/delete of a file group: one new log file of data and delete blocks.

`create_handle`, `merge_handle` and `append_handle` are each handle in one call (one file's stat), for the callers
that hold all the records at once.
"""
from __future__ import annotations

from hudi_engine.write.handles.append import (
    LOG_BASE_VERSION,
    AppendHandle,
    append_handle,
    avro_data_blocks,
    list_log_files,
    log_base_instant,
)
from hudi_engine.write.handles.base import HeldWriteHandle, WriteHandle, base_writer, write_base
from hudi_engine.write.handles.context import WriteContext, relative_path
from hudi_engine.write.handles.create import CreateHandle, create_handle
from hudi_engine.write.handles.merge import MERGE_BATCH_ROWS, MergeHandle, merge_handle
from hudi_engine.write.handles.records import conform, prepare_records

__all__ = [
    "LOG_BASE_VERSION", "MERGE_BATCH_ROWS", "AppendHandle", "CreateHandle", "HeldWriteHandle", "MergeHandle",
    "WriteContext", "WriteHandle", "append_handle", "avro_data_blocks", "base_writer", "conform", "create_handle",
    "list_log_files", "log_base_instant", "merge_handle", "prepare_records", "relative_path", "write_base",
]
