"""Turn-taking (issue 36): seeded random interleavings of Java Hudi's and the engine's writes and table services on
one table, every table configuration with COW and MOR, read by both after every step and compared with a model of
the rows (tests/java_hudi/turns.py). A failure names the seed and every step; `TURNS_SEED=<seed>` replays it."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from java_hudi.checks import java_validates_metadata_files
from java_hudi.turns import COW, MOR, Sequence, Shape

# Issue 36's 20 steps a sequence (docs/table-features.md, "Turn-taking", has their time). `TURNS_STEPS=<n>` plays
# the first n steps of the same sequences: the generator draws step by step from its seed.
STEPS = int(os.environ.get("TURNS_STEPS", "20"))
pytestmark = pytest.mark.timeout(600)  # a sequence took up to 95 s on a loaded machine

SHAPES = [
    Shape("v6-0.15-cow", "0.15.0", COW, 6),
    Shape("v6-0.15-mor-bucket", "0.15.0", MOR, 6, index="bucket", creator="engine"),
    Shape("v6-1.2-pinned-cow-record", "1.2.0", COW, 6, index="record", creator="engine"),
    Shape("v6-1.2-pinned-mor", "1.2.0", MOR, 6),
    Shape("v9-cow-bucket", "1.2.0", COW, 9, index="bucket"),
    Shape("v9-mor-record", "1.2.0", MOR, 9, index="record", creator="engine"),
    Shape("v6-upgraded-to-v9-mor", "1.2.0", MOR, 9, creator="engine", upgrade=True),
]
SEEDS = {s.name: 3600 + n for n, s in enumerate(SHAPES)}


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_turn_taking(java_hudi, tmp_path: Path, shape: Shape) -> None:
    seed = int(os.environ.get("TURNS_SEED", SEEDS[shape.name]))
    sequence = Sequence(shape, seed, java_hudi(shape.hudi), tmp_path / "t")
    started = time.monotonic()
    sequence.run(STEPS)
    # The pin kept the table at version 6; unpinned, Java 1.2.0 upgraded the engine's version-6 table.
    assert sequence.table().config.version == shape.version, sequence.where()
    # Every step's metadata table matched storage (Sequence.check); at the end, Hudi's own validator agrees.
    if sequence.table().config.metadata_partitions:
        assert java_validates_metadata_files(sequence.java, tmp_path / "t", tmp_path), sequence.where()
    assert sequence.metadata_checked["files"], f"no step left a metadata table to check\n{sequence.where()}"
    spent = ", ".join(f"{k} {v:.1f}" for k, v in sequence.seconds.most_common())
    print(f"\n{shape.name} seed {seed}: {STEPS} steps in {time.monotonic() - started:.0f} s ({spent}): "
          + "; ".join(str(s) for s in sequence.steps) + f"; metadata entries checked: {dict(sequence.metadata_checked)}")
