"""The table services a write runs around its commit: before it, finish what a crash left pending; after it, inline
compaction and clustering when due and automatic cleaning. Engine-neutral: compaction operations go through the given executor.

After the commit point nothing may claim the write failed: a service that fails then raises `TableServiceError`
saying the data committed at instant X and which service failed.
"""
from __future__ import annotations

from hudi_engine.config.lock_config import LAZY
from hudi_engine.config.write_config import MERGE_ON_READ, WriteConfig
from hudi_engine.errors import HudiError, TableServiceError
from hudi_engine.location import TableLocation
from hudi_engine.metadata.writer import MetadataWriter, keep_through_rollback
from hudi_engine.table_config import TableConfig
from hudi_engine.table_features import check_writable
from hudi_engine.table_services import held_by_caller, service_lock
from hudi_engine.table_services.archival import archive
from hudi_engine.table_services.clean import clean, resume_pending_cleans
from hudi_engine.table_services.clustering import cluster_now, clustering_due, schedule_clustering
from hudi_engine.table_services.compaction import (
    CompactionResult,
    Executor,
    compaction_due,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from hudi_engine.timeline import Timeline
from hudi_engine.timeline.clustering import is_clustering
from hudi_engine.timeline.instant import Action
from hudi_engine.write.rollback import rollback_failed


def finish_pending(location: TableLocation, config: WriteConfig, execute: Executor | None = None, *,
                   table: TableConfig, timeline: Timeline) -> list[str]:
    """Before a write to an existing table: complete the compactions and cleans a crash left pending. Returns their
    instants.

    A pending compaction must complete before the next write commits: that write's log files take the
    compaction's instant as base instant, and hudi-rs only reads them once the compaction's base file is
    committed. `table` and `timeline`: the write's (nothing is read again when no service is pending).
    """
    if not timeline.pending_compactions() and not timeline.filter_by(["clean"]).pending():
        return []  # the common case: no lock needed
    with service_lock(location, config.lock, table=table, timeline=timeline):
        # The lock checked the write's listing; the one taken under it is checked too (another writer may have
        # changed the timeline since the write opened).
        check_writable(location, table, timeline.reload(), action="write to it or run a table service on it")
        done = [r.instant_time for r in compact_pending(location, config, execute)]
        # Listed again under the lock, after the compactions: the cleans pending now are the ones to finish.
        done += [r.instant_time for r in resume_pending_cleans(location, timeline.reload())]
        return done


def compact_pending(location: TableLocation, config: WriteConfig,
                    execute: Executor | None = None) -> list[CompactionResult]:
    """Run every scheduled or interrupted compaction, oldest first."""
    return [run_compaction(location, ts, storage_uri=location.uri, execute=execute, config=config)
            for ts in pending_compactions(location)]


def compact_now(location: TableLocation, config: WriteConfig, execute: Executor | None = None, *,
                table: TableConfig, timeline: Timeline) -> list[CompactionResult]:
    """Finish pending compactions, then schedule one over every file group with log files and run it. `table` and
    `timeline`: the caller's, `timeline` listed under the table lock it holds (`HudiTable.compact`, the write's
    services)."""
    with service_lock(location, config.lock, table=table, timeline=timeline):
        done = compact_pending(location, config, execute)
        instant = schedule_compaction(location, lock=config.lock)
        if instant is not None:
            done.append(run_compaction(location, instant.timestamp, storage_uri=location.uri,
                                       execute=execute, config=config))
        return done


def _writes_pending(timeline: Timeline) -> bool:
    """Another writer's instant is in flight (optimistic concurrency): inline services wait for a later commit."""
    return any(not i.is_pending_compaction and not is_clustering(timeline, i)
               for i in timeline.write_timeline().pending())


def after_commit(location: TableLocation, config: WriteConfig, instant: str, table: TableConfig,
                 execute: Executor | None = None, *, timeline: Timeline, locked: bool = False,
                 metadata: MetadataWriter | None = None) -> list[str]:
    """After the write committed at `instant`: inline compaction when due (MOR, `hoodie.compact.inline`), inline
    clustering when due (`hoodie.clustering.inline`), the
    rollback of dead writers' instants (LAZY policy), automatic cleaning, then archival. Returns the instants it
    created; a failure names the committed instant. The timeline is listed once under the lock, again only after a
    service changed it; `table` (the write's config) is not read again. `timeline`: the write's own, listed under
    its lock: the lock checks the table writable by it, and again by the listing taken under the lock.
    `locked`: the calling thread still holds the lock the write committed under, and `timeline` is the table's
    timeline under it with the commit included (`Transaction.committed`): neither is taken again. `metadata`: with
    `locked`, the metadata writer that recorded the commit (`Transaction.metadata_writer`): the cleaning and the
    archival take it (as the last of them left it) when no other service changed the table before them, instead of
    reading both tables' configs to decide again."""
    base_path = location.base_path
    created: list[str] = []
    service = "the table services"
    try:
        with held_by_caller(location) if locked else service_lock(location, config.lock, table=table,
                                                                 timeline=timeline):
            # Not held since the commit: the timeline is listed again under the lock just taken.
            fresh = timeline if locked else timeline.reload()
            # The write's metadata writer while only the write and this clean changed the metadata table under the
            # lock: another service before them records itself through a writer of its own.
            current = metadata if locked else None
            check_writable(location, table, fresh, action="write to it or run a table service on it")
            timeline = fresh
            if table.table_type == MERGE_ON_READ and config.compaction.inline:
                service = "inline compaction"
                # Another writer's pending instant (optimistic concurrency) defers the compaction to a later commit:
                # a compaction is never scheduled while a write is in flight.
                # A pending clustering does not: the plan leaves its file groups out (`build_compaction_plan`).
                if not _writes_pending(timeline) and compaction_due(timeline, config.compaction.max_delta_commits):
                    compacted = [r.instant_time for r in compact_now(location, config, execute, table=table,
                                                                        timeline=timeline)]
                    if compacted:
                        created += compacted
                        timeline = timeline.reload()  # in its layout: no hoodie.properties read for it
                        current = None
            if config.clustering.inline:
                service = "inline clustering"
                if not _writes_pending(timeline) and clustering_due(timeline, config.clustering.inline_max_commits):
                    clustered = cluster_now(location, config)  # in this process, like Hudi's inline clustering
                    if clustered is not None:
                        created.append(clustered.instant_time)
                        timeline = timeline.reload()
                        current = None
            elif config.clustering.schedule_inline:
                service = "inline scheduling of clustering"
                # Hudi 1.x's ClusteringPlanActionExecutor: a schedule-only writer counts to async.max.commits.
                if not _writes_pending(timeline) and clustering_due(timeline, config.clustering.async_max_commits):
                    if schedule_clustering(location, config) is not None:
                        timeline = timeline.reload()
                        current = None
            if config.lock.failed_writes_policy == LAZY:
                service = "the rollback of failed writes (hoodie.cleaner.policy.failed.writes=LAZY)"
                if rollback_failed(timeline, config.lock, metadata=keep_through_rollback(location)):
                    timeline = timeline.reload()  # the rollbacks changed it
                    current = None
            if config.clean.automatic:
                service = "automatic cleaning"
                if timeline.filter_by([Action.CLEAN]).pending():
                    current = None  # resumed through writers of their own (`resume_pending_cleans`)
                result = clean(location, config.clean, config.lock, table=table, timeline=timeline, metadata=current,
                               metadata_max_delta_commits=config.metadata_compact_max_delta_commits)
                if result is not None:
                    created.append(result.instant_time)
                    timeline = timeline.reload()
            # After cleaning, as Hudi's postCommit runs them (layout 2 archives into the LSM history).
            if config.archival.automatic:
                service = "timeline archival"
                archive(location, config.archival, max_delta_commits=config.compaction.max_delta_commits,
                        lock=config.lock, table=table, timeline=timeline,
                        metadata=current)
    except HudiError as e:
        raise TableServiceError(
            f"table {base_path}: the write committed at instant {instant} (its data is in the table), then "
            f"{service} failed: {e}. Run it again later (HudiTable.compact() / clean(), or the next write does).",
            instant=instant, service=service) from e
    return created
