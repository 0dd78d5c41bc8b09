"""HFiles between the engine and real Apache Hudi: Hudi's own HFile readers (1.2's and 0.15's `HFileReaderImpl`, and
the HBase reader of the 0.15 bundle) read the cells the engine wrote, and the engine reads what Hudi 1.2's
`HFileWriterImpl` wrote (hudi_engine/io/hfile.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from hudi_engine.io.hfile import BLOOM_FILTER_BLOCK, HFileReader, write_hfile


def _cells(n: int) -> list[tuple[str, bytes]]:
    # Values of varied lengths (empty included), non-ASCII keys (they sort by their UTF-8 bytes) and keys over 127
    # bytes (their index entries need multi-byte vints).
    cells = [(f"key-{i:05d}" + ("-" + "x" * 300 if i % 40 == 0 else ""), bytes(range(i % 251)) * (1 + i % 3))
             for i in range(n)]
    return sorted(cells + [("ключ", b"\x00\xff"), ("日本", b"jp")], key=lambda kv: kv[0].encode())


@pytest.mark.parametrize("hudi", ["1.2.0", "0.15.0"])
def test_java_reads_the_engines_hfiles(java_hudi, tmp_path: Path, hudi: str) -> None:
    java = java_hudi(hudi)
    cells = _cells(200)
    want = [(k.encode(), v) for k, v in cells]
    hits, misses = ["key-00040-" + "x" * 300, "key-00123", "key-00199", "日本"], ["a", "key-00123x", "key-9", "zzz"]
    for compression in ("GZ", "NONE"):
        path = tmp_path / f"engine-{compression}.hfile"
        path.write_bytes(write_hfile(cells, compression=compression, block_size=4096,
                                     file_info={"schema": b"{}"}, meta_blocks={BLOOM_FILTER_BLOCK: b"bloom"}))
        index = HFileReader(path.read_bytes()).data_index
        assert len(index) > 5 and len(index[0].first_key) > 127  # several blocks, a long key in the index
        entries, got, found = java.hfile_cells(path, lookup=hits + misses)
        assert (entries, got) == (len(cells), want), f"Hudi {hudi}'s reader on {path.name}"
        assert found == {k.encode(): dict(cells)[k] for k in hits}
        if hudi == "0.15.0":  # what Hudi 0.x reads the metadata table with by default
            entries, got, _ = java.hfile_cells(path, reader="hbase")
            assert (entries, got) == (len(cells), want), f"HBase's reader (Hudi {hudi}) on {path.name}"


def test_the_engine_reads_hudi_1_hfiles(java_hudi, tmp_path: Path) -> None:
    java = java_hudi("1.2.0")
    cells = _cells(200)
    for codec in ("GZIP", "NONE"):
        path = tmp_path / f"java-{codec}.hfile"
        java.write_hfile(path, cells, block_size=4096, codec=codec)
        reader = HFileReader(path.read_bytes(), name=str(path))
        assert len(reader.data_index) > 5 and reader.trailer.compression == {"GZIP": "GZ"}.get(codec, codec)
        assert [(k.decode(), v) for k, v in reader.cells()] == cells
        reader.blocks_read = 0
        assert reader.get(["key-00150", "a", "\uffff"]) == {b"key-00150": dict(cells)["key-00150"]}
        assert reader.blocks_read == 1  # "a" sorts before the first key, U+FFFF after the LASTKEY Hudi wrote



@pytest.mark.parametrize("hudi", ["1.2.0", "0.15.0"])
def test_real_metadata_table_hfiles_read_alike(java_hudi, unzip_table, hudi: str) -> None:
    """The HFiles of a real metadata table (Hudi 1.0, HBase's writer): Java's readers and the engine read the same
    cells and find the same keys. (A table written here with the metadata table on would cost ~20 s a release.)"""
    java = java_hudi(hudi)
    table = unzip_table("mor_avrolog_v8_nonpartitioned_mdt", "v8_v9")
    hfiles = sorted((table / ".hoodie" / "metadata").rglob("*.hfile"))
    one = {h.parent.name: h for h in hfiles if h.stat().st_size < 20_000 and HFileReader(h.read_bytes()).entry_count}
    assert one.keys() == {"files", "column_stats", "record_index", "secondary_index_name_idx"}
    # Each py4j call costs milliseconds: one non-empty file of each metadata partition (44 cells at most).
    for hfile in one.values():
        reader = HFileReader(hfile.read_bytes(), name=str(hfile))
        ours = list(reader.cells())
        lookup = [k.decode() for k, _ in ours[::7]] + ["no such key"]
        entries, theirs, found = java.hfile_cells(hfile, lookup=lookup)
        assert (reader.entry_count, ours) == (entries, theirs), hfile.name
        assert reader.get(lookup) == found
        if hudi == "0.15.0":
            assert java.hfile_cells(hfile, reader="hbase")[:2] == (entries, theirs)
