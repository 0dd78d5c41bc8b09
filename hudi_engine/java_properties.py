"""Java `.properties` text: `Properties.load` and `Properties.store` semantics.

Hudi reads `hoodie.properties` and `.hoodie_partition_metadata` with `Properties.load(InputStream)` (ISO-8859-1)
and writes them with `Properties.store(OutputStream, comment)`. `store` to a byte stream escapes every char
outside printable ASCII (0x20-0x7E) as `\\uXXXX` (upper-case hex, UTF-16 code units), so the files are pure
ASCII; `format_properties` does the same. `parse_properties` accepts anything `load` accepts.
"""
from __future__ import annotations

from datetime import UTC, datetime

from .errors import HudiError

_WHITESPACE = " \t\f"
_LOAD_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class PropertiesError(HudiError, ValueError):
    """Malformed `\\uXXXX` escape in a properties text."""


def parse_properties(text: str | bytes) -> dict[str, str]:
    """Key/value pairs of a properties text, as `Properties.load` reads them (later keys win).

    Bytes are decoded as ISO-8859-1, like `load(InputStream)`.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("latin-1")
    props: dict[str, str] = {}
    for line_no, line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[_unescape(key, line_no)] = _unescape(value, line_no)
    return props


def _logical_lines(text: str):
    """(first line number, logical line) pairs: comments/blank lines dropped, escaped line breaks joined."""
    n = len(text)
    i = 0
    line_no = 0
    while i < n:
        line_no += 1
        start_no = line_no
        # leading whitespace of a natural line is skipped
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            break
        if text[i] in "\r\n":  # blank line
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        if text[i] in "#!":  # comment: rest of the natural line, never continued
            while i < n and text[i] not in "\r\n":
                i += 1
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        parts: list[str] = []
        while True:
            j = i
            while j < n and text[j] not in "\r\n":
                j += 1
            chunk = text[i:j]
            trailing = len(chunk) - len(chunk.rstrip("\\"))
            if trailing % 2 == 1:
                # An odd run of backslashes escapes the line break: join with the next line, minus its indent.
                parts.append(chunk[:-1])
                if j >= n:
                    i = j
                    break
                j += 2 if text.startswith("\r\n", j) else 1
                line_no += 1
                while j < n and text[j] in _WHITESPACE:
                    j += 1
                i = j
                continue
            parts.append(chunk)
            i = j + (2 if text.startswith("\r\n", j) else 1)
            break
        yield start_no, "".join(parts)


def _split_key_value(line: str) -> tuple[str, str]:
    n = len(line)
    k = 0
    backslash = False
    value_start = n
    has_sep = False
    while k < n:
        c = line[k]
        if not backslash and c in "=:":
            value_start, has_sep = k + 1, True
            break
        if not backslash and c in _WHITESPACE:
            value_start = k + 1
            break
        backslash = (not backslash) if c == "\\" else False
        k += 1
    while value_start < n:
        c = line[value_start]
        if c not in _WHITESPACE:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return line[:k], line[value_start:]


def _unescape(s: str, line_no: int) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:  # a lone trailing backslash is dropped, as Java does
            break
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                bad = "\\u" + digits
                raise PropertiesError(f"line {line_no}: malformed \\uxxxx escape {bad!r}")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_LOAD_ESCAPES.get(c, c))
    result = "".join(out)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in result):
        # \uXXXX surrogate pairs written by Java come back as one code point; lone surrogates stay as they are
        try:
            result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            pass
    return result


def _escape(s: str, *, is_key: bool) -> str:
    out: list[str] = []
    for x, c in enumerate(s):
        o = ord(c)
        if 61 < o < 127:
            out.append("\\\\" if c == "\\" else c)
        elif c == " ":
            out.append("\\ " if x == 0 or is_key else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif o < 0x20 or o > 0x7E:
            out.append(_u_escape(c))
        else:
            out.append(c)
    return "".join(out)


def _u_escape(c: str) -> str:
    units = c.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[k:k + 2], 'big'):04X}" for k in range(0, len(units), 2))


def _comment_lines(comment: str) -> list[str]:
    """`Properties.writeComments`: one `#` line per comment line; chars above 0xFF as \\uXXXX."""
    text = "".join(c if ord(c) <= 0xFF else _u_escape(c) for c in comment)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out = []
    for k, line in enumerate(lines):
        # Java only adds "#" to continuation lines that don't already start with a comment char
        out.append(line if k > 0 and line[:1] in ("#", "!") else "#" + line)
    return out


def format_properties(props: dict[str, str], comments: list[str] | tuple[str, ...] = ()) -> str:
    """Properties text as `Properties.store` writes it: `#comment` lines, then `key=value` lines, "\\n" endings.

    The result is pure ASCII (non-ASCII chars as \\uXXXX); encode it with "ascii" or "latin-1".
    """
    lines: list[str] = []
    for comment in comments:
        lines.extend(_comment_lines(comment))
    for key, value in props.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise PropertiesError(f"property {key!r}={value!r}: keys and values must be strings")
        lines.append(f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}")
    return "".join(line + "\n" for line in lines)


def java_date_string(moment: datetime | None = None) -> str:
    """`java.util.Date.toString()` (`EEE MMM dd HH:mm:ss zzz yyyy`), in UTC: e.g. `Mon Mar 31 03:06:42 UTC 2025`."""
    m = (moment or datetime.now(UTC)).astimezone(UTC)
    return f"{_DAYS[m.weekday()]} {_MONTHS[m.month - 1]} {m.day:02d} {m:%H:%M:%S} UTC {m.year}"


def java_instant_string(moment: datetime | None = None) -> str:
    """`java.time.Instant.toString()`: ISO-8601 UTC, fraction printed in groups of 3 digits only when non-zero."""
    m = (moment or datetime.now(UTC)).astimezone(UTC)
    base = f"{m:%Y-%m-%dT%H:%M:%S}"
    if m.microsecond == 0:
        return base + "Z"
    if m.microsecond % 1000 == 0:
        return f"{base}.{m.microsecond // 1000:03d}Z"
    return f"{base}.{m.microsecond:06d}Z"
