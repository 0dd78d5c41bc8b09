"""`ScanPlan`: what one read of a Hudi table reads, decided once and consumed by every read path.

`plan_scan(table, query, filters=..., commit_time_bound=...)` fixes a query (`ReadOptions`: snapshot, time travel,
read-optimized or incremental, optionally limited to named file groups) to one instant or range, the latest commit
when the query names none, so that every part of one read sees the same commit; with it the `Visibility` of that
instant, the schema of the rows, the incremental `CommitTimeWindow`, and the file slices after partition pruning
(by `filters`) and commit-time pruning (a lower bound on `_hoodie_commit_time`). Time travel to an archived or
cleaned instant and incremental ranges ending outside the active timeline are refused here (the table's
`QueryInstants`: `check_instant`, `check_range`, `check_time_travel`; and the listing's check for cleaned file
versions); a range that begins among archived commits reads every slice that can hold their rows. The planner takes
a `PlannedTable`, the protocol of what it reads of a table (`HudiTable` is one), so it never imports the table's
class.

Consumers: `HudiTable.scan` / `read_snapshot` / `read_incremental` read the slices in this process;
`hudi_engine.spark.read_plan.plan_read` only decides, slice by slice, between Spark's parquet reader and the merge
source (for `read_table`, dbt's views, and the native JVM source through `hudi_engine.spark.native.plan_json`); the
Python source's reader (`hudi_engine.spark.source_reader`) makes each slice one Spark task. That source plans in two steps because
Spark ships the reader to executors before it asks for partitions: `fix_query` when the reader is made (instant,
visibility, window, schema: what tasks need), `list_slices` once Spark pushed its filters. A task reads its slice
with the plan alone (`ScanPlan.read_slice`) and never loads the table.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import HudiError
from hudi_engine.file_group import FileSlice
from hudi_engine.file_slice_reader import SliceReadContext, read_file_slice, refuse_skeleton_files
from hudi_engine.fs_view import Visibility
from hudi_engine.internal_schema import ColumnIds
from hudi_engine.location import TableLocation
from hudi_engine.read_options import ReadOptions
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import CommitMetadata, Timeline
from hudi_engine.timeline.instant import Action, Instant
from hudi_engine.timeline.query_instants import QueryInstants

Filter = tuple[str, str, Any]
Filters: TypeAlias = Sequence[Filter] | pc.Expression | None


class PlannedTable(Protocol):
    """What the planner reads of a table (`hudi_engine.HudiTable` is one): its location, config and timeline, the
    checks of a query's instants against that timeline (`QueryInstants`), its schema, its commits' metadata and its
    file slices. The planner depends on this, not on the table's class, which plans its reads with it."""

    location: TableLocation
    config: TableConfig
    timeline: Timeline

    @property
    def query_instants(self) -> QueryInstants: ...
    def schema(self, as_of: str | None = None) -> pa.Schema: ...
    def commit_metadata(self, instant: Instant) -> CommitMetadata: ...
    def latest_file_slices(self, vis: Visibility, filters: Filters = None,
                           schema: pa.Schema | None = None) -> list[FileSlice]: ...
    def skip_by_column_stats(self, slices: list[FileSlice], filters: Sequence[Filter],
                             schema: pa.Schema) -> list[FileSlice]: ...


COMMIT_TIME = "_hoodie_commit_time"


@dataclass(frozen=True, slots=True)
class CommitTimeWindow:
    """The `_hoodie_commit_time` values an incremental read keeps: `(after, up_to]` (timeline layout 1), or one of
    `instants` (layout 2, whose ranges are of completion times); `everything` for a table without meta fields."""

    after: str | None = None
    up_to: str | None = None
    instants: tuple[str, ...] | None = None
    everything: bool = False

    def expression(self) -> pc.Expression:
        if self.everything:
            return pc.scalar(True)
        field = pc.field(COMMIT_TIME)
        if self.instants is not None:
            return field.isin(list(self.instants))
        return (field > self.after) & (field <= self.up_to)


@dataclass(frozen=True, slots=True)
class CommitTimeBound:
    """A lower bound on `_hoodie_commit_time` from a query's filters: rows with a commit time above `instant`
    (or at it, when `inclusive`). A file slice whose rows are all older reads nothing for the query."""

    instant: str
    inclusive: bool = False

    def admits(self, newest: str) -> bool:
        """Whether a slice whose newest row has commit time `newest` may hold a row the bound keeps."""
        return newest >= self.instant if self.inclusive else newest > self.instant

    @staticmethod
    def tightest(bounds: Iterable["CommitTimeBound | None"]) -> "CommitTimeBound | None":
        best: CommitTimeBound | None = None
        for b in bounds:
            if b is None:
                continue
            if best is None or b.instant > best.instant or (b.instant == best.instant and not b.inclusive):
                best = b
        return best


@dataclass(frozen=True, slots=True)
class ScanPlan:
    """One read of one table: the query fixed to an instant or range, what it sees, and the slices it reads."""

    table_uri: str  # where tasks reopen files: the table's URI for remote stores, its path for local ones
    storage: Storage
    config: TableConfig
    schema: pa.Schema  # of the rows, meta columns first (none when the table does not populate them)
    query: ReadOptions  # as_of fixed (the latest commit when none was named); incremental: begin and end fixed
    visibility: Visibility  # the commits the query sees
    window: CommitTimeWindow | None  # incremental: the rows it keeps
    slices: tuple[FileSlice, ...] = ()  # after pruning; none listed yet in a plan of `fix_query`
    column_ids: ColumnIds | None = None  # the schema-on-read history, when the table has one

    @property
    def read_optimized(self) -> bool:
        return self.query.read_optimized

    def read_context(self) -> SliceReadContext:
        """What reading any slice of the plan needs (the merge rules, the visibility); made once per reader."""
        return SliceReadContext.for_table(self.storage, self.config, self.schema, self.visibility,
                                          column_ids=self.column_ids)

    def read_slice(self, file_slice: FileSlice, columns: list[str] | None = None, *, logged_keys_only: bool = False,
                   context: SliceReadContext | None = None) -> pa.Table:
        """The rows of one slice the query keeps (incremental: those the window admits), projected to `columns`."""
        window = self.window if self.window is not None and not self.window.everything else None
        read_columns = columns
        if window is not None and columns is not None and COMMIT_TIME not in columns:
            read_columns = [*columns, COMMIT_TIME]
        rows = read_file_slice(context or self.read_context(), file_slice, columns=read_columns,
                               read_optimized=self.read_optimized, logged_keys_only=logged_keys_only)
        if window is None:
            return rows
        rows = rows.filter(window.expression())
        return rows if read_columns is columns else rows.select(columns)


def plan_scan(table: PlannedTable, query: ReadOptions | None = None, *, filters: Filters = None,
              commit_time_bound: CommitTimeBound | None = None) -> ScanPlan:
    """The plan of `query` (default: the latest snapshot) on `table`: `filters` prune partitions (and their
    `_hoodie_commit_time` lower bounds, like `commit_time_bound`, prune file slices); they are not applied to rows."""
    return list_slices(table, fix_query(table, query or ReadOptions()), filters=filters,
                       commit_time_bound=commit_time_bound)


def fix_query(table: PlannedTable, query: ReadOptions) -> ScanPlan:
    """The query fixed to one instant or range, with its visibility, window and schema; no slice listed yet.
    Instants that do not parse, archived instants and reversed ranges are refused with the table's instants."""
    if query.cdc:
        raise HudiError(f"table {table.config.name!r} ({table.location.base_path}): a CDC query (hoodie.datasource."
                        "query.incremental.format=cdc) reads changes, not file slices: HudiTable.read_changes, or the "
                        "hudi source with its options")
    window = None
    if query.incremental:
        instants = table.query_instants
        begin, end = instants.check_range(query.begin_instant, query.end, archived_begin=True)
        end = end or instants.latest_range_end()
        as_of = instants.incremental_end(begin, end) if end is not None else None
        window = _commit_time_window(table, begin, end)
        query = replace(query, begin=begin, end=end)
    else:
        as_of = table.query_instants.check_instant(query.as_of, "time travel instant")
        # The latest snapshot is listed without time travel's check for cleaned files (nothing it reads was
        # cleaned); every other part of the read (a merge source's half) is pinned to the same latest commit, which
        # is a snapshot's, not time travel's, whatever write is still pending before it.
        latest = table.timeline.completed_commits().last()
        if as_of is not None and (latest is None or as_of != latest.timestamp):
            table.query_instants.check_time_travel(as_of)
        query = replace(query, as_of=as_of or (latest.timestamp if latest is not None else None))
    return ScanPlan(table.location.uri, table.location.storage, table.config, table.schema(as_of), query,
                    Visibility.of(table.timeline, as_of), window, column_ids=column_ids(table, as_of))


_SCHEMA_KEEPING = frozenset({"COMPACT", "LOG_COMPACT", "CLUSTER", "INDEX"})  # table services: schema unchanged


def column_ids(table: PlannedTable, as_of: str | None) -> ColumnIds | None:
    """The schema-on-read history (`hudi_engine.internal_schema`) when the commit the query's schema comes from
    recorded an internal schema (`latest_schema`, what Java's schema-on-read writers add); else None, read nothing."""
    for instant in reversed(table.timeline.completed_commits()):
        if as_of is not None and instant.timestamp > as_of:
            continue
        metadata = table.commit_metadata(instant)
        if metadata.operation_type in _SCHEMA_KEEPING:
            continue  # as Java's TableSchemaResolver: only commits that can change the schema (canUpdateSchema)
        extra = metadata.extra_metadata
        if extra.get("schema"):
            if not extra.get("latest_schema"):
                return None
            return ColumnIds.load(table.location.storage, table.location.meta_path,
                                  (i.timestamp for i in table.timeline.completed_commits()))
    return None


def list_slices(table: PlannedTable, plan: ScanPlan, *, filters: Filters = None,
                commit_time_bound: CommitTimeBound | None = None, skipping: Sequence[Filter] = ()) -> ScanPlan:
    """`plan` with the file slices it reads: the latest visible slice of every file group (incremental: of those
    the range's commits wrote), after partition pruning, the query's file groups, data skipping by column stats
    (`skipping`, and (column, op, value) `filters`), and commit-time pruning."""
    query, vis = plan.query, plan.visibility
    if query.incremental:
        slices = _incremental_slices(table, query.begin_instant, query.end, vis, filters, plan.schema)
    else:
        slices = table.latest_file_slices(vis, filters, plan.schema)
    tuples = [] if filters is None or isinstance(filters, pc.Expression) else list(filters)
    if skipping or tuples:
        slices = table.skip_by_column_stats(list(slices), [*skipping, *tuples], plan.schema)
    if query.file_groups is not None:
        slices = [s for s in slices if file_group_id(s) in query.file_groups]
    refuse_skeleton_files(table.config, table.location, slices)
    if table.config.populate_meta_fields:  # without meta fields rows have no commit time to bound
        bound = CommitTimeBound.tightest([commit_time_bound, commit_time_bound_of(filters)])
        if bound is not None:
            slices = prune_by_commit_time(table, slices, bound, vis)
    return replace(plan, slices=tuple(slices))


def file_group_id(file_slice: FileSlice) -> str:
    """How a query names a file group: `<partition path>/<file id>` (`<file id>` when unpartitioned)."""
    return f"{file_slice.partition_path}/{file_slice.file_id}" if file_slice.partition_path else file_slice.file_id


# ---- incremental ranges ---------------------------------------------------------------------------------------


def _incremental_slices(table: PlannedTable, begin: str, end: str | None, vis: Visibility, filters: Filters,
                        schema: pa.Schema) -> list[FileSlice]:
    """The latest slices, as of the range's end, of the file groups the range's commits wrote."""
    commits = table.query_instants.incremental_commits(begin, end) if end is not None else []
    if not commits:
        return []
    slices = table.latest_file_slices(vis, filters, schema)
    bound = _archived_commits_bound(table, begin, commits)
    if bound is not None:
        # Commits of the range may have left the active timeline (archived), and with them the record of which
        # file groups they wrote: keep every slice that can hold a row they wrote instead.
        return prune_by_commit_time(table, slices, bound, vis)
    touched = set()
    for instant in commits:
        for stat in table.commit_metadata(instant).write_stats():
            touched.add((stat.partition_path or "", stat.file_id))
    return [s for s in slices if (s.partition_path, s.file_id) in touched]


def _archived_commits_bound(table: PlannedTable, begin: str, commits: list[Instant]) -> CommitTimeBound | None:
    """The commit times a range's rows have when it may hold archived commits, whose metadata is not read: in
    layout 1 a range that starts before the active timeline (rows after `begin`); in layout 2 a range holding
    commits of the LSM history (rows from the oldest requested time of the range). None: every commit is active."""
    if not table.config.populate_meta_fields:  # no commit times: every slice is read whole (hudi-rs)
        return None
    if table.timeline.layout.incremental_by_completion_time:
        active = {i.timestamp for i in table.timeline.completed_commits()}
        if all(c.timestamp in active for c in commits):
            return None
        return CommitTimeBound(min(c.timestamp for c in commits), inclusive=True)
    start = table.timeline.timeline_start()
    return CommitTimeBound(begin) if start is not None and begin < start else None


def _commit_time_window(table: PlannedTable, begin: str, end: str | None) -> CommitTimeWindow:
    """Rows an incremental read keeps: written by the range's commits (`_hoodie_commit_time` in (begin, end] in
    layout 1; one of the range's commits in layout 2). A table without meta fields has no commit times: every
    row of the touched file groups (as hudi-rs reads it)."""
    if not table.config.populate_meta_fields:
        return CommitTimeWindow(everything=True)
    instants = table.query_instants
    if table.timeline.layout.incremental_by_completion_time:
        return CommitTimeWindow(instants=tuple(c.timestamp for c in instants.incremental_commits(begin, end)))
    return CommitTimeWindow(after=begin, up_to=instants.incremental_end(begin, end) or end or begin)


# ---- commit-time pruning --------------------------------------------------------------------------------------

_BOUND_OPS = {">": False, ">=": True, "=": True, "==": True}


def commit_time_bound_of(filters: Filters) -> CommitTimeBound | None:
    """The tightest lower bound on `_hoodie_commit_time` in (column, op, value) filters (>, >=, =, in)."""
    if filters is None or isinstance(filters, pc.Expression):
        return None
    bounds = []
    for f in filters:
        if len(f) != 3 or f[0] != COMMIT_TIME:
            continue
        op = f[1].lower() if isinstance(f[1], str) else f[1]
        if op in _BOUND_OPS and f[2] is not None:
            bounds.append(CommitTimeBound(str(f[2]), _BOUND_OPS[op]))
        elif op == "in":
            values = [str(v) for v in f[2] if v is not None]
            if values:
                bounds.append(CommitTimeBound(min(values), True))
    return CommitTimeBound.tightest(bounds)


def prune_by_commit_time(table: PlannedTable, slices: Sequence[FileSlice], bound: CommitTimeBound,
                         vis: Visibility) -> list[FileSlice]:
    """The slices that may hold a row with a commit time the bound admits."""
    return [s for s, newest in zip(slices, newest_commit_times(table, slices, vis)) if bound.admits(newest)]


def newest_commit_times(table: PlannedTable, slices: Sequence[FileSlice], vis: Visibility) -> list[str]:
    """For each slice, a commit time no row of it exceeds: its base file's instant, and the newest commit that
    appended to its log files. In timeline layout 2 a log file is named by that commit; in layout 1 it names its
    base instant, so the delta commits' write stats tell (and a log written before the active timeline starts is
    bounded by that start). Rows keep their commit time through compaction and clustering, so a file's instant is
    always at least its rows'."""
    by_name = table.timeline.layout.slices_by_completion_time
    appended: dict[tuple[str, str], str] | None = None
    start = table.timeline.timeline_start() or ""
    out = []
    for s in slices:
        newest = s.base_instant
        if s.log_files:
            if by_name:
                newest = max(newest, *(f.base_instant for f in s.log_files))
            else:
                if appended is None:
                    appended = _log_appends(table, vis)
                newest = max(newest, appended.get((s.partition_path, s.file_id), ""), start)
        out.append(newest)
    return out


def _log_appends(table: PlannedTable, vis: Visibility) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the newest visible delta commit that wrote to the file group (layout 1)."""
    out: dict[tuple[str, str], str] = {}
    for instant in table.timeline.completed_commits():
        if instant.action != Action.DELTA_COMMIT or not vis.is_committed(instant.timestamp):
            continue
        for stat in table.commit_metadata(instant).write_stats():
            key = (stat.partition_path or "", stat.file_id or "")
            if instant.timestamp > out.get(key, ""):
                out[key] = instant.timestamp
    return out
