"""Changing a table's version (`table_services.upgrade_downgrade`, HudiTable.upgrade / downgrade, CALL upgrade_table /
downgrade_table) between 6, 8 and 9: engine tables with archived instants and real Hudi 0.x tables, COW and MOR. Our
reader and hudi-rs read every row before and after, time travel to every instant still on the timeline and the
archived ones' completion times stay right, and the engine writes on the new version."""
from __future__ import annotations

import contextlib
import copy
import shutil

import pyarrow as pa
import pytest
from conformance import V6_WITH_COMMITS
from oracle import assert_same_rows, rs_snapshot
from test_restore import Model

from hudi_engine import HudiTable, TableServiceError
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import MetadataTableDisabled, UnsupportedTableVersionError
from hudi_engine.location import TableLocation
from hudi_engine.procedures import call
from hudi_engine.table_services import upgrade_downgrade as ud
from hudi_engine.table_services.clustering import cluster_now
from hudi_engine.timeline.archived import archived_entries
from hudi_engine.timeline.history import TimelineHistory

ARCHIVE = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}


def _history(m: Model, table_type: str) -> Model:
    """Eight commits (a compaction among them on MOR), then archival: instants in the archived timeline."""
    for ts in range(1, 9):
        m.write(list(range(9)) if ts == 1 else [ts % 9, (ts + 4) % 9], ts)
        if ts == 4 and table_type == "MERGE_ON_READ":
            m.table().compact()
    m.table().archive(options=ARCHIVE)
    return m


def _kept(m: Model) -> None:
    """Forget the model's instants archival took (time travel reaches the active timeline only)."""
    start = m.table().timeline.completed_commits().first().timestamp
    m.history = {i: rows for i, rows in m.history.items() if i >= start}


def _archived_times(m: Model) -> set[str]:
    table = m.table()
    if table.config.version >= 8:
        return {i.timestamp for i in TimelineHistory.of(table.location).instants()}
    return {e["commitTime"] for e in archived_entries(table.location) if e.get("actionState") == "COMPLETED"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_engine_table_6_to_9_to_6_with_archived_instants(tmp_path, table_type):
    m = _history(Model(tmp_path / "t", table_type, 6), table_type)
    archived = _archived_times(m)
    assert archived, "archival took instants"
    _kept(m)
    m.check("version 6", m.rows)

    done = m.table().upgrade("NINE")
    assert (done.from_version, done.to_version, done.archived_instants_moved) == (6, 9, len(archived))
    assert bool(done.compacted) == (table_type == "MERGE_ON_READ")
    table = m.table()
    assert (table.config.version, table.timeline.layout.version) == (9, 2)
    assert table.config.get("hoodie.table.initial.version") == "6"
    assert table.config.get("hoodie.record.merge.mode") and table.config.get("hoodie.table.keygenerator.type")
    assert not list((m.path / ".hoodie").glob("*.commit")) and not list((m.path / ".hoodie").glob("*.deltacommit"))
    assert _archived_times(m) == archived, "the archived timeline is in the LSM history"
    history = TimelineHistory.of(table.location).instants()
    assert all(i.completion_time and i.completion_time >= i.timestamp for i in history)
    assert all(i.completion_time for i in table.timeline.completed())
    if done.compacted:  # the compaction added an instant: the rows as of it are the latest
        m.history[done.compacted[-1]] = copy.deepcopy(m.rows)
    m.check("upgraded to 9", m.rows)
    m.check_every_instant("upgraded to 9")

    m.options["hoodie.write.table.version"] = "9"
    last = table.timeline.completed_commits().last()
    written = m.write([3, 7], 20)
    m.check("a write on version 9", m.rows)
    begin = m.table().timeline.completion_times()[last.timestamp]  # layout 2: ranges of completion times
    assert sorted(m.table().read_incremental(begin).column("id").to_pylist()) == ["k03", "k07"]

    done = m.table().downgrade(6)
    assert (done.from_version, done.to_version) == (9, 6)
    table = m.table()
    assert (table.config.version, table.timeline.layout.version) == (6, 1)
    for key in ("hoodie.table.initial.version", "hoodie.record.merge.mode", "hoodie.record.merge.strategy.id",
                "hoodie.table.keygenerator.type", "hoodie.table.partial.update.mode"):
        assert table.config.get(key) is None, key
    assert not (m.path / ".hoodie" / "timeline").exists()  # its instants and history moved back
    assert archived <= _archived_times(m)
    if done.compacted:
        m.history[done.compacted[-1]] = copy.deepcopy(m.rows)
        # Its log files are named by their delta commit (version 9): version 6 takes the name for a slice's base
        # instant, as Hudi 0.x does after Hudi's own downgrade (docs/table-features.md). The compaction before the
        # downgrade made the latest slices whole again.
        del m.history[written]
    m.check("downgraded to 6", m.rows)
    m.check_every_instant("downgraded to 6")
    m.options["hoodie.write.table.version"] = "6"
    m.write([1], 30)
    m.check("a write on version 6 again", m.rows)
    assert sorted(m.table().read_incremental(written).column("id").to_pylist()) == ["k01"]


def test_engine_table_6_to_8_to_9_and_back_to_8(tmp_path):
    m = _history(Model(tmp_path / "t", "MERGE_ON_READ", 6), "MERGE_ON_READ")
    archived = _archived_times(m)
    assert m.table().upgrade(8).archived_instants_moved == len(archived)
    table = m.table()
    assert (table.config.version, table.config.get("hoodie.compaction.payload.class")) == \
        (8, "org.apache.hudi.common.model.DefaultHoodieRecordPayload")  # MOR with an ordering field: event time
    assert table.config.get("hoodie.record.merge.mode") == "EVENT_TIME_ORDERING"
    m.check("upgraded to 8", m.rows)
    done = m.table().upgrade(9)
    assert (done.from_version, done.instant_files_moved, done.archived_instants_moved) == (8, 0, 0)
    table = m.table()
    # Hudi 1.2's 8->9: the built-in payload becomes the legacy payload class (RFC-97), the precombine field the
    # ordering fields; no partial-update mode for a payload that merges whole records.
    assert table.config.get("hoodie.table.legacy.payload.class") == \
        "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert table.config.get("hoodie.compaction.payload.class") is None
    assert table.config.get("hoodie.table.partial.update.mode") is None
    assert (table.config.get("hoodie.table.ordering.fields"), table.config.get("hoodie.table.precombine.field")) == \
        ("ts", None)
    m.check("upgraded to 9", m.rows)
    m.options["hoodie.write.table.version"] = "9"
    m.write([2, 5], 20)
    m.table().downgrade("EIGHT")
    table = m.table()
    assert table.config.version == 8 and table.config.get("hoodie.table.partial.update.mode") is None
    assert table.config.get("hoodie.compaction.payload.class") == \
        "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    assert table.config.get("hoodie.table.precombine.field") == "ts"
    assert _archived_times(m) == archived
    m.check("downgraded to 8", m.rows)


def test_engine_table_created_at_9_downgrades_to_6(tmp_path):
    m = Model(tmp_path / "t", "COPY_ON_WRITE", 9)
    for ts in range(1, 7):
        m.write(list(range(6)) if ts == 1 else [ts % 6], ts)
    m.table().archive(options=ARCHIVE)
    archived = _archived_times(m)
    assert archived
    _kept(m)
    assert m.table().downgrade(6).archived_instants_moved == len(archived)
    table = m.table()
    assert table.config.version == 6 and table.config.get("hoodie.table.ordering.fields") is None
    assert table.config.get("hoodie.table.precombine.field") == "ts"
    assert table.config.get("hoodie.compaction.payload.class")  # named again, from the merge mode
    assert _archived_times(m) == archived
    m.check("downgraded to 6", m.rows)
    m.check_every_instant("downgraded to 6")
    m.options["hoodie.write.table.version"] = "6"
    m.write([0], 10)
    m.check("a write on version 6", m.rows)


@pytest.mark.parametrize("name", V6_WITH_COMMITS)
def test_real_hudi_0x_tables_6_to_9_to_6(unzip_table, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(unzip_table(name), path)
    table = HudiTable.load(str(path))
    key = "_hoodie_record_key" if table.config.populate_meta_fields else table.config.record_key_fields[0]
    before = table.read_snapshot()
    assert_same_rows(before, rs_snapshot(path), f"{name} at 6", key)
    times = [i.timestamp for i in table.timeline.completed_commits()]
    as_of = {ts: table.read_snapshot(as_of=ts) for ts in times}

    table.upgrade(9)
    assert (table.config.version, table.timeline.layout.version) == (9, 2)
    for stage in ("upgraded to 9", "downgraded to 6"):
        ours = table.read_snapshot()
        assert_same_rows(ours, rs_snapshot(path), f"{name} {stage}: hudi-rs", key)
        assert_same_rows(_data(ours), _data(before), f"{name} {stage}", key)  # a compaction rewrote MOR files
        for ts in times:
            assert_same_rows(table.read_snapshot(as_of=ts), as_of[ts], f"{name} {stage} as of {ts}", key)
        if stage == "upgraded to 9":
            table.downgrade(6)
            assert (table.config.version, table.timeline.layout.version) == (6, 1)


def _data(rows: pa.Table) -> pa.Table:
    return rows.drop_columns(["_hoodie_file_name"]) if "_hoodie_file_name" in rows.column_names else rows


def test_a_real_mor_table_upgraded_to_8_then_9_takes_writes(unzip_table, tmp_path):
    path = tmp_path / "trips"
    shutil.copytree(unzip_table("mor_avrolog_v6_trips_8i1u"), path)
    table = HudiTable.load(str(path))
    rows = table.read_snapshot()
    table.upgrade(8)
    table.upgrade(9)
    new = rows.slice(0, 2).drop_columns([c for c in rows.column_names if c.startswith("_hoodie")])
    new = new.set_column(new.schema.get_field_index("fare"), "fare", [[99.0, 98.0]])
    table.write(new, {"hoodie.datasource.write.operation": "upsert", "hoodie.metadata.enable": "false"})
    after = HudiTable.load(str(path)).read_snapshot()
    assert_same_rows(after, rs_snapshot(path), "trips written at 9")
    assert sorted(after.column("fare").to_pylist()).count(99.0) == 1 and after.num_rows == rows.num_rows


def test_refusals_change_nothing(tmp_path):
    m = Model(tmp_path / "t", "COPY_ON_WRITE", 6)
    for ts in range(1, 4):
        m.write([ts, ts + 3], ts)
    props = (m.path / ".hoodie" / "hoodie.properties").read_bytes()
    with pytest.raises(UnsupportedTableVersionError, match="cannot move to table version 7"):
        ud.upgrade_downgrade(TableLocation.of(str(m.path)), 7)
    with pytest.raises(TableServiceError, match=r"use upgrade\(9\)"):
        m.table().downgrade(9)
    with pytest.raises(TableServiceError, match="to_version 'ELEVEN'"):
        m.table().upgrade("ELEVEN")
    assert m.table().upgrade(6).changed is False  # at the target already: nothing to do, as Hudi
    config = WriteConfig.from_options({"hoodie.clustering.plan.strategy.small.file.limit": str(1 << 30)})
    pending = cluster_now(TableLocation.of(str(m.path)), config, op="schedule")
    assert pending is not None
    with pytest.raises(TableServiceError, match="pending.*clustering"):
        m.table().upgrade(9)
    assert (m.path / ".hoodie" / "hoodie.properties").read_bytes() == props
    assert not (m.path / ".hoodie" / "timeline").exists()


def test_a_crash_after_moving_the_timeline_is_finished_by_the_next_run(tmp_path, monkeypatch):
    m = _history(Model(tmp_path / "t", "COPY_ON_WRITE", 6), "COPY_ON_WRITE")
    archived = _archived_times(m)

    def crash(*args, **kwargs):
        raise OSError("killed")

    monkeypatch.setattr(ud, "_archive_to_history", crash)
    with pytest.raises(OSError, match="killed"):
        m.table().upgrade(9)
    assert HudiTable.load(str(m.path)).config.version == 6  # hoodie.properties is saved last
    assert list((m.path / ".hoodie" / "timeline").glob("*_*.commit"))
    monkeypatch.undo()
    done = m.table().upgrade(9)
    assert (done.rolled_back, done.compacted, done.instant_files_moved) == ([], [], 0)
    assert done.archived_instants_moved == len(archived)
    m.check("upgraded after the crash", m.rows)


def test_call_upgrade_table_and_downgrade_table(tmp_path):
    m = Model(tmp_path / "t", "MERGE_ON_READ", 6)
    m.write(list(range(4)), 1)
    m.write([1], 2)
    result = call("upgrade_table", str(m.path), to_version="NINE")
    assert result.column_names == ["result"] and result.column("result").to_pylist() == [True]
    assert m.table().config.version == 9
    assert call("downgrade_table", str(m.path), to_version="SIX").column("result").to_pylist() == [True]
    assert m.table().config.version == 6
    with pytest.warns(UserWarning, match="cannot move to table version 7"):
        assert call("upgrade_table", str(m.path), to_version="SEVEN").column("result").to_pylist() == [False]
    m.check("after the calls", m.rows)


# Real Hudi 1.x tables: a metadata table, a Java rollback, a log compaction, an insert_overwrite and a clustering.
V8_V9_CASES = ["mor_avrolog_v8_nonpartitioned_mdt", "mor_avrolog_v9_nonpartitioned_rollback",
               "mor_avrolog_table_log_compaction", "cow_v9_txns_simple_overwrite", "cow_v9_txns_simple_nometa"]


@pytest.mark.parametrize("name", V8_V9_CASES)
def test_real_hudi_1x_tables_down_to_6_and_back(unzip_table, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(unzip_table(name, "v8_v9"), path)
    table = HudiTable.load(str(path))
    version, key = table.config.version, ("_hoodie_record_key" if table.config.populate_meta_fields
                                          else table.config.record_key_fields[0])
    before = _data(table.read_snapshot())
    with pytest.warns(MetadataTableDisabled) if table.config.is_metadata_table_enabled else contextlib.nullcontext():
        table.downgrade(6)
    assert (table.config.version, table.timeline.layout.version) == (6, 1)
    assert not (path / ".hoodie" / "metadata").exists()
    ours = table.read_snapshot()
    assert_same_rows(_data(ours), before, f"{name} at 6", key)
    assert_same_rows(ours, rs_snapshot(path), f"{name} at 6: hudi-rs", key)
    table.upgrade(version)
    assert table.config.version == version
    assert_same_rows(_data(table.read_snapshot()), before, f"{name} at {version} again", key)


def test_a_timeline_folder_a_downgrade_left_is_removed_by_the_next_call(tmp_path):
    m = Model(tmp_path / "t", "COPY_ON_WRITE", 9)
    for ts in range(1, 4):
        m.write([ts], ts)
    m.table().downgrade(6)
    (m.path / ".hoodie" / "timeline" / "history").mkdir(parents=True)  # as Hudi's downgrade leaves it
    done = call("downgrade_table", str(m.path), to_version="SIX")
    assert done.column("result").to_pylist() == [True] and not (m.path / ".hoodie" / "timeline").exists()
    m.options["hoodie.write.table.version"] = "6"
    m.write([9], 9)
    m.check("a write after", m.rows)
