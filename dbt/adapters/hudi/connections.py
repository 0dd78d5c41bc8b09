"""Profile and connections of `type: hudi`: dbt-spark's, with `method: session` as the default.

For `method: session` statements run on the one SparkSession of the process, held by its `SparkEnvironment`
(`HudiConnectionManager.environment`) and made with the warehouse and metastore pinned in the project; the other
methods (thrift, http, odbc) are dbt-spark's own.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, ClassVar

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.hudi.session import SparkEnvironment
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionMethod, SparkCredentials
from dbt.adapters.spark.session import NUMBERS, Cursor, SessionConnectionWrapper
from dbt.adapters.spark.session import Connection as SessionConnection

logger = AdapterLogger("Hudi")


@dataclass
class HudiCredentials(SparkCredentials):
    """dbt-spark's profile fields; `method` defaults to `session` and `host` is not needed for it."""

    method: SparkConnectionMethod = SparkConnectionMethod.SESSION

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        data.setdefault("method", SparkConnectionMethod.SESSION.value)
        if data["method"] == SparkConnectionMethod.SESSION.value:
            data.setdefault("host", "localhost")  # an in-process session has no host
        return data

    def __post_init__(self) -> None:
        if self.method == SparkConnectionMethod.SESSION and self.host is None:
            self.host = "localhost"
        super().__post_init__()

    @property
    def type(self) -> str:
        return "hudi"

    def _connection_keys(self) -> tuple[str, ...]:
        if self.method == SparkConnectionMethod.SESSION:
            return ("method", "schema", "server_side_parameters")
        return ("method", "host", "port", "cluster", "endpoint", "schema", "organization")


class HudiCursor(Cursor):
    """dbt-spark's session cursor, on the adapter's session (dbt-spark looks a session up per statement)."""

    def __init__(self, environment: SparkEnvironment, server_side_parameters: dict[str, str]) -> None:
        super().__init__(server_side_parameters=server_side_parameters)
        self.environment = environment

    def execute(self, sql: str, *parameters: Any) -> None:
        from pyspark.errors import PySparkException

        if parameters:
            sql = sql % parameters
        spark = self.environment.session(self.server_side_parameters)
        try:
            self._df = spark.sql(sql)
        except PySparkException as exc:
            raise DbtRuntimeError(str(exc)) from exc


class HudiSessionConnection(SessionConnection):
    def __init__(self, environment: SparkEnvironment, server_side_parameters: dict[str, str]) -> None:
        super().__init__(server_side_parameters=server_side_parameters)
        self.environment = environment

    def cursor(self) -> HudiCursor:
        return HudiCursor(self.environment, self.server_side_parameters)

    @property
    def spark(self):
        return self.environment.session(self.server_side_parameters)


class HudiSessionConnectionWrapper(SessionConnectionWrapper):
    @classmethod
    def _fix_binding(cls, value: Any) -> str:
        """A seed value as a Spark SQL literal. dbt-spark's session wrapper writes None as the string 'None'
        and does not escape quotes, so empty CSV cells became 'None' and O'Brien broke the INSERT."""
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, NUMBERS):
            return str(value)
        if isinstance(value, dt.datetime):
            return f"'{value.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}'"
        if isinstance(value, dt.date):
            return f"'{value.isoformat()}'"
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        # Spark SQL statements are not transactional. A Hudi write is: it commits its instant, or the engine
        # rolls the instant back before the error reaches dbt.
        logger.debug("rollback: nothing to do (Hudi writes commit or roll back their own instant)")


class HudiConnectionManager(SparkConnectionManager):
    TYPE = "hudi"
    # The process's one Spark environment (a JVM holds one SparkSession), shared by every dbt invocation in it.
    environment: ClassVar[SparkEnvironment] = SparkEnvironment()

    def __init__(self, profile, mp_context) -> None:
        super().__init__(profile, mp_context)
        # The warehouse and metastore are pinned in the project folder (when the profile does not place them).
        self.environment.use_project(getattr(profile, "project_root", None))

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds = connection.credentials
        if creds.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        # The session itself starts with the first statement (`dbt parse` and `dbt ls` never need a JVM).
        connection.handle = HudiSessionConnectionWrapper(
            HudiSessionConnection(cls.environment, creds.server_side_parameters))
        connection.state = ConnectionState.OPEN
        return connection

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK")
