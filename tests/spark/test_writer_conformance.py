"""Upserts into copies of the real Spark-written v6 tables: our writes continue their timelines, hudi-rs reads them."""
from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.spark import write

pytestmark = pytest.mark.spark

TABLES = ["cow_v6_nonpartitioned", "cow_v6_simplekeygen_nonhivestyle", "cow_v6_complexkeygen_hivestyle",
          "cow_v6_simplekeygen_hivestyle_no_metafields", "mor_parquetlog_v6_simplekeygen_nonhivestyle",
          "mor_parquetlog_v6_complexkeygen_hivestyle", "mor_avrolog_v6_trips_8i1u",
          "cow_v6_simplekeygen_nonhivestyle_overwritetable"]


@pytest.mark.parametrize("name", TABLES)
def test_upsert_into_real_table(spark, unzip_table, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(unzip_table(name), path)
    table = HudiTable.load(path)
    meta = table.config.populate_meta_fields
    before = table.read_snapshot()
    data_cols = [c for c in before.column_names if not c.startswith("_hoodie_")]
    ordering = table.config.precombine_field
    # Update every existing row (ordering value not lowered) and change one non-key, non-partition column.
    keys = set(table.config.record_key_fields) | set(table.config.partition_fields) | {ordering}
    def changeable(c: str) -> bool:
        t = before.schema.field(c).type
        return c not in keys and (pa.types.is_string(t) or pa.types.is_floating(t) or pa.types.is_integer(t))

    target = next(c for c in data_cols if changeable(c))
    col = before.column(target)
    new_col = (pc.binary_join_element_wise(col, pa.scalar("-upd"), "") if pa.types.is_string(col.type)
               else pc.add(col, pa.scalar(1, col.type)))
    updated = before.select(data_cols)
    updated = updated.set_column(updated.column_names.index(target), target, new_col)
    df = spark.createDataFrame(updated)
    options = {"hoodie.datasource.write.operation": "upsert"}  # everything else comes from hoodie.properties
    result = write(df, str(path), options)
    assert result.records_updated == before.num_rows and result.records_inserted == 0

    after = rs_snapshot(path)
    assert after.num_rows == before.num_rows
    assert sorted(after.column(target).to_pylist(), key=repr) == sorted(new_col.to_pylist(), key=repr)
    assert_same_rows(HudiTable.load(path).read_snapshot(), after, f"{name} after our upsert",
                     "_hoodie_record_key" if meta else table.config.record_key_fields[0])


def test_write_disables_a_metadata_table_first(spark, unzip_table, tmp_path):
    """A table whose hoodie.properties lists MDT partitions would hide our files from Java readers
    (hudi_engine/FORMAT.md, Metadata table): one this engine cannot keep is disabled (here with the metadata table
    off; on, the default, the write builds a new one: tests/metadata/test_metadata_initialization.py)."""
    path = tmp_path / "t"
    shutil.copytree(unzip_table("cow_v6_nonpartitioned"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.metadata.partitions=files\n")
    (path / ".hoodie" / "metadata" / ".hoodie").mkdir(parents=True)
    before = HudiTable.load(path).read_snapshot()
    df = spark.createDataFrame(before.select([c for c in before.column_names if not c.startswith("_hoodie")]))
    write(df, str(path), {"hoodie.datasource.write.operation": "upsert", "hoodie.metadata.enable": "false"})
    assert "hoodie.table.metadata.partitions" not in props.read_text()
    assert not (path / ".hoodie" / "metadata").exists()
    assert HudiTable.load(path).config.checksum == HudiTable.load(unzip_table("cow_v6_nonpartitioned")).config.checksum
    assert len(rs_snapshot(path)) == before.num_rows
