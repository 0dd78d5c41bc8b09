"""The procedures that read log files block by block: `show_logfile_metadata` (each block's instant, type, record
count, header and footer) and `show_logfile_records` (the records of the data blocks, unmerged), for the log files
a glob names, as Hudi 1.2's procedures of those names read them."""
from __future__ import annotations

import fnmatch
import json
from typing import Any

from hudi_engine.errors import ConfigError
from hudi_engine.io.log_block import BlockType, LogBlock, data_block_records
from hudi_engine.io.log_format import read_log_blocks
from hudi_engine.location import META_FOLDER
from hudi_engine.procedures.arguments import Arguments
from hudi_engine.procedures.commits import Row
from hudi_engine.storage import Storage
from hudi_engine.table import HudiTable

_DATA = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.CDC_DATA)
_GLOB = "*?["


def _matching(storage: Storage, pattern: str) -> list[str]:
    """The files `pattern` (a path glob, in its file names and folders) names, `.hoodie` left out, sorted."""
    parts = pattern.split("/")
    fixed = next((i for i, p in enumerate(parts) if any(c in p for c in _GLOB)), len(parts))
    if fixed == len(parts):
        return [pattern] if storage.exists(pattern) and META_FOLDER + "/" not in pattern else []
    found = ["/".join(parts[:fixed]) or "/"]
    for i, part in enumerate(parts[fixed:], start=fixed):
        last = i == len(parts) - 1
        found = [e.path for folder in found if storage.is_dir(folder) for e in storage.list_dir(folder)
                 if e.name != META_FOLDER and fnmatch.fnmatchcase(e.name, part) and e.is_dir != last]
    return sorted(found)


def _blocks(args: Arguments) -> list[tuple[str, LogBlock]]:
    table = HudiTable.load(args.table_path())
    pattern = args["log_file_path_pattern"]
    paths = _matching(table.storage, pattern)
    if not paths:
        raise ConfigError(f"{args.procedure.name}: no log file matches log_file_path_pattern => '{pattern}' (a glob "
                          f"of the files' paths, e.g. '{table.base_path}/<partition>/.*.log.*')")
    return [(p, b) for p in paths for b in read_log_blocks(table.storage.read_bytes(p), file_name=p)]


def _header_text(entries: dict) -> str:
    return json.dumps({k.name: v for k, v in entries.items()}, separators=(",", ":"))


def _record_count(block: LogBlock) -> int:
    return data_block_records(block).num_rows if block.block_type in _DATA else 0


def show_logfile_metadata(args: Arguments) -> list[Row]:
    rows: list[Row] = []
    corrupt = dummy = 0
    for _, block in _blocks(args):
        instant = block.instant_time
        if block.block_type is BlockType.CORRUPT and instant is None:
            corrupt += 1
            instant = f"corrupt_block_{corrupt}"
        elif instant is None:
            dummy += 1
            instant = f"dummy_instant_time_{dummy}"
        rows.append((instant, _record_count(block), f"{block.block_type.name}_BLOCK", _header_text(block.header),
                     _header_text(block.footer)))
    return rows[: max(args["limit"], 0)]


def _avro_text(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None), list, dict)) else str(value)


def show_logfile_records(args: Arguments) -> list[Row]:
    """The records of the matching files' data blocks, in file order, as Avro prints a record (unmerged: `merge =>
    true`, the merged view, is refused; a snapshot read gives it)."""
    if args["merge"]:
        raise ConfigError("Argument: merge => true of show_logfile_records is not served (the merged records are a "
                          "snapshot read of the table); leave it out for the blocks' records")
    rows: list[Row] = []
    limit = max(args["limit"], 0)
    for _, block in _blocks(args):
        if block.block_type not in _DATA:
            continue
        for record in data_block_records(block).to_pylist():
            rows.append((json.dumps({k: _avro_text(v) for k, v in record.items()}),))
            if len(rows) >= limit:
                return rows
    return rows
