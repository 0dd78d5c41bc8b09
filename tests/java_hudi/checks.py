"""Java Hudi's own consistency checks on a table the engine wrote: its meta client, active and archived timelines,
file-system view and parquet validation, through the procedures Hudi ships (`CALL show_commits`,
`show_archived_commits`, `show_fsview_all`, `show_invalid_parquet`, `show_table_properties`), each compared with
what the engine reads.

They run on a copy: registering a table in Hudi's catalog may rewrite its `hoodie.properties` (Hudi 0.15 adds
`hoodie.table.create.schema` there), and a check must leave the table under test as it was."""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

from hudi_engine import HudiTable
from java_hudi.client import JavaHudi

_copies = itertools.count()


def java_consistency_checks(java: JavaHudi, path: str | Path, workdir: Path) -> int:
    """Run the checks on a copy of the table at `path` (a local folder); return how many were compared. Raises
    (`JavaHudiError` or AssertionError, naming the table) on the first that fails."""
    n = next(_copies)
    copy = Path(workdir) / f"java-check-{n}"
    shutil.copytree(path, copy)
    ours = HudiTable.load(str(copy))
    name = f"java_check_{n}"
    what = f"Java Hudi {java.hudi} on {path}"
    java.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    try:
        commits = java.sql(f"CALL show_commits(table => '{name}', limit => 100000)")
        assert commits is not None
        expected = sorted(i.timestamp for i in ours.timeline.completed_commits())
        got = sorted(commits.column("commit_time").to_pylist())
        assert got == expected, f"{what}: show_commits lists {got}, the engine's completed commits are {expected}"

        archived = java.sql(f"CALL show_archived_commits(table => '{name}', limit => 100000)")
        assert archived is not None  # loading the archived timeline (v6 Avro logs, v8+ LSM history) is the check

        fsview = java.sql(f"CALL show_fsview_all(table => '{name}', limit => 100000)")
        assert fsview is not None
        java_groups = {(p or "", f) for p, f in zip(fsview.column("partition").to_pylist(),
                                                    fsview.column("file_id").to_pylist())}
        our_groups = {(s.partition_path, s.file_id) for s in ours.file_slices()}
        # show_fsview_all also lists the file groups a replacecommit (insert_overwrite, clustering) replaced, as
        # long as their files are there (cleaning deletes them).
        for instant in ours.timeline.completed_commits():
            replaced = ours.commit_metadata(instant).partition_to_replace_file_ids or {}
            our_groups |= {(p, f) for p, ids in replaced.items() for f in ids if any((copy / p).glob(f"*{f}_*"))}
        assert java_groups == our_groups, (f"{what}: show_fsview_all's file groups {sorted(java_groups)} != the "
                                           f"engine's {sorted(our_groups)}")

        invalid = java.sql(f"CALL show_invalid_parquet(path => '{copy}')")
        assert invalid is not None and invalid.num_rows == 0, f"{what}: invalid parquet files {invalid}"

        props = java.sql(f"CALL show_table_properties(table => '{name}', limit => 1000)")
        assert props is not None
        values = dict(zip(props.column("key").to_pylist(), props.column("value").to_pylist()))
        assert values.get("hoodie.table.version") == str(ours.config.version), \
            f"{what}: table version {values.get('hoodie.table.version')}, the engine reads {ours.config.version}"
        return 5
    finally:
        java.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(copy, ignore_errors=True)


def java_validates_metadata_files(java: JavaHudi, path: str | Path, workdir: Path) -> int:
    """Hudi's `validate_metadata_table_files` on a copy of the table at `path`: every file its metadata table lists
    is in storage with that size, and the other way round. Returns the number of files compared; raises naming the
    table and the files that differ."""
    n = next(_copies)
    copy = Path(workdir) / f"java-mdt-check-{n}"
    shutil.copytree(path, copy)
    name = f"java_mdt_check_{n}"
    java.sql(f"CREATE TABLE {name} USING hudi LOCATION '{copy}'")
    try:
        rows = java.sql(f"CALL validate_metadata_table_files(table => '{name}', verbose => true)")
        assert rows is not None and rows.num_rows > 0, f"Java Hudi {java.hudi} on {path}: no file validated"
        mismatched = [r for r in rows.to_pylist() if not (r["is_present_in_fs"] and r["is_present_in_metadata"]
                                                         and r["fs_size"] == r["metadata_size"])]
        assert not mismatched, f"Java Hudi {java.hudi} on {path}: validate_metadata_table_files: {mismatched}"
        return rows.num_rows
    finally:
        java.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(copy, ignore_errors=True)
