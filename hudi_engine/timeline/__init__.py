"""The active timeline (layout 1): instants, commit metadata JSON and the Avro plan/metadata files."""
from hudi_engine.timeline.avro_models import (
    avro_kind_for,
    embedded_schema,
    read_avro_metadata,
    write_avro_metadata,
)
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, RuntimeStats, WriteStat
from hudi_engine.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    INDEXING,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    datetime_to_instant,
    instant_to_datetime,
    new_instant_time,
)
from hudi_engine.timeline.timeline import META_FOLDER, Timeline

__all__ = [
    "Action", "State", "Instant", "InstantTimeGenerator", "new_instant_time", "instant_to_datetime",
    "datetime_to_instant", "COMMIT", "DELTA_COMMIT", "REPLACE_COMMIT", "COMPACTION", "LOG_COMPACTION", "CLEAN",
    "ROLLBACK", "SAVEPOINT", "RESTORE", "INDEXING",
    "CommitMetadata", "WriteStat", "RuntimeStats", "NULL_COMMIT",
    "read_avro_metadata", "write_avro_metadata", "embedded_schema", "avro_kind_for",
    "Timeline", "META_FOLDER",
]
