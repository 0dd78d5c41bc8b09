from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from hudi_engine.errors import TimelineError
from hudi_engine.timeline.commit_metadata import NULL_COMMIT, CommitMetadata, RuntimeStats, WriteStat, jackson_pretty

JSON_SUFFIXES = (".commit", ".deltacommit", ".replacecommit", ".inflight")  # .inflight covers all three inflights


def _commit_json_files(conformance_dir: Path) -> list[tuple[str, str, bytes]]:
    """(zip, entry, bytes) of every non-empty JSON instant file in the v6 tables, read straight from the zips."""
    out = []
    for z in sorted((conformance_dir / "v6").glob("*.zip")):
        with zipfile.ZipFile(z) as zf:
            for name in zf.namelist():
                if "__MACOSX" in name or "/.hoodie/" not in name or name.count("/") != 2:
                    continue
                data = zf.read(name)
                if name.endswith(JSON_SUFFIXES) and data:
                    out.append((z.name, name, data))
    return out


@pytest.fixture(scope="module")
def commit_files(conformance_dir: Path) -> list[tuple[str, str, bytes]]:
    files = _commit_json_files(conformance_dir)
    assert len(files) >= 40, "expected the completed and inflight commit files of all v6 tables"
    return files


def test_every_real_commit_file_round_trips_byte_for_byte(commit_files) -> None:
    for zip_name, entry, data in commit_files:
        meta = CommitMetadata.from_json(data, file_name=entry)
        out = meta.to_json()
        assert json.loads(out) == json.loads(data), f"{zip_name}:{entry} parsed differently"
        assert out == data, f"{zip_name}:{entry} re-serialized with a different layout"


def test_real_delta_commit_has_delta_and_plain_stats(commit_files) -> None:
    seen_delta = seen_plain_in_delta = False
    for _, entry, data in commit_files:
        if not entry.endswith(".deltacommit"):
            continue
        for stat in CommitMetadata.from_json(data).write_stats():
            if stat.is_delta:
                seen_delta = True
                assert stat.path.rsplit("/", 1)[-1] in stat.log_files
                assert stat.log_offset == 0 and stat.log_version == 1
                assert stat.base_file.endswith(".parquet") and stat.records_stats == {"val": None}
                assert stat.file_size_in_bytes == stat.total_write_bytes > 0
            else:
                seen_plain_in_delta = True
                assert stat.path.endswith(".parquet") and stat.log_files is None
    assert seen_delta and seen_plain_in_delta


def test_real_commit_fields(unzip_table) -> None:
    base = unzip_table("mor_avrolog_v6_trips_8i1u")
    meta = CommitMetadata.from_json((base / ".hoodie" / "20250331030645735.deltacommit").read_bytes())
    assert meta.operation_type == "UPSERT_PREPPED" and not meta.compacted and not meta.is_replace
    assert list(meta.partition_to_write_stats) == ["city=san_francisco"]
    (stat,) = meta.write_stats()
    assert stat.file_id == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"
    assert stat.prev_commit == "20250331030642808" and stat.num_update_writes == 1 and stat.num_inserts == 0
    assert stat.runtime_stats == RuntimeStats(0, 296, 0)
    assert stat.min_event_time is None and stat.cdc_stats is None and stat.temp_path is None
    assert meta.schema["name"] == "v6_trips_8i1u_record"
    assert [f["name"] for f in meta.schema["fields"]] == ["ts", "uuid", "rider", "driver", "fare", "city"]
    assert meta.extra_metadata["_hoodie.spark.sql.writes.prepped"] == "true"
    assert meta.written_paths() == [stat.path]
    assert meta.file_ids_by_partition() == {"city=san_francisco": {stat.file_id}}

    first = CommitMetadata.from_json((base / ".hoodie" / "20250331030642808.deltacommit").read_bytes())
    assert all(s.prev_commit == NULL_COMMIT and not s.is_delta for s in first.write_stats())
    assert first.total_records_written == 8


def test_replace_commit_file_ids(unzip_table) -> None:
    base = unzip_table("cow_v6_simplekeygen_nonhivestyle_overwritetable")
    meta = CommitMetadata.from_json((base / ".hoodie" / "20240707001303088.replacecommit").read_bytes())
    assert meta.is_replace and meta.operation_type == "INSERT_OVERWRITE_TABLE"
    assert meta.replaced_file_ids() == {
        "30": {"d398fae1-c0e6-4098-8124-f55f7098bdba-0"},
        "20": {"88163884-fef0-4aab-865d-c72327a8a1d5-0"},
        "10": {"4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0"},
    }
    inflight = CommitMetadata.from_json((base / ".hoodie" / "20240707001303088.replacecommit.inflight").read_bytes())
    assert not inflight.is_replace and inflight.written_paths() == []


def test_workload_profile_stats(unzip_table) -> None:
    base = unzip_table("cow_v6_simplekeygen_nonhivestyle")
    meta = CommitMetadata.from_json((base / ".hoodie" / "20240418172804498.inflight").read_bytes())
    assert meta.extra_metadata == {} and meta.schema is None
    stats = meta.write_stats()
    assert stats and all(s.path is None and s.partition_path is None and s.runtime_stats is None for s in stats)
    assert meta.file_ids_by_partition().keys() == meta.partition_to_write_stats.keys()


def test_empty_content_is_empty_metadata() -> None:
    for data in (b"", b"  \n", ""):
        meta = CommitMetadata.from_json(data)
        assert meta == CommitMetadata() and meta.write_stats() == [] and meta.schema is None
    assert CommitMetadata().to_json() == (
        b'{\n  "partitionToWriteStats" : { },\n  "compacted" : false,\n'
        b'  "extraMetadata" : { },\n  "operationType" : "UNKNOWN"\n}'
    )


def test_lenient_parse_ignores_unknown_fields_and_fills_defaults() -> None:
    data = json.dumps(
        {
            "partitionToWriteStats": {"p": [{"fileId": "f-0", "numWrites": "3", "futureField": [1], "path": "p/x"}]},
            "somethingNew": {"a": 1},
            "extraMetadata": {"schema": ""},
        }
    ).encode()
    meta = CommitMetadata.from_json(data, file_name="1.commit")
    (stat,) = meta.write_stats()
    assert stat.num_writes == 3 and stat.total_write_bytes == 0 and stat.runtime_stats is None
    assert meta.operation_type == "UNKNOWN" and meta.compacted is False and meta.schema is None
    assert "futureField" not in json.loads(meta.to_json())["partitionToWriteStats"]["p"][0]


@pytest.mark.parametrize(
    "data,what",
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"partitionToWriteStats": {"p": {"fileId": "x"}}}', "expected a list of write stats"),
        (b'{"partitionToWriteStats": {"p": [{"numWrites": "many"}]}}', "'numWrites'"),
        (b'{"partitionToWriteStats": {"p": [{"runtimeStats": 5}]}}', "'runtimeStats'"),
        (b'{"compacted": "maybe"}', "'compacted'"),
        (b'{"extraMetadata": {"schema": 5}}', "extraMetadata['schema']"),
        (b'{"partitionToReplaceFileIds": {"p": "f-0"}}', "partitionToReplaceFileIds['p']"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_content_raises_naming_the_file(data: bytes, what: str) -> None:
    with pytest.raises(TimelineError) as e:
        CommitMetadata.from_json(data, file_name=".hoodie/20240101000000000.commit")
    assert ".hoodie/20240101000000000.commit" in str(e.value) and what in str(e.value)


def test_built_metadata_round_trips() -> None:
    meta = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": '{"type":"record","name":"t_record"}'})
    meta.add_write_stat(
        "2024/01",
        WriteStat(file_id="a-0", path="2024/01/a-0_0-1-2_20240101000000000.parquet", prev_commit=NULL_COMMIT,
                  num_writes=2, num_inserts=2, total_write_bytes=10, partition_path="2024/01", file_size_in_bytes=10,
                  runtime_stats=RuntimeStats(total_create_time=5)),
    )
    meta.add_write_stat(
        "2024/01",
        WriteStat(file_id="b-0", path="2024/01/.b-0_20231231000000000.log.2_0-1-2", prev_commit="20231231000000000",
                  num_writes=1, num_update_writes=1, partition_path="2024/01", log_version=2,
                  base_file="b-0_0-1-2_20231231000000000.parquet"),
    )
    out = meta.to_json()
    again = CommitMetadata.from_json(out)
    assert again.to_json() == out
    assert again.partition_to_write_stats["2024/01"][0] == meta.partition_to_write_stats["2024/01"][0]
    assert again.write_stats()[1].base_file == "b-0_0-1-2_20231231000000000.parquet"
    parsed = json.loads(out)["partitionToWriteStats"]["2024/01"]
    assert list(parsed[0])[-1] == "runtimeStats" and "logVersion" not in parsed[0]
    # Java-primitive and initialised delta fields are never null.
    assert [parsed[1][k] for k in ("logVersion", "logOffset", "logFiles", "recordsStats")] == [2, 0, [], {"val": None}]
    assert meta.schema == {"type": "record", "name": "t_record"}


def test_replace_metadata_emits_replaced_ids_last() -> None:
    meta = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={"p=1": ["a-0", "b-0"]})
    out = meta.to_json().decode()
    assert out.endswith('"operationType" : "DELETE_PARTITION",\n  "partitionToReplaceFileIds" : {\n'
                        '    "p=1" : [ "a-0", "b-0" ]\n  }\n}')
    assert CommitMetadata.from_json(out).replaced_file_ids() == {"p=1": {"a-0", "b-0"}}
    assert json.loads(CommitMetadata(partition_to_replace_file_ids={}).to_json())["partitionToReplaceFileIds"] == {}


def test_jackson_pretty_layout_and_escapes() -> None:
    value = {"a": [], "b": {}, "c": [1, "x", None, True], "d": [{"e": 1}, {}], "s": 'q"b\\n\n\t\x01\x7fé/\u2028'}
    text = jackson_pretty(value)
    assert text == (
        '{\n  "a" : [ ],\n  "b" : { },\n  "c" : [ 1, "x", null, true ],\n'
        '  "d" : [ {\n    "e" : 1\n  }, { } ],\n'
        '  "s" : "q\\"b\\\\n\\n\\t\\u0001\x7fé/\u2028"\n}'
    )
    assert json.loads(text) == value
    with pytest.raises(TypeError):
        jackson_pretty({"x": object()})
