from __future__ import annotations

import posixpath
import re
import uuid
import zipfile

import pytest

from hudi_engine.file_naming import (
    UNKNOWN_WRITE_TOKEN,
    BaseFileName,
    FileNameError,
    LogFileName,
    WriteToken,
    file_id_of,
    is_base_file_name,
    is_log_file_name,
    new_file_id,
    split_file_id,
)


def _conformance_file_names(conformance_dir) -> tuple[set[str], set[str]]:
    """(base file names, log file names) of every table zip and the log_files folder."""
    base, logs = set(), set()
    for z in sorted(conformance_dir.glob("*/*.zip")):
        for member in zipfile.ZipFile(z).namelist():
            if "__MACOSX" in member or member.endswith("/") or "/gold_data/" in member:  # gold data: plain Spark output
                continue
            name = posixpath.basename(member)
            if "/.hoodie/" in member and "/.hoodie/metadata/" not in member and "/archived/" not in member:
                continue  # timeline files
            if re.match(r"^\..+\.(log|archive)\.\d+", name):
                logs.add(name)
            elif re.search(r"\.(parquet|lance|hfile|orc)$", name):
                base.add(name)
    for f in (conformance_dir / "log_files").rglob(".*"):
        if f.is_file():
            logs.add(f.name)
    return base, logs


def test_round_trip_every_real_file_name(conformance_dir):
    base, logs = _conformance_file_names(conformance_dir)
    assert len(base) > 250 and len(logs) > 60
    for name in base:
        parsed = BaseFileName.parse(name)
        assert str(parsed) == name and is_base_file_name(name) and not is_log_file_name(name)
        assert name.startswith(parsed.file_id + "_" + parsed.write_token + "_" + parsed.instant_time)
        assert file_id_of(name) == parsed.file_id
    for name in logs:
        parsed = LogFileName.parse(name)
        assert parsed.format() == name and is_log_file_name(name) and not is_base_file_name(name)
        assert parsed.write_token is not None  # every real log name carries a token
        assert file_id_of(name) == parsed.file_id


def test_real_names_in_detail():
    base = BaseFileName.parse("d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_0-13-60_20250331030642808.parquet")
    assert base == BaseFileName("d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0", "0-13-60", "20250331030642808", ".parquet")
    assert WriteToken.parse(base.write_token) == WriteToken(0, 13, 60)
    log = LogFileName.parse(".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1")
    assert log == LogFileName("0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0", "20250126040823628", 2, UNKNOWN_WRITE_TOKEN)
    assert log.extension == "log" and log.suffix == ""


def test_log_name_variants():
    no_token = LogFileName.parse(".abc-0_20240101000000000.log.3")
    assert no_token.write_token is None and no_token.format() == ".abc-0_20240101000000000.log.3"
    cdc = LogFileName.parse(".abc-0_20240101000000000.log.1_0-1-2.cdc")
    assert cdc.suffix == ".cdc" and str(cdc) == ".abc-0_20240101000000000.log.1_0-1-2.cdc"
    archive = LogFileName.parse(".commits_.archive.7_1-0-1")
    assert (archive.file_id, archive.base_instant, archive.extension, archive.version) == ("commits", "", "archive", 7)
    rolled = LogFileName("f-0", "1", 1, "0-1-2").next_version(WriteToken(3, 4, 5))
    assert rolled == LogFileName("f-0", "1", 2, "3-4-5")


def test_log_file_ordering():
    names = [
        LogFileName("f-0", "2", 1, "0-1-1"),
        LogFileName("f-0", "1", 2, "0-1-1"),
        LogFileName("f-0", "1", 1, "1-0-1"),
        LogFileName("f-0", "1", 1, None),
        LogFileName("f-0", "1", 1, "0-9-9", suffix=".cdc"),
        LogFileName("f-0", "1", 1, "0-9-9"),
    ]
    ordered = sorted(names, key=lambda n: n.sort_key)
    assert [str(n) for n in ordered] == [
        ".f-0_1.log.1", ".f-0_1.log.1_0-9-9", ".f-0_1.log.1_0-9-9.cdc", ".f-0_1.log.1_1-0-1",
        ".f-0_1.log.2_0-1-1", ".f-0_2.log.1_0-1-1",
    ]


def test_new_file_id():
    file_id = new_file_id()
    prefix, index = split_file_id(file_id)
    assert index == 0 and uuid.UUID(prefix).version == 4 and "_" not in file_id
    assert split_file_id(new_file_id(3))[1] == 3


@pytest.mark.parametrize(
    "name",
    [
        "abc.parquet",
        "abc_0-1-2.parquet",
        "abc_0-1_20240101.parquet",
        "abc_0-1-2_2024x.parquet",
        "abc_0-1-2_20240101",
        "a_b_0-1-2_20240101.parquet",
        "part-00000-fa6a1140-39e9-4635-912f-0bb8c285a4b4-c000.snappy.parquet",
        ".abc_20240101.log.1_0-1-2",
    ],
)
def test_bad_base_file_names(name):
    assert not is_base_file_name(name)
    with pytest.raises(FileNameError, match="is not a base file name"):
        BaseFileName.parse(name)


@pytest.mark.parametrize(
    "name",
    [
        "abc_20240101.log.1_0-1-2",
        ".abc_20240101.log.x_0-1-2",
        ".abc_20240101.log.1_0-1",
        ".abc_20240101.txt.1_0-1-2",
        ".abc_20240101.log.1_0-1-2.bak",
        "abc-0_0-1-2_20240101.parquet",
    ],
)
def test_bad_log_file_names(name):
    assert not is_log_file_name(name)
    with pytest.raises(FileNameError, match="is not a log file name"):
        LogFileName.parse(name)


def test_constructor_validation():
    with pytest.raises(FileNameError, match="must be non-empty and contain no '_'"):
        BaseFileName("a_b", "0-1-2", "1")
    with pytest.raises(FileNameError, match="write token '0-1'"):
        BaseFileName("a", "0-1", "1")
    with pytest.raises(FileNameError, match="must be digits"):
        LogFileName("a", "x1", 1, None)
    with pytest.raises(FileNameError, match="'log' or 'archive'"):
        LogFileName("a", "1", 1, None, extension=".log")
    with pytest.raises(FileNameError, match="needs a write token"):
        LogFileName("a", "1", 1, None, suffix=".cdc")
    with pytest.raises(FileNameError, match="expected '<uuid>-<n>'"):
        split_file_id("nodash")
    assert str(BaseFileName("a-0", WriteToken(1, 2, 3), "5")) == "a-0_1-2-3_5.parquet"
