"""A write's shuffle as Arrow IPC: the map tasks group their records by file group and hand Spark
one binary row per group and chunk (`Packer`: an Arrow IPC file); Spark shuffles and sorts those few rows; the
write task reads the chunks back as the record batches they hold (`unpacked`).

Shuffling the records as Spark rows costs two conversions per record that this skips (Arrow to Spark's row format
in the map task, the row format back to Arrow in the write task) and the sort of every record by its file group.
A chunk holds one file group's records only, so the sort of the chunks keeps a task's file groups apart as the
sort of the records did, and no task holds more than one group's records (and one Arrow batch of chunks).

The map tasks of a write routed in Python pack the records in the same pass (`write_udfs.MapSidePackFn` for a
one-pass write, `RoutePackFn` for the two-pass write's buckets); a one-pass write Spark SQL routes shuffles rows,
its map stage running no Python at all (see `one_pass`).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudi_engine.spark.sql_route import ORDER
from hudi_engine.write.executor import KEY, TASK

CHUNK = "_hw_chunk"  # a chunk's IPC file; beside it its task and its file group's hash (ORDER)
# A chunk's first record key: a group's chunks go to its task by it, so a group whose records came in key order
# (each chunk ascending, the map tasks' chunks in disjoint ranges) arrives in key order and is not sorted again.
FIRST_KEY = "_hw_first_key"
CHUNK_TYPE = T.StructType([T.StructField(TASK, T.IntegerType()), T.StructField(ORDER, T.LongType()),
                           T.StructField(FIRST_KEY, T.StringType()), T.StructField(CHUNK, T.BinaryType())])
_CHUNK_SCHEMA = pa.schema([(TASK, pa.int32()), (ORDER, pa.int64()), (FIRST_KEY, pa.string()), (CHUNK, pa.binary())])
# A group's records go out as a chunk once they pass CHUNK_BYTES; a map task holds PENDING_BYTES at most. Spark's
# Arrow batches to the write task stop at spark.sql.execution.arrow.maxBytesPerBatch (64 MB): a few chunks each.
CHUNK_BYTES = 8 << 20
PENDING_BYTES = 64 << 20


def shuffled(chunks: DataFrame, n_tasks: int) -> DataFrame:
    """The chunks (`CHUNK_TYPE` rows) of each task together, its file groups' chunks in runs, each run by first key."""
    return chunks.repartitionById(n_tasks, F.col(TASK)).sortWithinPartitions(ORDER, FIRST_KEY)


def group_orders(partitions: pa.Array, groups: pa.Array) -> np.ndarray:
    """Every record's (partition, file group) as one 64-bit hash, the same in every process (Spark's own xxhash64
    orders the rows Spark SQL routes; these are hashed here, once per pair)."""
    pairs = pc.dictionary_encode(pc.binary_join_element_wise(partitions, groups, "\x00"))
    hashes = np.array([int.from_bytes(hashlib.blake2b(v.encode(), digest_size=8).digest(), "little", signed=True)
                       for v in pairs.dictionary.to_pylist()], dtype=np.int64)
    return hashes[pairs.indices.to_numpy(zero_copy_only=False)] if len(hashes) else np.zeros(0, np.int64)


class Packer:
    """A map task's records gathered by file group (`add`) into chunks, each an Arrow IPC file (`CHUNK_TYPE` batches)."""

    def __init__(self) -> None:
        self._pending: dict[int, tuple[int, list[pa.RecordBatch], int]] = {}  # order -> (task, batches, bytes)
        self._bytes = 0

    def add(self, batch: pa.RecordBatch, tasks: np.ndarray, orders: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Take `batch`'s records, the i-th going to task `tasks[i]` in file group `orders[i]`; yields the chunks
        that filled up."""
        if batch.num_rows == 0:
            return
        at = np.argsort(orders, kind="stable")
        ordered = orders[at]
        cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        if len(cuts):  # else every record is of one group, in its place
            batch = batch.take(pa.array(at))
        for start, end in zip(np.r_[0, cuts], np.r_[cuts, len(at)]):
            order, part = int(ordered[start]), batch.slice(int(start), int(end - start))
            task, parts, size = self._pending.get(order, (int(tasks[at[start]]), [], 0))
            parts.append(part)
            self._pending[order] = (task, parts, size + part.nbytes)
            self._bytes += part.nbytes
            if size + part.nbytes >= CHUNK_BYTES:
                yield self._chunk(order)
        if self._bytes >= PENDING_BYTES:
            yield from self.flush()

    def flush(self) -> Iterator[pa.RecordBatch]:
        """Every pending group's records as chunks."""
        for order in list(self._pending):
            yield self._chunk(order)

    def _chunk(self, order: int) -> pa.RecordBatch:
        task, parts, size = self._pending.pop(order)
        self._bytes -= size
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, parts[0].schema) as writer:
            for part in parts:
                writer.write_batch(part)
        body = sink.getvalue()
        offsets = pa.py_buffer(np.array([0, body.size], dtype=np.int32))
        first = parts[0].column(KEY)[0] if KEY in parts[0].schema.names else None
        return pa.RecordBatch.from_arrays(
            [pa.array([task], pa.int32()), pa.array([order], pa.int64()), pa.array([first], pa.string()),
             pa.Array.from_buffers(pa.binary(), 1, [None, offsets, body])], schema=_CHUNK_SCHEMA)


def unpacked(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The record batches of a write task's chunks, in the order the chunks arrive (no copy: they read the
    chunks' buffers)."""
    for batch in batches:
        chunks = batch.column(CHUNK)
        for i in range(len(chunks)):
            reader = pa.ipc.open_file(chunks[i].as_buffer())
            for j in range(reader.num_record_batches):
                yield reader.get_batch(j)

