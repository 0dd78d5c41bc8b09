"""A session started without this package's help, with Hive support: neither `register_data_source` nor the native
component (the tests' shared session has both, and a JVM takes its classpath and catalog for life). A write with
Hive sync, then reads through the Python `hudi` source, with the warnings they give. Run by
tests/spark/test_session_registration.py: `python plain_session_job.py <folder>`; the last line printed is the JSON of
what it saw."""
from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

from pyspark.sql import SparkSession

from hudi_engine.spark import python_env, register_data_source, write
from hudi_engine.spark.read_sources import read_sources_registered
from hudi_engine.spark.session import TEST_CONF

root = Path(sys.argv[1])
os.environ.update(python_env())
builder = SparkSession.builder.master("local[1]").appName("plain-session")
conf = {**{k: v for k, v in TEST_CONF.items() if k != "spark.sql.python.filterPushdown.enabled"},
        "spark.pyspark.python": sys.executable, "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root}/metastore_db;create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={root}"}
for key, value in conf.items():
    builder = builder.config(key, value)
spark = builder.getOrCreate()
out: dict = {"registered_before": read_sources_registered(spark)}

path = str(root / "t")
options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.hive_sync.enable": "true",
           "hoodie.datasource.hive_sync.mode": "hms", "hoodie.datasource.hive_sync.database": "lake"}
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    # The write registers the sources the synced entry resolves to (it failed with DATA_SOURCE_NOT_FOUND before).
    out["instant"] = write(spark.createDataFrame([(1, 1), (2, 1)], "id long, ts long"), path, options).instant_time
    out["registered_after_write"] = read_sources_registered(spark)
    out["entry"] = spark.catalog.tableExists("lake.t")
    # Registration is idempotent: again after the write's, and twice; every read works, the warning came once.
    register_data_source(spark)
    register_data_source(spark)
    out["reads"] = [spark.read.format("hudi").load(path).count() for _ in range(2)]
    out["changes"] = spark.sql(f"SELECT count(*) FROM hudi_table_changes('{path}', 'latest_state', 'earliest')"
                               ).collect()[0][0]
out["warnings"] = [str(w.message) for w in seen if "native_conf()" in str(w.message)]
spark.stop()
print(json.dumps(out))
