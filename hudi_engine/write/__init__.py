"""The write side of the engine, in pure Python (no Spark in these modules).

* `write_config`: Hudi's `hoodie.*` write options, translated once. `write_client`: the driver side of one
  write (checks, instant, lock, commit). `executor`: what one write task does with one partition's records.
* `index`: key lookup in stored key columns, bloom-filter candidates, the BUCKET index hash.
  `bucket_assigner`: updates to their file group, inserts to small files then new file groups.
* `handles`: what a task runs on one file group's records: create (new base file), merge (COW update),
  append (MOR log file). Each returns a `WriteStat`.
* The instant protocol, below the writers and the table services: `markers`, `heartbeat` and `renewal` (its
  leaves: DIRECT marker files under `.hoodie/.temp/<instant>/` (FORMAT.md, Write markers), heartbeat files, the background thread that renews heartbeats and locks); `lock`,
  `lock_providers`: the table lock (a lock file made by atomic create or conditional writes, Hudi 1.1's storage lock
  object, or a DynamoDB item); `rollback`: undo a failed (or the latest completed) write instant, and the rollback
  of dead writers' instants (FORMAT.md, Rollback); `inflight`: an instant a writer holds, owning its markers,
  heartbeat, ownership check and abort; `commit`: the instant lifecycle on the driver (`create_table`,
  `start_commit`, `complete_commit`); `conflict`: optimistic concurrency's check at the commit point.

Submodules are imported where used, so importing this package stays cheap and free of import cycles.
"""
