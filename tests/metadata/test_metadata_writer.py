"""The engine's commits recorded in a files-only metadata table (hudi_engine/metadata/writer.py), without Java: the
tables are Java's feature tables cut down to the files partition (tests/metadata_tables.py). tests/java_hudi/
test_mdt_files.py has Java read and write after the engine."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_tables import unzip_feature_table
from metadata_tables import (
    MDT_TABLES,
    feature_rows,
    files_only_table,
    mdt_listing,
    storage_listing,
    write_rows,
)

from hudi_engine import HudiTable
from hudi_engine.errors import MetadataTableError
from hudi_engine.io.hfile import HFileReader
from hudi_engine.io.log_block import BlockType
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.metadata.records import RecordCodec
from hudi_engine.metadata.table import metadata_location
from hudi_engine.metadata.writer import MetadataWriter
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.write_pipeline import write_table


def _mdt_timeline(table: Path) -> Timeline:
    return Timeline.load(metadata_location(TableLocation.of(str(table))))


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_commits_are_recorded_and_the_listing_stays_equal_to_storage(name: str, mor: bool, tmp_path: Path) -> None:
    table = files_only_table(name, tmp_path, mor=mor)
    instants = [write_rows(table, feature_rows([1, 2, 51], "e1")),  # updates in a and b, a new key
                write_rows(table, feature_rows([2], "x"), "delete"),
                write_rows(table, feature_rows([61, 63], "ow"), "insert_overwrite"),  # partition a replaced
                write_rows(table, feature_rows([70, 72], "ins"), "insert")]
    location = TableLocation.of(str(table))
    assert TableConfig.load(location).metadata_partitions == ["files"]
    assert mdt_listing(table) == storage_listing(table)
    mdt, data = _mdt_timeline(table), Timeline.load(location)
    for t in instants:  # a delta commit at every data instant, completed before the data commit
        (delta,) = [i for i in mdt.instants if i.timestamp == t]
        (commit,) = [i for i in data.instants if i.timestamp == t]
        assert delta.is_completed and commit.is_completed
        if data.layout.version == 2:
            assert delta.completion_time < commit.completion_time
    assert not Path(location.meta("metadata", ".hoodie", ".temp", instants[-1])).exists()  # markers gone
    ids = set(HudiTable.load(str(table)).read_snapshot().column("id").to_pylist())
    assert {61, 63, 70, 72} <= ids and not {2, 51} & ids  # 51 was in partition a, which the overwrite replaced

    # The last block: one HFile data block at its instant, the records readable with the base file's schema.
    files = Path(location.meta("metadata", "files"))
    newest = max((f for f in files.iterdir() if ".log." in f.name and instants[-1] in _instants_of(f)),
                 key=lambda f: f.name)
    (block,) = read_log_blocks(newest.read_bytes(), file_name=str(newest))
    assert block.block_type == BlockType.HFILE_DATA and block.instant_time == instants[-1]
    codec = RecordCodec(block.schema_json or "", str(newest))
    keys = [codec.decode(k, v, str(newest)).key for k, v in HFileReader(block.content).cells()]
    assert keys == ["__all_partitions__", "b"]  # the insert wrote to partition b only


def _instants_of(log: Path) -> list[str]:
    return [b.instant_time or "" for b in read_log_blocks(log.read_bytes(), file_name=str(log))]


def test_a_data_commit_that_did_not_complete_is_not_listed(tmp_path: Path) -> None:
    """A crash after the metadata delta commit, before the data commit: the listing is the one before."""
    table = files_only_table("mdt_cow_v9", tmp_path)
    before = mdt_listing(table)
    t = write_rows(table, feature_rows([1, 51], "e1"))
    location = TableLocation.of(str(table))
    timeline = Timeline.load(location)
    (commit,) = [i for i in timeline.instants if i.timestamp == t]
    Path(timeline.path_of(commit)).unlink()
    assert mdt_listing(table) == before


def test_other_metadata_partitions_are_refused_and_enable_false_disables_it(tmp_path: Path) -> None:
    full, _ = unzip_feature_table(MDT_TABLES["mdt_cow_v6"], tmp_path / "full")  # files, column stats, bloom, record index
    with pytest.raises(MetadataTableError, match="does not maintain"):
        write_rows(full, feature_rows([1], "e"))
    assert TableConfig.load(TableLocation.of(str(full))).metadata_partitions  # untouched
    table = files_only_table("mdt_cow_v6", tmp_path / "off")
    write_rows(table, feature_rows([1], "e"), **{"hoodie.metadata.enable": "false"})
    assert not TableConfig.load(TableLocation.of(str(table))).metadata_partitions
    decision = MetadataWriter.decide(TableLocation.of(str(full)), TableConfig.load(TableLocation.of(str(full))),
                                     Timeline.load(TableLocation.of(str(full))))
    assert decision.writer is None
    assert not (table / ".hoodie" / "metadata").exists()
    write_rows(table, feature_rows([2], "e"))  # created again with files only (the default: on)
    assert TableConfig.load(TableLocation.of(str(table))).metadata_partitions == ["files"]


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_delete_partition_marks_the_partition_deleted_and_keeps_it(name: str, tmp_path: Path) -> None:
    """delete_partition keeps the metadata table: the partition is marked deleted in the partition list (its files
    stay listed in its own record until the clean deletes them), as Hudi's getPartitionsDeleted records it."""
    table = files_only_table(name, tmp_path)
    before = mdt_listing(table)
    assert {"a", "b"} <= set(before)
    result = HudiTable.load(str(table)).delete_partitions(["a"])
    location = TableLocation.of(str(table))
    assert TableConfig.load(location).metadata_partitions == ["files"]
    assert result.instant_time in [i.timestamp for i in _mdt_timeline(table).instants]
    assert set(mdt_listing(table)) == set(before) - {"a"}
    HudiTable.load(str(table)).clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                              "hoodie.cleaner.fileversions.retained": "1"})
    assert mdt_listing(table) == storage_listing(table)  # partition a's files gone from both
    write_rows(table, feature_rows([101], "back"))  # an odd id: partition a again
    assert "a" in mdt_listing(table) and mdt_listing(table) == storage_listing(table)


@pytest.mark.parametrize("version", ["6", "9"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_loaded_tables_writes_keep_the_listing_through_archival_and_compaction(tmp_path: Path, table_type: str,
                                                                               version: str) -> None:
    """Each write's commit records in the writer its start decided on, and its archival takes that writer as the
    delta commit left it (issue 41): over writes that clean, compact (both tables) and archive, the metadata table
    still lists what storage holds after every one."""
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version,
               "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
               "hoodie.metadata.compact.max.delta.commits": "3", "hoodie.compact.inline": "true",
               "hoodie.compact.inline.max.delta.commits": "2", "hoodie.datasource.write.operation": "upsert"}

    def rows(ids: list[int], ts: int) -> pa.Table:
        return pa.table({"id": ids, "ts": [ts] * len(ids), "part": [f"p{i % 2}" for i in ids],
                         "v": [f"v{i}" for i in ids]})

    write_table(rows(list(range(10)), 0), str(path), options)
    table = HudiTable.load(str(path))
    for k in range(1, 11):
        table.write(rows([k % 10, 100 + k], k), options)
        assert mdt_listing(path) == storage_listing(path), k
    assert TableConfig.load(TableLocation.of(str(path))).metadata_partitions == ["files"]  # kept throughout
    assert len(Timeline.load(TableLocation.of(str(path))).completed_commits()) < 8  # archived
    assert any(i.action.value == "commit" for i in _mdt_timeline(path).instants)  # the metadata table compacted
    ids = sorted(r["id"] for r in HudiTable.load(str(path)).read_snapshot().to_pylist())
    assert ids == [*range(10), *range(101, 111)]


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v9"])
def test_after_a_delta_commit_the_writer_is_the_metadata_table_as_listed(name: str, tmp_path: Path) -> None:
    """A delta commit adds itself to the writer's metadata timeline instead of a listing, and its slices are listed
    again when next used (issue 41): both as a fresh load shows them."""
    from hudi_engine.timeline.commit_metadata import CommitMetadata
    from hudi_engine.timeline.instant import new_instant_time

    table = files_only_table(name, tmp_path)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    data = Timeline.load(location)
    writer = MetadataWriter.decide(location, config, data).writer
    assert writer is not None
    before = writer.file_slice
    done = writer.record_commit(new_instant_time(after=data.latest_time()), CommitMetadata(operation_type="UPSERT"))
    assert done is not None and done.is_completed
    fresh = MetadataWriter.decide(location, config, data).writer
    assert fresh is not None
    assert writer.table.timeline.instants == fresh.table.timeline.instants
    assert writer.table.timeline.layout == fresh.table.timeline.layout
    assert writer.slices == fresh.slices and writer.file_slice != before  # the new log file
