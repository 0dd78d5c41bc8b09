"""A write's own Spark jobs (`single_job`), planned without adaptive query execution where the write's own exchange is
the only one in the plan.

With AQE on (Spark's default), every exchange ends a Spark job: the driver waits for the map stage, optimizes the
rest of the plan again and submits another job. A write's own exchange gains nothing from that: the shuffle to its
file-group tasks has a fixed number of partitions, which AQE leaves as they are, and a count by partition path is a
few rows. On 2 cores the extra job cost W1's upserts and first write 15-40 ms, 1.5-4% (bench/RESULTS.md, stop
69). A join, aggregate or subquery in the write's input does gain from AQE (a join strategy chosen on the
sizes seen, skewed and tiny partitions): such a plan keeps it.

The plan without AQE is made in a clone of the session (`cloneSession`: its own SQL conf; the same SparkContext,
cached data and extensions), not by changing the session's conf, which other threads may be planning with.
"""
from __future__ import annotations

from py4j.java_gateway import JavaObject, JVMView
from py4j.protocol import Py4JError
from pyspark.sql import DataFrame

ADAPTIVE = "spark.sql.adaptive.enabled"
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def single_job(df: DataFrame, shuffle_partitions: int | None = None) -> DataFrame:
    """`df`, planned without AQE where the first exchange below the plan's root, the write's own, has no exchange or
    subquery under it: its action runs as one Spark job. `shuffle_partitions`: that exchange's partitions where Spark
    chooses them (an aggregate's; AQE would have coalesced Spark's default of 200 to a few). The caller runs the
    action, so that Spark's UI names the job by the caller's line."""
    plain = _plain_plan(df, shuffle_partitions)
    return df if plain is None else DataFrame(plain, df.sparkSession)


def _plain_plan(df: DataFrame, shuffle_partitions: int | None) -> JavaObject | None:
    """The JVM Dataset of `df`'s plan without AQE, or None where it keeps the session's plan."""
    jdf = df._jdf
    session = jdf.sparkSession()
    try:
        if not session.sessionState().conf().adaptiveExecutionEnabled():
            return None  # no job boundary to save
        clone = session.cloneSession()
        conf = clone.sessionState().conf()
        conf.setConfString(ADAPTIVE, "false")
        if shuffle_partitions is not None:
            conf.setConfString(SHUFFLE_PARTITIONS, str(shuffle_partitions))
        jvm = df.sparkSession.sparkContext._jvm
        assert jvm is not None  # a classic session's driver
        plain = jvm.org.apache.spark.sql.classic.Dataset.ofRows(clone, jdf.queryExecution().analyzed())
        return plain if _one_exchange(jvm, plain.queryExecution().executedPlan()) else None
    except Py4JError:  # a Spark without these internals: the session's own plan
        return None


def _one_exchange(jvm: JVMView, node: JavaObject) -> bool:
    """Whether the physical plan's first exchange from the root, along single children, is its only exchange and
    nothing under it runs a subquery."""
    patterns = jvm.org.apache.spark.sql.catalyst.trees.TreePattern
    exchange, subquery = patterns.EXCHANGE(), patterns.PLAN_EXPRESSION()
    while True:
        children = node.children()
        if children.size() != 1:
            return False  # a leaf before any exchange, or a join: not the write's own shape
        if node.nodePatterns().contains(exchange):
            below = children.head()
            return not (below.containsPattern(exchange) or below.containsPattern(subquery))
        node = children.head()
