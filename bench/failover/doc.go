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
//     (pg_ctl -m fast) and refuses connections. A third, rejoin, not run
//     unless asked for (-cases rejoin): as stopped, and once the promotion
//     has completed the old primary is brought back as a standby of the
//     new one (pgpair's Rejoin: pg_rewind, then started as its streaming
//     standby) while the workers and readers go on; the run lasts until
//     -after-rejoin (5s) after Rejoin returned, or -duration when later.
//   - 8 readers (-readers; 0 runs none) each read, for the whole run, one
//     SELECT inet_server_port(), pg_is_in_recovery() at a time with the
//     writes' deadline and a 10ms pause after each (-read-pause; it keeps
//     them from taking the writers' CPU on a small machine). shoalpgx's
//     readers use pool.Reads(), its read pool. pgxpool routes no reads;
//     the fair comparison is a second pgxpool on the same string with
//     target_session_attrs=prefer-standby, which picks a standby when it
//     dials and keeps each connection whatever its server becomes.
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
// that from second 1 to the fault); and the failed writes.
//
// Of the reads it reports how many were answered before the fault, during
// the failover and after the promotion (begun once it had completed), the
// share of each answered by a standby and after the promotion by the
// primary, and the failed reads of each. The answering server names itself
// by its port and says whether it is in recovery as it answers, so a read
// answered mid-promotion counts as what the server was then. After the
// promotion the pair has no standby, since the old primary does not rejoin
// within the run, and every read can only be answered by the new primary:
// the figure that matters then is whether reads are answered at all. The
// rejoin case gives the pair a standby again: its reads begun after Rejoin
// returned are a phase of their own, with the share a standby answered,
// and the time from Rejoin's start to the first read a standby answered
// (the old primary takes reads once it has started, before Rejoin
// returns): whether, and how soon, a pool's reads move back to a standby
// once one exists. An answer the pair's roles rule out
// (the old primary's after the promotion, other than as a standby in the
// rejoin case) is counted and noted.
//
// Between runs the pair is rebuilt (internal/pgpair), so every run starts on
// a healthy primary 5441 with its standby 5442.
//
// Run it from bench/ as root, with the pair's addresses in the environment
// (scripts/test-env.sh):
//
//	go run ./failover -out results/failover.md
//
// It prints the tables and writes them, with the machine and the command,
// as a markdown fragment to -out.
package main
