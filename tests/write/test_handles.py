"""Write markers and the three write handles (create, merge, append), checked file by file."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_engine.config import BloomConfig, LogConfig
from hudi_engine.errors import WriteError
from hudi_engine.file_naming import BaseFileName, LogFileName
from hudi_engine.io import base_file
from hudi_engine.io.base_file import dictionary_choices, read_base_file, read_footer
from hudi_engine.io.log_block import BlockType, build_avro_data_block, data_block_records, delete_block_keys
from hudi_engine.io.log_format import encode_block, read_log_blocks
from hudi_engine.keygen import key_generator_for
from hudi_engine.location import TableLocation
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.write.handles import (
    AppendHandle,
    CreateHandle,
    MergeHandle,
    WriteContext,
    WriteHandle,
    append_handle,
    avro_data_blocks,
    create_handle,
    list_log_files,
    log_base_instant,
    merge_handle,
    prepare_records,
)
from hudi_engine.write.markers import IOType, Marker, create_marker, delete_marker_dir, list_markers, marker_dir

T1, T2, T3 = "20250101000000000", "20250102000000000", "20250103000000000"
DATA = pa.table({
    "id": ["k1", "k2", "k3"],
    "city": ["sf", "sf", "la"],
    "ts": pa.array([1, 2, 3], pa.int64()),
    "fare": [10.0, 20.0, 30.0],
})


def _table(tmp_path: Path, table_type: str = "COPY_ON_WRITE", **kw) -> tuple[Storage, str, TableConfig]:
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig.create("trips", table_type, ["id"], ["city"], "ts", hive_style=True, **kw)
    config.initialize(TableLocation.at(storage, base))
    action = Action.DELTA_COMMIT if table_type == "MERGE_ON_READ" else Action.COMMIT
    _pending(storage, base, T1, T2, T3, action=action)
    return storage, base, config


def _pending(storage: Storage, base: str, *instants: str, action: Action = Action.COMMIT) -> None:
    """Requested instants on the timeline: a handle writes files only for an instant that is still pending."""
    for ts in instants:
        Timeline(TableLocation.at(storage, base), []).create_requested(Instant(ts, action, State.REQUESTED))


def _ctx(storage, base, config, instant, **kw) -> WriteContext:
    return WriteContext.create(TableLocation.at(storage, base), config, instant, DATA.schema, **kw)


def _rows(data: pa.Table, city: str) -> pa.Table:
    return data.filter(pc.equal(data["city"], city))


# --------------------------------------------------------------------------------------------- markers


def test_markers_are_created_listed_and_deleted(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _pending(storage, base, T1)
    create_marker(TableLocation.at(storage, base), T1, "a/b", "f1_0-1-2_%s.parquet" % T1, IOType.CREATE)
    create_marker(TableLocation.at(storage, base), T1, "", "f2_0-1-2_%s.parquet" % T1, "MERGE")
    create_marker(TableLocation.at(storage, base), T1, "a", ".f3_%s.log.1_0-1-2" % T1, IOType.APPEND)
    assert (tmp_path / ".hoodie/.temp" / T1 / "a/b" / f"f1_0-1-2_{T1}.parquet.marker.CREATE").is_file()
    assert (tmp_path / ".hoodie/.temp" / T1 / f"f2_0-1-2_{T1}.parquet.marker.MERGE").is_file()
    markers = list_markers(TableLocation.at(storage, base), T1)
    assert [m.relative_path for m in markers] == [
        f"a/.f3_{T1}.log.1_0-1-2.marker.APPEND", f"a/b/f1_0-1-2_{T1}.parquet.marker.CREATE",
        f"f2_0-1-2_{T1}.parquet.marker.MERGE"]
    assert markers[0] == Marker("a", f".f3_{T1}.log.1_0-1-2", IOType.APPEND)
    assert markers[1].data_file_path == f"a/b/f1_0-1-2_{T1}.parquet"
    assert list_markers(TableLocation.at(storage, base), T2) == []
    assert delete_marker_dir(TableLocation.at(storage, base), T1) is True
    assert not storage.exists(marker_dir(TableLocation.at(storage, base), T1))
    assert delete_marker_dir(TableLocation.at(storage, base), T1) is False


def test_a_second_marker_for_the_same_file_is_refused(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    _pending(storage, base, T1)
    create_marker(TableLocation.at(storage, base), T1, "p", "f_0-1-2_1.parquet", IOType.CREATE)
    with pytest.raises(WriteError, match="already exists"):
        create_marker(TableLocation.at(storage, base), T1, "p", "f_0-1-2_1.parquet", IOType.CREATE)


def test_timeline_server_markers_are_read(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path))
    folder = marker_dir(TableLocation.at(storage, base), T1)
    storage.write_bytes(Storage.join(folder, "MARKERS.type"), b"TIMELINE_SERVER_BASED")
    storage.write_bytes(Storage.join(folder, "MARKERS0"), b"p1/a_0-1-2_1.parquet.marker.CREATE\np2/.b_1.log.1_0-1-2.marker.APPEND\n")
    storage.write_bytes(Storage.join(folder, "MARKERS1"), b"c_0-1-2_1.parquet.marker.MERGE\n")
    assert [str(m) for m in list_markers(TableLocation.at(storage, base), T1)] == [
        "c_0-1-2_1.parquet.marker.MERGE", "p1/a_0-1-2_1.parquet.marker.CREATE", "p2/.b_1.log.1_0-1-2.marker.APPEND"]


@pytest.mark.parametrize("bad", ["p/file.parquet", "p/file.parquet.marker.DELETE", ".marker.CREATE"])
def test_bad_marker_names_are_refused(bad):
    with pytest.raises(WriteError, match="marker"):
        Marker.parse(bad)


# --------------------------------------------------------------------------------------------- prepare_records


def test_prepare_records_puts_meta_columns_first_with_hudi_sequence_numbers():
    keygen = key_generator_for("org.apache.hudi.keygen.SimpleKeyGenerator", ["id"], ["city"], hive_style=True)
    out = prepare_records(DATA, instant=T1, keygen=keygen, partition_path=None, file_name="f.parquet",
                          task_partition_id=7, start_index=5)
    assert out.column_names == [*META_COLUMNS, *DATA.column_names]
    assert out.column("_hoodie_commit_time").to_pylist() == [T1] * 3
    assert out.column("_hoodie_commit_seqno").to_pylist() == [f"{T1}_7_5", f"{T1}_7_6", f"{T1}_7_7"]
    assert out.column("_hoodie_record_key").to_pylist() == ["k1", "k2", "k3"]
    assert out.column("_hoodie_partition_path").to_pylist() == ["city=sf", "city=sf", "city=la"]
    assert out.column("_hoodie_file_name").to_pylist() == ["f.parquet"] * 3
    assert out.select(DATA.column_names).equals(DATA)


def test_prepare_records_takes_upstream_key_columns_and_checks_the_partition():
    rows = DATA.append_column("_hoodie_record_key", pa.array(["x1", "x2", "x3"]))
    rows = rows.append_column("_hoodie_partition_path", pa.array(["p", "p", "q"]))
    with pytest.raises(WriteError, match=r"'x3' \(row 2\) has partition path 'q'"):
        prepare_records(rows, instant=T1, partition_path="p", file_name="f", task_partition_id=0)
    out = prepare_records(rows.slice(0, 2), instant=T1, partition_path="p", file_name="f", task_partition_id=0)
    assert out.column("_hoodie_record_key").to_pylist() == ["x1", "x2"]
    assert out.column_names == [*META_COLUMNS, *DATA.column_names]


def test_prepare_records_refuses_null_keys_and_nulls_meta_when_meta_fields_are_off():
    rows = DATA.append_column("_hoodie_record_key", pa.array(["x1", None, "x3"]))
    with pytest.raises(WriteError, match="null at row 1"):
        prepare_records(rows, instant=T1, partition_path="p", file_name="f", task_partition_id=0)
    keygen = key_generator_for(None, ["id"], ["city"])
    out = prepare_records(DATA, instant=T1, keygen=keygen, partition_path="sf", file_name="f", task_partition_id=0,
                          populate_meta_fields=False)
    assert all(out.column(c).null_count == 3 for c in META_COLUMNS)


# --------------------------------------------------------------------------------------------- create


def test_create_handle_writes_a_new_file_group_with_marker_footer_and_stat(tmp_path):
    storage, base, config = _table(tmp_path)
    ctx = _ctx(storage, base, config, T1).for_task(3, 13, 60)
    stat = create_handle(ctx, "city=sf", _rows(DATA, "sf"))
    name = BaseFileName.parse(stat.path.split("/")[1])
    assert (name.file_id, name.write_token, name.instant_time) == (stat.file_id, "3-13-60", T1)
    assert stat.file_id.endswith("-0") and "_" not in stat.file_id
    assert (stat.prev_commit, stat.num_writes, stat.num_inserts, stat.partition_path) == ("null", 2, 2, "city=sf")
    path = tmp_path / "t" / stat.path
    assert stat.file_size_in_bytes == stat.total_write_bytes == path.stat().st_size
    assert [m.relative_path for m in list_markers(TableLocation.at(storage, base), T1)] == [f"{stat.path}.marker.CREATE"]
    rows = pq.read_table(path)
    assert rows.column_names == [*META_COLUMNS, "id", "city", "ts", "fare"]
    assert rows.column("_hoodie_commit_seqno").to_pylist() == [f"{T1}_3_0", f"{T1}_3_1"]
    assert rows.column("_hoodie_file_name").to_pylist() == [path.name] * 2
    footer = read_footer(storage, str(path))
    assert (footer.min_key, footer.max_key) == ("k1", "k2")
    assert footer.bloom_filter.might_contain("k1") and footer.bloom_filter.might_contain("k2")
    assert footer.metadata["hoodie_bloom_filter_type_code"] == "DYNAMIC_V0"
    assert pq.read_metadata(path).row_group(0).column(0).compression == "SNAPPY"  # the write config's default


def test_create_handle_conforms_types_to_the_writer_schema_and_drops_deleted_records(tmp_path):
    storage, base, config = _table(tmp_path)
    schema = pa.schema([("id", pa.string()), ("city", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()),
                        ("_hoodie_is_deleted", pa.bool_())])
    ctx = WriteContext.create(TableLocation.at(storage, base), config, T1, schema)
    rows = pa.table({"id": ["a", "b"], "city": ["sf", "sf"], "ts": pa.array([1, 2], pa.int32()),
                     "_hoodie_is_deleted": [False, True], "helper": [1, 2]})
    stat = create_handle(ctx, "city=sf", rows)
    out = pq.read_table(tmp_path / "t" / stat.path)
    assert out.schema.field("ts").type == pa.int64()
    assert out.column("fare").to_pylist() == [None]  # absent column: null
    assert "helper" not in out.column_names
    assert out.column("id").to_pylist() == ["a"] and stat.num_inserts == 1


def test_create_handle_refuses_an_empty_batch(tmp_path):
    storage, base, config = _table(tmp_path)
    with pytest.raises(WriteError, match="no records"):
        create_handle(_ctx(storage, base, config, T1), "city=sf", DATA.slice(0, 0))


# --------------------------------------------------------------------------------------------- merge


def test_merge_handle_updates_inserts_deletes_and_carries_untouched_rows(tmp_path):
    storage, base, config = _table(tmp_path)
    data = pa.table({"id": ["k1", "k2", "k3"], "city": ["sf"] * 3, "ts": pa.array([1, 2, 3], pa.int64()),
                     "fare": [1.0, 2.0, 3.0]})
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", data)
    incoming = pa.table({"id": ["k1", "k9"], "city": ["sf", "sf"], "ts": pa.array([5, 6], pa.int64()),
                         "fare": [10.0, 90.0]})
    ctx = _ctx(storage, base, config, T2).for_task(1, 2, 3)
    stat = merge_handle(ctx, "city=sf", first.file_id, str(tmp_path / "t" / first.path), incoming, deletes=["k2"])
    assert (stat.file_id, stat.prev_commit) == (first.file_id, T1)
    assert (stat.num_writes, stat.num_update_writes, stat.num_inserts, stat.num_deletes) == (3, 1, 1, 1)
    name = stat.path.split("/")[1]
    assert BaseFileName.parse(name) == BaseFileName(first.file_id, "1-2-3", T2)
    out = {r["id"]: r for r in pq.read_table(tmp_path / "t" / stat.path).to_pylist()}
    assert sorted(out) == ["k1", "k3", "k9"]
    assert (out["k1"]["fare"], out["k1"]["_hoodie_commit_time"], out["k1"]["_hoodie_commit_seqno"]) == (10.0, T2, f"{T2}_1_0")
    assert (out["k9"]["_hoodie_commit_time"], out["k9"]["_hoodie_commit_seqno"]) == (T2, f"{T2}_1_1")
    # untouched: old commit time and seqno, new file name
    assert (out["k3"]["_hoodie_commit_time"], out["k3"]["_hoodie_commit_seqno"]) == (T1, f"{T1}_0_2")
    assert {r["_hoodie_file_name"] for r in out.values()} == {name}
    assert [m.relative_path for m in list_markers(TableLocation.at(storage, base), T2)] == [f"{stat.path}.marker.MERGE"]
    footer = read_footer(storage, str(tmp_path / "t" / stat.path))
    assert (footer.min_key, footer.max_key) == ("k1", "k9")


def test_merge_handle_writes_plain_what_the_old_file_holds_plain_and_judges_the_rest(tmp_path, monkeypatch):
    """A data column the old file holds plain is written plain again without judging its values; a string column it
    dictionary-encodes comes as a dictionary array and keeps it; the others are judged on the merged rows (here:
    dictionary kept)."""
    storage, base, config = _table(tmp_path)
    data = pa.table({"id": [f"k{i}" for i in range(50)], "city": ["sf"] * 50, "ts": pa.array(range(50), pa.int64()),
                     "fare": [float(i % 3) for i in range(50)]})
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", data)
    old = pq.read_metadata(tmp_path / "t" / first.path)
    assert dictionary_choices(old) == {**{c: c not in ("_hoodie_commit_seqno", "_hoodie_record_key") for c in
                                          META_COLUMNS}, "id": False, "city": True, "ts": False, "fare": True}
    judged: list[pa.ChunkedArray] = []
    monkeypatch.setattr(base_file, "_dictionary_pays", lambda column: judged.append(column) or True)
    incoming = pa.table({"id": ["k1", "k90"], "city": ["sf", "sf"], "ts": pa.array([5, 6], pa.int64()),
                         "fare": [10.0, 90.0]})
    stat = merge_handle(_ctx(storage, base, config, T2), "city=sf", first.file_id, str(tmp_path / "t" / first.path),
                        incoming)
    assert [c.to_pylist()[:2] for c in judged] == [[0.0, 10.0]]  # fare, in merged order (city: a dictionary)
    assert dictionary_choices(pq.read_metadata(tmp_path / "t" / stat.path)) == dictionary_choices(old)


def test_merge_handle_lays_out_dictionary_encoded_columns_as_dictionaries(tmp_path, monkeypatch):
    """A merge reads, lays out and writes the commit time, partition path and file name, and the string columns its
    old file dictionary-encodes, as dictionary indices; its file holds the rows and statistics of a merge through
    strings: an instant no row keeps anymore and a value no row holds anymore left out, a value new to the file in."""
    import shutil

    import hudi_engine.write.handles.merge as merge_module

    monkeypatch.setattr(merge_module, "MERGE_BATCH_ROWS", 7)
    storage, base, config = _table(tmp_path / "a")
    n = 30
    kinds = ["m", "n"] * 14 + ["m", "zz"]
    data = pa.table({"id": [f"k{i:02d}" for i in range(n)], "city": ["sf"] * n, "ts": pa.array([1] * n, pa.int64()),
                     "fare": [float(i) for i in range(n)], "kind": kinds})

    def ctx(storage: Storage, base: str, instant: str) -> WriteContext:
        return WriteContext.create(TableLocation.at(storage, base), config, instant, data.schema)
    first = create_handle(ctx(storage, base, T1), "city=sf", data)
    second = merge_handle(ctx(storage, base, T2), "city=sf", first.file_id,
                          str(tmp_path / "a" / "t" / first.path), data.slice(0, 10))  # T1 and T2 rows
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    # every T1 row, the one "zz" row now "a": a value the old file lacks in, the old file's largest out
    update = data.slice(10).set_column(4, "kind", pa.array(kinds[10:-1] + ["a"]))
    dictionary_columns = [*base_file.FEW_VALUED_COLUMNS, "city", "kind"]
    old_file = pq.ParquetFile(tmp_path / "a" / "t" / second.path)
    assert base_file.dictionary_strings(base_file.dictionary_choices(old_file.metadata), old_file.schema_arrow,
                                        ctx(storage, base, T3).arrow_schema) == dictionary_columns
    given: list[list[pa.DataType]] = []
    write = base_file.BaseFileWriter.write
    monkeypatch.setattr(base_file.BaseFileWriter, "write", lambda self, table: (table.num_rows and given.append(
        [table.schema.field(c).type for c in dictionary_columns])) or write(self, table))
    out = []
    for at in ("a", "b"):
        if at == "b":  # the rows as strings, each column encoded by the writer
            monkeypatch.setattr(merge_module, "file_schema", lambda schema, dictionary=(): schema)
        storage, base = Storage.for_uri(str(tmp_path / at / "t"))
        stat = merge_handle(ctx(storage, base, T3), "city=sf", first.file_id,
                            str(tmp_path / at / "t" / second.path), update)
        out.append(tmp_path / at / "t" / stat.path)
        assert given and all(t == [base_file.DICTIONARY_STRING if at == "a" else pa.string()] * 5 for t in given)
        given.clear()
    rows = [pq.read_table(p) for p in out]
    assert rows[0].equals(rows[1])
    assert sorted(set(rows[0].column("_hoodie_commit_time").to_pylist())) == [T2, T3]
    assert sorted(set(rows[0].column("kind").to_pylist())) == ["a", "m", "n"]

    def stats(path: Path) -> list:
        md = pq.read_metadata(path)
        return [(md.row_group(g).column(c).statistics.min, md.row_group(g).column(c).statistics.max)
                for g in range(md.num_row_groups) for c in range(md.num_columns)]
    assert stats(out[0]) == stats(out[1])
    md = pq.read_metadata(out[0])
    assert (md.row_group(0).column(0).statistics.min, md.row_group(0).column(0).statistics.max) == (T2, T3)
    assert (md.row_group(0).column(9).statistics.min, md.row_group(0).column(9).statistics.max) == ("a", "n")
    assert base_file.dictionary_choices(md) == base_file.dictionary_choices(pq.read_metadata(out[1]))


def test_merge_handle_keeps_the_stored_record_when_the_payload_says_it_is_newer(tmp_path):
    # A COW table stores no payload class (as Hudi 0.x's): the writer's payload merges.
    payload = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    storage, base, config = _table(tmp_path, payload_class=payload)
    data = pa.table({"id": ["k1", "k2"], "city": ["sf"] * 2, "ts": pa.array([10, 10], pa.int64()), "fare": [1.0, 2.0]})
    first = create_handle(_ctx(storage, base, config, T1, payload_class=payload), "city=sf", data)
    incoming = pa.table({"id": ["k1", "k2"], "city": ["sf"] * 2, "ts": pa.array([5, 20], pa.int64()), "fare": [9.0, 9.0]})
    stat = merge_handle(_ctx(storage, base, config, T2, payload_class=payload), "city=sf", first.file_id, str(tmp_path / "t" / first.path),
                        incoming)
    out = {r["id"]: r for r in pq.read_table(tmp_path / "t" / stat.path).to_pylist()}
    assert (out["k1"]["fare"], out["k1"]["_hoodie_commit_time"]) == (1.0, T1)  # stored ts 10 > incoming 5
    assert (out["k2"]["fare"], out["k2"]["_hoodie_commit_time"]) == (9.0, T2)


def test_merge_handle_flagged_deletes_and_errors(tmp_path):
    storage, base, config = _table(tmp_path)
    schema = DATA.schema.append(pa.field("_hoodie_is_deleted", pa.bool_()))
    first = create_handle(WriteContext.create(TableLocation.at(storage, base), config, T1, schema), "city=sf", _rows(DATA, "sf"))
    path = str(tmp_path / "t" / first.path)
    ctx = WriteContext.create(TableLocation.at(storage, base), config, T2, schema)
    with pytest.raises(WriteError, match="belongs to file group"):
        merge_handle(ctx, "city=sf", "other-0", path, DATA)
    deleting = pa.table({"id": ["k1"], "city": ["sf"], "ts": pa.array([9], pa.int64()), "fare": [0.0],
                         "_hoodie_is_deleted": [True]})
    stat = merge_handle(ctx, "city=sf", first.file_id, path, deleting)
    assert pq.read_table(tmp_path / "t" / stat.path).column("id").to_pylist() == ["k2"]
    assert (stat.num_deletes, stat.num_writes) == (1, 1)


_PAYLOADS = {p.short_name: p.class_name for p in __import__("hudi_engine.payload", fromlist=["x"]).BUILTIN_PAYLOADS.values()}


def _merge_both_ways(tmp_path: Path, monkeypatch, old: pa.Table, incoming: pa.Table, deletes: list[str] | None,
                     payload: str, schema: pa.Schema | None = None) -> tuple[pa.Table, object, pa.Table, object]:
    """The same merge twice, on two copies of one table: as the handle runs it, and with every batch through
    `merge_records` whole (the path it takes when a key repeats). Returns (rows, stat) of each."""
    import shutil

    import hudi_engine.write.handles.merge as merge_module

    monkeypatch.setattr(merge_module, "MERGE_BATCH_ROWS", 7)  # several batches, some with no incoming record
    schema = schema or incoming.schema
    storage, base, config = _table(tmp_path / "a", payload_class=_PAYLOADS[payload])
    ctx = lambda at, t: WriteContext.create(TableLocation.at(*Storage.for_uri(str(at / "t"))), config, t,  # noqa: E731
                                            schema, payload_class=_PAYLOADS[payload])
    first = create_handle(WriteContext.create(TableLocation.at(storage, base), config, T1, old.schema,
                                              payload_class=_PAYLOADS[payload]), "city=sf", old)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    out = []
    for at, whole in ((tmp_path / "a", False), (tmp_path / "b", True)):
        if whole:
            monkeypatch.setattr(merge_module, "_meets", lambda *a: None)
        stat = merge_handle(ctx(at, T2), "city=sf", first.file_id, str(at / "t" / first.path), incoming,
                            deletes=deletes)
        out += [pq.read_table(at / "t" / stat.path), stat]
    return out[0], out[1], out[2], out[3]


def _stat_counts(stat) -> tuple:
    return (stat.num_writes, stat.num_update_writes, stat.num_inserts, stat.num_deletes, stat.path,
            stat.file_size_in_bytes)


@pytest.mark.parametrize("payload,ordering", [
    ("OverwriteWithLatestAvroPayload", pa.int64()),
    ("DefaultHoodieRecordPayload", pa.int64()),
    ("EventTimeAvroPayload", pa.string()),
    ("DefaultHoodieRecordPayload", pa.float64()),  # NaN ranks above every number: the merge decides
    ("OverwriteNonDefaultsWithLatestAvroPayload", pa.int64()),
    ("PartialUpdateAvroPayload", pa.int64()),
])
def test_the_merge_of_the_met_rows_alone_writes_what_merging_every_row_writes(tmp_path, monkeypatch, payload,
                                                                              ordering):
    """The handle merges only the stored rows an incoming record meets (whole records picked by ordering value
    where the payload keeps one of the two): the file and stat equal those of merging every stored row, with
    updates the stored record wins and loses, null ordering values and fields, deletes of updated keys, inserts."""
    n = 40
    ts_old = [None if i % 9 == 0 else (i % 5) for i in range(n)]
    ts_new = [None if i % 7 == 0 else float("nan") if i % 11 == 0 and ordering == pa.float64() else (i % 4)
              for i in range(n)]
    as_type = (lambda v: pa.array([None if x is None else str(int(x)) if x == x else "z" for x in v], ordering)) \
        if ordering == pa.string() else (lambda v: pa.array(v, ordering, from_pandas=False))
    old = pa.table({"id": [f"k{i:03d}" for i in range(n)], "city": ["sf"] * n, "ts": as_type(ts_old),
                    "fare": [float(i) for i in range(n)]})
    picked = [i for i in range(n) if i % 3 != 1]
    incoming = pa.table({"id": [f"k{i:03d}" for i in picked] + ["n1", "n2"], "city": ["sf"] * (len(picked) + 2),
                         "ts": as_type([ts_new[i] for i in picked] + [1, 2]),
                         "fare": [None if i % 4 == 0 else 100.0 + i for i in picked] + [1.0, 2.0]})
    deletes = ["k003", "k004", "k025", "absent"]  # k003: also updated
    rows, stat, whole_rows, whole_stat = _merge_both_ways(tmp_path, monkeypatch, old, incoming, deletes, payload)
    assert rows.schema == whole_rows.schema and repr(rows.to_pylist()) == repr(whole_rows.to_pylist())  # NaN too
    assert _stat_counts(stat) == _stat_counts(whole_stat)
    assert stat.num_deletes == 3 and stat.num_inserts == 2  # k003, k004, k025 gone


def test_a_merge_into_a_file_of_an_older_schema_or_without_incoming_rows_in_some_batches(tmp_path, monkeypatch):
    """The stored rows of a file written before a column was added read as null in the carried rows and in the
    stored records the merge keeps; batches no incoming record meets are carried whole."""
    n = 30
    old = pa.table({"id": [f"k{i:03d}" for i in range(n)], "city": ["sf"] * n,
                    "ts": pa.array([5] * n, pa.int64()), "fare": [float(i) for i in range(n)]})
    incoming = pa.table({"id": ["k001", "k002", "k029"], "city": ["sf"] * 3, "ts": pa.array([9, 1, 9], pa.int64()),
                         "fare": [1.5, 2.5, 29.5], "tip": [0.1, 0.2, 0.3]})
    rows, stat, whole_rows, whole_stat = _merge_both_ways(tmp_path, monkeypatch, old, incoming, None,
                                                          "DefaultHoodieRecordPayload")
    assert rows.equals(whole_rows) and _stat_counts(stat) == _stat_counts(whole_stat)
    tips = dict(zip(rows.column("id").to_pylist(), rows.column("tip").to_pylist()))
    assert (tips["k001"], tips["k002"], tips["k029"], tips["k010"]) == (0.1, None, 0.3, None)  # k002: stored wins


def test_a_key_stored_twice_or_given_twice_is_merged_with_every_batch_whole(tmp_path, monkeypatch):
    """A key the base file holds twice (a Hudi `insert` may leave that) updates both copies, and a key given twice
    without pre-combining is folded: the handle leaves both to the whole-batch merge."""
    import hudi_engine.write.handles.merge as merge_module

    assert merge_module._meets(pa.array(["a", "b"]), pa.array(["a", "b", "a"])) is None
    assert merge_module._meets(pa.array(["a", "a"]), pa.array(["a", "b"])) is None
    assert merge_module._meets(pa.array(["b", "x"]), pa.array(["a", "b"])).tolist() == [-1, 0]
    storage, base, config = _table(tmp_path)
    old = pa.table({"id": ["k1", "k2", "k1"], "city": ["sf"] * 3, "ts": pa.array([1, 1, 1], pa.int64()),
                    "fare": [1.0, 2.0, 3.0]})
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", old)
    incoming = pa.table({"id": ["k1", "k1"], "city": ["sf"] * 2, "ts": pa.array([5, 6], pa.int64()),
                         "fare": [50.0, 60.0]})
    stat = merge_handle(_ctx(storage, base, config, T2), "city=sf", first.file_id, str(tmp_path / "t" / first.path),
                        incoming)
    out = pq.read_table(tmp_path / "t" / stat.path)
    assert list(zip(out.column("id").to_pylist(), out.column("fare").to_pylist())) == \
        [("k1", 60.0), ("k2", 2.0), ("k1", 60.0)]


def test_the_three_handles_share_one_shape_and_take_records_in_several_writes(tmp_path):
    """Constructed for a file group, fed by `write` (and `delete`), closed for the stats: records written in two
    tables and deletes in two calls make the file one call makes."""
    storage, base, config = _table(tmp_path, "MERGE_ON_READ")
    creating = CreateHandle(_ctx(storage, base, config, T1), "city=sf")
    creating.write(_rows(DATA, "sf").slice(0, 1))
    creating.write(_rows(DATA, "sf").slice(1))
    (first,) = creating.close()
    assert first.num_inserts == 2
    path = str(tmp_path / "t" / first.path)
    incoming = pa.table({"id": ["k1", "k9"], "city": ["sf", "sf"], "ts": pa.array([5, 6], pa.int64()),
                         "fare": [10.0, 90.0]})
    merging = MergeHandle(_ctx(storage, base, config, T2), "city=sf", first.file_id, path)
    merging.write(incoming.slice(0, 1))
    merging.write(incoming.slice(1))
    merging.delete(["k2"])
    (merged,) = merging.close()
    assert (merged.num_writes, merged.num_update_writes, merged.num_inserts, merged.num_deletes) == (2, 1, 1, 1)
    appending = AppendHandle(_ctx(storage, base, config, T3), "city=sf", first.file_id, T1)
    appending.delete(["k1"])
    appending.delete(pa.array(["k9"]))
    (appended,) = appending.close()
    assert appended.num_deletes == 2 and appended.num_writes == 0
    assert delete_block_keys(read_log_blocks((tmp_path / "t" / appended.path).read_bytes())[0]) \
        .column("record_key").to_pylist() == ["k1", "k9"]
    assert all(isinstance(h, WriteHandle) for h in (creating, merging, appending))


# --------------------------------------------------------------------------------------------- append


def test_append_handle_writes_a_new_log_version_with_data_and_delete_blocks(tmp_path):
    storage, base, config = _table(tmp_path, "MERGE_ON_READ")
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", _rows(DATA, "sf"))
    base_name = first.path.split("/")[1]
    updates = pa.table({"id": ["k1"], "city": ["sf"], "ts": pa.array([7], pa.int64()), "fare": [70.0]})
    ctx = _ctx(storage, base, config, T2).for_task(0, 26, 85)
    s1 = append_handle(ctx, "city=sf", first.file_id, T1, updates, deletes=["k2"], base_file_name=base_name)
    log1 = f".{first.file_id}_{T1}.log.1_0-26-85"
    assert s1.path == f"city=sf/{log1}"
    assert (s1.log_version, s1.log_offset, s1.base_file, s1.log_files) == (1, 0, base_name, [log1])
    assert (s1.prev_commit, s1.num_writes, s1.num_update_writes, s1.num_deletes) == (T1, 1, 1, 1)
    data = (tmp_path / "t" / s1.path).read_bytes()
    assert s1.file_size_in_bytes == s1.total_write_bytes == len(data)
    blocks = read_log_blocks(data)
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.DELETE]
    assert all(b.instant_time == T2 for b in blocks)
    header_schema = json.loads(blocks[0].schema_json)
    assert [f["name"] for f in header_schema["fields"]] == [*META_COLUMNS, "id", "city", "ts", "fare"]
    assert blocks[1].schema_json == blocks[0].schema_json
    rec = data_block_records(blocks[0]).to_pylist()
    assert rec == [{"_hoodie_commit_time": T2, "_hoodie_commit_seqno": f"{T2}_0_0", "_hoodie_record_key": "k1",
                    "_hoodie_partition_path": "city=sf", "_hoodie_file_name": first.file_id, "id": "k1",
                    "city": "sf", "ts": 7, "fare": 70.0}]
    deletes = delete_block_keys(blocks[1])
    assert deletes.select(["record_key", "partition_path", "ordering_val_type"]).to_pylist() == [
        {"record_key": "k2", "partition_path": "city=sf", "ordering_val_type": "IntWrapper"}]
    assert deletes.column("natural_order").to_pylist() == [True]
    assert [m.relative_path for m in list_markers(TableLocation.at(storage, base), T2)] == [f"{s1.path}.marker.APPEND"]

    # The next write to the slice rolls over to version 2 and lists both files.
    s2 = append_handle(_ctx(storage, base, config, T3), "city=sf", first.file_id, T1, None, deletes=["k1"])
    assert s2.log_version == 2 and s2.log_files == [log1, f".{first.file_id}_{T1}.log.2_0-0-0"]
    assert [b.block_type for b in read_log_blocks((tmp_path / "t" / s2.path).read_bytes())] == [BlockType.DELETE]
    assert [str(f) for f in list_log_files(TableLocation.at(storage, base), "city=sf", first.file_id, T1)] == s2.log_files


def test_append_handle_cuts_data_blocks_at_the_max_block_size(tmp_path):
    storage, base, config = _table(tmp_path, "MERGE_ON_READ")
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", _rows(DATA, "sf"))
    n = 50
    updates = pa.table({"id": [f"k{i}" for i in range(n)], "city": ["sf"] * n, "ts": pa.array(range(n), pa.int64()),
                        "fare": [float(i) for i in range(n)]})
    stat = append_handle(_ctx(storage, base, config, T2, log=LogConfig(block_max_size=1000)), "city=sf", first.file_id, T1, updates)
    blocks = read_log_blocks((tmp_path / "t" / stat.path).read_bytes())
    assert len(blocks) > 3 and all(b.block_type == BlockType.AVRO_DATA for b in blocks)
    assert all(len(b.content) - 8 <= 1000 for b in blocks)
    records = pa.concat_tables([data_block_records(b) for b in blocks])
    assert records.column("id").to_pylist() == updates.column("id").to_pylist()


def test_avro_data_blocks_match_the_single_block_builder_and_a_real_log_file(conformance_dir):
    real = (conformance_dir / "log_files/valid_log_avro_data").glob(".*")
    path = next(iter(real))
    data = path.read_bytes()
    (block,) = [b for b in read_log_blocks(data) if b.block_type == BlockType.AVRO_DATA]
    records = data_block_records(block)
    rebuilt = avro_data_blocks(records, block.schema, block.instant_time, 1 << 30)
    assert len(rebuilt) == 1
    assert rebuilt[0].content == block.content
    assert rebuilt[0].content == build_avro_data_block(records, block.schema, block.instant_time).content
    assert list(rebuilt[0].header.items()) == list(block.header.items())
    assert encode_block(rebuilt[0]) == data[block.offset:block.offset + block.size]


def test_append_handle_refuses_nothing_to_write(tmp_path):
    storage, base, config = _table(tmp_path, "MERGE_ON_READ")
    with pytest.raises(WriteError, match="nothing to write"):
        append_handle(_ctx(storage, base, config, T2), "city=sf", "f-0", T1, DATA.slice(0, 0))


def test_log_base_instant_follows_a_pending_compaction(tmp_path):
    storage, base, config = _table(tmp_path, "MERGE_ON_READ")
    timeline = Timeline.load(TableLocation.at(storage, base))
    plan = {"operations": [{"baseInstantTime": T1, "deltaFilePaths": [], "dataFilePath": None, "fileId": "g-0",
                            "partitionPath": "city=sf", "metrics": None, "bootstrapFilePath": None}],
            "extraMetadata": None, "version": 2}
    timeline.create_requested(Instant(T2, Action.COMPACTION, State.REQUESTED),
                              write_avro_metadata("HoodieCompactionPlan", plan))
    timeline = timeline.reload()
    assert log_base_instant(timeline, "city=sf", "g-0", T1) == T2
    assert log_base_instant(timeline, "city=sf", "h-0", T1) == T1
    assert log_base_instant(timeline, "city=la", "g-0", T1) == T1


def test_write_context_names_the_schema_like_spark(tmp_path):
    storage, base, config = _table(tmp_path)
    ctx = _ctx(storage, base, config, T1)
    assert (ctx.schema["name"], ctx.schema["namespace"]) == ("trips_record", "hoodie.trips")
    assert [f["name"] for f in ctx.schema["fields"]] == ["id", "city", "ts", "fare"]
    assert ctx.arrow_schema.names == [*META_COLUMNS, "id", "city", "ts", "fare"]
    assert ctx.for_task(4, 5, 6).task_partition_id == 4
    assert LogFileName.parse(f".f-0_{T1}.log.1_4-5-6").write_token == "4-5-6"


def test_merge_handle_refuses_to_drop_stored_columns(tmp_path):
    storage, base, config = _table(tmp_path)
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", _rows(DATA, "sf"))
    narrow = DATA.drop_columns(["fare"])
    ctx = WriteContext.create(TableLocation.at(storage, base), config, T2, narrow.schema)
    with pytest.raises(WriteError, match=r"columns \['fare'\]"):
        merge_handle(ctx, "city=sf", first.file_id, str(tmp_path / "t" / first.path), _rows(narrow, "sf"))
    # A column added by the writer schema reads as null in the carried rows.
    wide = DATA.append_column("tip", pa.array([1.0, 2.0, 3.0]))
    ctx = WriteContext.create(TableLocation.at(storage, base), config, T2, wide.schema)
    stat = merge_handle(ctx, "city=sf", first.file_id, str(tmp_path / "t" / first.path), _rows(wide, "sf").slice(0, 1))
    out = {r["id"]: r["tip"] for r in pq.read_table(tmp_path / "t" / stat.path).to_pylist()}
    assert out == {"k1": 1.0, "k2": None}


@pytest.mark.parametrize("filter_type,n_old,n_new,delete,continued", [
    ("DYNAMIC_V0", 150, 30, False, True),   # the inserts open a new matrix row
    ("DYNAMIC_V0", 90, 5, False, True),     # inside the first row
    ("DYNAMIC_V0", 380, 60, False, True),   # the inserts go past max entries (round-robin)
    ("DYNAMIC_V0", 420, 10, False, True),   # the old file went past max entries: round-robin where it stopped
    ("DYNAMIC_V0", 1013, 77, False, True),  # ... many times over the rows
    ("DYNAMIC_V0", 150, 30, True, None),    # a delete drops an old row: rebuilt
    ("SIMPLE", 150, 30, False, True),
])
def test_merge_continues_the_old_bloom_filter_exactly_as_a_rebuild(tmp_path, monkeypatch, filter_type, n_old,
                                                                    n_new, delete, continued):
    import hudi_engine.io.base_file as base_file
    from hudi_engine.io.bloom import new_bloom_filter

    answers: list[bool] = []
    original = base_file.continuation

    def spy(*args):
        continued = original(*args)
        answers.append(continued is not None)
        return continued

    monkeypatch.setattr(base_file, "continuation", spy)
    ranged: list[int] = []  # how many keys each key range is taken of
    key_range = base_file.record_key_range
    monkeypatch.setattr(base_file, "record_key_range", lambda keys: ranged.append(len(keys)) or key_range(keys))

    storage, base, config = _table(tmp_path)
    sizing = {"bloom": BloomConfig(filter_type=filter_type, num_entries=100, fpp=0.001, max_entries=400)}
    old = pa.table({"id": [f"k{i:04d}" for i in range(n_old)][::-1], "city": ["sf"] * n_old,
                    "ts": pa.array([1] * n_old, pa.int64()), "fare": [1.0] * n_old})
    first = create_handle(_ctx(storage, base, config, T1, **sizing), "city=sf", old)
    ranged.clear()
    new = pa.table({"id": ["k0003"] + [f"n{i:04d}" for i in range(n_new)], "city": ["sf"] * (n_new + 1),
                    "ts": pa.array([2] * (n_new + 1), pa.int64()), "fare": [2.0] * (n_new + 1)})
    stat = merge_handle(_ctx(storage, base, config, T2, **sizing), "city=sf", first.file_id,
                        str(tmp_path / "t" / first.path), new, deletes=["k0001"] if delete else None)
    path = str(tmp_path / "t" / stat.path)
    keys = read_base_file(storage, path, columns=["_hoodie_record_key"]).column(0)
    rebuilt = new_bloom_filter(100, 0.001, filter_type, 400)
    rebuilt.add_many(keys)
    footer = read_footer(storage, path, bloom_max_entries=400)
    assert footer.bloom_filter.serialize() == rebuilt.serialize()
    assert stat.num_inserts == n_new and stat.num_update_writes == 1 and stat.num_deletes == int(delete)
    assert answers == ([] if continued is None else [continued])
    # The old rows' range comes from their footer where every one is kept: only the inserts' is taken.
    assert (footer.min_key, footer.max_key) == key_range(keys) == ("k0000", f"n{n_new - 1:04d}")
    assert max(ranged) == (n_old - 1 + n_new if delete else n_new)  # one batch: the file's rows


def test_append_handle_on_a_1x_table_states_the_slice_as_hudi_does(tmp_path):
    """Version 9 names a log file by its delta commit; the stat still names the slice's base instant as its previous
    commit and lists every log file of the slice (Hudi's HoodieAppendHandle: Java's CDC query reads the slice from
    them)."""
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig.create("trips", "MERGE_ON_READ", ["id"], ["city"], "ts", hive_style=True, version=9)
    config.initialize(TableLocation.at(storage, base))
    timeline = Timeline.load(TableLocation.at(storage, base))
    for ts in (T1, T2, T3):
        timeline.create_requested(Instant(ts, Action.DELTA_COMMIT, State.REQUESTED))
    first = create_handle(_ctx(storage, base, config, T1), "city=sf", _rows(DATA, "sf"))
    s1 = append_handle(_ctx(storage, base, config, T2), "city=sf", first.file_id, T1, None, deletes=["k1"])
    s2 = append_handle(_ctx(storage, base, config, T3), "city=sf", first.file_id, T1, None, deletes=["k2"])
    log1, log2 = (s.path.split("/")[1] for s in (s1, s2))
    assert log1.startswith(f".{first.file_id}_{T2}.log.1") and log2.startswith(f".{first.file_id}_{T3}.log.1")
    assert (s1.prev_commit, s1.log_files) == (T1, [log1])
    assert (s2.prev_commit, s2.log_files) == (T1, [log1, log2])
