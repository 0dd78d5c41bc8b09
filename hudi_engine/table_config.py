"""`.hoodie/hoodie.properties`: the table config (FORMAT.md, Table config).

Loading follows `HoodieTableConfig.fetchConfigs`: read `hoodie.properties`; if it is unreadable or its checksum
is wrong, fall back to `hoodie.properties.backup` (left behind by an interrupted config update). Saving follows
`HoodieTableConfig.update`: copy the current file to the backup, write the new file, delete the backup.
"""
from __future__ import annotations

import json
import re
import warnings
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .errors import MetadataTableDisabled, TableConfigError, TableNotFoundError, UnsupportedTableVersionError
from .java_properties import PropertiesError, format_properties, java_date_string, java_instant_string, parse_properties
from .keygen import infer_key_generator_class
from .location import TableLocation
from .payload import MERGE_MODE_PAYLOADS, builtin_class_name
from .schema import schema_to_json, to_create_schema
from .storage import Storage

PROPERTIES_FILE = "hoodie.properties"
PROPERTIES_BACKUP_FILE = "hoodie.properties.backup"

# Keys (HoodieTableConfig)
NAME = "hoodie.table.name"
DATABASE_NAME = "hoodie.database.name"
TABLE_TYPE = "hoodie.table.type"
VERSION = "hoodie.table.version"
TIMELINE_LAYOUT_VERSION = "hoodie.timeline.layout.version"
ARCHIVELOG_FOLDER = "hoodie.archivelog.folder"
PRECOMBINE_FIELD = "hoodie.table.precombine.field"
RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
PARTITION_FIELDS = "hoodie.table.partition.fields"
KEY_GENERATOR_CLASS = "hoodie.table.keygenerator.class"
KEY_GENERATOR_TYPE = "hoodie.table.keygenerator.type"  # 1.x writes the type, often without the class
ORDERING_FIELDS = "hoodie.table.ordering.fields"  # table version 9: replaces hoodie.table.precombine.field
RECORD_MERGE_MODE = "hoodie.record.merge.mode"  # 1.x: COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING or CUSTOM
PARTIAL_UPDATE_MODE = "hoodie.table.partial.update.mode"  # 1.1+: NONE or how a partial record is completed
LEGACY_PAYLOAD_CLASS = "hoodie.table.legacy.payload.class"  # 1.1+: the payload a v9 table's merge mode came from
RECORD_MERGE_STRATEGY_ID = "hoodie.record.merge.strategy.id"
TIMELINE_PATH = "hoodie.timeline.path"  # layout 2: the active timeline's folder under .hoodie
TIMELINE_HISTORY_PATH = "hoodie.timeline.history.path"  # layout 2: the LSM history folder under it
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
DROP_PARTITION_COLUMNS = "hoodie.datasource.write.drop.partition.columns"
CREATE_SCHEMA = "hoodie.table.create.schema"
CHECKSUM = "hoodie.table.checksum"
PAYLOAD_CLASS = "hoodie.compaction.payload.class"
RECORD_MERGER_STRATEGY = "hoodie.compaction.record.merger.strategy"
POPULATE_META_FIELDS = "hoodie.populate.meta.fields"
BASE_FILE_FORMAT = "hoodie.table.base.file.format"
LOG_FILE_FORMAT = "hoodie.table.log.file.format"
TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
METADATA_PARTITIONS_INFLIGHT = "hoodie.table.metadata.partitions.inflight"
PARTITION_METAFILE_USE_BASE_FORMAT = "hoodie.partition.metafile.use.base.format"
CDC_ENABLED = "hoodie.table.cdc.enabled"
BOOTSTRAP_BASE_PATH = "hoodie.bootstrap.base.path"
# Hudi 1.x writer options (HoodieWriteConfig, since 1.0.0) that keep a shared table at version 6, named in errors.
WRITE_TABLE_VERSION = "hoodie.write.table.version"
AUTO_UPGRADE = "hoodie.write.auto.upgrade"

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
TABLE_TYPES = (COPY_ON_WRITE, MERGE_ON_READ)
DEFAULT_PAYLOAD_CLASS = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_RECORD_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"  # HoodieRecordMerger.DEFAULT_MERGER_STRATEGY_UUID
SUPPORTED_TABLE_VERSION = 6  # the version of a new table unless hoodie.write.table.version says otherwise
# Versions this engine writes (tables of versions 8 and 9 with parquet base files: `require_writable`).
WRITABLE_TABLE_VERSIONS = (6, 8, 9)
DEFAULT_TIMELINE_PATH = "timeline"
SUPPORTED_TIMELINE_LAYOUT = 1
# Versions this engine reads, with the timeline layout each has (Hudi 1.x upgrades the timeline with the version).
READABLE_TABLE_VERSIONS = {6: 1, 8: 2, 9: 2}
REQUIRED_KEYS = (NAME, TABLE_TYPE, VERSION)

# HoodieTableVersion: which Hudi release wrote each version, for error messages.
_VERSION_RELEASES = {
    0: "Hudi < 0.6", 1: "Hudi 0.6", 2: "Hudi 0.9", 3: "Hudi 0.10", 4: "Hudi 0.11", 5: "Hudi 0.12/0.13",
    6: "Hudi 0.14/0.15", 7: "a placeholder version no release writes", 8: "Hudi 1.0", 9: "Hudi 1.1",
}
# HoodieTableConfig's KeyGeneratorType -> class, for tables that record only the type.
_KEYGEN_PKG = "org.apache.hudi.keygen."
_KEY_GENERATOR_TYPES = {
    "SIMPLE": "SimpleKeyGenerator", "SIMPLE_AVRO": "SimpleAvroKeyGenerator",
    "COMPLEX": "ComplexKeyGenerator", "COMPLEX_AVRO": "ComplexAvroKeyGenerator",
    "TIMESTAMP": "TimestampBasedKeyGenerator", "TIMESTAMP_AVRO": "TimestampBasedAvroKeyGenerator",
    "CUSTOM": "CustomKeyGenerator", "CUSTOM_AVRO": "CustomAvroKeyGenerator",
    "NON_PARTITION": "NonpartitionedKeyGenerator", "NON_PARTITION_AVRO": "NonpartitionedAvroKeyGenerator",
    "GLOBAL_DELETE": "GlobalDeleteKeyGenerator", "GLOBAL_DELETE_AVRO": "GlobalAvroDeleteKeyGenerator",
}
# Version 9 (Hudi 1.1+, RFC-97) records a built-in payload as its merge mode and partial-update mode, and keeps the
# class only as hoodie.table.legacy.payload.class: (mode, partial-update mode) of each, as Hudi 1.2 writes them.
_PAYLOAD_MERGE_RULES = {
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload": ("COMMIT_TIME_ORDERING", None),
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload": ("EVENT_TIME_ORDERING", None),
    "org.apache.hudi.common.model.EventTimeAvroPayload": ("EVENT_TIME_ORDERING", None),
    "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload": ("COMMIT_TIME_ORDERING",
                                                                               "IGNORE_DEFAULTS"),
    "org.apache.hudi.common.model.PartialUpdateAvroPayload": ("EVENT_TIME_ORDERING", "IGNORE_DEFAULTS"),
}
# The payload each (mode, partial-update mode) merges as (a v9 table naming no legacy class).
_RULE_PAYLOADS = {rule: cls for cls, rule in reversed(_PAYLOAD_MERGE_RULES.items())}
# Spark's table name must also make an Avro name (`<table>_record`), so hold it to the Avro name rules.
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def compute_checksum(database: str | None, table: str) -> int:
    """`HoodieTableConfig.generateChecksum`: unsigned CRC32 of UTF-8 `"<database>.<table>"` (database "" if absent)."""
    return zlib.crc32(f"{database or ''}.{table}".encode())


def _split_fields(value: str | None) -> list[str]:
    return [f.strip() for f in (value or "").split(",") if f.strip()]


def _java_bool(value: str | None, default: bool) -> bool:
    # Java's Boolean.parseBoolean: only "true" (any case) is true.
    return default if value is None else value.strip().lower() == "true"


@dataclass(frozen=True)
class TableConfig:
    """The properties of one table, with typed accessors. Immutable: `with_props` returns a changed copy."""

    props: Mapping[str, str] = field(default_factory=dict)
    source: str = "<hoodie.properties>"  # file the props came from, for error messages

    # ------------------------------------------------------------------ construction

    @staticmethod
    def from_properties(props: Mapping[str, str], source: str = "<hoodie.properties>") -> "TableConfig":
        """Validated config: required keys, checksum (if present), table version 6 and timeline layout 1."""
        config = TableConfig(dict(props), source)
        config.validate()
        return config

    @staticmethod
    def exists(location: TableLocation) -> bool:
        """Whether a Hudi table is at `base_path`: its `hoodie.properties` is there (one HEAD request)."""
        return location.storage.exists(location.meta(PROPERTIES_FILE))

    @staticmethod
    def load(location: TableLocation) -> "TableConfig":
        storage = location.storage
        meta = location.meta_path
        if not storage.is_dir(meta):
            raise TableNotFoundError(f"no .hoodie folder at {location.base_path}: not a Hudi table")
        primary = location.meta(PROPERTIES_FILE)
        backup = location.meta(PROPERTIES_BACKUP_FILE)
        primary_error: TableConfigError | None = None
        if storage.exists(primary):
            try:
                return TableConfig._read_checked(storage, primary)
            except UnsupportedTableVersionError:
                raise  # a well-formed file of another version: the backup won't help
            except TableConfigError as e:
                primary_error = e
        if storage.exists(backup):
            try:
                return TableConfig._read_checked(storage, backup)
            except TableConfigError:
                if primary_error is None:
                    raise
        if primary_error is not None:
            raise primary_error
        raise TableNotFoundError(f"no {PROPERTIES_FILE} in {meta}: not a Hudi table (or one still being created)")

    @staticmethod
    def _read_checked(storage: Storage, path: str) -> "TableConfig":
        try:
            props = parse_properties(storage.read_bytes(path))
        except PropertiesError as e:
            raise TableConfigError(f"{path}: {e}") from None
        except OSError as e:  # e.g. deleted between listing and reading during a config update
            raise TableConfigError(f"{path}: cannot be read: {e}") from None
        return TableConfig.from_properties(props, path)

    @staticmethod
    def create(
        name: str,
        table_type: str,
        record_key_fields: Iterable[str],
        partition_fields: Iterable[str] = (),
        precombine_field: str | None = None,
        key_generator_class: str | None = None,
        payload_class: str | None = None,
        hive_style: bool = False,
        url_encode: bool = False,
        database: str | None = "default",
        extra: Mapping[str, str] | None = None,
        *,
        populate_meta_fields: bool = True,
        create_schema: dict | None = None,
        version: int = SUPPORTED_TABLE_VERSION,
        merge_mode: str | None = None,
    ) -> "TableConfig":
        """Config of a new v6 table, with the keys Spark's writer puts in `hoodie.properties` (FORMAT.md, Table config).

        Also sets `hoodie.table.base.file.format=PARQUET` and `hoodie.table.timeline.timezone=UTC` (this engine
        makes UTC instants). MOR tables get the payload class and record merger strategy defaults like
        `HoodieTableConfig.create`; a version-6 COW table stores no payload class, as Hudi 0.x's. `create_schema`
        (an Avro schema) is stored in Spark SQL's `[T, "null"]` shape. `extra` keys are added last and win.
        `version` 8 or 9 makes a Hudi 1.x table instead (`_hudi_1x_props`).
        """
        if version not in WRITABLE_TABLE_VERSIONS:
            raise UnsupportedTableVersionError(
                f"{WRITE_TABLE_VERSION}={version}: this engine creates tables of versions "
                f"{', '.join(map(str, WRITABLE_TABLE_VERSIONS))}")
        if not name or not _TABLE_NAME.match(name):
            raise TableConfigError(
                f"{NAME}={name!r}: expected letters, digits and '_' not starting with a digit "
                f"(Spark names the Avro record '<table>_record')"
            )
        if table_type not in TABLE_TYPES:
            raise TableConfigError(f"{TABLE_TYPE}={table_type!r}: expected one of {', '.join(TABLE_TYPES)}")
        record_keys = [f.strip() for f in record_key_fields]
        partitions = [f.strip() for f in partition_fields]
        for label, fields in (("record key", record_keys), ("partition", partitions)):
            if any(not f or "," in f for f in fields):
                raise TableConfigError(f"{label} fields {fields!r}: names must be non-empty and contain no ','")
        props: dict[str, str] = {NAME: name}
        if database is not None:
            props[DATABASE_NAME] = database
        props[TABLE_TYPE] = table_type
        props[VERSION] = str(SUPPORTED_TABLE_VERSION)
        props[TIMELINE_LAYOUT_VERSION] = str(SUPPORTED_TIMELINE_LAYOUT)
        props[ARCHIVELOG_FOLDER] = "archived"
        if precombine_field:
            props[PRECOMBINE_FIELD] = precombine_field
        if record_keys:
            props[RECORDKEY_FIELDS] = ",".join(record_keys)
        if partitions:
            props[PARTITION_FIELDS] = ",".join(partitions)
        props[KEY_GENERATOR_CLASS] = key_generator_class or infer_key_generator_class(record_keys, partitions)
        props[HIVE_STYLE_PARTITIONING] = "true" if hive_style else "false"
        props[URL_ENCODE_PARTITIONING] = "true" if url_encode else "false"
        props[DROP_PARTITION_COLUMNS] = "false"
        if not populate_meta_fields:
            props[POPULATE_META_FIELDS] = "false"
        # Hudi 0.x stores the payload class of a MOR table only (`HoodieTableMetaClient.PropertyBuilder`): a COW
        # table merges at write time with the writer's payload. Hudi 1.x derives every table's merge mode from it.
        if table_type == MERGE_ON_READ or (payload_class and version != SUPPORTED_TABLE_VERSION):
            # Full class names: hudi-rs refuses to merge with a short one.
            props[PAYLOAD_CLASS] = builtin_class_name(payload_class) if payload_class else DEFAULT_PAYLOAD_CLASS
        if table_type == MERGE_ON_READ:
            props[RECORD_MERGER_STRATEGY] = DEFAULT_RECORD_MERGER_STRATEGY
        props[BASE_FILE_FORMAT] = "PARQUET"
        props[TIMELINE_TIMEZONE] = "UTC"
        if version != SUPPORTED_TABLE_VERSION:
            props = _hudi_1x_props(props, version, payload_named=bool(payload_class), merge_mode=merge_mode)
        if create_schema is not None:
            props[CREATE_SCHEMA] = schema_to_json(to_create_schema(create_schema))
        props.update(extra or {})
        props[CHECKSUM] = str(compute_checksum(props.get(DATABASE_NAME), props[NAME]))
        return TableConfig.from_properties(props, "<new table config>")

    def with_props(self, updates: Mapping[str, str | None]) -> "TableConfig":
        """A copy with keys set (or removed where the value is None); the checksum follows the name/database."""
        props = dict(self.props)
        for k, v in updates.items():
            if v is None:
                props.pop(k, None)
            else:
                props[k] = v
        props[CHECKSUM] = str(compute_checksum(props.get(DATABASE_NAME), props.get(NAME, "")))
        return TableConfig.from_properties(props, self.source)

    def without_metadata_table(self) -> "TableConfig":
        """The config Hudi leaves after disabling the metadata table (FORMAT.md, Metadata table): no MDT partitions
        listed."""
        return self.with_props({METADATA_PARTITIONS: None, METADATA_PARTITIONS_INFLIGHT: None})

    def disable_metadata_table(self, location: TableLocation, reason: str) -> "TableConfig":
        """Disable the table's metadata table the way Hudi does (drop its partitions from `hoodie.properties`, then
        delete `.hoodie/metadata`), under the table lock, before an action of ours that cannot keep it changes a file
        (`hudi_engine.metadata.writer` keeps it where it can): Java readers list files from it, so a file we add,
        compact or clean would be invisible, or still listed. The one way this engine disables it: `reason` (the
        action and why) is given to the user as a MetadataTableDisabled warning. Answers the config as saved (this
        one when there is none)."""
        if not (self.metadata_partitions or self.metadata_partitions_inflight):
            return self
        config = self.without_metadata_table()
        config.save(location)
        location.storage.delete_dir(location.meta("metadata"))
        warnings.warn(f"table {location.base_path}: its metadata table is disabled (the next writer rebuilds it, "
                      "unless given hoodie.metadata.enable=false): "
                      f"{reason}", MetadataTableDisabled, stacklevel=2)
        return config

    # ------------------------------------------------------------------ validation and persistence

    def validate(self) -> None:
        for key in REQUIRED_KEYS:
            if not self.props.get(key, "").strip():
                raise TableConfigError(f"{self.source}: required key {key} is missing or empty")
        version = self._int(VERSION)
        if version not in READABLE_TABLE_VERSIONS:
            release = _VERSION_RELEASES.get(version, "an unknown Hudi release")
            if version < SUPPORTED_TABLE_VERSION:
                detail = "is older than supported; upgrade it by writing with Hudi 0.14 or 0.15"
            elif version > max(READABLE_TABLE_VERSIONS):
                detail = "is not supported (a newer Hudi wrote it: read and write it with that Hudi)"
            else:
                detail = "is not supported"
            raise UnsupportedTableVersionError(
                f"{self.source}: {VERSION}={version} ({release}) {detail}; readable: "
                f"{', '.join(map(str, READABLE_TABLE_VERSIONS))}, writable: {', '.join(map(str, WRITABLE_TABLE_VERSIONS))}"
            )
        layout = self.timeline_layout_version
        if layout != READABLE_TABLE_VERSIONS[version]:
            raise UnsupportedTableVersionError(
                f"{self.source}: {TIMELINE_LAYOUT_VERSION}={layout}; table version {version} needs timeline layout "
                f"{READABLE_TABLE_VERSIONS[version]}"
            )
        if self.table_type not in TABLE_TYPES:
            raise TableConfigError(f"{self.source}: {TABLE_TYPE}={self.table_type!r}: expected one of {', '.join(TABLE_TYPES)}")
        stored = self.props.get(CHECKSUM)
        if stored is not None:  # validated only if present (HUDI-7262, 0.14.1+); a wrong one is always fatal
            expected = compute_checksum(self.database_name, self.name)
            if stored.strip() != str(expected):
                raise TableConfigError(
                    f"{self.source}: {CHECKSUM}={stored} is wrong: expected {expected} "
                    f"(CRC32 of '{self.database_name or ''}.{self.name}')"
                )

    def require_writable(self) -> None:
        """Refuse to write a table this engine only reads: a version other than 6, 8 and 9, a Hudi 1.x table whose
        active timeline is not in `.hoodie/timeline` (where writers look for it), or one with base files other than
        parquet (version 9 may have Lance ones)."""
        version = self.version
        release = _VERSION_RELEASES.get(version, "an unknown Hudi release")
        if version not in WRITABLE_TABLE_VERSIONS:
            raise UnsupportedTableVersionError(
                f"{self.source}: table {self.name!r} is {VERSION}={version} ({release}); this engine reads it but "
                f"writes only table versions {', '.join(map(str, WRITABLE_TABLE_VERSIONS))}. Write it with Hudi "
                f"{release.split()[-1]} or later, or write a new table (another path) with this engine. A Hudi 1.x "
                f"writer upgrades a version-6 table on its next write unless its job sets {WRITE_TABLE_VERSION}=6 "
                f"and {AUTO_UPGRADE}=false: set both in every Java job that shares a table with this engine."
            )
        if version >= 8 and self.timeline_path != DEFAULT_TIMELINE_PATH:
            raise UnsupportedTableVersionError(
                f"{self.source}: table {self.name!r} ({VERSION}={version}) keeps its timeline in .hoodie/"
                f"{self.timeline_path} ({TIMELINE_PATH}); this engine writes only tables with Hudi's default "
                f"'{DEFAULT_TIMELINE_PATH}'. Let Java Hudi write this table.")
        if version >= 8 and self.base_file_format != "PARQUET":  # version 6: refused by its table-features row
            raise UnsupportedTableVersionError(
                f"{self.source}: table {self.name!r} ({VERSION}={version}, {release}) has {self.base_file_format} "
                f"base files ({BASE_FILE_FORMAT}); this engine writes parquet base files only. Let Java Hudi write "
                f"this table, or rewrite it as a parquet table (another path) with this engine.")

    def to_text(self, now=None) -> str:
        """hoodie.properties text with the two comment lines Java writes and a fresh checksum last."""
        props = {k: v for k, v in self.props.items() if k != CHECKSUM}
        props[CHECKSUM] = str(compute_checksum(self.database_name, self.name))
        return format_properties(props, [f"Properties saved on {java_instant_string(now)}", java_date_string(now)])

    def save(self, location: TableLocation) -> None:
        """Write `.hoodie/hoodie.properties`; an existing file is replaced through the backup protocol."""
        self.validate()
        storage, meta = location.storage, location.meta_path
        primary = storage.join(meta, PROPERTIES_FILE)
        backup = storage.join(meta, PROPERTIES_BACKUP_FILE)
        data = self.to_text().encode("latin-1")
        # Hadoop's local file system (Java Hudi on file://) keeps a `.<name>.crc` beside each file it writes and
        # refuses a file that no longer matches it (ChecksumException: Hudi then cannot load the table). Without a
        # .crc it reads the file unchecked: drop the stale one before replacing the file.
        storage.delete(storage.join(meta, f".{PROPERTIES_FILE}.crc"))  # False when there is none
        if storage.exists(primary):
            # A reader that sees a half-written primary falls back to the backup (see load).
            storage.write_bytes(backup, storage.read_bytes(primary))
            storage.write_bytes(primary, data)
            storage.delete(backup)
        else:
            storage.write_bytes(primary, data)

    def initialize(self, location: TableLocation) -> None:
        """Create a new table's `.hoodie` layout (`initTableAndGetMetaClient`) and write the config.

        Refuses to touch a path that already has a `hoodie.properties`.
        """
        self.validate()
        storage = location.storage
        primary = location.meta(PROPERTIES_FILE)
        if storage.exists(primary):
            raise TableConfigError(f"{primary} already exists: a Hudi table is already at {location.base_path}")
        # Hudi 1.x makes the active timeline and its history folder instead of the archive folder.
        timeline_dirs = (f"{self.timeline_path}/{self.timeline_history_path}",) if self.version >= 8 else \
            (self.archivelog_folder,)
        for sub in (".schema", *timeline_dirs, ".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids"):
            storage.mkdirs(location.meta(sub))
        if not storage.create_exclusive(primary, self.to_text().encode("latin-1")):
            raise TableConfigError(
                f"{primary} was created concurrently: a Hudi table is already at {location.base_path}")

    # ------------------------------------------------------------------ typed accessors

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.props.get(key, default)

    def _int(self, key: str, default: int | None = None) -> int:
        raw = self.props.get(key)
        if raw is None or not raw.strip():
            if default is None:
                raise TableConfigError(f"{self.source}: required key {key} is missing")
            return default
        try:
            return int(raw.strip())
        except ValueError:
            raise TableConfigError(f"{self.source}: {key}={raw!r} is not an integer") from None

    @property
    def name(self) -> str:
        return self.props[NAME]

    @property
    def database_name(self) -> str | None:
        return self.props.get(DATABASE_NAME)

    @property
    def table_type(self) -> str:
        return self.props.get(TABLE_TYPE, COPY_ON_WRITE).strip().upper()

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def version(self) -> int:
        return self._int(VERSION)

    @property
    def timeline_layout_version(self) -> int:
        # Java's meta-client default: the layout of the table's version
        return self._int(TIMELINE_LAYOUT_VERSION, READABLE_TABLE_VERSIONS.get(self.version, SUPPORTED_TIMELINE_LAYOUT))

    @property
    def log_files_named_by_delta_commit(self) -> bool:
        """Hudi 1.x (version 8+) names a log file by the delta commit that writes it, not by its slice's base
        instant."""
        return self.version >= 8

    @property
    def timeline_path(self) -> str:
        """Layout 2: the active timeline's folder, relative to `.hoodie`."""
        return (self.props.get(TIMELINE_PATH) or DEFAULT_TIMELINE_PATH).strip()

    @property
    def timeline_history_path(self) -> str:
        """Layout 2: the LSM history folder, relative to the active timeline's folder."""
        return (self.props.get(TIMELINE_HISTORY_PATH) or "history").strip()

    @property
    def archivelog_folder(self) -> str:
        return self.props.get(ARCHIVELOG_FOLDER) or "archived"

    @property
    def ordering_fields(self) -> list[str]:
        """The fields that order two versions of a record: `hoodie.table.precombine.field` (up to version 8) or
        `hoodie.table.ordering.fields` (version 9)."""
        return _split_fields(self.props.get(PRECOMBINE_FIELD)) or _split_fields(self.props.get(ORDERING_FIELDS))

    @property
    def precombine_field(self) -> str | None:
        """The single ordering field (None if none). A table ordered by several fields has no single one:
        readers that merge must refuse it (see `ordering_fields`)."""
        fields = self.ordering_fields
        return fields[0] if len(fields) == 1 else None

    @property
    def record_key_fields(self) -> list[str]:
        return _split_fields(self.props.get(RECORDKEY_FIELDS))

    @property
    def partition_fields(self) -> list[str]:
        """The partition columns (a typed entry's name: see `partition_field_specs`)."""
        return [f.split(":", 1)[0] for f in self.partition_field_specs]

    @property
    def partition_field_specs(self) -> list[str]:
        """`hoodie.table.partition.fields` as stored: a CustomKeyGenerator table of version 8 or later keeps each
        field's `:TYPE` (`dt:SIMPLE,ts:TIMESTAMP`), which its key generator takes."""
        return _split_fields(self.props.get(PARTITION_FIELDS))

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def key_generator_class(self) -> str | None:
        """`hoodie.table.keygenerator.class`, else the class of `hoodie.table.keygenerator.type` (1.x)."""
        name = (self.props.get(KEY_GENERATOR_CLASS) or "").strip()
        if name:
            return name
        kind = (self.props.get(KEY_GENERATOR_TYPE) or "").strip().upper()
        return _KEYGEN_PKG + _KEY_GENERATOR_TYPES[kind] if kind in _KEY_GENERATOR_TYPES else (kind or None)

    @property
    def hive_style_partitioning(self) -> bool:
        return _java_bool(self.props.get(HIVE_STYLE_PARTITIONING), False)

    @property
    def url_encode_partitioning(self) -> bool:
        return _java_bool(self.props.get(URL_ENCODE_PARTITIONING), False)

    @property
    def drop_partition_columns(self) -> bool:
        return _java_bool(self.props.get(DROP_PARTITION_COLUMNS), False)

    @property
    def populate_meta_fields(self) -> bool:
        return _java_bool(self.props.get(POPULATE_META_FIELDS), True)

    @property
    def record_merge_mode(self) -> str | None:
        return (self.props.get(RECORD_MERGE_MODE) or "").strip().upper() or None

    @property
    def partial_update_mode(self) -> str | None:
        mode = (self.props.get(PARTIAL_UPDATE_MODE) or "").strip().upper()
        return None if mode in ("", "NONE") else mode

    @property
    def payload_class(self) -> str:
        """The payload class; a 1.x table that names none merges by its merge mode's rule (on version 9, with its
        partial-update mode: the legacy payload class when it merges that way)."""
        named = (self.props.get(PAYLOAD_CLASS) or "").strip()
        if named:
            return named
        rule = (self.record_merge_mode or "", self.partial_update_mode)
        legacy = (self.props.get(LEGACY_PAYLOAD_CLASS) or "").strip()
        if legacy and _PAYLOAD_MERGE_RULES.get(legacy) == rule:
            return legacy
        return _RULE_PAYLOADS.get(rule, DEFAULT_PAYLOAD_CLASS)

    @property
    def names_merge_rule(self) -> bool:
        """The table says how it merges (a payload class, or 1.x's merge mode): writers follow it."""
        return bool((self.props.get(PAYLOAD_CLASS) or "").strip() or self.record_merge_mode)

    @property
    def record_merger_strategy(self) -> str:
        return (self.props.get(RECORD_MERGER_STRATEGY) or "").strip() or DEFAULT_RECORD_MERGER_STRATEGY

    @property
    def base_file_format(self) -> str:
        return (self.props.get(BASE_FILE_FORMAT) or "PARQUET").strip().upper()

    @property
    def log_file_format(self) -> str:
        return (self.props.get(LOG_FILE_FORMAT) or "HOODIE_LOG").strip().upper()

    @property
    def timeline_timezone(self) -> str:
        """`LOCAL` or `UTC`; absent means LOCAL to Java (hudi-rs assumes UTC)."""
        return (self.props.get(TIMELINE_TIMEZONE) or "LOCAL").strip().upper()

    @property
    def local_instant_times(self) -> bool:
        """New instants in this machine's zone, as a Java writer makes them for a LOCAL table (UTC otherwise)."""
        return self.timeline_timezone == "LOCAL"

    @property
    def create_schema(self) -> dict | None:
        raw = self.props.get(CREATE_SCHEMA)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise TableConfigError(f"{self.source}: {CREATE_SCHEMA} is not valid JSON: {e}") from None

    @property
    def checksum(self) -> int | None:
        raw = self.props.get(CHECKSUM)
        return int(raw) if raw and raw.strip().isdigit() else None

    @property
    def metadata_partitions(self) -> list[str]:
        """MDT partitions Hudi has built; Java readers list files from the MDT iff this holds `files`."""
        return _split_fields(self.props.get(METADATA_PARTITIONS))

    @property
    def metadata_partitions_inflight(self) -> list[str]:
        return _split_fields(self.props.get(METADATA_PARTITIONS_INFLIGHT))

    @property
    def is_metadata_table_enabled(self) -> bool:
        return "files" in self.metadata_partitions

    @property
    def partition_metafile_use_base_format(self) -> bool:
        return _java_bool(self.props.get(PARTITION_METAFILE_USE_BASE_FORMAT), False)

    @property
    def cdc_enabled(self) -> bool:
        return _java_bool(self.props.get(CDC_ENABLED), False)

    @property
    def bootstrap_base_path(self) -> str | None:
        return self.props.get(BOOTSTRAP_BASE_PATH) or None


# Hudi 1.x's record merge strategy ids (HoodieRecordMerger) of its merge modes.
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
PAYLOAD_BASED_STRATEGY = "00000000-0000-0000-0000-000000000000"


def key_generator_type(class_name: str) -> str:
    """HoodieTableConfig's KeyGeneratorType of a key generator class (USER_PROVIDED for one of the user's)."""
    kinds = {_KEYGEN_PKG + cls: kind for kind, cls in _KEY_GENERATOR_TYPES.items()}
    return kinds.get(class_name, "USER_PROVIDED")


def merge_rule(payload_class: str) -> tuple[str, str | None] | None:
    """(merge mode, partial-update mode) a built-in payload merges by (Hudi 1.1+), None for another payload."""
    return _PAYLOAD_MERGE_RULES.get(payload_class)


def _hudi_1x_props(props: dict[str, str], version: int, payload_named: bool, merge_mode: str | None) -> dict[str, str]:
    """A new table's properties as Hudi 1.x writes them (`HoodieTableMetaClient.initTable` of version 8 or 9): timeline
    layout 2 in `.hoodie/timeline` with its history, the initial version, the key generator by type too, and the merge
    mode: the writer's (`merge_mode`), the named payload's, else Hudi 1.x's default (EVENT_TIME_ORDERING with an
    ordering field, COMMIT_TIME_ORDERING without). Version 8 keeps the payload class and a merge strategy id. Version 9
    (Hudi 1.2, RFC-97) names the ordering field `hoodie.table.ordering.fields`, records a built-in payload as its mode
    and partial-update mode with the class as `hoodie.table.legacy.payload.class`, keeps a payload class and strategy
    id only for CUSTOM, and records the table format."""
    out = dict(props)
    out[VERSION] = str(version)
    out["hoodie.table.initial.version"] = str(version)
    out[TIMELINE_LAYOUT_VERSION] = "2"
    out[TIMELINE_PATH] = DEFAULT_TIMELINE_PATH
    out[TIMELINE_HISTORY_PATH] = "history"
    kinds = {_KEYGEN_PKG + cls: kind for kind, cls in _KEY_GENERATOR_TYPES.items() if not kind.endswith("_AVRO")}
    if out.get(KEY_GENERATOR_CLASS) in kinds:
        out[KEY_GENERATOR_TYPE] = kinds[out[KEY_GENERATOR_CLASS]]
    named = out.pop(PAYLOAD_CLASS, None)
    payload = named if payload_named else None
    if payload is None:
        merge_mode = merge_mode or ("EVENT_TIME_ORDERING" if out.get(PRECOMBINE_FIELD) else "COMMIT_TIME_ORDERING")
        payload = MERGE_MODE_PAYLOADS[merge_mode]
    out.pop(RECORD_MERGER_STRATEGY, None)
    if version >= 9:
        ordering = out.pop(PRECOMBINE_FIELD, None)
        if ordering:
            out[ORDERING_FIELDS] = ordering
        mode, partial = _PAYLOAD_MERGE_RULES.get(payload, ("CUSTOM", None))
        out[RECORD_MERGE_MODE] = mode
        if partial:
            out[PARTIAL_UPDATE_MODE] = partial
        if mode == "CUSTOM":
            out[PAYLOAD_CLASS] = payload
            out[RECORD_MERGE_STRATEGY_ID] = PAYLOAD_BASED_STRATEGY
        elif payload_named:
            out[LEGACY_PAYLOAD_CLASS] = payload
        out["hoodie.table.format"] = "native"
    else:
        mode = {v: k for k, v in MERGE_MODE_PAYLOADS.items()}.get(payload, "CUSTOM")
        out[RECORD_MERGE_MODE] = mode
        out[RECORD_MERGE_STRATEGY_ID] = {"COMMIT_TIME_ORDERING": COMMIT_TIME_STRATEGY,
                                         "EVENT_TIME_ORDERING": DEFAULT_RECORD_MERGER_STRATEGY}.get(
            mode, PAYLOAD_BASED_STRATEGY)
        out[PAYLOAD_CLASS] = payload
    return out

