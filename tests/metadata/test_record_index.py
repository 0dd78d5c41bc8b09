"""The record index of a metadata table (hudi_engine/metadata/record_index.py) read from tables Java Hudi 1.x wrote
(versions 8 and 9) and Hudi 0.15 / 1.2 wrote at version 6: it places exactly the keys the engine's snapshot read
finds, each in the partition and file group that holds it, and each record lies in the file group Java's hash of
its key names."""
from __future__ import annotations

import json
import uuid
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from java_tables import unzip_feature_table
from metadata_tables import (
    MDT_TABLES,
    WRITE_OPTIONS,
    as_merge_on_read,
    assert_index_matches,
    feature_rows,
    index_of,
    mdt_listing,
    stats_only,
    storage_listing,
    write_rows,
)

from hudi_engine import HudiTable
from hudi_engine.errors import MetadataTableError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import file_group_index
from hudi_engine.metadata.record_index import (
    LOCATION_COLUMNS,
    RECORD_INDEX_PARTITION,
    RecordIndexRecord,
    file_group_count,
    instant_millis,
)
from hudi_engine.metadata.table import MetadataTable, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


def _with_record_index() -> list[str]:
    """Conformance tables with a record index, but those of Lance base files (which the engine does not read)."""
    out = []
    for z in sorted((CONFORMANCE / "v8_v9").glob("*.zip")):
        names = zipfile.ZipFile(z).namelist()
        if any("metadata/record_index/" in n for n in names) and not any(n.endswith(".lance") for n in names):
            out.append(z.stem)
    return out


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


# ---- kept through the engine's writes and services --------------------------------------------------------------

KEEP = ("files", "column_stats", "partition_stats", "bloom_filters", "record_index")
V6_KEEP = ("files", "record_index")
CLEAN_ONE = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}
COMPACT_OFTEN = {"hoodie.metadata.compact.max.delta.commits": "2"}


def index_table(tmp_path: Path, name: str, *, mor: bool) -> Path:
    """Java's feature table `name` with its record index (secondary indexes dropped); with `mor`, MERGE_ON_READ."""
    table, _ = unzip_feature_table(MDT_TABLES[name], tmp_path)
    # version 6: the engine keeps no stats there
    stats_only(table, KEEP if TableConfig.load(TableLocation.of(str(table))).version >= 8 else V6_KEEP)
    if mor:
        as_merge_on_read(table)
    return table


def _kept(table: Path) -> int:
    config = TableConfig.load(TableLocation.of(str(table)))
    assert RECORD_INDEX_PARTITION in config.metadata_partitions, config.metadata_partitions
    assert mdt_listing(table) == storage_listing(table)
    return assert_index_matches(table)


@pytest.mark.parametrize("name", ["mdt_cow_v9", "mdt_cow_v6"])
@pytest.mark.parametrize("mor", [False, True], ids=["cow", "mor"])
def test_kept_through_writes_and_services(tmp_path: Path, name: str, mor: bool) -> None:
    table = index_table(tmp_path, name, mor=mor)
    n = _kept(table)
    write_rows(table, feature_rows([1, 2, 51], "e1"), **COMPACT_OFTEN)  # updates and a new key
    assert _kept(table) == n + 1
    write_rows(table, feature_rows([2], "gone"), "delete", **COMPACT_OFTEN)
    assert _kept(table) == n
    write_rows(table, feature_rows([2, 52], "back"), **COMPACT_OFTEN)  # a deleted key written again
    assert _kept(table) == n + 2
    if mor:
        assert HudiTable.load(str(table)).compact() is not None
        _kept(table)
    cleaned = HudiTable.load(str(table)).clean(options=CLEAN_ONE)
    assert cleaned is not None
    _kept(table)
    clustered = HudiTable.load(str(table)).cluster(options={**WRITE_OPTIONS, "hoodie.clustering.plan.strategy."
                                                             "sort.columns": "id"})
    assert clustered is not None
    _kept(table)  # every key moved to the new file groups
    last = write_rows(table, feature_rows([4, 60], "e3"), **COMPACT_OFTEN)
    assert _kept(table) == n + 3
    rolled = HudiTable.load(str(table)).rollback()
    assert rolled.rolled_back.timestamp == last
    assert _kept(table) == n + 2
    location = TableLocation.of(str(table))
    compacted = [i.timestamp for i in Timeline.load(metadata_location(location)).instants
                 if i.action.value == "commit" and i.is_completed]
    assert compacted, "the metadata table compacted"
    folder = Path(metadata_location(location).base_path) / "record_index"
    assert list(folder.glob(f"*_{compacted[-1]}.hfile"))  # its file groups with log files compacted too


@pytest.mark.parametrize("name", ["mdt_cow_v9", "mdt_cow_v6"])
def test_delete_partition_deletes_its_keys(tmp_path: Path, name: str) -> None:
    table = index_table(tmp_path, name, mor=False)
    n = _kept(table)
    gone = {k for k, r in index_of(table)[0].items() if r.partition.endswith("a")}
    assert gone
    HudiTable.load(str(table)).delete_partitions(["a"])  # its files stay listed until cleaned
    assert assert_index_matches(table) == n - len(gone)
    write_rows(table, feature_rows([101], "back"))  # an odd id: partition a again
    assert assert_index_matches(table) == n - len(gone) + 1


@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table"])
def test_overwrites_delete_the_keys_they_replace(tmp_path: Path, operation: str) -> None:
    table = index_table(tmp_path, "mdt_cow_v9", mor=False)
    _kept(table)
    write_rows(table, feature_rows([1, 3, 71], "over"), operation)  # partition a only
    index, _ = index_of(table)
    assert _kept(table) == len(index)
    assert {k for k, r in index.items() if r.partition == "p=a" or r.partition == "a"} >= {"1", "3", "71"}


# ---- built on request, dropped on request --------------------------------------------------------------------------

def _rows(ids: list[int], value: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids),
                     "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids]})


def _options(table_type: str, version: int = 9, partitioned: bool = True) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p" if partitioned else "",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type,
            "hoodie.write.table.version": str(version)}


@pytest.mark.parametrize(("table_type", "version", "partitioned"), [
    ("COPY_ON_WRITE", 9, True), ("MERGE_ON_READ", 9, True), ("MERGE_ON_READ", 8, False),
    ("COPY_ON_WRITE", 6, True), ("MERGE_ON_READ", 6, False)])
def test_built_on_request_kept_then_dropped(tmp_path: Path, table_type: str, version: int,
                                            partitioned: bool) -> None:
    """`hoodie.metadata.global.record.level.index.enable=true` (or its 0.x name) builds record_index from the latest
    slices' keys, with the metadata table when there is none; later writes keep it; `false` drops it."""
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = _options(table_type, version, partitioned)
    write_table(_rows([1, 2, 3, 4], "a"), path, options)
    write_table(_rows([2, 5], "b"), path, options)
    write_table(_rows([3, 6], "c"), path, {**options, "hoodie.metadata.record.index.enable": "true"})
    config = TableConfig.load(TableLocation.of(path))
    assert RECORD_INDEX_PARTITION in config.metadata_partitions
    assert assert_index_matches(Path(path)) == 6
    index, groups = index_of(Path(path))
    assert groups == 10
    write_table(_rows([7, 8], "d"), path, options)
    write_table(_rows([1], "e"), path, {**options, "hoodie.datasource.write.operation": "delete"})
    assert assert_index_matches(Path(path)) == 7
    if version >= 8:
        defs = json.loads(Path(path, config.get("hoodie.table.index.defs.path")).read_text())["indexDefinitions"]
        assert defs["record_index"]["indexOptions"] == {"isPartitioned": "false"}
    write_table(_rows([9], "f"), path, {**options, "hoodie.metadata.global.record.level.index.enable": "false"})
    config = TableConfig.load(TableLocation.of(path))
    assert config.metadata_partitions == ["files"]
    assert not (Path(metadata_location(TableLocation.of(path)).base_path) / "record_index").exists()
    assert mdt_listing(Path(path)) == storage_listing(Path(path))


def test_file_group_count_follows_the_options(tmp_path: Path) -> None:
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    write_table(_rows([1, 2, 3], "a"), path, {**_options("COPY_ON_WRITE"),
                                              "hoodie.metadata.global.record.level.index.enable": "true",
                                              "hoodie.metadata.record.index.min.filegroup.count": "3"})
    assert index_of(Path(path))[1] == 3
    assert assert_index_matches(Path(path)) == 3


def test_a_table_without_meta_fields_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from hudi_engine.errors import MetadataTableError
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = {**_options("COPY_ON_WRITE"), "hoodie.populate.meta.fields": "false"}
    write_table(_rows([1, 2], "a"), path, options)
    before = sorted(p.name for p in Path(path).rglob("*.parquet"))
    with pytest.raises(MetadataTableError, match="record index needs the meta fields"):
        write_table(_rows([3], "b"), path, {**options, "hoodie.metadata.record.index.enable": "true"})
    assert sorted(p.name for p in Path(path).rglob("*.parquet")) == before
    assert TableConfig.load(TableLocation.of(path)).metadata_partitions == ["files"]  # the first write's, no index


# ---- hoodie.index.type=RECORD_INDEX -----------------------------------------------------------------------------

def _snapshot(path: str) -> dict[int, tuple[str, str]]:
    """id -> (v, the partition the row is stored in)."""
    rows = HudiTable.load(path).read_snapshot().select(["id", "v", "_hoodie_partition_path"]).to_pylist()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "a key in two places"
    return {r["id"]: (r["v"], r["_hoodie_partition_path"].rsplit("=", 1)[-1]) for r in rows}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("version", [9, 6])
def test_record_index_tags_globally(tmp_path: Path, table_type: str, version: int) -> None:
    """RECORD_INDEX builds the record index when the table has none and tags with it: an update finds its file
    group, a key written with another partition stays where it lives (hoodie.record.index.update.partition.path
    false, Hudi's default) or moves (true), deletes find their keys; no key is ever in two places."""
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = _options(table_type, version)
    write_table(_rows([1, 2, 3, 4], "a"), path, options)
    rli = {**options, "hoodie.index.type": "RECORD_INDEX"}
    write_table(_rows([2, 5], "b"), path, rli)  # builds the index, then tags with it
    assert RECORD_INDEX_PARTITION in TableConfig.load(TableLocation.of(path)).metadata_partitions
    assert _snapshot(path) == {1: ("a", "p1"), 2: ("b", "p0"), 3: ("a", "p1"), 4: ("a", "p0"), 5: ("b", "p1")}
    moved = _rows([3, 6], "c").set_column(3, "p", pa.array(["p0", "p0"]))  # 3 lives in p1
    write_table(moved, path, rli)
    assert _snapshot(path)[3] == ("c", "p1")  # written where it lives
    write_table(_rows([3], "d").set_column(3, "p", pa.array(["p0"])), path,
                {**rli, "hoodie.record.index.update.partition.path": "true"})
    assert _snapshot(path)[3] == ("d", "p0")  # moved
    write_table(_rows([1, 3, 99], "x").set_column(3, "p", pa.array(["p0", "p1", "p0"])), path,
                {**rli, "hoodie.datasource.write.operation": "delete"})
    assert set(_snapshot(path)) == {2, 4, 5, 6}
    assert assert_index_matches(Path(path)) == 4


def test_record_index_reads_only_the_batchs_file_groups(tmp_path: Path, monkeypatch) -> None:
    """An upsert with RECORD_INDEX tags by reading the record index's file groups its keys hash to, and no data
    file's keys or footers (SIMPLE's and BLOOM's reads)."""
    from hudi_engine.write import tagging
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = {**_options("COPY_ON_WRITE"), "hoodie.index.type": "RECORD_INDEX"}
    write_table(_rows(list(range(1, 200)), "a"), path, options)
    read_groups: list[str] = []
    real = MetadataTable.slice_locations

    def spy(self, file_slice, keys):  # type: ignore[no-untyped-def]
        assert file_slice.partition_path == RECORD_INDEX_PARTITION
        read_groups.append(file_slice.file_id)
        return real(self, file_slice, keys)

    monkeypatch.setattr(MetadataTable, "slice_locations", spy)
    for name in ("read_record_keys", "read_footer", "read_base_file"):
        monkeypatch.setattr(tagging, name, lambda *a, **k: pytest.fail("tagging read a data file"))
    write_table(_rows([7, 150], "b"), path, options)
    monkeypatch.undo()
    _, groups = index_of(Path(path))
    assert set(read_groups) == {f"record-index-{file_group_index(k, groups):04d}-0" for k in ("7", "150")}
    assert _snapshot(path)[150] == ("b", "p0") and len(_snapshot(path)) == 199


def test_record_index_lookup_decodes_each_distinct_value_once(tmp_path: Path, monkeypatch) -> None:
    """Hudi's HFile values leave the key out, so one file group's keys of one commit share their value: the lookup
    decodes each distinct value once, not each key (one Avro decode per key was most of a 10,000-key lookup)."""
    from hudi_engine.metadata.records import RecordCodec
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    options = {**_options("MERGE_ON_READ"), "hoodie.metadata.record.index.enable": "true"}
    write_table(_rows(list(range(300)), "a"), path, options)
    write_table(_rows(list(range(0, 300, 7)), "b"), path, {**options, "hoodie.index.type": "RECORD_INDEX"})
    location = TableLocation.of(path)
    mdt = MetadataTable.load(location, TableConfig.load(location), Timeline.load(location))
    decoded: list[bytes] = []
    real = RecordCodec.decode_datum

    def spy(self, key, value, where):  # type: ignore[no-untyped-def]
        decoded.append(value)
        return real(self, key, value, where)

    monkeypatch.setattr(RecordCodec, "decode_datum", spy)
    found = mdt.record_locations(pa.array([str(i) for i in range(400)], pa.string()))
    assert sorted(map(int, found.column("key").to_pylist())) == list(range(300))
    assert len(set(decoded)) == 2 and len(decoded) <= 2 * 10  # two data file groups; per index file group
    placed = dict(zip(found.column("key").to_pylist(), found.column("partition").to_pylist(), strict=True))
    assert {k: p.rsplit("=", 1)[-1] for k, p in placed.items()} == {str(i): f"p{i % 2}" for i in range(300)}


def test_record_index_with_the_index_turned_off_is_refused(tmp_path: Path) -> None:
    from hudi_engine.errors import MetadataTableError
    from hudi_engine.write_pipeline import write_table
    path = str(tmp_path / "t")
    write_table(_rows([1], "a"), path, _options("COPY_ON_WRITE"))
    with pytest.raises(MetadataTableError, match="RECORD_INDEX tags with the metadata table's record index"):
        write_table(_rows([2], "b"), path, {**_options("COPY_ON_WRITE"), "hoodie.index.type": "RECORD_INDEX",
                                            "hoodie.metadata.record.index.enable": "false"})


@pytest.mark.parametrize("name", ["cow_v9_txns_simple_meta", "mor_avrolog_v8_trips_8i3u1d"])
def test_delete_blocks_are_javas_bytes(unzip_table, name: str) -> None:
    """The delete block the engine writes for keys the index loses has the bytes of the one Java 1.x wrote for the
    same keys (Java 0.15's too, checked by hand: tests/java_hudi/test_mdt_record_index.py)."""
    import pyarrow as pa

    from hudi_engine.io.log_block import BlockType, build_delete_block, delete_block_keys
    from hudi_engine.io.log_format import read_log_blocks
    from hudi_engine.metadata.record_index import keys_table

    table = unzip_table(name, "v8_v9")
    compared = 0
    for log in sorted((table / ".hoodie" / "metadata" / "record_index").glob(".*log*")):
        for block in read_log_blocks(pa.BufferReader(log.read_bytes()), file_name=str(log)):
            if block.block_type != BlockType.DELETE:
                continue
            keys = delete_block_keys(block).column("record_key").to_pylist()
            if keys:
                ours = build_delete_block(keys_table([RecordIndexRecord.delete(k) for k in keys]),
                                          block.instant_time or "", block.schema_json or "")
                assert ours.content == block.content, log.name
                compared += 1
    assert compared > 0


@pytest.mark.parametrize("version", [6, 8, 9])
def test_the_fast_encoding_is_fastavros(version: int) -> None:
    from hudi_engine.metadata.initialization import record_schema
    from hudi_engine.metadata.records import RecordCodec

    codec = RecordCodec(record_schema(version), "here")
    for r in (RecordIndexRecord("k1", "p=a", "25790a4d-0f6b-4a21-bb7e-4cd62f5cbe2f-7", 1772922289244),
              RecordIndexRecord("k2", "", "8e3e2b51-77a4-4cc4-a2d6-d9e0a4b8d4f1", 0),
              RecordIndexRecord("k3", "été/中", "raw-file-id", -1)):
        assert codec.encode(r) == codec._encode(r)
    assert codec._fast[RecordIndexRecord] is not None


def test_file_group_indexes_are_javas_hash_of_each_key() -> None:
    import random
    import string

    from hudi_engine.metadata.column_stats import file_group_indexes

    rng = random.Random(37)
    keys = ["".join(rng.choice(string.printable + "éß中") for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    keys += ["polygenelubricants", "TXN-001", ""]  # the first hashes to Integer.MIN_VALUE
    for count in (1, 2, 10, 10000):
        assert file_group_indexes(keys, count).tolist() == [file_group_index(k, count) for k in keys]
    beyond = ["a\U0001F600b", "x"]  # two UTF-16 units for one character
    assert file_group_indexes(beyond, 10).tolist() == [file_group_index(k, 10) for k in beyond]


# ---- a commit's records as columns, against the per-key sets they replace ------------------------------------------

_T, _PREV = "20260101000000000", "20251231000000000"


def _old_records_for_commit(commit, millis: int, bases: dict, logs: dict, index: dict, replaced: dict
                            ) -> list[RecordIndexRecord]:
    """`records_for_commit` as it was written per key, with sets (the semantics the columns keep)."""
    written: dict[str, RecordIndexRecord] = {}
    deleted: set[str] = set()
    logged = []
    for partition, stats in commit.partition_to_write_stats.items():
        for stat in stats:
            name = stat.path.rsplit("/", 1)[-1]
            if name.startswith("."):
                data_keys, delete_keys = logs[(partition, name)]
                logged.append((partition, stat.file_id, set(data_keys), set(delete_keys)))
                continue
            rewrite = stat.prev_commit != "null"
            if rewrite and stat.num_inserts == 0 and stat.num_deletes == 0:
                continue
            keys = set(bases[(partition, name)])
            previous = set(bases.get((partition, f"{stat.file_id}_0-1-0_{_PREV}.parquet"), [])) if rewrite else set()
            for k in keys - previous:
                written[k] = RecordIndexRecord(k, partition, stat.file_id, millis)
            deleted.update(previous - keys)
    for partition, file_id, data_keys, delete_keys in logged:
        for k in data_keys:
            if index.get(k) != (partition, file_id):
                written[k] = RecordIndexRecord(k, partition, file_id, millis)
        for k in delete_keys - data_keys:
            if index.get(k) == (partition, file_id):
                deleted.add(k)
    if commit.operation_type == "INSERT_OVERWRITE":
        for partition, file_ids in commit.partition_to_replace_file_ids.items():
            for file_id in file_ids:
                deleted.update(replaced[(partition, file_id)])
    out = dict(written)
    for k in deleted:
        out.setdefault(k, RecordIndexRecord.delete(k))
    return [out[k] for k in sorted(out, key=lambda k: k.encode("utf-8"))]


def _random_commit(rng, keys: list[str]):
    """A random commit over three partitions: rewritten file groups (inserts, deletes, keys moved between file
    groups and partitions), new file groups, log files (keys the index places there or elsewhere) and replaced file
    groups; the files' keys, the index and the replaced keys beside it."""
    from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat

    rng.shuffle(keys)
    partitions = ["p=1", "été/中", ""]
    bases: dict = {}
    logs: dict = {}
    index: dict = {}
    replaced: dict = {}
    commit = CommitMetadata(operation_type=rng.choice(["UPSERT", "INSERT_OVERWRITE"]), partition_to_replace_file_ids={})
    pool = iter(keys)
    moved: list[str] = []  # keys a rewrite dropped, for another file group to take
    for g in range(12):
        partition, file_id = partitions[g % 3], f"{uuid.UUID(int=rng.getrandbits(128))}-{g}"
        kind = rng.choice(["rewrite", "new", "log", "replaced"])
        if kind == "rewrite":
            before = [next(pool) for _ in range(rng.randint(0, 30))]
            kept = [k for k in before if rng.random() < 0.7]
            dropped = [k for k in before if k not in kept]
            inserted = [next(pool) for _ in range(rng.randint(0, 5))] + moved[:rng.randint(0, len(moved))]
            moved = [k for k in moved if k not in inserted] + dropped
            bases[(partition, f"{file_id}_0-1-0_{_PREV}.parquet")] = before
            name = f"{file_id}_0-1-0_{_T}.parquet"
            bases[(partition, name)] = kept + inserted
            stat = WriteStat(file_id=file_id, path=f"{partition}/{name}", prev_commit=_PREV,
                             num_inserts=len(inserted) if rng.random() < 0.9 else 0, num_deletes=len(dropped))
        elif kind == "new":
            name = f"{file_id}_0-1-0_{_T}.parquet"
            bases[(partition, name)] = [next(pool) for _ in range(rng.randint(0, 20))] + moved[:3]
            moved = moved[3:]
            stat = WriteStat(file_id=file_id, path=f"{partition}/{name}", prev_commit="null", num_inserts=1)
        elif kind == "log":
            here = [next(pool) for _ in range(rng.randint(0, 20))]
            elsewhere = [next(pool) for _ in range(5)]
            for k in here:
                index[k] = (partition, file_id)
            for k in elsewhere:
                index[k] = (partitions[0], "another")
            data_keys = rng.sample(here + elsewhere, rng.randint(0, 5)) + [next(pool) for _ in range(3)]
            delete_keys = rng.sample(here + elsewhere, rng.randint(0, 5)) + data_keys[:2]
            name = f".{file_id}_{_T}.log.1_0-1-0"
            logs[(partition, name)] = (data_keys, delete_keys)
            stat = WriteStat(file_id=file_id, path=f"{partition}/{name}", prev_commit=_PREV, log_version=1)
        else:
            replaced[(partition, file_id)] = [next(pool) for _ in range(rng.randint(0, 10))] + moved[:2]
            commit.partition_to_replace_file_ids.setdefault(partition, []).append(file_id)
            continue
        commit.add_write_stat(partition, stat)
    return commit, bases, logs, index, replaced


@pytest.mark.parametrize("seed", range(20))
def test_columnar_records_for_commit_are_the_per_key_ones(monkeypatch, seed: int) -> None:
    import random
    import string

    from hudi_engine.metadata import record_index

    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "é中\U0001F600-_/"
    keys = list({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(2000)})
    commit, bases, logs, index, replaced = _random_commit(rng, keys)
    monkeypatch.setattr(record_index, "base_file_keys", lambda _, p, n: pa.array(bases[(p, n)], pa.string()))
    monkeypatch.setattr(record_index, "log_file_keys", lambda _, p, n: tuple(
        pa.array(sorted(set(ks)), pa.string()) for ks in logs[(p, n)]))
    known = pa.table({"key": list(index), "partition": [p for p, _ in index.values()],
                      "file_id": [f for _, f in index.values()]}, schema=pa.schema([(c, pa.string()) for c in
                                                                                     LOCATION_COLUMNS]))
    listing = {p: {n: 1 for (q, n) in bases if q == p} for p in ("p=1", "été/中", "")}
    got = record_index.records_for_commit(
        TableLocation.of("/nowhere"), commit, _T, False, lambda p: listing[p],
        lambda p, f: pa.array(replaced[(p, f)], pa.string()),
        lambda ks: known.filter(pc.is_in(known.column("key"), value_set=ks)))
    want = _old_records_for_commit(commit, instant_millis(_T, False), bases, logs, index, replaced)
    assert list(got) == want
    assert [r.key.encode("utf-8") for r in got] == sorted(r.key.encode("utf-8") for r in got)


def test_initial_records_as_columns() -> None:
    from hudi_engine.metadata.record_index import initial_records

    slices = [("p=1", "f1", _PREV, pa.array(["b", "é", None, "a"], pa.string())), ("", "f2", _T, ["c", "中"])]
    got = list(initial_records(slices, local=False))
    millis = instant_millis(_PREV, False), instant_millis(_T, False)
    assert got == [RecordIndexRecord("a", "p=1", "f1", millis[0]), RecordIndexRecord("b", "p=1", "f1", millis[0]),
                   RecordIndexRecord("c", "", "f2", millis[1]), RecordIndexRecord("é", "p=1", "f1", millis[0]),
                   RecordIndexRecord("中", "", "f2", millis[1])]
    with pytest.raises(MetadataTableError, match=r"record key 'c' is in two file groups \(p=1/f1 and /f2\)"):
        initial_records([("p=1", "f1", _T, ["a", "c"]), ("", "f2", _T, ["c"])], local=False)


def test_key_file_groups_are_javas_hash() -> None:
    import random
    import string

    from hudi_engine.metadata.record_index import key_file_groups

    rng = random.Random(7)
    ascii_keys = ["".join(rng.choice(string.printable) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    ascii_keys += ["polygenelubricants", ""]  # Integer.MIN_VALUE; the empty key
    for keys in (ascii_keys, ascii_keys[:100] + ["é", "a\U0001F600b"]):
        array = pa.array(["pad", *keys], pa.string()).slice(1)  # an offset into the buffers
        for count in (1, 10, 10000):
            assert key_file_groups(array, count).tolist() == [file_group_index(k, count) for k in keys]


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 9),
                                                     ("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6)])
def test_keys_reported_by_the_handles_make_the_records_the_files_make(tmp_path: Path, monkeypatch, table_type: str,
                                                                      version: int) -> None:
    """The write handles report the keys their files add and remove (`WriteStat.record_keys`); the records made
    from them are those the diff of the files makes, through creates, merges, appends, partition moves and deletes."""
    from metadata_tables import check_reported_keys

    reported, resolved = check_reported_keys(monkeypatch)
    test_record_index_tags_globally(tmp_path, table_type, version)
    assert len(reported) >= 4 and all(reported[1:]), reported  # every write after the one that built the index
    # MOR: the appends' keys come checked against the index by the tagging (no lookup at the commit)
    assert any(resolved) is (table_type == "MERGE_ON_READ"), resolved


@pytest.mark.parametrize("version", [6, 9])
def test_the_initial_builds_base_file_is_the_per_record_one(version: int) -> None:
    """The initial build writes a record_index base file from columns (`write_index_base_file`) with the bytes the
    per-record writer (`compaction.write_base_file`) gives the same records."""
    import random

    from hudi_engine.metadata.compaction import write_base_file
    from hudi_engine.metadata.initialization import record_schema, write_index_base_file
    from hudi_engine.metadata.record_index import initial_records
    from hudi_engine.metadata.records import RecordCodec

    rng = random.Random(version)
    keys = list({f"{rng.randint(0, 10 ** 9)}{rng.choice(['', 'é', '中'])}" for _ in range(3000)})
    slices = [("p=1", "25790a4d-0f6b-4a21-bb7e-4cd62f5cbe2f-0", _PREV, keys[:1000]),
              ("", "raw-file-id", _T, keys[1000:])]
    schema = record_schema(version)
    codec = RecordCodec(schema, "here")
    for records in (initial_records(slices, local=False), initial_records([], local=False)):
        assert write_index_base_file(records, codec, schema, "f") == write_base_file(list(records), codec, schema, "f")
