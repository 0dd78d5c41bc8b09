"""What an executor's Python reports about itself, before the engine runs there (see `executor_env`).

`probe` runs inside Spark's Python workers, which may lack `hudi_engine` (that is what it finds out), so it is
pickled by value and uses only the standard library.
"""
from __future__ import annotations


def probe(packages: str) -> str:
    """JSON of this worker: host, Python version and executable, the version of each of `packages` (comma-separated;
    null and the import error when it does not import), and the `hudi_engine` it has installed (null if none)."""
    import importlib
    import json
    import socket
    import sys

    versions: dict = {}
    errors: dict = {}
    for name in filter(None, packages.split(",")):
        try:
            versions[name] = str(getattr(importlib.import_module(name), "__version__", "") or "unknown")
        except Exception as e:  # noqa: BLE001 - reported to the driver
            versions[name] = None
            errors[name] = f"{type(e).__name__}: {e}"
    engine = engine_path = engine_error = None
    try:
        import hudi_engine

        engine, engine_path = str(hudi_engine.__version__), str(hudi_engine.__file__)
    except ModuleNotFoundError as e:
        if e.name != "hudi_engine":  # installed, but one of its imports is missing
            engine_error = f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - reported to the driver
        engine_error = f"{type(e).__name__}: {e}"
    return json.dumps({
        "host": socket.gethostname(), "python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
        "packages": versions, "errors": errors,
        "engine": engine, "engine_path": engine_path, "engine_error": engine_error,
    })
