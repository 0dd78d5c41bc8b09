"""README.md and docs/ are kept true by running or checking every fenced code block against the code.

* Python blocks: every one is parsed and its imports and the attributes it takes from them are resolved; every
  `hoodie.*` key in any block is declared (`hudi_engine/config/keys.py`) or classified (`hudi_keys`). Blocks that
  run without Spark run here (`test_python_blocks_that_run_without_spark`); the ones that need Spark run on the test
  session (tests/spark/test_docs_examples.py); the rest are listed in `NOT_RUN` with the reason.
* dbt SQL blocks: every `config(...)` name is one dbt or this adapter knows, a `hudi_incremental` model's config
  validates with `HudiModelConfig.from_dbt` (as at compile time), and every macro called exists.
* YAML blocks parse; a profile names `type: hudi` and dbt-spark's fields.
* Shell blocks name scripts, modules and extras that exist; the README's install steps are run by
  tests/dbt/test_install.py.
* Plain blocks: the layout tree names files that exist, and every module of hudi_engine/ and dbt/adapters/hudi/.
* README's "What works, and what is refused" table: every claim in it is declared in `MATRIX` with what backs it
  (tests that exist, options the write config refuses, refusing table_features rows, texts the code raises).
* Model settings quoted in prose (`compaction={...}`) are known and validate; links between the documents resolve,
  anchors included; docs/dbt.md's settings table matches model_config.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.util
import re
import shlex
import textwrap
import tomllib
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from docs_blocks import ROOT, Block, block_with, blocks, documents

from dbt.adapters.hudi import model_config as MC
from hudi_engine.config import ALL_OPTIONS
from hudi_engine.config.hudi_keys import known_keys
from hudi_engine.config.write_config import WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import PROPERTIES, STATES, Decision
from hudi_engine.write_pipeline import write_table

ALL = blocks()
LANGS = {"python", "bash", "yaml", "sql", ""}

# Python blocks that run (the key: document and a string of the block), and where.
RUN_HERE = {("docs/python-api.md", 't.read_snapshot()'), ("docs/python-api.md", "table.write(batch")}
RUN_ON_SPARK = {  # tests/spark/test_docs_examples.py
    ("docs/python-api.md", "result = write(df, \"/data/trips\""),
    ("docs/python-api.md", "read_table(spark, \"/data/orders\")"),
    ("docs/keyless.md", "write(df, \"s3://bucket/events\""),
    ("docs/spark-sql.md", "print(last_write_result())"),
}
# Python blocks checked against the code only, and why they are not run.
NOT_RUN = {
    ("docs/procedures.md", 'call("show_commits", "/data/trips"'): "the same calls on tables written there: "
                                                                   "tests/procedures/",
    ("docs/operations.md", 'SparkSession.builder.master("yarn")'): "needs a YARN cluster and a packed venv on HDFS",
    ("docs/native-read.md", "native_conf"): "configures a session builder before its JVM starts; the test session "
                                            "is built that way (tests/spark/conftest.py, local_spark_session(native=True))",
    ("docs/cdc.md", "read_changes(begin, end, images=\"struct\")"): "the same calls on tables written there: "
                                                                     "tests/test_cdc_query.py",
    ("docs/cdc.md", "hudi_engine.cdc.images"): "the same options on a table written there: tests/spark/test_cdc_read.py",
    ("docs/clustering.md", 'table.cluster(options=..., op="schedule")'): "the same calls on tables written there: "
                                                                          "tests/table_services/test_clustering.py",
    ("docs/oracle.md", "def test_java_reads_it"): "a test's shape, with the fixture only pytest gives: every call is "
                                                  "made by tests/java_hudi/test_*.py",
}
# dbt's own config names (beside the adapter's, `hudi_model_settings`) that the documents' models use.
DBT_CONFIGS = {"materialized", "file_format", "event_time", "batch_size", "begin", "lookback", "contract",
               "persist_docs", "alias", "schema", "tags", "strategy", "updated_at", "check_cols", "hard_deletes",
               "target_schema"}
MATERIALIZATIONS = {"hudi_incremental", "incremental", "table", "view", "ephemeral", "snapshot"}
DBT_BUILTINS = {"config", "ref", "source", "this", "var", "is_incremental", "env_var", "adapter"}


def _ids(bs: list[Block]) -> list[str]:
    return [b.where for b in bs]


def _key(block: Block, keys) -> tuple[str, str] | None:
    found = [k for k in keys if k[0] == block.doc and k[1] in block.code]
    return found[0] if found else None


PYTHON = [b for b in ALL if b.lang == "python"]
SQL = [b for b in ALL if b.lang == "sql"]
YAML = [b for b in ALL if b.lang == "yaml"]
BASH = [b for b in ALL if b.lang == "bash"]
PLAIN = [b for b in ALL if b.lang == ""]


def test_every_block_has_a_kind_this_test_checks():
    assert ALL, "no code blocks found"
    strange = [(b.where, b.lang) for b in ALL if b.lang not in LANGS]
    assert not strange, f"code blocks in a language tests/test_docs.py does not check: {strange}"


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_every_python_block_runs_or_says_why_not(block):
    assert _key(block, RUN_HERE | RUN_ON_SPARK | set(NOT_RUN)), (
        f"{block.where}: a Python block no test runs: add it to RUN_HERE / RUN_ON_SPARK (and run it), or to "
        f"NOT_RUN with the reason, in tests/test_docs.py")


def test_the_listed_blocks_exist():
    for doc, marker in RUN_HERE | RUN_ON_SPARK | set(NOT_RUN):
        block_with(doc, marker)


# ---- Python: imports, attributes, option keys --------------------------------------------------------------
def _resolve(module: str, name: str | None = None):
    mod = importlib.import_module(module)
    if name is None:
        return mod
    if hasattr(mod, name):
        return getattr(mod, name)
    return importlib.import_module(f"{module}.{name}")  # a submodule


@pytest.mark.parametrize("block", PYTHON, ids=_ids(PYTHON))
def test_python_block_names_exist(block):
    tree = ast.parse(block.code, block.where)
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = _resolve(node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imported[alias.asname or alias.name] = _resolve(alias.name)
    for node in ast.walk(tree):  # `HudiTable.load`, `SparkSession.builder`: what the block takes from an import
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
            assert hasattr(imported[node.value.id], node.attr), f"{block.where}: {node.value.id}.{node.attr} does not exist"


DECLARED = {k for o in ALL_OPTIONS for k in o.all_keys} | set(known_keys()) | {"hoodie.properties"}  # (a file)
_HOODIE_KEY = re.compile(r"\bhoodie\.[a-z0-9_.]*[a-z0-9_]")


@pytest.mark.parametrize("block", [b for b in ALL if b.lang != ""], ids=_ids([b for b in ALL if b.lang != ""]))
def test_option_keys_in_blocks_are_declared(block):
    unknown = sorted({k for k in _HOODIE_KEY.findall(block.code) if k not in DECLARED})
    assert not unknown, f"{block.where}: option keys neither declared nor classified: {unknown}"


def test_python_blocks_that_run_without_spark(tmp_path):
    """The read example, on a table written with the same columns (an instant before its first commit reads an
    empty table, as in Hudi, so the example's instants are valid)."""
    path = str(tmp_path / "trips")
    rows = pa.table({"uuid": ["a", "b", "c"], "city": ["chennai", "sf", "chennai"], "fare": [10.0, 20.5, 33.9],
                     "ts": [1, 2, 3]})
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
               "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    write_table(rows, path, {**options, "hoodie.datasource.write.operation": "insert"})
    write_table(pa.table({"uuid": ["a"], "city": ["chennai"], "fare": [11.0], "ts": [4]}), path, options)
    block = block_with("docs/python-api.md", 't.read_snapshot()')
    scope: dict = {}
    exec(compile(block.code.replace('"/data/trips"', repr(path)), block.where, "exec"), scope)
    t = scope["t"]
    chennai = t.read_snapshot(columns=["uuid", "fare"], filters=[("city", "=", "chennai")])
    assert sorted(chennai.column("fare").to_pylist()) == [11.0, 33.9]


def test_the_table_write_example_runs(tmp_path):
    """`HudiTable.write`: the commit is in the table object afterwards, with no reload."""
    path = str(tmp_path / "trips")
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
               "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts"}
    write_table(pa.table({"uuid": ["a", "b"], "city": ["sf", "sf"], "fare": [1.0, 2.0], "ts": [1, 1]}), path,
                {**options, "hoodie.datasource.write.operation": "insert"})
    batch = pa.table({"uuid": ["a", "c"], "city": ["sf", "sf"], "fare": [10.0, 3.0], "ts": [2, 2]})
    scope: dict = {"path": path, "batch": batch}
    block = block_with("docs/python-api.md", "table.write(batch")
    exec(compile(block.code, block.where, "exec"), scope)
    table = scope["table"]
    assert len(table.timeline.completed_commits()) == 2
    assert {r["uuid"]: r["fare"] for r in table.read_snapshot().to_pylist()} == {"a": 10.0, "b": 2.0, "c": 3.0}


# ---- dbt SQL ------------------------------------------------------------------------------------------------
def _settings_macro_keys() -> set[str]:
    sql = (ROOT / "dbt/include/hudi/macros/materializations/hudi_helpers.sql").read_text()
    macro = sql[sql.index("macro hudi_model_settings"):]
    return set(re.findall(r"'(\w+)'", macro[:macro.index("endfor")]))


def _macros() -> set[str]:
    names = set()
    for f in (ROOT / "dbt/include/hudi/macros").rglob("*.sql"):
        names |= set(re.findall(r"{%-?\s*(?:macro|test)\s+(\w+)", f.read_text()))
    return names


def _configs(sql: str) -> list[dict]:
    out = []
    for m in re.finditer(r"{{-?\s*(config\(.*?\))\s*-?}}", sql, re.S):
        call = ast.parse(m.group(1).replace("true", "True").replace("false", "False"), mode="eval").body
        out.append({k.arg: ast.literal_eval(k.value) for k in call.keywords})
    return out


@pytest.mark.parametrize("block", SQL, ids=_ids(SQL))
def test_dbt_sql_block_configs_and_macros_are_known(block):
    known = _settings_macro_keys() | DBT_CONFIGS
    for config in _configs(block.code):
        unknown = sorted(set(config) - known)
        assert not unknown, f"{block.where}: config names neither dbt nor this adapter knows: {unknown}"
        assert config.get("materialized", "hudi_incremental") in MATERIALIZATIONS, block.where
        if config.get("materialized", "hudi_incremental") == "hudi_incremental":
            MC.HudiModelConfig.from_dbt(config, block.where)  # raises HudiConfigError listing every problem
    jinja = " ".join(re.findall(r"{{.*?}}|{%.*?%}", block.code, re.S))
    called = set(re.findall(r"(\w+)\(", jinja))
    unknown = sorted(called - _macros() - DBT_BUILTINS)
    assert not unknown, f"{block.where}: macros that do not exist: {unknown}"


def _inline_configs(doc: Path) -> list[tuple[str, dict]]:
    """Model settings quoted in prose (`compaction={'inline': true}`, `materialized='incremental', ...`)."""
    text = re.sub(r"^```.*?^```", "", doc.read_text(), flags=re.S | re.M)
    out = []
    for span in re.findall(r"`([^`]+)`", text):
        if re.match(r"[a-z_]+=['{\[]", span):  # a setting with a quoted, mapping or list value
            [config] = _configs("{{ config(" + " ".join(span.split()) + ") }}")
            out.append((span, config))
    return out


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_model_settings_quoted_in_prose_are_known_and_valid(doc):
    known = _settings_macro_keys() | DBT_CONFIGS
    for span, config in _inline_configs(doc):
        assert set(config) <= known, f"{doc.name}: `{span}` names config that neither dbt nor this adapter knows"
        if set(config) <= _settings_macro_keys() - {"materialized"}:
            MC.HudiModelConfig.from_dbt({"unique_key": "id", **config}, f"{doc.name}: {span}")


def test_the_install_model_validates():
    """The README's model is a hudi_incremental model whose config the adapter accepts (tests/dbt/test_install.py
    runs it)."""
    block = block_with("README.md", "-- models/customers.sql")
    [config] = _configs(block.code)
    assert config["materialized"] == "hudi_incremental"
    assert MC.HudiModelConfig.from_dbt(config, "customers").unique_key == ("customer_id",)


# ---- YAML ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("block", YAML, ids=_ids(YAML))
def test_yaml_blocks_parse_and_profiles_name_the_adapter(block):
    doc = yaml.safe_load(textwrap.dedent(block.code))
    assert isinstance(doc, dict), block.where
    for profile in doc.values():
        if not isinstance(profile, dict) or "outputs" not in profile:
            continue
        for output in profile["outputs"].values():
            assert output["type"] == "hudi", block.where
            assert output.get("method", "session") in ("session", "thrift", "http", "odbc"), block.where
            assert all(k.startswith("spark.") for k in output.get("server_side_parameters", {})), block.where
    params = doc.get("server_side_parameters", {}) if "server_side_parameters" in doc else {}
    assert all(k.startswith("spark.") for k in params), block.where


# ---- shell --------------------------------------------------------------------------------------------------
CHECKOUT = "/path/to/dbt-hudi"


def _extras() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


@pytest.mark.parametrize("block", BASH, ids=_ids(BASH))
def test_shell_blocks_name_what_exists(block):
    for line in block.code.splitlines():
        line = line.split(" #", 1)[0].strip()
        for command in filter(None, (c.strip() for c in re.split(r"&&|;", line))):
            words = shlex.split(command)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # PYTHON=python3.12 bash ...
                words = words[1:]
            tool, args = words[0], words[1:]
            if tool in ("bash", "source"):
                script = args[0].replace(CHECKOUT + "/", "")
                assert (ROOT / script).is_file() or script == ".venv/bin/activate", f"{block.where}: {script}"
            elif tool == "python":
                assert args[:2] == ["-m", "venv"] or importlib.util.find_spec(args[1]), f"{block.where}: {command}"
            elif tool == "pip":
                assert args[0] in ("install", "wheel"), f"{block.where}: {command}"
                for target in (a for a in args[1:] if not a.startswith("-")):
                    m = re.fullmatch(r"(.+?)(?:\[([\w,]+)\])?", target)
                    assert set(filter(None, (m.group(2) or "").split(","))) <= _extras(), f"{block.where}: {target}"
            else:
                assert tool == "dbt", f"{block.where}: a command tests/test_docs.py does not know: {command}"


def test_the_install_steps_are_the_ones_the_install_test_runs():
    section = [b for b in blocks(ROOT / "README.md") if b.section == "Install into your own dbt project"]
    langs = [b.lang for b in section]
    assert langs == ["bash", "yaml", "yaml", "sql", "bash"], langs
    assert f'pip install "{CHECKOUT}[dbt]"' in section[0].code


# ---- plain blocks: the layout tree --------------------------------------------------------------------------
LAYOUT_MARKER = "hudi_engine/            the engine"
MODULE_ROOTS = ("hudi_engine", "dbt/adapters/hudi")  # every module below them is named in the layout
_FILE_NAME = re.compile(r"[\w./]*\w\.(?:py|scala|md)\b")


def _layout() -> list[tuple[list[str], str, str]]:
    """The layout tree's entries: (the paths an entry names, the folder its description's file names are in, the
    description with its continued lines). An entry is a top-level path or, indented by two, a path in the
    top-level folder above it; a description names files of the entry's folder (an entry's file is in its parent's),
    or of a folder above it."""
    entries: list[tuple[list[str], str, str]] = []
    parent = ""
    for line in block_with("README.md", LAYOUT_MARKER).code.splitlines():
        m = re.match(r"^( ?)( ?)(\S+(?:, \S+)*)(.*)", line)
        if not m:
            if entries and line.strip():  # a description continued from the line above
                paths, folder, text = entries[-1]
                entries[-1] = (paths, folder, text + " " + line.strip())
            continue
        names = [n.rstrip(",") for n in m.group(3).split(", ")]
        if not m.group(1):
            parent = names[0] if names[0].endswith("/") else ""
            paths = names
        else:
            paths = [parent + n for n in names]
        folder = paths[0] if paths[0].endswith("/") else paths[0].rpartition("/")[0] + "/"
        entries.append((paths, folder, m.group(4).strip()))
    return entries


def _layout_files() -> tuple[set[str], list[str]]:
    """The files the layout names under the module roots (as paths from the checkout), and the names it gives
    there that are no file."""
    named, missing = set(), []
    for paths, folder, text in _layout():
        if not folder.startswith(tuple(r.split("/")[0] + "/" for r in MODULE_ROOTS)):
            continue
        for name in _FILE_NAME.findall(text):  # in the entry's folder, else in the nearest folder above it
            found = [str(Path(f, name)) for f in (folder, *Path(folder).parents) if (ROOT / f / name).is_file()]
            named |= set(found[:1])
            missing += [] if found else [f"{name} (in {folder})"]
        named |= {p for p in paths if not p.endswith("/")}
    return named, missing


def test_layout_names_files_that_exist():
    missing = [p for paths, _, _ in _layout() for p in paths if not (ROOT / p).exists()]
    missing += _layout_files()[1]
    assert not missing, f"README's Layout names paths that do not exist: {missing}"


def test_layout_names_every_module():
    """Every module of the engine and the adapter (and the Scala sources of the native component) is named in the
    Layout block, by its file name in its folder's entry: a new module is added there with a few words."""
    modules = {str(f.relative_to(ROOT)) for root in MODULE_ROOTS for f in (ROOT / root).rglob("*")
               if f.suffix in (".py", ".scala") and f.name != "__init__.py" and "__pycache__" not in f.parts}
    unnamed = sorted(modules - _layout_files()[0])
    assert not unnamed, f"modules README's Layout does not name (add each to its folder's entry): {unnamed}"


def test_plain_blocks_are_known():
    assert [b.where for b in PLAIN] == [block_with("README.md", LAYOUT_MARKER).where], \
        "a plain code block tests/test_docs.py does not check"


# ---- README: what works, and what is refused ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Says:
    """A text the code (hudi_engine/, dbt/) raises or does."""
    text: str


@dataclasses.dataclass(frozen=True)
class Feature:
    """A row of hudi_engine/table_features.py that refuses: a property with a value it refuses, or a state."""
    name: str
    value: str | None = None


Evidence = str | dict | Says | Feature  # a test ("write/test_x.py::test_y", in tests/); refused options
# Every claim of the table, cell by cell, and what backs it. A "works" claim names the tests that show it (claims the
# table itself calls "not tested" name the code instead); a "refused" claim names what refuses it (options
# `WriteConfig.from_options` refuses, a refusing `Feature`, or a text the code `Says`, with the tests that make it
# refuse). Every word of a cell belongs to one of its claims (links and separators aside), so a claim added to the
# table comes here with its evidence, and a test renamed or a refusal dropped fails here.
MATRIX: dict[str, tuple[dict[str, tuple[Evidence, ...]], dict[str, tuple[Evidence, ...]]]] = {
    "tables": ({
        "COW and MOR": ("write/test_written_tables.py::test_cow_partitioned_insert_then_merge_update",
                        "write/test_written_tables.py::test_mor_base_files_then_log_updates_and_deletes"),
        "versions 6, 8 and 9": ("write/test_write_1x_tables.py::test_new_table_of_version",
                                "write/test_write_1x_tables.py::test_upsert_delete_overwrite_round_trip",
                                "test_table_v8_v9.py::test_snapshot_equals_hudi_rs"),
        "partitioned or not": ("write/test_written_tables.py::test_non_partitioned_mor_table",),
        "simple / composite / timestamp / custom keys": (
            "write/test_written_tables.py::test_complex_key_generator_cow_with_two_partition_fields",
            "test_keygen.py::test_timestamp_keygen_on_real_tables", "test_keygen.py::test_custom_key_generator",
            "write/test_executor.py::test_custom_key_generator_tables_store_partition_field_names_and_take_typed_ones"),
        "keyless": ("write/test_keyless.py::test_keyless_table_created_and_appended",),
        "CDC log files": ("write/test_cdc.py::test_cow_upsert_and_delete_write_one_cdc_record_per_change",),
        "Hive-style partitions": ("write/test_written_tables.py::test_cow_partitioned_insert_then_merge_update",
                                  "spark/test_sql_write.py::test_ctas_and_insert"),
        "real Apache Hudi 0.15 and 1.2 read every shape in the tests": (
            "java_hudi/test_java_reads.py::test_java_hudi_reads_what_the_engine_writes",),
        "the metadata table's `files` partition (created by every write, as Hudi's Spark writers do, unless "
        "`hoodie.metadata.enable=false`; kept up to date and compacted)": (
            "metadata/test_metadata_initialization.py::test_a_new_table_gets_a_metadata_table_equal_to_storage",
            "metadata/test_metadata_writer.py::test_commits_are_recorded_and_the_listing_stays_equal_to_storage",
            "metadata/test_metadata_services.py::test_services_and_rollback_keep_it",
            "metadata/test_metadata_compaction.py::test_the_files_partition_compacts_after_max_delta_commits",
            "java_hudi/test_mdt_files.py::test_java_reads_and_writes_on_the_metadata_table_the_engine_kept"),
        "column and partition stats (built with `hoodie.metadata.index.column.stats.enable=true` or by Java, kept; "
        "versions 8 and 9)": (
            "metadata/test_stats_index.py::test_kept_through_writes_and_services",
            "metadata/test_stats_index.py::test_built_on_request_kept_then_dropped",
            "java_hudi/test_mdt_stats.py::test_java_reads_and_keeps_the_stats_the_engine_built",
            "metadata/test_column_ranges.py::test_ranges_equal_javas_column_stats",
            "java_hudi/test_mdt_stats.py::test_java_skips_by_the_engines_stats_and_extends_them",
            "java_hudi/test_mdt_stats.py::test_java_misses_a_row_when_a_files_stats_are_wrong"),
        "the global record index (built with `hoodie.metadata.global.record.level.index.enable=true` or by Java, "
        "kept)": (
            "metadata/test_record_index.py::test_javas_record_index_places_every_live_key",
            "metadata/test_record_index.py::test_kept_through_writes_and_services",
            "metadata/test_record_index.py::test_built_on_request_kept_then_dropped",
            "java_hudi/test_mdt_record_index.py::test_java_upserts_find_every_key_of_the_engines_record_index",
            "java_hudi/test_mdt_record_index.py::test_the_engines_record_index_upserts_on_a_table_java_built"),
        "the partitioned one (versions 8 and 9: `hoodie.metadata.record.level.index.enable=true` or by Java, kept)": (
            "metadata/test_partitioned_record_index.py::test_built_kept_and_tagged_with",
            "metadata/test_partitioned_record_index.py::test_kept_through_the_metadata_tables_compaction_and_a_rollback",
            "java_hudi/test_mdt_partitioned_record_index.py::test_the_engine_keeps_javas_partitioned_record_index",
            "java_hudi/test_mdt_partitioned_record_index.py::"
            "test_java_reads_and_upserts_with_the_engines_partitioned_record_index"),
    }, {
        "other metadata partitions (secondary and expression indexes, stats on version 6: refused by name; `hoodie.metadata.enable=false` deletes the metadata table as Hudi does)": (
            {"hoodie.metadata.index.bloom.filter.enable": "true"},
            "spark/test_writer_conformance.py::test_write_disables_a_metadata_table_first",
            "metadata/test_metadata_writer.py::test_other_metadata_partitions_are_refused_and_enable_false_disables_it",
            "metadata/test_metadata_services.py::test_what_cannot_be_kept_is_refused_by_name",
            "java_hudi/test_mdt_handover.py::test_java_writes_after_the_engine_disabled_its_metadata_table",
            "write/test_write_1x_tables.py::test_upsert_delete_overwrite_round_trip"),
        "non-parquet base files": (
            Feature("hoodie.table.base.file.format", "ORC"), Feature("hoodie.table.base.file.format", "LANCE"),
            {"hoodie.base.file.format": "ORC"},
            "write/test_write_1x_tables.py::test_lance_1x_table_is_refused_before_anything_is_written"),
    }),
    "writes": ({
        "`upsert`, `insert`, `bulk_insert`, `delete`": (
            "spark/test_writer.py::test_bulk_insert_then_upsert_then_delete",
            "spark/test_writer.py::test_insert_keeps_duplicates_unless_combine_before_insert"),
        "`insert_overwrite`, `insert_overwrite_table`": (
            "spark/test_writer.py::test_insert_overwrite_partition_and_table",),
        "indexes `SIMPLE`, `BLOOM`, `BUCKET`, `GLOBAL_SIMPLE`, `RECORD_INDEX`, `RECORD_LEVEL_INDEX`": (
            "spark/test_writer.py::test_bloom_and_bucket_index",
            "spark/test_writer.py::test_global_index_moves_key_between_partitions",
            "spark/test_writer.py::test_record_index_tags_in_spark_tasks",
            "metadata/test_record_index.py::test_record_index_tags_globally",
            "metadata/test_partitioned_record_index.py::test_built_kept_and_tagged_with",
            "spark/test_writer.py::test_partitioned_record_index_tags_in_spark_tasks"),
        "Hudi's five payloads or a Python one": (
            "test_merge.py::test_random_sequences_match_the_per_record_model",
            "test_merge.py::test_partial_update_fills_nulls_from_the_other_record",
            "test_merge.py::test_overwrite_non_defaults_keeps_stored_values_for_nulls",
            "spark/test_writer.py::test_user_python_payload_by_dotted_path"),
        "partial updates": ("write/test_partial_update.py::test_only_update_columns_change_on_stored_keys",),
    }, {
        "bootstrap": ({"hoodie.datasource.write.operation": "bootstrap"},),
        "HBASE and other indexes": ({"hoodie.index.type": "HBASE"}, {"hoodie.index.type": "GLOBAL_BLOOM"}),
        "each Hudi key [options.md](docs/options.md) lists as refused": (
            {"hoodie.log.compaction.enable": "true"},
            "config/test_hudi_keys.py::test_docs_are_the_registry",
            "config/test_hudi_keys.py::test_each_refused_value_is_refused_by_name"),
    }),
    "Spark writes": ({
        '`df.write.format("hudi")`': ("spark/test_sql_write.py::test_format_hudi_save_modes",),
        "`saveAsTable`": ("spark/test_sql_write.py::test_save_as_table",),
        "CTAS": ("spark/test_sql_write.py::test_ctas_and_insert",),
        "`CREATE TABLE`": ("spark/test_sql_write.py::test_create_table_then_dml",),
        "`INSERT INTO` / `OVERWRITE`": ("spark/test_sql_write.py::test_ctas_and_insert",),
        "`UPDATE`": ("spark/test_sql_write.py::test_update_and_delete",),
        "`DELETE FROM`": ("spark/test_sql_write.py::test_update_and_delete",),
        "`MERGE INTO`": ("spark/test_sql_write.py::test_merge_into",
                         "spark/test_sql_write.py::test_merge_with_delete_clauses"),
        "`ALTER TABLE ADD COLUMNS`": ("spark/test_sql_write.py::test_alter_table_add_columns",),
        "`TRUNCATE TABLE`": ("spark/test_sql_write.py::test_create_table_then_dml",),
        "`ALTER TABLE DROP PARTITION`": ("spark/test_procedures.py::test_drop_partition_by_call_alter_table_and_truncate",
                                         "test_write_pipeline.py::test_the_partition_is_replaced_and_time_travel_still_sees_it"),
        "from a pyspark driver with the native component": (
            "spark/test_docs_examples.py::test_format_hudi_save",
            "java_hudi/test_same_sql.py::test_same_sql_on_both_engines"),
    }, {
        "the same from the Thrift server or any driver without Python": (
            Says("writing a Hudi table needs the Python engine in the Spark driver"),
            "spark/test_sql_write.py::test_a_driver_without_python_refuses_writes"),
        "`WHEN NOT MATCHED BY SOURCE`": (Says('refuse("WHEN NOT MATCHED BY SOURCE"'),
                                         "spark/test_sql_write.py::test_merge_into"),
    }),
    "reads": ({
        "snapshot (MOR merged)": ("test_table.py::test_snapshot_equals_hudi_rs",
                                  "spark/test_datasource.py::test_snapshot_equals_hudi_table_and_hudi_rs"),
        "time travel (`as.of.instant`, SQL's `TIMESTAMP AS OF`)": (
            "spark/test_datasource.py::test_time_travel_option_forms",
            "spark/test_native_read.py::"
            "test_timestamp_as_of_on_a_catalog_name_reads_that_instant_and_never_pins_the_name"),
        "incremental (`hudi_table_changes`, the source's options)": (
            "spark/test_relation.py::test_hudi_table_changes_forms",
            "spark/test_datasource.py::test_incremental_between_consecutive_instants"),
        "CDC with deletes (`hudi_table_changes(..., 'cdc', ...)`, [cdc.md](docs/cdc.md))": (
            "spark/test_cdc_read.py::test_spark_reads_the_cdc_query_as_the_engine_does",
            "test_cdc_query.py::test_a_delete_that_empties_a_file_group_reads_every_row_of_it_as_deleted"),
        "read-optimized": ("spark/test_datasource.py::test_read_optimized_equals_hudi_rs",),
        "from Python, Spark SQL, DataFrames and dbt": (
            "spark/test_relation.py::test_every_read_path_through_a_tables_life",
            "dbt/test_reads.py::test_reads_see_the_merged_snapshot_of_the_latest_commit"),
    }, {
        "time travel to instants the cleaning or archival removed": (
            Says("was cleaned: the last clean"), Says("is before the active timeline, which starts at"),
            "test_scan_plan.py::test_time_travel_to_a_cleaned_instant_is_refused",
            "spark/test_relation.py::test_time_travel_to_a_cleaned_instant_is_refused_by_every_path",
            "table_services/test_archival_v9.py::"
                "test_time_travel_before_the_active_timeline_is_refused_and_a_range_from_there_reads_the_history"),
        "at or after a pending write": (
            Says("is at or after the first pending write"),
            "test_scan_plan.py::test_time_travel_at_or_after_the_first_pending_write_is_refused"),
        "CDC ranges that reach archived commits": (
            Says("would miss them. Begin at"), "test_cdc_query.py::test_a_range_reaching_archived_commits_is_refused"),
        "(the error names what is readable)": (
            Says("Available: instants"), "test_scan_plan.py::test_refused_queries_name_the_table_and_its_instants"),
    }),
    "table services": ({
        "compaction": ("table_services/test_compaction.py::"
                       "test_compaction_merges_slices_and_readers_agree_before_and_after",
                       "table_services/test_services_1x.py::test_compaction_of_a_v9_table"),
        "cleaning": ("table_services/test_clean.py::test_keep_latest_commits_keeps_what_retained_instants_read",
                     "table_services/test_services_1x.py::test_cleaning_of_a_v9_table"),
        "archival (version 6's archived timeline, 8/9's LSM history)": (
            "table_services/test_archival.py::test_many_commits_keep_hoodie_bounded_and_readers_read_the_model",
            "table_services/test_archival_v9.py::test_200_commits_keep_the_timeline_bounded_and_the_history_complete",
            "table_services/test_services_1x.py::test_writes_archive_a_v9_table_into_the_lsm_history",
            "java_hudi/test_java_reads_services.py::test_java_reads_the_archived_timeline"),
        "rollback": ("write/test_rollback.py::test_rollback_completed_restores_the_previous_state",
                     "table_services/test_services_1x.py::"
                     "test_rolling_back_the_latest_v9_delta_commit_deletes_its_log_files"),
        "clustering (size-based, sorted linearly or along a z-order or Hilbert curve, scheduled after a write and "
        "executed later: [clustering.md](docs/clustering.md))": (
            "table_services/test_clustering.py::test_clustering_stitches_small_files_sorted_and_every_reader_agrees",
            "table_services/test_clustering.py::"
            "test_a_curve_skips_files_on_both_sort_columns_where_linear_skips_on_the_first_only",
            "table_services/test_clustering.py::test_schedule_inline_plans_and_a_later_execute_runs_it",
            "table_services/test_clustering.py::test_inline_clustering_after_max_commits",
            "java_hudi/test_clustering_java.py::test_java_reads_our_clustering_and_executes_our_plan"),
        "savepoints and restore ([python-api.md](docs/python-api.md), dbt's `hudi_restore`)": (
            "table_services/test_restore.py::test_savepoint_clean_archive_restore",
            "java_hudi/test_savepoint_restore.py::test_savepoints_and_restores_shared_with_java",
            "table_services/test_restore.py::test_a_restore_keeps_the_metadata_table_and_its_record_index",
            "java_hudi/test_mdt_restore.py::test_the_engines_restore_keeps_javas_metadata_table",
            "dbt/test_undo_a_run.py::test_savepoint_before_a_bad_run_and_restore_after"),
        "inline or on request": ("spark/test_table_services.py::test_inline_compaction_and_automatic_cleaning",
                                 "dbt/test_features.py::test_compact_and_clean_from_dbt"),
    }, {
        "curves built by sampling (`hoodie.layout.optimize.curve.build.method=SAMPLE`)": (
            {"hoodie.layout.optimize.curve.build.method": "SAMPLE"},),
    }),
    "concurrency": ({
        "one writer": ("write/test_lock.py::test_second_writer_waits_then_fails_naming_the_holder",
                       "write/test_concurrency.py::test_a_single_writer_holds_the_lock_for_its_whole_write"),
        "OCC": ("write/test_concurrency.py::test_writers_of_disjoint_file_groups_both_commit",
                "write/test_concurrency.py::test_the_later_of_two_writers_of_one_file_group_fails_and_is_rolled_back"),
        "with a lock on local disks": ("write/test_writer_race.py::test_two_processes_race_on_a_local_table",),
        "S3 (a lock file or Hudi 1.1's lock object)": (
            "write/test_lock_object_store.py::test_two_contenders_never_hold_the_s3_lock_at_once",
            "write/test_storage_lock.py::test_writes_on_s3_take_the_lock_object_and_wait_for_a_java_holder"),
        "DynamoDB": (
            "write/test_lock_object_store.py::test_dynamodb_lock_excludes_renews_and_is_taken_over_once_stale",),
    }, {
        "the file lock on HDFS, GCS, Azure": (
            Says("needs an atomic create-if-absent"),
            "write/test_lock_object_store.py::test_the_file_lock_is_refused_on_a_store_without_conditional_writes"),
        "ZooKeeper, Hive metastore and in-process lock providers": (
            {"hoodie.write.lock.provider": "ZookeeperBasedLockProvider"},
            {"hoodie.write.lock.provider": "HiveMetastoreBasedLockProvider"},
            {"hoodie.write.lock.provider": "InProcessLockProvider"},
            "write/test_lock.py::test_a_provider_that_is_unknown_unsafe_or_contradicted_is_refused_before_writing"),
        "`EAGER` rollback with OCC": (
            {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
             "hoodie.cleaner.policy.failed.writes": "EAGER"},
            "write/test_lock.py::test_a_provider_that_is_unknown_unsafe_or_contradicted_is_refused_before_writing"),
    }),
    "tables other writers share": ({
        "every `hoodie.properties` key and timeline state of Hudi 0.14 .. 1.x honoured or refused": (
            "test_table_features.py::test_docs_table_has_every_row_with_its_decision",
            "test_table_features.py::test_every_declared_property_has_an_accepted_value_under_test",
            "test_table_features.py::test_refused_value_stops_every_writer_and_service_before_any_file"),
    }, {
        "the properties and states that table lists as refused": (
            Feature("hoodie.datasource.write.drop.partition.columns", "true"), Feature("pending log compaction"),
            "test_table_features.py::test_refused_value_stops_every_writer_and_service_before_any_file",
            "test_table_features.py::test_refused_state_stops_every_writer_and_service_before_any_file"),
    }),
    "dbt": ({
        "`hudi_incremental` (SQL and Python models)": ("dbt/test_functional.py::test_adapter_response_and_timeline",
                                                       "dbt/test_features.py::test_python_model_on_the_session"),
        "dbt-spark's `table` and `incremental` with `file_format='hudi'`": (
            "dbt/test_table_materialization.py::test_each_run_is_one_instant_and_time_travel_keeps_the_old_build",
            "dbt/test_features.py::test_spark_spelling_merge_honours_options_and_tblproperties"),
        "seeds": ("dbt/test_adapter_suites.py::test_the_adapter_suites_pass_on_hudi_tables",),
        "snapshots": ("dbt/test_features.py::test_snapshot_timestamp_strategy_with_invalidated_deletes",),
        "microbatch": ("dbt/test_features.py::test_microbatch_upserts_one_instant_per_batch",),
        "contracts": ("dbt/test_features.py::test_contract_declares_the_columns",),
        "unit tests": ("dbt/test_features.py::test_unit_tests_on_an_incremental_hudi_model",),
        "`--empty`": ("dbt/test_features.py::test_empty_builds_the_schema_and_the_next_run_fills_it",),
        "persist_docs": ("dbt/test_features.py::test_persist_docs_keeps_the_path_comment",),
        "generic Hudi tests": ("dbt/test_functional.py::test_generic_timeline_tests",),
        "run-operations": ("dbt/test_features.py::test_compact_and_clean_from_dbt",
                           "dbt/test_features.py::test_rollback_from_dbt",
                           "dbt/test_features.py::test_archive_from_dbt"),
    }, {
        "writing Hudi tables with `method: thrift`, `http` or `odbc` (other file formats work as in dbt-spark)": (
            Says("through the SparkSession in this dbt"), Says("adapter.hudi_validate_config(settings"),
            "dbt/test_model_config.py::test_methods_without_a_session_stop_with_a_clear_error"),
    }),
    "where": ({
        "local disks": ("write/test_written_tables.py::test_cow_partitioned_insert_then_merge_update",),
        "S3 and S3-compatible stores (tested against moto's S3 server)": (
            "spark/test_s3.py::test_writes_reads_and_table_services_on_s3",),
        "other stores `pyarrow.fs` opens (HDFS, GCS, Azure; not tested here)": (Says("pafs.FileSystem.from_uri(uri)"),),
        "local Spark": ("spark/test_writer.py::test_bulk_insert_then_upsert_then_delete",),
        "a standalone cluster (tested)": (
            "spark/test_writer_cluster.py::test_writes_on_a_standalone_cluster_equal_local_writes",
            "dbt/test_standalone_cluster.py::test_two_days_on_a_cluster_whose_executors_lack_the_project"),
        "YARN and Kubernetes (documented, not tested)": (Says("spark.archives=<env>.tar.gz#environment"),),
    }, {
        "executors without the engine's dependencies or on another Python (refused naming the host)": (
            Says("Spark executors cannot run hudi_engine"),
            "spark/test_executor_env_cluster.py::test_executors_without_fastavro_are_refused_before_the_instant",
            "spark/test_executor_env_cluster.py::"
            "test_an_executor_python_of_another_minor_version_is_refused_naming_both",
            "spark/test_executor_env.py::test_missing_and_too_old_packages_are_named_with_the_host_and_the_fix"),
    }),
}
MATRIX_HEADER = ["", "works", "refused (before anything is written, with an error that says why)"]


def _matrix() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## What works, and what is refused"):]
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in section.splitlines()[2:] if line.startswith("|")]
    assert rows[0] == MATRIX_HEADER and set(rows[1]) == {"---"}, rows[:2]
    return {row[0]: row[1:] for row in rows[2:]}


@functools.cache
def _test_ids() -> frozenset[str]:
    """Every test function (module level, or in a Test* class) as its node id from tests/, read from the files, not
    collected."""
    ids = set()
    for f in (ROOT / "tests").rglob("test_*.py"):
        where = str(f.relative_to(ROOT / "tests"))
        for node in ast.parse(f.read_text()).body:
            body, prefix = ([node], "") if not isinstance(node, ast.ClassDef) else (node.body, node.name + "::")
            ids |= {f"{where}::{prefix}{n.name}" for n in body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")}
    return frozenset(ids)


@functools.cache
def _code_text() -> str:
    return "\n".join(f.read_text() for root in ("hudi_engine", "dbt") for f in sorted((ROOT / root).rglob("*"))
                     if f.suffix in (".py", ".scala", ".sql"))


def test_matrix_has_the_declared_rows():
    assert list(_matrix()) == list(MATRIX), "README's table rows are not the claims tests/test_docs.py declares"


@pytest.mark.parametrize("row", MATRIX)
def test_matrix_cells_are_the_declared_claims(row):
    for column, cell, claims in zip(("works", "refused"), _matrix()[row], MATRIX[row], strict=True):
        rest = cell
        for claim in claims:
            assert claim in rest, (f"README table, {row} / {column}: no longer says {claim!r} "
                                  "(tests/test_docs.py, MATRIX)")
            rest = rest.replace(claim, " ", 1)
        rest = re.sub(r"\b(?:and|or)\b|\[[^\]]*\]\([^)]*\)|[\s,;:()]", "", rest)
        assert not rest, (f"README table, {row} / {column}: words no claim of tests/test_docs.py MATRIX holds (add "
                          f"the claim with its tests or refusal): {rest!r} in {cell!r}")


@pytest.mark.parametrize("row", MATRIX)
def test_matrix_claims_name_their_evidence(row):
    tests, code = _test_ids(), _code_text()
    works, refused = MATRIX[row]
    for claim, evidence in [*works.items(), *refused.items()]:
        named = [e for e in evidence if isinstance(e, str)]
        assert not set(named) - tests, f"{row}: {claim!r} names tests that do not exist: {set(named) - tests}"
        said = [e.text for e in evidence if isinstance(e, Says)]
        assert all(s in code for s in said), f"{row}: {claim!r}: the code no longer says {said}"
        if claim in works:
            assert named or ("not tested" in claim and said), f"{row}: {claim!r} works, but no test is named"
        else:
            assert any(not isinstance(e, str) for e in evidence), f"{row}: {claim!r}: nothing named refuses it"
            assert named or not said, f"{row}: {claim!r}: name the tests that make the code refuse"


REFUSING_BASE = {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
                 "hoodie.datasource.write.precombine.field": "ts"}


@pytest.mark.parametrize("row", MATRIX)
def test_matrix_refusals_refuse(row):
    table = TableConfig.create("orders", "COPY_ON_WRITE", ["id"], [], "ts")
    for claim, evidence in MATRIX[row][1].items():
        for e in evidence:
            if isinstance(e, dict):
                with pytest.raises(ConfigError, match=re.escape(next(iter(e)))):
                    WriteConfig.from_options({**REFUSING_BASE, **e})
            elif isinstance(e, Feature) and e.value is not None:
                [prop] = [r for r in PROPERTIES if r.matches(e.name)]
                assert prop.check(e.value, table), f"{row}: {claim!r}: {e.name}={e.value} is no longer refused"
            elif isinstance(e, Feature):
                [state] = [s for s in STATES if s.state == e.name]
                assert state.decision is Decision.REFUSED, f"{row}: {claim!r}: {e.name} is no longer refused"


# ---- links --------------------------------------------------------------------------------------------------
def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_links_resolve(doc):
    text = re.sub(r"^```.*?^```", "", doc.read_text(), flags=re.S | re.M)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"https?://", target):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md":
            content = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
            if anchor not in {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", content, re.M)}:
                broken.append(target)
    assert not broken, f"{doc.name}: links that do not resolve: {broken}"


def test_every_document_is_reachable_from_the_readme():
    seen, todo = set(), [ROOT / "README.md"]
    while todo:
        doc = todo.pop()
        if doc in seen or not doc.exists():
            continue
        seen.add(doc)
        text = re.sub(r"^```.*?^```", "", doc.read_text(), flags=re.S | re.M)
        todo += [(doc.parent / t.partition("#")[0]).resolve() for t in re.findall(r"\]\(([^)\s#]+\.md)(?:#[^)]*)?\)", text)]
    assert not set(documents()) - seen, f"documents no link leads to: {sorted(set(documents()) - seen)}"


# ---- docs/dbt.md: the model settings table ------------------------------------------------------------------
def _settings_table() -> dict[str, list[str]]:
    text = (ROOT / "docs/dbt.md").read_text()
    table = re.search(r"<!-- settings:begin -->\n(.*?)<!-- settings:end -->", text, re.S).group(1)
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_dbt_settings_table_lists_every_model_setting():
    dbt_spark_spelling = {"materialized", "options", "tblproperties"}  # dbt.md's list, "dbt-spark's spelling"
    assert set(_settings_table()) == _settings_macro_keys() - dbt_spark_spelling


def test_dbt_settings_table_has_model_configs_declarations_in_order():
    """One row per declaration of `MODEL_SETTINGS` (the table from_dbt reads), an older name after its setting."""
    assert list(_settings_table()) == [name for s in MC.MODEL_SETTINGS for name in (s.name, *s.aliases)]


def test_dbt_settings_table_names_the_hudi_keys_and_values():
    rows = _settings_table()
    for setting, option in MC.SETTINGS.items():
        values, _, hudi_key = rows[setting]
        assert f"`{option.key}`" in hudi_key, setting
        for choice in option.choices or ():
            assert f"`{choice}`" in values or f"`{choice.lower()}`" in values, (setting, choice)
        for alias in option.value_aliases or ():
            assert f"`{alias.lower()}`" in values, (setting, alias)
    for name, keys in (("compaction", MC.COMPACTION_KEYS), ("cleaning", MC.CLEANING_KEYS)):
        values, _, hudi_key = rows[name]
        assert all(k in values for k in keys), name
        options = [o for o in keys.values() if o is not None]
        assert all(f"`{o.key}`" in hudi_key for o in options), name
    assert all(f"`{v}`" in rows["on_schema_change"][0] for v in MC.ON_SCHEMA_CHANGE)
    assert "`hoodie.cleaner.fileversions.retained`" in rows["cleaning"][2]  # `retained` under file_versions


def _config(**settings) -> tuple:
    cfg = MC.HudiModelConfig.from_dbt({"unique_key": "id", **settings}, "m")
    write = dataclasses.replace(cfg.write_config("t", "db", cfg.strategy), given={})
    return write, cfg.on_schema_change, cfg.strategy


@pytest.mark.parametrize("setting", ["table_type", "incremental_strategy", "index_type", "on_schema_change"])
def test_dbt_settings_table_defaults_are_what_leaving_the_setting_out_does(setting):
    default = re.match(r"`([^`]+)`", _settings_table()[setting][1]).group(1)
    assert _config(**{setting: default}) == _config(), setting


def test_dbt_settings_table_default_cleaning_and_keyless_strategy():
    rows = _settings_table()
    assert _config(cleaning={"policy": "commits", "retained": 10, "automatic": True}) == _config()
    assert "{policy: commits, retained: 10, automatic: true}" in rows["cleaning"][1]
    keyless = MC.HudiModelConfig.from_dbt({}, "m")
    assert f"`{keyless.strategy}` without `unique_key`" in rows["incremental_strategy"][1]
    assert _config(compaction=False) == _config() and rows["compaction"][1] == "off"


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_shared_paths_are_spelled_as_the_checkout():
    """The docs speak of the checkout as /path/to/dbt-hudi and never of this machine's paths."""
    for doc in documents():
        text = doc.read_text()
        assert "/work/" not in text and "/root/" not in text and str(Path.home()) not in text, doc.name
