"""A read's plan: which of the file slices the engine's scan plan reads go to Spark's own parquet reader, and which
to the `hudi` source (`hudi_merge`), which merges them in Python.

Which file slices a read sees, as of which instant, is the engine's scan plan (`hudi_engine.scan_plan`); `plan_read`
only decides who reads each slice. Spark's own parquet reader prunes columns, pushes filters into row groups and
decodes vectorized; the `hudi` Python source (Spark 4.3) gets filter pushdown only, so every column of every row
crosses from a Python worker. A read is therefore split by file slice:

* a slice that is one base file Spark can read in the table's schema (a copy-on-write table, a merge-on-read slice
  without log files or after compaction, any slice of a read-optimized query) is scanned by Spark's parquet reader
  over the files listed here: column pruning, row-group statistics, vectorized decoding;
* a slice with log files is split by record key: Spark's parquet reader reads its base file except the rows whose
  keys the log blocks write or delete (keys read from the logs when the read is planned: `split_keys`), and the
  `hudi` source merges only those keys' rows in Python;
* a slice whose base file holds a column in another type than the table's now (schema evolution that Spark's
  reader does not widen), a log-only slice, or a slice of a table without meta fields (no stored key to join on)
  goes to the `hudi` source whole, which merges it in Python.

Both halves read as of one instant fixed when the plan is made (the latest completed commit, the time travel
instant, or the incremental range's end), so their union is one consistent snapshot even when a commit lands in
between. Two readers run the plan: `relation.dataframe` (a DataFrame, for `read_table` and dbt's views) and the
native source (`native.plan_json`, as JSON for its JVM planner).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
from pyspark.sql.datasource import Filter

from hudi_engine.errors import SchemaError
from hudi_engine.file_group import BaseFile, FileSlice
from hudi_engine.file_slice_reader import log_record_keys
from hudi_engine.io.base_file import read_footer
from hudi_engine.read_options import ReadOptions
from hudi_engine.scan_plan import CommitTimeWindow, ScanPlan, file_group_id, fix_query, list_slices
from hudi_engine.schema import add_meta_fields, avro_to_arrow_schema
from hudi_engine.spark.pushdown import pruning, skipping_filters
from hudi_engine.spark.spark_types import spark_type
from hudi_engine.spark.table_cache import TABLES
from hudi_engine.table import HudiTable

RECORD_KEY = "_hoodie_record_key"
# Keys of the log blocks the split read joins against (driver memory, a broadcast): beyond this many, the
# remaining slices with log files are merged whole by the hudi source instead.
MAX_SPLIT_KEYS = 2_000_000
# The columns of `ReadPlan.split_keys`: a base file's name, and a key its slice's log blocks write or delete.
SPLIT_FILE = "__hudi_file_name"
SPLIT_KEY = "__hudi_record_key"


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """One read, split: the base files Spark's parquet reader scans, the file groups the `hudi` source merges. Which
    slices the read sees, as of which instant, is the engine's scan plan (`scan`); this only assigns them."""

    scan: ScanPlan
    native_files: tuple[str, ...]  # URIs of base files
    merged_groups: tuple[str, ...]  # file groups ("<partition>/<file id>") read by the hudi source
    split_files: tuple[str, ...] = ()  # base files of slices with logs: read by Spark but for `split_keys`
    split_keys: pa.Table | None = None  # (base file name, record key) the logs of those slices write or delete
    split_groups: tuple[str, ...] = ()  # their file groups: the hudi source reads only those keys' merged rows
    native_sizes: tuple[int, ...] = ()  # bytes of each of `native_files`, as listed
    split_sizes: tuple[int, ...] = ()  # bytes of each of `split_files`

    @property
    def path(self) -> str:
        """The table, as the hudi source loads it."""
        return self.scan.table_uri

    @property
    def schema(self) -> pa.Schema:
        return self.scan.schema

    @property
    def options(self) -> ReadOptions:
        """The query with its instant fixed (as_of, or the incremental range's end)."""
        return self.scan.query

    @property
    def window(self) -> CommitTimeWindow | None:
        """Incremental: the rows of native files the read keeps."""
        return self.scan.window

    def source_options(self) -> dict[str, str]:
        """Options of the `hudi` source's half: the same query, as of the same instant, on `merged_groups` (whole)
        and `split_groups` (the logged keys only)."""
        query = replace(self.scan.query, file_groups=frozenset((*self.merged_groups, *self.split_groups)),
                        logged_keys_only=frozenset(self.split_groups))
        return query.to_options()


def plan_read(table: HudiTable, opts: ReadOptions, *, split_logged: bool = True, filters: Sequence[Filter] = (),
              spark_opens_files: bool = True, max_split_keys: int = MAX_SPLIT_KEYS) -> ReadPlan:
    """Which of the slices the engine's scan plan reads for `opts` Spark's parquet reader can scan.

    `split_logged=False` leaves slices with log files whole to the hudi source; with it, a slice's base file goes
    to Spark's reader but for the keys its logs write or delete, up to `max_split_keys` keys in all (the slices
    past that are merged whole). The query's Spark `filters` prune partitions before slices are listed and drop the
    slices whose rows are all older than a bound on `_hoodie_commit_time`; `spark_opens_files=False` (a location
    Spark's file systems cannot open) sends every slice to the hudi source."""
    fixed = fix_query(table, opts)
    partition_filter, bound = pruning(table, fixed.schema, filters)
    scan = list_slices(table, fixed, filters=partition_filter, commit_time_bound=bound,
                       skipping=skipping_filters(fixed.schema, filters))
    schema, query = scan.schema, scan.query
    # Slices with log files are split by key on snapshot reads (an incremental pull's slices go whole: few rows).
    split = split_logged and query.query_type == "snapshot" and table.config.populate_meta_fields
    files = _FileSchemas(table)
    native, merged, split_files, split_groups = [], [], [], []
    keys = _SplitKeys(scan, max_split_keys, TABLES.memo(table))
    sizes, split_sizes = [], []
    # Spark's reader finds columns by name: with a schema-on-read history (renamed columns) ours reads every slice.
    spark_reads = spark_opens_files and scan.column_ids is None
    for s in scan.slices:
        readable = (s.base_file if spark_reads and s.base_file is not None
                    and files.spark_reads(s.base_file, schema) else None)
        if readable is not None and (query.read_optimized or not s.log_files):
            native.append(_uri(table, readable.path))
            sizes.append(readable.size)
        elif readable is not None and split and keys.add(s, readable):
            split_files.append(_uri(table, readable.path))
            split_sizes.append(readable.size)
            split_groups.append(file_group_id(s))
        elif s.base_file is not None or not query.read_optimized:
            merged.append(file_group_id(s))
    return ReadPlan(scan, tuple(native), tuple(merged), tuple(split_files),
                    keys.table() if split_files else None, tuple(split_groups), tuple(sizes), tuple(split_sizes))


class _SplitKeys:
    """The (base file name, record key) pairs the log blocks of split slices write or delete, read from the logs
    as the query sees them (committed blocks up to its instant, rolled-back ones dropped)."""

    def __init__(self, scan: ScanPlan, max_keys: int = MAX_SPLIT_KEYS, memo: dict | None = None) -> None:
        self.ctx = scan.read_context()
        self.as_of = scan.visibility.as_of
        self.max_keys = max_keys
        self.memo = memo  # the kept table's (`table_cache`): a slice's logged keys as of an instant never change
        self.files: list[pa.Array] = []
        self.keys: list[pa.Array] = []
        self.count = 0

    def add(self, file_slice: FileSlice, base_file: BaseFile) -> bool:
        """Take the logged keys of the slice (whose base file is `base_file`), unless that would pass `max_keys`
        (the slice is then merged whole)."""
        if self.memo is None:
            keys = log_record_keys(self.ctx, file_slice)
        else:
            # Log files grow by appends: their sizes are part of what was read.
            memo_key = ("logged_keys", file_group_id(file_slice), file_slice.base_instant, self.as_of,
                        tuple((f.path, f.size) for f in file_slice.log_files))
            keys = self.memo.get(memo_key)
            if keys is None:
                keys = self.memo[memo_key] = log_record_keys(self.ctx, file_slice)
        if self.count + len(keys) > self.max_keys:
            return False
        self.count += len(keys)
        self.keys.append(keys)
        self.files.append(pa.repeat(base_file.path.rsplit("/", 1)[-1], len(keys)).cast(pa.string()))
        return True

    def table(self) -> pa.Table:
        return pa.table({SPLIT_FILE: pa.concat_arrays(self.files), SPLIT_KEY: pa.concat_arrays(self.keys)})


def _uri(table: HudiTable, path: str) -> str:
    """A storage path of the table's as Spark opens it: under the URI the table was loaded from."""
    return table.storage_uri.rstrip("/") + path[len(table.location.base_path.rstrip("/")):]


class _FileSchemas:
    """Whether Spark's parquet reader reads a base file in the table schema as the hudi source would: every
    column it holds in the table's type, no column of a type Spark's reader maps otherwise. The file's schema is
    its commit's writer schema, or its footer when the commit recorded none (or was archived)."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self.commits = {i.timestamp: i for i in table.timeline.completed_commits()}
        self.writer_schemas: dict[str, pa.Schema | None] = {}

    def spark_reads(self, base: BaseFile, table_schema: pa.Schema) -> bool:
        file_schema = self._writer_schema(base.instant_time) or _footer_schema(self.table, base)
        for field in table_schema:
            if field.name not in file_schema.names:
                continue  # a column added later: Spark's reader reads null, as the hudi source does
            theirs = file_schema.field(field.name).type
            if not (_native_type(field.type) and _native_type(theirs)):
                return False
            try:
                if spark_type(theirs, field.name) != spark_type(field.type, field.name):
                    return False
            except SchemaError:
                return False
        return True

    def _writer_schema(self, instant: str) -> pa.Schema | None:
        if instant not in self.writer_schemas:
            commit = self.commits.get(instant)
            avro = self.table.commit_metadata(commit).schema if commit is not None else None
            self.writer_schemas[instant] = avro_to_arrow_schema(add_meta_fields(avro)) if avro else None
        return self.writer_schemas[instant]


_footers: dict[tuple[str, int], pa.Schema] = {}  # base files never change: (path, size) -> Arrow schema
_footers_lock = threading.Lock()


def _footer_schema(table: HudiTable, base: BaseFile) -> pa.Schema:
    key = (_uri(table, base.path), base.size)
    with _footers_lock:
        found = _footers.get(key)
    if found is None:
        found = read_footer(table.location.storage, base.path, with_bloom=False).schema
        with _footers_lock:
            if len(_footers) > 100_000:
                _footers.clear()
            _footers[key] = found
    return found


def _native_type(t: pa.DataType) -> bool:
    """Arrow types whose parquet column Spark's reader reads as `spark_type` says (time-of-day types it does not)."""
    if pa.types.is_time(t) or pa.types.is_null(t):
        return False
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _native_type(t.value_type)
    if pa.types.is_map(t):
        return _native_type(t.key_type) and _native_type(t.item_type)
    if pa.types.is_struct(t):
        return all(_native_type(f.type) for f in t)
    return True
