"""An inflight instant and its writer: whether the instant is still this writer's, and how the writer aborts it.

One owner for the protocol Hudi spreads over HoodieHeartbeatClient, WriteMarkers and the rollback of failed writes
(BaseRollbackActionExecutor): `InflightInstant` holds an instant's storage, base path and time (and, on the driver,
its `Heartbeat`), makes its markers, checks its ownership and aborts it. `markers`, `heartbeat` and `renewal` are
its leaves (they import nothing of the protocol); `lock` and `rollback` sit beside it, `commit` and the writers above.

Another writer rolls a pending instant back only when its heartbeat expired (`heartbeat`): its writer died, or was
paused (a stopped process, a long GC or swap) for longer than the heartbeat's tolerance. A writer that comes back
from such a pause is a zombie: a data file it adds is in no plan, no commit and no marker the rollback saw, and
would come back as rows once archival moves the timeline start past its instant. So a writer checks that its
instant is still its own

* before each data file (`InflightInstant.create_marker`, after the marker is made, so a rollback that plans later
  sees it),
* after each data file (`InflightInstant.confirm_written`: the file is removed again if the instant was lost
  meanwhile),
* at the commit point (`commit.complete_commit`, before and after the completed file is created),

and a writer that lost its instant removes the files its markers name and fails naming the instant, the rollback
that took it, its heartbeat and the lock (`InflightInstant.abort`). The per-file checks are one HEAD of the heartbeat
file (which a rollback deletes first); without it, and at the commit point, `check_inflight` lists `.hoodie/` once and
reads the plans of rollback instants newer than the instant only (there are none unless it is being taken away).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from hudi_engine.config.lock_config import LockConfig
from hudi_engine.errors import HudiError, InstantLostError
from hudi_engine.location import TableLocation
from hudi_engine.storage import Storage
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.instant import Action, Instant, State, instant_to_datetime
from hudi_engine.timeline.layout import LAYOUT_V1, TimelineLayout, TimelineLayoutV2
from hudi_engine.timeline.timeline import LAYOUT2_FOLDER, collapse_layout1
from hudi_engine.write.heartbeat import Heartbeat, heartbeat_exists, heartbeat_path
from hudi_engine.write.lock import lock_holder, lock_path
from hudi_engine.write.markers import IOType, Marker, create_marker, delete_marker_dir, marker_dir, remove_marker
from hudi_engine.write.rollback import MetadataUpdate, remove_marked_files, rollback_instant

_WRITING_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION,
                              Action.LOG_COMPACTION, Action.CLUSTERING})
# Plans never change once written: (rollback file path) -> the instant times it rolls back.
_targets_cache: dict[str, frozenset[str]] = {}


@dataclass(frozen=True, slots=True)
class InstantLoss:
    """Why an instant is no longer inflight: `state` is "completed", "being rolled back" or "not on the timeline";
    `rollback` is the rollback instant that targets it, if one does."""

    instant_time: str
    state: str
    rollback: Instant | None

    def describe(self) -> str:
        if self.rollback is None:
            if self.state == "completed":
                return f"instant {self.instant_time} is already completed"
            return f"instant {self.instant_time} is not on the timeline (no rollback instant names it)"
        done = "completed" if self.rollback.is_completed else "in progress"
        verb = "was rolled back" if self.state == "not on the timeline" else "is being rolled back"
        return f"instant {self.instant_time} {verb} by rollback {self.rollback.timestamp} ({done})"


@dataclass(frozen=True, slots=True)
class InflightInstant:
    """An instant a writer holds (requested or inflight), and the writer's protocol around it: its markers, the
    check that it is still the writer's own, and its abort. Write tasks make one from their context (`heartbeat`
    None: the driver renews it); the driver's carries the `Heartbeat` it renews until the commit point (`start`)."""

    location: TableLocation
    instant_time: str
    heartbeat: Heartbeat | None = None
    layout: TimelineLayout | None = None  # the table's timeline layout when the holder knows it (else listed)

    @staticmethod
    def start(location: TableLocation, instant_time: str, config: LockConfig, owner: str) -> InflightInstant:
        """The driver's side: the heartbeat is created (before the instant's requested file) and renewed."""
        return InflightInstant(location, instant_time, Heartbeat(location, instant_time, config, owner).start())

    # ---- ownership ------------------------------------------------------------------------------------------

    def loss(self) -> InstantLoss | None:
        """None while the instant is pending (requested or inflight) and no rollback targets it; else why not."""
        return self._loss()[0]

    def _loss(self) -> tuple[InstantLoss | None, list[Instant]]:
        own, rollbacks, layout = self._instant_files()
        return self._loss_of(own, rollbacks, layout), own

    def _loss_of(self, own: list[Instant], rollbacks: list[Instant], layout: TimelineLayout) -> InstantLoss | None:
        rollback = self.rollback_taking_it(rollbacks, layout)
        if any(i.is_completed for i in own):
            return InstantLoss(self.instant_time, "being rolled back" if rollback else "completed", rollback)
        if not any(i.action in _WRITING_ACTIONS for i in own):
            return InstantLoss(self.instant_time, "not on the timeline", rollback)
        if rollback is not None:
            return InstantLoss(self.instant_time, "being rolled back", rollback)
        return None

    def check_inflight(self, doing: str) -> list[Instant]:
        """Raise InstantLostError when the instant is no longer inflight (from the timeline); `doing` says what was
        about to happen. Returns the instant's files on the timeline (one listing)."""
        loss, own = self._loss()
        if loss is None:
            return own
        if loss.state == "completed":
            raise InstantLostError(
                f"table {self.location.base_path}: {loss.describe()} (COMPLETED on the timeline, expected INFLIGHT), so this "
                f"writer is not {doing}; a completed instant takes no more files")
        raise InstantLostError(
            f"table {self.location.base_path}: {loss.describe()}, so this writer is not {doing}. Another writer found its "
            "heartbeat expired (hoodie.client.heartbeat.interval_in_ms x hoodie.client.heartbeat.tolerable.misses) "
            "and rolled the instant back as a failed write; nothing of this write is committed"
        )

    def check_owned(self, doing: str) -> None:
        """The instant is still this writer's: its heartbeat file is there (one HEAD), else the timeline says so
        (`check_inflight`)."""
        if heartbeat_exists(self.location, self.instant_time):
            return
        self.check_inflight(doing)

    def check_heartbeat(self, doing: str) -> None:
        """The driver's own heartbeat was renewed in time (InstantLostError otherwise: others may have taken it)."""
        if self.heartbeat is not None:
            self.heartbeat.check(doing)

    def stop_heartbeat(self) -> None:
        """Stop renewing and delete the heartbeat: before the commit point, or when the instant is given up."""
        if self.heartbeat is not None:
            self.heartbeat.stop()

    def rollback_taking_it(self, rollbacks: list[Instant] | None = None,
                           layout: TimelineLayout | None = None) -> Instant | None:
        """The newest rollback instant (any state) whose plan or metadata names this instant."""
        if rollbacks is None or layout is None:
            _, rollbacks, layout = self._instant_files()
        timeline = Timeline(self.location, [], layout=layout)
        for rollback in sorted(rollbacks, reverse=True):
            if self.instant_time in _targets(timeline, rollback):
                return rollback
        return None

    def wait_for_rollback_decision(self, *, timeout_s: float = 5.0) -> Instant | None:
        """After completing the instant: a rollback that is only requested may still give up (it does when it sees
        the instant completed, see `rollback`), so wait briefly for it to move on or vanish. Returns the rollback
        that still targets the instant, None when none does."""
        deadline = time.monotonic() + timeout_s
        while True:
            rollback = self.rollback_taking_it()
            if rollback is None or not rollback.is_requested or time.monotonic() >= deadline:
                return rollback
            time.sleep(0.1)

    # ---- markers --------------------------------------------------------------------------------------------

    def create_marker(self, partition_path: str, file_name: str, io_type: IOType | str) -> Marker:
        """The marker of a data file about to be written (`markers.create_marker`), then the ownership check: a
        writer that lost the instant removes the marker again and raises InstantLostError. The marker comes first so
        that a rollback planned after the check passed finds it."""
        marker = create_marker(self.location, self.instant_time, partition_path, file_name, io_type)
        try:
            self.check_owned(f"writing {marker.data_file_path}")
        except InstantLostError:
            self.location.storage.delete(Storage.join(marker_dir(self.location, self.instant_time),
                                                      marker.relative_path))
            raise
        return marker

    def remove_marker(self, partition_path: str, file_name: str, io_type: IOType | str) -> bool:
        """A marker whose data file was not written (`markers.remove_marker`)."""
        return remove_marker(self.location, self.instant_time, partition_path, file_name, io_type)

    def confirm_written(self, partition_path: str, file_name: str) -> None:
        """After a data file of `create_marker` is written: if the instant was lost meanwhile, the file (this
        writer's own: new names only) and its marker are removed and InstantLostError raised. A rollback that listed
        the markers before the file existed could not delete it."""
        try:
            self.check_owned(f"keeping {partition_path}/{file_name}")
        except InstantLostError:
            self.location.storage.delete(self.location.join(partition_path, file_name))
            root = marker_dir(self.location, self.instant_time)
            for io_type in IOType:
                self.location.storage.delete(Storage.join(root, Marker(partition_path, file_name, io_type).relative_path))
            raise

    # ---- abort ----------------------------------------------------------------------------------------------

    def abort(self, inflight: Instant, *, lock_expiry_ms: int, lock_where: str | None = None,
              lock_holder_text: str | None = None, metadata: MetadataUpdate | None = None) -> None:
        """Give up a failed write's instant (under the table lock), its heartbeat first: rolled back as usual while
        it is ours; if it was lost, the files its markers name are removed (never those of a completed instant) and
        InstantLostError says what happened, unless the heartbeat was alive when this writer gave the instant up (the
        loss came after: the caller's error stands). `lock_where` / `lock_holder_text` describe the lock (default:
        the lock file and its holder)."""
        self.stop_heartbeat()
        base_path = self.location.base_path
        loss = self.loss()
        if loss is None:
            rollback_instant(self.location, inflight, metadata=metadata)
            return
        completed = any(i.is_completed for i in self._instant_files()[0])
        if completed and loss.rollback is None:
            return  # the rollback gave up after all: the commit stands, the error in flight says why it was doubted
        removed = [] if completed else remove_marked_files(self.location, self.instant_time)
        if loss.state == "not on the timeline":
            delete_marker_dir(self.location, self.instant_time)  # a rollback in progress deletes it itself
        if not completed and self.heartbeat is not None and self.heartbeat.alive_when_stopped:
            # Given up with a live heartbeat, which giving up deletes first: another writer then rolled the instant
            # back as the protocol lets it, after this writer stopped. Nothing of it stands; the error that made
            # this writer give up is the one to report, not a stall that did not happen.
            return
        try:
            ran = (datetime.now(UTC) - instant_to_datetime(loss.instant_time)).total_seconds()
            ran_text = f"; this write started {ran:.0f} s ago"
        except HudiError:
            ran_text = ""
        if lock_holder_text is None:
            holder = lock_holder(self.location)
            if holder:
                acquired = datetime.fromtimestamp(holder.get("acquired_ms", 0) / 1000, UTC)
                lock_holder_text = (f"the lock is now held by {holder.get('owner', '?')} "
                                    f"(since {acquired:%Y-%m-%d %H:%M:%S} UTC)")
            else:
                lock_holder_text = "the lock is free now"
        if completed:
            what = "the instant had completed, but that rollback may undo it: check the timeline before relying on it"
        else:
            what = (f"nothing of this write is in the table ({len(removed)} data file(s) it had written were removed "
                    "here, the others by the rollback)")
        raise InstantLostError(
            f"write to table {base_path} failed: {loss.describe()} while this writer was still running; {what}. Its "
            f"heartbeat {heartbeat_path(self.location, loss.instant_time)} was not renewed in time, so another writer took "
            f"the instant for a dead writer's and rolled it back (table lock: "
            f"{lock_where or 'lock file ' + lock_path(self.location)}, "
            f"hoodie.write.lock.filesystem.expire={lock_expiry_ms / 60000:g} minutes{ran_text}); {lock_holder_text}. "
            "Re-run the write. If this process can stall (GC, swap, an overloaded host), raise "
            "hoodie.client.heartbeat.interval_in_ms / tolerable.misses and the lock expiry above such stalls."
        )

    def _instant_files(self) -> tuple[list[Instant], list[Instant], TimelineLayout]:
        """(this instant's files, the rollback instants newer than it, the timeline layout), from one listing of the
        timeline's folder (.hoodie, or .hoodie/timeline in layout 2; .hoodie is listed first when the layout is not
        known)."""
        own: list[Instant] = []
        rollbacks: list[Instant] = []
        location = self.location
        layout = self.layout
        if layout is None:
            entries = location.storage.list_dir(location.meta_path)
            layout = LAYOUT_V1
            if any(e.is_dir and e.name == LAYOUT2_FOLDER for e in entries):
                layout = TimelineLayoutV2()
                entries = location.storage.list_dir(location.meta(LAYOUT2_FOLDER))
        else:
            entries = location.storage.list_dir(Timeline(location, [], layout=layout).meta_path)
        for entry in entries:
            if entry.is_dir:
                continue
            head, _, rest = entry.name.partition(".")
            ts = head.partition("_")[0]  # layout 2: `<requested>_<completed>.<action>`
            if ts == self.instant_time or (ts > self.instant_time and rest.startswith(Action.ROLLBACK.value)):
                try:
                    instant = layout.parse_file_name(entry.name)
                except HudiError:
                    continue  # a foreign file name: Timeline.load reports it
                if instant is not None:
                    (own if ts == self.instant_time else rollbacks).append(instant)
        return own, [i for i in collapse_layout1(rollbacks) if i.action is Action.ROLLBACK], layout


def _targets(timeline: Timeline, rollback: Instant) -> frozenset[str]:
    """The instant times a rollback rolls back: its plan's `instantToRollback`, else its metadata's list."""
    key = timeline.path_of(rollback.with_state(State.REQUESTED))
    cached = _targets_cache.get(key)
    if cached is not None:
        return cached
    targets: set[str] = set()
    try:
        plan = timeline.avro_metadata(rollback.with_state(State.REQUESTED)) or {}
        commit_time = (plan.get("instantToRollback") or {}).get("commitTime")
        if commit_time:
            targets.add(commit_time)
    except HudiError:
        pass
    if not targets and rollback.is_completed:
        try:
            targets.update((timeline.avro_metadata(rollback) or {}).get("commitsRollback") or [])
        except HudiError:
            pass
    found = frozenset(targets)
    if found:
        _targets_cache[key] = found
    return found
