"""show_savepoints (savepoints as Java leaves them, and the engine's), show_compaction's copy-on-write refusal,
export_instants."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import Timeline
from hudi_engine.write_pipeline import write_table


def test_show_savepoints_lists_completed_savepoints_newest_first(cow):
    path, first, second = cow
    assert call("show_savepoints", path).num_rows == 0
    timeline = Timeline.load(HudiTable.load(path).location)
    for ts in (first, second):  # savepoint files as Java's create_savepoint leaves them (content is not read)
        timeline.create_inflight(Instant(ts, Action.SAVEPOINT, State.INFLIGHT))
        timeline.complete(Instant(ts, Action.SAVEPOINT, State.INFLIGHT))
    assert call("show_savepoints", path).to_pylist() == [{"savepoint_time": second}, {"savepoint_time": first}]


def test_show_compaction_is_for_merge_on_read_tables(cow):
    with pytest.raises(ConfigError, match="Cannot show compaction on a Non Merge On Read table"):
        call("show_compaction", cow[0])


def test_show_savepoints_lists_the_engines_savepoints(cow):
    path, first, second = cow
    HudiTable.load(path).savepoint(first)
    assert call("show_savepoints", path).to_pylist() == [{"savepoint_time": first}]


@pytest.mark.parametrize("version", [6, 9])
def test_export_instants_writes_active_and_archived_instants_as_json(tmp_path, version):
    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.operation": "upsert",
            "hoodie.metadata.compact.max.delta.commits": "1"}  # archival stops at the metadata table's compaction
    times = [write_table(pa.table({"id": [i % 3], "ts": [i]}), path, opts).instant_time for i in range(7)]
    table = HudiTable.load(path)
    table.clean(options={"hoodie.cleaner.commits.retained": "2"})
    table.reload().archive(options={"hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4",
                                    "hoodie.cleaner.commits.retained": "2"})
    timeline = HudiTable.load(path).timeline
    active = [i for i in timeline.instants if i.action is Action.COMMIT]
    assert len(active) < len(times)  # some commits went to the archive
    out = tmp_path / "export"
    out.mkdir()
    (row,) = call("export_instants", path, local_folder=str(out)).to_pylist()
    exported = sorted(p.name for p in out.iterdir())
    assert row["export_detail"] == f"Exported {len(exported)} Instants to {out}"
    archived = {f"{t}.commit" for t in times if not any(i.timestamp == t for i in active)}
    assert archived <= set(exported)
    assert {timeline.layout.file_name(i) for i in active} <= set(exported)
    assert any(name.endswith(".clean") for name in exported)
    for name in exported:
        record = json.loads((out / name).read_text())
        if ".commit" in name:
            assert record["operationType"] == "UPSERT" and record["partitionToWriteStats"]
        else:
            assert record["totalFilesDeleted"] >= 0  # the clean's HoodieCleanMetadata
    newest = tmp_path / "newest"
    newest.mkdir()
    call("export_instants", path, local_folder=str(newest), limit=2, actions="commit", desc=True)
    assert sorted(p.name.split("_")[0].split(".")[0] for p in newest.iterdir()) == times[-2:]


def test_export_instants_needs_a_folder(cow):
    with pytest.raises(ConfigError, match="is not a valid local directory"):
        call("export_instants", cow[0], local_folder=str(Path(cow[0]) / "missing"))
