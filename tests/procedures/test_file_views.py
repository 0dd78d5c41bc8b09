"""show_table_properties, the file system views and stats_file_sizes on the engine's tables."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call


def test_show_table_properties_in_the_files_order(cow):
    path, _, _ = cow
    props = HudiTable.load(path).config.props
    assert call("show_table_properties", path, limit=100).to_pylist() == [
        {"key": k, "value": v} for k, v in props.items()]
    assert call("show_table_properties", path).num_rows == min(10, len(props))


def test_show_fsview_all_and_latest(mor):
    path, first, second = mor
    rows = call("show_fsview_all", path).to_pylist()
    x = [r for r in rows if r["partition"] == "x"]
    (slice_x,) = x  # the update of x went to a log file of the first slice
    assert (slice_x["base_instant"], slice_x["num_delta_files"]) == (first, 1)
    assert slice_x["data_file"].startswith(f"file:{path}/x/") and slice_x["data_file"].endswith(f"_{first}.parquet")
    assert slice_x["delta_files"].startswith(f"[HoodieLogFile(pathStr=file:{path}/x/.")
    assert slice_x["total_delta_file_size"] > 0
    latest = {r["file_id"]: r for r in call("show_fsview_latest", path).to_pylist()}
    assert latest[slice_x["file_id"]]["delta_size_compaction_scheduled"] == slice_x["total_delta_file_size"]
    assert latest[slice_x["file_id"]]["delta_to_base_radio_compaction_scheduled"] == \
        slice_x["total_delta_file_size"] / slice_x["data_file_size"]
    assert call("show_fsview_all", path, path_regex="y").column("partition").to_pylist() == ["y", "y"]
    # as of the first commit only: the log file of the second is not in a view that ends before it
    assert {r["file_id"] for r in call("show_fsview_all", path, max_instant=second).to_pylist()} == \
        {r["file_id"] for r in rows if r["base_instant"] == first}


def test_stats_file_sizes(cow):
    path, first, second = cow
    sizes: dict[str, list[int]] = {}
    for s in HudiTable.load(path).file_slices(as_of=first) + HudiTable.load(path).file_slices():
        assert s.base_file is not None
        sizes.setdefault(s.base_instant, []).append(s.base_file.size)
    rows = call("stats_file_sizes", path, partition_path="*").to_pylist()
    assert [r["commit_time"] for r in rows] == [second, first, "ALL"]
    everything = sorted(sizes[first] + sizes[second])
    assert (rows[2]["min"], rows[2]["max"], rows[2]["num_files"]) == (everything[0], everything[-1], 4)
    assert rows[2]["avg"] == statistics.fmean(everything)
    assert call("stats_file_sizes", path).to_pylist()[-1]["num_files"] == 0  # no base files at the top: partitioned


def test_show_invalid_parquet(cow):
    path, first, _ = cow
    assert call("show_invalid_parquet", path).num_rows == 0
    bad = Path(path) / "y" / f"0000-0_0-0-0_{first}.parquet"
    bad.write_bytes(b"PAR1 not a parquet file")
    (Path(path) / "x" / "short.parquet").write_bytes(b"PAR1")
    assert sorted(call("show_invalid_parquet", path).column("path").to_pylist()) == [
        f"file:{path}/x/short.parquet", f"file:{bad}"]
    assert call("show_invalid_parquet", path, partitions="y").column("path").to_pylist() == [f"file:{bad}"]
    assert call("show_invalid_parquet", path, instants="1").num_rows == 0  # no file of that commit
    with pytest.raises(ConfigError, match="needDelete => true of show_invalid_parquet is not served"):
        call("show_invalid_parquet", path, needDelete=True)
    assert bad.exists()


def _unit(size: int) -> str:
    return f"{size / 2**20:.2f}MB" if size >= 2**20 else f"{size / 1024:.2f}KB" if size >= 1024 else f"{size}B"


def test_show_fs_path_detail_summarises_a_folder_and_its_entries(cow):
    path = cow[0]
    files = [p for p in Path(path).rglob("*") if p.is_file()]
    folders = [p for p in Path(path).rglob("*") if p.is_dir()]
    (whole,) = call("show_fs_path_detail", None, path=path).to_pylist()
    size = sum(p.stat().st_size for p in files)
    assert whole == {"path_num": len(folders) + 1, "file_num": len(files), "storage_size": size,
                     "storage_size(unit)": _unit(size), "storage_path": f"file:{path}",
                     "space_consumed": size, "quota": -1, "space_quota": -1}
    subs = call("show_fs_path_detail", None, path=path, is_sub=True).to_pylist()
    assert sorted(r["storage_path"].rsplit("/", 1)[-1] for r in subs) == sorted(p.name for p in Path(path).iterdir())
    assert [r["storage_size"] for r in subs] == sorted((r["storage_size"] for r in subs), reverse=True)
    assert sum(r["file_num"] for r in subs) == len(files)
    (partition,) = call("show_fs_path_detail", None, path=f"{path}/[x]").to_pylist()
    assert partition["storage_path"] == f"file:{path}/x" and partition["path_num"] == 1
