"""Hudi 1.2's procedure list: every name served or refused, signatures as Hudi's `help` prints them."""
from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.procedures import REFUSED, SERVED
from hudi_engine.procedures.registry import PROCEDURES, spec


def test_every_procedure_is_served_or_refused_once():
    assert len(PROCEDURES) == 72  # Hudi 1.2's CALL help()
    assert set(SERVED) | set(REFUSED) == set(PROCEDURES)
    assert not set(SERVED) & set(REFUSED)


def test_show_commits_signature_is_hudis():
    p = spec("SHOW_COMMITS")
    assert [(q.name, q.type, q.required, q.default) for q in p.parameters] == [
        ("table", "string", True, None), ("limit", "integer", False, 10)]
    assert p.schema() == pa.schema([
        ("commit_time", pa.string()), ("state_transition_time", pa.string()), ("action", pa.string()),
        *[(n, pa.int64()) for n in ("total_bytes_written", "total_files_added", "total_files_updated",
                                    "total_partitions_written", "total_records_written",
                                    "total_update_records_written", "total_errors")]])


def test_spark_ddl_quotes_hudis_column_names():
    assert spec("show_fs_path_detail").spark_ddl().startswith("`path_num` BIGINT, `file_num` BIGINT")
    assert "`storage_size(unit)` STRING" in spec("show_fs_path_detail").spark_ddl()
    assert "`table` STRING NOT NULL" in spec("show_audit_lock_status").spark_ddl()


def test_unknown_procedure_names_hudis():
    with pytest.raises(ConfigError, match="no procedure named show_commit:.*show_commits"):
        spec("show_commit")
