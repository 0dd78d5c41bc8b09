"""The record index of a metadata table (hudi_engine/metadata/record_index.py) read from tables Java Hudi 1.x wrote
(versions 8 and 9) and Hudi 0.15 / 1.2 wrote at version 6: it places exactly the keys the engine's snapshot read
finds, each in the partition and file group that holds it, and each record lies in the file group Java's hash of
its key names."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from java_tables import unzip_feature_table
from metadata_tables import MDT_TABLES

from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import file_group_index
from hudi_engine.metadata.record_index import (
    RECORD_INDEX_PARTITION,
    RecordIndexRecord,
    file_group_count,
    instant_millis,
    latest_slice_keys,
)
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def _with_record_index() -> list[str]:
    """Conformance tables with a record index, but those of Lance base files (which the engine does not read)."""
    out = []
    for z in sorted((CONFORMANCE / "v8_v9").glob("*.zip")):
        names = zipfile.ZipFile(z).namelist()
        if any("metadata/record_index/" in n for n in names) and not any(n.endswith(".lance") for n in names):
            out.append(z.stem)
    return out


def index_of(table: Path) -> tuple[dict[str, RecordIndexRecord], int]:
    """The record index merged (deleted keys dropped), and its file-group count; each record checked to lie in the
    file group its key hashes to."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    mdt = MetadataTable.load(location, config, Timeline.load(location, layout_for(config)))
    slices = mdt.partition_slices(RECORD_INDEX_PARTITION)
    out: dict[str, RecordIndexRecord] = {}
    for i, s in enumerate(slices):
        assert s.file_id == f"record-index-{i:04d}-0"
        for key, record in mdt.read_slice(s).items():
            assert file_group_index(key, len(slices)) == i, (key, s.file_id)
            if not record.is_deleted:
                assert isinstance(record, RecordIndexRecord)
                out[key] = record
    return out, len(slices)


def snapshot_locations(table: Path) -> dict[str, tuple[str, str]]:
    """Where the engine's read finds each live key: its partition and file group. A key an INSERT wrote twice (Java's
    insert does not look keys up) is in several file groups; the index holds the newest."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    found: dict[str, tuple[str, str, str]] = {}
    for partition, file_id, instant, keys in latest_slice_keys(location, Timeline.load(location, layout_for(config))):
        for k in keys:
            if k not in found or found[k][2] < instant:
                found[k] = (partition, file_id, instant)
    return {k: (p, f) for k, (p, f, _) in found.items()}


def assert_index_matches(table: Path) -> int:
    index, _ = index_of(table)
    assert {k: (r.partition, r.file_id) for k, r in index.items()} == snapshot_locations(table)
    return len(index)


@pytest.mark.parametrize("name", _with_record_index())
def test_javas_record_index_places_every_live_key(unzip_table, name: str) -> None:
    table = unzip_table(name, "v8_v9")
    index, groups = index_of(table)
    assert groups == 10  # hoodie.metadata.record.index.min.filegroup.count
    assert index
    assert assert_index_matches(table) == len(index)


@pytest.mark.parametrize("name", ["mdt_cow_v6", "mdt_cow_v6_hudi1", "mdt_cow_v9"])
def test_feature_tables_record_index(tmp_path: Path, name: str) -> None:
    table, _ = unzip_feature_table(MDT_TABLES[name], tmp_path)
    assert assert_index_matches(table) > 0


def test_records_round_trip_both_file_id_encodings() -> None:
    for file_id in ("25790a4d-0f6b-4a21-bb7e-4cd62f5cbe2f-0", "25790a4d-0f6b-4a21-bb7e-4cd62f5cbe2f-12", "files-1"):
        r = RecordIndexRecord("k1", "p=a", file_id, 1772922289244)
        datum = r.datum()
        assert datum["recordIndexMetadata"]["fileIdEncoding"] == (1 if file_id == "files-1" else 0)
        assert RecordIndexRecord.from_datum("k1", datum, "here") == r


def test_instant_time_is_epoch_millis_in_the_timeline_zone() -> None:
    # Java's fixture: 20260307162449244 written by a JVM in UTC-6 gives 1772922289244; in UTC it is 6 hours less.
    assert instant_millis("20260307162449244", local=False) == 1772922289244 - 6 * 3600 * 1000


def test_file_group_count_as_hudi_estimates_it() -> None:
    sizing = {"min_count": 10, "max_count": 10000, "max_file_group_size": 1 << 30, "growth_factor": 2.0}
    assert file_group_count(0, **sizing) == 10
    assert file_group_count(1_000_000, **sizing) == 10
    assert file_group_count(200_000_000, **sizing) == 18
