"""A `hudi_incremental` model's config: validated at once, and translated to Hudi write options in one place.

`HudiModelConfig.from_dbt(config, model)` checks every setting and raises one `HudiConfigError` that lists all
problems, each with the accepted values. `hoodie_options(...)` is the only place dbt settings become `hoodie.*`
keys. Nothing here needs Spark.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

STRATEGIES = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")
TABLE_TYPES = {"cow": "COPY_ON_WRITE", "copy_on_write": "COPY_ON_WRITE",
               "mor": "MERGE_ON_READ", "merge_on_read": "MERGE_ON_READ"}
ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")
INDEX_TYPES = ("SIMPLE", "BLOOM", "BUCKET", "GLOBAL_SIMPLE")
# How a run writes: the model's table is new (or its catalog entry is), rebuilt by --full-refresh, or updated.
MODES = ("create", "full_refresh", "incremental")

# Keys the named settings own: hudi_options may repeat them only with the same value.
OWNED_KEYS = {
    "hoodie.datasource.write.recordkey.field": "unique_key",
    "hoodie.datasource.write.partitionpath.field": "partition_by",
    "hoodie.datasource.write.precombine.field": "precombine_field",
    "hoodie.datasource.write.table.type": "table_type",
    "hoodie.datasource.write.payload.class": "payload_class",
    "hoodie.index.type": "index_type",
    "hoodie.datasource.write.operation": "incremental_strategy",
    "hoodie.table.name": "(the model alias)",
}


class HudiConfigError(Exception):
    """Every problem of one model's config, listed together."""

    def __init__(self, model: str, problems: Sequence[str]) -> None:
        self.model = model
        self.problems = list(problems)
        super().__init__(f"model {model}: invalid hudi_incremental config:\n  - " + "\n  - ".join(problems))


def _names(value: Any) -> tuple[str, ...] | None:
    """A column name or list of names; None when the value has another shape."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    return None


def _builtin_payloads() -> dict[str, str]:
    """short and full name -> full class name, from the engine's payload list."""
    from hudi_engine.payload import BUILTIN_PAYLOADS

    out = {}
    for p in BUILTIN_PAYLOADS.values():
        out[p.class_name] = p.class_name
        out[p.short_name] = p.class_name
    return out


def resolve_payload(name: str) -> tuple[str | None, str | None]:
    """(full class name, problem): a Hudi payload class (short or full name) or a Python dotted path.

    A Python dotted path must name a `hudi_engine.payload.Payload`; the engine applies payloads by their rule,
    so it has to be one of the rules the engine knows (its class name).
    """
    builtins = _builtin_payloads()
    if name in builtins:
        return builtins[name], None
    accepted = ", ".join(sorted({n for n in builtins if "." not in n}))
    if "." in name and not name.startswith("org.apache.hudi."):
        module, _, attr = name.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as e:
            return None, (f"payload_class {name!r}: not a Hudi payload ({accepted}) and not an importable Python "
                          f"object ({type(e).__name__}: {e})")
        class_name = getattr(obj, "class_name", None)
        if class_name in builtins:
            return builtins[class_name], None
        return None, (f"payload_class {name!r}: the Python object {obj!r} is not a hudi_engine.payload.Payload "
                      f"the engine applies (accepted: {accepted}, or a dotted path to such a Payload)")
    return None, f"payload_class {name!r}: expected one of {accepted} (short or full org.apache.hudi.common.model name)"


@dataclass(frozen=True)
class HudiModelConfig:
    model: str
    unique_key: tuple[str, ...]
    partition_by: tuple[str, ...]
    precombine_field: str | None
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    payload_class: str | None  # full class name; None: the table's (or Hudi's default)
    strategy: str
    index_type: str | None
    location_root: str | None
    on_schema_change: str
    hudi_options: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def from_dbt(config: Mapping[str, Any], model: str) -> "HudiModelConfig":
        """Validate a model's config (the keys of `hudi_model_settings()`); raise once with every problem."""
        problems: list[str] = []
        get = config.get

        unique_key = _names(get("unique_key"))
        if unique_key is None:
            problems.append(f"unique_key={get('unique_key')!r}: expected a column name or a list of column names")
            unique_key = ()
        elif not unique_key:
            problems.append("unique_key is required: every Hudi table has a record key (set unique_key to the "
                            "column, or list of columns, that identifies a row)")

        partition_by = _names(get("partition_by"))
        if partition_by is None:
            problems.append(f"partition_by={get('partition_by')!r}: expected a column name or a list of column names")
            partition_by = ()

        precombine = get("precombine_field")
        if precombine is not None and (not isinstance(precombine, str) or not precombine.strip()):
            problems.append(f"precombine_field={precombine!r}: expected one column name")
            precombine = None
        precombine = precombine.strip() if precombine else None

        raw_type = get("table_type") or "cow"
        table_type = TABLE_TYPES.get(str(raw_type).strip().lower()) if isinstance(raw_type, str) else None
        if table_type is None:
            problems.append(f"table_type={raw_type!r}: expected one of cow, mor (or copy_on_write, merge_on_read)")
            table_type = "COPY_ON_WRITE"

        strategy = get("incremental_strategy") or "upsert"
        if not isinstance(strategy, str) or strategy.strip().lower() not in STRATEGIES:
            problems.append(f"incremental_strategy={strategy!r}: expected one of {', '.join(STRATEGIES)}")
            strategy = "upsert"
        strategy = strategy.strip().lower()

        payload = get("payload_class")
        payload_class = None
        if payload is not None:
            if not isinstance(payload, str) or not payload.strip():
                problems.append(f"payload_class={payload!r}: expected a class name")
            else:
                payload_class, problem = resolve_payload(payload.strip())
                if problem:
                    problems.append(problem)

        index_type = get("index_type")
        if index_type is not None:
            if not isinstance(index_type, str) or index_type.strip().upper() not in INDEX_TYPES:
                problems.append(f"index_type={index_type!r}: expected one of {', '.join(INDEX_TYPES)}")
                index_type = None
            else:
                index_type = index_type.strip().upper()

        location_root = get("location_root")
        if location_root is not None and (not isinstance(location_root, str) or not location_root.strip()):
            problems.append(f"location_root={location_root!r}: expected a directory path or URI")
            location_root = None

        on_schema_change = get("on_schema_change") or "ignore"
        if not isinstance(on_schema_change, str) or on_schema_change.strip().lower() not in ON_SCHEMA_CHANGE:
            problems.append(f"on_schema_change={on_schema_change!r}: expected one of {', '.join(ON_SCHEMA_CHANGE)}")
            on_schema_change = "ignore"
        on_schema_change = on_schema_change.strip().lower()

        hudi_options: dict[str, str] = {}
        raw_options = get("hudi_options") or {}
        if not isinstance(raw_options, Mapping):
            problems.append(f"hudi_options={raw_options!r}: expected a mapping of hoodie.* keys to values")
            raw_options = {}
        for key, value in raw_options.items():
            if not isinstance(key, str) or not key.startswith("hoodie."):
                problems.append(f"hudi_options key {key!r}: expected a Hudi option name starting with 'hoodie.'")
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, (list, tuple)):
                value = ",".join(map(str, value))
            hudi_options[key] = str(value)

        cfg = HudiModelConfig(model, unique_key, partition_by, precombine, table_type, payload_class, strategy,
                              index_type, location_root.rstrip("/") if location_root else None, on_schema_change,
                              hudi_options)
        # Options that repeat a named setting must agree with it (one value per setting).
        named = cfg._named_options()
        for key, setting in OWNED_KEYS.items():
            if key in hudi_options and key in named and not _same_option(key, hudi_options[key], named[key]):
                problems.append(f"hudi_options[{key!r}]={hudi_options[key]!r} contradicts {setting} "
                                f"({named[key]!r}); set {setting} only")
            elif key in hudi_options and key not in named and key in ("hoodie.datasource.write.operation",
                                                                       "hoodie.table.name"):
                problems.append(f"hudi_options[{key!r}]: set by the materialization ({setting}); remove it")
        if problems:
            raise HudiConfigError(model, problems)
        return cfg

    # ---- translation: the only place dbt settings become hoodie.* keys --------------------------------------
    def _named_options(self) -> dict[str, str]:
        opts = {
            "hoodie.datasource.write.recordkey.field": ",".join(self.unique_key),
            "hoodie.datasource.write.partitionpath.field": ",".join(self.partition_by),
            "hoodie.datasource.write.table.type": self.table_type,
        }
        if self.precombine_field:
            opts["hoodie.datasource.write.precombine.field"] = self.precombine_field
        if self.payload_class:
            opts["hoodie.datasource.write.payload.class"] = self.payload_class
        if self.index_type:
            opts["hoodie.index.type"] = self.index_type
        return opts

    def hoodie_options(self, table_name: str, database: str, operation: str,
                       columns: Mapping[str, str] | None = None) -> dict[str, str]:
        """The write's Hudi options. `columns` maps a setting's column name to the model's own spelling
        (Spark resolves names case-insensitively; Hudi's key generator needs the exact column)."""
        columns = columns or {}
        opts = dict(self.hudi_options)
        named = self._named_options()
        for key in ("hoodie.datasource.write.recordkey.field", "hoodie.datasource.write.partitionpath.field",
                    "hoodie.datasource.write.precombine.field"):
            if key in named:
                named[key] = ",".join(columns.get(c, c) for c in named[key].split(",") if c)
        opts.update(named)
        opts.update({
            "hoodie.table.name": table_name,
            "hoodie.database.name": database,
            "hoodie.datasource.write.operation": operation,
        })
        if not self.partition_by:
            opts.pop("hoodie.datasource.write.partitionpath.field", None)
        return opts

    @property
    def columns_used(self) -> list[tuple[str, str]]:
        """(setting, column) pairs whose columns the model's result must have."""
        out = [("unique_key", c) for c in self.unique_key] + [("partition_by", c) for c in self.partition_by]
        if self.precombine_field and self.strategy != "delete":
            out.append(("precombine_field", self.precombine_field))
        return out

    def layout_changes(self, table_config) -> list[str]:
        """How this config contradicts an existing table's `hoodie.properties` (empty: it fits)."""
        changes = []
        if table_config.table_type != self.table_type:
            changes.append(f"table_type {table_config.table_type} -> {self.table_type}")
        if [c.lower() for c in table_config.record_key_fields] != [c.lower() for c in self.unique_key]:
            changes.append(f"unique_key {table_config.record_key_fields} -> {list(self.unique_key)}")
        if [c.lower() for c in table_config.partition_fields] != [c.lower() for c in self.partition_by]:
            changes.append(f"partition_by {table_config.partition_fields} -> {list(self.partition_by)}")
        if self.precombine_field and (table_config.precombine_field or "").lower() != self.precombine_field.lower():
            changes.append(f"precombine_field {table_config.precombine_field!r} -> {self.precombine_field!r}")
        table_payload = table_config.props.get("hoodie.compaction.payload.class")
        if self.payload_class and table_payload and _builtin_payloads().get(table_payload) != self.payload_class:
            changes.append(f"payload_class {table_payload} -> {self.payload_class}")
        return changes


def _same_option(key: str, a: str, b: str) -> bool:
    if key in ("hoodie.datasource.write.recordkey.field", "hoodie.datasource.write.partitionpath.field"):
        return [x.strip() for x in a.split(",") if x.strip()] == [x.strip() for x in b.split(",") if x.strip()]
    if key == "hoodie.datasource.write.table.type":
        return TABLE_TYPES.get(a.strip().lower(), a.strip().upper()) == b
    if key == "hoodie.datasource.write.payload.class":
        return _builtin_payloads().get(a.strip()) == b
    if key == "hoodie.index.type":
        return a.strip().upper() == b
    return a.strip() == b.strip()
