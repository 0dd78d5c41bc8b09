"""The repair procedures (hudi_engine/procedures/repairs.py) on tables the engine wrote (procedure_tables.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError
from hudi_engine.java_properties import parse_properties
from hudi_engine.partition_metadata import parse_partition_metadata_parquet
from hudi_engine.procedures import call


def test_repair_add_partition_meta(cow):
    path, _, second = cow
    (Path(path) / "x" / ".hoodie_partition_metadata").unlink()
    rows = [("x", "No", "None"), ("y", "Yes", "None")]
    assert [tuple(r.values()) for r in call("repair_add_partition_meta", path).to_pylist()] == rows
    assert not (Path(path) / "x" / ".hoodie_partition_metadata").exists()  # a dry run by default
    assert [tuple(r.values()) for r in call("repair_add_partition_meta", path, dry_run=False).to_pylist()] == [
        ("x", "No", "Repaired"), ("y", "Yes", "None")]
    meta = parse_properties((Path(path) / "x" / ".hoodie_partition_metadata").read_bytes())
    assert (meta["commitTime"], meta["partitionDepth"]) == (second, "1")  # the latest commit, as Hudi
    assert sorted(HudiTable.load(path).read_snapshot().column("id").to_pylist()) == [1, 2, 3, 4]


def test_repair_migrate_partition_meta(mor):
    path, _, second = mor
    dry = call("repair_migrate_partition_meta", path).to_pylist()
    assert [tuple(r.values()) for r in dry] == [("x", "true", "false", "MIGRATE"), ("y", "true", "false", "MIGRATE")]
    assert not HudiTable.load(path).config.partition_metafile_use_base_format  # a dry run changes nothing
    done = call("repair_migrate_partition_meta", path, dry_run=False).to_pylist()
    assert [r["action"] for r in done] == ["MIGRATED", "MIGRATED"]
    for p in ("x", "y"):
        assert not (Path(path) / p / ".hoodie_partition_metadata").exists()
        meta = parse_partition_metadata_parquet((Path(path) / p / ".hoodie_partition_metadata.parquet").read_bytes())
        assert meta["commitTime"] == second
    table = HudiTable.load(path)
    assert table.config.partition_metafile_use_base_format
    assert sorted(table.read_snapshot().column("id").to_pylist()) == [1, 2, 3, 4]
    assert [r["action"] for r in call("repair_migrate_partition_meta", path).to_pylist()] == ["NONE", "NONE"]


def test_repair_overwrite_hoodie_props(cow, tmp_path):
    path, _, _ = cow
    props = Path(path) / ".hoodie" / "hoodie.properties"
    old = parse_properties(props.read_bytes())
    new = {k: v for k, v in old.items() if k != "hoodie.datasource.write.hive_style_partitioning"}
    new["hoodie.archivelog.folder"] = "archived"
    new["hoodie.table.checksum"] = "1"  # made afresh
    edited = tmp_path / "new.properties"
    edited.write_text("".join(f"{k}={v}\n" for k, v in new.items()))
    rows = {r["property"]: (r["old_value"], r["new_value"])
            for r in call("repair_overwrite_hoodie_props", path, new_props_file_path=str(edited)).to_pylist()}
    assert sorted(rows) == sorted(set(old) | set(new))
    assert rows["hoodie.table.checksum"] == (old["hoodie.table.checksum"],) * 2
    if "hoodie.datasource.write.hive_style_partitioning" in old:
        assert rows["hoodie.datasource.write.hive_style_partitioning"][1] == "null"
    assert parse_properties(props.read_bytes())["hoodie.table.checksum"] == old["hoodie.table.checksum"]
    assert HudiTable.load(path).read_snapshot().num_rows == 4


def test_repair_overwrite_hoodie_props_refuses_what_does_not_load(cow, tmp_path):
    path, _, _ = cow
    props = Path(path) / ".hoodie" / "hoodie.properties"
    before = props.read_bytes()
    bad = tmp_path / "bad.properties"
    bad.write_text("hoodie.table.type=COPY_ON_WRITE\n")
    with pytest.raises(ConfigError, match="is not a table config this engine can load.*nothing was written"):
        call("repair_overwrite_hoodie_props", path, new_props_file_path=str(bad))
    with pytest.raises(ConfigError, match="new_props_file_path of repair_overwrite_hoodie_props: .*cannot be read"):
        call("repair_overwrite_hoodie_props", path, new_props_file_path=str(tmp_path / "missing"))
    assert props.read_bytes() == before
