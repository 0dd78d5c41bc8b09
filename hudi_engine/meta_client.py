"""`MetaClient`: a table as the write and the table services take it (Hudi's `HoodieTableMetaClient`): its location,
its `hoodie.properties` (`TableConfig`) and its active timeline, loaded once by whoever holds the table
(`hudi_engine.HudiTable`, a layer above them) and passed down. Nothing below loads them again; where the instant
protocol needs a fresh listing (under the table lock) it lists again explicitly (`timeline.reload()`)."""
from __future__ import annotations

from typing import Protocol

from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline


class MetaClient(Protocol):
    location: TableLocation
    config: TableConfig
    timeline: Timeline
