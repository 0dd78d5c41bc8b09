"""Writes the feature tables of tests/data/java_tables (issue 36): real Apache Hudi (the oracle, tests/java_hudi)
writes a small table per feature and table version, then answers the queries the feature concerns; each table and
its answers go into `<name>.zip`:

    <name>/table/...                       the table, every file Java left (timeline, markers, .crc files)
    <name>/java_reads/reads.json           the queries: [{"kind": ..., "instant"/"begin": ..., "file": ...}]
    <name>/java_reads/<n>.parquet          Java Hudi's rows of query n

Run `.venv/bin/python tests/java_hudi/make_feature_tables.py [names...]` (default: every table of
tests/java_tables.py) with the oracle prepared (`tests/java_hudi/env.py`); the zips are committed, the tests read
them without Java (tests/test_java_tables.py). Bloom filters are kept tiny (hoodie.index.bloom.num_entries) so the
zips stay small. Names in the zips are relative; what Java wrote inside files is kept as written, so a clustering,
clean or rollback plan still holds the absolute paths of the files it names (Hudi stores full paths there), and a
bootstrapped table the absolute path of its source (kept beside it, `<name>/source`)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from java_tables import CASES, DATA_DIR, FeatureTable  # noqa: E402

from java_hudi.client import JavaHudi, JavaHudiError  # noqa: E402
from java_hudi.env import OracleRelease, prepare  # noqa: E402

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
# A pre-commit validator whose query never gives what it expects: Java fails the action after writing its files.
VALIDATOR = {"hoodie.precommit.validators": "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator",
             "hoodie.precommit.validators.single.value.sql.queries": "select count(*) from <TABLE_NAME> where id < 0#1"}
# What a procedure's own write client needs to keep the table as small as the writes keep it.
SMALL = "hoodie.index.bloom.num_entries=100,hoodie.metadata.enable=false"
FAILING_VALIDATOR = ",".join(f"{k}={v}" for k, v in VALIDATOR.items())
# Java classes of our own, compiled at generation against the release's bundle (never committed compiled): the
# merger needs Hudi 1.x's merger API, the payload compiles against both releases.
JAVA_SOURCES = Path(__file__).with_name("merger")
MERGER_SOURCE, PAYLOAD_SOURCE = JAVA_SOURCES / "KeepFirstMerger.java", JAVA_SOURCES / "KeepSmallestPayload.java"
MERGER_CLASS, MERGER_ID = "dbthudi.KeepFirstMerger", "dbt-hudi-keep-first"
PAYLOAD_CLASS = "dbthudi.KeepSmallestPayload"


def rows(ids: range | list[int], v: str, ts: int = 1) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{v}-{i}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()),
                     "amount": pa.array([i * 1.5 for i in ids], pa.float64()),
                     "p": ["a" if i % 2 else "b" for i in ids]})


class Maker:
    """One table being written: the case, the oracle of its release, Hudi's options for its version."""

    def __init__(self, case: FeatureTable, java: JavaHudi, path: Path) -> None:
        self.case, self.java, self.path = case, java, path
        self.read_options: dict[str, str] = {}  # what Java's readers of such a table are given
        self.opts = {
            "hoodie.table.name": case.name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": case.table_type, "hoodie.index.bloom.num_entries": "100",
            "hoodie.metadata.enable": "false", "hoodie.upsert.shuffle.parallelism": "2",
            "hoodie.insert.shuffle.parallelism": "2", "hoodie.bulkinsert.shuffle.parallelism": "2",
            "hoodie.datasource.write.operation": "upsert",
        }
        if case.version == 6 and java.hudi.startswith("1."):
            self.opts |= {"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "false"}

    def write(self, data: pa.Table, mode: str = "append", **extra: str) -> None:
        self.java.write(self.path, data, {**self.opts, **extra}, mode=mode)

    def fail_early(self, data: pa.Table, **extra: str) -> None:
        """A write Java starts (its instant requested) and that fails before writing a file: a row without a key."""
        bad = pa.concat_tables([data, pa.table({"id": pa.array([None], pa.int64()), "v": ["no key"],
                                                "ts": pa.array([1], pa.int64()), "amount": [0.0], "p": ["a"]})])
        self._failing(bad, extra)

    def fail_late(self, data: pa.Table, **extra: str) -> None:
        """A write Java fails after writing its files (instant inflight, data files and markers left): a pre-commit
        validator whose query never gives what it expects."""
        self._failing(data, {**VALIDATOR, **extra})

    def _failing(self, data: pa.Table, extra: dict[str, str]) -> None:
        try:
            self.write(data, **extra)
        except JavaHudiError:
            return
        raise AssertionError(f"{self.case.name}: Java's write did not fail")

    def sql(self, statement: str) -> pa.Table | None:
        return self.java.sql(statement)

    def create_sql_table(self, extra: dict[str, str] | None = None, ts_type: str = "BIGINT") -> None:
        """The table in Spark's catalog (for Spark SQL and CALL procedures by name), at this path."""
        props = {"type": "cow" if self.case.table_type == COW else "mor", "primaryKey": "id",
                 "preCombineField": "ts", "hoodie.index.bloom.num_entries": "100", "hoodie.metadata.enable": "false",
                 **({k: v for k, v in self.opts.items() if k.startswith("hoodie.write.")}), **(extra or {})}
        tbl = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        self.sql(f"DROP TABLE IF EXISTS {self.case.name}")
        self.sql(f"CREATE TABLE {self.case.name} (id BIGINT, v STRING, ts {ts_type}, amount DOUBLE, p STRING) "
                 f"USING hudi PARTITIONED BY (p) LOCATION '{self.path}' TBLPROPERTIES ({tbl})")


# ---- what Java writes, per feature ------------------------------------------------------------------------------

def _mdt(m: Maker) -> None:
    on = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
          "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.metadata.record.index.enable": "true"}
    if m.case.version == 9:
        on["hoodie.metadata.index.partition.stats.enable"] = "true"
    m.write(rows(range(6), "one"), mode="overwrite", **on)
    m.write(rows(range(3, 9), "two", ts=2), **on)
    if m.case.version == 9:  # a secondary index on v (Spark SQL's CREATE INDEX needs the table in the catalog)
        m.opts |= on
        m.create_sql_table(on)
        # Hudi builds the index with a second write client: a lock provider, even for one writer.
        m.sql("SET hoodie.write.lock.provider=org.apache.hudi.client.transaction.lock.InProcessLockProvider")
        m.sql(f"CREATE INDEX idx_v ON {m.case.name} (v)")
        m.write(rows([1, 9], "three", ts=3), **on)


def _clustering_done(m: Maker) -> None:
    m.write(rows(range(4), "one"), mode="overwrite", **{"hoodie.datasource.write.operation": "insert"})
    m.write(rows(range(4, 8), "two"), **{"hoodie.datasource.write.operation": "insert",
                                          "hoodie.parquet.small.file.limit": "0"})
    m.sql(f"CALL run_clustering(path => '{m.path}', options => '{SMALL}')")
    m.write(rows([1, 8], "three", ts=2))


def _clustering_pending(m: Maker) -> None:
    m.write(rows(range(4), "one"), mode="overwrite", **{"hoodie.datasource.write.operation": "insert"})
    m.write(rows(range(4, 8), "two"), **{"hoodie.datasource.write.operation": "insert",
                                          "hoodie.parquet.small.file.limit": "0"})
    m.sql(f"CALL run_clustering(path => '{m.path}', op => 'schedule', options => '{SMALL}')")


def _clustering_failed(m: Maker) -> None:
    m.write(rows(range(4), "one"), mode="overwrite", **{"hoodie.datasource.write.operation": "insert"})
    m.write(rows(range(4, 8), "two"), **{"hoodie.datasource.write.operation": "insert",
                                          "hoodie.parquet.small.file.limit": "0"})
    try:  # the clustering writes its files, then its pre-commit validator fails it: an inflight replacecommit
        m.sql(f"CALL run_clustering(path => '{m.path}', options => '{SMALL},{FAILING_VALIDATOR}')")
    except JavaHudiError:
        return
    raise AssertionError(f"{m.case.name}: Java's clustering did not fail")


def _pending_commit(m: Maker) -> None:
    m.write(rows(range(6), "one"), mode="overwrite")
    m.write(rows([1, 6], "two", ts=2))
    m.fail_early(rows([2, 7], "failed", ts=3))


def _failed_commit(m: Maker) -> None:
    m.write(rows(range(6), "one"), mode="overwrite")
    m.write(rows([1, 6], "two", ts=2))
    m.fail_late(rows([2, 7], "failed", ts=3))


def _failed_commit_timeline_markers(m: Maker) -> None:
    m.write(rows(range(6), "one"), mode="overwrite")
    m.fail_late(rows([2, 7], "failed", ts=3), **{"hoodie.write.markers.type": "TIMELINE_SERVER_BASED",
                                                "hoodie.embed.timeline.server": "true"})


def _failed_insert_overwrite(m: Maker) -> None:
    m.write(rows(range(6), "one"), mode="overwrite")
    m.fail_late(rows([2, 7], "failed", ts=3), **{"hoodie.datasource.write.operation": "insert_overwrite"})


def _compaction(pending: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        # after two delta commits: run inline, or only scheduled by the write (a pending compaction)
        opts = {"hoodie.compact.inline.max.delta.commits": "2", "hoodie.compact.inline": str(not pending).lower(),
                "hoodie.compact.schedule.inline": str(pending).lower()}
        m.write(rows(range(6), "one"), mode="overwrite", **opts)
        m.write(rows([1, 2, 6], "two", ts=2), **opts)
        m.write(rows([3], "three", ts=3), **{**opts, "hoodie.compact.inline": "false",
                                             "hoodie.compact.schedule.inline": "false"})
    return build


def _compaction_failed(m: Maker) -> None:
    _compaction(pending=True)(m)
    m.java.service(m.path, m.opts, "compaction")  # its files written, never committed: the compactor died


# A writer that died in a service leaves its instant pending; no Spark write or procedure stops there, so the
# service is started step by step through Hudi's write client (server.py, `service`).
NO_AUTO_CLEAN = {"hoodie.clean.automatic": "false", "hoodie.cleaner.commits.retained": "1"}


def _clean(inflight: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        # three versions of a file group (MOR: a compaction after two delta commits starts its second file slice):
        # a clean retaining one commit deletes the oldest
        opts = dict(NO_AUTO_CLEAN)
        if m.case.table_type == MOR:
            opts |= {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
        m.write(rows(range(6), "one"), mode="overwrite", **opts)
        m.write(rows([1, 2, 6], "two", ts=2), **opts)
        m.write(rows([1, 3], "three", ts=3), **opts)
        m.java.service(m.path, {**m.opts, **opts}, "clean", inflight=inflight)
    return build


def _rollback(inflight: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        m.write(rows(range(6), "one"), mode="overwrite")
        m.write(rows([1, 6], "two", ts=2))
        m.fail_late(rows([2, 7], "failed", ts=3))
        m.java.service(m.path, m.opts, "rollback", inflight=inflight)  # of the failed commit
    return build


def _savepoint(inflight: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        # the first commit savepointed (or its savepoint left inflight), then two more versions of its file groups:
        # a clean retaining one commit deletes the first commit's files unless a completed savepoint keeps them
        m.write(rows(range(6), "one"), mode="overwrite", **NO_AUTO_CLEAN)
        m.java.service(m.path, m.opts, "savepoint_inflight" if inflight else "savepoint")
        m.write(rows([1, 2, 6], "two", ts=2), **NO_AUTO_CLEAN)
        m.write(rows([1, 3], "three", ts=3), **NO_AUTO_CLEAN)
    return build


def _restore(inflight: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        # rollback_to_savepoint's first steps (restore plan, then inflight) and no further: a restore that died
        m.write(rows(range(6), "one"), mode="overwrite")
        m.java.service(m.path, m.opts, "savepoint")
        m.write(rows([1, 2, 6], "two", ts=2))
        m.write(rows([1, 7], "three", ts=3))
        m.java.service(m.path, m.opts, "restore", inflight=inflight)
    return build


# The metadata table with its files partition only (column stats, and on 1.x partition stats, off), and what
# Hudi's async indexer (HoodieIndexer, ScheduleIndexActionExecutor) demands: a multi-writer lock.
MDT_FILES = {"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "false",
             "hoodie.metadata.index.partition.stats.enable": "false"}
ASYNC_INDEXER = {"hoodie.metadata.index.async": "true",
                 "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                 "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}


def _indexing(inflight: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        m.opts |= MDT_FILES
        m.write(rows(range(6), "one"), mode="overwrite")
        m.write(rows([1, 2, 6], "two", ts=2))
        m.java.service(m.path, {**m.opts, **ASYNC_INDEXER}, "indexing", inflight=inflight)
    return build


def _log_compaction_pending(failed: bool) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        opts = {"hoodie.compact.inline": "false", "hoodie.log.compaction.blocks.threshold": "2"}
        m.write(rows(range(6), "one"), mode="overwrite", **opts)
        for n in (2, 3):
            m.write(rows([1, 2], f"up{n}", ts=n), **opts)
        m.java.service(m.path, {**m.opts, **opts}, "log_compaction")
        if failed:  # its log blocks written, never committed: the log compactor died
            m.java.service(m.path, {**m.opts, **opts}, "run_log_compaction")
    return build


def _cdc(mode: str) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        cdc = {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode}
        m.write(rows(range(6), "one"), mode="overwrite", **cdc)
        m.write(rows([1, 2, 6], "two", ts=2), **cdc)
        m.write(rows([3], "gone", ts=3), **cdc, **{"hoodie.datasource.write.operation": "delete"})
    return build


def _log_compaction(m: Maker) -> None:
    opts = {"hoodie.compact.inline": "false", "hoodie.log.compaction.inline": "true",
            "hoodie.log.compaction.blocks.threshold": "2"}
    m.write(rows(range(6), "one"), mode="overwrite", **opts)
    for n in range(2, 5):
        m.write(rows([1, 2], f"up{n}", ts=n), **opts)


def _consistent_hashing(m: Maker) -> None:
    opts = {"hoodie.index.type": "BUCKET", "hoodie.index.bucket.engine": "CONSISTENT_HASHING",
            "hoodie.bucket.index.num.buckets": "2", "hoodie.bucket.index.hash.field": "id"}
    m.write(rows(range(6), "one"), mode="overwrite", **opts)
    m.write(rows([1, 2, 6], "two", ts=2), **opts)


def _merge_mode(mode: str) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        opts = {"hoodie.write.record.merge.mode": mode}
        m.write(rows(range(6), "one", ts=5), mode="overwrite", **opts)
        m.write(rows([1, 2], "older", ts=1), **opts)  # a lower ordering value: EVENT_TIME keeps the stored row
        m.write(rows([3], "newer", ts=9), **opts)
    return build


def _custom_merger(m: Maker) -> None:
    opts = {"hoodie.write.record.merge.mode": "CUSTOM", "hoodie.write.record.merge.strategy.id": MERGER_ID,
            "hoodie.write.record.merge.custom.implementation.classes": MERGER_CLASS}
    m.read_options |= opts  # Java's reader too is told the merger class (the table names only its strategy id)
    m.write(rows(range(6), "one", ts=5), mode="overwrite", **opts)
    m.write(rows([1, 2], "two", ts=6), **opts)  # the merger keeps the first version: "one"
    m.write(rows([3, 7], "three", ts=7), **opts)


def _custom_payload(m: Maker) -> None:
    # KeepSmallestPayload (tests/java_hudi/merger): the smaller ts wins. 1.2 records a payload class of its own as
    # the CUSTOM merge mode with that class; 0.15 as the table's payload class.
    opts = {"hoodie.datasource.write.payload.class": PAYLOAD_CLASS}
    if m.case.version == 9:
        opts["hoodie.write.record.merge.mode"] = "CUSTOM"
    m.write(rows(range(6), "one", ts=5), mode="overwrite", **opts)
    m.write(rows([1, 2], "two", ts=6), **opts)  # a greater ts: the stored "one" stays
    m.write(rows([3], "three", ts=1), **opts)  # a smaller ts: "three" wins
    got = dict(zip(*(m.java.snapshot(m.path).column(c).to_pylist() for c in ("id", "v")), strict=True))
    assert (got[1], got[3]) == ("one-1", "three-3"), f"{m.case.name}: Java did not merge with the payload: {got}"


def _dms_payload(m: Maker) -> None:
    # AWS DMS's change records: a record whose Op is "D" deletes its key (AWSDmsAvroPayload, which Hudi 1.1+ records
    # as a delete marker of its merge mode); a payload this engine does not implement
    opts = {"hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.AWSDmsAvroPayload"}

    def dms(t: pa.Table, op: str) -> pa.Table:
        return t.append_column("Op", pa.array([op] * t.num_rows, pa.string()))
    m.write(dms(rows(range(6), "one"), "I"), mode="overwrite", **opts)
    m.write(dms(rows([1, 2], "two", ts=2), "U"), **opts)
    m.write(dms(rows([3], "gone", ts=3), "D"), **opts)


def _bootstrap(selector: str) -> Callable[[Maker], None]:
    def build(m: Maker) -> None:
        # The source table beside the table, inside the zip; Hudi keeps its absolute path (hoodie.properties,
        # the bootstrap index, commit metadata), so only this machine's copy resolves it: the tests read
        # nothing through it (the engine refuses skeleton files by name).
        source = m.path.parent / "source"
        data = rows(range(6), "one")
        for part in ("a", "b"):
            (source / part).mkdir(parents=True, exist_ok=True)
            pq.write_table(data.filter(pc.equal(data.column("p"), part)), source / part / "part-0.parquet")
        m.write(rows([], "none"), mode="overwrite", **{
            "hoodie.datasource.write.operation": "bootstrap", "hoodie.bootstrap.base.path": str(source),
            "hoodie.bootstrap.mode.selector": f"org.apache.hudi.client.bootstrap.selector.{selector}",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.bootstrap.parallelism": "2"})
        m.write(rows([1, 7], "two", ts=2))  # partition a only: b keeps its skeleton files
    return build


def _bootstrap_cdc(m: Maker) -> None:
    cdc = {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "data_before_after"}
    m.opts |= cdc
    _bootstrap("MetadataOnlyBootstrapModeSelector")(m)


def _partial_update(m: Maker) -> None:
    m.create_sql_table()
    m.sql(f"INSERT INTO {m.case.name} VALUES (1, 'one-1', 1, 1.5, 'a'), (2, 'one-2', 1, 3.0, 'b'), "
          f"(3, 'one-3', 1, 4.5, 'a')")
    m.sql(f"MERGE INTO {m.case.name} t USING (SELECT 1L AS id, 'two-1' AS v, 2L AS ts) s ON t.id = s.id "
          f"WHEN MATCHED THEN UPDATE SET v = s.v, ts = s.ts")


def _schema_evolution(m: Maker) -> None:
    m.sql("SET hoodie.schema.on.read.enable=true")
    m.read_options["hoodie.schema.on.read.enable"] = "true"  # else Java reads a renamed column of older files as null
    # Hudi 1.2 validates the renaming commit's schema against the table's unless dropped fields are allowed
    m.sql("SET hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true")
    m.create_sql_table({"hoodie.schema.on.read.enable": "true"}, ts_type="INT")  # ts INT, then BIGINT
    t = m.case.name
    m.sql(f"INSERT INTO {t} VALUES (1, 'one-1', 1, 1.5, 'a'), (2, 'one-2', 1, 3.0, 'b')")
    m.sql(f"ALTER TABLE {t} RENAME COLUMN v TO name")
    m.sql(f"ALTER TABLE {t} ALTER COLUMN ts TYPE BIGINT")
    m.sql(f"ALTER TABLE {t} DROP COLUMN amount")
    m.sql(f"INSERT INTO {t} (id, name, ts, p) VALUES (3, 'two-3', 2, 'a')")


def _keyless(m: Maker) -> None:
    m.opts.pop("hoodie.datasource.write.recordkey.field")
    m.opts.pop("hoodie.datasource.write.precombine.field")
    m.opts["hoodie.datasource.write.operation"] = "insert"
    m.write(rows(range(4), "one"), mode="overwrite")
    m.write(rows(range(4, 6), "two"))


BUILDERS: dict[str, Callable[[Maker], None]] = {
    "mdt": _mdt,
    "clustering": _clustering_done,
    "clustering_pending": _clustering_pending,
    "clustering_failed": _clustering_failed,
    "pending_commit": _pending_commit,
    "failed_commit": _failed_commit,
    "failed_insert_overwrite": _failed_insert_overwrite,
    "failed_commit_timeline_markers": _failed_commit_timeline_markers,
    "compaction_pending": _compaction(pending=True),
    "compaction": _compaction(pending=False),
    "compaction_failed": _compaction_failed,
    "clean_pending": _clean(inflight=False),
    "clean_failed": _clean(inflight=True),
    "rollback_pending": _rollback(inflight=False),
    "rollback_failed": _rollback(inflight=True),
    "savepoint": _savepoint(inflight=False),
    "savepoint_pending": _savepoint(inflight=True),
    "restore_pending": _restore(inflight=False),
    "restore_failed": _restore(inflight=True),
    "indexing_pending": _indexing(inflight=False),
    "indexing_failed": _indexing(inflight=True),
    "log_compaction_pending": _log_compaction_pending(failed=False),
    "log_compaction_failed": _log_compaction_pending(failed=True),
    "cdc_op_key_only": _cdc("op_key_only"),
    "cdc_data_before": _cdc("data_before"),
    "cdc_data_before_after": _cdc("data_before_after"),
    "log_compaction": _log_compaction,
    "consistent_hashing": _consistent_hashing,
    "commit_time_ordering": _merge_mode("COMMIT_TIME_ORDERING"),
    "event_time_ordering": _merge_mode("EVENT_TIME_ORDERING"),
    "custom_merger": _custom_merger,
    "partial_update": _partial_update,
    "dms_payload": _dms_payload,
    "custom_payload": _custom_payload,
    "bootstrap_metadata_only": _bootstrap("MetadataOnlyBootstrapModeSelector"),
    "bootstrap_full_record": _bootstrap("FullRecordBootstrapModeSelector"),
    "bootstrap_cdc": _bootstrap_cdc,
    "schema_evolution": _schema_evolution,
    "keyless": _keyless,
}


# What each builder must have left (globs in the table): Java Hudi silently skips what it was not asked well.
EVIDENCE: dict[str, list[str]] = {
    "mdt": [".hoodie/metadata/.hoodie/hoodie.properties"],
    "clustering": [".hoodie/**/*.replacecommit"],
    "clustering_pending": [".hoodie/**/*.replacecommit.requested|.hoodie/**/*.clustering.requested"],  # 6 | 9
    "clustering_failed": [".hoodie/**/*.replacecommit.inflight|.hoodie/**/*.clustering.inflight"],
    "pending_commit": [".hoodie/**/*.requested"],
    "failed_commit": [".hoodie/**/*.inflight", ".hoodie/.temp/*/*"],
    "failed_commit_timeline_markers": [".hoodie/**/*.inflight", ".hoodie/.temp/*/MARKERS*"],
    "failed_insert_overwrite": [".hoodie/**/*.replacecommit.inflight"],
    "compaction": [".hoodie/**/*.compaction.inflight"],
    "compaction_pending": [".hoodie/**/*.compaction.requested"],
    "log_compaction": [".hoodie/**/*.logcompaction.inflight"],
    "compaction_failed": [".hoodie/**/*.compaction.inflight", "*/*.parquet"],
    "clean_pending": [".hoodie/**/*.clean.requested"],
    "clean_failed": [".hoodie/**/*.clean.inflight"],
    "rollback_pending": [".hoodie/**/*.rollback.requested",
                         ".hoodie/**/*[0-9].inflight|.hoodie/**/*.deltacommit.inflight"],
    "rollback_failed": [".hoodie/**/*.rollback.inflight", ".hoodie/**/*[0-9].inflight|.hoodie/**/*.deltacommit.inflight"],
    "savepoint": [".hoodie/**/*.savepoint"],
    "savepoint_pending": [".hoodie/**/*.savepoint.inflight"],
    "restore_pending": [".hoodie/**/*.restore.requested"],
    "restore_failed": [".hoodie/**/*.restore.inflight"],
    "indexing_pending": [".hoodie/**/*.indexing.requested"],
    "indexing_failed": [".hoodie/**/*.indexing.inflight"],
    "log_compaction_pending": [".hoodie/**/*.logcompaction.requested"],
    "log_compaction_failed": [".hoodie/**/*.logcompaction.inflight"],
    "bootstrap_metadata_only": [".hoodie/.aux/.bootstrap/.partitions/*"],
    "bootstrap_cdc": [".hoodie/.aux/.bootstrap/.partitions/*", "*/.*.cdc"],
    "consistent_hashing": [".hoodie/.bucket_index/consistent_hashing_metadata/*/*"],
    "schema_evolution": [".hoodie/.schema/*"],
    "cdc_op_key_only": ["*/.*.cdc"], "cdc_data_before": ["*/.*.cdc"], "cdc_data_before_after": ["*/.*.cdc"],
}


def check_evidence(m: Maker) -> None:
    for pattern in EVIDENCE.get(m.case.builder, []):  # a|b: either
        assert any(list(m.path.glob(p)) for p in pattern.split("|")), f"{m.case.name}: Java left no {pattern}"


# ---- the queries recorded ---------------------------------------------------------------------------------------

def completed_instants(path: Path, version: int) -> list[tuple[str, str, str]]:
    """(requested time, completion time, action) of every completed instant, in completion order."""
    out = []
    if version == 6:
        for f in (path / ".hoodie").iterdir():
            ts, _, action = f.name.partition(".")
            if ts.isdigit() and action in ("commit", "deltacommit", "replacecommit"):
                out.append((ts, ts, action))
    else:
        for f in (path / ".hoodie" / "timeline").iterdir():
            stem, _, action = f.name.partition(".")
            ts, _, done = stem.partition("_")
            if ts.isdigit() and done.isdigit() and action in ("commit", "deltacommit", "replacecommit"):
                out.append((ts, done, action))
    return sorted(out, key=lambda i: i[1])


def record_reads(m: Maker, out: Path) -> list[dict]:
    case, java, path = m.case, m.java, m.path
    instants = completed_instants(path, case.version)
    queries: list[dict] = [{"kind": "snapshot"}]
    if case.table_type == MOR:
        queries.append({"kind": "read_optimized"})
    if len(instants) > 1:
        queries.append({"kind": "time_travel", "instant": instants[0][0]})
        queries.append({"kind": "incremental", "begin": instants[0][1]})
    if case.feature.startswith("CDC"):
        queries.append({"kind": "cdc", "begin": "000"})
        if len(instants) > 1:
            queries.append({"kind": "cdc", "begin": instants[0][1]})
    done = []
    for n, q in enumerate(queries):
        try:
            opts = m.read_options
            if q["kind"] == "snapshot":
                got = java.snapshot(path, **opts)
            elif q["kind"] == "read_optimized":
                got = java.read_optimized(path, **opts)
            elif q["kind"] == "time_travel":
                got = java.time_travel(path, q["instant"], **opts)
            elif q["kind"] == "incremental":
                got = java.incremental(path, q["begin"], **opts)
            else:
                got = java.cdc(path, q["begin"], **opts)
        except JavaHudiError as e:  # recorded: the tests then expect nothing of that query
            done.append({**q, "java_error": e.error[:500]})
            continue
        pq.write_table(got, out / f"{n}.parquet")
        done.append({**q, "file": f"{n}.parquet"})
    return done


def java_next_write(m: Maker, copy: Path) -> dict:
    """Java's upsert of a stored key and a new one into a copy of the table with its defaults (the metadata table
    on): its error, or the instants and keys it leaves (the timeline's instant files, the snapshot's ids and values). A refused write on a pending restore is
    followed by the way out the docs give (restore to the savepoint again) and the same write."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(m.path, copy)
    opts = {k: v for k, v in m.opts.items() if k != "hoodie.metadata.enable"}
    try:
        m.java.write(copy, rows([1, 100], "java-next", ts=9), opts)
    except JavaHudiError as e:
        out: dict = {"error": e.error[:500], "causes": [c[:300] for c in e.causes[1:4]]}
        if m.case.builder.startswith("restore"):
            m.java.service(copy, m.opts, "restore_again")
            out["restored_again"] = _java_state(m, copy)
            m.java.write(copy, rows([1, 100], "java-next", ts=9), opts)
            out["then_written"] = _java_state(m, copy)
        return out
    return _java_state(m, copy)


def _java_state(m: Maker, path: Path) -> dict:
    timeline = path / ".hoodie" / ("timeline" if m.case.version == 9 else "")
    snapshot = m.java.snapshot(path)
    return {"instants": sorted(f.name for f in timeline.iterdir() if f.is_file() and f.name[0].isdigit()),
            "rows": sorted(zip(snapshot.column("id").to_pylist(), snapshot.column("v").to_pylist(), strict=True))}


def make(case: FeatureTable, java: JavaHudi, work: Path) -> Path:
    root = work / case.name
    shutil.rmtree(root, ignore_errors=True)
    m = Maker(case, java, root / "table")
    try:
        BUILDERS[case.builder](m)
    finally:
        java.sql("RESET")  # what a case SET stays out of the next one
    check_evidence(m)
    (root / "java_reads").mkdir()
    reads = record_reads(m, root / "java_reads")
    answers = {"hudi": java.hudi, "options": m.read_options, "reads": reads}
    if case.java_next_write:  # what Java's own writer does with the table (the case says what it found)
        answers["java_next_write"] = java_next_write(m, work / f"{case.name}-next")
        print(f"{case.name}: Java's next write: {answers['java_next_write']}", flush=True)
    (root / "java_reads" / "reads.json").write_text(json.dumps(answers, indent=1) + "\n")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    target = DATA_DIR / f"{case.name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(root.rglob("*")):
            if f.is_file():
                z.write(f, f.relative_to(work).as_posix())
    return target


def classes_jar(release: OracleRelease, into: Path, sources: list[Path]) -> Path:
    """Our Java classes (`sources`) compiled by the oracle's JDK against the release's bundle (and Spark's jars, for
    Kryo)."""
    java_bin = Path(release.java_home) / "bin"
    pyspark = subprocess.run([release.python, "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    classes = into / "classes"
    subprocess.run([str(java_bin / "javac"), "-nowarn", "-cp", f"{release.jar}:{pyspark}/jars/*", "-d", str(classes),
                    *map(str, sources)], check=True)
    jar = into / "dbt-hudi-test-classes.jar"
    subprocess.run([str(java_bin / "jar"), "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


def main(names: list[str]) -> None:
    cases = [c for c in CASES if not names or c.name in names]
    unknown = set(names) - {c.name for c in CASES}
    if unknown:
        raise SystemExit(f"no such feature table: {sorted(unknown)}")
    with tempfile.TemporaryDirectory(prefix="feature-tables-") as tmp:
        for hudi in sorted({c.hudi for c in cases}):
            (release,) = prepare([hudi])
            conf = {}
            builders = {c.builder for c in cases if c.hudi == hudi}
            sources = [s for b, s in (("custom_merger", MERGER_SOURCE), ("custom_payload", PAYLOAD_SOURCE))
                       if b in builders]
            if sources:
                conf["spark.jars"] = f"{release.jar},{classes_jar(release, Path(tmp) / f'classes-{hudi}', sources)}"
            java = JavaHudi(release, Path(tmp) / f"oracle-{hudi}", conf=conf)
            try:
                for case in (c for c in cases if c.hudi == hudi):
                    started = time.monotonic()
                    try:
                        target = make(case, java, Path(tmp) / "tables")
                    except (JavaHudiError, AssertionError, subprocess.SubprocessError) as e:
                        print(f"FAILED {case.name}: {e}", flush=True)
                        continue
                    print(f"{case.name}: {target.stat().st_size // 1024} KB, {time.monotonic() - started:.0f} s",
                          flush=True)
            finally:
                java.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
