"""Errors raised inside Spark tasks reach the driver wrapped in Spark's own exception: give back the engine's."""
from __future__ import annotations

import re

import hudi_engine.errors as errors
from hudi_engine.errors import HudiError, WriteError

_ERROR_RE = re.compile(r"hudi_engine\.errors\.(\w+): (.*?)(?:\n\n|\Z|\n\tat |\nJVM stacktrace)", re.S)


def unwrap_task_error(e: Exception) -> Exception:
    """An error raised in a Spark task reaches the driver wrapped; give back the engine's own error."""
    if isinstance(e, HudiError):
        return e
    m = _ERROR_RE.search(str(e))
    if m:
        cls = getattr(errors, m.group(1), WriteError)
        return cls(m.group(2).strip())
    return e
