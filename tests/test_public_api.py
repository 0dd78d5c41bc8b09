"""The dbt adapter uses only the engine's public names: those in the `__all__` of `hudi_engine`, `hudi_engine.spark`
and `hudi_engine.config` (every other module is internal), and each of those names exists."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PUBLIC = ("hudi_engine", "hudi_engine.spark", "hudi_engine.config")


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_exists(module):
    mod = importlib.import_module(module)
    assert [n for n in mod.__all__ if not hasattr(mod, n)] == []


def test_the_dbt_adapter_imports_only_public_names():
    public = {m: set(importlib.import_module(m).__all__) for m in PUBLIC}
    wrong = []
    for path in sorted((REPO / "dbt").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hudi_engine"):
                if node.module not in public:
                    wrong.append(f"{where}: from {node.module} import ... (not a public module)")
                    continue
                wrong += [f"{where}: {node.module}.{a.name} is not in its __all__" for a in node.names
                          if a.name not in public[node.module]]
            elif isinstance(node, ast.Import):
                wrong += [f"{where}: import {a.name}" for a in node.names
                          if a.name.startswith("hudi_engine") and a.name not in PUBLIC]
    assert wrong == [], "\n".join(wrong)
