"""The CDC query (`HudiTable.read_changes`, `hudi_engine.cdc_query`): random operation sequences on CDC tables of
each logging mode, COW and MOR, with compaction and cleaning in between; for every commit range the changes read
equal the changes an in-memory model of the table made (op, commit, before and after image of every key). Plus the
inferred cases one at a time, the struct images, and the refusals."""
from __future__ import annotations

import json
import random
import re

import pyarrow as pa
import pytest
from java_tables import CASES, unzip_feature_table
from oracle import assert_same_rows, rs_snapshot
from write.local_write import write

from hudi_engine import HudiTable
from hudi_engine.cdc_query import InferenceCase, plan_changes, to_json
from hudi_engine.errors import HudiError, UnsupportedReadError
from hudi_engine.schema import META_COLUMNS

MODES = ["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]
COLUMNS = ("id", "p", "ts", "v")


def options(mode: str | None, table_type: str, version: str = "6", **more: str) -> dict:
    """Version 6 unless asked (its messages and archive are what the tests name); the random sequences run on 9 too."""
    o = {"hoodie.table.name": "t", "hoodie.write.table.version": version, "hoodie.datasource.write.recordkey.field": "id",
         "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
         "hoodie.datasource.write.table.type": table_type, "hoodie.combine.before.insert": "true"}
    if mode is not None:
        o |= {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode}
    return o | more


def batch(rows: list[dict]) -> pa.Table:
    return pa.table({"id": pa.array([r["id"] for r in rows], pa.int64()), "p": [r["p"] for r in rows],
                     "ts": pa.array([r["ts"] for r in rows], pa.int64()), "v": [r["v"] for r in rows]})


def image(r: dict | None) -> tuple | None:
    return None if r is None else tuple(r[c] for c in COLUMNS)


def read(table: HudiTable, begin: str, end: str | None = None) -> list[tuple]:
    """The changes as (commit, op, before, after) tuples, images parsed from their JSON text, of the commits after
    `begin` up to `end` (commits named by their instant times: on version 8+ the range is of their completion times)."""
    done = table.timeline.completion_times()
    out = []
    for row in table.read_changes(done.get(begin, begin), None if end is None else done.get(end, end)).to_pylist():
        before = None if row["before"] is None else json.loads(row["before"])
        after = None if row["after"] is None else json.loads(row["after"])
        out.append((row["ts_ms"], row["op"], image(before), image(after)))
    return sorted(out, key=repr)


class Model:
    """The table as a dict, and the changes of every commit."""

    def __init__(self) -> None:
        self.rows: dict[int, dict] = {}
        self.changes: dict[str, list[tuple]] = {}

    def apply(self, instant: str, op: str, rows: list[dict]) -> None:
        latest: dict[int, dict] = {}
        for r in rows:  # the batch's duplicates combined by ordering value
            if r["id"] not in latest or r["ts"] > latest[r["id"]]["ts"]:
                latest[r["id"]] = r
        out = []
        for key, r in latest.items():
            stored = self.rows.get(key)
            if op == "delete":
                if stored is not None:
                    out.append((instant, "d", image(stored), None))
                    del self.rows[key]
            else:
                out.append((instant, "u" if stored is not None else "i", image(stored), image(r)))
                self.rows[key] = r
        self.changes[instant] = out

    def overwrite(self, instant: str, rows: list[dict]) -> None:
        """insert_overwrite of partitions: every stored row of them deleted, the new rows inserted."""
        partitions = {r["p"] for r in rows}
        out = [(instant, "d", image(r), None) for r in self.rows.values() if r["p"] in partitions]
        self.rows = {k: r for k, r in self.rows.items() if r["p"] not in partitions}
        for r in rows:
            out.append((instant, "i", None, image(r)))
            self.rows[r["id"]] = r
        self.changes[instant] = out

    def between(self, begin: str, end: str) -> list[tuple]:
        return sorted((c for i, cs in self.changes.items() if begin < i <= end for c in cs), key=repr)


@pytest.mark.parametrize("table_type, mode, version", [
    ("COPY_ON_WRITE", "OP_KEY_ONLY", "9"), ("COPY_ON_WRITE", "DATA_BEFORE", "6"),
    ("COPY_ON_WRITE", "DATA_BEFORE_AFTER", "9"), ("MERGE_ON_READ", "OP_KEY_ONLY", "6"),
    ("MERGE_ON_READ", "DATA_BEFORE", "9"), ("MERGE_ON_READ", "DATA_BEFORE_AFTER", "6")])
def test_random_sequences_read_the_model_changes_for_every_range(tmp_path, table_type, mode, version):
    rnd = random.Random(f"{table_type}{mode}")
    path = tmp_path / "t"
    o = options(mode, table_type, version)
    model = Model()
    instants: list[str] = []
    written: set[int] = set()
    ts = 0
    for step in range(9):
        op = "upsert" if step == 0 else rnd.choice(["upsert", "upsert", "insert", "delete", "overwrite"])
        rows = []
        for i in rnd.sample(range(40), 10):
            for _ in range(rnd.choice([1, 1, 2])):
                ts += 1
                rows.append({"id": i, "p": f"p{i % 3}", "ts": ts, "v": f"v{ts}"})
        if op == "insert":  # insert does not look keys up: only keys never written (a MOR delete leaves its key
            rows = [r for r in rows if r["id"] not in written]  # in the base file, where the index finds it)
            rows = list({r["id"]: r for r in rows}.values())
        if op == "overwrite":
            rows = list({r["id"]: r for r in rows if r["p"] == "p0"}.values())
        if not rows:
            continue
        write_op = "insert_overwrite" if op == "overwrite" else op
        instant = write(path, batch(rows), dict(o, **{"hoodie.datasource.write.operation": write_op})).instant_time
        written.update(r["id"] for r in rows)
        if op == "overwrite":
            model.overwrite(instant, rows)
        else:
            model.apply(instant, op, rows)
        instants.append(instant)
        if step == 4 and table_type == "MERGE_ON_READ":
            HudiTable.load(path).compact()  # no changes of its own; later log files sit on the new base files
    table = HudiTable.load(path)
    cases = {s.case for s in plan_changes(table, "0").splits}
    expected_cases = {InferenceCase.BASE_FILE_INSERT, InferenceCase.REPLACE_COMMIT,
                      InferenceCase.LOG_FILE if table_type == "MERGE_ON_READ" else InferenceCase.AS_IS}
    assert expected_cases <= cases, cases
    bounds = ["0", *instants]
    for a, begin in enumerate(bounds):
        for end in bounds[a + 1:]:
            assert read(table, begin, end) == model.between(begin, end), f"({begin}, {end}]"
    assert sorted(image(r) for r in model.rows.values()) == sorted(
        tuple(r[c] for c in COLUMNS) for r in rs_snapshot(path).to_pylist())

    # Cleaning: ranges whose files are gone are refused, naming where readable ranges begin; those read the model.
    HudiTable.load(path).clean(options={"hoodie.cleaner.commits.retained": "2"})
    table = HudiTable.load(path)
    refused = 0
    for begin in bounds[:-1]:
        try:
            got = read(table, begin)
        except HudiError as e:
            refused += 1
            m = re.search(r"which cleaning removed .* Available: CDC queries of ranges beginning at or after (\d+)",
                          str(e))
            assert m, str(e)
            assert f"table 't' ({table.base_path})" in str(e)
            assert m.group(1) > begin
            assert read(table, m.group(1)) == model.between(m.group(1), instants[-1])
            continue
        assert got == model.between(begin, instants[-1]), f"after cleaning: ({begin}, latest]"
    assert refused, "cleaning removed files some range needs"
    assert_same_rows(HudiTable.load(path).read_snapshot(), rs_snapshot(path), "snapshot after cleaning")


def rows(ids: list[int], p: str, ts: int) -> list[dict]:
    return [{"id": i, "p": p, "ts": ts, "v": f"v{i}.{ts}"} for i in ids]


def test_a_delete_that_empties_a_file_group_reads_every_row_of_it_as_deleted(tmp_path):
    """BASE_FILE_DELETE: no CDC file (nothing written), the rows come from the base file the delete emptied."""
    path = tmp_path / "t"
    o = options("OP_KEY_ONLY", "COPY_ON_WRITE")
    first = write(path, batch(rows([1, 2], "a", 1) + rows([3], "b", 1)), o).instant_time
    gone = write(path, batch(rows([1, 2], "a", 2)), dict(o, **{"hoodie.datasource.write.operation": "delete"}))
    table = HudiTable.load(path)
    [split] = plan_changes(table, first).splits
    assert split.case is InferenceCase.BASE_FILE_DELETE and split.before is not None
    assert read(table, first) == [(gone.instant_time, "d", (1, "a", 1, "v1.1"), None),
                                  (gone.instant_time, "d", (2, "a", 1, "v2.1"), None)]


def test_struct_images_carry_the_data_columns_typed(tmp_path):
    path = tmp_path / "t"
    o = options("DATA_BEFORE_AFTER", "COPY_ON_WRITE")
    first = write(path, batch(rows([1, 2], "a", 1)), o).instant_time
    second = write(path, batch(rows([2], "a", 2)), o).instant_time
    got = HudiTable.load(path).read_changes(first, images="struct")
    image = pa.struct([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
    assert got.schema == pa.schema([("op", pa.string()), ("ts_ms", pa.string()), ("before", image), ("after", image)])
    assert got.to_pylist() == [{"op": "u", "ts_ms": second, "before": rows([2], "a", 1)[0],
                                "after": rows([2], "a", 2)[0]}]
    json_rows = HudiTable.load(path).read_changes(first).to_pylist()
    assert json_rows[0]["before"] == '{"id": 2, "p": "a", "ts": 1, "v": "v2.1"}'  # HoodieCDCUtils.recordToJson's form
    with pytest.raises(HudiError, match="CDC images 'xml': expected one of json, struct"):
        HudiTable.load(path).read_changes(first, images="xml")


@pytest.mark.parametrize("mode", MODES)
def test_every_column_type_of_a_hudi_written_table_reads_back_in_the_images(unzip_table, tmp_path, mode):
    """A real Hudi 0.14 table (decimal, date, timestamp, bytes, array, map, nested struct) with CDC turned on: the
    update's images are the rows as the snapshot reads them, in every mode."""
    import shutil

    path = tmp_path / "t"
    shutil.copytree(unzip_table("cow_v6_nonpartitioned"), path)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + f"hoodie.table.cdc.enabled=true\nhoodie.table.cdc.supplemental.logging.mode={mode}\n")
    table = HudiTable.load(str(path))
    last = table.timeline.completed_commits().last().timestamp
    data = table.read_snapshot().drop_columns(list(META_COLUMNS))
    row = data.slice(0, 1)
    changed = row.set_column(data.schema.get_field_index("name"), "name", pa.array(["Zed"]))
    up = write(path, changed, {"hoodie.table.name": table.config.name, "hoodie.datasource.write.recordkey.field": "id"})
    got = HudiTable.load(str(path)).read_changes(last, images="struct").to_pylist()
    assert got == [{"op": "u", "ts_ms": up.instant_time, "before": row.to_pylist()[0], "after": changed.to_pylist()[0]}]
    [as_json] = HudiTable.load(str(path)).read_changes(last).to_pylist()
    assert json.loads(as_json["after"])["name"] == "Zed"


def test_refusals_name_the_table_the_setting_and_what_is_available(tmp_path):
    plain = tmp_path / "plain"
    first = write(plain, batch(rows([1], "a", 1)), options(None, "COPY_ON_WRITE")).instant_time
    with pytest.raises(HudiError, match=r"table 't' \(.*plain\): a CDC query \(hoodie.datasource.query.incremental."
                                        r"format=cdc\) needs change data.*hoodie.table.cdc.enabled is not true.*"
                                        r"Available: the incremental query .*completed commits from " + first):
        HudiTable.load(plain).read_changes("0")

    # Commits written before CDC was turned on (hoodie.properties edited): the merge has no CDC file.
    merged = write(plain, batch(rows([1], "a", 2)), options(None, "COPY_ON_WRITE")).instant_time
    props = plain / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.cdc.enabled=true\n")
    third = write(plain, batch(rows([1], "a", 3)), options(None, "COPY_ON_WRITE")).instant_time
    with pytest.raises(HudiError, match=rf"needs the change data of commit {merged}, which rewrote file group a/\S+ "
                                        rf"without a CDC log file .*written before hoodie.table.cdc.enabled was set.*"
                                        rf"Available: CDC queries of ranges beginning at or after {merged}"):
        HudiTable.load(plain).read_changes("0")
    assert read(HudiTable.load(plain), merged) == [(third, "u", (1, "a", 2, "v1.2"), (1, "a", 3, "v1.3"))]

    # A mode the table was not written with; a reversed range; an instant that is no instant.
    table = HudiTable.load(plain)
    with pytest.raises(HudiError, match="asks for hoodie.table.cdc.supplemental.logging.mode=OP_KEY_ONLY, but the "
                                        "table logs its changes in mode DATA_BEFORE_AFTER.*Available: DATA_BEFORE_AFTER"):
        plan_changes(table, merged, logging_mode="OP_KEY_ONLY")
    with pytest.raises(HudiError, match=f"begin instant {third} is after the end instant {merged}"):
        table.read_changes(third, merged)
    with pytest.raises(HudiError, match="incremental begin instant 'yesterday': expected digits"):
        table.read_changes("yesterday")


def test_a_range_reaching_archived_commits_is_refused(tmp_path):
    path = tmp_path / "t"
    o = options("DATA_BEFORE_AFTER", "COPY_ON_WRITE", **{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                                          "hoodie.cleaner.commits.retained": "1",
                                                          # archival stops at the metadata table's latest compaction
                                                          "hoodie.metadata.compact.max.delta.commits": "1"})
    instants = [write(path, batch(rows([1, 2], "a", ts)), o).instant_time for ts in range(1, 6)]
    assert HudiTable.load(path).archive(options=o) is not None
    table = HudiTable.load(path)
    with pytest.raises(HudiError, match="archived"):
        table.read_changes(instants[0])
    start = table.timeline.completed_commits()[0].timestamp
    assert [op for _, op, _, _ in read(table, start)] == ["u"] * 2 * sum(1 for i in instants if i > start)


def test_a_mor_table_without_meta_fields_compares_whole_rows(tmp_path):
    """Without meta fields no commit time tells a rewritten row: LOG_FILE compares the rows' columns."""
    path = tmp_path / "t"
    o = options("DATA_BEFORE_AFTER", "MERGE_ON_READ", **{"hoodie.populate.meta.fields": "false"})
    first = write(path, batch(rows([1, 2, 3], "a", 1)), o).instant_time
    same = rows([1], "a", 1)  # written again unchanged: no change
    up = write(path, batch(same + rows([2], "a", 2)), o).instant_time
    gone = write(path, batch(rows([3], "a", 3)), dict(o, **{"hoodie.datasource.write.operation": "delete"}))
    assert read(HudiTable.load(path), first) == sorted([
        (up, "u", (2, "a", 1, "v2.1"), (2, "a", 2, "v2.2")), (gone.instant_time, "d", (3, "a", 1, "v3.1"), None)],
        key=repr)


def test_read_options_carry_the_cdc_format_and_refuse_it_outside_incremental():
    from hudi_engine.read_options import ReadOptions

    q = ReadOptions.parse({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime":
                           "1", "hoodie.datasource.query.incremental.format": "CDC", "hudi_engine.cdc.images": "struct"})
    assert q.cdc and q.cdc_images == "struct"
    assert ReadOptions.parse(q.to_options()) == q
    with pytest.raises(HudiError, match="option hoodie.datasource.query.incremental.format=cdc needs "
                                        "hoodie.datasource.query.type=incremental"):
        ReadOptions.parse({"hoodie.datasource.query.incremental.format": "cdc"})
    with pytest.raises(HudiError, match="hoodie.datasource.query.incremental.format='diff': expected one of "
                                        "latest_state, cdc"):
        ReadOptions.parse({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime":
                           "1", "hoodie.datasource.query.incremental.format": "diff"})


def test_the_scan_plan_refuses_a_cdc_query_instead_of_reading_rows(tmp_path):
    from hudi_engine.read_options import ReadOptions

    path = tmp_path / "t"
    write(path, batch(rows([1], "a", 1)), options("DATA_BEFORE_AFTER", "COPY_ON_WRITE"))
    with pytest.raises(HudiError, match="a CDC query .* reads changes, not file slices"):
        HudiTable.load(path).plan_scan(ReadOptions(query_type="incremental", begin="0", incremental_format="cdc"))


def test_json_images_print_doubles_as_java_does():
    """A double keeps its fraction in JSON (`20.0`, as Hudi's Jackson / Avro printing does; Arrow alone prints `20`),
    so a reader types it as Java Hudi's image types it (tests/java_hudi/test_same_sql.py)."""
    images = pa.array([{"price": 20.0, "n": 3, "tiny": 1e-7, "big": 1e21}, None],
                      pa.struct([("price", pa.float64()), ("n", pa.int64()), ("tiny", pa.float32()),
                                 ("big", pa.float64())]))
    first, second = to_json(images).to_pylist()
    assert first.startswith('{"price": 20.0, "n": 3, ') and second is None
    parsed = json.loads(first)
    assert isinstance(parsed["price"], float) and parsed["big"] == 1e21 and abs(parsed["tiny"] - 1e-7) < 1e-12


@pytest.mark.parametrize("case", [c for c in CASES if c.builder == "bootstrap_cdc"], ids=lambda c: c.name)
def test_a_cdc_query_over_bootstrap_skeleton_files_is_refused_by_name(case, tmp_path):
    """Java Hudi's CDC table over a METADATA_ONLY bootstrap (tests/java_tables.py): a range whose changes are read
    from skeleton base files (the bootstrap's own commit, whose rows are inserts) is refused as snapshot reads
    refuse them, naming the table, never answered with rows of nulls; planning refuses it, so the Spark sources
    (which plan on the driver) do too."""
    path, _ = unzip_feature_table(case, tmp_path)
    table = HudiTable.load(str(path))
    assert table.config.bootstrap_base_path and table.config.get("hoodie.table.cdc.enabled") == "true"
    for query in (lambda: table.plan_changes("000"), lambda: table.read_changes("000")):
        with pytest.raises(UnsupportedReadError, match="skeleton base files") as refused:
            query()
        assert case.name in str(refused.value) and str(path) in str(refused.value), refused.value


_S = pa.struct([("a", pa.int32()), ("b", pa.string())])
_EVOLVED = {"hoodie.schema.on.read.enable": "true"}


@pytest.mark.parametrize("table_type, mode, version", [
    ("COPY_ON_WRITE", "DATA_BEFORE_AFTER", "6"), ("COPY_ON_WRITE", "DATA_BEFORE", "9"),
    ("COPY_ON_WRITE", "OP_KEY_ONLY", "6"), ("MERGE_ON_READ", "DATA_BEFORE_AFTER", "9"),
    ("MERGE_ON_READ", "OP_KEY_ONLY", "6")])
def test_a_schema_evolved_table_reads_its_changes_by_column_id(tmp_path, table_type, mode, version):
    """Schema on read: a column renamed (v -> name), one widened (ts int -> long), one dropped (amount) and a struct
    member renamed (s.a -> n) after a commit. The images of commits before and after the change, from CDC log
    records written with the old schema, base files and log blocks alike, come out under the range end's names and
    types, by id; a range ending before the change reads the old names, as time travel does."""
    from hudi_engine.write_pipeline import write_table

    path = str(tmp_path / "t")
    opts = options(mode, table_type, version, **{"hoodie.datasource.write.operation": "upsert"})

    def old(ids: list[int], v: str, ts: int, p: str) -> pa.Table:
        return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids],
                         "ts": pa.array([ts] * len(ids), pa.int32()), "amount": [float(i) for i in ids],
                         "s": pa.array([{"a": i * ts, "b": v} for i in ids], _S), "p": [p] * len(ids)})

    write_table(old([1, 2, 4], "a", 1, "x"), path, opts)
    first = HudiTable.load(path).timeline.completed_commits()[-1].timestamp
    write_table(old([1, 5], "b", 2, "x"), path, opts)  # COW: a merge that logs its changes with the old schema
    second = HudiTable.load(path).timeline.completed_commits()[-1].timestamp
    table = HudiTable.load(path)
    on = {**opts, **_EVOLVED}
    table.rename_column("v", "name", options=on)
    table.alter_column_type("ts", pa.int64(), options=on)
    table.drop_columns(["amount"], options=on)
    table.rename_column("s.a", "n", options=on)
    new_s = pa.struct([("n", pa.int32()), ("b", pa.string())])
    write_table(pa.table({"id": pa.array([2, 3], pa.int64()), "name": ["c2", "c3"], "ts": pa.array([3, 3], pa.int64()),
                          "s": pa.array([{"n": 20, "b": "c"}, {"n": 30, "b": "c"}], new_s), "p": ["x", "x"]}),
                path, opts)
    third = HudiTable.load(path).timeline.completed_commits()[-1].timestamp
    table = HudiTable.load(path)
    done = table.timeline.completion_times()

    def changes(end: str | None) -> tuple[pa.Schema, set]:
        got = table.read_changes(done.get(first, first), None if end is None else done.get(end, end),
                                 images="struct")
        image_type = got.schema.field("after").type
        return pa.schema(list(image_type)), {(r["ts_ms"], r["op"], json.dumps(r["before"], sort_keys=True),
                                              json.dumps(r["after"], sort_keys=True)) for r in got.to_pylist()}

    def row(i: int, name: str, ts: int, s: dict, **amount: float) -> str:
        return json.dumps({"id": i, **({"v": name} if amount else {"name": name}), "ts": ts, **amount, "s": s,
                           "p": "x"}, sort_keys=True)

    cases = {s.case for s in table.plan_changes(done.get(first, first)).splits}
    assert InferenceCase.AS_IS in cases if table_type == "COPY_ON_WRITE" else InferenceCase.LOG_FILE in cases
    schema, got = changes(None)
    assert [(f.name, f.type) for f in schema] == [("id", pa.int64()), ("name", pa.string()), ("ts", pa.int64()),
                                                  ("s", pa.struct([("n", pa.int32()), ("b", pa.string())])),
                                                  ("p", pa.string())]
    assert got == {
        (second, "u", row(1, "a1", 1, {"n": 1, "b": "a"}), row(1, "b1", 2, {"n": 2, "b": "b"})),
        (second, "i", "null", row(5, "b5", 2, {"n": 10, "b": "b"})),
        (third, "u", row(2, "a2", 1, {"n": 2, "b": "a"}), row(2, "c2", 3, {"n": 20, "b": "c"})),
        (third, "i", "null", row(3, "c3", 3, {"n": 30, "b": "c"}))}
    # A range ending before the change: the schema of its end, as time travel reads it.
    schema, got = changes(second)
    assert schema.names == ["id", "v", "ts", "amount", "s", "p"] and schema.field("s").type == _S
    assert got == {(second, "u", row(1, "a1", 1, {"a": 1, "b": "a"}, amount=1.0),
                    row(1, "b1", 2, {"a": 2, "b": "b"}, amount=1.0)),
                   (second, "i", "null", row(5, "b5", 2, {"a": 10, "b": "b"}, amount=5.0))}
