"""A write whose options ask for what this engine does not do (config/hudi_keys.py) fails before its first file:
the table's files and what hudi-rs reads are unchanged, and a new table is not even started. Options that are
accepted no-ops write the same table as without them, which hudi-rs reads as the engine does."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_job import java_job_options
from local_write import write
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError

REFUSED = {"hoodie.layout.optimize.curve.build.method": "SAMPLE", "hoodie.metadata.index.bloom.filter.enable": "true",
           "hoodie.metadata.index.expression.enable": "true", "hoodie.datasource.hive_sync.mode": "jdbc"}
# Tuning a Java job carries (HoodieMemoryConfig, HoodieWriteConfig, HoodieIndexConfig, HoodieCleanConfig, sync
# settings with sync off): accepted, no effect.
NO_OPS = {"hoodie.memory.merge.fraction": "0.75", "hoodie.memory.spillable.map.path": "/mnt/tmp",
          "hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT",
          "hoodie.write.buffer.limit.bytes": "8388608", "hoodie.bloom.index.parallelism": "8",
          "hoodie.simple.index.parallelism": "8", "hoodie.clean.async": "true", "hoodie.cleaner.parallelism": "20",
          "hoodie.datasource.hive_sync.database": "lake", "hoodie.clustering.async.enabled": "false",
          "hoodie.metadata.enable": "false", "hoodie.datasource.write.reconcile.schema": "true"}


def rows(ids: list[int], city: str, ts: int) -> pa.Table:
    return pa.table({"trip_id": pa.array(ids, pa.int64()), "city": [city] * len(ids),
                     "fare": pa.array([float(i) * 1.5 for i in ids]), "ts": pa.array([ts] * len(ids), pa.int64())})


def options(table_type: str, operation: str, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "trip_id",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.operation": operation,
            "hoodie.upsert.shuffle.parallelism": "2", **extra}


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_refused_options_leave_the_table_untouched(tmp_path, table_type):
    path = tmp_path / "trips"
    write(path, rows([1, 2, 3], "sf", 1), options(table_type, "insert"))
    before, read_before = tree(path), rs_snapshot(path)
    with pytest.raises(ConfigError) as e:
        write(path, rows([2, 4], "sf", 2), options(table_type, "upsert", **REFUSED))
    text = str(e.value)
    assert text.startswith(f"table {path}: invalid Hudi write options:")
    for key, value in REFUSED.items():
        assert f"{key}={value!r} is not supported" in text
    assert tree(path) == before
    assert_same_rows(rs_snapshot(path), read_before, "after the refused write")
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), read_before, "ours after the refused write")


def test_a_refused_write_does_not_start_a_table(tmp_path):
    path = tmp_path / "new"
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.hive_sync\.mode='jdbc' is not supported"):
        write(path, rows([1], "sf", 1), options("COPY_ON_WRITE", "insert",
                                                **{"hoodie.datasource.hive_sync.mode": "jdbc"}))
    assert not path.exists()


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_no_op_options_write_the_same_table(tmp_path, table_type):
    tables = {}
    for name, extra in (("plain", {}), ("java", NO_OPS)):
        path = tmp_path / name
        write(path, rows([1, 2, 3], "sf", 1), options(table_type, "insert", **extra))
        write(path, rows([2, 4], "sf", 2), options(table_type, "upsert", **extra))
        ours = HudiTable.load(str(path)).read_snapshot()
        assert_same_rows(ours, rs_snapshot(path), f"{table_type} {name}")
        tables[name] = ours.drop_columns([c for c in ours.column_names if c.startswith("_hoodie")])
    assert_same_rows(tables["java"], tables["plain"], "with and without the no-op options", key="trip_id")
    assert sorted(tables["java"].column("trip_id").to_pylist()) == [1, 2, 3, 4]


@pytest.mark.parametrize("table_type, allow_duplicates, ids", [("COPY_ON_WRITE", "false", [1, 2, 3]),
                                                               ("MERGE_ON_READ", "true", [1, 2, 2, 3])])
def test_insert_packing_is_what_the_accepted_allow_duplicate_value_says(tmp_path, table_type, allow_duplicates, ids):
    """hoodie.merge.allow.duplicate.on.inserts is accepted only with the value that names what this engine does with
    inserts routed into a small file: COW merges them by key, MOR writes them beside the stored record."""
    path = tmp_path / "trips"
    extra = {"hoodie.merge.allow.duplicate.on.inserts": allow_duplicates}
    write(path, rows([1, 2, 3], "sf", 1), options(table_type, "insert", **extra))
    write(path, rows([2], "sf", 2), options(table_type, "insert", **extra))
    ours = HudiTable.load(str(path)).read_snapshot()
    assert sorted(ours.column("trip_id").to_pylist()) == ids
    assert_same_rows(ours, rs_snapshot(path), f"{table_type} inserts into a small file")


def test_complex_key_encoding_is_the_accepted_one(tmp_path):
    """hoodie.write.complex.keygen.new.encoding is accepted only false: a ComplexKeyGenerator key of one field is
    written `field:value`, as Hudi 0.14.0 (and 0.14.2 / 0.15.1 / 1.1 with the option false) write it."""
    path = tmp_path / "trips"
    extra = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
             "hoodie.write.complex.keygen.new.encoding": "false", "hoodie.write.complex.keygen.validation.enable": "true"}
    write(path, rows([1, 2], "sf", 1), options("COPY_ON_WRITE", "insert", **extra))
    ours = HudiTable.load(str(path)).read_snapshot()
    assert sorted(ours.column("_hoodie_record_key").to_pylist()) == ["trip_id:1", "trip_id:2"]
    assert_same_rows(ours, rs_snapshot(path), "complex key of one field")
    with pytest.raises(ConfigError, match=r"hoodie\.write\.complex\.keygen\.new\.encoding='true' is not supported"):
        write(path, rows([3], "sf", 2), options("COPY_ON_WRITE", "insert",
                                                **{**extra, "hoodie.write.complex.keygen.new.encoding": "true"}))


def test_a_java_jobs_options_write_and_serve_the_table(tmp_path):
    """The whole options dict of a Java job (MOR, BLOOM index, inline compaction every 3 delta commits, cleaning,
    memory / timeline server tuning, sync off) drives four writes with the services around them."""
    path = tmp_path / "trips"
    options = java_job_options()
    for n, (ids, ts) in enumerate([([1, 2, 3], 1), ([2, 4], 2), ([3, 5], 3), ([1, 6], 4)]):
        batch = rows(ids, "", ts).set_column(1, "city", pa.array(["sf" if i % 2 else "la" for i in ids]))
        write(path, batch, {**options, "hoodie.datasource.write.operation": "insert" if n == 0 else "upsert"},
              table_services=True)
    table = HudiTable.load(str(path))
    assert table.config.hive_style_partitioning and table.config.table_type == "MERGE_ON_READ"
    assert any(i.action == "commit" for i in table.timeline.completed().instants), "inline compaction ran"
    ours = table.read_snapshot()
    assert sorted(ours.column("trip_id").to_pylist()) == [1, 2, 3, 4, 5, 6]
    assert_same_rows(ours, rs_snapshot(path), "the Java job's table")
