"""Every declared `hoodie.properties` key and timeline/storage state (hudi_engine.table_features), on copies of real
Hudi 0.14 tables: a refused one stops every writer and table service before any file (files and the hudi-rs snapshot
unchanged, the message names the key or state and its value); an honoured one gives a write hudi-rs reads right."""
from __future__ import annotations

import shutil
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from oracle import assert_same_rows, rs_snapshot
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.config import ArchivalConfig, CleanConfig
from hudi_engine.errors import (
    HudiError,
    MetadataTableDisabled,
    MetadataTableError,
    TableConfigError,
    UnsupportedTableFeatureError,
    WriteError,
)
from hudi_engine.java_properties import format_properties, parse_properties
from hudi_engine.location import TableLocation
from hudi_engine.partition_metadata import (
    format_partition_metadata_parquet,
    parse_partition_metadata,
    parse_partition_metadata_parquet,
)
from hudi_engine.storage import Storage
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import PROPERTIES, STATES, Decision, check_writable, property_row
from hudi_engine.table_services.archival import archive
from hudi_engine.table_services.clean import clean
from hudi_engine.table_services.compaction import schedule_compaction
from hudi_engine.timeline import Timeline
from hudi_engine.timeline import instant as instant_module
from hudi_engine.timeline.avro_models import write_avro_metadata
from hudi_engine.timeline.instant import new_instant_time
from hudi_engine.write.rollback import rollback_completed

COW = "cow_v6_simplekeygen_nonhivestyle"
MOR = "mor_avrolog_v6_trips_8i1u"
DEFAULT_MERGER = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"

# An accepted value for every declared key; None: keep the table's own value (the key is already there).
ACCEPTED: dict[str, str | None] = {
    "hoodie.table.name": None, "hoodie.database.name": None, "hoodie.table.type": None, "hoodie.table.version": None,
    "hoodie.table.initial.version": "6", "hoodie.timeline.layout.version": None,
    "hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history", "hoodie.archivelog.folder": None,
    "hoodie.table.precombine.field": None, "hoodie.table.ordering.fields": "longField",
    "hoodie.table.recordkey.fields": None, "hoodie.table.partition.fields": None,
    "hoodie.table.keygenerator.class": None, "hoodie.table.keygenerator.type": "SIMPLE",
    "hoodie.keygen.timebased.*": "EPOCHMILLISECONDS", "hoodie.deltastreamer.keygen.timebased.*": "EPOCHMILLISECONDS",
    "hoodie.keygen.datetime.parser.class": "org.apache.hudi.keygen.parser.HoodieDateTimeParser",
    "hoodie.datasource.write.hive_style_partitioning": None, "hoodie.datasource.write.partitionpath.urlencode": None,
    "hoodie.table.partition_extractor_class": "org.apache.hudi.hive.MultiPartKeysValueExtractor",
    "hoodie.datasource.write.drop.partition.columns": None, "hoodie.populate.meta.fields": "true",
    "hoodie.table.create.schema": None, "hoodie.table.checksum": None, "hoodie.compaction.payload.class": None,
    "hoodie.compaction.payload.type": "OVERWRITE_LATEST_AVRO", "hoodie.record.merge.strategy.id": DEFAULT_MERGER,
    "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.table.partial.update.mode": "NONE",
    "hoodie.table.legacy.payload.class": "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
    "hoodie.table.merge.properties": "a=b", "hoodie.table.base.file.format": "PARQUET",
    "hoodie.table.log.file.format": "HOODIE_LOG", "hoodie.table.format": "native",
    "hoodie.table.multiple.base.file.formats.enable": "false", "hoodie.table.timeline.timezone": "LOCAL",
    "hoodie.partition.metafile.use.base.format": "false", "hoodie.table.metadata.partitions": "files",
    "hoodie.table.metadata.partitions.inflight": "files", "hoodie.table.secondary.indexes.metadata": "",
    "hoodie.table.index.defs.path": "", "hoodie.table.cdc.enabled": "false",
    "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE", "hoodie.bootstrap.base.path": "",
    "hoodie.record.merge.property.*": "",
    "hoodie.bootstrap.index.enable": "true",
    "hoodie.bootstrap.index.class": "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex",
    "hoodie.bootstrap.index.type": "HFILE",
}
# Refused values (and unknown values of known keys): key -> values.
REFUSED: dict[str, list[str]] = {
    "hoodie.table.initial.version": ["six"],
    "hoodie.table.keygenerator.class": ["com.example.MyKeyGenerator"],
    "hoodie.table.keygenerator.type": ["SPATIAL"],
    "hoodie.keygen.datetime.parser.class": ["com.example.Parser"],
    "hoodie.datasource.write.hive_style_partitioning": ["yes"],
    "hoodie.datasource.write.partitionpath.urlencode": ["1"],
    "hoodie.datasource.write.drop.partition.columns": ["true"],
    "hoodie.populate.meta.fields": ["ture"],
    "hoodie.compaction.payload.class": ["com.example.MyPayload"],
    "hoodie.compaction.payload.type": ["HOODIE_AVRO_DEFAULT", "HOODIE_AVRO", "GUESS"],
    "hoodie.record.merge.strategy.id": ["ce9acb64-bde0-424c-9b91-f6ebba25356e"],
    "hoodie.compaction.record.merger.strategy": ["00000000-0000-0000-0000-000000000001"],
    "hoodie.record.merge.mode": ["LATEST", "CUSTOM"],
    "hoodie.table.partial.update.mode": ["KEEP_VALUES", "FILL_UNAVAILABLE", "SOMETIMES"],
    "hoodie.table.base.file.format": ["ORC", "HFILE", "LANCE", "AVRO"],
    "hoodie.table.ro.file.format": ["ORC"],
    "hoodie.table.log.file.format": ["PARQUET", "JSON"],
    "hoodie.table.format": ["iceberg"],
    "hoodie.table.multiple.base.file.formats.enable": ["true"],
    "hoodie.table.timeline.timezone": ["Europe/Paris"],
    "hoodie.partition.metafile.use.base.format": ["yes"],
    "hoodie.table.secondary.indexes.metadata": ['{"indexes":[]}'],
    "hoodie.table.cdc.enabled": ["on"],
    "hoodie.table.cdc.supplemental.logging.mode": ["DATA_AFTER"],
    "hoodie.bootstrap.base.path": ["s3://bucket/source"],
    "hoodie.record.merge.property.hoodie.payload.delete.field": ["Op"],
    "hoodie.bootstrap.index.enable": ["maybe"],
    "hoodie.bootstrap.index.type": ["BTREE"],
}
REFUSED_CASES = [(k, v) for k, vs in REFUSED.items() for v in vs]
# Values hoodie.properties validation itself refuses when the table is loaded (TableConfig.validate), before any check.
REFUSED_ON_LOAD = [("hoodie.table.type", "MERGE_ON_WRITE", "hoodie.table.type='MERGE_ON_WRITE'"),
                   ("hoodie.timeline.layout.version", "2", "hoodie.timeline.layout.version=2"),
                   ("hoodie.table.version", "5", "hoodie.table.version=5"),
                   ("hoodie.table.checksum", "12345", "hoodie.table.checksum=12345 is wrong")]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


_ORIGINAL: dict[Path, Path] = {}  # copy -> the conformance table's hoodie.properties


def _copy(unzip_table, tmp_path: Path, name: str = COW, version_dir: str = "v6") -> Path:
    path = tmp_path / name
    shutil.copytree(unzip_table(name, version_dir), path)
    _ORIGINAL[path] = unzip_table(name, version_dir) / ".hoodie" / "hoodie.properties"
    return path


def _set(path: Path, key: str, value: str, remove: tuple[str, ...] = ()) -> None:
    """Set a key in hoodie.properties as another writer would (raw text: a value our loader rejects is kept)."""
    file = path / ".hoodie" / "hoodie.properties"
    props = parse_properties(file.read_bytes())
    props[key] = value
    for other in remove:
        props.pop(other, None)
    file.write_bytes(format_properties(props, ["Updated by a test"]).encode("latin-1"))


def _updates(path: Path) -> tuple[pa.Table, str]:
    """Every row of the table with one non-key column changed (ordering value kept), and that column's name."""
    table = HudiTable.load(str(path))
    before = table.read_snapshot()
    data = before.select([c for c in before.column_names if not c.startswith("_hoodie_")])
    fixed = set(table.config.record_key_fields) | set(table.config.partition_fields) | {table.config.precombine_field}
    target = next(c for c in data.column_names if c not in fixed
                  and (pa.types.is_string(data.schema.field(c).type) or pa.types.is_floating(data.schema.field(c).type)))
    col = data.column(target)
    new = (pc.binary_join_element_wise(col, pa.scalar("-upd"), "") if pa.types.is_string(col.type)
           else pc.add(col, pa.scalar(1, col.type)))
    return data.set_column(data.column_names.index(target), target, new), target


def _upsert_and_check(path: Path, options: dict[str, str] | None = None) -> None:
    """An upsert of every row (`options` besides); hudi-rs then reads the updated rows, and our reader agrees."""
    updates, target = _updates(path)
    write(path, updates, {"hoodie.datasource.write.operation": "upsert", **(options or {})})
    after = rs_snapshot(path)
    assert after.num_rows == updates.num_rows
    assert sorted(after.column(target).to_pylist(), key=repr) == sorted(updates.column(target).to_pylist(), key=repr)
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), after, f"{path.name} after our upsert")


def _assert_everything_refused(path: Path, names: list[str], error: type[HudiError] = UnsupportedTableFeatureError
                               ) -> None:
    """A write and every table service (through HudiTable and called directly) refused, the message naming the
    table and every string of `names` (the key or state and its value); files and the hudi-rs snapshot unchanged."""
    before, snapshot = _tree(path), _rs_state(path)
    updates, _ = _read_updates(path)
    storage, base = Storage.for_uri(str(path))
    location = TableLocation.at(storage, base)
    attempts = {
        "write": lambda: write(path, updates, {"hoodie.datasource.write.operation": "upsert"}),
        "HudiTable.compact": lambda: HudiTable.load(str(path)).compact(),
        "HudiTable.clean": lambda: HudiTable.load(str(path)).clean(options={"hoodie.cleaner.commits.retained": "1"}),
        "HudiTable.archive": lambda: HudiTable.load(str(path)).archive(),
        "HudiTable.rollback": lambda: HudiTable.load(str(path)).rollback(),
        "schedule_compaction": lambda: schedule_compaction(TableLocation.at(storage, base)),
        "clean": lambda: clean(location, CleanConfig(commits_retained=1), table=TableConfig.load(location),
                               timeline=Timeline.load(location)),
        "archive": lambda: archive(location, ArchivalConfig(min_commits=1, max_commits=2),
                                   table=TableConfig.load(location), timeline=Timeline.load(location)),
        "rollback_completed": lambda: rollback_completed(TableLocation.at(storage, base)),
    }
    for what, attempt in attempts.items():
        # HudiTable.load itself refuses a table it cannot read (e.g. ORC base files), with its own HudiError.
        with pytest.raises(HudiError if what.startswith("HudiTable") else error) as e:
            attempt()
        message = str(e.value)
        # HudiTable's own read refusal says "key" and "value" apart; ours say "key=value".
        wanted = [str(path)] + [p for n in names for p in (n.split("=", 1) if what.startswith("HudiTable") else [n])]
        for name in wanted:
            assert name in message, f"{what}: {name!r} not in the message: {message}"
        if isinstance(e.value, UnsupportedTableFeatureError):
            assert "; way out: " in message and "docs/table-features.md" in message
        assert _tree(path) == before, f"{what} changed the table's files"
    after = _rs_state(path)
    if isinstance(snapshot, pa.Table) and isinstance(after, pa.Table):
        assert_same_rows(after, snapshot, "hudi-rs snapshot after the refusals")
    else:
        assert after == snapshot  # hudi-rs refuses the table too (e.g. a non-boolean value), the same way


def _rs_state(path: Path) -> pa.Table | str:
    """hudi-rs's snapshot, or its error when it refuses the table too."""
    try:
        return rs_snapshot(path)
    except Exception as e:  # noqa: BLE001 - hudi-rs raises its own error types
        return f"{type(e).__name__}: {e}"


def _read_updates(path: Path) -> tuple[pa.Table, str]:
    """The upsert's rows, read with a config our loader accepts (the table's own may be what is refused)."""
    file = path / ".hoodie" / "hoodie.properties"
    saved = file.read_bytes()
    shutil.copyfile(_ORIGINAL[path], file)
    try:
        return _updates(path)
    finally:
        file.write_bytes(saved)


# ------------------------------------------------------------------------------------------------ properties

def test_every_declared_property_has_an_accepted_value_under_test():
    declared = {r.key for r in PROPERTIES}
    assert declared == set(ACCEPTED), declared ^ set(ACCEPTED)
    refused_rows = {r.key for r in PROPERTIES if r.decision is Decision.REFUSED}
    assert refused_rows <= {property_row(k).key for k in REFUSED}  # type: ignore[union-attr]


def _concrete(key: str) -> str:
    return key[:-1] + "timestamp.type" if key.endswith("*") else key


@pytest.mark.parametrize("name", [COW, MOR])
@pytest.mark.parametrize("key", sorted(ACCEPTED))
def test_accepted_value_writes_a_table_hudi_rs_reads(unzip_table, tmp_path, key, name):
    path = _copy(unzip_table, tmp_path, name)
    value = ACCEPTED[key]
    if key == "hoodie.table.ordering.fields":
        value = HudiTable.load(str(path)).config.precombine_field
    if value is not None:
        _set(path, _concrete(key), value)
    _upsert_and_check(path)
    props = TableConfig.load(TableLocation.of(str(path))).props
    if key.startswith("hoodie.table.metadata.partitions"):  # honoured by disabling the metadata table, as Hudi does;
        # the write then builds a new one, files only (hoodie.metadata.enable: true by default)
        assert props.get("hoodie.table.metadata.partitions") == "files"
        assert "hoodie.table.metadata.partitions.inflight" not in props
    elif value is not None:
        assert props[_concrete(key)] == value  # the write kept the other writer's setting


SERVICES = {  # each one changes the table here (a service with nothing to do leaves the metadata table alone)
    "compact": lambda t: t.compact(),
    "clean": lambda t: t.clean(options={"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                        "hoodie.cleaner.fileversions.retained": "1"}),
    "archive": lambda t: t.archive(options={"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2",
                                            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}),
    "rollback": lambda t: t.rollback(),
}


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_every_table_service_refuses_a_metadata_table_it_cannot_keep(unzip_table, tmp_path, service):
    """A table service changes files too: a Java metadata table this engine cannot keep (column stats on version 6)
    left in place would have Java readers list files from it and miss what the service wrote (issue 36: Java read a
    slice's old base and logs after our compaction), and deleting it would drop Java's index. So the service is
    refused by name before it changes anything; a rollback (recovery of a failed write) still disables it, as Hudi
    does. tests/metadata/test_metadata_services.py: a files-only one is kept."""
    path = _copy(unzip_table, tmp_path, MOR)
    if service in ("clean", "archive"):  # a compaction first: old slices to clean, delta commits archival may move
        HudiTable.load(str(path)).compact()
    _set(path, "hoodie.table.metadata.partitions", "files,column_stats")
    (path / ".hoodie" / "metadata" / ".hoodie").mkdir(parents=True)
    if service != "rollback":
        files = sorted(path.rglob("*"))
        with pytest.raises(MetadataTableError, match=r"\['column_stats'\].*version 6"):
            SERVICES[service](HudiTable.load(str(path)))
        assert sorted(path.rglob("*")) == files
        return
    with pytest.warns(MetadataTableDisabled, match="column_stats"):
        assert SERVICES[service](HudiTable.load(str(path))) is not None
    props = TableConfig.load(TableLocation.of(str(path))).props
    assert "hoodie.table.metadata.partitions" not in props
    assert not (path / ".hoodie" / "metadata").exists()


@pytest.mark.parametrize("key,value", REFUSED_CASES)
def test_refused_value_stops_every_writer_and_service_before_any_file(unzip_table, tmp_path, key, value):
    path = _copy(unzip_table, tmp_path)
    # A payload type counts only where no payload class is named (RecordPayloadType.getPayloadClassName).
    _set(path, key, value, ("hoodie.compaction.payload.class",) if key == "hoodie.compaction.payload.type" else ())
    _assert_everything_refused(path, [f"{key}={value}"])


@pytest.mark.parametrize("key,value,match", REFUSED_ON_LOAD)
def test_value_refused_when_the_table_is_loaded(unzip_table, tmp_path, key, value, match):
    path = _copy(unzip_table, tmp_path)
    _set(path, key, value)
    _assert_everything_refused(path, [match], TableConfigError)


def _reads(path: Path) -> tuple[pa.Table, list[str]]:
    """Our snapshot and the active timeline's instants: what a refusal must leave readable and unchanged."""
    table = HudiTable.load(str(path))
    return table.read_snapshot(), [str(i) for i in table.timeline]


@pytest.mark.parametrize("name,version_dir", [(COW, "v6"), (MOR, "v6"), ("cow_v8_simplekeygen_nonhivestyle", "v8_v9")])
def test_undeclared_property_stops_every_writer_and_service_reads_unaffected(unzip_table, tmp_path, name,
                                                                            version_dir):
    """A key no row declares (a newer Hudi's) is refused by name, with its value, the table, why and the way out;
    nothing is written, and reads go on as before."""
    path = _copy(unzip_table, tmp_path, name, version_dir)
    rows, instants = _reads(path)
    _set(path, "hoodie.table.some.future.key", "whatever")
    table_name = TableConfig.load(TableLocation.of(str(path))).name
    _assert_everything_refused(path, ["hoodie.table.some.future.key=whatever", f"table {table_name} at ",
                                      "a key this engine has no rule for (a newer Hudi's feature",
                                      "write this table with the Hudi that set the key, or ask for the key to be "
                                      "declared"])
    after_rows, after_instants = _reads(path)
    assert after_instants == instants
    assert_same_rows(after_rows, rows, "our read of a table with an undeclared key")


def test_every_key_of_the_conformance_tables_is_declared(conformance_dir):
    """The keys real Hudi 0.14 .. 1.1 tables carry (and their metadata tables) all have a row: none is refused as
    undeclared."""
    undeclared = {}
    for archive_path in sorted(conformance_dir.glob("*/*.zip")):
        with zipfile.ZipFile(archive_path) as z:
            for member in z.namelist():
                if member.endswith(".hoodie/hoodie.properties") and "__MACOSX" not in member:
                    for key in parse_properties(z.read(member)):
                        if property_row(key) is None:
                            undeclared.setdefault(key, archive_path.name)
    assert not undeclared, undeclared


def test_cdc_enabled_is_left_to_the_cdc_writer():
    # What the CDC writer does with these tables: tests/write/test_cdc.py.
    row = property_row("hoodie.table.cdc.enabled")
    assert row is not None and row.decision is Decision.OTHER_PART and row.see == "cdc.md"
    config = TableConfig.from_properties({"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE",
                                          "hoodie.table.version": "6", "hoodie.table.cdc.enabled": "true",
                                          "hoodie.table.cdc.supplemental.logging.mode": "op_key_only"})
    assert row.check("true", config) is None
    assert property_row("hoodie.table.cdc.supplemental.logging.mode").check("op_key_only", config) is None  # type: ignore[union-attr]
    refused = property_row("hoodie.table.cdc.supplemental.logging.mode").check("cdc_op_key", config)  # type: ignore[union-attr]
    assert refused is not None and "it is OP_KEY_ONLY there" in refused


# ------------------------------------------------------------------------------------------------ timeline states

def _instant_file(path: Path, name: str, content: bytes = b"") -> None:
    (path / ".hoodie" / name).write_bytes(content)


def _next_ts(path: Path) -> str:
    storage, base = Storage.for_uri(str(path))
    return new_instant_time(after=max(Timeline.load(TableLocation.at(storage, base)).timestamps(), default=None))


def _base_name(file_path: str) -> str:
    return file_path.rsplit("/", 1)[-1]


def _compaction_plan(path: Path) -> bytes:
    table = HudiTable.load(str(path))
    s = table.file_slices()[0]
    op = {"baseInstantTime": s.base_instant, "deltaFilePaths": [_base_name(f.path) for f in s.sorted_log_files()],
          "dataFilePath": _base_name(s.base_file.path) if s.base_file else None, "fileId": s.file_id,
          "partitionPath": s.partition_path, "metrics": {}, "bootstrapFilePath": None}
    return write_avro_metadata("HoodieCompactionPlan", {"operations": [op], "extraMetadata": None, "version": 2,
                                                         "strategy": None, "preserveHoodieMetadata": None})


REFUSED_STATES = {
    "pending log compaction": (MOR, lambda p, ts: _instant_file(p, f"{ts}.logcompaction.requested",
                                                                  _compaction_plan(p)), "pending log compaction (logcompaction): {ts}.logcompaction.requested"),
    "pending restore": (COW, lambda p, ts: _instant_file(p, f"{ts}.restore.inflight"), "pending restore: {ts}.restore.inflight"),
    "pending indexing": (COW, lambda p, ts: _instant_file(p, f"{ts}.indexing.requested"), "pending metadata-table indexing (indexing): {ts}.indexing.requested"),
    "consistent hashing metadata": (COW, lambda p, ts: _put(p, ".bucket_index/consistent_hashing_metadata/10/"
                                                              "00000000000000.hashing_meta"),
                                    "consistent hashing bucket index metadata: "),
    "bootstrap index": (COW, lambda p, ts: _put(p, ".aux/.bootstrap/.partitions/00000000-0000-0000-0000-000000000000"
                                                   "-0_1-0-1_00000000000001.hfile"), "bootstrap index: "),
    "unknown instant files": (COW, lambda p, ts: _instant_file(p, f"{ts}.frobnicate.requested"),
                              "timeline files of an action or state this engine does not know: "),
}


def _put(path: Path, rel: str) -> None:
    target = path / ".hoodie" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"x")


def test_every_state_row_is_under_test():
    covered = set(REFUSED_STATES) | {"pending compaction", "savepoint", "pending savepoint", "completed restore",
                                     "pending rollback", "completed indexing", "pending clustering", "lock files",
                                     "pending clean",  # pending clean and rollback: also tests/test_java_tables.py
                                     "schema history"}  # tests/test_column_change.py, tests/test_java_tables.py
    assert {r.state for r in STATES} == covered
    assert {r.state for r in STATES if r.decision is Decision.REFUSED} == set(REFUSED_STATES)


@pytest.mark.parametrize("state", sorted(REFUSED_STATES))
def test_refused_state_stops_every_writer_and_service_before_any_file(unzip_table, tmp_path, state):
    name, make, match = REFUSED_STATES[state]
    path = _copy(unzip_table, tmp_path, name)
    ts = _next_ts(path)
    make(path, ts)
    _assert_everything_refused(path, [match.format(ts=ts)])


V8 = "cow_v8_simplekeygen_nonhivestyle"
# Instant-like names no layout parses: a newer Hudi's action (every state), an unknown state of a known action,
# layout 2's completed spelling in layout 1, and a completed file of an unknown action in layout 2.
UNKNOWN_INSTANTS = [(COW, "v6", "{ts}.frobnicate.requested"), (COW, "v6", "{ts}.frobnicate"),
                    (COW, "v6", "{ts}.commit.paused"), (COW, "v6", "{ts}_{ts}.commit"),
                    (MOR, "v6", "{ts}.deltacommit.queued"), (V8, "v8_v9", "{ts}_{ts}.frobnicate"),
                    (V8, "v8_v9", "{ts}.frobnicate.inflight"), (V8, "v8_v9", "{ts}.commit.paused")]


@pytest.mark.parametrize("name,version_dir,file", UNKNOWN_INSTANTS)
def test_unknown_instant_file_stops_every_writer_and_service_reads_unaffected(unzip_table, tmp_path, name,
                                                                             version_dir, file):
    path = _copy(unzip_table, tmp_path, name, version_dir)
    rows, instants = _reads(path)
    storage, base = Storage.for_uri(str(path))
    timeline = Timeline.load(TableLocation.at(storage, base))
    file = file.format(ts=_next_ts(path))
    (Path(timeline.meta_path) / file).write_bytes(b"{}")
    _assert_everything_refused(path, ["timeline files of an action or state this engine does not know: ",
                                      str(Path(timeline.meta_path) / file), "ask for the action to be declared"])
    after_rows, after_instants = _reads(path)  # readers skip it, as Hudi skips extensions it does not know
    assert after_instants == instants
    assert_same_rows(after_rows, rows, "our read of a table with an unknown instant file")


@pytest.mark.parametrize("name,version_dir", [(COW, "v6"), (V8, "v8_v9")])
def test_files_not_named_like_instants_are_ignored_as_hudi_ignores_them(unzip_table, tmp_path, name, version_dir):
    """Dot files (macOS `._`, Hadoop `.crc`), Hudi's `<name>.<uuid>` temp files, backups and folders of any name in
    the timeline folder are not instants to Hudi either: the write goes on."""
    path = _copy(unzip_table, tmp_path, name, version_dir)
    storage, base = Storage.for_uri(str(path))
    folder = Path(Timeline.load(TableLocation.at(storage, base)).meta_path)
    ts = _next_ts(path)
    for other in (".DS_Store", f"._{ts}.commit", f".{ts}.commit.crc", f"{ts}.commit.requested.1b2c3d4e-0000-1111",
                  f"{ts}.commit.6f1e2d3c-aaaa-bbbb", "hoodie.properties.backup", "README"):
        (folder / other).write_bytes(b"x")
    for folder_name in (".heartbeat", ".index_defs", f"{ts}.frobnicate"):
        (folder / folder_name).mkdir(exist_ok=True)
    _upsert_and_check(path)


def test_empty_bootstrap_and_schema_folders_of_a_new_table_are_not_refused(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    for rel in (".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".schema",
                ".bucket_index/consistent_hashing_metadata"):
        (path / ".hoodie" / rel).mkdir(parents=True, exist_ok=True)
    _upsert_and_check(path)


def test_pending_compaction_is_run_before_the_write(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path, MOR)
    ts = _next_ts(path)
    _instant_file(path, f"{ts}.compaction.requested", _compaction_plan(path))
    updates, _ = _updates(path)
    write(path, updates, {"hoodie.datasource.write.operation": "upsert"}, table_services=True)
    assert (path / ".hoodie" / f"{ts}.commit").exists()  # completed as a commit, as Hudi completes compactions
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "after compaction and upsert")


def _savepoint(path: Path) -> tuple[str, list[str]]:
    """A completed savepoint of the latest commit (HoodieSavepointMetadata); its timestamp and data files."""
    table = HudiTable.load(str(path))
    ts = table.timeline.completed_commits().last().timestamp  # type: ignore[union-attr]
    files: dict[str, list[str]] = {}
    for s in table.file_slices():
        if s.base_file is not None:
            files.setdefault(s.partition_path, []).append(_base_name(s.base_file.path))
    meta = {"savepointedBy": "hudi", "savepointedAt": int(time.time()), "comments": "test",
            "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()},
            "version": 1}
    _instant_file(path, f"{ts}.savepoint.inflight")
    _instant_file(path, f"{ts}.savepoint", write_avro_metadata("HoodieSavepointMetadata", meta))
    return ts, [f"{p}/{n}" for p, names in files.items() for n in names]


def test_savepoint_honoured_by_write_clean_and_rollback(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    ts, kept = _savepoint(path)
    before = _tree(path)
    with pytest.raises(WriteError, match=rf"cannot roll back .*{ts}.*savepointed"):
        HudiTable.load(str(path)).rollback()
    assert _tree(path) == before
    _upsert_and_check(path)
    _upsert_and_check(path)
    # The same table without the savepoint: cleaning deletes (some of) those files there.
    unsaved = tmp_path / "without_savepoint"
    shutil.copytree(path, unsaved)
    for f in (unsaved / ".hoodie").glob(f"{ts}.savepoint*"):
        f.unlink()
    HudiTable.load(str(unsaved)).clean(options={"hoodie.cleaner.commits.retained": "1"})
    assert not all((unsaved / f).exists() for f in kept)
    HudiTable.load(str(path)).clean(options={"hoodie.cleaner.commits.retained": "1"})
    assert all((path / f).exists() for f in kept), "cleaning deleted a savepointed file"
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "after clean")


def test_archival_stops_at_a_savepoint(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    first = HudiTable.load(str(path)).timeline.completed_commits().first().timestamp  # type: ignore[union-attr]
    ts, _ = _savepoint(path)
    for _ in range(4):  # the metadata table compacted at each write: archival stops at its latest compaction too
        _upsert_and_check(path, {"hoodie.metadata.compact.max.delta.commits": "1"})
    HudiTable.load(str(path)).archive(options={"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                               "hoodie.cleaner.commits.retained": "1"})
    assert not (path / ".hoodie" / f"{first}.commit").exists(), "archival did not run"
    assert (path / ".hoodie" / f"{ts}.commit").exists(), "archival went past the savepoint"
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "after archival")


@pytest.mark.parametrize("state", ["pending savepoint", "completed restore", "completed indexing"])
def test_no_effect_states_let_the_write_through(unzip_table, tmp_path, state):
    path = _copy(unzip_table, tmp_path)
    ts = _next_ts(path)
    if state == "pending savepoint":
        _instant_file(path, f"{HudiTable.load(str(path)).timeline.completed_commits().last().timestamp}"  # type: ignore[union-attr]
                      ".savepoint.inflight")
    else:
        action = "restore" if state == "completed restore" else "indexing"
        for suffix in (".requested", ".inflight", ""):
            _instant_file(path, f"{ts}.{action}{suffix}")
    _upsert_and_check(path)


def test_pending_rollback_of_another_writer_is_finished_by_the_write(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    failed = _next_ts(path)
    _instant_file(path, f"{failed}.commit.requested")
    _instant_file(path, f"{failed}.inflight")  # layout 1 spells a commit's inflight file so
    rollback_ts = new_instant_time(after=failed)
    plan = {"instantToRollback": {"commitTime": failed, "action": "commit"}, "RollbackRequests": [], "version": 1}
    _instant_file(path, f"{rollback_ts}.rollback.requested", write_avro_metadata("HoodieRollbackPlan", plan))
    _upsert_and_check(path)
    assert (path / ".hoodie" / f"{rollback_ts}.rollback").exists()
    assert not list((path / ".hoodie").glob(f"{failed}.*"))


def test_check_writable_names_the_action(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    _set(path, "hoodie.table.base.file.format", "ORC")
    storage, base = Storage.for_uri(str(path))
    with pytest.raises(UnsupportedTableFeatureError, match=r"cannot compact, this engine does not honour: hoodie.table.base.file.format=ORC is not written by this "
                             r"engine \(PARQUET only\); way out: let Java Hudi write this table, or rewrite it"):
        check_writable(TableLocation.at(storage, base), TableConfig.load(TableLocation.at(storage, base)),
                       Timeline.load(TableLocation.at(storage, base)), action="compact")


def test_payload_type_alone_is_honoured_when_it_names_overwrite_with_latest(unzip_table, tmp_path):
    path = _copy(unzip_table, tmp_path)
    _set(path, "hoodie.compaction.payload.type", "OVERWRITE_LATEST_AVRO", ("hoodie.compaction.payload.class",))
    _upsert_and_check(path)


def test_ignore_defaults_under_an_ordering_mode_is_partial_update_payload(tmp_path):
    """A version-9 table as Hudi 1.2 records PartialUpdateAvroPayload from the modes alone (no legacy class): it is
    writable, and the engine merges with that payload; another partial-update mode is refused before a file."""
    config = TableConfig.create("t", "COPY_ON_WRITE", ["id"], [], "ts", version=9,
                                payload_class="org.apache.hudi.common.model.PartialUpdateAvroPayload")
    bare = config.with_props({"hoodie.table.legacy.payload.class": None})
    assert bare.payload_class == "org.apache.hudi.common.model.PartialUpdateAvroPayload"
    for props, reason in ((bare, None), (bare.with_props({"hoodie.table.partial.update.mode": "KEEP_VALUES"}),
                                         "partial-update merging")):
        problems = [r.check(props.props[r.key], props) for r in PROPERTIES
                    if r.key == "hoodie.table.partial.update.mode" and r.check]
        assert problems == [None] if reason is None else reason in (problems[0] or ""), problems


def test_docs_table_has_every_row_with_its_decision():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "table-features.md").read_text()
    lines = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| ")}
    for row in PROPERTIES:
        line = lines.get(f"`{row.key}`" + "".join(f" (also `{a}`)" for a in row.alternatives))
        assert line is not None, f"{row.key} has no row in docs/table-features.md"
        assert f"| {row.decision.value}" in line, f"{row.key}: the docs say another decision"
    for state in STATES:
        assert state.state in lines and f"| {state.decision.value}" in lines[state.state], state.state


def _clustering_plan(path: Path) -> bytes:
    s = HudiTable.load(str(path)).file_slices()[0]
    assert s.base_file is not None
    group = {"slices": [{"dataFilePath": _base_name(s.base_file.path), "deltaFilePaths": [], "fileId": s.file_id,
                         "partitionPath": s.partition_path, "bootstrapFilePath": None, "version": 1}],
             "metrics": {}, "numOutputFileGroups": 1, "extraMetadata": None, "version": 1}
    plan = {"inputGroups": [group], "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True,
            "strategy": {"strategyClassName": "org.apache.hudi.client.clustering.run.strategy."
                                              "SparkSortAndSizeExecutionStrategy", "strategyParams": {}, "version": 1}}
    return write_avro_metadata("HoodieRequestedReplaceMetadata", {"operationType": "CLUSTER", "clusteringPlan": plan,
                                                                  "extraMetadata": None, "version": 1})


def _without_record_keys(path: Path) -> None:
    file = path / ".hoodie" / "hoodie.properties"
    props = parse_properties(file.read_bytes())
    del props["hoodie.table.recordkey.fields"]
    file.write_bytes(format_properties(props, ["auto-generated keys"]).encode("latin-1"))


# States and properties other parts of the engine implement: this check lets them through.
OTHER_PARTS = {
    "pending clustering": lambda p: _instant_file(p, f"{_next_ts(p)}.replacecommit.requested", _clustering_plan(p)),
    "lock files": lambda p: _put(p, ".locks/table_lock.json"),
    "auto-generated keys": _without_record_keys,
    "cdc enabled": lambda p: _set(p, "hoodie.table.cdc.enabled", "true"),
}


@pytest.mark.parametrize("what", sorted(OTHER_PARTS))
def test_states_of_other_parts_are_let_through(unzip_table, tmp_path, what):
    path = _copy(unzip_table, tmp_path)
    OTHER_PARTS[what](path)
    storage, base = Storage.for_uri(str(path))
    for action in ("write", "compact", "clean", "archive", "roll back"):
        check_writable(TableLocation.at(storage, base), TableConfig.load(TableLocation.at(storage, base)),
                       Timeline.load(TableLocation.at(storage, base)), action=action)


@pytest.mark.parametrize("zone_value", [None, "LOCAL", "UTC"])
def test_instants_follow_the_timeline_timezone(unzip_table, tmp_path, monkeypatch, zone_value):
    """LOCAL (also the absent key, Java's default) makes instants in this machine's zone, as a Java writer on it
    would (HoodieInstantTimeGenerator); UTC in UTC. Checked in a zone 10 hours behind UTC."""
    monkeypatch.setenv("TZ", "Pacific/Honolulu")
    time.tzset()
    # A machine's zone does not change under a process: forget the instants earlier tests issued in UTC.
    monkeypatch.setattr(instant_module, "_GENERATOR", instant_module.InstantTimeGenerator())
    try:
        path = _copy(unzip_table, tmp_path)
        if zone_value is not None:
            _set(path, "hoodie.table.timeline.timezone", zone_value)
        result = write(path, _updates(path)[0], {"hoodie.datasource.write.operation": "upsert"})
        made = datetime.strptime(result.instant_time, "%Y%m%d%H%M%S%f")
        local_now = datetime.now().replace(tzinfo=None)
        utc_now = datetime.now(UTC).replace(tzinfo=None)
        expected = utc_now if zone_value == "UTC" else local_now
        assert abs((made - expected).total_seconds()) < 300, (result.instant_time, expected)
        assert_same_rows(HudiTable.load(str(path)).read_snapshot(), rs_snapshot(path), "after the write")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_partition_metafiles_in_base_format_are_found_and_written(unzip_table, tmp_path):
    """hoodie.partition.metafile.use.base.format=true: existing partitions marked only by
    `.hoodie_partition_metadata.parquet` are found (an upsert updates their rows instead of adding duplicates), and a
    new partition gets the parquet form, which hudi-rs and our reader read."""
    path = _copy(unzip_table, tmp_path)
    for text in path.rglob(".hoodie_partition_metadata"):
        props = parse_partition_metadata(text.read_bytes())
        (text.parent / ".hoodie_partition_metadata.parquet").write_bytes(
            format_partition_metadata_parquet(props["commitTime"], props["partitionDepth"]))
        text.unlink()
    _set(path, "hoodie.partition.metafile.use.base.format", "true")
    updates, target = _updates(path)
    new = updates.slice(0, 1)
    new = new.set_column(new.column_names.index("id"), "id", pa.array([10_000], new.schema.field("id").type))
    new = new.set_column(new.column_names.index("byteField"), "byteField",
                         pa.array([99], new.schema.field("byteField").type))
    result = write(path, pa.concat_tables([updates, new]), {"hoodie.datasource.write.operation": "upsert"})
    assert result.records_updated == updates.num_rows and result.records_inserted == 1
    marker = path / "99" / ".hoodie_partition_metadata.parquet"
    assert parse_partition_metadata_parquet(marker.read_bytes()) == {"commitTime": result.instant_time,
                                                                      "partitionDepth": 1}
    # no text form anywhere in the data table (the metadata table's own partition is a table of its own)
    assert not [p for p in path.rglob(".hoodie_partition_metadata") if ".hoodie" not in p.relative_to(path).parts]
    after = rs_snapshot(path)
    assert after.num_rows == updates.num_rows + 1
    assert_same_rows(HudiTable.load(str(path)).read_snapshot(), after, "after the write")
