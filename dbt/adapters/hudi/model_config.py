"""A `hudi_incremental` model's config: validated at once, and translated onto the engine's option declarations.

`HudiModelConfig.from_dbt(config, model)` checks every setting and raises one `HudiConfigError` listing all
problems. Every model setting is declared once, in `MODEL_SETTINGS` (its dbt name, what it accepts, its default, the
field it fills and the engine option it spells); `from_dbt` reads each by its declaration, then runs the checks
that need several settings together (the strategy, cdc_mode, merge columns, predicates, change_type_column). A
setting that spells an engine option (`SETTINGS`) is parsed by that option's declaration, and `hudi_options` plus
the named settings are then parsed together as a `WriteConfig`, so every `hoodie.*` value is checked at compile time
with the same rules, defaults and table-agreement check the engine applies at write time. `hoodie_options(...)` is
the only place dbt settings become `hoodie.*` keys. Nothing here needs Spark.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.hudi.errors import HudiConfigError
from hudi_engine import ConfigError, HudiError, WriteConfig, payload_for
from hudi_engine.config import ConfigOption
from hudi_engine.config import keys as K

ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")
# dbt-spark's spelling (`materialized='incremental', file_format='hudi'`): its strategies as engine operations.
# `insert_overwrite` without partition_by overwrites the table; `microbatch` upserts by unique_key, else overwrites
# the batch's partitions.
SPARK_STRATEGIES = ("merge", "append", "insert_overwrite", "microbatch")
# Hudi's Spark SQL table options (what a dbt-spark + Hudi project puts in `options` / `tblproperties`) -> settings.
HUDI_SQL_OPTIONS = {"primaryKey": "unique_key", "preCombineField": "precombine_field",
                    "orderingFields": "precombine_field", "type": "table_type", "payloadClass": "payload_class"}
# `compaction` / `cleaning` model settings: their keys -> the engine options they spell.
COMPACTION_KEYS: dict[str, ConfigOption[Any]] = {"inline": K.COMPACT_INLINE, "delta_commits": K.COMPACT_MAX_DELTA_COMMITS}
CLEANING_KEYS = {"automatic": K.CLEAN_AUTOMATIC, "policy": K.CLEANER_POLICY, "retained": None}
CLEANING_POLICIES = {"commits": "KEEP_LATEST_COMMITS", "file_versions": "KEEP_LATEST_FILE_VERSIONS"}
# `clustering` model setting: its keys -> the hoodie.clustering.* / layout options they spell (`commits`: both
# trigger counts, the inline one and the schedule-only one).
CLUSTERING_KEYS: dict[str, tuple[ConfigOption[Any], ...]] = {
    "cluster_by": (K.CLUSTERING_SORT_COLUMNS,), "layout": (K.LAYOUT_OPTIMIZE_STRATEGY,),
    "small_file_limit": (K.CLUSTERING_SMALL_FILE_LIMIT,), "target_file_size": (K.CLUSTERING_TARGET_FILE_MAX_BYTES,),
    "max_bytes_per_group": (K.CLUSTERING_MAX_BYTES_PER_GROUP,), "inline": (K.CLUSTERING_INLINE,),
    "schedule_only": (K.CLUSTERING_SCHEDULE_INLINE,),
    "commits": (K.CLUSTERING_INLINE_MAX_COMMITS, K.CLUSTERING_ASYNC_MAX_COMMITS),
}
# `hive_sync` / `glue_sync` model settings (true, or a mapping of these keys): the catalog sync options they spell.
HIVE_SYNC_KEYS: dict[str, ConfigOption[Any]] = {
    "database": K.SYNC_DATABASE, "table": K.SYNC_TABLE, "skip_ro_suffix": K.SYNC_SKIP_RO_SUFFIX,
    "support_timestamp": K.SYNC_SUPPORT_TIMESTAMP, "mode": K.SYNC_MODE}
GLUE_SYNC_KEYS: dict[str, ConfigOption[Any]] = {
    "database": K.GLUE_DATABASE, "table": K.GLUE_TABLE, "region": K.GLUE_REGION, "endpoint": K.GLUE_ENDPOINT,
    "skip_ro_suffix": K.SYNC_SKIP_RO_SUFFIX, "support_timestamp": K.SYNC_SUPPORT_TIMESTAMP}
# How a run writes: the model's table is new (or its catalog entry is), rebuilt by --full-refresh, or updated.
MODES = ("create", "full_refresh", "incremental")
# A model without unique_key writes a keyless table: these strategies need keys and are refused there; a keyless
# model's later runs insert unless it says otherwise.
KEYED_STRATEGIES = ("upsert", "delete")
KEYLESS_STRATEGY = "insert"
KEYLESS_STRATEGIES = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table")
# Options the materialization sets itself.
MATERIALIZATION_OPTIONS = {K.OPERATION.key: "incremental_strategy", K.TABLE_NAME.key: "the model alias",
                           K.PARTIAL_UPDATE_COLUMNS.key: "merge_update_columns / merge_exclude_columns"}


# ---- the values a setting takes: each parser returns the value's meaning, or raises _Refused ----------------------
class _Refused(Exception):
    """A value the setting does not accept: reported as `<setting>=<value>: expected <what it accepts>`."""


def _names(value: Any) -> tuple[str, ...] | None:
    """A column name or list of names; None when the value has another shape."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    return None


def _columns(raw: Any, problems: list[str]) -> tuple[str, ...]:
    names = _names(raw)
    if names is None:
        raise _Refused
    return names


def _column(raw: Any, problems: list[str]) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _Refused
    return raw.strip()


def _path(raw: Any, problems: list[str]) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _Refused
    return raw.rstrip("/")


def _as_given(raw: Any, problems: list[str]) -> Any:
    return raw


def _option(option: ConfigOption[Any], text: Callable[[Any], Any] = lambda raw: raw) -> Callable[[Any, list[str]], Any]:
    """A setting that spells `option`: parsed by its declaration (a refusal is the option's, in the setting's name)."""
    return lambda raw, problems: option.parse(text(raw))


def _payload(raw: Any, problems: list[str]) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        raise _Refused
    try:
        return payload_for(raw.strip()).class_name
    except HudiError as e:
        problems.append(f"payload_class {raw.strip()!r}: {e}")
        return None


def _schema_change(raw: Any, problems: list[str]) -> str:
    if not isinstance(raw, str) or raw.strip().lower() not in ON_SCHEMA_CHANGE:
        raise _Refused
    return raw.strip().lower()


def _hoodie_options(raw: Any, problems: list[str]) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise _Refused
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key.startswith("hoodie."):
            problems.append(f"hudi_options key {key!r}: expected a Hudi option name starting with 'hoodie.'")
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(map(str, value))
        out[key] = str(value)
    return out


def _sql_conditions(raw: Any, problems: list[str]) -> tuple[str, ...]:
    if raw == [] or raw == ():
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not all(isinstance(p, str) and p.strip() for p in items):
        raise _Refused
    return tuple(p.strip() for p in items)


def _compaction_options(raw: Any, problems: list[str]) -> dict[str, str]:
    """`compaction: {inline: true, delta_commits: 3}` (or `compaction: false`) as hoodie.compact.* options."""
    if isinstance(raw, bool):
        raw = {"inline": raw}
    out = _mapping_settings("compaction", raw, COMPACTION_KEYS, problems, " (e.g. {inline: true, delta_commits: 3})")
    if K.COMPACT_MAX_DELTA_COMMITS.key in out and K.COMPACT_INLINE.key not in out:
        out[K.COMPACT_INLINE.key] = "true"  # a delta commit count asks for inline compaction
    return out


def _clustering_options(raw: Any, problems: list[str]) -> dict[str, str]:
    """`clustering: {cluster_by: [a, b], layout: z-order, commits: 4, schedule_only: false, small_file_limit: N,
    target_file_size: N, max_bytes_per_group: N, inline: true}` (or `clustering: false`) as hoodie.clustering.* and
    hoodie.layout.optimize.strategy options. `commits` asks for inline clustering unless `schedule_only` (plan after
    the writes, executed by `hudi_cluster`) or `inline: false` says otherwise."""
    if isinstance(raw, bool):
        raw = {"inline": raw}
    out = _mapping_settings("clustering", raw, CLUSTERING_KEYS, problems,
                            " (e.g. {cluster_by: [customer_id, ts], layout: z-order, commits: 4})")
    if isinstance(raw, Mapping) and "commits" in raw and "inline" not in raw and not _true(out.get(K.CLUSTERING_SCHEDULE_INLINE.key)):
        out[K.CLUSTERING_INLINE.key] = "true"  # a commit count asks for inline clustering, as compaction's does
    return out


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _sync_settings(setting: str, raw: Any, keys: Mapping[str, ConfigOption[Any]], problems: list[str]) -> dict[str, str]:
    """`hive_sync` / `glue_sync`: true, false, or a mapping of `keys` (each the option it spells)."""
    if isinstance(raw, bool):
        raw = {} if raw else None
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(f"{setting}={raw!r}: expected true, or a mapping with keys {', '.join(keys)}")
        return {}
    return _mapping_settings(setting, raw, keys, problems)


def _mapping_settings(setting: str, raw: Any, keys: Mapping[str, ConfigOption[Any] | tuple[ConfigOption[Any], ...]],
                      problems: list[str], example: str = "") -> dict[str, str]:
    """A model setting that is a mapping of `keys` (each the Hudi option it spells, or several) as those options; a
    list value as its items comma-separated."""
    if not isinstance(raw, Mapping):
        problems.append(f"{setting}={raw!r}: expected a mapping with keys {', '.join(keys)}{example}")
        return {}
    out: dict[str, str] = {}
    for key, value in raw.items():
        spelled = keys.get(str(key))
        if spelled is None:
            problems.append(f"{setting}: unknown key {key!r}; expected {', '.join(keys)}")
            continue
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else _option_text(value)
        for option in spelled if isinstance(spelled, tuple) else (spelled,):
            out[option.key] = text
    return out


def _hive_sync_options(raw: Any, problems: list[str]) -> dict[str, str]:
    """`hive_sync: true` or `{database: ..., table: ..., skip_ro_suffix: ...}`: Hudi's HiveSyncTool keys."""
    out = _sync_settings("hive_sync", raw, HIVE_SYNC_KEYS, problems)
    return {K.HIVE_SYNC_ENABLE.key: "true", **out} if out or raw is True or isinstance(raw, Mapping) else out


def _glue_sync_options(raw: Any, problems: list[str]) -> dict[str, str]:
    """`glue_sync: true` or `{database: ..., region: ..., endpoint: ...}`: AwsGlueCatalogSyncTool's keys."""
    out = _sync_settings("glue_sync", raw, GLUE_SYNC_KEYS, problems)
    if out or raw is True or isinstance(raw, Mapping):
        out = {K.META_SYNC_ENABLE.key: "true", K.SYNC_TOOLS.key: K.GLUE_SYNC_TOOL, **out}
    return out


def _flag(option: ConfigOption[bool]) -> Callable[[Any, list[str]], dict[str, str]]:
    """A true / false setting that spells a boolean option, added to hudi_options."""
    def read(raw: Any, problems: list[str]) -> dict[str, str]:
        try:
            return {option.key: _option_text(option.parse(_option_text(raw)))}
        except ConfigError:
            raise _Refused from None
    return read


def _cleaning_options(raw: Any, problems: list[str]) -> dict[str, str]:
    """`cleaning: {policy: commits | file_versions, retained: N, automatic: true}` (or `cleaning: false`) as
    hoodie.clean* options; `retained` counts commits or file versions by the policy."""
    if isinstance(raw, bool):
        raw = {"automatic": raw}
    if not isinstance(raw, Mapping):
        problems.append(f"cleaning={raw!r}: expected a mapping with keys {', '.join(CLEANING_KEYS)} "
                        f"(e.g. {{policy: commits, retained: 5}})")
        return {}
    out: dict[str, str] = {}
    unknown = [k for k in raw if str(k) not in CLEANING_KEYS]
    if unknown:
        problems.append(f"cleaning: unknown key(s) {unknown}; expected {', '.join(CLEANING_KEYS)}")
    policy = raw.get("policy")
    if policy is not None:
        policy = CLEANING_POLICIES.get(str(policy).lower(), str(policy).upper())
        out[K.CLEANER_POLICY.key] = policy
    if "automatic" in raw:
        out[K.CLEAN_AUTOMATIC.key] = _option_text(raw["automatic"])
    if "retained" in raw:
        by_versions = policy == "KEEP_LATEST_FILE_VERSIONS"
        option = K.CLEANER_FILE_VERSIONS_RETAINED if by_versions else K.CLEANER_COMMITS_RETAINED
        out[option.key] = _option_text(raw["retained"])
    return out


def _option_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


# ---- the model settings, each declared once -------------------------------------------------------------------
ADDS_OPTIONS = "+hudi_options"  # a setting's `field` when its value is hoodie.* options added to hudi_options


@dataclass(frozen=True)
class Setting:
    """One model setting. `from_dbt` reads `name` (if unset or false, its `aliases` in turn); a value that is unset
    (None; any false value when `blank_is_unset`) or refused becomes `default`. `parse(raw, problems)` is the
    value's meaning: it raises `_Refused` for `<name>=<raw>: expected <accepts>`, or the ConfigError of `option`
    (the engine option the setting spells: then the refusal is the option's, in the setting's name); a parser of
    a mapping reports each bad entry in `problems` itself."""

    name: str
    parse: Callable[[Any, list[str]], Any]
    accepts: str = ""  # what the value may be (the help text of a refusal); "": the option's or the parser's words
    default: Any = None
    option: ConfigOption[Any] | None = None  # hudi_options may repeat its key, with the same value
    field: str = ""  # "": the field of the setting's name
    blank_is_unset: bool = False
    aliases: tuple[str, ...] = ()  # older names (read when the setting is unset or false)
    incremental: bool = False  # a setting of incremental runs: a table model (rebuilt by every run) ignores it

    def read(self, config: Mapping[str, Any], problems: list[str]) -> Any:
        """The setting's value in a model's config; a refusal is appended to `problems`."""
        raw = config.get(self.name)
        for alias in self.aliases:
            raw = raw or config.get(alias)
        if raw is None or (self.blank_is_unset and not raw):
            return self.default
        try:
            return self.parse(raw, problems)
        except ConfigError as e:
            problems.append(_in_dbt_terms(self, e))
        except _Refused:
            problems.append(f"{self.name}={raw!r}: expected {self.accepts}")
        return self.default


def _in_dbt_terms(setting: Setting, error: ConfigError) -> str:
    """An option's refusal as the dbt setting's: its name, and the short spellings dbt users write (cow, mor)."""
    assert setting.option is not None
    text = str(error).replace(f"{setting.option.key}=", f"{setting.name}=", 1)
    if setting.option.value_aliases:
        text += f" (or {', '.join(a.lower() for a in setting.option.value_aliases)})"
    return text


COLUMNS = "a column name or a list of column names"
# The name, its parser, what it accepts (a refusal's help text), its default, the engine option it spells; the value
# fills the HudiModelConfig field of the same name unless `field` says another (ADDS_OPTIONS: added to hudi_options).
MODEL_SETTINGS: tuple[Setting, ...] = (
    Setting("unique_key", _columns, COLUMNS, (), K.RECORD_KEY_FIELDS),
    Setting("partition_by", _columns, COLUMNS, (), K.PARTITION_FIELDS),
    Setting("table_type", _option(K.TABLE_TYPE), "", K.TABLE_TYPE.default, K.TABLE_TYPE, blank_is_unset=True),
    Setting("precombine_field", _column, "one column name", None, K.PRECOMBINE_FIELD),
    Setting("payload_class", _payload, "a class name", None, K.PAYLOAD_CLASS),
    # Its values and default depend on the spelling and on unique_key / partition_by: `_strategy` reads it.
    Setting("incremental_strategy", _as_given, "", None, K.OPERATION, field="dbt_strategy", blank_is_unset=True,
            incremental=True),
    Setting("index_type", _option(K.INDEX_TYPE), "", None, K.INDEX_TYPE),
    Setting("location_root", _path, "a directory path or URI"),
    Setting("on_schema_change", _schema_change, f"one of {', '.join(ON_SCHEMA_CHANGE)}", "ignore",
            blank_is_unset=True, incremental=True),
    Setting("hudi_options", _hoodie_options, "a mapping of hoodie.* keys to values", {}, blank_is_unset=True),
    Setting("merge_update_columns", _columns, "a list of column names", (), incremental=True),
    Setting("merge_exclude_columns", _columns, "a list of column names", (), incremental=True),
    Setting("compaction", _compaction_options, "", {}, field=ADDS_OPTIONS),
    Setting("cleaning", _cleaning_options, "", {}, field=ADDS_OPTIONS),
    Setting("clustering", _clustering_options, "", {}, field=ADDS_OPTIONS),
    Setting("hive_sync", _hive_sync_options, "", {}, field=ADDS_OPTIONS),
    Setting("glue_sync", _glue_sync_options, "", {}, field=ADDS_OPTIONS),
    Setting("cdc_enabled", _option(K.CDC_ENABLED), "", None, K.CDC_ENABLED),
    Setting("cdc_mode", _option(K.CDC_LOGGING_MODE, lambda raw: str(raw).upper()), "", None, K.CDC_LOGGING_MODE),
    Setting("table_version", _option(K.TABLE_VERSION, str), "", None, K.TABLE_VERSION),
    Setting("metadata_table", _flag(K.METADATA_ENABLE), "true or false", {}, field=ADDS_OPTIONS),
    Setting("column_stats", _flag(K.METADATA_COLUMN_STATS), "true or false", {}, field=ADDS_OPTIONS),
    Setting("record_index", _flag(K.METADATA_RECORD_INDEX), "true or false", {}, field=ADDS_OPTIONS),
    Setting("incremental_predicates", _sql_conditions, "a list of SQL conditions", (), aliases=("predicates",),
            incremental=True),
    Setting("change_type_column", _column, "one column name"),
)
# dbt setting -> the engine option it spells. hudi_options may repeat these keys only with the same value.
SETTINGS: dict[str, ConfigOption] = {s.name: s.option for s in MODEL_SETTINGS if s.option is not None}
# Settings of incremental runs, which a table model (rebuilt by every run) does not have.
TABLE_IGNORES = tuple(name for s in MODEL_SETTINGS if s.incremental for name in (s.name, *s.aliases))
BY_NAME = {s.name: s for s in MODEL_SETTINGS}


@dataclass(frozen=True)
class HudiModelConfig:
    model: str
    unique_key: tuple[str, ...]
    partition_by: tuple[str, ...]
    precombine_field: str | None
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    payload_class: str | None  # full class name; None: the table's (or Hudi's default)
    strategy: str  # the engine operation of an incremental run
    index_type: str | None
    location_root: str | None
    on_schema_change: str
    hudi_options: dict[str, str] = field(default_factory=dict)
    merge_update_columns: tuple[str, ...] = ()  # partial update: on a stored key only these columns change
    merge_exclude_columns: tuple[str, ...] = ()  # ... or every column but these
    dbt_strategy: str = ""  # incremental_strategy as the model wrote it (dbt-spark's names on that spelling)
    microbatch: bool = False
    cdc_enabled: bool | None = None  # a new table keeps change data for CDC queries (hoodie.table.cdc.enabled)
    cdc_mode: str | None = None  # hoodie.table.cdc.supplemental.logging.mode
    change_type_column: str | None = None  # a column of CDC ops: rows whose value is 'd' delete their key
    table_version: str | None = None  # a new table's hoodie.table.version (6, 8 or 9; the engine's default: 6)
    # SQL predicates on the table's partition columns: the partitions a merge may look at (predicates.py)
    incremental_predicates: tuple[str, ...] = ()

    @staticmethod
    def from_dbt(config: Mapping[str, Any], model: str) -> "HudiModelConfig":
        """Validate a model's config (the keys of `hudi_model_settings()`); raise once with every problem.

        Each setting is read by its declaration in `MODEL_SETTINGS`; then the checks that need several settings
        together run. `materialized='incremental'` with `file_format='hudi'` is dbt-spark's spelling: its strategy
        names, and its `options` / `tblproperties` (hoodie.* keys, and Hudi's SQL names primaryKey,
        preCombineField, type, payloadClass), are translated here into the same settings, then validated the same
        way."""
        problems: list[str] = []
        spark_spelling = config.get("materialized") in ("incremental", "table")
        explicit_key = bool(config.get("unique_key"))  # microbatch upserts by unique_key, not by options' primaryKey
        config = _with_spark_spelling(config, problems) if spark_spelling else config
        if config.get("materialized") == "table":
            # Every run rebuilds a table model: like dbt-spark's table materialization, it has no incremental
            # settings (a project-wide `+incremental_strategy` or `+incremental_predicates` reaches it too).
            config = {k: v for k, v in config.items() if k not in TABLE_IGNORES}

        values = {s.name: s.read(config, problems) for s in MODEL_SETTINGS}
        fields = {s.field or s.name: values[s.name] for s in MODEL_SETTINGS if s.field != ADDS_OPTIONS}

        # ---- the checks of several settings together
        fields.update(_strategy(values, spark_spelling, explicit_key, problems))
        strategy, dbt_strategy = fields["strategy"], fields["dbt_strategy"]
        problems += _cdc_mode_problems(values, config.get("hudi_options"))
        fields["hudi_options"] = _with_setting_options(values, problems)
        problems += _upsert_only_problems(values, strategy, dbt_strategy, spark_spelling)
        problems += _predicate_problems(values, strategy, dbt_strategy, fields["hudi_options"])

        cfg = HudiModelConfig(model=model, **fields)
        problems += cfg._option_problems()
        if problems:
            what = "Hudi config (materialized='incremental', file_format='hudi')" if spark_spelling else \
                "hudi_incremental config"
            raise HudiConfigError(model, problems, what)
        return cfg

    def _option_problems(self) -> list[str]:
        """hudi_options that repeat a named setting must agree with it; then every option is parsed the engine's
        way (cleaning, compaction, lock, sizes ...), so a bad value fails at compile time."""
        problems = []
        named = self._named_options()
        by_key = {o.key: s for s, o in SETTINGS.items()}
        for key, value in self.hudi_options.items():
            canonical = _CANONICAL.get(key, key)  # Hudi's table-config key of an option is that option
            if canonical in MATERIALIZATION_OPTIONS:
                problems.append(f"hudi_options[{key!r}]: set by the materialization "
                                f"({MATERIALIZATION_OPTIONS[canonical]}); remove it")
            elif canonical in named and not _same(canonical, value, named[canonical]):
                problems.append(f"hudi_options[{key!r}]={value!r} contradicts {by_key[canonical]} "
                                f"({named[canonical]!r}); set {by_key[canonical]} only")
        if not problems:
            try:
                config = self.write_config("model", "analytics", self.strategy)
                if self.strategy not in KEYED_STRATEGIES:  # (a keyed strategy of a keyless model: reported above)
                    config.for_keyless(f"of model {self.model}")  # the engine's keyless refusals at compile time
            except ConfigError as e:
                problems += [line.strip() for line in str(e).splitlines()[1:]] or [str(e)]
        return problems

    # ---- translation: the only place dbt settings become hoodie.* keys --------------------------------------
    def _named_options(self) -> dict[str, str]:
        """The options the named settings spell (not the operation: the run's). Lists of columns are always given,
        so that an unpartitioned model says so (an empty partition field list)."""
        opts = {}
        for setting in MODEL_SETTINGS:
            if setting.option is None or setting.option.key in MATERIALIZATION_OPTIONS:
                continue
            value = getattr(self, setting.field or setting.name)
            if isinstance(value, tuple):
                opts[setting.option.key] = ",".join(value)
            elif value is not None and value != "":
                opts[setting.option.key] = _option_text(value)
        return opts

    def hoodie_options(self, table_name: str, database: str, operation: str,
                       columns: Mapping[str, str] | None = None,
                       update_columns: Sequence[str] = ()) -> dict[str, str]:
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
        if _true(opts.get(K.HIVE_SYNC_ENABLE.key)) or _true(opts.get(K.META_SYNC_ENABLE.key)):
            # The synced entry is the model's own relation unless the model names another.
            opts.setdefault(K.SYNC_DATABASE.key, database)
            opts.setdefault(K.SYNC_TABLE.key, table_name)
        if update_columns and operation == "upsert":
            opts[K.PARTIAL_UPDATE_COLUMNS.key] = ",".join(update_columns)
        return opts

    def write_config(self, table_name: str, database: str, operation: str) -> WriteConfig:
        return WriteConfig.from_options(self.hoodie_options(table_name, database, operation))

    def update_columns(self, columns: Sequence[str]) -> tuple[str, ...]:
        """The columns a match updates (merge_update_columns, or all but merge_exclude_columns), each named as the
        model's result spells it; empty when every column is updated. A name the result lacks raises one
        HudiConfigError naming the setting."""
        if not self.merge_update_columns and not self.merge_exclude_columns:
            return ()
        by_lower = {c.lower(): c for c in columns}
        setting = "merge_update_columns" if self.merge_update_columns else "merge_exclude_columns"
        named = self.merge_update_columns or self.merge_exclude_columns
        missing = [c for c in named if c.lower() not in by_lower]
        if missing:
            raise HudiConfigError(self.model, [
                f"{setting}: column(s) {missing} are not in the model's result (columns: {', '.join(columns)}); "
                f"select them in the model or remove them from {setting}"])
        if self.merge_update_columns:
            return tuple(by_lower[c.lower()] for c in named)
        excluded = {c.lower() for c in named}
        return tuple(c for c in columns if c.lower() not in excluded)

    @property
    def columns_used(self) -> list[tuple[str, str]]:
        """(setting, column) pairs whose columns the model's result must have."""
        out = [("unique_key", c) for c in self.unique_key] + [("partition_by", c) for c in self.partition_by]
        if self.precombine_field and self.strategy != "delete":
            out.append(("precombine_field", self.precombine_field))
        if self.change_type_column:
            out.append(("change_type_column", self.change_type_column))
        return out

    def layout_changes(self, table_config, table_name: str) -> list[str]:
        """How this config contradicts an existing table's `hoodie.properties` (empty: it fits): the engine's
        own agreement check, in dbt's setting names."""
        by_key = {o.key: s for s, o in SETTINGS.items()} | {K.TABLE_NAME.key: "name"}
        changes = self.write_config(table_name, "", self.strategy).contradictions(table_config)
        return [f"{by_key.get(c.key, c.key)} {c.table} -> {c.given}" for c in changes]


# ---- the checks of several settings together --------------------------------------------------------------------
def _with_spark_spelling(config: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
    """dbt-spark's `options` / `tblproperties` folded into the named settings and hudi_options: hoodie.* keys as
    hudi_options, Hudi's SQL option names as the settings they spell (which must then agree)."""
    out = dict(config)
    hudi_options = dict(config.get("hudi_options") or {}) if isinstance(config.get("hudi_options"), Mapping) else {}
    for source in ("options", "tblproperties"):
        given = config.get(source) or {}
        if not isinstance(given, Mapping):
            problems.append(f"{source}={given!r}: expected a mapping")
            continue
        for key, value in given.items():
            key = str(key)
            if key.startswith("hoodie."):
                if key in hudi_options and str(hudi_options[key]) != str(value):
                    problems.append(f"{source}[{key!r}]={value!r} contradicts {hudi_options[key]!r} set elsewhere")
                hudi_options[key] = value
            elif key in HUDI_SQL_OPTIONS:
                setting = HUDI_SQL_OPTIONS[key]
                if out.get(setting) in (None, "", []):
                    out[setting] = value
                elif _names(out.get(setting)) != _names(value) and str(out.get(setting)).lower() != str(value).lower():
                    problems.append(f"{source}[{key!r}]={value!r} contradicts {setting}={out.get(setting)!r}; "
                                    f"set one of them")
            else:
                problems.append(f"{source}[{key!r}]: not a Hudi option; a Hudi table honours hoodie.* keys and "
                                f"{', '.join(HUDI_SQL_OPTIONS)} there. Remove it or use a hoodie.* key")
    out["hudi_options"] = hudi_options
    return out


def _strategy(values: Mapping[str, Any], spark_spelling: bool, explicit_key: bool,
              problems: list[str]) -> dict[str, Any]:
    """incremental_strategy (`dbt_strategy`) as the engine operation of an incremental run (`strategy`). Without
    unique_key the model is append-only: a keyless table (keys generated, docs/keyless.md) whose later runs insert."""
    unique_key, partition_by = values["unique_key"], values["partition_by"]
    dbt_strategy = values["incremental_strategy"] or \
        ("append" if spark_spelling else K.OPERATION.default if unique_key else KEYLESS_STRATEGY)
    if spark_spelling:
        strategy = _spark_strategy(dbt_strategy, explicit_key, bool(unique_key), bool(partition_by), problems)
        return {"dbt_strategy": dbt_strategy, "strategy": strategy, "microbatch": dbt_strategy == "microbatch"}
    parsed: str | None = None
    try:
        parsed = K.OPERATION.parse(dbt_strategy)
    except ConfigError as e:
        problems.append(_in_dbt_terms(BY_NAME["incremental_strategy"], e))
    strategy = parsed or (K.OPERATION.default if unique_key else KEYLESS_STRATEGY)
    if not unique_key and strategy in KEYED_STRATEGIES and parsed is not None:
        problems.append(
            f"incremental_strategy={dbt_strategy!r} finds rows by their record key, and this model has no "
            "unique_key: without one it writes a keyless Hudi table (keys generated per write, append-only). "
            f"Set unique_key to the column(s) that identify a row, or use incremental_strategy "
            f"{' / '.join(repr(s) for s in KEYLESS_STRATEGIES)}")
    return {"dbt_strategy": dbt_strategy, "strategy": strategy, "microbatch": False}


def _spark_strategy(strategy: str, unique_key: bool, record_key: bool, partitioned: bool, problems: list[str]) -> str:
    """dbt-spark's incremental_strategy as the engine operation of an incremental run. `unique_key`: the model sets
    it; `record_key`: it or options' primaryKey does."""
    if strategy not in SPARK_STRATEGIES:
        problems.append(f"incremental_strategy={strategy!r}: expected one of {', '.join(SPARK_STRATEGIES)} "
                        f"(dbt-spark's strategies on file_format='hudi'; materialized='hudi_incremental' takes "
                        f"Hudi's operations)")
        return K.OPERATION.default
    if strategy == "merge":
        # Without unique_key dbt-spark's MERGE has `on false`: it matches no stored row and appends every row
        # (dbt's BaseIncrementalUniqueKey expects it), which is an insert into a keyless table.
        return "upsert" if record_key else "insert"
    if strategy == "append":
        return "insert"
    if strategy == "insert_overwrite":
        return "insert_overwrite" if partitioned else "insert_overwrite_table"
    # microbatch: one Hudi instant per batch; upsert by unique_key, else overwrite the batch's partitions.
    if unique_key:
        return "upsert"
    if not partitioned:
        problems.append("incremental_strategy='microbatch' without unique_key overwrites the batch's partitions, "
                        "so it needs partition_by (e.g. the day of event_time); or set unique_key to upsert batches")
    return "insert_overwrite"


def _cdc_mode_problems(values: Mapping[str, Any], hudi_options: Any) -> list[str]:
    """cdc_mode is the mode of a table's change data: it needs cdc_enabled (or hudi_options' cdc key)."""
    given = hudi_options.get(K.CDC_ENABLED.key, "") if isinstance(hudi_options, Mapping) else ""
    if values["cdc_mode"] is None or values["cdc_enabled"] or str(given).lower() == "true":
        return []
    return [f"cdc_mode={values['cdc_mode']!r} needs cdc_enabled=true (the mode of a table without change data means "
            "nothing)"]


def _with_setting_options(values: Mapping[str, Any], problems: list[str]) -> dict[str, str]:
    """hudi_options plus the options of the settings that spell several (compaction, cleaning, hive_sync,
    glue_sync): hudi_options may repeat one of them only with the same value."""
    hudi_options = dict(values["hudi_options"])
    for setting in (s for s in MODEL_SETTINGS if s.field == ADDS_OPTIONS):
        for key, value in values[setting.name].items():
            if key in hudi_options and not _equal_option(key, hudi_options[key], value):
                problems.append(f"hudi_options[{key!r}]={hudi_options[key]!r} contradicts {setting.name} "
                                f"({value!r}); set {setting.name} only")
            hudi_options[key] = value
    return hudi_options


def _upsert_only_problems(values: Mapping[str, Any], strategy: str, dbt_strategy: str,
                          spark_spelling: bool) -> list[str]:
    """merge_update_columns / merge_exclude_columns (one of them) and change_type_column apply to upserts."""
    problems = []
    upsert = "merge" if spark_spelling else "upsert"
    update_columns, exclude_columns = values["merge_update_columns"], values["merge_exclude_columns"]
    if update_columns and exclude_columns:
        problems.append("merge_update_columns and merge_exclude_columns are both set: set one of them (the "
                        "columns a match updates, or the columns it leaves as stored)")
    if (update_columns or exclude_columns) and strategy != "upsert":
        name = "merge_update_columns" if update_columns else "merge_exclude_columns"
        problems.append(f"{name} applies to incremental_strategy {upsert} (a match updates some columns); this "
                        f"model's strategy is {dbt_strategy!r}. Remove {name} or change the strategy.")
    if values["change_type_column"] and strategy != "upsert":
        problems.append(f"change_type_column applies to incremental_strategy {upsert} (its rows insert, update or "
                        f"delete by key); this model's strategy is {dbt_strategy!r}. Remove change_type_column or "
                        "change the strategy.")
    return problems


def _predicate_problems(values: Mapping[str, Any], strategy: str, dbt_strategy: str,
                        hudi_options: Mapping[str, str]) -> list[str]:
    """`incremental_predicates` (dbt-spark's older name: `predicates`): SQL conditions on the stored rows a merge
    looks at. Hudi keeps one row per record key, so only conditions that cannot hide a stored key from the merge are
    taken: on partition columns, with an index that finds a key in its own partition. Which columns a condition
    reads is checked when the model runs (predicates.py)."""
    if not values["incremental_predicates"]:
        return []
    if strategy not in KEYED_STRATEGIES and dbt_strategy == "merge":  # keyless: matches nothing, appends anyway
        return []
    if strategy not in KEYED_STRATEGIES:
        return [f"incremental_predicates limit the stored rows a merge matches; this model's strategy "
                f"{dbt_strategy!r} matches none. Remove incremental_predicates, or use strategy "
                "'merge' (materialized='incremental') / 'upsert' (hudi_incremental)"]
    if not values["partition_by"]:
        return ["incremental_predicates on a table without partition_by are refused: Hudi keeps one row per "
                "record key, and a merge that did not look at the stored rows a predicate excludes would write "
                "a second row for their keys. Only predicates on partition_by columns are used (they bound "
                "the partitions a merge reads). Remove incremental_predicates."]
    index = str(values["index_type"] or hudi_options.get(K.INDEX_TYPE.key) or "").upper()
    if index in ("GLOBAL_SIMPLE", "RECORD_INDEX", "GLOBAL_RECORD_LEVEL_INDEX"):
        return [f"incremental_predicates with index_type {index} are refused: that index finds a key "
                "in any partition (a key may move), so a merge that skipped a partition could miss the stored "
                "row of a key and write a second one. Remove incremental_predicates or use a partition-local "
                "index (SIMPLE, BLOOM, BUCKET)."]
    return []


def _equal_option(key: str, a: str, b: str) -> bool:
    option = next((o for o in K.WRITE_OPTIONS if key in o.all_keys), None)
    try:
        return option is not None and option.parse(a) == option.parse(b)
    except ConfigError:
        return False


_CANONICAL = {k: o.key for o in K.WRITE_OPTIONS for k in o.aliases}


def _same(key: str, a: str, b: str) -> bool:
    option = next(o for o in SETTINGS.values() if o.key == key)
    try:
        if option is K.PAYLOAD_CLASS:
            return payload_for(a.strip()).class_name == b
        return option.parse(a) == option.parse(b)
    except (ConfigError, HudiError):
        return False
