"""The AWS Glue Data Catalog side of a sync (Hudi's `AWSGlueCatalogSyncClient`), over boto3's `glue` client.

Tables are `EXTERNAL_TABLE`s with the entry's storage descriptor (location with `s3a://` written `s3://`, as
`S3Utils.s3aToS3`), parameters and partition keys, plus `hudi.metadata-listing-enabled=FALSE` (Athena lists files:
this engine writes no metadata table). Partitions go in batches of Glue's limits: BatchCreatePartition and
BatchUpdatePartition 100 a request, BatchDeletePartition 25. Region, endpoint and credentials: `hoodie.aws.glue.region`
/ `hoodie.aws.glue.endpoint`, else boto3's usual chain (AWS_REGION, profiles, instance roles).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hudi_engine.config import keys as K
from hudi_engine.config.sync_config import SyncConfig
from hudi_engine.errors import SyncError
from hudi_engine.sync.entry import Column, TableEntry

MAX_PARTITIONS_PER_REQUEST = 100  # BatchCreatePartition / BatchUpdatePartition
MAX_DELETE_PARTITIONS_PER_REQUEST = 25  # BatchDeletePartition
METADATA_LISTING = "hudi.metadata-listing-enabled"  # read by Athena's Hudi reader


def glue_settings_problems(cfg: SyncConfig) -> list[str]:
    """Why a Glue sync could not run, checked before the write: no region, no credentials (empty: it can)."""
    import boto3

    session = boto3.session.Session()
    problems = []
    tool = f"{K.SYNC_TOOLS.key}={K.GLUE_SYNC_TOOL}"
    if not (cfg.glue_region or session.region_name):
        problems.append(f"{tool} needs an AWS region: set {K.GLUE_REGION.key} (or AWS_REGION / AWS_DEFAULT_REGION, "
                        "or a profile's region)")
    if session.get_credentials() is None:
        problems.append(f"{tool} found no AWS credentials: give them through the environment (AWS_ACCESS_KEY_ID / "
                        "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or an instance role); hoodie.aws.access.key and its "
                        "siblings are refused")
    return problems


def glue_client(cfg: SyncConfig) -> Any:
    """boto3's Glue client for `cfg` (region and endpoint from the options, else the environment)."""
    import boto3

    return boto3.client("glue", region_name=cfg.glue_region or None, endpoint_url=cfg.glue_endpoint or None)


def _batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class GlueClient:
    """`tool.CatalogClient` over Glue."""

    name = "AWS Glue"

    def __init__(self, glue: Any, skip_archive: bool = True) -> None:
        self.glue = glue
        self.skip_archive = skip_archive

    def extra_params(self, cfg: SyncConfig) -> Mapping[str, str]:
        return {METADATA_LISTING: "FALSE"}

    def location(self, location: str) -> str:
        return "s3://" + location[len("s3a://"):] if location.startswith("s3a://") else location

    def database_exists(self, database: str) -> bool:
        try:
            self.glue.get_database(Name=database)
            return True
        except self.glue.exceptions.EntityNotFoundException:
            return False

    def create_database(self, database: str) -> None:
        try:
            self.glue.create_database(DatabaseInput={
                "Name": database, "Description": "Automatically created by org.apache.hudi.aws.sync.AWSGlueCatalogSyncClient"})
        except self.glue.exceptions.AlreadyExistsException:
            pass

    def get_table(self, database: str, name: str) -> TableEntry | None:
        try:
            t = self.glue.get_table(DatabaseName=database, Name=name)["Table"]
        except self.glue.exceptions.EntityNotFoundException:
            return None
        sd = t.get("StorageDescriptor", {})
        serde = sd.get("SerdeInfo", {})
        return TableEntry(
            database, name, sd.get("Location", ""),
            tuple(Column(c["Name"], c.get("Type", "")) for c in sd.get("Columns", [])),
            tuple(Column(c["Name"], c.get("Type", "")) for c in t.get("PartitionKeys", [])),
            sd.get("InputFormat", ""), dict(serde.get("Parameters", {})), dict(t.get("Parameters", {})),
            output_format=sd.get("OutputFormat", ""), serde=serde.get("SerializationLibrary", ""),
            table_type=t.get("TableType", ""))

    def _table_input(self, entry: TableEntry) -> dict:
        now = dt.datetime.now(dt.UTC)
        return {
            "Name": entry.name, "TableType": entry.table_type, "Parameters": dict(entry.params),
            "PartitionKeys": [{"Name": c.name, "Type": c.type, "Comment": ""} for c in entry.partition_keys],
            "StorageDescriptor": self._sd(entry, entry.location), "LastAccessTime": now, "LastAnalyzedTime": now}

    @staticmethod
    def _sd(entry: TableEntry, location: str) -> dict:
        return {"Columns": [{"Name": c.name, "Type": c.type} for c in entry.columns], "Location": location,
                "InputFormat": entry.input_format, "OutputFormat": entry.output_format,
                "SerdeInfo": {"SerializationLibrary": entry.serde, "Parameters": dict(entry.serde_params)}}

    def create_table(self, entry: TableEntry) -> None:
        self.glue.create_table(DatabaseName=entry.database, TableInput=self._table_input(entry))

    def alter_table(self, entry: TableEntry, *, columns_changed: bool = False) -> None:
        self.glue.update_table(DatabaseName=entry.database, TableInput=self._table_input(entry),
                               SkipArchive=self.skip_archive)

    def drop_table(self, database: str, name: str) -> None:
        self.glue.delete_table(DatabaseName=database, Name=name)

    def partitions(self, entry: TableEntry) -> Mapping[tuple[str, ...], str]:
        out = {}
        for page in self.glue.get_paginator("get_partitions").paginate(DatabaseName=entry.database,
                                                                         TableName=entry.name):
            for p in page["Partitions"]:
                out[tuple(p["Values"])] = p.get("StorageDescriptor", {}).get("Location", "")
        return out

    def add_partitions(self, entry: TableEntry, partitions: Mapping[tuple[str, ...], str]) -> None:
        inputs = [{"Values": list(v), "StorageDescriptor": self._sd(entry, loc)} for v, loc in partitions.items()]
        for batch in _batches(inputs, MAX_PARTITIONS_PER_REQUEST):
            errors = self.glue.batch_create_partition(DatabaseName=entry.database, TableName=entry.name,
                                                      PartitionInputList=batch).get("Errors") or []
            if any(e.get("ErrorDetail", {}).get("ErrorCode") != "AlreadyExistsException" for e in errors):
                raise SyncError(f"AWS Glue: adding partitions to {entry.qualified} failed: {errors}")

    def alter_partitions(self, entry: TableEntry, partitions: Mapping[tuple[str, ...], str]) -> None:
        entries = [{"PartitionValueList": list(v),
                    "PartitionInput": {"Values": list(v), "StorageDescriptor": self._sd(entry, loc)}}
                   for v, loc in partitions.items()]
        for batch in _batches(entries, MAX_PARTITIONS_PER_REQUEST):
            errors = self.glue.batch_update_partition(DatabaseName=entry.database, TableName=entry.name,
                                                      Entries=batch).get("Errors") or []
            if errors:
                raise SyncError(f"AWS Glue: updating partitions of {entry.qualified} failed: {errors}")

    def drop_partitions(self, entry: TableEntry, values: Sequence[tuple[str, ...]]) -> None:
        for batch in _batches(list(values), MAX_DELETE_PARTITIONS_PER_REQUEST):
            errors = self.glue.batch_delete_partition(
                DatabaseName=entry.database, TableName=entry.name,
                PartitionsToDelete=[{"Values": list(v)} for v in batch]).get("Errors") or []
            if errors:
                raise SyncError(f"AWS Glue: dropping partitions of {entry.qualified} failed: {errors}")
