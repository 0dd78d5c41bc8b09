"""The repair procedures (hudi_engine/procedures/repairs.py) on tables the engine wrote (procedure_tables.py)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from oracle import rs_snapshot

from hudi_engine import HudiTable
from hudi_engine.errors import ConfigError, HudiError
from hudi_engine.java_properties import parse_properties
from hudi_engine.partition_metadata import parse_partition_metadata_parquet
from hudi_engine.procedures import call
from hudi_engine.write_pipeline import write_table


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


def _duplicated(tmp_path: Path, version: int = 6) -> str:
    """Keys 1..4 bulk-inserted twice into partition `x` (two file groups, two commits), key 3 a third time in the
    second commit's own file group: keys stored more than once, as a bulk_insert over existing keys leaves them."""
    path = str(tmp_path / "dupes")
    opts = {"hoodie.table.name": "dupes", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.write.table.version": str(version), "hoodie.datasource.write.operation": "bulk_insert"}
    for ids, value in (([1, 2, 3, 4], "old"), ([1, 2, 3, 3, 5], "new")):
        write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [value] * len(ids),
                              "ts": pa.array([1] * len(ids), pa.int64()), "p": ["x"] * len(ids)}), path, opts)
    return path


def _ids(path: str) -> list[int]:
    return sorted(HudiTable.load(path).read_snapshot().column("id").to_pylist())


@pytest.mark.parametrize(("kind", "expected"), [
    # insert_type drops copies older than a key's newest commit: key 3's two newest copies stay duplicated.
    ("insert_type", None),
    ("update_type", [1, 2, 3, 4, 5]),
    ("upsert_type", [1, 2, 3, 4, 5]),
])
def test_repair_deduplicate(tmp_path: Path, kind: str, expected: list[int] | None) -> None:
    path = _duplicated(tmp_path)
    before = _ids(path)
    assert before == [1, 1, 2, 2, 3, 3, 3, 4, 5]
    out = tmp_path / f"repaired-{kind}"
    if expected is None:
        with pytest.raises(HudiError, match="Still found some duplicates"):
            call("repair_deduplicate", path, duplicated_partition_path="x", repaired_output_path=str(out),
                 dedupe_type=kind, dry_run=False)
        assert _ids(path) == before  # nothing copied back
        return
    (dry,) = call("repair_deduplicate", path, duplicated_partition_path="x", repaired_output_path=str(out),
                  dedupe_type=kind).to_pylist()
    assert dry["result"] == f"Deduplicated files placed in: {out}."
    assert _ids(path) == before  # a dry run changes no file of the table
    assert sorted(pq.read_table(out).column("id").to_pylist()) == expected
    (done,) = call("repair_deduplicate", path, duplicated_partition_path="x", repaired_output_path=str(out),
                   dedupe_type=kind, dry_run=False).to_pylist()
    assert done["result"] == "Deduplicated files placed in: x."
    assert _ids(path) == expected
    assert sorted(rs_snapshot(Path(path)).column("id").to_pylist()) == expected
    newest = HudiTable.load(path).read_snapshot().to_pylist()
    assert {r["id"]: r["v"] for r in newest}[1] == "new"  # the newest copy of a key is the one kept


def test_repair_deduplicate_refuses_an_unknown_type(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Please provide valid dedupe type!.*one of insert_type, update_type"):
        call("repair_deduplicate", str(tmp_path), duplicated_partition_path="x",
             repaired_output_path=str(tmp_path / "o"), dedupe_type="merge_type")
