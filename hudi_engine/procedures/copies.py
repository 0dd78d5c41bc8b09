"""The procedures that copy a table's read elsewhere in the Spark session: `copy_to_temp_view` and `copy_to_table`.
The read is the engine's (`format("hudi")` with Hudi's read keys, as Hudi's procedures load the table); the view or
table is the session's (`procedures.arguments.CatalogSession`), so both run only as CALLs in Spark."""
from __future__ import annotations

from hudi_engine.errors import ConfigError
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row

_SAVE_MODES = ("overwrite", "append")


def read_options(args: Arguments) -> dict[str, str]:
    """Hudi's read keys for `query_type` (snapshot, with `as_of_instant` a time travel; incremental between
    `begin_instance_time` and `end_instance_time`, both required as in Hudi; read_optimized)."""
    name, query = args.procedure.name, args["query_type"]
    if query == "snapshot":
        as_of = args["as_of_instant"]
        return {"hoodie.datasource.query.type": "snapshot", **({"as.of.instant": as_of} if as_of else {})}
    if query == "incremental":
        begin, end = args["begin_instance_time"], args["end_instance_time"]
        if not begin or not end:
            raise ConfigError(f"{name}: when the query_type is incremental, begin_instance_time and "
                              "end_instance_time can not be null.")
        return {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
                "hoodie.datasource.read.end.instanttime": end}
    if query == "read_optimized":
        return {"hoodie.datasource.query.type": "read_optimized"}
    raise ConfigError(f"Argument: query_type of {name} is {query!r}; Hudi's are snapshot, incremental and "
                      "read_optimized")


def copy_to_temp_view(args: Arguments) -> list[Row]:
    """The table's read as temporary view `view_name` (`global` in global_temp, `replace` an existing view); 0."""
    options = read_options(args)
    session = args.catalog_session()
    session.copy_to_temp_view(args.table_path(), options, args["view_name"], replace=args["replace"],
                              global_view=args["global"])
    return [(0,)]


def copy_to_table(args: Arguments) -> list[Row]:
    """The table's read saved as catalog table `new_table` (`save_mode` overwrite or append, Spark's default table
    format, as Hudi's procedure); its columns those of `new_table` when it exists, else `columns` (comma-separated,
    default all); 0."""
    mode = (args["save_mode"] or "").strip().lower()
    if mode not in _SAVE_MODES:
        raise ConfigError(f"Argument: save_mode of copy_to_table is {args['save_mode']!r}; give overwrite or append")
    options = read_options(args)
    session = args.catalog_session()
    columns = [c.strip() for c in (args["columns"] or "").split(",") if c.strip()]
    session.copy_to_table(args.table_path(), options, args["new_table"], save_mode=mode, columns=columns)
    return [(0,)]
