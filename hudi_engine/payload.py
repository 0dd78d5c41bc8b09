"""Record payloads: the rule that picks, or combines, two versions of a record key (format spec §10).

Java Hudi expresses these as classes with `preCombine` (two incoming / log records) and
`combineAndGetUpdateValue` (an incoming record against the stored one). This engine applies the same rules a
column at a time (see `merge.py`), so a payload here is a description of its rule, not code per record.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from hudi_engine.errors import HudiError

_PKG = "org.apache.hudi.common.model."


class Combine(enum.Enum):
    """How an incoming (log) record meets the stored (base) record."""

    OVERWRITE = "overwrite"  # the incoming record always wins
    ORDERED = "ordered"  # the stored record stays if its ordering value is strictly greater
    COALESCE = "coalesce"  # the incoming record wins field by field; its null fields keep the stored value
    ORDERED_COALESCE = "ordered_coalesce"  # the greater ordering value wins field by field, nulls filled from the other


@dataclass(frozen=True, slots=True)
class Payload:
    class_name: str
    combine: Combine
    # preCombine of two log / incoming records: every built-in keeps the greater ordering value (ties: the later);
    # PartialUpdateAvroPayload then fills the winner's null fields from the loser.
    precombine_coalesce: bool = False

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


def payload_for(name: str | None) -> Payload:
    """The payload for a full or short Java class name; None means Hudi's default."""
    if not name:
        return OVERWRITE_WITH_LATEST
    for p in BUILTIN_PAYLOADS.values():
        if name in (p.class_name, p.short_name):
            return p
    raise HudiError(
        f"unknown payload class {name!r}: expected one of "
        + ", ".join(p.short_name for p in BUILTIN_PAYLOADS.values())
        + " (short or full org.apache.hudi.common.model.* name)"
    )
