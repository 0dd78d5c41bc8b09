"""Storage.create_exclusive: its temp files are never mistaken for table files, and a cleaner may remove them."""
from __future__ import annotations

import os
import re

import pytest

import hudi_engine.storage as storage_module
from hudi_engine.file_naming import is_base_file_name, is_log_file_name
from hudi_engine.location import TableLocation
from hudi_engine.storage import TEMP_FILE_PREFIX, Storage, is_temp_file_name
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write.markers import IOType, create_marker, list_markers, marker_dir

# Java Hudi 0.14's FSUtils.LOG_FILE_PATTERN, matched with find() (not anchored at the end).
JAVA_LOG_FILE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?")


def test_a_temp_file_name_parses_as_no_hudi_file(tmp_path, monkeypatch):
    storage, base = Storage.for_uri(str(tmp_path))
    names = []
    real_link = os.link
    monkeypatch.setattr(storage_module.os, "link",
                        lambda src, dst, *a, **k: (names.append(os.path.basename(src)), real_link(src, dst))[1])
    storage.create_exclusive(Storage.join(base, ".hoodie", "20250101000000000.commit.requested"), b"")
    monkeypatch.undo()
    (name,) = names
    assert name.startswith(TEMP_FILE_PREFIX) and is_temp_file_name(name)
    assert Instant.parse_file_name(name) is None  # not an instant (ours)
    extension = name[name.index("."):]  # Java's HoodieInstant.getTimelineFileExtension: from the first dot
    assert not any(extension.endswith(a.value) or extension.endswith(s) for a in Action for s in
                   (".requested", ".inflight"))
    assert not is_base_file_name(name) and name.rsplit(".", 1)[-1] not in ("parquet", "orc", "hfile")
    assert not is_log_file_name(name) and JAVA_LOG_FILE.search(name) is None
    assert ".marker." not in name and not name.startswith("MARKERS") and not name.startswith(".hoodie_partition")


def test_create_exclusive_leaves_no_temp_file_and_listings_skip_leftovers(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    path = Storage.join(base, "a", "f")
    assert storage.create_exclusive(path, b"1") is True
    assert storage.create_exclusive(path, b"2") is False
    assert storage.read_bytes(path) == b"1"
    assert [e.name for e in storage.list_dir(Storage.join(base, "a"))] == ["f"]
    # What a process killed between writing its temp file and linking it leaves (and the earlier naming).
    (tmp_path / "a" / f"{TEMP_FILE_PREFIX}123-00ff").write_bytes(b"x")
    (tmp_path / "a" / "f.parquet.marker.MERGE.20409.tmp").write_bytes(b"")
    assert [e.name for e in storage.list_dir(Storage.join(base, "a"))] == ["f"]
    assert sorted(e.name for e in storage.list_temp_files(Storage.join(base, "a"))) == [
        f"{TEMP_FILE_PREFIX}123-00ff", "f.parquet.marker.MERGE.20409.tmp"]
    assert len(storage.delete_temp_files(Storage.join(base, "a"))) == 2
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["f"]


def test_a_temp_file_removed_before_its_link_is_written_again(tmp_path, monkeypatch):
    storage, base = Storage.for_uri(str(tmp_path))
    real_link = os.link
    calls = []

    def cleaner_first(src, dst, *a, **k):
        calls.append(src)
        if len(calls) == 1:
            os.unlink(src)  # another process's cleanup, between the write and the link
        return real_link(src, dst, *a, **k)

    monkeypatch.setattr(storage_module.os, "link", cleaner_first)
    assert storage.create_exclusive(Storage.join(base, "f"), b"data") is True
    assert len(calls) == 2 and (tmp_path / "f").read_bytes() == b"data"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]

    monkeypatch.setattr(storage_module.os, "link", lambda src, dst, *a, **k: (os.unlink(src), real_link(src, dst))[1])
    with pytest.raises(OSError, match="was deleted 5 times"):
        storage.create_exclusive(Storage.join(base, "g"), b"data")


def test_a_leftover_marker_temp_file_does_not_break_listing_markers(tmp_path):
    """The issue's failure: `...parquet.marker.MERGE.20409.tmp` made list_markers (and so every rollback) fail."""
    storage, base = Storage.for_uri(str(tmp_path))
    ts = "20250101000000000"
    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / Instant(ts, Action.COMMIT, State.REQUESTED).file_name).write_bytes(b"")
    create_marker(TableLocation.at(storage, base), ts, "p", f"f-0_0-1-1_{ts}.parquet", IOType.MERGE)
    folder = tmp_path / ".hoodie" / ".temp" / ts / "p"
    (folder / f"g-0_0-1-2_{ts}.parquet.marker.MERGE.20409.tmp").write_bytes(b"")
    (folder / f"{TEMP_FILE_PREFIX}20409-0a1b").write_bytes(b"")
    assert [m.relative_path for m in list_markers(TableLocation.at(storage, base), ts)] == [f"p/f-0_0-1-1_{ts}.parquet.marker.MERGE"]
    assert storage.exists(marker_dir(TableLocation.at(storage, base), ts))


def test_temp_files_of_other_targets_are_left_to_their_writers(tmp_path):
    """A rollback deletes the temp files meant to become its own instant's files, not one a concurrent writer is
    streaming into the same folder."""
    storage, base = Storage.for_uri(str(tmp_path))
    folder = Storage.join(base, "a")
    mine, theirs = storage.open_output(Storage.join(folder, "f1_1-0-1_001.parquet")), \
        storage.open_output(Storage.join(folder, "f2_1-0-1_002.parquet"))
    mine.stream.write(b"x")
    theirs.stream.write(b"y")
    assert [p.rsplit("/", 1)[-1] for p in storage.delete_temp_files(folder, ["f1_1-0-1_001.parquet"])] == \
        [mine.target.rsplit("/", 1)[-1]]
    theirs.commit()
    assert storage.read_bytes(Storage.join(folder, "f2_1-0-1_002.parquet")) == b"y"
    assert storage.list_temp_files(folder) == []


def test_hadoop_s3_schemes_open_the_same_objects_as_s3(s3_server):
    """`s3a://` (Spark with hadoop-aws, the table location such a session records) is S3 to pyarrow too."""
    bucket = s3_server.new_bucket()
    storage, base = Storage.for_uri(s3_server.uri(bucket, "t"))
    storage.write_bytes(Storage.join(base, "a.txt"), b"one")
    for scheme in ("s3a", "S3N"):
        other, other_base = Storage.for_uri(scheme + s3_server.uri(bucket, "t")[2:])
        assert other.is_s3 and other_base == base
        assert other.read_bytes(Storage.join(other_base, "a.txt")) == b"one"
