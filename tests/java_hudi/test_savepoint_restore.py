"""Savepoints and restores shared with Java Hudi (issue 38): Java 0.15.0 on a version-6 COW table and Java 1.2.0 on
a version-9 MOR table restore to the engine's savepoints (`CALL rollback_to_savepoint`), the engine restores to
savepoints Java made (`CALL create_savepoint`), and after every step both read the table (snapshot, and incremental
since the step before) equal to the model of the rows (tests/java_hudi/turns.py, scripted instead of drawn)."""
from __future__ import annotations

from pathlib import Path

import pytest

from java_hudi.turns import COW, MOR, Sequence, Shape, Step

pytestmark = pytest.mark.timeout(900)

E, J = "engine", "java"
SCRIPTS = {
    # Java restores only to a savepoint its metadata table holds (turns.py, `choose`): no engine write comes between
    # an engine's savepoint and Java's restore to it; the engine's savepoint keeps the metadata table (a savepoint
    # changes no file). The engine restores to Java's savepoints after its own writes.
    Shape("v6-0.15-cow", "0.15.0", COW, 6): [
        Step(J, "create"), Step(J, "upsert"), Step(E, "savepoint"), Step(J, "upsert"), Step(J, "delete"),
        Step(J, "restore"), Step(E, "upsert"), Step(J, "savepoint"), Step(J, "upsert"), Step(E, "clean"),
        Step(E, "restore"), Step(J, "upsert"), Step(E, "upsert"),
    ],
    Shape("v9-1.2-mor", "1.2.0", MOR, 9, creator="engine"): [
        Step(E, "create"), Step(J, "upsert"), Step(J, "savepoint"), Step(E, "upsert"), Step(J, "upsert"),
        Step(E, "compaction"), Step(E, "upsert"), Step(E, "restore"), Step(J, "upsert"), Step(E, "savepoint"),
        Step(J, "upsert"), Step(J, "compaction"), Step(J, "upsert"), Step(J, "restore"), Step(E, "upsert"),
    ],
}


@pytest.mark.parametrize("shape", list(SCRIPTS), ids=[s.name for s in SCRIPTS])
def test_savepoints_and_restores_shared_with_java(java_hudi, tmp_path: Path, shape: Shape) -> None:
    sequence = Sequence(shape, 3800, java_hudi(shape.hudi), tmp_path / "t")
    sequence.run(0, script=SCRIPTS[shape])
    table = sequence.table()
    assert table.config.version == shape.version, sequence.where()
    assert len(table.timeline.filter_by(["restore"]).completed()) == 2, sequence.where()
