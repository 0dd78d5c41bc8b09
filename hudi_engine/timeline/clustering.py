"""Pending clustering: the file groups another writer (a Java Hudi clustering job) planned to rewrite, read from the
timeline as Hudi reads them (ClusteringUtils.getAllFileGroupsInPendingClusteringPlans, behind
AbstractTableFileSystemView.getFileGroupsInPendingClustering), and the update rule Hudi applies to them by default
(`hoodie.clustering.updates.strategy` = SparkRejectUpdateStrategy).

A clustering is a replacecommit (layout 1) whose `<ts>.replacecommit.requested` holds a HoodieRequestedReplaceMetadata
with operationType CLUSTER and a HoodieClusteringPlan; on layout 2 (Hudi 1.x) it has an action of its own while
pending, `<ts>.clustering.requested` (the same record) and `.clustering.inflight`, and completes as a replacecommit. The
plan holds input groups of file slices (HoodieSliceInfo: partition, file
id, base file path, log file names). While it is requested or inflight, those file groups are "in pending
clustering"; when it completes, new file groups built from exactly those slices replace them
(`partitionToReplaceFileIds`). A record written into such a file group meanwhile is therefore lost, which is why
Hudi refuses updates there (SparkRejectUpdateStrategy.handleUpdate) and never packs inserts into them
(UpsertPartitioner.filterSmallFilesInClustering). With SparkAllowUpdateStrategy the update is written, and the
clustering is either rolled back first (hoodie.clustering.rollback.pending.replacecommit.on.conflict) or refuses to
complete (`table_services.clustering`). An insert_overwrite's pending replacecommit has an empty or all-null requested
file: it is not a clustering.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hudi_engine.config import keys as K
from hudi_engine.errors import ClusteringUpdateError, ConfigError, HudiError, TimelineError
from hudi_engine.timeline.instant import Action, Instant, State
from hudi_engine.timeline.timeline import Timeline

CLUSTER = "CLUSTER"  # WriteOperationType of a clustering's requested replace metadata
SORT_COLUMNS_PARAM = K.CLUSTERING_SORT_COLUMNS.key  # the strategy param the size-based plan strategy records

_STRATEGIES = "org.apache.hudi.client.clustering.update.strategy."
REJECT_UPDATES = _STRATEGIES + "SparkRejectUpdateStrategy"
ALLOW_UPDATES = _STRATEGIES + "SparkAllowUpdateStrategy"
# Hudi's other update strategies: known, refused with the reason (see docs/clustering.md).
_REFUSED_STRATEGIES = {
    _STRATEGIES + "SparkConsistentBucketDuplicateUpdateStrategy":
        "it is for the consistent-hashing bucket index, which this engine does not write",
    "org.apache.hudi.sink.clustering.update.strategy.FlinkRejectUpdateStrategy": "it is Flink's",
    "org.apache.hudi.sink.clustering.update.strategy.FlinkConsistentBucketUpdateStrategy": "it is Flink's",
}


def resolve_update_strategy(name: str, where: str) -> str:
    """The full class name of the update strategy `hoodie.clustering.updates.strategy` names (full or short name):
    SparkRejectUpdateStrategy (REJECT_UPDATES) or SparkAllowUpdateStrategy (ALLOW_UPDATES); ConfigError naming the
    option otherwise."""
    given = (name or "").strip() or REJECT_UPDATES
    short = given.rsplit(".", 1)[-1]
    for served in (REJECT_UPDATES, ALLOW_UPDATES):
        if given in (served, served.rsplit(".", 1)[-1]):
            return served
    key = K.CLUSTERING_UPDATES_STRATEGY.key
    for full, why in _REFUSED_STRATEGIES.items():
        if short == full.rsplit(".", 1)[-1]:
            raise ConfigError(f"table {where}: {key}={given!r} is not supported: {why}. Leave {key} out (or set "
                              f"{REJECT_UPDATES}): updates to file groups under a pending clustering are then "
                              "refused and everything else is written")
    raise ConfigError(f"table {where}: {key}={given!r}: unknown update strategy; this engine honours "
                      f"{REJECT_UPDATES} (Hudi's default) and {ALLOW_UPDATES}; leave {key} out")


@dataclass(frozen=True, slots=True)
class ClusteringSlice:
    """One HoodieSliceInfo of a clustering plan: the file slice the clustering reads."""

    partition_path: str
    file_id: str
    base_file_path: str | None  # dataFilePath: a full path, as Hudi writes it
    log_file_names: tuple[str, ...]  # deltaFilePaths: file names


@dataclass(frozen=True)
class ClusteringPlan:
    """The HoodieClusteringPlan of one pending (or completed) clustering instant."""

    instant: Instant
    input_groups: tuple[tuple[ClusteringSlice, ...], ...]
    num_output_groups: tuple[int, ...]
    strategy_class: str | None = None
    strategy_params: Mapping[str, str] = field(default_factory=dict)

    @property
    def sort_columns(self) -> tuple[str, ...]:
        """The plan's sort columns (strategy param `hoodie.clustering.plan.strategy.sort.columns`), in order."""
        text = self.strategy_params.get(SORT_COLUMNS_PARAM) or ""
        return tuple(c.strip() for c in text.split(",") if c.strip())

    @property
    def slices(self) -> list[ClusteringSlice]:
        return [s for group in self.input_groups for s in group]

    @property
    def file_groups(self) -> list[tuple[str, str]]:
        return [(s.partition_path, s.file_id) for s in self.slices]

    @staticmethod
    def load(timeline: Timeline, instant: Instant) -> "ClusteringPlan | None":
        """The clustering plan of a replacecommit in any state, or of a layout-2 clustering, read from its requested
        file as Hudi's ClusteringUtils.getClusteringPlan reads it (an inflight replacecommit file holds a workload
        profile, never the plan); None for a replacecommit that is not a clustering (insert_overwrite: an empty or
        all-null requested file)."""
        requested = _requested_file(timeline, instant)
        if requested is None:
            return None
        record = timeline.avro_metadata(requested)
        if record is None or record.get("operationType") != CLUSTER:
            return None
        plan = record.get("clusteringPlan") or {}
        groups, outputs = [], []
        for g in plan.get("inputGroups") or []:
            groups.append(tuple(
                ClusteringSlice(s.get("partitionPath") or "", s["fileId"], s.get("dataFilePath") or None,
                                tuple(s.get("deltaFilePaths") or ()))
                for s in g.get("slices") or []))
            outputs.append(int(g.get("numOutputFileGroups") or 1))
        strategy = plan.get("strategy") or {}
        return ClusteringPlan(instant, tuple(groups), tuple(outputs), strategy.get("strategyClassName"),
                              dict(strategy.get("strategyParams") or {}))


def _requested_file(timeline: Timeline, instant: Instant) -> Instant | None:
    """The requested file that holds the plan of `instant`, if it can hold one: a layout-2 clustering's
    `.clustering.requested`; a replacecommit's `.replacecommit.requested`, or, once a layout-2 clustering completed
    (as a replacecommit), its `.clustering.requested`. None when the instant is of another action, or completed and
    its requested file is gone (archived or cleaned up)."""
    if instant.action is Action.CLUSTERING:
        return instant.with_state(State.REQUESTED)
    if instant.action is not Action.REPLACE_COMMIT:
        return None
    if not instant.is_completed:
        return instant.with_state(State.REQUESTED)
    for action in (Action.CLUSTERING, Action.REPLACE_COMMIT) if timeline.layout.version == 2 else (Action.REPLACE_COMMIT,):
        requested = Instant(instant.timestamp, action, State.REQUESTED)
        if timeline.storage.exists(timeline.path_of(requested)):
            return requested
    return None


def is_pending_replace(instant: Instant) -> bool:
    """A requested or inflight instant that may replace file groups: a replacecommit (an insert_overwrite, or a
    clustering on layout 1) or a layout-2 clustering."""
    return instant.action in (Action.REPLACE_COMMIT, Action.CLUSTERING) and not instant.is_completed


def is_clustering(timeline: Timeline, instant: Instant) -> bool:
    """Hudi's ClusteringUtils.isClusteringInstant: a layout-2 clustering, or a replacecommit whose requested file
    holds a clustering plan (False for an unreadable one: Hudi could not read a plan from it either)."""
    if instant.action is Action.CLUSTERING:
        return True
    try:
        return ClusteringPlan.load(timeline, instant) is not None
    except HudiError:
        return False


@dataclass(frozen=True)
class PendingClustering:
    """The file groups of every requested or inflight clustering: (partition, file id) -> the clustering's instant
    time (Hudi's getFileGroupsInPendingClustering). Load once per write (`of`); picklable for write tasks."""

    file_groups: Mapping[tuple[str, str], str] = field(default_factory=dict)
    plans: tuple[ClusteringPlan, ...] = field(default=(), compare=False, repr=False)

    @staticmethod
    def of(timeline: Timeline | None) -> "PendingClustering":
        """Reads the requested file of each pending replacecommit or clustering only (none on most tables)."""
        if timeline is None:
            return NO_PENDING_CLUSTERING
        groups: dict[tuple[str, str], str] = {}
        plans = []
        for instant in timeline.filter(is_pending_replace):
            try:
                plan = ClusteringPlan.load(timeline, instant)
            except TimelineError:
                requested = _requested_file(timeline, instant)
                if requested is None or timeline.storage.exists(timeline.path_of(requested)):
                    raise
                continue  # rolled back by another writer since this timeline was listed: no longer pending
            if plan is None:
                continue
            plans.append(plan)
            for key in plan.file_groups:
                if key in groups and groups[key] != instant.timestamp:
                    # Hudi refuses this state too (getAllFileGroupsInPendingClusteringPlans: "duplicate file groups")
                    raise TimelineError(
                        f"{timeline.base_path}: file group {key[1]} of partition {key[0]!r} is in two pending "
                        f"clustering plans ({groups[key]} and {instant.timestamp}); roll one of them back with Hudi")
                groups[key] = instant.timestamp
        return PendingClustering(groups, tuple(plans)) if groups else NO_PENDING_CLUSTERING

    def __bool__(self) -> bool:
        return bool(self.file_groups)

    def __contains__(self, group: object) -> bool:
        return group in self.file_groups

    def instant_of(self, partition: str, file_id: str) -> str | None:
        return self.file_groups.get((partition, file_id))

    @property
    def instants(self) -> list[str]:
        return sorted(set(self.file_groups.values()))

    def keys(self) -> frozenset[tuple[str, str]]:
        """The file groups alone: what map tasks need."""
        return frozenset(self.file_groups)

    def refuse_updates(self, groups: Iterable[tuple[str, str]], where: str) -> None:
        """SparkRejectUpdateStrategy.handleUpdate: records whose tagged location is a file group under pending
        clustering fail the write (before any of its files is written), naming the file group as Hudi does."""
        hit = sorted({g for g in groups if g in self.file_groups})
        if hit:
            raise clustering_update_error(hit, self.file_groups, where)

    def refuse_overwrite(self, partitions: Iterable[str] | None, where: str) -> None:
        """An insert_overwrite of `partitions` (None: insert_overwrite_table) that would replace file groups under
        pending clustering is refused before any file is written: once the clustering completed, its new file groups
        would bring back the rows the overwrite removed. Hudi refuses delete_partition this way
        (SparkDeletePartitionCommitActionExecutor: "no pending table service actions (clustering/compaction) for the
        partitions"); this engine does the same for the overwrites, which replace file groups too."""
        scope = None if partitions is None else set(partitions)
        hit = sorted(g for g in self.file_groups if scope is None or g[0] in scope)
        if hit:
            shown = sorted({p for p, _ in hit})
            raise ClusteringUpdateError(
                f"table {where}: Failed to overwrite partitions {shown}: the pending clustering "
                f"{', '.join(sorted({self.file_groups[g] for g in hit}))} holds {len(hit)} of their file groups "
                "and, once it completes, would write back the rows this overwrite replaces. Nothing of this write is "
                "in the table. Run the clustering to completion (or roll it back) with Hudi, then write again")


NO_PENDING_CLUSTERING = PendingClustering()


def clustering_update_error(hit: list[tuple[str, str]], instants: Mapping[tuple[str, str], str],
                            where: str) -> ClusteringUpdateError:
    """The refusal of updates into file groups under pending clustering: Hudi's message for the first, then how
    many others, the clustering instants, the option and the way out."""
    partition, file_id = hit[0]
    pending = sorted({instants[g] for g in hit if g in instants})
    more = f" (and {len(hit) - 1} more file group(s))" if len(hit) > 1 else ""
    return ClusteringUpdateError(
        f"table {where}: Not allowed to update the clustering file group HoodieFileGroupId{{partitionPath="
        f"'{partition}', fileId='{file_id}'}}{more}. For pending clustering operations, we are not going to support "
        f"update for now. The write holds updates or deletes of records stored there, and the pending clustering "
        f"{', '.join(f'{ts}.replacecommit' for ts in pending)} will replace those file groups with what they held "
        f"when it was planned ({K.CLUSTERING_UPDATES_STRATEGY.key}={REJECT_UPDATES}). Nothing of this write is in "
        "the table. Run the clustering to completion (or roll it back) with Hudi, then write again; writes of new "
        "keys only are accepted meanwhile")


__all__ = ["ALLOW_UPDATES", "CLUSTER", "NO_PENDING_CLUSTERING", "REJECT_UPDATES", "ClusteringPlan", "ClusteringSlice",
           "ClusteringUpdateError", "PendingClustering", "clustering_update_error", "is_clustering", "is_pending_replace",
           "resolve_update_strategy"]
