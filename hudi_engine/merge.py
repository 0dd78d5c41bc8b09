"""Merging a file slice's base records with its log records, vectorized (FORMAT.md, Log scanning, Merging).

Log records and deletes are *events* in log order. Events of one record key are folded with the payload's
preCombine, then the result meets the base record with the payload's combine rule. Instead of a loop per
record, the fold runs in rounds: round r applies the r-th event of every key at once with numpy, so the number
of rounds is the largest number of versions of one key in the slice (usually 1), not the number of records.
Outputs are built by `take` on the concatenated base + log table, a column at a time.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.errors import HudiError
from hudi_engine.payload import Combine, Payload
from hudi_engine.schema import META_COLUMNS

IS_DELETED_FIELD = "_hoodie_is_deleted"

_NONE, _RECORD, _DELETED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class DeleteBatch:
    """Keys deleted by one delete block. `ordering` holds the delete's ordering value cast to the table's
    ordering column type, or null where it is the natural-order marker (Integer 0) or of another Java class:
    such a delete always wins (FORMAT.md, Merging)."""

    keys: pa.Array
    ordering: pa.Array | None = None


LogBatch: TypeAlias = pa.Table | DeleteBatch


@dataclass(frozen=True)
class MergeResult:
    """The merged records of one slice. Base rows that stay (kept as they were, or merged with log events) come
    first and in base order, then the inserts; `base_kept` counts them and `base_matched` those some log event
    touched. Both are None for a user payload, whose output order and counts are its own."""

    records: pa.Table
    base_kept: int | None = None
    base_matched: int | None = None


def merge_records(
    base: pa.Table,
    log_batches: Sequence[LogBatch],
    *,
    key_of: Callable[[pa.Table], pa.Array],
    ordering_field: str | None,
    payload: Payload,
) -> MergeResult:
    """Merge `log_batches` (events in log order) into `base`. Every data table in `log_batches` has `base.schema`.

    Phases: collect the events, group them by key, rank ordering values, fold each key's events with preCombine,
    meet the base rows with combine, assemble the output columns."""
    if not log_batches:
        return MergeResult(base, base.num_rows, 0)
    if payload.custom is not None:
        return MergeResult(_merge_custom(base, log_batches, key_of, payload.custom))
    ev = _Events.collect(base, log_batches, key_of, ordering_field)
    groups = _Groups.of(ev)
    needs_order = groups.n and (int(groups.counts.max()) > 1 or
                                payload.combine in (Combine.ORDERED, Combine.ORDERED_COALESCE))
    ranks = _Ranks.of(ev, ordering_field) if ordering_field is not None and needs_order else _Ranks.none(ev)
    state = _fold(ev, groups, ranks, payload)
    return _meet_base(base, ev, groups, ranks, state, key_of, payload)


@dataclass
class _Events:
    """Log records and deletes as events, in log order: `row` indexes `combined` (base rows, then log rows;
    -1 for a delete)."""

    combined: pa.Table
    n_base: int
    keys: pa.Array
    row: np.ndarray
    is_delete: np.ndarray
    delete_orderings: list[pa.Array]

    @staticmethod
    def collect(base: pa.Table, log_batches: Sequence[LogBatch], key_of: Callable[[pa.Table], pa.Array],
                ordering_field: str | None) -> "_Events":
        data = [b for b in log_batches if isinstance(b, pa.Table)]
        combined = pa.concat_tables([base, *data]).combine_chunks()
        keys: list[pa.Array] = []
        rows: list[np.ndarray] = []
        is_delete: list[np.ndarray] = []
        delete_orderings: list[pa.Array] = []
        next_row = base.num_rows
        for batch in log_batches:
            if isinstance(batch, pa.Table):
                n = batch.num_rows
                keys.append(_as_string(key_of(batch)))
                rows.append(np.arange(next_row, next_row + n, dtype=np.int64))
                is_delete.append(np.zeros(n, dtype=bool))
                next_row += n
            else:
                n = len(batch.keys)
                keys.append(_as_string(batch.keys))
                rows.append(np.full(n, -1, dtype=np.int64))
                is_delete.append(np.ones(n, dtype=bool))
                if ordering_field is not None:
                    ordering_type = combined.schema.field(ordering_field).type
                    delete_orderings.append(batch.ordering.cast(ordering_type) if batch.ordering is not None
                                            else pa.nulls(n, ordering_type))
        return _Events(combined, base.num_rows, pa.concat_arrays(keys), np.concatenate(rows),
                       np.concatenate(is_delete), delete_orderings)

    @property
    def n(self) -> int:
        return len(self.row)


@dataclass
class _Groups:
    """Events grouped by key, log order kept inside a key: the r-th event of group g is `order[starts[g] + r]`."""

    dictionary: pa.Array
    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    group_of_dict: np.ndarray  # dictionary index -> group

    @staticmethod
    def of(ev: _Events) -> "_Groups":
        encoded = pc.dictionary_encode(ev.keys)
        gid = encoded.indices.to_numpy().astype(np.int64)
        order = np.lexsort((np.arange(ev.n), gid))
        g_sorted = gid[order]
        starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
        counts = np.diff(np.r_[starts, ev.n])
        group_of_dict = np.full(len(encoded.dictionary), -1, dtype=np.int64)
        group_of_dict[g_sorted[starts]] = np.arange(len(starts))
        return _Groups(encoded.dictionary, order, starts, counts, group_of_dict)

    @property
    def n(self) -> int:
        return len(self.starts)


@dataclass
class _Ranks:
    """Ordering values as dense ranks, so that every type compares as int64. A null ordering value counts as the
    lowest (Java reads it as 0). A delete without a comparable ordering value always wins (`comparable` false)."""

    row: np.ndarray  # per row of `combined`
    event: np.ndarray
    comparable: np.ndarray

    @staticmethod
    def of(ev: _Events, ordering_field: str) -> "_Ranks":
        values = pa.concat_arrays([ev.combined.column(ordering_field).combine_chunks(), *ev.delete_orderings])
        ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64)
        ranks = np.where(values.is_null().to_numpy(zero_copy_only=False), 0, ranks)
        n_rows = ev.combined.num_rows
        row_rank = ranks[:n_rows]
        event = np.empty(ev.n, dtype=np.int64)
        event[~ev.is_delete] = row_rank[ev.row[~ev.is_delete]]
        event[ev.is_delete] = ranks[n_rows:]
        comparable = np.ones(ev.n, dtype=bool)
        comparable[ev.is_delete] = (pa.concat_arrays(ev.delete_orderings).is_valid().to_numpy(zero_copy_only=False)
                                    if ev.delete_orderings else np.zeros(0, dtype=bool))
        return _Ranks(row_rank, event, comparable)

    @staticmethod
    def none(ev: _Events) -> "_Ranks":
        return _Ranks(np.zeros(ev.combined.num_rows, dtype=np.int64), np.zeros(ev.n, dtype=np.int64),
                      np.zeros(ev.n, dtype=bool))


@dataclass
class _State:
    """Each key's folded log state: nothing, a record (row of `combined`; per column for coalescing payloads), or
    deleted; with the ordering rank it holds, and whether the record is flagged `_hoodie_is_deleted`."""

    kind: np.ndarray
    rank: np.ndarray
    row: np.ndarray
    src: dict[str, np.ndarray]  # PartialUpdate's pre-combine: the row each column comes from
    nulls: dict[str, np.ndarray]
    deleted_flag: np.ndarray

    def record_src(self, c: str, groups: np.ndarray) -> np.ndarray:
        return self.src[c][groups] if self.src else self.row[groups]


def _fold(ev: _Events, groups: _Groups, ranks: _Ranks, payload: Payload) -> _State:
    """preCombine every key's events in rounds: round r applies the r-th event of every key at once."""
    columns = ev.combined.column_names
    coalesce = payload.precombine_coalesce or payload.combine in (Combine.COALESCE, Combine.ORDERED_COALESCE)
    nulls = {c: ev.combined.column(c).is_null().to_numpy(zero_copy_only=False) for c in columns} if coalesce else {}
    n = groups.n
    kind = np.zeros(n, dtype=np.int8)
    state_rank = np.zeros(n, dtype=np.int64)
    state_row = np.full(n, -1, dtype=np.int64)
    src = {c: np.full(n, -1, dtype=np.int64) for c in columns} if payload.precombine_coalesce else {}
    for r in range(int(groups.counts.max()) if n else 0):
        act = np.flatnonzero(groups.counts > r)
        e = groups.order[groups.starts[act] + r]
        deleting = ev.is_delete[e]
        rank = ranks.event[e]
        row = ev.row[e]
        had_record = kind[act] == _RECORD
        old_greater = had_record & (state_rank[act] > rank)
        # A data event replaces the state unless the held record's ordering value is strictly greater.
        # A delete is dropped only if the held record is strictly greater and the delete is comparable.
        drop_delete = deleting & old_greater & ranks.comparable[e]
        apply_delete = deleting & ~drop_delete
        apply_data = ~deleting
        new_kind = np.where(apply_delete, _DELETED, np.where(apply_data, _RECORD, kind[act]))
        new_rank = np.where(apply_data & old_greater, state_rank[act], rank)
        new_rank = np.where(drop_delete, state_rank[act], new_rank)
        new_row = np.where(apply_data & ~old_greater, row, state_row[act])
        new_row = np.where(apply_delete, -1, new_row)
        if src:
            merge = apply_data & had_record
            for c in columns:
                old_src = src[c][act]
                if c in META_COLUMNS:
                    merged = np.where(nulls[c][row], old_src, row)
                else:
                    pref = np.where(old_greater, old_src, row)
                    other = np.where(old_greater, row, old_src)
                    merged = np.where(nulls[c][pref], other, pref)
                chosen = np.where(merge, merged, np.where(apply_data, row, old_src))
                src[c][act] = np.where(apply_delete, -1, chosen)
        kind[act] = new_kind
        state_rank[act] = new_rank
        state_row[act] = new_row
    state = _State(kind, state_rank, state_row, src, nulls, np.zeros(n, dtype=bool))
    if IS_DELETED_FIELD in columns:
        flags = ev.combined.column(IS_DELETED_FIELD).fill_null(False).to_numpy(zero_copy_only=False)
        any_src = state.record_src(IS_DELETED_FIELD, np.arange(n))
        state.deleted_flag = (kind == _RECORD) & flags[np.maximum(any_src, 0)]
    return state


def _meet_base(base: pa.Table, ev: _Events, groups: _Groups, ranks: _Ranks, state: _State,
               key_of: Callable[[pa.Table], pa.Array], payload: Payload) -> MergeResult:
    """combine: base rows meet their key's folded state (kept, replaced, coalesced or dropped); keys with no base
    row are inserts. Outputs are built by `take` on `combined`, a column at a time where columns differ."""
    n_base = ev.n_base
    base_keys = _as_string(key_of(base)) if n_base else pa.array([], pa.string())
    base_dict = pc.index_in(base_keys, value_set=groups.dictionary).fill_null(-1).to_numpy(zero_copy_only=False)
    base_group = np.where(base_dict >= 0, groups.group_of_dict[np.maximum(base_dict, 0)], -1)
    base_idx = np.arange(n_base, dtype=np.int64)
    matched = base_group >= 0
    mg, mi = base_group[matched], base_idx[matched]
    m_kind = state.kind[mg]
    drop = m_kind == _DELETED
    m_is_record = m_kind == _RECORD
    keep_base = np.zeros(len(mg), dtype=bool)
    if payload.combine is Combine.ORDERED:
        keep_base = m_is_record & (ranks.row[mi] > state.rank[mg])
        drop |= m_is_record & ~keep_base & state.deleted_flag[mg]
    else:
        drop |= m_is_record & state.deleted_flag[mg]

    in_base = np.zeros(groups.n, dtype=bool)
    in_base[mg] = True
    insert_groups = np.flatnonzero(~in_base & (state.kind == _RECORD) & ~state.deleted_flag)

    keep_rows = np.ones(n_base, dtype=bool)
    keep_rows[mi[drop]] = False
    out_base = base_idx[keep_rows]  # base rows kept or merged, in base order
    out_group = base_group[keep_rows]
    sel_matched = out_group >= 0
    sel_keep_base = np.zeros(n_base, dtype=bool)
    sel_keep_base[mi[keep_base]] = True
    take_log = sel_matched & ~sel_keep_base[keep_rows]

    def column_src(c: str) -> np.ndarray:
        src = out_base.copy()
        g = out_group[take_log]
        log_src = state.record_src(c, g)
        if payload.combine is Combine.COALESCE or (payload.combine is Combine.ORDERED_COALESCE and c in META_COLUMNS):
            b = src[take_log]
            src[take_log] = np.where(state.nulls[c][log_src], b, log_src)
        elif payload.combine is Combine.ORDERED_COALESCE:
            b = src[take_log]
            newer = ranks.row[b] > state.rank[g]
            pref = np.where(newer, b, log_src)
            other = np.where(newer, log_src, b)
            src[take_log] = np.where(state.nulls[c][pref], other, pref)
        else:
            src[take_log] = log_src
        return np.concatenate([src, state.record_src(c, insert_groups)])

    combined = ev.combined
    columns = combined.column_names
    if state.nulls:  # coalescing payloads: each column from its own rows
        out = pa.table({c: combined.column(c).take(pa.array(column_src(c))) for c in columns}, schema=combined.schema)
    else:
        out = combined.take(pa.array(column_src(columns[0]) if columns else np.zeros(0, np.int64)))
    return MergeResult(out, len(out_base), int(sel_matched.sum()))


def _merge_custom(base: pa.Table, log_batches: Sequence[LogBatch], key_of: Callable[[pa.Table], pa.Array],
                  payload) -> pa.Table:
    """A user's payload: folded a block at a time (a "generation" of distinct keys at a time inside a block)."""
    schema = base.schema
    state = schema.empty_table()  # the merged incoming record of every live key
    deleted = pa.array([], pa.string())
    for batch in log_batches:
        if isinstance(batch, DeleteBatch):  # deletes win (natural order)
            keys = _as_string(batch.keys)
            state = state.filter(pc.invert(pc.is_in(_as_string(key_of(state)), value_set=keys)))
            deleted = pa.concat_arrays([deleted, keys])
            continue
        for generation in _generations(batch, key_of):
            keys = _as_string(key_of(generation))
            state_keys = _as_string(key_of(state))
            pos = pc.index_in(keys, value_set=state_keys)
            held = pos.is_valid()
            merged = schema.empty_table()
            if pc.any(held).as_py():
                older = state.take(pos.filter(held))
                merged, gone = _conform(payload.pre_combine(older, generation.filter(held)), schema, "pre_combine")
                deleted = pa.concat_arrays([deleted, _as_string(key_of(merged.filter(gone)))])
                merged = merged.filter(pc.invert(gone))
            fresh = generation.filter(pc.invert(held))
            state = pa.concat_tables([state.filter(pc.invert(pc.is_in(state_keys, value_set=keys))), merged, fresh])
            deleted = deleted.filter(pc.invert(pc.is_in(deleted, value_set=_as_string(key_of(state)))))
    base_keys = _as_string(key_of(base))
    state_keys = _as_string(key_of(state))
    base = base.filter(pc.invert(pc.is_in(base_keys, value_set=deleted)))
    base_keys = _as_string(key_of(base))
    pos = pc.index_in(base_keys, value_set=state_keys)
    hit = pos.is_valid()
    combined = schema.empty_table()
    if pc.any(hit).as_py():
        combined, gone = _conform(payload.combine(base.filter(hit), state.take(pos.filter(hit))), schema, "combine")
        combined = combined.filter(pc.invert(gone))
    inserts = state.filter(pc.invert(pc.is_in(state_keys, value_set=base_keys)))
    out = pa.concat_tables([base.filter(pc.invert(hit)), combined, inserts])
    if IS_DELETED_FIELD in out.column_names:
        out = out.filter(pc.invert(out.column(IS_DELETED_FIELD).fill_null(False)))
    return out


def _generations(batch: pa.Table, key_of: Callable[[pa.Table], pa.Array]) -> list[pa.Table]:
    """The batch split so that each part holds a key once, parts in the order the versions came."""
    ids = pc.dictionary_encode(_as_string(key_of(batch))).indices.to_numpy().astype(np.int64)
    order = np.lexsort((np.arange(len(ids)), ids))
    sorted_ids = ids[order]
    starts = np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(ids)), 0))
    occurrence = np.empty(len(ids), dtype=np.int64)
    occurrence[order] = np.arange(len(ids)) - group_start
    return [batch.filter(pa.array(occurrence == g)) for g in range(int(occurrence.max()) + 1 if len(ids) else 0)]


def _conform(t: pa.Table, schema: pa.Schema, method: str) -> tuple[pa.Table, pa.Array]:
    """A user payload's output in the table schema, and which of its rows delete their key."""
    try:
        cols = [t.column(f.name).cast(f.type) for f in schema]
    except KeyError as e:
        raise HudiError(f"payload {method}() returned no column {e}; it must return the table's columns") from None
    flag = (t.column(IS_DELETED_FIELD).fill_null(False).combine_chunks() if IS_DELETED_FIELD in t.column_names
            else pa.array(np.zeros(t.num_rows, dtype=bool)))
    return pa.Table.from_arrays(cols, schema=schema), flag


def _as_string(keys: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    return keys if keys.type == pa.string() else keys.cast(pa.string())
