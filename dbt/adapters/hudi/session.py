"""The adapter's SparkSession (profile `method: session`): its settings and the environment that owns it.

A JVM can hold one SparkSession, and its static settings (master, warehouse, metastore, the Python of its
workers) are fixed when it starts. So the session is made once per process, the first time a statement needs it,
from the profile's `server_side_parameters` on top of these defaults:

* `spark.master` = `local[*]`: an in-process local Spark; any master URL (`spark://...`, `yarn`) in the profile
  runs the same project on a cluster.
* Hive support, with the warehouse (`spark-warehouse/`) and the Derby metastore (`metastore_db/`, `derby.log`)
  pinned inside the dbt project folder, so dbt started from any directory finds the same tables. A profile that
  sets `spark.sql.warehouse.dir`, a metastore URL or `hive.metastore.uris` keeps its own.
* Spark's Python workers run this interpreter (`PYSPARK_PYTHON`) unless the profile sets `spark.pyspark.python`
  (on a cluster: the executors' Python). They get `hudi_engine` from the driver when they lack it
  (`hudi_engine.spark.executor_env`, run when the `hudi` data source is registered).

* The native `hudi` source (`hudi_engine.spark.native`): its JVM component, compiled from this package's source
  at first use and cached, goes on `spark.jars` with its planner strategy in `spark.sql.extensions`, so catalog
  names (what dbt renders for `ref()`) scan base files with Spark's own parquet reader and see every commit. A
  component that does not compile stops the session with the compiler's error. `spark.hudi_engine.native: "false"`
  in the profile opts out (e.g. with Apache Hudi's own jar on the classpath, which also answers `hudi`): then the
  `hudi` Python source answers the catalog names and dbt renders reads as per-run views (`relation.py`).

Every session gets the `hudi` data source and the `hudi_timeline` table function registered.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Hudi")

WAREHOUSE_KEY = "spark.sql.warehouse.dir"
METASTORE_URL_KEYS = ("javax.jdo.option.ConnectionURL", "spark.hadoop.javax.jdo.option.ConnectionURL",
                      "hive.metastore.uris", "spark.hadoop.hive.metastore.uris")
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
NATIVE_KEY = "spark.hudi_engine.native"  # "false": no JVM component; dbt reads Hudi tables through per-run views

DEFAULT_CONF: dict[str, str] = {
    "spark.master": "local[*]",
    "spark.app.name": "dbt-hudi",
    "spark.ui.showConsoleProgress": "false",
    # Spark's own WARN lines (Hive SerDe notes, native-library lookups) would drown dbt's output; errors still
    # reach dbt through the exceptions. A profile can set spark.log.level to WARN or INFO.
    "spark.log.level": "ERROR",
    # The write path runs Arrow batches through Python workers; reusing them saves an import per task.
    "spark.python.worker.reuse": "true",
}


@dataclass(frozen=True)
class SessionSettings:
    """Everything the builder is given, resolved from the profile and the project folder."""

    conf: dict[str, str]
    env: dict[str, str]
    native: bool  # the native hudi source goes on the session (`native_conf` adds its jar when the session starts)

    @staticmethod
    def resolve(server_side_parameters: Mapping[str, str], project_root: str | os.PathLike | None
                ) -> "SessionSettings":
        from hudi_engine.spark import python_env

        given = {str(k): str(v) for k, v in server_side_parameters.items()}
        root = Path(project_root or os.getcwd()).resolve()
        env = python_env()
        conf = dict(DEFAULT_CONF)
        conf.update({
            "spark.pyspark.python": env["PYSPARK_PYTHON"],
            "spark.pyspark.driver.python": env["PYSPARK_DRIVER_PYTHON"],
            "spark.executorEnv.PYSPARK_PYTHON": env["PYSPARK_PYTHON"],
        })
        if WAREHOUSE_KEY not in given:
            conf[WAREHOUSE_KEY] = str(root / "spark-warehouse")
        if not any(k in given for k in METASTORE_URL_KEYS):
            # `spark.hadoop.*` reaches the Hive client's configuration; a bare javax.jdo key only warns at launch.
            conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
                f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true")
            # derby.log goes to derby.system.home (else the working directory).
            opts = given.get(DRIVER_JAVA_OPTIONS, "")
            conf[DRIVER_JAVA_OPTIONS] = f"{opts} -Dderby.system.home={root}".strip()
            given.pop(DRIVER_JAVA_OPTIONS, None)
        conf.update(given)
        if conf["spark.master"].startswith("local"):
            # In-process Spark: a few shuffle partitions per core, not Spark's 200 (dbt models are mostly small;
            # adaptive execution still coalesces). Bound to the loopback, so no network lookup or warning.
            conf.setdefault("spark.sql.shuffle.partitions", str(max(4, 2 * (os.cpu_count() or 2))))
            conf.setdefault("spark.driver.host", "127.0.0.1")
            conf.setdefault("spark.driver.bindAddress", "127.0.0.1")
            env.setdefault("SPARK_LOCAL_IP", os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"))
        if conf.get("spark.pyspark.python"):
            env["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
        return SessionSettings(conf, env, wants_native(conf))


def wants_native(server_side_parameters: Mapping[str, str]) -> bool:
    """Whether a session of these settings gets the native hudi source: yes unless `spark.hudi_engine.native` is
    "false" (a profile that also names the component's extension is contradictory, and refused)."""
    from dbt_common.exceptions import DbtRuntimeError

    from hudi_engine.spark import NATIVE_EXTENSIONS

    value = str(server_side_parameters.get(NATIVE_KEY, "true")).strip().lower()
    if value not in ("true", "false"):
        raise DbtRuntimeError(f"server_side_parameters: {NATIVE_KEY} is {value!r}; expected true or false")
    extensions = str(server_side_parameters.get("spark.sql.extensions") or "").split(",")
    if value == "false" and NATIVE_EXTENSIONS in extensions:
        raise DbtRuntimeError(f"server_side_parameters: {NATIVE_KEY} is false but spark.sql.extensions names "
                              f"{NATIVE_EXTENSIONS}, the native hudi source; remove one of the two")
    return value == "true"


def _with_native_source(conf: dict[str, str]) -> dict[str, str]:
    """`conf` with the native source's jar (compiled on first use, then cached) and extension; never a silent
    fallback to the Python source when it cannot be built."""
    from dbt_common.exceptions import DbtRuntimeError

    from hudi_engine import HudiError
    from hudi_engine.spark import native_conf

    try:
        return native_conf(conf)
    except HudiError as e:
        raise DbtRuntimeError(f"{e}\nA dbt profile can run without the native source (Hudi tables then read "
                              f"through the Python source, and dbt renders reads as per-run views): "
                              f"server_side_parameters: {{{NATIVE_KEY}: \"false\"}}") from e


class SparkEnvironment:
    """The adapter's Spark environment: the project root, the settings the session was started with, the session
    itself (started on first use, reused while it runs) and the data sources registered on it.

    A JVM holds one SparkSession, so a process has one environment (`HudiConnectionManager.environment`, as
    dbt-duckdb's connection manager holds its `Environment`), shared by every dbt invocation the process runs.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.project_root: str | None = None  # None: the working directory when the session starts
        self.settings: SessionSettings | None = None  # what the running session was started with
        self._spark = None  # SparkSession.getActiveSession is per thread, so the environment keeps its own

    def use_project(self, project_root: str | os.PathLike | None) -> None:
        """Where the warehouse and metastore are pinned: the dbt project of this process (set by the adapter). A
        session already running keeps its own."""
        if project_root:
            with self._lock:
                self.project_root = str(project_root)

    def session(self, server_side_parameters: Mapping[str, str]):
        """The process's SparkSession, started on first use; the `hudi` source and `hudi_timeline` registered.

        A session already running in the process (started by the caller, or by an earlier dbt invocation) is
        reused: its static settings cannot change any more.
        """
        with self._lock:
            if self._spark is not None and _is_running(self._spark):
                return self._spark
            settings = SessionSettings.resolve(server_side_parameters, self.project_root)
            # Read by the launcher and by SparkContext when the JVM starts; without it Spark's Python workers run
            # the first `python3` on PATH, which lacks this environment's packages.
            os.environ.update(settings.env)
            conf = _with_native_source(settings.conf) if settings.native else settings.conf
            spark = self._start(conf, chosen_without_native=not settings.native)
            self._spark, self.settings = spark, settings
            return spark

    def running_session(self):
        """The SparkSession if one was started and still runs, else None (never starts one)."""
        with self._lock:
            return self._spark if self._spark is not None and _is_running(self._spark) else None

    @property
    def native(self) -> bool | None:
        """Whether the running session has the native hudi source; None before a session runs."""
        return self.settings.native if self.running_session() is not None and self.settings else None

    def _start(self, conf: Mapping[str, str], *, chosen_without_native: bool = False):
        """A session of `conf` (or the caller's running one), with the adapter's data sources registered."""
        from pyspark.sql import SparkSession

        from hudi_engine.spark import register_data_source, register_timeline_function

        builder = SparkSession.builder.enableHiveSupport()
        for key, value in conf.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        logger.debug(f"Spark session: master {spark.sparkContext.master}, warehouse {spark.conf.get(WAREHOUSE_KEY)}, "
                     f"catalog {spark.conf.get('spark.sql.catalogImplementation', '?')}")
        # PySpark logs every failed statement's analysis error as JSON on stderr; dbt reports it already.
        logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
        # A profile that turned the component off (spark.hudi_engine.native: false) chose the Python source, and dbt's
        # own reads go through the run's views: the slow-path warning is for sessions that lack it unawares.
        register_data_source(spark, warn_python_source=not chosen_without_native)
        register_timeline_function(spark)
        return spark


def _is_running(spark) -> bool:
    sc = spark.sparkContext
    return getattr(sc, "_jsc", None) is not None


def engine_version() -> str:
    import hudi_engine

    return hudi_engine.__version__
