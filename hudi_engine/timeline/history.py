"""The LSM timeline history of timeline layout 2 (Hudi 1.x, table versions 8 and 9): where archival moves the
instants it takes off the active timeline. It lives in `.hoodie/<timeline path>/<history path>/`
(`hoodie.timeline.path` / `hoodie.timeline.history.path`, by default `.hoodie/timeline/history/`), laid out as
Hudi's LSMTimeline and LSMTimelineWriter lay it out:

* `<min instant>_<max instant>_<layer>.parquet`: HoodieLSMTimelineInstant records, one per archived action (its
  requested time, completion time, completed action, the completed file's bytes as `metadata`, the plan's bytes
  as `plan`, `version` 1), oldest first. Parquet as parquet-avro writes it for Hudi: gzip, the Avro schema under
  the footer key `parquet.avro.schema`, no meta fields, no bloom filter. Archival writes one layer-0 file per run.
* `manifest_<N>`: the files of snapshot version N, Jackson's pretty JSON `{"files" : [ {"fileName" : ...,
  "fileLen" : ...} ]}`. Every change (a new layer-0 file, a compaction) writes the next version's manifest.
* `_version_`: the latest N as text, deleted and created again after each new manifest (a reader that finds none
  takes the highest `manifest_<N>` listed, as Hudi's does).

Compaction (`compact_and_clean`, after every archival): once a layer holds `hoodie.timeline.compaction.batch.size`
files (default 10), the oldest that many (by name, so by min instant; at most 1 GB of them) are merged into one file
of the next layer named by their min and max instants, and the next layer is looked at in turn. Cleaning then keeps
the manifests of the newest 3 + (compactions done) versions and deletes every other manifest and every parquet
file none of the kept manifests names. A reader holding an older version keeps finding its files for 3 runs.

Readers read the latest manifest's files only, so a crash between a file and its manifest leaves an unreferenced
file (cleaned later), and a crash after the manifest but before archival deleted the instants' files from the
active timeline leaves instants in both places, which the next archival writes again: `instants` keeps one
record per (instant time, action).

No conformance table has a non-empty history: this layout follows Hudi 1.x's source (LSMTimelineWriter,
LSMTimeline, HoodieLSMTimelineManifest, HoodieLSMTimelineInstant.avsc, MetadataConversionUtils), not a real file.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_engine.errors import TimelineError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline.commit_metadata import jackson_pretty
from hudi_engine.timeline.instant import Action, Instant, State

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_LSM_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")  # Hudi's pattern: one digit of layer
LSM_TIMELINE_INSTANT_VERSION = 1
DEFAULT_COMPACTION_BATCH_SIZE = 10  # hoodie.timeline.compaction.batch.size
MAX_COMPACTION_INPUT_BYTES = 1024 * 1024 * 1000  # LSMTimelineWriter.MAX_FILE_SIZE_IN_BYTES
SNAPSHOTS_KEPT = 3  # versions cleaning keeps, plus one per compaction of the run

_STR = {"type": "string", "avro.java.string": "String"}
# HoodieLSMTimelineInstant as Java's generated class prints its schema (`Schema.toString()`, Java's key order).
LSM_INSTANT_SCHEMA: dict = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantTime", "type": ["null", _STR], "default": None},
        {"name": "completionTime", "type": ["null", _STR], "default": None},
        {"name": "action", "type": ["null", _STR], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1},
    ],
}
_SCHEMA_TEXT = json.dumps(LSM_INSTANT_SCHEMA, separators=(",", ":"))
# What parquet-avro's AvroSchemaConverter makes of it: optional UTF8 binaries, optional binaries, a required int32.
ARROW_SCHEMA = pa.schema(
    [pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()), pa.field("action", pa.string()),
     pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()),
     pa.field("version", pa.int32(), nullable=False)])
FOOTER = {"parquet.avro.schema": _SCHEMA_TEXT, "writer.model.name": "avro"}
TIME_COLUMNS = ["instantTime", "completionTime", "action"]


@dataclass(frozen=True)
class ArchivedInstant:
    """One HoodieLSMTimelineInstant record: a completed action with its files' bytes."""

    instant_time: str
    completion_time: str | None
    action: str  # the completed action (a compaction archives as `commit`)
    metadata: bytes | None = None  # the completed file's bytes; None when it was empty
    plan: bytes | None = None  # the requested (or inflight) plan's bytes for cleans, compactions, replacecommits
    version: int = LSM_TIMELINE_INSTANT_VERSION

    def to_instant(self) -> Instant | None:
        """The completed instant it stands for (with its completion time); None for an action this engine does not
        know."""
        try:
            return Instant(self.instant_time, Action(self.action), State.COMPLETED, self.completion_time)
        except (ValueError, TimelineError):
            return None


@dataclass(frozen=True)
class ManifestEntry:
    """HoodieLSMTimelineManifest.LSMFileEntry."""

    file_name: str
    file_len: int


def lsm_file_name(min_instant: str, max_instant: str, layer: int) -> str:
    return f"{min_instant}_{max_instant}_{layer}.parquet"


def parse_lsm_file_name(name: str) -> tuple[str, str, int] | None:
    """(min instant, max instant, layer) of a history data file name; None for other names."""
    m = _LSM_FILE.match(name)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def manifest_json(entries: Sequence[ManifestEntry]) -> str:
    """A manifest as Hudi's JsonUtils mapper pretty-prints it (fields only, Jackson's default printer)."""
    return jackson_pretty({"files": [{"fileName": e.file_name, "fileLen": e.file_len} for e in entries]})


def parse_manifest(text: str, where: str) -> list[ManifestEntry]:
    if not text.strip():
        return []  # as Hudi: an empty manifest is an empty snapshot
    try:
        obj = json.loads(text)
        return [ManifestEntry(str(f["fileName"]), int(f.get("fileLen") or 0)) for f in obj.get("files") or []]
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise TimelineError(f"{where}: not an LSM timeline manifest ({type(e).__name__}: {e})") from None


def encode_lsm_file(records: Iterable[ArchivedInstant]) -> bytes:
    """The parquet bytes of a history data file holding `records` in the given order."""
    rows = list(records)
    table = pa.table({
        "instantTime": pa.array([r.instant_time for r in rows], pa.string()),
        "completionTime": pa.array([r.completion_time for r in rows], pa.string()),
        "action": pa.array([r.action for r in rows], pa.string()),
        "metadata": pa.array([r.metadata for r in rows], pa.binary()),
        "plan": pa.array([r.plan for r in rows], pa.binary()),
        "version": pa.array([r.version for r in rows], pa.int32()),
    }, schema=ARROW_SCHEMA)
    sink = pa.BufferOutputStream()
    # parquet-mr's footer: the Avro schema, no Arrow schema; gzip is hoodie.parquet.compression.codec's default.
    with pq.ParquetWriter(sink, ARROW_SCHEMA, compression="gzip", store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(FOOTER)
    return sink.getvalue().to_pybytes()


def _records(table: pa.Table) -> list[ArchivedInstant]:
    cols = {name: table.column(name).to_pylist() if name in table.column_names else [None] * table.num_rows
            for name in ("instantTime", "completionTime", "action", "metadata", "plan", "version")}
    return [ArchivedInstant(str(t), c, str(a), m, p, v if v is not None else LSM_TIMELINE_INSTANT_VERSION)
            for t, c, a, m, p, v in zip(*cols.values(), strict=True) if t is not None and a is not None]


class TimelineHistory:
    """The LSM history folder of one table (layout 2): its snapshot versions, manifests and data files."""

    def __init__(self, location: TableLocation, folder: str) -> None:
        self.location = location
        self.storage = location.storage
        self.folder = folder

    @staticmethod
    def of(location: TableLocation, timeline_path: str = "timeline", history_path: str = "history") \
            -> "TimelineHistory":
        """The history of a table whose active timeline is `.hoodie/<timeline_path>`."""
        return TimelineHistory(location, location.meta(timeline_path, history_path))

    def path(self, name: str) -> str:
        return Storage.join(self.folder, name)

    # --- snapshots ------------------------------------------------------------------------------------------

    def manifest_versions(self) -> list[int]:
        """Every `manifest_<N>` listed, ascending."""
        return sorted(int(m.group(1)) for e in self.storage.list_dir(self.folder)
                      if not e.is_dir and (m := _MANIFEST.match(e.name)))

    def latest_version(self) -> int:
        """The latest snapshot version: `_version_`, else the highest manifest listed; -1 for an empty history."""
        try:
            text = self.storage.read_bytes(self.path(VERSION_FILE)).decode("utf-8").strip()
            if text:
                return int(text)
        except (FileNotFoundError, ValueError, UnicodeDecodeError):
            pass  # mid-update (deleted, not yet created) or damaged: Hudi falls back to the listing too
        return max(self.manifest_versions(), default=-1)

    def manifest(self, version: int | None = None) -> list[ManifestEntry]:
        """The files of snapshot `version` (default: the latest); empty for an empty history."""
        version = self.latest_version() if version is None else version
        if version < 0:
            return []
        where = self.path(f"{MANIFEST_PREFIX}{version}")
        try:
            data = self.storage.read_bytes(where)
        except FileNotFoundError:
            raise TimelineError(f"{where}: missing, but snapshot version {version} of the timeline history names "
                                "it") from None
        return parse_manifest(data.decode("utf-8"), where)

    def file_names(self) -> list[str]:
        return [e.file_name for e in self.manifest()]

    def is_empty(self) -> bool:
        return not self.manifest()

    # --- reading --------------------------------------------------------------------------------------------

    def read_file(self, name: str, columns: list[str] | None = None) -> list[ArchivedInstant]:
        path = self.path(name)
        try:
            with self.storage.open_input_file(path) as f:
                table = pq.read_table(f, columns=columns)
        except FileNotFoundError:
            raise TimelineError(f"{path}: missing, but the timeline history's manifest names it") from None
        except (pa.ArrowException, OSError) as e:
            raise TimelineError(f"{path}: not a timeline history parquet file ({e})") from None
        return _records(table)

    def records(self, columns: list[str] | None = None) -> list[ArchivedInstant]:
        """Every archived record of the latest snapshot, one per (instant time, action) (a crash can archive an
        instant twice), ordered by instant time. `columns`: read only these (`TIME_COLUMNS` for times)."""
        seen: dict[tuple[str, str], ArchivedInstant] = {}
        for name in self.file_names():
            for r in self.read_file(name, columns):
                seen.setdefault((r.instant_time, r.action), r)
        return sorted(seen.values(), key=lambda r: (r.instant_time, r.action))

    def instants(self) -> list[Instant]:
        """The archived instants with their completion times, as a timeline orders them."""
        return sorted(i for r in self.records(TIME_COLUMNS) if (i := r.to_instant()) is not None)

    # --- writing --------------------------------------------------------------------------------------------

    def append(self, records: Sequence[ArchivedInstant]) -> str:
        """Write `records` (oldest first) as a new layer-0 file and a new snapshot naming it; the file's path."""
        if not records:
            raise TimelineError(f"{self.folder}: no instants to write to the timeline history")
        name = lsm_file_name(records[0].instant_time, records[-1].instant_time, 0)
        # Under the table lock: a file of this name is a crashed run's, never named by the snapshot readers use.
        self.storage.write_bytes(self.path(name), encode_lsm_file(records))
        self._update_manifest([], name)
        return self.path(name)

    def _entry(self, name: str) -> ManifestEntry:
        return ManifestEntry(name, self.storage.size(self.path(name)))

    def _update_manifest(self, remove: Sequence[str], add: str) -> int:
        """A new snapshot: the latest manifest without `remove`, plus `add`; then `_version_`. Its version."""
        latest = self.latest_version()
        gone = set(remove)
        entries = [e for e in self.manifest(latest) if e.file_name not in gone] + [self._entry(add)]
        # A manifest a crashed run left above `_version_` is passed over, never overwritten (it may be read).
        version = max(latest, *self.manifest_versions(), 0) + 1
        path = self.path(f"{MANIFEST_PREFIX}{version}")
        if not self.storage.create_exclusive(path, manifest_json(entries).encode("utf-8")):
            raise TimelineError(f"{path}: already exists; another process is writing the timeline history")
        self.storage.delete(self.path(VERSION_FILE))
        if not self.storage.create_exclusive(self.path(VERSION_FILE), str(version).encode("utf-8")):
            raise TimelineError(f"{self.path(VERSION_FILE)}: created by another process while this one wrote "
                                f"version {version} of the timeline history")
        return version

    # --- compaction and cleaning ----------------------------------------------------------------------------

    def compact_and_clean(self, batch_size: int = DEFAULT_COMPACTION_BATCH_SIZE) -> list[str]:
        """Hudi's LSM compaction after an archival, layer by layer from 0, then cleaning; the files written."""
        if batch_size < 2:
            raise TimelineError(f"hoodie.timeline.compaction.batch.size={batch_size}: a compaction merges at "
                                "least 2 files")
        written: list[str] = []
        layer = 0
        while (name := self._compact_layer(layer, batch_size)) is not None:
            written.append(name)
            layer += 1
        self.clean(compactions=layer)
        return written

    def _compact_layer(self, layer: int, batch_size: int) -> str | None:
        files = sorted((e for e in self.manifest() if (p := parse_lsm_file_name(e.file_name)) and p[2] == layer),
                       key=lambda e: e.file_name)
        if len(files) < batch_size:
            return None
        candidates: list[str] = []
        total = 0
        for e in files[:batch_size]:
            if total > MAX_COMPACTION_INPUT_BYTES:
                break
            total += e.file_len
            candidates.append(e.file_name)
        if len(candidates) < 2:
            return None  # too large to compact
        parsed = [p for n in candidates if (p := parse_lsm_file_name(n)) is not None]
        name = lsm_file_name(min(p[0] for p in parsed), max(p[1] for p in parsed), layer + 1)
        records = [r for n in candidates for r in self.read_file(n)]
        self.storage.write_bytes(self.path(name), encode_lsm_file(records))
        self._update_manifest(candidates, name)
        return name

    def clean(self, compactions: int = 0) -> list[str]:
        """Keep the newest `SNAPSHOTS_KEPT + compactions` snapshot versions; delete the other manifests, then every
        data file no kept manifest names. The paths deleted."""
        versions = sorted(self.manifest_versions(), reverse=True)
        keep = versions[:SNAPSHOTS_KEPT + compactions]
        if len(versions) <= len(keep):
            return []
        names = {e.file_name for v in keep for e in self.manifest(v)}
        deleted = [self.path(f"{MANIFEST_PREFIX}{v}") for v in versions[len(keep):]]
        deleted = [p for p in deleted if self.storage.delete(p)]
        for e in self.storage.list_dir(self.folder):
            if not e.is_dir and e.name.endswith(".parquet") and e.name not in names and self.storage.delete(e.path):
                deleted.append(e.path)
        return deleted
