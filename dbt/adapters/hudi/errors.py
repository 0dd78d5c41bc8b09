"""The adapter's errors, in one leaf module (it imports nothing of the adapter), so that every module raising them
depends on this one and not on each other.

* `HudiConfigError`: every problem of one model's config, listed together (raised before anything runs).
* `HudiModelError`: a run-time problem of one model, named with its setting and the fix.
* `HudiServiceError`: a table service (`dbt run-operation hudi_compact` ...) refused or failed.
* `HudiSchemaChangeError`: `on_schema_change='fail'` refused the model's columns (a compilation error, as dbt
  reports it for every adapter).
"""
from __future__ import annotations

from collections.abc import Sequence

from dbt_common.exceptions import CompilationError, DbtRuntimeError


class HudiConfigError(Exception):
    """Every problem of one model's config, listed together."""

    def __init__(self, model: str, problems: Sequence[str], what: str = "hudi_incremental config") -> None:
        self.model = model
        self.problems = list(problems)
        super().__init__(f"model {model}: invalid {what}:\n  - " + "\n  - ".join(problems))


class HudiModelError(DbtRuntimeError):
    """A run-time problem of one model, named with its setting and the fix."""


class HudiServiceError(DbtRuntimeError):
    """A table service refused or failed; the message names the table, the service and the fix."""


class HudiSchemaChangeError(CompilationError):
    """The model's columns differ from its table's and `on_schema_change='fail'`."""
