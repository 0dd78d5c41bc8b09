"""User payload classes used by tests (importable by Spark's Python workers: tests/ is on their path)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


class KeepMaxAmount:
    """The version with the larger `amount` wins, in a batch and against the stored record."""

    def pre_combine(self, older: pa.Table, newer: pa.Table) -> pa.Table:
        return self.combine(older, newer)

    def combine(self, stored: pa.Table, incoming: pa.Table) -> pa.Table:
        take_new = pc.greater_equal(incoming.column("amount"), stored.column("amount"))
        return pa.table({c: pc.if_else(take_new, incoming.column(c), stored.column(c)) for c in stored.column_names})


def test_keep_max_amount_is_a_record_payload():
    from hudi_engine.payload import RecordPayload, payload_for

    assert isinstance(KeepMaxAmount(), RecordPayload)
    assert payload_for("test_payloads.KeepMaxAmount").custom is not None
