"""The write side of the engine, in pure Python (no Spark in these modules).

* `write_config`: Hudi's `hoodie.*` write options, translated once. `write_client`: the driver side of one
  write (checks, instant, lock, commit). `executor`: what one write task does with one partition's records.
* `index`: key lookup in stored key columns, bloom-filter candidates, the BUCKET index hash.
  `bucket_assigner`: updates to their file group, inserts to small files then new file groups.
* `markers`: DIRECT write markers under `.hoodie/.temp/<instant>/` (FORMAT.md, Write markers).
* `handles`: what a task runs on one file group's records: create (new base file), merge (COW update),
  append (MOR log file). Each returns a `WriteStat`.
* `commit`: the instant lifecycle on the driver: `create_table`, `start_commit`, `complete_commit`.
* `rollback`: undo a failed (or the latest completed) write instant (FORMAT.md, Rollback).
* `lock`, `lock_providers`: the table lock (a lock file made by atomic create or conditional writes, Hudi 1.1's
  storage lock object, or a DynamoDB item) and its renewal; `heartbeat`: instant heartbeats and the rollback of dead writers' instants; `renewal`: the
  background thread both renew from; `conflict`: optimistic concurrency's check at the commit point;
  `lost_instant`: a writer whose instant was taken from it.

Submodules are imported where used, so importing this package stays cheap and free of import cycles.
"""
