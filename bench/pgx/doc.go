// Command pgx measures PostgreSQL query throughput, and the latency the
// callers see, through shoalpgx beside its peers, on the same server in the
// same run:
//
//   - dedicated: one *pgx.Conn per connection, each driven without pause by
//     its own goroutine. This is the ceiling for a pool of the same size, at
//     every worker count. More goroutines cannot get more out of the same
//     connections: a connection serves one query at a time, so all extra
//     callers can add is scheduling and hand-off work, and hiding that work
//     is exactly the pool's job. (A dedicated connection per worker would be
//     a different experiment, with 4x or 16x the server processes, and would
//     measure the server rather than the pool; sharing the connections
//     between workers under a mutex would measure a naive pool, not a
//     ceiling.)
//   - shoalpgx: shoalpgx.Pool, with pool_max_conns connections and its
//     defaults, among them a barging window of 4ms (BargeWindow): while
//     the oldest waiter has waited less than that (more, up to 16ms, when
//     more than 8 workers wait per connection, as at 128 workers), a
//     released connection goes to whoever asks next rather than to the
//     queue.
//   - shoalpgx-fifo: the same with BargeWindow 0, strict FIFO hand-off to
//     the oldest waiter on every release; the difference between the two
//     is what barging buys, or costs, on this machine.
//   - pgxpool: github.com/jackc/pgx/v5/pgxpool with the same MaxConns.
//   - sql: database/sql over pgx's stdlib driver, SetMaxOpenConns and
//     SetMaxIdleConns to the same number.
//   - channel: a buffered channel of the same number of *pgx.Conn, receive
//     to acquire and send to release (channel.go). Not a usable pool (no
//     checks, no reset of a broken connection): a baseline for what sharing
//     few connections between many goroutines costs here with the least
//     machinery, so that the gap between the pools and dedicated can be
//     read as the pool's own part and the part that comes with sharing at
//     all. Its hand-offs are not free either (a channel send that wakes the
//     receiver), so a pool can beat it.
//   - connect-per-request: a new *pgx.Conn (TCP, startup, SCRAM) for every
//     query, with as many in flight as the pools have connections; the
//     anti-pattern pooling exists to avoid.
//
// Every pool is opened with all its connections up and warmed before any
// timing. The pooled contenders run with 8, 32 and 128 workers, each in a
// loop of one query through the pool's own API (QueryRow(...).Scan for
// SELECT 1, Query plus a rows loop for the small-row query), with
// context.Background(). Rounds are interleaved (dedicated, then the others,
// then again) so that a noisy moment of the shared machine hits all of them
// alike, and the best round of each is kept. Dedicated opens every round;
// the others take turns in the places after it, so that no contender
// always runs in the same place (see roundOrder).
//
// Run it from bench/ with the server's connection string in
// SHOAL_TEST_POSTGRES (scripts/test-env.sh sets it):
//
//	go run ./pgx -rounds 5 -duration 2s -out results/pgx.md
//
// It prints the table and writes it, with the machine and the command, as a
// markdown fragment to -out.
package main
