"""Key generators: record keys and partition paths of Arrow rows, computed column-wise (FORMAT.md, Record keys and
Partition paths).

Mirrors Hudi 0.14/0.15's Avro key generators (`KeyGenUtils`, `Simple/Complex/Nonpartitioned/TimestampBased/
Custom/GlobalDelete...AvroKeyGenerator`). Values are stringified as `partition_path.value_strings` documents.

* Simple: the key is the string value of the one key field; a null or empty key is an error.
* Complex: `f1:v1,f2:v2` in configured order (even for one field), `__null__`/`__empty__` for null/empty values;
  a row whose key values are all null/empty is an error. With two or more fields, a key that reads back as
  another tuple of values is refused (see "Ambiguous keys" below).
* Nonpartitioned: key as Simple (one field) or Complex (several); partition path `""`.
* GlobalDelete: key as Complex; partition path `""`.
* TimestampBased: key as Simple; the partition path is the one partition field read as a time
  (`hoodie.keygen.timebased.*`) and formatted with the output date format (Joda letters y M d D H h a m s S E).
  Write side: UNIX_TIMESTAMP / EPOCHMILLISECONDS / EPOCHMICROSECONDS / SCALAR on number, date (epoch day) and
  timestamp (its Avro long, epoch micros) columns, numeric text too; DATE_STRING with `input.dateformat` (several
  formats split by the delimiter regex; letters y M d H m s S Z). A null value stands for epoch + 1 unit, as in
  Java. Time zones default to UTC (Java: `hoodie.keygen.timebased.timezone`, whose default is UTC). Read side:
  `parse_partition_path` gives the formatted value, `partition_timestamp` the instant it stands for.
* Custom: key as Simple (one field) or Complex (several); each partition field is `name:SIMPLE` or
  `name:TIMESTAMP` (types given in the field list or in `hoodie.datasource.write.partitionpath.field`).

Auto-generated keys (keyless tables, Hudi 0.14+). A table without `hoodie.table.recordkey.fields` gets a key made
at write time: `<instant>_<partitionId>_<rowId>` (`HoodieRecord.generateSequenceId`, used by
`AutoRecordGenWrapperKeyGenerator` and `AutoRecordKeyGenerationUtils`), where the partition id is the input split's
(Spark's `TaskContext.getPartitionId()` of the stage reading the input, before any shuffle) and the row id counts
the split's rows from 0. A retried task re-reads its split and makes the same keys. `auto_record_keys` spells them;
the write puts them in the helper column AUTO_KEY_COLUMN, from which a key generator without key fields takes
them; the partition path comes from the table's partition fields as usual (docs/keyless.md).

Ambiguous keys. Hudi's composite key `f1:v1,...,fn:vn` (KeyGenerator.constructRecordKey) escapes nothing, so two
different rows can get one key and one silently replaces the other. Keys are written exactly as Hudi writes them;
a row is refused (KeyGeneratorError naming the fields, the values and the other reading) when its key does not
decode to its own values only, which for n >= 2 fields happens exactly when
1. a value is the text `__null__` or `__empty__`: it reads back as null / empty (`("p", None)` and `("p",
   "__null__")` both give `a:p,b:__null__`);
2. the key splits into `f1:<v1>,f2:<v2>,...` in more than one way with every value non-empty (Hudi never writes an
   empty value): `("1,b:2", "3")` and `("1", "2,b:3")` both give `a:1,b:2,b:3`. That needs a value holding
   `,<fk>:` for a field fk after the first, placed where a split also works; commas and colons elsewhere are fine
   (`"x,y"`, `"12:30"`, `",b:"` alone as the value of b, `"x,b:y"` as the value of c in (a, b, c)). Decided
   exactly: the split with the shortest values equals the one with the longest (a regex, lazy vs greedy).
Only string values can do either (Hudi's text of numbers, dates and timestamps holds no comma), and only keys made
for writing are checked: `stored_record_keys` recomputes keys of records already in a table as they are.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrays import repeated
from .config import keys as K
from .date_format import DateFormat
from .errors import KeyGeneratorError
from .partition_path import (
    PATH_SEPARATOR,
    escape_path_names,
    finish_segment,
    parse_partition_path,
    resolve_column,
    value_strings,
)

_PKG = "org.apache.hudi.keygen."
SIMPLE = _PKG + "SimpleKeyGenerator"
COMPLEX = _PKG + "ComplexKeyGenerator"
NONPARTITIONED = _PKG + "NonpartitionedKeyGenerator"
TIMESTAMP_BASED = _PKG + "TimestampBasedKeyGenerator"
CUSTOM = _PKG + "CustomKeyGenerator"
GLOBAL_DELETE = _PKG + "GlobalDeleteKeyGenerator"

# A write's generated keys travel beside the data in this column (a write helper column, `executor.HELPER_PREFIX`:
# never written to files); a key generator without key fields reads its keys from it.
AUTO_KEY_COLUMN = "_hw_auto_key"
# A prepped write's rows (SQL UPDATE / DELETE / MERGE, read from the table) carry their stored `_hoodie_record_key` in
# this helper column: on a keyless table it is the row's key, kept as it is (Hudi's prepped writes, HUDI-6579).
PREPPED_KEY_COLUMN = "_hw_prepped_key"
AUTO_KEY_SEPARATOR = "_"

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
# The options the key generators read, by key (declared in config/keys.py).
CONSISTENT_LOGICAL_TIMESTAMP = K.CONSISTENT_LOGICAL_TIMESTAMP.key
WRITE_PARTITIONPATH_FIELD = K.PARTITION_FIELDS.key
TIMESTAMP_TYPE = K.TIMESTAMP_TYPE.key
TIMESTAMP_SCALAR_UNIT = K.TIMESTAMP_SCALAR_UNIT.key
TIMESTAMP_INPUT_FORMAT = K.TIMESTAMP_INPUT_FORMAT.key
TIMESTAMP_INPUT_FORMAT_DELIMITER = K.TIMESTAMP_INPUT_FORMAT_DELIMITER.key
TIMESTAMP_INPUT_TIMEZONE = K.TIMESTAMP_INPUT_TIMEZONE.key
TIMESTAMP_OUTPUT_FORMAT = K.TIMESTAMP_OUTPUT_FORMAT.key
TIMESTAMP_OUTPUT_TIMEZONE = K.TIMESTAMP_OUTPUT_TIMEZONE.key
TIMESTAMP_TIMEZONE = K.TIMESTAMP_TIMEZONE.key
# hoodie.keygen.timebased.* (TimestampKeyGeneratorConfig), each also under its old deltastreamer name (an alias).
_TIMEBASED = {o.key: o for o in K.TIMEBASED_OPTIONS}

# TimeUnit name -> milliseconds per unit (as a (numerator, denominator) pair so sub-ms units divide)
_UNIT_MS = {
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1_000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1_000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}
_TYPE_UNITS = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS", "EPOCHMICROSECONDS": "MICROSECONDS"}

_CLASS_ALIASES = {
    # hoodie.datasource.write.keygenerator.type values, and the Avro twins of the Spark classes
    "SIMPLE": SIMPLE, "COMPLEX": COMPLEX, "NON_PARTITION": NONPARTITIONED, "TIMESTAMP": TIMESTAMP_BASED,
    "CUSTOM": CUSTOM, "GLOBAL_DELETE": GLOBAL_DELETE,
    _PKG + "SimpleAvroKeyGenerator": SIMPLE, _PKG + "ComplexAvroKeyGenerator": COMPLEX,
    _PKG + "NonpartitionedAvroKeyGenerator": NONPARTITIONED, _PKG + "TimestampBasedAvroKeyGenerator": TIMESTAMP_BASED,
    _PKG + "CustomAvroKeyGenerator": CUSTOM, _PKG + "GlobalAvroDeleteKeyGenerator": GLOBAL_DELETE,
}


def infer_key_generator_class(record_key_fields: Sequence[str], partition_fields: Sequence[str]) -> str:
    """`KeyGenUtils.inferKeyGeneratorType`: Nonpartitioned without partition fields, Simple for 1+1, else Complex.
    A keyless table (no key fields) is inferred from its partition fields alone (`inferKeyGeneratorTypeFromPartition
    Fields`): Simple for one."""
    if not partition_fields:
        return NONPARTITIONED
    if len(partition_fields) == 1 and len(record_key_fields) <= 1:
        return SIMPLE
    return COMPLEX


def auto_record_keys(instant: str, partition_id: int, first_row: int, count: int) -> pa.Array:
    """The generated keys of `count` rows of input split `partition_id`, its rows `first_row`... (module doc):
    `HoodieRecord.generateSequenceId(instantTime, partitionId, recordIndex)`, one vectorized pass."""
    if partition_id < 0 or first_row < 0:
        raise KeyGeneratorError(f"auto-generated keys: partition id {partition_id} and row {first_row} must be >= 0")
    rows = pa.array(np.arange(first_row, first_row + count, dtype=np.int64)).cast(pa.string())
    prefix = f"{instant}{AUTO_KEY_SEPARATOR}{partition_id}{AUTO_KEY_SEPARATOR}"
    return pc.binary_join_element_wise(pa.scalar(prefix), rows, "")


class AutoKeySequence:
    """The generated keys of one input split, batch after batch (the Java wrapper's `rowId++` over its
    iterator): the same split read again in the same order gets the same keys."""

    def __init__(self, instant: str, partition_id: int) -> None:
        self.instant, self.partition_id, self.next_row = instant, partition_id, 0

    def take(self, count: int) -> pa.Array:
        keys = auto_record_keys(self.instant, self.partition_id, self.next_row, count)
        self.next_row += count
        return keys


def resolve_key_generator_class(name: str) -> str:
    """The full class name of a key generator given by full or short class name, type name (SIMPLE, COMPLEX, ...)
    or Avro twin; KeyGeneratorError naming the supported ones otherwise."""
    name = name.strip()
    full = name if "." in name else _PKG + name
    for candidate in (name, name.upper(), full):
        resolved = _CLASS_ALIASES.get(candidate, candidate)
        if resolved in _CLASSES:
            return resolved
    raise KeyGeneratorError(f"key generator {name!r} is not supported; supported: "
                            f"{', '.join(sorted(c.rsplit('.', 1)[-1] for c in _CLASSES))}")


def _prop(props: Mapping[str, str], key: str, default: str | None = None) -> str | None:
    """A timebased option under its current or its deltastreamer name."""
    option = _TIMEBASED.get(key)
    if option is None:
        return props.get(key, default)
    for name in option.all_keys:
        value = props.get(name)
        if value is not None and value != "":
            return value
    return default


def _row_repr(table: pa.Table, row: int) -> str:
    text = repr(table.slice(row, 1).to_pylist()[0])
    return text if len(text) <= 300 else text[:300] + "...}"


# --------------------------------------------------------------------------------------------- key generators


class KeyGenerator:
    """Record keys and partition paths of every row of a pa.Table."""

    class_name = ""

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str] = (),
        props: Mapping[str, str] | None = None,
        *,
        hive_style: bool = False,
        url_encode: bool = False,
    ) -> None:
        self.record_key_fields = tuple(f.strip() for f in record_key_fields if f.strip())
        self.partition_fields = tuple(f.strip() for f in partition_fields if f.strip())
        self.props = dict(props or {})
        self.hive_style = hive_style
        self.url_encode = url_encode
        self.consistent_logical_timestamp = self.props.get(CONSISTENT_LOGICAL_TIMESTAMP, "false").lower() == "true"
        self._check()

    def _check(self) -> None:
        pass

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(record_key_fields={list(self.record_key_fields)}, "
                f"partition_fields={list(self.partition_fields)}, hive_style={self.hive_style}, "
                f"url_encode={self.url_encode})")

    # -- record keys

    def record_keys(self, table: pa.Table) -> pa.Array:
        """The record key of every row to be written; ambiguous composite keys are refused. A keyless table's keys
        are the generated ones in AUTO_KEY_COLUMN."""
        return self._auto_keys(table) if self.auto_generated else self._keys(table, check=True)

    def stored_record_keys(self, table: pa.Table) -> pa.Array:
        """The record keys of rows already in a table (meta fields off): as Hudi made them, never refused."""
        return self._auto_keys(table) if self.auto_generated else self._keys(table, check=False)

    @property
    def auto_generated(self) -> bool:
        """Whether keys are generated (a keyless table: no record key fields)."""
        return not self.record_key_fields

    def _keys(self, table: pa.Table, check: bool) -> pa.Array:
        if len(self.record_key_fields) == 1:
            return self._simple_keys(table)
        return self._complex_keys(table, check)

    def _strings(self, table: pa.Table, field: str) -> pa.Array:
        return value_strings(resolve_column(table, field), field=field,
                             consistent_logical_timestamp=self.consistent_logical_timestamp)

    def _auto_keys(self, table: pa.Table) -> pa.Array:
        """The generated keys the write put in AUTO_KEY_COLUMN (they depend on the input split and row, which
        the rows alone do not tell)."""
        if AUTO_KEY_COLUMN not in table.column_names:
            raise KeyGeneratorError(
                f"{type(self).__name__}: no record key fields (hoodie.table.recordkey.fields): the keys of a keyless "
                f"table are generated per input split by the write (keygen.auto_record_keys, column {AUTO_KEY_COLUMN})"
                ", and these rows have none"
            )
        return table.column(AUTO_KEY_COLUMN).combine_chunks().cast(pa.string())

    def _require_key_fields(self) -> None:
        if not self.record_key_fields:
            raise KeyGeneratorError(
                f"{type(self).__name__}: no record key fields configured (hoodie.table.recordkey.fields)"
            )

    def _simple_keys(self, table: pa.Table) -> pa.Array:
        self._require_key_fields()
        field = self.record_key_fields[0]
        keys = self._strings(table, field)
        bad = pc.or_kleene(pc.is_null(keys), pc.equal(keys, ""))
        if table.num_rows and pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            raise KeyGeneratorError(
                f"record key field {field!r} is null or empty in row {row}: {_row_repr(table, row)}; "
                f"{type(self).__name__} needs a non-empty key in every row"
            )
        return keys

    def _complex_keys(self, table: pa.Table, check: bool = True) -> pa.Array:
        self._require_key_fields()
        parts = []
        all_missing = None
        raw: list[pa.Array] = []
        for field in self.record_key_fields:
            values = self._strings(table, field)
            raw.append(values)
            missing = pc.or_kleene(pc.is_null(values), pc.equal(values, ""))
            all_missing = missing if all_missing is None else pc.and_kleene(all_missing, missing)
            values = pc.fill_null(values, NULL_RECORDKEY_PLACEHOLDER)
            values = pc.if_else(pc.equal(values, ""), EMPTY_RECORDKEY_PLACEHOLDER, values)
            parts.append(pc.binary_join_element_wise(f"{field}:", values, ""))
        if table.num_rows and pc.any(all_missing).as_py():
            row = pc.index(all_missing, True).as_py()
            raise KeyGeneratorError(
                f"record key fields {list(self.record_key_fields)} are all null or empty in row {row}: "
                f"{_row_repr(table, row)}; {type(self).__name__} needs at least one non-empty key value"
            )
        if len(parts) == 1:
            return parts[0]
        keys = pc.binary_join_element_wise(*parts, ",")
        if check and table.num_rows:
            _refuse_ambiguous_keys(type(self).__name__, self.record_key_fields, raw, keys, table)
        return keys

    # -- partition paths

    def partition_paths(self, table: pa.Table) -> pa.Array:
        if not self.partition_fields:
            return repeated("", table.num_rows)
        segments = [self._segment(table, field) for field in self.partition_fields]
        return segments[0] if len(segments) == 1 else pc.binary_join_element_wise(*segments, PATH_SEPARATOR)

    def _segment(self, table: pa.Table, field: str) -> pa.Array:
        return finish_segment(self._strings(table, field), field, hive_style=self.hive_style, url_encode=self.url_encode)

    def parse_partition_path(self, path: str) -> dict[str, str | None]:
        """Partition values (as strings; None for the default partition) encoded in a partition path."""
        return parse_partition_path(path, self.partition_fields, hive_style=self.hive_style, url_encode=self.url_encode)


def _refuse_ambiguous_keys(generator: str, fields: Sequence[str], values: list[pa.Array], keys: pa.Array,
                           table: pa.Table) -> None:
    """KeyGeneratorError for the first row whose composite key reads back as other values (module doc)."""
    placeholder = pa.array([NULL_RECORDKEY_PLACEHOLDER, EMPTY_RECORDKEY_PLACEHOLDER])
    for field, vals in zip(fields, values):
        literal = pc.fill_null(pc.is_in(vals, value_set=placeholder), False)
        if pc.any(literal).as_py():
            row = pc.index(literal, True).as_py()
            value = vals[row].as_py()
            what = "null" if value == NULL_RECORDKEY_PLACEHOLDER else "empty"
            raise KeyGeneratorError(
                f"record key fields {list(fields)} ({generator}): field {field!r} has the value {value!r} in row "
                f"{row}, which is how Hudi writes a{'n' if what == 'empty' else ''} {what} {field!r} in the key "
                f"{keys[row].as_py()!r}: this row and one whose {field!r} is {what} would get the same key, and one "
                f"would silently replace the other ({_count(literal)} row(s) affected). Row: {_row_repr(table, row)}. "
                f"Change the value, or key the table on other fields"
            )
    later = [re.escape(f) for f in fields[1:]]
    if any("," in f or ":" in f for f in fields):
        candidates = pa.array([True] * len(keys))  # odd field names: the exact test on every key
    else:  # a second split needs `,<later field>:` inside some value: the rare rows worth the exact test
        token = ",(?:" + "|".join(later) + "):"
        candidates = None
        for vals in values:
            if pa.types.is_string(vals.type):
                hit = pc.fill_null(pc.match_substring_regex(vals, token), False)
                candidates = hit if candidates is None else pc.or_(candidates, hit)
        if candidates is None or not pc.any(candidates).as_py():
            return
    idx = pc.indices_nonzero(candidates)
    subset = pc.take(keys, idx)
    names = [f"v{i}" for i in range(len(fields))]

    def splits(quantifier: str) -> pa.StructArray:
        groups = [f"{re.escape(f)}:(?P<{n}>.+{quantifier})" for f, n in zip(fields[:-1], names)]
        pattern = "(?s)^" + ",".join(groups + [f"{re.escape(fields[-1])}:(?P<{names[-1]}>.+)"]) + "$"
        return pc.extract_regex(subset, pattern)

    shortest, longest = splits("?"), splits("")
    differ = None
    for n in names[:-1]:
        d = pc.not_equal(pc.struct_field(shortest, [n]), pc.struct_field(longest, [n]))
        differ = d if differ is None else pc.or_(differ, d)
    differ = pc.fill_null(differ, False)
    if not pc.any(differ).as_py():
        return
    first = pc.index(differ, True).as_py()
    row = idx[first].as_py()

    def reading(split: pa.StructArray) -> str:
        return ", ".join(f"{f}={split[first][n].as_py()!r}" for f, n in zip(fields, names))

    raise KeyGeneratorError(
        f"record key fields {list(fields)} ({generator}): the values in row {row} make the key {keys[row].as_py()!r}, "
        f"which reads both as ({reading(shortest)}) and as ({reading(longest)}): Hudi's key format "
        f"'field:value,field:value' escapes nothing, so two different rows could get this one key and one would "
        f"silently replace the other ({_count(differ)} row(s) affected). Row: {_row_repr(table, row)}. Change these "
        f"values (no ',<field>:' inside a value), or key the table on other fields"
    )


def _count(mask: pa.Array) -> int:
    return int(pc.sum(mask.cast(pa.int64())).as_py() or 0)


class SimpleKeyGenerator(KeyGenerator):
    class_name = SIMPLE

    def _check(self) -> None:
        if len(self.record_key_fields) > 1:
            raise KeyGeneratorError(
                f"SimpleKeyGenerator takes one record key field, got {list(self.record_key_fields)}: use ComplexKeyGenerator"
            )
        if len(self.partition_fields) > 1:
            raise KeyGeneratorError(
                f"SimpleKeyGenerator takes one partition field, got {list(self.partition_fields)}: use ComplexKeyGenerator"
            )

    def _keys(self, table: pa.Table, check: bool) -> pa.Array:
        return self._simple_keys(table)


class ComplexKeyGenerator(KeyGenerator):
    class_name = COMPLEX

    def _keys(self, table: pa.Table, check: bool) -> pa.Array:
        return self._complex_keys(table, check)


class NonpartitionedKeyGenerator(KeyGenerator):
    class_name = NONPARTITIONED

    def _check(self) -> None:
        self.partition_fields = ()  # Hudi ignores any configured partition field here

    def parse_partition_path(self, path: str) -> dict[str, str | None]:
        return parse_partition_path(path, (), hive_style=self.hive_style, url_encode=self.url_encode)


class GlobalDeleteKeyGenerator(NonpartitionedKeyGenerator):
    class_name = GLOBAL_DELETE

    def _keys(self, table: pa.Table, check: bool) -> pa.Array:
        return self._complex_keys(table, check)


# --------------------------------------------------------------------------------------------- timestamps


class TimestampPartitioner:
    """One partition field read as a time and formatted with a Joda/SimpleDateFormat pattern."""

    def __init__(self, field: str, props: Mapping[str, str], *, consistent_logical_timestamp: bool = False) -> None:
        self.field = field
        self.consistent_logical_timestamp = consistent_logical_timestamp
        self.timestamp_type = (_prop(props, TIMESTAMP_TYPE) or "").strip().upper() or None
        output_format = _prop(props, TIMESTAMP_OUTPUT_FORMAT)
        if not output_format:
            raise KeyGeneratorError(f"timestamp partition field {field!r}: {TIMESTAMP_OUTPUT_FORMAT} is not set")
        self.output_pattern = output_format
        self.output_format = DateFormat.parse(output_format, TIMESTAMP_OUTPUT_FORMAT)
        zone = _prop(props, TIMESTAMP_TIMEZONE) or "UTC"
        self.output_zone = _zone(_prop(props, TIMESTAMP_OUTPUT_TIMEZONE) or zone, TIMESTAMP_OUTPUT_TIMEZONE)
        self.input_zone = _zone(_prop(props, TIMESTAMP_INPUT_TIMEZONE) or zone, TIMESTAMP_INPUT_TIMEZONE)
        delimiter = _prop(props, TIMESTAMP_INPUT_FORMAT_DELIMITER) or ","
        input_format = _prop(props, TIMESTAMP_INPUT_FORMAT) or ""
        self.input_patterns = [p.strip() for p in re.split(delimiter, input_format) if p.strip()] if input_format else []
        if self.timestamp_type in _TYPE_UNITS:
            self.unit = _TYPE_UNITS[self.timestamp_type]
        elif self.timestamp_type == "SCALAR":
            self.unit = (_prop(props, TIMESTAMP_SCALAR_UNIT) or "SECONDS").strip().upper()
            if self.unit not in _UNIT_MS:
                raise KeyGeneratorError(f"{TIMESTAMP_SCALAR_UNIT}={self.unit!r}: expected one of {sorted(_UNIT_MS)}")
        elif self.timestamp_type in (None, "DATE_STRING"):
            self.unit = "MILLISECONDS"
        else:
            raise KeyGeneratorError(
                f"{TIMESTAMP_TYPE}={self.timestamp_type!r}: supported are UNIX_TIMESTAMP, EPOCHMILLISECONDS, "
                "EPOCHMICROSECONDS, SCALAR and DATE_STRING"
            )

    # -- write side

    def instants(self, table: pa.Table) -> pa.Array:
        """The UTC instant (timestamp[ms, UTC]) of each row's partition value."""
        if self.timestamp_type is None:
            raise KeyGeneratorError(
                f"timestamp partition field {self.field!r}: {TIMESTAMP_TYPE} is not set (Hudi does not persist it in "
                "hoodie.properties; pass it with the write options)"
            )
        arr = resolve_column(table, self.field)
        t = arr.type
        if self.timestamp_type == "DATE_STRING":
            if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                raise KeyGeneratorError(f"field {self.field!r} of type {t}: DATE_STRING needs a string column")
            return self._parse_strings(table, arr.cast(pa.string()))
        if pa.types.is_timestamp(t):
            if self.consistent_logical_timestamp:
                return pc.fill_null(arr.cast(pa.timestamp("ms", tz="UTC"), safe=False), pa.scalar(1, pa.timestamp("ms", tz="UTC")))
            numbers = arr.cast(pa.timestamp("us", tz=t.tz), safe=False).cast(pa.int64())  # the Avro long
        elif pa.types.is_date(t):
            numbers = arr.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())  # Avro LocalDate -> epoch day
        elif pa.types.is_integer(t):
            numbers = arr.cast(pa.int64())
        elif pa.types.is_floating(t) or pa.types.is_decimal(t):
            numbers = pc.trunc(arr.cast(pa.float64())).cast(pa.int64())  # Java Number.longValue()
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            # Numeric text (seen in real 1.x tables for EPOCHMILLISECONDS); anything else is an error.
            text = pc.utf8_trim_whitespace(arr.cast(pa.string()))
            bad = pc.invert(pc.fill_null(pc.match_substring_regex(text, r"^[+-]?\d+$"), True))
            if pc.any(bad).as_py():
                row = pc.index(bad, True).as_py()
                raise KeyGeneratorError(
                    f"field {self.field!r} value {arr[row].as_py()!r} in row {row} is not a number, as "
                    f"{self.timestamp_type} needs: {_row_repr(table, row)}"
                )
            numbers = text.cast(pa.int64())
        else:
            raise KeyGeneratorError(
                f"field {self.field!r} of type {t}: {self.timestamp_type} needs a number, date or timestamp column"
            )
        numbers = pc.fill_null(numbers, 1)  # TimestampBasedAvroKeyGenerator.getDefaultPartitionVal
        mul, div = _UNIT_MS[self.unit]
        millis = pc.multiply_checked(numbers, mul) if mul != 1 else numbers
        if div != 1:
            millis = pc.divide(millis, div)
        return millis.cast(pa.timestamp("ms", tz="UTC"))

    def _parse_strings(self, table: pa.Table, values: pa.Array) -> pa.Array:
        if not self.input_patterns:
            raise KeyGeneratorError(f"timestamp partition field {self.field!r}: {TIMESTAMP_INPUT_FORMAT} is not set")
        parsed = None
        for pattern in self.input_patterns:
            attempt = DateFormat.parse(pattern, TIMESTAMP_INPUT_FORMAT).parse_values(values, self.input_zone)
            parsed = attempt if parsed is None else pc.coalesce(parsed, attempt)
        failed = pc.and_kleene(pc.is_valid(values), pc.is_null(parsed))
        if pc.any(failed).as_py():
            row = pc.index(failed, True).as_py()
            raise KeyGeneratorError(
                f"field {self.field!r} value {values[row].as_py()!r} in row {row} does not match "
                f"{TIMESTAMP_INPUT_FORMAT} {self.input_patterns}: {_row_repr(table, row)}"
            )
        # a null DATE_STRING value stands for the epoch (getDefaultPartitionVal formats epoch+1ms)
        return pc.fill_null(parsed, pa.scalar(0, pa.timestamp("ms", tz="UTC")))

    def segment(self, table: pa.Table, *, hive_style: bool, url_encode: bool) -> pa.Array:
        local = self.instants(table).cast(pa.timestamp("ms", tz=self.output_zone))
        values = self.output_format.format(local)
        if url_encode:
            values = escape_path_names(values)
        if hive_style:
            values = pc.binary_join_element_wise(f"{self.field}=", values, "")
        return values

    # -- read side

    def parse_value(self, value: str) -> datetime:
        """The instant a partition value stands for (the start of the period the output format keeps)."""
        fmt = self.output_format.strptime_format()
        try:
            naive = datetime.strptime(value, fmt)
        except ValueError:
            raise KeyGeneratorError(
                f"partition value {value!r} of field {self.field!r} does not match {TIMESTAMP_OUTPUT_FORMAT} "
                f"{self.output_pattern!r}"
            ) from None
        return naive.replace(tzinfo=ZoneInfo(self.output_zone)).astimezone(UTC)


def _zone(name: str, key: str) -> str:
    name = name.strip()
    if name.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise KeyGeneratorError(f"{key}={name!r} is not a known time zone") from None
    return name


class TimestampBasedKeyGenerator(SimpleKeyGenerator):
    """Simple record key; the one partition field formatted as a time (FORMAT.md, Partition paths)."""

    class_name = TIMESTAMP_BASED

    def _check(self) -> None:
        super()._check()
        if len(self.partition_fields) != 1:
            raise KeyGeneratorError(
                f"TimestampBasedKeyGenerator needs exactly one partition field, got {list(self.partition_fields)}"
            )
        self.timestamp = TimestampPartitioner(self.partition_fields[0], self.props,
                                              consistent_logical_timestamp=self.consistent_logical_timestamp)

    def _segment(self, table: pa.Table, field: str) -> pa.Array:
        return self.timestamp.segment(table, hive_style=self.hive_style, url_encode=self.url_encode)

    def partition_timestamp(self, path: str) -> datetime:
        value = self.parse_partition_path(path)[self.partition_fields[0]]
        if value is None:
            raise KeyGeneratorError(f"partition path {path!r} is the default partition: it has no time")
        return self.timestamp.parse_value(value)


class CustomKeyGenerator(KeyGenerator):
    """Partition fields typed `name:SIMPLE` / `name:TIMESTAMP`; key Simple for one field, Complex for several."""

    class_name = CUSTOM

    def _check(self) -> None:
        typed = list(self.partition_fields)
        if typed and all(":" not in f for f in typed):
            # hoodie.properties keeps bare names; the types live in the writer's partition path option
            declared = [f.strip() for f in (self.props.get(WRITE_PARTITIONPATH_FIELD) or "").split(",") if f.strip()]
            by_name = {d.split(":")[0]: d for d in declared}
            typed = [by_name.get(f, f) for f in typed]
        self.field_types: list[tuple[str, str]] = []
        self.timestamps: dict[str, TimestampPartitioner] = {}
        for f in typed:
            name, _, kind = f.partition(":")
            kind = (kind or "SIMPLE").strip().upper()
            if kind not in ("SIMPLE", "TIMESTAMP"):
                raise KeyGeneratorError(f"CustomKeyGenerator partition field {f!r}: type must be SIMPLE or TIMESTAMP")
            self.field_types.append((name.strip(), kind))
            if kind == "TIMESTAMP":
                self.timestamps[name.strip()] = TimestampPartitioner(
                    name.strip(), self.props, consistent_logical_timestamp=self.consistent_logical_timestamp
                )
        self.partition_fields = tuple(name for name, _ in self.field_types)

    def _segment(self, table: pa.Table, field: str) -> pa.Array:
        if field in self.timestamps:
            return self.timestamps[field].segment(table, hive_style=self.hive_style, url_encode=self.url_encode)
        return super()._segment(table, field)


_CLASSES: dict[str, type[KeyGenerator]] = {
    SIMPLE: SimpleKeyGenerator,
    COMPLEX: ComplexKeyGenerator,
    NONPARTITIONED: NonpartitionedKeyGenerator,
    TIMESTAMP_BASED: TimestampBasedKeyGenerator,
    CUSTOM: CustomKeyGenerator,
    GLOBAL_DELETE: GlobalDeleteKeyGenerator,
}


def key_generator_for(
    class_name: str | None,
    record_key_fields: Sequence[str],
    partition_fields: Sequence[str] = (),
    props: Mapping[str, str] | None = None,
    *,
    hive_style: bool = False,
    url_encode: bool = False,
) -> KeyGenerator:
    """The key generator a table (or write) uses; None infers it like Hudi from the field counts."""
    record_key_fields = [f.strip() for f in record_key_fields if f.strip()]
    partition_fields = [f.strip() for f in partition_fields if f.strip()]
    name = (class_name or "").strip()
    cls = _CLASSES[resolve_key_generator_class(name) if name else
                   infer_key_generator_class(record_key_fields, partition_fields)]
    return cls(record_key_fields, partition_fields, props, hive_style=hive_style, url_encode=url_encode)


def key_generator_from_config(config: Any) -> KeyGenerator:
    """The key generator of a TableConfig (anything with its typed properties)."""
    return key_generator_for(
        config.key_generator_class,
        config.record_key_fields,
        config.partition_field_specs,
        config.props,
        hive_style=config.hive_style_partitioning,
        url_encode=config.url_encode_partitioning,
    )
