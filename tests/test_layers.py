"""The layering of `hudi_engine` and the dbt adapter, read from the source (every import statement, function-local
and TYPE_CHECKING ones included): no import circle between modules, no import from a lower layer into a higher one,
and pyspark imported by `hudi_engine.spark` only (docs/internals.md, Layers).

A package's `__init__` is a module of its own here: importing `a.b.c` counts as importing `a.b.c`, not `a.b`.
Today's breaks of the rules are listed as named exceptions below, each saying what removes it; the lists may only
shrink (an exception that is no longer needed fails the test, so it is removed with the code that fixed it).
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("hudi_engine", "dbt/adapters/hudi")

# Bottom to top: a module may import modules of its own layer or of the layers before it. An entry is a module or,
# ending in ".*", every module below a package (the package's own __init__ is named separately).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("values: errors, names, schemas, keys, payloads, config declarations", (
        "hudi_engine.errors", "hudi_engine.arrays", "hudi_engine.avro_visitor", "hudi_engine.schema",
        "hudi_engine.java_properties", "hudi_engine.payload", "hudi_engine.partition_path", "hudi_engine.date_format",
        "hudi_engine.keygen",
        "hudi_engine.file_naming", "hudi_engine.file_group", "hudi_engine.partition_metadata", "hudi_engine.merge",
        "hudi_engine.config.option", "hudi_engine.config.keys", "hudi_engine.config.hudi_keys")),
    ("storage: the only module touching a filesystem, and a table's location in it", (
        "hudi_engine.storage", "hudi_engine.location")),
    ("io: base files, log files and blocks, Avro records, bloom filters", ("hudi_engine.io", "hudi_engine.io.*")),
    ("table config, timeline, write config, table features", (
        "hudi_engine.table_config", "hudi_engine.timeline", "hudi_engine.timeline.*", "hudi_engine.config",
        "hudi_engine.config.write_config", "hudi_engine.config.lock_config",
        "hudi_engine.config.sync_config", "hudi_engine.config.__main__", "hudi_engine.table_features",
        "hudi_engine.meta_client", "hudi_engine.internal_schema", "hudi_engine.column_change")),
    ("file system view, file slice reading", ("hudi_engine.fs_view", "hudi_engine.file_slice_reader")),
    ("instant protocol: markers, heartbeats, lock, rollback, the inflight instant, commit", (
        "hudi_engine.write.renewal", "hudi_engine.write.markers", "hudi_engine.write.heartbeat",
        "hudi_engine.write.lock_providers", "hudi_engine.write.lock", "hudi_engine.write.rollback",
        "hudi_engine.write.inflight", "hudi_engine.write.commit", "hudi_engine.write.conflict")),
    ("metadata table: its files partition read, and kept by commits", (
        "hudi_engine.metadata", "hudi_engine.metadata.*")),
    ("write: index, buckets, handles, tasks, the write client", ("hudi_engine.write", "hudi_engine.write.*")),
    ("table services: compaction, cleaning, archival, their runner", (
        "hudi_engine.table_services", "hudi_engine.table_services.*")),
    ("the write pipeline: a write's transaction between its table services", ("hudi_engine.write_pipeline",)),
    # HudiTable reads and runs the table services on request, so it sits above them.
    ("table: HudiTable and read planning", ("hudi_engine.table", "hudi_engine.scan_plan", "hudi_engine.read_options",
                                            "hudi_engine.cdc_query")),
    ("catalog sync: the entries Hudi's sync tools write, the sync over a catalog client, Glue's client", (
        "hudi_engine.sync", "hudi_engine.sync.*")),
    ("procedures: Hudi's CALL procedures over the table, its services and the timeline", (
        "hudi_engine.procedures", "hudi_engine.procedures.*")),
    ("the engine's public API", ("hudi_engine",)),
    ("spark: the only package importing pyspark", ("hudi_engine.spark", "hudi_engine.spark.*")),
    ("dbt adapter", ("dbt.adapters.hudi", "dbt.adapters.hudi.*")),
)

# (importer, imported) -> why it is still there and what removes it.
LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {}
# Module sets allowed to import each other in a circle -> why, and what removes it.
CYCLE_EXCEPTIONS: dict[frozenset[str], str] = {
}
# Modules allowed to import pyspark besides hudi_engine.spark: the adapter runs above the Spark layer and owns the
# dbt run's SparkSession (and names Spark's errors).
PYSPARK_IMPORTERS = ("hudi_engine.spark", "dbt.adapters.hudi")


# --------------------------------------------------------------------------------------------- reading imports


def module_files() -> dict[str, Path]:
    out = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def imported_names(name: str, path: Path) -> set[str]:
    """Every name `path` imports, absolute (a relative import resolved); `from m import x` gives `m.x`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            # `from pkg import name`: the module pkg.name if there is one, else pkg (trimmed in `import_graph`)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ROOTS it imports (a name inside a module counts as the module)."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for imported in imported_names(name, path):
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


# --------------------------------------------------------------------------------------------- the rules


def layer_of(module: str) -> int | None:
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or (member.endswith(".*") and module.startswith(member[:-1])):
                return index
    return None


def circles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def upward_imports(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher layer."""
    out = []
    for module, targets in graph.items():
        for target in targets:
            low, high = layer_of(module), layer_of(target)
            if low is not None and high is not None and high > low:
                out.append((module, target))
    return sorted(out)


# --------------------------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_module_has_a_layer(graph):
    assert [m for m in sorted(graph) if layer_of(m) is None] == [], "add the module to LAYERS"


def test_no_import_circle(graph):
    found = circles(graph)
    new = [sorted(c) for c in found if not any(c <= allowed for allowed in CYCLE_EXCEPTIONS)]
    assert new == [], "modules importing each other in a circle"
    stale = [sorted(allowed) for allowed in CYCLE_EXCEPTIONS if not any(len(c & allowed) > 1 for c in found)]
    assert stale == [], "circle exceptions no longer needed: remove them from CYCLE_EXCEPTIONS"


def test_no_import_from_a_lower_layer_into_a_higher_one(graph):
    found = upward_imports(graph)
    described = [f"{a} ({LAYERS[layer_of(a) or 0][0]}) imports {b} ({LAYERS[layer_of(b) or 0][0]})"
                 for a, b in found if (a, b) not in LAYER_EXCEPTIONS]
    assert described == []
    assert [pair for pair in LAYER_EXCEPTIONS if pair not in found] == [], \
        "layer exceptions no longer needed: remove them from LAYER_EXCEPTIONS"


def test_pyspark_only_in_the_spark_layer():
    wrong = []
    for name, path in module_files().items():
        if any(name == p or name.startswith(p + ".") for p in PYSPARK_IMPORTERS):
            continue
        wrong += [f"{name} imports {m}" for m in sorted(imported_names(name, path))
                  if m == "pyspark" or m.startswith("pyspark.")]
    assert wrong == []


def test_the_rules_catch_a_circle_and_an_upward_import():
    """The checks themselves, on a made-up graph: a circle of two modules, and storage importing the table."""
    made_up = {"hudi_engine.storage": {"hudi_engine.table"}, "hudi_engine.table": {"hudi_engine.fs_view"},
               "hudi_engine.fs_view": {"hudi_engine.storage", "hudi_engine.timeline"}, "hudi_engine.timeline": set()}
    assert circles(made_up) == [frozenset({"hudi_engine.storage", "hudi_engine.table", "hudi_engine.fs_view"})]
    assert upward_imports(made_up) == [("hudi_engine.storage", "hudi_engine.table")]


def test_imports_are_read_with_relative_and_function_local_ones(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("from ..errors import X\nfrom . import sibling\n\ndef f():\n    import pyspark.sql\n")
    assert imported_names("hudi_engine.io.mod", source) == {"hudi_engine.errors.X", "hudi_engine.io.sibling",
                                                            "pyspark.sql"}
