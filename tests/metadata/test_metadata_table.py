"""Reading the metadata table's files partition (hudi_engine/metadata/table.py) of tables real Java Hudi wrote: the
listing equals the storage listing of the committed files, and log blocks of a data instant that did not complete
are left out, as Hudi's readers leave them out."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from java_tables import CASES, unzip_feature_table
from metadata_tables import mdt_listing, storage_listing

from hudi_engine.errors import MetadataTableError
from hudi_engine.io.hfile import CELL_COLUMNS
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import MetadataTable, newest_cells
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline

MDT_CASES = [c for c in CASES if c.builder == "mdt"]
# Conformance tables of Hudi 1.x with a metadata table: compacted ones, a rollback, an insert_overwrite, MOR logs.
CONFORMANCE_MDT = ["mor_avrolog_v8_trips_8i3u1d", "mor_avrolog_v9_nonpartitioned_rollback",
                   "cow_v9_txns_simple_overwrite", "mor_avrolog_v9_txns_complex_meta", "cow_v9_txns_nonpart_meta"]


@pytest.mark.parametrize("case", MDT_CASES, ids=lambda c: c.name)
def test_feature_tables_listing_equals_storage(case, tmp_path: Path) -> None:
    table, _ = unzip_feature_table(case, tmp_path)
    listing = mdt_listing(table)
    assert listing == storage_listing(table)
    assert set(listing) == {"a", "b"} and all(listing.values())


@pytest.mark.parametrize("name", CONFORMANCE_MDT)
def test_conformance_tables_listing_equals_storage(unzip_table, name: str) -> None:
    table = unzip_table(name, "v8_v9")
    assert mdt_listing(table) == storage_listing(table)


@pytest.mark.parametrize("case", MDT_CASES, ids=lambda c: c.name)
def test_a_data_commit_that_did_not_complete_is_left_out(case, tmp_path: Path) -> None:
    """The metadata table commits first: with the data table's last commit made pending again (a crash before its
    completed file), its delta commit's block is skipped and the listing is what the commit before it left."""
    table, _ = unzip_feature_table(case, tmp_path)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    timeline = Timeline.load(location)
    last = timeline.completed_commits().instants[-1]
    before = mdt_listing(table)
    commit = timeline.commit_metadata(last)
    Path(timeline.path_of(last)).unlink()
    after = mdt_listing(table)
    written = {(p, s.path.rsplit("/", 1)[-1]) for p, stats in commit.partition_to_write_stats.items() for s in stats
               if s.path}
    assert written and all(f in before[p] for p, f in written)
    assert {(p, f) for p, files in after.items() for f in files} == \
        {(p, f) for p, files in before.items() for f in files} - written
    assert MetadataTable.load(location, config, Timeline.load(location)).valid_instants() >= {
        i.timestamp for i in Timeline.load(location).instants if i.is_completed}


def test_refusals_name_the_table(tmp_path: Path) -> None:
    table, _ = unzip_feature_table(MDT_CASES[0], tmp_path)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    with pytest.raises(MetadataTableError, match="does not list 'files'"):
        MetadataTable.load(location, config.without_metadata_table(), Timeline.load(location))
    files = table / ".hoodie" / "metadata" / "files"
    base = next(files.glob("*.hfile"))
    shutil.copy(base, files / base.name.replace("files-0000-0", "files-0001-0"))
    with pytest.raises(MetadataTableError, match=r"files partition has 2 file groups \(files-0000-0, files-0001-0\)"):
        MetadataTable.load(location, config, Timeline.load(location)).read_files_partition()
    shutil.rmtree(table / ".hoodie" / "metadata")
    with pytest.raises(MetadataTableError, match=f"{table}.*metadata/.hoodie/hoodie.properties is missing"):
        MetadataTable.load(location, config, Timeline.load(location))


@pytest.mark.parametrize("seed", range(6))
def test_newest_cells_merge_as_a_dict_would(seed: int) -> None:
    """`newest_cells` (record_index compaction's merge) against the plain reading of its rule: the base, then each
    log part in order, a data cell setting its key and a delete removing it; many base chunks, keys before, between
    and after them, deletes then re-inserts, parts with no base."""
    rng = random.Random(seed)
    universe = sorted({f"k{rng.randint(0, 3000):05d}".encode() for _ in range(2000)})
    base_keys = sorted(rng.sample(universe, len(universe) // 2)) if seed % 3 else []
    chunk = rng.randint(1, 200)
    base = pa.Table.from_batches([pa.record_batch(
        [pa.array(base_keys[i:i + chunk], pa.binary()), pa.array([b"base" + k for k in base_keys[i:i + chunk]])],
        names=list(CELL_COLUMNS)) for i in range(0, len(base_keys), chunk)],
        schema=pa.schema([(c, pa.binary()) for c in CELL_COLUMNS])) if base_keys or seed % 2 else None
    expected = {k: b"base" + k for k in base_keys}
    logged = []
    for seq in range(rng.randint(0, 6)):
        keys = sorted(rng.sample(universe, rng.randint(0, 300)))
        deleted = rng.random() < 0.4
        values = [None if deleted else f"v{seq}".encode() + k for k in keys]
        logged.append(pa.table({CELL_COLUMNS[0]: pa.array(keys, pa.binary()),
                                CELL_COLUMNS[1]: pa.array(values, pa.binary()),
                                "seq": pa.array([seq] * len(keys), pa.int32()),
                                "deleted": pa.array([deleted] * len(keys))}))
        for k, v in zip(keys, values, strict=True):
            if deleted:
                expected.pop(k, None)
            else:
                expected[k] = v
    merged = newest_cells(base, logged)
    assert merged.column_names == list(CELL_COLUMNS)
    assert list(zip(merged.column(0).to_pylist(), merged.column(1).to_pylist(), strict=True)) == \
        sorted(expected.items())
