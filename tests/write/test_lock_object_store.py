"""The lock on a real S3 API (moto's server) and on DynamoDB: conditional writes make it exclusive, a stale lock is
taken over by one contender, a held lock is renewed, and a store without conditional writes is refused."""
from __future__ import annotations

import json
import threading
import time

import pyarrow.fs as pafs
import pytest
from lock_race import race_winners

from hudi_engine.config import LockConfig, WriteConfig
from hudi_engine.config.lock_config import DYNAMODB_LOCK, DynamoDBLockSettings
from hudi_engine.errors import ConfigError, InstantLostError, WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.write.heartbeat import Heartbeat, heartbeat_expired, last_heartbeat_ms
from hudi_engine.write.lock import acquire, table_lock
from hudi_engine.write.lock_providers import lock_path
from hudi_engine.write.renewal import Renewal


def _config(**kw) -> LockConfig:
    return LockConfig(**{"wait_timeout_ms": 20000, "expiry_ms": 60000, **kw})


def test_conditional_writes_on_s3(s3_table):
    storage, base = Storage.for_uri(s3_table)
    assert storage.is_s3 and storage.atomic_create and storage.compare_and_swap
    path = Storage.join(base, "f")
    v1 = storage.create_versioned(path, b"one")
    assert v1 and storage.create_versioned(path, b"two") is None
    assert not storage.create_exclusive(path, b"three") and storage.read_bytes(path) == b"one"
    v2 = storage.replace_if_version(path, b"four", v1)
    assert v2 and v2 != v1 and storage.replace_if_version(path, b"five", v1) is None
    assert storage.read_versioned(path).data == b"four"
    assert not storage.delete_if_version(path, v1) and storage.exists(path)
    v3 = storage.touch(path, b"six", v2)
    assert v3 and storage.touch(path, b"seven", v2) is None
    assert storage.delete_if_version(path, v3) and not storage.exists(path)
    assert storage.touch(path, b"", v3) is None and not storage.exists(path)  # a renewal never re-creates


def _race(s3_table: str, config: LockConfig, rounds: int, hold_s: float) -> list[tuple[float, float, str]]:
    """Two threads take the lock `rounds` times each (separate Storage objects); each records when it held it."""
    held: list[tuple[float, float, str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def contender(name: str) -> None:
        try:
            storage, base = Storage.for_uri(s3_table)
            start.wait()
            for _ in range(rounds):
                with table_lock(TableLocation.at(storage, base), config, poll_ms=5):
                    t0 = time.monotonic()
                    time.sleep(hold_s)
                    held.append((t0, time.monotonic(), name))
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=contender, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    return sorted(held)


def test_two_contenders_never_hold_the_s3_lock_at_once(s3_table):
    held = _race(s3_table, _config(), rounds=30, hold_s=0.01)
    assert len(held) == 60
    overlaps = [(a, b) for a, b in zip(held, held[1:]) if b[0] < a[1]]
    assert overlaps == [], f"{len(overlaps)} of 60 holds overlapped"
    storage, base = Storage.for_uri(s3_table)
    assert not storage.exists(lock_path(TableLocation.at(storage, base)))


def test_a_stale_s3_lock_is_taken_over_by_exactly_one_contender(s3_table):
    storage, base = Storage.for_uri(s3_table)
    for _ in range(3):
        storage.write_bytes(lock_path(TableLocation.at(storage, base)), json.dumps({"owner": "otherhost:1:x", "renewed_ms": int(time.time() * 1000),
                                                         "expiry_ms": 300}).encode())
        time.sleep(1.1)  # a holder that stopped renewing (S3 keeps modification times in whole seconds)
        winners = race_winners(s3_table, _config(wait_timeout_ms=0), poll_ms=5)
        assert len(winners) == 1, winners


def test_a_held_s3_lock_is_renewed_and_one_that_stopped_is_lost(s3_table, monkeypatch):
    storage, base = Storage.for_uri(s3_table)
    config = _config(expiry_ms=1500, heartbeat_interval_ms=300, wait_timeout_ms=300)
    with table_lock(TableLocation.at(storage, base), config) as lock:
        time.sleep(2.0)
        with pytest.raises(WriteError, match=lock.owner):
            with table_lock(TableLocation.at(storage, base), config):
                pass
        lock.check("committing")
        first = json.loads(storage.read_bytes(lock_path(TableLocation.at(storage, base))))
        assert first["owner"] == lock.owner and first["renewed_ms"] > first["acquired_ms"]
        monkeypatch.setattr(Renewal, "tick", lambda self: None)  # paused
        time.sleep(1.7)
        monkeypatch.undo()
        with table_lock(TableLocation.at(storage, base), _config(wait_timeout_ms=5000)) as other:
            with pytest.raises(InstantLostError, match="the table lock"):
                lock.check("committing")
            lock.renewal.tick()  # the holder resumes: its conditional renewal fails, the lock stays the other's
            assert json.loads(storage.read_bytes(lock_path(TableLocation.at(storage, base))))["owner"] == other.owner


def _renewed_twice(renewal: Renewal) -> None:
    """Wait for two renewals. Their period is a floor, not a schedule: on a loaded machine a round trip to the
    S3 (or DynamoDB) server takes a few hundred ms, so a fixed sleep would count fewer; the tolerance still holds."""
    deadline = time.monotonic() + 10
    while renewal.renewals < 2 and renewal.lost is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert renewal.renewals >= 2 and renewal.lost is None, (renewal.renewals, renewal.lost)


def test_heartbeats_on_s3_are_renewed_by_content_and_expire(s3_table):
    storage, base = Storage.for_uri(s3_table)
    beat = Heartbeat(TableLocation.at(storage, base), "20250101000000000", _config(heartbeat_interval_ms=200), "me").start()
    try:
        _renewed_twice(beat.renewal)
        assert time.time() * 1000 - last_heartbeat_ms(TableLocation.at(storage, base), "20250101000000000") < 400
        assert not heartbeat_expired(TableLocation.at(storage, base), "20250101000000000", 1000)
        storage.delete(beat.path)  # a writer rolling the instant back deletes it first
        time.sleep(0.5)
        assert beat.lost and not storage.exists(beat.path)
        with pytest.raises(InstantLostError, match="taken over or removed"):
            beat.check("committing")
    finally:
        beat.stop()
    assert heartbeat_expired(TableLocation.at(storage, base), "20250101000000000", 10**9)  # no heartbeat: a dead writer's


def test_the_file_lock_is_refused_on_a_store_without_conditional_writes(tmp_path):
    """A filesystem other than the local disk or S3 (here pyarrow's SubTreeFileSystem over a local folder) has no
    atomic create: a second writer could be admitted, so the file lock is refused there, naming the key."""
    storage = Storage(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    assert not storage.atomic_create
    with pytest.raises(ConfigError, match="hoodie.write.lock.provider=FileSystemBasedLockProvider cannot lock table "
                                          ".* it needs an atomic create-if-absent") as e:
        with table_lock(TableLocation.at(storage, "t"), _config()):
            pass
    assert "DynamoDBBasedLockProvider" in str(e.value)
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------------------------- DynamoDB


def _dynamo(s3_server, **kw) -> LockConfig:
    table = kw.pop("table", "hudi_locks")
    return _config(provider=DYNAMODB_LOCK, dynamodb=DynamoDBLockSettings(
        table=table, partition_key=kw.pop("key", "orders"), endpoint_url=s3_server.endpoint_url), **kw)


def test_dynamodb_lock_excludes_renews_and_is_taken_over_once_stale(s3_server, tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    config = _dynamo(s3_server, wait_timeout_ms=1200, table="locks_a")
    held = _race_dynamo(storage, base, config)
    assert [a for a, b in zip(held, held[1:]) if b[0] < a[1]] == []
    dynamo = s3_server.client("dynamodb")
    lock = acquire(TableLocation.at(storage, base), config)
    item = dynamo.get_item(TableName="locks_a", Key={"key": {"S": "orders"}}, ConsistentRead=True)["Item"]
    # Hudi's (AWS DynamoDB lock client's) item layout, so Java writers with that provider see this lock.
    assert set(item) == {"key", "ownerName", "leaseDuration", "recordVersionNumber"}
    assert item["ownerName"]["S"] == lock.owner and item["leaseDuration"]["S"] == "1200"
    _renewed_twice(lock.renewal)  # every 400 ms: the version changes, so a contender never sees it stale
    with pytest.raises(WriteError, match="could not take the write lock"):
        acquire(TableLocation.at(storage, base), _dynamo(s3_server, wait_timeout_ms=200, table="locks_a"))
    lock.renewal.stop()  # the holder dies without releasing: one lease later the item is stale
    t0 = time.monotonic()
    other = acquire(TableLocation.at(storage, base), _dynamo(s3_server, wait_timeout_ms=3000, table="locks_a"), poll_ms=50)
    assert time.monotonic() - t0 >= 1.1
    assert lock.lost is not None or lock.renewal.tick() is None
    other.release()
    assert "Item" not in dynamo.get_item(TableName="locks_a", Key={"key": {"S": "orders"}}, ConsistentRead=True)


def _race_dynamo(storage: Storage, base: str, config: LockConfig) -> list[tuple[float, float]]:
    held: list[tuple[float, float]] = []
    errors: list[BaseException] = []

    def contender() -> None:
        try:
            for _ in range(10):
                with table_lock(TableLocation.at(storage, base), config, poll_ms=5):
                    t0 = time.monotonic()
                    time.sleep(0.01)
                    held.append((t0, time.monotonic()))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=contender) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert len(held) == 20
    return sorted(held)


def test_dynamodb_lock_works_for_a_table_on_any_storage(s3_server, tmp_path):
    """A store without conditional writes can still be written through a lock service."""
    storage = Storage(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    with table_lock(TableLocation.at(storage, "t"), _dynamo(s3_server, table="locks_b")) as lock:
        assert lock.describe() == "DynamoDB table locks_b, key 'orders'"
    options = {"hoodie.write.lock.provider": "DynamoDBBasedLockProvider", "hoodie.write.lock.dynamodb.table": "x"}
    assert WriteConfig.from_options(options).lock.provider == DYNAMODB_LOCK


def test_a_write_to_a_store_without_conditional_writes_is_refused_before_the_table_is_created(monkeypatch):
    """A whole write (here to pyarrow's in-memory `mock://` filesystem) stops before anything is written."""
    import pyarrow as pa
    from local_write import write

    import hudi_engine.write.commit as commit

    created = []
    monkeypatch.setattr(commit, "create_table", lambda *a, **k: created.append(a))
    rows = pa.table({"id": ["a"], "p": ["x"], "ts": pa.array([1], pa.int64())})
    with pytest.raises(ConfigError, match="hoodie.write.lock.provider=FileSystemBasedLockProvider cannot lock table "
                                          "tbl/t on mock storage"):
        write("mock:///tbl/t", rows, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                                      "hoodie.datasource.write.partitionpath.field": "p"})
    assert created == []
