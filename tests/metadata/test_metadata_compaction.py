"""The metadata table's own compaction (hudi_engine/metadata/compaction.py), without Java: after
`hoodie.metadata.compact.max.delta.commits` engine commits the `files` file group gets a new HFile base file at
Hudi's instant, the listing still equals storage, and the base file is laid out as Hudi's HFile base writer lays it
out. tests/java_hudi/test_mdt_files.py has Java read and validate such a table."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import (
    assert_index_matches,
    feature_rows,
    files_only_table,
    mdt_listing,
    storage_listing,
    write_rows,
)

from hudi_engine import HudiTable
from hudi_engine.io.hfile import HFileReader
from hudi_engine.location import TableLocation
from hudi_engine.metadata.compaction import (
    BLOOM_META_BLOCK,
    COMPACTION_SUFFIX,
    MAX_KEY_FILE_INFO,
    MIN_KEY_FILE_INFO,
    write_base_file,
    write_base_file_cells,
)
from hudi_engine.metadata.record_index import RECORD_INDEX_PARTITION
from hudi_engine.metadata.records import RecordCodec
from hudi_engine.metadata.table import SCHEMA_FILE_INFO, MetadataTable, metadata_location
from hudi_engine.metadata.writer import MetadataWriter
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write_pipeline import write_table

EVERY_3 = {"hoodie.metadata.compact.max.delta.commits": "3"}


def _mdt(table: Path) -> Timeline:
    return Timeline.load(metadata_location(TableLocation.of(str(table))))


def _base_files(table: Path) -> list[Path]:
    return sorted(p for p in (table / ".hoodie" / "metadata" / "files").iterdir() if p.name.endswith(".hfile"))


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_the_files_partition_compacts_after_max_delta_commits(name: str, mor: bool, tmp_path: Path) -> None:
    table = files_only_table(name, tmp_path, mor=mor)  # Java's table: 5+ delta commits, never compacted
    v6 = TableConfig.load(TableLocation.of(str(table))).version == 6
    first = write_rows(table, feature_rows([1, 51], "e1"), **EVERY_3)
    mdt = _mdt(table)
    (compaction,) = mdt.filter_by([Action.COMMIT], [State.COMPLETED]).instants
    before = [i for i in mdt.filter_by([Action.DELTA_COMMIT], [State.COMPLETED]).instants if i.timestamp != first]
    if v6:  # Hudi 0.15: the latest delta commit's time + 001, before this write's delta commit
        assert compaction.timestamp == max(i.timestamp for i in before) + COMPACTION_SUFFIX < first
    else:  # Hudi 1.x: a new instant; the write's delta commit completes after the compaction
        (delta,) = [i for i in mdt.instants if i.timestamp == first]
        assert delta.completion_time > compaction.completion_time
    assert mdt.read_content(Instant(compaction.timestamp, Action.COMPACTION, State.REQUESTED))  # the plan
    assert mdt_listing(table) == storage_listing(table)

    for n in range(2, 8):  # two more compactions, each before the write after 3 more delta commits
        write_rows(table, feature_rows([n, 50 + n], f"e{n}"), **EVERY_3)
        assert mdt_listing(table) == storage_listing(table)
    compactions = _mdt(table).filter_by([Action.COMMIT], [State.COMPLETED]).instants
    assert len(compactions) == 3
    (newest,) = [p for p in _base_files(table) if p.name.endswith(f"_{compactions[-1].timestamp}.hfile")]
    with HFileReader(newest.read_bytes()) as reader:
        keys = list(reader.keys())
        assert keys == sorted(keys) and b"__all_partitions__" in keys and {b"a", b"b"} <= set(keys)
        assert reader.file_info[MIN_KEY_FILE_INFO] == keys[0] and reader.file_info[MAX_KEY_FILE_INFO] == keys[-1]
        assert reader.meta_block(BLOOM_META_BLOCK)
    assert HudiTable.load(str(table)).read_snapshot().num_rows > 0


def test_the_base_file_is_laid_out_as_javas(tmp_path: Path) -> None:
    """Java's base file written back from its own records: the same records and keys, file info and bloom filter
    bytes (Hudi 0.15 also names the file in `_hoodie_file_name`, which readers ignore)."""
    table = files_only_table("mdt_cow_v6", tmp_path)
    (java,) = _base_files(table)
    with HFileReader(java.read_bytes()) as theirs:
        schema = theirs.file_info[SCHEMA_FILE_INFO].decode()
        codec = RecordCodec(schema, str(java))
        records = [codec.decode(k, v, str(java)) for k, v in theirs.cells()]
        with HFileReader(write_base_file(records, codec, schema, "ours")) as ours:
            assert [codec.decode(k, v, "ours") for k, v in ours.cells()] == records
            assert ours.meta_block(BLOOM_META_BLOCK) == theirs.meta_block(BLOOM_META_BLOCK)
            for key in (SCHEMA_FILE_INFO, MIN_KEY_FILE_INFO, MAX_KEY_FILE_INFO, "bloomFilterTypeCode"):
                assert ours.file_info[key] == theirs.file_info[key]


def test_no_compaction_while_a_data_instant_before_it_is_pending(tmp_path: Path) -> None:
    """A data instant whose delta commit is on the metadata table but which has not completed (a crash): the
    compaction waits (Hudi's rule), the listing stays right."""
    table = files_only_table("mdt_cow_v6", tmp_path)
    t = write_rows(table, feature_rows([1], "e1"))
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    data = Timeline.load(location)
    (commit,) = [i for i in data.instants if i.timestamp == t and i.is_completed]
    Path(data.path_of(commit)).unlink()
    writer = MetadataWriter.decide(location, config, Timeline.load(location)).writer
    assert writer is not None and writer.perform_table_services(1) is None
    assert not _mdt(table).filter_by([Action.COMMIT]).instants


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_an_interrupted_compaction_is_run_again(name: str, tmp_path: Path, monkeypatch) -> None:
    table = files_only_table(name, tmp_path)
    from hudi_engine.metadata import compaction

    def killed(*args):
        raise RuntimeError("killed")

    monkeypatch.setattr(compaction, "_execute", killed)
    with pytest.raises(RuntimeError, match="killed"):
        write_rows(table, feature_rows([1], "e1"), **EVERY_3)
    monkeypatch.undo()
    (pending,) = _mdt(table).pending_compactions().instants
    write_rows(table, feature_rows([2], "e2"), **EVERY_3)  # the next write runs it first
    mdt = _mdt(table)
    assert not mdt.pending_compactions().instants
    assert pending.timestamp in [i.timestamp for i in mdt.filter_by([Action.COMMIT], [State.COMPLETED]).instants]
    assert mdt_listing(table) == storage_listing(table)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    assert MetadataTable.load(location, config, Timeline.load(location)).read_files_partition().partitions == ["a", "b"]


# ---- record_index: compacted at the cell level ------------------------------------------------------------------

def _ri_rows(ids: list[int], value: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids),
                     "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 3}" for i in ids]})


@pytest.mark.parametrize("version", [9, 6])
def test_record_index_cells_merge_as_read_slice_merges_records(tmp_path: Path, version: int) -> None:
    """Deletes, a deleted key written again, updates, and a rolled-back write's blocks: the cell-level merge of every
    record_index file group (`read_slice_cells`) holds exactly `read_slice`'s live records, and its base file is the
    record path's, byte for byte; a compaction then writes those base files and the index still places every key."""
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.write.table.version": str(version),
               "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.record.index.min.filegroup.count": "2",
               "hoodie.metadata.compact.max.delta.commits": "100"}
    write_table(_ri_rows(list(range(1, 41)), "a"), path, options)
    write_table(_ri_rows([2, 5, 41, 42], "b"), path, options)
    write_table(_ri_rows([3, 4, 5, 41], "gone"), path, {**options, "hoodie.datasource.write.operation": "delete"})
    write_table(_ri_rows([3, 41, 43], "back"), path, options)  # deleted keys written again in a later block
    write_table(_ri_rows([6, 44], "rolled"), path, options)
    HudiTable.load(path).rollback()
    location = TableLocation.of(path)
    config = TableConfig.load(location)
    mdt = MetadataTable.load(location, config, Timeline.load(location))
    schema = mdt.record_schema()
    codec = RecordCodec(schema, "test")
    slices = mdt.partition_slices(RECORD_INDEX_PARTITION)
    assert len(slices) == 2 and all(s.log_files for s in slices)
    kinds = {b.block_type.name for fs in slices for b in mdt._valid_blocks(fs)}
    assert kinds == {"HFILE_DATA", "DELETE"}, kinds
    live: set[str] = set()
    for fs in slices:
        records = [r for r in mdt.read_slice(fs).values() if not r.is_deleted]
        cells = mdt.read_slice_cells(fs, schema)
        assert cells is not None
        ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
        assert cells.column("key").to_pylist() == [r.key.encode("utf-8") for r in ordered]
        assert cells.column("value").to_pylist() == [codec.encode(r) for r in ordered]
        assert write_base_file_cells(cells, schema, "cells") == write_base_file(records, codec, schema, "records")
        assert mdt.read_slice_cells(fs, schema.replace("HoodieMetadataRecord", "Other")) is None  # not copied
        live |= {r.key for r in records}
    assert live == {str(i) for i in range(1, 44)} - {"4", "5"}
    write_table(_ri_rows([7], "c"), path, {**options, "hoodie.metadata.compact.max.delta.commits": "1"})
    compacted = [i for i in Timeline.load(metadata_location(location)).instants
                 if i.action is Action.COMMIT and i.is_completed]
    assert compacted
    folder = Path(metadata_location(location).base_path) / RECORD_INDEX_PARTITION
    assert len(list(folder.glob(f"*_{compacted[-1].timestamp}.hfile"))) == 2
    assert assert_index_matches(Path(path)) == len(live)


@pytest.mark.parametrize("service", ["clean", "compact"])
def test_a_clean_or_compaction_compacts_the_metadata_table_by_its_options(service: str, tmp_path: Path) -> None:
    """`hoodie.metadata.compact.max.delta.commits` given to `HudiTable.clean` or `compact` sizes the metadata table's
    compaction that the service runs first, as it does for a write (default 10: none after three commits)."""
    table = tmp_path / "t"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE" if service == "clean" else "MERGE_ON_READ",
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1", "hoodie.clean.automatic": "false",
            "hoodie.compact.inline": "false"}
    for n in range(3):
        write_table(feature_rows([1, 2], f"w{n}"), str(table), opts)
    assert not _mdt(table).filter_by([Action.COMMIT], [State.COMPLETED]).instants
    given = {**opts, "hoodie.metadata.compact.max.delta.commits": "2"}
    t = HudiTable.load(str(table))
    done = t.clean(options=given) if service == "clean" else t.compact(options=given)
    assert done is not None, service
    assert _mdt(table).filter_by([Action.COMMIT], [State.COMPLETED]).instants, "the metadata table was not compacted"
    assert mdt_listing(table) == storage_listing(table)
