"""Lock providers behind `hoodie.write.lock.provider`, each with the guarantee it can give on a table's storage.

* `FileSystemLockProvider` (FileSystemBasedLockProvider): the file `.hoodie/lock` (where
  Hudi's file-system provider keeps it), created only if absent. That is atomic on local disks (a hard link) and on
  S3 (`If-None-Match: *`, through boto3); elsewhere (HDFS, GCS, Azure) this engine has no atomic create, so the
  provider is refused there. The file holds the owner and its expiry (`hoodie.write.lock.filesystem.expire`); the
  holder renews it with every heartbeat: on S3 by a rewrite conditional on the ETag it last wrote, on local disks by
  touching it inside a `flock` critical section. A lock older than its expiry (or held by a dead process of this
  host) is taken over: on S3 by the same conditional rewrite (two takers: one wins), locally inside the critical
  section. A holder whose renewal fails has lost the lock.
* `StorageLockProvider` (StorageBasedLockProvider): Hudi 1.1's lock object `.hoodie/.locks/table_lock.json`, written
  and read exactly as Hudi's StorageBasedLockProvider does (`StorageLockData`), so Java writers with that provider and
  this engine's writers exclude each other on S3. On local disks (where Hudi has no storage lock client) the same
  conditional writes are made atomic by a `flock` critical section; elsewhere the provider is refused.
* `DynamoDBLockProvider` (DynamoDBBasedLockProvider): an item in a DynamoDB table, laid out and updated as Hudi's
  (AWS's DynamoDB lock client: partition key `key`, `ownerName`, `leaseDuration`, `recordVersionNumber`), so Java
  writers using that provider on the same table and key exclude this engine's writers and the other way round.
  Conditional puts on the record version number; a lock is stale once its version stayed the same for its lease
  (watched, not compared with a clock); renewed every third of the lease.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, replace
from typing import Any

from hudi_engine.config import keys as K
from hudi_engine.config.lock_config import DYNAMODB_LOCK, STORAGE_LOCK, DynamoDBLockSettings, LockConfig
from hudi_engine.errors import ConfigError, WriteError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage, Versioned

LOCK_FILE = "lock"
_NEVER_MS = 2**62


def lock_path(location: TableLocation) -> str:
    return location.meta(LOCK_FILE)


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock and since when. `expiry_ms` is the holder's own declared expiry (None: unknown, e.g. a lock
    file Java wrote; 0: never); `expires_ms` the absolute expiry an older engine version wrote."""

    owner: str
    acquired_ms: int = 0
    renewed_ms: int = 0
    expiry_ms: int | None = None
    expires_ms: int | None = None

    def renewed(self, now_ms: int) -> LockHolder:
        return replace(self, renewed_ms=now_ms)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def to_bytes(self) -> bytes:
        expires = _NEVER_MS if not self.expiry_ms else self.renewed_ms + self.expiry_ms
        return json.dumps({**self.to_dict(), "expires_ms": expires, "host": socket.gethostname(),
                           "pid": os.getpid()}).encode()

    @staticmethod
    def from_bytes(data: bytes) -> LockHolder:
        try:
            d = json.loads(data or b"{}")
        except ValueError:
            d = {}
        if not isinstance(d, dict):
            d = {}
        return LockHolder(str(d.get("owner", "")), int(d.get("acquired_ms") or 0), int(d.get("renewed_ms") or 0),
                          None if d.get("expiry_ms") is None else int(d["expiry_ms"]),
                          None if d.get("expires_ms") is None else int(d["expires_ms"]))


@dataclass(frozen=True)
class Lease:
    """A lock this process holds: its holder record and the version a renewal or release compares against."""

    holder: LockHolder
    version: str


class LockProvider(ABC):
    name: str = ""
    lease_ms: int = 0  # how long a held lock stays valid without renewal (0: never expires)
    renew_period_ms: int = 0  # how often a holder renews it (0: never)
    expiry_by_observation = False  # a stale lock is known only after watching it unchanged for one lease

    @abstractmethod
    def describe(self) -> str: ...

    @abstractmethod
    def holder(self) -> LockHolder | None: ...

    @abstractmethod
    def try_acquire(self, holder: LockHolder) -> Lease | None:
        """One attempt: the lock if it was free or stale (then taken over), else None."""

    @abstractmethod
    def renew(self, lease: Lease) -> Lease | None:
        """The renewed lease, None if the lock is no longer ours."""

    @abstractmethod
    def release(self, lease: Lease) -> None: ...


# --------------------------------------------------------------------------------------------- lock file


def read_lock_file(storage: Storage, path: str) -> LockHolder | None:
    current = storage.read_versioned(path)
    return None if current is None else LockHolder.from_bytes(current.data)


class FileSystemLockProvider(LockProvider):
    name = "FileSystemBasedLockProvider"

    def __init__(self, location: TableLocation, expiry_ms: int, renew_period_ms: int) -> None:
        self.storage = location.storage
        self.path = lock_path(location)
        self.folder = location.meta_path
        self.lease_ms = expiry_ms
        self.renew_period_ms = renew_period_ms if expiry_ms else 0

    def describe(self) -> str:
        return f"lock file {self.path}"

    def holder(self) -> LockHolder | None:
        return read_lock_file(self.storage, self.path)

    def try_acquire(self, holder: LockHolder) -> Lease | None:
        s = self.storage
        body = holder.to_bytes()
        version = s.create_versioned(self.path, body)
        if version is not None:
            return Lease(holder, version)
        current = s.read_versioned(self.path)
        if current is None or not self._stale(current):
            return None  # released meanwhile (the next poll creates it), or held by a live writer
        if s.compare_and_swap:  # two takers: the conditional rewrite lets one through
            version = s.replace_if_version(self.path, body, current.version)
            return None if version is None else Lease(holder, version)
        with s.critical_section(self.folder):
            again = s.read_versioned(self.path)
            if again is None or again.version != current.version or not self._stale(again):
                return None  # renewed or taken over meanwhile
            s.delete(self.path)
        version = s.create_versioned(self.path, body)
        return None if version is None else Lease(holder, version)

    def _stale(self, current: Versioned) -> bool:
        h = LockHolder.from_bytes(current.data)
        now = int(time.time() * 1000)
        if _owner_is_dead(h.owner):
            return True
        if h.expiry_ms is None and h.expires_ms is not None:  # written by an older version of this engine
            return h.expires_ms < now
        expiry = self.lease_ms if h.expiry_ms is None else h.expiry_ms
        return bool(expiry) and now - max(h.renewed_ms, current.mtime_ms) > expiry

    def renew(self, lease: Lease) -> Lease | None:
        s = self.storage
        holder = lease.holder.renewed(int(time.time() * 1000))
        if s.compare_and_swap:
            version = s.replace_if_version(self.path, holder.to_bytes(), lease.version)
            return None if version is None else Lease(holder, version)
        try:
            with s.critical_section(self.folder):
                current = s.read_versioned(self.path)
                if current is None or LockHolder.from_bytes(current.data).owner != lease.holder.owner:
                    return None
                version = s.touch(self.path)
        except FileNotFoundError:
            return None
        return None if version is None else Lease(holder, version)

    def release(self, lease: Lease) -> None:
        s = self.storage
        if s.compare_and_swap:
            s.delete_if_version(self.path, lease.version)
            return
        try:
            with s.critical_section(self.folder):
                current = s.read_versioned(self.path)
                if current is not None and LockHolder.from_bytes(current.data).owner == lease.holder.owner:
                    s.delete(self.path)
        except FileNotFoundError:
            pass  # the table's .hoodie is gone (a failed first write removed it): nothing to release


def _owner_is_dead(owner: str) -> bool:
    """True only when the owner is a process of this host that is not running (elsewhere: wait for expiry)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


# --------------------------------------------------------------------------------------------- storage lock
# Hudi 1.1's StorageBasedLockProvider (org.apache.hudi.client.transaction.lock): the lock object's path is
# `StorageLockClient.getLockFolderPath(basePath)` (HoodieTableMetaClient.LOCKS_FOLDER_NAME = ".hoodie/.locks") +
# `StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME`; its content is `models.StorageLockData` as Jackson writes
# it. S3StorageLockClient.tryUpsertLockFile creates it with `If-None-Match: *` when no lock object was read and
# otherwise overwrites it with `If-Match: <the ETag read>`; the object is never deleted.

LOCKS_FOLDER = ".locks"
STORAGE_LOCK_FILE = "table_lock.json"
# StorageBasedLockProvider.CLOCK_DRIFT_BUFFER_MS: a lock is expired only once the reader's clock is this far past
# its `validUntil` (isCurrentTimeCertainlyOlderThanDistributedTime).
CLOCK_DRIFT_BUFFER_MS = 500


def storage_lock_path(location: TableLocation) -> str:
    return location.meta(LOCKS_FOLDER, STORAGE_LOCK_FILE)


@dataclass(frozen=True)
class StorageLockData:
    """The lock object's JSON (Hudi's `StorageLockData`): `expired` (set by the holder's release), `validUntil`
    (epoch ms; renewals push it on) and `owner` (the holder's id)."""

    expired: bool
    valid_until_ms: int
    owner: str

    def to_bytes(self) -> bytes:
        # Jackson's order for a @JsonCreator class: the creator's parameters (expired, validUntil, owner); compact.
        return json.dumps({"expired": self.expired, "validUntil": self.valid_until_ms, "owner": self.owner},
                          separators=(",", ":")).encode()

    @staticmethod
    def from_bytes(data: bytes, path: str) -> StorageLockData:
        """Parsed as `StorageLockFile.createFromStream` does: all three properties required, `expired` and
        `validUntil` not null, unknown properties ignored, Jackson's default scalar coercions (numbers and numeric
        text for `validUntil`, "true"/"false" for `expired`). WriteError otherwise: Java writers fail on such an
        object too, so nobody may take the lock until it is looked at."""
        try:
            d = json.loads(data)
        except ValueError as e:
            raise _bad_lock_object(path, data, f"not JSON ({e})") from None
        if not isinstance(d, dict):
            raise _bad_lock_object(path, data, "not a JSON object")
        missing = [k for k in ("expired", "validUntil", "owner") if k not in d]
        if missing:
            raise _bad_lock_object(path, data, "missing " + ", ".join(missing))
        expired, valid_until, owner = d["expired"], d["validUntil"], d["owner"]
        if isinstance(expired, str) and expired.strip().lower() in ("true", "false"):
            expired = expired.strip().lower() == "true"
        if not isinstance(expired, bool):
            raise _bad_lock_object(path, data, f"expired={expired!r} is not a boolean")
        if isinstance(valid_until, str):
            try:
                valid_until = int(valid_until.strip())
            except ValueError:
                pass
        if isinstance(valid_until, float) and valid_until.is_integer():
            valid_until = int(valid_until)
        if isinstance(valid_until, bool) or not isinstance(valid_until, int):
            raise _bad_lock_object(path, data, f"validUntil={valid_until!r} is not epoch milliseconds")
        if owner is not None and not isinstance(owner, str):
            raise _bad_lock_object(path, data, f"owner={owner!r} is not a string")
        return StorageLockData(expired, valid_until, owner or "")

    def held_at(self, now_ms: int) -> bool:
        """StorageBasedLockProvider.isLockStillValid: not released and not certainly past its validity."""
        return not self.expired and now_ms <= self.valid_until_ms + CLOCK_DRIFT_BUFFER_MS


def _bad_lock_object(path: str, data: bytes, why: str) -> WriteError:
    return WriteError(
        f"lock object {path} is not a StorageBasedLockProvider lock: {why} (content {data[:200]!r}). Hudi's writers "
        "cannot read it either, so no writer takes the lock. Delete it once no writer of the table is running.")


class StorageLockProvider(LockProvider):
    """Hudi's StorageBasedLockProvider protocol: one lock object per table, created if absent, overwritten only at
    the version last read (a takeover: released, or past its `validUntil` plus the clock drift buffer), renewed at the
    version last written, released by marking it expired. On S3 the store checks the versions (ETags); on local
    disks every read and write of the object happens in a `flock` critical section on its folder."""

    name = "StorageBasedLockProvider"

    def __init__(self, location: TableLocation, validity_ms: int, renew_period_ms: int) -> None:
        self.storage = location.storage
        self.path = storage_lock_path(location)
        self.folder = location.meta(LOCKS_FOLDER)
        self.lease_ms = validity_ms
        self.renew_period_ms = renew_period_ms

    def describe(self) -> str:
        return f"lock object {self.path}"

    def read(self) -> tuple[str, StorageLockData] | None:
        """The lock object's version and content, None when absent (StorageLockClient.readCurrentLockFile)."""
        if self.storage.compare_and_swap:
            return self._read()
        try:
            with self.storage.critical_section(self.folder):
                return self._read()
        except FileNotFoundError:
            return None  # no locks folder: no lock object

    def _read(self) -> tuple[str, StorageLockData] | None:
        current = self.storage.read_versioned(self.path)
        if current is None:
            return None
        return self._version(current), StorageLockData.from_bytes(current.data, self.path)

    def _version(self, current: Versioned) -> str:
        if self.storage.compare_and_swap:
            return current.version  # the ETag
        # Locally the inode and modification time, plus the content: a time stamp of the same clock tick on a reused
        # inode can never pass for a version another owner wrote.
        return f"{current.version}:{hashlib.blake2b(current.data, digest_size=8).hexdigest()}"

    def holder(self) -> LockHolder | None:
        current = self.read()
        if current is None or not current[1].held_at(_now_ms()):
            return None
        return LockHolder(current[1].owner, expires_ms=current[1].valid_until_ms)

    def try_acquire(self, holder: LockHolder) -> Lease | None:
        if self.storage.compare_and_swap:
            return self._try_acquire(holder)
        self.storage.mkdirs(self.folder)
        try:
            with self.storage.critical_section(self.folder):
                return self._try_acquire(holder)
        except FileNotFoundError:
            return None  # the folder was removed meanwhile (a failed first write's cleanup): try again

    def _try_acquire(self, holder: LockHolder) -> Lease | None:
        current = self._read()
        now = _now_ms()
        if current is not None and current[1].held_at(now):
            return None
        held = holder.renewed(now)
        version = self._write(StorageLockData(False, now + self.lease_ms, held.owner),
                              None if current is None else current[0])
        return None if version is None else Lease(held, version)

    def renew(self, lease: Lease) -> Lease | None:
        now = _now_ms()
        held = lease.holder.renewed(now)
        version = self._swap(StorageLockData(False, now + self.lease_ms, held.owner), lease.version)
        return None if version is None else Lease(held, version)

    def release(self, lease: Lease) -> None:
        # StorageBasedLockProvider.tryExpireCurrentLock: the same validUntil, marked expired; a failed precondition
        # means another writer took it over after it went stale: nothing of ours to release.
        h = lease.holder
        self._swap(StorageLockData(True, h.renewed_ms + self.lease_ms, h.owner), lease.version)

    def _swap(self, data: StorageLockData, version: str) -> str | None:
        if self.storage.compare_and_swap:
            return self._write(data, version)
        try:
            with self.storage.critical_section(self.folder):
                return self._write(data, version)
        except FileNotFoundError:
            return None  # the table's .hoodie is gone (a failed first write removed it)

    def _write(self, data: StorageLockData, version: str | None) -> str | None:
        """Create the object (`version` None) or overwrite it at `version`; its new version, None when the condition
        failed. Locally the caller holds the critical section."""
        s = self.storage
        body = data.to_bytes()
        if s.compare_and_swap:
            written = s.create_versioned(self.path, body) if version is None else \
                s.replace_if_version(self.path, body, version)
            if written is not None:
                return written
            # A retried request whose first attempt went through fails its own precondition: the object then holds
            # exactly what was written (owners are unique per acquisition), and it is ours.
            again = self._read()
            return again[0] if again is not None and again[1] == data else None
        current = s.read_versioned(self.path)
        if (None if current is None else self._version(current)) != version:
            return None
        out = s.open_output(self.path)  # replaced whole (a rename): a process killed mid-write leaves no torn object
        try:
            out.stream.write(body)
            out.commit()
        except BaseException:
            out.abort()
            raise
        after = s.read_versioned(self.path)
        return None if after is None else self._version(after)


def _now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------------------------- DynamoDB

_PK, _OWNER, _LEASE, _RVN, _RELEASED = "key", "ownerName", "leaseDuration", "recordVersionNumber", "isReleased"
_clients: dict[tuple[str, str | None], Any] = {}
_clients_lock = threading.Lock()


def _dynamodb_client(region: str, endpoint_url: str | None) -> Any:
    """One boto3 DynamoDB client per region and endpoint and process (clients are thread-safe, slow to make)."""
    import boto3

    with _clients_lock:
        client = _clients.get((region, endpoint_url))
        if client is None:
            client = boto3.session.Session().client("dynamodb", region_name=region, endpoint_url=endpoint_url)
            # botocore builds `client.exceptions` lazily and not thread-safely: two threads' first use can each
            # make their own classes, and an `except` on one set misses an error raised as the other.
            client.exceptions  # noqa: B018
            _clients[(region, endpoint_url)] = client
        return client


_NAMES = {"#pk": _PK, "#on": _OWNER, "#ld": _LEASE, "#rvn": _RVN}


class DynamoDBLockProvider(LockProvider):
    name = "DynamoDBBasedLockProvider"
    expiry_by_observation = True

    def __init__(self, settings: DynamoDBLockSettings, key: str, lease_ms: int) -> None:
        region = settings.region or os.environ.get("AWS_REGION") or "us-east-1"
        self.client = _dynamodb_client(region, settings.endpoint_url or None)
        self.table = settings.table
        self.key = key
        self.lease_ms = lease_ms
        self.renew_period_ms = max(1, lease_ms // 3)
        self._seen: tuple[str, float] | None = None  # (record version, when this process first saw it)
        self._ensure_table(settings)

    def describe(self) -> str:
        return f"DynamoDB table {self.table}, key {self.key!r}"

    def _ensure_table(self, settings: DynamoDBLockSettings) -> None:
        errors = self.client.exceptions
        try:
            status = self.client.describe_table(TableName=self.table)["Table"]["TableStatus"]
        except errors.ResourceNotFoundException:
            kwargs: dict[str, Any] = {"BillingMode": settings.billing_mode}
            if settings.billing_mode == "PROVISIONED":
                kwargs["ProvisionedThroughput"] = {"ReadCapacityUnits": settings.read_capacity,
                                                   "WriteCapacityUnits": settings.write_capacity}
            try:
                self.client.create_table(TableName=self.table, KeySchema=[{"AttributeName": _PK, "KeyType": "HASH"}],
                                         AttributeDefinitions=[{"AttributeName": _PK, "AttributeType": "S"}], **kwargs)
            except errors.ResourceInUseException:
                pass  # another writer created it first
            status = "CREATING"
        deadline = time.monotonic() + settings.table_creation_timeout_ms / 1000
        while status not in ("ACTIVE", "UPDATING"):
            if time.monotonic() >= deadline:
                raise WriteError(f"DynamoDB lock table {self.table} is {status}, not ACTIVE, after "
                                 f"{settings.table_creation_timeout_ms} ms ({K.DYNAMODB_TABLE_CREATION_TIMEOUT.key})")
            time.sleep(0.5)
            try:
                status = self.client.describe_table(TableName=self.table)["Table"]["TableStatus"]
            except errors.ResourceNotFoundException:
                status = "CREATING"  # another writer's create_table won the race but is not visible yet

    def _item(self) -> dict | None:
        return self.client.get_item(TableName=self.table, Key={_PK: {"S": self.key}}, ConsistentRead=True).get("Item")

    def holder(self) -> LockHolder | None:
        item = self._item()
        if item is None or _RELEASED in item:
            return None
        return LockHolder(item.get(_OWNER, {}).get("S", ""), expiry_ms=int(item.get(_LEASE, {}).get("S") or 0))

    def try_acquire(self, holder: LockHolder) -> Lease | None:
        item = self._item()
        version = uuid.uuid4().hex
        new = {_PK: {"S": self.key}, _OWNER: {"S": holder.owner}, _LEASE: {"S": str(self.lease_ms)},
               _RVN: {"S": version}}
        if item is None:
            condition, values = "attribute_not_exists(#pk)", None
        else:
            seen = item[_RVN]["S"]
            if _RELEASED in item:
                condition, values = "attribute_exists(#pk) AND #rvn = :rvn", {":rvn": {"S": seen}}
            else:
                now = time.monotonic()
                if self._seen is None or self._seen[0] != seen:
                    self._seen = (seen, now)  # a holder renews by changing the version: watch it for one lease
                    return None
                if (now - self._seen[1]) * 1000 < int(item.get(_LEASE, {}).get("S") or self.lease_ms):
                    return None
                condition, values = "attribute_exists(#pk) AND #rvn = :rvn", {":rvn": {"S": seen}}
        if not self._put(new, condition, values):
            return None
        self._seen = None
        return Lease(holder, version)

    def _put(self, item: dict, condition: str, values: dict | None) -> bool:
        names = {k: v for k, v in _NAMES.items() if k in condition}
        kwargs: dict[str, Any] = {"TableName": self.table, "Item": item, "ConditionExpression": condition,
                                  "ExpressionAttributeNames": names}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        try:
            self.client.put_item(**kwargs)
        except self.client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def renew(self, lease: Lease) -> Lease | None:
        version = uuid.uuid4().hex
        try:
            self.client.update_item(
                TableName=self.table, Key={_PK: {"S": self.key}}, UpdateExpression="SET #rvn = :new, #ld = :ld",
                ConditionExpression="attribute_exists(#pk) AND #on = :owner AND #rvn = :old",
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={":new": {"S": version}, ":ld": {"S": str(self.lease_ms)},
                                           ":owner": {"S": lease.holder.owner}, ":old": {"S": lease.version}})
        except self.client.exceptions.ConditionalCheckFailedException:
            return None
        return Lease(lease.holder.renewed(int(time.time() * 1000)), version)

    def release(self, lease: Lease) -> None:
        try:
            self.client.delete_item(
                TableName=self.table, Key={_PK: {"S": self.key}},
                ConditionExpression="attribute_exists(#pk) AND #on = :owner AND #rvn = :rvn",
                ExpressionAttributeNames={k: _NAMES[k] for k in ("#pk", "#on", "#rvn")},
                ExpressionAttributeValues={":owner": {"S": lease.holder.owner}, ":rvn": {"S": lease.version}})
        except self.client.exceptions.ConditionalCheckFailedException:
            pass  # taken over after it went stale: nothing of ours to release


# --------------------------------------------------------------------------------------------- choice


def require_safe_provider(location: TableLocation, config: LockConfig) -> None:
    """ConfigError (naming the key) when `config.provider` cannot exclude a second writer on the table's storage, or
    lacks its client library. Cheap: no lock service is contacted."""
    storage = location.storage
    short = config.provider.rsplit(".", 1)[-1]
    if config.provider == STORAGE_LOCK:
        if storage.is_local or storage.compare_and_swap:
            return
        missing = ("; boto3 is not installed (pip install boto3)" if storage.is_s3 else "")
        raise ConfigError(
            f"{K.LOCK_PROVIDER.key}={short} cannot lock table {location.base_path} on {storage.scheme} storage: its "
            f"lock object {storage_lock_path(location)} must be created and renewed by conditional writes "
            f"(If-None-Match / If-Match), which this engine makes on S3 (through boto3) and on local disks{missing}. "
            "Hudi itself has them on S3 and GCS only; this engine has no GCS client. A second writer could be "
            f"admitted, so the write is refused. Use DynamoDBBasedLockProvider ({K.DYNAMODB_TABLE.key}=...), which "
            "works with any storage.")
        return
    if config.provider == DYNAMODB_LOCK:
        try:
            import boto3  # noqa: F401
        except ImportError:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}={short} needs boto3: pip install boto3") from None
        return
    if not storage.atomic_create:
        missing = ("; boto3 is not installed (pip install boto3)" if storage.is_s3 else "")
        raise ConfigError(
            f"{K.LOCK_PROVIDER.key}={short} cannot lock table {location.base_path} on {storage.scheme} storage: it "
            f"needs an atomic create-if-absent, which this engine has on local disks and on S3 (conditional writes "
            f"through boto3){missing}. A second writer could be admitted, so the write is refused. Use "
            f"DynamoDBBasedLockProvider ({K.DYNAMODB_TABLE.key}=...), which works with any storage.")


def lock_provider(location: TableLocation, config: LockConfig, *, table_name: str | None) -> LockProvider:
    """The provider `config.provider` names, refused (ConfigError naming the key) where it cannot exclude a second
    writer on the table's storage."""
    require_safe_provider(location, config)
    if config.provider == DYNAMODB_LOCK:
        key = config.dynamodb.partition_key or table_name
        if not key:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}=DynamoDBBasedLockProvider: set {K.DYNAMODB_PARTITION_KEY.key} "
                              f"(or the table name, {K.TABLE_NAME.key}) to name the table's lock item")
        return DynamoDBLockProvider(config.dynamodb, key, max(1000, config.wait_timeout_ms))
    if config.provider == STORAGE_LOCK:
        return StorageLockProvider(location, config.storage_validity_ms, config.storage_renew_ms)
    return FileSystemLockProvider(location, config.expiry_ms, config.heartbeat_interval_ms)
