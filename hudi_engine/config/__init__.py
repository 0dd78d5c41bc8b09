"""Configuration: every `hoodie.*` option declared once (`keys`), parsed by `option.Options`, and typed per write
(`write_config.WriteConfig` and its parts; the lock's in `lock_config`, the catalog sync's in `sync_config`).
`options_markdown()` renders the declarations for docs/configuration.md."""
from __future__ import annotations

from hudi_engine.config import keys
from hudi_engine.config.keys import ALL_OPTIONS, GROUPS
from hudi_engine.config.lock_config import LockConfig
from hudi_engine.config.option import ConfigOption, Options
from hudi_engine.config.write_config import (
    ArchivalConfig,
    BloomConfig,
    CleanConfig,
    CompactionConfig,
    FileSizing,
    IndexConfig,
    IndexType,
    KeyConfig,
    LogConfig,
    MergeConfig,
    Operation,
    ParallelismConfig,
    WriteConfig,
)

__all__ = [
    "ALL_OPTIONS", "ArchivalConfig", "BloomConfig", "CleanConfig", "CompactionConfig", "ConfigOption", "FileSizing", "IndexConfig",
    "IndexType", "KeyConfig", "LockConfig", "LogConfig", "MergeConfig", "Operation", "Options", "ParallelismConfig",
    "WriteConfig", "keys", "options_markdown",
]


def options_markdown() -> str:
    """docs/configuration.md's option tables, one per group, generated from the declarations."""
    lines: list[str] = []
    for group, title in GROUPS.items():
        options = [o for o in ALL_OPTIONS if o.group == group]
        if not options:
            continue
        lines += [f"**{title}**", "", "| key | default | values | what it does |", "|---|---|---|---|"]
        for o in options:
            default = o.describe_default() or "-"
            if o.default_note:
                default += f" (Hudi: {o.hudi_default}; {o.default_note})"
            values = ", ".join(o.choices) if o.choices else o.kind.value
            key = f"`{o.key}`" + "".join(f" / `{a}`" for a in o.aliases)
            lines.append(f"| {key} | {default} | {values} | {o.doc} |")
        lines.append("")
    lines.append("Hudi's other write options (0.14 .. 1.2) are either refused by name before anything is written "
                 "(the values that ask for a feature this engine does not have) or accepted without effect: "
                 "[options.md](options.md) classifies each.")
    return "\n".join(lines).rstrip() + "\n"
