from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import pytest
from conformance import V6_TABLES

from hudi_engine.errors import TableConfigError, TableNotFoundError, UnsupportedTableVersionError
from hudi_engine.java_properties import parse_properties
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_config import (
    CHECKSUM,
    TableConfig,
    compute_checksum,
)


def _copy_table(unzip_table, name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(unzip_table(name), dst)
    return dst


def _load(path: Path) -> TableConfig:
    storage, base = Storage.for_uri(str(path))
    return TableConfig.load(TableLocation.at(storage, base))


def _props_file(path: Path) -> Path:
    return path / ".hoodie" / "hoodie.properties"


def _rewrite(path: Path, **changes: str | None) -> None:
    props = parse_properties(_props_file(path).read_bytes())
    for k, v in changes.items():
        key = k.replace("__", ".")
        if v is None:
            props.pop(key, None)
        else:
            props[key] = v
    _props_file(path).write_text("".join(f"{k}={v}\n" for k, v in props.items()), "latin-1")


def test_checksum_matches_spec():
    assert compute_checksum("default", "v6_trips_8i1u") == 3843273058
    assert compute_checksum(None, "t") == zlib.crc32(b".t")


@pytest.mark.parametrize("name", V6_TABLES)
def test_load_every_real_table(unzip_table, name):
    config = _load(unzip_table(name))
    props = parse_properties(_props_file(unzip_table(name)).read_bytes())
    assert config.props == props
    assert config.version == 6 and config.timeline_layout_version == 1
    assert config.table_type == ("MERGE_ON_READ" if name.startswith("mor") else "COPY_ON_WRITE")
    assert config.checksum == compute_checksum(config.database_name, config.name)
    assert config.name == props["hoodie.table.name"]
    assert config.record_key_fields == props["hoodie.table.recordkey.fields"].split(",")
    assert config.partition_fields == [f for f in props.get("hoodie.table.partition.fields", "").split(",") if f]
    assert config.is_partitioned == ("nonpartitioned" not in name and "empty" not in name)
    assert config.populate_meta_fields == ("no_metafields" not in name)
    assert config.metadata_partitions == [] and not config.is_metadata_table_enabled
    assert config.base_file_format == "PARQUET"
    assert config.drop_partition_columns is False
    assert config.archivelog_folder == "archived"
    if config.create_schema is not None:
        assert config.create_schema["name"] == f"{config.name}_record"


def test_typed_properties_of_real_tables(unzip_table):
    trips = _load(unzip_table("mor_avrolog_v6_trips_8i1u"))
    assert trips.precombine_field == "ts"
    assert trips.hive_style_partitioning and not trips.url_encode_partitioning
    assert trips.key_generator_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert trips.payload_class == "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    assert trips.record_merger_strategy == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
    assert trips.timeline_timezone == "LOCAL"
    complex_ = _load(unzip_table("cow_v6_complexkeygen_hivestyle"))
    assert complex_.record_key_fields == ["id", "name"]
    assert complex_.partition_fields == ["byteField", "shortField"]
    plain = _load(unzip_table("cow_v6_simplekeygen_nonhivestyle"))
    assert plain.hive_style_partitioning is False


def test_no_hoodie_folder(tmp_path):
    with pytest.raises(TableNotFoundError, match=r"no \.hoodie folder at .*: not a Hudi table"):
        _load(tmp_path)


def test_no_properties(tmp_path):
    (tmp_path / ".hoodie").mkdir()
    with pytest.raises(TableNotFoundError, match="no hoodie.properties in"):
        _load(tmp_path)


def test_missing_required_key(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__table__type=None)
    with pytest.raises(TableConfigError, match=r"hoodie.properties: required key hoodie.table.type") as e:
        _load(table)
    assert str(_props_file(table)) in str(e.value)


def test_wrong_checksum(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__table__checksum="12345")
    with pytest.raises(TableConfigError, match=r"hoodie.table.checksum=12345 is wrong: expected 1363530505 \(CRC32 of .default.v6_nonpartitioned.\)"):
        _load(table)


def test_missing_checksum_is_accepted(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__table__checksum=None)
    assert _load(table).checksum is None


def test_backup_used_when_primary_is_bad(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    original = _props_file(table).read_bytes()
    (table / ".hoodie" / "hoodie.properties.backup").write_bytes(original)
    _rewrite(table, hoodie__table__checksum="1")
    assert _load(table).props == parse_properties(original)
    _props_file(table).unlink()  # interrupted update: only the backup is left
    assert _load(table).props == parse_properties(original)


def test_bad_backup_does_not_hide_primary_error(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    (table / ".hoodie" / "hoodie.properties.backup").write_text("hoodie.table.name=x\n")
    _rewrite(table, hoodie__table__checksum="1")
    with pytest.raises(TableConfigError, match="checksum=1 is wrong"):
        _load(table)


@pytest.mark.parametrize(
    "version,message",
    [
        ("8", r"layout.version=1; table version 8 needs timeline layout 2"),  # a v6 timeline under a v8 label
        ("7", r"=7 \(a placeholder version no release writes\) is not supported; readable: 6, 8, 9, writable: 6, 8, 9"),
        ("5", r"=5 .* older than supported.*readable: 6, 8, 9, writable: 6, 8, 9"),
        ("42", r"=42 .*not supported \(a newer Hudi wrote it: read and write it with that Hudi\); readable: 6, 8, 9, "
               r"writable: 6, 8, 9"),
    ],
)
def test_unsupported_versions(unzip_table, tmp_path, version, message):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__table__version=version)
    with pytest.raises(UnsupportedTableVersionError, match=message):
        _load(table)


@pytest.mark.parametrize("name,version", [("cow_v8_nonpartitioned", 8), ("cow_v9_txns_simple_nometa", 9)])
def test_real_1x_table_with_parquet_base_files_is_writable(unzip_table, name, version):
    config = _load(unzip_table(name, "v8_v9"))
    assert config.version == version and config.timeline_layout_version == 2
    config.require_writable()


def test_lance_and_moved_timeline_1x_tables_are_refused_for_writing(unzip_table):
    lance = _load(unzip_table("cow_v9_lance_nonpartitioned", "v8_v9"))
    with pytest.raises(UnsupportedTableVersionError,
                       match=r"hoodie.table.version=9, Hudi 1.1\) has LANCE base files .* writes parquet base files "
                             r"only. Let Java Hudi write this table"):
        lance.require_writable()
    moved = _load(unzip_table("cow_v8_nonpartitioned", "v8_v9")).with_props({"hoodie.timeline.path": "tl"})
    with pytest.raises(UnsupportedTableVersionError, match=r"keeps its timeline in .hoodie/tl"):
        moved.require_writable()


def test_v6_table_is_writable(unzip_table):
    _load(unzip_table("cow_v6_nonpartitioned")).require_writable()


def test_1x_config_keys(unzip_table):
    """Hudi 1.x names the key generator by type, the ordering field `ordering.fields` (v9), and may name no
    payload but a merge mode."""
    v9 = _load(unzip_table("mor_avrolog_v9_mor_8i4u_commit_time", "v8_v9"))
    assert v9.key_generator_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert v9.ordering_fields == ["ts"] and v9.precombine_field == "ts"
    assert v9.record_merge_mode == "COMMIT_TIME_ORDERING"
    assert v9.payload_class == "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    assert v9.timeline_path == "timeline" and v9.timeline_history_path == "history"
    event_time = _load(unzip_table("cow_v9_txns_simple_nometa", "v8_v9"))
    assert event_time.payload_class == "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    v8 = _load(unzip_table("cow_v8_nonpartitioned", "v8_v9"))
    assert v8.precombine_field == "longField"
    assert v8.key_generator_class == "org.apache.hudi.keygen.NonpartitionedKeyGenerator"


def test_timeline_layout_must_be_1(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__timeline__layout__version="2")
    with pytest.raises(UnsupportedTableVersionError, match="table version 6 needs timeline layout 1"):
        _load(table)
    _rewrite(table, hoodie__timeline__layout__version=None)
    assert _load(table).timeline_layout_version == 1  # Java's default


def test_bad_version_value(unzip_table, tmp_path):
    table = _copy_table(unzip_table, "cow_v6_nonpartitioned", tmp_path)
    _rewrite(table, hoodie__table__version="six")
    with pytest.raises(TableConfigError, match="hoodie.table.version='six' is not an integer"):
        _load(table)


def test_create_cow_like_spark(unzip_table):
    real = _load(unzip_table("cow_v6_complexkeygen_hivestyle"))
    created = TableConfig.create(
        "v6_complexkeygen_hivestyle", "COPY_ON_WRITE", ["id", "name"], ["byteField", "shortField"], "longField",
        "org.apache.hudi.keygen.ComplexKeyGenerator", None, True, False,
        create_schema=real.create_schema,
    )
    extra = {"hoodie.table.base.file.format": "PARQUET", "hoodie.table.timeline.timezone": "UTC"}
    assert dict(created.props) == {**real.props, **extra}


def test_create_mor_like_spark(unzip_table):
    real = _load(unzip_table("mor_avrolog_v6_trips_8i1u"))
    created = TableConfig.create(
        "v6_trips_8i1u", "MERGE_ON_READ", ["uuid"], ["city"], "ts", None, None, True, False,
        create_schema=real.create_schema,
    )
    assert dict(created.props) == {
        **real.props, "hoodie.table.base.file.format": "PARQUET", "hoodie.table.timeline.timezone": "UTC",
    }


def test_create_defaults():
    config = TableConfig.create("t", "COPY_ON_WRITE", ["id"], [], populate_meta_fields=False, database=None)
    assert config.key_generator_class == "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    assert "hoodie.table.partition.fields" not in config.props
    assert "hoodie.compaction.payload.class" not in config.props
    assert "hoodie.database.name" not in config.props
    assert config.props["hoodie.populate.meta.fields"] == "false"
    assert config.props[CHECKSUM] == str(zlib.crc32(b".t"))
    assert config.timeline_timezone == "UTC"
    assert TableConfig.create("t", "COPY_ON_WRITE", ["a", "b"], ["p"]).key_generator_class.endswith("ComplexKeyGenerator")
    assert TableConfig.create("t", "COPY_ON_WRITE", ["a"], ["p"]).key_generator_class.endswith("SimpleKeyGenerator")
    # Hudi 0.x stores a payload class for MOR tables only (HoodieTableMetaClient.PropertyBuilder); 1.x derives the
    # merge mode of any table from it.
    cow_payload = TableConfig.create("t", "COPY_ON_WRITE", ["a"], [], payload_class="x.Y")
    assert "hoodie.compaction.payload.class" not in cow_payload.props
    assert "hoodie.compaction.record.merger.strategy" not in cow_payload.props
    mor_payload = TableConfig.create("t", "MERGE_ON_READ", ["a"], [], payload_class="x.Y")
    assert mor_payload.payload_class == "x.Y"
    v8 = TableConfig.create("t", "COPY_ON_WRITE", ["a"], [], "ts",
                            payload_class="org.apache.hudi.common.model.DefaultHoodieRecordPayload", version=8)
    assert v8.props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"


_M = "org.apache.hudi.common.model."


@pytest.mark.parametrize("payload,mode,partial", [
    ("OverwriteWithLatestAvroPayload", "COMMIT_TIME_ORDERING", None),
    ("DefaultHoodieRecordPayload", "EVENT_TIME_ORDERING", None),
    ("EventTimeAvroPayload", "EVENT_TIME_ORDERING", None),
    ("PartialUpdateAvroPayload", "EVENT_TIME_ORDERING", "IGNORE_DEFAULTS"),
    ("OverwriteNonDefaultsWithLatestAvroPayload", "COMMIT_TIME_ORDERING", "IGNORE_DEFAULTS"),
])
def test_create_v9_records_a_payload_as_hudi_1_2_does(payload, mode, partial):
    """Version 9 as Hudi 1.2's df.write makes it (seen through the oracle, tests/java_hudi/test_java_reads.py): the
    payload's merge mode and partial-update mode, the class as hoodie.table.legacy.payload.class, no payload class
    and no merge strategy id; read back, the table merges with that payload."""
    v9 = TableConfig.create("t", "MERGE_ON_READ", ["a"], [], "ts", payload_class=_M + payload, version=9)
    assert v9.props["hoodie.record.merge.mode"] == mode
    assert v9.props.get("hoodie.table.partial.update.mode") == partial
    assert v9.props["hoodie.table.legacy.payload.class"] == _M + payload
    assert not {"hoodie.compaction.payload.class", "hoodie.record.merge.strategy.id"} & set(v9.props)
    assert v9.payload_class == _M + payload
    # Without the legacy class (a table Hudi 1.2 made from the modes alone), the modes pick the payload.
    bare = v9.with_props({"hoodie.table.legacy.payload.class": None})
    expected = {"EventTimeAvroPayload": "DefaultHoodieRecordPayload"}.get(payload, payload)
    assert bare.payload_class == _M + expected


def test_create_1x_default_merge_mode():
    """No payload named: Hudi 1.x's default mode, EVENT_TIME_ORDERING with an ordering field and
    COMMIT_TIME_ORDERING without, no legacy class (v9); version 8 keeps the class and a strategy id."""
    ordered = TableConfig.create("t", "COPY_ON_WRITE", ["a"], [], "ts", version=9)
    assert ordered.record_merge_mode == "EVENT_TIME_ORDERING" and "hoodie.table.legacy.payload.class" not in ordered.props
    assert ordered.payload_class == _M + "DefaultHoodieRecordPayload"
    unordered = TableConfig.create("t", "MERGE_ON_READ", ["a"], [], version=9)
    assert unordered.record_merge_mode == "COMMIT_TIME_ORDERING"
    assert unordered.payload_class == _M + "OverwriteWithLatestAvroPayload"
    by_mode = TableConfig.create("t", "COPY_ON_WRITE", ["a"], [], "ts", version=9, merge_mode="COMMIT_TIME_ORDERING")
    assert by_mode.record_merge_mode == "COMMIT_TIME_ORDERING" and "hoodie.table.legacy.payload.class" not in by_mode.props
    v8 = TableConfig.create("t", "MERGE_ON_READ", ["a"], [], "ts", version=8)
    assert v8.props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    assert v8.props["hoodie.compaction.payload.class"] == _M + "DefaultHoodieRecordPayload"
    assert v8.props["hoodie.record.merge.strategy.id"] == "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "a.b"])
def test_create_rejects_bad_names(name):
    with pytest.raises(TableConfigError, match="hoodie.table.name"):
        TableConfig.create(name, "COPY_ON_WRITE", ["id"], [])


def test_create_rejects_bad_table_type():
    with pytest.raises(TableConfigError, match="expected one of COPY_ON_WRITE, MERGE_ON_READ"):
        TableConfig.create("t", "MOR", ["id"], [])


def test_initialize_save_and_reload(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig.create("t", "MERGE_ON_READ", ["id"], ["p"], "ts", hive_style=True)
    config.initialize(TableLocation.at(storage, base))
    for sub in (".schema", "archived", ".temp", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids"):
        assert (tmp_path / "t" / ".hoodie" / sub).is_dir()
    text = _props_file(tmp_path / "t").read_text("latin-1")
    lines = text.splitlines()
    assert lines[0].startswith("#Properties saved on ") and lines[0].endswith("Z")
    assert lines[1].startswith("#") and lines[1].endswith(" UTC " + lines[1][-4:])
    assert lines[-1] == f"hoodie.table.checksum={compute_checksum('default', 't')}"
    assert TableConfig.load(TableLocation.at(storage, base)) == TableConfig(config.props, str(tmp_path / "t" / ".hoodie" / "hoodie.properties"))
    with pytest.raises(TableConfigError, match="already exists"):
        config.initialize(TableLocation.at(storage, base))

    # An update (e.g. disabling the MDT) goes through the backup protocol and leaves no backup behind.
    with_mdt = config.with_props({"hoodie.table.metadata.partitions": "files,column_stats"})
    assert with_mdt.metadata_partitions == ["files", "column_stats"] and with_mdt.is_metadata_table_enabled
    with_mdt.save(TableLocation.at(storage, base))
    assert TableConfig.load(TableLocation.at(storage, base)).is_metadata_table_enabled
    with_mdt.without_metadata_table().save(TableLocation.at(storage, base))
    reloaded = TableConfig.load(TableLocation.at(storage, base))
    assert not reloaded.is_metadata_table_enabled and "hoodie.table.metadata.partitions" not in reloaded.props
    assert not (tmp_path / "t" / ".hoodie" / "hoodie.properties.backup").exists()


def test_save_refreshes_checksum(tmp_path):
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig({"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.version": "6"})
    config.save(TableLocation.at(storage, base))
    assert TableConfig.load(TableLocation.at(storage, base)).checksum == compute_checksum(None, "t")


def test_save_drops_stale_hadoop_crc(tmp_path):
    """Java Hudi on file:// writes hoodie.properties through Hadoop's checksummed local file system, which leaves a
    `.hoodie.properties.crc` beside it and refuses the file once it no longer matches (Hudi then cannot load the
    table). A save replaces the file, so the stale .crc goes."""
    storage, base = Storage.for_uri(str(tmp_path / "t"))
    config = TableConfig.create("t", "COPY_ON_WRITE", ["id"], ["p"], "ts")
    config.initialize(TableLocation.at(storage, base))
    crc = tmp_path / "t" / ".hoodie" / ".hoodie.properties.crc"
    crc.write_bytes(b"crc\x00\x00\x02\x00\x01\x02\x03\x04")
    config.without_metadata_table().save(TableLocation.at(storage, base))
    assert not crc.exists()
    assert TableConfig.load(TableLocation.at(storage, base)).props["hoodie.table.name"] == "t"


def test_escaped_create_schema_round_trips(unzip_table, tmp_path):
    real = _load(unzip_table("cow_v6_complexkeygen_hivestyle"))
    storage, base = Storage.for_uri(str(tmp_path / "copy"))
    real.save(TableLocation.at(storage, base))
    text = _props_file(tmp_path / "copy").read_text("latin-1")
    assert 'hoodie.table.create.schema={"type"\\:"record"' in text
    assert TableConfig.load(TableLocation.at(storage, base)).create_schema == real.create_schema
