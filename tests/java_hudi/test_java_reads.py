"""Java Hudi reads every table the engine writes (issue 40, item 2): a seeded, table-driven matrix of tables
(COW and MOR; versions 6, 8, 9; non-partitioned, simple, composite, timestamp, custom and keyless keys, hive-style
or not; every payload and merge mode; CDC in its three logging modes) that the engine writes in a few commits
(insert / bulk_insert, upsert of updates and new keys, delete, insert_overwrite). Then Java Hudi 0.15.0 (version 6)
and 1.2.0 (every version) answer every query, each compared whole (every column, with types) with the engine's own
read, and the snapshots also with an in-memory model of the rows:

- snapshot and time travel to every completed instant (engine and model);
- incremental over every range of consecutive commits and from the start (bounds: requested times on version 6,
  completion times on versions 8/9, as Hudi 1.x takes them: docs/python-api.md);
- read-optimized on MOR; CDC (op, ts_ms, before, after: the images compared parsed) on CDC tables;
- the first batch written by Java Hudi itself to a sibling path with the same options: the same record keys,
  partition paths and rows, and the same `hoodie.properties`.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.java_properties import parse_properties
from java_hudi.checks import java_consistency_checks
from java_hudi.client import JavaHudi, JavaHudiError
from java_hudi.compare import assert_same_table

SEED = 40
UTC = dt.UTC
SCHEMA = pa.schema([
    ("id", pa.int64()), ("k2", pa.int32()), ("region", pa.string()), ("event_ms", pa.int64()),
    ("seq", pa.int64()), ("name", pa.string()), ("price", pa.float64()), ("flag", pa.bool_()),
    ("day", pa.date32()), ("ts", pa.timestamp("us", "UTC")), ("amount", pa.decimal128(10, 2)),
])
DATA = SCHEMA.names
P = "org.apache.hudi.common.model."
K = "org.apache.hudi.keygen."
DAY_MS = 86_400_000
EPOCH_2024 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


# ---- the tables -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    key: str  # nonpartitioned, simple, complex, timestamp, custom, keyless
    version: int
    table_type: str
    hive: bool = False
    payload: str | None = None  # a payload class (short name) or, on 8/9, a merge mode
    cdc: str | None = None  # supplemental logging mode

    @property
    def id(self) -> str:
        parts = [self.key, f"v{self.version}", "cow" if self.table_type == "COPY_ON_WRITE" else "mor"]
        parts += ["hive"] if self.hive else []
        parts += [self.payload] if self.payload else []
        parts += [f"cdc-{self.cdc}"] if self.cdc else []
        return "-".join(parts)

    @property
    def ordered(self) -> bool:
        """An older ordering value loses against the stored record."""
        return self.payload in ("DefaultHoodieRecordPayload", "EventTimeAvroPayload", "PartialUpdateAvroPayload",
                                "EVENT_TIME_ORDERING")

    @property
    def releases(self) -> list[str]:
        return ["0.15.0", "1.2.0"] if self.version == 6 else ["1.2.0"]


COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
SHAPES = [
    # version 6: every key shape, every payload, the three CDC modes
    Shape("nonpartitioned", 6, COW, payload="OverwriteWithLatestAvroPayload", cdc="DATA_BEFORE_AFTER"),
    Shape("simple", 6, MOR, hive=True, payload="DefaultHoodieRecordPayload"),
    Shape("complex", 6, COW, payload="PartialUpdateAvroPayload", cdc="DATA_BEFORE"),
    Shape("keyless", 6, MOR, hive=True),
    Shape("timestamp", 6, MOR, payload="DefaultHoodieRecordPayload"),
    Shape("custom", 6, COW, hive=True),
    # version 8
    Shape("nonpartitioned", 8, MOR, payload="EVENT_TIME_ORDERING"),
    Shape("simple", 8, COW, payload="COMMIT_TIME_ORDERING"),
    Shape("complex", 8, MOR, hive=True, payload="DefaultHoodieRecordPayload"),
    Shape("timestamp", 8, COW, hive=True, payload="PartialUpdateAvroPayload"),
    Shape("custom", 8, MOR, payload="OverwriteNonDefaultsWithLatestAvroPayload"),
    Shape("keyless", 8, COW),
    # version 9
    Shape("nonpartitioned", 9, COW, hive=True, payload="EventTimeAvroPayload"),
    Shape("simple", 9, MOR, payload="EVENT_TIME_ORDERING"),
    Shape("complex", 9, COW, payload="PartialUpdateAvroPayload"),
    Shape("timestamp", 9, MOR, payload="COMMIT_TIME_ORDERING"),
    Shape("keyless", 9, MOR),
    Shape("custom", 9, COW, hive=True, payload="DefaultHoodieRecordPayload"),
]


def options(shape: Shape) -> dict[str, str]:
    o = {"hoodie.table.name": "t_" + shape.id.replace("-", "_").lower(),
         "hoodie.datasource.write.table.type": shape.table_type,
         "hoodie.datasource.write.hive_style_partitioning": str(shape.hive).lower()}
    o["hoodie.write.table.version"] = str(shape.version)  # Hudi 0.15 has no such key and writes version 6
    if shape.key != "keyless":
        o["hoodie.datasource.write.recordkey.field"] = "id,k2" if shape.key == "complex" else "id"
        o["hoodie.datasource.write.precombine.field"] = "seq"
    partitions, keygen = {
        "nonpartitioned": ("", "NonpartitionedKeyGenerator"), "simple": ("region", "SimpleKeyGenerator"),
        "complex": ("region", "ComplexKeyGenerator"), "timestamp": ("event_ms", "TimestampBasedKeyGenerator"),
        "custom": ("region:SIMPLE,event_ms:TIMESTAMP", "CustomKeyGenerator"),
        "keyless": ("region", None)}[shape.key]
    o["hoodie.datasource.write.partitionpath.field"] = partitions
    if keygen:
        o["hoodie.datasource.write.keygenerator.class"] = K + keygen
    if shape.key in ("timestamp", "custom"):
        o |= {"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
              "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
              "hoodie.keygen.timebased.timezone": "UTC"}
    if shape.payload in ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING"):
        o["hoodie.write.record.merge.mode"] = shape.payload  # the writer's key (the table's: hoodie.record.merge.mode)
    elif shape.payload:
        o["hoodie.datasource.write.payload.class"] = P + shape.payload
    if shape.cdc:
        o |= {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": shape.cdc}
    return o


# ---- the rows -------------------------------------------------------------------------------------------------

def make_rows(rng: random.Random, ids: list[int], seq: Callable[[int], int], *, null_name: tuple[int, ...] = (),
              region: Callable[[int], str] | None = None) -> pa.Table:
    rows = []
    for i in ids:
        rows.append({
            "id": i, "k2": i % 3, "region": region(i) if region else ("eu" if i % 2 else "us"),
            "event_ms": EPOCH_2024 + (i % 3) * DAY_MS + rng.randrange(DAY_MS), "seq": seq(i),
            "name": None if i in null_name else f"n{i}-{rng.randrange(1000)}",
            "price": round(rng.uniform(0, 100), 3), "flag": rng.random() < 0.5,
            "day": dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(30)),
            "ts": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rng.randrange(10**12)),
            "amount": decimal.Decimal(rng.randrange(10**6)) / 100,
        })
    return pa.Table.from_pylist(rows, SCHEMA)


def record_key(shape: Shape, row: dict) -> str:
    return f"id:{row['id']},k2:{row['k2']}" if shape.key == "complex" else str(row["id"])


def partition_path(shape: Shape, row: dict) -> str:
    date = date_text(row["event_ms"])
    parts = {"nonpartitioned": [], "simple": [("region", row["region"])], "complex": [("region", row["region"])],
             "keyless": [("region", row["region"])], "timestamp": [("event_ms", date)],
             "custom": [("region", row["region"]), ("event_ms", date)]}[shape.key]
    return "/".join(f"{k}={v}" if shape.hive else v for k, v in parts)


@dataclass
class Model:
    """The rows the table holds: record key -> data row (keyless: a list of rows), with its partition path."""

    shape: Shape
    rows: dict[str, dict] = field(default_factory=dict)
    appended: list[dict] = field(default_factory=list)
    written: dict[str, int] = field(default_factory=dict)  # key -> the commit (index) of its current version
    # per commit: (key, the commit of the version it met, the incoming row) of each update of a stored key
    updates: list[list[tuple[str, int, dict]]] = field(default_factory=list)

    def merge(self, stored: dict | None, incoming: dict) -> dict:
        if stored is None:
            return incoming
        payload = self.shape.payload
        stored_wins = self.shape.ordered and stored["seq"] > incoming["seq"]
        if payload == "OverwriteNonDefaultsWithLatestAvroPayload":
            return {c: stored[c] if incoming[c] is None else incoming[c] for c in DATA}
        if payload == "PartialUpdateAvroPayload":
            win, lose = (stored, incoming) if stored_wins else (incoming, stored)
            return {c: lose[c] if win[c] is None else win[c] for c in DATA}
        return stored if stored_wins else incoming

    def apply(self, operation: str, batch: pa.Table) -> None:
        rows = batch.to_pylist()
        commit = len(self.updates)
        self.updates.append([])
        if self.shape.key == "keyless":
            if operation == "insert_overwrite":
                touched = {partition_path(self.shape, r) for r in rows}
                self.appended = [r for r in self.appended if partition_path(self.shape, r) not in touched]
            self.appended += rows
            return
        if operation == "delete":
            for r in rows:
                self.rows.pop(record_key(self.shape, r), None)
            return
        if operation in ("insert_overwrite", "insert_overwrite_table"):
            touched = {partition_path(self.shape, r) for r in rows}
            self.rows = {k: r for k, r in self.rows.items()
                         if operation == "insert_overwrite" and partition_path(self.shape, r) not in touched}
        for r in rows:
            k = record_key(self.shape, r)
            if k in self.rows:
                self.updates[commit].append((k, self.written[k], r))
            merged = self.merge(self.rows.get(k), r)
            if merged is not self.rows.get(k):
                self.written[k] = commit
            self.rows[k] = merged

    def table(self) -> pa.Table:
        rows = self.appended if self.shape.key == "keyless" else list(self.rows.values())
        data = pa.Table.from_pylist(rows, SCHEMA)
        data = data.append_column("_hoodie_partition_path",
                                  pa.array([partition_path(self.shape, r) for r in rows], pa.string()))
        if self.shape.key != "keyless":
            data = data.append_column("_hoodie_record_key",
                                      pa.array([record_key(self.shape, r) for r in rows], pa.string()))
        return data


def batches(shape: Shape, rng: random.Random) -> list[tuple[str, pa.Table]]:
    """insert / bulk_insert of 6 rows; an upsert of 2 updates (one with an older ordering value, one with a null
    name) and 2 new keys; a delete of one key; an insert_overwrite (of the partitions its rows hit, or the whole
    table when it is not partitioned)."""
    first = make_rows(rng, [1, 2, 3, 4, 5, 6], lambda i: 10)
    if shape.key == "keyless":
        return [("bulk_insert", first), ("insert", make_rows(rng, [7, 8, 9], lambda i: 20)),
                ("insert_overwrite", make_rows(rng, [10, 11], lambda i: 30, region=lambda i: "eu"))]
    stored = {r["id"]: r for r in first.to_pylist()}
    # Updates keep each key's partition fields (a key does not move under a non-global index).
    update = make_rows(rng, [2, 3, 7, 8], lambda i: 5 if i == 3 else 20, null_name=(2,))
    update = _keep_partition_fields(update, stored)
    delete = first.filter(pa.compute.is_in(first.column("id"), pa.array([4], pa.int64())))
    overwrite_op = "insert_overwrite_table" if shape.key == "nonpartitioned" else "insert_overwrite"
    overwrite = make_rows(rng, [5, 9], lambda i: 30)
    overwrite = _keep_partition_fields(overwrite, stored)
    return [("insert" if shape.table_type == MOR else "bulk_insert", first), ("upsert", update),
            ("delete", delete), (overwrite_op, overwrite)]


def _keep_partition_fields(batch: pa.Table, stored: dict[int, dict]) -> pa.Table:
    rows = batch.to_pylist()
    for r in rows:
        if r["id"] in stored:
            r["region"], r["event_ms"], r["k2"] = (stored[r["id"]][c] for c in ("region", "event_ms", "k2"))
    return pa.Table.from_pylist(rows, SCHEMA)


# ---- the queries ----------------------------------------------------------------------------------------------

def _bounds(table: HudiTable) -> list[str]:
    """The completed commits' bounds of incremental ranges: completion times on 8/9, requested times on 6."""
    commits = table.timeline.completed_commits()
    by_completion = table.timeline.layout.incremental_by_completion_time
    return [c.completion_time if by_completion else c.timestamp for c in commits]


META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


@dataclass(frozen=True)
class LostDecimal:
    """A decimal Java Hudi's CDC query printed as Spark's `Decimal` bean (`{"zero": false}`): only whether it is 0
    is left (apache/hudi#8616, #14259: `InternalRowToJsonStringConverter` serializes Spark's internal objects)."""

    zero: bool

    def __eq__(self, other: object) -> bool:
        return isinstance(other, decimal.Decimal) and (other == 0) == self.zero

    def __hash__(self) -> int:
        return hash(self.zero)


def image_values(text: str | None, schema: pa.Schema) -> dict | None:
    """A CDC image (JSON text) as typed values. Java Hudi prints images as Hudi holds the record (apache/hudi#9508,
    #8616): from a CDC log file Avro's values (date: days, timestamp: microseconds, decimal: the unscaled
    two's-complement bytes) and the text `null` for no image; from a data file Spark's values with the meta
    columns and without null fields (1.x). This engine prints ISO dates and timestamps and decimal numbers."""
    if text is None:
        return None
    record = json.loads(text)
    if record is None:
        return None
    extra = set(record) - set(schema.names)
    assert extra <= set(META), f"CDC image has columns {sorted(extra)} the table does not: {text}"
    out = {}
    for f in schema:
        v = record.get(f.name)
        if v is None:
            out[f.name] = None
        elif pa.types.is_date(f.type):
            out[f.name] = dt.date(1970, 1, 1) + dt.timedelta(days=v) if isinstance(v, int) else dt.date.fromisoformat(v)
        elif pa.types.is_timestamp(f.type):
            out[f.name] = (dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=v) if isinstance(v, int)
                           else dt.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%f%z"))
        elif pa.types.is_decimal(f.type):
            if isinstance(v, list):
                v = decimal.Decimal(int.from_bytes(bytes(b & 0xFF for b in v), "big", signed=True)).scaleb(-f.type.scale)
            out[f.name] = LostDecimal(v["zero"]) if isinstance(v, dict) else decimal.Decimal(str(v))
        else:
            out[f.name] = v
    return out


def cdc_changes(t: pa.Table, schema: pa.Schema) -> list[tuple]:
    """(op, ts_ms, before, after) of each change, images as typed values, in a stable order."""
    rows = [(op, str(ts), image_values(b, schema), image_values(a, schema)) for op, ts, b, a in
            zip(*(t.column(c).to_pylist() for c in ("op", "ts_ms", "before", "after")))]
    return sorted(rows, key=lambda r: (r[0], r[1], repr(sorted((r[2] or r[3] or {}).items(), key=str))))


def assert_same_changes(ours: pa.Table, java: pa.Table, schema: pa.Schema, what: str,
                        repeats_replaced_image: frozenset[str] = frozenset()) -> None:
    """The same changes, each image compared as typed values. `repeats_replaced_image`: the replacecommits whose
    deletes Java Hudi 0.15 prints with one repeated image (its REPLACE_COMMIT split reuses one row object for
    every row of a replaced file group; Hudi 1.2 prints each row): those are checked for their number and for
    each image being one of the replaced rows."""
    a, b = cdc_changes(ours, schema), cdc_changes(java, schema)
    assert len(a) == len(b), f"{what}: {len(a)} changes, Java Hudi has {len(b)}:\nours {a}\njava {b}"
    replaced = [x for x in a if x[0] == "d" and x[1] in repeats_replaced_image]
    for y in [y for y in b if y[0] == "d" and y[1] in repeats_replaced_image]:
        assert any(y == x for x in replaced), f"{what}: Java Hudi deletes {y}, not a row the commit replaced"
        b.remove(y)
    for x in a:
        if x in replaced:
            continue
        match = next((i for i, y in enumerate(b) if y == x), None)
        assert match is not None, f"{what}: Java Hudi lacks the change {x}\njava {b}"
        b.pop(match)


@dataclass
class Checks:
    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def count(self, release: str, shape: Shape) -> None:
        what = (release, shape.id)
        self.counts[what] = self.counts.get(what, 0) + 1


CHECKS = Checks()


def _properties(path: Path) -> dict[str, str]:
    return parse_properties((path / ".hoodie" / "hoodie.properties").read_text())


def as_partition_path_value(ours: pa.Table, java: pa.Table) -> pa.Table:
    """Hudi 1.x's Spark source types the partition column of a TimestampBasedKeyGenerator table (EPOCHMILLISECONDS,
    SCALAR, UNIX_TIMESTAMP) as a string, since it cannot take a value back from the formatted path (HUDI-7709,
    apache/hudi#11615, #11002): Hudi 1.2 answers the stored number's digits as text. Ours, that column so, to compare."""
    if "event_ms" not in java.column_names or not pa.types.is_string(java.schema.field("event_ms").type) \
            or "event_ms" not in ours.column_names:
        return ours
    text = pa.array([None if v is None else str(v) for v in ours.column("event_ms").to_pylist()], pa.string())
    return ours.set_column(ours.column_names.index("event_ms"), "event_ms", text)


def date_text(event_ms: int) -> str:
    return dt.datetime.fromtimestamp(event_ms / 1000, UTC).strftime("%Y-%m-%d")


def unmerged_log_records(updates: list[list[tuple[str, int, dict]]], lo: int, hi: int, ours: pa.Table,
                         java: pa.Table, what: str) -> tuple[pa.Table, pa.Table]:
    """Java Hudi's MOR incremental query merges a file group's log records only with the records the range wrote:
    the base file's rows are filtered by commit time before the merge (apache/hudi#8222, HUDI-6025; fix proposed
    in apache/hudi#19005). So a key updated in the range (lo, hi] (commit indexes) whose stored version is older
    comes back as the update wrote it, whether or not it won against the stored version; this engine merges as a
    snapshot read does. Check those rows of Java's answer are the incoming rows, and take them out of both."""
    incoming = {k: r for commit in range(lo, hi) for k, before, r in updates[commit] if before < lo}
    if not incoming:
        return ours, java
    keys = pa.array(sorted(incoming), pa.string())
    shown = java.filter(pa.compute.is_in(java.column("_hoodie_record_key"), keys))
    assert sorted(shown.column("_hoodie_record_key").to_pylist()) == sorted(incoming), \
        f"{what}: Java Hudi shows {shown.column('_hoodie_record_key').to_pylist()} of the updates {sorted(incoming)}"
    as_text = pa.types.is_string(java.schema.field("event_ms").type)  # as_partition_path_value
    for row in shown.select(DATA + ["_hoodie_record_key"]).to_pylist():
        update = dict(incoming[row["_hoodie_record_key"]])
        update["event_ms"] = str(update["event_ms"]) if as_text else update["event_ms"]
        assert {c: row[c] for c in DATA} == update, \
            f"{what}: Java Hudi's {row} is not the update {incoming[row['_hoodie_record_key']]}"
    drop = pa.compute.invert(pa.compute.is_in(ours.column("_hoodie_record_key"), keys))
    return ours.filter(drop), java.filter(pa.compute.invert(pa.compute.is_in(java.column("_hoodie_record_key"), keys)))


def check_reads(java: JavaHudi, shape: Shape, path: Path, models: list[pa.Table],
                model_updates: list[list[tuple[str, int, dict]]]) -> None:
    table = HudiTable.load(str(path))
    commits = table.timeline.completed_commits()
    instants = [c.timestamp for c in commits]
    assert len(instants) == len(models)

    def same(ours: pa.Table, theirs: pa.Table, what: str, key: str = "_hoodie_record_key") -> None:
        if shape.key == "timestamp":
            ours = as_partition_path_value(ours, theirs)
        assert_same_table(ours, theirs, f"{shape.id} Hudi {java.hudi} {what}", key=key)
        CHECKS.count(java.hudi, shape)

    model_key = "id" if shape.key == "keyless" else "_hoodie_record_key"
    if (shape.key == "custom" and java.hudi == "1.2.0") or (shape.key in ("timestamp", "custom")
                                                            and java.hudi == "0.15.0"):
        # Hudi's Spark source cannot read a CustomKeyGenerator table with a TIMESTAMP part, its own writes
        # included: it parses the formatted path as the column's type (apache/hudi#10678; HUDI-7709 fixed
        # TimestampBasedKeyGenerator only, in 1.x: 0.15 fails the same way on its own timestamp-partitioned tables).
        with pytest.raises(JavaHudiError) as refused:
            java.snapshot(path)
        assert refused.value.mentions("Failed to cast value"), refused.value
        CHECKS.count(java.hudi, shape)
        return
    latest = java.snapshot(path)
    same(table.read_snapshot(), latest, "snapshot")
    same(models[-1], latest.select(models[-1].column_names), "snapshot (model)", key=model_key)
    for instant, model in zip(instants, models):
        theirs = java.time_travel(path, instant)
        same(table.read_snapshot(as_of=instant), theirs, f"time travel to {instant}")
        same(model, theirs.select(model.column_names), f"time travel to {instant} (model)", key=model_key)
    bounds = _bounds(table)
    ranges = [*[(i, i + 1) for i in range(len(bounds))], (0, len(bounds))]
    for lo, hi in ranges:
        begin, end = (["000", *bounds])[lo], None if (lo, hi) == ranges[-1] else bounds[hi - 1]
        ours, theirs = table.read_incremental(begin, end), java.incremental(path, begin, end)
        if shape.table_type == MOR:
            ours, theirs = unmerged_log_records(model_updates, lo, hi, ours, theirs, f"{shape.id} Hudi {java.hudi} "
                                                f"incremental ({begin}, {end}]")
        same(ours, theirs, f"incremental ({begin}, {end}]")
    if shape.table_type == MOR:
        same(table.read_snapshot(read_optimized=True), java.read_optimized(path), "read-optimized")
    if shape.cdc:
        replaced = frozenset(c.timestamp for c in commits
                             if java.hudi == "0.15.0" and c.action.value == "replacecommit")
        for begin, end in [*zip(["000", *bounds[:-1]], bounds), ("000", bounds[-1])]:
            assert_same_changes(table.read_changes(begin, end), java.cdc(path, begin, end), SCHEMA,
                                f"{shape.id} Hudi {java.hudi} CDC ({begin}, {end}]", replaced)
            CHECKS.count(java.hudi, shape)


@pytest.fixture(scope="module", autouse=True)
def _report_checks(request: pytest.FixtureRequest):
    """Print how many of Java Hudi's answers were compared, by release and table shape."""
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not CHECKS.counts:
        return
    with capture.global_and_fixture_disabled():  # a module fixture's teardown runs under capture
        reporter.write_line("")
        for release in sorted({r for r, _ in CHECKS.counts}):
            total = sum(n for (r, _), n in CHECKS.counts.items() if r == release)
            reporter.write_line(f"Java Hudi {release} reads compared: {total}")
            for (r, shape), n in sorted(CHECKS.counts.items()):
                if r == release:
                    reporter.write_line(f"  {shape}: {n}")


# How a table the engine creates differs from the one Java Hudi's `df.write.format("hudi")` creates with the same
# options, key by key, with the reason it stays (ours, Java's):
PROPERTY_DIFFERENCES: dict[str, Callable[[str | None, str | None], bool]] = {
    # Java's datasource writer leaves the database empty; Spark SQL's CREATE TABLE (and this engine, dbt's tables
    # being catalog tables) name it. The checksum is the CRC32 of "<database>.<name>", so it follows.
    "hoodie.database.name": lambda ours, java: ours == "default" and java in ("", None),
    "hoodie.table.checksum": lambda ours, java: ours is not None and java is not None,
    # Java's datasource writer spells out defaults that Spark SQL's CREATE TABLE, and this engine, leave implied.
    "hoodie.populate.meta.fields": lambda ours, java: ours is None and java == "true",
    "hoodie.partition.metafile.use.base.format": lambda ours, java: ours is None and java == "false",
    "hoodie.table.cdc.enabled": lambda ours, java: ours is None and java == "false",
    # Both build the metadata table (hoodie.metadata.enable defaults to true): this engine its files partition,
    # Java by its release's defaults (more partitions, or one still being built).
    "hoodie.table.metadata.partitions": lambda ours, java: ours in (None, "files"),
    "hoodie.table.metadata.partitions.inflight": lambda ours, java: ours is None,
    # This engine's instant times are UTC and the table says so; Java's default is the JVM's zone (LOCAL).
    "hoodie.table.timeline.timezone": lambda ours, java: ours == "UTC" and java == "LOCAL",
    # Version 8 as Hudi 1.0 writes it (the conformance tables), which Hudi 1.2 reads; 1.2 itself writes a new
    # version-8 table with version 9's spellings: the ordering field as hoodie.table.ordering.fields, the key
    # generator by type only, the table format, the archive folder named as the LSM history.
    "hoodie.table.precombine.field": lambda ours, java: ours is not None and java is None,
    "hoodie.table.ordering.fields": lambda ours, java: ours is None and java is not None,
    "hoodie.table.keygenerator.class": lambda ours, java: ours is not None and java is None,
    "hoodie.table.format": lambda ours, java: ours is None and java == "native",
    "hoodie.archivelog.folder": lambda ours, java: ours == "archived" and java == "history",
    # 1.2 spells out its defaults for index definitions (metadata-table indexes, which this engine does not
    # build), several base file formats, and the Hive sync partition extractor (this engine syncs no Hive).
    "hoodie.table.index.defs.path": lambda ours, java: ours is None and java is not None,
    "hoodie.table.multiple.base.file.formats.enable": lambda ours, java: ours is None and java == "false",
    "hoodie.table.partition_extractor_class": lambda ours, java: ours is None and java is not None,
    # On a new CustomKeyGenerator table of version 8 or 9 Hudi 1.2 stores the partition fields with their types
    # and no hoodie.keygen.timebased.* options. This engine stores the names (hudi-rs 0.5 refuses the typed
    # spelling; Java reads either, and the engine reads and writes a table that has the types) and the options
    # (which Hudi 1.2's TimestampBasedKeyGenerator tables keep too, and which let a later write spell the path).
    "hoodie.table.partition.fields": lambda ours, java: (ours is None and java == "") or (
        ours is not None and java is not None and [f.split(":")[0] for f in java.split(",")] == ours.split(",")),
    **{k: (lambda ours, java: ours is not None and java is None) for k in (
        "hoodie.keygen.timebased.output.dateformat", "hoodie.keygen.timebased.timestamp.type",
        "hoodie.keygen.timebased.timezone")},
}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.id)
def test_java_hudi_reads_what_the_engine_writes(java_hudi, tmp_path: Path, shape: Shape) -> None:
    rng = random.Random(f"{SEED}-{shape.id}")
    path = tmp_path / "ours"
    opts = options(shape)
    model = Model(shape)
    models = []
    written = batches(shape, rng)
    for operation, batch in written:
        write(path, batch, {**opts, "hoodie.datasource.write.operation": operation})
        model.apply(operation, batch)
        models.append(model.table())
    engine = HudiTable.load(str(path))
    assert_same_table(models[-1], engine.read_snapshot().select(models[-1].column_names), f"{shape.id} engine",
                      key="id" if shape.key == "keyless" else "_hoodie_record_key")
    for release in shape.releases:
        check_reads(java_hudi(release), shape, path, models, model.updates)
        for _ in range(java_consistency_checks(java_hudi(release), path, tmp_path)):
            CHECKS.count(release, shape)

    # Java Hudi writes the first batch with the same options: the same keys, partitions and rows, and the same
    # hoodie.properties (but the values of instants and the creation schema's spelling).
    writer = java_hudi(shape.releases[-1] if shape.version != 6 else "0.15.0")
    theirs = tmp_path / "theirs"
    operation, first = written[0]
    writer.write(theirs, first, {**opts, "hoodie.datasource.write.operation": operation})
    columns = [*DATA, "_hoodie_partition_path"] + ([] if shape.key == "keyless" else ["_hoodie_record_key"])
    key = "id" if shape.key == "keyless" else "_hoodie_record_key"
    assert_same_table(HudiTable.load(str(theirs)).read_snapshot().select(columns),
                      HudiTable.load(str(path)).read_snapshot(as_of=engine.timeline.completed_commits()[0]
                                                              .timestamp).select(columns),
                      f"{shape.id}: the first batch as Java Hudi {writer.hudi} writes it", key=key)
    ours_props, java_props = _properties(path), _properties(theirs)
    differ = {k: (ours_props.get(k), java_props.get(k)) for k in sorted(set(ours_props) | set(java_props))
              if ours_props.get(k) != java_props.get(k)}
    unexplained = {k: v for k, v in differ.items() if k not in PROPERTY_DIFFERENCES or not PROPERTY_DIFFERENCES[k](*v)}
    assert unexplained == {}, \
        f"{shape.id}: hoodie.properties differ from Java Hudi {writer.hudi}'s df.write (ours, Java): {unexplained}"
