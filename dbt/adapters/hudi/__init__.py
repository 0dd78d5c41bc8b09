"""dbt adapter `type: hudi`: dbt-spark plus `materialized='hudi_incremental'`, writing Apache Hudi tables with
`hudi_engine` on the adapter's SparkSession.

`Plugin` is built on first access: importing a module of the adapter (the session, the timeline function) should
not pay for importing all of dbt-core.
"""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "Plugin":
        from dbt.adapters.base import AdapterPlugin
        from dbt.adapters.hudi.connections import HudiCredentials
        from dbt.adapters.hudi.impl import HudiAdapter
        from dbt.include import hudi

        plugin = AdapterPlugin(adapter=HudiAdapter, credentials=HudiCredentials,  # type: ignore[arg-type]
                               include_path=hudi.PACKAGE_PATH, dependencies=["spark"])
        globals()["Plugin"] = plugin
        return plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
