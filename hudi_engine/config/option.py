"""`ConfigOption`: one `hoodie.*` key declared with its type, default, accepted values, doc and Hudi aliases; and
`Options`: a user's options parsed against the declarations, every error collected and raised once.

A declaration parses its own text values (`ConfigOption.parse`), so a value is validated the same way wherever it
comes from (a Spark options dict, a dbt model's `hudi_options`, `hoodie.properties`). Keys nobody declared are
kept as given (Hudi copies some into commit metadata); one that looks like a typo of a declared key gets a warning.
"""
from __future__ import annotations

import difflib
import enum
import warnings
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hudi_engine.errors import ConfigError

T = TypeVar("T")


class Kind(enum.Enum):
    """How a declared value is written as text."""

    STRING = "string"
    BOOL = "boolean"
    INT = "whole number"
    FLOAT = "number"
    CHOICE = "one of the listed values"
    FIELDS = "comma-separated column names"


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    """One Hudi option. `default` is what this engine uses when the key is absent; `hudi_default` is the text
    default of Hudi 0.14/0.15 where Hudi has the key (None: no default there, or not a Hudi key), and
    `default_note` says why the two differ when they do."""

    key: str
    kind: Kind
    default: T
    doc: str
    group: str
    hudi_default: str | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other keys Hudi accepts for this option (older or alternative names)
    value_aliases: Mapping[str, str] = field(default_factory=dict)  # e.g. COW -> COPY_ON_WRITE
    minimum: float | None = None
    default_note: str = ""

    def parse(self, raw: Any) -> T:
        """The typed value of `raw` (text, or a Python value of the right type); ConfigError naming the key."""
        text = _text(raw)
        kind = self.kind
        if kind is Kind.STRING:
            return text  # type: ignore[return-value]
        if kind is Kind.FIELDS:
            return tuple(f.strip() for f in text.split(",") if f.strip())  # type: ignore[return-value]
        if kind is Kind.BOOL:
            low = text.strip().lower()
            if low not in ("true", "false"):
                raise self.error(raw, "true or false")
            return (low == "true")  # type: ignore[return-value]
        if kind is Kind.CHOICE:
            value = text.strip()
            value = self.value_aliases.get(value.upper(), self.value_aliases.get(value, value))
            match = next((c for c in self.choices if c.lower() == value.lower()), None)
            if match is None:
                raise self.error(raw, "one of " + ", ".join(self.choices))
            return match  # type: ignore[return-value]
        number: float
        try:
            number = int(text.strip()) if kind is Kind.INT else float(text.strip())
        except ValueError:
            raise self.error(raw, "a " + ("whole number" if kind is Kind.INT else "number")) from None
        if self.minimum is not None and number < self.minimum:
            raise self.error(raw, f"a {'whole ' if kind is Kind.INT else ''}number >= {_num(self.minimum)}")
        return number  # type: ignore[return-value]

    def error(self, raw: Any, expected: str) -> ConfigError:
        return ConfigError(f"{self.key}={_text(raw)!r}: expected {expected}")

    @property
    def all_keys(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def describe_default(self) -> str:
        """The default as text, for docs."""
        if self.default is None or self.default == ():
            return ""
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, tuple):
            return ",".join(self.default)
        return _num(self.default) if isinstance(self.default, float) else str(self.default)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    return str(value)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(value)


class Options:
    """A user's options, parsed against the declarations: `options[OPTION]` is the typed value (or the default).

    Construction validates every declared key given (under its key or an alias) and raises one ConfigError listing
    every bad value (with `collect`, it keeps them in `errors` instead; bad values then read as their default).
    `given` keeps every option as text under its canonical key; undeclared keys stay as given. `known` are undeclared
    keys that are not typos (Hudi's own keys this engine classifies elsewhere): no typo warning for them.
    """

    def __init__(self, options: Mapping[str, Any] | None, declarations: Iterable[ConfigOption],
                 *, what: str = "Hudi options", collect: bool = False, known: Collection[str] = ()) -> None:
        by_key: dict[str, ConfigOption] = {}
        for d in declarations:
            for k in d.all_keys:
                by_key[k] = d
        self.declared = by_key
        given: dict[str, str] = {}
        source: dict[str, str] = {}  # canonical key -> the key the user wrote
        errors: list[str] = []
        for raw_key, raw_value in (options or {}).items():
            key = str(raw_key)
            decl = by_key.get(key)
            canonical = decl.key if decl is not None else key
            text = _text(raw_value)
            if canonical in given and given[canonical] != text and not _same(decl, given[canonical], text):
                errors.append(f"{source[canonical]}={given[canonical]!r} and {key}={text!r} set the same option "
                              f"{canonical} to different values; set one of them")
                continue
            given[canonical] = text
            source[canonical] = key
        self.given = given
        self.values: dict[str, Any] = {}
        for key, text in given.items():
            decl = by_key.get(key)
            if decl is None:
                continue
            try:
                self.values[key] = decl.parse(text)
            except ConfigError as e:
                errors.append(str(e))
        _warn_typos({k: v for k, v in given.items() if k not in known}, by_key)
        self.errors = errors  # with `collect`, the caller adds its own and raises once
        if errors and not collect:
            raise ConfigError(f"invalid {what}:\n  " + "\n  ".join(errors))

    def __getitem__(self, option: ConfigOption[T]) -> T:
        return self.values.get(option.key, option.default)

    def is_set(self, option: ConfigOption) -> bool:
        """Whether the user gave the option (a non-empty value under its key or an alias)."""
        return self.given.get(option.key, "") != ""

    def get(self, option: ConfigOption[T], default: T) -> T:
        """The option's value when set, else `default` (for options whose default depends on others)."""
        return self[option] if self.is_set(option) else default

    def undeclared(self) -> dict[str, str]:
        return {k: v for k, v in self.given.items() if k not in self.declared}


def _same(decl: ConfigOption | None, a: str, b: str) -> bool:
    """Two spellings of one value (`MOR` and `MERGE_ON_READ` under a table type's two keys)."""
    if decl is None:
        return False
    try:
        return bool(decl.parse(a) == decl.parse(b))
    except ConfigError:
        return False


def _warn_typos(given: Mapping[str, str], declared: Mapping[str, ConfigOption]) -> None:
    for key in given:
        if key in declared or not key.startswith("hoodie"):
            continue
        close = difflib.get_close_matches(key, list(declared), n=1, cutoff=0.85)
        if close:
            warnings.warn(f"Hudi option {key!r} is not known; did you mean {close[0]!r}?", stacklevel=4)
