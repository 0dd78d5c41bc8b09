"""The engine's restore of a table whose metadata table Java Hudi wrote (issue 37; hudi_engine/table_services/
restore.py): the metadata table is restored with the data table, as Hudi's `update(HoodieRestoreMetadata)` does, not
dropped. Afterwards Java reads the table with the metadata table on, Hudi's validator finds its files partition equal
to storage, Java's RECORD_INDEX upsert finds every key the restore left (no duplicate row), and Java's next write
extends the metadata table instead of rebuilding it (its partitions and initialization instants unchanged, the
engine's restore still on its timeline)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from metadata_tables import assert_index_matches, feature_rows, mdt_listing, storage_listing, write_rows

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.metadata.table import SOLO_COMMIT_TIMESTAMP, metadata_location
from hudi_engine.table_config import TableConfig
from hudi_engine.timeline import Timeline
from java_hudi.checks import java_validates_metadata_files
from java_hudi.test_mdt_record_index import JAVA_RLI, _java_rows, _ours

pytestmark = pytest.mark.timeout(900)


def _mdt_state(table: Path) -> tuple[list[str], list[str]]:
    """The metadata table's partitions and its initialization instants (a rebuild changes them): Hudi 1.x's start
    with 14 zeros, Hudi 0.15's carry a suffix of 010 and above (a restore's sync delta commit carries 003)."""
    location = TableLocation.of(str(table))
    inits = [i.timestamp for i in Timeline.load(metadata_location(location)).instants
             if i.timestamp.startswith(SOLO_COMMIT_TIMESTAMP) or (len(i.timestamp) == 20 and i.timestamp[17:] >= "010")]
    return TableConfig.load(location).metadata_partitions, inits


def _mdt_restores(table: Path) -> list[str]:
    return [i.timestamp for i in Timeline.load(metadata_location(TableLocation.of(str(table)))).completed()
            if i.action.value == "restore"]


@pytest.mark.parametrize(("hudi", "table_type"), [("1.2.0", "COPY_ON_WRITE"), ("1.2.0", "MERGE_ON_READ"),
                                                  ("0.15.0", "COPY_ON_WRITE"), ("0.15.0", "MERGE_ON_READ")])
def test_the_engines_restore_keeps_javas_metadata_table(java_hudi, tmp_path: Path, hudi: str,
                                                        table_type: str) -> None:
    java = java_hudi(hudi)
    table = tmp_path / "t"
    opts = {**JAVA_RLI, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.metadata.index.column.stats.enable": "false"}
    java.write(table, feature_rows(list(range(1, 11)), "java1"), opts, mode="overwrite")
    java.write(table, feature_rows([2, 12], "java2"), opts)
    savepoint = HudiTable.load(str(table)).savepoint()
    at_savepoint = _ours(table)
    before = _mdt_state(table)
    assert "record_index" in before[0], before
    java.write(table, feature_rows([3, 13], "java3").set_column(2, "ts", pa.array([20] * 2, pa.int64())), opts)
    write_rows(table, feature_rows([4, 14], "engine"), **{"hoodie.index.type": "RECORD_INDEX"})
    java.write(table, feature_rows([5, 15], "java4").set_column(2, "ts", pa.array([20] * 2, pa.int64())), opts)
    assert len(_ours(table)) == 14

    restored = HudiTable.load(str(table)).restore(savepoint.instant_time)
    assert restored.rolled_back
    assert _mdt_state(table) == before, "the restore kept Java's metadata table"
    assert _mdt_restores(table), "restored on its own timeline"
    assert mdt_listing(table) == storage_listing(table)
    assert _ours(table) == at_savepoint and assert_index_matches(table) == len(at_savepoint)
    assert _java_rows(java, table) == at_savepoint  # Java reads it with the metadata table on
    assert java_validates_metadata_files(java, table, tmp_path)

    # Java's RECORD_INDEX upsert: keys the restore kept (1, 3, 12), one it took away (13) and a new one
    java.write(table, feature_rows([1, 3, 12, 13, 60], "after").set_column(2, "ts", pa.array([30] * 5, pa.int64())),
               opts)
    got = _java_rows(java, table)  # no key twice
    assert len(got) == len(at_savepoint) + 2 and all(got[i][0] == "after" for i in (1, 3, 12, 13, 60))
    assert _ours(table) == got
    state = _mdt_state(table)
    assert state == before, "Java's next write extends the metadata table, it does not rebuild it"
    assert _mdt_restores(table), "the engine's restore stays on the metadata table's timeline"
    assert assert_index_matches(table) == len(got)
    assert mdt_listing(table) == storage_listing(table)
