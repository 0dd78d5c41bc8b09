"""Records of the metadata table's files partition (hudi_engine/metadata/records.py): the merge Hudi's
HoodieMetadataPayload applies, the Avro encoding with a real metadata table's schema, a commit's records."""
from __future__ import annotations

import pytest
from java_tables import DATA_DIR

from hudi_engine.errors import MetadataTableError
from hudi_engine.io.hfile import HFileReader
from hudi_engine.metadata.records import (
    ALL_PARTITIONS_KEY,
    FILE_LIST,
    PARTITION_LIST,
    FileInfo,
    FilesRecord,
    RecordCodec,
    merge_records,
    partition_key,
    partition_of_key,
    records_for_commit,
)
from hudi_engine.timeline.commit_metadata import CommitMetadata, WriteStat


def _rec(key: str, **files: tuple[int, bool]) -> FilesRecord:
    return FilesRecord(key, FILE_LIST, {n: FileInfo(s, d) for n, (s, d) in files.items()})


def test_combine_unions_keeps_the_larger_size_and_applies_deletions() -> None:
    old = _rec("p", a=(10, False), b=(5, False), c=(7, False))
    new = _rec("p", b=(8, False), c=(0, True), d=(3, False), e=(0, True))
    merged = old.combine(new)
    # c: listed, then deleted -> gone; e: deleted without being listed -> the tombstone stays (a base file may list it)
    assert merged.files == {"a": FileInfo(10), "b": FileInfo(8), "d": FileInfo(3), "e": FileInfo(0, True)}
    assert merged.live == {"a": 10, "b": 8, "d": 3}
    # a size never goes down: a smaller later size (a stat of an earlier append) keeps the larger
    assert _rec("p", a=(10, False)).combine(_rec("p", a=(4, False))).live == {"a": 10}
    # the tombstone left by the log merge deletes the file from the base record
    assert _rec("p", e=(9, False)).combine(merged).live == {"a": 10, "b": 8, "d": 3}
    # deleted twice: still deleted
    assert _rec("p", x=(0, True)).combine(_rec("p", x=(0, True))).files == {"x": FileInfo(0, True)}


def test_merge_records_folds_in_order_and_refuses_mixed_types() -> None:
    base = [FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, {"a": FileInfo(0)}), _rec("a", f1=(1, False))]
    logs = [FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, {"b": FileInfo(0)}), _rec("a", f2=(2, False)),
            _rec("b", g=(3, False))]
    merged = merge_records(base, logs)
    assert merged[ALL_PARTITIONS_KEY].live == {"a": 0, "b": 0}
    assert merged["a"].live == {"f1": 1, "f2": 2} and merged["b"].live == {"g": 3}
    with pytest.raises(MetadataTableError, match="cannot merge"):
        _rec(ALL_PARTITIONS_KEY).combine(FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST))
    with pytest.raises(MetadataTableError, match="type 3"):
        FilesRecord("p", 3)


def test_partition_keys() -> None:
    assert partition_key("") == "." and partition_of_key(".") == ""
    assert partition_key("2024/01/02") == "2024/01/02" and partition_of_key("a=1") == "a=1"


def _real_schema(tmp_path) -> str:
    import zipfile
    with zipfile.ZipFile(DATA_DIR / "mdt_cow_v6.zip") as z:
        name = next(n for n in z.namelist() if n.endswith(".hfile") and "/metadata/files/" in n)
        data = z.read(name)
    return HFileReader(data).file_info["schema"].decode()


def test_codec_round_trip_with_a_real_schema_and_the_key_left_empty(tmp_path) -> None:
    codec = RecordCodec(_real_schema(tmp_path), "mdt_cow_v6")
    record = _rec("b", **{"f-0_1-2-3_20240101000000000.parquet": (4753, False), "old.parquet": (0, True)})
    value = codec.encode(record)
    assert codec.decode(b"b", value, "test") == record
    # the record's own key field is written empty (Hudi's readers take the cell key): "b" is not in the bytes
    assert value[:6] == b"\x00" * 6  # five null meta fields, then the key: an empty string
    listed = FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, {"a": FileInfo(0), "b": FileInfo(0)})
    assert codec.decode(ALL_PARTITIONS_KEY.encode(), codec.encode(listed), "test") == listed


def test_codec_refuses_what_is_not_a_metadata_record() -> None:
    with pytest.raises(MetadataTableError, match="does not parse"):
        RecordCodec("{not json", "somewhere.hfile")
    with pytest.raises(MetadataTableError, match="not Hudi's HoodieMetadataRecord"):
        RecordCodec('{"type":"record","name":"X","fields":[{"name":"a","type":"int"}]}', "x.hfile")
    codec = RecordCodec(_real_schema(None), "mdt_cow_v6")
    with pytest.raises(MetadataTableError, match="record 'k' does not decode"):
        codec.decode(b"k", b"\x02", "x.log: HFILE_DATA block at offset 0")


def test_records_for_commit() -> None:
    meta = CommitMetadata(operation_type="UPSERT")
    meta.add_write_stat("b", WriteStat(file_id="f1", path="b/f1_0-1-0_T.parquet", file_size_in_bytes=100))
    meta.add_write_stat("b", WriteStat(file_id="f2", path="b/.f2_T.log.1_0-1-0", file_size_in_bytes=30,
                                       log_version=1, cdc_stats={"b/.f2_T.log.1_0-1-0.cdc": 12}))
    meta.add_write_stat("b", WriteStat(file_id="f2", path="b/.f2_T.log.1_0-1-0", file_size_in_bytes=20,
                                       log_version=1))
    meta.add_write_stat("", WriteStat(file_id="f3", path="f3_0-1-0_T.parquet", file_size_in_bytes=7))
    meta.add_write_stat("a", WriteStat(file_id="", path=None))  # an empty partition's stat: no file
    records = records_for_commit(meta)
    assert [r.key for r in records] == [".", ALL_PARTITIONS_KEY, "a", "b"]  # sorted by the keys' bytes
    by_key = {r.key: r for r in records}
    assert by_key[ALL_PARTITIONS_KEY] == FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST,
                                                     {"b": FileInfo(0), ".": FileInfo(0), "a": FileInfo(0)})
    assert by_key["b"].live == {"f1_0-1-0_T.parquet": 100, ".f2_T.log.1_0-1-0": 30, ".f2_T.log.1_0-1-0.cdc": 12}
    assert by_key["."].live == {"f3_0-1-0_T.parquet": 7} and by_key["a"].live == {}
    # DELETE_PARTITION: the replaced partitions marked deleted in the partition list, no file record.
    dropped = records_for_commit(CommitMetadata(operation_type="DELETE_PARTITION",
                                                partition_to_replace_file_ids={"a": ["f9"], "": ["f8"]}))
    assert dropped == [FilesRecord(ALL_PARTITIONS_KEY, PARTITION_LIST, {"a": FileInfo(0, True), ".": FileInfo(0, True)})]
