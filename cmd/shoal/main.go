// Command shoal measures what connection pooling buys, against an embedded
// server or your own.
//
// Usage:
//
//	shoal bench [flags]             run the experiments (embedded servers unless --target)
//	shoal sweep --target URL [...]  sweep partitions x connections on your PostgreSQL
//	shoal version                   the version and commit it was built from
//	shoal help [command]
//
// With no flags, `shoal bench` starts embedded servers on 127.0.0.1 in the
// same process, all with TLS and a certificate made at start (a line
// protocol server, an HTTP/1.1 + HTTP/2 server and a gRPC server, both
// capped at 100 streams per connection), and runs, in about a minute:
//
//	churn       a new connection per request against a pooled one (shoal core pool)
//	partitions  Ecto's pool_count table: 1x32, 2x16, 4x8, 8x4, 16x2, 32x2 with 8 and 32 workers
//	multiplex   one HTTP/2 connection against a shoal pool of them, and one
//	            grpc.ClientConn against a shoalgrpc pool, 400 workers
//	transport   http.DefaultTransport, a tuned http.Transport and shoalhttp, HTTP/1.1
//
// Each prints a table in the style of Benchee (ips, average, deviation,
// median, 99th percentile), a comparison block, and a block of the
// connections each case opened during the measured period (after its
// warm-up, so a pool that keeps its connections shows 0) with the
// percentiles of its acquire wait: from the pool's own observer where the
// case is a shoal pool, from the case's timing of its acquire otherwise,
// and "-" where a case has no pool to wait for. A progress bar with the
// time left goes to stderr when it is a terminal. --quick runs the same in
// under 30 seconds against the embedded servers; against your own server
// the time depends on it (a PostgreSQL pool of 32 opens its connections
// first, for instance).
//
// Flags of bench:
//
//	--target URL        postgres://, clickhouse+http://host:8123, influxdb+http://host:8086,
//	                    grpc://host:port, https://...; runs the experiments that fit
//	--only LIST         scenarios to run, comma-separated
//	--duration D        measured time per case (default 1.25s; --quick 400ms)
//	--warmup D          unmeasured time per case before it (default 250ms; --quick 100ms)
//	--workers N         concurrent workers (default: each scenario's own)
//	--quick             the short run
//	--json, --csv       machine-readable output on stdout instead of the tables
//	--chart FILE        also draw a chart, FILE.svg or FILE.png
//	--dial-timeout D    how long to try to reach the target (default 5s)
//
// sweep takes --target (a postgres:// URL or a key=value string), --query
// SQL (default SELECT 1), --max-conns N (default 32), --workers N (default
// twice --max-conns, so that callers wait, as in a service that needs a
// pool), --rounds N (default 5, --quick 3), --allow-writes and the output
// and timing flags above. It measures a quarter, half and all of
// --max-conns connections in all (--quick: half and all), each in 1, 2, 4
// and 8 partitions where they divide evenly, and the default configuration
// (what shoalpgx opens on the connection string without settings), every
// one once per round with the order reversed each round. It compares each
// with the default round by round (a paired t-test on the ratio of
// throughputs, at 5% over all comparisons together, Bonferroni) and
// recommends the smallest configuration that is significantly faster than
// the default and not significantly slower than the fastest, with the
// settings to paste, or says "keep the default" when none is. Before any
// configuration runs it runs --query once in a read-only transaction (a
// query that writes needs --allow-writes) and compares --max-conns with
// the server's max_connections and the role's limit.
//
// Exit status: 0 when everything ran, 1 when a run failed, nothing could be
// measured (every scenario skipped for this target) or the target could
// not be reached, 2 for a usage error, 130 after Ctrl-C (the results that
// finished are printed first, and drawn when --chart is set). A password in
// --target never appears in any output, file or error: it is masked where it
// stands in the URL or key=value string, and a target whose password holds
// an unescaped '@' or '#' is refused rather than read in pieces.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as a shell reports it
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
