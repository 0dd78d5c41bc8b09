"""The feature tables of tests/data/java_tables (issue 36): one small table per feature Java Hudi writes and per table
version, written by real Java Hudi (tests/java_hudi/make_feature_tables.py) with the rows Java read from it. Each
case says what the engine does with the table: reads exactly what Java read, and then either writes it (`refused`
None; tests/java_hudi/test_feature_tables.py has Java read that write) or refuses to write it, naming the table and
the feature (`refused`: words of the refusal). docs/table-features.md lists these cases (tests/test_java_tables.py
checks the list)."""
from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

DATA_DIR = Path(__file__).resolve().parent / "data" / "java_tables"
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"


@dataclass(frozen=True)
class FeatureTable:
    builder: str  # make_feature_tables.BUILDERS
    feature: str  # as the docs list it
    version: int
    table_type: str = COW
    refused: str | None = None  # the refusal's words (a regular expression); None: the engine writes the table
    update_refused: str | None = None  # an update of a stored key is refused (these words); new keys are written
    read_refused: str | None = None  # reads that merge log records are refused (these words); the others equal
    reads_refused: str | None = None  # every read that meets the feature is refused (these words)
    wrong_read: str | None = None  # a known disagreement with Java's read (a finding to fix: the test xfails)
    writer: str | None = None  # the Hudi release writing it (default: 0.15.0 for version 6, 1.2.0 for 9)
    java_reads_write: bool = True  # Java reads the engine's write (False: a twin case's check covers it, to save time)
    # Java's own next write on the table, as the script recorded it on a copy: "written", or words of its refusal
    java_next_write: str | None = None

    @property
    def hudi(self) -> str:
        return self.writer or ("0.15.0" if self.version == 6 else "1.2.0")

    @property
    def name(self) -> str:
        by = "_hudi1" if self.version == 6 and self.hudi.startswith("1.") else ""
        return f"{self.builder}_{'cow' if self.table_type == COW else 'mor'}_v{self.version}{by}"

    @property
    def outcome(self) -> str:
        read = f"**read differs**: {self.wrong_read}" if self.wrong_read else "equal"
        if self.read_refused:
            read = f"merging reads refused ({self.read_refused}), read-optimized equal"
        if self.reads_refused:
            read = f"reads refused ({self.reads_refused})"
        if self.refused:
            ours = f"{read}, write refused ({self.refused})"
        else:
            ours = f"{read}, updates refused ({self.update_refused}), new keys written" if self.update_refused \
                else f"{read}, written"
        if not self.java_next_write:
            return ours
        return f"{ours}; Java's next write: " + (
            "written" if self.java_next_write == "written" else f"refused ({self.java_next_write})")


def _both(builder: str, feature: str, table_type: str = COW, **outcome: Any) -> list[FeatureTable]:
    return [FeatureTable(builder, feature, v, table_type, **outcome) for v in (6, 9)]


CASES: list[FeatureTable] = [
    *_both("mdt", "metadata table: files, column stats, bloom filters, record index (v9: partition stats, "
                  "secondary index)"),
    *_both("clustering", "clustering, completed"),
    *_both("clustering_pending", "clustering, pending", update_refused="pending clustering"),
    *_both("clustering_failed", "clustering, failed (inflight, files written)", update_refused="pending clustering"),
    *_both("pending_commit", "pending commit (requested, failed before writing)"),
    *_both("pending_commit", "pending deltacommit (requested, failed before writing)", MOR),
    *_both("failed_commit", "failed commit (inflight, files written)"),
    *_both("failed_commit", "failed deltacommit (inflight, files written)", MOR),
    *_both("failed_commit_timeline_markers", "failed commit with timeline-server-based markers"),
    *_both("failed_insert_overwrite", "failed replacecommit (insert_overwrite, inflight)"),
    *_both("compaction", "compaction, completed", MOR),
    *_both("compaction_pending", "compaction, pending", MOR),
    *_both("compaction_failed", "compaction, failed (inflight, files written)", MOR),
    # The engine finishes a pending clean or rollback from its requested plan as from its inflight one: Java reads
    # the engine's write on the failed (inflight) tables only.
    *_both("clean_pending", "clean, pending (requested)", java_reads_write=False),
    *_both("clean_pending", "clean, pending (requested), of a compacted file group's older slice", MOR),
    *_both("clean_failed", "clean, failed (inflight)"),
    *_both("rollback_pending", "rollback of a failed commit, pending (requested)", java_reads_write=False),
    *_both("rollback_pending", "rollback of a failed deltacommit, pending (requested)", MOR, java_reads_write=False),
    *_both("rollback_failed", "rollback of a failed commit, failed (inflight)"),
    *_both("rollback_failed", "rollback of a failed deltacommit, failed (inflight)", MOR),
    *_both("savepoint", "savepoint, completed (of the first commit; two more versions of its file groups)"),
    # An inflight savepoint changes nothing a write does: Java reads the engine's write on the completed twin only.
    *_both("savepoint_pending", "savepoint, pending (inflight: its executor's first step)", java_reads_write=False),
    # Java refuses its own next write on a pending restore too (and restoring again finishes it); it writes on over a
    # pending index build.
    *_both("restore_pending", "restore to a savepoint, pending (requested: rollback_to_savepoint's plan)",
           refused="pending restore", java_next_write="Found pending restore"),
    *_both("restore_failed", "restore to a savepoint, failed (inflight, as its executor marks it first)",
           refused="pending restore", java_next_write="Found pending restore"),
    *_both("indexing_pending", "async metadata-table index build of column stats, pending (requested)",
           refused="pending metadata-table indexing", java_next_write="written"),
    *_both("indexing_failed", "async metadata-table index build of column stats, failed (inflight, as its "
           "executor marks it first)", refused="pending metadata-table indexing", java_next_write="written"),
    *_both("log_compaction_pending", "log compaction, pending", MOR, refused="pending log compaction"),
    *_both("log_compaction_failed", "log compaction, failed (inflight, log blocks written)", MOR,
           refused="pending log compaction"),
    *_both("cdc_op_key_only", "CDC, op_key_only"),
    *_both("cdc_data_before", "CDC, data_before"),
    *_both("cdc_data_before_after", "CDC, data_before_after"),
    *_both("cdc_data_before_after", "CDC, data_before_after", MOR),
    *_both("log_compaction", "log compaction, completed", MOR),
    *_both("consistent_hashing", "consistent-hashing bucket index", MOR, refused="consistent hashing"),
    FeatureTable("commit_time_ordering", "merge mode COMMIT_TIME_ORDERING", 9, MOR),
    FeatureTable("event_time_ordering", "merge mode EVENT_TIME_ORDERING", 9, MOR),
    FeatureTable("custom_merger", "merge mode CUSTOM (a custom HoodieRecordMerger, compiled at generation)", 9,
                 MOR, refused="custom record merger", read_refused="custom record merger"),
    FeatureTable("partial_update", "partial-update log blocks (MERGE INTO)", 9, MOR),
    *_both("custom_payload", "payload class of our own (a HoodieRecordPayload compiled at generation; v9: merge mode "
           "CUSTOM with it)", MOR, refused="KeepSmallestPayload", read_refused="KeepSmallestPayload"),
    FeatureTable("dms_payload", "payload class AWSDmsAvroPayload (a built-in payload the engine does not implement)",
                 6, MOR, refused="AWSDmsAvroPayload", read_refused="AWSDmsAvroPayload"),
    FeatureTable("dms_payload", "payload class AWSDmsAvroPayload, recorded by 1.2.0 as COMMIT_TIME_ORDERING with a "
                 "delete marker (Op=D)", 9, MOR, refused="delete marker"),
    *_both("bootstrap_metadata_only", "bootstrap, METADATA_ONLY (skeleton files over a parquet source)",
           refused="bootstrap", reads_refused="skeleton base files"),
    *_both("bootstrap_full_record", "bootstrap, FULL_RECORD", refused="bootstrap"),
    *_both("bootstrap_cdc", "CDC, data_before_after, over a METADATA_ONLY bootstrap (skeleton files)",
           refused="bootstrap", reads_refused="skeleton base files"),
    *_both("schema_evolution", "schema-on-read evolution: rename, type change, drop", java_reads_write=False),
    *_both("keyless", "keyless (auto-generated keys)"),
    # Hudi 1.2.0 pinned to version 6 (hoodie.write.table.version=6, hoodie.write.auto.upgrade=false), as
    # "Table versions" above tells a 1.x writer sharing a version-6 table.
    FeatureTable("mdt", "metadata table, written by Hudi 1.2.0 at version 6", 6, writer="1.2.0"),
    FeatureTable("cdc_data_before_after", "CDC, data_before_after, written by Hudi 1.2.0 at version 6", 6, MOR,
                 writer="1.2.0"),
    FeatureTable("log_compaction", "log compaction, written by Hudi 1.2.0 at version 6", 6, MOR, writer="1.2.0"),
]


def unzip_feature_table(case: FeatureTable, into: Path) -> tuple[Path, list[dict]]:
    """The table's path in `into` and Java's recorded reads (each with its rows as `rows` where Java answered)."""
    with zipfile.ZipFile(DATA_DIR / f"{case.name}.zip") as z:
        z.extractall(into)
    root = into / case.name
    reads = json.loads((root / "java_reads" / "reads.json").read_text())["reads"]
    for r in reads:
        if "file" in r:
            r["rows"] = pq.read_table(root / "java_reads" / r["file"])
    return root / "table", reads


def java_answers(case: FeatureTable) -> dict:
    """What the script recorded beside the table: Java's reads and, for some cases, Java's own next write."""
    with zipfile.ZipFile(DATA_DIR / f"{case.name}.zip") as z:
        return json.loads(z.read(f"{case.name}/java_reads/reads.json"))


def engine_rows(ids: list[int]) -> pa.Table:
    """The engine's rows for a feature table: its columns, `v` naming the engine, ordering value above Java's."""
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"engine-{i}" for i in ids],
                     "ts": pa.array([9] * len(ids), pa.int64()), "amount": [0.5] * len(ids),
                     "p": ["a" if i % 2 else "b" for i in ids]})


def write_options(case: FeatureTable) -> dict[str, str]:
    """The engine's upsert into a feature table: the table's own key, partitioning and ordering fields."""
    opts = {"hoodie.table.name": case.name, "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.operation": "upsert"}
    if case.name.startswith("mdt_"):  # Java's indexes the engine does not keep (v6 stats, secondary indexes):
        opts["hoodie.metadata.enable"] = "false"  # deleted first, as the engine's refusal tells a user
    if case.builder != "keyless":
        opts |= {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}
    else:
        opts["hoodie.datasource.write.operation"] = "insert"
    return opts


def changes(t: pa.Table) -> list[tuple]:
    """(op, ts_ms, before, after) of each change, the images parsed, in a stable order. Only the data columns: Java
    Hudi's images carry the meta columns or not depending on where it took the image from (base file or log)."""
    def image(v: str | None) -> dict | None:
        parsed = None if v is None else json.loads(v)
        return None if parsed is None else {k: x for k, x in parsed.items() if not k.startswith("_hoodie_")}
    out = [(op, str(ts), image(b), image(a)) for op, ts, b, a in
           zip(*(t.column(c).to_pylist() for c in ("op", "ts_ms", "before", "after")), strict=True)]
    return sorted(out, key=repr)
