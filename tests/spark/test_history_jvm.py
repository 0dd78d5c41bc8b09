"""The LSM timeline history's files as the JVM reads them, with the libraries Hudi 1.x reads them with (Avro,
parquet-mr, Jackson; no Hudi jar is at hand): Avro parses the footer schema and prints it back as written, parquet-mr
accepts the projections Hudi's archived-timeline reader requests (parquet-avro's rendering of the record schema,
whole and the three time fields), Spark's parquet reader reads every record, and Jackson pretty-prints the manifest's
fields exactly as written."""
from __future__ import annotations

from pathlib import Path

import pytest

from hudi_engine.location import TableLocation
from hudi_engine.timeline.history import ArchivedInstant, TimelineHistory, manifest_json

pytestmark = pytest.mark.spark

T0 = 20250101000000000
FULL = ("message org.apache.hudi.avro.model.HoodieLSMTimelineInstant { optional binary instantTime (STRING); "
        "optional binary completionTime (STRING); optional binary action (STRING); optional binary metadata; "
        "optional binary plan; required int32 version; }")
TIME = ("message org.apache.hudi.avro.model.HoodieLSMTimelineInstant { optional binary instantTime (STRING); "
        "optional binary completionTime (STRING); optional binary action (STRING); }")


def test_history_files_read_in_the_jvm(spark, tmp_path):
    (tmp_path / ".hoodie" / "timeline").mkdir(parents=True)
    history = TimelineHistory.of(TableLocation.of(str(tmp_path)))
    written = []
    for run in range(7):
        records = [ArchivedInstant(str(T0 + run * 10 + i), str(T0 + run * 10 + i + 3), "clean" if i == 2 else "commit",
                                   bytes([run, i, 0, 255]), b"plan" if i == 2 else None) for i in range(3)]
        written += records
        history.append(records)
        history.compact_and_clean(3)
    names = history.file_names()
    assert any(n.endswith("_1.parquet") for n in names) and any(n.endswith("_0.parquet") for n in names)

    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    parse = jvm.org.apache.parquet.schema.MessageTypeParser.parseMessageType
    for name in names:
        path = jvm.org.apache.hadoop.fs.Path(str(Path(history.folder) / name))
        reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(
            jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(path, conf))
        try:
            meta = reader.getFooter().getFileMetaData()
            text = meta.getKeyValueMetaData().get("parquet.avro.schema")
            schema = jvm.org.apache.avro.Schema.Parser().parse(text)
            assert schema.getFullName() == "org.apache.hudi.avro.model.HoodieLSMTimelineInstant"
            assert schema.toString() == text  # written as Java's Schema.toString() prints it
            for requested in (FULL, TIME):  # throws when the file's schema does not contain the projection
                jvm.org.apache.parquet.hadoop.api.ReadSupport.getSchemaForRead(meta.getSchema(), parse(requested))
        finally:
            reader.close()
    rows = spark.read.parquet(*[str(Path(history.folder) / n) for n in names]).collect()
    assert sorted((r.instantTime, r.completionTime, r.action, bytes(r.metadata), r.plan and bytes(r.plan), r.version)
                  for r in rows) == [(w.instant_time, w.completion_time, w.action, w.metadata, w.plan, 1)
                                     for w in written]

    # Jackson with Hudi's JsonUtils settings writes HoodieLSMTimelineManifest's fields: files [fileName, fileLen].
    files = jvm.java.util.ArrayList()
    for entry in history.manifest():
        item = jvm.java.util.LinkedHashMap()
        item.put("fileName", entry.file_name)
        item.put("fileLen", jvm.java.lang.Long.valueOf(entry.file_len))
        files.add(item)
    manifest = jvm.java.util.LinkedHashMap()
    manifest.put("files", files)
    mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
    text = mapper.writerWithDefaultPrettyPrinter().writeValueAsString(manifest)
    folder = Path(history.folder)
    assert text == manifest_json(history.manifest()) == (folder / f"manifest_{history.latest_version()}").read_text()
    assert mapper.readTree(text).get("files").size() == len(names)
