"""`ReadOptions`: one read's query, parsed once from its options (a Spark reader's, `read_table`'s, the JVM source's).

The keys are declared in `hudi_engine.config.keys` (Hudi's read options, and this engine's internal ones the read
paths hand one another); `ReadOptions.to_options` writes a query back as options, so that another reader of the same
table runs exactly the same query. Instants are `yyyyMMddHHmmssSSS`, or `yyyy-MM-dd HH:mm:ss[.SSS]` / `yyyy-MM-dd`
(UTC), as Hudi's time travel accepts. Which instant, slices and rows a query reads is `hudi_engine.scan_plan`'s.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from hudi_engine.config import keys
from hudi_engine.config.option import ConfigOption
from hudi_engine.errors import HudiError

QueryType = Literal["snapshot", "read_optimized", "incremental"]
QUERY_TYPES: tuple[str, ...] = keys.QUERY_TYPE.choices
QUERY_TYPE = keys.QUERY_TYPE.key
AS_OF_INSTANT = keys.AS_OF_INSTANT.key
BEGIN_INSTANT = keys.BEGIN_INSTANT.key
END_INSTANT = keys.END_INSTANT.key
INCREMENTAL_FORMAT = keys.INCREMENTAL_FORMAT.key
CDC_IMAGES = keys.CDC_IMAGES.key
CDC = "cdc"


class InstantOptionError(HudiError):
    """An option value that is no instant time; the reader adds the table and its instants to the message."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """One read's options, validated: where the table is and which query to run (and, for the engine's own read
    paths, which file groups it is limited to)."""

    path: str | None = None
    query_type: QueryType = "snapshot"
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None
    file_groups: frozenset[str] | None = None
    logged_keys_only: frozenset[str] = frozenset()
    incremental_format: str = "latest_state"  # incremental: latest_state, or cdc (every change, deletes included)
    cdc_images: str = "json"  # cdc: the before / after images as JSON text or structs

    @property
    def incremental(self) -> bool:
        return self.query_type == "incremental"

    @property
    def cdc(self) -> bool:
        """A CDC query (`hudi_engine.cdc_query`): incremental with `hoodie.datasource.query.incremental.format=cdc`."""
        return self.incremental and self.incremental_format == CDC

    @property
    def read_optimized(self) -> bool:
        return self.query_type == "read_optimized"

    @property
    def begin_instant(self) -> str:
        """The exclusive start of an incremental read (`parse` requires one for query type incremental)."""
        if self.begin is None:
            raise HudiError(f"option {QUERY_TYPE}=incremental needs {BEGIN_INSTANT} (exclusive start instant)")
        return self.begin

    @property
    def schema_instant(self) -> str | None:
        """The instant whose schema the rows are read in, as far as the options tell (`ScanPlan.schema` is exact)."""
        return self.end if self.incremental else self.as_of

    @staticmethod
    def parse(options: Mapping[str, str]) -> "ReadOptions":
        """The options of one read; keys are case-insensitive (Spark lower-cases them) and may be Hudi's aliases."""
        opts = {str(k).lower(): v for k, v in options.items()}
        if "paths" in opts and opts["paths"] not in ("", "[]"):
            raise HudiError(f"option paths={opts['paths']!r}: the hudi source reads one table; use load(path)")
        ro_entry = (opts.get(keys.QUERY_AS_RO_TABLE.key) or "").strip().lower() == "true"  # a synced _ro entry
        query_type = (opts.get(QUERY_TYPE) or ("read_optimized" if ro_entry else "snapshot")).strip().lower()
        if query_type not in QUERY_TYPES:
            raise HudiError(f"option {QUERY_TYPE}={query_type!r}: expected one of {', '.join(QUERY_TYPES)}")
        as_of = None
        for key in keys.AS_OF_INSTANT.all_keys:
            if opts.get(key):
                as_of = normalize_instant(opts[key], key)
                if opts[key].strip().isdigit() and len(as_of) not in _INSTANT_DIGITS:
                    # Java Hudi's time travel takes an instant of seconds or milliseconds only
                    # (HoodieSqlCommonUtils.formatQueryInstant); any other number is a typo, not an instant.
                    raise InstantOptionError(f"option {key}={as_of!r}: expected an instant time yyyyMMddHHmmss[SSS] "
                                             f"({' or '.join(map(str, _INSTANT_DIGITS))} digits), "
                                             "'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'")
        begin = normalize_instant(opts[BEGIN_INSTANT], BEGIN_INSTANT) if opts.get(BEGIN_INSTANT) else None
        end = normalize_instant(opts[END_INSTANT], END_INSTANT) if opts.get(END_INSTANT) else None
        if query_type == "incremental":
            if begin is None:
                raise HudiError(f"option {QUERY_TYPE}=incremental needs {BEGIN_INSTANT} (exclusive start instant)")
            if as_of is not None:
                raise HudiError(f"option {AS_OF_INSTANT}={as_of!r}: time travel does not combine with "
                                f"{QUERY_TYPE}=incremental; bound the range with {END_INSTANT}")
        elif begin is not None or end is not None:
            raise HudiError(f"options {BEGIN_INSTANT} / {END_INSTANT} need {QUERY_TYPE}=incremental "
                            f"(query type is {query_type!r})")
        fmt = _choice(opts, keys.INCREMENTAL_FORMAT)
        if fmt == CDC and query_type != "incremental":
            raise HudiError(f"option {INCREMENTAL_FORMAT}=cdc needs {QUERY_TYPE}=incremental (query type is "
                            f"{query_type!r}) and {BEGIN_INSTANT}")
        groups = _file_groups(opts, keys.FILE_GROUPS.key)
        return ReadOptions(plain_path(opts.get("path")), cast(QueryType, query_type), as_of, begin, end, groups,
                           _file_groups(opts, keys.LOGGED_KEYS_ONLY.key) or frozenset(), fmt,
                           _choice(opts, keys.CDC_IMAGES))

    def to_options(self) -> dict[str, str]:
        """The query as options (no path) that `parse` reads back as this query."""
        out: dict[str, str] = {QUERY_TYPE: self.query_type}
        if self.incremental:
            out[BEGIN_INSTANT] = self.begin or ""
            if self.end is not None:
                out[END_INSTANT] = self.end
        elif self.as_of is not None:
            out[AS_OF_INSTANT] = self.as_of
        if self.file_groups is not None:
            out[keys.FILE_GROUPS.key] = json.dumps(sorted(self.file_groups))
        if self.logged_keys_only:
            out[keys.LOGGED_KEYS_ONLY.key] = json.dumps(sorted(self.logged_keys_only))
        if self.cdc:
            out[INCREMENTAL_FORMAT] = CDC
            out[keys.CDC_IMAGES.key] = self.cdc_images
        return out


def _choice(opts: Mapping[str, str], option: ConfigOption[str]) -> str:
    """A choice option's value (case-insensitive), its default when absent."""
    value = (opts.get(option.key) or option.default).strip().lower()
    if value not in option.choices:
        raise HudiError(f"option {option.key}={value!r}: expected one of {', '.join(option.choices)}")
    return value


def _file_groups(opts: Mapping[str, str], key: str) -> frozenset[str] | None:
    text = opts.get(key)
    if not text:
        return None
    try:
        groups = json.loads(text)
    except ValueError:
        groups = None
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise HudiError(f"option {key}={text!r}: expected a JSON list of '<partition path>/<file id>'")
    return frozenset(groups)


def plain_path(path: str | None) -> str | None:
    """Spark qualifies catalog paths as `file:/x` (one slash), which is no URI to pyarrow: read it as `/x`."""
    if not path:
        return None
    if path.startswith("file:") and not path.startswith("file://"):
        return path[len("file:"):]
    return path


_INSTANT_DIGITS = (14, 17)
_INSTANT_FORMATS = (("%Y-%m-%d %H:%M:%S.%f", 23), ("%Y-%m-%d %H:%M:%S", 19), ("%Y-%m-%dT%H:%M:%S.%f", 23),
                    ("%Y-%m-%dT%H:%M:%S", 19), ("%Y-%m-%d", 10))


def normalize_instant(value: str, option: str) -> str:
    """An instant time (`yyyyMMddHHmmssSSS`, or any digits) from an option value. A date or timestamp is reformatted
    as written, with no time zone conversion: instant times are wall-clock times of the timeline's own zone
    (`hoodie.table.timeline.timezone`), and Hudi's `formatQueryInstant` does the same."""
    value = str(value).strip()
    if value.isdigit():
        return value
    for fmt, length in _INSTANT_FORMATS:
        if len(value) == length:
            try:
                t = dt.datetime.strptime(value, fmt)
            except ValueError:
                continue
            return t.strftime("%Y%m%d%H%M%S") + f"{t.microsecond // 1000:03d}"
    raise InstantOptionError(f"option {option}={value!r}: expected an instant time yyyyMMddHHmmssSSS, "
                             "'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'")
