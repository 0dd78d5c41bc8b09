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
* Plain blocks: the layout tree names files that exist.
* Model settings quoted in prose (`compaction={...}`) are known and validate; links between the documents resolve,
  anchors included; docs/dbt.md's settings table matches model_config.
"""
from __future__ import annotations

import ast
import dataclasses
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
from hudi_engine.write_pipeline import write_table

ALL = blocks()
LANGS = {"python", "bash", "yaml", "sql", ""}

# Python blocks that run (the key: document and a string of the block), and where.
RUN_HERE = {("docs/python-api.md", 't.read_snapshot()')}
RUN_ON_SPARK = {  # tests/spark/test_docs_examples.py
    ("docs/python-api.md", "result = write(df, \"/data/trips\""),
    ("docs/python-api.md", "read_table(spark, \"/data/orders\")"),
    ("docs/keyless.md", "write(df, \"s3://bucket/events\""),
    ("docs/spark-sql.md", "print(last_write_result())"),
}
# Python blocks checked against the code only, and why they are not run.
NOT_RUN = {
    ("docs/operations.md", 'SparkSession.builder.master("yarn")'): "needs a YARN cluster and a packed venv on HDFS",
    ("docs/native-read.md", "native_conf"): "configures a session builder before its JVM starts; the test session "
                                            "is built that way (tests/spark/conftest.py, local_spark_session(native=True))",
    ("docs/cdc.md", "read_changes(begin, end, images=\"struct\")"): "the same calls on tables written there: "
                                                                     "tests/test_cdc_query.py",
    ("docs/cdc.md", "hudi_engine.cdc.images"): "the same options on a table written there: tests/spark/test_cdc_read.py",
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
