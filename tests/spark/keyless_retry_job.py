"""Run by tests/spark/test_keyless_spark.py in its own process, in a SparkSession that retries failed tasks
(`local[2,4]`): a keyless write whose input tasks fail on their first attempt for input partitions 3 and 7. Prints
the write's instant as one JSON line; the test reads the table."""
from __future__ import annotations

import json
import sys

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import functions as F

from hudi_engine.spark import local_spark_session, write

FAILING = (3, 7)  # input partitions whose first attempt fails


def flaky(ids: pa.Array) -> pa.Array:
    ctx = TaskContext.get()
    if ctx is not None and ctx.partitionId() in FAILING and ctx.attemptNumber() == 0:
        raise RuntimeError(f"injected failure of partition {ctx.partitionId()}, attempt 0")
    return ids


def main(path: str, warehouse: str) -> None:
    spark = local_spark_session(app_name="keyless-retry", master="local[2,4]", warehouse_dir=warehouse)
    udf = F.arrow_udf(flaky, "bigint")  # type: ignore[call-overload]
    # 10 input partitions of 37 rows: SPLITS x PER_SPLIT of test_keyless_spark.py
    df = (spark.range(0, 370, numPartitions=10).withColumn("id", udf("id"))
          .selectExpr("id", "concat('d', cast(id % 3 as string)) AS day"))
    result = write(df, path, {"hoodie.table.name": "events", "hoodie.datasource.write.partitionpath.field": "day"})
    print(json.dumps({"instant": result.instant_time}))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
