"""copy_to_temp_view and copy_to_table (hudi_engine/procedures/copies.py): Hudi's query types as the engine's read
keys, handed to the session's catalog; tests/spark/test_procedures.py runs them in Spark."""
from __future__ import annotations

import pytest

from hudi_engine.errors import ConfigError
from hudi_engine.procedures import call, run


class FakeCatalog:
    def __init__(self) -> None:
        self.done: list[tuple] = []

    def copy_to_temp_view(self, path, read_options, view, *, replace, global_view) -> None:
        self.done.append(("view", path, dict(read_options), view, replace, global_view))

    def copy_to_table(self, path, read_options, table, *, save_mode, columns) -> None:
        self.done.append(("table", path, dict(read_options), table, save_mode, columns))


def test_query_types_become_hudis_read_keys():
    c = FakeCatalog()
    assert run("copy_to_temp_view", [], {"table": "/d/t", "view_name": "v"}, session=c).to_pylist() == [{"status": 0}]
    run("copy_to_temp_view", ["/d/t", "snapshot", "v", "", "", "20240101000000000", True, True], session=c)
    run("copy_to_table", [], {"table": "/d/t", "new_table": "db.n", "query_type": "incremental",
                              "begin_instance_time": "1", "end_instance_time": "2", "save_mode": "Append",
                              "columns": "id, v"}, session=c)
    run("copy_to_table", [], {"table": "/d/t", "new_table": "n", "query_type": "read_optimized"}, session=c)
    assert c.done == [
        ("view", "/d/t", {"hoodie.datasource.query.type": "snapshot"}, "v", False, False),
        ("view", "/d/t", {"hoodie.datasource.query.type": "snapshot", "as.of.instant": "20240101000000000"}, "v",
         True, True),
        ("table", "/d/t", {"hoodie.datasource.query.type": "incremental",
                           "hoodie.datasource.read.begin.instanttime": "1",
                           "hoodie.datasource.read.end.instanttime": "2"}, "db.n", "append", ["id", "v"]),
        ("table", "/d/t", {"hoodie.datasource.query.type": "read_optimized"}, "n", "overwrite", [])]


@pytest.mark.parametrize(("name", "args", "message"), [
    ("copy_to_temp_view", {"view_name": "v", "query_type": "incremental", "begin_instance_time": "1"},
     "begin_instance_time and end_instance_time can not be null"),
    ("copy_to_temp_view", {"view_name": "v", "query_type": "cdc"}, "query_type of copy_to_temp_view is 'cdc'"),
    ("copy_to_table", {"new_table": "n", "save_mode": "ignore"}, "save_mode of copy_to_table is 'ignore'"),
])
def test_bad_arguments_are_refused_before_the_session_is_used(name, args, message):
    c = FakeCatalog()
    with pytest.raises(ConfigError, match=message):
        run(name, [], {"table": "/d/t", **args}, session=c)
    assert not c.done


def test_outside_spark_they_are_refused():
    with pytest.raises(ConfigError, match="acts on the Spark session's catalog"):
        call("copy_to_temp_view", "/d/t", view_name="v")
