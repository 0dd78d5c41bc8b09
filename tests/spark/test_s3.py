"""The engine on a real S3 API (moto's server): COW and MOR writes through Spark tasks, reads (this engine, the Spark
data source, hudi-rs from the same endpoint), table services (inline compaction, cleaning, archival), and the lock
file the writes take there. Also: Java's Avro library (in Spark's JVM) reads the archived timeline this engine writes."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot
from write.local_write import write as local_write

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.spark import write
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.archived import archive_files, archived_entries
from hudi_engine.timeline.history import TimelineHistory
from hudi_engine.timeline.instant import Action

pytestmark = pytest.mark.spark

SCHEMA = "id bigint, name string, ts bigint, dt string"


def _opts(table_type: str, **extra) -> dict:
    return {"hoodie.table.name": "s3t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, **extra}


def _df(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def _check(spark, uri: str, model: dict) -> None:
    ours = HudiTable.load(uri).read_snapshot()
    assert_same_rows(ours, rs_snapshot(uri), "snapshot on S3")
    assert {r["id"]: (r["name"], r["ts"]) for r in ours.to_pylist()} == model
    via_spark = spark.read.format("hudi").load(uri).select("id", "name", "ts").collect()
    assert {r["id"]: (r["name"], r["ts"]) for r in via_spark} == model


@pytest.mark.slow
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_reads_and_table_services_on_s3(spark, s3_server, table_type):
    uri = s3_server.uri(s3_server.new_bucket(), "warehouse/t")
    options = _opts(table_type, **{"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
                                   "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                                   "hoodie.keep.max.commits": "3", "hoodie.upsert.shuffle.parallelism": "2",
                                   # archival stops at the metadata table's latest compaction (on by default)
                                   "hoodie.metadata.compact.max.delta.commits": "1"})
    model: dict = {}
    rows = [(i, f"n{i}", 1, f"d{i % 3}") for i in range(30)]
    write(_df(spark, rows), uri, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    model.update({r[0]: (r[1], r[2]) for r in rows})
    for round_ in range(2, 5):
        rows = [(i, f"n{i}_{round_}", round_, f"d{i % 3}") for i in range(round_, 30, 4)] + \
               [(100 + round_, f"new{round_}", round_, "d9")]
        write(_df(spark, rows), uri, options)
        model.update({r[0]: (r[1], r[2]) for r in rows})
    write(_df(spark, [(3, "x", 99, "d0"), (5, "x", 99, "d2")]), uri,
          {**options, "hoodie.datasource.write.operation": "delete"})
    del model[3], model[5]
    _check(spark, uri, model)

    storage, base = Storage.for_uri(uri)
    timeline = Timeline.load(TableLocation.at(storage, base))
    assert timeline.filter_by([Action.CLEAN]), "cleaning ran on S3"
    if table_type == "MERGE_ON_READ":
        assert any(timeline.commit_metadata(i).operation_type == "COMPACT" for i in timeline.completed_commits())
    location = TableLocation.at(storage, base)
    if timeline.layout.version == 2:  # version 8+: the LSM history
        history = TimelineHistory.of(location, timeline.layout.timeline_path, timeline.layout.history_path)
        assert any(i.action in ("commit", "deltacommit") for i in history.instants()), "archival ran on S3"
    else:
        assert archive_files(location) and archived_entries(location), "archival ran on S3"
    assert len(timeline.completed_commits()) <= 3
    assert not storage.exists(Storage.join(base, ".hoodie", "lock")), "every write released the lock"
    keys = s3_server.keys(uri.split("/")[2], "warehouse/t/.hoodie/")
    assert not [k for k in keys if "/.heartbeat/" in k and not k.endswith("/")], "heartbeats deleted at commit"


def test_a_second_writer_waits_for_the_s3_lock_and_is_refused(spark, s3_table):
    from hudi_engine.config import WriteConfig
    from hudi_engine.errors import WriteError
    from hudi_engine.write.lock import table_lock

    options = _opts("COPY_ON_WRITE", **{"hoodie.write.lock.wait_time_ms": "500"})
    write(_df(spark, [(1, "a", 1, "d0")]), s3_table, options)
    storage, base = Storage.for_uri(s3_table)
    with table_lock(TableLocation.at(storage, base), WriteConfig.from_options(options).lock) as held:
        with pytest.raises(WriteError, match=f"could not take the write lock within 500 ms.*{held.owner}"):
            write(_df(spark, [(2, "b", 1, "d0")]), s3_table, options)
    assert {r["id"] for r in HudiTable.load(s3_table).read_snapshot().to_pylist()} == {1}


def test_java_avro_reads_the_archived_timeline(spark, tmp_path):
    """Spark's JVM has Apache Avro: it parses the schema in each archive block's header and decodes every record with
    it against Hudi's reader schema of HoodieArchivedMetaEntry (here: the same record, without this engine's
    `avro.java.string` hints), as Java's HoodieArchivedTimeline does."""
    from hudi_engine.io.log_block import BlockType, HeaderKey
    from hudi_engine.io.log_format import read_log_blocks
    from hudi_engine.timeline.archived import ARCHIVED_META_ENTRY

    path = str(tmp_path / "t")
    options = _opts("MERGE_ON_READ", **{"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2",
                                        "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                                        "hoodie.keep.max.commits": "3",
                                        "hoodie.write.table.version": "6"})  # the archive log files of 0.x
    for round_ in range(10):  # written in this process (the engine's write pieces): only the JVM's Avro is needed
        rows = pa.table({"id": pa.array(range(4), pa.int64()), "name": [f"n{round_}"] * 4,
                         "ts": pa.array([round_] * 4, pa.int64()), "dt": [f"d{i % 2}" for i in range(4)]})
        local_write(path, rows, options, table_services=True)
    storage, base = Storage.for_uri(path)
    files = archive_files(TableLocation.at(storage, base))
    assert files
    jvm = spark.sparkContext._jvm
    avro = jvm.org.apache.avro
    reader_schema = avro.Schema.Parser().parse(json.dumps(_without_java_hints(ARCHIVED_META_ENTRY)))
    decoded = []
    for _, archive_path in files:
        for block in read_log_blocks(storage.read_bytes(archive_path), file_name=archive_path):
            assert block.block_type == BlockType.AVRO_DATA
            writer_schema = avro.Schema.Parser().parse(block.header[HeaderKey.SCHEMA])
            reader = avro.generic.GenericDatumReader(writer_schema, reader_schema)
            content = block.content
            count = int.from_bytes(content[4:8], "big")
            pos = 8
            for _ in range(count):
                size = int.from_bytes(content[pos:pos + 4], "big")
                decoder = avro.io.DecoderFactory.get().binaryDecoder(bytearray(content[pos + 4:pos + 4 + size]), None)
                decoded.append(json.loads(reader.read(None, decoder).toString()))
                pos += 4 + size
    ours = archived_entries(TableLocation.at(storage, base))
    assert [(d["commitTime"], d["actionType"], d["actionState"]) for d in decoded] == \
           [(e["commitTime"], e["actionType"], e["actionState"]) for e in ours]
    commits = [d for d in decoded if d["actionState"] == "COMPLETED" and d["actionType"] in ("commit", "deltacommit")]
    assert commits and all(d["hoodieCommitMetadata"] for d in commits)
    stats = [s for d in commits for ss in d["hoodieCommitMetadata"]["partitionToWriteStats"].values() for s in ss]
    assert stats and all(s["fileId"] and s["path"] for s in stats)
    cleans = [d for d in decoded if d["actionType"] == "clean"]
    assert all(d["hoodieCleanMetadata"] if d["actionState"] == "COMPLETED" else d["hoodieCleanerPlan"] for d in cleans)


def _without_java_hints(schema):
    if isinstance(schema, dict):
        return {k: _without_java_hints(v) for k, v in schema.items() if k != "avro.java.string"}
    if isinstance(schema, list):
        return [_without_java_hints(s) for s in schema]
    return schema
