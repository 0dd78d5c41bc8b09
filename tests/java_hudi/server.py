"""The oracle process: one SparkSession of real Apache Hudi (the release's Spark bundle on the pyspark 3.5 it was built
for), driven by requests, one JSON object a line on stdin, answered one JSON object a line on the protocol pipe.

Runs under the release's own venv (tests/java_hudi/env.py), never under the project's: nothing of the engine is
imported here. Started by tests/java_hudi/client.py as `python server.py '<json config>'`; bench/hudi_java_writer.py
builds on its `session`, `protocol_pipe` and `error_answer`.

Requests (`op`):
- `sql`: run `sql`; with `out`, write its rows as parquet under that folder (Spark's writer, microsecond
  timestamps).
- `read`: `spark.read.format("hudi").options(**options).load(path)`, written to `out` like `sql`.
- `write`: the rows of the parquet file `input`, `df.write.format("hudi").options(**options).mode(mode).save(path)`.
- `hfile_read`: the cells of the HFile `path` as Hudi's own reader returns them (`reader`: "native" is Hudi's
  `org.apache.hudi.io.hfile.HFileReaderImpl` over a `HoodieHadoopStorage` stream, in 0.15 and 1.x; "hbase" is the
  HBase reader shaded in the 0.15 bundle), and the values `lookup` keys find by `seekTo`. Bytes travel as base64.
- `hfile_write`: an HFile written at `path` by Hudi 1.x's own `HFileWriterImpl` from `cells` ([key, base64 value]
  in key order), with `block_size` and `codec` (a Hudi `CompressionCodec` name).
- `service`: one step of a table service through Hudi's own write client (`SparkRDDWriteClient` over `path` with
  `options`), for the states a Spark write or CALL procedure never leaves behind (a writer that died mid-service):
  `action` "clean" or "log_compaction" schedules one (its plan requested), "rollback" plans the rollback of the
  latest pending write (requested), "compaction" and "run_log_compaction" execute the pending compaction or log
  compaction without committing it (files written, inflight), "savepoint" savepoints the latest completed commit
  ("savepoint_inflight": only the inflight instant its executor writes first), "restore" plans the restore to the
  latest savepoint (requested), "restore_again" restores to the latest savepoint (`restoreToSavepoint`, to the
  end), "indexing" schedules an async metadata-table index build of column stats (requested); with `inflight`
  true a scheduled clean, rollback, restore or indexing is then marked inflight, as its executor does first.
  Answers the service's `instant`.
- `stop`: end the session and the process.
Every answer is `{"ok": true, ...}` or `{"ok": false, "error": "<Java class>: <message>", "trace": "..."}`.
"""
from __future__ import annotations

import base64
import json
import os
import sys
import traceback


def protocol_pipe():
    """The real stdout, kept for answers; fd 1 then points at stderr so that nothing the JVM or a library prints can
    break a line of the protocol (the JVM inherits fd 1)."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def session(config: dict):
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(config.get("master", "local[2]"))
               .appName(f"hudi-oracle-{config['hudi']}"))
    conf = {
        "spark.jars": config["jar"],
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
        "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.sql.warehouse.dir": os.path.join(config["workdir"], "warehouse"),
        # Hudi's bloom index over the metadata table ships its file-system view (a lock inside) through Kryo, which
        # Java 17 lets it do only with this package opened (Spark's own list of opens lacks it).
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={config['workdir']} "
                                         "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
        "spark.driver.memory": config.get("driver_memory", "2g"),
        "spark.driver.host": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        **config.get("conf", {}),
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _write_rows(df, out: str) -> None:
    """One Spark job: the client counts the rows from the parquet file."""
    df.coalesce(1).write.mode("overwrite").parquet(out)


def error_answer(e: BaseException) -> dict:
    java = getattr(e, "java_exception", None)
    if java is not None:
        cause, chain = java, []
        while cause is not None and len(chain) < 8:
            chain.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
            cause = cause.getCause()
        return {"ok": False, "error": chain[0], "causes": chain, "trace": traceback.format_exc()[-6000:]}
    return {"ok": False, "error": f"{type(e).__name__}: {e}", "causes": [], "trace": traceback.format_exc()[-6000:]}


def _b64(data) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _hfile_read(spark, path: str, reader: str, lookup: list[str]) -> dict:
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    if reader == "hbase":  # Hudi 0.x's reader: HBase's own, shaded into the bundle
        hbase = jvm.org.apache.hudi.org.apache.hadoop.hbase
        jpath = jvm.org.apache.hadoop.fs.Path(path)
        hreader = hbase.io.hfile.HFile.createReader(jpath.getFileSystem(conf), jpath,
                                                    hbase.io.hfile.CacheConfig.DISABLED, True, conf)
        try:
            scanner, cells = hreader.getScanner(False, False), []
            more = scanner.seekTo()
            while more:
                cell = scanner.getCell()
                cells.append([_b64(hbase.CellUtil.cloneRow(cell)), _b64(hbase.CellUtil.cloneValue(cell))])
                more = scanner.next()
            return {"ok": True, "entries": hreader.getEntries(), "cells": cells, "found": {}}
        finally:
            hreader.close()
    storage = jvm.org.apache.hudi.storage.hadoop.HoodieHadoopStorage(path, conf)
    hfile = jvm.org.apache.hudi.io.hfile

    def open_reader():
        stream = storage.openSeekable(jvm.org.apache.hudi.storage.StoragePath(path), 65536, False)
        opened = hfile.HFileReaderImpl(stream, jvm.java.io.File(path).length())
        opened.initializeMetadata()
        return opened

    def value_of(kv) -> str:
        data = kv.getBytes()
        return _b64(data[kv.getValueOffset():kv.getValueOffset() + kv.getValueLength()])

    cells, found = [], {}
    hreader = open_reader()
    try:
        more = hreader.seekTo()
        while more:
            kv = hreader.getKeyValue().get()
            cells.append([_b64(kv.getKey().getContentInString().encode("utf-8")), value_of(kv)])
            more = hreader.next()
        entries = hreader.getNumKeyValueEntries()
    finally:
        hreader.close()
    hreader = open_reader()  # a fresh reader seeks forward through the sorted keys, as Hudi's lookups do
    try:
        if hreader.seekTo():
            for key in sorted(lookup, key=lambda k: k.encode("utf-8")):
                if hreader.seekTo(hfile.UTF8StringKey(key)) == 0:  # HFileReader.SEEK_TO_FOUND
                    found[key] = value_of(hreader.getKeyValue().get())
    finally:
        hreader.close()
    return {"ok": True, "entries": entries, "cells": cells, "found": found}


def _hfile_write(spark, path: str, cells: list, block_size: int, codec: str) -> dict:
    jvm = spark.sparkContext._jvm
    context = (jvm.org.apache.hudi.io.hfile.HFileContext.builder().blockSize(block_size)
               .compressionCodec(jvm.org.apache.hudi.io.compress.CompressionCodec.valueOf(codec)).build())
    out = jvm.java.io.FileOutputStream(path)
    writer = jvm.org.apache.hudi.io.hfile.HFileWriterImpl(context, out)
    for key, value in cells:
        writer.append(key, bytearray(base64.b64decode(value)))
    writer.close()
    return {"ok": True}


RELEASE = ""  # the Hudi release of this process (its APIs differ between 0.x and 1.x)


def _service(spark, path: str, options: dict, action: str, inflight: bool) -> dict:
    jvm = spark.sparkContext._jvm
    hudi = jvm.org.apache.hudi
    props = jvm.java.util.Properties()
    for k, v in options.items():
        props.setProperty(k, v)
    context = hudi.client.common.HoodieSparkEngineContext(spark.sparkContext._jsc)

    def client_for(more: dict):
        for k, v in more.items():
            props.setProperty(k, v)
        config = hudi.config.HoodieWriteConfig.newBuilder().withPath(path).withProps(props).build()
        return hudi.client.SparkRDDWriteClient(context, config), config

    client, config = client_for({})
    none, one_x = hudi.common.util.Option.empty(), not RELEASE.startswith("0.")
    try:
        table = hudi.table.HoodieSparkTable.create(config, context)
        meta = table.getMetaClient()
        if action == "clean":
            instant = client.scheduleTableService(none, hudi.common.model.TableServiceType.CLEAN)
        elif action == "log_compaction":
            instant = client.scheduleLogCompaction(none)
        elif action == "rollback":
            target = meta.getCommitsTimeline().filterPendingExcludingCompaction().lastInstant().get()
            time = client.createNewInstantTime(False) if one_x else \
                hudi.common.table.timeline.HoodieActiveTimeline.createNewInstantTime()
            table.scheduleRollback(context, time, target, False, config.shouldRollbackUsingMarkers(), False)
            instant = hudi.common.util.Option.of(time)
        elif action in ("savepoint", "savepoint_inflight"):  # of the latest completed commit
            last = meta.getCommitsTimeline().filterCompletedInstants().lastInstant().get()
            time = last.requestedTime() if one_x else last.getTimestamp()
            if action == "savepoint":
                client.savepoint(time, "dbt-hudi", "feature table")
            else:  # what SavepointActionExecutor writes before the savepoint's files are listed
                state = hudi.common.table.timeline.HoodieInstant.State.INFLIGHT
                meta.getActiveTimeline().createNewInstant(
                    meta.getInstantGenerator().createNewInstant(state, "savepoint", time) if one_x
                    else hudi.common.table.timeline.HoodieInstant(True, "savepoint", time))
            instant = hudi.common.util.Option.of(time)
        elif action == "restore":  # to the latest savepoint: the plan of the instants it rolls back
            last = meta.getActiveTimeline().getSavePointTimeline().filterCompletedInstants().lastInstant().get()
            savepoint = last.requestedTime() if one_x else last.getTimestamp()
            time = client.createNewInstantTime(False) if one_x else \
                hudi.common.table.timeline.HoodieActiveTimeline.createNewInstantTime()
            if not table.scheduleRestore(context, time, savepoint).isPresent():
                raise ValueError(f"Hudi planned no restore to {savepoint} on {path}")
            instant = hudi.common.util.Option.of(time)
        elif action == "restore_again":  # rollback_to_savepoint of the latest savepoint, to the end
            last = meta.getActiveTimeline().getSavePointTimeline().filterCompletedInstants().lastInstant().get()
            savepoint = last.requestedTime() if one_x else last.getTimestamp()
            client.restoreToSavepoint(savepoint)
            instant = hudi.common.util.Option.of(savepoint)
        elif action == "indexing":  # an async metadata-table index build of column stats (HoodieIndexer's schedule)
            types = jvm.java.util.ArrayList()
            types.add(hudi.metadata.MetadataPartitionType.COLUMN_STATS)
            instant = client.scheduleIndexing(types, jvm.java.util.ArrayList()) if one_x else \
                client.scheduleIndexing(types)
        elif action in ("compaction", "run_log_compaction"):
            timeline = meta.getActiveTimeline()
            pending = (timeline.filterPendingCompactionTimeline() if action == "compaction"
                       else timeline.filterPendingLogCompactionTimeline()).lastInstant().get()
            time = pending.requestedTime() if one_x else pending.getTimestamp()
            resolver = hudi.common.table.TableSchemaResolver(meta)
            schema = (resolver.getTableSchema(False).toAvroSchema() if one_x
                      else resolver.getTableAvroSchema(False)).toString()
            client.close()
            # 0.15's compact(instant, complete) is protected: its public compact(instant) completes as auto.commit says
            client, config = client_for({"hoodie.avro.schema": schema, "hoodie.auto.commit": "false"})
            if one_x:  # 1.x leaves the write statuses to the commit to compute: computed here, the files written
                run = client.compact if action == "compaction" else client.logCompact
                run(time, False).getWriteStatuses().count()
            else:
                (client.compact if action == "compaction" else client.logCompact)(time)
            instant = hudi.common.util.Option.of(time)
        else:
            raise ValueError(f"unknown service action {action!r}")
        if not instant.isPresent():
            raise ValueError(f"Hudi scheduled no {action} on {path}")
        if inflight:
            timeline = meta.reloadActiveTimeline()
            pending = {"clean": timeline.getCleanerTimeline, "rollback": timeline.getRollbackTimeline,
                       "restore": timeline.getRestoreTimeline,
                       "indexing": timeline.filterPendingIndexTimeline}[action]() \
                .filterInflightsAndRequested().lastInstant().get()
            if action == "rollback":
                timeline.transitionRollbackRequestedToInflight(pending)
            elif action == "restore":
                timeline.transitionRestoreRequestedToInflight(pending)
            elif action == "indexing":
                timeline.transitionIndexRequestedToInflight(*([pending] if one_x else [pending, none]))
            elif one_x:
                timeline.transitionCleanRequestedToInflight(pending)
            else:
                timeline.transitionCleanRequestedToInflight(pending, timeline.getInstantDetails(pending))
        return {"ok": True, "instant": instant.get()}
    finally:
        client.close()


def handle(spark, request: dict) -> dict:
    op = request["op"]
    if op == "sql":
        df = spark.sql(request["sql"])
        if request.get("out"):
            _write_rows(df, request["out"])
        return {"ok": True}
    if op == "read":
        df = spark.read.format("hudi").options(**request.get("options", {})).load(request["path"])
        _write_rows(df, request["out"])
        return {"ok": True}
    if op == "write":
        df = spark.read.parquet(request["input"])
        (df.write.format("hudi").options(**request.get("options", {})).mode(request.get("mode", "append"))
         .save(request["path"]))
        return {"ok": True}
    if op == "service":
        return _service(spark, request["path"], request.get("options", {}), request["action"],
                        request.get("inflight", False))
    if op == "hfile_read":
        return _hfile_read(spark, request["path"], request.get("reader", "native"), request.get("lookup", []))
    if op == "hfile_write":
        return _hfile_write(spark, request["path"], request["cells"], request.get("block_size", 1024 * 1024),
                            request.get("codec", "GZIP"))
    if op == "version":
        jvm = spark.sparkContext._jvm
        return {"ok": True, "spark": spark.version, "java": jvm.System.getProperty("java.version")}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    global RELEASE
    config = json.loads(sys.argv[1])
    RELEASE = config["hudi"]
    out = protocol_pipe()
    try:
        spark = session(config)
    except BaseException as e:
        out.write(json.dumps(error_answer(e)) + "\n")
        raise
    out.write(json.dumps({"ok": True, "ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request["op"] == "stop":
            break
        try:
            answer = handle(spark, request)
        except Exception as e:  # noqa: BLE001 - every failure goes back to the test that asked
            answer = error_answer(e)
        out.write(json.dumps(answer) + "\n")
    spark.stop()
    out.write(json.dumps({"ok": True, "stopped": True}) + "\n")


if __name__ == "__main__":
    main()
