"""The columnar Avro codec: schemaless Avro binary records read and written one *field* at a time for all
records at once, with numpy, instead of one record at a time.

fastavro handles one record at a time (~7 us for ten fields here). Given the start offset of every record, the
decoder reads the first field of all of them with numpy, which gives the offsets of the second field, and so on.
The encoder builds each field's bytes for all rows as a binary column and interleaves the columns row by row.
Measured (100k records, 10 columns incl. 5 meta strings, timestamp, decimal) it is 4-6x faster than fastavro both
ways. It covers records, [null, T] unions, every primitive, enum and fixed, which is every flat Spark/Hudi schema;
for anything else (arrays, maps, other unions) `Columnar` raises `Unsupported` and `avro_codec`, the entry point the
engine imports, uses fastavro. It reads and writes the *raw* values (no logical types): `avro_codec`'s plans convert
them from and to their Arrow types. The results are checked byte for byte against fastavro in
tests/io/test_avro_codec.py.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrays import np_bytes, valid_mask
from ..avro_visitor import full_name
from ..errors import LogFormatError, SchemaError
from ..schema import AVRO_PRIMITIVE_TYPES


class Unsupported(Exception):
    """The schema has a construct the columnar codec does not handle; fastavro is used instead."""


_VARINT_BYTES = 10
_NAMED_OR_COMPLEX = ("record", "error", "enum", "fixed", "array", "map")
_SHIFTS = (np.arange(_VARINT_BYTES, dtype=np.uint64) * np.uint64(7)).astype(np.uint64)
_AR10 = np.arange(_VARINT_BYTES, dtype=np.int64)


class Columnar:
    """Columnar Avro codec for one (logical-type-free) writer schema and the raw Arrow type of its records."""

    # Per-call state, set on the copy `decode` makes.
    _size: int
    _where: str

    def __init__(self, schema: dict, raw: pa.DataType) -> None:
        self.names: dict[str, tuple[dict, str]] = {}  # full name -> (definition, namespace for its children)
        self.schema = schema
        self.raw = raw
        self._check(schema, "", frozenset())

    # ---- schema walk

    def _resolve(self, node: Any, ns: str) -> tuple[Any, str]:
        """(definition or primitive name, namespace its nested names resolve in) of a type node."""
        while True:
            if isinstance(node, dict):
                kind = node.get("type")
                if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _NAMED_OR_COMPLEX):
                    node = kind  # {"type": <type>}: a primitive, a nested type or a reference by name
                    continue
                if kind in ("record", "error", "enum", "fixed"):
                    full, child_ns = full_name(node, ns)
                    self.names.setdefault(full, (node, child_ns))
                    return node, child_ns
                return node, ns
            if isinstance(node, str) and node not in AVRO_PRIMITIVE_TYPES:
                full = node if "." in node or not ns else f"{ns}.{node}"
                found = self.names.get(full) or self.names.get(node)
                if found is None:
                    raise SchemaError(f"unknown Avro type name {node!r}")
                return found
            return node, ns

    def _check(self, node: Any, ns: str, seen: frozenset) -> None:
        node, ns = self._resolve(node, ns)
        if isinstance(node, list):
            if len(node) != 2 or "null" not in node or node[0] == node[1]:
                raise Unsupported("union")
            self._check(node[1 - node.index("null")], ns, seen)
        elif isinstance(node, dict):
            kind = node["type"]
            if kind in ("array", "map"):
                raise Unsupported(kind)
            if kind in ("record", "error"):
                if id(node) in seen:
                    raise Unsupported("recursive record")
                for f in node["fields"]:
                    self._check(f["type"], ns, seen | {id(node)})

    # ---- decoding

    def decode(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray, where: str) -> pa.Array:
        padded = np.concatenate([data, np.zeros(_VARINT_BYTES + 8, np.uint8)])
        call = copy.copy(self)  # per-call state on a copy: a cached codec may be shared between threads
        call._size = len(data)
        call._where = where
        arr, pos = call._read(self.schema, self.raw, padded, starts.astype(np.int64), "")
        bad = pos != ends
        if bad.any():
            i = int(np.argmax(bad))
            raise LogFormatError(
                f"{where}: record {i} is {int(ends[i] - starts[i])} bytes but decoding it used "
                f"{int(pos[i] - starts[i])}: "
                "the schema does not match the records"
            )
        return arr

    def _bounds(self, pos: np.ndarray, need: np.ndarray | int = 0) -> None:
        if len(pos) and (int((pos + need).max()) > self._size or int(pos.min()) < 0):
            raise LogFormatError(f"{self._where}: an Avro value runs past the end of the data; the records are corrupt")

    def _varint(self, data: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self._bounds(pos, 1)
        byte = data[pos]
        more = byte >= 0x80
        v = (byte & 0x7F).astype(np.uint64)
        nbytes = np.ones(len(pos), np.int64)
        k = 1
        while more.any():  # one pass per byte position, over the values still going
            if k == _VARINT_BYTES:
                raise LogFormatError(f"{self._where}: an Avro varint is longer than 10 bytes; the records are corrupt")
            rows = np.flatnonzero(more)
            byte = data[pos[rows] + k]
            v[rows] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
            nbytes[rows] += 1
            more[rows] = byte >= 0x80
            k += 1
        value = (v >> np.uint64(1)).astype(np.int64) ^ -(v & np.uint64(1)).astype(np.int64)
        new_pos = pos + nbytes
        self._bounds(new_pos)
        return value, new_pos

    def _read(
        self, node: Any, raw: pa.DataType, data: np.ndarray, pos: np.ndarray, ns: str
    ) -> tuple[pa.Array, np.ndarray]:
        node, ns = self._resolve(node, ns)
        n = len(pos)
        if isinstance(node, list):
            null_branch = node.index("null")
            branch, pos = self._varint(data, pos)
            if len(branch) and not np.isin(branch, (0, 1)).all():
                raise LogFormatError(f"{self._where}: union branch index outside [0, 1]; the records are corrupt")
            valid = branch != null_branch
            if valid.all():
                return self._read(node[1 - null_branch], raw, data, pos, ns)
            sub, sub_pos = self._read(node[1 - null_branch], raw, data, pos[valid], ns)
            pos = pos.copy()
            pos[valid] = sub_pos
            take = pa.array(np.cumsum(valid) - 1, mask=~valid)
            return sub.take(take), pos
        if isinstance(node, str):
            return self._read_primitive(node, raw, data, pos)
        kind = node["type"]
        if kind in ("record", "error"):
            children = []
            for f, rf in zip(node["fields"], raw):
                arr, pos = self._read(f["type"], rf.type, data, pos, ns)
                children.append(arr)
            if not children:
                return pa.array([{}] * n, raw), pos
            return pa.StructArray.from_arrays(children, fields=list(raw)), pos
        if kind == "enum":
            index, pos = self._varint(data, pos)
            symbols = node["symbols"]
            if len(index) and (index.min() < 0 or index.max() >= len(symbols)):
                raise LogFormatError(f"{self._where}: enum index outside {node.get('name')}'s {len(symbols)} symbols")
            return pa.array(symbols, pa.string()).take(pa.array(index)), pos
        if kind == "fixed":
            size = int(node["size"])
            self._bounds(pos, size)
            chunk = data[pos[:, None] + np.arange(size)] if size else np.zeros((n, 0), np.uint8)
            return pa.Array.from_buffers(pa.binary(size), n, [None, pa.py_buffer(chunk.tobytes())]), pos + size
        raise Unsupported(kind)

    def _read_primitive(
        self, kind: str, raw: pa.DataType, data: np.ndarray, pos: np.ndarray
    ) -> tuple[pa.Array, np.ndarray]:
        n = len(pos)
        if kind in ("int", "long"):
            value, pos = self._varint(data, pos)
            if kind == "int":
                if n and (value.min() < -(2**31) or value.max() >= 2**31):
                    raise LogFormatError(
                        f"{self._where}: an Avro int is out of the 32-bit range; the records are corrupt"
                    )
                return pa.array(value.astype(np.int32), pa.int32()), pos
            return pa.array(value, pa.int64()), pos
        if kind in ("float", "double"):
            width = 4 if kind == "float" else 8
            self._bounds(pos, width)
            chunk = np.ascontiguousarray(data[pos[:, None] + np.arange(width)])
            values = chunk.view("<f4" if width == 4 else "<f8").reshape(n)
            return pa.array(values, AVRO_PRIMITIVE_TYPES[kind]), pos + width
        if kind == "boolean":
            self._bounds(pos, 1)
            return pa.array(data[pos] != 0, pa.bool_()), pos + 1
        if kind in ("string", "bytes"):
            length, pos = self._varint(data, pos)
            if n and length.min() < 0:
                raise LogFormatError(f"{self._where}: negative Avro {kind} length; the records are corrupt")
            self._bounds(pos, length)
            offsets = np.zeros(n + 1, np.int64)
            np.cumsum(length, out=offsets[1:])
            total = int(offsets[-1])
            if total >= 2**31:
                raise Unsupported("more than 2 GiB of strings")
            index = np.repeat(pos - offsets[:-1], length) + np.arange(total, dtype=np.int64)
            values = data[index]
            arrow_type = pa.string() if kind == "string" else pa.binary()
            arr = pa.Array.from_buffers(
                arrow_type, n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(values.tobytes())]
            )
            if kind == "string":
                try:
                    arr.validate(full=True)
                except pa.ArrowInvalid as e:
                    raise LogFormatError(f"{self._where}: an Avro string is not valid UTF-8: {e}") from None
            return arr, pos + length
        if kind == "null":
            return pa.nulls(n, raw), pos
        raise Unsupported(kind)

    # ---- encoding
    #
    # A field's encoding is a list of pieces; a record's bytes are its pieces concatenated row by row, done once
    # at the end so every byte is copied once. A piece is (rows, offsets, data, width): `rows` the record
    # indices it has bytes for (None = all, in order), then either fixed `width` bytes per row or `offsets`.

    def encode(self, arr: pa.Array, *, framed: bool) -> tuple[np.ndarray, np.ndarray]:
        return _concat_pieces(self._write(self.schema, arr, "", ""), len(arr), length_prefix=framed)

    def _write(self, node: Any, arr: pa.Array, ns: str, path: str) -> list[Piece]:
        node, ns = self._resolve(node, ns)
        n = len(arr)
        if isinstance(node, list):
            null_branch = node.index("null")
            valid = valid_mask(arr)
            branch_byte = np.where(valid, 2 * (1 - null_branch), 2 * null_branch).astype(np.uint8)
            branch: Piece = (None, None, branch_byte, 1)
            if valid.all():
                return [branch, *self._write(node[1 - null_branch], arr, ns, path)]
            rows = np.flatnonzero(valid)
            sub = self._write(node[1 - null_branch], arr.filter(pa.array(valid)), ns, path)
            return [branch, *[(rows if r is None else rows[r], o, d, w) for r, o, d, w in sub]]
        if arr.null_count and node != "null":
            i = int(np.argmax(~valid_mask(arr)))
            raise SchemaError(
                f"row {i}: field {path or '<record>'} is null "
                f"but its Avro type {json.dumps(node)[:100]} is not nullable"
            )
        if isinstance(node, str):
            return self._write_primitive(node, arr)
        kind = node["type"]
        if kind in ("record", "error"):
            pieces: list[Piece] = []
            for f, child in zip(node["fields"], arr.flatten()):
                pieces += self._write(f["type"], child, ns, f"{path}.{f['name']}" if path else f["name"])
            return pieces
        if kind == "enum":
            index = pc.index_in(arr, value_set=pa.array(node["symbols"], pa.string()))
            if index.null_count:
                i = int(np.argmax(~valid_mask(index)))
                raise SchemaError(f"row {i}: {arr[i].as_py()!r} is not a symbol of enum {node.get('name')}")
            return [_varint_piece(index.to_numpy(zero_copy_only=False).astype(np.int64))]
        if kind == "fixed":
            size = int(node["size"])
            if arr.type != pa.binary(size):
                raise SchemaError(f"field {path}: {arr.type} values for Avro fixed of size {size}")
            data = np_bytes(arr.buffers()[1])[arr.offset * size : (arr.offset + n) * size]
            return [(None, None, data, size)]
        raise Unsupported(kind)

    def _write_primitive(self, kind: str, arr: pa.Array) -> list[Piece]:
        n = len(arr)
        if kind in ("int", "long"):
            return [_varint_piece(arr.to_numpy(zero_copy_only=False).astype(np.int64))]
        if kind in ("float", "double"):
            width = 4 if kind == "float" else 8
            values = np.ascontiguousarray(arr.to_numpy(zero_copy_only=False).astype("<f4" if width == 4 else "<f8"))
            return [(None, None, values.view(np.uint8), width)]
        if kind == "boolean":
            return [(None, None, arr.to_numpy(zero_copy_only=False).astype(np.uint8), 1)]
        if kind in ("string", "bytes"):
            large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
            offs = np.frombuffer(arr.buffers()[1], np.int64 if large else np.int32)[arr.offset : arr.offset + n + 1]
            offs = offs.astype(np.int64)
            data = np_bytes(arr.buffers()[2])[offs[0] : offs[-1]] if n else np.zeros(0, np.uint8)
            return [_varint_piece(np.diff(offs)), (None, offs - offs[0], data, None)]
        if kind == "null":
            return []
        raise Unsupported(kind)


_INT32_BYTES = 2**31  # records past this many bytes are joined as large_binary (64-bit offsets)

Piece = tuple  # (rows: int64[m] | None, offsets: int64[m+1] | None, data: uint8[...], width: int | None)


def _varint_piece(values: np.ndarray) -> Piece:
    """Zigzag varints of int64 `values`, one per row."""
    n = len(values)
    v = ((values << 1) ^ (values >> 63)).view(np.uint64)
    nbytes = np.ones(n, np.int64)
    for k in range(1, _VARINT_BYTES):
        over = v >= (np.uint64(1) << np.uint64(7 * k))
        if not over.any():
            break
        nbytes += over
    width = int(nbytes.max(initial=1))
    b = ((v[:, None] >> _SHIFTS[None, :width]) & np.uint64(0x7F)).astype(np.uint8)
    b |= np.where(_AR10[None, :width] < (nbytes[:, None] - 1), 0x80, 0).astype(np.uint8)
    if width == 1 or (nbytes == width).all():
        return None, None, b.reshape(-1), width
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(nbytes, out=offsets[1:])
    return None, offsets, b[_AR10[None, :width] < nbytes[:, None]], None  # row-major: each row's bytes in order


def _concat_pieces(pieces: list[Piece], n: int, *, length_prefix: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) of n records whose bytes are the pieces concatenated row by row, in piece order.

    With `length_prefix` each record is preceded by its length as a big-endian int32 (as in an AVRO_DATA block), and
    the offsets include the prefixes. Runs of pieces with bytes of one width in every row are laid side by side in
    one matrix first; Arrow's `binary_join_element_wise` then joins the columns row by row (a numpy scatter of
    every byte costs a third more).
    """
    lengths: list[np.ndarray | int] = []
    total = np.zeros(n, np.int64)
    for rows, offsets, _data, width in pieces:
        length = np.diff(offsets) if offsets is not None else width
        if rows is not None:
            full = np.zeros(n, np.int64)
            full[rows] = length
            length = full
        lengths.append(length)
        total += length
    if length_prefix:
        pieces = [(None, None, total.astype(">i4").view(np.uint8), 4), *pieces]
        lengths = [4, *lengths]
        total += 4
    columns: list[tuple[np.ndarray | int, np.ndarray]] = []  # (bytes per row, or one width for all; the bytes)
    run: list[tuple[np.ndarray, int]] = []

    def end_run() -> None:
        if len(run) > 1:
            width = sum(w for _, w in run)
            matrix = np.empty((n, width), np.uint8)
            at = 0
            for data, w in run:
                matrix[:, at : at + w] = data.reshape(n, w)
                at += w
            columns.append((width, matrix.reshape(-1)))
        elif run:
            columns.append((run[0][1], run[0][0]))
        run.clear()

    for (rows, _offsets, data, width), length in zip(pieces, lengths):
        if rows is None and width is not None:
            run.append((data, width))
        else:
            end_run()
            columns.append((length, data))
    end_run()
    record_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(total, out=record_offsets[1:])
    size = int(record_offsets[-1])
    if not columns or n == 0:
        return record_offsets, np.zeros(size, np.uint8)
    large = size >= _INT32_BYTES
    binary, offset_type = (pa.large_binary(), np.int64) if large else (pa.binary(), np.int32)
    arrays = []
    for length, data in columns:
        offsets = np.zeros(n + 1, offset_type)
        if isinstance(length, int):
            offsets[1:] = np.arange(1, n + 1, dtype=offset_type) * length
        else:
            np.cumsum(length, out=offsets[1:])
        arrays.append(pa.Array.from_buffers(binary, n, [None, pa.py_buffer(offsets),
                                                        pa.py_buffer(np.ascontiguousarray(data))]))
    joined = arrays[0] if len(arrays) == 1 else pc.binary_join_element_wise(*arrays, pa.scalar(b"", binary))
    return record_offsets, np.frombuffer(joined.buffers()[2], np.uint8, size) if size else np.zeros(0, np.uint8)
