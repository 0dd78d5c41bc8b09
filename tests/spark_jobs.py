"""The Spark jobs a piece of driver code starts: run it under a job group of its own and ask the status tracker."""
from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession


def jobs_of(spark: SparkSession, fn: Callable[[], Any]) -> tuple[Any, list[int], set[str]]:
    """`fn()`, the ids of the Spark jobs it ran and the names of their stages (a stage is named by its action's call
    site: adaptive execution runs a shuffle's map stage as a job of its own, under the action that needs it)."""
    sc = spark.sparkContext
    group = f"jobs-of-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "jobs_of")
    try:
        out = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    tracker = sc.statusTracker()
    jobs = list(tracker.getJobIdsForGroup(group))
    sites = {info.name for j in jobs for s in tracker.getJobInfo(j).stageIds  # type: ignore[union-attr]
             if (info := tracker.getStageInfo(s)) is not None}
    return out, jobs, sites
