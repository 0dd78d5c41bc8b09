"""A table Java Hudi wrote with its metadata table on, on a local file system, with index partitions the engine does
not keep (bloom filters on version 6, a secondary index on 9): the engine's write refuses them by name
before writing anything; with hoodie.metadata.enable=false it deletes the metadata table (as Hudi does, rewriting
hoodie.properties) and commits. Java Hudi loads the table, writes it and rebuilds its metadata
table, and every row of both writers is there. (A
files-only metadata table is kept instead: tests/java_hudi/test_mdt_files.py; column stats too:
tests/java_hudi/test_mdt_stats.py; the global record index too: tests/java_hudi/test_mdt_record_index.py; the
partitioned one too: tests/java_hudi/test_mdt_partitioned_record_index.py.)

On file:// Java writes through Hadoop's checksummed local file system, which keeps `.hoodie.properties.crc` beside
hoodie.properties and refuses the file once it no longer matches (bench/RESULTS.md, the metadata-table hand-over)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import MetadataTableError
from hudi_engine.java_properties import parse_properties


def _rows(ids: range, value: str) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [value] * len(ids),
                     "ts": pa.array([1] * len(ids), pa.int64()), "p": [f"p{i % 2}" for i in ids]})


@pytest.mark.parametrize("hudi", ["1.2.0", "0.15.0"])
def test_java_writes_after_the_engine_disabled_its_metadata_table(java_hudi, tmp_path: Path, hudi: str) -> None:
    java = java_hudi(hudi)
    path = tmp_path / "t"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.metadata.enable": "true",
            "hoodie.datasource.write.operation": "upsert",
            # what the engine does not keep, so it disables the metadata table (1.2: a secondary index, below, which
            # needs the global record index)
            **({"hoodie.metadata.index.bloom.filter.enable": "true"} if hudi == "0.15.0" else
               {"hoodie.metadata.global.record.level.index.enable": "true"})}
    java.write(path, _rows(range(10), "java-1"), opts, mode="overwrite")
    if hudi == "1.2.0":  # Spark SQL's CREATE INDEX needs the table in the catalog, and a lock provider
        java.sql("DROP TABLE IF EXISTS handover_t")
        java.sql(f"CREATE TABLE handover_t (id BIGINT, v STRING, ts BIGINT, p STRING) USING hudi PARTITIONED BY (p) "
                 f"LOCATION '{path}' TBLPROPERTIES ('type' = 'cow', 'primaryKey' = 'id', 'preCombineField' = 'ts', "
                 "'hoodie.metadata.global.record.level.index.enable' = 'true')")
        java.sql("SET hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.InProcessLockProvider")
        java.sql("CREATE INDEX idx_v ON handover_t (v)")
    props = lambda: parse_properties((path / ".hoodie" / "hoodie.properties").read_text("latin-1"))  # noqa: E731
    assert "files" in props()["hoodie.table.metadata.partitions"].split(",")
    assert (path / ".hoodie" / ".hoodie.properties.crc").exists()  # what Hadoop's local file system leaves

    ours = {k: v for k, v in opts.items() if not k.startswith("hoodie.metadata.")}  # the engine refuses them on
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    unmaintained = "bloom_filters" if hudi == "0.15.0" else "secondary_index_idx_v"
    with pytest.raises(MetadataTableError, match=f"(?s)index partitions .*{unmaintained}.*hoodie.metadata.enable=false"):
        HudiTable.load(str(path)).write(_rows(range(5, 15), "engine"), ours)  # would leave Java's index stale
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before  # refused before anything is written
    HudiTable.load(str(path)).write(_rows(range(5, 15), "engine"), {**ours, "hoodie.metadata.enable": "false"})
    assert "hoodie.table.metadata.partitions" not in props()
    assert not (path / ".hoodie" / "metadata").exists()
    assert not (path / ".hoodie" / ".hoodie.properties.crc").exists()

    java.write(path, _rows(range(12, 20), "java-2"), opts)
    assert "files" in props()["hoodie.table.metadata.partitions"].split(",")  # Java built it again
    got = dict(zip(*java.snapshot(path).select(["id", "v"]).to_pydict().values(), strict=True))
    want = {**{i: "java-1" for i in range(5)}, **{i: "engine" for i in range(5, 12)},
            **{i: "java-2" for i in range(12, 20)}}
    assert got == want
