"""The LSM timeline history of timeline layout 2 (`hudi_engine.timeline.history`) in Hudi 1.x's format: data file
names, the HoodieLSMTimelineInstant parquet schema and footer, manifests and `_version_`, the layer compaction and
the cleaning of old snapshots, checked against Hudi's source (LSMTimelineWriter, LSMTimeline,
HoodieLSMTimelineManifest): no conformance table has a non-empty history to compare with."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_engine.errors import TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.timeline.history import (
    ArchivedInstant,
    TimelineHistory,
    lsm_file_name,
    manifest_json,
    parse_lsm_file_name,
    parse_manifest,
)
from hudi_engine.timeline.instant import Action, Instant, State

T0 = 20250101000000000


def _records(start: int, n: int, action: str = "commit") -> list[ArchivedInstant]:
    return [ArchivedInstant(str(T0 + start + i), str(T0 + start + i + 5000), action, f"meta{start + i}".encode(),
                            b"plan" if action == "clean" else None) for i in range(n)]


def _history(tmp_path: Path) -> TimelineHistory:
    (tmp_path / ".hoodie" / "timeline").mkdir(parents=True)
    return TimelineHistory.of(TableLocation.of(str(tmp_path)))


def _model_compaction(files: list[str], batch: int) -> list[str]:
    """LSMTimelineWriter.compactAndClean's manifest, worked out from the file names alone."""
    layer = 0
    while True:
        of_layer = sorted(f for f in files if parse_lsm_file_name(f)[2] == layer)
        if len(of_layer) < batch:
            return files
        chosen = of_layer[:batch]
        parts = [parse_lsm_file_name(f) for f in chosen]
        files = [f for f in files if f not in chosen] + [
            lsm_file_name(min(p[0] for p in parts), max(p[1] for p in parts), layer + 1)]
        layer += 1


def test_a_written_file_is_hudis_lsm_instant_parquet(tmp_path):
    history = _history(tmp_path)
    assert history.latest_version() == -1 and history.is_empty() and history.instants() == []
    records = _records(0, 3) + [ArchivedInstant(str(T0 + 3), str(T0 + 9), "clean", None, b"\x00plan")]
    path = Path(history.append(records))
    assert path.name == f"{T0}_{T0 + 3}_0.parquet" and path.parent == tmp_path / ".hoodie" / "timeline" / "history"
    pf = pq.ParquetFile(path)
    # parquet-avro's rendering of HoodieLSMTimelineInstant: optional UTF8 strings and binaries, a required int32.
    columns = {c.name: (c.physical_type, c.logical_type.type, c.max_definition_level) for c in pf.schema}
    assert columns == {"instantTime": ("BYTE_ARRAY", "STRING", 1), "completionTime": ("BYTE_ARRAY", "STRING", 1),
                       "action": ("BYTE_ARRAY", "STRING", 1), "metadata": ("BYTE_ARRAY", "NONE", 1),
                       "plan": ("BYTE_ARRAY", "NONE", 1), "version": ("INT32", "NONE", 0)}
    footer = pf.metadata.metadata
    assert set(footer) == {b"parquet.avro.schema", b"writer.model.name"}  # no Arrow schema, no bloom filter
    avro = json.loads(footer[b"parquet.avro.schema"])
    assert (avro["name"], avro["namespace"]) == ("HoodieLSMTimelineInstant", "org.apache.hudi.avro.model")
    assert [(f["name"], f["type"], f["default"]) for f in avro["fields"]] == [
        ("instantTime", ["null", {"type": "string", "avro.java.string": "String"}], None),
        ("completionTime", ["null", {"type": "string", "avro.java.string": "String"}], None),
        ("action", ["null", {"type": "string", "avro.java.string": "String"}], None),
        ("metadata", ["null", "bytes"], None), ("plan", ["null", "bytes"], None), ("version", "int", 1)]
    assert pf.metadata.row_group(0).column(0).compression == "GZIP"
    assert pq.read_table(path).to_pylist() == [
        {"instantTime": r.instant_time, "completionTime": r.completion_time, "action": r.action,
         "metadata": r.metadata, "plan": r.plan, "version": 1} for r in records]
    # The snapshot: manifest_1 names the file with its length, `_version_` says 1.
    folder = path.parent
    assert (folder / "_version_").read_text() == "1"
    assert (folder / "manifest_1").read_text() == (
        '{\n  "files" : [ {\n    "fileName" : "' + path.name + '",\n    "fileLen" : ' + str(path.stat().st_size)
        + "\n  } ]\n}")
    assert history.records() == records
    assert history.instants() == [Instant(r.instant_time, Action(r.action), State.COMPLETED, r.completion_time)
                                  for r in records]
    assert [i.completion_time for i in history.instants()] == [r.completion_time for r in records]


def test_manifest_text_round_trips_and_an_empty_one_is_an_empty_snapshot():
    from hudi_engine.timeline.history import ManifestEntry

    entries = [ManifestEntry("1_2_0.parquet", 10), ManifestEntry("3_4_1.parquet", 20)]
    assert parse_manifest(manifest_json(entries), "m") == entries
    assert manifest_json([]) == '{\n  "files" : [ ]\n}'
    assert parse_manifest("", "m") == []
    with pytest.raises(TimelineError, match="m: not an LSM timeline manifest"):
        parse_manifest("[1, 2", "m")
    assert parse_lsm_file_name("20250101000000000_20250101000000009_0.parquet") == (
        "20250101000000000", "20250101000000009", 0)
    assert parse_lsm_file_name("manifest_3") is None and parse_lsm_file_name("1_2_10.parquet") is None


@pytest.mark.parametrize("batch", [2, 3, 10])
def test_layers_are_compacted_as_hudi_compacts_them(tmp_path, batch):
    history = _history(tmp_path)
    expected: list[str] = []
    written = []
    for run in range(37):
        records = _records(run * 4, 4)
        written += records
        expected.append(Path(history.append(records)).name)
        history.compact_and_clean(batch)
        expected = _model_compaction(expected, batch)
        assert history.file_names() == expected, f"run {run}"
    layers = {parse_lsm_file_name(n)[2] for n in expected}
    assert max(layers) >= 1 and all(sum(parse_lsm_file_name(n)[2] == layer for n in expected) < batch
                                    for layer in layers)
    # Every instant is in exactly one file of the snapshot, and each file holds the range its name says, in order.
    assert history.records() == written
    for name in expected:
        lo, hi, _ = parse_lsm_file_name(name)
        times = [r.instant_time for r in history.read_file(name)]
        assert times == sorted(times) and (times[0], times[-1]) == (lo, hi)
    # `_version_` is the newest manifest; cleaning keeps the newest 3 (+ one per compaction of the last run)
    # snapshots and deletes every data file none of them names.
    folder = Path(history.folder)
    versions = sorted(int(p.name.split("_")[1]) for p in folder.glob("manifest_*"))
    assert int((folder / "_version_").read_text()) == versions[-1] == history.latest_version()
    assert 3 <= len(versions) <= 3 + len(layers) and versions == list(range(versions[0], versions[-1] + 1))
    kept = {e.file_name for v in versions for e in history.manifest(v)}
    assert {p.name for p in folder.glob("*.parquet")} == kept


def test_a_reader_survives_each_step_of_a_write(tmp_path):
    history = _history(tmp_path)
    history.append(_records(0, 2))
    folder = Path(history.folder)
    # Mid-update of `_version_` (deleted, not yet created): the highest manifest listed is the snapshot.
    (folder / "_version_").unlink()
    assert history.latest_version() == 1 and len(history.records()) == 2
    # A crashed run's manifest above `_version_` is passed over by the next write, never overwritten.
    (folder / "_version_").write_text("1")
    (folder / "manifest_2").write_text(manifest_json([]))
    history.append(_records(10, 2))
    assert history.latest_version() == 3 and (folder / "manifest_2").read_text() == manifest_json([])
    assert [r.instant_time for r in history.records()] == [str(T0 + i) for i in (0, 1, 10, 11)]
    # An instant archived twice (a crash after the history was written, before the active files were deleted)
    # is read once.
    history.append(_records(10, 3))
    assert [r.instant_time for r in history.records()] == [str(T0 + i) for i in (0, 1, 10, 11, 12)]
    with pytest.raises(TimelineError, match="no instants to write"):
        history.append([])
    with pytest.raises(TimelineError, match="batch.size=1: a compaction merges at least 2 files"):
        history.compact_and_clean(1)
