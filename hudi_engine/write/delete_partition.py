"""Hudi's delete_partition operation (`drop_partition`, `ALTER TABLE ... DROP PARTITION`): one `replacecommit` with
operation DELETE_PARTITION whose `partitionToReplaceFileIds` lists every file group of the partitions and which
writes no file (FORMAT.md, Replace commits). It goes through the one write pipeline (lock, instant, heartbeat,
commit, post-commit services) as an insert_overwrite does; readers stop seeing the partitions, time travel to before
the commit still sees them, and cleaning removes their files later."""
from __future__ import annotations

import re
from collections.abc import Iterable

from hudi_engine.config.write_config import Operation, WriteConfig
from hudi_engine.errors import ConfigError
from hudi_engine.fs_view import FileSystemView, Visibility
from hudi_engine.meta_client import MetaClient
from hudi_engine.schema import avro_to_arrow_schema, remove_meta_fields
from hudi_engine.timeline.clustering import PendingClustering
from hudi_engine.write.write_client import WriteClient
from hudi_engine.write.write_result import WriteResult


def resolve_partitions(given: Iterable[str], existing: Iterable[str], where: str) -> list[str]:
    """The partition paths `given` names (as Hudi's `hoodie.datasource.write.partitions.to.delete`: paths such as
    `dt=2024-01-01` or `2024/01/01`, `*` matching within the path as Hudi's wildcards do), each of which must match a
    partition of the table that has file groups: a name that matches none is refused, listing the table's."""
    have = sorted(set(existing))
    out: set[str] = set()
    names = [p.strip().strip("/") for p in given if p.strip()]
    if not names:
        raise ConfigError(f"table {where}: no partition to delete; name partition paths, e.g. {have[:3]}")
    for name in names:
        if "*" in name:
            pattern = re.compile("^" + ".*".join(re.escape(part) for part in name.split("*")) + "$")
            hit = [p for p in have if pattern.match(p)]
        else:
            hit = [name] if name in have else []
        if not hit:
            raise ConfigError(f"table {where}: partition {name!r} does not exist (or holds no file group); its "
                              f"partitions are {have}. Nothing was deleted")
        out.update(hit)
    return sorted(out)


def delete_partitions(table: MetaClient, partitions: Iterable[str], config: WriteConfig) -> WriteResult:
    """Replace every file group of `partitions` in one replacecommit (DELETE_PARTITION), through the write client
    opened on `table` (as loaded by the caller). Refused before anything is written: an unknown partition, a
    partition whose file groups a pending clustering holds (as Hudi's delete_partition executor refuses pending
    table services on them; pending compactions are finished first by the pipeline)."""
    from hudi_engine.write_pipeline import run_write

    where = f"{table.config.name!r} ({table.location.base_path})"
    latest = FileSystemView.load(table.location).latest_file_slices(Visibility.of(table.timeline))
    wanted = resolve_partitions(partitions, {s.partition_path for s in latest}, where)
    PendingClustering.of(table.timeline).refuse_overwrite(wanted, where)
    avro = table.timeline.latest_schema() or table.config.create_schema
    if avro is None:
        raise ConfigError(f"table {where}: it has no schema yet (no commit); there is no partition to delete")
    client = WriteClient.open(table, config.with_operation(Operation.DELETE_PARTITION),
                              avro_to_arrow_schema(remove_meta_fields(avro)))
    return run_write(client, lambda _client, _txn: [], partitions=wanted)
