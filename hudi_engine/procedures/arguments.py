"""A `CALL`'s arguments bound to a procedure's parameters, as Hudi binds them: positional arguments in the
parameters' order, or named ones (`name => value`); a parameter not given takes its default. Bad arguments are
refused before anything runs, in Hudi's message shape (`Argument: <name> ...`), naming the argument; Hudi itself
ignores unknown names and fails with a Java ClassCastException on a wrong type, where this says which argument."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hudi_engine.errors import ConfigError
from hudi_engine.procedures.registry import BOOLEAN, DOUBLE, INT, LONG, STRING, Parameter, ProcedureSpec

# A catalog name (`db.t` or `t`) to the base path of its Hudi table; the Spark layer passes one in.
TableResolver = Callable[[str], str]


class CatalogSession(Protocol):
    """What the procedures that act on the session's catalog need of it (the Spark layer passes one in)."""

    def sync_hive(self, table: str, options: Mapping[str, str]) -> None:
        """Sync the Hudi table the catalog name `table` names into the session's Hive metastore, as entry
        `table` (its database the session's current one if not given), with Hudi's sync keys `options`."""

    def copy_to_temp_view(self, path: str, read_options: Mapping[str, str], view: str, *, replace: bool,
                          global_view: bool) -> None:
        """Register the engine's read of the table at `path` (Hudi's read keys) as the temporary view `view`."""

    def copy_to_table(self, path: str, read_options: Mapping[str, str], table: str, *, save_mode: str,
                      columns: list[str]) -> None:
        """Save the engine's read of the table at `path` as the catalog table `table` (`saveAsTable`), its columns
        those of `table` when it exists, else `columns` (empty: all)."""

_INT_RANGE = {INT: (-(2**31), 2**31 - 1), LONG: (-(2**63), 2**63 - 1)}
_TYPE_WORDS = {bool: "boolean", int: "integer", float: "decimal", str: "string"}


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


def _coerce(procedure: str, p: Parameter, value: Any) -> Any:
    """`value` as `p`'s type; integral numbers go into integer and long parameters, numbers into doubles."""
    ok = {
        STRING: isinstance(value, str),
        BOOLEAN: isinstance(value, bool),
        INT: isinstance(value, int) and not isinstance(value, bool),
        LONG: isinstance(value, int) and not isinstance(value, bool),
        DOUBLE: isinstance(value, (int, float)) and not isinstance(value, bool),
    }[p.type]
    if not ok:
        got = _TYPE_WORDS.get(type(value), type(value).__name__)
        hint = "; quote it" if p.type == STRING else ""
        raise ConfigError(f"Argument: {p.name} of {procedure} is of type {p.type}, got {_literal(value)} "
                          f"({got}){hint}")
    if p.type in _INT_RANGE:
        low, high = _INT_RANGE[p.type]
        if not low <= value <= high:
            raise ConfigError(f"Argument: {p.name} of {procedure} is of type {p.type}, {value} is out of its range")
    return float(value) if p.type == DOUBLE else value


@dataclass(frozen=True)
class Arguments:
    """Every parameter's value (given, else the default) of one call, and how to find its table."""

    procedure: ProcedureSpec
    values: Mapping[str, Any]
    resolver: TableResolver | None = None
    session: CatalogSession | None = None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def catalog_session(self) -> CatalogSession:
        """The Spark session's catalog, which a procedure on catalog entries needs: refused outside Spark."""
        if self.session is None:
            raise ConfigError(f"{self.procedure.name}: acts on the Spark session's catalog; run it as CALL "
                              f"{self.procedure.name}(...) in a Spark session with the native component")
        return self.session

    def table_path(self) -> str:
        """The base path the call names: `table` (a catalog name, or a path) resolved, else `path`."""
        name, path = self.values.get("table"), self.values.get("path")
        if name:
            if "/" in name or ":" in name:  # a path where Hudi takes a name: taken as the path
                return name
            if self.resolver is None:
                raise ConfigError(f"{self.procedure.name}: table => '{name}' is a catalog name, and this call has no "
                                  "catalog (outside Spark); pass path => '<base path>' or the path as table")
            return self.resolver(name)
        if path:
            return path
        raise ConfigError(f"{self.procedure.name}: Table name or table path must be given one (table => "
                          "'<catalog name>' or path => '<base path>')")


def bind(procedure: ProcedureSpec, positional: Sequence[Any] = (), named: Mapping[str, Any] | None = None,
         resolver: TableResolver | None = None, session: CatalogSession | None = None) -> Arguments:
    """Bind a call's arguments; None (SQL's NULL) is an argument not given."""
    named = dict(named or {})
    name = procedure.name
    params = {p.name.lower(): p for p in procedure.parameters}
    if positional and named:
        raise ConfigError(f"{name}: named and positional arguments cannot be mixed; name every argument "
                          f"({', '.join(p.name for p in procedure.parameters)})")
    if len(positional) > len(procedure.parameters):
        raise ConfigError(f"{name}: {len(positional)} arguments given, it takes at most "
                          f"{len(procedure.parameters)} ({', '.join(p.name for p in procedure.parameters)})")
    given: dict[str, Any] = {p.name: v for p, v in zip(procedure.parameters, positional, strict=False)}
    for key, value in named.items():
        p = params.get(key.lower())
        if p is None:
            raise ConfigError(f"Argument: {key} is not a parameter of {name}; its parameters are "
                              f"{', '.join(q.name for q in procedure.parameters)} (CALL help(cmd => '{name}'))")
        given[p.name] = value
    values: dict[str, Any] = {}
    for p in procedure.parameters:
        value = given.get(p.name)
        if value is None:
            if p.required:
                raise ConfigError(f"Argument: {p.name} is required ({name} takes "
                                  f"{', '.join(q.name for q in procedure.parameters)})")
            values[p.name] = p.default
        else:
            values[p.name] = _coerce(name, p, value)
    return Arguments(procedure, values, resolver, session)
