// Command failover measures what writers see when a PostgreSQL primary
// fails and its synchronous standby is promoted, through shoalpgx and
// pgxpool in the same run, each opened on the same multi-host connection
// string (primary first, target_session_attrs=read-write) with its own
// defaults:
//
//   - 32 workers (-workers) each write its own sequence numbers (worker,
//     seq) into a table on the primary, one INSERT at a time through the
//     pool's Exec, each with a 2s deadline (-deadline), for 10s
//     (-duration).
//   - At second 3 (-fault-at) the primary fails, then the standby is
//     promoted (pg_ctl promote, waited for). Two cases (-cases): silent,
//     where the pools reach the primary through an in-process proxy that
//     from then on accepts and neither forwards nor closes (a crashed
//     machine or a partition), and stopped, where the primary shuts down
//     (pg_ctl -m fast) and refuses connections.
//   - After the run every write is checked against the table on the new
//     primary: an acknowledged write that is missing is lost, a (worker,
//     seq) found twice is duplicated; both must be 0. A failed write found
//     in the table ("failed, yet committed") is counted apart: its caller
//     was told it failed, which its deadline allows only when the outcome
//     was unknown.
//
// It reports, from the start of the promotion (once the primary has gone,
// when nothing can acknowledge a write), counting only writes begun after
// it: the time to the first acknowledged write, and to full throughput
// (the end of the first 500ms window whose write rate is at least 90% of
// that from second 1 to the fault); and the failed writes. Between runs the pair is rebuilt (internal/pgpair), so
// every run starts on a healthy primary 5441 with its standby 5442.
//
// Run it from bench/ as root, with the pair's addresses in the environment
// (scripts/test-env.sh):
//
//	go run ./failover -out results/failover.md
//
// It prints the table and writes it, with the machine and the command, as a
// markdown fragment to -out.
package main
