"""`DateFormat`: a Joda (Java SimpleDateFormat) date pattern, as Hudi's timestamp key generator takes it
(`hoodie.keygen.timebased.output.dateformat`, `.input.dateformat`), parsed once and applied column-wise: it formats
Arrow timestamps into partition values, parses strings into instants, and gives the strptime format that reads a
partition value back. Letters: y M d D H h a m s S E (Z when parsing)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_engine.arrays import repeated
from hudi_engine.errors import KeyGeneratorError


@dataclass(frozen=True)
class DateFormat:
    """One pattern and its tokens: [("lit", text) | (letter, count)]."""

    pattern: str
    tokens: tuple[tuple[str, Any], ...]

    @staticmethod
    def parse(pattern: str, key: str) -> "DateFormat":
        """The pattern of option `key` (named in the error when a letter is not supported)."""
        return DateFormat(pattern, tuple(_tokens(pattern, key)))

    def format(self, local: pa.Array) -> pa.Array:
        """Zone-aware timestamps formatted (their components taken in the array's zone)."""
        return _format(local, self.tokens)

    def parse_values(self, values: pa.Array, zone: str) -> pa.Array:
        """Strings parsed into timestamp[ms, UTC]; rows that do not match become null. A value without an offset is
        local time in `zone`."""
        return _parse(values, self.tokens, self.pattern, zone)

    def strptime_format(self) -> str:
        """The strptime format equivalent to the pattern's numeric letters (to read a partition value back)."""
        return _strptime_format(self.tokens, self.pattern)


_JODA_LETTERS = set("yMdHhmsSaEDZ")
_MONTH_SHORT = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_MONTH_LONG = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]
_DAY_SHORT = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_DAY_LONG = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _tokens(pattern: str, key: str) -> list[tuple[str, Any]]:
    """[("lit", text) | (letter, count)] of a Joda/SimpleDateFormat pattern (quotes: 'text', '' = ')."""
    tokens: list[tuple[str, Any]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            j = i + 1
            text = []
            while j < n:
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            tokens.append(("lit", "".join(text) if j > i + 1 else "'"))
            i = j + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c not in _JODA_LETTERS:
                raise KeyGeneratorError(
                    f"{key}={pattern!r}: pattern letter {c!r} is not supported (supported: {''.join(sorted(_JODA_LETTERS))})"
                )
            tokens.append((c, j - i))
            i = j
        else:
            tokens.append(("lit", c))
            i += 1
    return tokens


def _format(local: pa.Array, tokens: Sequence[tuple[str, Any]]) -> pa.Array:
    """Format zone-aware timestamps (components are taken in the array's zone) with Joda pattern tokens."""
    n = len(local)
    parts: list[pa.Array] = []

    def padded(values: pa.Array, width: int) -> pa.Array:
        return pc.utf8_lpad(values.cast(pa.string()), width=width, padding="0")

    for kind, arg in tokens:
        if kind == "lit":
            parts.append(pa.array([arg] * n, pa.string()))
        elif kind == "y":
            year = pc.year(local)
            parts.append(padded(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 2) if arg == 2 else padded(year, arg))
        elif kind == "M":
            month = pc.month(local)
            if arg >= 3:
                names = pa.array(_MONTH_LONG if arg >= 4 else _MONTH_SHORT)
                parts.append(pc.take(names, pc.subtract(month, 1)))
            else:
                parts.append(padded(month, arg))
        elif kind == "d":
            parts.append(padded(pc.day(local), arg))
        elif kind == "D":
            parts.append(padded(pc.day_of_year(local), arg))
        elif kind == "H":
            parts.append(padded(pc.hour(local), arg))
        elif kind == "h":
            hour12 = pc.subtract(pc.hour(local), pc.multiply(pc.divide(pc.hour(local), 12), 12))
            parts.append(padded(pc.if_else(pc.equal(hour12, 0), 12, hour12), arg))
        elif kind == "a":
            parts.append(pc.if_else(pc.less(pc.hour(local), 12), "AM", "PM"))
        elif kind == "m":
            parts.append(padded(pc.minute(local), arg))
        elif kind == "s":
            parts.append(padded(pc.second(local), arg))
        elif kind == "S":
            millis = padded(pc.millisecond(local), 3)
            parts.append(pc.utf8_slice_codeunits(millis, 0, arg) if arg <= 3 else pc.utf8_rpad(millis, width=arg, padding="0"))
        elif kind == "E":
            names = pa.array(_DAY_LONG if arg >= 4 else _DAY_SHORT)
            parts.append(pc.take(names, pc.day_of_week(local)))
        elif kind == "Z":
            raise KeyGeneratorError("output date formats with a zone offset ('Z') are not supported")
    if not parts:
        return repeated("", n)
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "")


_MONTH_INDEX = {m.lower(): i + 1 for i, m in enumerate(_MONTH_SHORT)} | {
    m.lower(): i + 1 for i, m in enumerate(_MONTH_LONG)
}


def _parse(values: pa.Array, tokens: Sequence[tuple[str, Any]], pattern: str, zone: str) -> pa.Array:
    """Parse strings with Joda pattern tokens into timestamp[ms, UTC]; rows that do not match become null.

    The pattern becomes a regex whose groups are reassembled into ISO-8601 text for Arrow's parser. Supported:
    y (yyyy, or yy with Joda's pivot around the current year), M (number or name), d, H, m, s, S, Z (offset
    or 'Z') and literals. A value without an offset is local time in `zone` (the input time zone).
    """
    regex = ["^"]
    groups: dict[str, int] = {}
    for kind, arg in tokens:
        if kind == "lit":
            regex.append(re.escape(arg))
            continue
        if kind in groups:
            raise KeyGeneratorError(f"date format {pattern!r}: letter {kind!r} appears twice")
        groups[kind] = arg
        if kind == "y":
            regex.append(r"(?P<y>\d{2})" if arg == 2 else r"(?P<y>\d{4})")
        elif kind == "M" and arg >= 3:
            regex.append(r"(?P<M>[A-Za-z]+)")
        elif kind == "S":
            regex.append(rf"(?P<S>\d{{{arg}}})")
        elif kind == "Z":
            regex.append(r"(?P<Z>Z|[+-]\d{2}(?::?\d{2})?)")
        elif kind in "MdHms":
            regex.append(rf"(?P<{kind}>\d{{{arg}}})" if arg >= 2 else rf"(?P<{kind}>\d{{1,2}})")
        else:
            raise KeyGeneratorError(f"date format {pattern!r}: letter {kind!r} is not supported for parsing")
    regex.append("$")
    text = pc.utf8_trim_whitespace(values)
    parts = pc.extract_regex(text, "".join(regex))
    matched = pc.is_valid(parts)

    def group(name: str, default: str, width: int) -> pa.Array:
        if name not in groups:
            return pa.array([default] * len(values), pa.string())
        return pc.utf8_lpad(pc.struct_field(parts, [name]), width=width, padding="0")

    year = group("y", "1970", 4)
    if groups.get("y") == 2:
        yy_text = pc.struct_field(parts, ["y"])
        yy = pc.if_else(pc.equal(yy_text, ""), "0", yy_text).cast(pa.int32())
        pivot = datetime.now(UTC).year
        full = pc.add(yy, 2000)
        full = pc.if_else(pc.greater(full, pivot + 49), pc.subtract(full, 100), full)
        year = full.cast(pa.string())
    if groups.get("M", 0) >= 3:
        names = pc.utf8_lower(pc.struct_field(parts, ["M"]))
        keys = pa.array(list(_MONTH_INDEX))
        index = pc.index_in(names, value_set=keys)
        month_numbers = pc.take(pa.array(list(_MONTH_INDEX.values()), pa.int32()), index)
        matched = pc.and_kleene(matched, pc.is_valid(month_numbers))
        month = pc.utf8_lpad(month_numbers.cast(pa.string()), width=2, padding="0")
    else:
        month = group("M", "01", 2)
    millis = group("S", "000", 3) if groups.get("S", 3) >= 3 else pc.utf8_rpad(group("S", "000", 1), width=3, padding="0")
    millis = pc.utf8_slice_codeunits(millis, 0, 3)
    iso = pc.binary_join_element_wise(
        year, "-", month, "-", group("d", "01", 2), "T", group("H", "00", 2), ":", group("m", "00", 2), ":",
        group("s", "00", 2), ".", millis, "",
    )
    iso = pc.if_else(matched, iso, pa.scalar(None, pa.string()))
    if "Z" in groups:  # the text carries its own offset
        return _cast_or_null(pc.binary_join_element_wise(iso, pc.struct_field(parts, ["Z"]), ""), pa.timestamp("ms", tz="UTC"))
    naive = _cast_or_null(iso, pa.timestamp("ms"))
    return pc.assume_timezone(naive, timezone=zone, ambiguous="earliest", nonexistent="earliest").cast(
        pa.timestamp("ms", tz="UTC")
    )


def _cast_or_null(values: pa.Array, target: pa.DataType) -> pa.Array:
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Rare (e.g. month 13): fall back to one value at a time so only the bad rows become null.
        out = []
        for v in values.to_pylist():
            try:
                out.append(pa.scalar(v, pa.string()).cast(target).as_py() if v is not None else None)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                out.append(None)
        return pa.array(out, target)


def _strptime_format(tokens: Sequence[tuple[str, Any]], pattern: str) -> str:
    """A strptime format equivalent to numeric Joda tokens (for parsing input strings and partition values)."""
    codes = {"y": "%Y", "M": "%m", "d": "%d", "H": "%H", "m": "%M", "s": "%S", "D": "%j"}
    out = []
    for kind, arg in tokens:
        if kind == "lit":
            out.append(arg.replace("%", "%%"))
        elif kind == "y" and arg == 2:
            out.append("%y")
        elif kind == "M" and arg >= 3:
            out.append("%B" if arg >= 4 else "%b")
        elif kind in codes:
            out.append(codes[kind])
        else:
            raise KeyGeneratorError(f"date format {pattern!r}: letter {kind!r} cannot be parsed back (only y M d D H m s)")
    return "".join(out)


