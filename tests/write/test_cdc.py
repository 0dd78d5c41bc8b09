"""CDC-enabled tables (`hoodie.table.cdc.enabled=true`) get Hudi 0.14/0.15's CDC log files from our writes
(docs/cdc.md): one `.cdc` log file per merged file group, CDC_DATA blocks of one record per change in the schema of
the table's supplemental logging mode, `cdcStats` in the commit metadata; none where Hudi infers the changes from the
data files (new file groups, MOR log files, replaced file groups). Failed writes, rollbacks and cleaning remove
them; hudi-rs still reads the tables."""
from __future__ import annotations

import io
import json
import re
import shutil
import struct
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from oracle import assert_same_rows, rs_snapshot
from write.local_write import write, write_files

from hudi_engine import HudiTable
from hudi_engine.config.write_config import CleanConfig, WriteConfig
from hudi_engine.errors import ConfigError, UnsupportedTableFeatureError, WriteError
from hudi_engine.file_naming import LogFileName
from hudi_engine.io.log_block import BlockType, HeaderKey, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_services.clean import clean
from hudi_engine.table_services.compaction import schedule_compaction
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.commit_metadata import CommitMetadata
from hudi_engine.write.commit import create_table
from hudi_engine.write.rollback import rollback_completed
from hudi_engine.write.write_client import WriteClient, table_for_write

MODES = ["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]
KEY = "_hoodie_record_key"

# The data schema of ROWS as the writer names it (`<table>_record` in `hoodie.<table>`).
IMAGE = ('{"type":"record","name":"t_record","namespace":"hoodie.t","fields":['
         '{"name":"id","type":["null","long"],"default":null},{"name":"p","type":["null","string"],"default":null},'
         '{"name":"ts","type":["null","long"],"default":null},{"name":"v","type":["null","string"],"default":null}]}')
# HoodieCDCUtils.schemaBySupplementalLoggingMode, as Avro's Schema.toString prints it:
# OP_KEY_ONLY: the constant CDC_SCHEMA_OP_AND_RECORDKEY_STRING (record `Record`, unions string first, no defaults);
# DATA_BEFORE / DATA_BEFORE_AFTER: createCDCSchema, record `CDC` without namespace, fields of
# createNullableSchema (null first) with doc "" and default null, in the order op, record_key, before /
# op, ts_ms, before, after; the second image refers to the table record by its full name.
SCHEMAS = {
    "OP_KEY_ONLY": '{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
                   '{"name":"record_key","type":["string","null"]}]}',
    "DATA_BEFORE": '{"type":"record","name":"CDC","fields":[{"name":"op","type":["null","string"],"doc":"","default":null},'
                   '{"name":"record_key","type":["null","string"],"doc":"","default":null},'
                   '{"name":"before","type":["null",' + IMAGE + '],"doc":"","default":null}]}',
    "DATA_BEFORE_AFTER": '{"type":"record","name":"CDC","fields":[{"name":"op","type":["null","string"],"doc":"","default":null},'
                         '{"name":"ts_ms","type":["null","string"],"doc":"","default":null},'
                         '{"name":"before","type":["null",' + IMAGE + '],"doc":"","default":null},'
                         '{"name":"after","type":["null","hoodie.t.t_record"],"doc":"","default":null}]}',
}
CDC_NAME = re.compile(r"^\.(?P<fid>[^_]+)_(?P<instant>\d+)\.log\.1_(?P<token>\d+-\d+-\d+)\.cdc$")

ROWS = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "p": ["a", "a", "a", "b"],
                 "ts": pa.array([1, 1, 1, 1], pa.int64()), "v": ["x", "y", "z", "w"]})


def options(mode: str | None = "DATA_BEFORE_AFTER", table_type: str = "COPY_ON_WRITE", **more: str) -> dict:
    o = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": table_type, "hoodie.table.cdc.enabled": "true"}
    if mode is not None:
        o["hoodie.table.cdc.supplemental.logging.mode"] = mode
    return o | more


def rows(ids: list[int], p: list[str], ts: int, v: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "p": p, "ts": pa.array([ts] * len(ids), pa.int64()), "v": v})


def cdc_files(path: Path) -> list[Path]:
    return sorted(f for f in path.rglob("*.cdc") if ".hoodie" not in f.parts)


def commit_metadata(path: Path, instant: str) -> CommitMetadata:
    storage, base = Storage.for_uri(str(path))
    timeline = Timeline.load(TableLocation.at(storage, base))
    return timeline.commit_metadata(timeline.completed_commits().instants_at(instant)[0])


def cdc_stats(path: Path, instant: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in commit_metadata(path, instant).write_stats():
        out |= s.cdc_stats or {}
    return out


def read_cdc(file: Path, instant: str, mode: str) -> list[dict]:
    """The records of a CDC log file through the engine's log reader; checks its blocks' type and header."""
    blocks = read_log_blocks(file.read_bytes(), file_name=file.name)
    assert blocks, file
    out: list[dict] = []
    for b in blocks:
        assert b.block_type is BlockType.CDC_DATA
        assert list(b.header) == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
        assert b.header[HeaderKey.INSTANT_TIME] == instant
        assert b.header[HeaderKey.SCHEMA] == SCHEMAS[mode]
        assert b.footer == {}
        records = data_block_records(b).to_pylist()
        assert records == _fastavro_records(b.content, json.loads(b.header[HeaderKey.SCHEMA]))
        out += records
    return out


def _fastavro_records(content: bytes, schema: dict) -> list[dict]:
    """The block's records decoded by fastavro, an Avro implementation independent of the engine's codec: content
    version 3, record count, then length-prefixed records (HoodieAvroDataBlock)."""
    version, count = struct.unpack_from(">ii", content, 0)
    assert version == 3
    parsed = fastavro.parse_schema(schema)
    out, pos = [], 8
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        buf = io.BytesIO(content[pos + 4:pos + 4 + length])
        out.append(fastavro.schemaless_reader(buf, parsed, None))
        assert buf.tell() == length
        pos += 4 + length
    assert pos == len(content)
    return out


def image(id_: int, p: str, ts: int, v: str) -> dict:
    return {"id": id_, "p": p, "ts": ts, "v": v}


def change(mode: str, op: str, instant: str, key: int, before: dict | None, after: dict | None) -> dict:
    """The CDC record `HoodieCDCLogger`'s transformer builds for one change in `mode`."""
    if mode == "OP_KEY_ONLY":
        return {"op": op, "record_key": str(key)}
    if mode == "DATA_BEFORE":
        return {"op": op, "record_key": str(key), "before": before}
    return {"op": op, "ts_ms": instant, "before": before, "after": after}


def by_op_and_key(records: list[dict]) -> list[dict]:
    def key(r: dict) -> tuple:
        img = r.get("before") or r.get("after") or {}
        return r["op"], r.get("record_key") or str(img.get("id"))
    return sorted(records, key=key)


def expect_snapshot(path: Path, data: pa.Table) -> None:
    """Our reader and hudi-rs both read exactly `data` (data columns, by key)."""
    ours = HudiTable.load(str(path)).read_snapshot()
    theirs = rs_snapshot(path)
    assert_same_rows(ours, theirs, f"snapshot of {path}")
    got = sorted(ours.drop_columns(list(META_COLUMNS)).to_pylist(), key=lambda r: r["id"])
    assert got == sorted(data.to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("mode", MODES)
def test_cow_upsert_and_delete_write_one_cdc_record_per_change(tmp_path, mode):
    path = tmp_path / "t"
    first = write(path, ROWS, options(mode))
    assert cdc_files(path) == [] and cdc_stats(path, first.instant_time) == {}  # new file groups: inferred
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc.enabled=true" in props and f"hoodie.table.cdc.supplemental.logging.mode={mode}" in props

    # id 2 updated, id 5 new (packed into partition a's small file group), partition b untouched.
    up = write(path, rows([2, 5], ["a", "a"], 2, ["Y", "new"]), options(mode))
    [cdc] = cdc_files(path)
    m = CDC_NAME.match(cdc.name)
    assert m and m["instant"] == up.instant_time and cdc.parent.name == "a"
    [stat] = commit_metadata(path, up.instant_time).write_stats()
    assert m["fid"] == stat.file_id and stat.path.endswith(f"_{m['token']}_{up.instant_time}.parquet")
    assert stat.cdc_stats == {f"a/{cdc.name}": cdc.stat().st_size}
    assert LogFileName.parse(cdc.name).suffix == ".cdc"
    assert by_op_and_key(read_cdc(cdc, up.instant_time, mode)) == by_op_and_key([
        change(mode, "u", up.instant_time, 2, image(2, "a", 1, "y"), image(2, "a", 2, "Y")),
        change(mode, "i", up.instant_time, 5, None, image(5, "a", 2, "new")),
    ])

    gone = write(path, rows([3, 99], ["a", "a"], 3, ["z", "?"]),
                 options(mode, **{"hoodie.datasource.write.operation": "delete"}))
    [new] = [f for f in cdc_files(path) if f != cdc]
    assert cdc_stats(path, gone.instant_time) == {f"a/{new.name}": new.stat().st_size}
    assert read_cdc(new, gone.instant_time, mode) == [  # the delete of a key the table lacks changes nothing
        change(mode, "d", gone.instant_time, 3, image(3, "a", 1, "z"), None)]
    expect_snapshot(path, pa.table({"id": pa.array([1, 2, 4, 5], pa.int64()), "p": ["a", "a", "b", "a"],
                                    "ts": pa.array([1, 2, 1, 2], pa.int64()), "v": ["x", "Y", "w", "new"]}))


def test_no_cdc_file_where_hudi_infers_the_changes(tmp_path):
    """HoodieMergeHandleWithChangeLog.close writes nothing when no stored row is left (every row deleted: the
    extractor's BASE_FILE_DELETE); new file groups are BASE_FILE_INSERT; insert_overwrite's replaced groups
    REPLACE_COMMIT."""
    path = tmp_path / "t"
    write(path, ROWS, options())
    gone = write(path, rows([4], ["b"], 2, ["w"]), options(**{"hoodie.datasource.write.operation": "delete"}))
    assert cdc_files(path) == [] and cdc_stats(path, gone.instant_time) == {}
    [stat] = commit_metadata(path, gone.instant_time).write_stats()
    assert (stat.num_writes, stat.num_deletes) == (0, 1)
    over = write(path, rows([7], ["a"], 3, ["o"]), options(**{"hoodie.datasource.write.operation": "insert_overwrite"}))
    assert cdc_files(path) == [] and cdc_stats(path, over.instant_time) == {}
    expect_snapshot(path, rows([7], ["a"], 3, ["o"]))


def test_an_update_the_stored_record_wins_is_no_change(tmp_path):
    """With an ordering field, an incoming record older than the stored one loses: Hudi copies the old record
    (HoodieMergeHandle.writeUpdateRecord returns false) and logs nothing for it; the file still gets its CDC
    file (a stored row is kept), with only the real changes."""
    path = tmp_path / "t"
    o = options(**{"hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"})
    write(path, ROWS.set_column(2, "ts", pa.array([5, 5, 5, 5], pa.int64())), o)
    up = write(path, pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "a"],
                               "ts": pa.array([1, 9], pa.int64()), "v": ["old", "newer"]}), o)
    [cdc] = cdc_files(path)
    assert read_cdc(cdc, up.instant_time, "DATA_BEFORE_AFTER") == [
        change("DATA_BEFORE_AFTER", "u", up.instant_time, 2, image(2, "a", 5, "y"), image(2, "a", 9, "newer"))]


def test_cdc_blocks_are_cut_at_the_log_block_max_size(tmp_path):
    path = tmp_path / "t"
    write(path, ROWS, options())
    up = write(path, rows([1, 2, 3], ["a", "a", "a"], 2, ["p" * 300, "q" * 300, "r" * 300]),
               options(**{"hoodie.logfile.data.block.max.size": "400"}))
    [cdc] = cdc_files(path)
    blocks = read_log_blocks(cdc.read_bytes(), file_name=cdc.name)
    assert len(blocks) == 3  # about 340 bytes per change record: one record per block
    assert sorted(r["after"]["v"][0] for r in read_cdc(cdc, up.instant_time, "DATA_BEFORE_AFTER")) == ["p", "q", "r"]


@pytest.mark.parametrize("mode", ["op_key_only", "data_before", "DATA_BEFORE_AFTER"])  # 0.13's spelling reads too
def test_a_conformance_table_with_cdc_turned_on_gets_cdc_files_of_every_type(unzip_table, tmp_path, mode):
    """A real Hudi 0.14 table (every column type: decimal fixed, date, timestamp, bytes, array, map, nested
    struct) with the table properties set: the images hold every column as the reader decodes it."""
    path = tmp_path / "v6_nonpartitioned"
    shutil.copytree(unzip_table("cow_v6_nonpartitioned"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + f"hoodie.table.cdc.enabled=true\nhoodie.table.cdc.supplemental.logging.mode={mode}\n")
    before = HudiTable.load(str(path)).read_snapshot()
    data = before.drop_columns(list(META_COLUMNS))
    key = data.column("id")[0].as_py()
    row = data.filter(pa.compute.equal(data.column("id"), key))
    changed = row.set_column(data.schema.get_field_index("name"), "name", pa.array(["Zed"]))
    changed = changed.set_column(data.schema.get_field_index("longField"), "longField",
                                 pa.array([row.column("longField")[0].as_py() + 1], pa.int64()))
    up = write(path, changed, {"hoodie.table.name": "v6_nonpartitioned", "hoodie.datasource.write.recordkey.field": "id"})
    [cdc] = cdc_files(path)
    assert cdc_stats(path, up.instant_time) == {cdc.name: cdc.stat().st_size}  # non-partitioned: the bare name
    [block] = read_log_blocks(cdc.read_bytes(), file_name=cdc.name)
    assert block.block_type is BlockType.CDC_DATA and block.header[HeaderKey.INSTANT_TIME] == up.instant_time
    schema = json.loads(block.header[HeaderKey.SCHEMA])
    image = "hoodie.v6_nonpartitioned.v6_nonpartitioned_record"
    [rec] = data_block_records(block).to_pylist()
    if mode == "op_key_only":
        assert schema == json.loads(SCHEMAS["OP_KEY_ONLY"])
        assert rec == {"op": "u", "record_key": str(key)}
    elif mode == "data_before":
        assert [f["name"] for f in schema["fields"]] == ["op", "record_key", "before"]
        assert schema["fields"][2]["type"][1]["namespace"] + "." + schema["fields"][2]["type"][1]["name"] == image
        assert rec == {"op": "u", "record_key": str(key), "before": row.to_pylist()[0]}
    else:
        assert [f["name"] for f in schema["fields"]] == ["op", "ts_ms", "before", "after"]
        assert schema["fields"][3]["type"] == ["null", image]
        assert rec == {"op": "u", "ts_ms": up.instant_time, "before": row.to_pylist()[0],
                       "after": changed.to_pylist()[0]}
    after = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(after, rs_snapshot(path), "conformance table after a CDC upsert")
    assert after.num_rows == before.num_rows


@pytest.mark.parametrize("mode", MODES)
def test_a_mor_conformance_table_with_cdc_turned_on_writes_no_cdc_file(unzip_table, tmp_path, mode):
    """A real MOR table: an upsert appends a log file, a compaction (SIMPLE index) merges it: all inferred."""
    path = tmp_path / "t"
    shutil.copytree(unzip_table("mor_parquetlog_v6_nonpartitioned"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + f"hoodie.table.cdc.enabled=true\nhoodie.table.cdc.supplemental.logging.mode={mode}\n")
    table = HudiTable.load(str(path))
    data = table.read_snapshot().drop_columns(list(META_COLUMNS))
    row = data.slice(0, 1)
    changed = row.set_column(data.schema.get_field_index("name"), "name", pa.array(["Zed"]))
    changed = changed.set_column(data.schema.get_field_index("longField"), "longField",
                                 pa.array([row.column("longField")[0].as_py() + 1], pa.int64()))
    o = {"hoodie.table.name": table.config.name, "hoodie.datasource.write.recordkey.field": "id"}
    up = write(path, changed, o)
    assert cdc_files(path) == [] and cdc_stats(path, up.instant_time) == {}
    done = HudiTable.load(str(path)).compact(options=o)
    assert done is not None and cdc_files(path) == [] and cdc_stats(path, done.instant_time) == {}
    after = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(after, rs_snapshot(path), "MOR conformance table after a CDC upsert and a compaction")
    assert after.filter(pa.compute.equal(after.column("id"), row.column("id")[0])).column("name").to_pylist() == ["Zed"]


def test_mor_writes_log_files_and_new_file_groups_only(tmp_path):
    """A MOR write appends log files (HoodieAppendHandle writes no CDC file: the extractor's LOG_FILE case reads
    the change from the log file and the slice before it) and creates file groups (BASE_FILE_INSERT)."""
    path = tmp_path / "t"
    mor = options(table_type="MERGE_ON_READ")
    first = write(path, ROWS, mor)
    up = write(path, rows([2, 6], ["a", "c"], 2, ["Y", "n"]), mor)
    gone = write(path, rows([3], ["a"], 3, ["z"]), mor | {"hoodie.datasource.write.operation": "delete"})
    assert cdc_files(path) == []
    for instant in (first.instant_time, up.instant_time, gone.instant_time):
        assert cdc_stats(path, instant) == {}
    assert any(f.name.startswith(".") and ".log." in f.name for f in (path / "a").iterdir())
    expect_snapshot(path, pa.table({"id": pa.array([1, 2, 4, 6], pa.int64()), "p": ["a", "a", "b", "c"],
                                    "ts": pa.array([1, 2, 1, 2], pa.int64()), "v": ["x", "Y", "w", "n"]}))


def test_a_failed_write_leaves_no_cdc_file(tmp_path):
    path = tmp_path / "t"
    write(path, ROWS, options())
    before = sorted(p.relative_to(path) for p in path.rglob("*") if ".hoodie" not in p.parts)
    client = WriteClient.open(table_for_write(str(path)), WriteConfig.from_options(options()), ROWS.schema)
    with pytest.raises(RuntimeError, match="task failed"):
        with client.transaction() as txn:
            write_files(client, txn, rows([1], ["a"], 2, ["X"]))
            assert len(cdc_files(path)) == 1  # written, with a CREATE marker
            marker_dir = path / ".hoodie" / ".temp" / txn.instant
            assert [m.name for m in marker_dir.rglob("*.cdc.marker.CREATE")] == [cdc_files(path)[0].name
                                                                                  + ".marker.CREATE"]
            raise RuntimeError("task failed")
    assert cdc_files(path) == []
    assert sorted(p.relative_to(path) for p in path.rglob("*") if ".hoodie" not in p.parts) == before
    expect_snapshot(path, ROWS)


def test_rolling_back_a_completed_commit_deletes_its_cdc_file(tmp_path):
    path = tmp_path / "t"
    write(path, ROWS, options())
    up = write(path, rows([1], ["a"], 2, ["X"]), options())
    assert len(cdc_files(path)) == 1
    storage, base = Storage.for_uri(str(path))
    rollback_completed(TableLocation.at(storage, base), up.instant_time)
    assert cdc_files(path) == []
    expect_snapshot(path, ROWS)


def test_cleaning_deletes_cdc_files_with_their_slice(tmp_path):
    """CleanPlanner deletes a slice's `.cdc` log files with its base file (COW and MOR alike)."""
    path = tmp_path / "t"
    write(path, ROWS, options())
    ups = [write(path, rows([1], ["a"], 2 + i, [f"v{i}"]), options()) for i in range(3)]
    assert len(cdc_files(path)) == 3
    storage, base = Storage.for_uri(str(path))
    location = TableLocation.at(storage, base)
    clean(location, CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=1),
          table=TableConfig.load(location), timeline=Timeline.load(location))
    [kept] = cdc_files(path)
    assert CDC_NAME.match(kept.name)["instant"] == ups[-1].instant_time  # type: ignore[index]
    expect_snapshot(path, ROWS.set_column(3, "v", pa.array(["v2", "y", "z", "w"])).set_column(
        2, "ts", pa.array([4, 1, 1, 1], pa.int64())))


def test_a_logging_mode_hudi_cannot_read_is_refused_before_any_file(unzip_table, tmp_path):
    path = tmp_path / "v6_nonpartitioned"
    shutil.copytree(unzip_table("cow_v6_nonpartitioned"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.cdc.enabled=true\n"
                     "hoodie.table.cdc.supplemental.logging.mode=cdc_data_before\n")
    files = sorted(p.relative_to(path) for p in path.rglob("*"))
    snapshot = rs_snapshot(path)
    data = HudiTable.load(str(path)).read_snapshot().drop_columns(list(META_COLUMNS)).slice(0, 1)
    with pytest.raises(UnsupportedTableFeatureError) as e:
        write(path, data, {"hoodie.table.name": "v6_nonpartitioned", "hoodie.datasource.write.recordkey.field": "id"})
    msg = str(e.value)
    assert str(path) in msg and "hoodie.table.cdc.supplemental.logging.mode=cdc_data_before" in msg
    assert "it is DATA_BEFORE there" in msg
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == files
    assert_same_rows(rs_snapshot(path), snapshot, "unchanged")


def test_cdc_options_are_fixed_when_the_table_is_created(tmp_path):
    path = tmp_path / "t"
    write(path, ROWS, options(mode=None) | {"hoodie.table.cdc.enabled": "false"})
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc" not in props
    with pytest.raises(ConfigError, match="hoodie.table.cdc.enabled='true' contradicts the table's False"):
        write(path, ROWS, options(mode=None))
    cdc = tmp_path / "c"
    write(cdc, ROWS, options(mode=None))  # the default mode is stored with the flag
    assert "hoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE_AFTER" in (cdc / ".hoodie" / "hoodie.properties").read_text()
    with pytest.raises(ConfigError, match="supplemental.logging.mode='OP_KEY_ONLY' contradicts"):
        write(cdc, ROWS, options("OP_KEY_ONLY"))
    write(cdc, rows([1], ["a"], 2, ["x2"]), options("data_before_after"))  # the same mode in any case
    assert len(cdc_files(cdc)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_compacting_a_bucket_index_mor_table_logs_the_changes_of_its_log_files(tmp_path, mode):
    """With the BUCKET index a MOR write sends inserts to log files too, so the extractor cannot tell them from
    updates: Hudi's compaction writes the CDC log file then (HoodieMergeHandleFactory, compaction path: CDC enabled
    and `isYieldingPureLogForMor`), `ts_ms` the compaction instant, one record per key the logs changed."""
    path = tmp_path / "t"
    bucket = options(mode, table_type="MERGE_ON_READ", **{"hoodie.index.type": "BUCKET",
                                                          "hoodie.bucket.index.num.buckets": "1"})
    write(path, ROWS, bucket)
    write(path, rows([2, 5], ["a", "a"], 2, ["Y", "new"]), bucket)  # an update and an insert, both into a's log
    write(path, rows([3], ["a"], 3, ["z"]), bucket | {"hoodie.datasource.write.operation": "delete"})
    assert cdc_files(path) == []  # deltacommits: HoodieAppendHandle logs no change
    done = HudiTable.load(str(path)).compact(options=bucket)
    assert done is not None
    c = done.instant_time
    [cdc] = cdc_files(path)
    assert CDC_NAME.match(cdc.name)["instant"] == c  # type: ignore[index]
    assert cdc_stats(path, c) == {f"a/{cdc.name}": cdc.stat().st_size}
    assert by_op_and_key(read_cdc(cdc, c, mode)) == by_op_and_key([
        change(mode, "u", c, 2, image(2, "a", 1, "y"), image(2, "a", 2, "Y")),
        change(mode, "i", c, 5, None, image(5, "a", 2, "new")),
        change(mode, "d", c, 3, image(3, "a", 1, "z"), None),
    ])
    expect_snapshot(path, pa.table({"id": pa.array([1, 2, 4, 5], pa.int64()), "p": ["a", "a", "b", "a"],
                                    "ts": pa.array([1, 2, 1, 2], pa.int64()), "v": ["x", "Y", "w", "new"]}))

    # The next log file joins the slice the CDC file is in; the next compaction merges the log files only.
    write(path, rows([1], ["a"], 4, ["X"]), bucket)
    expect_snapshot(path, pa.table({"id": pa.array([1, 2, 4, 5], pa.int64()), "p": ["a", "a", "b", "a"],
                                    "ts": pa.array([4, 2, 1, 2], pa.int64()), "v": ["X", "Y", "w", "new"]}))
    again = HudiTable.load(str(path)).compact(options=bucket)
    assert again is not None
    [second] = [f for f in cdc_files(path) if f != cdc]
    assert by_op_and_key(read_cdc(second, again.instant_time, mode)) == [
        change(mode, "u", again.instant_time, 1, image(1, "a", 1, "x"), image(1, "a", 4, "X"))]
    [op] = [s for s in commit_metadata(path, again.instant_time).write_stats()]
    assert op.total_log_files_compacted == 1


def test_compaction_with_another_index_writes_no_cdc_file(tmp_path):
    """SIMPLE / BLOOM put inserts into new base files and updates into log files, both of which the extractor
    reads (BASE_FILE_INSERT, LOG_FILE): the compaction merges with a plain merge handle."""
    path = tmp_path / "t"
    mor = options(table_type="MERGE_ON_READ")
    write(path, ROWS, mor)
    write(path, rows([2], ["a"], 2, ["Y"]), mor)
    done = HudiTable.load(str(path)).compact(options=mor)
    assert done is not None and cdc_files(path) == [] and cdc_stats(path, done.instant_time) == {}


def test_an_insert_packed_into_a_small_file_group_logs_inserts(tmp_path):
    """operation=insert merges new keys into a small file group through the merge handle, which is
    HoodieMergeHandleWithChangeLog on a CDC table (HoodieConcatHandle only with allow-duplicate-inserts): `i`
    records only, stored rows untouched."""
    path = tmp_path / "t"
    write(path, ROWS, options("OP_KEY_ONLY"))
    ins = write(path, rows([7, 8], ["b", "b"], 2, ["s", "t"]), options("OP_KEY_ONLY", **{
        "hoodie.datasource.write.operation": "insert"}))
    [cdc] = cdc_files(path)
    assert cdc.parent.name == "b"
    assert by_op_and_key(read_cdc(cdc, ins.instant_time, "OP_KEY_ONLY")) == [
        {"op": "i", "record_key": "7"}, {"op": "i", "record_key": "8"}]
    expect_snapshot(path, pa.concat_tables([ROWS, rows([7, 8], ["b", "b"], 2, ["s", "t"])]))


def test_a_table_without_meta_fields_logs_every_met_record_as_an_update(unzip_table, tmp_path):
    """`hoodie.populate.meta.fields=false`: keys come from the key generator, and every stored record an incoming
    one met is a `u` (no commit time tells a kept row from a rewritten one; docs/cdc.md)."""
    path = tmp_path / "t"
    shutil.copytree(unzip_table("cow_v6_simplekeygen_hivestyle_no_metafields"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.cdc.enabled=true\nhoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE\n")
    table = HudiTable.load(str(path))
    snapshot = table.read_snapshot()
    data = snapshot.drop_columns([c for c in META_COLUMNS if c in snapshot.column_names])
    biggest = max(set(data.column("byteField").to_pylist()), key=data.column("byteField").to_pylist().count)
    group = data.filter(pa.compute.equal(data.column("byteField"), biggest))
    assert group.num_rows > 1  # the file group keeps rows the write does not touch
    row = group.slice(0, 1)
    changed = row.set_column(data.schema.get_field_index("name"), "name", pa.array(["Zed"]))
    changed = changed.set_column(data.schema.get_field_index("longField"), "longField",
                                 pa.array([row.column("longField")[0].as_py() + 1], pa.int64()))
    up = write(path, changed, {"hoodie.table.name": table.config.name, "hoodie.datasource.write.recordkey.field": "id"})
    [cdc] = cdc_files(path)
    assert cdc.parent.name == f"byteField={row.column('byteField')[0].as_py()}"
    [block] = read_log_blocks(cdc.read_bytes(), file_name=cdc.name)
    assert block.header[HeaderKey.INSTANT_TIME] == up.instant_time
    assert data_block_records(block).to_pylist() == [
        {"op": "u", "record_key": str(row.column("id")[0].as_py()), "before": row.to_pylist()[0]}]
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "no-meta-fields CDC table",
                     key="id")


def test_compacting_a_bucket_cdc_table_without_meta_fields_is_refused_before_any_file(tmp_path):
    """Without sequence numbers a compaction cannot tell the log record that won from the stored row that stayed:
    refused, the plan left requested and no file written."""
    path = tmp_path / "t"
    storage, base = Storage.for_uri(str(path))
    create_table(TableLocation.at(storage, base), TableConfig.create(
        "t", "MERGE_ON_READ", ["id"], ["p"], "ts", populate_meta_fields=False,
        extra={"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "OP_KEY_ONLY"}))
    bucket = options("OP_KEY_ONLY", table_type="MERGE_ON_READ", **{"hoodie.index.type": "BUCKET",
                                                                   "hoodie.bucket.index.num.buckets": "1"})
    write(path, ROWS, bucket)
    write(path, rows([2], ["a"], 2, ["Y"]), bucket)
    schedule_compaction(TableLocation.at(storage, base))
    files = sorted(p.relative_to(path) for p in path.rglob("*") if ".temp" not in p.parts)
    with pytest.raises(WriteError) as e:
        HudiTable.load(str(path)).compact(options=bucket)
    assert str(path) in str(e.value) and "hoodie.populate.meta.fields=false" in str(e.value)
    assert "hoodie.index.type=BUCKET" in str(e.value)
    assert sorted(p.relative_to(path) for p in path.rglob("*") if ".temp" not in p.parts) == files
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "unchanged", key="id")
