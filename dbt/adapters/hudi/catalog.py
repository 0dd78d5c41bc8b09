"""Hudi tables in the Spark catalog, and what `dbt docs generate` shows about them.

Spark 4.3 gives a Python data source neither a catalog table's OPTIONS nor its LOCATION, only its schema with
column comments. So a model's catalog table is `CREATE TABLE <schema>.<alias> (...) USING hudi LOCATION <path>`
whose first meta column carries the comment `hudi.path=<path>` (the data source reads the path from it; see
`hudi_engine.spark.catalog_entry`). LOCATION still matters to Spark: it makes the table EXTERNAL, so dropping the
catalog entry never deletes the Hudi table's files. The declared columns are the table's latest schema; the
entry is re-created when a write changes them, so every query sees the current snapshot in the current schema.

With the native `hudi` source on the session (the adapter's default, `hudi_engine.spark.native`), that entry is
what every reader uses, dbt's `ref()`, `source()` and `{{ this }}` included: Spark resolves it to the JVM source,
which takes the path from the comment and plans each query as of the latest completed commit (base files on
Spark's own parquet reader). A profile that opts out (`spark.hudi_engine.native: "false"`) gets per-run temporary
views for dbt's reads instead (`read_view`, rendered by `relation.py`), since the entry then resolves to the `hudi`
Python source, which decodes every row in a Python worker. Such a view cannot be the catalog entry itself: it holds
a fixed file list, which a commit made outside dbt would leave behind.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Hudi")

COMMIT_TIME = "_hoodie_commit_time"


def local_path(uri: str) -> str:
    """A `file:` URI as Spark prints it (`file:/x`, `file:///x`) becomes a local path; other URIs stay."""
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path)
    return uri


def sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class CatalogEntry:
    """What the catalog holds for a table: its columns (name, type) and the Hudi path its comment carries."""

    columns: tuple[tuple[str, str], ...]
    path: str | None


def catalog_entry(spark, name: str) -> CatalogEntry | None:
    """The catalog's view of table `name` (`schema.table`), None if there is no such table."""
    fields = declared_fields(spark, name)
    if fields is None:
        return None
    from hudi_engine.spark import PATH_COMMENT_PREFIX

    path = None
    columns = []
    for column, data_type, comment in fields:
        columns.append((column, data_type))
        if comment.startswith(PATH_COMMENT_PREFIX) and path is None:
            path = comment[len(PATH_COMMENT_PREFIX):].strip()
    if path is None:
        path = synced_path(spark, name)
    return CatalogEntry(tuple(columns), path)


def synced_path(spark, name: str) -> str | None:
    """The Hudi table of an entry Hudi's Hive sync wrote (a `hudi` data source table without the path comment):
    its `path` SerDe parameter, which Spark reads as the table's location."""
    jspark = spark._jsparkSession
    meta = jspark.sessionState().catalog().getTableMetadata(jspark.sessionState().sqlParser().parseTableIdentifier(name))
    provider = meta.provider()
    if not provider.isDefined() or provider.get().lower() != "hudi" or not meta.storage().locationUri().isDefined():
        return None
    return local_path(meta.storage().locationUri().get().toString())


def declared_fields(spark, name: str) -> list[tuple[str, str, str]] | None:
    """(column, type, comment) of catalog table `name` as declared, None if there is no such table. Read from the
    session catalog's table metadata: one metastore lookup, where `Catalog.listColumns` resolves the table through
    its Python data source (0.2-0.8 s on a small machine, and a model asks several times)."""
    jspark = spark._jsparkSession
    ident = jspark.sessionState().sqlParser().parseTableIdentifier(name)
    session_catalog = jspark.sessionState().catalog()
    if not session_catalog.tableExists(ident):
        return None
    out = []
    for field in session_catalog.getTableMetadata(ident).schema().fields():
        comment = field.getComment()
        out.append((field.name(), field.dataType().catalogString(), comment.get() if comment.isDefined() else ""))
    return out


def expected_entry(path: str, table) -> CatalogEntry:
    """The catalog entry of the Hudi table at `path` (`table`: the caller's `HudiTable` of it)."""
    from hudi_engine.spark import spark_schema

    schema = spark_schema(table.schema())
    return CatalogEntry(tuple((f.name, f.dataType.simpleString()) for f in schema.fields), path)


def register_table(spark, name: str, path: str, table) -> str:
    """Make catalog table `name` read the Hudi table at `path` in its current schema; returns what it did.
    `table`: a `HudiTable` the caller has of it (its current timeline)."""
    from hudi_engine.spark import catalog_table_ddl

    current = catalog_entry(spark, name)
    wanted = expected_entry(path, table)
    if current is not None and current == wanted:
        spark.sql(f"REFRESH TABLE {name}")
        return "kept"
    if current is not None:
        # Columns or path changed: the catalog holds the declared schema, so the entry is made again. The
        # table is EXTERNAL (LOCATION below), so this drops the catalog entry only, never the files.
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(catalog_table_ddl(name, path) + f"\nLOCATION {sql_string(path)}")
    return "created" if current is None else "replaced"


def table_path(spark, name: str) -> str | None:
    entry = catalog_entry(spark, name)
    return entry.path if entry is not None else None


# ---- what a query reads: ref(), source(), {{ this }} (see relation.py) -------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def view_name(schema: str, identifier: str, *parts: str) -> str:
    """`hudi__<schema>__<table>__<instant>...`, backquoted: the temporary view of one read of one table."""
    return "`" + "__".join(_UNSAFE.sub("_", p) for p in ("hudi", schema, identifier, *parts)) + "`"


def read_view(spark, schema: str, identifier: str, path: str) -> str:
    """Register the temporary view through which a query reads the Hudi table at `path` now (its latest snapshot,
    merged, as of the latest commit; base files on Spark's parquet reader); returns its SQL name."""
    from hudi_engine import HudiTable
    from hudi_engine.spark import ReadOptions, dataframe, plan_read

    plan = plan_read(HudiTable.load(path), ReadOptions.parse({"path": path}))
    view = view_name(schema, identifier, plan.options.as_of or "empty")
    dataframe(spark, plan).createOrReplaceTempView(view)
    logger.debug(f"{schema}.{identifier}: read as {view}: {len(plan.native_files)} base files on Spark's parquet "
                 f"reader, {len(plan.merged_groups)} file groups on the hudi source")
    return view


def changes_view(spark, schema: str, identifier: str, path: str, begin: str, end: str | None,
                 fmt: str = "latest_state", images: str = "struct") -> str:
    """Register the temporary view of the records the commits in (begin, end] wrote (end: the latest commit now),
    as of end; with `fmt` 'cdc', of every change they made (op, ts_ms, before, after; `images` struct or json).
    Returns its SQL name."""
    from hudi_engine import HudiTable
    from hudi_engine.spark import (
        BEGIN_INSTANT,
        CDC_IMAGES,
        END_INSTANT,
        INCREMENTAL_FORMAT,
        QUERY_TYPE,
        dataframe,
        plan_read,
        read_table,
    )

    table = HudiTable.load(path)
    # From version 8 on, Hudi's ranges are of completion times, while the `_hoodie_commit_time` a model keeps as its
    # checkpoint is the commit's requested time: a bound that is a completed commit's requested time names that
    # commit, so it becomes the commit's completion time (the next run then starts after the commit it last read,
    # as on version 6). Any other time is taken as it is (an empty map in layout 1).
    done = table.timeline.completion_times()
    begin, end = done.get(begin, begin), None if end is None else done.get(end, end)
    options = {"path": path, QUERY_TYPE: "incremental", BEGIN_INSTANT: begin}
    if end is not None:
        options[END_INSTANT] = end
    if fmt == "cdc":
        # Planned here first: a refusal is raised as the engine's error, and the view's range ends at a fixed commit.
        changes = table.plan_changes(begin, end, images=images)
        options |= {INCREMENTAL_FORMAT: "cdc", CDC_IMAGES: images, BEGIN_INSTANT: changes.begin}
        if changes.end is not None:
            options[END_INSTANT] = changes.end
        view = view_name(schema, identifier, "cdc", changes.begin, changes.end or "none")
        read_table(spark, path, options).createOrReplaceTempView(view)
        return view
    plan = plan_read(table, HudiTable.parse_read_options(options))
    view = view_name(schema, identifier, "changes", plan.options.begin or "", plan.options.end or "none")
    dataframe(spark, plan).createOrReplaceTempView(view)
    return view


def read_view_of(quoting, node, schema: str, identifier: str) -> str | None:
    """The per-run view a reading `ref()`, `source()` or `{{ this }}` of `node` renders as, when it is a Hudi table
    in the catalog and the SQL runs on this process's SparkSession without the native source; None otherwise (the
    catalog name is rendered)."""
    from dbt_common.exceptions import DbtRuntimeError

    from hudi_engine import HudiError

    is_source = str(getattr(node, "resource_type", "")) == "source"
    materialized = getattr(getattr(node, "config", None), "materialized", None)
    if not is_source and materialized != "hudi_incremental":
        return None
    spark = _session_without_native_source(quoting)
    if spark is None:
        return None
    path = table_path(spark, f"`{schema}`.`{identifier}`")
    if path is None:
        return None  # not built yet (a model's first run), or not a Hudi table
    try:
        return read_view(spark, schema, identifier, path)
    except HudiError as e:
        raise DbtRuntimeError(f"reading Hudi table {schema}.{identifier} ({path}): {e}") from e


def _session_without_native_source(quoting):
    """The SparkSession queries run on (the profile's with method: session, else the one running here) when it
    reads `hudi` through the Python source; None when the native source reads the catalog name (nothing to do,
    and the profile's session is not started for it) or there is no session here."""
    from dbt.adapters.hudi.connections import HudiConnectionManager
    from dbt.adapters.hudi.session import wants_native
    from dbt.adapters.spark.connections import SparkConnectionMethod
    from hudi_engine.spark import NATIVE_EXTENSIONS

    environment = HudiConnectionManager.environment
    credentials = getattr(quoting, "credentials", None)
    if credentials is None:
        spark = environment.running_session()
    elif (getattr(credentials, "method", None) != SparkConnectionMethod.SESSION
          or wants_native(credentials.server_side_parameters)):
        return None
    else:
        spark = environment.session(credentials.server_side_parameters)
    if spark is None or NATIVE_EXTENSIONS in (spark.conf.get("spark.sql.extensions", "") or "").split(","):
        return None
    return spark


# ---- docs: catalog stats ---------------------------------------------------------------------------------

_LOCATION_RE = re.compile(r"^Location: (.*)$", re.MULTILINE)


def location_from_information(information: str) -> str | None:
    m = _LOCATION_RE.search(information or "")
    return local_path(m.group(1).strip()) if m else None


def table_stats(path: str) -> dict[str, object]:
    """`stats:*` entries of dbt's catalog for the Hudi table at `path`: type, record key, latest instant, files."""
    from hudi_engine import HudiTable

    table = HudiTable.load(path)
    cfg = table.config
    latest = table.timeline.completed_commits().last()
    slices = table.file_slices()
    stats = {
        "hudi_table_type": ("Hudi table type", cfg.table_type, "COPY_ON_WRITE or MERGE_ON_READ"),
        "hudi_record_key": ("Record key", ", ".join(cfg.record_key_fields), "hoodie.table.recordkey.fields"),
        "hudi_partition_fields": ("Partition fields", ", ".join(cfg.partition_fields) or "(none)",
                                  "hoodie.table.partition.fields"),
        "hudi_precombine_field": ("Precombine field", cfg.precombine_field or "(none)",
                                  "hoodie.table.precombine.field"),
        "hudi_latest_instant": ("Latest instant",
                                f"{latest.timestamp} {latest.action}" if latest is not None else "(none)",
                                "the latest completed commit on the timeline"),
        "hudi_commits": ("Commits", len(table.timeline.completed_commits()), "completed commits on the timeline"),
        "hudi_file_groups": ("File groups", len(slices), "file groups in the latest snapshot"),
        "hudi_base_files": ("Base files", sum(1 for s in slices if s.base_file is not None),
                            "parquet base files in the latest snapshot"),
        "hudi_log_files": ("Log files", sum(len(s.log_files) for s in slices),
                           "log files in the latest snapshot (merge-on-read)"),
        "hudi_path": ("Hudi path", path, "where the table lives"),
    }
    out: dict[str, object] = {}
    for key, (label, value, description) in stats.items():
        out[f"stats:{key}:label"] = label
        out[f"stats:{key}:value"] = value
        out[f"stats:{key}:description"] = description
        out[f"stats:{key}:include"] = True
    return out


# ---- docs: comments (persist_docs) -------------------------------------------------------------------------


def set_comments(spark, name: str, table_comment: str | None, column_comments: dict[str, str]) -> list[str]:
    """Put a model's descriptions on its catalog entry: the table comment, and the column comments that differ
    from what the entry holds. The comment
    that carries the table path (`hudi.path=` on `_hoodie_commit_time`) is never replaced; returns the columns
    skipped for that reason. Comments live in the entry: when a write re-creates it (new columns), the
    materialization puts them back after the write."""
    from hudi_engine.spark import PATH_COMMENT_PREFIX

    skipped = []
    current = {column: comment for column, _, comment in declared_fields(spark, name) or []}
    by_lower = {c.lower(): c for c in current}
    for column, comment in column_comments.items():
        actual = by_lower.get(column.lower())
        if actual is None or current[actual] == comment:
            continue
        if current[actual].startswith(PATH_COMMENT_PREFIX):
            skipped.append(actual)
            continue
        spark.sql(f"ALTER TABLE {name} ALTER COLUMN `{actual}` COMMENT {sql_string(comment)}")
    if table_comment is not None:
        # Spark 4.3 shows the comment of a Python data source's table in SHOW TABLE EXTENDED (and so in dbt's
        # catalog), not in DESCRIBE TABLE EXTENDED or Catalog.getTable; it is set every time, as it cannot be read
        # back cheaply.
        spark.sql(f"COMMENT ON TABLE {name} IS {sql_string(table_comment)}")
    return skipped


# SHOW TABLE EXTENDED's `Comment:` runs over several lines for a multi-line description: up to the next of the
# keys Spark prints after it (CatalogTable.toLinkedHashMap's order), or the end.
_KEYS_AFTER_COMMENT = ("Table Properties", "Statistics", "View Text", "View Original Text", "View Schema Mode",
                       "View Catalog and Namespace", "View Query Output Columns", "Location", "Serde Library",
                       "InputFormat", "OutputFormat", "Storage Properties", "Partition Provider", "Partition Columns",
                       "Num Buckets", "Bucket Columns", "Sort Columns", "Collation", "Schema")
_COMMENT_RE = re.compile(r"^Comment: (.*?)(?:\n(?=(?:%s): )|\n?\Z)" % "|".join(map(re.escape, _KEYS_AFTER_COMMENT)),
                         re.MULTILINE | re.DOTALL)


def table_comment_from_information(information: str) -> str | None:
    m = _COMMENT_RE.search(information or "")
    return m.group(1) if m else None


def column_comments(spark, name: str) -> dict[str, str]:
    """Column comments of a catalog entry (persist_docs), without the path comment."""
    from hudi_engine.spark import PATH_COMMENT_PREFIX

    return {column: comment for column, _, comment in declared_fields(spark, name) or []
            if comment and not comment.startswith(PATH_COMMENT_PREFIX)}
