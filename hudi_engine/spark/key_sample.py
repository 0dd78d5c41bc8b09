"""Record keys sampled on Spark for key range boundaries: bulk_insert's ranges (`BulkInsertRanges`) and the insert
buckets a bucket plan cuts at sampled keys (`BucketPlan.with_samples`)."""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudi_engine.spark.sql_text import literal
from hudi_engine.write.executor import KEY, PARTITION


def sample_keys(keyed: DataFrame, fractions: dict[str, float]) -> dict[str, list[str]]:
    """Keys of the partitions `fractions` names, a share of each (for key range boundaries); other partitions'
    rows are left out."""
    share = F.try_element_at(literal(fractions, "map<string,double>"), F.col(PARTITION))  # null: not sampled
    out: dict[str, list[str]] = {p: [] for p in fractions}
    for r in keyed.filter(F.rand(seed=17) < share).select(PARTITION, KEY).collect():
        out[r[PARTITION]].append(r[KEY])
    return out
