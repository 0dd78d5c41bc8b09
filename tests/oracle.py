"""hudi-rs (the `hudi` package from PyPI) as the independent oracle: read a table the way it does."""
from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions
from hudi import HudiTable as RsTable

KEY = "_hoodie_record_key"


def _table(batches: list[pa.RecordBatch], schema: pa.Schema | None = None) -> pa.Table:
    if not batches:
        return schema.empty_table() if schema is not None else pa.table({})
    return pa.Table.from_batches(batches)


def _rs_table(path: Path | str) -> RsTable:
    """hudi-rs on a local path, or on an `s3://bucket/path?endpoint_override=host:port&scheme=http&region=...` URI
    (the form pyarrow takes; hudi-rs gets the same endpoint as storage options, credentials from the environment)."""
    text = str(path)
    if "://" not in text:
        return RsTable(str(Path(path).resolve()))
    base, _, query = text.partition("?")
    params = dict(urllib.parse.parse_qsl(query))
    options = {"aws_region": params.get("region") or os.environ.get("AWS_REGION", "us-east-1")}
    if params.get("endpoint_override"):
        options["aws_endpoint_url"] = f"{params.get('scheme', 'https')}://{params['endpoint_override']}"
        options["aws_allow_http"] = str(params.get("scheme") == "http").lower()
    for env, key in (("AWS_ACCESS_KEY_ID", "aws_access_key_id"), ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key")):
        if os.environ.get(env):
            options[key] = os.environ[env]
    return RsTable(base, options)


def rs_snapshot(path: Path | str, as_of: str | None = None, read_optimized: bool = False) -> pa.Table:
    t = _rs_table(path)
    opts = HudiReadOptions()
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    if read_optimized:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    return _table(t.read(opts), t.get_schema_with_meta_fields())


def completed(path: Path | str, instant: str) -> str:
    """The bound that names commit `instant` in an incremental range: its completion time on table versions 8+
    (ranges of completion times), the instant itself before."""
    from hudi_engine import HudiTable

    return HudiTable.load(str(path)).timeline.completion_times().get(instant, instant)


def rs_incremental(path: Path | str, start: str, end: str) -> pa.Table:
    t = _rs_table(path)
    opts = (HudiReadOptions().with_query_type(HudiQueryType.Incremental)
            .with_start_timestamp(start).with_end_timestamp(end))
    return _table(t.read(opts), t.get_schema_with_meta_fields())


def sort_rows(t: pa.Table, key: str = KEY) -> pa.Table:
    keys = [key] if key in t.column_names else []
    keys += [c for c in t.column_names if c != key and pa.types.is_primitive(t.schema.field(c).type)][:3]
    return t.sort_by([(k, "ascending") for k in keys]) if keys else t


def assert_same_rows(ours: pa.Table, theirs: pa.Table, what: str, key: str = KEY) -> None:
    """Whole tables equal, all columns, sorted by record key; types may differ where values agree."""
    assert ours.column_names == theirs.column_names, f"{what}: columns {ours.column_names} != {theirs.column_names}"
    assert ours.num_rows == theirs.num_rows, f"{what}: {ours.num_rows} rows, hudi-rs has {theirs.num_rows}"
    ours, theirs = sort_rows(ours, key), sort_rows(theirs, key)
    for name in ours.column_names:
        a, b = ours.column(name), theirs.column(name)
        if a.type != b.type:
            a = a.cast(b.type)
        assert a.to_pylist() == b.to_pylist(), f"{what}: column {name} differs:\nours   {a.to_pylist()}\nhudi-rs {b.to_pylist()}"
