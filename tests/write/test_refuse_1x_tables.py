"""Writes stay table version 6: a Hudi 1.x table (version 8 or 9) is read, never written. Every writer and table
service is refused before it changes a byte, with a message naming the version and what to do."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_engine import HudiTable, WriteConfig
from hudi_engine.config import CleanConfig
from hudi_engine.errors import UnsupportedTableVersionError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.table_services.clean import clean
from hudi_engine.table_services.compaction import schedule_compaction
from hudi_engine.write.write_client import WriteClient

TABLES = [("mor_avrolog_v8_trips_8i3u1d", 8, "1.0"), ("cow_v9_txns_simple_nometa", 9, "1.1")]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _message(version: int, release: str) -> str:
    return (rf"table '\w+' is hoodie.table.version={version} \(Hudi {release}\); this engine reads it but writes only "
            rf"table version 6. Write it with Hudi {release} or later, or write a new table .*"
            r"hoodie.write.table.version=6 and hoodie.write.auto.upgrade=false")


@pytest.mark.parametrize("name,version,release", TABLES)
def test_every_writer_and_service_refuses_a_1x_table(unzip_table, tmp_path, name, version, release):
    path = tmp_path / name
    shutil.copytree(unzip_table(name, "v8_v9"), path)
    before = _tree(path)
    storage, base = Storage.for_uri(str(path))
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "uuid"}
    attempts = {
        "write": lambda: WriteClient.open(str(path), WriteConfig.from_options(options), pa.schema([("uuid", pa.string())])),
        "compaction": lambda: schedule_compaction(TableLocation.at(storage, base)),
        "clean": lambda: clean(TableLocation.at(storage, base), CleanConfig(commits_retained=1)),
        "rollback": lambda: HudiTable.load(str(path)).rollback(),
    }
    for what, attempt in attempts.items():
        with pytest.raises(UnsupportedTableVersionError, match=_message(version, release)):
            attempt()
        assert _tree(path) == before, f"{what} changed the table"
