"""Record payloads: the rule that picks, or combines, two versions of a record key (FORMAT.md, Merging).

Java Hudi expresses these as classes with `preCombine` (two incoming / log records) and
`combineAndGetUpdateValue` (an incoming record against the stored one). This engine applies the same rules a
column at a time (see `merge.py`), so a payload here is a description of its rule, not code per record.
"""
from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from hudi_engine.errors import HudiError

_PKG = "org.apache.hudi.common.model."


class Combine(enum.Enum):
    """How an incoming (log) record meets the stored (base) record."""

    OVERWRITE = "overwrite"  # the incoming record always wins
    ORDERED = "ordered"  # the stored record stays if its ordering value is strictly greater
    COALESCE = "coalesce"  # the incoming record wins field by field; its null fields keep the stored value
    ORDERED_COALESCE = "ordered_coalesce"  # the greater ordering value wins field by field, nulls filled from the other
    CUSTOM = "custom"  # a user's Python payload (`RecordPayload`)


@runtime_checkable
class RecordPayload(Protocol):
    """A user's own payload, named by its dotted Python path in `hoodie.datasource.write.payload.class`.

    Both methods are vectorized: the two tables have the same columns (the table's, meta columns included) and
    row i of each is the same record key. Return a table of those columns with one row per key: the record to
    keep. A row whose `_hoodie_is_deleted` is true deletes the key (add that boolean column if the table has
    none). Deletes from delete blocks and the `delete` operation always win, as Hudi's natural order.

        class KeepMaxAmount:
            def pre_combine(self, older: pa.Table, newer: pa.Table) -> pa.Table:   # two incoming versions
                ...
            def combine(self, stored: pa.Table, incoming: pa.Table) -> pa.Table:   # incoming meets stored
                ...

    The class is instantiated with no arguments in every process that merges (Spark tasks included), so its
    module must be importable there. Only this engine knows it: Java Hudi and hudi-rs cannot merge a MOR table
    with a Python payload (COW tables are merged at write time and read by anyone).
    """

    def pre_combine(self, older: pa.Table, newer: pa.Table) -> pa.Table: ...

    def combine(self, stored: pa.Table, incoming: pa.Table) -> pa.Table: ...


@dataclass(frozen=True, slots=True)
class Payload:
    class_name: str
    combine: Combine
    # preCombine of two log / incoming records: every built-in keeps the greater ordering value (ties: the later);
    # PartialUpdateAvroPayload then fills the winner's null fields from the loser.
    precombine_coalesce: bool = False
    custom: Any = None  # the RecordPayload instance of a user's payload

    @property
    def short_name(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]


OVERWRITE_WITH_LATEST = Payload(_PKG + "OverwriteWithLatestAvroPayload", Combine.OVERWRITE)
DEFAULT_RECORD = Payload(_PKG + "DefaultHoodieRecordPayload", Combine.ORDERED)
EVENT_TIME = Payload(_PKG + "EventTimeAvroPayload", Combine.ORDERED)
OVERWRITE_NON_DEFAULTS = Payload(_PKG + "OverwriteNonDefaultsWithLatestAvroPayload", Combine.COALESCE)
PARTIAL_UPDATE = Payload(_PKG + "PartialUpdateAvroPayload", Combine.ORDERED_COALESCE, precombine_coalesce=True)

BUILTIN_PAYLOADS: dict[str, Payload] = {
    p.class_name: p
    for p in (OVERWRITE_WITH_LATEST, DEFAULT_RECORD, EVENT_TIME, OVERWRITE_NON_DEFAULTS, PARTIAL_UPDATE)
}

# hoodie.record.merge.mode -> the payload whose rule it is: a 1.x table or writer may name a mode and no payload class
# (Hudi 1.x: HoodieTableConfig.inferCorrectMergingBehavior).
MERGE_MODE_PAYLOADS: dict[str, str] = {"COMMIT_TIME_ORDERING": OVERWRITE_WITH_LATEST.class_name,
                                       "EVENT_TIME_ORDERING": DEFAULT_RECORD.class_name}


def builtin_class_name(name: str) -> str:
    """The full Java class name of a built-in payload given short or full; any other name unchanged."""
    return next((p.class_name for p in BUILTIN_PAYLOADS.values() if name in (p.class_name, p.short_name)), name)


def payload_for(name: str | None) -> Payload:
    """The payload for a full or short Java class name, or a Python class's dotted path; None: Hudi's default."""
    if not name:
        return OVERWRITE_WITH_LATEST
    for p in BUILTIN_PAYLOADS.values():
        if name in (p.class_name, p.short_name):
            return p
    accepted = (", ".join(p.short_name for p in BUILTIN_PAYLOADS.values())
                + " (short or full org.apache.hudi.common.model.* name), or a Python class's dotted path")
    module_name, _, class_name = name.rpartition(".")
    if not module_name or name.startswith("org.apache.hudi."):
        raise HudiError(f"unknown payload class {name!r}: expected one of {accepted}")
    try:
        obj = getattr(importlib.import_module(module_name), class_name)
        if isinstance(obj, Payload):  # a dotted path to one of the engine's own payload objects
            return obj
        instance = obj()
    except Exception as e:  # noqa: BLE001 - any import or construction failure is reported the same way
        raise HudiError(f"payload class {name!r}: cannot import and instantiate it as a Python class ({e!r}); "
                        f"expected one of {accepted}") from None
    if not isinstance(instance, RecordPayload):
        raise HudiError(f"payload class {name!r} has no pre_combine(older, newer) and combine(stored, incoming) "
                        "methods (see hudi_engine.payload.RecordPayload)")
    return Payload(name, Combine.CUSTOM, custom=instance)
