"""Metadata tables for the tests (hudi_engine/metadata): a Java-written table's metadata table cut down to its `files`
partition (what this engine keeps), and the listings to compare it with."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from java_tables import CASES, unzip_feature_table

from hudi_engine import HudiTable
from hudi_engine.fs_view import FileSystemView
from hudi_engine.location import TableLocation
from hudi_engine.metadata.column_stats import file_group_index
from hudi_engine.metadata.record_index import (
    RECORD_INDEX_PARTITION,
    RecordIndexRecord,
    data_partition_of,
    latest_slice_keys,
    partitioned_file_id,
)
from hudi_engine.metadata.table import MetadataTable
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.layout import layout_for


def files_only(table: Path) -> Path:
    """Drop every metadata partition but `files` from the table at `table` (its folder and its name in
    hoodie.properties), as Hudi leaves a table whose other indexes were dropped."""
    meta = table / ".hoodie" / "metadata"
    for p in meta.iterdir():
        if p.is_dir() and p.name not in ("files", ".hoodie"):
            shutil.rmtree(p)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    config.with_props({"hoodie.table.metadata.partitions": "files",
                       "hoodie.table.metadata.partitions.inflight": None}).save(location)
    return table


def mdt_listing(table: Path) -> dict[str, dict[str, int]]:
    """Partition -> file -> size, as the table's metadata table lists them."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    return MetadataTable.load(location, config, Timeline.load(location, layout_for(config))).read_files_partition() \
        .listing()


def storage_listing(table: Path) -> dict[str, dict[str, int]]:
    """Partition -> file -> size of every data file (base, log and CDC log files) in storage."""
    out: dict[str, dict[str, int]] = {}
    for group in FileSystemView.load(TableLocation.of(str(table))).file_groups():
        for s in group.slices.values():
            for f in ([s.base_file] if s.base_file else []) + s.log_files + s.cdc_log_files:
                out.setdefault(group.partition_path, {})[f.path.rsplit("/", 1)[-1]] = f.size
    return out


# ---- a files-only feature table the engine writes to

MDT_TABLES = {c.name: c for c in CASES if c.builder == "mdt"}
WRITE_OPTIONS = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
                 "hoodie.datasource.write.precombine.field": "ts"}


def feature_rows(ids: list[int], value: str) -> pa.Table:
    """Rows of the feature tables' schema: odd ids in partition a, even ones in b."""
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids), "ts": pa.array([9] * len(ids),
                     pa.int64()), "amount": [0.5] * len(ids), "p": ["a" if i % 2 else "b" for i in ids]})


def files_only_table(name: str, tmp_path: Path, *, mor: bool = False) -> Path:
    """Java's feature table `name` (tests/java_tables.py), its metadata table cut down to `files`; with `mor`, made
    MERGE_ON_READ (a table of base files only reads the same; the engine's updates then go to log files)."""
    table, _ = unzip_feature_table(MDT_TABLES[name], tmp_path)
    files_only(table)
    if mor:
        as_merge_on_read(table)
    return table


def as_merge_on_read(table: Path) -> None:
    """A Java-built table of base files only, made MERGE_ON_READ (it reads the same; the engine's updates then go to
    log files)."""
    location = TableLocation.of(str(table))
    TableConfig.load(location).with_props({"hoodie.table.type": "MERGE_ON_READ"}).save(location)


def write_rows(table: Path, rows: pa.Table, operation: str = "upsert", **extra: str) -> str:
    """The engine's write of `rows` into the feature table at `table`; its instant."""
    loaded = HudiTable.load(str(table))
    return loaded.write(rows, {**WRITE_OPTIONS, "hoodie.table.name": loaded.config.name,
                               "hoodie.datasource.write.operation": operation, **extra}).instant_time


STATS_PARTITIONS = ("files", "column_stats", "partition_stats")


def stats_only(table: Path, keep: tuple[str, ...] = STATS_PARTITIONS) -> Path:
    """Drop every metadata partition but files, column_stats and partition_stats from the table at `table` (their
    folders, their names in hoodie.properties, their index definitions), as Hudi leaves a table whose record index,
    bloom filters and secondary indexes were dropped: the metadata table of a Java 1.2 table written with Spark's
    defaults."""
    meta = table / ".hoodie" / "metadata"
    for p in meta.iterdir():
        if p.is_dir() and p.name not in (*keep, ".hoodie"):
            shutil.rmtree(p)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    kept = [p for p in config.metadata_partitions if p in keep]
    config.with_props({"hoodie.table.metadata.partitions": ",".join(kept),
                       "hoodie.table.metadata.partitions.inflight": None}).save(location)
    defs_path = config.get("hoodie.table.index.defs.path")
    if defs_path:
        defs = table / defs_path
        raw = json.loads(defs.read_text())
        raw["indexDefinitions"] = {k: v for k, v in raw["indexDefinitions"].items() if k in keep}
        defs.write_text(json.dumps(raw, indent=2))
    return table


def assert_stats_match_files(table: Path, *, tight: bool = True) -> int:
    """Every file of the latest slices has, for each indexed column, the column_stats record its own footer or
    records give (as Hudi computes them), and each partition's partition_stats (when kept) is the merge of those:
    what a Java reader's data skipping relies on. Not `tight`: a partition's range need only cover its files' (Hudi
    1.x merges a write's ranges into the partition's, so a replaced or cleaned file's values stay in its bounds), and
    a file without values (a log of deletes) may have no range.
    The number of records checked."""
    from hudi_engine.fs_view import Visibility, slicing_for
    from hudi_engine.metadata.column_ranges import merge_ranges
    from hudi_engine.metadata.column_stats import PARTITION_STATS_PARTITION, partition_stats_key
    from hudi_engine.metadata.stats_index import StatsIndex

    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    timeline = Timeline.load(location, layout_for(config))
    index = StatsIndex.load(location, config)
    assert index is not None, f"{table}: no column_stats kept ({config.metadata_partitions})"
    mdt = MetadataTable.load(location, config, timeline)
    ours = {(s.file_name, s.column_name): s for s in mdt.read_column_stats().values()}
    view = FileSystemView.load(location, slicing=slicing_for(timeline))
    vis = Visibility.of(timeline)
    checked = 0
    for partition in view.partition_paths:
        merged: dict[str, object] = {}
        for s in view.latest_file_slices(vis, partition):
            for f in ([s.base_file] if s.base_file else []) + s.log_files:
                name = f.path.rsplit("/", 1)[-1]
                for want in index.ranges_of(location, partition, name):
                    if not tight and want.value_count == 0 and (name, want.column_name) not in ours:
                        continue  # a log file of deletes only: Hudi's initial build writes no range for it
                    assert ours.get((name, want.column_name)) == want, (
                        partition, name, want.column_name, ours.get((name, want.column_name)), want)
                    prev = merged.get(want.column_name)
                    merged[want.column_name] = want if prev is None else merge_ranges(prev, want)  # type: ignore
                    checked += 1
        if index.partition_stats:
            got = mdt.read_keys(PARTITION_STATS_PARTITION, [partition_stats_key(partition, c) for c in merged])
            for column, want in merged.items():
                record = got[partition_stats_key(partition, column)].stats  # type: ignore[attr-defined]
                if not tight:
                    kind = want.value_type  # type: ignore[attr-defined]
                    low, high = want.min_value, want.max_value  # type: ignore[attr-defined]
                    assert low is None or (record.min_value is not None and record.min_value.comparable(kind)
                                           <= low.comparable(kind)), (partition, column, record, want)
                    assert high is None or (record.max_value is not None and record.max_value.comparable(kind)
                                            >= high.comparable(kind)), (partition, column, record, want)
                    checked += 1
                    continue
                assert (record.min_value, record.max_value, record.value_count, record.null_count) == (
                    want.min_value, want.max_value, want.value_count, want.null_count), (partition, column, record, want)  # type: ignore
                assert record.is_tight_bound and record.file_name == partition
                checked += 1
    return checked


def assert_blooms_match_files(table: Path) -> int:
    """Every base file of the latest slices has the bloom_filters record its footer gives (filter, type code, the
    instant that wrote it), as Hudi writes it; the number checked."""
    from hudi_engine.fs_view import Visibility, slicing_for
    from hudi_engine.io.base_file import BLOOM_FILTER_KEY, BLOOM_FILTER_TYPE_CODE_KEY
    from hudi_engine.metadata.column_stats import BLOOM_FILTERS_PARTITION, bloom_filter_key

    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    timeline = Timeline.load(location, layout_for(config))
    mdt = MetadataTable.load(location, config, timeline)
    view = FileSystemView.load(location, slicing=slicing_for(timeline))
    bases = [(s.partition_path, s.base_file) for s in view.latest_file_slices(Visibility.of(timeline))
             if s.base_file is not None]
    found = mdt.read_keys(BLOOM_FILTERS_PARTITION, [bloom_filter_key(p, b.path.rsplit("/", 1)[-1]) for p, b in bases])
    for partition, base in bases:
        name = base.path.rsplit("/", 1)[-1]
        kv = pq.ParquetFile(base.path).metadata.metadata
        record = found[bloom_filter_key(partition, name)]
        assert (record.bloom_filter, record.type_code, record.timestamp) == (  # type: ignore[attr-defined]
            kv[BLOOM_FILTER_KEY.encode()], kv[BLOOM_FILTER_TYPE_CODE_KEY.encode()].decode(),
            base.name.instant_time), name
    # and no filter of a file storage no longer holds (the clean's tombstones)
    stored = {bloom_filter_key(g.partition_path, s.base_file.path.rsplit("/", 1)[-1]) for g in view.file_groups()
              for s in g.slices.values() if s.base_file is not None}
    live = {k for fs in mdt.partition_slices(BLOOM_FILTERS_PARTITION) for k, r in mdt.read_slice(fs).items()
            if not r.is_deleted}
    assert live == stored, (sorted(live - stored), sorted(stored - live))
    return len(bases)


# ---- the record index

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
    _assert_located(mdt.record_locations(pa.array([*out, "no such key"], pa.string())), out)
    return out, len(slices)


def _assert_located(found: pa.Table, records: dict[str, RecordIndexRecord]) -> None:
    """The columnar lookup (`MetadataTable.record_locations`) places every key as the merged records do."""
    got = {k: (p, f) for k, p, f in zip(*(found.column(c).to_pylist() for c in found.column_names), strict=True)}
    assert got == {k: (r.partition, r.file_id) for k, r in records.items()}


def partitioned_index_of(table: Path) -> dict[tuple[str, str], RecordIndexRecord]:
    """A partitioned record index merged (deleted keys dropped), by (data partition, key); each record checked to lie
    in a file group of its data partition (`record-index-<escaped partition>-000N-0`, N counted per partition) that
    its key hashes to."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    mdt = MetadataTable.load(location, config, Timeline.load(location, layout_for(config)))
    groups: dict[str, list[str]] = {}
    for s in mdt.partition_slices(RECORD_INDEX_PARTITION):
        served = data_partition_of(s.file_id)
        assert served is not None, s.file_id
        groups.setdefault(served, []).append(s.file_id)
    out: dict[tuple[str, str], RecordIndexRecord] = {}
    for partition, file_ids in groups.items():
        assert file_ids == [partitioned_file_id(partition, i) for i in range(len(file_ids))], file_ids
    for s in mdt.partition_slices(RECORD_INDEX_PARTITION):
        served = data_partition_of(s.file_id)
        for key, record in mdt.read_slice(s).items():
            assert groups[served][file_group_index(key, len(groups[served]))] == s.file_id, (key, s.file_id)
            if not record.is_deleted:
                assert isinstance(record, RecordIndexRecord) and record.partition == served, (record, s.file_id)
                out[(served, key)] = record
    for partition in groups:
        mine = {k: r for (p, k), r in out.items() if p == partition}
        _assert_located(mdt.record_locations(pa.array([*mine, "no such key"], pa.string()), partition), mine)
    return out


def assert_partitioned_index_matches(table: Path) -> int:
    """The partitioned record index places exactly the live (partition, key) pairs, each in the file group the
    snapshot finds it in; their number."""
    index = partitioned_index_of(table)
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    want: dict[tuple[str, str], str] = {}
    for partition, file_id, _, keys in latest_slice_keys(location, Timeline.load(location, layout_for(config))):
        for k in keys.to_pylist():
            assert (partition, k) not in want, f"key {k} twice in partition {partition}"
            want[(partition, k)] = file_id
    assert index.keys() == want.keys(), (sorted(index.keys() - want.keys()), sorted(want.keys() - index.keys()))
    wrong = {k: (r.file_id, want[k]) for k, r in index.items() if r.file_id != want[k]}
    assert not wrong, f"(partition, key): (the index's file group, the snapshot's): {wrong}"
    return len(index)


def snapshot_locations(table: Path) -> dict[str, set[tuple[str, str]]]:
    """Where the engine's read finds each live key: its partitions and file groups. A key an INSERT wrote twice (Java's
    insert does not look keys up) is in several file groups; the index holds one of them."""
    location = TableLocation.of(str(table))
    config = TableConfig.load(location)
    found: dict[str, set[tuple[str, str]]] = {}
    for partition, file_id, _, keys in latest_slice_keys(location, Timeline.load(location, layout_for(config))):
        for k in keys.to_pylist():
            found.setdefault(k, set()).add((partition, file_id))
    return found


def assert_index_matches(table: Path) -> int:
    """The record index places exactly the live keys, each where the snapshot finds it; their number."""
    index, _ = index_of(table)
    want = snapshot_locations(table)
    assert index.keys() == want.keys(), (sorted(index.keys() - want.keys()), sorted(want.keys() - index.keys()))
    wrong = {k: ((r.partition, r.file_id), want[k]) for k, r in index.items() if (r.partition, r.file_id) not in want[k]}
    assert not wrong, f"key: (the index's location, the snapshot's): {wrong}"
    return len(index)


def check_reported_keys(monkeypatch) -> tuple[list[int], list[int]]:
    """From now on, every commit's record-index records are made twice: from the keys the write handles reported
    (`WriteStat.record_keys`) and from the diff of the files (the reports dropped), and must be equal. Returns the
    lists that collect, per commit, how many write stats carried reported keys, and how many of those were log
    files' keys resolved against the index by the write's tagging (`RecordKeys.resolved`)."""
    import dataclasses

    from hudi_engine.metadata import writer

    original = writer.index_records_for_commit
    reported: list[int] = []
    resolved: list[int] = []

    def both(location, commit, *rest):
        got = original(location, commit, *rest)
        stats = {p: [dataclasses.replace(s, record_keys=None) for s in ss]
                 for p, ss in commit.partition_to_write_stats.items()}
        assert list(got) == list(original(location, dataclasses.replace(commit, partition_to_write_stats=stats), *rest))
        keys = [s.record_keys for ss in commit.partition_to_write_stats.values() for s in ss]
        reported.append(sum(k is not None for k in keys))
        resolved.append(sum(k is not None and k.resolved for k in keys))
        return got

    monkeypatch.setattr(writer, "index_records_for_commit", both)
    return reported, resolved


def assert_metadata_matches(table: Path) -> dict[str, int]:
    """The table's metadata table against storage, for every partition it lists that this engine keeps: `files`
    lists every data file with its size, the record index places exactly the live keys, column and partition stats
    and bloom filters are those of the files (versions 8 and 9; partition stats need only cover their files', as
    Hudi's do). What a reader of the metadata table relies on, whoever wrote it last. Partition -> entries checked;
    empty without a metadata table."""
    from hudi_engine.metadata.column_stats import BLOOM_FILTERS_PARTITION, COLUMN_STATS_PARTITION

    config = TableConfig.load(TableLocation.of(str(table)))
    listed = set(config.metadata_partitions)
    checked: dict[str, int] = {}
    if "files" in listed:
        ours, stored = mdt_listing(table), storage_listing(table)
        assert ours == stored, {p: (sorted(set(ours.get(p, {}).items()) ^ set(stored.get(p, {}).items())))
                                for p in set(ours) | set(stored) if ours.get(p) != stored.get(p)}
        checked["files"] = sum(len(f) for f in ours.values())
    if RECORD_INDEX_PARTITION in listed:
        from hudi_engine.metadata.index_definitions import is_partitioned_record_index

        partitioned = is_partitioned_record_index(TableLocation.of(str(table)), config)
        checked[RECORD_INDEX_PARTITION] = (assert_partitioned_index_matches if partitioned else assert_index_matches)(
            table)
    if config.version >= 8 and COLUMN_STATS_PARTITION in listed:
        checked[COLUMN_STATS_PARTITION] = assert_stats_match_files(table, tight=False)
    if config.version >= 8 and BLOOM_FILTERS_PARTITION in listed:
        checked[BLOOM_FILTERS_PARTITION] = assert_blooms_match_files(table)
    return checked
