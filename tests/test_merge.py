"""merge_records: payload rules applied a column at a time, against a per-record model of Java's semantics."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from hudi_engine.errors import HudiError
from hudi_engine.merge import DeleteBatch, merge_records
from hudi_engine.payload import payload_for

SCHEMA = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()),
                    ("ts", pa.int64()), ("a", pa.string()), ("b", pa.int64())])


def table(rows):
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA)


def key_of(t):
    return t.column("_hoodie_record_key")


def merged(base, batches, payload, ordering="ts"):
    out = merge_records(table(base), batches, key_of=key_of, ordering_field=ordering, payload=payload_for(payload)).records
    return sorted((r["_hoodie_record_key"], r["ts"], r["a"], r["b"]) for r in out.to_pylist())


def test_overwrite_with_latest_log_always_wins_over_base_and_greater_ordering_wins_between_logs():
    base = [("c1", "k1", 5, "base", 1)]
    logs = [table([("c2", "k1", 3, "low", 2), ("c2", "k2", 9, "x", 0)]), table([("c3", "k2", 4, "y", 0)])]
    # base vs log: the log record replaces the base one although its ts is lower (Java's payload)
    # log vs log: k2 keeps ts 9 (greater ordering value), not the later ts 4
    assert merged(base, logs, None) == [("k1", 3, "low", 2), ("k2", 9, "x", 0)]


def test_default_payload_keeps_base_with_greater_ordering_value():
    base = [("c1", "k1", 5, "base", 1), ("c1", "k2", 1, "base", 1)]
    logs = [table([("c2", "k1", 3, "low", 2), ("c2", "k2", 3, "high", 2)])]
    assert merged(base, logs, "DefaultHoodieRecordPayload") == [("k1", 5, "base", 1), ("k2", 3, "high", 2)]


def test_partial_update_fills_nulls_from_the_other_record():
    base = [("c1", "k1", 1, "base-a", 10)]
    logs = [table([("c2", "k1", 2, None, 20)]), table([("c3", "k1", 3, "new-a", None)])]
    assert merged(base, logs, "PartialUpdateAvroPayload") == [("k1", 3, "new-a", 20)]


def test_overwrite_non_defaults_keeps_stored_values_for_nulls():
    base = [("c1", "k1", 1, "base-a", 10)]
    logs = [table([("c2", "k1", 0, None, 20)])]
    assert merged(base, logs, "OverwriteNonDefaultsWithLatestAvroPayload") == [("k1", 0, "base-a", 20)]


def test_deletes_natural_order_and_ordered():
    base = [("c1", "k1", 1, "a", 1), ("c1", "k2", 1, "a", 1), ("c1", "k3", 1, "a", 1)]
    logs = [
        table([("c2", "k2", 9, "b", 2)]),
        DeleteBatch(pa.array(["k1", "k2"]), pa.array([None, 5], pa.int64())),  # k2's delete (5) loses to ts 9
        table([("c3", "k3", 2, "c", 3)]),
        DeleteBatch(pa.array(["k3"]), None),  # natural order: wins
        table([("c4", "k3", 1, "again", 4)]),  # after a delete, a new record comes back whatever its ts
    ]
    assert merged(base, logs, None) == [("k2", 9, "b", 2), ("k3", 1, "again", 4)]


def _model(base, events, payload):
    """A per-record fold written from the Java rules, for OverwriteWithLatest / Default payloads."""
    state = {}
    for kind, row in events:
        k = row[1]
        old = state.get(k)
        if kind == "data":
            if old is None or old == "DEL" or not (old[2] > row[2]):
                state[k] = row
        else:
            comparable = row[2] is not None
            if not (old not in (None, "DEL") and comparable and old[2] > row[2]):
                state[k] = "DEL"
    out = {}
    for b in base:
        s = state.pop(b[1], None)
        if s is None:
            out[b[1]] = b
        elif s == "DEL":
            continue
        elif payload in ("DefaultHoodieRecordPayload", "EventTimeAvroPayload") and b[2] > s[2]:
            out[b[1]] = b
        else:
            out[b[1]] = s
    out.update({k: v for k, v in state.items() if v != "DEL"})
    return sorted((v[1], v[2], v[3], v[4]) for v in out.values())


@pytest.mark.parametrize("payload", [None, "DefaultHoodieRecordPayload", "EventTimeAvroPayload"])
def test_random_sequences_match_the_per_record_model(payload):
    rnd = random.Random(payload or "x")
    for trial in range(60):
        base = [("c0", f"k{i}", rnd.randint(0, 5), "base", i) for i in range(8)]
        events, batches = [], []
        for blk in range(rnd.randint(1, 4)):
            if rnd.random() < 0.3:
                ks = rnd.sample(range(12), 3)
                ords = [rnd.choice([None, rnd.randint(0, 9)]) for _ in ks]
                batches.append(DeleteBatch(pa.array([f"k{k}" for k in ks]), pa.array(ords, pa.int64())))
                events += [("del", (None, f"k{k}", o)) for k, o in zip(ks, ords)]
            else:
                rows = [(f"c{blk}", f"k{rnd.randint(0, 11)}", rnd.randint(0, 9), f"v{blk}", rnd.randint(0, 99))
                        for _ in range(rnd.randint(1, 6))]
                batches.append(table(rows))
                events += [("data", r) for r in rows]
        assert merged(base, batches, payload) == _model(base, events, payload), f"trial {trial}"


class KeepMaxB:
    """A user payload for the test: the version with the larger `b` wins; an incoming b < 0 deletes."""

    def pre_combine(self, older, newer):
        return self.combine(older, newer)

    def combine(self, stored, incoming):
        import pyarrow.compute as pc

        take_new = pc.greater_equal(incoming.column("b"), stored.column("b"))
        cols = {c: pc.if_else(take_new, incoming.column(c), stored.column(c)) for c in stored.column_names}
        cols["_hoodie_is_deleted"] = pc.less(incoming.column("b"), 0)
        return pa.table(cols)


def test_user_payload_by_dotted_path():
    base = [("c1", "k1", 1, "base", 10), ("c1", "k2", 1, "base", 10), ("c1", "k3", 1, "base", 10)]
    logs = [table([("c2", "k1", 2, "x", 5), ("c2", "k2", 2, "y", 50), ("c2", "k4", 2, "z", 1),
                   ("c2", "k4", 3, "zz", 7)]),
            table([("c3", "k3", 3, "gone", -1)])]
    assert merged(base, logs, "test_merge.KeepMaxB") == [("k1", 1, "base", 10), ("k2", 2, "y", 50),
                                                          ("k4", 3, "zz", 7)]


def test_unknown_payload_names_what_is_accepted():
    with pytest.raises(HudiError, match="PartialUpdateAvroPayload"):
        payload_for("NoSuchPayload")
    with pytest.raises(HudiError, match="cannot import"):
        payload_for("no_such_module.Payload")
