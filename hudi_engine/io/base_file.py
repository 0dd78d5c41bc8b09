"""Parquet base files: write with Hudi's footer (bloom filter, min/max record key), read with projection/filter.

The footer keys are what `HoodieBloomFilterWriteSupport.finalizeMetadata` writes (FORMAT.md, Base file footer). They are
added to the parquet key/value metadata when the file is closed, not to the Arrow schema, so pyarrow's
`ARROW:schema` entry does not carry a second copy of the ~430 KB base64 filter.
"""
from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hudi_engine.arrays import repeated
from hudi_engine.errors import HudiError, WriteError
from hudi_engine.io.bloom import (
    DEFAULT_FPP,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_NUM_ENTRIES,
    DYNAMIC_V0,
    BloomFilter,
    continuation,
    new_bloom_filter,
    parse_bloom_filter,
)
from hudi_engine.schema import META_COLUMNS
from hudi_engine.storage import OutputFile, Storage

BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
LEGACY_BLOOM_FILTER_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_FILTER_TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY = "hoodie_max_record_key"
HUDI_FOOTER_KEYS = (
    BLOOM_FILTER_KEY, LEGACY_BLOOM_FILTER_KEY, BLOOM_FILTER_TYPE_CODE_KEY, MIN_RECORD_KEY, MAX_RECORD_KEY
)
ARROW_SCHEMA_KEY = "ARROW:schema"
RECORD_KEY_COLUMN = "_hoodie_record_key"

# INT96 timestamps (older Spark writers) are read at Hudi's precision instead of overflowing nanoseconds.
_PARQUET_FORMAT = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))


@dataclass(frozen=True, slots=True)
class BaseFileWriteResult:
    path: str
    size: int
    num_rows: int
    min_key: str | None
    max_key: str | None


@dataclass(frozen=True)
class BaseFileFooter:
    """What a reader learns from a base file's footer alone."""

    bloom_filter: BloomFilter | None
    min_key: str | None
    max_key: str | None
    num_rows: int
    schema: pa.Schema  # Arrow schema of the file; metadata keeps non-Hudi keys such as parquet.avro.schema
    metadata: dict[str, str] = field(default_factory=dict, repr=False)  # every footer key/value, decoded
    compression: str = "gzip"  # the first column chunk's codec

    def rewrite_options(self) -> dict[str, Any]:
        """`write_base_file` options that write a file like this one (its codec, non-Hudi footer keys such as the
        Avro schema, and a bloom filter of its type, when it has one), its Hudi keys made afresh from its rows."""
        has_bloom = BLOOM_FILTER_KEY in self.metadata or LEGACY_BLOOM_FILTER_KEY in self.metadata
        return {"compression": self.compression,
                "extra_metadata": {k: v for k, v in self.metadata.items()
                                   if k not in HUDI_FOOTER_KEYS and k != ARROW_SCHEMA_KEY},
                "bloom_filter_type": self.metadata.get(BLOOM_FILTER_TYPE_CODE_KEY, DYNAMIC_V0) if has_bloom else None}


def _java_order_key_bytes(keys: pa.Array) -> pa.Array:
    """UTF-8 bytes re-mapped so that byte order equals Java `String.compareTo` (UTF-16 code unit) order.

    UTF-8 byte order is code point order. UTF-16 differs only in that U+E000..U+FFFF (UTF-8 lead bytes
    0xEE, 0xEF) sort above supplementary characters (lead bytes 0xF0..0xF4), which are surrogate pairs.
    Moving those two lead bytes to 0xF8, 0xF9 (never valid in UTF-8) yields UTF-16 order; continuation
    bytes are 0x80..0xBF so no other byte changes.
    """
    binary = keys.cast(pa.binary())
    validity, offsets, data = binary.buffers()
    mapped = np.frombuffer(data, dtype=np.uint8).copy() if data is not None else np.empty(0, np.uint8)
    mapped[mapped == 0xEE] = 0xF8
    mapped[mapped == 0xEF] = 0xF9
    buffers = [validity, offsets, pa.py_buffer(mapped)]
    return pa.Array.from_buffers(pa.binary(), len(binary), buffers, binary.null_count, binary.offset)


def record_key_range(keys: pa.Array | pa.ChunkedArray) -> tuple[str | None, str | None]:
    """(min, max) record key by Java `String.compareTo`, as Hudi writes them; (None, None) when there is none."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if len(keys) == keys.null_count:
        return None, None
    mm = pc.min_max(_java_order_key_bytes(keys))

    def back(v: bytes) -> str:
        return v.replace(b"\xf8", b"\xee").replace(b"\xf9", b"\xef").decode("utf-8")

    return back(mm["min"].as_py()), back(mm["max"].as_py())


def _hudi_parquet_type(t: pa.DataType) -> pa.DataType:
    """Timestamps as microseconds UTC (INT64 TIMESTAMP(MICROS, adjusted to UTC), what Avro timestamp-micros reads)."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_hudi_parquet_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_hudi_parquet_type(t.key_type)),
                       t.item_field.with_type(_hudi_parquet_type(t.item_type)), t.keys_sorted)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_hudi_parquet_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_hudi_parquet_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_hudi_parquet_type(t.value_type)), t.list_size)
    return t


def _prepare_table(table: pa.Table, path: str) -> pa.Table:
    names = table.column_names[: len(META_COLUMNS)]
    if tuple(names) != META_COLUMNS:
        raise WriteError(
            f"base file {path}: the first columns must be the Hudi meta columns {META_COLUMNS}, got {names}"
        )
    target = pa.schema([f.with_type(_hudi_parquet_type(f.type)) for f in table.schema])
    if target.equals(table.schema.remove_metadata()):
        return table.replace_schema_metadata(None)
    try:
        return table.replace_schema_metadata(None).cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise WriteError(f"base file {path}: cannot store timestamps as microseconds UTC without loss: {e}") from e


_UNIQUE_COLUMNS = ("_hoodie_commit_seqno", RECORD_KEY_COLUMN)
# Meta columns of one value per file (partition path, file name) or a few (commit times): handed to the parquet
# writer as dictionary arrays, so it hashes no strings where a column is constant (an index array of zeros). The
# file's bytes are the same as from the plain strings; `ARROW:schema` names the plain type. The write handles give
# them as dictionary arrays already (`file_schema`), so a merge decodes and lays them out as indices, not strings.
FEW_VALUED_COLUMNS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name")
DICTIONARY_STRING = pa.dictionary(pa.int32(), pa.string())


def file_schema(schema: pa.Schema, dictionary: Iterable[str] = ()) -> pa.Schema:
    """`schema` with its few-valued string meta columns (`FEW_VALUED_COLUMNS`) and the string columns `dictionary`
    names as dictionary types: the rows a write handle gives a base file writer, and what a merge reads of the base
    file it rewrites (its dictionary-encoded string columns: `dictionary_strings`)."""
    names = {*FEW_VALUED_COLUMNS, *dictionary}
    return pa.schema([f.with_type(DICTIONARY_STRING) if f.name in names and pa.types.is_string(f.type) else f
                      for f in schema], metadata=schema.metadata)

# parquet-mr (what Hudi and Spark write with) judges a column's dictionary on its first page, at most this many values
# (parquet.page.row.count.limit), and writes the column plain when the dictionary and its indices are not smaller
# than the plain values (FallbackValuesWriter, DictionaryValuesWriter.isCompressionSatisfying). parquet-cpp has no
# such check: a near-unique column (ids, timestamps, amounts) costs a dictionary build, then a fallback, and comes out
# larger. The base-file writer applies parquet-mr's rule to the first values it is given.
_FIRST_PAGE_VALUES = 20_000


def _dictionary_pays(column: pa.ChunkedArray) -> bool:
    """Whether parquet-mr would keep `column`'s dictionary, judged on its first page of non-null values."""
    t = column.type
    width: int | None  # bytes of a plain value; None: length-prefixed bytes
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        width = None
    elif pa.types.is_decimal(t):
        return False  # FIXED_LEN_BYTE_ARRAY: parquet-mr's version-1 writer gives it no dictionary
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t):
        width = t.bit_width // 8
    else:
        return True  # booleans (never dictionary-encoded) and nested columns: as parquet-cpp writes them

    def plain(values: pa.Array) -> int:
        if width is not None:
            return width * len(values)
        return 4 * len(values) + (pc.sum(pc.binary_length(values)).as_py() or 0)

    sample = column.slice(0, _FIRST_PAGE_VALUES).drop_null()
    if not len(sample):
        return False  # nothing to encode: a dictionary is no smaller
    distinct = sample.unique()
    bits = max(0, len(distinct) - 1).bit_length()  # the indices' bit width (BytesUtils.getWidthFromMaxInt)
    indices = 1 + (len(sample) * bits + 7) // 8  # bit-packed, after the bit-width byte
    return plain(distinct) + indices < plain(sample)


def dictionary_choices(metadata: pq.FileMetaData) -> dict[str, bool]:
    """Whether each top-level column of a written file (one leaf, first row group) kept its dictionary (a merge
    writes plain again what its old file holds plain: `BaseFileWriter`'s `dictionary`)."""
    if not metadata.num_row_groups:
        return {}
    group = metadata.row_group(0)
    chunks = (group.column(j) for j in range(group.num_columns))
    return {c.path_in_schema: any("DICTIONARY" in e for e in c.encodings) for c in chunks if "." not in c.path_in_schema}


def dictionary_strings(choices: Mapping[str, bool], stored: pa.Schema, schema: pa.Schema) -> list[str]:
    """The string columns of `schema` that a written file (its `dictionary_choices`, its arrow schema `stored`)
    stores as strings and dictionary-encodes: a merge reads them as dictionary arrays, lays out their indices and
    hands the writer the dictionaries, where decoding each value and hashing it again would cost most of a rewrite's
    time."""
    return [c for c, kept in choices.items()
            if kept and c not in _UNIQUE_COLUMNS and c in schema.names and pa.types.is_string(schema.field(c).type)
            and c in stored.names and pa.types.is_string(stored.field(c).type)]


def _dictionary_encoded(column: pa.ChunkedArray) -> pa.Array:
    """`column` as one dictionary array (int32 indices)."""
    n = len(column)
    if n and not column.null_count and pc.all(pc.equal(column, column[0])).as_py():
        return repeated(column[0].as_py(), n, dictionary=True)
    return pc.dictionary_encode(column.combine_chunks())


def _for_writer(table: pa.Table) -> pa.Table:
    """`table` with its few-valued string meta columns as dictionary arrays (`FEW_VALUED_COLUMNS`) and every
    dictionary column in one chunk: chunks of differing dictionaries would make parquet write the column as strings,
    hashed again."""
    for at, f in enumerate(table.schema):
        if f.name not in FEW_VALUED_COLUMNS and not pa.types.is_dictionary(f.type):
            continue
        column = table.column(at)
        if pa.types.is_string(f.type):
            encoded = _dictionary_encoded(column)
        elif pa.types.is_dictionary(f.type) and column.num_chunks > 1:
            encoded = pa.concat_arrays(column.chunks)  # their dictionaries unified
        else:
            continue
        table = table.set_column(at, f.with_type(encoded.type), encoded)
    return table


def _plain(schema: pa.Schema) -> pa.Schema:
    """`schema` with dictionary types named by their value types (what the file stores and reads back as)."""
    return pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema])


@dataclass(frozen=True)
class KeyPrefix:
    """What a base file writer is told of the first `rows` keys it will be given (a merged file's old rows, in file
    order, read from that file's footer): a bloom filter holding exactly them, as building it would leave it (None:
    not known), and their min and max keys (None: not known)."""

    rows: int
    bloom: BloomFilter | None = None
    min_key: str | None = None
    max_key: str | None = None


class BaseFileWriter:
    """A Hudi parquet base file written a chunk at a time: the bloom filter and min/max keys grow with each chunk
    and go into the footer on `close()`. Each `write` becomes one or more row groups (at most `row_group_size`
    rows each), streamed to storage as it is written (`Storage.open_output`: the file appears whole, under its
    name, only on close), so a writer holds the chunk it is given and the bloom filter, never the file.

    The bloom filter (`hoodie.bloom.index.filter.type`, sized by `hoodie.index.bloom.num_entries` / `.fpp` /
    `hoodie.bloom.index.filter.dynamic.max.entries`) and the min/max keys are built from `_hoodie_record_key`.
    `bloom_filter_type=None` is for `hoodie.populate.meta.fields=false`: no Hudi footer keys, as Hudi does.
    The chunks' own schema metadata is dropped (it may be stale footer keys of a file they were read from);
    `extra_metadata` adds footer keys, e.g. `parquet.avro.schema`. `key_prefix`: what is known of the first keys it
    will be given (their filter continues into the file's, where its type and sizing are the file's; their range
    is not computed again).
    `dictionary`: whether to dictionary-encode each named data column (a merge names the columns its old file holds
    plain, `dictionary_choices`); the others as parquet-mr decides.
    """

    def __init__(self, storage: Storage, path: str, *, bloom_filter_type: str | None = DYNAMIC_V0,
                 bloom_num_entries: int = DEFAULT_NUM_ENTRIES, bloom_fpp: float = DEFAULT_FPP,
                 bloom_max_entries: int = DEFAULT_MAX_ENTRIES, compression: str = "gzip",
                 compression_level: int | None = None, row_group_size: int | None = None,
                 extra_metadata: Mapping[str, str] | None = None,
                 key_prefix: KeyPrefix | None = None,
                 dictionary: Mapping[str, bool] | None = None) -> None:
        self.storage, self.path = storage, path
        self.compression, self.compression_level = compression, compression_level
        self.row_group_size = row_group_size
        self.footer: dict[str, str] = dict(extra_metadata or {})
        self.bloom: BloomFilter | None = None
        self._prefix = key_prefix
        self._bloom_continued = False
        self._dictionary = dictionary or {}
        if bloom_filter_type is not None:
            try:
                self.bloom = new_bloom_filter(bloom_num_entries, bloom_fpp, bloom_filter_type, bloom_max_entries)
            except HudiError as e:
                raise WriteError(f"base file {path}: {e}") from e
        self.num_rows = 0
        self.min_key: str | None = None
        self.max_key: str | None = None
        self._out: OutputFile | None = None
        self._writer: pq.ParquetWriter | None = None

    @property
    def size(self) -> int:
        """Bytes written so far (row groups flushed; the footer comes on close)."""
        return self._out.stream.tell() if self._out is not None else 0

    def write(self, table: pa.Table) -> None:
        """Append `table`'s rows (an empty table only fixes the schema of a file that may stay empty)."""
        if table.num_rows == 0 and self._writer is not None:
            return
        table = _prepare_table(table, self.path)
        if self.bloom is not None:
            keys = table.column(RECORD_KEY_COLUMN)
            if keys.null_count:
                row = pc.index(pc.is_null(keys), True).as_py()
                raise WriteError(
                    f"base file {self.path}: {RECORD_KEY_COLUMN} is null at row {self.num_rows + row}; a bloom "
                    "filter needs every key (write with bloom_filter_type=None when hoodie.populate.meta.fields=false)"
                )
            self._add_keys(keys)
        try:
            plain_schema, table = _plain(table.schema), _for_writer(table)
            if self._writer is None:
                self._out = self.storage.open_output(self.path)
                self._writer = pq.ParquetWriter(
                    self._out.stream, table.schema, compression=self.compression,
                    store_schema=False,  # it would name the dictionary types: the plain one is added below
                    compression_level=self.compression_level, write_statistics=True,
                    use_dictionary=self._dictionary_columns(table),
                    # A column that needs more dictionary than this falls back to plain encoding: 1 MB, parquet-mr's
                    # default that Hudi writes with. (256 KB wrote first writes 20% faster, but a merged file whose
                    # old and new rows hold 8,000 distinct comments came out 85 MB instead of 46 MB.)
                    dictionary_pagesize_limit=1024 * 1024,
                    coerce_timestamps="us", allow_truncated_timestamps=False,
                    store_decimal_as_integer=False,  # FIXED_LEN_BYTE_ARRAY decimals, as parquet-avro writes them
                )
                # What pyarrow stores itself (the schema serialized, base64), first among the footer keys as it puts it.
                self._writer.add_key_value_metadata(
                    {ARROW_SCHEMA_KEY: base64.b64encode(plain_schema.serialize()).decode("ascii")})
            self._writer.write_table(table, row_group_size=self.row_group_size)
        except (pa.ArrowException, ValueError) as e:
            self.abort()
            raise WriteError(f"base file {self.path}: parquet write failed: {e}") from e
        self.num_rows += table.num_rows

    def _dictionary_columns(self, table: pa.Table) -> list[str]:
        """The columns the file dictionary-encodes: not the unique meta columns (a dictionary would be built only to
        be dropped), the few-valued ones; a data column as `dictionary` says, given as a dictionary array (a merge
        that read it so: its old file kept the dictionary), else as parquet-mr would decide on the first rows
        written (`_dictionary_pays`)."""
        out = []
        for c, f in zip(table.column_names, table.schema):
            keep = c not in _UNIQUE_COLUMNS if c in META_COLUMNS else self._dictionary.get(c)
            if keep is None and pa.types.is_dictionary(f.type):
                keep = True
            if keep is None:
                keep = _dictionary_pays(table.column(c))
            if keep:
                out.append(c)
        return out

    def _add_keys(self, keys: pa.ChunkedArray) -> None:
        assert self.bloom is not None
        prefix = self._prefix
        if prefix is not None and prefix.bloom is not None and self.num_rows == 0:
            continued = continuation(prefix.bloom, self.bloom, prefix.rows)
            if continued is not None:
                self.bloom, self._bloom_continued = continued, True
        known = 0 if prefix is None else max(0, min(len(keys), prefix.rows - self.num_rows))  # prefix keys given now
        self.bloom.add_many(keys.slice(known) if self._bloom_continued else keys)
        bounds = [self.min_key, self.max_key]
        if known and prefix is not None and prefix.min_key is not None and prefix.max_key is not None:
            bounds += [prefix.min_key, prefix.max_key, *record_key_range(keys.slice(known))]
        else:
            bounds += record_key_range(keys)
        present = [k for k in bounds if k is not None]
        self.min_key, self.max_key = record_key_range(pa.array(present, pa.string()))

    def close(self) -> BaseFileWriteResult:
        if self._writer is None:
            raise WriteError(f"base file {self.path}: no rows written")
        if self.bloom is not None:
            self.footer[BLOOM_FILTER_KEY] = self.bloom.to_base64()
            if "DYNAMIC" in self.bloom.type_code:  # Hudi writes the code only for dynamic filters; absent: SIMPLE
                self.footer[BLOOM_FILTER_TYPE_CODE_KEY] = self.bloom.type_code
            if self.min_key is not None:
                self.footer[MIN_RECORD_KEY] = self.min_key
                self.footer[MAX_RECORD_KEY] = self.max_key  # type: ignore[assignment]
        assert self._out is not None
        try:
            self._writer.add_key_value_metadata(self.footer)
            self._writer.close()
            size = self._out.stream.tell()
            self._out.commit()
        except (pa.ArrowException, ValueError, OSError) as e:
            self.abort()
            raise WriteError(f"base file {self.path}: parquet write failed: {e}") from e
        return BaseFileWriteResult(self.path, size, self.num_rows, self.min_key, self.max_key)

    def abort(self) -> None:
        """Give up the file: nothing of it stays in storage."""
        if self._out is not None:
            self._out.abort()


def write_base_file(storage: Storage, path: str, table: pa.Table, **options) -> BaseFileWriteResult:
    """Write `table` (the 5 meta columns first) as a Hudi parquet base file at `path` (see `BaseFileWriter`)."""
    writer = BaseFileWriter(storage, path, **options)
    writer.write(table)
    return writer.close()


def _decoded(kv: dict[bytes, bytes] | None) -> dict[str, str]:
    return {k.decode("utf-8"): v.decode("utf-8") for k, v in (kv or {}).items()}


def read_footer(storage: Storage, path: str, *, bloom_max_entries: int = DEFAULT_MAX_ENTRIES,
                with_bloom: bool = True) -> BaseFileFooter:
    """Footer of a base file: parsed bloom filter (None if absent or not wanted), min/max record key, row count,
    Arrow schema.

    The bloom key `com.uber.hoodie.bloomfilter` of old files is read too; without a type code the filter is SIMPLE.
    """
    with storage.open_input_file(path) as f:
        return footer_of(_parquet_file(f, path), path, bloom_max_entries=bloom_max_entries, with_bloom=with_bloom)


def _parquet_file(f: pa.NativeFile, path: str) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(f)
    except (pa.ArrowException, OSError) as e:
        raise HudiError(f"base file {path}: not a readable parquet file: {e}") from e


def footer_of(pf: pq.ParquetFile, path: str, *, bloom_max_entries: int = DEFAULT_MAX_ENTRIES,
              with_bloom: bool = True) -> BaseFileFooter:
    """`read_footer` of a base file already open as `pf` (a merge reads its footer, keys and rows through one)."""
    try:
        md = pf.metadata
        arrow_schema = pf.schema_arrow
    except (pa.ArrowException, OSError) as e:
        raise HudiError(f"base file {path}: not a readable parquet file: {e}") from e
    meta = _decoded(md.metadata)
    encoded = meta.get(BLOOM_FILTER_KEY, meta.get(LEGACY_BLOOM_FILTER_KEY))
    bloom = None
    if encoded is not None and with_bloom:
        bloom = parse_bloom_filter(
            encoded, meta.get(BLOOM_FILTER_TYPE_CODE_KEY), max_entries=bloom_max_entries, what=f"base file {path}"
        )
    schema_meta = {k: v for k, v in meta.items() if k not in HUDI_FOOTER_KEYS and k != ARROW_SCHEMA_KEY}
    return BaseFileFooter(
        bloom_filter=bloom,
        min_key=meta.get(MIN_RECORD_KEY),
        max_key=meta.get(MAX_RECORD_KEY),
        num_rows=md.num_rows,
        schema=arrow_schema.with_metadata(schema_meta),
        metadata=meta,
        compression=(md.row_group(0).column(0).compression.lower() if md.num_row_groups and md.num_columns
                     else "gzip"),
    )


def read_base_file(
    storage: Storage,
    path: str,
    columns: list[str] | None = None,
    filter: pc.Expression | list | None = None,
    *,
    allow_missing: bool = False,
) -> pa.Table:
    """Read a base file, projecting `columns` (file order if None) and applying `filter`.

    `filter` is a pyarrow dataset expression (row groups are pruned by their statistics) or DNF tuples
    as `pyarrow.parquet.filters_to_expression` takes. It may name columns that are not projected.
    `allow_missing` skips requested columns the file lacks (added to the table after it was written).
    """
    if isinstance(filter, list):
        filter = pq.filters_to_expression(filter)
    with storage.open_input_file(path) as f:
        try:
            fragment = _PARQUET_FORMAT.make_fragment(f)
            if allow_missing and columns is not None:
                present = set(fragment.physical_schema.names)
                columns = [c for c in columns if c in present]
            table = fragment.to_table(columns=columns, filter=filter)
        except (pa.ArrowException, OSError, KeyError, TypeError) as e:
            raise HudiError(f"base file {path}: read of columns {columns} with filter {filter} failed: {e}") from e
    return table.replace_schema_metadata(None)


def read_record_keys(storage: Storage, path: str) -> pa.Array:
    """The `_hoodie_record_key` column of a base file, in file order. Read by `pq.ParquetFile` on one thread: a
    dataset scan costs a write task's per-file key read (new keys of a MOR upsert) half as much again."""
    with storage.open_input_file(path) as f:
        return record_keys_of(_parquet_file(f, path), path)


def record_keys_of(pf: pq.ParquetFile, path: str) -> pa.Array:
    """`read_record_keys` of a base file already open as `pf`."""
    try:
        table = pf.read([RECORD_KEY_COLUMN], use_threads=False)
    except (pa.ArrowException, OSError, KeyError, TypeError) as e:
        raise HudiError(f"base file {path}: read of column {RECORD_KEY_COLUMN} failed: {e}") from e
    if table.num_columns != 1:  # ParquetFile skips a column the file lacks
        raise HudiError(f"base file {path} has no {RECORD_KEY_COLUMN} column: it was written without meta fields")
    keys = table.column(0)
    return keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
