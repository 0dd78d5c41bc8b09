"""A table is passed as one value, not as `(storage, base_path)` (issue 25): functions take the table's
`TableLocation` (or its `HudiTable` / `MetaClient`, or a `Timeline`, which carries both). Counted from the source: a function or
method whose first two parameters (after self/cls) are `storage` and a path.

What still takes a storage and a path is listed below; the list may only shrink (an entry no longer found fails the
test). Issue 25's goal is at most 10 taking a table's `(storage, base_path)`, the storage/location layer's own: only
`TableLocation.at` does; the rest read or write one file at a path (not a table)."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATHS = ("base_path", "base", "path", "table_path")

# The storage/location layer's own: one file at a path in a storage (not a table), and the location's constructor.
FILE_LEVEL = {
    "hudi_engine/location.py:TableLocation.at",
    "hudi_engine/storage.py:OutputFile.__init__",
    "hudi_engine/io/base_file.py:BaseFileWriter.__init__",
    "hudi_engine/io/base_file.py:write_base_file",
    "hudi_engine/io/base_file.py:read_footer",
    "hudi_engine/io/base_file.py:read_base_file",
    "hudi_engine/io/base_file.py:read_record_keys",
    "hudi_engine/table_config.py:TableConfig._read_checked",
    "hudi_engine/write/executor.py:WriteTask.read_keys",
    "hudi_engine/write/handles/base.py:base_writer",
    "hudi_engine/write/handles/base.py:write_base",
    "hudi_engine/write/lock_providers.py:read_lock_file",
    "hudi_engine/write/rollback.py:_has_older_slice_files",
}


def in_source(source: str, rel: str) -> set[str]:
    """`rel:qualname` of every function of `source` taking (storage, a path) first."""
    found = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = [a.arg for a in child.args.posonlyargs + child.args.args]
                if args and args[0] in ("self", "cls"):
                    args = args[1:]
                if len(args) >= 2 and args[0] == "storage" and args[1] in PATHS:
                    found.add(f"{rel}:{prefix}{child.name}")
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def taking_storage_and_path() -> set[str]:
    found: set[str] = set()
    for path in sorted((REPO / "hudi_engine").rglob("*.py")):
        found |= in_source(path.read_text(), path.relative_to(REPO).as_posix())
    return found


def test_no_new_function_takes_storage_and_a_base_path():
    found = taking_storage_and_path()
    assert sorted(found - FILE_LEVEL) == [], "take the table's TableLocation (or its MetaClient) instead"
    assert sorted(FILE_LEVEL - found) == [], "no longer found: remove it from FILE_LEVEL"
    assert len(found) <= 13  # 104 before issue 25


def test_the_count_sees_functions_methods_and_nested_functions():
    source = ("class A:\n    def m(self, storage, base_path): pass\n    def n(self, location, storage): pass\n"
              "def f(storage, path):\n    def g(storage, base): pass\n")
    assert in_source(source, "x.py") == {"x.py:A.m", "x.py:f", "x.py:f.<locals>.g"}
