"""A metadata table created by the engine (hudi_engine/metadata/initialization.py), without Java: a write given
`hoodie.metadata.enable=true` on a table without one initialises `files` from a listing, at Hudi's init instant,
and later writes keep and compact it. tests/java_hudi/test_mdt_files.py has Java read, validate and write it."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import MDT_TABLES, feature_rows, files_only_table, mdt_listing, storage_listing, write_rows

from hudi_engine import HudiTable
from hudi_engine.errors import MetadataTableDisabled, MetadataTableError
from hudi_engine.io.hfile import HFileReader
from hudi_engine.io.log_block import BlockType
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.initialization import INIT_SUFFIX, record_schema
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, State
from hudi_engine.write_pipeline import write_table

ON = {"hoodie.metadata.enable": "true"}
OFF = {"hoodie.metadata.enable": "false"}


def _options(version: int, table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.write.table.version": str(version), "hoodie.datasource.write.table.type": table_type}


def _rows(ids: list[int], value: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids), "ts": pa.array([1] * len(ids),
                     pa.int64()), "p": [f"p{i % 3}" for i in ids]})


def _mdt(table: Path) -> Timeline:
    return Timeline.load(metadata_location(TableLocation.of(str(table))))


def _partitions(table: Path) -> list[str]:
    return TableConfig.load(TableLocation.of(str(table))).metadata_partitions


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_new_table_gets_a_metadata_table_equal_to_storage(version: int, table_type: str, tmp_path: Path) -> None:
    table = tmp_path / "t"
    opts = _options(version, table_type)
    first = write_table(_rows([1, 2, 3], "a"), str(table), {**opts, **ON}).instant_time
    assert _partitions(table) == ["files"]
    init = SOLO_COMMIT_TIMESTAMP + (INIT_SUFFIX if version == 6 else "000")
    mdt = _mdt(table)
    assert [(i.timestamp, i.action, i.state) for i in mdt.instants] == [
        (init, Action.DELTA_COMMIT, State.COMPLETED), (first, Action.DELTA_COMMIT, State.COMPLETED)]
    assert mdt_listing(table) == storage_listing(table)
    location = metadata_location(TableLocation.of(str(table)))
    config = TableConfig.load(location)
    assert (config.name, config.table_type, config.base_file_format, config.version) == (
        "t_metadata", "MERGE_ON_READ", "HFILE", version)
    files = table / ".hoodie" / "metadata" / "files"
    (created,) = [f for f in files.iterdir() if f.name == f".files-0000-0_{init}.log.1_0-0-0"]
    (block,) = read_log_blocks(created.read_bytes(), file_name=str(created))
    assert block.block_type == BlockType.DELETE and block.instant_time == init
    (base,) = [f for f in files.iterdir() if f.name.endswith(f"_{init}.hfile")]
    with HFileReader(base.read_bytes()) as reader:
        assert reader.file_info["schema"].decode() == record_schema(version)
        assert list(reader.keys()) == [b"__all_partitions__"]  # a new table: no partition yet

    for n in range(4):  # later writes keep it, and compact it every 3 delta commits
        write_table(_rows([n, 10 + n], f"w{n}"), str(table), {**opts, "hoodie.metadata.compact.max.delta.commits": "3"})
        assert mdt_listing(table) == storage_listing(table)
    assert _mdt(table).filter_by([Action.COMMIT], [State.COMPLETED]).instants
    assert HudiTable.load(str(table)).read_snapshot().num_rows == 8  # ids 0-3, 10-13


@pytest.mark.parametrize("version", [6, 9])
def test_an_existing_table_is_initialised_from_its_listing(version: int, tmp_path: Path) -> None:
    """A table written with the metadata table off gets one on its next write that leaves the key out (Hudi's
    default, true), as Hudi's writer initialises it."""
    table = tmp_path / "t"
    opts = _options(version, "MERGE_ON_READ")
    write_table(_rows([1, 2, 3, 4], "a"), str(table), {**opts, **OFF})
    latest = write_table(_rows([1, 5], "b"), str(table), {**opts, **OFF}).instant_time  # log files
    assert not _partitions(table) and not (table / ".hoodie" / "metadata").exists()  # off: none
    write_table(_rows([6], "c"), str(table), opts)
    init = _mdt(table).instants[0].timestamp
    assert init == (latest + INIT_SUFFIX if version == 6 else SOLO_COMMIT_TIMESTAMP + "000")
    assert mdt_listing(table) == storage_listing(table)
    assert {"p0", "p1", "p2"} == set(mdt_listing(table))


def test_a_metadata_table_it_cannot_keep_is_rebuilt_with_files_only(tmp_path: Path) -> None:
    """Java's version-6 metadata table with column stats and bloom filters (besides its record index): refused by
    name (the engine keeps them on versions 8 and 9 only; they would go stale); deleted by a write with
    hoodie.metadata.enable=false, then created again with `files` only when a write asks for the metadata table."""
    from java_tables import unzip_feature_table

    table, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v6"], tmp_path)
    with pytest.raises(MetadataTableError, match=r"index partitions \['bloom_filters', 'column_stats'\].*version 6"):
        write_rows(table, feature_rows([1, 51], "e1"), **ON)
    with pytest.warns(MetadataTableDisabled, match="hoodie.metadata.enable=false"):
        write_rows(table, feature_rows([1, 51], "e1"), **{"hoodie.metadata.enable": "false"})
    write_rows(table, feature_rows([2], "e2"), **ON)
    assert _partitions(table) == ["files"]
    assert sorted(p.name for p in (table / ".hoodie" / "metadata").iterdir() if not p.name.startswith(".")) == ["files"]
    assert mdt_listing(table) == storage_listing(table)


def test_a_crashed_initialisation_is_started_over(tmp_path: Path, monkeypatch) -> None:
    """Killed before hoodie.properties lists the metadata table: readers never see it, the next write asking for
    it deletes what was left and initialises it again."""
    table = files_only_table("mdt_cow_v9", tmp_path)
    with pytest.warns(MetadataTableDisabled):
        write_rows(table, feature_rows([1], "off"), **{"hoodie.metadata.enable": "false"})

    def killed(self, location):
        raise RuntimeError("killed")

    with monkeypatch.context() as m:
        m.setattr(TableConfig, "save", killed)
        with pytest.raises(RuntimeError, match="killed"):
            write_rows(table, feature_rows([2], "e2"), **ON)
    assert (table / ".hoodie" / "metadata" / "files").exists() and not _partitions(table)
    write_rows(table, feature_rows([3], "e3"), **ON)
    assert _partitions(table) == ["files"]
    assert mdt_listing(table) == storage_listing(table)
