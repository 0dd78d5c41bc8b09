"""An ALTER TABLE change of a table's columns under Hudi's schema evolution on read (Spark SQL's `ALTER TABLE ...
RENAME COLUMN / DROP COLUMN / ALTER COLUMN ... TYPE / ALTER COLUMN ... AFTER`, and ADD COLUMNS with FIRST / AFTER,
Hudi's AlterTableCommand): checked against the table as
Hudi checks it, then committed as a commit of no files (operation ALTER_SCHEMA) whose internal schema keeps every
column's id (`write_pipeline.alter_columns`). No data is rewritten: readers find the columns of older files by id
(`internal_schema.ColumnIds`) and cast them to the new type.

Refused by name, before anything is written: any of these without `hoodie.schema.on.read.enable=true`; a column
the table does not have; a rename to a name it has; a rename or drop of a record key, partition or precombine
(ordering) field, or of a meta column (Hudi's AlterTableCommand.checkSchemaChange); dropping every column; a type
change Hudi does not allow (`internal_schema.type_change_allowed`), or of a nested column; a position change
(ALTER COLUMN ... FIRST / AFTER, ADD COLUMNS ... FIRST / AFTER) that Hudi's ColumnPositionChange refuses: FIRST of a
top-level column (the meta columns come first; `AFTER _hoodie_file_name` makes a column the first data column), AFTER
another meta column, AFTER a column the table does not have, or a column after itself.
"""
from __future__ import annotations

from collections.abc import Sequence
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

RENAME, DROP, TYPE, MOVE = "RENAME COLUMN", "DROP COLUMN", "ALTER COLUMN TYPE", "ALTER COLUMN POSITION"
FIRST_DATA_COLUMN = "_hoodie_file_name"  # the last meta column: AFTER it is the first data column


@dataclass(frozen=True, slots=True)
class ColumnChange:
    """One statement's change: `kind` (RENAME, DROP, TYPE or MOVE), the columns it names, and the rename's new name,
    the new type, or the column a move puts it after ("": FIRST)."""

    kind: str
    columns: tuple[str, ...]
    new_name: str = ""
    new_type: pa.DataType | None = None
    after: str = ""

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

    def describe(self) -> str:
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
