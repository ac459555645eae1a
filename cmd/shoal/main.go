// Command shoal measures what connection pooling buys, against an embedded
// server or your own.
//
// Usage (from a checkout, run shoal as "go -C cmd/shoal run ."):
//
//	shoal bench [flags]                 run the experiments (embedded servers unless --target)
//	shoal sweep --target URL [flags]    size a PostgreSQL pool: partitions x connections
//	shoal budget NAME --etcd ADDR       show a connection budget shared through etcd
//	shoal version                       the version and the commit it was built from
//	shoal help [command]                the commands, or a command's flags (also -h)
//
// With no flags, `shoal bench` starts embedded servers on 127.0.0.1 in the
// same process, all with TLS and a certificate made at start (a line
// protocol server, an HTTP/1.1 + HTTP/2 server and a gRPC server, both
// capped at 100 streams per connection), and runs, in about a minute:
//
//	churn       a new connection per request against a pooled one (shoal core pool)
//	partitions  Ecto's pool_count table: 1x32, 2x16, 4x8, 8x4, 16x2 (32 connections
//	            in all) and 32x2 (64), with 8 and 32 workers
//	multiplex   one HTTP/2 connection against a shoal pool of them, and one
//	            grpc.ClientConn against a shoalgrpc pool, 400 workers; against a
//	            postgres:// target, shoalpgx with pool_pipeline=16 on 8 connections
//	            beside 8 and 32 whole connections, with 32 and 128 workers
//	transport   http.DefaultTransport, a tuned http.Transport and shoalhttp, HTTP/1.1
//
// Each group of cases prints a table, fastest first: ops/s (all its
// workers together, over the measured window that follows the warm-up; the
// warm-up is not counted), how much ops/s varied from round to round,
// and the mean, p50 and p99 time per operation, each column in one
// unit named in its header; then each case against the fastest ("1.07x
// slower (+7.39 µs per op)", the per-op figure the longer time per
// operation its ops/s mean, workers / ops/s) and whether that difference
// is beyond the noise; then the connections each case opened, from its start and
// during the measured window, and the percentiles of its acquire wait:
// from the pool's own observer where the case is a shoal pool, from the
// case's timing of its acquire otherwise, and "-" where a case has no
// pool to wait for. A legend under each table says what its columns
// count. The run ends with a verdict: which case won each table, by how
// much, whether beyond the noise, and what to try next. A progress bar
// with the time left goes to stderr when it is a terminal. --quick runs
// the same in about half a minute against the embedded servers; against your
// own server the time depends on it (a PostgreSQL pool of 32 opens its
// connections first, for instance).
//
// Every case runs in 3 rounds (--rounds), the order of a table's cases
// reversed each round, each round a warm-up (--warmup, and until every
// worker has finished an operation) and a measured window (--duration);
// ops/s is the mean of the rounds. A difference is beyond the noise when
// the interval of the ratio of throughputs, at 95% confidence over a
// table's comparisons together, excludes 1, compared round by round as
// sweep does, so that a change in the machine's load between one case
// and the next is in the noise. With --rounds 1 the interval comes from
// how much each case's throughput varied within its one window, which
// does not see such a change.
//
// Flags of bench:
//
//	--target URL        postgres://, clickhouse+http://host:8123, influxdb+http://host:8086,
//	                    grpc://host:port, https://..., or a PostgreSQL key=value string
//	                    ('host=db user=app dbname=app'); runs the experiments that fit (a
//	                    postgres:// one may name several hosts, h1:5432,h2:5432, tried in turn,
//	                    or its host as a parameter, ?host=/var/run/postgresql for a Unix socket)
//	--only LIST         scenarios to run, comma-separated
//	--duration D        measured time per case in each round (default 500ms; --quick 150ms)
//	--warmup D          unmeasured time per case before it (default 250ms; --quick 100ms)
//	--rounds N          times every case runs, the order alternating (default 3)
//	--workers N         concurrent workers (default: each scenario's own)
//	--quick             the short run
//	--json, --csv       machine-readable output on stdout instead of the tables
//	--chart FILE        also draw a chart into FILE, whose name ends in .svg or .png
//	--dial-timeout D    how long to try to reach the target (default 5s)
//
// sweep takes --target (a postgres:// URL or a key=value string), --query
// SQL (default SELECT 1), --max-conns N (default 32), --workers N (default
// twice --max-conns, so that callers wait, as in a service that needs a
// pool), --rounds N (default 5, --quick 3), --allow-writes and the output
// and timing flags above (--duration 1.25s per configuration and round,
// --quick 400ms). It measures a quarter, half and all of
// --max-conns connections in all (--quick: half and all), each in 1, 2, 4
// and 8 partitions where they divide evenly, and the default configuration
// (what shoalpgx opens on the connection string without settings, capped
// at --max-conns, which the output then says), every one once per round
// with the order reversed each round. It compares each
// with the default round by round (a paired t-test on the ratio of
// throughputs, at 5% over all comparisons together, Bonferroni) and
// recommends the smallest configuration that is significantly faster than
// the default and not significantly slower than the fastest, with the
// settings to paste, or says "keep the default" when none is. Before any
// configuration runs it runs --query once in a read-only transaction (a
// query that writes needs --allow-writes) and compares --max-conns with
// the room the server has now (max_connections less its reserved slots
// and the connections open besides the preflight's own) and the room the
// role's and the database's CONNECTION LIMITs leave (less the role's and
// the database's connections open).
//
// budget NAME --etcd ADDR prints every member of the connection budget NAME
// kept in etcd by shoaletcd: its demand, minimum, share and held slots
// (--watch to print again every --interval).
//
// version prints the version, the commit it was built from and the Go
// version. A binary built by go run (which stamps no commit) asks git for
// the commit of the checkout it was built from; another binary built
// without version control information says so and how to build one with
// it.
//
// Exit status: 0 when everything ran, 1 when a run failed, nothing could be
// measured (every scenario skipped for this target), the target could
// not be reached, or the results, the help or the version could not be
// written, 2 for a usage error, 130 after Ctrl-C (the results that
// finished are printed first, and drawn when --chart is set; a second
// Ctrl-C quits at once, without waiting for connections to a server that
// hangs to close). A password in --target never appears in any output,
// file or error: it is masked where it stands in the URL or key=value
// string, and a target whose password holds an unescaped '@' or '#' is
// refused rather than read in pieces.
package main

import "os"

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as a shell reports it
)

func main() {
	ctx, stop := interruptContext(os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
