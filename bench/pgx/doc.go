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
// the others follow it in an order that every second round runs
// backwards and that turns between those pairs, so that every two of
// them run in both orders and no contender always runs in the same place
// (see roundOrder): give -rounds an even number.
//
// Run it from bench/ with the server's connection string in
// SHOAL_TEST_POSTGRES (scripts/test-env.sh sets it):
//
//	go run ./pgx -rounds 5 -duration 2s -out results/pgx.md
//
// With -set pipeline it measures what shoalpgx's pipelining buys instead:
// SELECT 1, a primary-key lookup in a 100,000-row table and a one-row
// INSERT, by 1, 8, 32, 128 and 512 workers, through pipelined-8 (shoalpgx
// with pool_max_conns=8 and pool_pipeline=-pipeline), spread-8 (the same
// with pool_pipeline_fill=0, to show what filling a connection first buys),
// shoalpgx and pgxpool on 8 and on 32 connections, and pgbouncer-8: pgxpool
// through PgBouncer in
// transaction mode (SHOAL_TEST_PGBOUNCER; the database shoal_test_pool8,
// which scripts/services.sh gives a server pool of 8). Beside them runs
// pgx-pipeline-8, the protocol's ceiling on this machine: pgx's own
// pipeline API (pgconn's StartPipeline, SendQueryStatement on a statement
// prepared once per connection, SendPipelineSync after each so that each
// is its own implicit transaction, Flush, GetResults up to each sync) on 8
// connections, each driven by one goroutine that sends -pipeline
// statements per round trip, with the same arguments as the others, and
// decodes the rows into the same Go types. Like dedicated it ignores the
// worker count: with no hand-off between goroutines it is what
// pipelining on 8 connections reaches here whatever a pool does (below
// 8 x -pipeline workers, with more statements in flight than the workers
// could have). Its q/s counts statements, as the others' do; its latency
// is the batch's round trip. It judges the targets cell by cell on the median of each round's
// pair: at 32 and 128 workers pipelined-8 at least 1.5x pgxpool-32 and 2x
// pgxpool-8, above pgbouncer-8 everywhere, and a lone worker at least
// 0.95x shoalpgx-8. Beside each target against a pgxpool it sets what
// pgx-pipeline-8 reached against the same pool in the same rounds, so a
// target the ceiling misses too reads as out of reach on this machine
// rather than as shoalpgx's shortfall.
//
//	go run ./pgx -set pipeline -rounds 4 -duration 1s -out results/pipeline.md
//
// As each round ends it prints a line to standard error: the round's q/s;
// the client's CPU, thread sleeps and system calls per query; the share
// of the machine left idle; the round's real length, from the workers'
// start to the last one's end, past -duration by as long as the calls in
// flight at the end took; and the q/s of its slowest 100ms window. Of two
// rounds far below their pair, one whose slowest window is near zero had
// its work stop for a while, and one whose length is far past -duration
// was held up by a call that stuck.
//
// It prints the table and writes it, with the machine and the command, as a
// markdown fragment to -out.
package main
