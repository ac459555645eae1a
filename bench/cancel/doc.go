// Command cancel measures what callers who give up cost a PostgreSQL pool,
// through shoalpgx beside pgxpool on the same server in the same run.
//
// Workers (128 by default) share a pool of 4 connections and run one
// statement after another through the pool's Exec: every tenth is
// SELECT pg_sleep(0.005) under a context that ends after 2ms, counted from
// before the acquire, so that some callers give up while they wait for a
// connection and others while their statement runs; the rest are SELECT 1
// with no deadline. The contenders:
//
//   - shoalpgx: its defaults. A statement whose context ends is cancelled
//     at the server and its connection kept.
//   - shoalpgx-fifo: the same with pool_barge_window=0, strict first-come,
//     first-served hand-off: with barging (the default) a releasing worker
//     takes its connection straight back, so its next statement, a tenth of
//     the time one that gives up, runs at once rather than giving up in the
//     queue.
//   - shoalpgx-close: the same with pool_cancel_timeout=0, where pgx closes
//     the connection at the deadline, as its default context handler does,
//     and the pool dials a new one.
//   - pgxpool: github.com/jackc/pgx/v5/pgxpool, whose connections pgx closes
//     the same way.
//
// Each round runs every contender for -duration, in an order that changes
// from round to round, with its pool opened and warmed before. For each it
// reports the statements served (both kinds, succeeded), the abandoned ones
// (a deadline statement that failed with its context's error) and of those
// how many the server cancelled (SQLSTATE 57014: abandoned mid-flight) and
// how long after their deadlines those callers got their errors, the new
// connections the pool opened (each a SCRAM login the server pays for), the
// most connections of the pool the server held at once (pg_stat_activity
// every 20ms, internal/pgcount), and any other failure, which should never
// happen: a SELECT 1 with no deadline must not fail. Then each contender's
// statements served against pgxpool's in the same round, the median of
// those ratios: the machine's load swings between rounds, and a ratio
// within a round cancels much of it.
//
// Run it from bench/ with the server's connection string in
// SHOAL_TEST_POSTGRES (scripts/test-env.sh sets it):
//
//	go run ./cancel -rounds 3 -duration 3s -out results/cancel.md
package main
