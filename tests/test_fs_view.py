"""`FileSystemView.load` and `load_within`: the table's file groups from one listing per folder, the folders of a level
listed at once; `load_within` gives None past a folder count."""
from __future__ import annotations

import threading
import time

import pyarrow as pa
from write.local_write import write

from hudi_engine import fs_view
from hudi_engine.fs_view import FileSystemView, list_partitions
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage


def options(**extra: str) -> dict:
    o = {"hoodie.table.name": "v", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "dt,hr", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.operation": "upsert"}
    o.update(extra)
    return o


def rows(ids: range) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [1] * len(ids), "dt": [f"d{i % 2}" for i in ids],
                     "hr": [f"h{i % 3}" for i in ids]})


def test_load_within_lists_what_load_lists_or_gives_up_past_its_folder_count(tmp_path):
    write(tmp_path, rows(range(60)), options())
    storage, _ = Storage.for_uri(str(tmp_path))
    full = FileSystemView.load(TableLocation.at(storage, str(tmp_path)))
    assert len(full.partition_paths) == 6  # d0/h0 ... d1/h2: 2 + 6 folders below the base path
    bounded = FileSystemView.load_within(TableLocation.at(storage, str(tmp_path)), 9)
    assert bounded is not None and bounded.partition_paths == full.partition_paths == list_partitions(TableLocation.at(storage, str(tmp_path)))
    assert sorted((g.partition_path, g.file_id) for g in bounded.file_groups()) == \
        sorted((g.partition_path, g.file_id) for g in full.file_groups())
    assert FileSystemView.load_within(TableLocation.at(storage, str(tmp_path)), 8) is None  # 9 folders with the base path


def test_folders_of_a_level_are_listed_at_once_and_each_once(tmp_path, monkeypatch):
    write(tmp_path, rows(range(60)), options())
    storage, _ = Storage.for_uri(str(tmp_path))
    calls: list[str] = []
    running, most = [0], [0]
    lock = threading.Lock()
    list_dir = storage.list_dir

    def slow_list_dir(path: str):  # an object store's LIST: tens of milliseconds each
        with lock:
            calls.append(path)
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        try:
            return list_dir(path)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(storage, "list_dir", slow_list_dir)
    view = FileSystemView.load(TableLocation.at(storage, str(tmp_path)))
    assert len(view.partition_paths) == 6
    assert len(calls) == len(set(calls)) == 9  # the base path, d0 and d1, and the six partitions: each once
    assert most[0] >= 2  # d0 and d1 together, then their six folders together
    monkeypatch.setattr(fs_view, "LISTING_THREADS", 2)
    calls.clear()
    assert FileSystemView.load_within(TableLocation.at(storage, str(tmp_path)), 4) is None
    assert len(calls) <= 4 + 2  # gives up having listed at most a batch more than its folder count
