"""The CDC query: every change the commits of a range made to a CDC-enabled table (`hoodie.table.cdc.enabled=true`),
one row per change, as Hudi 0.14/0.15's Spark CDC query answers it (docs/cdc.md, Reading).

Planning follows `HoodieCDCExtractor`: the range's completed commit, deltacommit and replacecommit instants whose
operation changes data (compaction and clustering do not), and for each file group a commit wrote one split
(`HoodieCDCFileSplit`) of one inference case:

* AS_IS: the write stat has `cdcStats`: the CDC log file holds the changes. DATA_BEFORE_AFTER stores both images;
  DATA_BEFORE the before image (the after image is looked up in the new base file); OP_KEY_ONLY only op and key
  (both images looked up: before in the base file the merge read, after in the one it wrote);
* BASE_FILE_INSERT: a base file of new records only (a new file group): every row is an insert;
* BASE_FILE_DELETE: a delete that emptied a file group: every row of the base file before it is a delete;
* LOG_FILE: a MOR log file: the file group's state before the commit against its state after, key by key
  (`CDCFileGroupIterator.loadNextLogRecord`: a delete of a stored key, a new key, or a stored key whose merged
  record the commit rewrote);
* REPLACE_COMMIT: a file group an insert_overwrite (or delete_partition) replaced: every row of it is a delete.

Reading a split (`read_split`) needs the plan only, never the timeline, so the Spark sources read one file group's
splits per task. The rows are `op` (`i`, `u`, `d`), `ts_ms` (the commit's instant) and the `before` / `after` images:
the record's data columns (no meta columns) as JSON text, Hudi's layout, or as structs (`images="struct"`). On a
table with a schema-on-read history the images take the names and types of the schema as of the range's end, older
files' and CDC log records' columns and struct members found by id.

Refused with the table, the setting and what is available: a table without CDC, a range outside the active timeline
(the incremental query's checks), a commit that rewrote a file group without change data (written before CDC was
enabled), and a commit whose files cleaning removed.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.arrays import one_chunk
from hudi_engine.errors import HudiError
from hudi_engine.file_group import FileGroup, FileSlice
from hudi_engine.file_naming import is_base_file_name
from hudi_engine.file_slice_reader import SliceReadContext, log_record_keys, read_file_slice, refuse_skeleton_files
from hudi_engine.fs_view import FileSystemView, Visibility, slicing_for
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.io.log_block import BlockType, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import CommitMetadata, Timeline
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, WriteStat
from hudi_engine.timeline.instant import Action, Instant
from hudi_engine.timeline.query_instants import QueryInstants
from hudi_engine.write.cdc import (
    AFTER,
    BEFORE,
    CDC_ENABLED,
    CDC_LOGGING_MODE,
    DELETE,
    INSERT,
    OP,
    RECORD_KEY,
    TS,
    UPDATE,
    LoggingMode,
    logging_mode_of,
    parse_logging_mode,
)

Images = Literal["json", "struct"]
IMAGES: tuple[str, ...] = ("json", "struct")
COMMIT_TIME = META_COLUMNS[0]
INCREMENTAL_FORMAT = "hoodie.datasource.query.incremental.format"

# WriteOperationType.isDataChange, with the prepped variants (a SQL MERGE's upserts change data as much).
DATA_CHANGE_OPERATIONS = frozenset({
    "INSERT", "INSERT_PREPPED", "UPSERT", "UPSERT_PREPPED", "DELETE", "DELETE_PREPPED", "BULK_INSERT",
    "BULK_INSERT_PREPPED", "DELETE_PARTITION", "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE", "BOOTSTRAP"})


class InferenceCase(StrEnum):
    """`HoodieCDCInferenceCase`."""

    AS_IS = "AS_IS"
    BASE_FILE_INSERT = "BASE_FILE_INSERT"
    BASE_FILE_DELETE = "BASE_FILE_DELETE"
    LOG_FILE = "LOG_FILE"
    REPLACE_COMMIT = "REPLACE_COMMIT"


class ChangeTable(Protocol):
    """What planning reads of a table (`HudiTable` is one): its location, config and timeline, the checks of a
    range against that timeline (`QueryInstants`), its commits' metadata and its schema."""

    location: TableLocation
    config: TableConfig
    timeline: Timeline

    @property
    def query_instants(self) -> QueryInstants: ...

    def commit_metadata(self, instant: Instant) -> CommitMetadata: ...

    def schema(self, as_of: str | None = None) -> pa.Schema: ...


@dataclass(frozen=True, slots=True)
class ChangeSplit:
    """The changes one commit made to one file group (`HoodieCDCFileSplit`), with the file slices they are read
    from: `before` the group's state before the commit, `after` its state after (each only where the case needs
    it), `cdc_files` the CDC log files (AS_IS)."""

    instant: str
    case: InferenceCase
    partition_path: str
    file_id: str
    cdc_files: tuple[str, ...] = ()
    before: FileSlice | None = None
    after: FileSlice | None = None

    @property
    def file_group(self) -> str:
        return f"{self.partition_path}/{self.file_id}" if self.partition_path else self.file_id


@dataclass(frozen=True, slots=True)
class ChangePlan:
    """One CDC query: the range, the table's logging mode and schema, and its splits in commit order."""

    table_uri: str
    storage: Storage
    config: TableConfig
    mode: LoggingMode
    begin: str
    end: str | None  # the range's end: an instant (layout 1) or a completion time (layout 2)
    schema: pa.Schema  # the table's rows as of the range's end (meta columns first, when the table has them)
    visibility: Visibility  # as of the range's end
    images: Images = "json"
    splits: tuple[ChangeSplit, ...] = field(default=())
    column_ids: ColumnIds | None = None  # the schema-on-read history: older files' and records' columns by id
    schema_instant: str | None = None  # the instant `schema` is as of

    @property
    def data_schema(self) -> pa.Schema:
        """The images' columns: the table's data columns as of the range's end."""
        return pa.schema([f for f in self.schema if f.name not in META_COLUMNS])

    @property
    def output_schema(self) -> pa.Schema:
        return change_schema(self.data_schema, self.images)

    def file_groups(self) -> list[list[ChangeSplit]]:
        """The splits by file group (each group's in commit order): what one Spark task reads."""
        groups: dict[str, list[ChangeSplit]] = {}
        for s in self.splits:
            groups.setdefault(s.file_group, []).append(s)
        return list(groups.values())


def change_schema(data_schema: pa.Schema, images: Images) -> pa.Schema:
    """The rows of a CDC query: `op`, `ts_ms`, `before`, `after` (`CDCRelation.FULL_CDC_SPARK_SCHEMA`: JSON text);
    with `images="struct"` the images are structs of the data columns."""
    image: pa.DataType = pa.string() if images == "json" else pa.struct(list(data_schema))
    return pa.schema([pa.field(OP, pa.string()), pa.field(TS, pa.string()), pa.field(BEFORE, image),
                      pa.field(AFTER, image)])


def check_images(value: str) -> Images:
    low = str(value).strip().lower()
    if low not in IMAGES:
        raise HudiError(f"CDC images {value!r}: expected one of {', '.join(IMAGES)}")
    return "json" if low == "json" else "struct"


# ---- planning ----------------------------------------------------------------------------------------------------


def plan_changes(table: ChangeTable, begin: str, end: str | None = None, *, images: str = "json",
                 logging_mode: str | None = None, table_uri: str | None = None) -> ChangePlan:
    """The CDC query of the commits in (begin, end] (end: the latest commit): refused as docs/cdc.md says.
    `logging_mode`, when a reader names one, must be the table's."""
    where = f"table {table.config.name!r} ({table.location.base_path})"
    instants = table.query_instants
    mode = logging_mode_of(table.config, where)
    if mode is None:
        raise HudiError(
            f"{where}: a CDC query ({INCREMENTAL_FORMAT}=cdc) needs change data, and the table was created without "
            f"it ({CDC_ENABLED} is not true in hoodie.properties; it is fixed when the table is created). "
            f"Available: the incremental query ({INCREMENTAL_FORMAT}=latest_state: the rows the range's commits "
            f"wrote, deletes not shown) over {instants.available()}; for change data, create the table with "
            f"{CDC_ENABLED}=true")
    if logging_mode and parse_logging_mode(logging_mode, where) is not mode:
        raise HudiError(
            f"{where}: the read asks for {CDC_LOGGING_MODE}={logging_mode}, but the table logs its changes in mode "
            f"{mode.value} (hoodie.properties; fixed when the table is created). Available: {mode.value}; leave "
            f"the option out to read the table's mode")
    image_format = check_images(images)
    begin, end = instants.check_range(begin, end)
    commits = [c for c in instants.incremental_commits(begin, end)
               if c.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)]
    latest = table.timeline.completed_commits().last()
    range_end = end or instants.latest_range_end()  # a completion time in layout 2
    # The instant the slices and schema are taken as of: the range's last commit (its requested time in layout 2).
    as_of = instants.incremental_end(begin, range_end) or end or (latest.timestamp if latest is not None else None)
    vis = replace(Visibility.of(table.timeline, as_of), replaced=frozenset())
    planner = _Planner(table, mode, vis, where, begin, range_end)
    for instant in commits:
        meta = table.commit_metadata(instant)
        if (meta.operation_type or "").upper() not in DATA_CHANGE_OPERATIONS:
            continue  # compaction, clustering: no data changes (WriteOperationType.isDataChange)
        planner.add_commit(instant.timestamp, meta)
    planner.raise_problems()
    # a split reads the slices before and after its commit: a bootstrap's skeleton files are refused as by
    # snapshot reads (a CDC log file holding both images needs neither)
    refuse_skeleton_files(table.config, table.location, [s for p in planner.splits for s in (p.before, p.after)])
    # Schema on read: every image (file slices' rows and CDC log records alike) under the range end's names, by id.
    column_ids = ColumnIds.load(table.location.storage, table.location.meta_path,
                                [i.timestamp for i in table.timeline.completed_commits()])
    return ChangePlan(table_uri or table.location.base_path, table.location.storage, table.config, mode, begin,
                      range_end, table.schema(as_of), vis, image_format, tuple(planner.splits), column_ids, as_of)


class _Planner:
    """`HoodieCDCExtractor.extractCDCFileSplits`, with each split's file slices resolved from one listing of the
    partitions the range touched, and every file a split needs checked to be there."""

    def __init__(self, table: ChangeTable, mode: LoggingMode, vis: Visibility, where: str, begin: str,
                 end: str | None) -> None:
        self.table = table
        self.mode = mode
        self.vis = vis
        self.where = where
        self.range = f"({begin}, {end}]"
        self.splits: list[ChangeSplit] = []
        self._views: dict[str, dict[str, FileGroup]] = {}
        self.no_change_data: list[tuple[str, str]] = []  # (instant, file group)
        self.cleaned: list[tuple[str, str]] = []  # (instant, what is missing)

    def group(self, partition: str, file_id: str) -> FileGroup | None:
        groups = self._views.get(partition)
        if groups is None:
            view = FileSystemView.for_partitions(self.table.location, [partition],
                                                 slicing_for(self.table.timeline))
            groups = self._views[partition] = {g.file_id: g for g in view.file_groups()}
        return groups.get(file_id)

    def add_commit(self, instant: str, meta: CommitMetadata) -> None:
        operation = (meta.operation_type or "").upper()
        for partition, stats in meta.partition_to_write_stats.items():
            for stat in stats:
                if stat.file_id:
                    self.add_stat(instant, partition, stat, operation)
        for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
            for file_id in file_ids:
                self.add_replaced(instant, partition, file_id)

    def add_stat(self, instant: str, partition: str, stat: WriteStat, operation: str) -> None:
        file_id = stat.file_id or ""
        name = (stat.path or "").rsplit("/", 1)[-1]
        group = self.group(partition, file_id)
        fg = f"{partition}/{file_id}" if partition else file_id
        if stat.cdc_stats:
            cdc_files = tuple(self.table.location.join(p) for p in sorted(stat.cdc_stats))
            present = {f.name.format() for s in (group.slices.values() if group else ()) for f in s.cdc_log_files}
            missing = [p for p in cdc_files if p.rsplit("/", 1)[-1] not in present]
            if missing:
                self.cleaned.append((instant, f"CDC log file {missing[0]}"))
                return
            before = after = None
            if self.mode is not LoggingMode.DATA_BEFORE_AFTER:
                after = self.base_slice(instant, group, partition, file_id, instant, "the base file it wrote")
                if after is None:
                    return
            if self.mode is LoggingMode.OP_KEY_ONLY:
                before = self.base_slice(instant, group, partition, file_id, stat.prev_commit,
                                         "the base file it merged")
                if before is None:
                    return
            self.splits.append(ChangeSplit(instant, InferenceCase.AS_IS, partition, file_id, cdc_files, before, after))
        elif is_base_file_name(name):
            if operation.startswith("DELETE") and stat.num_writes == 0 and stat.num_deletes:
                before = self.base_slice(instant, group, partition, file_id, stat.prev_commit,
                                         "the base file it emptied")
                if before is not None:
                    self.splits.append(ChangeSplit(instant, InferenceCase.BASE_FILE_DELETE, partition, file_id,
                                                   before=before))
            elif stat.num_update_writes == 0 and stat.num_deletes == 0 and stat.num_writes == stat.num_inserts:
                after = self.base_slice(instant, group, partition, file_id, instant, "the base file it wrote")
                if after is not None:
                    self.splits.append(ChangeSplit(instant, InferenceCase.BASE_FILE_INSERT, partition, file_id,
                                                   after=after))
            else:
                self.no_change_data.append((instant, fg))
        else:  # a MOR log file
            before = self.state(group, instant, inclusive=False)
            after = self.state(group, instant, inclusive=True)
            if after is None or not any(f.name.format() == name for f in after.log_files):
                self.cleaned.append((instant, f"log file {stat.path} of file group {fg}"))
                return
            if stat.prev_commit and stat.prev_commit != NULL_COMMIT and stat.base_file and (
                    before is None or before.base_file is None or before.base_file.name.format() != stat.base_file):
                self.cleaned.append((instant, f"base file {stat.base_file} of file group {fg}"))
                return
            self.splits.append(ChangeSplit(instant, InferenceCase.LOG_FILE, partition, file_id,
                                           before=before, after=after))

    def add_replaced(self, instant: str, partition: str, file_id: str) -> None:
        group = self.group(partition, file_id)
        before = self.state(group, instant, inclusive=False)
        if before is None:
            fg = f"{partition}/{file_id}" if partition else file_id
            self.cleaned.append((instant, f"file group {fg}, which it replaced"))
            return
        self.splits.append(ChangeSplit(instant, InferenceCase.REPLACE_COMMIT, partition, file_id, before=before))

    def base_slice(self, instant: str, group: FileGroup | None, partition: str, file_id: str,
                   base_instant: str | None, what: str) -> FileSlice | None:
        """The slice of the group's base file written at `base_instant`; None (and the commit noted) if it is gone."""
        s = group.slices.get(base_instant or "") if group is not None else None
        if s is None or s.base_file is None:
            fg = f"{partition}/{file_id}" if partition else file_id
            self.cleaned.append((instant, f"{what} (file group {fg}, base instant {base_instant})"))
            return None
        return FileSlice(partition, file_id, s.base_instant, s.base_file)

    def state(self, group: FileGroup | None, instant: str, *, inclusive: bool) -> FileSlice | None:
        """The group's merged slice as a read as of `instant` (or just before it) sees it."""
        if group is None:
            return None
        vis = visibility_at(self.vis, instant, inclusive=inclusive)
        found = FileSystemView(self.table.location, {group.partition_path: [group]})
        slices = found.latest_file_slices(vis)
        return slices[0] if slices else None

    def raise_problems(self) -> None:
        if self.no_change_data:
            instants = sorted({i for i, _ in self.no_change_data})
            instant, fg = self.no_change_data[0]
            raise HudiError(
                f"{self.where}: the CDC query of {self.range} needs the change data of commit {instant}, which "
                f"rewrote file group {fg} without a CDC log file (no cdcStats: written before {CDC_ENABLED} was set, "
                f"or by a writer that did not log changes; {len(instants)} such commit(s) in the range). "
                f"Available: CDC queries of ranges beginning at or after {instants[-1]}; the incremental query "
                f"({INCREMENTAL_FORMAT}=latest_state) for earlier commits")
        if self.cleaned:
            instants = sorted({i for i, _ in self.cleaned})
            instant, what = self.cleaned[0]
            raise HudiError(
                f"{self.where}: the CDC query of {self.range} needs {what} of commit {instant}, which cleaning "
                f"removed ({len(instants)} commit(s) of the range affected; hoodie.cleaner.commits.retained sets how "
                f"many commits' files are kept). Available: CDC queries of ranges beginning at or after "
                f"{instants[-1]}")


def visibility_at(vis: Visibility, instant: str, *, inclusive: bool) -> Visibility:
    """What a read as of `instant` sees (`inclusive`), or as of just before it (its own blocks not yet committed)."""
    completed = vis.completed if inclusive else vis.completed - {instant}
    return replace(vis, as_of=instant, completed=completed)


# ---- reading -----------------------------------------------------------------------------------------------------


def read_changes(plan: ChangePlan, splits: Sequence[ChangeSplit] | None = None) -> pa.Table:
    """The change rows of `splits` (default: the plan's), in order, in `plan.output_schema`."""
    reader = _SplitReader(plan)
    parts = [reader.read(s) for s in (plan.splits if splits is None else splits)]
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return plan.output_schema.empty_table()
    return pa.concat_tables(parts)


@dataclass(slots=True)
class _Changes:
    op: str | pa.Array
    before: pa.Table | pa.StructArray | None
    after: pa.Table | pa.StructArray | None
    n: int


class _SplitReader:
    def __init__(self, plan: ChangePlan) -> None:
        self.plan = plan
        self.ctx = replace(SliceReadContext.for_table(plan.storage, plan.config, plan.schema, plan.visibility,
                                                      column_ids=plan.column_ids),
                           schema_instant=plan.schema_instant)
        self.image_type = pa.struct(list(plan.data_schema))

    def read(self, split: ChangeSplit) -> pa.Table:
        changes = self._changes(split)
        if not changes:
            return self.plan.output_schema.empty_table()
        columns: dict[str, list[pa.Array]] = {OP: [], TS: [], BEFORE: [], AFTER: []}
        for c in changes:
            if not c.n:
                continue
            columns[OP].append(pa.repeat(pa.scalar(c.op, pa.string()), c.n) if isinstance(c.op, str)
                               else one_chunk(c.op).cast(pa.string()))
            columns[TS].append(pa.repeat(pa.scalar(split.instant, pa.string()), c.n))
            columns[BEFORE].append(self._image(c.before, c.n))
            columns[AFTER].append(self._image(c.after, c.n))
        if not columns[OP]:
            return self.plan.output_schema.empty_table()
        arrays = [pa.concat_arrays(columns[k]) for k in (OP, TS, BEFORE, AFTER)]
        if self.plan.images == "json":
            arrays[2], arrays[3] = to_json(arrays[2]), to_json(arrays[3])
        return pa.Table.from_arrays(arrays, schema=self.plan.output_schema)

    def _changes(self, split: ChangeSplit) -> list[_Changes]:
        case = split.case
        if case is InferenceCase.BASE_FILE_INSERT:
            rows = self._rows(split.after, split.instant)
            return [_Changes(INSERT, None, rows, rows.num_rows)]
        if case in (InferenceCase.BASE_FILE_DELETE, InferenceCase.REPLACE_COMMIT):
            rows = self._rows(split.before, split.instant, inclusive=False)
            return [_Changes(DELETE, rows, None, rows.num_rows)]
        if case is InferenceCase.LOG_FILE:
            # Only keys the log blocks up to the commit write or delete can change: both states read for those.
            after_ctx = self._context(split.instant, inclusive=True)
            keys = log_record_keys(after_ctx, split.after) if split.after is not None else pa.array([], pa.string())
            after = read_file_slice(after_ctx, split.after, logged_keys_only=True) if split.after is not None \
                else self.plan.schema.empty_table()
            return self._diff(self._rows(split.before, split.instant, inclusive=False, keys=keys), after,
                              split.instant)
        return self._as_is(split)

    def _context(self, instant: str, *, inclusive: bool) -> SliceReadContext:
        return replace(self.ctx, visibility=visibility_at(self.plan.visibility, instant, inclusive=inclusive))

    def _rows(self, file_slice: FileSlice | None, instant: str, *, inclusive: bool = True,
              keys: pa.Array | None = None) -> pa.Table:
        """The slice's rows as a read as of `instant` (or just before it) sees them; only `keys`' when given."""
        if file_slice is None:
            return self.plan.schema.empty_table()
        return read_file_slice(self._context(instant, inclusive=inclusive), file_slice, keys=keys)

    def _diff(self, before: pa.Table, after: pa.Table, instant: str) -> list[_Changes]:
        """Deletes (stored keys gone), inserts (new keys) and updates (stored keys whose row the commit rewrote:
        it carries the commit's time; without meta fields, any column differs)."""
        b_keys = one_chunk(self.ctx.key_of(before)).cast(pa.string())
        a_keys = one_chunk(self.ctx.key_of(after)).cast(pa.string())
        out = []
        gone = pc.invert(pc.is_in(b_keys, value_set=a_keys))
        if pc.any(gone).as_py():
            d = before.filter(gone)
            out.append(_Changes(DELETE, d, None, d.num_rows))
        pos = pc.index_in(a_keys, value_set=b_keys)
        new = pc.is_null(pos)
        if pc.any(new).as_py():
            i = after.filter(new)
            out.append(_Changes(INSERT, None, i, i.num_rows))
        matched = pc.is_valid(pos)
        if pc.any(matched).as_py():
            a = after.filter(matched)
            b = before.take(pc.filter(pos, matched))
            if self.plan.config.populate_meta_fields:
                rewritten = pc.fill_null(pc.equal(a.column(COMMIT_TIME), instant), False)
            else:
                rewritten = pa.array([x != y for x, y in zip(a.to_pylist(), b.to_pylist())], pa.bool_())
            if pc.any(rewritten).as_py():
                out.append(_Changes(UPDATE, b.filter(rewritten), a.filter(rewritten),
                                    pc.sum(rewritten.cast(pa.int64())).as_py()))
        return out

    def _as_is(self, split: ChangeSplit) -> list[_Changes]:
        records = self._cdc_records(split.cdc_files)
        if not records.num_rows:
            return []
        ops = one_chunk(records.column(OP))
        if self.plan.mode is LoggingMode.DATA_BEFORE_AFTER:
            return [_Changes(ops, self._by_id(records.column(BEFORE), split.instant),
                             self._by_id(records.column(AFTER), split.instant), records.num_rows)]
        keys = one_chunk(records.column(RECORD_KEY)).cast(pa.string())
        after = self._lookup(self._rows(split.after, split.instant), keys, pc.not_equal(ops, DELETE))
        if self.plan.mode is LoggingMode.DATA_BEFORE:
            before: pa.StructArray = self._by_id(records.column(BEFORE), split.instant)
        else:
            before = self._lookup(self._rows(split.before, split.instant, inclusive=False), keys,
                                  pc.not_equal(ops, INSERT))
        return [_Changes(ops, before, after, records.num_rows)]

    def _by_id(self, images: pa.ChunkedArray, instant: str) -> pa.StructArray:
        """CDC log records' images (the writer schema of their commit, `instant`) with the query's names, found by
        column and member id when the table has a schema-on-read history; by name otherwise."""
        array = images.combine_chunks()
        names = self.ctx.file_names(instant)
        if names is None or self.plan.column_ids is None or not isinstance(array, pa.StructArray):
            return array
        # flatten() would merge the image's own nulls into its columns; the fields as stored, then the mask again
        columns = pa.Table.from_arrays([array.field(i) for i in range(array.type.num_fields)],
                                       names=[array.type.field(i).name for i in range(array.type.num_fields)])
        named = self.plan.column_ids.as_query_names(columns, names)
        mask = array.is_null() if array.null_count else None
        if not named.num_columns:
            return pa.StructArray.from_arrays([pa.nulls(len(array))], names=["_"], mask=mask)
        return pa.StructArray.from_arrays([one_chunk(c) for c in named.columns], names=named.column_names, mask=mask)

    def _lookup(self, rows: pa.Table, keys: pa.Array, wanted: pa.Array) -> pa.StructArray:
        """The image of each of `keys` in `rows` where `wanted` (null elsewhere, and where the key is not found)."""
        pos = pc.index_in(keys, value_set=one_chunk(self.ctx.key_of(rows)).cast(pa.string()))
        pos = pc.if_else(wanted, pos, pa.nulls(len(pos), pos.type))
        return self._image(rows.take(pos), len(keys), valid=pc.is_valid(pos))

    def _cdc_records(self, paths: Iterable[str]) -> pa.Table:
        tables = []
        for path in paths:
            with self.plan.storage.open_input_file(path) as f:
                blocks = read_log_blocks(f, file_name=path)
            for block in blocks:
                if block.block_type == BlockType.CDC_DATA:
                    t = data_block_records(block)
                    if t.num_rows:
                        tables.append(t.select([n for n in t.column_names if n in (OP, RECORD_KEY, BEFORE, AFTER)]))
        if not tables:
            return pa.table({OP: pa.array([], pa.string())})
        return pa.concat_tables(tables, promote_options="permissive")

    def _image(self, rows: pa.Table | pa.StructArray | pa.ChunkedArray | None, n: int,
               valid: pa.Array | None = None) -> pa.Array:
        """Rows (a table with meta columns, or a struct of an older writer schema) as the image struct of the data
        columns as of the range's end: columns by name, missing ones null."""
        t = self.image_type
        if rows is None:
            return pa.nulls(n, t)
        if isinstance(rows, pa.ChunkedArray):
            rows = rows.combine_chunks()
        if isinstance(rows, pa.StructArray):
            names = [rows.type.field(i).name for i in range(rows.type.num_fields)]
            validity = rows.is_valid()
            columns = [rows.field(f.name).cast(f.type) if f.name in names else pa.nulls(n, f.type) for f in t]
            mask = pc.invert(validity)
            return pa.StructArray.from_arrays(columns, fields=list(t), mask=mask)
        columns = [one_chunk(rows.column(f.name)).cast(f.type) if f.name in rows.column_names
                   else pa.nulls(n, f.type) for f in t]
        return pa.StructArray.from_arrays(columns, fields=list(t), mask=None if valid is None else pc.invert(valid))


# ---- JSON images --------------------------------------------------------------------------------------------------


def to_json(images: pa.Array) -> pa.Array:
    """Image structs as JSON objects (`HoodieCDCUtils.recordToJson` prints Avro records the same way: `{"a": 1,
    "b": "x"}`); dates and timestamps as ISO 8601 text, decimals as numbers, bytes as base64. Built column by
    column with Arrow's kernels (numbers, booleans, strings, dates, timestamps); other types value by value."""
    if not isinstance(images, pa.StructArray):
        images = pa.array(images)
    n = len(images)
    if n == 0:
        return pa.array([], pa.string())
    parts: list[pa.Array | str] = []
    for i, (image_field, values) in enumerate(zip(images.type, images.flatten())):
        prefix = ("{" if i == 0 else ", ") + json.dumps(image_field.name, ensure_ascii=False) + ": "
        parts += [prefix, _json_values(values)]
    if not parts:
        parts = ["{"]
    parts.append("}")
    text = pc.binary_join_element_wise(*parts, "")
    return pc.if_else(images.is_valid(), text, pa.nulls(n, pa.string()))


_CONTROL = r"[\x00-\x1f]"


def _json_values(values: pa.Array) -> pa.Array:
    """One column's values as JSON text, `null` for nulls."""
    t = values.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        text = pc.cast(values, pa.string())
    elif pa.types.is_floating(t) and pc.all(pc.is_finite(values)).as_py() is not False:
        # Arrow prints 20.0 as `20`; Java (Jackson, Avro) as `20.0`, a double's JSON spelling readers type by.
        text = pc.cast(values, pa.string())
        text = pc.if_else(pc.match_substring_regex(text, "[.eE]"), text, pc.binary_join_element_wise(text, ".0", ""))
    elif (pa.types.is_string(t) or pa.types.is_large_string(t)) and not pc.any(
            pc.match_substring_regex(values, _CONTROL)).as_py():
        escaped = pc.replace_substring(pc.replace_substring(values.cast(pa.string()), "\\", "\\\\"), '"', '\\"')
        text = pc.binary_join_element_wise('"', escaped, '"', "")
    elif pa.types.is_timestamp(t) or pa.types.is_date(t):
        fmt = "%Y-%m-%d" if pa.types.is_date(t) else "%Y-%m-%dT%H:%M:%S" + ("%z" if t.tz else "")
        text = pc.binary_join_element_wise('"', pc.strftime(values, format=fmt), '"', "")
    else:
        text = pa.array([None if v is None else json.dumps(v, ensure_ascii=False, default=_json_value)
                         for v in values.to_pylist()], pa.string())
    return pc.fill_null(text.cast(pa.string()), "null")


def _json_value(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(v)).decode("ascii")
    raise TypeError(f"{type(v).__name__} is not JSON serializable")
