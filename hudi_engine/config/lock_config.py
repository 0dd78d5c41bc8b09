"""`LockConfig`: the table lock (which provider, how long to wait), heartbeats, and how concurrent writers are
resolved (`hoodie.write.lock.*`, `hoodie.write.concurrency.mode`, `hoodie.cleaner.policy.failed.writes`).

It lives in `config`, not beside the lock providers in `write`: `WriteConfig` holds it, and the config layer sits
below the write layer (tests/test_layers.py), so the lock code imports its config, never the other way round.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hudi_engine.config import keys as K
from hudi_engine.config.option import Options
from hudi_engine.errors import ConfigError

FILE_SYSTEM_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
STORAGE_LOCK = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
DYNAMODB_LOCK = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
SUPPORTED_LOCK_PROVIDERS = (FILE_SYSTEM_LOCK, STORAGE_LOCK, DYNAMODB_LOCK)
# Hudi's other providers: known, refused with a reason.
_REFUSED_LOCK_PROVIDERS = {
    "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider": "this engine has no ZooKeeper client",
    "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider": "this engine has no Hive metastore client",
    "org.apache.hudi.client.transaction.lock.InProcessLockProvider":
        "it excludes only writers inside one process, never a second process",
}
SINGLE_WRITER, OPTIMISTIC = "SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL"
EAGER, LAZY, NEVER = "EAGER", "LAZY", "NEVER"


def resolve_lock_provider(name: str) -> str:
    """The full class name of a supported lock provider given by full or short name; ConfigError otherwise."""
    given = name.strip()
    short = given.rsplit(".", 1)[-1]
    for full in SUPPORTED_LOCK_PROVIDERS:
        if given in (full, full.rsplit(".", 1)[-1]):
            return full
    supported = ", ".join(p.rsplit(".", 1)[-1] for p in SUPPORTED_LOCK_PROVIDERS)
    for full, why in _REFUSED_LOCK_PROVIDERS.items():
        if short == full.rsplit(".", 1)[-1]:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}={given!r} is not supported: {why}. Use one of {supported} "
                              "(docs/operations.md says which suits the table's storage)")
    raise ConfigError(f"{K.LOCK_PROVIDER.key}={given!r}: unknown lock provider; expected one of {supported} "
                      "(Hudi's class names, full or short)")


@dataclass(frozen=True)
class DynamoDBLockSettings:
    """Where DynamoDBBasedLockProvider keeps its lock item (Hudi's `hoodie.write.lock.dynamodb.*`)."""

    table: str = ""
    partition_key: str = ""  # "" -> the Hudi table's name
    region: str = ""  # "" -> AWS_REGION, else us-east-1 (as Hudi infers it)
    endpoint_url: str = ""
    billing_mode: str = "PAY_PER_REQUEST"
    read_capacity: int = 20
    write_capacity: int = 10
    table_creation_timeout_ms: int = 600_000


@dataclass(frozen=True)
class LockConfig:
    """The table lock, heartbeats, and how concurrent writers are resolved."""

    wait_timeout_ms: int = 60_000
    expiry_ms: int = 600_000  # the file-system lock's expiry; 0: never
    provider: str = FILE_SYSTEM_LOCK
    concurrency_mode: str = SINGLE_WRITER
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2
    failed_writes_policy: str = EAGER
    dynamodb: DynamoDBLockSettings = field(default_factory=DynamoDBLockSettings)
    storage_validity_ms: int = 300_000  # StorageBasedLockProvider: how long a lock or renewal stays valid
    storage_renew_ms: int = 30_000  # StorageBasedLockProvider: how often its holder renews it

    @staticmethod
    def from_options(o: Options) -> "LockConfig":
        provider = resolve_lock_provider(o[K.LOCK_PROVIDER])
        mode = o[K.CONCURRENCY_MODE]
        policy = o[K.FAILED_WRITES_POLICY]
        if mode == OPTIMISTIC:
            if o.is_set(K.FAILED_WRITES_POLICY) and policy == EAGER:
                raise ConfigError(
                    f"{K.CONCURRENCY_MODE.key}={mode} contradicts {K.FAILED_WRITES_POLICY.key}=EAGER: with several "
                    f"writers a pending instant may be another live writer's, so failed writes must be rolled back "
                    f"only once their heartbeat expired, by the cleaning (LAZY). Set {K.FAILED_WRITES_POLICY.key}="
                    "LAZY, or leave it out (optimistic concurrency implies LAZY)")
            policy = policy if o.is_set(K.FAILED_WRITES_POLICY) else LAZY
        interval, expiry = o[K.HEARTBEAT_INTERVAL_MS], round(o[K.LOCK_EXPIRE_MINUTES] * 60_000)
        if provider == FILE_SYSTEM_LOCK and expiry and expiry < 2 * interval:
            raise ConfigError(
                f"{K.LOCK_EXPIRE_MINUTES.key}={o[K.LOCK_EXPIRE_MINUTES]:g} minutes ({expiry} ms) contradicts "
                f"{K.HEARTBEAT_INTERVAL_MS.key}={interval}: a live writer renews the lock file with every heartbeat, "
                "so an expiry under two intervals lets another writer take its lock after one late heartbeat. Raise "
                f"{K.LOCK_EXPIRE_MINUTES.key} to at least {2 * interval / 60_000:g} minutes or lower the interval")
        dynamo = DynamoDBLockSettings(
            o[K.DYNAMODB_TABLE].strip(), o[K.DYNAMODB_PARTITION_KEY].strip(), o.get(K.DYNAMODB_REGION, "").strip(),
            o[K.DYNAMODB_ENDPOINT_URL].strip(), o[K.DYNAMODB_BILLING_MODE], o[K.DYNAMODB_READ_CAPACITY],
            o[K.DYNAMODB_WRITE_CAPACITY], o[K.DYNAMODB_TABLE_CREATION_TIMEOUT])
        if provider == DYNAMODB_LOCK and not dynamo.table:
            raise ConfigError(f"{K.LOCK_PROVIDER.key}=DynamoDBBasedLockProvider needs {K.DYNAMODB_TABLE.key}: the "
                              "DynamoDB table that holds the lock items")
        validity, renew = o[K.STORAGE_LOCK_VALIDITY_SECS], o[K.STORAGE_LOCK_RENEW_SECS]
        if provider == STORAGE_LOCK and validity < 10 * renew:  # StorageBasedLockConfig.Builder.checkRequiredProps
            raise ConfigError(
                f"{K.STORAGE_LOCK_VALIDITY_SECS.key}={validity} contradicts {K.STORAGE_LOCK_RENEW_SECS.key}={renew}: "
                "Hudi requires the validity to be at least 10 renew intervals, so a late renewal or two never lets "
                f"another writer take a live writer's lock. Raise {K.STORAGE_LOCK_VALIDITY_SECS.key} to at least "
                f"{10 * renew} or lower the interval")
        return LockConfig(o[K.LOCK_WAIT_MS], expiry, provider, mode, interval, o[K.HEARTBEAT_TOLERABLE_MISSES],
                          policy, dynamo, validity * 1000, renew * 1000)

    @property
    def optimistic(self) -> bool:
        return self.concurrency_mode == OPTIMISTIC

    @property
    def heartbeat_expiry_ms(self) -> int:
        """A heartbeat older than this belongs to a writer that died (interval x tolerable misses, as in Hudi)."""
        return self.heartbeat_interval_ms * self.heartbeat_tolerable_misses
