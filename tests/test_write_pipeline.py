"""Hudi's delete_partition (hudi_engine/write_pipeline.py's delete_partitions, HudiTable.delete_partitions): one replacecommit
replacing the partitions' file groups, no new file; our readers and hudi-rs stop seeing the partitions, time travel
before it still does."""
from __future__ import annotations

from pathlib import Path

import pytest
from clustering_job import schedule_clustering
from java_tables import CASES, unzip_feature_table
from metadata_tables import files_only, mdt_listing
from oracle import rs_snapshot
from procedure_tables import OPTIONS, rows, two_commits

from hudi_engine import HudiTable
from hudi_engine.errors import ClusteringUpdateError, ConfigError
from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Action
from hudi_engine.write_pipeline import resolve_partitions


def _files(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def _data_files(path: Path) -> list[str]:
    return [f for f in _files(path) if not f.startswith(".hoodie")]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_partition_is_replaced_and_time_travel_still_sees_it(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    _, second = two_commits(path, table_type)
    before = _data_files(path)
    table = HudiTable.load(str(path))
    x_groups = sorted({s.file_id for s in table.file_slices() if s.partition_path == "x"})
    result = table.delete_partitions(["x"])
    assert _data_files(path) == before  # no new file (the partition metadata stays, as in Hudi)
    instant = next(i for i in table.timeline.instants if i.timestamp == result.instant_time)
    assert instant.action is Action.REPLACE_COMMIT and instant.is_completed
    meta = table.commit_metadata(instant)
    assert meta.operation_type == "DELETE_PARTITION" and not meta.partition_to_write_stats
    assert meta.partition_to_replace_file_ids == {"x": x_groups}
    assert sorted(table.read_snapshot().column("id").to_pylist()) == [3, 4]
    assert sorted(rs_snapshot(path).column("id").to_pylist()) == [3, 4]
    assert sorted(table.read_snapshot(as_of=second).column("id").to_pylist()) == [1, 2, 3, 4]
    assert sorted(rs_snapshot(path, as_of=second).column("id").to_pylist()) == [1, 2, 3, 4]
    # the partition can be written again: new file groups, seen by both readers
    table.write(rows([5], 3, ["x"]), {**OPTIONS, "hoodie.datasource.write.table.type": table_type})
    assert sorted(rs_snapshot(path).column("id").to_pylist()) == [3, 4, 5]


def test_wildcards_and_unknown_partitions() -> None:
    have = ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-02-01"]
    assert resolve_partitions(["dt=2024-01-*"], have, "t") == ["dt=2024-01-01", "dt=2024-01-02"]
    assert resolve_partitions([" dt=2024-02-01 ", "dt=2024-01-01"], have, "t") == ["dt=2024-01-01", "dt=2024-02-01"]
    with pytest.raises(ConfigError, match=r"partition 'dt=2025\*' does not exist .*'dt=2024-01-01'"):
        resolve_partitions(["dt=2025*"], have, "t")
    with pytest.raises(ConfigError, match="no partition to delete"):
        resolve_partitions(["", " "], have, "t")


def test_refusals_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t"
    two_commits(path, "COPY_ON_WRITE")
    table = HudiTable.load(str(path))
    before = _files(path)
    with pytest.raises(ConfigError, match="partition 'z' does not exist .*\\['x', 'y'\\]"):
        table.delete_partitions(["x", "z"])
    assert _files(path) == before
    group = next(s.file_id for s in table.file_slices() if s.partition_path == "y")
    clustering = schedule_clustering(path, [("y", group)])
    before = _files(path)
    with pytest.raises(ClusteringUpdateError, match=f"Failed to overwrite partitions \\['y'\\].*{clustering}"):
        HudiTable.load(str(path)).delete_partitions(["y"])
    assert _files(path) == before
    HudiTable.load(str(path)).delete_partitions(["x"])  # other partitions go ahead
    assert sorted(HudiTable.load(str(path)).read_snapshot().column("id").to_pylist()) == [3, 4]


def test_a_files_only_metadata_table_is_kept_with_the_partition_marked_deleted(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "mdt_cow_v6")
    path, _ = unzip_feature_table(case, tmp_path)
    files_only(path)
    table = HudiTable.load(str(path))
    partition = sorted({s.partition_path for s in table.file_slices()})[0]
    table.delete_partitions([partition])
    assert TableConfig.load(TableLocation.of(str(path))).metadata_partitions == ["files"]
    assert partition not in mdt_listing(path)  # Hudi's getPartitionsDeleted: out of the partition list
    assert partition not in {s.partition_path for s in HudiTable.load(str(path)).file_slices()}
