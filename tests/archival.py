"""Archival's effect on readers, simulated in the crudest way: old instants' files are moved out of `.hoodie/` as they
are (the engine's own archival, `hudi_engine.table_services.archival`, writes Hudi's archived-timeline files and
refuses to archive past a pending instant; these tests want every instant but the latest one gone).

Java's timeline archiver moves completed instants older than what it keeps (and the rollbacks and cleans among
them) out of the active timeline into `.hoodie/archived/`. Readers then see a timeline that starts later, and take
every data file older than its start for committed data. Here the instant files themselves are moved to
`.hoodie/archived/`, which is all a reader of the active timeline can tell. A metadata table (on by default) is
deleted first: Hudi archives only what its metadata table has compacted, which this crude archival does not respect.
"""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

from hudi_engine.location import TableLocation
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline


def archive_before(path: Path, boundary: str) -> list[str]:
    """Move the files of every instant older than `boundary` to `.hoodie/archived/`; their names. Refused when
    one of them is pending (Java never archives past the earliest pending instant)."""
    timeline = Timeline.load(TableLocation.of(str(path)))
    assert timeline.layout.version == 1, "simulated for timeline layout 1: write the table with version 6"
    old = [i for i in timeline if i.timestamp < boundary]
    pending = [str(i) for i in old if not i.is_completed]
    assert not pending, f"archival stops at the earliest pending instant: {pending}"
    location = TableLocation.of(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TableConfig.load(location).disable_metadata_table(location, "archival simulated by moving instant files")
    meta, archived = Path(path) / ".hoodie", Path(path) / ".hoodie" / "archived"
    archived.mkdir(exist_ok=True)
    moved = []
    stamps = {i.timestamp for i in old}
    for f in sorted(meta.iterdir()):  # every state's file (a compaction's requested file too)
        if f.is_file() and f.name.partition(".")[0] in stamps:
            shutil.move(f, archived / f.name)
            moved.append(f.name)
    return moved


def archive_all_but_latest_commit(path: Path) -> list[str]:
    """Archive everything older than the latest completed commit (the most any archiver could)."""
    latest = Timeline.load(TableLocation.of(str(path))).completed_commits().last()
    assert latest is not None
    return archive_before(path, latest.timestamp)
