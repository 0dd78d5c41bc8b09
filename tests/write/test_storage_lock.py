"""`hoodie.write.lock.provider=StorageBasedLockProvider` speaks Hudi 1.1's protocol, so Java writers configured with
that provider and this engine's writers exclude each other. Each rule, with the Java source it follows (package
org.apache.hudi.client.transaction.lock, release 1.1 / master):

* path: `<base>/.hoodie/.locks/table_lock.json` (StorageLockClient.getLockFolderPath with
  HoodieTableMetaClient.LOCKS_FOLDER_NAME = ".hoodie/.locks"; StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME);
  on S3 the key is the URI's path without its leading slash (StorageLockClient.parseBucketAndPath).
* content: models.StorageLockData as Jackson writes it: {"expired": bool, "validUntil": epoch ms, "owner": string},
  all three required, unknown properties ignored (models.StorageLockFile's ObjectMapper).
* acquire (StorageBasedLockProvider.tryLock): read the object; held while not `expired` and the reader's clock is not
  past `validUntil` + 500 ms (isLockStillValid, CLOCK_DRIFT_BUFFER_MS); else write {false, now + validity, owner}:
  with `If-None-Match: *` when none was read, `If-Match: <ETag read>` otherwise (S3StorageLockClient.
  createOrUpdateLockFileInternal). A failed precondition: not acquired.
* renew (renewLock, every renew interval): {false, now + validity, owner} with `If-Match` on the last ETag; a failed
  precondition: the lock was taken over.
* release (unlock -> tryExpireCurrentLock): {true, the same validUntil, owner} with `If-Match`; never a delete.
* storages: s3/s3a and gs only (StorageSchemes' storage lock classes); this engine: S3, and local disks under flock.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from local_write import write
from lock_race import race_winners
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.config import WriteConfig
from hudi_engine.config.lock_config import FILE_SYSTEM_LOCK, STORAGE_LOCK, LockConfig
from hudi_engine.errors import ConfigError, InstantLostError, WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write.lock import acquire, table_lock
from hudi_engine.write.lock_providers import (
    FileSystemLockProvider,
    StorageLockProvider,
    lock_path,
    lock_provider,
    storage_lock_path,
)

KEY = ".hoodie/.locks/table_lock.json"
OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"}


def _config(**kw) -> LockConfig:
    return LockConfig(**{"provider": STORAGE_LOCK, "wait_timeout_ms": 20000, "storage_validity_ms": 60000,
                         "storage_renew_ms": 5000, **kw})


def _now_ms() -> int:
    return int(time.time() * 1000)


def _java_lock(expired: bool, valid_until: int, owner: str) -> bytes:
    """A lock object as Hudi's Java writer puts it: Jackson's serialization of StorageLockData."""
    return (f'{{"expired":{"true" if expired else "false"},"validUntil":{valid_until},'
            f'"owner":"{owner}"}}').encode()


def _java_reads(data: bytes, now_ms: int) -> tuple[bool, str, int]:
    """How Hudi's Java writer reads a lock object (written from the Java source, not from the engine): parsed by
    StorageLockFile.createFromStream (required properties, primitives not null), then judged by isLockStillValid.
    (held, owner, validUntil)."""
    d = json.loads(data)
    assert {"expired", "validUntil", "owner"} <= set(d), d
    assert isinstance(d["expired"], bool) and isinstance(d["validUntil"], int) and isinstance(d["owner"], str), d
    return (not d["expired"] and not now_ms > d["validUntil"] + 500), d["owner"], d["validUntil"]


def _bucket(uri: str) -> str:
    return uri.split("/")[2]


def _put(s3_server, uri: str, data: bytes) -> str:
    return s3_server.client().put_object(Bucket=_bucket(uri), Key="table/" + KEY, Body=data)["ETag"]


def _get(s3_server, uri: str) -> bytes:
    return s3_server.client().get_object(Bucket=_bucket(uri), Key="table/" + KEY)["Body"].read()


@contextmanager
def _s3_requests(storage: Storage) -> Iterator[list[tuple[str, dict]]]:
    """The engine's S3 requests (operation, parameters; `ETag` of the answer added) while the block runs."""
    calls: list[tuple[str, dict]] = []
    events = storage._s3().meta.events
    tag = uuid.uuid4().hex

    def before(params: dict, model, **_) -> None:
        calls.append((model.name, dict(params, Body=None)))

    def after(parsed: dict, model, **_) -> None:
        if model.name == "PutObject" and "ETag" in parsed:
            for name, params in reversed(calls):
                if name == "PutObject" and "ETag" not in params:
                    params["ETag"] = parsed["ETag"]
                    break

    events.register("before-parameter-build.s3", before, unique_id="b" + tag)
    events.register("after-call.s3", after, unique_id="a" + tag)
    try:
        yield calls
    finally:
        events.unregister("before-parameter-build.s3", unique_id="b" + tag)
        events.unregister("after-call.s3", unique_id="a" + tag)


# --------------------------------------------------------------------------------------------- path and content


def test_the_lock_object_is_hoodie_locks_table_lock_json_and_filesystem_lock_stays_hoodie_lock(s3_server, s3_table):
    storage, base = Storage.for_uri(s3_table)
    assert storage_lock_path(TableLocation.at(storage, base)) == f"{base}/.hoodie/.locks/table_lock.json"
    with table_lock(TableLocation.at(storage, base), _config()) as lock:
        assert lock.describe() == f"lock object {base}/.hoodie/.locks/table_lock.json"
        assert s3_server.keys(_bucket(s3_table)) == ["table/" + KEY]
    fs_provider = lock_provider(TableLocation.at(storage, base), LockConfig(provider=FILE_SYSTEM_LOCK), table_name="t")
    assert isinstance(fs_provider, FileSystemLockProvider) and fs_provider.path == lock_path(TableLocation.at(storage, base))
    assert lock_path(TableLocation.at(storage, base)) == f"{base}/.hoodie/lock"


def test_held_and_released_lock_objects_are_what_java_writes_and_reads(s3_server, s3_table):
    storage, base = Storage.for_uri(s3_table)
    t0 = _now_ms()
    lock = acquire(TableLocation.at(storage, base), _config())
    t1 = _now_ms()
    data = _get(s3_server, s3_table)
    assert list(json.loads(data)) == ["expired", "validUntil", "owner"] and b" " not in data
    held, owner, valid_until = _java_reads(data, _now_ms())
    assert held and owner == lock.owner and t0 + 60000 <= valid_until <= t1 + 60000
    lock.release()
    released = _get(s3_server, s3_table)  # released by marking it expired, never deleted
    assert json.loads(released) == {"expired": True, "validUntil": valid_until, "owner": lock.owner}
    assert not _java_reads(released, _now_ms())[0]


# --------------------------------------------------------------------------------------------- conditional writes


def test_created_with_if_none_match_then_renewed_released_and_taken_over_with_if_match(s3_table):
    storage, base = Storage.for_uri(s3_table)
    with _s3_requests(storage) as calls:
        lock = acquire(TableLocation.at(storage, base), _config(storage_validity_ms=2000, storage_renew_ms=150))
        time.sleep(0.8)
        lock.release()
        acquire(TableLocation.at(storage, base), _config()).release()  # the released object is overwritten, not created again
    puts = [p for name, p in calls if name == "PutObject"]
    assert [n for n, _ in calls if n not in ("PutObject", "GetObject")] == []  # no delete, ever
    assert puts[0].get("IfNoneMatch") == "*" and "IfMatch" not in puts[0]
    assert len(puts) >= 1 + 2 + 1 + 2  # create, two renewals or more, release, take, release
    for previous, put in zip(puts, puts[1:]):
        assert put.get("IfMatch") == previous["ETag"] and "IfNoneMatch" not in put, (previous, put)


def test_a_lock_object_that_appears_after_the_read_is_not_overwritten(s3_server, s3_table, monkeypatch):
    """Another writer creates the object between this writer's read (absent) and its create: If-None-Match fails."""
    storage, base = Storage.for_uri(s3_table)
    java = _java_lock(False, _now_ms() + 60000, str(uuid.uuid4()))
    real = Storage.read_versioned

    def read_then_java_creates(self, path):
        seen = real(self, path)
        _put(s3_server, s3_table, java)
        return seen

    monkeypatch.setattr(Storage, "read_versioned", read_then_java_creates)
    provider = StorageLockProvider(TableLocation.at(storage, base), 60000, 5000)
    assert provider.try_acquire(_holder()) is None
    monkeypatch.undo()
    assert _get(s3_server, s3_table) == java


def test_a_takeover_loses_to_a_writer_that_took_the_lock_after_the_read(s3_server, s3_table, monkeypatch):
    """The object was released when read; a Java writer takes it before this writer's write: If-Match fails."""
    storage, base = Storage.for_uri(s3_table)
    _put(s3_server, s3_table, _java_lock(True, _now_ms() + 60000, "released-owner"))
    java = _java_lock(False, _now_ms() + 60000, str(uuid.uuid4()))
    real = Storage.read_versioned
    raced: list[bool] = []

    def read_then_java_takes(self, path):
        seen = real(self, path)
        if not raced:
            raced.append(True)
            _put(s3_server, s3_table, java)
        return seen

    monkeypatch.setattr(Storage, "read_versioned", read_then_java_takes)
    provider = StorageLockProvider(TableLocation.at(storage, base), 60000, 5000)
    assert provider.try_acquire(_holder()) is None
    monkeypatch.undo()
    assert _get(s3_server, s3_table) == java


def _holder():
    from hudi_engine.write.lock import LockHolder, new_owner

    return LockHolder(new_owner(), _now_ms(), _now_ms())


# --------------------------------------------------------------------------------------------- Java's lock objects


def test_a_lock_java_holds_is_honoured_and_one_it_released_is_taken_at_once(s3_server, s3_table):
    storage, base = Storage.for_uri(s3_table)
    java_owner = str(uuid.uuid4())
    held = _java_lock(False, _now_ms() + 60000, java_owner)[:-1] + b',"futureProperty":[1,2]}'  # ignored
    _put(s3_server, s3_table, held)
    with pytest.raises(WriteError, match=f"could not take the write lock .* held by {java_owner}"):
        acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=300), poll_ms=50)
    assert _get(s3_server, s3_table) == held
    # Java's release: expired, validUntil unchanged (still in the future).
    _put(s3_server, s3_table, _java_lock(True, _now_ms() + 60000, java_owner))
    t0 = time.monotonic()
    lock = acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0))
    assert time.monotonic() - t0 < 2
    assert _java_reads(_get(s3_server, s3_table), _now_ms())[:2] == (True, lock.owner)
    lock.release()


def test_a_java_lock_past_its_validity_is_taken_only_after_the_clock_drift_buffer(s3_server, s3_table, monkeypatch):
    import hudi_engine.write.lock_providers as providers

    storage, base = Storage.for_uri(s3_table)
    valid_until = _now_ms() - 60000
    java = _java_lock(False, valid_until, "java-owner")
    _put(s3_server, s3_table, java)
    monkeypatch.setattr(providers, "_now_ms", lambda: valid_until + 500)  # not certainly past it yet
    with pytest.raises(WriteError, match="held by java-owner"):
        acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0))
    assert _get(s3_server, s3_table) == java
    monkeypatch.setattr(providers, "_now_ms", lambda: valid_until + 501)
    lock = acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0))
    assert json.loads(_get(s3_server, s3_table)) == {"expired": False, "validUntil": valid_until + 501 + 60000,
                                                     "owner": lock.owner}
    lock.release()


@pytest.mark.parametrize("content, why", [
    (b'{"expired":false,"validUntil":1}', "missing owner"),
    (b'{"expired":null,"validUntil":1,"owner":"x"}', "expired=None is not a boolean"),
    (b'{"expired":false,"validUntil":"soon","owner":"x"}', "validUntil='soon' is not epoch milliseconds"),
    (b"locked", "not JSON"),
])
def test_an_object_java_could_not_parse_stops_every_writer(s3_server, s3_table, content, why):
    """StorageLockFile.createFromStream throws on such an object, so Java writers cannot take the lock either."""
    storage, base = Storage.for_uri(s3_table)
    _put(s3_server, s3_table, content)
    with pytest.raises(WriteError, match=f"lock object .*table_lock.json is not a StorageBasedLockProvider lock: "
                                         f"{why}.*Delete it once no writer"):
        acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0))
    assert _get(s3_server, s3_table) == content


def test_jacksons_scalar_coercions_are_read_as_java_reads_them(s3_server, s3_table):
    storage, base = Storage.for_uri(s3_table)
    _put(s3_server, s3_table, f'{{"expired":"false","validUntil":"{_now_ms() + 60000}","owner":"j"}}'.encode())
    with pytest.raises(WriteError, match="held by j"):
        acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=0))


# --------------------------------------------------------------------------------------------- expiry


@pytest.mark.parametrize("where", ["s3", "local"])
def test_a_holder_that_stops_renewing_is_taken_over_only_after_its_validity(where, s3_table, tmp_path):
    storage, base = Storage.for_uri(s3_table if where == "s3" else str(tmp_path / "table"))
    config = _config(storage_validity_ms=1500, storage_renew_ms=150)
    lock = acquire(TableLocation.at(storage, base), config)
    time.sleep(2.0)  # longer than the validity: renewals keep it
    with pytest.raises(WriteError, match=lock.owner):
        acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=300))
    lock.check("committing")
    lock.renewal.stop()  # the holder stops renewing (a stalled or dead process)
    last_valid_until = _java_reads(storage.read_bytes(storage_lock_path(TableLocation.at(storage, base))), _now_ms())[2]
    other = acquire(TableLocation.at(storage, base), _config(wait_timeout_ms=10000), poll_ms=20)
    taken_ms = _now_ms()
    assert taken_ms > last_valid_until + 500, "taken before validUntil plus the clock drift buffer"
    assert taken_ms < last_valid_until + 500 + 5000
    with pytest.raises(InstantLostError, match="the table lock"):
        lock.check("committing")
    assert lock.provider.renew(lock.lease) is None  # its conditional renewal fails: the lock stays the other's
    lock.release()  # lost: releases nothing
    assert _java_reads(storage.read_bytes(storage_lock_path(TableLocation.at(storage, base))), _now_ms())[:2] == (True, other.owner)
    other.release()


# --------------------------------------------------------------------------------------------- two processes

_WORKER = r'''
import json, sys, time
from hudi_engine.config.lock_config import STORAGE_LOCK, LockConfig
from hudi_engine.storage import Storage
from hudi_engine.location import TableLocation
from hudi_engine.write.lock import table_lock

uri, rounds, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
storage, base = Storage.for_uri(uri)
config = LockConfig(wait_timeout_ms=120000, provider=STORAGE_LOCK, storage_validity_ms=30000, storage_renew_ms=1000)
time.sleep(max(0.0, start - time.time()))
held = []
for _ in range(rounds):
    with table_lock(TableLocation.at(storage, base), config, poll_ms=5) as lock:
        t0 = time.time()
        time.sleep(0.02)
        held.append((t0, time.time(), lock.owner))
print(json.dumps(held))
'''


@pytest.mark.parametrize("where", ["s3", "local"])
def test_two_processes_exclude_each_other_through_the_lock_object(where, s3_table, tmp_path):
    uri = s3_table if where == "s3" else str(tmp_path / "table")
    start = time.time() + 3  # both imported and waiting
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, uri, "15", str(start)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ)) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    held = sorted(h for out, _ in outs for h in json.loads(out))
    assert len(held) == 30 and len({h[2] for h in held}) == 30
    overlaps = [(a, b) for a, b in zip(held, held[1:]) if b[0] < a[1]]
    assert overlaps == [], f"{len(overlaps)} of 30 holds overlapped"
    storage, base = Storage.for_uri(uri)
    assert not storage.exists(lock_path(TableLocation.at(storage, base)))
    assert _java_reads(storage.read_bytes(storage_lock_path(TableLocation.at(storage, base))), _now_ms())[0] is False


def test_on_local_disks_a_stale_lock_is_taken_by_exactly_one_of_four_threads(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path / "table"))
    for _ in range(3):
        storage.write_bytes(storage_lock_path(TableLocation.at(storage, base)), _java_lock(False, _now_ms() - 600, "dead-owner"))
        winners = race_winners(str(tmp_path / "table"), _config(wait_timeout_ms=0))
        assert len(winners) == 1, winners


# --------------------------------------------------------------------------------------------- config and storages


def test_options_name_the_provider_and_hudis_storage_lock_keys():
    for name in ("StorageBasedLockProvider", STORAGE_LOCK):
        cfg = WriteConfig.from_options({"hoodie.write.lock.provider": name}).lock
        assert (cfg.provider, cfg.storage_validity_ms, cfg.storage_renew_ms) == (STORAGE_LOCK, 300_000, 30_000)
    cfg = WriteConfig.from_options({"hoodie.write.lock.provider": "StorageBasedLockProvider",
                                    "hoodie.write.lock.storage.validity.timeout.secs": "120",
                                    "hoodie.write.lock.storage.heartbeat.poll.secs": "12"}).lock  # 1.0.2's name
    assert (cfg.storage_validity_ms, cfg.storage_renew_ms) == (120_000, 12_000)
    with pytest.raises(ConfigError, match=r"hoodie.write.lock.storage.validity.timeout.secs=100 contradicts "
                                          r"hoodie.write.lock.storage.renew.interval.secs=11: .* at least 110"):
        WriteConfig.from_options({"hoodie.write.lock.provider": "StorageBasedLockProvider",
                                  "hoodie.write.lock.storage.validity.timeout.secs": "100",
                                  "hoodie.write.lock.storage.renew.interval.secs": "11"})
    with pytest.raises(ConfigError, match=r"hoodie.write.lock.storage.validity.timeout.secs='5': expected a whole "
                                          r"number >= 10"):
        WriteConfig.from_options({"hoodie.write.lock.storage.validity.timeout.secs": "5"})


def test_a_store_without_conditional_writes_is_refused_by_name_before_anything_is_written(tmp_path, monkeypatch):
    storage = Storage(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    with pytest.raises(ConfigError, match=r"hoodie.write.lock.provider=StorageBasedLockProvider cannot lock table t "
                                          r"on .* storage: its lock object t/.hoodie/.locks/table_lock.json must be "
                                          r"created and renewed by conditional writes") as e:
        with table_lock(TableLocation.at(storage, "t"), _config()):
            pass
    assert "DynamoDBBasedLockProvider" in str(e.value) and not list(tmp_path.iterdir())

    import hudi_engine.write.commit as commit

    created: list[tuple] = []
    monkeypatch.setattr(commit, "create_table", lambda *a, **k: created.append(a))
    rows = pa.table({"id": ["a"], "p": ["x"], "ts": pa.array([1], pa.int64())})
    with pytest.raises(ConfigError, match="StorageBasedLockProvider cannot lock table tbl/t on mock storage"):
        write("mock:///tbl/t", rows, OPTIONS)
    assert created == []


# --------------------------------------------------------------------------------------------- whole writes


def test_writes_on_s3_take_the_lock_object_and_wait_for_a_java_holder(s3_server, s3_table):
    rows = pa.table({"id": ["a", "b"], "p": ["x", "y"], "ts": pa.array([1, 1], pa.int64()), "v": ["one", "one"]})
    write(s3_table, rows, OPTIONS)
    keys = s3_server.keys(_bucket(s3_table))
    assert "table/" + KEY in keys and "table/.hoodie/lock" not in keys
    assert _java_reads(_get(s3_server, s3_table), _now_ms())[0] is False  # released
    before = rs_snapshot(s3_table)
    assert_same_rows(HudiTable.load(s3_table).read_snapshot(), before, "after the first write")
    assert sorted(before.column("v").to_pylist()) == ["one", "one"]

    java_owner = str(uuid.uuid4())  # a Java writer holds the lock: the next write waits, then gives up untouched
    _put(s3_server, s3_table, _java_lock(False, _now_ms() + 60000, java_owner))
    keys = s3_server.keys(_bucket(s3_table))
    update = pa.table({"id": ["a"], "p": ["x"], "ts": pa.array([2], pa.int64()), "v": ["two"]})
    with pytest.raises(WriteError, match=f"could not take the write lock within 500 ms .* held by {java_owner}"):
        write(s3_table, update, {**OPTIONS, "hoodie.write.lock.wait_time_ms": "500"})
    assert s3_server.keys(_bucket(s3_table)) == keys
    assert_same_rows(rs_snapshot(s3_table), before, "after the refused write")

    _put(s3_server, s3_table, _java_lock(True, _now_ms() + 60000, java_owner))  # Java released it
    write(s3_table, update, OPTIONS, table_services=True)  # the cleaning and archival take the lock object too
    after = rs_snapshot(s3_table)
    assert sorted(after.column("v").to_pylist()) == ["one", "two"]
    assert_same_rows(HudiTable.load(s3_table).read_snapshot(), after, "after the second write")


def test_a_write_on_a_local_disk_leaves_the_lock_object_released(tmp_path: Path):
    path = tmp_path / "t"
    rows = pa.table({"id": ["a"], "p": ["x"], "ts": pa.array([1], pa.int64()), "v": ["one"]})
    write(path, rows, OPTIONS)
    assert sorted(os.listdir(path / ".hoodie" / ".locks")) == ["table_lock.json"]
    assert not (path / ".hoodie" / "lock").exists()
    assert _java_reads((path / KEY).read_bytes(), _now_ms())[0] is False
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "local write")
