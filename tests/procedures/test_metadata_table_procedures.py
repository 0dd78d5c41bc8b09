"""The metadata-table procedures (hudi_engine/procedures/metadata_table.py) without Spark: created, opened, listed,
validated against storage and deleted, on tables of versions 6 and 9; refusals as Hudi words them.
tests/java_hudi/test_mdt_files.py has Java validate the metadata tables the engine creates."""
from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from metadata_tables import mdt_listing, storage_listing

from hudi_engine.errors import ConfigError, MetadataTableDisabled
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import metadata_location
from hudi_engine.procedures import call
from hudi_engine.table_config import TableConfig
from hudi_engine.write_pipeline import write_table


def _table(tmp_path: Path, version: int, table_type: str = "MERGE_ON_READ") -> str:
    """A table written with the metadata table off (the procedures create it)."""
    path = str(tmp_path / f"t{version}")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.metadata.enable": "false",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.write.table.version": str(version), "hoodie.datasource.write.table.type": table_type}
    for ids, value in (([1, 2, 3, 4], "a"), ([2, 5], "b")):
        write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids),
                              "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids]}),
                    path, {**opts, "hoodie.datasource.write.operation": "upsert"})
    return path


def _rows(name: str, path: str, **args: object) -> list[dict]:
    return call(name, path, **args).to_pylist()


@pytest.mark.parametrize("version", [6, 9])
def test_created_listed_validated_and_deleted(tmp_path: Path, version: int) -> None:
    path = _table(tmp_path, version)
    folder = metadata_location(TableLocation.of(path)).base_path
    with pytest.raises(ConfigError, match="Metadata Table not enabled/initialized"):
        call("show_metadata_table_partitions", path)

    (created,) = _rows("create_metadata_table", path)
    assert created["result"].startswith(f"Created Metadata Table in {folder} (duration=")
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == ["files"]
    assert mdt_listing(Path(path)) == storage_listing(Path(path))

    assert [r["partition"] for r in _rows("show_metadata_table_partitions", path)] == ["p0", "p1"]
    files = [r["file_path"] for r in _rows("show_metadata_table_files", path, partition="p0")]
    assert files == sorted(storage_listing(Path(path))["p0"])
    assert len(_rows("show_metadata_table_files", path, partition="p0", limit=1)) == 1
    assert _rows("validate_metadata_table_files", path) == []  # nothing differs
    verbose = _rows("validate_metadata_table_files", path, verbose=True)
    assert sorted((r["partition"], r["file_name"]) for r in verbose) == sorted(
        (p, f) for p, names in storage_listing(Path(path)).items() for f in names)
    assert all(r["is_present_in_fs"] and r["is_present_in_metadata"] and r["fs_size"] == r["metadata_size"] > 0
               for r in verbose)
    stats = {r["stat_key"]: r["stat_value"] for r in _rows("show_metadata_table_stats", path)}
    assert stats["partitionCount"] == "2" and stats["files.baseFileCount"] == "1"
    assert int(stats["files.totalBaseFileSizeInBytes"]) > 0

    with pytest.raises(ConfigError, match=r"Metadata directory \(.*\) not empty"):
        call("create_metadata_table", path)
    (opened,) = _rows("init_metadata_table", path, read_only=True)
    assert opened["result"].startswith(f"Opened Metadata Table in {folder}")

    # A file storage holds that no commit made (a failed write's leftover): listed as storage only.
    stray = Path(path) / "p0" / f"{'0' * 8}-0000-0000-0000-000000000000-0_0-1-1_20200101000000000.parquet"
    stray.write_bytes(b"x" * 7)
    (row,) = _rows("validate_metadata_table_files", path)
    assert row == {"partition": "p0", "file_name": stray.name, "is_present_in_fs": True,
                   "is_present_in_metadata": False, "fs_size": 7, "metadata_size": 0}
    stray.unlink()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (deleted,) = _rows("delete_metadata_table", path)
    assert deleted["result"] == f"Deleted Metadata Table at ',{folder}'"  # Hudi's answer, its comma too
    assert any(issubclass(w.category, MetadataTableDisabled) for w in caught)
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == []
    assert not Path(folder).exists()
    with pytest.raises(ConfigError, match=r"Metadata directory \(.*\) does not exist"):
        call("init_metadata_table", path)


def test_init_builds_the_files_partition_a_table_lacks(tmp_path: Path) -> None:
    path = _table(tmp_path, 9, "COPY_ON_WRITE")
    Path(metadata_location(TableLocation.of(path)).base_path).mkdir(parents=True)
    (row,) = _rows("init_metadata_table", path)
    assert row["result"].startswith("Initialized Metadata Table in ")
    assert mdt_listing(Path(path)) == storage_listing(Path(path))


def test_column_stats_of_a_java_built_metadata_table(unzip_table) -> None:
    """The column_stats partition Hudi 1.2 built (version 9, partitioned, clustered): the latest base files' stats
    per column, sorted by column and file; a partition argument narrows them; the overlap view stays refused."""
    path = str(unzip_table("cow_v9_txns_simple_meta", "v8_v9"))
    got = _rows("show_metadata_table_column_stats", path, targetColumns="txn_id,fee_amount,is_international")
    latest = {r["data_file"].rsplit("/", 1)[-1] for r in _rows("show_fsview_latest", path, path_regex="*")}
    assert {r["file_name"] for r in got} == latest and len(got) == 3 * len(latest)
    assert [(r["column_name"], r["file_name"]) for r in got] == sorted((r["column_name"], r["file_name"]) for r in got)
    one = next(r for r in got if r["column_name"] == "txn_id" and r["file_name"].startswith("cfac0ac4"))
    ids = pq.read_table(next(Path(path).rglob(one["file_name"])), columns=["txn_id"]).column(0).to_pylist()
    assert (one["min_value"], one["max_value"], one["null_number"]) == (min(ids), max(ids), 0)
    fee = next(r for r in got if r["column_name"] == "fee_amount" and r["file_name"] == one["file_name"])
    assert fee["min_value"].startswith("[") and fee["max_value"].endswith("]")  # a decimal's unscaled bytes
    us = _rows("show_metadata_table_column_stats", path, partition="region=us", targetColumns="txn_id")
    assert us and {r["file_name"] for r in us} < {r["file_name"] for r in got}
    assert _rows("show_metadata_table_column_stats", path) == []  # no targetColumns: Hudi looks up "" too
    with pytest.raises(ConfigError, match="CALL show_metadata_column_stats_overlap: refused"):
        call("show_metadata_column_stats_overlap", path, targetColumns="txn_id")
