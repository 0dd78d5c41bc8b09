"""A `hudi_incremental` model's config: validated at once, and translated onto the engine's option declarations.

`HudiModelConfig.from_dbt(config, model)` checks every setting and raises one `HudiConfigError` listing all
problems. The dbt settings are spellings of engine options (`SETTINGS`): each is parsed by its declaration, and
`hudi_options` plus the named settings are then parsed together as a `WriteConfig`, so every `hoodie.*` value is
checked at compile time with the same rules, defaults and table-agreement check the engine applies at write time.
`hoodie_options(...)` is the only place dbt settings become `hoodie.*` keys. Nothing here needs Spark.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_engine import ConfigError, HudiError, WriteConfig
from hudi_engine.config import keys as K
from hudi_engine.config.option import ConfigOption
from hudi_engine.payload import payload_for

ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")
# How a run writes: the model's table is new (or its catalog entry is), rebuilt by --full-refresh, or updated.
MODES = ("create", "full_refresh", "incremental")

# dbt setting -> the engine option it spells. hudi_options may repeat these keys only with the same value.
SETTINGS: dict[str, ConfigOption] = {
    "unique_key": K.RECORD_KEY_FIELDS,
    "partition_by": K.PARTITION_FIELDS,
    "precombine_field": K.PRECOMBINE_FIELD,
    "table_type": K.TABLE_TYPE,
    "payload_class": K.PAYLOAD_CLASS,
    "index_type": K.INDEX_TYPE,
    "incremental_strategy": K.OPERATION,
}
# Options the materialization sets itself.
MATERIALIZATION_OPTIONS = {K.OPERATION.key: "incremental_strategy", K.TABLE_NAME.key: "the model alias"}


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


def _parse(setting: str, raw: Any, problems: list[str]) -> Any:
    """A named setting parsed by its option's declaration; the problem names the dbt setting."""
    option = SETTINGS[setting]
    try:
        return option.parse(raw)
    except ConfigError as e:
        text = str(e).replace(f"{option.key}=", f"{setting}=", 1)
        if option.value_aliases:  # the short spellings dbt users write (cow, mor)
            text += f" (or {', '.join(a.lower() for a in option.value_aliases)})"
        problems.append(text)
        return None


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

        table_type = _parse("table_type", get("table_type") or "cow", problems) or K.TABLE_TYPE.default
        strategy = _parse("incremental_strategy", get("incremental_strategy") or K.OPERATION.default,
                          problems) or K.OPERATION.default

        payload_class = None
        payload = get("payload_class")
        if payload is not None:
            if not isinstance(payload, str) or not payload.strip():
                problems.append(f"payload_class={payload!r}: expected a class name")
            else:
                try:
                    payload_class = payload_for(payload.strip()).class_name
                except HudiError as e:
                    problems.append(f"payload_class {payload.strip()!r}: {e}")

        index_type = get("index_type")
        if index_type is not None:
            index_type = _parse("index_type", index_type, problems)

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
        problems += cfg._option_problems()
        if problems:
            raise HudiConfigError(model, problems)
        return cfg

    def _option_problems(self) -> list[str]:
        """hudi_options that repeat a named setting must agree with it; then every option is parsed the engine's
        way (cleaning, compaction, lock, sizes ...), so a bad value fails at compile time."""
        problems = []
        named = self._named_options()
        by_key = {o.key: s for s, o in SETTINGS.items()}
        for key, value in self.hudi_options.items():
            if key in MATERIALIZATION_OPTIONS:
                problems.append(f"hudi_options[{key!r}]: set by the materialization "
                                f"({MATERIALIZATION_OPTIONS[key]}); remove it")
            elif key in named and not _same(key, value, named[key]):
                problems.append(f"hudi_options[{key!r}]={value!r} contradicts {by_key[key]} ({named[key]!r}); "
                                f"set {by_key[key]} only")
        if not problems:
            try:
                self.write_config("model", "analytics", self.strategy)
            except ConfigError as e:
                problems += [line.strip() for line in str(e).splitlines()[1:]] or [str(e)]
        return problems

    # ---- translation: the only place dbt settings become hoodie.* keys --------------------------------------
    def _named_options(self) -> dict[str, str]:
        opts = {
            K.RECORD_KEY_FIELDS.key: ",".join(self.unique_key),
            K.PARTITION_FIELDS.key: ",".join(self.partition_by),
            K.TABLE_TYPE.key: self.table_type,
        }
        if self.precombine_field:
            opts[K.PRECOMBINE_FIELD.key] = self.precombine_field
        if self.payload_class:
            opts[K.PAYLOAD_CLASS.key] = self.payload_class
        if self.index_type:
            opts[K.INDEX_TYPE.key] = self.index_type
        return opts

    def hoodie_options(self, table_name: str, database: str, operation: str,
                       columns: Mapping[str, str] | None = None) -> dict[str, str]:
        """The write's Hudi options. `columns` maps a setting's column name to the model's own spelling
        (Spark resolves names case-insensitively; Hudi's key generator needs the exact column). An unpartitioned
        model says so explicitly (an empty partition field list), so that it cannot silently fit a partitioned
        table."""
        columns = columns or {}
        opts = dict(self.hudi_options)
        named = self._named_options()
        for option in (K.RECORD_KEY_FIELDS, K.PARTITION_FIELDS, K.PRECOMBINE_FIELD):
            if option.key in named:
                named[option.key] = ",".join(columns.get(c, c) for c in named[option.key].split(",") if c)
        opts.update(named)
        opts.update({K.TABLE_NAME.key: table_name, K.DATABASE_NAME.key: database, K.OPERATION.key: operation})
        return opts

    def write_config(self, table_name: str, database: str, operation: str) -> WriteConfig:
        return WriteConfig.from_options(self.hoodie_options(table_name, database, operation))

    @property
    def columns_used(self) -> list[tuple[str, str]]:
        """(setting, column) pairs whose columns the model's result must have."""
        out = [("unique_key", c) for c in self.unique_key] + [("partition_by", c) for c in self.partition_by]
        if self.precombine_field and self.strategy != "delete":
            out.append(("precombine_field", self.precombine_field))
        return out

    def layout_changes(self, table_config, table_name: str) -> list[str]:
        """How this config contradicts an existing table's `hoodie.properties` (empty: it fits): the engine's
        own agreement check, in dbt's setting names."""
        by_key = {o.key: s for s, o in SETTINGS.items()} | {K.TABLE_NAME.key: "name"}
        changes = self.write_config(table_name, "", self.strategy).contradictions(table_config)
        return [f"{by_key.get(c.key, c.key)} {c.table} -> {c.given}" for c in changes]


def _same(key: str, a: str, b: str) -> bool:
    option = next(o for o in SETTINGS.values() if o.key == key)
    try:
        if option is K.PAYLOAD_CLASS:
            return payload_for(a.strip()).class_name == b
        return option.parse(a) == option.parse(b)
    except (ConfigError, HudiError):
        return False
