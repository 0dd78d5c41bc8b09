"""An ALTER TABLE change of a table's columns under Hudi's schema evolution on read (Spark SQL's `ALTER TABLE ...
RENAME COLUMN / DROP COLUMN / ALTER COLUMN ... TYPE / ALTER COLUMN ... FIRST | AFTER`, and ADD COLUMNS of a struct
member, Hudi's AlterTableCommand): checked against the table as Hudi checks it, then committed as a commit of no
files (operation ALTER_SCHEMA) whose internal schema keeps every column's id (`write_pipeline.alter_columns`). A
struct member is named by Hudi's full name (`s.a`; inside an array's structs `l.element.a`, a map's struct values
`m.value.a`: `_NestedPlan`); several columns or members a statement adds or drops are one change, applied in its
order (`ColumnChange.steps`). No data is rewritten: readers find the columns and members of older files by id
(`internal_schema.ColumnIds`) and cast them to the new types. (ADD COLUMNS of top-level columns, with FIRST / AFTER
too, is a write of no rows: `spark/save.py`, `placed` and `added_columns_change` here.)

Refused by name, before anything is written: any of these without `hoodie.schema.on.read.enable=true`; a column
or member the table does not have; a rename to a name it (or the struct) has; a rename or drop of a record key,
partition or precombine (ordering) field, or of a meta column (Hudi's AlterTableCommand.checkSchemaChange); dropping
every column, or a struct's only member; a type change Hudi does not allow (`internal_schema.type_change_allowed`),
or to or from a nested type; a position change that Hudi's ColumnPositionChange refuses: FIRST of a top-level
column (the meta columns come first; `AFTER _hoodie_file_name` makes a column the first data column), AFTER another
meta column, AFTER a column the table (or a member its struct) does not have, or a column after itself.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from hudi_engine.config import keys as K
from hudi_engine.errors import ConfigError, SchemaError
from hudi_engine.internal_schema import InternalSchema, SchemaChange, SchemaHistory, internal_type, type_change_allowed
from hudi_engine.meta_client import MetaClient
from hudi_engine.schema import (
    META_COLUMNS,
    add_meta_fields,
    arrow_to_avro_schema,
    avro_to_arrow_schema,
    remove_meta_fields,
)

RENAME, DROP, TYPE, MOVE, ADD = ("RENAME COLUMN", "DROP COLUMN", "ALTER COLUMN TYPE", "ALTER COLUMN POSITION",
                                 "ADD COLUMNS")
FIRST_DATA_COLUMN = "_hoodie_file_name"  # the last meta column: AFTER it is the first data column


@dataclass(frozen=True, slots=True)
class ColumnChange:
    """One statement's change: `kind` (RENAME, DROP, TYPE, MOVE or ADD), the columns it names (a struct member by its
    full name, `s.a`, as Hudi names it), and the rename's new name, the new (or added) type, or the column a move or
    an add puts it after ("": FIRST for a move, the end for an add)."""

    kind: str
    columns: tuple[str, ...]
    new_name: str = ""
    new_type: pa.DataType | None = None
    after: str = ""
    # Several columns' adds (or drops) in one statement: each column's own change, applied in the statement's order
    # to one schema change, as Hudi's ColumnAddChange / ColumnDeleteChange gather a statement's columns.
    steps: tuple[ColumnChange, ...] = ()

    @staticmethod
    def rename(column: str, new_name: str) -> ColumnChange:
        return ColumnChange(RENAME, (column,), new_name=new_name)

    @staticmethod
    def drop(columns: Sequence[str]) -> ColumnChange:
        return ColumnChange(DROP, tuple(columns))

    @staticmethod
    def retype(column: str, new_type: pa.DataType) -> ColumnChange:
        return ColumnChange(TYPE, (column,), new_type=new_type)

    @staticmethod
    def move(column: str, after: str | None) -> ColumnChange:
        """ALTER COLUMN `column` AFTER `after` (None: FIRST)."""
        return ColumnChange(MOVE, (column,), after=after or "")

    @staticmethod
    def add(column: str, new_type: pa.DataType, after: str | None = None) -> ColumnChange:
        """ADD COLUMNS (`column` `new_type` [AFTER `after`]): a new optional column, or struct member (`s.c`)."""
        return ColumnChange(ADD, (column,), new_type=new_type, after=after or "")

    @staticmethod
    def add_all(columns: Sequence[tuple[str, pa.DataType, str | None]]) -> ColumnChange:
        """ADD COLUMNS (`c1` `t1` [AFTER `a1`], `c2` ...): several new columns or struct members in one statement,
        numbered in its order."""
        if len(columns) == 1:
            return ColumnChange.add(*columns[0])
        steps = tuple(ColumnChange.add(c, t, a) for c, t, a in columns)
        return ColumnChange(ADD, tuple(c for c, _, _ in columns), steps=steps)

    def describe(self) -> str:
        if self.steps:
            if self.kind == ADD:
                return "ADD COLUMNS (" + ", ".join(s.describe()[len("ADD COLUMNS ("):-1] for s in self.steps) + ")"
            return f"DROP COLUMN {', '.join(self.columns)}"
        if self.kind == ADD:
            return f"ADD COLUMNS ({self.columns[0]} {self.new_type}{f' AFTER {self.after}' if self.after else ''})"
        if self.kind == MOVE:
            return f"ALTER COLUMN {self.columns[0]} {f'AFTER {self.after}' if self.after else 'FIRST'}"
        if self.kind == RENAME:
            return f"RENAME COLUMN {self.columns[0]} TO {self.new_name}"
        if self.kind == DROP:
            return f"DROP COLUMN {', '.join(self.columns)}"
        return f"ALTER COLUMN {self.columns[0]} TYPE {self.new_type}"

    def plan(self, table: MetaClient, schema_on_read: bool) -> tuple[pa.Schema, SchemaChange]:
        """The table's columns after the change and the internal schema change its commit records; SchemaError or
        ConfigError naming the table, the column and the way out when Hudi would refuse it."""
        where = f"table {table.config.name!r} ({table.location.base_path}): ALTER TABLE {self.describe()}"
        if not schema_on_read:
            raise ConfigError(f"{where}: renaming, dropping, retyping or moving a column needs Hudi's schema evolution on "
                              f"read; set {K.SCHEMA_ON_READ.key}=true (SQL: SET {K.SCHEMA_ON_READ.key}=true, or the "
                              "table's TBLPROPERTIES; Python: the options), as Hudi requires. Nothing was written")
        avro = table.timeline.latest_schema() or table.config.create_schema
        if avro is None:
            raise SchemaError(f"{where}: the table has no schema yet (no commit, no create schema)")
        columns = avro_to_arrow_schema(remove_meta_fields(avro))
        completed = [i.timestamp for i in table.timeline.completed_commits()]
        history = SchemaHistory.load(table.location.storage, table.location.meta_path, completed)
        base = history.latest if history is not None else InternalSchema.from_avro(avro)
        return self._plan_on(table, columns, base, where)

    def _plan_on(self, table: MetaClient, columns: pa.Schema, base: InternalSchema,
                 where: str) -> tuple[pa.Schema, SchemaChange]:
        """The change planned on the table's `columns` and internal schema `base` (a statement's earlier columns
        already applied to them)."""
        nested = [c for c in self.columns if c not in columns.names and "." in c]
        steps = self.steps or (tuple(ColumnChange.drop([c]) for c in self.columns)
                               if self.kind == DROP and nested and len(self.columns) > 1 else ())
        if steps:  # one schema change: each column in the statement's order (ids too), checked on what is before it
            now_columns, now = columns, base
            for step in steps:
                now_columns, change = step._plan_on(table, now_columns, now, where)
                assert change.changed is not None
                now = change.changed
            return now_columns, SchemaChange(base, now)
        if self.kind == ADD or nested:
            return _NestedPlan(table, columns, base, where).plan(self)
        for c in self.columns:
            if c in META_COLUMNS:
                raise SchemaError(f"{where}: {c} is a Hudi meta column; it cannot be changed")
            if c not in columns.names or base.field(c) is None:
                raise SchemaError(f"{where}: the table has no column {c!r}; its columns are {columns.names}")
        if self.kind == MOVE:
            names = placed(columns.names, [(self.columns[0], self.after or None)], where)
            after = FIRST_DATA_COLUMN if names[0] == self.columns[0] else names[names.index(self.columns[0]) - 1]
            return pa.schema([columns.field(n) for n in names]), SchemaChange(base, base.moved(self.columns[0], after))
        if self.kind in (RENAME, DROP):
            fixed = {**{f: "record key" for f in table.config.record_key_fields},
                     **{f: "partition" for f in table.config.partition_fields},
                     **{f: "precombine (ordering)" for f in table.config.ordering_fields}}
            for c in self.columns:
                if c in fixed:
                    raise SchemaError(f"{where}: {c} is the table's {fixed[c]} field, which Hudi does not let "
                                      f"ALTER TABLE {self.kind.split()[0]} change; nothing was written")
        if self.kind == RENAME:
            new = self.new_name
            if not new or new in META_COLUMNS or any(n.lower() == new.lower() for n in columns.names):
                raise SchemaError(f"{where}: the table has a column {new!r} already; rename it to a name it does not "
                                  "have. Nothing was written")
            fields = [f.with_name(new) if f.name == self.columns[0] else f for f in columns]
            return pa.schema(fields), SchemaChange(base, base.renamed(self.columns[0], new))
        if self.kind == DROP:
            kept = [f for f in columns if f.name not in self.columns]
            if not kept:
                raise SchemaError(f"{where}: it would drop every column; keep at least one")
            return pa.schema(kept), SchemaChange(base, base.dropped(self.columns))
        assert self.new_type is not None
        column = self.columns[0]
        old = base.field(column)
        assert old is not None
        new_avro = arrow_to_avro_schema(pa.schema([pa.field(column, self.new_type)]), table.config.name,
                                        with_meta=False)
        new = internal_type(new_avro)
        if not isinstance(old.type, str) or not isinstance(new, str):
            raise SchemaError(f"{where}: only columns of primitive types change type (Hudi's rule); {column} is "
                              "nested or the new type is")
        if not type_change_allowed(old.type, new):
            raise SchemaError(
                f"{where}: Hudi does not allow changing {column} from {old.type} to {new}. Allowed: int -> long, "
                "float, double, string, decimal; long -> float, double, string, decimal; float -> double, string, "
                "decimal; double -> string, decimal; decimal -> a wider decimal, string; string -> date, decimal; "
                "date -> string. Rewrite the table (dbt: --full-refresh) to change it otherwise; nothing was written")
        fields = [pa.field(column, self.new_type) if f.name == column else f for f in columns]
        return pa.schema(fields), SchemaChange(base, base.retyped(column, new))


class _NestedPlan:
    """A change of a struct member (`s.a`: Hudi's TableChanges on a nested full name) or an ADD COLUMNS of one
    column: the Arrow columns and the internal schema edited alike, every id kept, checked as Hudi checks them."""

    def __init__(self, table: MetaClient, columns: pa.Schema, base: InternalSchema, where: str) -> None:
        self.table, self.columns, self.base, self.where = table, columns, base, where

    def path(self, name: str) -> tuple[str, ...]:
        """A column's path: itself when the table has a top-level column of that name, else its dotted parts (Hudi's
        full name: struct members, `element` into an array, `value` into a map); the last part a member of a
        struct."""
        path = (name,) if name in self.columns.names else tuple(name.split("."))
        if path[0] in META_COLUMNS:
            raise SchemaError(f"{self.where}: {path[0]} is a Hudi meta column; it cannot be changed")
        parent = self.base.node_at(path[:-1])
        if not isinstance(parent, dict) or parent.get("type") != "record":
            raise SchemaError(f"{self.where}: {'.'.join(path[:-1])} is not a struct of the table (a struct column, a "
                              "struct member, `element` of an array of structs or `value` of a map of structs); "
                              "nothing was written")
        return path

    def siblings(self, path: tuple[str, ...]) -> list[str]:
        if len(path) == 1:
            return list(self.columns.names)
        parent = self.base.node_at(path[:-1])
        return [m["name"] for m in parent["fields"]]

    def plan(self, change: ColumnChange) -> tuple[pa.Schema, SchemaChange]:
        path = self.path(change.columns[0])
        full = ".".join(path)
        names = self.siblings(path)
        if change.kind == ADD:
            if any(n.lower() == path[-1].lower() for n in names) or path[-1] in META_COLUMNS:
                raise SchemaError(f"{self.where}: the table has {full} already; add a column it does not have. "
                                  "Nothing was written")
        elif self.base.member(path) is None or path[-1] not in names:
            raise SchemaError(f"{self.where}: the table has no column {full!r}; the members of "
                              f"{'.'.join(path[:-1]) or 'the table'} are {names}. Nothing was written")
        if change.kind in (RENAME, DROP):
            fixed = {**{f: "record key" for f in self.table.config.record_key_fields},
                     **{f: "partition" for f in self.table.config.partition_fields},
                     **{f: "precombine (ordering)" for f in self.table.config.ordering_fields}}
            if full in fixed:
                raise SchemaError(f"{self.where}: {full} is the table's {fixed[full]} field, which Hudi does not let "
                                  f"ALTER TABLE {change.kind.split()[0]} change; nothing was written")
        parent, leaf = path[:-1], path[-1]
        if change.kind == RENAME:
            new = change.new_name
            if not new or "." in new or any(n.lower() == new.lower() for n in names):
                raise SchemaError(f"{self.where}: the struct {'.'.join(parent)} has a member {new!r} already (or the "
                                  "name is not one plain name); rename it to a name it does not have. Nothing was "
                                  "written")
            return (self.arrow(parent, lambda fs: [f.with_name(new) if f.name == leaf else f for f in fs]),
                    SchemaChange(self.base, self.base.renamed_member(path, new)))
        if change.kind == DROP:
            if len(names) == 1:
                raise SchemaError(f"{self.where}: {leaf} is the only member of {'.'.join(parent)}; drop the struct "
                                  f"column {parent[0]} instead. Nothing was written")
            return (self.arrow(parent, lambda fs: [f for f in fs if f.name != leaf]),
                    SchemaChange(self.base, self.base.dropped_member(path)))
        if change.kind == MOVE:
            after = self.sibling(change.after or None, parent, names, leaf)

            def move(fs: list[pa.Field]) -> list[pa.Field]:
                column = next(f for f in fs if f.name == leaf)
                rest = [f for f in fs if f.name != leaf]
                at = 0 if after is None else next(i for i, f in enumerate(rest) if f.name == after) + 1
                return [*rest[:at], column, *rest[at:]]
            return self.arrow(parent, move), SchemaChange(self.base, self.base.moved_member(path, after))
        assert change.new_type is not None
        new_avro = arrow_to_avro_schema(pa.schema([pa.field(leaf, change.new_type)]), self.table.config.name,
                                        with_meta=False)
        new = internal_type(new_avro)
        if change.kind == ADD:
            if len(path) == 1:  # AFTER _hoodie_file_name: first among the data columns (FIRST refused, as Hudi)
                after = position_after(leaf, change.after, names, self.where) if change.after else None
            else:
                after = self.sibling(change.after, parent, names, leaf) if change.after else None
            added = pa.field(leaf, change.new_type, nullable=True)

            def add(fs: list[pa.Field]) -> list[pa.Field]:
                at = len(fs) if after is None else (0 if after == FIRST_DATA_COLUMN else
                                                    next(i for i, f in enumerate(fs) if f.name == after) + 1)
                return [*fs[:at], added, *fs[at:]]
            return self.arrow(parent, add), SchemaChange(self.base, self.base.added_member(path, new, after))
        old = self.base.member(path)
        assert old is not None
        if not isinstance(old["type"], str) or not isinstance(new, str):
            raise SchemaError(f"{self.where}: only columns of primitive types change type (Hudi's rule); {full} is "
                              "nested or the new type is. Nothing was written")
        if not type_change_allowed(old["type"], new):
            raise SchemaError(f"{self.where}: Hudi does not allow changing {full} from {old['type']} to {new} (see "
                              "ALTER COLUMN TYPE of a top-level column for the allowed changes); nothing was written")
        return (self.arrow(parent, lambda fs: [pa.field(leaf, change.new_type) if f.name == leaf else f for f in fs]),
                SchemaChange(self.base, self.base.retyped_member(path, new)))

    def sibling(self, after: str | None, parent: tuple[str, ...], names: list[str], leaf: str) -> str | None:
        """A struct member's AFTER sibling (given plain or by its full name), None for FIRST (which Hudi allows
        inside a struct)."""
        if after is None:
            return None
        prefix = ".".join(parent) + "."
        plain = after[len(prefix):] if after.startswith(prefix) else after
        found = next((n for n in names if n.lower() == plain.lower()), None)
        if found is None or found == leaf:
            raise SchemaError(f"{self.where}: {prefix}{plain} is not another member of the struct {prefix[:-1]} "
                              f"(its members are {names}); a member moves among its siblings only, as Hudi moves "
                              "it. Nothing was written")
        return found

    def arrow(self, parent: tuple[str, ...], edit: Callable[[list[pa.Field]], list[pa.Field]]) -> pa.Schema:
        """The table's Arrow columns with the members of the struct at `parent` edited (the columns at ())."""
        def down(typ: pa.DataType, rest: tuple[str, ...]) -> pa.DataType:
            if not rest:
                return pa.struct(edit([typ.field(i) for i in range(typ.num_fields)]))
            head, tail = rest[0], rest[1:]
            if pa.types.is_map(typ):  # `value`: path() checked the internal schema's steps
                return pa.map_(typ.key_field, typ.item_field.with_type(down(typ.item_type, tail)))
            if pa.types.is_list(typ) or pa.types.is_large_list(typ):
                item = typ.value_field.with_type(down(typ.value_type, tail))
                return pa.list_(item) if pa.types.is_list(typ) else pa.large_list(item)
            return pa.struct([m.with_type(down(m.type, tail)) if m.name == head else m
                              for m in (typ.field(i) for i in range(typ.num_fields))])
        if not parent:
            return pa.schema(edit(list(self.columns)))
        return pa.schema([f.with_type(down(f.type, parent[1:])) if f.name == parent[0] else f for f in self.columns])


def position_after(column: str, after: str | None, names: Sequence[str], where: str) -> str:
    """The column (of `names`, the data columns) that `column` goes right after, as Hudi's ColumnPositionChange
    allows it (`FIRST_DATA_COLUMN` for the first data column); SchemaError naming the way out otherwise."""
    if after is None:
        raise SchemaError(f"{where}: Hudi does not move a top-level column FIRST (its meta columns come first: "
                          f"\"forbid adjust top-level columns position by using through first syntax\"); use AFTER "
                          f"{FIRST_DATA_COLUMN} to make {column} the first data column. Nothing was written")
    if after.lower() == FIRST_DATA_COLUMN:
        return FIRST_DATA_COLUMN
    if after in META_COLUMNS or after.lower() in META_COLUMNS:
        raise SchemaError(f"{where}: {after} is a Hudi meta column, and the meta columns stay together and first; "
                          f"AFTER {FIRST_DATA_COLUMN} makes {column} the first data column. Nothing was written")
    found = next((n for n in names if n.lower() == after.lower()), None)
    if found is None:
        raise SchemaError(f"{where}: the table has no column {after!r} to put {column} after; its columns are "
                          f"{list(names)}. Nothing was written")
    if found.lower() == column.lower():
        raise SchemaError(f"{where}: {column} cannot go after itself; name another column. Nothing was written")
    return found


def placed(names: Sequence[str], positions: Sequence[tuple[str, str | None]], where: str) -> list[str]:
    """`names` (data columns) after each (column, AFTER column or None for FIRST) of `positions` in turn, as Hudi
    applies a statement's position changes (`position_after` refuses what Hudi refuses)."""
    out = list(names)
    for column, after in positions:
        found = position_after(column, after, out, where)
        out.remove(column)
        out.insert(0 if found == FIRST_DATA_COLUMN else out.index(found) + 1, column)
    return out


def added_columns_change(table: MetaClient, writer: dict | None = None, order: Sequence[str] = ()) -> SchemaChange:
    """ALTER TABLE ADD COLUMNS with schema-on-read on: the write's new columns get the next ids at commit. With
    positions (FIRST / AFTER): `writer`, the table's columns then the new ones in the statement's order (Avro, no
    meta fields), numbers them as Hudi's ColumnAddChange does, and `order` (the data columns) places them."""
    completed = [i.timestamp for i in table.timeline.completed_commits()]
    history = SchemaHistory.load(table.location.storage, table.location.meta_path, completed)
    if history is not None:
        base = history.latest
    else:
        avro = table.timeline.latest_schema() or table.config.create_schema
        base = InternalSchema.from_avro(add_meta_fields(avro or {"type": "record", "fields": []}))
    if writer is None:
        return SchemaChange(base)
    return SchemaChange(base, base.reconciled(writer, 0).ordered([*META_COLUMNS, *order]))
