"""Keyless tables (no record key; Hudi 0.14+ generates `_hoodie_record_key`, docs/keyless.md): keys spelled as
`HoodieRecord.generateSequenceId` spells them, unique over tasks, the same in a retried task; tables written
without Spark (`local_writer`) read back by hudi-rs; every write that needs a key refused before any file."""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import rs_snapshot
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError, KeyGeneratorError
from hudi_engine.keygen import AUTO_KEY_COLUMN, AutoKeySequence, auto_record_keys, key_generator_for
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig

EVENTS = pa.table({
    "event": [f"e{i}" for i in range(12)],
    "day": ["2024-01-01", "2024-01-02", "2024-01-03"] * 4,
    "kind": ["click", "view"] * 6,
    "n": pa.array(range(12), pa.int64()),
})
INSTANT = "20240101120000123"


def test_key_format_is_hudis_sequence_id() -> None:
    # HoodieRecord.generateSequenceId(instantTime, partitionId, recordIndex): instant + "_" + partition + "_" + row
    assert auto_record_keys(INSTANT, 3, 5, 3).to_pylist() == [f"{INSTANT}_3_5", f"{INSTANT}_3_6", f"{INSTANT}_3_7"]
    assert auto_record_keys(INSTANT, 0, 0, 0).to_pylist() == []
    with pytest.raises(KeyGeneratorError):
        auto_record_keys(INSTANT, -1, 0, 1)


def test_keys_unique_over_10_tasks_and_the_same_in_every_attempt() -> None:
    """10 tasks (input splits) of different sizes, each run 3 times (a retried task re-reads its split, cut into
    batches differently): every attempt makes the same keys, and no key repeats across tasks."""
    sizes = [0, 1, 7, 10, 11, 100, 101, 999, 1000, 4096]
    per_task = []
    for split, size in enumerate(sizes):
        attempts = []
        for batch in (1000, 7, 4096):  # three attempts, the split cut into batches differently
            seq = AutoKeySequence(INSTANT, split)
            chunks = [seq.take(min(batch, size - start)) for start in range(0, size, batch)]
            attempts.append(pa.concat_arrays([pa.array([], pa.string()), *chunks]).to_pylist())
        assert attempts[0] == attempts[1] == attempts[2], f"task {split}: attempts differ"
        per_task.append(attempts[0])
    every = [k for keys in per_task for k in keys]
    assert len(every) == sum(sizes) == len(set(every))
    assert per_task[3][:2] == [f"{INSTANT}_3_0", f"{INSTANT}_3_1"]


def test_key_generator_without_key_fields_reads_the_generated_column() -> None:
    keygen = key_generator_for(None, [], ["day"])
    assert keygen.auto_generated and type(keygen).__name__ == "SimpleKeyGenerator"  # inferred from partitions
    table = EVENTS.append_column(AUTO_KEY_COLUMN, auto_record_keys(INSTANT, 0, 0, EVENTS.num_rows))
    assert keygen.record_keys(table).to_pylist() == [f"{INSTANT}_0_{i}" for i in range(12)]
    assert keygen.partition_paths(table).to_pylist() == EVENTS.column("day").to_pylist()
    with pytest.raises(KeyGeneratorError, match="keyless"):
        keygen.record_keys(EVENTS)  # the rows alone do not tell their split and position


def _files(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}


def _options(table_type: str, partitions: str) -> dict[str, str]:
    return {"hoodie.table.name": "events", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.partitionpath.field": partitions}


def _operation(path: Path, instant: str) -> str:
    timeline = HudiTable.load(str(path)).timeline
    return timeline.commit_metadata(next(i for i in timeline.completed_commits() if i.timestamp == instant)) \
        .operation_type


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("partitions,keygen", [("", "NonpartitionedKeyGenerator"), ("day", "SimpleKeyGenerator"),
                                               ("day,kind", "ComplexKeyGenerator")])
def test_keyless_table_created_and_appended(tmp_path: Path, table_type: str, partitions: str, keygen: str) -> None:
    path = tmp_path / "events"
    first = write(path, EVENTS, _options(table_type, partitions))  # no operation: bulk_insert, as Hudi deduces it
    storage, base = Storage.for_uri(str(path))
    props = TableConfig.load(TableLocation.at(storage, base)).props
    assert "hoodie.table.recordkey.fields" not in props
    assert props["hoodie.table.keygenerator.class"] == f"org.apache.hudi.keygen.{keygen}"
    assert _operation(path, first.instant_time) == "BULK_INSERT"
    more = EVENTS.slice(0, 5)
    second = write(path, more, {**_options(table_type, partitions), "hoodie.datasource.write.operation": "insert"})
    assert _operation(path, second.instant_time) == "INSERT"

    rows = rs_snapshot(path)
    keys = rows.column("_hoodie_record_key").to_pylist()
    assert rows.num_rows == 17 and len(set(keys)) == 17
    # One input split (partition id 0) per local write; rows numbered in input order.
    expected = {f"{first.instant_time}_0_{i}": EVENTS.column("event")[i].as_py() for i in range(12)}
    expected |= {f"{second.instant_time}_0_{i}": more.column("event")[i].as_py() for i in range(5)}
    assert dict(zip(keys, rows.column("event").to_pylist())) == expected
    assert AUTO_KEY_COLUMN not in rows.column_names
    # The partition path is the table's own (only the key is generated).
    want_paths = {"": "", "day": "{day}", "day,kind": "{day}/{kind}"}[partitions]
    for r in rows.select(["_hoodie_partition_path", "day", "kind"]).to_pylist():
        assert r["_hoodie_partition_path"] == want_paths.format(**r)


@pytest.mark.parametrize("options,option", [
    ({"hoodie.datasource.write.operation": "upsert"}, "hoodie.datasource.write.operation=upsert"),
    ({"hoodie.datasource.write.operation": "delete"}, "hoodie.datasource.write.operation=delete"),
    ({"hoodie.datasource.write.operation": "insert", "hoodie.combine.before.insert": "true"},
     "hoodie.combine.before.insert=true"),
])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_needing_keys_refused_before_any_file(tmp_path: Path, table_type: str, options: dict,
                                                     option: str) -> None:
    path = tmp_path / "events"
    write(path, EVENTS, _options(table_type, "day"))
    files, snapshot = _files(path), rs_snapshot(path)
    with pytest.raises(ConfigError) as e:
        write(path, EVENTS, {**_options(table_type, "day"), **options})
    assert str(path) in str(e.value) and option in str(e.value) and "no record key" in str(e.value)
    assert _files(path) == files
    assert rs_snapshot(path).sort_by("_hoodie_record_key").equals(snapshot.sort_by("_hoodie_record_key"))
    # New table: refused before the table exists.
    fresh = tmp_path / "fresh"
    with pytest.raises(ConfigError, match=re.escape(option)):
        write(fresh, EVENTS, {**_options(table_type, "day"), **options})
    assert not fresh.exists() or not any(fresh.rglob("*"))


def test_refusal_names_the_way_out(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        WriteConfig.from_options({"hoodie.table.name": "t", "hoodie.datasource.write.operation": "upsert"}) \
            .for_keyless("/some/table")
    text = str(e.value)
    assert "/some/table" in text and "insert or bulk_insert" in text and "hoodie.datasource.write.recordkey.field" in text


def test_keyed_write_to_a_keyless_table_refused(tmp_path: Path) -> None:
    path = tmp_path / "events"
    write(path, EVENTS, _options("COPY_ON_WRITE", ""))
    files = _files(path)
    with pytest.raises(ConfigError, match="hoodie.datasource.write.recordkey.field"):
        write(path, EVENTS, {**_options("COPY_ON_WRITE", ""), "hoodie.datasource.write.recordkey.field": "event",
                             "hoodie.datasource.write.operation": "upsert"})
    assert _files(path) == files


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_overwrite_of_a_keyless_table(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "events"
    write(path, EVENTS, _options(table_type, "day"))
    over = write(path, EVENTS.slice(0, 2), {**_options(table_type, "day"),
                                            "hoodie.datasource.write.operation": "insert_overwrite_table"})
    rows = rs_snapshot(path)
    assert sorted(rows.column("_hoodie_record_key").to_pylist()) == [f"{over.instant_time}_0_{i}" for i in range(2)]
    assert sorted(rows.column("event").to_pylist()) == ["e0", "e1"]
    assert pc.all(pc.equal(rows.column("_hoodie_commit_time"), over.instant_time)).as_py()
