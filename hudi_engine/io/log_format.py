"""Hudi log files: a sequence of blocks (FORMAT.md, Log block framing), with torn and corrupt block detection as
Java's reader does it (FORMAT.md, Corrupt blocks).

Reading keeps every byte: the blocks of a file (CORRUPT ones included) tile it exactly, and
`encode_log_file(read_log_blocks(data)) == data` for any input that does not raise.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import pyarrow as pa

from ..errors import LogFormatError
from .log_block import MAGIC, BlockType, HeaderKey, LogBlock

LOG_FORMAT_VERSION = 1

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_FIXED_HEAD = struct.Struct(">qii")  # blockSize, logFormatVersion, blockType
_MAGIC_LEN = len(MAGIC)
# version + type + empty header + content length + empty footer + trailing length: an empty block's blockSize
_MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8


# --------------------------------------------------------------------------------------------- reading


def read_log_blocks(
    data: bytes | bytearray | memoryview | pa.NativeFile | pa.Buffer, *, file_name: str = ""
) -> list[LogBlock]:
    """Every block of a log file, in file order.

    A block whose framing does not check out (FORMAT.md, Corrupt blocks: block size past EOF, trailing length
    mismatch, or no MAGIC/EOF right after it), and any bytes that are not at a MAGIC, become a CORRUPT block that
    runs to the next "#HUDI#" (or EOF); reading goes on from there. A torn last block is therefore CORRUPT, never an
    error. A well-framed block with an unknown block type, header key or log format version, or whose inner
    lengths disagree with its size, raises LogFormatError (Java throws there too).
    """
    buf = _as_bytes(data)
    size = len(buf)
    blocks: list[LogBlock] = []
    pos = 0
    while pos < size:
        if buf.startswith(MAGIC, pos):
            end = _framed_end(buf, pos)
            if end is not None:
                blocks.append(_parse_block(buf, pos, end, file_name))
                pos = end
                continue
        # The region ends at the next MAGIC that starts after `pos`, even one overlapping this MAGIC: a torn
        # "#HUDI" followed by an appended block reads as "#HUDI#HUDI#...", and that block must survive.
        nxt = buf.find(MAGIC, pos + 1)
        nxt = size if nxt < 0 else nxt
        blocks.append(LogBlock(BlockType.CORRUPT, {}, buf[pos:nxt], {}, offset=pos, size=nxt - pos, source=file_name))
        pos = nxt
    return blocks


def _as_bytes(data: bytes | bytearray | memoryview | pa.NativeFile | pa.Buffer) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, pa.NativeFile):
        whole = data.read_at(data.size(), 0)  # random access: the file position is left alone
        return whole if isinstance(whole, bytes) else whole.to_pybytes()
    if isinstance(data, pa.Buffer):
        return data.to_pybytes()
    return bytes(data)


def _framed_end(buf: bytes, pos: int) -> int | None:
    """End offset of the block whose MAGIC is at `pos`, or None if Java's reader calls it corrupt."""
    size = len(buf)
    start = pos + _MAGIC_LEN + 8  # after MAGIC and blockSize
    if start > size:
        return None
    (block_size,) = _I64.unpack_from(buf, pos + _MAGIC_LEN)
    end = start + block_size
    if block_size < _MIN_BLOCK_SIZE or end > size:
        return None
    (total,) = _I64.unpack_from(buf, end - 8)
    if total - _MAGIC_LEN != block_size:
        return None
    if size - end >= _MAGIC_LEN and not buf.startswith(MAGIC, end):
        return None  # Java: no trailing garbage after a block; fewer than 6 bytes left read as EOF
    return end


def _parse_block(buf: bytes, pos: int, end: int, file_name: str) -> LogBlock:
    where = f"{file_name or '<log file>'}: block at offset {pos}"
    block_size, version, type_ordinal = _FIXED_HEAD.unpack_from(buf, pos + _MAGIC_LEN)
    if version != LOG_FORMAT_VERSION:
        raise LogFormatError(f"{where}: log format version {version}; only version {LOG_FORMAT_VERSION} is supported")
    try:
        block_type = BlockType(type_ordinal)
    except ValueError:
        raise LogFormatError(
            f"{where}: unknown block type ordinal {type_ordinal} at offset {pos + _MAGIC_LEN + 12}; "
            f"expected one of {[int(t) for t in BlockType]}"
        ) from None
    limit = end - 8  # the trailing totalBlockLength
    p = pos + _MAGIC_LEN + 16
    header, p = _read_map(buf, p, limit, where, "header")
    if p + 8 > limit:
        raise LogFormatError(f"{where}: content length at offset {p} runs past the block end {limit}")
    (content_len,) = _I64.unpack_from(buf, p)
    p += 8
    if content_len < 0 or p + content_len > limit:
        raise LogFormatError(f"{where}: content length {content_len} at offset {p - 8} runs past the block end {limit}")
    content = buf[p : p + content_len]
    p += content_len
    footer, p = _read_map(buf, p, limit, where, "footer")
    if p != limit:
        raise LogFormatError(
            f"{where}: header, content and footer end at offset {p}, but blockSize {block_size} puts the end at {limit}"
        )
    return LogBlock(block_type, header, content, footer, offset=pos, size=end - pos, source=file_name)


def _read_map(buf: bytes, p: int, limit: int, where: str, what: str) -> tuple[dict[HeaderKey, str], int]:
    if p + 4 > limit:
        raise LogFormatError(f"{where}: {what} entry count at offset {p} runs past the block end {limit}")
    (count,) = _I32.unpack_from(buf, p)
    p += 4
    if count < 0 or count > (limit - p) // 8:
        raise LogFormatError(f"{where}: {what} entry count {count} at offset {p - 4} does not fit the block")
    out: dict[HeaderKey, str] = {}
    for _ in range(count):
        if p + 8 > limit:
            raise LogFormatError(f"{where}: {what} entry at offset {p} runs past the block end {limit}")
        key_ordinal, length = struct.unpack_from(">ii", buf, p)
        try:
            key = HeaderKey(key_ordinal)
        except ValueError:
            raise LogFormatError(
                f"{where}: unknown {what} key ordinal {key_ordinal} at offset {p}; "
                f"expected one of {[int(k) for k in HeaderKey]}"
            ) from None
        p += 8
        if length < 0 or p + length > limit:
            raise LogFormatError(
                f"{where}: {what} value of {key.name} at offset {p - 4} has length {length}, past the block end"
            )
        if key in out:
            raise LogFormatError(f"{where}: {what} key {key.name} appears twice (second at offset {p - 8})")
        # surrogateescape keeps non-UTF-8 bytes (0.14.0 wrote headers in the platform charset) round-trippable
        out[key] = buf[p : p + length].decode("utf-8", "surrogateescape")
        p += length
    return out, p


# --------------------------------------------------------------------------------------------- writing


def encode_block(block: LogBlock) -> bytes:
    """On-disk bytes of one block. A CORRUPT block is its raw bytes, written back unchanged."""
    if block.block_type == BlockType.CORRUPT:
        return bytes(block.content)
    header = _encode_map(block.header)
    footer = _encode_map(block.footer)
    content = bytes(block.content)
    block_size = 4 + 4 + len(header) + 8 + len(content) + len(footer) + 8
    return b"".join(
        (
            MAGIC,
            _FIXED_HEAD.pack(block_size, block.format_version, int(block.block_type)),
            header,
            _I64.pack(len(content)),
            content,
            footer,
            _I64.pack(block_size + _MAGIC_LEN),
        )
    )


def encode_log_file(blocks: Iterable[LogBlock]) -> bytes:
    return b"".join(encode_block(b) for b in blocks)


def _encode_map(entries: dict[HeaderKey, str]) -> bytes:
    parts = [_I32.pack(len(entries))]
    for key, value in entries.items():
        raw = value.encode("utf-8", "surrogateescape")
        parts.append(struct.pack(">ii", int(key), len(raw)))
        parts.append(raw)
    return b"".join(parts)
