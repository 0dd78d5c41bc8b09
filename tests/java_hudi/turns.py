"""Turn-taking on one table (issue 36): Java Hudi and the engine take seeded random turns at writes, table
services, savepoints and restores (issue 38), and after every turn both read the table (snapshot, and incremental since the turn before), each compared
with a model of the rows kept here.

`Sequence(shape, seed, java, path).run(steps)` plays one sequence; a failure names the shape, the seed and every
step so far, and `TURNS_SEED=<seed>` replays it (tests/java_hudi/test_turn_taking.py)."""
from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from metadata_tables import assert_metadata_matches

from hudi_engine import HudiTable
from hudi_engine.location import TableLocation
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant
from java_hudi.client import JavaHudi
from java_hudi.compare import assert_same_table

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
SCHEMA = pa.schema([("id", pa.string()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.float64()),
                    ("s", pa.string())])
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
KEYS = [f"k{i:02d}" for i in range(24)]  # tiny: two partitions of twelve keys
WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
RETAIN = 2  # commits both cleaners retain, so that cleaning deletes files within a short sequence


def partition(key: str) -> str:
    return f"p{int(key[1:]) % 2}"


@dataclass(frozen=True)
class Shape:
    """One table configuration: the Java release, table type, the version Java writes (6 pinned on 1.2.0, or its
    default), Java's index, who creates the table and whether Java 1.2.0 upgrades a version-6 table the engine
    created."""

    name: str
    hudi: str
    table_type: str
    version: int
    index: str = "default"  # Java's: its default, "record" (the metadata table's record index) or "bucket"
    creator: str = "java"
    upgrade: bool = False

    @property
    def mor(self) -> bool:
        return self.table_type == MOR

    @property
    def pinned(self) -> bool:
        return self.hudi != "0.15.0" and self.version == 6 and not self.upgrade

    def java_options(self) -> dict[str, str]:
        """What a user gives Java Hudi's datasource: keys, the table type, the index; the metadata table and
        everything else at their defaults."""
        opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
                "hoodie.datasource.write.table.type": self.table_type}
        if self.pinned:
            opts.update({"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "false"})
        if self.index == "record":
            opts.update({"hoodie.metadata.record.index.enable": "true", "hoodie.index.type": "RECORD_INDEX"})
        elif self.index == "bucket":
            opts.update({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"})
        return opts

    def engine_options(self, creating: bool) -> dict[str, str]:
        """The engine's: the same keys; the table's bucket index honoured (it is a write setting, not a table
        property, so every writer must be given it), the record index used as Java uses it; the version only when
        it creates the table."""
        opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
                "hoodie.datasource.write.table.type": self.table_type}
        if creating:
            opts["hoodie.write.table.version"] = "6" if self.upgrade else str(self.version)
        if self.index == "bucket":
            opts.update({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"})
        if self.pinned:  # Hudi 1.2's procedures build column stats on this version-6 table, which the engine keeps on
            # versions 8 and 9 only and refuses to leave stale: its turns delete the metadata table, as its error
            # says (and so cannot tag with its record index)
            opts["hoodie.metadata.enable"] = "false"
        elif self.index == "record":  # the engine tags with the record index too (and keeps it)
            opts["hoodie.index.type"] = "RECORD_INDEX"
        return opts


@dataclass
class Step:
    actor: str  # "java" or "engine"
    kind: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.actor} {self.kind}{' ' + self.detail if self.detail else ''}"


@dataclass
class Sequence:
    shape: Shape
    seed: int
    java: JavaHudi
    path: Path
    model: dict[str, dict] = field(default_factory=dict)  # id -> row (SCHEMA) and "_at": the commit that wrote it
    after: dict[str, dict[str, dict]] = field(default_factory=dict)  # completed commit -> the model it left
    before: dict[str, dict[str, dict]] = field(default_factory=dict)  # write commit -> the model before it
    engine_writes: set[str] = field(default_factory=set)
    savepoints: list[str] = field(default_factory=list)
    restorable: set[str] = field(default_factory=set)  # savepoints Hudi 0.15.0 can restore to (its metadata table)
    steps: list[Step] = field(default_factory=list)
    registered: str | None = None  # the table's name in Java's catalog, for the procedures that take one
    ts: int = 0
    seconds: Counter[str] = field(default_factory=Counter)  # where the time went: step kinds and the reads
    metadata_checked: Counter[str] = field(default_factory=Counter)  # metadata partition -> entries checked

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # -- what a failure names

    def where(self) -> str:
        listed = "\n".join(f"  {n:2d}. {s}" for n, s in enumerate(self.steps))
        return (f"turn-taking {self.shape.name} seed {self.seed} (replay: TURNS_SEED={self.seed}), Hudi "
                f"{self.shape.hudi}, table {self.path}; steps:\n{listed}")

    # -- the table as both see it

    def table(self) -> HudiTable:
        return HudiTable.load(str(self.path))

    def bound(self, table: HudiTable, instant: Instant) -> str:
        """An incremental bound naming `instant`: its completion time in timeline layout 2, else its requested
        time (as both engines take them)."""
        if table.config.version >= 8:
            assert instant.completion_time is not None
            return instant.completion_time
        return instant.timestamp

    def rows(self, since: set[str] | None = None) -> pa.Table:
        rows = [r for r in self.model.values() if since is None or r["_at"] in since]
        return pa.Table.from_pylist(sorted(({k: r[k] for k in SCHEMA.names} for r in rows), key=lambda r: r["id"]),
                                    SCHEMA)

    # -- batches

    def batch(self, keys: list[str], writer: str) -> pa.Table:
        self.ts += 1
        return pa.Table.from_pylist([{"id": k, "p": partition(k), "ts": self.ts,
                                      "v": round(self.rng.uniform(0, 100), 2), "s": f"{writer}-{self.ts}"}
                                     for k in sorted(keys)], SCHEMA)

    def some_keys(self, pool: list[str], low: int, high: int) -> list[str]:
        return self.rng.sample(pool, min(len(pool), self.rng.randint(low, high)))

    # -- one step: the write or service, then the model

    def write(self, actor: str, operation: str, rows: pa.Table, creating: bool = False) -> None:
        if actor == "java":
            opts = {**self.shape.java_options(), "hoodie.datasource.write.operation": operation}
            self.java.write(self.path, rows, opts, mode="overwrite" if creating else "append")
        else:
            opts = {**self.shape.engine_options(creating), "hoodie.datasource.write.operation": operation}
            if creating:
                self.engine_writes.add(_create(str(self.path), rows, opts))
            else:
                self.engine_writes.add(HudiTable.load(str(self.path)).write(rows, opts).instant_time)

    def play(self, step: Step) -> Callable[[str], None] | None:
        """Run `step`; answer how the model changes once its commit is known (None: no rows change)."""
        actor = step.actor
        if step.kind in ("create", "upsert"):
            keys = self.some_keys(KEYS, 4, 10) if step.kind == "upsert" else self.some_keys(KEYS, 10, 16)
            rows = self.batch(keys, actor)
            step.detail = ",".join(keys)
            self.write(actor, "upsert", rows, creating=step.kind == "create")
            return lambda commit: self.model.update({r["id"]: {**r, "_at": commit} for r in rows.to_pylist()})
        if step.kind == "delete":
            keys = self.some_keys(sorted(self.model), 1, 4)
            step.detail = ",".join(keys)
            self.write(actor, "delete", self.batch(keys, actor))

            def delete(commit: str) -> None:
                for k in keys:
                    del self.model[k]
            return delete
        if step.kind == "insert_overwrite":
            part = self.rng.choice(["p0", "p1"])
            keys = self.some_keys([k for k in KEYS if partition(k) == part], 3, 8)
            rows = self.batch(keys, actor)
            step.detail = f"{part}: {','.join(keys)}"
            self.write(actor, "insert_overwrite", rows)

            def overwrite(commit: str) -> None:
                self.model = {k: r for k, r in self.model.items() if r["p"] != part}
                self.model.update({r["id"]: {**r, "_at": commit} for r in rows.to_pylist()})
            return overwrite
        if step.kind == "compaction":
            if actor == "java":
                self.call(f"run_compaction(op => 'scheduleandexecute', path => '{self.path}')")
            else:
                self.table().compact(options=self.shape.engine_options(False))
            return None
        if step.kind == "clustering":  # the engine along a drawn layout, sorted by v and id; Java unsorted
            if actor == "java":
                self.call(f"run_clustering(path => '{self.path}')")
            else:
                layout = self.rng.choice(["linear", "z-order", "hilbert"])
                step.detail = layout
                self.table().cluster(options={**self.shape.engine_options(False),
                                              "hoodie.clustering.plan.strategy.sort.columns": "v,id",
                                              "hoodie.layout.optimize.strategy": layout})
            return None
        if step.kind == "clean":
            if actor == "java":
                self.call(f"run_clean(table => '{self.catalog_name()}', retain_commits => {RETAIN})")
            else:
                self.table().clean(options={**self.shape.engine_options(False),
                                            "hoodie.cleaner.commits.retained": str(RETAIN)})
            return None
        if step.kind == "rollback":
            latest = self.latest_commit()
            assert latest is not None
            step.detail = latest.timestamp
            if actor == "java":
                self.call(f"rollback_to_instant(table => '{self.catalog_name()}', "
                              f"instant_time => '{latest.timestamp}')")
            else:
                self.table().rollback(latest.timestamp)
            self.model = dict(self.before[latest.timestamp])
            return None
        if step.kind == "savepoint":
            latest = self.latest_commit()
            assert latest is not None
            step.detail = latest.timestamp
            if actor == "java":
                self.call(f"create_savepoint(table => '{self.catalog_name()}', commit_time => "
                          f"'{latest.timestamp}')")
            else:
                self.table().savepoint(latest.timestamp, user="turns")
            self.savepoints.append(latest.timestamp)
            if (self.path / ".hoodie" / "metadata").exists():
                self.restorable.add(latest.timestamp)
            return None
        if step.kind == "restore":
            savepoint = self.savepoints[-1]
            step.detail = savepoint
            if actor == "java":
                self.call(f"rollback_to_savepoint(table => '{self.catalog_name()}', instant_time => "
                          f"'{savepoint}')")
            else:
                self.table().restore(savepoint)
            self.model = dict(self.after[savepoint])
            return None
        raise AssertionError(f"unknown step {step}")

    def call(self, procedure: str) -> None:
        """A Hudi procedure. Procedures take no write options: a pinned version-6 table needs the pin in the
        session's conf (Hudi merges its `hoodie.*` keys into the procedure's write config), else Hudi 1.2.0
        upgrades the table; unset afterwards, as the oracle is shared by the session's other tests."""
        pin = {k: v for k, v in self.shape.java_options().items() if k.startswith("hoodie.write.")}
        for key, value in pin.items():
            self.java.sql(f"SET {key}={value}")
        try:
            self.java.sql(f"CALL {procedure}")
        finally:
            for key in pin:
                self.java.sql(f"RESET {key}")

    def catalog_name(self) -> str:
        """Hudi's clean, rollback and savepoint procedures take a catalog table: registered once, at first need."""
        if self.registered is None:
            self.registered = f"turns_{self.shape.name.replace('-', '_').replace('.', '')}_{self.seed}"
            self.java.sql(f"DROP TABLE IF EXISTS {self.registered}")  # a replay in the same session
            self.java.sql(f"CREATE TABLE {self.registered} USING hudi LOCATION '{self.path}'")
        return self.registered

    def latest_commit(self) -> Instant | None:
        return self.table().timeline.completed_commits().last()

    # -- the generator

    def choose(self) -> Step:
        """The next step: an actor, then a kind its state allows (as Hudi allows it)."""
        actor = self.rng.choice(["java", "engine"])
        table = self.table()
        timeline = table.timeline
        latest = timeline.completed_commits().last()
        pending = timeline.pending()
        kinds: dict[str, int] = {"upsert": 5, "insert_overwrite": 1}
        if self.model:
            kinds["delete"] = 2
        if self.shape.mor:
            kinds["compaction"] = 2
        kinds["clean"] = 1
        # Rollback of the latest completed write only (Hudi refuses one with later commits, and so does the engine),
        # never of a savepointed commit (both refuse), nor of a compaction or clustering: they change no rows.
        rollback_ok = (latest is not None and latest.action in WRITES and latest.timestamp in self.before
                       and latest.timestamp not in self.savepoints and not pending
                       and not _is_clustering(table, latest))
        if actor == "engine":
            if rollback_ok and latest is not None and latest.timestamp in self.engine_writes:
                kinds["rollback"] = 1  # the engine rolls back its own last commit
            if self.shape.index != "bucket":  # refused with the bucket index, as Hudi refuses it
                kinds["clustering"] = 2
        else:
            # Hudi 1.2.0's rollback_to_instant on a version-6 table it was pinned to fails (it lists the timeline
            # as layout 2: "File .hoodie/timeline does not exist", also with the pin in the session's conf); its
            # rollback_to_savepoint works there, and a rollback the engine does.
            # Java's rollback may first compact the metadata table the engine kept, then refuses to roll back a
            # commit that compaction holds (`_metadata_compaction_due`).
            # The same holds for the upgrade shape's version-6 table before Java's first write upgrades it.
            java_1x_on_v6 = self.shape.hudi != "0.15.0" and table.config.version == 6
            if rollback_ok and not java_1x_on_v6 and not _metadata_compaction_due(self.path):
                kinds["rollback"] = 1
            # Hudi's simple bucket index refuses clustering ("Clustering is not supported for bucket index").
            if self.shape.index != "bucket":
                kinds["clustering"] = 2
        # Savepoints and restores by either writer (issue 38): the engine restores to Java's savepoints and Java to
        # the engine's. Hudi refuses a savepoint with a pending compaction on MOR (SavepointActionExecutor), and so
        # does the engine; nor a second savepoint of one commit (its savepoint file exists).
        if latest is not None and latest.timestamp in self.after and not timeline.pending_compactions() \
                and latest.timestamp not in self.savepoints:
            kinds["savepoint"] = 1
        # Java restores only to a savepoint its metadata table holds. After an engine turn disabled it, Java rebuilds
        # it newer than the savepoint: Hudi 0.15.0 refuses the restore ("Can't restore to ... since there is no base
        # file in MDT lesser than the commit to restore to"), and Hudi 1.2.0 fails restoring its metadata table
        # ("Unable to find completion time for instant", found by issue 38's test_savepoint_restore). The engine
        # restores there.
        restorable = actor == "engine" or (self.savepoints and self.savepoints[-1] in self.restorable)
        if self.savepoints and self.savepoints[-1] in self.after and restorable and \
                any(i.timestamp == self.savepoints[-1] for i in timeline.completed_commits()):
            kinds["restore"] = 3  # rare otherwise: it needs a savepoint of a commit still there
        kind = self.rng.choices(list(kinds), weights=list(kinds.values()))[0]
        return Step(actor, kind)

    # -- the checks after every step

    def check(self, prior: set[str]) -> None:
        table = self.table()
        where = self.where()
        started = time.monotonic()
        ours = table.read_snapshot()
        java = self.java.snapshot(self.path)
        self.seconds["snapshot reads"] += time.monotonic() - started
        for who, got in (("the engine", ours), (f"Java {self.java.hudi}", java)):
            keys = got.column("_hoodie_record_key").to_pylist()
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            assert not dupes, f"{who}'s snapshot has record keys twice: {dupes}\n{where}"
        assert_same_table(_data(ours), self.rows(), f"the engine's snapshot against the model\n{where}", key="id")
        assert_same_table(ours, java, f"Java {self.java.hudi}'s snapshot against the engine's\n{where}")

        commits = list(table.timeline.completed_commits())
        kept = [self.bound(table, i) for i in commits if i.timestamp in prior]
        begin = max(kept, default="000")
        new = {i.timestamp for i in commits if i.timestamp not in prior}
        started = time.monotonic()
        ours = table.read_incremental(begin)
        self.seconds["incremental reads"] += time.monotonic() - started
        assert_same_table(_data(ours), self.rows(since=new),
                          f"the engine's incremental read since {begin} against the model\n{where}", key="id")
        started = time.monotonic()
        java = self.java.incremental(self.path, begin)
        self.seconds["incremental reads"] += time.monotonic() - started
        assert_same_table(ours, java, f"Java {self.java.hudi}'s incremental read since {begin}\n{where}")

        # The metadata table against storage, whoever wrote last (issue 37: Hudi's validator's checks, as far as the
        # engine keeps the partitions): its listing, record index, stats and bloom filters.
        started = time.monotonic()
        for partition, n in assert_metadata_matches(self.path).items():
            self.metadata_checked[partition] += n
        self.seconds["metadata checks"] += time.monotonic() - started

    # -- a whole sequence

    def run(self, steps: int, script: list[Step] | None = None) -> None:
        """Play `steps` steps the generator draws, or the steps of `script` in order."""
        for n in range(steps if script is None else len(script)):
            if script is not None:
                step = script[n]
            else:
                step = Step(self.shape.creator, "create") if n == 0 else self.choose()
            self.steps.append(step)
            if step.actor == "engine":
                self.restorable.clear()  # the engine may disable it (one it cannot keep): Java rebuilds it newer
            prior = {i.timestamp for i in self.table().timeline.completed_commits()} if n else set()
            before = dict(self.model)
            try:
                started = time.monotonic()
                change = self.play(step)
                self.seconds[f"{step.actor} {step.kind}"] += time.monotonic() - started
                new = sorted(i.timestamp for i in self.table().timeline.completed_commits()
                             if i.timestamp not in prior)
                commit = None
                if change is not None:  # the write's own commit: the engine names it; Java's is its newest
                    commit = ([c for c in new if c in self.engine_writes] or new)[-1] if new else None
                    assert commit is not None, f"{step}: no commit"
                    self.before[commit] = before
                    change(commit)
                for c in new:  # a service run before the write (a pending compaction) left the rows as they were
                    self.after[c] = before if commit is not None and c < commit else dict(self.model)
                self.check(prior)
            except AssertionError as e:
                if self.where() in str(e):
                    raise
                raise AssertionError(f"{e}\n{self.where()}") from e
            except Exception as e:
                raise AssertionError(f"{type(e).__name__}: {e}\n{self.where()}") from e


def _create(path: str, rows: pa.Table, options: dict[str, str]) -> str:
    from hudi_engine.write_pipeline import write_table

    return write_table(rows, path, options).instant_time


def _metadata_compaction_due(path: Path) -> bool:
    """Whether the table's metadata table is near a compaction: a Java writer (its rollback too) compacts it when it
    starts once it holds `hoodie.metadata.compact.max.delta.commits` (10) delta commits since its last compaction, and
    then refuses to roll back a commit that compaction holds ("Commit being rolled back ... is earlier than the
    latest compaction": Hudi wants a restore there). Before, the engine's table services disabled the metadata table
    and Java rebuilt it, so it seldom grew that far; kept now, it does. A margin of two for the rollback's own."""
    mdt = path / ".hoodie" / "metadata"
    if not (mdt / ".hoodie" / "hoodie.properties").exists():
        return False
    timeline = Timeline.load(TableLocation.of(str(mdt)))
    last = timeline.filter_by([Action.COMMIT]).completed().last()
    since = [i for i in timeline.filter_by([Action.DELTA_COMMIT]).completed().instants
             if last is None or i.timestamp > last.timestamp]
    # The engine compacts the metadata table too (before its writes and services): a compaction at `<T>001` (0.15)
    # or after T (1.x) holds the data table's latest commit T, which Java's rollback would then refuse.
    latest = Timeline.load(TableLocation.of(str(path))).completed_commits().last()
    held = last is not None and latest is not None and last.timestamp[:17] >= latest.timestamp
    return held or len(since) >= 8


def _is_clustering(table: HudiTable, instant: Instant) -> bool:
    if instant.action is not Action.REPLACE_COMMIT:
        return False
    return table.commit_metadata(instant).operation_type == "CLUSTER"


def _data(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in META if c in table.column_names])
