"""Ambiguous composite record keys refused in Spark SQL, in the stage before any file is written.

`hudi_engine.keygen` refuses a composite key that reads back as other values (see "Ambiguous keys" there) where it
makes keys, which on the SQL grouping path of `spark.writer` is the task that then writes the partition's files.
This is the same rule as a Spark expression on the rows before the shuffle, so a bad row fails the job before the
first data file: only string columns can hold `,<field>:` or the `__null__` / `__empty__` text; for rows whose
values hold such a token the key's shortest and longest splits (Java regex, lazy vs greedy) are compared.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.keygen import EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER


def refuse_ambiguous_keys(df: DataFrame, config) -> DataFrame:
    """`df` with a check that fails the job (KeyGeneratorError) on the first row with an ambiguous composite key.
    `config`: the write's WriteConfig (its record key fields and key generator class)."""
    check = _Check.of(df, list(config.record_key_fields))
    if check is None:
        return df
    fields, key = check.fields, check.key

    def reading(pattern: str) -> Column:
        pairs = [F.concat(F.lit(f"{f}='"), F.regexp_extract(key, pattern, i + 1), F.lit("'"))
                 for i, f in enumerate(fields)]
        return F.concat(F.lit("("), F.concat_ws(", ", *pairs), F.lit(")"))

    generator = config.key_generator_class.rsplit(".", 1)[-1]
    row = F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns if not c.startswith("_hw_")]))
    why = None
    for f in check.strings:
        for text, what in ((NULL_RECORDKEY_PLACEHOLDER, "a null"), (EMPTY_RECORDKEY_PLACEHOLDER, "an empty")):
            said = F.lit(f"has {f!r} = {text!r}, which is how Hudi writes {what} {f!r} in a key, so this row and one "
                         f"whose {f!r} is {what.split()[1]}")
            cond = F.col(f"`{f}`") == text
            why = F.when(cond, said) if why is None else why.when(cond, said)
    why = why.otherwise(F.concat(F.lit("makes the key '"), key, F.lit("', which reads both as "),
                                 reading(_pattern(fields, "?")), F.lit(" and as "), reading(_pattern(fields, "")),
                                 F.lit(", so two different rows")))
    # The prefix lets unwrap_task_error give back a KeyGeneratorError (split so a printed plan does not match).
    message = F.concat(
        F.lit("hudi_engine.errors."), F.lit(f"KeyGeneratorError: record key fields {fields} ({generator}): row "), row,
        F.lit(" "), why,
        F.lit(" would get the same key and one would silently replace the other (Hudi's key format "
              "'field:value,field:value' escapes nothing). Change these values (no ',<field>:' inside a value), or "
              "key the table on other fields\n\n"),
    )
    first = df.columns[0]
    return df.withColumn(first, F.when(check.bad, F.raise_error(message)).otherwise(F.col(f"`{first}`")))


def ambiguous_key(df: DataFrame, record_key_fields: list[str]) -> Column | None:
    """True for the rows whose composite key is ambiguous (None: no row of `df` can have one)."""
    check = _Check.of(df, list(record_key_fields))
    return None if check is None else check.bad


class _Check:
    """The test's columns: the key as Hudi writes it and the verdict; the key fields of string type."""

    def __init__(self, fields: list[str], strings: list[str], key: Column, bad: Column) -> None:
        self.fields, self.strings, self.key, self.bad = fields, strings, key, bad

    @staticmethod
    def of(df: DataFrame, fields: list[str]) -> "_Check | None":
        types = {f.name: f.dataType for f in df.schema.fields}
        strings = [f for f in fields if isinstance(types.get(f), T.StringType)]
        if len(fields) < 2 or not strings or any(f not in types or "," in f or ":" in f for f in fields):
            return None  # one field, no text values, nested or odd names: the key generator's own check decides
        col = {f: F.col(f"`{f}`") for f in fields}
        placeholder = F.coalesce(
            _any([col[f].isin(NULL_RECORDKEY_PLACEHOLDER, EMPTY_RECORDKEY_PLACEHOLDER) for f in strings]),
            F.lit(False))
        token = ",(?:" + "|".join(_quote(f) for f in fields[1:]) + "):"
        has_token = F.coalesce(_any([col[f].rlike(token) for f in strings]), F.lit(False))
        key = F.concat_ws(",", *[F.concat(F.lit(f"{f}:"), _part(col[f], f in strings)) for f in fields])
        shortest, longest = _pattern(fields, "?"), _pattern(fields, "")
        differ = _any([F.regexp_extract(key, shortest, i) != F.regexp_extract(key, longest, i)
                       for i in range(1, len(fields))])
        return _Check(fields, strings, key, placeholder | (has_token & differ))


def _part(c: Column, is_string: bool) -> Column:
    """A key part for the split test: the value with Hudi's placeholders; other types as text (never a comma)."""
    if not is_string:
        return F.coalesce(c.cast("string"), F.lit(NULL_RECORDKEY_PLACEHOLDER))
    return (F.when(c.isNull(), F.lit(NULL_RECORDKEY_PLACEHOLDER)).when(c == "", F.lit(EMPTY_RECORDKEY_PLACEHOLDER))
            .otherwise(c))


def _pattern(fields: list[str], quantifier: str) -> str:
    groups = [f"{_quote(f)}:(.+{quantifier})" for f in fields[:-1]] + [f"{_quote(fields[-1])}:(.+)"]
    return "(?s)^" + ",".join(groups) + "$"


def _quote(name: str) -> str:
    return "\\Q" + name + "\\E"  # a literal in Java regex


def _any(conditions: list[Column]) -> Column:
    out = conditions[0]
    for c in conditions[1:]:
        out = out | c
    return out
