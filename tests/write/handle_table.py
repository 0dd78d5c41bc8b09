"""A small table written by the handles directly (no write client), with helpers to commit, or not, one write: the
fixture of the rollback and lost-instant tests."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline.commit_metadata import WriteStat
from hudi_engine.timeline.instant import Instant
from hudi_engine.timeline.timeline import layout_at
from hudi_engine.write.commit import complete_commit, create_table, start_commit
from hudi_engine.write.handles import WriteContext, create_handle

DATA = pa.table({"id": ["a", "b", "c", "d"], "part": ["p1", "p1", "p2", "p2"], "ts": pa.array([1, 2, 3, 4], pa.int64()),
                 "val": [1.0, 2.0, 3.0, 4.0]})


class HandleTable:
    def __init__(self, tmp_path: Path, table_type: str = "COPY_ON_WRITE") -> None:
        self.path = tmp_path / "t"
        self.storage, self.base = Storage.for_uri(str(self.path))
        self.config = TableConfig.create("tbl", table_type, ["id"], ["part"], "ts")
        create_table(TableLocation.at(self.storage, self.base), self.config)

    def ctx(self, instant: Instant, task: int = 0) -> WriteContext:
        """The write context of one task of the write at `instant` (its files carry the task's write token)."""
        return WriteContext.create(TableLocation.at(self.storage, self.base), self.config, instant.timestamp, DATA.schema).for_task(
            task, 1, task)

    def write(self, inflight: Instant, rows: pa.Table, partition: str, task: int = 0) -> WriteStat:
        """A new file group in `partition` with the rows of `rows` that belong there."""
        return create_handle(self.ctx(inflight, task), partition, rows.filter(pc.equal(rows["part"], partition)))

    def insert(self, rows: pa.Table = DATA) -> Instant:
        """A completed insert: a new file group per partition of `rows`."""
        inflight = start_commit(TableLocation.at(self.storage, self.base), self.config, "INSERT")
        stats = [self.write(inflight, rows, p) for p in pc.unique(rows["part"]).to_pylist()]
        return complete_commit(TableLocation.at(self.storage, self.base), inflight, stats, "INSERT",
                               self.ctx(inflight).schema, layout=layout_at(TableLocation.at(self.storage, self.base)))

    def snapshot(self) -> pa.Table:
        """The snapshot, equal to hudi-rs's, sorted by record key."""
        ours, theirs = HudiTable.load(str(self.path)).read_snapshot(), rs_snapshot(self.path)
        assert_same_rows(ours, theirs, "snapshot")
        return ours.sort_by("_hoodie_record_key")
