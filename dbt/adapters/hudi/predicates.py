"""`incremental_predicates` on a Hudi model's merge: which stored rows the merge may look at.

dbt-spark puts the predicates into its MERGE's ON clause: target rows they exclude are never matched, so a source
row whose key is stored there is inserted a second time. Hudi keeps one row per record key, so a predicate is taken
only where it cannot hide a stored key from the merge:

* It reads partition columns only (checked here, when the model runs, on Spark's own analysis of the condition),
  and the index finds a key in its own partition (not GLOBAL_SIMPLE; checked with the config). The stored row of a
  key then lives in the partition the incoming row lands in.
* Every row of the model lands in a partition the predicates admit. The merge then reads the admitted partitions the
  rows land in and nothing else; a row outside them is refused, since merging it without reading its partition is
  exactly what would write its key twice.

Anything else is refused by name before anything is written: the predicate, the column it reads, and why.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbt.adapters.hudi.errors import HudiModelError

# The alias dbt-spark's MERGE gives the target table: predicates written for it name columns through it.
TARGET_ALIAS = "DBT_INTERNAL_DEST"


def check_merge_scope(model: str, predicates: Sequence[str], partition_columns: Sequence[str],
                      columns: Mapping[str, str], df) -> None:
    """Refuse a merge whose `predicates` could break record-key uniqueness. `partition_columns`: the model's
    partition_by; `columns`: setting column -> the model's spelling; `df`: the rows to write."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    partition_cols = [columns.get(c, c) for c in partition_columns]
    partitions = df.select(*[F.col(f"`{c}`") for c in partition_cols]).alias(TARGET_ALIAS)
    conditions = []
    for i, text in enumerate(predicates):
        name = f"incremental_predicates[{i}] {text!r}"
        try:
            condition = F.expr(text)
            partitions.where(condition).schema  # noqa: B018 - analysis only: which columns the condition reads
        except PySparkException as e:
            raise HudiModelError(_refusal(model, name, partition_cols, df, text, e)) from None
        conditions.append(condition)
    admitted = conditions[0]
    for condition in conditions[1:]:
        admitted = admitted & condition
    outside = partitions.where(~F.coalesce(admitted, F.lit(False))).distinct().limit(3).collect()
    if outside:
        where = "; ".join(", ".join(f"{c}={row[c]!r}" for c in partition_cols) for row in outside)
        raise HudiModelError(
            f"model {model}: rows of this run land in partitions the incremental_predicates exclude ({where}). Hudi "
            f"finds a row's stored key in the partition the row lands in; merging such a row without reading that "
            f"partition would write its key a second time. Widen the predicates, or leave those rows out of the "
            f"model's incremental runs. Nothing was written.")


def _refusal(model: str, name: str, partition_cols: Sequence[str], df, text: str, error: Exception) -> str:
    """Why a predicate that does not resolve on the partition columns alone is refused."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    try:
        df.alias(TARGET_ALIAS).where(F.expr(text)).schema  # noqa: B018 - does it read the table's other columns?
    except PySparkException:
        return (f"model {model}: {name} is not a condition on the model's table ({_first_line(error)}). Write it on "
                f"the table's partition columns ({', '.join(partition_cols)}), as `{TARGET_ALIAS}.<column>` or "
                f"`<column>`. Nothing was written.")
    read = _unresolved_column(error)
    reads = f"reads column {read}, which is not" if read else "reads columns that are not"
    return (f"model {model}: {name} {reads} a partition column (partition_by: {', '.join(partition_cols)}). Hudi "
            f"keeps one row per record key, and a merge that did not look at the stored rows this predicate excludes "
            f"would write a second row for their keys. Only predicates on partition columns are used (they bound the "
            f"partitions a merge reads): rewrite it on {', '.join(partition_cols)}, or remove it. Nothing was written.")


def _unresolved_column(error: Exception) -> str | None:
    params = getattr(error, "getMessageParameters", None)
    found = (params() or {}).get("objectName") if callable(params) else None
    return str(found) if found else None


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
