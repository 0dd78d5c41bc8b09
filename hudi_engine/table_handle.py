"""`TableHandle`: one table as an operation sees it, loaded once and passed down: its location, its
`hoodie.properties` (`TableConfig`) and its active timeline. A write lists the timeline again only where the
protocol needs a fresh view (under the table lock); nothing below reloads the config."""
from __future__ import annotations

from dataclasses import dataclass

from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for


@dataclass
class TableHandle:
    location: TableLocation
    config: TableConfig
    timeline: Timeline

    @staticmethod
    def load(location: TableLocation) -> "TableHandle":
        """`hoodie.properties` read once, the active timeline listed once (in the layout the config declares)."""
        config = TableConfig.load(location)
        return TableHandle(location, config, Timeline.load(location, layout_for(config)))

    @property
    def storage(self) -> Storage:
        return self.location.storage

    @property
    def base_path(self) -> str:
        return self.location.base_path

    def reload_timeline(self) -> Timeline:
        """List the active timeline again (after this operation or another writer changed it)."""
        self.timeline = self.timeline.reload()
        return self.timeline
