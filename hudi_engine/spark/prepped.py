"""Prepped DataFrame writes, as Hudi's `HoodieSparkSqlWriter` makes them: rows read from the table with their meta
columns, upserted or deleted as the stored rows they are, the commit recording UPSERT_PREPPED / DELETE_PREPPED.

* `hoodie.datasource.write.prepped=true` (Hudi's internal `_hoodie.datasource.write.prepped` /
  `_hoodie.spark.sql.writes.prepped` too): an upsert or delete whose rows carry `_hoodie_record_key` (and
  `_hoodie_partition_path` on a partitioned table). Anything else is refused before an instant: another operation,
  no table at the path, a meta column missing.
* Without the option, a keyless table's upsert or delete whose rows carry `_hoodie_record_key` is prepped, as Hudi's
  `HoodieWriterUtils.canDoPreppedWrites` decides (docs/keyless.md).

A keyless table's rows keep their stored keys (`writer.write`: `keygen.PREPPED_KEY_COLUMN`). A keyed table's keys
come from its key fields, as every write of this engine makes them; so before the instant one Spark job checks that
each row's stored `_hoodie_record_key` and `_hoodie_partition_path` are the ones its columns give (Hudi would take
the stored ones and write the row under a key its fields no longer spell): a row that differs is refused, shown.
A row whose `_hoodie_record_key` is null is a new row (keyed by its fields, or given a new key on a keyless table).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from hudi_engine.config import keys as K
from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.keygen import key_generator_for
from hudi_engine.location import TableLocation
from hudi_engine.meta_client import MetaClient
from hudi_engine.spark.read_plan import RECORD_KEY

PARTITION_PATH = "_hoodie_partition_path"
_SHOWN = 3  # rows a refusal shows


def prepped_config(df: DataFrame, config: WriteConfig, table: MetaClient | TableLocation, path: str) -> WriteConfig:
    """`config` with `prepped` as this DataFrame write is (see the module); ConfigError naming the option, the
    operation or the missing meta columns, before anything is written."""
    loaded = table if not isinstance(table, TableLocation) else None
    keyless = loaded is not None and not loaded.config.record_key_fields
    changing = config.operation in (Operation.UPSERT, Operation.DELETE)
    if not (config.prepped and config.is_set(K.PREPPED)):
        if keyless and changing and RECORD_KEY in df.columns:  # Hudi's canDoPreppedWrites
            return dataclasses.replace(config, prepped=True)
        return config
    where = f"table {path}: {K.PREPPED.key}=true"
    if not changing:
        raise ConfigError(f"{where} is for an upsert or a delete of rows read from the table (Hudi's UPSERT_PREPPED / "
                          f"DELETE_PREPPED); the operation is {config.operation.value}. Write with "
                          f"{K.OPERATION.key}=upsert or delete, or without {K.PREPPED.key}. Nothing was written")
    if loaded is None:
        raise ConfigError(f"{where}: there is no Hudi table at {path}, so no stored row to upsert or delete; write "
                          f"without {K.PREPPED.key}. Nothing was written")
    needed = [RECORD_KEY, *([PARTITION_PATH] if loaded.config.partition_fields else [])]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ConfigError(f"{where}: the rows have no {', '.join(missing)} column: a prepped write finds each stored "
                          f"row by its meta columns. Keep them from the table's read (spark.read.format(\"hudi\")"
                          f".load(\"{path}\")) in the DataFrame, or write without {K.PREPPED.key} (an upsert by the "
                          "record key fields). Nothing was written")
    return config


def check_stored_keys(df: DataFrame, table: MetaClient, path: str) -> None:
    """Refuse (ConfigError showing up to three rows) a prepped write's row whose `_hoodie_record_key` or
    `_hoodie_partition_path` is not what its key and partition fields give: one Spark job, before the instant."""
    config = table.config
    keyed = bool(config.record_key_fields)
    fields = [*config.record_key_fields, *(f.split(":")[0] for f in config.partition_fields)]
    meta = [c for c in (RECORD_KEY, PARTITION_PATH) if c in df.columns]
    if not keyed and PARTITION_PATH not in meta:
        return
    columns = list(dict.fromkeys([*meta, *(f for f in fields if f in df.columns)]))
    args = (config.key_generator_class, tuple(config.record_key_fields), tuple(config.partition_field_specs),
            dict(config.props), config.hive_style_partitioning, config.url_encode_partitioning)

    def differing(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        class_name, key_fields, partition_specs, props, hive_style, url_encode = args
        keygen = key_generator_for(class_name, key_fields, partition_specs, props, hive_style=hive_style,
                                   url_encode=url_encode)
        for batch in batches:
            rows = pa.Table.from_batches([batch])
            stored = rows.column(RECORD_KEY) if RECORD_KEY in rows.column_names else pa.nulls(len(rows), pa.string())
            bad = pc.is_valid(stored)
            wrong = pa.array([False] * len(rows))
            if keyed and all(f in rows.column_names for f in keygen.record_key_fields):
                keys = keygen.stored_record_keys(rows).cast(pa.string())
                wrong = pc.or_kleene(wrong, pc.fill_null(pc.not_equal(stored, keys), False))
            if PARTITION_PATH in rows.column_names and keygen.partition_fields and \
                    all(f.split(":")[0] in rows.column_names for f in keygen.partition_fields):
                paths = keygen.partition_paths(rows).cast(pa.string())
                wrong = pc.or_kleene(wrong, pc.fill_null(pc.not_equal(rows.column(PARTITION_PATH), paths), False))
            picked = rows.filter(pc.and_(bad, wrong))
            if len(picked):
                yield pa.RecordBatch.from_pylist([{"row": str(r)} for r in picked.to_pylist()[:_SHOWN]])

    shown = [r["row"] for r in df.select(*columns).mapInArrow(differing, "row string").limit(_SHOWN).collect()]
    if shown:
        raise ConfigError(f"table {path}: {K.PREPPED.key}: a row's stored {RECORD_KEY} / {PARTITION_PATH} is not "
                          f"what its key and partition fields ({', '.join(fields)}) give, e.g. {'; '.join(shown)}. "
                          "A prepped write changes stored rows in place: keep the key and partition fields as read "
                          "(to move a row, delete it and insert it again). Nothing was written")
