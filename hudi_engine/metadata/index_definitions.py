"""A Hudi 1.x table's index definitions (`HoodieIndexMetadata`): the JSON file `hoodie.table.index.defs.path` names
(`.hoodie/.index_defs/index.json`), one definition per metadata-table index: its name, type, source fields, options
and version (`HoodieIndexVersion`; a definition without one is of version 1, as Hudi 1.0 wrote them)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudi_engine.errors import MetadataTableError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig

INDEX_DEFS_PATH = "hoodie.table.index.defs.path"
DEFAULT_INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"  # where Hudi 1.x puts them


@dataclass(frozen=True, slots=True)
class IndexDefinition:
    """One `HoodieIndexDefinition`."""

    name: str
    index_type: str
    source_fields: tuple[str, ...]
    options: Mapping[str, str]
    version: int  # HoodieIndexVersion: V1 -> 1, V2 -> 2

    @staticmethod
    def from_json(name: str, raw: Mapping[str, Any], where: str) -> IndexDefinition:
        version = str(raw.get("version") or "V1")
        if not (version.startswith("V") and version[1:].isdigit()):
            raise MetadataTableError(f"{where}: index {name!r} has version {version!r}; expected V1, V2, ...")
        return IndexDefinition(str(raw.get("indexName") or name), str(raw.get("indexType") or ""),
                               tuple(str(f) for f in raw.get("sourceFields") or ()),
                               {str(k): str(v) for k, v in (raw.get("indexOptions") or {}).items()},
                               int(version[1:]))


def load_index_definitions(location: TableLocation, config: TableConfig) -> dict[str, IndexDefinition]:
    """The table's index definitions by index name; empty when the table names no definitions file. Refused naming
    the file when it is named but missing or unreadable."""
    rel = config.get(INDEX_DEFS_PATH)
    if not rel:
        return {}
    path = Storage.join(location.base_path, rel)
    try:
        raw = json.loads(location.storage.read_bytes(path))
        defs = raw.get("indexDefinitions") or {}
        return {name: IndexDefinition.from_json(name, d, path) for name, d in defs.items()}
    except FileNotFoundError:
        raise MetadataTableError(f"{path}: {INDEX_DEFS_PATH} names it, but it is missing") from None
    except (ValueError, AttributeError, TypeError) as e:
        raise MetadataTableError(f"{path}: not Hudi's index definitions JSON: {e}") from None


def read_definitions(location: TableLocation, config: TableConfig, *, create: bool = False
                     ) -> tuple[str, dict[str, Any]] | None:
    """(path, parsed JSON) of the table's index.json; None when the table names none or it is missing, unless
    `create`: then Hudi 1.x's default place and no definitions."""
    rel = config.get(INDEX_DEFS_PATH) or (DEFAULT_INDEX_DEFS_PATH if create else None)
    if not rel:
        return None
    path = Storage.join(location.base_path, rel)
    try:
        return path, json.loads(location.storage.read_bytes(path))
    except FileNotFoundError:
        return (path, {"indexDefinitions": {}}) if create else None


def drop_definition(location: TableLocation, config: TableConfig, name: str) -> None:
    """Remove index `name`'s definition from the table's index.json (and Hadoop's stale checksum beside it)."""
    found = read_definitions(location, config)
    if found is None or name not in (found[1].get("indexDefinitions") or {}):
        return
    path, raw = found
    del raw["indexDefinitions"][name]
    write_definitions(location, path, raw)


def write_definitions(location: TableLocation, path: str, raw: Mapping[str, Any]) -> None:
    """Write index.json at `path` as Jackson lays it out. Hadoop's local file system (a Java writer on file://)
    checks a file against a `.<name>.crc` beside it and refuses one that no longer matches: the stale checksum goes
    first."""
    folder, name = path.rsplit("/", 1)
    location.storage.delete(Storage.join(folder, f".{name}.crc"))
    location.storage.write_bytes(path, json.dumps(raw, indent=2, separators=(",", " : ")).encode("utf-8"))


RECORD_INDEX_NAME = "record_index"  # the record index's definition (MetadataPartitionType.RECORD_INDEX)
IS_PARTITIONED_OPTION = "isPartitioned"  # HoodieRecordIndex.IS_PARTITIONED_OPTION


def is_partitioned_record_index(location: TableLocation, config: TableConfig) -> bool:
    """The table's record index is Hudi 1.1's partitioned (partition-level) one (`hoodie.metadata.record.level.index
    .enable`): its definition says `isPartitioned=true`."""
    definition = load_index_definitions(location, config).get(RECORD_INDEX_NAME)
    return definition is not None and str(definition.options.get(IS_PARTITIONED_OPTION, "false")).lower() == "true"
