"""Errors raised by the engine. Each names the table, file, key or setting at fault and what was expected."""
from __future__ import annotations


class HudiError(Exception):
    """Base class of every error this engine raises on purpose."""


class TableNotFoundError(HudiError):
    """The path has no `.hoodie` folder or no `hoodie.properties`."""


class TableConfigError(HudiError):
    """`hoodie.properties` is missing a key, has a bad value, or a wrong checksum."""


class UnsupportedTableVersionError(TableConfigError):
    """The table's version or timeline layout is one this engine does not read or write."""


class TimelineError(HudiError):
    """A malformed instant file name or instant content, or an illegal state transition."""


class LogFormatError(HudiError):
    """A log file whose bytes do not follow the Hudi log format (unknown block type, header key, ...)."""


class HFileFormatError(HudiError):
    """An HFile whose bytes do not follow HFile version 3 as Hudi writes it, or cells the HFile writer refuses."""


class MetadataTableError(HudiError):
    """A metadata table (`.hoodie/metadata`) this engine cannot read or keep: a record, file or timeline that does not
    follow Hudi's metadata table as Hudi 0.14 .. 1.x write it."""


class MetadataTableDisabled(UserWarning):
    """An action of this engine disabled a table's metadata table (`TableConfig.disable_metadata_table`): the message
    names the table, the action and why it could not keep it. The next writer (Java's or this engine's, with
    hoodie.metadata.enable true, the default) rebuilds it from a listing."""


class SchemaError(HudiError):
    """A schema that cannot be converted, or an incompatible schema change."""


class UnsupportedReadError(HudiError):
    """A read whose rows this engine cannot build as Java Hudi does (bootstrap skeleton files, whose data columns
    live in the source table): refused naming the table rather than answered with other rows."""


class UnsupportedMergeError(UnsupportedReadError):
    """A read that would merge log records by a merger only Java Hudi runs (a custom HoodieRecordMerger, a payload
    class this engine does not implement): refused rather than merged another way (read-optimized reads, base files
    only, are not refused)."""


class KeyGeneratorError(HudiError):
    """A record key or partition path that cannot be built (null key, missing field, ...)."""


class WriteError(HudiError):
    """A write that was refused or failed; the table is left as it was."""


class ConfigError(WriteError):
    """An option with a bad value, or options that contradict each other or the table; raised before any write."""


class TableServiceError(WriteError):
    """A table service (compaction, cleaning) failed after a write committed: the data is in, the service is not."""

    def __init__(self, message: str, *, instant: str | None = None, service: str = "") -> None:
        super().__init__(message)
        self.instant = instant
        self.service = service


class SyncError(WriteError):
    """A catalog sync (Hive metastore, Glue) failed. After a commit, `instant` names the committed instant (its data
    is in the table) and `tool` the sync that failed; the next sync repairs the entry."""

    def __init__(self, message: str, *, instant: str | None = None, tool: str = "") -> None:
        super().__init__(message)
        self.instant = instant
        self.tool = tool


class ClusteringUpdateError(WriteError):
    """Hudi's HoodieClusteringUpdateException: a write that updates or deletes records of a file group under a pending
    clustering (`hoodie.clustering.updates.strategy`=SparkRejectUpdateStrategy), refused before any file is written."""


class ClusteringConflictError(WriteError):
    """A clustering that cannot complete: commits after its plan changed file groups it would replace with the slices
    it planned, dropping those changes (SparkAllowUpdateStrategy lets such updates in; Hudi's conflict resolution
    fails the clustering). Raised before the clustering writes anything; `instant` is the clustering, `other` the
    first such commit, `file_groups` the (partition, file id) both touched."""

    def __init__(self, message: str, *, instant: str, other: str, file_groups: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.instant = instant
        self.other = other
        self.file_groups = file_groups


class InstantLostError(WriteError):
    """A write whose instant stopped being inflight under it (rolled back by a writer that took the expired lock)."""


class ExecutorEnvironmentError(HudiError):
    """An executor's Python cannot run the engine: another Python version, a missing or too old package, or another
    engine version installed there. Raised before anything is written."""


class UnsupportedTableFeatureError(WriteError):
    """A table property or timeline state (another Hudi writer's) that this engine does not honour; raised before any
    file is written (hudi_engine.table_features)."""
