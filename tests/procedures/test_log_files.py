"""show_logfile_metadata and show_logfile_records on the log file of a merge-on-read update."""
from __future__ import annotations

import json

import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call


def test_show_logfile_metadata(mor):
    path, _, second = mor
    (block,) = call("show_logfile_metadata", path, log_file_path_pattern=f"{path}/x/.*.log.*").to_pylist()
    assert (block["instant_time"], block["record_count"], block["block_type"]) == (second, 1, "AVRO_DATA_BLOCK")
    header = json.loads(block["header_metadata"])
    assert header["INSTANT_TIME"] == second and json.loads(header["SCHEMA"])["type"] == "record"
    assert json.loads(block["footer_metadata"]) == {}
    assert call("show_logfile_metadata", path, log_file_path_pattern=f"{path}/*/.*.log.*").num_rows == 1
    with pytest.raises(ConfigError, match="no log file matches log_file_path_pattern"):
        call("show_logfile_metadata", path, log_file_path_pattern=f"{path}/y/.*.log.*")


def test_show_logfile_records(mor):
    path, _, second = mor
    (record,) = call("show_logfile_records", path, log_file_path_pattern=f"{path}/x/.*.log.*").to_pylist()
    values = json.loads(record["records"])
    assert (values["_hoodie_commit_time"], values["id"], values["v"], values["ts"]) == (second, 1, "v1-2", 2)
    with pytest.raises(ConfigError, match="merge => true of show_logfile_records is not served"):
        call("show_logfile_records", path, log_file_path_pattern=f"{path}/x/.*.log.*", merge=True)
